#!/usr/bin/env bash
# Two slc binaries side by side on the benchmark cases B1-B12 (docs/benchmarks.md): `slc bench`
# runs each case on each binary, alternating which goes first from round to round, and the
# table gives per case the median kernel time, the median cold compile time and new/old ratios.
# A change that must not change speed (a refactoring) shows ratios of 1 within the noise.
#
#   bash benches/compare.sh OLD_SLC NEW_SLC [ROUNDS] [SECONDS_PER_RUN]
#
# e.g. build the old commit's binary into /tmp/slc-old (git worktree + cargo build --release),
# then: bash benches/compare.sh /tmp/slc-old target/release/slc 6
set -euo pipefail
old=$1 new=$2 rounds=${3:-5} seconds=${4:-0.3}
source "$(dirname "$0")/cases.sh"
runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
for round in $(seq 1 "$rounds"); do
  for i in "${!cases[@]}"; do
    c=${cases[$i]}
    shapes=${c%%|*} expr=${c#*|}
    args=()
    for s in $shapes; do args+=(--shape "$s"); done
    if ((round % 2)); then order="old new"; else order="new old"; fi
    for which in $order; do
      bin=$old
      [ "$which" = new ] && bin=$new
      line=$("$bin" bench "$expr" "${args[@]}" --into --json --seconds "$seconds" | tail -1)
      echo "$i $which $line" >> "$runs"
    done
  done
done
python3 - "$runs" "${cases[@]}" <<'PY'
import json, statistics, sys
runs, cases = sys.argv[1], sys.argv[2:]
by = {}
for line in open(runs):
    i, which, js = line.split(" ", 2)
    r = json.loads(js)
    by.setdefault((int(i), which), []).append((r["median_ns"], r["compile_ns"]))
print(f"{'case':<4} {'expression':<48} {'old ns':>10} {'new ns':>10} {'new/old':>7} {'old compile':>11} {'new compile':>11} {'new/old':>7}")
for i, c in enumerate(cases):
    old, new = by[(i, "old")], by[(i, "new")]
    k_old, k_new = statistics.median(k for k, _ in old), statistics.median(k for k, _ in new)
    c_old, c_new = statistics.median(c for _, c in old), statistics.median(c for _, c in new)
    print(f"B{i + 1:<3} {c.split('|')[1]:<48} {k_old:>10.0f} {k_new:>10.0f} {k_new / k_old:>7.3f} "
          f"{c_old / 1e3:>9.1f}us {c_new / 1e3:>9.1f}us {c_new / c_old:>7.3f}")
PY
