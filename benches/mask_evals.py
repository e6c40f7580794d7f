"""`slc.eval` over a boolean mask as NumPy users write it (`x[m]`, `x[m] = 0`), a new mask each
call and the same mask again, against NumPy on the same arrays in the same run: medians of the
calls after the first (the first apart), results checked equal first. The masks are about half
`True`, drawn before the timing.

    python3 benches/mask_evals.py [ROUNDS_1024 ROUNDS_4096]
"""
import statistics
import sys
import time

import numpy as np

import slc

rng = np.random.default_rng(1)


def timed(f):
    t = time.perf_counter()
    f()
    return time.perf_counter() - t


def bench(n, rounds):
    a0 = rng.random((n, n), dtype=np.float32)
    masks = [rng.random((n, n), dtype=np.float32) > 0.5 for _ in range(rounds + 1)]
    cases = [
        ("a[m], new mask each call", False, lambda r: masks[r]),
        ("a[m], the same mask", False, lambda r: masks[0]),
        ("a[m] = 0, new mask each call", True, lambda r: masks[r]),
        ("a[m] = 0, the same mask", True, lambda r: masks[0]),
    ]
    for name, store, mask in cases:
        slc.clear_cache()
        src = "a[m] = 0" if store else "a[m]"
        times, numpy = [], []
        for r in range(rounds + 1):
            m = mask(r)
            a, want = a0.copy(), a0.copy()
            if store:
                took = timed(lambda: slc.eval(src, a=a, m=m))
                numpy.append(timed(lambda: want.__setitem__(m, 0)))
                assert np.array_equal(a, want)
            else:
                got = []
                took = timed(lambda: got.append(slc.eval(src, a=a, m=m)))
                numpy.append(timed(lambda: got.append(a0[m])))
                assert np.array_equal(got[0], got[1])
            times.append(took)
        print(
            f"{n}² {name}: first {times[0] * 1e3:.1f} ms, then {statistics.median(times[1:]) * 1e3:.2f} ms;"
            f" NumPy {statistics.median(numpy[1:]) * 1e3:.2f} ms",
            flush=True,
        )


rounds = [int(x) for x in sys.argv[1:3]] or [7, 5]
bench(1024, rounds[0])
bench(4096, rounds[1])
