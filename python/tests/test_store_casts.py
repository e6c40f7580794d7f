"""A stored value of another dtype than its target's (docs/semantics.md, Stores: "A value of
another dtype"), against NumPy itself for every pair of dtypes, bfloat16 included: `=` casts as
`astype` does; `+=` and `*=` give NumPy's values, or are refused (E0134) where NumPy raises
or rounds once in a wider dtype; a float with no value of an integer target is E0211, the
target left as it was."""

import itertools
import warnings

import ml_dtypes
import numpy as np
import pytest

import slc

DTYPES = [
    np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
    np.float16, ml_dtypes.bfloat16, np.float32, np.float64, np.complex64, np.complex128,
]

# (subscript, the NumPy index it is, the value's shape for a target of shape (4, 3))
FORMS = [
    ("a[1:, ::-1]", (slice(1, None), slice(None, None, -1)), (3,)),
    ("a[i]", (np.array([2, 0, 2]),), (3, 3)),
    ("a[m]", (np.array([True, False, True, True]),), (1, 3)),
    ("a[1, 2]", (1, 2), ()),
]


def kind(dtype):
    return np.dtype(dtype).kind


def values(target, value, shape, rng):
    """Values every element of which the target's dtype holds when cast (a float into an
    unsigned integer is not negative): NumPy's cast is defined for each."""
    low = 0 if kind(target) in "ub" else -20
    x = rng.integers(low, 50, size=shape)
    if kind(value) in "fc" or value is ml_dtypes.bfloat16:
        x = x + rng.choice([0.0, 0.25, 0.5, 0.75], size=shape)
    if kind(value) == "c":
        x = x + 1j * rng.integers(-3, 3, size=shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(x).astype(value)


def wider(target, value):
    """Whether NumPy computes `target op= value` in a wider dtype than the target's."""
    return np.result_type(target, value) != np.dtype(target)


def _numpy_store(x, index, op, value):
    """NumPy's `x[index] op= value` on a copy of `x`: the copy, or None where NumPy raises."""
    return _numpy_store_or_error(x, index, op, value)[0]


def _numpy_store_or_error(x, index, op, value):
    """NumPy's `x[index] op= value` on a copy of `x`: `(copy, None)`, or `(None, the
    exception's class)` where NumPy raises."""
    y = x.copy()
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            if op == "=":
                y[index] = value
            elif op == "+=":
                y[index] += value
            else:
                y[index] *= value
    except (OverflowError, TypeError, ValueError) as e:
        return None, type(e)
    return y, None


@pytest.mark.parametrize("target,value", list(itertools.product(DTYPES, DTYPES)))
def test_values_of_another_dtype_are_cast_as_numpy_casts_them(target, value):
    rng = np.random.default_rng(DTYPES.index(target) * 31 + DTYPES.index(value))
    for (src, index, vshape), op in itertools.product(FORMS, ["=", "+=", "*="]):
        a = values(target, target, (4, 3), rng)
        v = values(target, value, vshape, rng)
        want = _numpy_store(a, index, op, v)
        numpy_raised = want is None
        got = a.copy()
        program = f"{src} {op} v"
        inputs = {"a": got, "v": v, "i": FORMS[1][1][0], "m": FORMS[2][1][0]}
        try:
            slc.eval(program, **inputs)
        except slc.CompileError as e:
            assert e.code == "E0134", (program, target, value, e)
            one_element = src == "a[1, 2]"
            # Refused where NumPy raises, or where it computes in a wider dtype and rounds
            # once; at one element (NumPy's scalar path), a float into integers (truncated
            # there), a wider integer into a signed one (OverflowError, or not, by value) and
            # a signed one into u64 (computed in float64).
            documented = wider(target, value) and (
                kind(target) not in "iu" or kind(value) not in "iub" or value is ml_dtypes.bfloat16
                or (one_element and kind(target) == "i")
                or (one_element and np.dtype(target) == np.uint64 and kind(value) == "i")
            )
            assert numpy_raised or documented, (program, np.dtype(target), np.dtype(value), e)
            assert np.array_equal(got, a), "nothing written"
            continue
        assert not numpy_raised, (program, np.dtype(target), np.dtype(value))
        assert got.dtype == want.dtype
        assert got.tobytes() == want.tobytes(), (program, np.dtype(target), np.dtype(value), got, want)


@pytest.mark.parametrize("target", [np.int8, np.uint8, np.int32, np.uint64, np.int64])
@pytest.mark.parametrize("bad", [np.nan, np.inf, -1.0, 1e20, 300.0])
def test_a_float_with_no_integer_value_is_an_error_and_writes_nothing(target, bad):
    info = np.iinfo(target)
    if info.min <= bad <= info.max:
        return
    a = np.arange(6, dtype=target).reshape(2, 3)
    v = np.array([1.5, bad, 2.0])
    with pytest.raises(slc.RunError) as e:
        slc.eval("a[0] = v", a=a, v=v)
    assert e.value.code == "E0211"
    assert "element 1" in str(e.value)
    assert a.tolist() == np.arange(6).reshape(2, 3).tolist()


def test_numpy_scalars_are_strongly_typed_as_nep_50_has_them():
    u = np.array([250, 1, 2], np.uint8)
    slc.eval("a[0] = k", a=u, k=np.uint16(300))
    assert u.tolist() == [44, 1, 2]
    slc.eval("a[1] += k", a=u, k=np.int8(-2))
    assert u.tolist() == [44, 255, 2]
    with pytest.raises(slc.CompileError, match="E0134"):
        slc.eval("a[:2] += k", a=u, k=np.int8(3))
    # A Python int stays weak: converted where it fits, refused where not.
    slc.eval("a[:2] += k", a=u, k=3)
    assert u.tolist() == [47, 2, 2]


INT_TARGETS = [np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.uint64, np.float16, np.float32]
INT_VALUES = [0, 5, -3, 300, 2**40 + 3, -(2**63)]


@pytest.mark.parametrize("target", INT_TARGETS, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("how", ["python int", "np.int64", "0-d array"])
def test_a_python_int_is_weak_and_a_numpy_int64_strong(target, how):
    """NEP 50: NumPy converts a Python int by its value (OverflowError where the target does
    not hold it) and casts a NumPy int64, scalar or 0-d array, as any array of another dtype.
    slc.eval, and a compiled kernel called again, against NumPy itself."""
    make = {"python int": int, "np.int64": np.int64, "0-d array": lambda v: np.array(v, np.int64)}[how]
    base = np.array([3, 0, 1, 2], dtype=target)
    forms = [("a[1:3]", slice(1, 3)), ("a[i]", np.array([0, 2])), ("a[2]", 2)]
    stored = 0
    for (text, index), op, v in itertools.product(forms, ["=", "+=", "*="], INT_VALUES):
        want = _numpy_store(base, index, op, make(v))
        got = base.copy()
        src = f"{text} {op} k"
        try:
            slc.eval(src, a=got, i=np.array([0, 2]), k=make(v))
        except slc.Error:
            # A Python int is refused exactly where NumPy raises. A NumPy integer is a tensor
            # of another dtype: refused where NumPy raises, and where NumPy's result depends
            # on the value (a signed element updated from a wider integer) or is rounded once
            # in a wider dtype (docs/semantics.md): never another value.
            assert want is None or how != "python int", (src, v, want)
            continue
        except OverflowError:
            # NumPy converts a NumPy integer *scalar* that `=` stores through basic subscripts
            # into a signed target by its value, as a Python int: OverflowError, as NumPy's.
            assert want is None, (src, v, got)
            continue
        assert want is not None, (src, v, got)
        np.testing.assert_array_equal(got, want, err_msg=f"{src} with {v!r}")
        stored += 1
    assert stored >= 15, stored


SCALAR_TARGETS = [np.int8, np.int16, np.int64, np.uint8, np.uint64, np.bool_, np.float32]
SCALAR_VALUES = [
    np.int16(300), np.int16(-129), np.uint64(2**64 - 1), np.uint64(2**63), np.int64(-1),
    np.uint32(2**32 - 1), np.int8(-5), np.uint8(200),
]
# (slc's subscripts, NumPy's): basic ones (integers, a 0-d integer array, slices, `...`,
# `None`) and those NumPy's fancy setitem takes (an index array, a mask).
SCALAR_FORMS = [
    ("a[0]", 0), ("a[0, 1]", (0, 1)), ("a[...]", Ellipsis), ("a[:, 1]", (slice(None), 1)),
    ("a[None, 1, 2]", (None, 1, 2)), ("a[j, 1]", (np.array(1), 1)), ("a[1:][0, :0]", None),
    ("a[0, i]", (0, np.array([1, 2]))), ("a[m]", np.array([[True, False, True], [False] * 3])),
]


@pytest.mark.parametrize("target", SCALAR_TARGETS, ids=lambda d: np.dtype(d).name)
def test_numpy_integer_scalars_are_stored_as_numpy_stores_them(target):
    """NumPy's setitem converts a NumPy integer *scalar* that it stores through basic subscripts
    into a signed integer target by its value (`i8[0] = np.int16(300)`: OverflowError), and
    casts it everywhere else, as it casts a 0-d array: slc.eval, a kernel compiled for one
    value and called with another, and the 0-d array, against NumPy itself."""
    base = (np.arange(6) * 7 - 3).astype(target).reshape(2, 3)
    extra = {"i": np.array([1, 2]), "j": np.array(1), "m": SCALAR_FORMS[-1][1]}
    for (src, index), value in itertools.product(SCALAR_FORMS, SCALAR_VALUES):
        if index is None:  # a[1:][0, :0]: a view, then an empty slice of it
            want = _numpy_store(base[1:], (0, slice(0, 0)), "=", value)
            want = None if want is None else np.concatenate([base[:1], want])
        else:
            want = _numpy_store(base, index, "=", value)
        kernel = slc.compile(f"{src} = k", a=base, k=np.array(0, value.dtype), **extra)
        for run in ["eval", "kernel", "0-d array"]:
            got = base.copy()
            try:
                if run == "eval":
                    slc.eval(f"{src} = k", a=got, k=value, **extra)
                elif run == "kernel":
                    kernel(a=got, k=value, **extra)
                else:
                    slc.eval(f"{src} = k", a=got, k=np.array(value), **extra)
            except OverflowError as e:
                assert want is None and run != "0-d array", (src, value, run)
                assert "out of bounds" in str(e), e
                assert got.tobytes() == base.tobytes(), (src, value, run)
                continue
            if run == "0-d array":
                want_array = base.copy()
                if index is None:
                    want_array[1:][0, :0] = np.array(value)
                else:
                    want_array[index] = np.array(value)
                np.testing.assert_array_equal(got, want_array, err_msg=f"{src} = {value!r} ({run})")
                continue
            assert want is not None, (src, value, run, got)
            np.testing.assert_array_equal(got, want, err_msg=f"{src} = {value!r} ({run})")


@pytest.mark.parametrize("target", [np.int8, np.uint8, np.int64, np.uint64], ids=lambda d: np.dtype(d).name)
def test_values_numpy_refuses_with_overflow_error_are_overflow_errors(target):
    """A Python int or float a store converts by its value (bound by name or written in the
    program) that the target does not hold raises OverflowError in NumPy: slc.OverflowError
    (E0135) in slc, also a Python OverflowError; NaN, NumPy's ValueError, stays E0134."""
    base = np.arange(4, dtype=target)
    # (A Python int from 2**63 up is held as a uint64, which stores it; 2**64 and below -2**63
    # no integer dtype holds: the binding's OverflowError.)
    values = [300, -1, 2**63, 2**64 - 1, 2**64, -(2**63) - 1, 300.5, -1.5, 1e19, 2e19, float("inf"), float("-inf"), float("nan")]
    refused = 0
    for value, (text, index), op in itertools.product(values, [("a[1]", 1), ("a[1:3]", slice(1, 3)), ("a[i]", [0, 2])], ["=", "+="]):
        want, numpy_raised = _numpy_store_or_error(base, index, op, value)
        for program, bound in [(f"{text} {op} k", {"k": value}), (f"{text} {op} {value!r}", {})]:
            if not bound and ("inf" in program or "nan" in program or not -(2**63) <= value < 2**63):
                continue  # no literal for them (past i64 a literal is E0109): bound by name only
            got = base.copy()
            try:
                slc.eval(program, a=got, i=np.array([0, 2]), **bound)
            except OverflowError as e:
                # slc.OverflowError (E0135), or the binding's own, for a Python int no integer
                # dtype holds.
                assert not isinstance(e, slc.Error) or e.code == "E0135", (program, value, e)
                assert isinstance(e, slc.OverflowError) or not -(2**63) <= value < 2**64, (program, value, e)
                assert numpy_raised is OverflowError, (program, value, numpy_raised)
                assert got.tobytes() == base.tobytes()
                refused += 1
                continue
            except slc.Error as e:
                # Refused where NumPy does not raise OverflowError (NaN: ValueError; a float
                # `+=` NumPy does not cast back, or truncates through Python scalars, which
                # slc does not copy: E0134).
                float_update = op == "+=" and isinstance(value, float)
                assert numpy_raised is not OverflowError or float_update, (program, value, e)
                continue
            assert numpy_raised is None, (program, value, numpy_raised)
            np.testing.assert_array_equal(got, want, err_msg=program)
    assert refused >= 20, refused


def test_a_kernel_compiled_for_a_python_int_takes_python_ints():
    u = np.zeros(3, np.uint8)
    kernel = slc.compile("a[0] = k", a=u, k=7)
    kernel(a=u, k=7)
    assert u.tolist() == [7, 0, 0]
    with pytest.raises(ValueError, match="Python int"):
        kernel(a=u, k=np.int64(7))
    # Compiled for a NumPy integer, the value is cast per call; a Python int given there is
    # converted by its value, as NumPy does: where the target holds it.
    kernel = slc.compile("a[0] = k", a=u, k=np.int64(7))
    kernel(a=u, k=np.int64(300))
    assert u.tolist() == [44, 0, 0]
    kernel(a=u, k=9)
    assert u.tolist() == [9, 0, 0]
    with pytest.raises(OverflowError, match="out of bounds for uint8"):
        kernel(a=u, k=300)
    assert u.tolist() == [9, 0, 0]


def test_strided_values_and_symbolic_kernels_cast_on_every_call():
    base = np.arange(40, dtype=np.float64) * 1.5 - 7
    k = slc.compile("a[1:] = v", a=("int16", ("N",)), v=("float64", ("K",)))
    for n, step in [(5, 1), (3, 2), (5, 3), (5, 3), (9, -1)]:
        v = base[::step][: n - 1]
        a = np.zeros(n, np.int16)
        want = a.copy()
        want[1:] = v
        assert k(a=a, v=v) is None
        assert a.tolist() == want.tolist(), (n, step)


def test_strided_targets_take_values_of_another_dtype_in_place():
    base = np.arange(24, dtype=np.int16).reshape(4, 6)
    want = base.copy()
    v = np.array([1.5, -2.5, 7.9])
    w = np.array([[-1], [100], [3]], np.int8)
    want[:, ::-2][1:] = v
    want[:, ::-2][1:] += w
    slc.eval("a[1:] = v", a=base[:, ::-2], v=v)
    slc.eval("a[1:] += w", a=base[:, ::-2], w=w)
    assert base.tolist() == want.tolist()
