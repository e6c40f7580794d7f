"""The project's case files (tests/cases/{ok,err}/*.slc, with their insta snapshots) through
the Python API: ok cases compile to the snapshot's plan and run; err cases raise the
snapshot's diagnostic, code and rendered text alike."""

import pathlib
import re

import numpy as np
import pytest

import slc

ROOT = pathlib.Path(__file__).resolve().parents[2] / "tests"
CASES = ROOT / "cases"
SNAPSHOTS = ROOT / "snapshots"

DTYPES = {
    "bool": "bool", "i8": "int8", "i16": "int16", "i32": "int32", "i64": "int64",
    "u8": "uint8", "u16": "uint16", "u32": "uint32", "u64": "uint64",
    "f16": "float16", "f32": "float32", "f64": "float64", "c64": "complex64", "c128": "complex128",
}


def input_types(src):
    """`# inputs: a=f32[3,4], i=i64[2]` as compile()'s (dtype, shape) pairs."""
    header = src.splitlines()[0]
    assert header.startswith("# inputs:"), header
    types = {}
    for name, dtype, dims in re.findall(r"(\w+)=(\w+)\[([^\]]*)\]", header):
        shape = tuple(int(d) for d in dims.split(",") if d.strip())
        types[name] = (DTYPES[dtype], shape)
    return types


def snapshot_body(kind, path):
    snap = SNAPSHOTS / f"cases__{kind}_cases@{path.name}.snap"
    text = snap.read_text()
    return text.split("---\n", 2)[2]


def cases(kind):
    folder = CASES / kind
    return sorted(folder.glob("*.slc")) if folder.exists() else []


@pytest.mark.parametrize("path", cases("ok"), ids=lambda p: p.stem)
def test_ok_case(path):
    src = path.read_text()
    types = input_types(src)
    kernel = slc.compile(src, **types)
    expected_plan = snapshot_body("ok", path).split("== plan\n", 1)[1]
    assert kernel.plan.strip() == expected_plan.strip()
    # It runs, on inputs of those types (index inputs all zeros: always in range).
    inputs = {}
    for name, (dtype, shape) in types.items():
        n = int(np.prod(shape, dtype=np.int64))
        inputs[name] = (np.zeros(shape, dtype) if np.dtype(dtype).kind in "iu" else np.arange(n).astype(dtype).reshape(shape))
    result = kernel(**inputs)
    assert result.shape == kernel.shape and result.dtype == kernel.dtype


@pytest.mark.parametrize("path", cases("err"), ids=lambda p: p.stem)
def test_err_case(path):
    src = path.read_text()
    with pytest.raises(slc.Error) as info:
        slc.compile(src, **input_types(src))
    e = info.value
    expected = snapshot_body("err", path)[len(src) + 1 :]
    assert f"[{e.code}] Error: {e.message}" == expected.splitlines()[0]
    # The snapshots render against `<expr>`; slc.Error names the program `expr`, as the CLI does.
    assert str(e).replace("─[ expr:", "─[ <expr>:").rstrip() == expected.rstrip()
