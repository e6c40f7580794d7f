"""Stores through a kernel compiled for symbolic dims (`slc.compile(SRC, a=("float32", ("N",
"M")), ...)`), against NumPy's setitem: the first call and the median of the calls after it,
results checked equal first. The mask and index are the same every call, except in the case
"new mask each call" (masks made before the timing).

    python3 benches/generic_stores.py [ROUNDS_1024 ROUNDS_4096]
"""
import sys, time, statistics, numpy as np, slc
rng = np.random.default_rng(1)
def bench(n, rounds):
    a0 = rng.random((n, n), dtype=np.float32); m = a0 > 0.5
    masks = [rng.random((n, n), dtype=np.float32) > 0.5 for _ in range(rounds + 1)]
    i = rng.integers(0, n, n // 4); v = rng.random((n // 4, n), dtype=np.float32)
    am = dict(a=("float32", ("N", "M")), m=("bool", ("N", "M")))
    for name, src, types, args, numpy in [
        ("a[m] = 0", "a[m] = 0", am, lambda r: dict(m=m), lambda x, r: x.__setitem__(m, 0)),
        ("a[m] = 0, new mask each call", "a[m] = 0", am, lambda r: dict(m=masks[r]), lambda x, r: x.__setitem__(masks[r], 0)),
        ("a[i] = v", "a[i] = v", dict(a=("float32", ("N", "M")), i=("int64", ("K",)), v=("float32", ("K", "M"))), lambda r: dict(i=i, v=v), lambda x, r: x.__setitem__(i, v)),
    ]:
        k = slc.compile(src, **types)
        a = a0.copy(); t = time.perf_counter(); k(a=a, **args(0)); first = time.perf_counter() - t
        want = a0.copy(); numpy(want, 0); assert (a == want).all()
        ts, tn = [], []
        for r in range(1, rounds + 1):
            a = a0.copy(); t = time.perf_counter(); k(a=a, **args(r)); ts.append(time.perf_counter() - t)
            want = a0.copy(); t = time.perf_counter(); numpy(want, r); tn.append(time.perf_counter() - t)
            assert (a == want).all()
        print(f"{n}² {name}: first {first*1e3:.1f} ms, then {statistics.median(ts)*1e3:.2f} ms; NumPy {statistics.median(tn)*1e3:.2f} ms", flush=True)
rounds = [int(x) for x in sys.argv[1:3]] or [7, 3]
bench(1024, rounds[0]); bench(4096, rounds[1])
