#!/usr/bin/env python3
"""Reading selections of a chunked Zarr store (docs/zarr.md): slc against zarr-python, timed
interleaved in the same run, medians of several rounds, page cache warm.

The store: f32[8192, 4096] (128 MiB), chunks of 256 x 256 (256 KiB, 512 chunks), zstd (zarr-
python's default codecs), random normal data, written by zarr-python.

    Z1  box       a[1000:1500, 1000:1300]      9 chunks
    Z2  strided   a[::1000, :64]               9 chunks
    Z3  gather    a[i, :256], i: 1000 random rows (zarr-python: z.oindex[i, :256])   32 chunks

slc runs as a shell user runs it, a whole process: `slc eval EXPR -i a=store.zarr [-i i=rows.npy]
-o out.npy` (start, compile, read, write); with `--python`, also `slc.eval(EXPR, a=path)` in
process. zarr-python is timed in process, its read only (no file written): the comparison
favours it.

    python3 benches/zarr_read.py [--slc target/release/slc]... [--rounds 7] [--dir /tmp] [--python] [--blocks 61]

`--slc` given twice or more (an old build and a new one) times each binary, interleaved. When
the `tensorstore` package imports, TensorStore is timed too (in process, read only, its cache
off: the default), on the same store.
"""
import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time

# OpenBLAS's threads (NumPy's) spin after NumPy's import: 5 % of a profile of this loop, on a
# 2-core machine the readers' own threads contend with. None of the readers use BLAS.
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

import numpy as np  # noqa: E402
import zarr  # noqa: E402


def timed(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--slc", action="append", help="slc binaries to time (default target/release/slc)")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--dir", default=tempfile.gettempdir())
    ap.add_argument("--python", action="store_true", help="also time slc.eval in this process")
    ap.add_argument("--blocks", type=int, default=0,
                    help="with --python and TensorStore: also alternate the two in blocks of this many calls, a block each per round")
    args = ap.parse_args()
    binaries = args.slc or ["target/release/slc"]

    rng = np.random.default_rng(0)
    work = tempfile.mkdtemp(dir=args.dir, prefix="slc-zarr-bench-")
    store = os.path.join(work, "a.zarr")
    z = zarr.create_array(store, shape=(8192, 4096), chunks=(256, 256), dtype="f4")
    z[...] = rng.standard_normal((8192, 4096), dtype=np.float32)
    rows = rng.integers(0, 8192, 1000)
    rows_npy = os.path.join(work, "rows.npy")
    np.save(rows_npy, rows)
    out = os.path.join(work, "out.npy")

    try:
        import tensorstore

        t = tensorstore.open({"driver": "zarr3", "kvstore": {"driver": "file", "path": store}}).result()
    except ImportError:
        t = None
    cases = [
        ("Z1", "box", "a[1000:1500, 1000:1300]", [], lambda z: z[1000:1500, 1000:1300]),
        ("Z2", "strided", "a[::1000, :64]", [], lambda z: z[::1000, :64]),
        ("Z3", "gather", "a[i, :256]", ["-i", f"i={rows_npy}"], lambda z: z.oindex[rows, :256]),
    ]
    if args.python:
        import slc

    print(f"store {store}: f32[8192, 4096], chunks 256x256, zstd; medians of {args.rounds} rounds (ms)")
    header = "case  selection                 zarr-python" + ("   tensorstore" if t else "") + "".join(f"   slc eval ({b})" for b in binaries)
    print(header + ("   slc.eval" if args.python else ""))
    for name, kind, expr, extra, select in cases:
        zarr_read = lambda: select(z)  # noqa: E731
        ts_read = lambda: select(t).read().result()  # noqa: E731
        cmds = [[b, "eval", expr, "-i", f"a={store}", *extra, "-o", out] for b in binaries]
        # Same answers first.
        want = np.asarray(zarr_read())
        if t:
            assert np.array_equal(ts_read(), want), name
        for cmd in cmds:
            subprocess.run(cmd, check=True)
            assert np.array_equal(np.load(out), want), (name, cmd[0])
        inputs = {"a": store, **({"i": rows} if extra else {})}
        py = lambda: slc.eval(expr, **inputs)  # noqa: E731
        if args.python:
            assert np.array_equal(py(), want), name
        t_zarr, t_ts, t_py = [], [], []
        t_slc = [[] for _ in cmds]
        # The readers in this process, call by call in turn; then the command lines. (A process
        # run between two calls leaves the next one a cold cache and sleeping threads: timed so,
        # every reader here was 1.3-2x slower, and by how much varied from run to run.)
        readers = [(zarr_read, t_zarr)] + ([(ts_read, t_ts)] if t else []) + ([(py, t_py)] if args.python else [])
        for r in range(args.rounds):
            # Each round starts with the next reader, so each follows each other as often: a
            # reader's threads still spinning, or the cache it leaves, weigh on the one after.
            for read, times in readers[r % len(readers) :] + readers[: r % len(readers)]:
                times.append(timed(read))
        for _ in range(args.rounds):
            for cmd, ts in zip(cmds, t_slc):
                ts.append(timed(lambda: subprocess.run(cmd, check=True)))
        ms = lambda ts: f"{statistics.median(ts) * 1e3:10.1f}"  # noqa: E731
        line = f"{name}    {kind:8} {expr:24} {ms(t_zarr)}" + (f"    {ms(t_ts)}" if t else "") + "".join(f"    {ms(ts)}" for ts in t_slc)
        if args.python:
            line += f"         {ms(t_py)}"
        print(line)
        if args.blocks and args.python and t:
            # slc.eval and TensorStore each called `blocks` times in a row, the first of the
            # pair swapped each round: how each does when its threads and caches are its own.
            rounds, ratios = [], []
            for r in range(args.rounds):
                med = {}
                for who, read in [("slc", py), ("ts", ts_read)][:: 1 if r % 2 == 0 else -1]:
                    med[who] = statistics.median([timed(read) for _ in range(args.blocks)]) * 1e3
                rounds.append(f"{med['slc']:.2f}/{med['ts']:.2f}")
                ratios.append(med["ts"] / med["slc"])
            print(f"      in blocks of {args.blocks}, slc.eval/TensorStore ms: {' '.join(rounds)}; "
                  f"TensorStore/slc median {statistics.median(ratios):.2f}, min {min(ratios):.2f}")
    shutil.rmtree(work)


if __name__ == "__main__":
    main()
