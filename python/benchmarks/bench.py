#!/usr/bin/env python3
"""slc from Python against NumPy on the benchmark cases B1-B12 (docs/benchmarks.md), in one
process, each beside a memcpy of the output's bytes (np.copyto between uint8 buffers) timed
interleaved, as `slc bench` and benches/numpy_bench.py do. Not a test: it prints a table.

    python benchmarks/bench.py                 # every case, 1 s each
    python benchmarks/bench.py --cases B11,B1 --seconds 0.3

Columns: slc fresh = `kernel(a=...)` (allocates the result), slc into = `kernel(..., out=)`,
both on one thread (`threads=1`); slc all cores = into, default threads; NumPy fresh =
`a[...].copy()` / `np.take` / `np.take_along_axis`, NumPy into = `np.copyto(out, a[...])` /
`np.take(..., out=)`; eval = `slc.eval(text, a=...)` with the kernel cached. Ratios are to the
memcpy median of the same run.
"""

import argparse
import statistics
import time

import numpy as np

import slc


def cases(rng):
    f32 = lambda *shape: np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    return [
        ("B1", "a[:, 1:-1]", lambda: {"a": f32(4096, 4096)}, lambda a: a[:, 1:-1]),
        ("B2", "a[::-1]", lambda: {"a": f32(16777216)}, lambda a: a[::-1]),
        ("B3", "a[:, ::2]", lambda: {"a": f32(4096, 4096)}, lambda a: a[:, ::2]),
        ("B4", "a[..., ::-1]", lambda: {"a": f32(4096, 4096)}, lambda a: a[..., ::-1]),
        ("B5", "a[2:, ..., None, :10]", lambda: {"a": f32(64, 64, 64, 64)}, lambda a: a[2:, ..., None, :10]),
        ("B6", "a[:, 0]", lambda: {"a": f32(4096, 4096)}, lambda a: a[:, 0]),
        (
            "B7",
            "a[100:900, 200:1800, ::-1]",
            lambda: {"a": (np.arange(1080 * 1920 * 3) % 256).astype(np.uint8).reshape(1080, 1920, 3)},
            lambda a: a[100:900, 200:1800, ::-1],
        ),
        (
            "B8",
            "gather(a, idx, axis=0)",
            lambda: {"a": f32(100000, 256), "idx": rng.integers(0, 100000, 65536)},
            ("take", 0),
        ),
        ("B9", "gather(a, idx, axis=1)", lambda: {"a": f32(4096, 4096), "idx": rng.integers(0, 4096, 2048)}, ("take", 1)),
        (
            "B10",
            "gather(a, idx, axis=1, batch_dims=1)",
            lambda: {"a": f32(512, 4096), "idx": rng.integers(0, 4096, (512, 1024))},
            ("take_along_axis", 1),
        ),
        ("B11", "a[1:3, ::-1]", lambda: {"a": f32(4, 5)}, lambda a: a[1:3, ::-1]),
        (
            "B12",
            "a[::2, ::-1, 1:]",
            lambda: {"a": np.arange(1024 * 1024 * 8, dtype=np.float64).reshape(1024, 1024, 8)},
            lambda a: a[::2, ::-1, 1:],
        ),
    ]


def per_call_ns(fn, batch):
    t0 = time.perf_counter_ns()
    for _ in range(batch):
        fn()
    return (time.perf_counter_ns() - t0) / batch


def measure(fns, seconds):
    """Median ns per call of each function, timed round-robin (so drift hits all alike);
    tiny calls are timed in batches so that the clock's cost does not count."""
    for fn in fns:
        fn()
    single = min(per_call_ns(fns[0], 1) for _ in range(3))
    batch = max(1, int(20_000 / max(single, 1)))
    samples = [[] for _ in fns]
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(samples[0]) < 5:
        for s, fn in zip(samples, fns):
            s.append(per_call_ns(fn, batch))
    return [statistics.median(s) for s in samples]


def show(ns):
    if ns is None:
        return "–"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    if ns >= 1e3:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns:.0f} ns"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", help="comma-separated case names (default: all)")
    parser.add_argument("--seconds", type=float, default=1.0, help="time per case")
    args = parser.parse_args()
    chosen = set(args.cases.split(",")) if args.cases else None
    rng = np.random.default_rng(0)
    print(f"NumPy {np.__version__}, slc {slc.__version__}; medians, ratio to memcpy in brackets\n")
    print("| case | memcpy | slc fresh | slc into | slc into, all cores | NumPy fresh | NumPy into | slc.eval (cached) |")
    print("|---|---|---|---|---|---|---|---|")
    for name, source, make, numpy_op in cases(rng):
        if chosen and name not in chosen:
            continue
        inputs = make()
        kernel = slc.compile(source, **inputs)
        out = np.empty(kernel.shape, kernel.dtype)
        src = np.ones(out.nbytes, np.uint8)
        dst = np.empty_like(src)
        a = inputs["a"]
        if callable(numpy_op):
            numpy_out = np.empty_like(out)
            numpy_fresh = lambda: numpy_op(a).copy()
            numpy_into = lambda: np.copyto(numpy_out, numpy_op(a))
        elif numpy_op[0] == "take":
            idx, axis = inputs["idx"], numpy_op[1]
            numpy_out = np.empty_like(out)
            numpy_fresh = lambda: np.take(a, idx, axis=axis)
            numpy_into = lambda: np.take(a, idx, axis=axis, out=numpy_out)
        else:
            idx = inputs["idx"]
            numpy_fresh = lambda: np.take_along_axis(a, idx, axis=1)
            numpy_into = None
        assert np.array_equal(kernel(**inputs), numpy_fresh()), name
        fns = [
            lambda: np.copyto(dst, src),
            lambda: kernel(**inputs, threads=1),
            lambda: kernel(**inputs, out=out, threads=1),
            lambda: kernel(**inputs, out=out),
            numpy_fresh,
        ]
        if numpy_into:
            fns.append(numpy_into)
        fns.append(lambda: slc.eval(source, **inputs))
        times = measure(fns, args.seconds)
        memcpy = times[0]
        if not numpy_into:
            times.insert(5, None)
        cells = [show(memcpy)] + [
            "–" if t is None else f"{show(t)} ({t / memcpy:.2f}×)" for t in times[1:]
        ]
        print(f"| {name} `{source}` | " + " | ".join(cells) + " |", flush=True)
        del inputs, kernel, out, src, dst, fns


def python_threads(seconds):
    """The GIL released: 2 Python threads calling one kernel (threads=1 each) against one
    thread making the same calls, on B12 (each call 2.4 ms)."""
    from concurrent.futures import ThreadPoolExecutor

    a = np.arange(1024 * 1024 * 8, dtype=np.float64).reshape(1024, 1024, 8)
    kernel = slc.compile("a[::2, ::-1, 1:]", a=a)
    outs = [np.empty(kernel.shape, kernel.dtype) for _ in range(2)]
    calls = max(8, int(seconds / 0.0025))

    def work(out, n):
        for _ in range(n):
            kernel(a=a, out=out, threads=1)

    work(outs[0], 2)
    t0 = time.perf_counter()
    work(outs[0], calls)
    one = time.perf_counter() - t0
    with ThreadPoolExecutor(2) as pool:
        t0 = time.perf_counter()
        list(pool.map(work, outs, [calls // 2, calls - calls // 2]))
        two = time.perf_counter() - t0
    print(f"\n{calls} calls of B12 into out= (threads=1): one Python thread {one * 1e3:.1f} ms, "
          f"two Python threads {two * 1e3:.1f} ms ({one / two:.2f}x)")


if __name__ == "__main__":
    main()
    python_threads(1.0)
