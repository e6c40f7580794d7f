"""Where a call's time goes from Python on the GPU, for a few cases of gpu_cases.json: each
form timed with CUDA events around one call (as gpu.py times it: the host's work before the
launch counts, since the device waits for it) and around ten calls in a row (divided by ten:
the device's time per call where the host keeps ahead), and the host's time per call with the
synchronization. Gathers are timed with their default out-of-range mode and with `mode=clamp`,
which never fails and so reads nothing back. Prints one JSON line per case.

    python3 benches/gpu_probe.py [--cases B8,B10]
"""
import argparse, json, re, statistics, sys, time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from gpu import inputs_for  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cases", default="B1,B8,B10,B12")
    args = p.parse_args()
    import torch
    import slc
    cases = {c["id"]: c for c in json.loads((HERE / "gpu_cases.json").read_text())["cases"]}
    rng = np.random.default_rng(12345)

    def events(fn, calls, reps=15):
        fn(); fn(); torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(calls):
                fn()
            e.record(); e.synchronize()
            ts.append(s.elapsed_time(e) / 1e3 / calls)
        return statistics.median(ts)

    def host_us(fn, n=200):
        fn(); torch.cuda.synchronize()
        ts = []
        for _ in range(n):
            t0 = time.perf_counter(); fn(); torch.cuda.synchronize(); ts.append(time.perf_counter() - t0)
        return statistics.median(ts) * 1e6

    for cid in [c for c in args.cases.split(",") if c]:
        case = cases[cid]
        x = inputs_for(case, rng)
        t = {k: torch.from_numpy(v).to("cuda") for k, v in x.items()}
        types = {k: (str(v.dtype), v.shape) for k, v in x.items()}
        expr = case["expr"]
        forms = {"slc": slc.compile(expr, **types)}
        if expr.startswith("gather"):
            forms["slc clamp"] = slc.compile(expr[:-1] + ", mode=clamp)", **types)
        first = torch.from_dlpack(forms["slc"](**t))
        out = torch.empty_like(first)
        nbytes = first.numel() * first.element_size()
        src = torch.empty(nbytes, dtype=torch.uint8, device="cuda"); dst = torch.empty_like(src)
        copy = events(lambda: dst.copy_(src), 1)
        row = {"id": cid, "expr": expr, "copy_us": copy * 1e6}
        if expr.startswith("gather_elements"):
            row["torch"] = lambda: torch.gather(t["data"], 1, t["idx"])
        elif expr.startswith("gather("):
            axis = int(re.search(r"axis=(\d+)", expr).group(1))
            row["torch"] = lambda: torch.index_select(t["data"], axis, t["idx"])
        fns = {name: (lambda k=k: k(**t)) for name, k in forms.items()}
        fns.update({name + " out=": (lambda k=k: k(**t, out=out)) for name, k in forms.items()})
        # Into slc's own memory (the driver's stream-ordered pool) rather than PyTorch's.
        pool = forms["slc"](**t)
        fns["slc out=slc's"] = lambda: forms["slc"](**t, out=pool)
        if "torch" in row:
            fns["torch"] = row.pop("torch")
        for name, fn in fns.items():
            row[name] = {"x1": round(events(fn, 1) / copy, 3), "x10": round(events(fn, 10) / copy, 3),
                         "host_us": round(host_us(fn), 1)}
        print(json.dumps(row), flush=True)
        del t, x, first, out, src, dst, pool, fns
        torch.cuda.empty_cache()
    return 0


if __name__ == "__main__":
    sys.exit(main())
