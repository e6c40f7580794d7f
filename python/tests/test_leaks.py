"""No memory grows over many calls on tiny arrays (reference counts, owned buffers)."""

import gc
import sys
import tracemalloc

import numpy as np

import slc


def rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4096
    except OSError:
        return None


def test_no_growth_over_many_tiny_calls():
    a = np.arange(20, dtype=np.float32).reshape(4, 5)
    out = np.empty((2, 5), np.float32)
    k = slc.compile("a[1:3, ::-1]", a=a)
    calls = 1_000_000

    def burst():
        for _ in range(calls // 4):
            k(a=a)
            k(a=a, out=out)
            slc.eval("a[1:3, ::-1]", a=a)
            try:
                k(a=a.astype(np.float64))
            except TypeError:
                pass

    burst()  # warm: caches, free lists
    gc.collect()
    refs = sys.getrefcount(a), sys.getrefcount(out), sys.getrefcount(k)
    rss = rss_bytes()
    tracemalloc.start()
    snapshot = tracemalloc.take_snapshot()
    burst()
    gc.collect()
    grown = sum(s.size_diff for s in tracemalloc.take_snapshot().compare_to(snapshot, "filename"))
    tracemalloc.stop()
    assert (sys.getrefcount(a), sys.getrefcount(out), sys.getrefcount(k)) == refs
    assert grown < 256 << 10, f"Python allocations grew by {grown} bytes"
    if rss is not None:
        assert rss_bytes() - rss < 16 << 20, "resident memory grew"


def test_errors_do_not_leak():
    x = np.arange(5)
    k = slc.compile("x[i]", x=x, i=("int64", (1,)))
    bad = np.array([7])
    for _ in range(1000):
        try:
            k(x=x, i=bad)
        except slc.IndexError:
            pass
    gc.collect()
    before = sys.getrefcount(bad)
    for _ in range(10000):
        try:
            k(x=x, i=bad)
        except slc.IndexError:
            pass
    assert sys.getrefcount(bad) == before
