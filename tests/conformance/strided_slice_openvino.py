#!/usr/bin/env python3
"""Generates tests/conformance/strided_slice_openvino.jsonl: what OpenVINO's StridedSlice-1 does
on random mask and stride combinations, as the CPU plugin computes it.

Pinned: openvino==2026.4.1 and numpy==2.4.6 (Python 3.11), in a virtual environment of its own:

  python3 -m venv /tmp/ovenv && /tmp/ovenv/bin/pip install openvino==2026.4.1 numpy==2.4.6
  /tmp/ovenv/bin/python tests/conformance/strided_slice_openvino.py           # (re)write the file
  /tmp/ovenv/bin/python tests/conformance/strided_slice_openvino.py --check   # fail if it differs

Each case is a StridedSlice (opset1) over a Parameter of the given f32 shape, with constant i64
begin/end/strides inputs and the five masks as attributes, compiled for the CPU plugin and run on
arange(N). One JSON object per line:
  {"id": 3, "shape": [2, 3], "begin": [..], "end": [..], "stride": [..],
   "masks": {"begin_mask": [..], "end_mask": [..], "new_axis_mask": [..],
             "shrink_axis_mask": [..], "ellipsis_mask": [..]},
   "expect": {"shape": [..], "values": [..]}}
or "expect": {"error": "the last line of OpenVINO's message"} where OpenVINO refuses the model
(when it is built, compiled or run). OpenVINO requires all five masks to have one length, so every
case gives all five with the same length L (L = 0: none given); L is drawn shorter than, equal to
and longer than len(begin). tests/openvino_strided_slice.rs runs every case through slc.

One rule is the project's, not the plugin's: a shrink entry ignores its begin_mask bit and takes
`begin` (the spec, OpenVINO's reference implementation and TensorFlow), where the CPU plugin takes
element 0. For a case with such a bit, "expect" is the plugin's answer with those bits cleared,
which is the reference's answer, and where the plugin's own answer differs it is kept beside, as
"plugin": {...} (tests/openvino_strided_slice.rs reads "expect" only).

Some cases are no oracle, and the script leaves them out (listing them on stderr):
- the output is not a function of the input: the case also runs on N-1-arange(N), and that
  output must be N-1 minus the first one element by element. Where it is not, the plugin wrote
  less than shape inference allocated (it applies mask bits at positions >= len(begin), which
  shape inference ignores) and the rest is uninitialised memory;
- the process died;
- the plugin read a mask past its end: it pads each mask to max(input rank, output rank) and then
  reads one bit per entry of `begin`, so a mask shorter than both `begin` and that rank is read
  out of bounds (what it finds there decides the entry);
- an entry with the ellipsis and shrink bits (and no new-axis bit) stands after the last input
  axis: OpenVINO checks its begin against that axis's size, read past the end of the shape.
"""
import json
import random
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).with_name("strided_slice_openvino.jsonl")
SEED = 20261125
CASES = 1200
MASKS = ["begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask"]
I64_MIN, I64_MAX = -(2**63), 2**63 - 1


def draw_bound(rng):
    r = rng.random()
    if r < 0.75:
        return rng.randint(-6, 6)
    if r < 0.9:
        return rng.choice([-100, 100, -7, 7, -1000000])
    return rng.choice([I64_MIN, I64_MAX, I64_MIN + 1, I64_MAX - 1])


def draw_case(rng, case_id):
    rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 3, 4])
    shape = [rng.choice([0, 1, 2, 3, 3, 4, 5]) if rng.random() < 0.9 else 0 for _ in range(rank)]
    shape = [d if d or rng.random() < 0.3 else 3 for d in shape]
    m = rng.randint(1, min(5, rank + 2))
    begin = [draw_bound(rng) for _ in range(m)]
    end = [draw_bound(rng) for _ in range(m)]
    stride = [rng.choice([1, 1, 1, 2, 3, -1, -1, -2, -3]) if rng.random() < 0.96 else 0 for _ in range(m)]
    # Mask length: shorter, equal or (often) longer than begin; 0 means no masks at all.
    length = rng.choice([0, max(0, m - 1), m, m, m + 1, m + 1, m + 2, m + 3])
    density = rng.choice([0.1, 0.2, 0.35])
    masks = {name: [int(rng.random() < density) for _ in range(length)] for name in MASKS}
    # Several bits on one entry, a second ellipsis beyond begin, zero strides on unused entries.
    if length and rng.random() < 0.35:
        i = rng.randrange(length)
        for name in rng.sample(["new_axis_mask", "shrink_axis_mask", "ellipsis_mask", "begin_mask"], 2):
            masks[name][i] = 1
    if length > m and rng.random() < 0.25:
        masks["ellipsis_mask"][rng.randrange(m, length)] = 1
    if rng.random() < 0.3:
        special = [i for i in range(m) if i < length and (masks["new_axis_mask"][i]
                   or masks["ellipsis_mask"][i] or masks["shrink_axis_mask"][i])]
        if special:
            stride[rng.choice(special)] = 0
    # Keep most ellipses single so that most cases get past validation.
    bits = [i for i, b in enumerate(masks["ellipsis_mask"]) if b]
    if len(bits) > 1 and rng.random() < 0.75:
        for i in bits[1:]:
            masks["ellipsis_mask"][i] = 0
    return {"id": case_id, "shape": shape, "begin": begin, "end": end, "stride": stride, "masks": masks}


def evaluate(cases):
    """Runs cases in this process; returns one "expect" object per case."""
    import numpy as np
    import openvino as ov
    import openvino.opset1 as op1

    core = ov.Core()
    results = []
    for case in cases:
        shape = case["shape"]
        n = int(np.prod(shape, dtype=np.int64))

        def const(values):
            return op1.constant(np.array(values, dtype=np.int64))

        try:
            p = op1.parameter(shape, np.float32)
            m = case["masks"]
            node = op1.strided_slice(p, const(case["begin"]), const(case["end"]), const(case["stride"]),
                                     *(m[name] for name in MASKS))
            compiled = core.compile_model(ov.Model([node], [p]), "CPU")
            x = np.arange(n, dtype=np.float32).reshape(shape)
            a = np.array(compiled([x])[0])
            b = np.array(compiled([(n - 1) - x])[0])
        except Exception as e:  # OpenVINO raises RuntimeError and others, all "refused"
            lines = [line.strip() for line in str(e).splitlines() if line.strip()]
            results.append({"error": lines[-1] if lines else type(e).__name__})
            continue
        if a.shape != b.shape or not np.array_equal(b, (n - 1) - a):
            results.append({"unstable": "the output is not a function of the input"})
            continue
        results.append({"shape": list(a.shape), "values": [int(v) for v in a.flatten()]})
    return results


def out_of_bounds_read(case, expect):
    """Why OpenVINO read outside an array for this case (see the module's docstring), or None."""
    begin, masks, rank = case["begin"], case["masks"], len(case["shape"])
    length = len(masks["ellipsis_mask"])
    if "shape" in expect and len(begin) > max(length, rank, len(expect["shape"])):
        return "the plugin read a mask past its end"
    axis = 0
    for i in range(min(len(begin), length)):
        if masks["ellipsis_mask"][i] and masks["shrink_axis_mask"][i] and not masks["new_axis_mask"][i]:
            if axis >= rank:
                return "an ellipsis-and-shrink entry after the last axis"
        if not masks["new_axis_mask"][i]:
            axis += 1
    return None


def shrink_begin_mask_cleared(case):
    """The case with begin_mask cleared on its shrink entries (neither ellipsis nor new-axis, below
    len(begin)), or None when no such bit is set: what the spec says the case computes."""
    masks = case["masks"]
    bits = [i for i in range(min(len(case["begin"]), len(masks["begin_mask"])))
            if masks["begin_mask"][i] and masks["shrink_axis_mask"][i]
            and not masks["ellipsis_mask"][i] and not masks["new_axis_mask"][i]]
    if not bits:
        return None
    begin_mask = [0 if i in bits else b for i, b in enumerate(masks["begin_mask"])]
    return {**case, "masks": {**masks, "begin_mask": begin_mask}}


def evaluate_isolated(cases):
    """Evaluates cases in child processes, so that a crash of the plugin costs only its case."""
    proc = subprocess.run([sys.executable, __file__, "--evaluate"], input=json.dumps(cases),
                          capture_output=True, text=True)
    if proc.returncode == 0:
        return json.loads(proc.stdout)
    if len(cases) == 1:
        return [{"unstable": f"the process died ({proc.returncode})"}]
    half = len(cases) // 2
    return evaluate_isolated(cases[:half]) + evaluate_isolated(cases[half:])


def generate():
    rng = random.Random(SEED)
    cases = [draw_case(rng, i) for i in range(CASES)]
    lines, unstable = [], 0
    for start in range(0, len(cases), 100):
        batch = cases[start:start + 100]
        cleared = [(i, c) for i, c in enumerate(map(shrink_begin_mask_cleared, batch)) if c]
        plugin = evaluate_isolated(batch)
        spec = dict(zip((i for i, _ in cleared), evaluate_isolated([c for _, c in cleared])))
        for i, case in enumerate(batch):
            expect = spec.get(i, plugin[i])
            why = expect.get("unstable") or plugin[i].get("unstable") or out_of_bounds_read(case, expect)
            if why:
                unstable += 1
                print(f"left out: {why}: {json.dumps(case)}", file=sys.stderr)
                continue
            differs = {"plugin": plugin[i]} if plugin[i] != expect else {}
            lines.append(json.dumps({**case, "expect": expect, **differs}, separators=(",", ":")))
    return "\n".join(lines) + "\n", unstable


def main():
    if sys.argv[1:] == ["--evaluate"]:
        json.dump(evaluate(json.load(sys.stdin)), sys.stdout)
        return
    text, unstable = generate()
    errors = text.count('"error"')
    summary = f"{text.count(chr(10))} cases ({errors} refused), {unstable} left out (no oracle)"
    if sys.argv[1:] == ["--check"]:
        if OUT.read_text() != text:
            sys.exit(f"{OUT} differs from what the generator makes ({summary})")
        print(f"{OUT.name} is up to date: {summary}")
        return
    OUT.write_text(text)
    print(f"wrote {OUT}: {summary}")


if __name__ == "__main__":
    main()
