#!/usr/bin/env python3
"""Generates tests/golden/cases.jsonl: NumPy's answers for random slc programs.

Each case is one JSON object per line:
  {"id": 17, "src": "a[1:, ::-1][idx]",
   "inputs": {"a": {"dtype": "f32", "shape": [4, 5], "seed": 1234},
              "idx": {"dtype": "i32", "shape": [3], "values": [0, -1, 2]}},
   "expect": {"dtype": "f32", "shape": [3, 5], "hex": "..."}}
or, for programs NumPy rejects, "expect": {"error": "IndexError", "message": "..."}.

Data tensors are not stored: they are filled from their seed with splitmix64 (see fill()),
which tests/golden.rs implements too. Index tensors are stored as values.

  python3 tests/golden/gen.py           # (re)write cases.jsonl
  python3 tests/golden/gen.py --check   # regenerate in memory, fail if the file differs
"""
import json
import random
import sys
from pathlib import Path

import numpy as np

OUT = Path(__file__).with_name("cases.jsonl")
SEED = 20261123
CASES = 3000
# Advanced indexing (several index arrays, integers among them, masks, chains through gather)
# draws from a stream of its own, so the first CASES cases stay as they were.
ADVANCED_SEED = 20261125
ADVANCED_CASES = 1500
# NumPy's corners of the index tuple: `a[()]`, and boolean masks with an axis of length 0 (which
# match any axis: they select nothing)
PARITY_SEED = 20261127
PARITY_CASES = 200

DTYPES = {
    "bool": np.bool_, "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64,
    "u8": np.uint8, "u16": np.uint16, "u32": np.uint32, "u64": np.uint64,
    "f16": np.float16, "f32": np.float32, "f64": np.float64,
}
# The data dtypes the cases draw from; the complex section below swaps in its own.
DATA_DTYPES = list(DTYPES)
DTYPES.update({"c64": np.complex64, "c128": np.complex128})
# Every kind of case again on complex data (8- and 16-byte elements)
COMPLEX_SEED = 20261128
COMPLEX_CASES = 400
# Stores: `a[items] = v`, `+=`, `*=` (NumPy's setitem and its buffered in-place operators), every
# kind of subscript above as the target, values broadcast, duplicates in index arrays
STORE_SEED = 20261129
STORE_CASES = 800
INDEX_DTYPES = ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64"]
I64_MIN, I64_MAX = -(2**63), 2**63 - 1
MASK = 2**64 - 1


def fill(dtype, shape, seed):
    """splitmix64 bytes, truncated to the tensor's size; bools keep only the low bit."""
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(DTYPES[dtype]).itemsize
    out = bytearray()
    state = seed & MASK
    while len(out) < n:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out += z.to_bytes(8, "little")
    data = bytes(out[:n])
    if dtype == "bool":
        data = bytes(b & 1 for b in data)
    return np.frombuffer(data, dtype=np.dtype(DTYPES[dtype]).newbyteorder("<")).reshape(shape)


def bound(rng, n):
    r = rng.random()
    if r < 0.5:
        return None
    if r < 0.92:
        return rng.randint(-n - 1, n + 1)
    return rng.choice([I64_MIN, I64_MAX, I64_MIN + 1, I64_MAX - 1, 2**62, -(2**62), 10**12, -(10**12)])


def step(rng):
    r = rng.random()
    if r < 0.45:
        return None
    if r < 0.95:
        return rng.choice([-3, -2, -1, -1, 1, 1, 2, 3])
    return rng.choice([I64_MAX, I64_MIN, I64_MIN + 1, 2**40, -(2**40), 0])


class Gen:
    def __init__(self, rng):
        self.rng = rng
        self.inputs = {}

    def index_tensor(self, n):
        """A bound index tensor or a list literal, with values mostly in range."""
        rng = self.rng
        q = rng.choice([1, 1, 1, 2, 0]) if rng.random() < 0.9 else 1
        shape = [rng.randint(0, 3) for _ in range(q)]
        count = int(np.prod(shape, dtype=np.int64))
        lo, hi = -max(n, 1), max(n, 1) - 1
        if rng.random() < 0.05:
            lo, hi = lo - 3, hi + 3  # may be out of range: an IndexError case
        # A list literal cannot spell an empty array of rank > 1 (`[]` is shape (0,)).
        if rng.random() < 0.5 and q >= 1 and (count > 0 or q == 1):
            values = [rng.randint(lo, hi) for _ in range(count)]
            lit = np.array(values, dtype=np.int64).reshape(shape)
            return lit.tolist().__repr__(), lit
        dtype = rng.choice(INDEX_DTYPES)
        info = np.iinfo(DTYPES[dtype])
        values = [min(max(rng.randint(lo, hi), int(info.min)), int(info.max)) for _ in range(count)]
        name = f"i{len(self.inputs)}"
        arr = np.array(values, dtype=DTYPES[dtype]).reshape(shape)
        self.inputs[name] = {"dtype": dtype, "shape": shape, "values": values}
        return name, arr

    def items(self, shape):
        """A random index for an array of `shape`: (slc text, Python index tuple)."""
        rng = self.rng
        rank = len(shape)
        consuming = rank if rng.random() < 0.45 else rng.randint(0, rank)
        if rng.random() < 0.03:
            consuming = rank + 1  # too many indices
        kinds = []
        for _ in range(consuming):
            r = rng.random()
            kinds.append("slice" if r < 0.55 else "int" if r < 0.8 else "array")
        # One index array at most.
        seen = False
        for i, k in enumerate(kinds):
            if k == "array":
                kinds[i] = "slice" if seen else "array"
                seen = True
        kinds += ["new"] * rng.choice([0, 0, 0, 1, 1, 2])
        rng.shuffle(kinds)
        ellipses = 1 if rng.random() < 0.35 else 0
        if rng.random() < 0.01:
            ellipses = 2  # an error
        for _ in range(ellipses):
            kinds.insert(rng.randint(0, len(kinds)), "...")
        if not kinds:
            kinds = [rng.choice(["...", "new"])]
        # The input axis each consuming item applies to.
        first_ellipsis = kinds.index("...") if "..." in kinds else len(kinds)
        before = sum(1 for k in kinds[:first_ellipsis] if k in ("slice", "int", "array"))
        after = sum(1 for k in kinds[first_ellipsis:] if k in ("slice", "int", "array"))
        texts, pys = [], []
        pre = post = 0
        for pos, kind in enumerate(kinds):
            if kind in ("slice", "int", "array"):
                if pos < first_ellipsis:
                    axis = pre
                    pre += 1
                else:
                    axis = rank - after + post
                    post += 1
                n = shape[axis] if 0 <= axis < rank else 2
            if kind == "slice":
                a, b, c = bound(rng, n), bound(rng, n), step(rng)
                f = lambda v: "" if v is None else str(v)
                text = f"{f(a)}:{f(b)}" + ("" if c is None and rng.random() < 0.5 else f":{f(c)}")
                texts.append(text)
                pys.append(slice(a, b, c))
            elif kind == "int":
                if rng.random() < 0.05 or n == 0:
                    i = rng.choice([n, -n - 1, n + 3])
                else:
                    i = rng.randint(-n, n - 1)
                if rng.random() < 0.08:
                    texts.append(f"{i + 1} - 1")
                else:
                    texts.append(str(i))
                pys.append(i)
            elif kind == "array":
                text, arr = self.index_tensor(n)
                texts.append(text)
                pys.append(arr)
            elif kind == "new":
                texts.append(rng.choice(["newaxis", "None"]))
                pys.append(None)
            else:
                texts.append("...")
                pys.append(Ellipsis)
        return "[" + ", ".join(texts) + "]", tuple(pys)


class AdvancedGen(Gen):
    """Indices with several advanced items: index arrays broadcast together (bound tensors and
    list literals), integers, boolean masks (bound, list literals, 0-d `True`/`False`), among
    slices, `...` and new axes."""

    def array(self, n, shape):
        """An index array of `shape` over an axis of `n`, values mostly in range."""
        rng = self.rng
        count = int(np.prod(shape, dtype=np.int64))
        lo, hi = -max(n, 1), max(n, 1) - 1
        if rng.random() < 0.04:
            lo, hi = lo - 3, hi + 3
        values = [rng.randint(lo, hi) for _ in range(count)]
        if rng.random() < 0.4 and shape and (count > 0 or len(shape) == 1):
            lit = np.array(values, dtype=np.int64).reshape(shape)
            return repr(lit.tolist()), lit
        dtype = rng.choice(INDEX_DTYPES)
        info = np.iinfo(DTYPES[dtype])
        values = [min(max(v, int(info.min)), int(info.max)) for v in values]
        name = f"i{len(self.inputs)}"
        self.inputs[name] = {"dtype": dtype, "shape": shape, "values": values}
        return name, np.array(values, dtype=DTYPES[dtype]).reshape(shape)

    def mask(self, shape):
        """A boolean mask of `shape`: a bound tensor or a list literal."""
        rng = self.rng
        count = int(np.prod(shape, dtype=np.int64))
        density = rng.choice([0.0, 0.3, 0.6, 1.0])
        bits = [1 if rng.random() < density else 0 for _ in range(count)]
        arr = np.array(bits, dtype=np.bool_).reshape(shape)
        # `[]` is an integer list, and a list cannot spell an empty array of rank > 1.
        if rng.random() < 0.3 and count > 0:
            return repr(arr.tolist()), arr
        name = f"m{len(self.inputs)}"
        self.inputs[name] = {"dtype": "bool", "shape": shape, "values": bits}
        return name, arr

    def items(self, shape):
        rng = self.rng
        rank = len(shape)
        # Broadcast-compatible arrays share a target shape; some do not fit it.
        target = [rng.randint(1, 3) for _ in range(rng.choice([0, 1, 1, 2]))]
        kinds = []  # (kind, axes consumed)
        left = rank + (1 if rng.random() < 0.02 else 0)
        for _ in range(rng.randint(2, 4)):
            kind = rng.choice(["array", "array", "array", "int", "mask", "bool0", "slice", "new"])
            if kind == "mask":
                k = rng.randint(1, 2)
                if k > left:
                    kind, k = "bool0", 0
            else:
                k = {"array": 1, "int": 1, "slice": 1, "bool0": 0, "new": 0}[kind]
            if k > left:
                kind, k = "new", 0
            kinds.append((kind, k))
            left -= k
        if rng.random() < 0.4:
            kinds.insert(rng.randint(0, len(kinds)), ("...", 0))
        consumed = sum(k for _, k in kinds)
        first_ellipsis = next((i for i, (kind, _) in enumerate(kinds) if kind == "..."), len(kinds))
        after = sum(k for _, k in kinds[first_ellipsis:])
        texts, pys = [], []
        pre, post = 0, 0
        for pos, (kind, k) in enumerate(kinds):
            if pos < first_ellipsis:
                axis = pre
                pre += k
            else:
                axis = max(rank, consumed) - after + post
                post += k
            n = shape[axis] if 0 <= axis < rank else 2
            if kind == "slice":
                a, b, c = bound(rng, n), bound(rng, n), step(rng)
                f = lambda v: "" if v is None else str(v)
                texts.append(f"{f(a)}:{f(b)}:{f(c)}")
                pys.append(slice(a, b, c))
            elif kind == "int":
                i = rng.randint(-n, n - 1) if n > 0 and rng.random() < 0.95 else n
                texts.append(str(i))
                pys.append(i)
            elif kind == "array":
                ashape = target[rng.randint(0, len(target)):] if target else []
                ashape = [1 if rng.random() < 0.3 else d for d in ashape]
                if rng.random() < 0.08:
                    ashape = [rng.randint(0, 4)]  # may not broadcast
                text, arr = self.array(n, ashape)
                texts.append(text)
                pys.append(arr)
            elif kind == "mask":
                mshape = list(shape[axis:axis + k]) + [2] * max(0, axis + k - rank)
                if rng.random() < 0.08:
                    mshape[rng.randrange(k)] += 1  # does not match
                text, arr = self.mask(mshape)
                texts.append(text)
                pys.append(arr)
            elif kind == "bool0":
                b = rng.random() < 0.6
                texts.append(str(b))
                pys.append(b)
            elif kind == "new":
                texts.append("None")
                pys.append(None)
            else:
                texts.append("...")
                pys.append(Ellipsis)
        return "[" + ", ".join(texts) + "]", tuple(pys)


def bind_data(rng, g, shape):
    """Binds the data tensor `a` of `shape` (a random dtype, filled from a random seed)."""
    dtype = rng.choice(DATA_DTYPES)
    seed = rng.getrandbits(63)
    g.inputs["a"] = {"dtype": dtype, "shape": shape, "seed": seed}
    return dtype, fill(dtype, shape, seed)


def make_advanced_case(rng, cid):
    g = AdvancedGen(rng)
    rank = rng.choice([1, 2, 2, 3, 3, 3, 4])
    shape = [0 if rng.random() < 0.03 else rng.randint(1, 4) for _ in range(rank)]
    dtype, value = bind_data(rng, g, shape)
    src = "a"
    error = None
    for step_no in range(rng.choice([1, 1, 2, 2, 3])):
        try:
            if step_no > 0 and value.ndim > 0 and value.size > 0 and rng.random() < 0.2:
                # A gather of the result so far: np.take raises where mode=error does (np.take
                # checks nothing when its result is empty, mode=error checks all indices).
                axis = rng.randrange(value.ndim)
                text, arr = g.array(value.shape[axis], [rng.randint(0, 3)])
                src = f"gather({src}, {text}, axis={axis}, mode=error)"
                value = np.take(value, arr, axis=axis)
                continue
            gen = g if step_no == 0 or rng.random() < 0.6 else Gen(rng)
            gen.inputs = g.inputs
            text, idx = gen.items(list(value.shape))
            src += text
            value = np.asarray(value[idx])
        except (IndexError, ValueError) as e:
            error = e
            break
    return finish_case(cid, src, g.inputs, dtype, value, error)


def make_case(rng, cid):
    g = Gen(rng)
    rank = rng.choice([0, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 5, 6])
    max_dim = 5 if rank <= 3 else 3
    shape = [0 if rng.random() < 0.03 else rng.randint(1, max_dim) for _ in range(rank)]
    dtype, value = bind_data(rng, g, shape)
    src = "a"
    error = None
    for _ in range(rng.choice([1, 1, 2, 2, 3])):
        text, idx = g.items(list(value.shape))
        if rng.random() < 0.05 and idx and isinstance(idx[0], int) and not isinstance(idx[0], bool) and value.ndim > 0:
            # Integer arithmetic with a static shape: the same index, spelled differently.
            first = text[1:].split(",")[0].rstrip("]")
            if first.lstrip("-").isdigit():
                k = int(first) - value.shape[0]
                text = "[" + f"{src}.shape[0] + ({k})" + text[1 + len(first):]
        src += text
        try:
            value = np.asarray(value[idx])  # NumPy scalars behave as 0-d arrays, as in slc
        except (IndexError, ValueError) as e:
            error = e
            break
    return finish_case(cid, src, g.inputs, dtype, value, error)


def make_parity_case(rng, cid):
    g = Gen(rng)
    rank = rng.choice([0, 1, 1, 2, 2, 3])
    shape = [rng.randint(0, 4) for _ in range(rank)]
    dtype, value = bind_data(rng, g, shape)
    if rank > 0 and rng.random() < 0.3:
        # Slice bounds and steps from 0-d integer inputs (NumPy takes them through __index__).
        n = shape[0]
        names, texts, parts = [], [], []
        for part in range(3):
            if rng.random() < 0.4:
                texts.append("")
                parts.append(None)
                continue
            v = rng.randint(-n - 2, n + 2) if part < 2 else rng.choice([-2, -1, 1, 2, 3, 0])
            kdtype = rng.choice(["i8", "i16", "i32", "i64"] + (["u8", "u32", "u64"] if v >= 0 else []))
            name = f"k{len(g.inputs)}"
            g.inputs[name] = {"dtype": kdtype, "shape": [], "values": [v]}
            names.append(name)
            plus = rng.choice([0, 0, 1, -1])
            texts.append(name if plus == 0 else f"{name} + {plus}" if plus > 0 else f"{name} - 1")
            parts.append(np.array(v, dtype=DTYPES[kdtype]) if plus == 0 else v + plus)
        src = f"a[{texts[0]}:{texts[1]}:{texts[2]}]"
        try:
            value = value[slice(*parts)]
        except (IndexError, ValueError) as e:
            return finish_case(cid, src, g.inputs, dtype, value, e)
        return finish_case(cid, src, g.inputs, dtype, value, None)
    if rank == 0 or rng.random() < 0.3:
        src, idx = "a[()]", ()
        if rng.random() < 0.3 and rank > 0:
            i = rng.randint(-shape[0] - 1, shape[0])
            src, idx = f"a[()][{i}]", None
            try:
                value = value[()][i]
            except IndexError as e:
                return finish_case(cid, src, g.inputs, dtype, value, e)
            return finish_case(cid, src, g.inputs, dtype, value, None)
    else:
        axis = rng.randint(0, rank - 1)
        k = rng.randint(1, rank - axis)
        mshape = list(shape[axis:axis + k])
        mshape[rng.randrange(k)] = 0
        if rng.random() < 0.2:
            mshape[rng.randrange(k)] += rng.randint(1, 2)  # may not match
        name = f"m{len(g.inputs)}"
        count = int(np.prod(mshape, dtype=np.int64))
        bits = [rng.randint(0, 1) for _ in range(count)]
        g.inputs[name] = {"dtype": "bool", "shape": mshape, "values": bits}
        mask = np.array(bits, dtype=np.bool_).reshape(mshape)
        src = "a[" + ":, " * axis + name + "]"
        idx = (slice(None),) * axis + (mask,)
    try:
        value = value[idx]
    except IndexError as e:
        return finish_case(cid, src, g.inputs, dtype, value, e)
    return finish_case(cid, src, g.inputs, dtype, value, None)


def store_value(rng, g, dtype, sel_shape):
    """The value of a store into a selection of `sel_shape`: (slc text, what NumPy assigns).
    An integer literal (NumPy 2 converts a Python int to the target's dtype, or raises), `True`
    / `False`, a list literal, or a bound tensor of the target's dtype whose shape broadcasts to
    the selection's (sometimes with extra leading 1s, sometimes not broadcasting at all)."""
    r = rng.random()
    if r < 0.3:
        if dtype == "bool":
            b = rng.random() < 0.5
            return str(b), b
        v = rng.randint(-9, 99) if rng.random() < 0.9 else rng.choice([255, 256, -1, -129, 2**31, -(2**63), 2**63 - 1])
        return (str(v) if v >= 0 else f"-{-v}"), v
    if r < 0.45 and sel_shape and 0 < int(np.prod(sel_shape)) <= 12 and dtype != "bool":
        lshape = list(sel_shape[-rng.randint(1, len(sel_shape)):])
        values = [rng.randint(0, 99) for _ in range(int(np.prod(lshape)))]
        lit = np.array(values, dtype=np.int64).reshape(lshape)
        return repr(lit.tolist()), lit.tolist()
    vshape = list(sel_shape[rng.randint(0, len(sel_shape)):]) if sel_shape else []
    vshape = [1 if rng.random() < 0.25 else d for d in vshape]
    if rng.random() < 0.1:
        vshape = [1] + vshape
    if rng.random() < 0.06:
        vshape = vshape + [rng.randint(2, 3)]  # may not broadcast
    name = f"v{len(g.inputs)}"
    seed = rng.getrandbits(63)
    g.inputs[name] = {"dtype": dtype, "shape": vshape, "seed": seed}
    return name, fill(dtype, vshape, seed)


def make_store_case(rng, cid):
    """`a[...] OP v` through one subscript, or a chain of basic ones ending in any subscript
    (NumPy stores through the views; a chain through an advanced index would store into a copy,
    which slc refuses, so the corpus has none)."""
    g = AdvancedGen(rng) if rng.random() < 0.5 else Gen(rng)
    rank = rng.choice([1, 1, 2, 2, 3, 3, 4])
    shape = [0 if rng.random() < 0.03 else rng.randint(1, 4) for _ in range(rank)]
    dtype, data = bind_data(rng, g, shape)
    a = np.array(data, copy=True)
    src = "a"
    view = a
    op = rng.choice(["=", "=", "=", "+=", "*="])
    try:
        for _ in range(rng.choice([0, 0, 1])):
            basic = Gen(rng)
            basic.inputs = g.inputs
            text, idx = basic.items(list(view.shape))
            # Only views: an index array selects a copy, and integers alone select a scalar.
            if any(isinstance(i, (np.ndarray, bool)) for i in idx):
                continue
            src += text
            step = view[idx]
            if not isinstance(step, np.ndarray):
                src = src[:-len(text)]
                continue
            view = step
        text, idx = g.items(list(view.shape))
        src += text
        sel_shape = list(np.asarray(view[idx]).shape)
        vtext, v = store_value(rng, g, dtype, sel_shape)
        if dtype == "bool" and op != "=" and not isinstance(v, (bool, np.ndarray)):
            op = "="  # bool `+=` an int is int arithmetic in NumPy; slc's is `or`
        src += f" {op} {vtext}"
        if op == "=":
            view[idx] = v
        elif op == "+=":
            view[idx] += v
        else:
            view[idx] *= v
    except (IndexError, ValueError, OverflowError, TypeError) as e:
        # TypeError: `u64 *= -1` has no same-kind result type in NumPy 2.
        if f" {op} " not in src:
            src += f" {op} 0"  # the subscript itself raised: the store must raise as the load does
        return finish_case(cid, src, g.inputs, dtype, a, e)
    return finish_case(cid, src, g.inputs, dtype, a, None)


def finish_case(cid, src, all_inputs, dtype, value, error):
    """The JSON case: the inputs the source names, and NumPy's result or error."""
    inputs = {}
    for name, spec in all_inputs.items():
        if name == "a" or name in src:
            inputs[name] = spec
    if error is not None:
        return {"id": cid, "src": src, "inputs": inputs,
                "expect": {"error": type(error).__name__, "message": str(error)}}
    out = np.array(value, copy=True, order="C")
    assert out.dtype == np.dtype(DTYPES[dtype])
    return {"id": cid, "src": src, "inputs": inputs,
            "expect": {"dtype": dtype, "shape": list(out.shape), "hex": out.tobytes().hex()}}


def generate():
    rng = random.Random(SEED)
    lines = []
    for cid in range(CASES):
        case = make_case(rng, cid)
        lines.append(json.dumps(case, separators=(",", ":")))
    rng = random.Random(ADVANCED_SEED)
    for cid in range(CASES, CASES + ADVANCED_CASES):
        case = make_advanced_case(rng, cid)
        lines.append(json.dumps(case, separators=(",", ":")))
    rng = random.Random(PARITY_SEED)
    first = CASES + ADVANCED_CASES
    for cid in range(first, first + PARITY_CASES):
        case = make_parity_case(rng, cid)
        lines.append(json.dumps(case, separators=(",", ":")))
    global DATA_DTYPES
    kept, DATA_DTYPES = DATA_DTYPES, ["c64", "c128"]
    rng = random.Random(COMPLEX_SEED)
    first += PARITY_CASES
    makers = [make_case, make_advanced_case, make_parity_case]
    for cid in range(first, first + COMPLEX_CASES):
        case = makers[cid % 3](rng, cid)
        lines.append(json.dumps(case, separators=(",", ":")))
    DATA_DTYPES = kept
    rng = random.Random(STORE_SEED)
    first += COMPLEX_CASES
    for cid in range(first, first + STORE_CASES):
        case = make_store_case(rng, cid)
        lines.append(json.dumps(case, separators=(",", ":")))
    return "\n".join(lines) + "\n"


def main():
    text = generate()
    if "--check" in sys.argv[1:]:
        if OUT.read_text() != text:
            print(f"{OUT} differs from what NumPy {np.__version__} gives now; rerun gen.py", file=sys.stderr)
            return 1
        print(f"{OUT.name}: {text.count(chr(10))} cases agree with NumPy {np.__version__}")
        return 0
    OUT.write_text(text)
    print(f"wrote {text.count(chr(10))} cases to {OUT}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
