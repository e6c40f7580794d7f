"""Stores through a kernel compiled for symbolic dims (`slc.compile(SRC, a=("float32", ("N",
"M")), ...)`), against NumPy's setitem: the first call (the layout compiled) and the median of
the calls after it, the same mask and index each call, results checked equal first.

    python3 benches/generic_stores.py [ROUNDS_1024 ROUNDS_4096]
"""
import sys, time, statistics, numpy as np, slc
rng = np.random.default_rng(1)
def bench(n, rounds):
    a0 = rng.random((n, n), dtype=np.float32); m = a0 > 0.5
    i = rng.integers(0, n, n // 4); v = rng.random((n // 4, n), dtype=np.float32)
    rows = []
    for name, src, types, args, numpy in [
        ("a[m] = 0", "a[m] = 0", dict(a=("float32", ("N", "M")), m=("bool", ("N", "M"))), dict(m=m), lambda x: x.__setitem__(m, 0)),
        ("a[i] = v", "a[i] = v", dict(a=("float32", ("N", "M")), i=("int64", ("K",)), v=("float32", ("K", "M"))), dict(i=i, v=v), lambda x: x.__setitem__(i, v)),
    ]:
        k = slc.compile(src, **types)
        a = a0.copy(); t = time.perf_counter(); k(a=a, **args); first = time.perf_counter() - t
        want = a0.copy(); numpy(want); assert (a == want).all()
        ts, tn = [], []
        for _ in range(rounds):
            a = a0.copy(); t = time.perf_counter(); k(a=a, **args); ts.append(time.perf_counter() - t)
            a = a0.copy(); t = time.perf_counter(); numpy(a); tn.append(time.perf_counter() - t)
        print(f"{n}² {name}: first {first*1e3:.1f} ms, then {statistics.median(ts)*1e3:.2f} ms; NumPy {statistics.median(tn)*1e3:.2f} ms", flush=True)
rounds = [int(x) for x in sys.argv[1:3]] or [7, 3]
bench(1024, rounds[0]); bench(4096, rounds[1])
