#!/usr/bin/env python3
"""Generates onnx_gathers.txt: random Gather-13, GatherElements-13 and GatherND-13 models run by
ONNX Runtime, recorded as slc programs with ONNX Runtime's results (or `out: error` where it
rejects the inputs). tests/conformance.rs runs every case through slc's interpreter and JIT and
compares bit for bit; it reads the committed text and never needs Python.

Run from the repository root, in a virtual environment with the pinned versions:

    python3 -m venv /tmp/ortenv
    /tmp/ortenv/bin/pip install onnxruntime==1.32.0 onnx==1.23.2 numpy==2.4.6
    /tmp/ortenv/bin/python tests/conformance/onnx_gathers.py > tests/conformance/onnx_gathers.txt

The cases are drawn from a fixed seed, so the output is the same on every run; `--check` compares
it with the committed file instead (.ci/run does, when SLC_CI_ONNXRUNTIME=1).
"""

import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper

PINNED = {"onnxruntime": "1.32.0", "onnx": "1.23.2", "numpy": "2.4.6"}
SEED = 19
CASES_PER_OP = 120

for module, version in [(ort, PINNED["onnxruntime"]), (onnx, PINNED["onnx"]), (np, PINNED["numpy"])]:
    assert module.__version__ == version, f"{module.__name__} {module.__version__}, expected {version}"
ort.set_default_logger_severity(4)


def run(op, data, indices, **attrs):
    """ONNX Runtime's output for one node with static input shapes, or None if it rejects."""
    node = helper.make_node(op, ["data", "indices"], ["out"], **attrs)
    inputs = [
        helper.make_tensor_value_info("data", TensorProto.FLOAT, list(data.shape)),
        helper.make_tensor_value_info("indices", TensorProto.INT64, list(indices.shape)),
    ]
    outputs = [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)]
    model = helper.make_model(
        helper.make_graph([node], op, inputs, outputs), opset_imports=[helper.make_opsetid("", 13)]
    )
    model.ir_version = 8
    try:
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        return session.run(None, {"data": data, "indices": indices})[0]
    except Exception:  # ONNX Runtime reports rejections as several exception types
        return None


def typ(dtype, shape):
    return f"{dtype}[{', '.join(str(d) for d in shape)}]"


def values(a):
    return " ".join(str(int(v)) for v in a.ravel())


def shape(rng, rank, lo=0, hi=4):
    # Mostly non-empty dimensions; now and then an empty one.
    return [int(rng.integers(1, hi + 1)) if rng.random() > 0.08 else lo for _ in range(rank)]


def index_values(rng, size, count, out_of_range):
    """`count` indices into an axis of `size`: negative ones included, one possibly outside."""
    v = rng.integers(-size, max(size, 1), size=count) if size > 0 else np.zeros(count, np.int64)
    if out_of_range and count > 0:
        v[rng.integers(0, count)] = rng.choice([size, -size - 1, size + 3])
    return v.astype(np.int64)


def case(ident, note, src, data, indices, out):
    lines = [f"== {ident}"]
    lines += [f"# {n}" for n in note]
    lines.append(f"src: {src}")
    lines.append(f"in data: {typ('f32', data.shape)} arange")
    lines.append(f"in indices: {typ('i64', indices.shape)} = {values(indices)}".rstrip())
    if out is None:
        lines.append("out: error")
    else:
        lines.append(f"out: {typ('f32', out.shape)} = {values(out)}".rstrip())
    return "\n".join(lines)


def arange(shape_):
    return np.arange(int(np.prod(shape_)), dtype=np.float32).reshape(shape_)


def gather(rng, i):
    r = int(rng.integers(1, 4))
    dshape = shape(rng, r)
    axis = int(rng.integers(-r, r))
    q = int(rng.integers(0, 3))
    ishape = shape(rng, q)
    n = dshape[axis]
    idx = index_values(rng, n, int(np.prod(ishape)), rng.random() < 0.15).reshape(ishape)
    data = arange(dshape)
    out = run("Gather", data, idx, axis=axis)
    return case(f"ort-gather-{i:03}", [], f"gather(data, indices, axis={axis}, mode=error)", data, idx, out)


def gather_elements(rng, i):
    r = int(rng.integers(1, 4))
    dshape = shape(rng, r)
    axis = int(rng.integers(-r, r))
    a = axis % r
    # Indices no larger than the data off the axis, any length along it; now and then a rank or
    # a dimension the operator rejects.
    ishape = [int(rng.integers(0, d + 1)) if k != a else int(rng.integers(0, 5)) for k, d in enumerate(dshape)]
    if rng.random() < 0.08:
        ishape[int(rng.integers(0, r))] += 1
    if rng.random() < 0.05:
        ishape = ishape + [1]
    n = dshape[a]
    idx = index_values(rng, n, int(np.prod(ishape)), rng.random() < 0.15).reshape(ishape)
    data = arange(dshape)
    out = run("GatherElements", data, idx, axis=axis)
    return case(f"ort-gather-elements-{i:03}", [], f"gather_elements(data, indices, axis={axis})", data, idx, out)


def gather_nd(rng, i):
    r = int(rng.integers(1, 5))
    dshape = shape(rng, r)
    b = int(rng.integers(0, r))
    m = int(rng.integers(0, r - b + 1))
    if rng.random() < 0.06:
        m += 1  # longer tuples than the data has axes: rejected
    outer = shape(rng, int(rng.integers(0, 3)))
    ishape = dshape[:b] + outer + [m]
    note = []
    if b > 0 and dshape[0] > 0 and rng.random() < 0.08:
        # Batch dimensions that differ. ONNX requires them equal; ONNX Runtime only checks that
        # the indices' batch size is a multiple of the data's.
        ishape[0] = dshape[0] * 2
        note = ["batch dimensions differ: ONNX Runtime accepts the indices' batch size being a",
                "multiple of the data's; slc follows the ONNX text and rejects it (docs/semantics.md)"]
    tuples = int(np.prod(ishape[:-1]))
    cols = [index_values(rng, dshape[b + j] if b + j < r else 1, tuples, rng.random() < 0.07) for j in range(m)]
    idx = (np.stack(cols, axis=-1) if m else np.zeros((tuples, 0), np.int64)).reshape(ishape)
    data = arange(dshape)
    out = run("GatherND", data, idx, batch_dims=b)
    if m == 0 and not note:
        # Empty index tuples. The ONNX text requires indices.shape[-1] in [1, r - b]; ONNX
        # Runtime accepts 0 (each tuple selects a whole slice).
        note = ["empty index tuples: the ONNX text requires the indices' last dimension to lie in",
                "[1, r - batch_dims]; slc follows the text and rejects 0 (docs/semantics.md)"]
    if note:
        note.append(f"(ONNX Runtime {'rejects these inputs anyway' if out is None else 'accepts these inputs'})")
        out = None
    return case(f"ort-gather-nd-{i:03}", note, f"gather_nd(data, indices, batch_dims={b})", data, idx, out)


def empty_outputs():
    """Out-of-range indices where the output is empty: ONNX Runtime's GatherND reads no index
    when a dim it slices is 0 (and returns the empty output); its Gather still checks them."""
    nd = [([4, 3, 0, 3], 1, [[[-2], [2], [0]], [[2], [-2], [-2]], [[2], [2], [-3]], [[-4], [0], [2]]]),
          ([2, 3, 0], 0, [[7]]), ([0, 0], 0, [0]), ([2, 4, 1, 0], 1, [[[3, 4]], [[-1, 0]]]),
          ([2, 3, 1], 0, [[7]])]
    for k, (dshape, b, idx) in enumerate(nd):
        data, idx = arange(dshape), np.array(idx, np.int64)
        out = run("GatherND", data, idx, batch_dims=b)
        yield case(f"ort-gather-nd-empty-{k}", [], f"gather_nd(data, indices, batch_dims={b})", data, idx, out)
    for k, (dshape, axis, idx) in enumerate([([3, 0], 0, [5]), ([0, 3], 0, [0]), ([2, 0, 2], 2, [[2, -3]])]):
        data, idx = arange(dshape), np.array(idx, np.int64)
        out = run("Gather", data, idx, axis=axis)
        yield case(f"ort-gather-empty-{k}", [], f"gather(data, indices, axis={axis}, mode=error)", data, idx, out)


def preamble(doc, script, seed, data):
    """The comment lines a generated file opens with: the docstring's first paragraph, how it
    was made, and its format."""
    lines = [f"# {line}" for line in doc.split("\n\n")[0].splitlines()]
    lines.append(f"# Generated by tests/conformance/{script} (seed {seed}) with "
                 + ", ".join(f"{k} {v}" for k, v in PINNED.items()) + ".")
    lines.append(f"# Format: as seeds.txt. {data}")
    return lines


def emit(text, name):
    """Writes `text` to standard output, or with `--check` (CI) fails unless the committed file
    `name` holds it: the committed cases must still be what ONNX Runtime says."""
    if sys.argv[1:] == ["--check"]:
        committed = (Path(__file__).parent / name).read_text()
        if committed != text:
            sys.exit(f"tests/conformance/{name} differs from ONNX Runtime's answers: regenerate it")
        print(f"{name}: {text.count('== ')} cases, as ONNX Runtime answers")
    else:
        sys.stdout.write(text)


def generate():
    rng = np.random.default_rng(SEED)
    lines = preamble(__doc__, "onnx_gathers.py", SEED, "Data is 0, 1, 2, ... in f32; indices are i64.")
    for make in [gather, gather_elements, gather_nd]:
        for i in range(CASES_PER_OP):
            lines += ["", make(rng, i)]
    for c in empty_outputs():
        lines += ["", c]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    emit(generate(), "onnx_gathers.txt")
