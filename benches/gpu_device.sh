#!/usr/bin/env bash
# The one prepared run for a lent GPU machine (no Rust there, no internet): build here, carry
# the built files, run there, results under $OUT.
#
#   bash benches/gpu_device.sh build   # here: target/gpu/{slc,cuda_gpu} (release), ~35 MB
#   bash benches/gpu_device.sh run     # there (carry target/gpu): the GPU-only tests
#                                      # (tests/cuda_gpu.rs, golden corpus and fuzzer programs
#                                      # on the device against the CPU), then benches/gpu.py's
#                                      # table (B1-B12 against PyTorch and CuPy, bit for bit)
#
# Each step's output goes to $OUT (default target/gpu/out); a failing step does not stop the
# next, and the script's exit status is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
gpu=target/gpu

case "${1:-}" in
build)
  set -e
  mkdir -p "$gpu"
  cargo build --release --bin slc
  cp target/release/slc "$gpu/slc"
  # The test binary of tests/cuda_gpu.rs: cargo prints its path as JSON.
  test_bin=$(cargo test --release --test cuda_gpu --no-run --message-format=json 2>/dev/null |
    python3 -c 'import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["name"] == "cuda_gpu":
        print(m["executable"])')
  cp "$test_bin" "$gpu/cuda_gpu"
  strip "$gpu/slc" "$gpu/cuda_gpu"
  du -sh "$gpu"
  ;;
run)
  out=${OUT:-$gpu/out}
  mkdir -p "$out"
  status=0
  fail() { [ "$status" = 0 ] && status=$1; }
  nvidia-smi > "$out/nvidia-smi.txt" 2>&1
  "$gpu/cuda_gpu" --nocapture --test-threads 1 > "$out/cuda_gpu.txt" 2>&1 || fail 1
  python3 benches/gpu.py --slc "$gpu/slc" --json "$out/gpu.json" > "$out/gpu_table.txt" 2>&1 || fail 2
  tail -n 5 "$out/cuda_gpu.txt" "$out/gpu_table.txt"
  exit "$status"
  ;;
*)
  echo "usage: bash benches/gpu_device.sh build|run" >&2
  exit 2
  ;;
esac
