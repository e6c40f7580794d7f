"""Diagnostics as exceptions: classes, codes, spans, messages, the rendered text."""

import builtins
import pickle

import numpy as np
import pytest

import slc

A = np.arange(20, dtype=np.float32).reshape(4, 5)


@pytest.mark.parametrize(
    "source, code, cls, span",
    [
        ("a[", "E0002", slc.ParseError, (2, 2)),
        ("a[1 ? 2]", "E0001", slc.ParseError, (4, 5)),
        ("b[0]", "E0101", slc.CompileError, (0, 1)),
        ("a[5]", "E0102", slc.IndexError, (2, 3)),
        ("a[0, 0, 0]", "E0103", slc.IndexError, None),
        ("a[..., 1, ...]", "E0104", slc.IndexError, None),
        ("a[::0]", "E0105", slc.CompileError, None),
        ("a[1.5]", "E0106", slc.IndexError, None),
        ("let b = a", "E0115", slc.CompileError, None),
    ],
)
def test_program_errors(source, code, cls, span):
    with pytest.raises(cls) as info:
        slc.eval(source, a=A)
    e = info.value
    assert isinstance(e, slc.Error)
    assert e.code == code
    if span is not None:
        assert e.span == span
    assert e.span is None or 0 <= e.span[0] <= e.span[1] <= len(source)
    assert e.message and "\n" not in e.message
    text = str(e)
    assert text.startswith(f"[{code}] Error: {e.message}")
    assert "\x1b[" not in text, "no colour"
    assert source in text
    # compile() raises the same.
    with pytest.raises(cls):
        slc.compile(source, a=A)


def test_index_errors_are_python_index_errors():
    with pytest.raises(IndexError):
        slc.eval("a[9]", a=A)
    x = np.arange(3)
    with pytest.raises(builtins.IndexError) as info:
        slc.eval("x[i]", x=x, i=np.array([0, -4]))
    e = info.value
    assert isinstance(e, slc.IndexError) and e.code == "E0201"
    assert e.span == (2, 3)
    assert e.message == "index -4 is out of bounds for axis 0 with size 3"
    # A kernel raises it on every bad call and keeps working after.
    k = slc.compile("x[i]", x=x, i=np.array([0, 1]))
    for _ in range(3):
        with pytest.raises(slc.IndexError):
            k(x=x, i=np.array([3, 0]))
    assert k(x=x, i=np.array([2, 0])).tolist() == [2, 0]


def test_errors_pickle_and_repr():
    with pytest.raises(slc.Error) as info:
        slc.eval("a[5]", a=A)
    e = info.value
    back = pickle.loads(pickle.dumps(e))
    assert type(back) is type(e)
    assert (back.code, back.span, back.message, str(back)) == (e.code, e.span, e.message, str(e))
    assert "E0102" in repr(e)


def test_unicode_program_spans_are_bytes():
    # `é` is two bytes: spans count bytes, as the diagnostics do.
    source = "é[0]"
    with pytest.raises(slc.Error) as info:
        slc.eval(source, a=A)
    assert info.value.code in ("E0001", "E0101")


def test_dml_errors_and_levels():
    k = slc.compile("a[1:, ::-1]", a=A)
    graph = k.dml()
    assert isinstance(graph, dict) and graph["FeatureLevel"]["Name"].startswith("DML_FEATURE_LEVEL")
    assert isinstance(k.dml(feature_level="4.1"), dict)
    with pytest.raises(ValueError, match="feature level"):
        k.dml(feature_level="9.9")
    # A gather whose index values are only known at run time, in a mode DirectML cannot
    # reproduce, is refused with an E04xx code.
    g = slc.compile("x[i]", x=np.arange(5.0), i=("int64", (3,)))
    try:
        g.dml()
    except slc.DmlError as e:
        assert e.code.startswith("E04")
