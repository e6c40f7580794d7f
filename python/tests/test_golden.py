"""The project's NumPy golden corpus (tests/golden/cases.jsonl: 5900 programs with NumPy's
answers, stores among them) evaluated through `slc.eval`: results bit for bit, errors where NumPy raised."""

import json
import pathlib

import numpy as np
import pytest

import slc

CORPUS = pathlib.Path(__file__).resolve().parents[2] / "tests" / "golden" / "cases.jsonl"

#: slc's dtype names (the corpus's spelling) as NumPy dtypes.
DTYPES = {
    "bool": np.bool_,
    "i8": np.int8,
    "i16": np.int16,
    "i32": np.int32,
    "i64": np.int64,
    "u8": np.uint8,
    "u16": np.uint16,
    "u32": np.uint32,
    "u64": np.uint64,
    "f16": np.float16,
    "c64": np.complex64,
    "c128": np.complex128,
    "f32": np.float32,
    "f64": np.float64,
}

MASK = (1 << 64) - 1


def splitmix_bytes(seed, n):
    """The corpus's fill (tests/golden/README.md): splitmix64 bytes, truncated to `n`."""
    out = bytearray()
    state = seed
    while len(out) < n:
        state = (state + 0x9E3779B97F4A7C15) & MASK
        z = state
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
        z ^= z >> 31
        out += z.to_bytes(8, "little")
    return bytes(out[:n])


def make_input(spec):
    dtype = np.dtype(DTYPES[spec["dtype"]])
    shape = tuple(spec["shape"])
    if "values" in spec:
        return np.array(spec["values"], dtype=dtype).reshape(shape)
    n = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize
    raw = bytearray(splitmix_bytes(spec["seed"], n))
    if dtype == np.bool_:
        raw = bytearray(b & 1 for b in raw)
    return np.frombuffer(bytes(raw), dtype=dtype).reshape(shape)


def load_cases():
    if not CORPUS.exists():
        return []
    return [json.loads(line) for line in CORPUS.read_text().splitlines() if line.strip()]


CASES = load_cases()


@pytest.mark.skipif(not CASES, reason="the golden corpus is not beside this checkout")
def test_golden_corpus():
    failures = []
    for case in CASES:
        src = case["src"]
        inputs = {name: make_input(spec) for name, spec in case["inputs"].items()}
        expect = case["expect"]
        # A store (the corpus's cases from id 5100 on) changes `a` in place and returns None.
        store = any(op in src for op in (" = ", " += ", " *= "))
        if store:
            inputs["a"] = inputs["a"].copy()
        try:
            got = slc.eval(src, **inputs)
            if store:
                assert got is None, src
                got = inputs["a"]
        except slc.Error as e:
            if "error" not in expect:
                failures.append(f"case {case['id']} `{src}`: slc fails: {e.message}")
            elif expect["error"] == "OverflowError" and not isinstance(e, OverflowError):
                # A value NumPy converts by its value and refuses: slc.OverflowError (E0135).
                failures.append(f"case {case['id']} `{src}`: {type(e).__name__}, not OverflowError")
            elif e.code == "E0135" and expect["error"] != "OverflowError":
                failures.append(f"case {case['id']} `{src}`: OverflowError, not {expect['error']}")
            elif "out of bounds" in e.message and e.code not in ("E0134", "E0135"):
                # slc may report another error first (a step of 0 checked before an index);
                # an out-of-bounds index it reports is NumPy's IndexError.
                if expect["error"] != "IndexError" or not isinstance(e, IndexError):
                    failures.append(f"case {case['id']} `{src}`: {type(e).__name__}, not IndexError")
            continue
        if "error" in expect:
            failures.append(f"case {case['id']} `{src}`: NumPy raises {expect['message']!r}, slc does not")
            continue
        want = (np.dtype(DTYPES[expect["dtype"]]), tuple(expect["shape"]), expect["hex"])
        have = (got.dtype, got.shape, got.tobytes().hex())
        if have != want:
            failures.append(f"case {case['id']} `{src}`: expected {want}, got {have}")
    assert not failures, f"{len(failures)} of {len(CASES)} cases fail:\n" + "\n".join(failures[:30])


@pytest.mark.skipif(not CASES, reason="the golden corpus is not beside this checkout")
def test_golden_corpus_non_contiguous():
    """The same programs over transposed copies viewed back: the strided path."""
    failures = 0
    for case in CASES[:600]:
        if "error" in case["expect"]:
            continue
        assert " = " not in case["src"], "the first cases are loads"
        inputs = {}
        for name, spec in case["inputs"].items():
            x = make_input(spec)
            inputs[name] = np.ascontiguousarray(x.T).T if x.ndim > 1 else x
        got = slc.eval(case["src"], **inputs)
        if got.tobytes().hex() != case["expect"]["hex"]:
            failures += 1
    assert failures == 0
