"""Stores from Python: `slc.eval("a[idx] = v", a=x, ...)` changes `x` in place as NumPy's
`x[idx] = v` does and returns None. Hypothesis draws targets, subscripts (slices, integers,
index arrays with many duplicates, masks), values broadcast to the selection, and `=`, `+=`,
`*=`; NumPy's setitem on a copy is the oracle."""

import builtins
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import slc

try:
    import ml_dtypes
except ImportError:  # bfloat16 targets are drawn only where ml_dtypes is installed
    ml_dtypes = None

DTYPES = [np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32, np.float64, np.bool_]


@st.composite
def stores(draw):
    rank = draw(st.integers(1, 3))
    shape = tuple(draw(st.integers(1, 4)) for _ in range(rank))
    dtype = draw(st.sampled_from(DTYPES))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 50, size=shape).astype(dtype)
    inputs = {"a": x}
    texts, index = [], []
    advanced = draw(st.sampled_from(["none", "array", "arrays", "mask"]))
    count = draw(st.integers(1, 6))  # one length for every index array: they broadcast
    for axis, n in enumerate(shape):
        kind = draw(st.sampled_from(["slice", "int", "all"]))
        if axis == 0 and advanced == "mask":
            m = rng.random(n) < 0.6
            inputs["m"] = m
            texts.append("m")
            index.append(m)
            continue
        if axis < (2 if advanced == "arrays" else 1) and advanced in ("array", "arrays"):
            # Few values over a short axis: duplicates are the rule, not the exception.
            i = rng.integers(-n, n, size=count)
            name = f"i{axis}"
            inputs[name] = i
            texts.append(name)
            index.append(i)
            continue
        if kind == "slice":
            start, stop = draw(st.integers(-5, 5)), draw(st.integers(-5, 5))
            step = draw(st.sampled_from([1, 2, -1, -2]))
            texts.append(f"{start}:{stop}:{step}")
            index.append(slice(start, stop, step))
        elif kind == "int":
            i = draw(st.integers(-n, n - 1))
            texts.append(str(i))
            index.append(i)
        else:
            texts.append(":")
            index.append(slice(None))
    index = tuple(index)
    selection = np.asarray(x[index]).shape
    # A value of the target's dtype broadcasting to the selection (its trailing dims, some 1).
    cut = draw(st.integers(0, len(selection)))
    vshape = tuple(1 if draw(st.booleans()) and d > 1 else d for d in selection[cut:])
    op = draw(st.sampled_from(["=", "=", "+=", "*="]))
    if draw(st.booleans()) or dtype == np.bool_:
        v = rng.integers(0, 9, size=vshape).astype(dtype)
        inputs["v"] = v
        value = "v"
    else:
        v = int(draw(st.integers(0, 9)))
        value = str(v)
    return f"a[{', '.join(texts)}] {op} {value}", inputs, index, op, v


def _numpy_store(x, index, op, v):
    want = x.copy()
    if op == "=":
        want[index] = v
    elif op == "+=":
        want[index] += v
    else:
        want[index] *= v
    return want


@settings(max_examples=300, deadline=None)
@given(stores())
def test_stores_change_the_array_in_place_as_numpy(case):
    src, inputs, index, op, v = case
    x = inputs["a"]
    want = _numpy_store(x, index, op, v)
    others = {k: t.copy() for k, t in inputs.items() if k != "a"}
    assert slc.eval(src, **inputs) is None, src
    assert x.dtype == want.dtype and np.array_equal(x, want), f"{src}\n{x}\n{want}"
    for k, t in others.items():
        assert np.array_equal(inputs[k], t), f"{src} changed `{k}`"


@settings(max_examples=200, deadline=None)
@given(stores())
def test_a_symbolic_store_kernel_updates_as_numpy(case):
    # The kernel compiled with every dim a symbol (its value's too: a size of 1 there is
    # stretched per call), then called on the drawn shapes.
    src, inputs, index, op, v = case
    types = {n: (t.dtype.name, tuple(f"{n.upper()}{d}" for d in range(t.ndim))) for n, t in inputs.items()}
    k = slc.compile(src, **types)
    x = inputs["a"]
    want = _numpy_store(x, index, op, v)
    assert k(**inputs) is None, src
    assert x.dtype == want.dtype and np.array_equal(x, want), f"{src}\n{x}\n{want}"


def test_a_symbolic_store_kernel_on_new_shapes_and_masks_each_call():
    # The kernel compiles once; each call binds its shapes and derives its mask's positions.
    k = slc.compile("a[m, 1:] = v", a=("float32", ("N", "M")), m=("bool", ("N",)), v=("float32", ("K",)))
    rng = np.random.default_rng(3)
    for n, cols in [(5, 4), (9, 2), (1, 7), (0, 3), (12, 1)]:
        x = rng.random((n, cols), dtype=np.float32)
        m = rng.random(n) < 0.5
        for width in [1, cols - 1]:
            v = rng.random(width, dtype=np.float32)
            want = x.copy()
            want[m, 1:] = v
            assert k(a=x, m=m, v=v) is None
            assert np.array_equal(x, want), (n, cols, width)
    # A value that fits neither way is an error at the value, as a fixed-shape store's is.
    with pytest.raises(slc.CompileError, match="broadcast"):
        k(a=np.zeros((3, 4), np.float32), m=np.ones(3, bool), v=np.zeros(2, np.float32))


def test_duplicates_last_write_wins_and_plus_equals_is_buffered():
    x = np.zeros(3, np.int64)
    slc.eval("a[[0, 0, 2]] = [1, 2, 3]", a=x)
    assert x.tolist() == [2, 0, 3]
    slc.eval("a[i] += 1", a=x, i=np.array([0, 0, 0]))
    assert x.tolist() == [3, 0, 3]


# Float literals of a store's value, each as written in the program and read by Python: the
# corners of NumPy's conversions (truncation into integers, bounds, f16 overflow, rounding,
# the sign of zero, a float too large for any dtype).
FLOATS = ["2.7", "-2.7", "0.5", "-0.0", "0.1", "1e10", "1e-8", "65504.0", "65520.0", "1_000.5",
          "3.4028235e38", "1e39", "1e999", "255.9", "256.0", "-1.5", "2.0", "-128.0", "127.9",
          "4294967295.5", "9.3e18", "1.0009765625", "3", "-1", "0", "2049", "16777217",
          # Just above a tie of f16, bf16 and f32: rounded once from the double, not through f32.
          "1.0004882821813226", "1.0039062509313226", "1.0000000596046457"]
FLOAT_TARGETS = [np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.float16, np.float32,
                 np.float64, np.complex64, np.complex128]


@st.composite
def float_stores(draw):
    dtypes = FLOAT_TARGETS + ([ml_dtypes.bfloat16] if ml_dtypes else [])
    dtype = draw(st.sampled_from(dtypes))
    x = np.arange(12).reshape(3, 4).astype(dtype)
    subscript, index = draw(st.sampled_from([("0, 1", (0, 1)), ("1:, ::2", (slice(1, None), slice(None, None, 2))),
                                             ("[2, 0, 2], 3", ([2, 0, 2], 3)), ("::-1", slice(None, None, -1))]))
    selection = np.asarray(x[index]).shape
    if draw(st.booleans()) or not selection:
        value = draw(st.sampled_from(FLOATS))
    else:
        # A list of the selection's last dim (or a row of it), floats and ints mixed.
        n = selection[-1]
        value = "[" + ", ".join(draw(st.sampled_from(FLOATS)) for _ in range(n)) + "]"
    op = draw(st.sampled_from(["=", "+=", "*="]))
    return f"a[{subscript}] {op} {value}", x, index, op, value


def _exactly(dtype, values):
    """Whether every float of `values` is a value of `dtype` (real part)."""
    values = np.asarray(values, dtype=np.float64).ravel()
    with np.errstate(over="ignore"):
        back = values.astype(dtype).real.astype(np.float64) if np.dtype(dtype).kind == "c" else values.astype(dtype).astype(np.float64)
    return bool(np.all((back == values) | (np.isnan(back) & np.isnan(values))))


@settings(max_examples=400, deadline=None)
@given(float_stores())
def test_float_literals_store_as_numpy_converts_them(case):
    # NumPy's answer: a scalar is a Python float, a list a float64 array. Where NumPy raises or
    # warns of an invalid cast (a value an integer type cannot hold), slc refuses (E0134, or
    # E0135 where NumPy's OverflowError is: slc.OverflowError); the
    # refusals beyond NumPy's: a list with a float (or any float into bfloat16) combined by
    # `+=`/`*=` whose elements are not all values of the target's dtype (NumPy combines in a
    # wider type and rounds once; slc in the target's dtype, the same result exactly when they
    # are); and a float combined into an
    # integer element named by integers alone (`a[0, 1] += 2.7`), or a float into a bool one,
    # which NumPy computes through Python scalars and casts back, where a selection of more
    # raises. (An integer into a bool element is stored as NumPy's scalar path stores it, but
    # for one that flips it: test_a_bool_element_updated_by_an_integer_is_numpys_scalar.)
    src, x, index, op, literal = case
    want, numpy_error = _numpy_answer(x, index, op, eval(literal))
    got = x.copy()
    kind = np.dtype(x.dtype).kind
    has_float = any(c in literal for c in ".e")
    # (ml_dtypes combines a bfloat16 with a Python float in float32: a scalar there too; a
    # Python int it converts to bfloat16 first, as slc does.)
    widened = literal.startswith("[") or kind == "V" and has_float
    inexact_list = op != "=" and widened and kind in "fcV" and not _exactly(x.dtype, eval(literal))
    # (`+= -1` flips the element, which slc refuses; `*= -1` keeps it.)
    bool_scalar = kind == "b" and index == (0, 1) and not has_float and (literal, op) != ("-1", "+=")
    float_into_integer = op != "=" and (kind in "iu" and has_float or kind == "b" and not bool_scalar)
    if numpy_error is not None or inexact_list or float_into_integer:
        _assert_refused(lambda: slc.eval(src, a=got), numpy_error, inexact_list or float_into_integer)
        assert np.array_equal(got, x), f"{src}: changed before refusing"
        return
    assert slc.eval(src, a=got) is None, src
    _assert_same_bits(got, want, src)


def _numpy_answer(x, index, op, value):
    """NumPy's store of `value` into a copy of `x`, and what it raised or warned of instead."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        try:
            return _numpy_store(x, index, op, value), None
        except RuntimeWarning as w:
            # An overflow to infinity, or a NaN (`inf * 0`), is NumPy's answer for a float
            # target; an invalid cast into an integer is no answer.
            if np.dtype(x.dtype).kind in "biu":
                return None, w
            with np.errstate(all="ignore"):
                return _numpy_store(x, index, op, value), None
        except (OverflowError, ValueError, TypeError) as e:
            return None, e


def _assert_refused(call, numpy_error, refused_first):
    """`call()` is refused as slc refuses a stored value (E0134), and as an OverflowError
    (`slc.OverflowError`, E0135) where NumPy raises one, unless slc refuses it for another
    reason first (`refused_first`)."""
    with pytest.raises(slc.CompileError) as info:
        call()
    e = info.value
    assert e.code in ("E0134", "E0135"), e
    assert isinstance(e, OverflowError) == (e.code == "E0135"), e
    if isinstance(numpy_error, OverflowError) and not refused_first:
        assert e.code == "E0135", (e, numpy_error)


def _assert_same_bits(got, want, what):
    """Bit for bit (the sign of zero), but any NaN equals any NaN (part by part if complex)."""
    assert got.dtype == want.dtype, what
    kind = np.dtype(got.dtype).kind
    parts = (lambda t: (t.real, t.imag)) if kind == "c" else (lambda t: (t,))
    for g, w in zip(parts(got), parts(want)):
        # (bfloat16 through float64, exactly; complex parts made contiguous to view their bytes.)
        g, w = (np.ascontiguousarray(t.astype(np.float64) if kind == "V" else t) for t in (g, w))
        nan = np.isnan(g) & np.isnan(w) if kind in "fcV" else np.zeros(g.shape, bool)
        same = (g.view(np.uint8) == w.view(np.uint8)).reshape(*g.shape, -1).all(-1) | nan
        assert same.all(), f"{what}\n{got}\n{want}"


# A float passed by name, as Python and NumPy hold one: slc reads a 0-d float's value when it
# checks the program, so each is a value it converts, whichever the kind.
FLOAT_BY_NAME = [float, np.float64, np.float32, np.float16, np.array, lambda v: np.array(v, np.float32)] + (
    [ml_dtypes.bfloat16] if ml_dtypes else [])


@settings(max_examples=300, deadline=None)
@given(float_stores(), st.sampled_from(FLOAT_BY_NAME))
def test_a_float_by_name_stores_as_numpy_casts_it(case, make):
    # NumPy's answer, with the value as made. slc refuses (E0134; E0135, an OverflowError, where
    # NumPy's is one) where NumPy raises, and beyond
    # it: into an integer, a value whose whole part the integer type cannot hold or that has
    # none (NumPy wraps a strong float silently, `uint8 <- np.float64(300.5)` is 44, or warns);
    # in `+=`/`*=`, a value the target's dtype cannot hold exactly (a NumPy float scalar is
    # strong: NumPy combines it in its own precision, slc in the target's).
    src, x, index, op, literal = case
    if literal.startswith("["):
        literal = literal[1:].split(",")[0].strip().rstrip("]")
    src = src.split(op)[0] + f"{op} k"
    with np.errstate(all="ignore"):
        value = make(float(eval(literal)))
    exact = float(np.asarray(value).astype(np.float64))
    kind = np.dtype(x.dtype).kind
    want, numpy_error = _numpy_answer(x, index, op, value)
    if kind in "iu":
        whole = np.trunc(exact)
        info = np.iinfo(x.dtype)
        beyond = not np.isfinite(whole) or not info.min <= whole <= info.max
    else:
        beyond = False
    inexact = op != "=" and (kind in "biu" or not _exactly(x.dtype, [exact]))
    got = x.copy()
    if numpy_error is not None or beyond or inexact:
        _assert_refused(lambda: slc.eval(src, a=got, k=value), numpy_error, inexact)
        assert np.array_equal(got, x), f"{src}: changed before refusing"
        return
    assert slc.eval(src, a=got, k=value) is None, src
    _assert_same_bits(got, want, f"{src}, k = {value!r} ({type(value).__name__})")


def test_a_float_by_name_compiles_once_per_value():
    # Its value is part of the kernel, as a Python int's is: a new value compiles again.
    x = np.zeros(4, np.int32)
    for k in [2.7, -1.5, 2.7, 7.0]:
        slc.eval("a[1:3] = k", a=x, k=k)
        assert x.tolist() == [0, int(k), int(k), 0]
    # A compiled kernel holds the value it was compiled for, and says so for another.
    kernel = slc.compile("a[1:3] = k", a=x, k=3.9)
    kernel(a=x, k=3.9)
    assert x.tolist() == [0, 3, 3, 0]
    with pytest.raises(ValueError, match="compile again"):
        kernel(a=x, k=0.5)


def test_a_python_int_by_name_stores_as_numpy_converts_it():
    x = np.zeros(4, np.float32)
    slc.eval("a[i] = k", a=x, i=np.array([1, 3]), k=5)
    assert x.tolist() == [0.0, 5.0, 0.0, 5.0]
    with pytest.raises(slc.CompileError):
        slc.eval("a[0] = k", a=np.zeros(2, np.uint8), k=300)


BOOL_SCALAR_VALUES = [0, 1, 2, -1, -2, 7, np.int8(-1), np.int8(3), np.uint8(255), np.uint8(0), np.int64(-1), True]


def _updated(x, index, op, value):
    y = x.copy()
    if op == "+=":
        y[index] += value
    else:
        y[index] *= value
    return y


@pytest.mark.parametrize("value", BOOL_SCALAR_VALUES, ids=repr)
@pytest.mark.parametrize("op", ["+=", "*="])
def test_a_bool_element_updated_by_an_integer_is_numpys_scalar(op, value):
    """`x[0, 1] += 2` on a bool array is NumPy's scalar path: the element becomes an integer and
    the result's truth is stored. Where that flips the element (`True + -1` is 0) slc refuses
    (E0134); a selection that is an array NumPy refuses too (it does not cast int64 back to
    bool) unless the value is a bool."""
    x = np.array([[True, False, True], [False, True, False]])
    by_name = type(value) is not int  # Python ints written in the program, the rest bound
    text = "k" if by_name else str(value)
    subscripts = [("a[0, 1]", (0, 1)), ("a[1][2]", (1, 2)), ("a[-2, -3]", (-2, -3)), ("a[i, 1]", (1, 1)),
                  ("a[0, 1:]", (0, slice(1, None))), ("a[..., 0, 1]", (Ellipsis, 0, 1))]
    for src, index in subscripts:
        program = f"{src} {op} {text}"
        got = x.copy()
        inputs = {"a": got, "i": np.array(1), **({"k": value} if by_name else {})}
        try:
            want = _updated(x, index, op, value)
            flips = all(np.all(_updated(t, index, op, value)[index] != t[index]) for t in (x, ~x))
        except TypeError:  # NumPy's UFuncTypeError: an array selection
            want, flips = None, True
        if flips:
            with pytest.raises(slc.CompileError, match="E0134"):
                slc.eval(program, **inputs)
            assert got.tobytes() == x.tobytes(), program
        else:
            assert slc.eval(program, **inputs) is None
            assert got.tobytes() == want.tobytes(), program


@pytest.mark.parametrize("dtype", [">i4", ">u2", ">f8", ">c8", ">f2"])
def test_a_byte_swapped_target_is_stored_into_as_numpy(dtype):
    """A big-endian target is read through a native copy; the store must reach the target (in
    its own byte order), and a failing one must leave it as it was."""
    index = np.array([2, 0, 2], dtype=">i8")
    for src, numpy_store, names in [
        ("a[1] = 7", lambda y, v: y.__setitem__(1, 7), ()),
        ("a[1:, ::-1] += 1", lambda y, v: y.__setitem__(np.s_[1:, ::-1], y[1:, ::-1] + 1), ()),
        ("a[i] = v", lambda y, v: y.__setitem__(index, v), ("i", "v")),
        ("a[1:] = a[:-1]", lambda y, v: y.__setitem__(np.s_[1:], y[:-1].copy()), ()),
    ]:
        x = np.arange(12).reshape(3, 4).astype(dtype)
        v = np.arange(4).astype(dtype)[::-1]
        want = x.copy()
        numpy_store(want, v)
        got = x.copy()
        given = {"i": index, "v": v}
        assert slc.eval(src, a=got, **{n: given[n] for n in names}) is None, src
        assert got.dtype == np.dtype(dtype) and got.tobytes() == want.tobytes(), src
    x = np.arange(12).reshape(3, 4).astype(dtype)
    got = x.copy()
    with pytest.raises(builtins.IndexError):
        slc.eval("a[i] = 1", a=got, i=np.array([0, 3]))
    assert got.tobytes() == x.tobytes()
    # A compiled store kernel takes the same path.
    kernel = slc.compile("a[i] = 5", a=x, i=index)
    assert kernel(a=got, i=index) is None
    want = x.copy()
    want[index] = 5
    assert got.tobytes() == want.tobytes()


def test_the_value_reads_the_array_as_it_was():
    x = np.arange(5.0)
    slc.eval("a[1:] = a[:-1]", a=x)
    assert x.tolist() == [0.0, 0.0, 1.0, 2.0, 3.0]


def test_index_errors_raise_index_error_and_leave_the_array():
    x = np.arange(6)
    for src, kw in [("a[6] = 0", {}), ("a[i] = 0", {"i": np.array([0, 9])})]:
        with pytest.raises(builtins.IndexError):
            slc.eval(src, a=x, **kw)
    assert x.tolist() == list(range(6))


def test_targets_that_cannot_be_stored_into_in_place_are_refused():
    x = np.arange(12).reshape(3, 4)
    # Elements that share memory (a zero stride): which write lands would be arbitrary.
    shared = np.lib.stride_tricks.as_strided(x, (3, 4), (0, 8), writeable=True)
    with pytest.raises(ValueError, match="share memory"):
        slc.eval("a[0] = 1", a=shared)
    assert x.tolist() == np.arange(12).reshape(3, 4).tolist()
    frozen = np.arange(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError):
        slc.eval("a[0] = 1", a=frozen)
    assert frozen.tolist() == [0, 1, 2]
    # A `+=` NumPy computes in a float dtype, which it does not cast back to integers.
    with pytest.raises(slc.CompileError, match="E0134"):
        slc.eval("a[:2] += v", a=np.arange(3), v=np.array([1.0], np.float32))


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from(["none", "add", "mul", "max", "min"]))
def test_scatter_elements_returns_the_reduced_copy_as_numpys_ufunc_at(seed, reduction):
    rng = np.random.default_rng(seed)
    x = rng.integers(-5, 5, size=(3, 4)).astype(np.float32)
    # Few rows, many updates per column: duplicates accumulate in C order.
    i = rng.integers(-3, 3, size=(5, 4))
    u = rng.integers(-4, 4, size=(5, 4)).astype(np.float32)
    before = x.copy()
    got = slc.eval(f"scatter_elements(a, i, u, axis=0, reduction={reduction})", a=x, i=i, u=u)
    want = x.copy()
    cols = np.broadcast_to(np.arange(4), i.shape)
    rows = np.where(i < 0, i + 3, i)
    if reduction == "none":
        for r, c, v in zip(rows.ravel(), cols.ravel(), u.ravel()):
            want[r, c] = v  # the last write wins
    else:
        ufunc = {"add": np.add, "mul": np.multiply, "max": np.maximum, "min": np.minimum}[reduction]
        ufunc.at(want, (rows, cols), u)
    assert np.array_equal(got, want)
    assert np.array_equal(x, before), "a scatter returns a copy"


def test_in_place_stores_see_overlapping_inputs_as_they_were():
    # The JIT writes the target's own bytes only when no other input shares them; a value that
    # is a view of the target is read as it was (NumPy copies overlapping operands first).
    x = np.arange(8.0)
    want = x.copy()
    want[::-1] = want.copy()
    slc.eval("a[::-1] = b", a=x, b=x)
    assert x.tolist() == want.tolist()
    x = np.arange(12.0).reshape(4, 3)
    want = x.copy()
    want[np.array([3, 0])] = want[1:3].copy()
    slc.eval("a[i] = v", a=x, i=np.array([3, 0]), v=x[1:3])
    assert np.array_equal(x, want)


def test_a_store_kernel_updates_its_target_argument():
    k = slc.compile("a[i] = v", a=("float32", (6, 2)), i=("int64", (3,)), v=("float32", (3, 2)))
    x = np.zeros((6, 2), np.float32)
    i = np.array([5, 1, 5])
    v = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert k(a=x, i=i, v=v) is None
    want = np.zeros((6, 2), np.float32)
    want[i] = v
    assert np.array_equal(x, want)
    # out= asks for the updated copy instead: the target stays as it was.
    out = np.empty_like(x)
    y = np.ones_like(x)
    assert k(a=y, i=i, v=v, out=out) is out
    assert np.array_equal(y, np.ones_like(x))
    want = np.ones_like(x)
    want[i] = v
    assert np.array_equal(out, want)
    # A Fortran-ordered target is written through its strides, as NumPy's setitem writes it.
    f = np.asfortranarray(np.zeros((6, 2), np.float32))
    assert k(a=f, i=i, v=v) is None
    want = np.zeros((6, 2), np.float32)
    want[i] = v
    assert np.array_equal(f, want) and f.flags.f_contiguous


@pytest.mark.parametrize("view", ["x[:, ::2]", "x.T", "x[::-1, 1::3]", "x[1:, ::-1]", "x[:, 2]"])
@pytest.mark.parametrize(
    "store",
    ["a[0] = 7", "a[i] = v", "a[..., 1:] += 1", "a[m] = 0", "a[::-1] = a", "a[i] = a[0]", "a[1:] = b"],
)
def test_stores_write_through_a_strided_target_as_numpy(view, store):
    # NumPy's setitem on a view writes the base array's elements through the view's strides;
    # every other element of the base stays as it was, and values that are views of the same
    # base are read as they were before the store.
    rng = np.random.default_rng(abs(hash((view, store))) % 2**32)
    base = rng.integers(0, 100, (6, 9)).astype(np.float32)
    want_base = base.copy()
    target = eval(view, {"x": base})
    want = eval(view, {"x": want_base})
    n = target.shape[0]
    inputs = {
        "i": np.array([n - 1, 0, n - 1]),
        "v": rng.integers(0, 100, (3,) + target.shape[1:]).astype(np.float32),
        "m": rng.random(target.shape) < 0.5,
        "b": eval(view, {"x": base})[:-1].copy(),
    }
    names = {k: inputs[k] for k in "ivmb" if k in store}
    # Values that are views of the target: NumPy buffers them first.
    np_store = {
        "a[::-1] = a": lambda a: a.__setitem__(slice(None, None, -1), a.copy()),
        "a[i] = a[0]": lambda a: a.__setitem__(inputs["i"], a[0].copy()),
    }.get(store)
    if np_store is not None:
        np_store(want)
    else:
        lhs, rhs = store.split(" = ") if " = " in store else (store.split(" += ")[0], None)
        key = {"a[0]": 0, "a[i]": inputs["i"], "a[..., 1:]": (Ellipsis, slice(1, None)), "a[m]": inputs["m"], "a[1:]": slice(1, None)}[lhs.strip()]
        if "+=" in store:
            want[key] += 1
        else:
            want[key] = {"7": 7, "v": inputs["v"], "0": 0, "b": inputs["b"]}[rhs.strip()]
    assert slc.eval(store, a=target, **names) is None
    assert np.array_equal(base, want_base), (view, store)


@pytest.mark.parametrize("seed", range(40))
def test_random_stores_through_random_views_as_numpy(seed):
    # A random view of a random base (steps of either sign, a transpose, a column), a random
    # store into it: the base afterwards is NumPy's, element for element, views stored through
    # in place (non-negative steps) or through a copy (negative ones) alike.
    rng = np.random.default_rng(seed)
    dtype = rng.choice([np.float32, np.int16, np.float64, np.uint8])
    base = rng.integers(0, 100, (7, 10)).astype(dtype)
    steps = [int(rng.choice([1, 2, 3, -1, -2])) for _ in range(2)]
    starts = [0 if s > 0 else -1 for s in steps]
    transposed = rng.random() < 0.4
    want_base = base.copy()
    view, want = (x[starts[0]::steps[0], starts[1]::steps[1]] for x in (base, want_base))
    if transposed:
        view, want = view.T, want.T
    n, m = view.shape
    i = rng.integers(-n, n, 4)
    cols = rng.integers(0, m, 3)
    mask = rng.random(view.shape) < 0.5
    v_rows = rng.integers(0, 100, (4, m)).astype(dtype)
    stores = [
        ("a[i] = v", lambda w: w.__setitem__(i, v_rows), {"i": i, "v": v_rows}),
        ("a[:, j] = 5", lambda w: w.__setitem__((slice(None), cols), 5), {"j": cols}),
        ("a[m] = 1", lambda w: w.__setitem__(mask, 1), {"m": mask}),
        ("a[1:, ::2] = 3", lambda w: w.__setitem__((slice(1, None), slice(None, None, 2)), 3), {}),
        ("a[::2] += 2", lambda w: w.__setitem__(slice(None, None, 2), w[::2] + dtype(2)), {}),
        ("a[-1] = v[0]", lambda w: w.__setitem__(-1, v_rows[0]), {"v": v_rows}),
    ]
    src, numpy_store, inputs = stores[seed % len(stores)]
    numpy_store(want)
    assert slc.eval(src, a=view, **inputs) is None
    assert np.array_equal(base, want_base), (src, steps, view.strides)
