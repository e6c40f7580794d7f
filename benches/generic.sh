#!/usr/bin/env bash
# Generic vs specialized kernels on the benchmark cases B1-B12 (docs/benchmarks.md), one binary:
# each case runs as today (`--shape a=f32[4096,4096]`: the kernel specialized to that shape) and
# through the shape-generic kernel (`--shape a=f32[a0,a1] --size a0=4096 --size a1=4096`: every
# dim a symbol, bound per call), alternating which goes first from round to round. The table
# gives per case the median kernel times, generic/specialized, and both cold compile times.
#
#   bash benches/generic.sh [SLC] [ROUNDS] [SECONDS_PER_RUN]
set -euo pipefail
slc=${1:-target/release/slc} rounds=${2:-5} seconds=${3:-0.3}
source "$(dirname "$0")/cases.sh"
runs=$(mktemp)
trap 'rm -f "$runs"' EXIT
for round in $(seq 1 "$rounds"); do
  for i in "${!cases[@]}"; do
    c=${cases[$i]}
    shapes=${c%%|*} expr=${c#*|}
    specialized=() generic=()
    for s in $shapes; do
      name=${s%%=*} type=${s#*=}
      dtype=${type%%[*} dims=${type#*[}
      dims=${dims%]}
      IFS=, read -ra ds <<< "$dims"
      syms=()
      for axis in "${!ds[@]}"; do
        syms+=("$name$axis")
        generic+=(--size "$name$axis=${ds[$axis]}")
      done
      specialized+=(--shape "$s")
      generic+=(--shape "$name=$dtype[$(IFS=,; echo "${syms[*]}")]")
    done
    if ((round % 2)); then order="specialized generic"; else order="generic specialized"; fi
    for which in $order; do
      if [ "$which" = generic ]; then args=("${generic[@]}"); else args=("${specialized[@]}"); fi
      line=$("$slc" bench "$expr" "${args[@]}" --into --json --seconds "$seconds" | tail -1)
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
    assert r["generic"] == (which == "generic"), line
    by.setdefault((int(i), which), []).append((r["median_ns"], r["compile_ns"]))
print(f"{'case':<4} {'expression':<48} {'spec. ns':>10} {'generic ns':>10} {'gen/spec':>8} {'spec. compile':>13} {'gen. compile':>12}")
for i, c in enumerate(cases):
    s, g = by[(i, "specialized")], by[(i, "generic")]
    k_s, k_g = statistics.median(k for k, _ in s), statistics.median(k for k, _ in g)
    c_s, c_g = statistics.median(c for _, c in s), statistics.median(c for _, c in g)
    print(f"B{i + 1:<3} {c.split('|')[1]:<48} {k_s:>10.0f} {k_g:>10.0f} {k_g / k_s:>8.3f} "
          f"{c_s / 1e3:>11.1f}us {c_g / 1e3:>10.1f}us")
PY
