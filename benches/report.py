#!/usr/bin/env python3
"""The results table of docs/benchmarks.md, from criterion's medians of `cargo bench --features ndarray --bench cases`
(target/criterion/<case>/<contender>/new/estimates.json) and, optionally, the JSON lines of
benches/numpy_bench.py.

Every ratio is a median time divided by the median memcpy of the output's bytes measured in the
same run (criterion's `memcpy` of the case; NumPy's own np.copyto for NumPy).
"""

import argparse
import json
import pathlib
import sys

# id, expression, inputs, output bytes, index bytes read, target (fresh, into) as ratios to
# memcpy, or ("us", limit) / ("ns", limit) for absolute targets.
CASES = [
    ("B1", "a[:, 1:-1]", "a=f32[4096,4096]", 4096 * 4094 * 4, 0, (1.25, 1.05)),
    ("B2", "a[::-1]", "a=f32[16777216]", 16777216 * 4, 0, (1.6, 1.1)),
    ("B3", "a[:, ::2]", "a=f32[4096,4096]", 4096 * 2048 * 4, 0, (1.75, 1.5)),
    ("B4", "a[..., ::-1]", "a=f32[4096,4096]", 4096 * 4096 * 4, 0, (1.6, 1.1)),
    ("B5", "a[2:, ..., newaxis, :10]", "a=f32[64,64,64,64]", 62 * 64 * 64 * 10 * 4, 0, (2.0, 2.0)),
    ("B6", "a[:, 0]", "a=f32[4096,4096]", 4096 * 4, 0, ("us", 35)),
    ("B7", "img[100:900, 200:1800, ::-1]", "img=u8[1080,1920,3]", 800 * 1600 * 3, 0, (2.0, 2.0)),
    ("B8", "gather(a, idx, axis=0)", "a=f32[100000,256] idx=i64[65536]", 65536 * 256 * 4, 65536 * 8,
     (1.3, 1.3)),
    ("B9", "gather(a, idx, axis=1)", "a=f32[4096,4096] idx=i64[2048]", 4096 * 2048 * 4, 2048 * 8, (2.0, 2.0)),
    ("B10", "gather(a, idx, axis=1, batch_dims=1)", "a=f32[512,4096] idx=i64[512,1024]",
     512 * 1024 * 4, 512 * 1024 * 8, (5.0, 5.0)),
    ("B11", "a[1:3, ::-1]", "a=f32[4,5]", 2 * 5 * 4, 0, ("ns", 60)),
    ("B12", "a[::2, ::-1, 1:]", "a=f64[1024,1024,8]", 512 * 1024 * 7 * 8, 0, (1.1, 1.1)),
]


def median_ns(root, case, contender):
    path = root / case / contender / "new" / "estimates.json"
    if not path.exists():
        return None
    return json.loads(path.read_text())["median"]["point_estimate"]


def fmt_time(ns):
    if ns is None:
        return "–"
    if ns < 1e3:
        return f"{ns:.0f} ns"
    if ns < 1e6:
        return f"{ns / 1e3:.1f} µs"
    return f"{ns / 1e6:.2f} ms"


def fmt_ratio(ns, memcpy):
    return "–" if ns is None or not memcpy else f"{ns / memcpy:.2f}"


def verdict(target, fresh, into, memcpy):
    """Whether slc meets the issue's target (single thread)."""
    if target[0] in ("us", "ns"):
        unit, limit = target
        scale = 1e3 if unit == "us" else 1.0
        # B11's target is the prepared-kernel call into the caller's output.
        best = into if unit == "ns" else min(x for x in (fresh, into) if x is not None)
        text = f"≤ {limit} {'µs' if unit == 'us' else 'ns'}"
        return text, best is not None and best <= limit * scale
    fresh_limit, into_limit = target
    text = f"{fresh_limit} / {into_limit}" if fresh_limit != into_limit else f"{fresh_limit}"
    ok = fresh is not None and into is not None and fresh / memcpy <= fresh_limit and into / memcpy <= into_limit
    return text, ok


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--criterion", default="target/criterion", help="criterion's output folder")
    parser.add_argument("--numpy", help="JSON lines written by benches/numpy_bench.py")
    args = parser.parse_args()
    root = pathlib.Path(args.criterion)
    numpy = {}
    if args.numpy:
        for line in pathlib.Path(args.numpy).read_text().splitlines():
            row = json.loads(line)
            numpy[row["case"]] = row

    print("| case | memcpy | slc fresh | slc into | GB/s (into) | slc into, all cores | ndarray fresh / into "
          "| NumPy fresh / into | target fresh / into | met |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    missing = []
    for case, expr, inputs, out_bytes, index_bytes, target in CASES:
        memcpy = median_ns(root, case, "memcpy")
        if memcpy is None:
            missing.append(case)
            continue
        t = {c: median_ns(root, case, c) for c in
             ("slc_fresh", "slc_into", "slc_into_threads", "ndarray_fresh", "ndarray_into")}
        cell = lambda c: f"{fmt_time(t[c])} ({fmt_ratio(t[c], memcpy)}×)"
        moved = 2 * out_bytes + index_bytes  # the view's bytes read, the output written, the indices
        gbs = moved / t["slc_into"] if t["slc_into"] else None
        np_row = numpy.get(case, {})
        np_cell = " / ".join(
            f"{fmt_time(np_row[m]['median_ns'])} ({np_row[m]['ratio']:.2f}×)" if m in np_row else "–"
            for m in ("fresh", "into")) if np_row else "–"
        target_text, ok = verdict(target, t["slc_fresh"], t["slc_into"], memcpy)
        print(f"| {case} `{expr}` {inputs} | {fmt_time(memcpy)} | {cell('slc_fresh')} | {cell('slc_into')} "
              f"| {gbs:.1f} | {cell('slc_into_threads')} "
              f"| {fmt_ratio(t['ndarray_fresh'], memcpy)} / {fmt_ratio(t['ndarray_into'], memcpy)} "
              f"| {np_cell} | {target_text} | {'yes' if ok else 'no'} |")
    compile_ns = median_ns(root, "compile", "cold_prepare_B1")
    hit_ns = median_ns(root, "compile", "eval_cache_hit_B11")
    print()
    print(f"Cold compile (`Kernel::prepare` of B1: front end, plan, passes, Cranelift): {fmt_time(compile_ns)} "
          f"(target ≤ 300 µs). `Session::eval` of B11 from text on a cache hit: {fmt_time(hit_ns)} "
          f"(target ≤ 1.5 µs).")
    if missing:
        print(f"\nNo criterion results for {', '.join(missing)}: run `cargo bench --features ndarray --bench cases` first.",
              file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
