#!/usr/bin/env python3
"""Generates tests/conformance/gather_openvino.jsonl: what OpenVINO's Gather-8 does on random
shapes, indices, axes and batch_dims. slc's `gather` is Gather-8
(docs/semantics.md), so this is its own document's implementation as oracle.

Pinned: openvino==2026.4.1 and numpy==2.4.6 (Python 3.11), in a virtual environment of its own:

  python3 -m venv /tmp/ovenv && /tmp/ovenv/bin/pip install openvino==2026.4.1 numpy==2.4.6
  /tmp/ovenv/bin/python tests/conformance/gather_openvino.py           # (re)write the file
  /tmp/ovenv/bin/python tests/conformance/gather_openvino.py --check   # fail if a case or its answer differs

Each case is a Gather (opset8) with a constant i64 axis and the batch_dims attribute, on data
= 1, 2, 3, ... in f32 of the given shape (so that a zero-filled element, an index outside
[-n, n), is told from element 0) and indices i32 or i64 of theirs. It runs twice: compiled for the
CPU plugin (data and indices Parameters), and through OpenVINO's reference implementation
(constant folding, data and indices Constants). One JSON object per line:
  {"id": 3, "shape": [2, 3], "indices": {"dtype": "i64", "shape": [..], "values": [..]},
   "axis": 1, "batch_dims": 0, "expect": {"shape": [..], "values": [..]}}
or "expect": {"error": "the last line of OpenVINO's message"} where OpenVINO refuses the model.
tests/openvino_gather.rs runs every case through slc's interpreter and JIT and reads "expect"
only.

"expect" is the reference's answer, and where the plugin's differs it is kept beside as
"plugin". They differ in these ways:
- the plugin runs i64 indices as i32, so 2**32 + 1 reads element 1 and 2**31 is negative; the
  reference (and Gather-8's text) takes them whole;
- with batch_dims equal to the axis over a batch of one, the plugin answers wrongly (an element
  of another index, or element 0, where the index reads another or is out of range and the
  answer is 0) or dies (SIGSEGV);
- on empty data or indices the plugin dies (SIGFPE) or returns memory it never wrote, so it is
  not run there (nor the reference, which cannot hold an empty Constant: such cases are left out).
One rule is the project's: a batch_dims still negative after adding the indices' rank is refused
(docs/semantics.md), where both run it ("expect" then says slc's error).
A case without an answer from the reference (or refused by the reference alone) is left out,
listed on stderr.
"""
import json
import random
import subprocess
import sys
from pathlib import Path

OUT = Path(__file__).with_name("gather_openvino.jsonl")
SEED = 20261206
CASES = 1200


def draw_index(rng, n, dtype):
    r = rng.random()
    if r < 0.8:
        return rng.randint(-n - 2, n + 1)
    if dtype == "i32":
        return rng.choice([2**31 - 1, -(2**31), 1000, -1000])
    return rng.choice([2**63 - 1, -(2**63), 2**31, -(2**31) - 1, 1000, -1000])


def draw_case(rng, case_id):
    rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 3, 4])
    shape = [rng.choice([1, 2, 3, 3, 4, 5]) if rng.random() < 0.985 else 0 for _ in range(rank)]
    if rank and rng.random() < 0.93:
        axis = rng.randint(-rank, rank - 1)
    else:
        axis = rng.choice([rank, -rank - 1, 0])
    a = axis + rank if axis < 0 else axis
    q = rng.choice([0, 1, 1, 2, 2, 3])
    if rng.random() < 0.9:
        b = rng.randint(0, max(0, min(q, a)))
    else:
        b = rng.randint(-q - 1, q + 1)
    bb = b + q if b < 0 else b
    idx_shape = [rng.choice([1, 1, 2, 3, 4]) if rng.random() < 0.985 else 0 for _ in range(q)]
    # The batch dims equal the data's, mostly; now and then one differs (refused).
    for d in range(min(max(bb, 0), q, rank)):
        if rng.random() < 0.95:
            idx_shape[d] = shape[d]
    dtype = rng.choice(["i32", "i64"])
    n = shape[a] if 0 <= a < rank else 1
    count = 1
    for d in idx_shape:
        count *= d
    values = [draw_index(rng, n, dtype) for _ in range(count)]
    return {"id": case_id, "shape": shape, "indices": {"dtype": dtype, "shape": idx_shape, "values": values},
            "axis": axis, "batch_dims": b}


def last_line(e):
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return {"error": lines[-1] if lines else type(e).__name__}


def evaluate(cases, peer):
    """Runs cases on `peer` ("plugin" or "reference") in this process; returns per case an answer
    ({"shape", "values"}), {"error"} or {"unstable"}."""
    import numpy as np
    import openvino as ov
    import openvino.opset8 as op8
    from openvino import passes

    core = ov.Core()

    def answer(a):
        return {"shape": list(a.shape), "values": [int(v) for v in a.flatten()]}

    def plugin(x, indices, axis, b):
        try:
            p = op8.parameter(list(x.shape), np.float32)
            i = op8.parameter(list(indices.shape), indices.dtype)
            node = op8.gather(p, i, op8.constant(np.array(axis, dtype=np.int64)), b)
            compiled = core.compile_model(ov.Model([node], [p, i]), "CPU")
            a = np.array(compiled([x, indices])[0])
            y = np.array(compiled([(x.size + 1) - x, indices])[0])
        except Exception as e:  # OpenVINO raises RuntimeError and others, all "refused"
            return last_line(e)
        if a.shape != y.shape or not np.array_equal(y, np.where(a == 0, 0, (x.size + 1) - a)):
            return {"unstable": "the output is not a function of the input"}
        return answer(a)

    def reference(x, indices, axis, b):
        try:
            node = op8.gather(op8.constant(x), op8.constant(indices),
                              op8.constant(np.array(axis, dtype=np.int64)), b)
            model = ov.Model([op8.result(node)], [])
            manager = passes.Manager()
            manager.register_pass(passes.ConstantFolding())
            manager.run_passes(model)
            folded = model.get_results()[0].input_value(0).get_node()
        except Exception as e:
            return last_line(e)
        if folded.get_type_name() != "Constant":
            return {"unstable": "not folded"}
        return answer(np.array(folded.get_data()).reshape(list(folded.get_output_shape(0))))

    results = []
    for case in cases:
        shape, idx = case["shape"], case["indices"]
        x = np.arange(1, int(np.prod(shape, dtype=np.int64)) + 1, dtype=np.float32).reshape(shape)
        dtype = np.int32 if idx["dtype"] == "i32" else np.int64
        indices = np.array(idx["values"], dtype=dtype).reshape(idx["shape"])
        args = (x, indices, case["axis"], case["batch_dims"])
        if peer == "reference":
            results.append(reference(*args))
        elif x.size == 0 or indices.size == 0:
            results.append({"unstable": "not run on an empty tensor"})
        else:
            results.append(plugin(*args))
    return results


def evaluate_isolated(cases, peer):
    """Evaluates cases in child processes, so that a crash (or a hang) of the plugin costs only
    its case."""
    try:
        proc = subprocess.run([sys.executable, __file__, "--evaluate", peer], input=json.dumps(cases),
                              capture_output=True, text=True, timeout=60 + 2 * len(cases))
        if proc.returncode == 0:
            return json.loads(proc.stdout)
        why = f"the process died ({proc.returncode})"
    except subprocess.TimeoutExpired:
        why = "the process hung"
    if len(cases) == 1:
        return [{"unstable": why}]
    half = len(cases) // 2
    return evaluate_isolated(cases[:half], peer) + evaluate_isolated(cases[half:], peer)


def still_negative(case):
    """slc's departure: a batch_dims still negative after adding the indices' rank is refused,
    where OpenVINO runs it (the plugin returns memory it never wrote, unless the output is empty)."""
    return case["batch_dims"] + len(case["indices"]["shape"]) < 0


def expected(case, plugin, reference):
    """What slc must give (see the module's docstring), or None where there is no oracle."""
    if still_negative(case):
        return {"error": "slc: batch_dims is negative after adding the indices' rank"}
    if "error" in reference:
        return plugin if "error" in plugin else None
    if "unstable" in reference:
        return None
    return reference


def generate():
    rng = random.Random(SEED)
    cases = [draw_case(rng, i) for i in range(CASES)]
    lines, unstable, differ = [], 0, 0
    for start in range(0, len(cases), 100):
        batch = cases[start:start + 100]
        answers = zip(evaluate_isolated(batch, "plugin"), evaluate_isolated(batch, "reference"))
        for case, (plugin, reference) in zip(batch, answers):
            expect = expected(case, plugin, reference)
            if expect is None:
                unstable += 1
                print(f"left out: plugin {plugin}, reference {reference}: {json.dumps(case)}", file=sys.stderr)
                continue
            beside = {}
            if plugin != expect and not ("error" in plugin and "error" in expect):
                differ += 1
                beside = {"plugin": plugin}
            lines.append(json.dumps({**case, "expect": expect, **beside}, separators=(",", ":")))
    return "\n".join(lines) + "\n", unstable, differ


def without_plugin(text):
    """The cases and what slc must give, without the plugin's own answers: where the plugin is
    wrong, it is not always wrong the same way (it reads memory it should not)."""
    cases = [json.loads(line) for line in text.splitlines()]
    return [{k: v for k, v in case.items() if k != "plugin"} for case in cases]


def main():
    if sys.argv[1:2] == ["--evaluate"]:
        json.dump(evaluate(json.load(sys.stdin), sys.argv[2]), sys.stdout)
        return
    text, unstable, differ = generate()
    errors = sum('"expect":{"error"' in line for line in text.splitlines())
    summary = (f"{text.count(chr(10))} cases ({errors} refused, the plugin's own answer differing in "
               f"{differ}), {unstable} left out (no oracle)")
    if sys.argv[1:] == ["--check"]:
        if without_plugin(OUT.read_text()) != without_plugin(text):
            sys.exit(f"{OUT} differs from what the generator makes ({summary})")
        print(f"{OUT.name} is up to date: {summary}")
        return
    OUT.write_text(text)
    print(f"wrote {OUT}: {summary}")


if __name__ == "__main__":
    main()
