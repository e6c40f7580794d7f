"""Shared helpers: NumPy index objects spelled as slc source, inputs in several layouts."""

import numpy as np

#: Every dtype slc shares with NumPy.
DTYPES = [
    np.bool_,
    np.int8,
    np.int16,
    np.int32,
    np.int64,
    np.uint8,
    np.uint16,
    np.uint32,
    np.uint64,
    np.float16,
    np.float32,
    np.float64,
    np.complex64,
    np.complex128,
]


def index_source(index):
    """The slc spelling of a NumPy basic index (an int, slice, None, Ellipsis, or a tuple)."""
    if not isinstance(index, tuple):
        index = (index,)

    def item(i):
        if i is None:
            return "None"
        if i is Ellipsis:
            return "..."
        if isinstance(i, slice):
            parts = ["" if p is None else str(p) for p in (i.start, i.stop, i.step)]
            return ":".join(parts) if i.step is not None else ":".join(parts[:2])
        return str(int(i))

    return ", ".join(item(i) for i in index)


def same(result, expected):
    """Bit-for-bit equality, dtype and shape included (NaNs and -0.0 compare as bits)."""
    expected = np.asarray(expected)
    assert isinstance(result, np.ndarray), type(result)
    assert result.dtype == expected.dtype, (result.dtype, expected.dtype)
    assert result.shape == expected.shape, (result.shape, expected.shape)
    assert result.tobytes() == np.ascontiguousarray(expected).tobytes()


def in_layout(x, layout):
    """An array equal to `x` whose memory is laid out as `layout` says; the views are not
    C-contiguous (unless an axis is short)."""
    if layout == "c":
        return x
    if layout == "fortran":
        # (asfortranarray makes a 0-d array 1-d)
        return np.asfortranarray(x) if x.ndim else x
    if layout == "reversed":
        return np.ascontiguousarray(x[::-1])[::-1] if x.ndim else x
    if layout == "stepped":
        if x.ndim == 0:
            return x
        wide = np.repeat(x, 2, axis=-1)
        return wide[..., ::2]
    if layout == "readonly":
        y = x.copy()
        y.flags.writeable = False
        return y
    raise ValueError(layout)


LAYOUTS = ["c", "fortran", "reversed", "stepped", "readonly"]
