//! PyTorch's tensors read through their attributes rather than `__dlpack__`: the same facts
//! (pointer, dtype, dims, strides, device) and the same stream handshake (slc's stream waits
//! for PyTorch's current stream when they differ), at a tenth of the cost — `Tensor.__dlpack__`
//! is Python code that costs more than the rest of a small call. Exactly `torch.Tensor` only
//! (a subclass may override what it reports), and only once the program has imported torch.

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
