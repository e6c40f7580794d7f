"""The store cases of benches/gpu.py (issue 28's B13-B15 at GPU sizes, and B15r, a mask over rows): slc's updated copy of the
target against PyTorch's and CuPy's in-place setitem (and PyTorch's `index_copy_`), each checked
bit for bit against NumPy's `setitem`, each timed as a ratio to a device-to-device copy of the
*written* bytes (the update's; issue 28's yardstick) measured in the same run.

slc runs in place, as a PyTorch user runs a store (`k(**tensors)` updates the tensor given for
the target: `Kernel::store_device`), and with `out=`: `k(**tensors, out=o)` writes the target's
updated copy into `o` (the target is copied on the device, then updated: the copy is in slc's
time, not in the peers', which update in place; the peers' "clone +" column times the same
work for them). The index rows of B13 are distinct: PyTorch's and CuPy's scatters leave the
winner of duplicate rows unspecified, so only distinct rows can be checked bit for bit (slc
keeps NumPy's last write in C order either way).

V1 and V2 store into a view of a larger array, as a PyTorch user's `x[:, ::2][idx] = v` or
`x.T[:, 5] = 0` does (a case's "view"): slc writes through the view in place (`Kernel::store_device`);
each form is checked on the whole base array afterwards, every byte outside the view included.

B13+ is `a[idx] += v` on distinct rows (not one of issue 28's cases): slc's three in-place kernels
(gather the old rows, add, store back) against PyTorch's and CuPy's `a[idx] += v` and PyTorch's
`index_add_`. It adds again at every call, so each form is checked after its first call on a
fresh target, then timed.
"""
import sys
import time

import numpy as np

CASES = [
    {"id": "B13", "expr": "a[idx] = v",
     "what": "524,288 distinct random rows of 256 f32 into a 1,000,000 x 256 target (B8's inverse)"},
    {"id": "B14", "expr": "a[:, ::2] = b", "what": "16384 x 16384 f32, every other column"},
    {"id": "B15", "expr": "a[m] = 0", "what": "8192 x 8192 f32, a random half of the elements"},
    {"id": "B15r", "expr": "a[r] = 0", "what": "8192 x 8192 f32, a random half of the rows"},
    {"id": "B13+", "expr": "a[idx] += v", "what": "65,536 distinct random rows of 256 f32 added into a 250,000 x 256 target"},
    {"id": "V1", "expr": "a[idx] = v", "view": (slice(None), slice(None, None, 2)),
     "what": "131,072 distinct random rows of 256 f32 into x[:, ::2], x 262,144 x 512 f32"},
    {"id": "V2", "expr": "a[:, 5] = 0", "transpose": True, "what": "column 5 of x.T, x 16384 x 16384 f32 (one row of x)"},
]


def target_of(case, base):
    """The case's target in `base` (NumPy, PyTorch or CuPy): its view, or `base` itself."""
    view = base.T if case.get("transpose") else base
    return view[case["view"]] if "view" in case else view


def inputs(case, rng):
    """The case's NumPy inputs."""
    f32 = np.float32
    if case["id"] == "B13":
        rows, n = 1_000_000, 524_288
        return {"a": rng.standard_normal((rows, 256), dtype=f32),
                "idx": rng.choice(rows, n, replace=False).astype(np.int64),
                "v": rng.standard_normal((n, 256), dtype=f32)}
    if case["id"] == "V1":
        rows, n = 262_144, 131_072
        return {"a": rng.standard_normal((rows, 512), dtype=f32),
                "idx": rng.choice(rows, n, replace=False).astype(np.int64),
                "v": rng.standard_normal((n, 256), dtype=f32)}
    if case["id"] == "V2":
        return {"a": rng.standard_normal((16384, 16384), dtype=f32)}
    if case["id"] == "B13+":
        rows, n = 250_000, 65_536
        return {"a": rng.standard_normal((rows, 256), dtype=f32),
                "idx": rng.choice(rows, n, replace=False).astype(np.int64),
                "v": rng.standard_normal((n, 256), dtype=f32)}
    if case["id"] == "B14":
        return {"a": rng.standard_normal((16384, 16384), dtype=f32),
                "b": rng.standard_normal((16384, 8192), dtype=f32)}
    if case["id"] == "B15r":
        return {"a": rng.standard_normal((8192, 8192), dtype=f32), "r": rng.random(8192) < 0.5}
    return {"a": rng.standard_normal((8192, 8192), dtype=f32), "m": rng.random((8192, 8192)) < 0.5}


def numpy_result(case, x):
    """NumPy's `setitem` on a copy of the target (of its base, for a view: returned whole)."""
    base = x["a"].copy()
    y = target_of(case, base)
    if case["id"] in ("B13", "V1"):
        y[x["idx"]] = x["v"]
    elif case["id"] == "B13+":
        y[x["idx"]] += x["v"]
    elif case["id"] == "B14":
        y[:, ::2] = x["b"]
    elif case["id"] == "B15r":
        y[x["r"]] = 0
    elif case["id"] == "V2":
        y[:, 5] = 0
    else:
        y[x["m"]] = 0
    return base


def written_bytes(case, x):
    if case["id"] in ("B13", "B13+", "V1"):
        return x["v"].nbytes
    if case["id"] == "V2":
        return x["a"].shape[0] * x["a"].itemsize
    if case["id"] == "B14":
        return x["b"].nbytes
    if case["id"] == "B15r":
        return int(np.count_nonzero(x["r"])) * x["a"].shape[1] * x["a"].itemsize
    return int(np.count_nonzero(x["m"])) * x["a"].itemsize


def peers(case, t, c):
    """In-place forms of the case on device tensors `t` (PyTorch) and arrays `c` (CuPy, or
    None): each call updates the target again with the same values (idempotent but for B13+),
    so the target after any number of calls is the updated array. Each returns the target."""
    a = target_of(case, t["a"])
    if case["id"] == "V1":
        forms = {}
        setitem = lambda y, z: y.__setitem__(z["idx"], z["v"])  # noqa: E731
    elif case["id"] == "V2":
        forms = {}
        setitem = lambda y, z: y.__setitem__((slice(None), 5), 0)  # noqa: E731
    elif case["id"] == "B13":
        forms = {"torch index_copy_": lambda: a.index_copy_(0, t["idx"], t["v"])}
        setitem = lambda y, z: y.__setitem__(z["idx"], z["v"])  # noqa: E731
    elif case["id"] == "B13+":
        forms = {"torch index_add_": lambda: a.index_add_(0, t["idx"], t["v"])}
        setitem = lambda y, z: y.__setitem__(z["idx"], y[z["idx"]] + z["v"])  # noqa: E731
    elif case["id"] == "B14":
        forms = {}
        setitem = lambda y, z: y.__setitem__((slice(None), slice(None, None, 2)), z["b"])  # noqa: E731
    elif case["id"] == "B15r":
        forms = {"torch masked_fill_": lambda: a.masked_fill_(t["r"][:, None], 0)}
        setitem = lambda y, z: y.__setitem__(z["r"], 0)  # noqa: E731
    else:
        forms = {"torch masked_fill_": lambda: a.masked_fill_(t["m"], 0)}
        setitem = lambda y, z: y.__setitem__(z["m"], 0)  # noqa: E731

    def torch_setitem():
        setitem(a, t)
        return t["a"]

    def torch_clone_setitem():
        y = a.clone()
        setitem(y, t)
        return y

    forms["torch setitem"] = torch_setitem
    forms["torch clone + setitem"] = torch_clone_setitem
    if c is not None:
        def cupy_setitem():
            setitem(target_of(case, c["a"]), c)
            return c["a"]

        def cupy_copy_setitem():
            y = target_of(case, c["a"]).copy()
            setitem(y, c)
            return y

        forms["cupy setitem"] = cupy_setitem
        forms["cupy copy + setitem"] = cupy_copy_setitem
    return forms


def run(args, rng, tmp, torch, cp, events_time, copy_time, same_bits, run_slc, cli_runs):
    """Runs the store cases (those `args.cases` names, or all); prints their table and returns
    (rows, whether every slc result equals NumPy's bit for bit)."""
    wanted = [c for c in args.cases.split(",") if c]
    cases = [c for c in CASES if not wanted or c["id"] in wanted]
    dev = torch.device("cuda")
    rows = []
    for case in cases:
        started = time.perf_counter()
        x = inputs(case, rng)
        want = numpy_result(case, x)
        # What a copy of the target holds (out=, a peer's clone): the view's elements, dense.
        want_target = np.ascontiguousarray(target_of(case, want))
        written = written_bytes(case, x)
        row = {"id": case["id"], "expr": case["expr"], "what": case["what"], "written_bytes": written,
               "copy_s": copy_time(max(written, 1))}
        # The command line reads whole .npy files: a view is a Python user's.
        viewed = "view" in case or "transpose" in case
        s = run_slc(args.slc, case, x, tmp) if cli_runs(args, case) and not viewed else None
        if s is not None:
            row["slc_cli"] = ({"error": s["error"]} if "error" in s else
                              {"kernel_s": s["s"], "bitwise": same_bits(s["result"], want)})
        try:
            import slc
            t = {k: torch.from_numpy(v).to(dev) for k, v in x.items()}
            # A mask's program takes symbolic dims (D0, D1, ... shared by the target and the
            # mask): one kernel for every mask, its nonzero() made per call. (An example array
            # would make the mask's value part of the program, compiled again for every mask.)
            masked = any(v.dtype == np.bool_ for v in x.values())
            given = dict(x, a=target_of(case, x["a"]))
            types = {k: (str(v.dtype), tuple(f"D{i}" for i in range(v.ndim)) if masked else v.shape)
                     for k, v in given.items()}
            kernel = slc.compile(case["expr"], **types)
            tv = dict(t, a=target_of(case, t["a"]))
            o = torch.empty(want_target.shape, dtype=getattr(torch, str(want.dtype)), device=dev)
            fn = lambda: kernel(**tv, out=o)  # noqa: E731
            fn()
            secs = events_time(fn)
            row["slc"] = {"bitwise": same_bits(o.cpu().numpy(), want_target), "s": secs,
                          "vs_copy": secs / row["copy_s"]}
            # In place, as the peers: the kernel stores into `t["a"]` (through the view, for a
            # view; these stores give the same array when repeated, so every timed call does the
            # first call's work). Checked on the whole base.
            fn = lambda: kernel(**tv)  # noqa: E731
            assert fn() is None
            bitwise = same_bits(t["a"].cpu().numpy(), want)
            secs = events_time(fn)
            row["slc_in_place"] = {"bitwise": bitwise, "s": secs, "vs_copy": secs / row["copy_s"]}
            del t, tv, o
        except Exception as e:  # noqa: BLE001
            row["slc"] = {"error": repr(e)[:300]}
        if not args.no_peers:
            fresh = lambda: ({k: torch.from_numpy(v).to(dev) for k, v in x.items()},  # noqa: E731
                             {k: cp.asarray(v) for k, v in x.items()} if cp else None)
            t, c = fresh()
            for name in list(peers(case, t, c)):
                if case["expr"].endswith("+= v"):
                    # It adds at every call: each form starts from a fresh target.
                    del t, c
                    t, c = fresh()
                form = peers(case, t, c)[name]
                try:
                    got = form()
                    host = got.cpu().numpy() if name.startswith("torch") else cp.asnumpy(got)
                    secs = events_time(form)
                    # A clone or copy holds the target's elements; the in-place forms return the base.
                    expect = want_target if ("clone" in name or "copy +" in name) else want
                    row[name] = {"bitwise": same_bits(host, expect), "s": secs, "vs_copy": secs / row["copy_s"]}
                except Exception as e:  # noqa: BLE001
                    row[name] = {"error": repr(e)[:200]}
            del t, c
        row["wall_s"] = round(time.perf_counter() - started, 1)
        rows.append(row)
        print(row, file=sys.stderr, flush=True)
        del x, want
        torch.cuda.empty_cache()
    columns = ["slc_in_place", "slc", "torch setitem", "torch index_copy_", "torch index_add_", "torch masked_fill_",
               "torch clone + setitem",
               "cupy setitem", "cupy copy + setitem"]

    def cell(entry):
        if not entry:
            return ""
        if "error" in entry:
            return "error"
        return f"{entry['vs_copy']:.2f}{'' if entry['bitwise'] else ' (DIFFERS)'}"

    print("Stores, time / a device-to-device copy of the written bytes (slc_in_place: the update into the\n"
          "target; slc: with out=, the target's copy + the update)")
    print("| case | " + " | ".join(columns) + " |")
    print("|---|" + "---|" * len(columns))
    for row in rows:
        print(f"| {row['id']} `{row['expr']}` | " + " | ".join(cell(row.get(k)) for k in columns) + " |")
    ok = all(r.get(k, {}).get("bitwise") for r in rows for k in ("slc", "slc_in_place", "slc_cli")
             if k != "slc_cli" or cli_runs(args, r))
    print(f"slc stores bit for bit equal to NumPy: {'all' if ok else 'NOT ALL'}")
    return rows, ok
