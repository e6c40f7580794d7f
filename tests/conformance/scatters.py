#!/usr/bin/env python3
"""Generates tests/conformance/scatters.jsonl: random scatters run by their peers, as slc programs
with the answer slc must give. tests/scatter_peers.rs runs every case through slc's interpreter
and its default (JIT) executor and compares bit for bit (any NaN equals any NaN); it reads the
committed file and never needs Python.

Pinned, in a virtual environment of its own (Python 3.11):

  python3 -m venv /tmp/peerenv
  /tmp/peerenv/bin/pip install onnxruntime==1.32.0 onnx==1.23.2 numpy==2.4.6 openvino==2026.4.1
  /tmp/peerenv/bin/python tests/conformance/scatters.py           # (re)write the file
  /tmp/peerenv/bin/python tests/conformance/scatters.py --check   # fail if it differs

The peers: ONNX ScatterND-18 and ScatterElements-18 on ONNX Runtime's CPU provider ("ort") and
the ONNX reference implementation ("onnx_ref"); OpenVINO ScatterUpdate-3, ScatterNDUpdate-15 and
ScatterElementsUpdate-12 on the CPU plugin on one thread ("ov_plugin") and OpenVINO's reference
implementation, reached by constant folding ("ov_ref").

"expect" is slc's documented semantics (docs/semantics.md, Scatters), computed by `model` below
with the rules `SLC`. Every peer's answer must equal it, or equal `model` under that peer's own
rules (`PEER_RULES`, each a documented disagreement); then the case records the peer's answer
and the rules that explain it under "peers". A peer answer that neither explains stops the
script: a new disagreement must be understood and documented before the file changes. A peer
that refuses the inputs (an unsupported dtype and reduction) is recorded as refusing.

One JSON object per line:
  {"id": "ov-seu-007", "src": "scatter_elements_update(data, indices, updates, 1, ...)",
   "inputs": {"data": {"dtype": "f16", "shape": [2, 3], "hex": "..."}, "indices": ..., "updates": ...},
   "expect": {"dtype": "f16", "shape": [2, 3], "hex": "..."} or {"error": "out of range"},
   "peers": {"ov_plugin": {"rules": ["int_mean=trunc"], "hex": "..."}, "ort": {"refuses": "..."}},
   "distinguishes": ["half=step", ...]}
with every tensor as its little-endian bytes in hex. "distinguishes" lists the other rules under
which `model` gives another answer: a peer that agrees with slc on such a case is measured to
follow slc's rule there, not the other.

Out-of-range indices are only given to the peers that check them (ONNX Runtime, the ONNX
reference, OpenVINO's reference): OpenVINO's CPU plugin does not check scatter indices and writes
outside its buffers (measured: it returns other memory's bytes, or the process dies). Nor are
negative ScatterUpdate-3 indices, which its spec and reference refuse and the plugin writes
outside its buffers with; slc counts them from the end, as gather does (docs/semantics.md).
"""

import json
import re
import sys
from pathlib import Path

import numpy as np
import onnx
import onnxruntime as ort
import openvino as ov
import openvino.opset15 as ops
from onnx import TensorProto, helper
from onnx.reference import ReferenceEvaluator
from openvino import passes

PINNED = {"onnxruntime": "1.32.0", "onnx": "1.23.2", "numpy": "2.4.6", "openvino": "2026.4.1"}
for module, version in [(ort, PINNED["onnxruntime"]), (onnx, PINNED["onnx"]), (np, PINNED["numpy"])]:
    assert module.__version__ == version, f"{module.__name__} {module.__version__}, expected {version}"
assert ov.get_version().startswith(PINNED["openvino"]), ov.get_version()
ort.set_default_logger_severity(4)
np.seterr(all="ignore")  # integer scalars wrap in the peers' loops and ours, by design

OUT = Path(__file__).with_name("scatters.jsonl")
SEED = 20261127
CASES_PER_OP = 200
DTYPES = ["f32", "f16", "f16", "f64", "i32", "i64", "i8", "u8", "bool"]  # f16 twice: its rounding
NP = {"f32": np.float32, "f16": np.float16, "f64": np.float64, "i32": np.int32, "i64": np.int64,
      "i8": np.int8, "u8": np.uint8, "bool": np.bool_}

# The rules `model` follows; slc's, then each peer's departures from them.
SLC = {
    # max/min: "nan" a NaN wins, already there or arriving; ties keep the element. "keep": the
    # element unless the update is strictly beyond it (a NaN there stays, a NaN update is
    # ignored). "take": the update unless the element is strictly beyond it (a NaN anywhere: the
    # update). "numpy": np.maximum(element, update) (a NaN wins; ties take the update).
    "maxmin": "nan",
    # f16 sums, products and means: "f32" accumulated in f32, rounded once; "step" rounded after
    # every update.
    "half": "f32",
    # integer mean: "floor" (rounded down) or "trunc" (towards zero).
    "int_mean": "floor",
    # use_init_val=false starts from: "identity" (0, 1, -inf, +inf, the integer extremes) or
    # "finite" (the float extremes are the largest finite values).
    "no_init": "identity",
    # bool sub: "xor" (the spec) or "arith" (in integers, then nonzero is true).
    "bool_sub": "xor",
}
# The other values each rule takes, for "distinguishes" (below).
ALTERNATIVES = {"maxmin": ["keep", "take", "numpy"], "half": ["step"], "int_mean": ["trunc"],
                "no_init": ["finite"], "bool_sub": ["arith"]}
PEER_RULES = {
    ("ort", "ScatterND"): {"maxmin": "take"},
    ("ort", "ScatterElements"): {"maxmin": "take"},
    ("onnx_ref", "ScatterND"): {"maxmin": "numpy", "half": "step"},
    ("onnx_ref", "ScatterElements"): {"maxmin": "keep", "half": "step"},
    ("ov_plugin", "ScatterUpdate"): {},
    ("ov_ref", "ScatterUpdate"): {},
    ("ov_plugin", "ScatterNDUpdate"): {"maxmin": "keep", "bool_sub": "arith"},
    ("ov_ref", "ScatterNDUpdate"): {"maxmin": "keep"},
    ("ov_plugin", "ScatterElementsUpdate"): {"maxmin": "keep", "int_mean": "trunc", "no_init": "finite"},
    ("ov_ref", "ScatterElementsUpdate"): {"maxmin": "take", "no_init": "finite"},
}


# ----------------------------------------------------------------------------------------------
# The model: the scatter loop of the specs, one destination's updates in C order.

def destinations(op, data_shape, indices, axis):
    """(destination, update position) pairs in C order of the updates."""
    if op in ("ScatterND", "ScatterNDUpdate"):
        for i in np.ndindex(indices.shape[:-1]):
            tup = [int(v) % data_shape[k] for k, v in enumerate(indices[i])]
            for rest in np.ndindex(tuple(data_shape[len(tup):])):
                yield tuple(tup) + rest, i + rest
    elif op == "ScatterElements" or op == "ScatterElementsUpdate":
        for i in np.ndindex(indices.shape):
            d = list(i)
            d[axis] = int(indices[i]) % data_shape[axis]
            yield tuple(d), i
    else:  # ScatterUpdate: the slices of data along axis at indices
        for i in np.ndindex(indices.shape):
            for pre in np.ndindex(tuple(data_shape[:axis])):
                for post in np.ndindex(tuple(data_shape[axis + 1:])):
                    yield pre + (int(indices[i]) % data_shape[axis],) + post, pre + i + post


def extreme_pick(rule, greater, old, upd):
    """Whether max (`greater`) or min replaces `old` by `upd` under `rule`."""
    beyond = (lambda a, b: a > b) if greater else (lambda a, b: a < b)
    o_nan, u_nan = bool(np.isnan(old)), bool(np.isnan(upd))
    if rule == "nan":
        return not o_nan and (u_nan or beyond(upd, old))
    if rule == "keep":
        return bool(beyond(upd, old))
    if rule == "take":
        return not beyond(old, upd)
    if rule == "numpy":
        return u_nan or (not o_nan and not beyond(old, upd))
    raise ValueError(rule)


def identity(reduction, dt, rules):
    t = NP[dt]
    if reduction in ("sum", "add", "sub", "mean"):
        return t(0)
    if reduction in ("prod", "mul"):
        return t(1)
    top = reduction == "min"
    if dt == "bool":
        return np.bool_(top)
    if dt in ("f16", "f32", "f64"):
        if rules["no_init"] == "finite":
            # In the accumulation type: f16 accumulating in f32 starts from f32's extremes.
            info = np.finfo(np.float32 if dt == "f16" and rules["half"] == "f32" else t)
            return info.max if top else info.min
        return t(np.inf if top else -np.inf)
    info = np.iinfo(t)
    return t(info.max if top else info.min)


def model(op, data, indices, updates, axis, reduction, init, rules):
    dt = next(k for k, v in NP.items() if np.dtype(v) == data.dtype)
    out = data.copy()
    groups = {}
    for dest, at in destinations(op, data.shape, indices, axis):
        groups.setdefault(dest, []).append(updates[at])
    if reduction == "none":
        for dest, ups in groups.items():
            out[dest] = ups[-1]
        return out
    wide = np.float32 if dt == "f16" and rules["half"] == "f32" else NP[dt]
    for dest, ups in groups.items():
        acc = wide(data[dest]) if init else wide(identity(reduction, dt, rules))
        terms = int(init)
        if dt == "bool" and reduction == "sub" and rules["bool_sub"] == "arith":
            out[dest] = int(acc) - sum(int(u) for u in ups) != 0
            continue
        with np.errstate(all="ignore"):
            for u in ups:
                u = wide(u)
                if reduction in ("sum", "add", "mean"):
                    acc = np.logical_or(acc, u) if dt == "bool" else acc + u
                elif reduction == "sub":
                    acc = np.logical_xor(acc, u) if dt == "bool" else acc - u
                elif reduction in ("prod", "mul"):
                    acc = np.logical_and(acc, u) if dt == "bool" else acc * u
                elif reduction in ("max", "min"):
                    if extreme_pick(rules["maxmin"] if dt in ("f16", "f32", "f64") else "keep",
                                    reduction == "max", acc, u):
                        acc = u
                acc = wide(acc)
                terms += 1
            if reduction == "mean" and terms:
                if dt in ("f16", "f32", "f64"):
                    acc = wide(acc / wide(terms))
                else:
                    total = int(acc)
                    if rules["int_mean"] == "trunc":
                        acc = (abs(total) // terms) * (1 if total >= 0 else -1)
                    else:
                        acc = total // terms
        out[dest] = NP[dt](acc)
    return out


# ----------------------------------------------------------------------------------------------
# The peers.

def onnx_model(op, data, indices, updates, attrs):
    node = helper.make_node(op, ["data", "indices", "updates"], ["out"], **attrs)
    t = helper.np_dtype_to_tensor_dtype(data.dtype)
    graph = helper.make_graph([node], op, [
        helper.make_tensor_value_info("data", t, list(data.shape)),
        helper.make_tensor_value_info("indices", TensorProto.INT64, list(indices.shape)),
        helper.make_tensor_value_info("updates", t, list(updates.shape)),
    ], [helper.make_tensor_value_info("out", t, None)])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    m.ir_version = 8
    return m


def last_line(e):
    """The last line of a peer's message, without the node names it numbers per process."""
    lines = [line.strip() for line in str(e).strip().splitlines() if line.strip()]
    line = lines[-1][:200] if lines else type(e).__name__
    return re.sub(r"name '[^']*'", "name '...'", line)


def run_ort(op, data, indices, updates, attrs):
    m = onnx_model(op, data, indices, updates, attrs).SerializeToString()
    feeds = {"data": data, "indices": indices, "updates": updates}
    try:
        s = ort.InferenceSession(m, providers=["CPUExecutionProvider"])
        return s.run(None, feeds)[0]
    except Exception as e:  # ONNX Runtime reports refusals as several exception types
        return last_line(e)


def run_onnx_ref(op, data, indices, updates, attrs):
    m = onnx_model(op, data, indices, updates, attrs)
    try:
        return ReferenceEvaluator(m).run(None, {"data": data, "indices": indices, "updates": updates})[0]
    except Exception as e:
        return last_line(e)


CORE = ov.Core()


def ov_node(op, d, i, u, axis, reduction, init):
    if op == "ScatterUpdate":
        return ops.scatter_update(d, i, u, ops.constant(np.int64(axis)))
    if op == "ScatterNDUpdate":
        return ops.scatter_nd_update(d, i, u, reduction=reduction)
    return ops.scatter_elements_update(d, i, u, ops.constant(np.int64(axis)), reduction=reduction,
                                       use_init_val=init)


def ov_type(a):
    return ov.Type.f16 if a.dtype == np.float16 else ov.Type(a.dtype)


def run_ov_plugin(op, data, indices, updates, axis, reduction, init):
    params = [ops.parameter(list(a.shape), ov_type(a), name=n)
              for n, a in [("d", data), ("i", indices), ("u", updates)]]
    try:
        node = ov_node(op, *params, axis, reduction, init)
        compiled = CORE.compile_model(ov.Model([node], params), "CPU", {"INFERENCE_NUM_THREADS": 1})
        return compiled({"d": data, "i": indices, "u": updates})[0]
    except Exception as e:
        return last_line(e)


def run_ov_ref(op, data, indices, updates, axis, reduction, init):
    try:
        node = ov_node(op, ops.constant(data), ops.constant(indices), ops.constant(updates), axis,
                       reduction, init)
        m = ov.Model([ops.result(node)], [])
        manager = passes.Manager()
        manager.register_pass(passes.ConstantFolding())
        manager.run_passes(m)
        folded = m.get_results()[0].input_value(0).get_node()
        if folded.get_type_name() != "Constant":
            return "no reference evaluation for this dtype"
        return folded.get_data().reshape(data.shape)
    except Exception as e:
        return last_line(e)


# ----------------------------------------------------------------------------------------------
# Drawing cases.

def values(rng, dt, n, reduction, openvino_op):
    """`n` values of `dt`: small integers, now and then a NaN, an infinity or a signed zero; f16
    sums around 2048 (where f16 steps by 2) so that rounding once differs from every step.
    OpenVINO's CPU plugin computes f64 in f32 (an infinity becomes the largest finite f32) and
    i64 in i32: for its operators, no f64 infinities and only small i64 values."""
    t = NP[dt]
    if dt == "bool":
        return rng.random(n) < 0.5
    if dt in ("f16", "f32", "f64"):
        v = rng.integers(-6, 7, n).astype(np.float64)
        infinities = not (dt == "f64" and openvino_op)
        if reduction in ("mean", "sum", "add", "sub") and rng.random() < (0.7 if dt == "f16" else 0.3):
            v = v + (2048 if dt == "f16" else 2 ** 24 if dt == "f32" else 0) * rng.integers(0, 2, n)
        if reduction in ("mean",) and rng.random() < 0.5:
            v = v / 4
        special = rng.random(n) / (2 if reduction in ("max", "min") else 1)
        v[special < 0.04] = np.nan
        v[(special >= 0.04) & (special < 0.07)] = -0.0
        if infinities:
            v[(special >= 0.07) & (special < 0.09)] = rng.choice([np.inf, -np.inf])
        return v.astype(t)
    info = np.iinfo(t)
    if not (dt == "i64" and openvino_op) and rng.random() < 0.3:  # wrapping sums and products
        return rng.integers(info.min, int(info.max) + 1, n, dtype=np.int64 if dt != "u8" else np.uint64).astype(t)
    lo = 0 if dt == "u8" else -9
    return rng.integers(lo, 10, n).astype(t)


def shape(rng, rank, hi=4):
    return [int(rng.integers(1, hi + 1)) for _ in range(rank)]


def index_values(rng, n, count, out_of_range):
    v = rng.integers(-n, n, size=count)
    if out_of_range and count > 0:
        v[rng.integers(0, count)] = rng.choice([n, -n - 1, n + 5])
    return v.astype(np.int64)


def draw(rng, op, reductions):
    dt = DTYPES[int(rng.integers(0, len(DTYPES)))]
    reduction = reductions[int(rng.integers(0, len(reductions)))]
    if dt == "bool" and reduction in ("max", "min", "mean"):
        reduction = "none"
    r = int(rng.integers(1, 4))
    dshape = shape(rng, r)
    oob = rng.random() < 0.06
    axis = int(rng.integers(-r, r))
    if op in ("ScatterND", "ScatterNDUpdate"):
        m = int(rng.integers(1, r + 1))
        outer = shape(rng, int(rng.integers(1, 3)), 3)
        tuples = int(np.prod(outer))
        cols = [index_values(rng, dshape[k], tuples, oob and k == 0) for k in range(m)]
        indices = np.stack(cols, axis=-1).reshape(outer + [m])
        ushape = outer + dshape[m:]
    elif op in ("ScatterElements", "ScatterElementsUpdate"):
        a = axis % r
        ishape = [int(rng.integers(1, d + 1)) if k != a else int(rng.integers(1, 6)) for k, d in enumerate(dshape)]
        indices = index_values(rng, dshape[a], int(np.prod(ishape)), oob).reshape(ishape)
        ushape = ishape
    else:
        a = axis % r
        # 0-d indices: the spec's first example, refused by the plugin and the reference.
        ishape = shape(rng, 0 if rng.random() < 0.1 else int(rng.integers(1, 3)), 3)
        indices = index_values(rng, dshape[a], int(np.prod(ishape)), oob).reshape(ishape)
        if not oob and rng.random() < 0.75:
            # ScatterUpdate-3 raises on a negative index, where slc counts from the end.
            indices = indices % dshape[a]
        ushape = dshape[:a] + ishape + dshape[a + 1:]
        reduction = "none"
    if not oob and rng.random() < 0.35:
        # Many duplicates: every index the first or the last along its axis.
        indices = np.where(indices >= 0, 0, -1)
    openvino_op = op.endswith("Update")
    data = values(rng, dt, int(np.prod(dshape)), reduction, openvino_op).reshape(dshape)
    updates = values(rng, dt, int(np.prod(ushape)), reduction, openvino_op).reshape(ushape)
    init = bool(rng.random() < 0.6) if op == "ScatterElementsUpdate" else True
    return dt, data, indices, updates, axis, reduction, init, oob


def tensor(a, dt):
    a = a.astype(NP[dt]).copy(order="C")  # (np.ascontiguousarray makes a 0-d array 1-d)
    return {"dtype": dt, "shape": list(a.shape), "hex": a.tobytes().hex()}


def same(a, b):
    """Bit-equal, any NaN equal to any NaN."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind == "f":
        both_nan = np.isnan(a) & np.isnan(b)
        bits = a.view(np.uint16 if a.dtype == np.float16 else np.uint32 if a.dtype == np.float32 else np.uint64)
        bbits = b.view(bits.dtype)
        return bool(np.all(both_nan | (bits == bbits)))
    return bool(np.array_equal(a, b))


def source(op, axis, reduction, init):
    if op == "ScatterND":
        return f"scatter_nd(data, indices, updates, reduction={reduction})"
    if op == "ScatterElements":
        return f"scatter_elements(data, indices, updates, axis={axis}, reduction={reduction})"
    if op == "ScatterUpdate":
        return f"scatter_update(data, indices, updates, {axis})"
    if op == "ScatterNDUpdate":
        return f"scatter_nd_update(data, indices, updates, reduction={reduction})"
    init_text = "true" if init else "false"
    return f"scatter_elements_update(data, indices, updates, {axis}, reduction={reduction}, use_init_val={init_text})"


def make_case(drawn, ident, op, peers, unexplained):
    dt, data, indices, updates, axis, reduction, init, oob = drawn
    case = {"id": ident, "src": source(op, axis, reduction, init),
            "inputs": {"data": tensor(data, dt), "indices": tensor(indices, "i64"), "updates": tensor(updates, dt)}}
    answers = {}
    for peer in peers:
        if peer == "ov_plugin" and (oob or op == "ScatterUpdate" and (indices < 0).any()):
            continue  # it writes outside its buffers
        if peer in ("ort", "onnx_ref"):
            attrs = {"reduction": reduction}
            if op == "ScatterElements":
                attrs["axis"] = axis
            run = run_ort if peer == "ort" else run_onnx_ref
            answers[peer] = run(op, data, indices, updates, attrs)
        else:
            run = run_ov_plugin if peer == "ov_plugin" else run_ov_ref
            answers[peer] = run(op, data, indices, updates, axis, reduction, init)
    if oob:
        case["expect"] = {"error": "out of range"}
        accepted = [p for p, a in answers.items() if not isinstance(a, str)]
        if accepted:
            unexplained.append(f"{ident}: {accepted} accept an index out of range")
        return case
    expect = model(op, data, indices, updates, axis % data.ndim, reduction, init, SLC)
    case["expect"] = tensor(expect, dt)
    # The rules this case tells apart from slc's: under each of these it would have another answer.
    told = [f"{k}={alt}" for k, alts in ALTERNATIVES.items() for alt in alts
            if not same(model(op, data, indices, updates, axis % data.ndim, reduction, init, {**SLC, k: alt}), expect)]
    if told:
        case["distinguishes"] = told
    recorded = {}
    for peer, answer in answers.items():
        if isinstance(answer, str):
            recorded[peer] = {"refuses": answer}
            continue
        if same(answer, expect):
            continue
        rules = PEER_RULES[(peer, op)]
        theirs = model(op, data, indices, updates, axis % data.ndim, reduction, init, {**SLC, **rules})
        if (peer, op) == ("ov_ref", "ScatterUpdate") and 1 in data.shape + indices.shape:
            # OpenVINO's reference ScatterUpdate (reached by constant folding) writes some slices
            # at the wrong offsets when a dimension of the data or the indices is 1 (measured on
            # shapes the CPU plugin gets right): not an oracle there.
            recorded[peer] = {"rules": ["reference_bug=size_1_dimension"],
                              "hex": answer.astype(NP[dt]).tobytes().hex()}
        elif same(answer, theirs):
            # The peer's rules that tell this case apart (all of them, should none alone).
            theirs_told = [f"{k}={v}" for k, v in sorted(rules.items()) if f"{k}={v}" in told]
            recorded[peer] = {"rules": theirs_told or [f"{k}={v}" for k, v in sorted(rules.items())],
                              "hex": answer.astype(NP[dt]).tobytes().hex()}
        else:
            unexplained.append(f"{ident} {case['src']} on {dt} {data.shape} {indices.shape} {updates.shape}:\n  data {data.ravel()}\n  indices "
                               f"{indices.ravel()}\n  updates {updates.ravel()}\n  {peer}: {answer.ravel()}\n"
                               f"  slc: {expect.ravel()}\n  their rules: {theirs.ravel()}")
    if recorded:
        case["peers"] = recorded
    return case


OPERATORS = [
    ("onnx-nd", "ScatterND", ["none", "add", "mul", "max", "min"], ["ort", "onnx_ref"]),
    ("onnx-elements", "ScatterElements", ["none", "add", "mul", "max", "min"], ["ort", "onnx_ref"]),
    ("ov-update", "ScatterUpdate", ["none"], ["ov_plugin", "ov_ref"]),
    ("ov-nd-update", "ScatterNDUpdate", ["none", "sum", "sub", "prod", "min", "max"], ["ov_plugin", "ov_ref"]),
    ("ov-elements-update", "ScatterElementsUpdate", ["none", "sum", "prod", "min", "max", "mean"],
     ["ov_plugin", "ov_ref"]),
]


def targeted(op):
    """Cases made to show each documented disagreement, as drawn cases are."""
    nan, inf = np.nan, np.inf
    f16 = lambda *v: np.array(v, np.float16)  # noqa: E731
    f32 = lambda *v: np.array(v, np.float32)  # noqa: E731
    i32 = lambda *v: np.array(v, np.int32)  # noqa: E731
    idx = lambda *v: np.array(v, np.int64)  # noqa: E731
    nd = op in ("ScatterND", "ScatterNDUpdate")
    at = (lambda *v: idx(*v).reshape(-1, 1)) if nd else idx
    names = {"ScatterND": ["add", "mul", "max", "min"], "ScatterElements": ["add", "mul", "max", "min"],
             "ScatterNDUpdate": ["sum", "prod", "max", "min"], "ScatterElementsUpdate": ["sum", "prod", "max", "min"]}
    if op == "ScatterUpdate":
        cases = [("f32", f32(1, 2, 3), idx(2, 0, 2), f32(7, 8, 9), 0, "none", True),
                 ("i32", i32(1, 2, 3, 4, 5, 6).reshape(2, 3), idx(0), i32(9, 8).reshape(2, 1), 1, "none", True)]
        return [(dt, d, i, u, axis, r, init, False) for dt, d, i, u, axis, r, init in cases]
    add, mul, mx, mn = names[op]
    cases = []
    for init in ([True, False] if op == "ScatterElementsUpdate" else [True]):
        # f16: 2048 + 1 + 1 + 1 is 2051 in f32 (2052 in f16), 2048 rounding each step.
        cases.append(("f16", f16(2048, 5), at(0, 0, 0, 1), f16(1, 1, 1, 3), 0, add, init))
        cases.append(("f16", f16(60000, 5), at(0, 0), f16(60000, -60000), 0, add, init))
        cases.append(("f16", f16(1.5, 5), at(0, 0, 0), f16(1.5, 1.5, 1.5), 0, mul, init))
        # NaNs, infinities and signed zeros under max and min, everywhere in the order.
        data = f32(nan, 5, 0, -0.0, 3, -inf)
        ups = f32(1, nan, 2, -0.0, 0.0, -0.0, nan, -inf, -inf)
        where = at(0, 1, 1, 2, 3, 3, 4, 5, 5)
        cases += [("f32", data, where, ups, 0, mx, init), ("f32", data, where, ups, 0, mn, init)]
        cases.append(("f16", f16(nan, 1, 2), at(1, 1, 0), f16(nan, 4, -1), 0, mn, init))
        cases.append(("f32", f32(1, 2), at(0, 0), f32(-inf, -inf), 0, mx, init))
        cases.append(("f32", f32(1, 2), at(0, 0), f32(inf, nan), 0, mn, init))
        if op == "ScatterElementsUpdate":
            # Integer means: (3 - 2 - 3) / 3 and (-2 - 3) / 2 round down, not towards zero.
            cases.append(("i32", i32(3, 7), idx(0, 0), i32(-2, -3), 0, "mean", init))
            cases.append(("i32", i32(-7, 7), idx(0, 1, 0), i32(2, -3, 0), 0, "mean", init))
            cases.append(("f16", f16(2048, 5), idx(0, 0, 0), f16(1, 1, 1), 0, "mean", init))
            cases.append(("f32", f32(1, 5), idx(0, 0, 0), f32(0.1, 0.2, 0.3), 0, "mean", init))
            cases.append(("f32", f32(1, 5), idx(0, 0), f32(-0.0, -0.0), 0, "sum", init))
    if op == "ScatterNDUpdate":
        bools = np.array([0, 1, 0], np.bool_)
        cases.append(("bool", bools, at(0, 0, 1, 2), np.array([1, 1, 1, 0], np.bool_), 0, "sub", True))
        cases.append(("f16", f16(2048, 5), at(0, 0, 0), f16(-1, -1, -1), 0, "sub", True))
    return [(dt, d, i, u, axis, r, init, False) for dt, d, i, u, axis, r, init in cases]


def generate():
    rng = np.random.default_rng(SEED)
    lines, unexplained = [], []
    for prefix, op, reductions, peers in OPERATORS:
        for i in range(CASES_PER_OP):
            case = make_case(draw(rng, op, reductions), f"{prefix}-{i:03}", op, peers, unexplained)
            lines.append(json.dumps(case, separators=(",", ":")))
        for i, drawn in enumerate(targeted(op)):
            case = make_case(drawn, f"{prefix}-t{i:02}", op, peers, unexplained)
            lines.append(json.dumps(case, separators=(",", ":")))
    if unexplained:
        sys.exit("peer answers no documented rule explains:\n" + "\n".join(unexplained))
    return "\n".join(lines) + "\n"


def main():
    text = generate()
    if sys.argv[1:] == ["--check"]:
        if OUT.read_text() != text:
            sys.exit(f"{OUT.name} differs from the peers' answers: regenerate it")
        print(f"{OUT.name}: {text.count(chr(10))} cases, as the peers answer")
    else:
        OUT.write_text(text)
        print(f"wrote {OUT.name}: {text.count(chr(10))} cases", file=sys.stderr)


if __name__ == "__main__":
    main()
