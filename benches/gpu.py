"""slc on an NVIDIA GPU against PyTorch and CuPy: the cases B1-B12 of gpu_cases.json (beside this
file), then the stores B13-B15 (gpu_stores.py), each timed with CUDA events as a ratio to a device-to-device copy of the output's bytes
measured in the same run, every result checked bit for bit against NumPy. Prints the table of
issue 27 with slc's column, then the measurements as JSON.

slc runs as a PyTorch user runs it: `slc.compile(EXPR, **types)` once, then `k(**tensors)` on
the torch tensors in device memory (read in place through DLPack, the result a new
`slc.DeviceArray` taken back with `torch.from_dlpack`), timed exactly as PyTorch and CuPy are
(CUDA events, median of 20 after 2 warm-ups; the peers as gpu_peers.py times them). B11 is per
call from Python including the synchronization, for all three. The command line
(`slc eval EXPR --backend cuda --time`) runs each case too, for its H2D / kernel / D2H split.

Run on the GPU machine (Python >= 3.10 with numpy, torch, cupy, and the slc package importable;
no Rust needed):

    python3 benches/gpu.py --slc ./target/release/slc [--cases B1,B2] [--json out.json]
"""
import argparse, json, os, re, statistics, subprocess, sys, tempfile, time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
REPS = 20


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--slc", required=True, help="the slc binary built with the cuda back end")
    p.add_argument("--cases", default="", help="comma-separated case ids (default: all)")
    p.add_argument("--json", help="write the measurements here too")
    p.add_argument("--no-peers", action="store_true", help="time slc only")
    p.add_argument("--cli-cases", help="the cases the command line runs too, for its kernel alone (default: all)")
    return p.parse_args()


def inputs_for(case, rng):
    """NumPy inputs as gpu_peers.py makes them: data random, index tensors int64 uniform in
    [0, data.shape[axis])."""
    out = {}
    specs = case["inputs"]
    for name, (dtype, shape) in specs.items():
        if name == "idx":
            continue
        if np.dtype(dtype).kind == "u":
            out[name] = rng.integers(0, 255, shape, dtype=dtype)
        else:
            out[name] = rng.standard_normal(shape, dtype=np.float32).astype(dtype)
    if "idx" in specs:
        _, shape = specs["idx"]
        axis = int(re.search(r"axis=(\d+)", case["expr"]).group(1))
        out["idx"] = rng.integers(0, out["data"].shape[axis], shape, dtype=np.int64)
    return out


def numpy_result(case, x):
    e = case["expr"]
    if e.startswith("gather_elements("):
        return np.take_along_axis(x["data"], x["idx"], axis=1)
    if e.startswith("gather("):
        axis = int(re.search(r"axis=(\d+)", e).group(1))
        return np.take(x["data"], x["idx"], axis=axis)
    name = e.split("[", 1)[0]
    return np.ascontiguousarray(eval(e, {}, {name: x[name], "None": None}))  # noqa: S307


def cli_runs(args, case):
    """Whether the command line runs `case` too (`--cli-cases`)."""
    return args.cli_cases is None or case["id"] in args.cli_cases.split(",")


def run_slc(slc, case, x, tmp):
    args = [slc, "eval", case["expr"], "--backend", "cuda", "--time", "--repeat", str(REPS)]
    for name, arr in x.items():
        path = tmp / f"{name}.npy"
        np.save(path, arr)
        args += ["-i", f"{name}={path}"]
    out = tmp / "out.npy"
    args += ["-o", str(out)]
    env = dict(os.environ, CUDA_MODULE_LOADING="EAGER")
    try:
        proc = subprocess.run(args, capture_output=True, text=True, env=env)
        if proc.returncode != 0:
            return {"error": proc.stderr.strip()[-400:]}
        times = {m.group(1): float(m.group(2)) / 1e3 for m in re.finditer(r"^(\w+)\s+([0-9.]+) ms", proc.stderr, re.M)}
        return {"s": times.get("kernel"), "times": times, "result": np.load(out), "log": proc.stderr}
    finally:
        for f in tmp.iterdir():
            f.unlink()


def main():
    args = parse_args()
    cases = json.loads((HERE / "gpu_cases.json").read_text())["cases"]
    # B13-B15 (stores) run after these, from gpu_stores.py.
    wanted = [c for c in args.cases.split(",") if c]
    cases = [c for c in cases if not wanted or c["id"] in wanted]
    import torch
    dev = torch.device("cuda")
    cp = None
    if not args.no_peers:
        import cupy as cp  # noqa: F811

    def events_time(fn, reps=REPS):
        fn(); fn(); torch.cuda.synchronize()
        ts = []
        for _ in range(reps):
            s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
            s.record(); fn(); e.record(); e.synchronize()
            ts.append(s.elapsed_time(e) / 1e3)
        return statistics.median(ts)

    def interleaved(fns, reps=REPS):
        """Median seconds per call of each of `fns` (name: callable), timed as events_time times
        one, but in rounds that time every form once each, in an order rotated every round: a
        drift of the device's clocks or of the host weighs on all of them alike."""
        names = list(fns)
        for fn in fns.values():
            fn(); fn()
        torch.cuda.synchronize()
        ts = {n: [] for n in names}
        for r in range(reps):
            for n in names[r % len(names):] + names[:r % len(names)]:
                s = torch.cuda.Event(enable_timing=True); e = torch.cuda.Event(enable_timing=True)
                s.record(); fns[n](); e.record(); e.synchronize()
                ts[n].append(s.elapsed_time(e) / 1e3)
        return {n: statistics.median(v) for n, v in ts.items()}

    def per_call_us(fn, n=2000):
        """Microseconds per call from Python, the synchronization included (B11)."""
        for _ in range(200): fn()
        torch.cuda.synchronize(); t0 = time.perf_counter()
        for _ in range(n): fn()
        torch.cuda.synchronize()
        return (time.perf_counter() - t0) / n * 1e6

    def copy_time(nbytes):
        src = torch.empty(nbytes, dtype=torch.uint8, device=dev); dst = torch.empty_like(src)
        return events_time(lambda: dst.copy_(src))

    def same_bits(a, b):
        """Equal dtypes, shapes and bits (compared as unsigned integers of the width: no copies,
        NaNs and signed zeros told apart)."""
        if a.dtype != b.dtype or a.shape != b.shape:
            return False
        bits = np.dtype(f"u{a.dtype.itemsize}") if a.dtype.itemsize in (1, 2, 4, 8) else np.uint8
        view = lambda x: np.ascontiguousarray(x).view(bits)  # noqa: E731
        return bool(np.array_equal(view(a), view(b)))

    def peers(case, x):
        """PyTorch's and CuPy's forms of the case, as gpu_peers.py writes them."""
        e, t = case["expr"], {k: torch.from_numpy(v).to(dev) for k, v in x.items()}
        c = {k: cp.asarray(v) for k, v in x.items()} if cp else {}
        if e.startswith("gather_elements("):
            return {"torch": lambda: torch.gather(t["data"], 1, t["idx"]),
                    "cupy": lambda: cp.take_along_axis(c["data"], c["idx"], axis=1)}
        if e.startswith("gather("):
            axis = int(re.search(r"axis=(\d+)", e).group(1))
            return {"torch": lambda: torch.index_select(t["data"], axis, t["idx"]),
                    "cupy": lambda: cp.take(c["data"], c["idx"], axis=axis)}
        name = e.split("[", 1)[0]
        index = e[len(name):]
        # PyTorch has no negative steps: flips, as gpu_peers.py does.
        torch_forms = {
            "a[::-1]": lambda a: a.flip(0), "a[..., ::-1]": lambda a: a.flip(-1),
            "img[:, 100:900, 200:1800, ::-1]": lambda a: a[:, 100:900, 200:1800].flip(-1),
            "a[::2, ::-1, 1:]": lambda a: a[::2].flip(1)[:, :, 1:], "a[1:3, ::-1]": lambda a: a[1:3].flip(1),
        }
        tf = torch_forms.get(e, lambda a: eval("a" + index, {}, {"a": a, "None": None}))  # noqa: S307
        return {"torch": lambda: tf(t[name]).contiguous(),
                "cupy": lambda: cp.ascontiguousarray(eval("a" + index, {}, {"a": c[name], "None": None}))}  # noqa: S307

    rng = np.random.default_rng(12345)
    rows = []
    info = {"device": torch.cuda.get_device_name(), "torch": torch.__version__,
            "cupy": cp.__version__ if cp else None, "slc": subprocess.run([args.slc, "--version"], capture_output=True, text=True).stdout.strip()}
    try:
        import slc
        info["slc_python"] = slc.__file__
    except ImportError as e:
        info["slc_python"] = f"not importable: {e}"
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for case in cases:
            started = time.perf_counter()
            x = inputs_for(case, rng)
            want = numpy_result(case, x)
            out_bytes = want.nbytes
            row = {"id": case["id"], "expr": case["expr"], "out_bytes": out_bytes,
                   "copy_s": copy_time(max(out_bytes, 1))}
            s = run_slc(args.slc, case, x, tmp) if cli_runs(args, case) else {"error": "skipped"}
            row["slc_cli"] = ({"error": s["error"]} if "error" in s else
                              {"kernel_s": s["s"], "bitwise": same_bits(s["result"], want),
                               "h2d_s": s["times"].get("h2d"), "d2h_s": s["times"].get("d2h")})
            # Every form checked first, then timed together (`interleaved`).
            timed = {}
            t = {k: torch.from_numpy(v).to(dev) for k, v in x.items()}
            try:
                import slc
                types = {k: (str(v.dtype), v.shape) for k, v in x.items()}
                kernel = slc.compile(case["expr"], **types)
                fn = lambda: kernel(**t)  # noqa: E731
                row["slc"] = {"bitwise": same_bits(torch.from_dlpack(fn()).cpu().numpy(), want)}
                timed["slc"] = fn
                if case["id"] == "B11":
                    # Where the time goes: PyTorch's side of DLPack alone.
                    a = next(iter(t.values()))
                    row["slc"]["dlpack_device_us"] = per_call_us(lambda: a.__dlpack_device__())
                    row["slc"]["dlpack_us"] = per_call_us(lambda: a.__dlpack__(stream=1))
                else:
                    # Into a caller's tensor: no allocation in the call.
                    o = torch.empty(want.shape, dtype=getattr(torch, str(want.dtype)), device=dev)
                    timed["slc out="] = lambda: kernel(**t, out=o)  # noqa: E731
            except Exception as e:  # noqa: BLE001
                row["slc"] = {"error": repr(e)[:300]}
            if not args.no_peers:
                for name, fn in peers(case, x).items():
                    try:
                        got = fn()
                        host = got.cpu().numpy() if name == "torch" else cp.asnumpy(got)
                        row[name] = {"bitwise": same_bits(host, want)}
                        timed[name] = fn
                    except Exception as e:  # noqa: BLE001
                        row[name] = {"error": repr(e)[:200]}
            if case["id"] == "B11":
                for name, fn in timed.items():
                    row[name]["us_per_call"] = per_call_us(fn)
            else:
                for name, secs in interleaved(timed).items():
                    if name == "slc out=":
                        row["slc"]["out_vs_copy"] = secs / row["copy_s"]
                    else:
                        row[name].update(s=secs, vs_copy=secs / row["copy_s"])
            timed.clear()
            o = None
            del t
            row["wall_s"] = round(time.perf_counter() - started, 1)
            rows.append(row)
            print(json.dumps({k: v for k, v in row.items()}, default=str), file=sys.stderr, flush=True)
            del x, want
            torch.cuda.empty_cache()

    def cell(entry, b11=False):
        if not entry:
            return ""
        if "error" in entry:
            return "error"
        mark = "" if entry.get("bitwise", True) else " (DIFFERS)"
        if b11 and "us_per_call" in entry:
            return f"{entry['us_per_call']:.0f} µs{mark}"
        if b11:
            return f"{entry['s'] * 1e6:.1f} µs kernel{mark}"
        return f"{entry['vs_copy']:.2f}{mark}"

    by_id = {c["id"]: c for c in cases}
    print(f"device: {info['device']}; slc: {info['slc']}; torch {info['torch']}; cupy {info['cupy']}")
    print("| case | PyTorch | CuPy | hand-written CUDA | slc | slc CLI, kernel alone |")
    print("|---|---|---|---|---|---|")
    for row in rows:
        c = by_id[row["id"]]
        b11 = row["id"] == "B11"
        hand = c.get("plain_cuda", c.get("hand_cuda", ""))
        cli = row.get("slc_cli", {})
        cli_cell = ("" if cli.get("error") == "skipped" else "error" if "error" in cli else
                    f"{cli['kernel_s'] / row['copy_s']:.2f}{'' if cli['bitwise'] else ' (DIFFERS)'}" if cli else "")
        print(f"| {row['id']} `{row['expr']}` | {cell(row.get('torch'), b11)} | {cell(row.get('cupy'), b11)} | {hand} | {cell(row.get('slc'), b11)} | {cli_cell} |")
    ok = all(r.get("slc", {}).get("bitwise") and (r["slc_cli"].get("bitwise") or not cli_runs(args, r)) for r in rows)
    print(f"slc results bit for bit equal to NumPy: {'all' if ok else 'NOT ALL'}")
    # B13-B15: stores (gpu_stores.py).
    sys.path.insert(0, str(HERE))
    import gpu_stores
    with tempfile.TemporaryDirectory() as tmpdir:
        store_rows, stores_ok = gpu_stores.run(args, rng, Path(tmpdir), torch, cp, events_time, copy_time,
                                               same_bits, run_slc, cli_runs)
    if args.json:
        Path(args.json).write_text(json.dumps({"info": info, "rows": rows, "stores": store_rows}, indent=1,
                                              default=str))
    return 0 if ok and stores_ok else 1


if __name__ == "__main__":
    sys.exit(main())
