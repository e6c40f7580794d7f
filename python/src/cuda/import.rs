//! Reading device arrays from their producers: whether a value is on the GPU, the stream of
//! `stream=`, and a producer's array taken in place through DLPack (or PyTorch's attributes).

use super::{DL_CUDA, DLManagedTensor, DLTENSOR, USED_DLTENSOR, dtype_of_dl, torch};
use numpy::PyUntypedArray;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt};
use slc::DType;
use slc::embed::{DeviceArray, Stream};

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
    // A null pointer to elements would fault on the device, leaving its context unusable.
    if t.data.is_null() && dims.iter().all(|&d| d > 0) {
        return Err(PyValueError::new_err(format!(
            "input '{name}': __dlpack__ gave a null data pointer for a DLPack shape {dims:?}"
        )));
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
