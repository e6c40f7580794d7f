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
