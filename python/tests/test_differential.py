"""slc against NumPy on generated arrays and indices: the results must agree bit for bit."""

import numpy as np
import hypothesis.extra.numpy as hnp
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

import slc
from conftest import DTYPES, LAYOUTS, index_source, in_layout, same

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

dtypes = st.sampled_from(DTYPES)
shapes = hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5)
layouts = st.sampled_from(LAYOUTS)


@st.composite
def arrays(draw, shape=shapes):
    dtype = draw(dtypes)
    shape = draw(shape)
    return draw(hnp.arrays(dtype, shape))


@st.composite
def array_and_basic_index(draw):
    x = draw(arrays())
    index = draw(hnp.basic_indices(x.shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return x, index


@SETTINGS
@given(array_and_basic_index(), layouts)
def test_basic_indices_match_numpy(case, layout):
    x, index = case
    source = f"a[{index_source(index)}]" if index != () else "a"
    a = in_layout(x, layout)
    same(slc.eval(source, a=a), x[index])


@SETTINGS
@given(array_and_basic_index(), layouts)
def test_kernels_match_numpy_and_write_into_out(case, layout):
    x, index = case
    source = f"a[{index_source(index)}]" if index != () else "a"
    kernel = slc.compile(source, a=x)
    expected = np.asarray(x[index])
    same(kernel(a=in_layout(x, layout)), expected)
    out = np.empty(expected.shape, expected.dtype)
    assert kernel(a=in_layout(x, layout), out=out) is out
    same(out, expected)


@st.composite
def array_and_integer_index(draw):
    """`x` (rank >= 1), an axis, and an integer array of in-range indices (negative included)
    for that axis, of any integer dtype that holds them."""
    x = draw(arrays(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=5)))
    axis = draw(st.integers(0, x.ndim - 1))
    n = x.shape[axis]
    index_shape = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=0, max_side=4))
    index_dtype = draw(st.sampled_from([np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64]))
    low = 0 if np.issubdtype(index_dtype, np.unsignedinteger) else -n
    index = draw(hnp.arrays(index_dtype, index_shape, elements=st.integers(low, n - 1)))
    return x, axis, index


@SETTINGS
@given(array_and_integer_index(), layouts)
def test_integer_array_indices_match_numpy(case, layout):
    x, axis, index = case
    prefix = ":, " * axis
    source = f"a[{prefix}i]"
    expected = x[(slice(None),) * axis + (index,)]
    same(slc.eval(source, a=in_layout(x, layout), i=in_layout(index, layout)), expected)


@SETTINGS
@given(array_and_integer_index())
def test_out_of_range_index_values_raise_index_error(case):
    x, axis, index = case
    if index.size == 0:
        return
    bad = index.astype(np.int64)
    bad.flat[0] = x.shape[axis] + 3
    source = f"a[{':, ' * axis}i]"
    with pytest.raises(slc.IndexError) as info:
        slc.eval(source, a=x, i=bad)
    assert info.value.code == "E0201"
    with pytest.raises(IndexError):
        x[(slice(None),) * axis + (bad,)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_round_trips(dtype):
    x = np.arange(24).reshape(2, 3, 4).astype(dtype)
    same(slc.eval("a[1, ::-1, None, 1:]", a=x), x[1, ::-1, None, 1:])
    same(slc.eval("a[..., ::2]", a=x.T), x.T[..., ::2])


def test_chains_and_lets():
    x = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    same(slc.eval("let b = a[::-1]; b[1:, None, ..., 2]", a=x), x[::-1][1:, None, ..., 2])
    same(slc.eval("a[1:][::2, 0]", a=x), x[1:][::2, 0])


@SETTINGS
@given(array_and_integer_index(), layouts)
def test_gather_matches_numpy_take(case, layout):
    x, axis, index = case
    expected = np.take(x, index.astype(np.int64), axis=axis)
    same(slc.eval(f"gather(a, i, axis={axis})", a=in_layout(x, layout), i=index), expected)


@SETTINGS
@given(
    arrays(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=6)),
    st.data(),
)
def test_slice_operator_matches_python_slicing(x, data):
    """ONNX Slice with in-range starts and ends agrees with a Python slice on that axis."""
    axis = data.draw(st.integers(0, x.ndim - 1))
    n = x.shape[axis]
    start = data.draw(st.integers(-n, n - 1))
    end = data.draw(st.integers(-n, n))
    step = data.draw(st.sampled_from([1, 2, 3, -1, -2]))
    source = f"slice(a, [{start}], [{end}], axes=[{axis}], steps=[{step}])"
    expected = x[(slice(None),) * axis + (slice(start, end, step),)]
    same(slc.eval(source, a=x), expected)


@st.composite
def array_and_index_arrays(draw):
    """`x` (rank 1-4), index arrays for some of its axes (broadcastable shapes, values in range,
    negative included), where they go in the subscript, and whether one is a plain integer."""
    x = draw(arrays(hnp.array_shapes(min_dims=1, max_dims=4, min_side=1, max_side=4)))
    axes = sorted(draw(st.sets(st.integers(0, x.ndim - 1), min_size=1, max_size=x.ndim)))
    result = draw(hnp.array_shapes(min_dims=0, max_dims=2, min_side=1, max_side=3))
    arrays_ = []
    for axis in axes:
        n = x.shape[axis]
        # Broadcastable against `result`: drop leading dims, set some to 1.
        shape = result[draw(st.integers(0, len(result))):]
        shape = tuple(1 if draw(st.booleans()) else d for d in shape)
        if draw(st.integers(0, 4)) == 0:
            arrays_.append(draw(st.integers(-n, n - 1)))
        else:
            arrays_.append(draw(hnp.arrays(np.int64, shape, elements=st.integers(-n, n - 1))))
    return x, axes, arrays_


@SETTINGS
@given(array_and_index_arrays(), layouts)
def test_several_index_arrays_match_numpy(case, layout):
    """Arrays broadcast together, integers among them, adjacent or separated by slices: NumPy's
    values and placement."""
    x, axes, index_arrays = case
    items, numpy_index, inputs = [], [], {}
    for axis in range(x.ndim):
        if axis in axes:
            value = index_arrays[axes.index(axis)]
            if isinstance(value, int):
                items.append(str(value))
            else:
                name = f"i{axis}"
                items.append(name)
                inputs[name] = value
            numpy_index.append(value)
        else:
            items.append(":")
            numpy_index.append(slice(None))
    source = f"a[{', '.join(items)}]"
    same(slc.eval(source, a=in_layout(x, layout), **inputs), x[tuple(numpy_index)])


@SETTINGS
@given(arrays(hnp.array_shapes(min_dims=1, max_dims=3, min_side=0, max_side=4)), st.data())
def test_boolean_masks_match_numpy(x, data):
    """A mask over some leading (or, after a slice, later) axes, alone or beside a slice."""
    first = data.draw(st.integers(0, x.ndim - 1))
    k = data.draw(st.integers(1, x.ndim - first))
    mask = data.draw(hnp.arrays(np.bool_, x.shape[first : first + k]))
    prefix = ":, " * first
    same(slc.eval(f"a[{prefix}m]", a=x, m=mask), x[(slice(None),) * first + (mask,)])
    if first + k < x.ndim:
        same(slc.eval(f"a[{prefix}m, ::-1]", a=x, m=mask), x[(slice(None),) * first + (mask, slice(None, None, -1))])


@SETTINGS
@given(array_and_integer_index())
def test_gather_elements_matches_take_along_axis(case):
    x, axis, _ = case
    n = x.shape[axis]
    shape = tuple(d if k != axis else 3 for k, d in enumerate(x.shape))
    index = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) % (2 * n) - n
    expected = np.take_along_axis(x, index, axis=axis)
    same(slc.eval(f"gather_elements(a, i, axis={axis})", a=x, i=index), expected)


@SETTINGS
@given(arrays(hnp.array_shapes(min_dims=1, max_dims=3, min_side=1, max_side=4)), st.data())
def test_gather_nd_matches_tuple_indexing(x, data):
    m = data.draw(st.integers(1, x.ndim))
    count = data.draw(st.integers(0, 4))
    columns = [data.draw(hnp.arrays(np.int64, (count,), elements=st.integers(-n, n - 1))) for n in x.shape[:m]]
    tuples = np.stack(columns, axis=-1) if count else np.zeros((0, m), np.int64)
    same(slc.eval("gather_nd(a, t)", a=x, t=tuples), x[tuple(columns)])
