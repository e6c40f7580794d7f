"""Inputs and outputs that do not fit get exceptions, never a crash; buffers are accepted."""

import array
import subprocess
import sys

import numpy as np
import pytest

import slc

A = np.arange(20, dtype=np.float32).reshape(4, 5)
EXPECTED = A[1:3, ::-1]


@pytest.fixture(scope="module")
def kernel():
    return slc.compile("a[1:3, ::-1]", a=("float32", (4, 5)))


def test_properties(kernel):
    assert kernel.input_names == ("a",)
    assert kernel.input_types == {"a": (np.dtype("float32"), (4, 5))}
    assert kernel.dtype == np.float32
    assert kernel.shape == (2, 5)
    assert kernel.source == "a[1:3, ::-1]"
    assert kernel.plan.startswith("plan(a: f32[4, 5]) -> f32[2, 5]")
    assert "loops" in kernel.loop_nest()
    assert "function" in kernel.clif()
    assert "a[1:3, ::-1]" in repr(kernel)


@pytest.mark.parametrize("spec", ["float32", "f4", np.float32, np.dtype("<f4"), "single"])
def test_dtype_spellings(spec):
    k = slc.compile("a[::2]", a=(spec, (4, 5)))
    assert k.dtype == np.float32
    assert slc.compile("a", a=(spec, 3)).shape == (3,)


def test_compile_type_specs():
    assert slc.compile("a[i]", a=A, i=3).input_types["i"] == (np.dtype("int64"), ())
    with pytest.raises(TypeError, match="'a'"):
        slc.compile("a", a="float32")
    with pytest.raises(ValueError, match="negative"):
        slc.compile("a", a=("f4", (-1,)))
    with pytest.raises(TypeError, match="'a'"):
        slc.compile("a", a=("datetime64[s]", (2,)))
    with pytest.raises(TypeError, match="'a'"):
        slc.compile("a", a=("f4", "x"))


def test_wrong_dtype_shape_and_names(kernel):
    with pytest.raises(TypeError, match="input 'a' has dtype float64"):
        kernel(a=A.astype(np.float64))
    with pytest.raises(ValueError, match=r"input 'a' has shape \(5, 4\)"):
        kernel(a=A.T.copy())
    with pytest.raises(TypeError, match="missing input 'a'"):
        kernel()
    with pytest.raises(TypeError, match="unexpected input 'b'"):
        kernel(a=A, b=A)
    with pytest.raises(TypeError, match="'a'"):
        kernel(a=np.zeros((4, 5), dtype=np.complex64))
    with pytest.raises(TypeError, match="'a'"):
        kernel(a=np.zeros((4, 5), dtype="U3"))
    with pytest.raises(TypeError, match="'a'"):
        kernel(a=np.array([[object()] * 5] * 4))
    with pytest.raises(TypeError, match="'a'"):
        kernel(a="not an array")
    with pytest.raises(TypeError):
        kernel(A)
    with pytest.raises(ValueError, match="threads"):
        kernel(a=A, threads=0)


def test_python_ints_fill_integer_scalars():
    k = slc.compile("x[i]", x=np.arange(10, dtype=np.uint8), i=("int8", ()))
    assert k(x=np.arange(10, dtype=np.uint8), i=-1) == 9
    with pytest.raises(OverflowError, match="'i'"):
        k(x=np.arange(10, dtype=np.uint8), i=1000)
    assert slc.eval("x[i]", x=np.arange(10), i=3) == 3


def test_out(kernel):
    out = np.empty((2, 5), np.float32)
    assert kernel(a=A, out=out) is out
    assert np.array_equal(out, EXPECTED)
    with pytest.raises(ValueError, match="out= has shape"):
        kernel(a=A, out=np.empty((1, 5), np.float32))
    with pytest.raises(ValueError, match="out= has shape"):
        kernel(a=A, out=np.empty(10, np.float32))
    with pytest.raises(TypeError, match="out= has dtype"):
        kernel(a=A, out=np.empty((2, 5), np.float64))
    with pytest.raises(TypeError, match="out= has dtype"):
        kernel(a=A, out=np.empty((2, 5), ">f4"))
    readonly = np.empty((2, 5), np.float32)
    readonly.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        kernel(a=A, out=readonly)
    with pytest.raises(ValueError, match="C-contiguous"):
        kernel(a=A, out=np.empty((5, 2), np.float32).T)
    with pytest.raises(TypeError, match="numpy.ndarray"):
        kernel(a=A, out=bytearray(40))


def test_out_overlapping_an_input():
    x = np.arange(10, dtype=np.int32)
    k = slc.compile("x[::-1]", x=x)
    expected = x[::-1].copy()
    assert k(x=x, out=x) is x
    assert np.array_equal(x, expected)


def test_read_only_and_strided_inputs(kernel):
    ro = A.copy()
    ro.flags.writeable = False
    assert np.array_equal(kernel(a=ro), EXPECTED)
    wide = np.zeros((8, 10), np.float32)
    wide[::2, ::2] = A
    assert np.array_equal(kernel(a=wide[::2, ::2]), EXPECTED)
    flipped = A[::-1, ::-1].copy()[::-1, ::-1]
    assert np.array_equal(kernel(a=flipped), EXPECTED)
    assert np.array_equal(kernel(a=np.asfortranarray(A)), EXPECTED)


def test_byte_swapped_inputs_are_read_by_value(kernel):
    got = kernel(a=A.astype(">f4"))
    assert got.dtype == np.dtype(">f4") and np.array_equal(got, EXPECTED)
    out = np.empty((2, 5), np.float32)
    assert kernel(a=A.astype(">f4"), out=out) is out and np.array_equal(out, EXPECTED)


@pytest.mark.parametrize("dtype", [">i2", ">u4", ">i8", ">f4", ">f8", ">c8", "<i4", "=f8"])
def test_results_keep_the_byte_order_numpy_keeps(dtype):
    """NumPy's `x[...]` keeps the byte order of the array it reads from; an index array's
    order does not matter. slc reads a byte-swapped input through a native copy and gives its
    result back in the input's order, on every form, small and pooled (from 2 MiB) results."""
    x = np.arange(60).reshape(3, 4, 5).astype(dtype)
    big = np.arange(3 << 18).astype(dtype)
    i = np.array([2, 0, -1, 1]).astype(">i8")
    m = np.array([True, False, True])
    cases = [
        ("x[1:, ::-1, None, 2]", x[1:, ::-1, None, 2]),
        ("x[i, 1:3]", x[np.array([2, 0, -1, 1]), 1:3]),
        ("x[m]", x[m]),
        ("gather(x, i, 2)", np.take(x, np.array([2, 0, -1, 1]), axis=2)),
        ("big[::-2]", big[::-2]),
        ("big[i]", big[np.array([2, 0, -1, 1])]),
    ]
    for src, want in cases:
        got = slc.eval(src, x=x, big=big, i=i, m=m)
        assert got.dtype == want.dtype and got.dtype.byteorder == want.dtype.byteorder, src
        assert np.array_equal(got, want), src
    k = slc.compile("x[:, i]", x=(np.dtype(dtype).newbyteorder("=").name, ("N", 4, 5)), i=("int64", (4,)))
    got = k(x=x, i=i)
    assert got.dtype == x.dtype and np.array_equal(got, x[:, np.array([2, 0, -1, 1])])
    # The order is the read array's: a native one indexed by a byte-swapped index array is native.
    assert slc.eval("y[i]", y=np.arange(5.0), i=i).dtype == np.arange(5.0)[i].dtype


def test_buffers():
    data = array.array("f", range(20))
    assert slc.eval("a[::-5]", a=data).tolist() == [19.0, 14.0, 9.0, 4.0]
    view = memoryview(bytes(range(10)))
    r = slc.eval("a[2:4]", a=view)
    assert r.dtype == np.uint8 and r.tolist() == [2, 3]
    shaped = memoryview(bytearray(24)).cast("i", (2, 3))
    assert slc.eval("a[1]", a=shaped).shape == (3,)

    class Exposes:
        def __init__(self, base):
            self.base = base
            self.__array_interface__ = base.__array_interface__

    assert np.array_equal(slc.eval("a[1:3, ::-1]", a=Exposes(A)), EXPECTED)
    assert slc.eval("a[1:]", a=[1, 2, 3]).tolist() == [2, 3]


def test_inputs_are_not_copied_or_leaked(kernel):
    before = sys.getrefcount(A)
    for _ in range(1000):
        kernel(a=A)
        slc.eval("a[1:3, ::-1]", a=A)
    assert sys.getrefcount(A) == before


def test_results_own_their_memory(kernel):
    r = kernel(a=A)
    assert r.flags.c_contiguous and r.flags.writeable and r.flags.owndata
    assert not np.shares_memory(r, A)


def test_zero_size_and_zero_d():
    e = np.zeros((0, 3), np.int16)
    assert slc.eval("a[:, ::-1]", a=e).shape == (0, 3)
    z = np.array(7.5)
    r = slc.eval("a", a=z)
    assert r.shape == () and r == 7.5
    assert slc.eval("a[1, 2]", a=A) == A[1, 2]


def test_eval_cache():
    slc.clear_cache()
    assert slc.cache_size() == 0
    for _ in range(5):
        slc.eval("a[::2]", a=A)
    assert slc.cache_size() == 1
    slc.eval("a[::2]", a=A.astype(np.float64))
    slc.eval("a[::2]", a=A[:2])
    assert slc.cache_size() == 3


def test_operator_parameters_from_inputs():
    """An operator whose parameters come from an input depends on their values: eval keys its
    cache on them."""
    x = np.arange(10, dtype=np.float32)
    r1 = slc.eval("slice(x, s, e)", x=x, s=np.array([2]), e=np.array([5]))
    assert r1.tolist() == [2, 3, 4]
    r2 = slc.eval("slice(x, s, e)", x=x, s=np.array([1]), e=np.array([7]))
    assert r2.tolist() == [1, 2, 3, 4, 5, 6]
    r3 = slc.eval("slice(x, s, e, steps=[-1])", x=x, s=np.array([5]), e=np.array([1]))
    assert r3.tolist() == [5, 4, 3, 2]
    # compile() reads the parameter values from example arrays.
    k = slc.compile("strided_slice(x, b, e, [2])", x=x, b=np.array([1]), e=np.array([9]))
    assert k(x=x, b=np.array([1]), e=np.array([9])).tolist() == [1, 3, 5, 7]
    with pytest.raises(ValueError, match="input 'b' is an operator parameter"):
        k(x=x, b=np.array([2]), e=np.array([9]))
    assert slc.eval("slice(x, [-5], [-9223372036854775808], steps=[-1])", x=np.arange(4)).tolist() == [0]


def test_boolean_masks_from_inputs():
    """A mask's True positions decide the result's shape: eval keys its cache on the mask's
    value, compile() takes it from the example, and a mask given only by type is an error."""
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    m = np.array([[True, False, True], [False, True, True]])
    assert slc.eval("a[m]", a=a, m=m).tolist() == a[m].tolist()
    assert slc.eval("a[m]", a=a, m=~m).tolist() == a[~m].tolist()
    assert slc.eval("a[::-1, m[0]][:, [0, -1]]", a=a, m=m).tolist() == a[::-1, m[0]][:, [0, -1]].tolist()
    k = slc.compile("a[m][::-1]", a=a, m=m)
    assert k(a=a, m=m).tolist() == a[m][::-1].tolist()
    with pytest.raises(ValueError, match="input 'm' is an operator parameter, a boolean mask"):
        k(a=a, m=~m)
    with pytest.raises(slc.CompileError) as e:
        slc.compile("a[m]", a=a, m=("bool", (2, 3)))
    assert e.value.code == "E0126"


def test_large_masks_are_taken_per_call():
    """A mask of more than 4096 elements is not compiled into the kernel: eval keeps one kernel
    for every such mask, compile() takes any mask of the example's shape, and the results are
    NumPy's, loads and stores."""
    rng = np.random.default_rng(3)
    a = rng.random((90, 70), dtype=np.float32)
    slc.clear_cache()
    for r in range(4):
        m = rng.random((90, 70)) > 0.5 if r else np.zeros((90, 70), bool)
        assert np.array_equal(slc.eval("a[m][::-1]", a=a, m=m), a[m][::-1])
        x, want = a.copy(), a.copy()
        slc.eval("a[m] = -1", a=x, m=m)
        want[m] = -1
        assert np.array_equal(x, want)
    assert slc.cache_size() == 2
    k = slc.compile("a[m]", a=a, m=m)
    for r in range(3):
        m = rng.random((90, 70)) > 0.3 * r
        assert np.array_equal(k(a=a, m=m), a[m])


def test_odd_memory_layouts():
    # Strides that are not a multiple of the element size: refused, not misread.
    raw = np.zeros(64, np.uint8)
    odd = np.ndarray((5,), dtype=np.int32, buffer=raw, offset=0, strides=(3,))
    with pytest.raises(ValueError, match="'a'"):
        slc.eval("a[::-1]", a=odd)
    # A misaligned start: read correctly.
    values = np.arange(8, dtype=np.float64)
    shifted = np.frombuffer(b"\0" + values.tobytes(), dtype=np.float64, offset=1)
    assert not shifted.flags.aligned
    assert slc.eval("a[::-1]", a=shifted).tolist() == values[::-1].tolist()
    # Broadcast views (stride 0).
    b = np.broadcast_to(np.arange(3, dtype=np.int16), (4, 3))
    assert np.array_equal(slc.eval("a[::-1, 1:]", a=b), b[::-1, 1:])
    # dtypes slc does not have.
    for bad in (np.zeros(3, "M8[s]"), np.zeros(3, [("x", "i4")]), np.zeros(3, "U2")):
        with pytest.raises(TypeError, match="'a'"):
            slc.eval("a", a=bad)


def test_bfloat16_with_ml_dtypes():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    x = np.arange(12, dtype=np.float32).reshape(3, 4).astype(ml_dtypes.bfloat16)
    r = slc.eval("a[::-1, 1:3]", a=x)
    assert r.dtype == x.dtype
    assert r.tobytes() == np.ascontiguousarray(x[::-1, 1:3]).tobytes()
    k = slc.compile("a[1]", a=("bfloat16", (3, 4)))
    assert k.dtype == x.dtype
    assert k(a=x).tobytes() == x[1].tobytes()
    big = np.zeros((600, 1000), ml_dtypes.bfloat16)
    assert slc.eval("a[::2]", a=big).shape == (300, 1000)


def test_large_results_live_in_slc_buffers():
    """Results from 2 MiB on are slc tensors handed to NumPy (its pool of mapped pages): they
    behave as any array and free their memory with the array."""
    import gc
    import weakref

    x = np.arange(1 << 20, dtype=np.float64).reshape(1024, 1024)
    k = slc.compile("a[::-1, ::-1]", a=x)
    r = k(a=x)
    assert np.array_equal(r, x[::-1, ::-1])
    assert r.flags.c_contiguous and r.flags.writeable and r.flags.aligned
    assert r.base is not None and not np.shares_memory(r, x)
    r[0, 0] = -1.0  # writable memory
    owner = weakref.ref(r.base)
    view = r[1:]
    del r
    gc.collect()
    assert owner() is not None, "a view keeps the memory alive"
    assert view[0, 0] == x[-2, -1]
    del view
    gc.collect()
    assert owner() is None
    for dtype in (np.bool_, np.uint8, np.float16, np.int64):
        big = np.ones((3 << 20,), dtype=dtype)
        same = slc.eval("a[::-1]", a=big)
        assert same.dtype == big.dtype and np.array_equal(same, big[::-1])


def test_programs_without_inputs_and_awkward_names():
    assert slc.eval("[1, 2, 3][::-1]").tolist() == [3, 2, 1]
    k = slc.compile("[1, 2][1:]")
    assert k.input_names == () and k().tolist() == [2]
    assert repr(k) == 'slc.compile("[1, 2][1:]") -> int64 (1,)'
    # `expr` is positional-only: an input may be called so.
    assert slc.eval("expr[1:]", expr=np.arange(3)).tolist() == [1, 2]
    assert slc.compile("expr[1:]", expr=np.arange(3))(expr=np.arange(3)).tolist() == [1, 2]
    x = np.zeros((3, 4))
    assert slc.eval("a[a.shape[0] - 1]", a=x).shape == (4,)


def test_strided_inputs_are_read_in_place():
    x = np.arange(120, dtype=np.float32).reshape(6, 20)
    k = slc.compile("a[1:, ::-1]", a=("float32", (3, 5)))
    views = [x[::2, ::4], x[::-2, 1::3][:, :5], x.T[:3, :5], x[::-1, ::-1][:3, :5], np.broadcast_to(x[0, :5], (3, 5))]
    for view in views:
        assert not view.flags.c_contiguous
        np.testing.assert_array_equal(k(a=view), view[1:, ::-1])
        np.testing.assert_array_equal(slc.eval("a[1:, ::-1]", a=view), view[1:, ::-1])
    assert len(k.strided_plans) == len(views)
    for plan, view in zip(k.strided_plans, views):
        elements = [s // 4 if n > 1 else 0 for s, n in zip(view.strides, view.shape)]
        assert plan.startswith(f"plan(a: f32[3, 5] strides [{elements[0]}, {elements[1]}])"), plan


def test_strided_inputs_are_not_copied():
    # Peak memory of a fresh process: a copy of the 64 MB view would raise it by 64 MB.
    script = """
import resource, numpy as np, slc
x = np.ones(2 * 8 << 20, dtype=np.float64)
view = x[::2]
k = slc.compile("a[::4096]", a=view)
k(a=x[: 8 << 20])
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(3):
    r = k(a=view)
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert r.shape == (2048,) and k.strided_plans, k.strided_plans
print(after - before)
"""
    grown_kib = int(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout)
    assert grown_kib < 16 << 10, f"peak memory grew by {grown_kib} KiB"


@pytest.mark.parametrize("shape", [(3, 5), ("N", "M")])
def test_strided_inputs_are_not_copied_by_any_kernel(shape):
    # Fixed and named dims alike: the view is read in place (peak memory of a fresh process: a
    # copy of the 64 MB view would raise it by 64 MB), and out= is written in place.
    script = f"""
import resource, numpy as np, slc
x = np.ones(2 * 8 << 20, dtype=np.float64).reshape(4096, 4096)
view = x[:, ::2]
k = slc.compile("a[::-1, ::512]", a=("float64", {shape!r} if {shape!r}[0] == "N" else view.shape))
out = np.zeros((4096, 4))
assert k(a=view, out=out) is out
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
for _ in range(3):
    assert k(a=view, out=out) is out
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
assert k.strided_plans, k.strided_plans
np.testing.assert_array_equal(out, view[::-1, ::512])
print(after - before)
"""
    grown_kib = int(subprocess.run([sys.executable, "-c", script], check=True, capture_output=True, text=True).stdout)
    assert grown_kib < 16 << 10, f"peak memory grew by {grown_kib} KiB"
