"""Generic kernels (named dims): one kernel compiled once, called on arrays of many shapes,
against NumPy on each."""

import numpy as np
import hypothesis.extra.numpy as hnp
import pytest
from hypothesis import given, settings, HealthCheck
from hypothesis import strategies as st

import slc
from conftest import DTYPES, index_source, same

SETTINGS = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@st.composite
def rank_and_basic_index(draw):
    """A rank, and a basic index NumPy takes on every array of that rank with dims of at least
    `min_side` (integers stay inside: the kernel is compiled before any shape is known)."""
    rank = draw(st.integers(1, 3))
    shape = draw(hnp.array_shapes(min_dims=rank, max_dims=rank, min_side=3, max_side=3))
    index = draw(hnp.basic_indices(shape, min_dims=0, allow_newaxis=True, allow_ellipsis=True))
    return rank, index


@SETTINGS
@given(rank_and_basic_index(), st.sampled_from(DTYPES), st.data())
def test_one_kernel_matches_numpy_on_every_shape(case, dtype, data):
    rank, index = case
    source = f"a[{index_source(index)}]" if index != () else "a"
    kernel = slc.compile(source, a=(dtype, tuple(f"D{i}" for i in range(rank))))
    assert isinstance(kernel, slc.Kernel)
    for _ in range(4):
        shape = data.draw(hnp.array_shapes(min_dims=rank, max_dims=rank, min_side=0, max_side=6))
        x = data.draw(hnp.arrays(dtype, shape))
        try:
            want = x[index]
        except IndexError:
            # As NumPy and a kernel compiled for this shape say it (E0102 at the index).
            with pytest.raises(slc.IndexError):
                kernel(a=x)
            continue
        same(kernel(a=x), want)


@SETTINGS
@given(st.integers(0, 9), st.integers(-12, 12), st.integers(-12, 12))
def test_run_time_bounds(n, start, stop):
    kernel = slc.compile("a[k:j, ::-1]", a=("int32", ("N", 3)), k=("int64", ()), j=("int64", ()))
    x = np.arange(3 * n, dtype=np.int32).reshape(n, 3)
    same(kernel(a=x, k=start, j=stop), x[start:stop, ::-1])


def test_names_and_types():
    kernel = slc.compile("a[1:, ::2]", a=("float32", ("N", None)))
    assert kernel.shape == ("max(0, N-1)", "(_a1+1)//2")
    assert kernel.input_types["a"][1] == ("N", "_a1")
    assert "require" in kernel.plan or "out a" in kernel.plan
    x = np.ones((5, 7), np.float32)
    out = np.zeros((4, 4), np.float32)
    assert kernel(a=x, out=out) is out
    same(out, x[1:, ::2])


def test_mismatched_shapes_raise_shape_error():
    kernel = slc.compile("b[2]", a=("float32", ("N",)), b=("float32", ("N",)))
    with pytest.raises(slc.ShapeError) as e:
        kernel(a=np.zeros(4, np.float32), b=np.zeros(5, np.float32))
    assert isinstance(e.value, ValueError)
    # An index outside its axis: IndexError at the index, as NumPy and a kernel compiled for
    # these shapes say it.
    with pytest.raises(slc.IndexError) as e:
        kernel(a=np.zeros(2, np.float32), b=np.zeros(2, np.float32))
    assert e.value.code == "E0102"
    with pytest.raises(TypeError):
        kernel(a=np.zeros(4, np.int32), b=np.zeros(4, np.float32))
    assert kernel(a=np.zeros(3, np.float32), b=np.arange(3, dtype=np.float32)) == 2
