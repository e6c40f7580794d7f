#!/usr/bin/env python3
"""NumPy's times for the benchmark cases B1-B12 (issue 4), each against a memcpy of the output's
bytes (np.copyto between two uint8 buffers) timed interleaved in the same run, as `slc bench` does.

Fresh: NumPy allocates the result (`a[...].copy()`, `np.take`, `np.take_along_axis`).
Into: the result goes into a preallocated array (`np.copyto(out, a[...])`, `np.take(..., out=)`);
np.take_along_axis has no `out`, so B10 has no into time.

Prints one JSON object per case on stdout (for benches/report.py), or a table with --table.
"""

import argparse
import json
import statistics
import sys
import time

import numpy as np


def case_inputs(rng):
    f32 = lambda *shape: np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    a2 = f32(4096, 4096)
    return [
        ("B1", a2, lambda a: a[:, 1:-1], None),
        ("B2", f32(16777216), lambda a: a[::-1], None),
        ("B3", a2, lambda a: a[:, ::2], None),
        ("B4", a2, lambda a: a[..., ::-1], None),
        ("B5", f32(64, 64, 64, 64), lambda a: a[2:, ..., np.newaxis, :10], None),
        ("B6", a2, lambda a: a[:, 0], None),
        ("B7", (np.arange(1080 * 1920 * 3) % 256).astype(np.uint8).reshape(1080, 1920, 3),
         lambda a: a[100:900, 200:1800, ::-1], None),
        ("B8", f32(100000, 256), None, ("take", rng.integers(0, 100000, 65536), 0)),
        ("B9", a2, None, ("take", rng.integers(0, 4096, 2048), 1)),
        ("B10", f32(512, 4096), None, ("take_along_axis", rng.integers(0, 4096, (512, 1024)), 1)),
        ("B11", f32(4, 5), lambda a: a[1:3, ::-1], None),
        ("B12", np.arange(1024 * 1024 * 8, dtype=np.float64).reshape(1024, 1024, 8),
         lambda a: a[::2, ::-1, 1:], None),
    ]


def timed(fn):
    t0 = time.perf_counter_ns()
    fn()
    return time.perf_counter_ns() - t0


def measure(fn, out_bytes, seconds):
    """Median ns of fn and of a memcpy of out_bytes, interleaved."""
    src = np.ones(out_bytes, dtype=np.uint8)
    dst = np.empty_like(src)
    memcpy = lambda: np.copyto(dst, src)
    fn(), memcpy()  # warm up: first-touch faults, caches
    kernel_ns, memcpy_ns = [], []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(kernel_ns) < 5:
        kernel_ns.append(timed(fn))
        memcpy_ns.append(timed(memcpy))
    return statistics.median(kernel_ns), statistics.median(memcpy_ns), len(kernel_ns)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=2.0, help="time per case and mode")
    parser.add_argument("--cases", default="", help="comma-separated ids (default: all)")
    parser.add_argument("--table", action="store_true", help="print a table instead of JSON lines")
    args = parser.parse_args()
    wanted = set(filter(None, args.cases.split(",")))

    for case, a, view, gather in case_inputs(np.random.default_rng(0x5EED)):
        if wanted and case not in wanted:
            continue
        if view is not None:
            out = view(a).copy()
            fresh = lambda: view(a).copy()
            into = lambda: np.copyto(out, view(a))
        else:
            kind, idx, axis = gather
            if kind == "take":
                out = np.take(a, idx, axis=axis)
                fresh = lambda: np.take(a, idx, axis=axis)
                into = lambda: np.take(a, idx, axis=axis, out=out)
            else:
                out = np.take_along_axis(a, idx, axis=axis)
                fresh = lambda: np.take_along_axis(a, idx, axis=axis)
                into = None
        row = {"case": case, "out_bytes": out.nbytes, "numpy": np.__version__}
        for mode, fn in (("fresh", fresh), ("into", into)):
            if fn is None:
                continue
            ns, memcpy_ns, samples = measure(fn, out.nbytes, args.seconds)
            row[mode] = {"median_ns": ns, "memcpy_median_ns": memcpy_ns,
                         "ratio": ns / memcpy_ns, "samples": samples}
        if args.table:
            cells = [f"{m} {row[m]['median_ns'] / 1e3:10.1f} us ratio {row[m]['ratio']:6.2f}"
                     for m in ("fresh", "into") if m in row]
            print(f"{case:4} " + "   ".join(cells))
        else:
            print(json.dumps(row))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
