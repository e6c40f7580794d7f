"""The exceptions slc raises. Every one is an :class:`Error`, which carries the diagnostic's
stable code, the byte range in the program it points at, and the one-line message; ``str()``
of it is the full report as the ``slc`` command line prints it (without colour)."""

import builtins

__all__ = [
    "Error",
    "ParseError",
    "CompileError",
    "IndexError",
    "OverflowError",
    "RunError",
    "MemoryError",
    "DmlError",
    "InternalError",
]


class Error(Exception):
    """An error from slc.

    Attributes:
        code: the diagnostic code, such as ``"E0102"`` (``None`` for an internal error).
        span: ``(start, end)``, the byte range in the program text the error points at, or
            ``None`` when it points at no part of it.
        message: the one-line message, without the rendered source excerpt.
    """

    def __init__(self, rendered, code=None, span=None, message=None):
        # All four go to Exception's args so that the exception pickles and copies whole.
        super().__init__(rendered, code, span, message)
        self.code = code
        self.span = tuple(span) if span is not None else None
        self.message = message if message is not None else rendered

    def __str__(self):
        return self.args[0]

    def __repr__(self):
        return f"{type(self).__name__}(code={self.code!r}, span={self.span!r}, message={self.message!r})"


class CompileError(Error):
    """The program is not valid for the given inputs (codes E01xx, E03xx)."""


class ParseError(CompileError):
    """The program text does not parse (codes E00xx)."""


class IndexError(Error, builtins.IndexError):
    """An index NumPy would refuse with ``IndexError``: out of range, a constant one found while
    compiling (E0102) or a value of an index array found while running (E0201, E0202); too many
    indices (E0103); two ellipses (E0104); a float where an integer index is needed (E0106); a
    boolean mask whose shape does not match (E0107); index arrays that do not broadcast
    (E0108). Also a Python ``IndexError``, so ``except IndexError`` catches it as it catches
    NumPy's."""


class OverflowError(CompileError, builtins.OverflowError):
    """A value a store converts by its value (a literal, a Python ``int`` or ``float``) that the
    target's integer dtype does not hold, an infinity included (E0135), where NumPy raises
    ``OverflowError``: ``a[0] = 300`` into ``uint8``. Also a Python ``OverflowError``, so
    ``except OverflowError`` catches it as it catches NumPy's."""


class RunError(Error):
    """Running the kernel failed (codes E02xx other than indices and memory)."""


class ShapeError(RunError, builtins.ValueError):
    """Inputs whose shapes a generic kernel cannot take (E0208): two dims of one name that
    differ, an index beyond a symbolic axis. Also a Python ``ValueError``."""


class MemoryError(Error, builtins.MemoryError):
    """The result is too large to allocate (E0204, E0207). Also a Python ``MemoryError``."""


class DmlError(Error):
    """The program cannot be expressed as DirectML operators (codes E04xx)."""


class InternalError(Error):
    """A bug in slc, caught before it could crash the interpreter. Please report it."""
