//! `slc.DeviceArray`: a result in GPU memory, exported through DLPack and
//! `__cuda_array_interface__`, or copied to the host.

use super::{DL_CUDA, DLDevice, DLManagedTensor, DLTENSOR, DLTensor, cuda_error, dl_of_dtype, stream_of};
use crate::convert::{descr_of, numpy_name, show_shape};
use pyo3::IntoPyObjectExt;
use pyo3::exceptions::PyBufferError;
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyTuple};
use slc::DType;
use slc::embed::{DeviceArray, DeviceMemory, DeviceOutput, Stream};
use std::ffi::c_void;
use std::sync::Mutex;

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
