"""slc: NumPy-style slice programs, compiled to machine code and run over NumPy arrays.

A program is a slice expression over named inputs, as NumPy writes it::

    >>> import numpy as np, slc
    >>> a = np.arange(20, dtype=np.float32).reshape(4, 5)
    >>> slc.eval("a[1:3, ::-1]", a=a)
    array([[ 9.,  8.,  7.,  6.,  5.],
           [14., 13., 12., 11., 10.]], dtype=float32)

The language in brief: basic indices (``a[2:, ..., None, :10]``, negative steps, integers,
``a[()]``), advanced indices as NumPy has them (several integer arrays broadcast together,
``x[i, j]``, ``x[:, i]``; boolean masks, ``x[m]``), slice bounds from Python ``int``s or 0-d
integer arrays (``slc.eval("a[:k]", a=x, k=3)``), ``let`` statements (``let b = a[::2]; b[1:]``),
the ONNX/OpenVINO slicing operators as functions (``slice``, ``gather``,
``strided_slice``, ...), and stores as NumPy writes them: ``slc.eval("a[i] = v", a=x, i=idx,
v=y)`` (also ``+=``, ``*=``) changes ``x`` in place and returns None, and the scatters
(``scatter_nd``, ``scatter_elements``, ``scatter_update``) return the updated copy. See the
project's docs/ for the full reference.

- :func:`eval` compiles (once per program text and input types) and runs;
- :func:`compile` gives a :class:`Kernel` for input types, to call many times, from many
  threads, into ``out=`` arrays; with named dims (``a=("float32", ("N", "M"))``) the one
  kernel serves arrays of every shape the names admit;
- errors are :class:`Error` subclasses with ``.code``, ``.span`` and ``.message``; where NumPy
  raises ``IndexError`` slc raises :class:`slc.IndexError`, which ``except IndexError`` catches
  (``from slc import *`` leaves the builtins ``IndexError`` and ``MemoryError`` alone: the
  subclasses are ``slc.IndexError`` and ``slc.MemoryError``).

Arrays on an NVIDIA GPU (PyTorch, CuPy, JAX: any DLPack producer on CUDA device 0) are read in
place too, and the result is a :class:`DeviceArray` in device memory (``torch.from_dlpack(r)``)
or is written into a device ``out=``; ``Kernel`` calls take ``stream=``.

Inputs are read in place, C-contiguous or not (``x[::2]``, ``x.T``: through a kernel compiled
once for their strides). The GIL is released while compiling and while running
kernels whose results are at least 16 KiB.
"""

from ._errors import (
    CompileError,
    DmlError,
    Error,
    IndexError,
    InternalError,
    MemoryError,
    OverflowError,
    ParseError,
    RunError,
    ShapeError,
)
import os as _os

from ._slc import DeviceArray, Kernel, _read_zarr, cache_size, clear_cache, compile
from ._slc import eval as _eval

__version__ = "0.1.0"

__all__ = [
    "eval",
    "compile",
    "Kernel",
    "DeviceArray",
    "clear_cache",
    "cache_size",
    "Error",
    "ParseError",
    "CompileError",
    "RunError",
    "ShapeError",
    "DmlError",
    "InternalError",
]


def _zarr_path(value):
    """The store path of a Zarr input (a path to a ``*.zarr`` directory or to a directory with
    Zarr metadata, an ``http(s)://`` URL of a store, or a ``zarr.Array`` of a local store), or
    None for any other input."""
    if isinstance(value, str) and value.lower().startswith(("http://", "https://")):
        return value
    if isinstance(value, (str, _os.PathLike)):
        path = _os.fspath(value)
        if path.rstrip("/").endswith(".zarr") or ".zarr/" in path or any(
            _os.path.isfile(_os.path.join(path, m)) for m in ("zarr.json", ".zarray")
        ):
            return path
        raise TypeError(f"{path!r} is not a Zarr store (a directory named *.zarr, or holding zarr.json or .zarray)")
    if type(value).__module__.startswith("zarr") and type(value).__name__ == "Array":
        root = getattr(getattr(value, "store", None), "root", None)
        if root is None:
            raise TypeError("slc reads zarr.Array inputs of local directory stores only (zarr.storage.LocalStore)")
        return _os.path.join(_os.fspath(root), value.path)
    return None


def eval(expr, /, **inputs):
    """Evaluates the slice program ``expr`` over the named inputs (see ``_slc.eval``); an input
    may also be a Zarr store, by path or as a ``zarr.Array`` of a local store, of which only the
    chunks the program reads are decoded."""
    stores = {}
    for name, value in inputs.items():
        path = _zarr_path(value)
        if path is not None:
            stores[name] = path
    if stores:
        others = {k: v for k, v in inputs.items() if k not in stores}
        result, read = _read_zarr(expr, stores, others)
        if read is None:
            return result
        inputs = {**others, **read}
    return _eval(expr, **inputs)


eval.__doc__ = (_eval.__doc__ or "") + (
    "\n\nAn input may also be a Zarr array in a local directory store, by path (``a=\"data.zarr\"``,"
    " ``\"data.zarr/group/array\"``) or as a ``zarr.Array``, or (a build with the ``zarr-http``"
    " feature) at an ``http(s)://`` URL: only the chunks the program reads are decoded (docs/zarr.md)."
)
