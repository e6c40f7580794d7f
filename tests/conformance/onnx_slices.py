#!/usr/bin/env python3
"""Generates onnx_slices.txt: random Slice-13 models run by ONNX Runtime, recorded as slc
programs with ONNX Runtime's results (or `out: error` where it rejects the inputs). The bounds
are drawn near the axis and at the extremes (INT32 and INT64 limits, one past them) with every
sign of step; tests/conformance.rs runs every case through slc's interpreter and JIT and compares
bit for bit; it reads the committed text and never needs Python.

Run from the repository root, in the virtual environment of onnx_gathers.py (same pins):

    /tmp/ortenv/bin/python tests/conformance/onnx_slices.py > tests/conformance/onnx_slices.txt

The cases are drawn from a fixed seed; `--check` compares the output with the committed file
(.ci/run does, when SLC_CI_ONNXRUNTIME=1).
"""

import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from onnx_gathers import arange, emit, preamble, typ, values

SEED = 29
CASES = 600
EXTREMES = [2**63 - 1, -2**63, 2**31 - 1, -2**31, 2**31, -2**31 - 1]


def run(data, starts, ends, axes, steps):
    """ONNX Runtime's output for one Slice-13 node with constant bounds, or None if it rejects."""
    initializers = [numpy_helper.from_array(np.array(v, np.int64), n) for n, v in
                    [("starts", starts), ("ends", ends), ("axes", axes), ("steps", steps)] if v is not None]
    names = ["data", "starts", "ends", "axes" if axes is not None else "", "steps" if steps is not None else ""]
    while names[-1] == "":
        names.pop()
    node = helper.make_node("Slice", names, ["out"])
    graph = helper.make_graph([node], "slice", [helper.make_tensor_value_info("data", TensorProto.FLOAT, list(data.shape))],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], initializer=initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, {"data": data})[0]
    except Exception:  # ONNX Runtime reports rejections as several exception types
        return None


def bound(rng, n):
    return int(rng.choice(EXTREMES)) if rng.random() < 0.2 else int(rng.integers(-n - 3, n + 4))


def one(rng, i):
    r = int(rng.integers(1, 4))
    shape = [int(rng.integers(0, 6)) if rng.random() > 0.08 else 0 for _ in range(r)]
    count = int(rng.integers(1, r + 1))
    axes = [int(a) - (r if rng.random() < 0.3 else 0) for a in rng.permutation(r)[:count]]
    if rng.random() < 0.3:
        axes = None  # the default: 0 .. count-1
    named = axes if axes is not None else list(range(count))
    starts = [bound(rng, shape[a]) for a in named]
    ends = [bound(rng, shape[a]) for a in named]
    steps = None
    if rng.random() < 0.8:
        steps = [int(rng.choice([1, 2, 3, -1, -2, -3])) if rng.random() > 0.1 else int(rng.choice(EXTREMES))
                 for _ in named]
    data = arange(shape)
    out = run(data, starts, ends, axes, steps)
    src = f"slice(data, {starts}, {ends}" + (f", axes={axes}" if axes is not None else "") \
        + (f", steps={steps}" if steps is not None else "") + ")"
    lines = [f"== ort-slice-{i:03}", f"src: {src}", f"in data: {typ('f32', data.shape)} arange"]
    lines.append("out: error" if out is None else f"out: {typ('f32', out.shape)} = {values(out)}".rstrip())
    return "\n".join(lines)


def generate():
    rng = np.random.default_rng(SEED)
    lines = preamble(__doc__, "onnx_slices.py", SEED, "Data is 0, 1, 2, ... in f32.")
    for i in range(CASES):
        lines += ["", one(rng, i)]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    emit(generate(), "onnx_slices.txt")
