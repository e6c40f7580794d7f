"""The stand-in CUDA driver (tests/support/cuda_stand_in.c: host memory as device memory, kernels
compiled by the system C compiler under slc's host emulation) for the Python tests, and a small
array library on it that plays CuPy's part: arrays whose memory the stand-in takes for device
memory, handed to slc through DLPack as arrays on CUDA device 0.

test_cuda.py runs itself in a child process on the stand-in (``environment()``), so that its
GPU-only tests run on every machine with a C compiler; in that process ``xp()`` is this library.
"""
import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile

import numpy as np

_ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
_SOURCE = os.path.join(_ROOT, "tests", "support", "cuda_stand_in.c")
_HEADER = os.path.join(_ROOT, "src", "backend", "cuda", "host_emulation.h")
#: Set in the child process that runs on the stand-in.
ACTIVE = "SLC_STAND_IN_ACTIVE"
CU_STREAM_NON_BLOCKING = 0x1


def build():
    """The stand-in library's path (built once per source), or None without the sources (an
    installed package's tests) or a C compiler."""
    if not (os.path.exists(_SOURCE) and os.path.exists(_HEADER)):
        return None
    with open(_SOURCE, "rb") as f, open(_HEADER, "rb") as h:
        key = hashlib.sha256(f.read() + b"\0" + h.read()).hexdigest()[:16]
    folder = os.path.join(tempfile.gettempdir(), f"slc-py-stand-in-{key}")
    library = os.path.join(folder, "libcuda-stand-in.so")
    if os.path.exists(library):
        return library
    cc = os.environ.get("CC", "cc")
    if shutil.which(cc) is None:
        return None
    os.makedirs(folder, exist_ok=True)
    header = os.path.join(folder, "host_emulation.h")
    shutil.copyfile(_HEADER, header)
    partial = f"{library}.{os.getpid()}"
    subprocess.run([cc, "-std=c11", "-O1", "-Wall", "-Werror", "-shared", "-fPIC",
                    "-Wl,-soname,libcuda.so", f'-DSLC_EMULATION_HEADER="{header}"', "-o", partial,
                    _SOURCE, "-ldl", "-lpthread"], check=True)
    os.replace(partial, library)
    return library


def environment(library):
    """The environment of a process that runs on the stand-in: it is loaded first under the
    driver's name, named as NVRTC, with a kernel cache of its own; foreign addresses (NumPy's
    memory, standing for another library's device memory) allowed."""
    env = dict(os.environ)
    env.update({"LD_PRELOAD": library, "SLC_NVRTC": library,
                "XDG_CACHE_HOME": os.path.join(os.path.dirname(library), "cache"),
                "SLC_STAND_IN_FOREIGN": "1", ACTIVE: "1"})
    return env


# ---- DLPack ---------------------------------------------------------------------------------

class _Device(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _Device), ("ndim", ctypes.c_int32),
                ("dtype", _DType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_Deleter = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class _Managed(ctypes.Structure):
    _fields_ = [("dl_tensor", _Tensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_new_capsule = ctypes.pythonapi.PyCapsule_New
_new_capsule.restype, _new_capsule.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype, _capsule_pointer.argtypes = ctypes.c_void_p, [ctypes.py_object, ctypes.c_char_p]
_rename_capsule = ctypes.pythonapi.PyCapsule_SetName
_rename_capsule.restype, _rename_capsule.argtypes = ctypes.c_int, [ctypes.py_object, ctypes.c_char_p]

_CODES = {"i": 0, "u": 1, "f": 2, "c": 5, "b": 6}
_KINDS = {v: k for k, v in _CODES.items()}
#: What the capsules handed out point into, kept while the process lives (slc calls no deleter
#: of ours: the capsules carry none).
_lent = []


class Array:
    """A NumPy array's memory as an array on CUDA device 0. Views share it, as a GPU library's
    views share device memory."""

    def __init__(self, host):
        self.host = host
        self.streams = []  # the stream of every __dlpack__ call, for the stream protocol's tests

    shape = property(lambda self: self.host.shape)
    dtype = property(lambda self: self.host.dtype)
    T = property(lambda self: Array(self.host.T))

    def __getitem__(self, index):
        return Array(self.host[index])

    def __dlpack_device__(self):
        return (2, 0)

    def __dlpack__(self, stream=None, **_):
        self.streams.append(stream)
        h = self.host
        item = h.dtype.itemsize
        shape = (ctypes.c_int64 * max(h.ndim, 1))(*h.shape)
        strides = (ctypes.c_int64 * max(h.ndim, 1))(*(s // item for s in h.strides))
        managed = _Managed()
        managed.dl_tensor = _Tensor(h.ctypes.data, _Device(2, 0), h.ndim,
                                    _DType(_CODES[h.dtype.kind], 8 * item, 1), shape, strides, 0)
        _lent.append((h, shape, strides, managed))
        return _new_capsule(ctypes.addressof(managed), b"dltensor", None)


def lent_tensor():
    """The DLPack tensor of the capsule handed out last (for tests that make it lie)."""
    return _lent[-1][3].dl_tensor


def _driver():
    driver = ctypes.CDLL(None)
    for name in ("cuStreamCreate", "cuStreamSynchronize", "cuMemHostAlloc", "cuMemFreeHost",
                 "cuMemcpyDtoHAsync_v2"):
        getattr(driver, name).restype = ctypes.c_int
    driver.cuMemcpyDtoHAsync_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t, ctypes.c_void_p]
    return driver


def from_dlpack(producer):
    """A host copy of `producer`'s device array, taken as a consumer on a stream of its own
    takes it: the capsule asked for on that stream (so the producer must order its work before
    it), the copy queued there, that stream alone waited for; the capsule renamed and its
    deleter called."""
    driver = _driver()
    stream = ctypes.c_void_p()
    # Non-blocking, as PyTorch's streams are: nothing orders it after the legacy stream.
    assert driver.cuStreamCreate(ctypes.byref(stream), CU_STREAM_NON_BLOCKING) == 0
    capsule = producer.__dlpack__(stream=stream.value)
    managed = _Managed.from_address(_capsule_pointer(capsule, b"dltensor"))
    _rename_capsule(capsule, b"used_dltensor")
    t = managed.dl_tensor
    assert (t.device.device_type, t.device.device_id) == (2, 0), "a CUDA array"
    dtype = np.dtype(f"{_KINDS[t.dtype.code]}{t.dtype.bits // 8}") if t.dtype.code != 6 else np.dtype(bool)
    shape = tuple(t.shape[k] for k in range(t.ndim))
    n = int(np.prod(shape, dtype=np.int64))
    dense = [int(np.prod(shape[k + 1:], dtype=np.int64)) for k in range(t.ndim)]
    assert not t.strides or n == 0 or all(t.strides[k] == dense[k] or shape[k] == 1 for k in range(t.ndim)), \
        "slc's results are dense"
    copy = np.empty(shape, dtype)
    if n:
        pinned = ctypes.c_void_p()
        assert driver.cuMemHostAlloc(ctypes.byref(pinned), n * dtype.itemsize, 0) == 0
        assert driver.cuMemcpyDtoHAsync_v2(pinned, t.data + t.byte_offset, n * dtype.itemsize, stream) == 0
        assert driver.cuStreamSynchronize(stream) == 0
        raw = (ctypes.c_uint8 * (n * dtype.itemsize)).from_address(pinned.value)
        copy[...] = np.frombuffer(raw, dtype=dtype).reshape(shape)
        driver.cuMemFreeHost(pinned)
    if managed.deleter:
        _Deleter(managed.deleter)(ctypes.addressof(managed))
    return copy


def asarray(x):
    """An array on the device: a copy of a NumPy array, or slc's DeviceArray read through its
    ``__cuda_array_interface__`` (CuPy's ``asarray``)."""
    if isinstance(x, Array):
        return x
    if hasattr(x, "__cuda_array_interface__"):
        i = x.__cuda_array_interface__
        synchronize()
        dtype = np.dtype(i["typestr"])
        n = int(np.prod(i["shape"], dtype=np.int64))
        raw = (ctypes.c_uint8 * max(1, n * dtype.itemsize)).from_address(i["data"][0])
        flat = np.ctypeslib.as_array(raw)[: n * dtype.itemsize].view(dtype)
        assert i.get("strides") is None, "slc's results are dense"
        return Array(np.array(flat.reshape(i["shape"])))
    return Array(np.array(x, copy=True))


def synchronize():
    """Waits for the work queued on the device (CuPy's copies to the host do): the stand-in runs
    queued work only when something waits for it."""
    assert ctypes.CDLL(None).cuCtxSynchronize() == 0


def asnumpy(a):
    """A host copy, once the device's queued work is done."""
    synchronize()
    if isinstance(a, Array):
        return np.array(a.host)
    if isinstance(a, np.ndarray):  # from_dlpack's copy
        return np.array(a)
    return a.get()


def arange(*args, **kwargs):
    return Array(np.arange(*args, **kwargs))
