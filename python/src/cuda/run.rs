//! Running kernels on device arrays: a prepared kernel (`Kernel.__call__`), and `slc.eval` with
//! the kernels it keeps for device inputs.

use super::{PyDeviceArray, cuda_error, import, is_cuda};
use crate::errors;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict};
use slc::DType;
use slc::embed::{DeviceArray, Stream};
use std::sync::Mutex;

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
        let int_dtype = crate::convert::python_int_dtype(ty);
        if value.is_instance_of::<PyBool>() {
            return Err(PyTypeError::new_err(format!("input '{name}' is a bool, not an array")));
        }
        let held = crate::convert::hold(value, name, Some(int_dtype))?;
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
    /// The inputs given as Python `int`s.
    python_ints: Vec<String>,
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
    let mut python_ints = vec![];
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
            let held = crate::convert::hold(&value, &name, None)?;
            types.push((name.clone(), held.dtype(), held.shape().to_vec()));
            if held.is_python_int() {
                python_ints.push(name.clone());
            }
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
            && e.python_ints == python_ints
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
            let mut offered: slc::sema::InputValues = (types.iter().zip(&readable))
                .filter_map(|((n, _, _), t)| Some((n.clone(), t.clone()?)))
                .collect();
            offered.mark_python_ints(&python_ints);
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
            kernels.push(DeviceEntry {
                expr: expr.to_string(),
                types,
                python_ints,
                values: kept,
                kernel: kernel.clone(),
            });
            kernel
        }
    };
    crate::convert::numpy_scalars_fit(&kernel, inputs)?;
    run_on_device(py, &kernel, &values, None, Stream(1))
}
