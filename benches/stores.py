#!/usr/bin/env python3
"""The store cases B13-B15 (issue 28): slc against NumPy's in-place setitem, each against a
memcpy of the bytes the store writes (np.copyto between two buffers of that size), timed
interleaved in the same run, medians of several rounds.

    B13  a[i] = v       a: f32[100000, 256], i: 65,536 random rows (duplicates included), v: f32[65536, 256]
    B14  a[:, ::2] = b  a: f32[4096, 4096], b: f32[4096, 2048]
    B15  a[m] = 0       a: f32[4096, 4096], m: a random half of its elements
    B15r a[r] = 0       a: f32[4096, 4096], r: a random half of its rows
    B14f a[1:] = 0      a: f32[4096, 4096], a box filled with one value

Stores whose value is of another dtype, cast as NumPy casts it (docs/semantics.md, Stores):

    C1   a[:] = v       a: i32[4096, 1024], v: f64 (a float truncated into integers)
    C2   a[:] = v       a: f64[4096, 1024], v: i32
    C3   a[i] = v       a: f32[100000, 256], i as B13, v: f64[65536, 256]
    C4   a[:] += v      a: i32[4096, 1024], v: i8

Stores into NumPy views, written through the view in place (base f32[2048, 2048]):

    V1   a[i] = v       a: x[:, ::2], i: 1000 random rows, v: f32[1000, 1024]
    V2   a[i] = v       a: x Fortran-ordered, i: 1000 random rows, v: f32[1000, 2048]
    V3   a[:, 5] = 0    a: x.T (a row of x)
    V4   a[::3] = 1     a: x[::2]
    V5   a[5] = 0       a: x itself (dense): one row of a large target
    V6   a[i] = v       a: x[::-1, ::2] (rows backwards), i and v as V1
    V7   a[i] += v      a: x[:, ::2], i and v as V1 (i repeats rows: the buffered kernels)

slc runs as a NumPy user runs it, `slc.eval(STORE, a=x, ...)` (x updated in place), with the
default threads, and as a compiled kernel on one thread (`slc.compile(STORE, ...)(..., threads=1)`,
also in place), NumPy's setitem being single-threaded.

    python3 benches/stores.py [--rounds 7] [--cases B13,B15]
"""
import argparse
import statistics
import time

import numpy as np

import slc


def cases(rng):
    a = rng.standard_normal((100000, 256), dtype=np.float32)
    i = rng.integers(0, 100000, 65536)
    v = rng.standard_normal((65536, 256), dtype=np.float32)
    yield "B13", "a[i] = v", {"a": a, "i": i, "v": v}, lambda x: x.__setitem__(i, v), v.nbytes
    a = rng.standard_normal((4096, 4096), dtype=np.float32)
    b = rng.standard_normal((4096, 2048), dtype=np.float32)
    yield "B14", "a[:, ::2] = b", {"a": a, "b": b}, lambda x: x.__setitem__((slice(None), slice(None, None, 2)), b), b.nbytes
    m = rng.random((4096, 4096)) < 0.5
    yield "B15", "a[m] = 0", {"a": a.copy(), "m": m}, lambda x: x.__setitem__(m, 0), int(m.sum()) * 4
    r = rng.random(4096) < 0.5
    yield "B15r", "a[r] = 0", {"a": a.copy(), "r": r}, lambda x: x.__setitem__(r, 0), int(r.sum()) * 4096 * 4
    yield "B14f", "a[1:] = 0", {"a": a.copy()}, lambda x: x.__setitem__(slice(1, None), 0), 4095 * 4096 * 4
    ints = rng.integers(-1000, 1000, (4096, 1024), dtype=np.int32)
    floats = rng.standard_normal((4096, 1024)) * 1000
    yield "C1", "a[:] = v", {"a": ints, "v": floats}, lambda x: x.__setitem__(slice(None), floats), ints.nbytes
    yield "C2", "a[:] = v", {"a": floats, "v": ints}, lambda x: x.__setitem__(slice(None), ints), floats.nbytes
    a = rng.standard_normal((100000, 256), dtype=np.float32)
    i = rng.integers(0, 100000, 65536)
    v = rng.standard_normal((65536, 256))
    yield "C3", "a[i] = v", {"a": a, "i": i, "v": v}, lambda x: x.__setitem__(i, v), v.size * 4
    small = rng.integers(-100, 100, (4096, 1024), dtype=np.int8)
    yield "C4", "a[:] += v", {"a": ints, "v": small}, lambda x: x.__iadd__(small), ints.nbytes
    x = rng.standard_normal((2048, 2048), dtype=np.float32)
    i = rng.integers(0, 2048, 1000)
    v = rng.standard_normal((1000, 1024), dtype=np.float32)
    yield "V1", "a[i] = v", {"a": x, "i": i, "v": v}, lambda t: t.__setitem__(i, v), v.nbytes, lambda b: b[:, ::2]
    w = rng.standard_normal((1000, 2048), dtype=np.float32)
    f = np.asfortranarray(x)
    yield "V2", "a[i] = v", {"a": f, "i": i, "v": w}, lambda t: t.__setitem__(i, w), w.nbytes
    yield "V3", "a[:, 5] = 0", {"a": x}, lambda t: t.__setitem__((slice(None), 5), 0), 2048 * 4, lambda b: b.T
    yield "V4", "a[::3] = 1", {"a": x}, lambda t: t.__setitem__(slice(None, None, 3), 1), 342 * 2048 * 4, lambda b: b[::2]
    yield "V5", "a[5] = 0", {"a": x}, lambda t: t.__setitem__(5, 0), 2048 * 4
    yield "V6", "a[i] = v", {"a": x, "i": i, "v": v}, lambda t: t.__setitem__(i, v), v.nbytes, lambda b: b[::-1, ::2]
    assert len(np.unique(i)) < len(i), "V7's rows repeat"
    yield "V7", "a[i] += v", {"a": x, "i": i, "v": v}, lambda t: t.__setitem__(i, t[i] + v), v.nbytes, lambda b: b[:, ::2]


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--cases", default="")
    args = p.parse_args()
    wanted = set(filter(None, args.cases.split(",")))
    print(f"numpy {np.__version__}; medians of {args.rounds} rounds; ratio = time / memcpy of the written bytes")
    print("| case | NumPy setitem | slc.eval | slc, 1 thread | memcpy | NumPy ratio | slc ratio | slc 1-thread ratio |")
    print("|---|---|---|---|---|---|---|---|")
    for case, src, inputs, numpy_store, written, *view in cases(np.random.default_rng(0x5EED)):
        if wanted and case not in wanted:
            continue
        # The target: the array given, or a view of a copy of it (the base is what is compared).
        base, view = inputs["a"], (view or [lambda b: b])[0]
        want = base.copy(order="K")
        numpy_store(view(want))
        got = base.copy(order="K")
        slc.eval(src, **{**inputs, "a": view(got)})
        assert np.array_equal(got, want), case
        kernel = slc.compile(src, **{**inputs, "a": view(base)})
        got = base.copy(order="K")
        assert kernel(**{**inputs, "a": view(got)}, threads=1) is None
        assert np.array_equal(got, want), case
        src_buf, dst_buf = np.ones(written, np.uint8), np.empty(written, np.uint8)
        n, s, k, c = [], [], [], []
        for _ in range(args.rounds):
            x = view(base.copy(order="K"))
            n.append(timed(lambda: numpy_store(x)))
            x = view(base.copy(order="K"))
            s.append(timed(lambda: slc.eval(src, **{**inputs, "a": x})))
            x = view(base.copy(order="K"))
            k.append(timed(lambda: kernel(**{**inputs, "a": x}, threads=1)))
            c.append(timed(lambda: np.copyto(dst_buf, src_buf)))
        n, s, k, c = (statistics.median(t) for t in (n, s, k, c))
        print(
            f"| {case} `{src}` | {n * 1e3:.2f} ms | {s * 1e3:.2f} ms | {k * 1e3:.2f} ms | {c * 1e3:.2f} ms "
            f"| {n / c:.2f} | {s / c:.2f} | {k / c:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
