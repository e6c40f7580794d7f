//! Arrays on an NVIDIA GPU: any DLPack producer on a CUDA device (PyTorch, CuPy, JAX) is read
//! in place — no copy — and results are `slc.DeviceArray`s, DLPack producers themselves
//! (`torch.from_dlpack(r)`, `cupy.from_dlpack(r)`), or are written into a device `out=`.
//!
//! Streams follow DLPack: slc works on one stream per call (`stream=`: a handle, or an object
//! with `cuda_stream`, `ptr` or `__cuda_stream__`; default the legacy default stream, PyTorch's
//! and CuPy's default) and asks each producer to order its pending work before it
//! (`__dlpack__(stream=...)`); a consumer of a result passes its stream, which is then made to
//! wait for slc's work, and the memory is freed in that stream's order.
//!
//! The DLPack structs are written here by hand (a dozen lines) rather than through `dlpark`:
//! slc needs only the legacy `dltensor` capsule in both directions, and no other dependency.

use crate::convert::{descr_of, numpy_name, show_shape};
use crate::errors;
use numpy::PyUntypedArray;
use pyo3::exceptions::{PyBufferError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyInt, PyTuple};
use pyo3::{IntoPyObjectExt, ffi};
use slc::DType;
use slc::embed::{DeviceArray, DeviceMemory, DeviceOutput, Stream};
use std::ffi::{CStr, c_void};
use std::sync::Mutex;

/// DLPack's device type for CUDA device memory.
pub const DL_CUDA: i64 = 2;

#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

const DLTENSOR: &CStr = c"dltensor";
const USED_DLTENSOR: &CStr = c"used_dltensor";

fn dtype_of_dl(t: &DLDataType) -> Option<DType> {
    if t.lanes != 1 {
        return None;
    }
    Some(match (t.code, t.bits) {
        (0, 8) => DType::I8,
        (0, 16) => DType::I16,
        (0, 32) => DType::I32,
        (0, 64) => DType::I64,
        (1, 8) => DType::U8,
        (1, 16) => DType::U16,
        (1, 32) => DType::U32,
        (1, 64) => DType::U64,
        (2, 16) => DType::F16,
        (2, 32) => DType::F32,
        (2, 64) => DType::F64,
        (4, 16) => DType::BF16,
        (5, 64) => DType::C64,
        (5, 128) => DType::C128,
        (6, 8) => DType::Bool,
        _ => return None,
    })
}

fn dl_of_dtype(d: DType) -> DLDataType {
    let code = match d {
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => 0,
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => 1,
        DType::F16 | DType::F32 | DType::F64 => 2,
        DType::BF16 => 4,
        DType::C64 | DType::C128 => 5,
        DType::Bool => 6,
    };
    DLDataType { code, bits: (d.width() * 8) as u8, lanes: 1 }
}

fn cuda_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("CUDA: {e}"))
}

/// Whether `value` lives in CUDA device memory by its `__dlpack_device__` (a PyTorch tensor:
/// its `is_cuda`).
pub fn is_cuda(value: &Bound<'_, PyAny>) -> bool {
    if value.is_instance_of::<PyUntypedArray>() || value.is_instance_of::<PyInt>() {
        return false;
    }
    if let Some(torch) = torch::types(value) {
        return torch.is_cuda(value);
    }
    crate::convert::dlpack_device(value).ok().flatten().is_some_and(|(kind, _)| kind == DL_CUDA)
}

/// The stream of `stream=`: `None` the legacy default stream; an int; an object with
/// `__cuda_stream__()` (the CUDA array stream protocol), `cuda_stream` (PyTorch) or `ptr` (CuPy).
pub fn stream_of(stream: Option<&Bound<'_, PyAny>>) -> PyResult<Stream> {
    let Some(s) = stream else { return Ok(Stream(1)) };
    let handle: usize = if let Ok(h) = s.extract::<usize>() {
        h
    } else if s.hasattr("__cuda_stream__")? {
        let pair: (i64, usize) = s.call_method0("__cuda_stream__")?.extract()?;
        pair.1
    } else if s.hasattr("cuda_stream")? {
        s.getattr("cuda_stream")?.extract()?
    } else if s.hasattr("ptr")? {
        s.getattr("ptr")?.extract()?
    } else {
        return Err(PyTypeError::new_err(
            "stream= takes a CUDA stream: an int handle, or a torch/cupy stream (cuda_stream, ptr, __cuda_stream__)",
        ));
    };
    // Handle 0 is the default stream, which is the legacy one where slc runs.
    Ok(Stream(if handle == 0 { 1 } else { handle }))
}

/// An input taken from a producer: the array in place, released when this drops.
pub struct Imported {
    managed: *mut DLManagedTensor,
    pub array: DeviceArray,
}

impl Drop for Imported {
    fn drop(&mut self) {
        if self.managed.is_null() {
            return; // read through PyTorch's attributes: nothing to release
        }
        // SAFETY: the capsule was consumed (renamed), so calling its deleter once is ours.
        unsafe {
            if let Some(deleter) = (*self.managed).deleter {
                deleter(self.managed);
            }
        }
    }
}

/// `value`'s array on the device, its producer asked to order its work before `stream`.
pub fn import(value: &Bound<'_, PyAny>, name: &str, stream: Stream) -> PyResult<Imported> {
    if let Some(torch) = torch::types(value)
        && let Some(array) = torch.array(value, name, stream)?
    {
        return Ok(Imported { managed: std::ptr::null_mut(), array });
    }
    // Anything else — and a tensor PyTorch's attributes did not describe — through DLPack.
    let py = value.py();
    let kwargs = PyDict::new(py);
    kwargs.set_item("stream", stream.0)?;
    let capsule = value
        .call_method("__dlpack__", (), Some(&kwargs))
        .map_err(|e| PyTypeError::new_err(format!("input '{name}': __dlpack__ failed: {e}")))?;
    // SAFETY: capsule calls on a live object; the pointer is checked before use.
    let managed = unsafe {
        let p = ffi::PyCapsule_GetPointer(capsule.as_ptr(), DLTENSOR.as_ptr()) as *mut DLManagedTensor;
        if p.is_null() {
            ffi::PyErr_Clear();
            return Err(PyTypeError::new_err(format!(
                "input '{name}': __dlpack__ did not return a 'dltensor' capsule"
            )));
        }
        ffi::PyCapsule_SetName(capsule.as_ptr(), USED_DLTENSOR.as_ptr());
        p
    };
    // From here the deleter is ours to call: `Imported` calls it whatever follows.
    let mut imported =
        Imported { managed, array: DeviceArray { ptr: 0, dtype: DType::U8, shape: vec![], strides: None } };
    // SAFETY: a DLManagedTensor its producer filled in.
    let t = unsafe { &(*managed).dl_tensor };
    if i64::from(t.device.device_type) != DL_CUDA || t.device.device_id != 0 {
        return Err(PyValueError::new_err(format!(
            "input '{name}' is on device {} of type {}; slc runs on CUDA device 0",
            t.device.device_id, t.device.device_type
        )));
    }
    let Some(dtype) = dtype_of_dl(&t.dtype) else {
        return Err(PyTypeError::new_err(format!(
            "input '{name}' has a DLPack dtype slc does not read (code {}, {} bits, {} lanes)",
            t.dtype.code, t.dtype.bits, t.dtype.lanes
        )));
    };
    let ndim =
        usize::try_from(t.ndim).map_err(|_| PyValueError::new_err(format!("input '{name}': ndim < 0")))?;
    let read = |p: *const i64| -> Vec<i64> {
        match (p.is_null(), ndim) {
            (true, _) | (_, 0) => vec![],
            // SAFETY: DLPack's arrays of `ndim` entries.
            _ => unsafe { std::slice::from_raw_parts(p, ndim) }.to_vec(),
        }
    };
    let dims = read(t.shape);
    if dims.len() != ndim || dims.iter().any(|&d| d < 0) {
        return Err(PyValueError::new_err(format!("input '{name}': a DLPack shape {dims:?} of rank {ndim}")));
    }
    let strides = match t.strides.is_null() {
        true => None,
        false => Some(read(t.strides).iter().map(|&s| s as isize).collect()),
    };
    imported.array = DeviceArray {
        ptr: (t.data as u64).wrapping_add(t.byte_offset),
        dtype,
        shape: dims.iter().map(|&d| d as usize).collect(),
        strides,
    };
    Ok(imported)
}

/// A result in GPU memory (CUDA device 0), made by slc: a DLPack producer
/// (``torch.from_dlpack(r)``, ``cupy.from_dlpack(r)``, ``jax.dlpack.from_dlpack(r)``) with
/// ``__cuda_array_interface__`` too; ``get()`` copies it to a ``numpy.ndarray``.
#[pyclass(name = "DeviceArray", module = "slc", frozen)]
pub struct PyDeviceArray {
    memory: Mutex<DeviceMemory>,
    ptr: u64,
    dtype: DType,
    shape: Vec<usize>,
    /// The stream slc's work on it was queued on.
    stream: Stream,
}

/// What a DLPack export keeps alive: the dims it points to and the array.
struct Export {
    shape: Vec<i64>,
    _owner: Py<PyDeviceArray>,
}

unsafe extern "C" fn delete_export(m: *mut DLManagedTensor) {
    // SAFETY: made by `__dlpack__` below: both boxes are ours, freed once.
    unsafe {
        let m = Box::from_raw(m);
        let ctx = Box::from_raw(m.manager_ctx as *mut Export);
        Python::attach(|_| drop(ctx));
    }
}

unsafe extern "C" fn capsule_destructor(capsule: *mut ffi::PyObject) {
    // SAFETY: a capsule no consumer took still holds our tensor: delete it.
    unsafe {
        if ffi::PyCapsule_IsValid(capsule, DLTENSOR.as_ptr()) == 1 {
            let m = ffi::PyCapsule_GetPointer(capsule, DLTENSOR.as_ptr()) as *mut DLManagedTensor;
            if let Some(deleter) = (*m).deleter {
                deleter(m);
            }
        }
    }
}

impl PyDeviceArray {
    pub fn new(output: DeviceOutput, stream: Stream) -> PyDeviceArray {
        let ptr = output.memory.ptr;
        PyDeviceArray {
            memory: Mutex::new(output.memory),
            ptr,
            dtype: output.dtype,
            shape: output.shape,
            stream,
        }
    }
}

#[pymethods]
impl PyDeviceArray {
    #[pyo3(signature = (*, stream=None, max_version=None, dl_device=None, copy=None))]
    fn __dlpack__(
        slf: &Bound<'_, Self>,
        stream: Option<Bound<'_, PyAny>>,
        max_version: Option<Bound<'_, PyAny>>,
        dl_device: Option<(i64, i64)>,
        copy: Option<bool>,
    ) -> PyResult<Py<PyAny>> {
        let py = slf.py();
        let _ = max_version; // the legacy capsule, which every consumer still takes
        if dl_device.is_some_and(|d| d != (DL_CUDA, 0)) || copy == Some(true) {
            return Err(PyBufferError::new_err("slc.DeviceArray exports itself in place, on CUDA device 0"));
        }
        let me = slf.get();
        // DLPack: -1 no synchronization; None the legacy default stream.
        let consumer = match &stream {
            Some(s) if s.extract::<i64>().is_ok_and(|v| v == -1) => None,
            Some(s) => Some(stream_of(Some(s))?),
            None => Some(Stream(1)),
        };
        if let Some(consumer) = consumer {
            let gpu = slc::backend::cuda::device::device().map_err(cuda_error)?;
            gpu.order_after(consumer, me.stream).map_err(cuda_error)?;
            me.memory.lock().unwrap_or_else(|e| e.into_inner()).free_on(consumer);
        }
        let mut ctx = Box::new(Export {
            shape: me.shape.iter().map(|&d| d as i64).collect(),
            _owner: slf.clone().unbind(),
        });
        let managed = Box::new(DLManagedTensor {
            dl_tensor: DLTensor {
                data: me.ptr as *mut c_void,
                device: DLDevice { device_type: DL_CUDA as i32, device_id: 0 },
                ndim: me.shape.len() as i32,
                dtype: dl_of_dtype(me.dtype),
                shape: ctx.shape.as_mut_ptr(),
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: Box::into_raw(ctx) as *mut c_void,
            deleter: Some(delete_export),
        });
        // SAFETY: a capsule that owns the tensor until a consumer renames it.
        unsafe {
            let raw = Box::into_raw(managed);
            let capsule = ffi::PyCapsule_New(raw as *mut c_void, DLTENSOR.as_ptr(), Some(capsule_destructor));
            if capsule.is_null() {
                delete_export(raw);
                return Err(PyErr::fetch(py));
            }
            Ok(Bound::from_owned_ptr(py, capsule).unbind())
        }
    }

    fn __dlpack_device__(&self) -> (i64, i64) {
        (DL_CUDA, 0)
    }

    /// The CUDA array interface (version 3): CuPy, Numba and PyTorch read it.
    #[getter]
    fn __cuda_array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("shape", PyTuple::new(py, &self.shape)?)?;
        d.set_item("typestr", descr_of(py, self.dtype)?.getattr("str")?)?;
        d.set_item("data", (self.ptr, false))?;
        d.set_item("version", 3)?;
        d.set_item("strides", py.None())?;
        d.set_item("stream", self.stream.0)?;
        Ok(d)
    }

    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, &self.shape)
    }

    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(descr_of(py, self.dtype)?.into_any())
    }

    /// The device address of the first element.
    #[getter]
    fn data_ptr(&self) -> u64 {
        self.ptr
    }

    /// A copy on the host, as a ``numpy.ndarray`` (waits for slc's work on it).
    fn get<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let array =
            DeviceArray { ptr: self.ptr, dtype: self.dtype, shape: self.shape.clone(), strides: None };
        let gpu = slc::backend::cuda::device::device().map_err(cuda_error)?;
        gpu.order_after(Stream(1), self.stream).map_err(cuda_error)?;
        let tensor = py.detach(|| array.to_host()).map_err(cuda_error)?;
        crate::convert::array_of_tensor(py, tensor)?.into_bound_py_any(py)
    }

    fn __repr__(&self) -> String {
        format!(
            "slc.DeviceArray(shape={}, dtype={}, device=cuda:0)",
            show_shape(&self.shape),
            numpy_name(self.dtype)
        )
    }
}

/// Runs `kernel` on `values` (by name, in the kernel's order, each with whether it is on the
/// GPU — [`is_cuda`], asked once per call) where at least one is on the GPU:
/// device inputs in place, host arrays and Python ints copied to the device first; into `out`
/// (a device array) or a new `slc.DeviceArray`. A store without `out` updates its target, a
/// device array, and returns None (`Kernel::store_device`).
pub fn run_on_device<'py>(
    py: Python<'py>,
    kernel: &slc::Kernel,
    values: &[(String, Bound<'py, PyAny>, bool)],
    out: Option<&Bound<'py, PyAny>>,
    stream: Stream,
) -> PyResult<Bound<'py, PyAny>> {
    let gpu = slc::backend::cuda::device::device().map_err(|e| {
        errors::to_py(py, &slc::Error::from(slc::backend::RuntimeError::Cuda(e.to_string())), kernel.source())
    })?;
    let mut imported = Vec::with_capacity(values.len());
    let mut uploaded = Vec::new();
    let mut arrays = Vec::with_capacity(values.len());
    for ((name, value, on_device), (_, ty)) in values.iter().zip(kernel.inputs()) {
        if *on_device {
            let i = import(value, name, stream)?;
            arrays.push(i.array.clone());
            imported.push(i);
            continue;
        }
        // A host value beside device ones: copied over (a Python int as the input's dtype).
        let int_dtype = if ty.shape.is_empty() && ty.dtype.is_integer() { ty.dtype } else { DType::I64 };
        if value.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err(format!("input '{name}' is a bool, not an array")));
        }
        let held = crate::convert::hold(value, name, int_dtype)?;
        let tensor = held.view(name)?.to_tensor().map_err(|e| PyValueError::new_err(e.to_string()))?;
        let memory = gpu.upload(tensor.bytes(), stream).map_err(cuda_error)?;
        arrays.push(DeviceArray {
            ptr: memory.ptr,
            dtype: tensor.dtype(),
            shape: tensor.shape().to_vec(),
            strides: None,
        });
        uploaded.push(memory);
    }
    let plan = kernel.plan();
    let store_target = match (&plan.store, plan.output.buffer) {
        (Some(_), slc::plan::BufferId::Input(t)) if out.is_none() => Some(&*plan.inputs[t].name),
        _ => None,
    };
    let ran = match out {
        // `a[i] = v` stores into the device array bound to `a`, as on the host, and returns None.
        None if store_target.is_some() => {
            let target = store_target.unwrap_or_default();
            match values.iter().find(|(n, _, _)| n == target) {
                Some((_, value, true)) if is_immutable(value)? => {
                    return Err(PyTypeError::new_err(format!(
                        "the store's target `{target}` is a JAX array, which is immutable: pass out= for the updated copy"
                    )));
                }
                Some((_, _, true)) => {
                    // SAFETY: as below; the target is the producer's own writable memory.
                    unsafe { kernel.store_device(&arrays, stream) }.map(|()| py.None().into_bound(py))
                }
                _ => {
                    return Err(PyTypeError::new_err(format!(
                        "the store's target `{target}` must be on the GPU with the other inputs: slc stores into it in place"
                    )));
                }
            }
        }
        Some(out) => {
            let target = import(out, "out", stream)?;
            // SAFETY: every array is a producer's live device memory (held by `imported`,
            // `target`) or slc's own copy (`uploaded`), all of device 0, on `stream`.
            let result = unsafe { kernel.run_device_into(&arrays, &target.array, stream) };
            result.map(|()| out.clone())
        }
        // SAFETY: as above.
        None => unsafe { kernel.run_device(&arrays, stream) }
            .map(|output| Bound::new(py, PyDeviceArray::new(output, stream)).map(Bound::into_any))
            .and_then(|made| {
                made.map_err(|e| slc::Error::from(slc::backend::RuntimeError::Cuda(e.to_string())))
            }),
    };
    // The uploads are freed in the stream's order after the launch: nothing to wait for.
    drop(uploaded);
    ran.map_err(|e| errors::to_py(py, &e, kernel.source()))
}

/// Whether a producer's arrays may not be written (JAX's are immutable; its DLPack export
/// still hands out the memory).
fn is_immutable(value: &Bound<'_, PyAny>) -> PyResult<bool> {
    let module: String = value.get_type().getattr("__module__")?.extract()?;
    Ok(module == "jax" || module.starts_with("jax.") || module.starts_with("jaxlib"))
}

/// A kernel `slc.eval` compiled for device inputs: the text, the inputs' names, dtypes and
/// dims, and the values it read (a mask's, an operator parameter's) by position.
struct DeviceEntry {
    expr: String,
    types: Vec<(String, DType, Vec<usize>)>,
    values: Vec<(usize, Vec<u8>)>,
    kernel: std::sync::Arc<slc::Kernel>,
}

static EVAL_KERNELS: Mutex<Vec<DeviceEntry>> = Mutex::new(Vec::new());
const MAX_EVAL_KERNELS: usize = 64;

/// Forgets the kernels `slc.eval` kept for device inputs (`slc.clear_cache`).
pub fn clear_cache() {
    EVAL_KERNELS.lock().unwrap_or_else(|e| e.into_inner()).clear();
}

/// `slc.eval` where an input is on the GPU, on the legacy default stream, into a new
/// `slc.DeviceArray`. As on the host, a kernel is compiled for the inputs' dtypes and dims and
/// the values the front end reads (copied from the device: masks, short index lists), and kept.
pub fn eval_on_device<'py>(
    py: Python<'py>,
    expr: &str,
    inputs: &Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyAny>> {
    let cuda_failure = |e: &dyn std::fmt::Display| {
        errors::to_py(py, &slc::Error::from(slc::backend::RuntimeError::Cuda(e.to_string())), expr)
    };
    // No driver: the error before any producer is asked for its memory.
    slc::backend::cuda::device::device().map_err(|e| cuda_failure(&e))?;
    let mut values = Vec::with_capacity(inputs.len());
    let mut types = Vec::with_capacity(inputs.len());
    // Per input, its elements on the host where the front end may read them.
    let mut readable: Vec<Option<slc::Tensor>> = Vec::with_capacity(inputs.len());
    for (name, value) in inputs.iter() {
        let name: String = name.extract()?;
        let on_device = is_cuda(&value);
        let host = if on_device {
            let i = import(&value, &name, Stream(1))?;
            let a = &i.array;
            types.push((name.clone(), a.dtype, a.shape.clone()));
            match slc::sema::value_may_be_read(a.dtype, a.shape.iter().product()) {
                true => Some(slc::embed::elements_to_host(a).map_err(|e| errors::to_py(py, &e, expr))?),
                false => None,
            }
        } else {
            let held = crate::convert::hold(&value, &name, DType::I64)?;
            types.push((name.clone(), held.dtype(), held.shape().to_vec()));
            match slc::sema::value_may_be_read(held.dtype(), held.shape().iter().product()) {
                true => {
                    Some(held.view(&name)?.to_tensor().map_err(|e| PyValueError::new_err(e.to_string()))?)
                }
                false => None,
            }
        };
        readable.push(host);
        values.push((name, value, on_device));
    }
    let fits = |e: &DeviceEntry| {
        e.expr == expr
            && e.types == types
            && e.values
                .iter()
                .all(|(i, bytes)| readable[*i].as_ref().is_some_and(|t| t.bytes() == bytes.as_slice()))
    };
    let found = EVAL_KERNELS
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .iter()
        .find(|e| fits(e))
        .map(|e| e.kernel.clone());
    let kernel = match found {
        Some(kernel) => kernel,
        None => {
            let signatures: Vec<(String, slc::types::SymTensorType)> = (types.iter())
                .map(|(n, d, dims)| (n.clone(), slc::types::TensorType::of(*d, dims).generic()))
                .collect();
            let offered: slc::sema::InputValues = (types.iter().zip(&readable))
                .filter_map(|((n, _, _), t)| Some((n.clone(), t.clone()?)))
                .collect();
            let kernel = std::sync::Arc::new(crate::kernel::prepare(py, expr, &signatures, &offered)?);
            let read = kernel.fixed().map(|c| c.read.values.clone()).unwrap_or_default();
            let kept = (types.iter().enumerate())
                .filter(|(_, (n, _, _))| read.contains(n))
                .filter_map(|(i, _)| Some((i, readable[i].as_ref()?.bytes().to_vec())))
                .collect();
            let mut kernels = EVAL_KERNELS.lock().unwrap_or_else(|e| e.into_inner());
            if kernels.len() >= MAX_EVAL_KERNELS {
                kernels.remove(0);
            }
            kernels.push(DeviceEntry { expr: expr.to_string(), types, values: kept, kernel: kernel.clone() });
            kernel
        }
    };
    run_on_device(py, &kernel, &values, None, Stream(1))
}

/// PyTorch's tensors read through their attributes rather than `__dlpack__`: the same facts
/// (pointer, dtype, dims, strides, device) and the same stream handshake (slc's stream waits
/// for PyTorch's current stream when they differ), at a tenth of the cost — `Tensor.__dlpack__`
/// is Python code that costs more than the rest of a small call. Exactly `torch.Tensor` only
/// (a subclass may override what it reports), and only once the program has imported torch.
mod torch {
    use super::{DeviceArray, Stream, cuda_error};
    use pyo3::exceptions::PyValueError;
    use pyo3::prelude::*;
    use pyo3::sync::PyOnceLock;
    use pyo3::types::{PyTuple, PyType};
    use slc::DType;

    pub struct Torch {
        tensor: Py<PyType>,
        dtypes: Vec<(Py<PyAny>, DType)>,
        current_stream: Option<Py<PyAny>>,
    }

    static TORCH: PyOnceLock<Torch> = PyOnceLock::new();

    /// PyTorch's types when `value` is exactly a `torch.Tensor`.
    pub fn types(value: &Bound<'_, PyAny>) -> Option<&'static Torch> {
        let py = value.py();
        let ty = value.get_type();
        if let Some(torch) = TORCH.get(py) {
            return ty.is(torch.tensor.bind(py)).then_some(torch);
        }
        // Loaded at the first tensor met: only a program that uses PyTorch pays for it.
        let named = ty.module().is_ok_and(|m| m == "torch") && ty.name().is_ok_and(|n| n == "Tensor");
        if !named {
            return None;
        }
        let torch = TORCH.get_or_try_init(py, || load(py)).ok()?;
        ty.is(torch.tensor.bind(py)).then_some(torch)
    }

    fn load(py: Python<'_>) -> PyResult<Torch> {
        let torch = py.import("torch")?;
        let tensor = torch.getattr("Tensor")?.cast_into::<PyType>()?.unbind();
        let names = [
            ("float32", DType::F32),
            ("float64", DType::F64),
            ("float16", DType::F16),
            ("bfloat16", DType::BF16),
            ("int8", DType::I8),
            ("int16", DType::I16),
            ("int32", DType::I32),
            ("int64", DType::I64),
            ("uint8", DType::U8),
            ("uint16", DType::U16),
            ("uint32", DType::U32),
            ("uint64", DType::U64),
            ("bool", DType::Bool),
            ("complex64", DType::C64),
            ("complex128", DType::C128),
        ];
        let dtypes = names.iter().filter_map(|(n, d)| Some((torch.getattr(*n).ok()?.unbind(), *d))).collect();
        let current_stream =
            torch.getattr("_C").and_then(|c| c.getattr("_cuda_getCurrentRawStream")).ok().map(Bound::unbind);
        Ok(Torch { tensor, dtypes, current_stream })
    }

    impl Torch {
        pub fn is_cuda(&self, value: &Bound<'_, PyAny>) -> bool {
            value.getattr(pyo3::intern!(value.py(), "is_cuda")).and_then(|v| v.extract()).unwrap_or(false)
        }

        /// The tensor in place, PyTorch's current stream ordered before `stream`; `None` where
        /// only `__dlpack__` can tell.
        pub fn array(
            &self,
            value: &Bound<'_, PyAny>,
            name: &str,
            stream: Stream,
        ) -> PyResult<Option<DeviceArray>> {
            // Attributes that do not describe the tensor leave it to `__dlpack__`.
            match self.attributes(value).ok().flatten() {
                Some((array, device)) if device == 0 => {
                    self.order(value.py(), device, stream)?;
                    Ok(Some(array))
                }
                Some((_, device)) => Err(PyValueError::new_err(format!(
                    "input '{name}' is on cuda:{device}; slc runs on CUDA device 0"
                ))),
                None => Ok(None),
            }
        }

        /// slc's stream made to wait for PyTorch's current stream when they differ.
        fn order(&self, py: Python<'_>, device: i64, stream: Stream) -> PyResult<()> {
            let Some(current) = &self.current_stream else { return Ok(()) };
            let theirs: usize = current.bind(py).call1((device,))?.extract()?;
            // PyTorch names the legacy default stream 0; slc's default is the same stream.
            let theirs = Stream(if theirs == 0 { 1 } else { theirs });
            let gpu = slc::backend::cuda::device::device().map_err(cuda_error)?;
            gpu.order_after(stream, theirs).map_err(cuda_error)
        }

        /// The tensor's array and device; `None` for a dtype slc does not know or a lazily
        /// conjugated or negated complex tensor (PyTorch's `__dlpack__` refuses it, by name).
        fn attributes(&self, value: &Bound<'_, PyAny>) -> PyResult<Option<(DeviceArray, i64)>> {
            let py = value.py();
            let dtype = value.getattr(pyo3::intern!(py, "dtype"))?;
            let Some(dtype) = self.dtypes.iter().find(|(d, _)| d.bind(py).is(&dtype)).map(|(_, d)| *d) else {
                return Ok(None);
            };
            if matches!(dtype, DType::C64 | DType::C128)
                && (value.call_method0("is_conj")?.extract::<bool>()?
                    || value.call_method0("is_neg")?.extract::<bool>()?)
            {
                return Ok(None);
            }
            let device: i64 = value.call_method0(pyo3::intern!(py, "get_device"))?.extract()?;
            let ptr: u64 = value.call_method0(pyo3::intern!(py, "data_ptr"))?.extract()?;
            let shape: Vec<usize> = value.getattr(pyo3::intern!(py, "shape"))?.extract()?;
            let strides: Vec<isize> =
                value.call_method0(pyo3::intern!(py, "stride"))?.cast_into::<PyTuple>()?.extract()?;
            if strides.len() != shape.len() {
                return Ok(None);
            }
            Ok(Some((DeviceArray { ptr, dtype, shape, strides: Some(strides) }, device)))
        }
    }
}
