//! NumPy arrays and dtypes ↔ slc views and dtypes, without copying the elements.

use numpy::npyffi::flags::NPY_ARRAY_WRITEABLE;
use numpy::{
    Element, IxDyn, PyArray, PyArrayDescr, PyArrayDescrMethods, PyArrayMethods, PyUntypedArray,
    PyUntypedArrayMethods,
};
use pyo3::exceptions::{PyOverflowError, PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::{PyBool, PyDict, PyInt, PyModule, PyTuple};
use slc::{DType, TensorView};

static NUMPY: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

pub fn numpy(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    NUMPY.get_or_try_init(py, || Ok(PyModule::import(py, "numpy")?.unbind())).map(|m| m.bind(py))
}

/// slc's dtype for a NumPy dtype, by kind and size (so `int64`, `long` and `'<i8'` agree).
/// `None` for dtypes slc does not have (object, strings, datetimes, records...).
pub fn dtype_of_descr(descr: &Bound<'_, PyArrayDescr>) -> Option<DType> {
    if descr.has_fields() || descr.has_subarray() {
        return None;
    }
    Some(match (descr.kind(), descr.itemsize()) {
        (b'b', 1) => DType::Bool,
        (b'i', 1) => DType::I8,
        (b'i', 2) => DType::I16,
        (b'i', 4) => DType::I32,
        (b'i', 8) => DType::I64,
        (b'u', 1) => DType::U8,
        (b'u', 2) => DType::U16,
        (b'u', 4) => DType::U32,
        (b'u', 8) => DType::U64,
        (b'f', 2) => DType::F16,
        (b'f', 4) => DType::F32,
        (b'f', 8) => DType::F64,
        (b'c', 8) => DType::C64,
        (b'c', 16) => DType::C128,
        // ml_dtypes' bfloat16 (a NumPy user dtype: kind 'V', named by its type).
        (b'V', 2) if is_bfloat16(descr) => DType::BF16,
        _ => return None,
    })
}

fn is_bfloat16(descr: &Bound<'_, PyArrayDescr>) -> bool {
    descr.getattr("name").and_then(|n| n.extract::<String>()).is_ok_and(|n| n == "bfloat16")
}

static BFLOAT16: PyOnceLock<Py<PyArrayDescr>> = PyOnceLock::new();

/// `numpy.dtype(ml_dtypes.bfloat16)`; bfloat16 needs the optional `ml_dtypes` package.
fn bfloat16(py: Python<'_>) -> PyResult<Bound<'_, PyArrayDescr>> {
    BFLOAT16
        .get_or_try_init(py, || {
            let scalar =
                PyModule::import(py, "ml_dtypes").and_then(|m| m.getattr("bfloat16")).map_err(|_| {
                    PyTypeError::new_err("bfloat16 needs the ml_dtypes package (pip install ml_dtypes)")
                })?;
            let descr = numpy(py)?.getattr("dtype")?.call1((scalar,))?;
            Ok::<_, PyErr>(descr.cast_into::<PyArrayDescr>().map_err(PyErr::from)?.unbind())
        })
        .map(|d| d.bind(py).clone())
}

/// NumPy's name for an slc dtype (`float32`), as messages and `numpy.dtype` spell it.
pub fn numpy_name(dtype: DType) -> &'static str {
    match dtype {
        DType::Bool => "bool",
        DType::I8 => "int8",
        DType::I16 => "int16",
        DType::I32 => "int32",
        DType::I64 => "int64",
        DType::U8 => "uint8",
        DType::U16 => "uint16",
        DType::U32 => "uint32",
        DType::U64 => "uint64",
        DType::F16 => "float16",
        DType::BF16 => "bfloat16",
        DType::F32 => "float32",
        DType::F64 => "float64",
        DType::C64 => "complex64",
        DType::C128 => "complex128",
    }
}

/// The `numpy.dtype` of an slc dtype.
pub fn descr_of(py: Python<'_>, dtype: DType) -> PyResult<Bound<'_, PyArrayDescr>> {
    Ok(match dtype {
        DType::Bool => numpy::dtype::<bool>(py),
        DType::I8 => numpy::dtype::<i8>(py),
        DType::I16 => numpy::dtype::<i16>(py),
        DType::I32 => numpy::dtype::<i32>(py),
        DType::I64 => numpy::dtype::<i64>(py),
        DType::U8 => numpy::dtype::<u8>(py),
        DType::U16 => numpy::dtype::<u16>(py),
        DType::U32 => numpy::dtype::<u32>(py),
        DType::U64 => numpy::dtype::<u64>(py),
        DType::F16 => numpy::dtype::<half::f16>(py),
        DType::F32 => numpy::dtype::<f32>(py),
        DType::F64 => numpy::dtype::<f64>(py),
        DType::C64 => numpy::dtype::<numpy::Complex32>(py),
        DType::C128 => numpy::dtype::<numpy::Complex64>(py),
        DType::BF16 => bfloat16(py)?,
    })
}

/// A shape as Python shows it: `(4, 5)`, `(3,)`, `()`.
pub fn show_shape(shape: &[usize]) -> String {
    match shape {
        [d] => format!("({d},)"),
        _ => format!("({})", shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    }
}

/// `numpy.dtype(spec)` for any spelling NumPy takes (`"f4"`, `np.float32`, `"float32"`...).
pub fn dtype_from_spec(spec: &Bound<'_, PyAny>, what: &str) -> PyResult<DType> {
    let py = spec.py();
    // NumPy knows the name only as ml_dtypes' type, not as a string.
    if spec.extract::<&str>().is_ok_and(|s| s == "bfloat16") {
        bfloat16(py)?;
        return Ok(DType::BF16);
    }
    let descr = numpy(py)?
        .getattr("dtype")?
        .call1((spec,))
        .map_err(|e| PyTypeError::new_err(format!("{what}: {spec} is not a NumPy dtype ({e})")))?;
    let descr = descr.cast_into::<PyArrayDescr>().map_err(PyErr::from)?;
    dtype_of_descr(&descr).ok_or_else(|| {
        PyTypeError::new_err(format!("{what}: slc has no dtype {} (it has bool, int8..uint64, float16, float32, float64, complex64, complex128, and bfloat16 with ml_dtypes)", descr))
    })
}

/// One input as the kernel reads it: a NumPy array (the caller's, or one NumPy made from a
/// buffer without copying), or a Python integer stored here.
pub enum Held<'py> {
    Array {
        array: Bound<'py, PyUntypedArray>,
        dtype: DType,
        /// The caller's dtype where it is byte-swapped (`>i4` on a little-endian machine):
        /// `array` is then a native copy, and a result read from it goes back in this order.
        swapped: Option<Bound<'py, PyArrayDescr>>,
    },
    /// Little-endian bytes of a 0-d integer of `dtype` (only the first `width` are read).
    Scalar { bytes: [u8; 8], dtype: DType },
}

impl<'py> Held<'py> {
    pub fn dtype(&self) -> DType {
        match self {
            Held::Array { dtype, .. } | Held::Scalar { dtype, .. } => *dtype,
        }
    }

    pub fn shape(&self) -> &[usize] {
        match self {
            Held::Array { array, .. } => array.shape(),
            Held::Scalar { .. } => &[],
        }
    }

    /// A view of the elements in place, with NumPy's byte strides.
    pub fn view(&self, name: &str) -> PyResult<TensorView<'_>> {
        match self {
            Held::Array { array, dtype, .. } => {
                // SAFETY: NumPy guarantees every element its shape and strides reach from `data`
                // is readable; `array` is borrowed (so kept alive) while the view is.
                let data = data_ptr(array) as *const u8;
                unsafe { TensorView::from_raw(*dtype, array.shape(), Some(array.strides()), data) }
                    .map_err(|e| PyValueError::new_err(format!("input '{name}': {e}")))
            }
            Held::Scalar { bytes, dtype } => {
                // SAFETY: `bytes` holds the one element (at most 8 bytes) and outlives the view.
                unsafe { TensorView::from_raw(*dtype, &[], None, bytes.as_ptr()) }
                    .map_err(|e| PyValueError::new_err(format!("input '{name}': {e}")))
            }
        }
    }

    /// Whether this is a Python `int`, which NumPy converts by its value ("weak", NEP 50)
    /// where it casts a NumPy integer (`slc::sema::InputValues::is_python_int`).
    pub fn is_python_int(&self) -> bool {
        matches!(self, Held::Scalar { .. })
    }

    /// The byte range the elements span (for overlap checks against `out=`).
    pub fn byte_range(&self) -> Option<(usize, usize)> {
        match self {
            Held::Array { array, .. } => array_byte_range(array),
            Held::Scalar { .. } => None,
        }
    }
}

/// Element `[0, ..., 0]` of an array.
pub fn data_ptr(array: &Bound<'_, PyUntypedArray>) -> *mut u8 {
    // SAFETY: reading a field of a live array object.
    unsafe { (*array.as_array_ptr()).fields.data as *mut u8 }
}

/// `[first, end)` of the bytes an array's elements occupy; `None` when it has none.
pub fn array_byte_range(array: &Bound<'_, PyUntypedArray>) -> Option<(usize, usize)> {
    let shape = array.shape();
    if shape.contains(&0) {
        return None;
    }
    let (data, width) = (data_ptr(array) as isize, array.dtype().itemsize() as isize);
    let (mut lo, mut hi) = (data, data);
    for (&d, &s) in shape.iter().zip(array.strides()) {
        let span = (d as isize - 1) * s;
        if span < 0 { lo += span } else { hi += span }
    }
    Some((lo as usize, (hi + width) as usize))
}

/// The dtype a Python `int` given for an input of type `ty` is held as: a 0-d integer input's
/// own (whichever width it was compiled for), else int64 (which the type check then refuses).
pub fn python_int_dtype(ty: &slc::types::SymTensorType) -> DType {
    match ty.shape.is_empty() && ty.dtype.is_integer() {
        true => ty.dtype,
        false => DType::I64,
    }
}

/// Makes `value` an input: arrays as they are; Python integers (not bools) as 0-d integers of
/// `int_dtype` (`None`, where no type is declared: int64, or uint64 for one from 2**63 up that a
/// uint64 holds, `u64[0] = 2**64 - 1`); anything else through `numpy.asarray` (buffers,
/// `__array_interface__`, lists). Byte-swapped arrays are the one case that is copied (slc
/// reads native byte order).
pub fn hold<'py>(value: &Bound<'py, PyAny>, name: &str, int_dtype: Option<DType>) -> PyResult<Held<'py>> {
    if let Ok(array) = value.cast::<PyUntypedArray>() {
        return held_array(array.clone(), name);
    }
    if value.is_instance_of::<PyInt>() && !value.is_instance_of::<PyBool>() {
        let dtype = int_dtype.unwrap_or_else(|| match value.extract::<i64>() {
            Err(_) if value.extract::<u64>().is_ok() => DType::U64,
            _ => DType::I64,
        });
        if dtype.is_integer() {
            return Ok(Held::Scalar { bytes: int_bytes(value, name, dtype)?, dtype });
        }
    }
    // A DLPack producer (PyTorch, JAX, CuPy): host memory is taken without a copy; memory on a
    // device is refused by name before any library call could copy or fail on it.
    let convert = match dlpack_device(value)? {
        Some((kind, _)) if HOST_DLPACK_DEVICES.contains(&kind) => "from_dlpack",
        Some((kind, id)) => {
            return Err(PyTypeError::new_err(format!(
                "input '{name}' is in device memory (DLPack device type {kind}, id {id}) that slc \
                 does not run on: slc reads host memory and CUDA device memory"
            )));
        }
        None => "asarray",
    };
    let array = numpy(value.py())?
        .getattr(convert)?
        .call1((value,))
        .map_err(|e| PyTypeError::new_err(format!("input '{name}' is not an array or buffer: {e}")))?;
    let array = array.cast_into::<PyUntypedArray>().map_err(PyErr::from)?;
    held_array(array, name)
}

/// DLPack's host device types: CPU, CUDA-pinned host memory, CUDA managed memory.
const HOST_DLPACK_DEVICES: [i64; 3] = [1, 3, 13];

/// `value.__dlpack_device__()` as `(device type, id)`, when `value` has it.
pub fn dlpack_device(value: &Bound<'_, PyAny>) -> PyResult<Option<(i64, i64)>> {
    if !value.hasattr("__dlpack_device__")? {
        return Ok(None);
    }
    let device = value.call_method0("__dlpack_device__")?;
    let (kind, id): (Bound<'_, PyAny>, Bound<'_, PyAny>) = device.extract()?;
    // An IntEnum (PyTorch's, NumPy's) converts through int().
    let int = |v: Bound<'_, PyAny>| -> PyResult<i64> { v.call_method0("__index__")?.extract() };
    Ok(Some((int(kind)?, int(id)?)))
}

fn held_array<'py>(array: Bound<'py, PyUntypedArray>, name: &str) -> PyResult<Held<'py>> {
    let descr = array.dtype();
    let Some(dtype) = dtype_of_descr(&descr) else {
        return Err(PyTypeError::new_err(format!(
            "input '{name}' has dtype {descr}, which slc does not have (it has bool, int8..uint64, float16, float32, float64, complex64, complex128, and bfloat16 with ml_dtypes)"
        )));
    };
    if descr.is_native_byteorder() == Some(false) {
        let native = descr.call_method1("newbyteorder", ("=",))?;
        let swapped =
            array.call_method1("astype", (native,))?.cast_into::<PyUntypedArray>().map_err(PyErr::from)?;
        return Ok(Held::Array { array: swapped, dtype, swapped: Some(descr) });
    }
    Ok(Held::Array { array, dtype, swapped: None })
}

/// OverflowError where the Python `int` `held` (held as a 0-d integer) has no value of the
/// integer `dtype` that a store converts it to, as NumPy's conversion of a Python `int` raises
/// (`np.zeros(1, np.uint8)[0] = 300`); into a float, complex or bool it converts as cast.
pub fn python_int_fits(held: &Held<'_>, name: &str, dtype: DType) -> PyResult<()> {
    let value = held.view(name)?.to_tensor().ok().and_then(|t| t.int_at(0));
    let fits = match (value, dtype.is_integer()) {
        (_, false) => true,
        (Some(v), true) => integer_fits(v, dtype),
        (None, true) => false,
    };
    match fits {
        true => Ok(()),
        false => Err(PyOverflowError::new_err(format!(
            "input '{name}': Python integer {} out of bounds for {}",
            value.map_or_else(|| "?".into(), |v| v.to_string()),
            numpy_name(dtype)
        ))),
    }
}

/// Whether the integer `dtype` holds `v`.
fn integer_fits(v: i128, dtype: DType) -> bool {
    let bits = dtype.width() as u32 * 8;
    match dtype.is_signed() {
        true => v >= -(1i128 << (bits - 1)) && v < 1i128 << (bits - 1),
        false => v >= 0 && v < 1i128 << bits,
    }
}

/// OverflowError where an input `kernel` stores with `=` through basic subscripts into a
/// signed integer target is a NumPy integer *scalar* the target's dtype does not hold: NumPy's
/// setitem converts such a scalar by its value (`i8[0] = np.int16(300)` raises) where it casts
/// a 0-d array (`np.array(300, np.int16)` is stored as 44), and so does the kernel, which casts
/// both (`slc::sema::InputsRead::setitem_scalars`). Checked before anything runs.
pub fn numpy_scalars_fit(kernel: &slc::Kernel, inputs: &Bound<'_, PyDict>) -> PyResult<()> {
    let scalars = &kernel.program().read.setitem_scalars;
    if scalars.is_empty() {
        return Ok(());
    }
    let integer = numpy(inputs.py())?.getattr("integer")?;
    for (name, &dtype) in scalars {
        let Some(value) = inputs.get_item(name)? else { continue };
        if !value.is_instance(&integer)? {
            continue;
        }
        let v: i128 = value.call_method0("__index__")?.extract()?;
        if !integer_fits(v, dtype) {
            return Err(PyOverflowError::new_err(format!(
                "input '{name}': Python integer {v} out of bounds for {}: NumPy stores a NumPy integer \
                 scalar through basic subscripts by its value (a 0-d array it casts)",
                numpy_name(dtype)
            )));
        }
    }
    Ok(())
}

/// A Python integer as the little-endian bytes of `dtype`, or OverflowError.
fn int_bytes(value: &Bound<'_, PyAny>, name: &str, dtype: DType) -> PyResult<[u8; 8]> {
    let overflow =
        || PyOverflowError::new_err(format!("input '{name}': {value} does not fit in {}", numpy_name(dtype)));
    let mut bytes = [0u8; 8];
    macro_rules! put {
        ($t:ty) => {{
            let v: $t = value.extract().map_err(|_| overflow())?;
            let b = v.to_le_bytes();
            bytes[..b.len()].copy_from_slice(&b);
        }};
    }
    match dtype {
        DType::I8 => put!(i8),
        DType::I16 => put!(i16),
        DType::I32 => put!(i32),
        DType::I64 => put!(i64),
        DType::U8 => put!(u8),
        DType::U16 => put!(u16),
        DType::U32 => put!(u32),
        DType::U64 => put!(u64),
        _ => {
            return Err(PyTypeError::new_err(format!(
                "input '{name}': an integer where {} is needed",
                numpy_name(dtype)
            )));
        }
    }
    Ok(bytes)
}

/// Outputs up to this size are allocated through rust-numpy directly (fast); larger ones
/// through `numpy.empty`, which turns a failed allocation into `MemoryError` where the direct
/// path would panic.
const DIRECT_ALLOCATION_BYTES: usize = 1 << 20;

fn numpy_empty<'py>(py: Python<'py>, dtype: DType, shape: &[usize]) -> PyResult<Bound<'py, PyUntypedArray>> {
    let shape = PyTuple::new(py, shape)?;
    let array = numpy(py)?.getattr("empty")?.call1((shape, descr_of(py, dtype)?))?;
    array.cast_into::<PyUntypedArray>().map_err(PyErr::from)
}

/// The owner of a result's memory when it lives in an slc tensor: the NumPy array's `base`,
/// dropped (returning large buffers to slc's pool of mapped pages) when the array goes.
#[pyclass(frozen, weakref, module = "slc._slc", name = "_TensorMemory")]
pub struct TensorMemory {
    #[allow(dead_code)] // held for its memory, read only through the array's data pointer
    tensor: slc::Tensor,
}

/// A NumPy array over `tensor`'s elements, owning it (through a [`TensorMemory`] base).
pub fn array_of_tensor(py: Python<'_>, mut tensor: slc::Tensor) -> PyResult<Bound<'_, PyUntypedArray>> {
    use numpy::npyffi::{NpyTypes, PY_ARRAY_API, get_type_object, npy_intp};
    let descr = descr_of(py, tensor.dtype())?;
    let mut dims: Vec<npy_intp> = tensor.shape().iter().map(|&d| d as npy_intp).collect();
    let data = tensor.as_mut_ptr();
    let owner = Bound::new(py, TensorMemory { tensor })?;
    // SAFETY: `data` holds the tensor's elements, dense and C-ordered, for as long as `owner`
    // lives; the array keeps `owner` alive as its base (SetBaseObject steals the reference
    // handed to it, NewFromDescr the descriptor's).
    unsafe {
        let array = PY_ARRAY_API.PyArray_NewFromDescr(
            py,
            get_type_object(py, NpyTypes::PyArray_Type),
            descr.into_dtype_ptr(),
            dims.len() as std::ffi::c_int,
            dims.as_mut_ptr(),
            std::ptr::null_mut(),
            data.cast(),
            NPY_ARRAY_WRITEABLE,
            std::ptr::null_mut(),
        );
        let array = Bound::from_owned_ptr_or_err(py, array)?;
        if PY_ARRAY_API.PyArray_SetBaseObject(py, array.as_ptr().cast(), owner.into_ptr()) < 0 {
            return Err(PyErr::fetch(py));
        }
        array.cast_into::<PyUntypedArray>().map_err(PyErr::from)
    }
}

/// A new, uninitialized, C-ordered array for a kernel to fill.
pub fn empty_array<'py>(
    py: Python<'py>,
    dtype: DType,
    shape: &[usize],
    nbytes: usize,
) -> PyResult<Bound<'py, PyUntypedArray>> {
    if nbytes > DIRECT_ALLOCATION_BYTES {
        return numpy_empty(py, dtype, shape);
    }
    fn direct<'py, T: Element>(py: Python<'py>, shape: &[usize]) -> Bound<'py, PyUntypedArray> {
        // SAFETY: the array is uninitialized; the caller's kernel writes every element before
        // Python sees it (or the array is dropped on error).
        let array = unsafe { PyArray::<T, IxDyn>::new(py, IxDyn(shape), false) };
        array.as_untyped().clone()
    }
    Ok(match dtype {
        DType::Bool => direct::<bool>(py, shape),
        DType::I8 => direct::<i8>(py, shape),
        DType::I16 => direct::<i16>(py, shape),
        DType::I32 => direct::<i32>(py, shape),
        DType::I64 => direct::<i64>(py, shape),
        DType::U8 => direct::<u8>(py, shape),
        DType::U16 => direct::<u16>(py, shape),
        DType::U32 => direct::<u32>(py, shape),
        DType::U64 => direct::<u64>(py, shape),
        DType::F16 => direct::<half::f16>(py, shape),
        DType::F32 => direct::<f32>(py, shape),
        DType::F64 => direct::<f64>(py, shape),
        DType::C64 => direct::<numpy::Complex32>(py, shape),
        DType::C128 => direct::<numpy::Complex64>(py, shape),
        // ml_dtypes' type has no rust-numpy Element.
        DType::BF16 => numpy_empty(py, dtype, shape)?,
    })
}

/// The writable bytes of `out=`, after checking it is a writable, C-contiguous NumPy array of
/// `dtype` and `shape` (a clear TypeError or ValueError otherwise).
pub fn output_bytes<'py>(
    out: &Bound<'py, PyAny>,
    dtype: DType,
    shape: &[usize],
    nbytes: usize,
) -> PyResult<(Bound<'py, PyUntypedArray>, *mut u8)> {
    let array = out.cast::<PyUntypedArray>().map_err(|_| {
        PyTypeError::new_err(format!(
            "out= must be a numpy.ndarray, not {}",
            out.get_type().name().map(|n| n.to_string()).unwrap_or_default()
        ))
    })?;
    let descr = array.dtype();
    if dtype_of_descr(&descr) != Some(dtype) || descr.is_native_byteorder() == Some(false) {
        return Err(PyTypeError::new_err(format!(
            "out= has dtype {descr}, but the result is {}",
            numpy_name(dtype)
        )));
    }
    if array.shape() != shape {
        return Err(PyValueError::new_err(format!(
            "out= has shape {}, but the result has shape {}",
            show_shape(array.shape()),
            show_shape(shape)
        )));
    }
    // SAFETY: reading the flags of a live array.
    let flags = unsafe { (*array.as_array_ptr()).fields.flags };
    let data = data_ptr(array);
    if flags & NPY_ARRAY_WRITEABLE == 0 {
        return Err(PyValueError::new_err("out= is read-only"));
    }
    if !array.is_c_contiguous() {
        return Err(PyValueError::new_err("out= must be C-contiguous"));
    }
    debug_assert_eq!(array.len() * dtype.width(), nbytes);
    Ok((array.clone(), data))
}
