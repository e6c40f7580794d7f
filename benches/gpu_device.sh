#!/usr/bin/env bash
# The one prepared run for a lent GPU machine (no Rust there, no internet): build here, carry
# the built files, run there, results under $OUT.
#
#   bash benches/gpu_device.sh build   # here: target/gpu/{slc,cuda_gpu} (release), ~35 MB
#   bash benches/gpu_device.sh run     # there (carry target/gpu): the GPU-only tests
#                                      # (tests/cuda_gpu.rs, golden corpus, fuzzer and store
#                                      # programs on the device against the CPU), then
#                                      # benches/gpu.py's tables (B1-B12, and the stores B13-B15
#                                      # of gpu_stores.py, against PyTorch and CuPy, bit for bit),
#                                      # the Python package's GPU tests (python/tests/test_cuda.py),
#                                      # where a call's time goes (benches/gpu_probe.py; with
#                                      # an older wheel in target/gpu/old/wheels, on both)
#
# Each step's output goes to $OUT (default target/gpu/out); a failing step does not stop the
# next, and the script's exit status is the first failure's.
set -uo pipefail
cd "$(dirname "$0")/.."
gpu=target/gpu

# Ahead of time: `slc compile --target cuda` output built by nvcc with benches/gpu_aot/main.cu,
# its output and errors against slc's CPU path.
aot() {
  local out=$1 dir
  dir=$(mktemp -d)
  mkdir -p "$dir/s"
  python3 -c 'import numpy as np, sys; np.save(sys.argv[1], np.arange(30, dtype=np.float32).reshape(6, 5))' "$dir/a.npy"
  "$gpu/slc" compile 'a[i]' --shape a=f32[6,5] --shape i=i64[3] --target cuda -o "$dir/k.cu" --header "$dir/k.h" --name k &&
    nvcc -O2 -arch=native -I"$dir" -o "$dir/main" benches/gpu_aot/main.cu "$dir/k.cu" &&
    "$dir/main" "$dir/good.raw" 0 && "$dir/main" "$dir/bad.raw" 7 &&
    python3 -c 'import numpy as np, sys
d = sys.argv[1]
a = np.load(d + "/a.npy")
got = np.fromfile(d + "/good.raw", dtype=np.float32).reshape(3, 5)
assert (got == a[[4, -1, 0]]).all(), got
print("aot: output equals NumPy")' "$dir" &&
    "$gpu/slc" compile 'a[k:, ::-1]' --shape a=f32[N,M] --shape k=i64[] --target cuda -o "$dir/s/k.cu" --header "$dir/s/k.h" --name k &&
    nvcc -O2 -arch=native -I"$dir/s" -o "$dir/s/main" benches/gpu_aot/scalars.cu "$dir/s/k.cu" &&
    for k in 2 -2 9; do "$dir/s/main" "$dir/s/$k.raw" "$k" || return 1; done &&
    python3 -c 'import numpy as np, sys
d = sys.argv[1]
a = np.load(d + "/a.npy")
for k in (2, -2, 9):
    want = a[k:, ::-1]
    got = np.fromfile(d + f"/s/{k}.raw", dtype=np.float32).reshape(want.shape)
    assert (got == want).all(), (k, got)
print("aot: run-time scalar bounds equal NumPy")' "$dir"
}

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
  # The Python package as one abi3 wheel (the GPU machine's Python differs from this one's).
  rm -rf "$gpu/wheels"
  (cd python && maturin build --release --strip -o "../$gpu/wheels")
  du -sh "$gpu"
  ;;
run)
  out=${OUT:-$gpu/out}
  mkdir -p "$out"
  status=0
  fail() { [ "$status" = 0 ] && status=$1; }
  nvidia-smi > "$out/nvidia-smi.txt" 2>&1
  # NVRTC where the loader does not find it by name (a toolkit under /usr/local/cuda, a wheel).
  if [ -z "${SLC_NVRTC:-}" ] && ! ldconfig -p 2>/dev/null | grep -q 'libnvrtc.so'; then
    SLC_NVRTC=$(ls /usr/local/cuda/lib64/libnvrtc.so* /usr/local/cuda*/targets/*/lib/libnvrtc.so* \
      "$(python3 -c 'import nvidia, os; print(os.path.dirname(nvidia.__path__[0]))' 2>/dev/null)"/nvidia/cu*/lib/libnvrtc.so* 2>/dev/null | head -n 1)
    export SLC_NVRTC
  fi
  echo "SLC_NVRTC=${SLC_NVRTC:-}" > "$out/env.txt"
  # The wheel unpacked beside the tree (no pip install: nothing is fetched).
  rm -rf "$gpu/py" && mkdir -p "$gpu/py" && python3 -m zipfile -e "$gpu"/wheels/slc-*.whl "$gpu/py"
  export PYTHONPATH="$PWD/$gpu/py${PYTHONPATH:+:$PYTHONPATH}"
  # step NAME CODE SECONDS COMMAND...: runs one step into $out/NAME.txt unless SLC_GPU_SKIP
  # names it; its seconds go to $out/steps.txt (the next run's limits are sized from them).
  step() {
    local name=$1 code=$2 limit=$3 t0=$SECONDS
    shift 3
    case " ${SLC_GPU_SKIP:-} " in *" $name "*) echo "$name skipped" >> "$out/steps.txt"; return ;; esac
    timeout "$limit" "$@" > "$out/$name.txt" 2>&1 || fail "$code"
    echo "$name $((SECONDS - t0)) s" >> "$out/steps.txt"
  }
  # A first look that is quick to read when something is wrong.
  step smoke 1 60 "$gpu/slc" eval 'a[::-1, 1:]' -i a=examples/data/a.npy --backend cuda --time
  # SLC_GPU_TESTS: a name filter for the Rust GPU tests (default: all of them).
  step cuda_gpu 2 260 "$gpu/cuda_gpu" --nocapture --test-threads 1 ${SLC_GPU_TESTS:-}
  export -f aot && export gpu
  step aot 3 60 bash -c 'aot "$1"' aot "$out"
  step python_cuda 5 120 python3 python/tests/test_cuda.py
  step probe 6 90 python3 benches/gpu_probe.py ${SLC_GPU_PROBE:+--cases "$SLC_GPU_PROBE"}
  # An older build's wheel carried in $gpu/old/wheels: the probe on it, then on this build
  # again, so that a change is measured against what it replaced in the same run.
  if ls "$gpu"/old/wheels/slc-*.whl > /dev/null 2>&1; then
    rm -rf "$gpu/old/py" && mkdir -p "$gpu/old/py" && python3 -m zipfile -e "$gpu"/old/wheels/slc-*.whl "$gpu/old/py"
    PYTHONPATH="$PWD/$gpu/old/py" step probe_old 6 90 python3 benches/gpu_probe.py ${SLC_GPU_PROBE:+--cases "$SLC_GPU_PROBE"}
    step probe_again 6 90 python3 benches/gpu_probe.py ${SLC_GPU_PROBE:+--cases "$SLC_GPU_PROBE"}
  fi
  # SLC_GPU_CASES: some of the cases only (B1,B2,...); SLC_GPU_BENCH: more of gpu.py's options.
  step gpu_table 4 300 python3 benches/gpu.py --slc "$gpu/slc" ${SLC_GPU_CASES:+--cases "$SLC_GPU_CASES"} \
    --json "$out/gpu.json" ${SLC_GPU_BENCH:-}
  cat "$out/steps.txt"
  tail -n 8 "$out"/*.txt
  exit "$status"
  ;;
*)
  echo "usage: bash benches/gpu_device.sh build|run" >&2
  exit 2
  ;;
esac
