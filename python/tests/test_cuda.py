"""slc on arrays in CUDA device memory (PyTorch, CuPy): read in place through DLPack, results as
slc.DeviceArray (a DLPack producer) or written into a device out=, on the caller's stream —
checked bit for bit against NumPy, errors included. These are the GPU-only Python tests: where
there is no GPU they skip, except the one that checks the error without a CUDA driver, and the
one that runs this file again in a child process on the stand-in CUDA driver
(stand_in_cuda.py), where the tests written for CuPy run on its stand-in array library too.

Runs under pytest, or as a plain script where pytest is not installed (the GPU machine):
``python3 python/tests/test_cuda.py``.
"""
import ctypes
import sys

import os
import subprocess

import numpy as np

import slc
import stand_in_cuda


def _driver_present():
    if os.environ.get(stand_in_cuda.ACTIVE):
        return True
    try:
        ctypes.CDLL("libcuda.so.1")
        return True
    except OSError:
        return False


def _torch():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def _cupy():
    try:
        import cupy
        cupy.cuda.runtime.getDeviceCount()
        return cupy
    except Exception:  # noqa: BLE001
        return None


def _array_libraries():
    """CuPy where there is a GPU, and the stand-in's array library in the process that runs on
    the stand-in driver: (name, module) pairs with CuPy's asarray, asnumpy, from_dlpack, arange."""
    found = [("cupy", _cupy())] + ([("stand-in", stand_in_cuda)] if os.environ.get(stand_in_cuda.ACTIVE) else [])
    return [(name, xp) for name, xp in found if xp is not None]


class _Skip(Exception):
    pass


def _skip(why):
    if __name__ == "__main__":
        raise _Skip(why)
    import pytest
    pytest.skip(why)


class FakeCudaArray:
    """Says it is on a CUDA device; must never be asked for its memory without a driver."""

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None):
        raise AssertionError("asked for device memory on a machine without a CUDA driver")


def test_device_inputs_without_a_driver_are_a_clear_error():
    if _driver_present():
        _skip("this machine has a CUDA driver")
    for call in (lambda: slc.eval("a[::-1]", a=FakeCudaArray()),
                 lambda: slc.compile("a[::-1]", a=("float32", (3,)))(a=FakeCudaArray())):
        try:
            call()
        except slc.Error as e:
            assert e.code == "E0209", e
            assert "CUDA" in str(e), e
        else:
            raise AssertionError("no error")


CASES = [
    # (expression, inputs as NumPy arrays)
    ("a[:, 1:-1]", {"a": np.arange(60, dtype=np.float32).reshape(6, 10)}),
    ("a[::-1, ::2]", {"a": np.arange(60, dtype=np.int16).reshape(6, 10)}),
    ("a[2:, ..., None, :3]", {"a": np.arange(120, dtype=np.float64).reshape(2, 3, 4, 5)}),
    ("a[i]", {"a": np.arange(60, dtype=np.uint8).reshape(6, 10), "i": np.array([5, -1, 0, 2])}),
    ("a[:, i]", {"a": np.arange(60, dtype=np.float32).reshape(6, 10), "i": np.array([[9, 0], [-3, 4]], dtype=np.int32)}),
    ("a[m]", {"a": np.arange(60, dtype=np.float32).reshape(6, 10), "m": np.arange(6) % 2 == 0}),
    ("gather(d, i, axis=1)", {"d": np.arange(60, dtype=np.float32).reshape(6, 10), "i": np.array([3, 1, 1])}),
    ("gather_elements(d, i, axis=1)", {"d": np.arange(12, dtype=np.float32).reshape(3, 4),
                                       "i": np.array([[0, 3], [1, 1], [2, 0]])}),
    ("a[1:][::2, ::-1]", {"a": np.arange(35, dtype=np.int64).reshape(7, 5)}),
    ("a[:k, k]", {"a": np.arange(36, dtype=np.float32).reshape(6, 6), "k": 3}),
]


def _numpy(expr, x):
    if expr.startswith("gather_elements("):
        return np.take_along_axis(x["d"], x["i"], axis=1)
    if expr.startswith("gather("):
        return np.take(x["d"], x["i"], axis=1)
    return np.ascontiguousarray(eval(expr, {}, dict(x)))  # noqa: S307


def _same(a, b):
    a, b = np.ascontiguousarray(a), np.ascontiguousarray(b)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


def test_torch_tensors_in_place_every_form():
    torch = _torch()
    if torch is None:
        _skip("no PyTorch with CUDA")
    for expr, x in CASES:
        t = {k: (torch.from_numpy(v).cuda() if isinstance(v, np.ndarray) else v) for k, v in x.items()}
        got = slc.eval(expr, **t)
        assert isinstance(got, slc.DeviceArray), (expr, got)
        back = torch.from_dlpack(got)
        assert back.is_cuda and _same(back.cpu().numpy(), _numpy(expr, x)), expr
        assert _same(got.get(), _numpy(expr, x)), expr


def test_strided_torch_views_are_read_in_place():
    torch = _torch()
    if torch is None:
        _skip("no PyTorch with CUDA")
    base = torch.arange(200, dtype=torch.float32, device="cuda").reshape(10, 20)
    for view, host in ((base.T, base.cpu().numpy().T), (base[::2, 3:], base.cpu().numpy()[::2, 3:]),
                       (base.flip(0), base.cpu().numpy()[::-1])):
        got = slc.eval("a[1:, ::-3]", a=view)
        assert _same(got.get(), host[1:, ::-3])


def test_kernels_out_and_streams():
    torch = _torch()
    if torch is None:
        _skip("no PyTorch with CUDA")
    k = slc.compile("a[::-1, i]", a=("float32", ("N", "M")), i=("int64", ("K",)))
    a = torch.randn(300, 70, device="cuda")
    i = torch.tensor([5, -1, 0], device="cuda")
    want = a.cpu().numpy()[::-1][:, i.cpu().numpy()]
    # On a stream of the caller's: the producer's work is ordered before slc's.
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        a2 = a * 1.0  # queued on s
        got = k(a=a2, i=i, stream=s)
    out = torch.empty(300, 3, device="cuda")
    assert k(a=a, i=i, out=out) is out
    torch.cuda.synchronize()
    assert _same(torch.from_dlpack(got).cpu().numpy(), want)
    assert _same(out.cpu().numpy(), want)
    # A wrong out=: an error naming it, nothing launched.
    try:
        k(a=a, i=i, out=torch.empty(3, 300, device="cuda"))
    except slc.Error as e:
        assert "output" in str(e), e
    else:
        raise AssertionError("a wrong out= was taken")


def test_index_errors_on_the_device_as_on_the_host():
    torch = _torch()
    if torch is None:
        _skip("no PyTorch with CUDA")
    a = np.arange(60, dtype=np.float32).reshape(6, 10)
    bad = np.array([0, 7, 1])
    try:
        slc.eval("a[i]", a=a, i=bad)
    except IndexError as host_error:
        host = (host_error.code, str(host_error))
    try:
        slc.eval("a[i]", a=torch.from_numpy(a).cuda(), i=torch.from_numpy(bad).cuda())
    except IndexError as e:
        assert (e.code, str(e)) == host, (e, host)
    else:
        raise AssertionError("no IndexError on the device")
    # The context stays usable (no device assert).
    assert _same(slc.eval("a[i]", a=torch.from_numpy(a).cuda(), i=torch.tensor([1], device="cuda")).get(), a[[1]])
    assert float(torch.ones(2, device="cuda").sum()) == 2.0


def test_cupy_arrays_and_the_cuda_array_interface():
    if not _array_libraries():
        _skip("no CuPy with a GPU")
    for _, cp in _array_libraries():
        a = cp.asarray(np.arange(120, dtype=np.float32).reshape(10, 12))
        got = slc.eval("a[::3, 2:-1]", a=a)
        want = cp.asnumpy(a)[::3, 2:-1]
        assert _same(cp.asnumpy(cp.from_dlpack(got)), want)
        assert _same(cp.asnumpy(cp.asarray(got)), want)  # __cuda_array_interface__
        assert got.shape == want.shape and got.dtype == want.dtype


def test_every_form_kernels_out_streams_and_errors_on_cupy_arrays():
    """CASES through CuPy-like arrays (slc.eval, DLPack in and out); a kernel with out= and a
    stream, the producer asked for its array on that stream (DLPack's stream protocol); an
    index out of range as on the host, the device usable after it."""
    if not _array_libraries():
        _skip("no CuPy with a GPU")
    for name, xp in _array_libraries():
        for expr, x in CASES:
            given = {k: (xp.asarray(v) if isinstance(v, np.ndarray) else v) for k, v in x.items()}
            got = slc.eval(expr, **given)
            assert isinstance(got, slc.DeviceArray), (name, expr, got)
            assert _same(got.get(), _numpy(expr, x)), (name, expr)
            assert _same(xp.asnumpy(xp.from_dlpack(got)), _numpy(expr, x)), (name, expr)
        k = slc.compile("a[::-1, i]", a=("float32", ("N", "M")), i=("int64", ("K",)))
        host = np.arange(2100, dtype=np.float32).reshape(30, 70)
        a, i = xp.asarray(host), xp.asarray(np.array([5, -1, 0]))
        want = host[::-1][:, [5, -1, 0]]
        out = xp.asarray(np.zeros((30, 3), dtype=np.float32))
        assert k(a=a, i=i, out=out) is out
        assert _same(xp.asnumpy(out), want), name
        if name == "stand-in":
            assert a.streams[-1] == 1, "the legacy default stream by default"
            # On a stream of the caller's; taken by a consumer on a stream of its own, which slc
            # orders after its kernel (DLPack's handshake, the other way). A kernel that cannot
            # fail: slc does not wait for it.
            got = slc.compile("a[::-1, 1:]", a=("float32", ("N", "M")))(a=a, stream=7)
            assert a.streams[-1] == 7, a.streams
            assert _same(xp.from_dlpack(got), host[::-1, 1:])
        try:
            k(a=a, i=i, out=xp.asarray(np.zeros((3, 30), dtype=np.float32)))
        except slc.Error as e:
            assert "output" in str(e), e
        else:
            raise AssertionError("a wrong out= was taken")
        bad = np.array([0, 7, 1])
        host_error = None
        try:
            slc.eval("a[i]", a=host[:6], i=bad)
        except IndexError as e:
            host_error = (e.code, str(e))
        try:
            slc.eval("a[i]", a=xp.asarray(host[:6]), i=xp.asarray(bad))
        except IndexError as e:
            assert (e.code, str(e)) == host_error, (e, host_error)
        else:
            raise AssertionError("no IndexError on the device")
        assert _same(slc.eval("a[i]", a=xp.asarray(host[:6]), i=xp.asarray(np.array([1]))).get(), host[[1]])


# Stores into views of a device array, each with the inputs it names beside `a` and NumPy's
# setitem on the same view of a host copy.
VIEW_STORES = [
    ("a[i] = v", "iv", lambda x, i, v, m: x.__setitem__(i, v)),
    ("a[:, 1] = 0", "", lambda x, i, v, m: x.__setitem__((slice(None), 1), 0)),
    ("a[m] = 3", "m", lambda x, i, v, m: x.__setitem__(m, 3)),
    ("a[i] += v", "iv", lambda x, i, v, m: x.__setitem__(i, x[i] + v)),
    ("a[::-1] = a", "", lambda x, i, v, m: x.__setitem__(slice(None, None, -1), x.copy())),
]


def _raises(kind, text, call):
    """`call()` raises `kind` with `text` in its message (pytest.raises, which the GPU machine's
    plain-script run has not)."""
    try:
        call()
    except kind as e:
        assert text in str(e), e
    else:
        raise AssertionError(f"no {kind.__name__}")


def _view_stores(to_device, to_host, views):
    """Every store of VIEW_STORES into every view of a fresh f32[12, 10] base on the device:
    the whole base afterwards equals NumPy's setitem on the same view of a host copy."""
    for expr, names, numpy_store in VIEW_STORES:
        for name, view in views:
            host = np.arange(120, dtype=np.float32).reshape(12, 10)
            base = to_device(host)
            h = view(host)
            rows = h.shape[0]
            i = np.array([1, rows - 1, 1, 0])
            v = np.arange(i.size * h.shape[1], dtype=np.float32).reshape(i.size, h.shape[1]) - 50
            m = np.arange(rows) % 3 == 0
            given = {"i": i, "v": v, "m": m}
            args = {k: to_device(given[k]) for k in names}
            assert slc.eval(expr, a=view(base), **args) is None, (expr, name)
            numpy_store(h, i, v, m)
            assert _same(to_host(base), host), (expr, name)


def test_stores_into_torch_views_as_numpy():
    torch = _torch()
    if torch is None:
        _skip("no PyTorch with CUDA")
    views = [("t[:, ::2]", lambda t: t[:, ::2]), ("t.T", lambda t: t.T), ("t[1::3, 2:]", lambda t: t[1::3, 2:])]
    _view_stores(lambda x: torch.from_numpy(np.ascontiguousarray(x)).cuda(), lambda t: t.cpu().numpy(), views)


def test_stores_into_cupy_views_with_negative_steps_as_numpy():
    if not _array_libraries():
        _skip("no CuPy with a GPU")
    views = [("x[::-1, ::2]", lambda x: x[::-1, ::2]), ("x.T[::-2]", lambda x: x.T[::-2]),
             ("x[:, ::2]", lambda x: x[:, ::2]), ("x[1::3, 2:]", lambda x: x[1::3, 2:])]
    for _, cp in _array_libraries():
        _view_stores(cp.asarray, cp.asnumpy, views)


def test_python_ints_stored_into_device_arrays_as_into_host_ones():
    """A kernel's Python ints (NEP 50: converted by value, where a NumPy integer is cast) are
    checked per call on the device as on the host (test_store_casts.py's twin), before any
    kernel runs: the array keeps its values on a refusal."""
    if not _array_libraries():
        _skip("no CuPy with a GPU")
    u = np.zeros(3, np.uint8)
    for name, xp in _array_libraries():
        a = xp.asarray(u)
        kernel = slc.compile("a[0] = k", a=u, k=7)
        kernel(a=a, k=7)
        assert xp.asnumpy(a).tolist() == [7, 0, 0], name
        _raises(ValueError, "Python int", lambda: kernel(a=a, k=np.int64(7)))
        kernel = slc.compile("a[0] = k", a=u, k=np.int64(7))
        kernel(a=a, k=np.int64(300))
        assert xp.asnumpy(a).tolist() == [44, 0, 0], name
        kernel(a=a, k=9)
        assert xp.asnumpy(a).tolist() == [9, 0, 0], name
        _raises(OverflowError, "out of bounds for uint8", lambda: kernel(a=a, k=300))
        assert xp.asnumpy(a).tolist() == [9, 0, 0], name
        # A NumPy integer scalar `=` stores through basic subscripts into a signed target is
        # converted by its value, as NumPy's setitem converts it (an index array casts it).
        s = xp.asarray(np.zeros(3, np.int8))
        kernel = slc.compile("a[0] = k", a=np.zeros(3, np.int8), k=np.int16(7))
        _raises(OverflowError, "out of bounds for int8", lambda: kernel(a=s, k=np.int16(300)))
        _raises(OverflowError, "out of bounds for int8", lambda: slc.eval("a[1:] = k", a=s, k=np.int16(300)))
        assert xp.asnumpy(s).tolist() == [0, 0, 0], name
        slc.eval("a[i] = k", a=s, i=np.array([2]), k=np.int16(300))
        assert xp.asnumpy(s).tolist() == [0, 0, 44], name


def test_lying_dlpack_producers_are_refused():
    """A producer whose DLPack tensor lies (another device, a negative rank or dim, a dtype slc
    does not read, a null data pointer for elements) is refused with an error naming the input,
    before any launch (a null pointer would fault on the device, and its context with it)."""
    if not os.environ.get(stand_in_cuda.ACTIVE):
        _skip("runs on the stand-in's arrays")

    class Liar(stand_in_cuda.Array):
        def __init__(self, host, field, value):
            super().__init__(host)
            self.field, self.value = field, value

        def __dlpack__(self, stream=None, **_):
            capsule = super().__dlpack__(stream)
            t = stand_in_cuda.lent_tensor()
            where = {"device_type": t.device, "device_id": t.device, "code": t.dtype, "bits": t.dtype,
                     "lanes": t.dtype}.get(self.field, t)
            if self.field == "shape0":
                t.shape[0] = self.value
            else:
                setattr(where, self.field, self.value)
            return capsule

    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    lies = [("device_id", 1, ValueError, "on device 1"), ("device_type", 1, ValueError, "of type 1"),
            ("ndim", -1, ValueError, "ndim < 0"), ("bits", 8, TypeError, "dtype slc does not read"),
            ("lanes", 4, TypeError, "4 lanes"), ("code", 9, TypeError, "code 9"),
            ("shape0", -5, ValueError, "[-5, 4]"), ("data", None, ValueError, "null data pointer")]
    for field, value, error, words in lies:
        for call in (lambda a: slc.eval("a[::-1]", a=a),
                     lambda a: slc.compile("a[::-1]", a=("float32", (3, 4)))(a=a)):
            try:
                call(Liar(host, field, value))
            except error as e:
                assert "'a'" in str(e) and words in str(e), (field, e)
            else:
                raise AssertionError(f"a DLPack tensor lying about {field} was taken")
    assert _same(slc.eval("a[::-1]", a=stand_in_cuda.Array(host)).get(), host[::-1])


def test_device_memory_does_not_leak_from_python():
    """slc.eval, a kernel with out=, DLPack exports taken and released, stores into views and an
    IndexError, 200 rounds: the device memory the stand-in counts as live stays as after the
    first round."""
    if not os.environ.get(stand_in_cuda.ACTIVE):
        _skip("counts the stand-in's memory")
    xp = stand_in_cuda
    host = np.arange(120, dtype=np.float32).reshape(12, 10)
    k = slc.compile("a[::-1, i]", a=("float32", ("N", "M")), i=("int64", ("K",)))

    def round_():
        a, i = xp.asarray(host), xp.asarray(np.array([3, -1]))
        slc.eval("a[::2, 1:]", a=a).get()
        xp.from_dlpack(slc.eval("a[i]", a=a, i=i))
        k(a=a, i=i, out=xp.asarray(np.zeros((12, 2), np.float32)))
        slc.eval("a[i] += 1", a=a[:, ::2], i=i)
        slc.eval("a[::-1] = a", a=a.T)
        try:
            slc.eval("a[i]", a=a, i=xp.asarray(np.array([0, 12])))
        except IndexError:
            pass
    live = ctypes.CDLL(None).slc_stand_in_live_bytes
    live.restype = ctypes.c_size_t
    round_()
    before = live()
    for _ in range(200):
        round_()
    assert live() == before, (live(), before)


def test_the_gpu_tests_on_the_stand_in_driver():
    """This file again, in a child process on the stand-in CUDA driver (stand_in_cuda.py): the
    tests written for CuPy run there on its stand-in arrays, the PyTorch ones skip."""
    if os.environ.get(stand_in_cuda.ACTIVE):
        _skip("this is the process on the stand-in")
    if _driver_present():
        _skip("this machine's CUDA driver ran the tests above")
    library = stand_in_cuda.build()
    if library is None:
        _skip("no stand-in CUDA driver here (no C compiler, or not a source checkout)")
    run = subprocess.run([sys.executable, os.path.abspath(__file__)], env=stand_in_cuda.environment(library),
                         cwd=os.path.dirname(os.path.abspath(__file__)), capture_output=True, text=True,
                         timeout=600)
    assert run.returncode == 0, run.stdout + run.stderr
    for name in ("test_cupy_arrays_and_the_cuda_array_interface",
                 "test_every_form_kernels_out_streams_and_errors_on_cupy_arrays",
                 "test_stores_into_cupy_views_with_negative_steps_as_numpy",
                 "test_lying_dlpack_producers_are_refused",
                 "test_python_ints_stored_into_device_arrays_as_into_host_ones",
                 "test_device_memory_does_not_leak_from_python"):
        assert f"{name}: ok" in run.stdout, run.stdout + run.stderr

if __name__ == "__main__":
    failed = 0
    for name, fn in sorted(globals().items()):
        if name.startswith("test_") and callable(fn):
            try:
                fn()
                print(f"{name}: ok")
            except _Skip as s:
                print(f"{name}: skipped: {s}")
            except Exception as e:  # noqa: BLE001
                failed += 1
                print(f"{name}: FAILED: {type(e).__name__}: {e}")
    sys.exit(1 if failed else 0)
