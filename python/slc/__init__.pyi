"""Type stub for slc: NumPy-style slice programs, compiled and run over NumPy arrays.

The language in brief (a program is one expression, or `let` statements then one):
    a[2:, ..., None, :10]       basic indices: slices, steps (negative too), ints, None, ...
    x[i, j], x[:, i], x[m]      advanced indices: integer arrays broadcast together, boolean
                                masks (NumPy's placement rule)
    a[:k], a[k:k+2]             slice bounds from ints or 0-d integer arrays bound by name
    a[()]                       the whole array
    let b = a[::2]; b[1:]       names for intermediate results
    a[1:][::2, 0]               chains of indexings
    slice(x, [1], [5], steps=[2]), strided_slice(...), gather(x, idx, axis=1), ...
                                the ONNX/OpenVINO slicing operators
"""

import builtins
import os
from typing import Any, Mapping, Sequence, SupportsIndex, Tuple, Union

import numpy as np
import numpy.typing as npt

__version__: str

#: Anything NumPy reads as an array without copying: ndarray, memoryview, array.array, an
#: object with __array_interface__ (a list works too, copied); or an int for an integer scalar.
ArrayInput = Union[npt.ArrayLike, int]
#: A Zarr store: a path to a local directory store (`data.zarr`, `data.zarr/group/array`) or a
#: `zarr.Array` of one (docs/zarr.md); only the chunks a program reads are decoded.
ZarrInput = Union[str, "os.PathLike[str]", Any]
#: A dim of a declared shape: a size, a name (`"N"`, the same size wherever it appears), or
#: None (a name of its own).
Dim = Union[SupportsIndex, str, None]
#: An example array, a (dtype, shape) pair in any NumPy dtype spelling, or an int (an int64
#: scalar; from 2**63 up, uint64).
TypeSpec = Union[npt.ArrayLike, Tuple[npt.DTypeLike, Union[Dim, Sequence[Dim]]], int]

def eval(expr: str, /, **inputs: Union[ArrayInput, ZarrInput]) -> np.ndarray | None:
    """Evaluate the slice program `expr` over the named inputs into a new array, as NumPy would.

    A program ending in an assignment (`slc.eval("a[i] = v", a=x, i=idx, v=y)`, also `+=`, `*=`)
    stores into the array bound to its target in place, as `x[idx] = y` does, and returns None;
    the target must be a writeable numpy.ndarray (a view such as `x[:, ::2]` is written through,
    as NumPy writes through it).

    The compiled kernel is kept, keyed by the text and the inputs' names, dtypes and shapes (and
    the values of operator parameters and of boolean masks of up to 4096 elements read from
    inputs; a larger mask's positions are derived per call, so a new mask reuses the kernel), so
    evaluating the text again skips compiling. Raises slc.Error subclasses; an index out of range raises slc.IndexError.
    """

def compile(expr: str, /, **types: TypeSpec) -> Kernel:
    """Compile `expr` once for inputs of the given types into a Kernel to call many times.

    Each type is an example array, a `(dtype, shape)` pair such as `("float32", (4, 5))`, or an
    int (a 0-d int64; from 2**63 up, uint64). Operator parameters read from inputs
    (`slice(x, s, e)`) and boolean masks (`x[m]`) take their values from the example arrays.
    The GIL is released while compiling.
    A shape with named dims (`("float32", ("N", "M"))`, None for a name of its own) gives one
    kernel for arrays of every shape the names admit.
    """

def clear_cache() -> None:
    """Forget every kernel `eval` kept."""

def cache_size() -> int:
    """The number of kernels `eval` keeps."""

class Kernel:
    """A slice program compiled for input dtypes and shapes (dims may be names); thread-safe."""

    def __call__(
        self,
        *,
        out: Any = None,
        threads: int | None = None,
        stream: Any = None,
        **inputs: ArrayInput,
    ) -> Any:
        """Run on the named inputs (checked against the compiled types: TypeError for a wrong
        dtype, ValueError for a wrong shape, both naming the input). `out`: a writable,
        C-contiguous array of the result's dtype and shape to write into and return.
        `threads`: worker threads for large results (default: one per core).
        Inputs on a CUDA device (any `__dlpack__` producer: torch, cupy, jax) are read in place
        and the result is a `DeviceArray` (or `out`, a device array); `stream`: the CUDA stream
        to run on (an int handle or a torch/cupy stream; default the legacy default stream)."""
    @property
    def input_names(self) -> Tuple[str, ...]:
        """The input names, in the order given to slc.compile."""
    @property
    def input_types(self) -> dict[str, Tuple[np.dtype[Any], Tuple[int | str, ...]]]:
        """Each input's (dtype, dims): ints, and the texts of named dims."""
    @property
    def dtype(self) -> np.dtype[Any]:
        """The result's dtype."""
    @property
    def shape(self) -> Tuple[int | str, ...]:
        """The result's shape; with named dims, texts in the names: `("max(0, N-1)", "M")`."""
    @property
    def source(self) -> str:
        """The program text."""
    @property
    def plan(self) -> str:
        """The verified plan IR, as text."""
    @property
    def strided_plans(self) -> list[str]:
        """The plans compiled so far for non-contiguous inputs, read in place (one per layout)."""
    def loop_nest(self) -> str:
        """The scheduled loop nest the JIT generates code from."""
    def clif(self) -> str:
        """The JIT kernel's Cranelift IR."""
    def dml(self, feature_level: str | None = None) -> dict[str, Any]:
        """The program as DirectML operator descriptors (parsed JSON); feature_level "MAJOR.MINOR"."""
    def show(self) -> str:
        """What the program selects from its input, drawn as SVG (what `slc show -o` writes)."""
    def _repr_svg_(self) -> str:
        """The selection as SVG, for Jupyter."""

class Error(Exception):
    """An error from slc; str() is the rendered diagnostic, without colour."""

    code: str | None
    span: Tuple[int, int] | None
    message: str
    def __init__(
        self, rendered: str, code: str | None = ..., span: Tuple[int, int] | None = ..., message: str | None = ...
    ) -> None: ...

class CompileError(Error):
    """The program is not valid for the given inputs (E01xx, E03xx)."""

class ParseError(CompileError):
    """The program text does not parse (E00xx)."""

class IndexError(Error, builtins.IndexError):
    """An index out of range (E0102 while compiling; E0201, E0202 while running)."""

class OverflowError(CompileError, builtins.OverflowError):
    """A value a store converts by its value that the target's dtype does not hold (E0135)."""

class RunError(Error):
    """Running the kernel failed (other E02xx)."""

class ShapeError(RunError, builtins.ValueError):
    """Inputs whose shapes a generic kernel cannot take (E0208)."""

class MemoryError(Error, builtins.MemoryError):
    """The result is too large (E0204, E0207)."""

class DmlError(Error):
    """The program cannot be expressed as DirectML operators (E04xx)."""

class InternalError(Error):
    """A bug in slc, caught before it could crash the interpreter."""


class DeviceArray:
    """A result in CUDA device memory (device 0): a DLPack producer (torch.from_dlpack,
    cupy.from_dlpack) with __cuda_array_interface__; get() copies it to NumPy."""

    def __dlpack__(
        self, *, stream: Any = None, max_version: Any = None, dl_device: Any = None, copy: Any = None
    ) -> Any: ...
    def __dlpack_device__(self) -> Tuple[int, int]: ...
    @property
    def __cuda_array_interface__(self) -> dict[str, Any]: ...
    @property
    def shape(self) -> Tuple[int, ...]: ...
    @property
    def dtype(self) -> np.dtype[Any]: ...
    @property
    def data_ptr(self) -> int:
        """The device address of the first element."""
    def get(self) -> np.ndarray:
        """A copy on the host (waits for slc's work on it)."""
