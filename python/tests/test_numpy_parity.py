"""Where the Python package meets NumPy users' habits: integers bound by name as slice bounds,
IndexError wherever NumPy raises it, `a[()]`, masks with an axis of length 0, the star import,
and docstrings that tell the truth."""

import builtins

import numpy as np
import pytest

import slc

X = np.arange(24, dtype=np.int32).reshape(4, 6)


@pytest.mark.parametrize("k", [0, 1, 3, -2, 9, np.int64(2), np.int8(-1), np.uint16(5), np.array(2)])
def test_ints_bound_by_name_are_slice_bounds(k):
    for src, want in [
        ("a[:k]", lambda a: a[:k]),
        ("a[k:k+2]", lambda a: a[k : int(k) + 2]),
        ("a[1, k:]", lambda a: a[1, k:]),
        ("a[::k]", lambda a: a[:: int(k)] if int(k) != 0 else None),
    ]:
        expected = want(X)
        if expected is None:
            with pytest.raises(slc.CompileError):
                slc.eval(src, a=X, k=k)
            continue
        got = slc.eval(src, a=X, k=k)
        assert got.dtype == expected.dtype and got.shape == expected.shape, src
        assert np.array_equal(got, expected), src


def test_a_kernel_with_a_0d_input_takes_each_bound_per_call():
    k = slc.compile("a[k:k+2]", a=X, k=("int64", ()))
    for v in [0, 2, -1, 7]:
        assert np.array_equal(k(a=X, k=v), X[v : v + 2])


# Each raises IndexError in NumPy; slc raises slc.IndexError, with its code and a span in the
# program.
NUMPY_INDEX_ERRORS = [
    ("a[0, 0, 0]", lambda a, i, j, m: a[0, 0, 0]),
    ("a[..., 1, ...]", lambda a, i, j, m: a[..., 1, ...]),
    ("a[1.5]", lambda a, i, j, m: a[1.5]),
    ("a[m]", lambda a, i, j, m: a[m]),
    ("a[i, j]", lambda a, i, j, m: a[i, j]),
    ("a[9]", lambda a, i, j, m: a[9]),
    ("a[:, -7]", lambda a, i, j, m: a[:, -7]),
]


@pytest.mark.parametrize("src, numpy", NUMPY_INDEX_ERRORS)
def test_index_errors_are_where_numpys_are(src, numpy):
    i, j, m = np.array([0, 1, 2]), np.array([0, 1]), np.zeros(3, bool)
    with pytest.raises(builtins.IndexError):
        numpy(X, i, j, m)
    with pytest.raises(IndexError) as info:
        slc.eval(src, a=X, i=i, j=j, m=m)
    e = info.value
    assert isinstance(e, slc.IndexError) and isinstance(e, slc.Error)
    assert e.code is not None and e.code.startswith("E0")
    assert e.span is not None and 0 <= e.span[0] <= e.span[1] <= len(src)


def test_the_star_import_leaves_the_builtins_alone():
    scope = {}
    exec("from slc import *", scope)
    assert "IndexError" not in scope and "MemoryError" not in scope and "OverflowError" not in scope
    assert "eval" in scope and "Error" in scope
    assert issubclass(slc.IndexError, builtins.IndexError)
    assert issubclass(slc.MemoryError, builtins.MemoryError)
    assert issubclass(slc.OverflowError, builtins.OverflowError)
    assert issubclass(slc.OverflowError, slc.CompileError)


@pytest.mark.parametrize("shape", [(), (3,), (2, 3)])
def test_the_empty_tuple_is_the_whole_array(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.float64).reshape(shape)
    got = slc.eval("a[()]", a=a)
    assert got.shape == a[()].shape if shape else got.shape == ()
    assert np.array_equal(got, a[()])


@pytest.mark.parametrize(
    "mshape, axis",
    [((0,), 0), ((0,), 1), ((0, 6), 0), ((4, 0), 0), ((0, 0), 0), ((0, 7), 0), ((5,), 0)],
)
def test_masks_with_an_axis_of_length_zero_match_as_numpys(mshape, axis):
    m = np.zeros(mshape, bool)
    index = (slice(None),) * axis + (m,)
    src = "a[" + ":, " * axis + "m]"
    try:
        want = X[index]
    except builtins.IndexError:
        with pytest.raises(slc.IndexError) as info:
            slc.eval(src, a=X, m=m)
        assert info.value.code == "E0107"
        return
    got = slc.eval(src, a=X, m=m)
    assert got.shape == want.shape and got.dtype == want.dtype


def test_docstrings_document_the_call():
    doc = slc.Kernel.__doc__
    assert "kernel(*, out=None, threads=None, **inputs)" in doc and "slc.IndexError" in doc
    assert "packed into a dense copy first otherwise" not in doc
    assert "a[()]" in slc.__doc__ and "a[:k]" in slc.__doc__


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128, ">c8", ">c16"])
def test_complex_arrays_are_sliced_as_numpy_slices_them(dtype):
    x = (np.arange(24) + 1j * np.arange(24)[::-1]).reshape(4, 6).astype(dtype)
    for src, index in [
        ("a[::-1, 1::2]", (slice(None, None, -1), slice(1, None, 2))),
        ("a[i]", (np.array([3, 0, 3]),)),
        ("a[m]", (np.array([True, False, True, False]),)),
        ("a[..., None, -1]", (Ellipsis, None, -1)),
    ]:
        want = x[index]
        got = slc.eval(src, a=x, i=np.array([3, 0, 3]), m=np.array([True, False, True, False]))
        assert got.dtype == want.dtype and got.shape == want.shape, src
        assert np.array_equal(got, want), src
    k = slc.compile("a[:, ::-2]", a=("complex128", ("N", "M")))
    y = np.arange(10, dtype=np.complex128).reshape(2, 5) * (1 - 2j)
    assert np.array_equal(k(a=y), y[:, ::-2])
    assert np.array_equal(k(a=y.T), y.T[:, ::-2])


class DLPackOnly:
    """A DLPack producer with no array interface (as a PyTorch or JAX array is to NumPy)."""

    def __init__(self, array, device=None):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        return self.array.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.device or self.array.__dlpack_device__()


def test_dlpack_producers_in_host_memory_are_read_and_other_devices_are_refused():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert np.array_equal(slc.eval("a[::-1, 1:]", a=DLPackOnly(x)), x[::-1, 1:])
    k = slc.compile("a[:, ::2]", a=x)
    assert np.array_equal(k(a=DLPackOnly(x)), x[:, ::2])
    # ROCm memory: no back end of slc's reads it (CUDA's: python/tests/test_cuda.py).
    with pytest.raises(TypeError, match=r"input 'a' is in device memory \(DLPack device type 10, id 0\)"):
        slc.eval("a[1:]", a=DLPackOnly(x, device=(10, 0)))
    # A producer that claims CUDA but hands over host memory is refused by what it hands over.
    try:
        slc.eval("a[1:]", a=DLPackOnly(x, device=(2, 0)))
    except slc.Error as e:
        assert e.code == "E0209"  # no CUDA driver on this machine
    except (ValueError, TypeError) as e:  # with a driver: NumPy's refusal, or slc's
        assert "slc runs on CUDA device 0" in str(e) or "__dlpack__ failed" in str(e), e
    else:
        raise AssertionError("host memory taken as device memory")


# One element named by integers alone is NumPy's scalar path: a value of rank 1 or more is
# refused ("setting an array element with a sequence"), but by a bool element, which takes the
# truth of a one-element array or of a list (`[0]` is not empty); `...` or a slice broadcasts.
@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.float16, np.float64, np.bool_])
@pytest.mark.parametrize("index", ["[1, 0]", "[-1, 2]", "[1][0]", "[1, 0, ...]", "[1, 0:1]"])
@pytest.mark.parametrize("value", ["v1", "v11", "v2", "z", "[0]", "[[1]]", "[3]"])
@pytest.mark.parametrize("op", ["=", "+=", "*="])
def test_one_element_takes_a_scalar_as_numpy_does(dtype, index, value, op):
    rng = np.random.default_rng(7)
    x = rng.integers(0, 3, size=(2, 3)).astype(dtype)
    names = {
        "v1": rng.integers(0, 3, size=1).astype(dtype),
        "v11": rng.integers(0, 3, size=(1, 1)).astype(dtype),
        "v2": rng.integers(0, 3, size=2).astype(dtype),
        "z": np.array(2, dtype=dtype),
    }
    src = f"x{index} {op} {value}"
    want = x.copy()
    try:
        exec(src, {"np": np}, {"x": want, **names})
    except (ValueError, TypeError, IndexError):
        want = None
    got = x.copy()
    inputs = {"x": got, **({value: names[value]} if value in names else {})}
    if want is None:
        with pytest.raises(slc.Error):
            slc.eval(src, **inputs)
        return
    slc.eval(src, **inputs)
    assert np.array_equal(got, want), src


# A list stored through a view (`=`) is made an array of at most the view's rank by NumPy: a
# deeper one is refused, where a bound array of dims of 1 broadcasts; through index arrays and
# masks a list broadcasts as any array.
@pytest.mark.parametrize("sub", ["0:2", "0", "1, 1", "1, 1, ...", "0:2, 0", "..., 0", "None, 1", "i", "i, 0", "m", "m, 1:"])
@pytest.mark.parametrize("value", ["[5]", "[[5]]", "[[[5]]]", "[[5, 6]]", "[[5], [6]]", "[[1, 2, 3]]", "[[[1, 2, 3]]]"])
@pytest.mark.parametrize("op", ["=", "+="])
def test_lists_are_made_arrays_as_numpy_makes_them(sub, value, op):
    i, m = np.array([0, 2]), np.array([1, 0, 1, 0], bool)
    src = f"x[{sub}] {op} {value}"
    want = X.copy()
    try:
        exec(src, {}, {"x": want, "i": i, "m": m})
    except (ValueError, TypeError):
        want = None
    got = X.copy()
    if want is None:
        with pytest.raises(slc.Error):
            slc.eval(src, x=got, i=i, m=m)
        return
    slc.eval(src, x=got, i=i, m=m)
    assert np.array_equal(got, want), src


@pytest.mark.parametrize("sub", ["a[m]", "a[m, ...]", "a[r]", "a[:][m]"])
@pytest.mark.parametrize("vshape", [(), (1,), (4,), (1, 1), (1, 4), (2, 1, 1)])
def test_one_mask_over_every_axis_takes_values_as_numpy_does(sub, vshape):
    # NumPy's boolean assignment (one mask of the array's rank) takes a value of at most one
    # dimension; a mask with `...` or over fewer axes broadcasts it.
    m = np.array([[True, False], [True, True], [False, True]])
    inputs = {"m": m, "r": np.array([True, False, True]), "v": np.full(vshape, 7.0)}
    want = np.zeros((3, 2))
    try:
        exec(sub.replace("a", "want") + " = v", {}, {"want": want, **inputs})
        raised = False
    except (TypeError, ValueError):
        raised = True
    got = np.zeros((3, 2))
    if raised:
        with pytest.raises(slc.CompileError):
            slc.eval(sub + " = v", a=got, **inputs)
        assert not got.any()
    else:
        slc.eval(sub + " = v", a=got, **inputs)
        assert np.array_equal(got, want), sub
