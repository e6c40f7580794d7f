//! `slc._slc`, the extension module behind `import slc`: compile slice programs into kernels
//! and run them over NumPy arrays in place. The Python package (`slc/__init__.py`) re-exports
//! it with the exception classes (`slc/_errors.py`) and the type stub.

mod convert;
mod cuda;
mod errors;
mod kernel;
mod run;
mod zarr;

use convert::{Held, dtype_from_spec, hold};
use kernel::{PyKernel, prepare};
use numpy::{PyArrayDescr, PyUntypedArray};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyInt, PyString, PyTuple};
use slc::DType;
use slc::sema::InputValues;
use slc::types::{SymTensorType, TensorType};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Compiles the slice program ``expr`` (e.g. ``"a[1:3, ::-1]"``, ``"x[i, ..., None]"``,
/// ``"slice(a, [1], [3], axes=[0])"``) for inputs of the given types, once, into a
/// ``Kernel`` to call many times. Each type is an example array (its dtype and shape), a
/// ``(dtype, shape)`` pair in any NumPy dtype spelling (``("float32", (4, 5))``,
/// ``(np.int64, ())``), or a Python ``int`` (a 0-d int64; from 2**63 up, uint64). The GIL is
/// released while compiling.
///
/// Errors in the program raise ``slc.Error`` subclasses (``slc.ParseError``,
/// ``slc.CompileError``, ``slc.IndexError``) with ``.code``, ``.span`` and ``.message``.
/// Operator parameters read from inputs (``slice(a, s, e)``) and boolean masks (``a[m]``) need
/// the values: pass example arrays for those, and call the kernel with the same values.
#[pyfunction]
#[pyo3(signature = (expr, /, **types))]
fn compile(py: Python<'_>, expr: &str, types: Option<Bound<'_, PyDict>>) -> PyResult<Py<PyAny>> {
    let mut signatures = Vec::new();
    let mut values = InputValues::new();
    for (key, spec) in types.iter().flat_map(|d| d.iter()) {
        let name: String = key.extract()?;
        let (ty, value) = type_of_spec(&spec, &name)?;
        if let Some(value) = value {
            values.insert(name.clone(), value);
        }
        if spec.is_instance_of::<PyInt>() && !spec.is_instance_of::<pyo3::types::PyBool>() {
            values.mark_python_ints([&name]);
        }
        signatures.push((name, ty));
    }
    let kernel = PyKernel::new(py, prepare(py, expr, &signatures, &values)?, &values);
    Ok(kernel.into_pyobject(py)?.into_any().unbind())
}

/// The type an argument of `compile` declares, and its value when it is an example of a small
/// integer array (operator parameters may read it). A dim of a ``(dtype, shape)`` pair may be
/// a name (``"N"``) or ``None`` (a name of its own).
fn type_of_spec(spec: &Bound<'_, PyAny>, name: &str) -> PyResult<(SymTensorType, Option<slc::Tensor>)> {
    if let Ok(pair) = spec.cast::<PyTuple>()
        && pair.len() == 2
        && !spec.is_instance_of::<PyUntypedArray>()
    {
        let dtype = dtype_from_spec(&pair.get_item(0)?, &format!("input '{name}'"))?;
        let shape_spec = pair.get_item(1)?;
        let items: Vec<Bound<'_, PyAny>> = if shape_spec.is_instance_of::<PyInt>() {
            vec![shape_spec]
        } else {
            shape_spec.extract().map_err(|_| {
                PyTypeError::new_err(format!(
                    "input '{name}': the shape must be a tuple of ints or names, not {shape_spec}"
                ))
            })?
        };
        let mut dims = Vec::with_capacity(items.len());
        for item in &items {
            if item.is_none() {
                dims.push("?".to_string());
            } else if let Ok(d) = item.extract::<i64>() {
                if d < 0 {
                    return Err(PyValueError::new_err(format!("input '{name}': negative dimension {d}")));
                }
                dims.push(d.to_string());
            } else if let Ok(text) = item.extract::<String>() {
                dims.push(text);
            } else {
                return Err(PyTypeError::new_err(format!(
                    "input '{name}': a dimension is an int, a name or None, not {item}"
                )));
            }
        }
        let text = format!("{}[{}]", dtype, dims.join(", "));
        let ty = SymTensorType::parse_for(&text, name)
            .map_err(|e| PyValueError::new_err(format!("input '{name}': {e}")))?;
        return Ok((ty, None));
    }
    if spec.is_instance_of::<PyArrayDescr>()
        || spec.is_instance_of::<pyo3::types::PyType>()
        || spec.is_instance_of::<pyo3::types::PyString>()
    {
        return Err(PyTypeError::new_err(format!(
            "input '{name}': give a (dtype, shape) pair or an example array, not just a dtype ({spec})"
        )));
    }
    let held = hold(spec, name, None)?;
    let shape: Vec<i64> = held.shape().iter().map(|&d| d as i64).collect();
    let value = parameter_value(&held, name)?;
    Ok((TensorType { dtype: held.dtype(), shape }.generic(), value))
}

/// `held`'s elements as a tensor when checking may read them: an operator parameter (a small
/// integer array) or a boolean mask.
fn parameter_value(held: &Held<'_>, name: &str) -> PyResult<Option<slc::Tensor>> {
    if !slc::sema::value_may_be_read(held.dtype(), held.shape().iter().product()) {
        return Ok(None);
    }
    let tensor =
        held.view(name)?.to_tensor().map_err(|e| PyValueError::new_err(format!("input '{name}': {e}")))?;
    Ok(Some(tensor))
}

/// A kernel `eval` built: what it depends on (the text, the inputs' names, dtypes and shapes,
/// whether each is a Python `int`, and the values of the inputs its checker read, i.e.
/// operator parameters), and the kernel.
struct EvalEntry {
    expr: String,
    inputs: Vec<(String, DType, Vec<usize>, bool)>,
    values: Vec<(usize, Vec<u8>)>,
    kernel: Arc<slc::Kernel>,
}

impl EvalEntry {
    /// Whether the entry was built for this text over these inputs, compared in place (a
    /// cache hit allocates nothing).
    fn fits(&self, expr: &str, names: &[&str], held: &[Held<'_>]) -> bool {
        self.expr == expr
            && self.inputs.len() == held.len()
            && self.inputs.iter().zip(names).zip(held).all(|(((n, d, s, int), name), h)| {
                n == name && *d == h.dtype() && s.as_slice() == h.shape() && *int == h.is_python_int()
            })
            && self.values.iter().all(|(i, bytes)| {
                held[*i]
                    .view(names[*i])
                    .ok()
                    .and_then(|v| v.to_tensor().ok())
                    .is_some_and(|t| t.bytes() == bytes.as_slice())
            })
    }
}

/// The cache key's hash: the text and each input's name, dtype and shape.
fn eval_hash(expr: &str, names: &[&str], held: &[Held<'_>]) -> u64 {
    use std::hash::{Hash, Hasher};
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    expr.hash(&mut hasher);
    for (name, h) in names.iter().zip(held) {
        name.hash(&mut hasher);
        h.dtype().hash(&mut hasher);
        h.shape().hash(&mut hasher);
    }
    hasher.finish()
}

/// Hashes `eval` keeps kernels for before it starts afresh: far above a program's working
/// set, a bound on memory for one that generates texts.
const MAX_EVAL_KEYS: usize = 1024;
/// Kernels kept per hash (one per set of operator-parameter values, or per colliding key).
const MAX_EVAL_VARIANTS: usize = 8;

static EVAL_CACHE: Mutex<Option<HashMap<u64, Vec<EvalEntry>>>> = Mutex::new(None);

/// Evaluates the slice program ``expr`` over the named inputs and returns a new array, as
/// NumPy would: ``slc.eval("a[2:, ..., None, :10]", a=x)``. Inputs are arrays (or buffers), or
/// Python ``int``s for integer scalars (int64; from 2**63 up, uint64). The compiled kernel is
/// kept, keyed by the text and the inputs' names, dtypes and shapes, so evaluating the same text
/// again skips compiling.
///
/// A program ending in an assignment (``slc.eval("a[i] = v", a=x, i=idx, v=y)``) stores into
/// the array bound to its target in place, as ``x[idx] = y`` does, and returns ``None``; the
/// target must be a writeable ``numpy.ndarray``; a view (``x[:, ::2]``, ``x.T``) is written
/// through, as NumPy writes through it.
///
/// Errors raise ``slc.Error`` subclasses; an index out of range raises ``slc.IndexError``
/// (also a Python ``IndexError``).
#[pyfunction]
#[pyo3(signature = (expr, /, **inputs))]
fn eval<'py>(py: Python<'py>, expr: &str, inputs: Option<Bound<'py, PyDict>>) -> PyResult<Bound<'py, PyAny>> {
    if let Some(d) = &inputs
        && d.values().iter().any(|v| cuda::is_cuda(&v))
    {
        return cuda::eval_on_device(py, expr, d);
    }
    let count = inputs.as_ref().map_or(0, |d| d.len());
    let mut keys: Vec<Bound<'py, PyString>> = Vec::with_capacity(count);
    let mut held: Vec<Held<'py>> = Vec::with_capacity(count);
    for (key, value) in inputs.iter().flat_map(|d| d.iter()) {
        let key = key.cast_into::<PyString>().map_err(PyErr::from)?;
        held.push(hold(&value, key.to_str()?, None)?);
        keys.push(key);
    }
    let names = keys.iter().map(|k| k.to_str()).collect::<PyResult<Vec<&str>>>()?;
    let hash = eval_hash(expr, &names, &held);
    let found = {
        let cache = EVAL_CACHE.lock().unwrap_or_else(|e| e.into_inner());
        cache
            .as_ref()
            .and_then(|c| c.get(&hash))
            .and_then(|entries| entries.iter().find(|e| e.fits(expr, &names, &held)))
            .map(|e| e.kernel.clone())
    };
    let kernel = match found {
        Some(kernel) => kernel,
        None => {
            let kernel = Arc::new(build(py, expr, &names, &held)?);
            let read = kernel.fixed().map(|c| c.read.values.clone()).unwrap_or_default();
            let values = names
                .iter()
                .enumerate()
                .filter(|(_, n)| read.contains(**n))
                .map(|(i, n)| {
                    Ok((i, parameter_value(&held[i], n)?.map(|t| t.bytes().to_vec()).unwrap_or_default()))
                })
                .collect::<PyResult<Vec<_>>>()?;
            let entry = EvalEntry {
                expr: expr.to_string(),
                inputs: names
                    .iter()
                    .zip(&held)
                    .map(|(n, h)| (n.to_string(), h.dtype(), h.shape().to_vec(), h.is_python_int()))
                    .collect(),
                values,
                kernel: kernel.clone(),
            };
            let mut cache = EVAL_CACHE.lock().unwrap_or_else(|e| e.into_inner());
            let cache = cache.get_or_insert_with(HashMap::new);
            if cache.len() >= MAX_EVAL_KEYS && !cache.contains_key(&hash) {
                cache.clear();
            }
            let entries = cache.entry(hash).or_default();
            if entries.len() >= MAX_EVAL_VARIANTS {
                entries.remove(0);
            }
            entries.push(entry);
            kernel
        }
    };
    if let Some(d) = &inputs {
        convert::numpy_scalars_fit(&kernel, d)?;
    }
    match store_target(expr) {
        Some(target) => {
            // `a[i] = v` stores into the array bound to `a`, as NumPy's does, and returns None.
            let array = inputs.as_ref().and_then(|d| d.get_item(target).ok().flatten()).ok_or_else(|| {
                pyo3::exceptions::PyTypeError::new_err(format!("the store's target `{target}` is not bound"))
            })?;
            run::run_store(py, &kernel, &names, &held, target, &array)?;
            Ok(py.None().into_bound(py))
        }
        None => run::run_kernel(py, &kernel, &names, &held, None),
    }
}

/// The name a program ending in an assignment (`a[i] = v`) stores into; `None` for any other.
fn store_target(expr: &str) -> Option<&str> {
    if !expr.contains('=') {
        return None;
    }
    let program = slc::syntax::parse_program(expr).ok()?;
    let slc::syntax::ast::StmtKind::Assign { target, .. } = &program.stmts.last()?.kind else { return None };
    let mut leaf = target;
    while let slc::syntax::ast::ExprKind::Index { base, .. } = &leaf.kind {
        leaf = base;
    }
    match &leaf.kind {
        slc::syntax::ast::ExprKind::Name(_) => Some(&expr[leaf.span.start..leaf.span.end]),
        _ => None,
    }
}

/// Compiles `expr` for the held inputs, passing the values checking may read (operator
/// parameters, masks).
fn build(py: Python<'_>, expr: &str, names: &[&str], held: &[Held<'_>]) -> PyResult<slc::Kernel> {
    let mut signatures = Vec::with_capacity(names.len());
    let mut values = InputValues::new();
    for (name, h) in names.iter().zip(held) {
        signatures.push((name.to_string(), TensorType::of(h.dtype(), h.shape()).generic()));
        if let Some(value) = parameter_value(h, name)? {
            values.insert(name.to_string(), value);
        }
        if h.is_python_int() {
            values.mark_python_ints([&name.to_string()]);
        }
    }
    prepare(py, expr, &signatures, &values)
}

/// Forgets every kernel ``eval`` kept (for tests and long-running processes).
#[pyfunction]
fn clear_cache() {
    *EVAL_CACHE.lock().unwrap_or_else(|e| e.into_inner()) = None;
    cuda::clear_cache();
}

/// The number of kernels ``eval`` keeps.
#[pyfunction]
fn cache_size() -> usize {
    EVAL_CACHE
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .as_ref()
        .map_or(0, |c| c.values().map(Vec::len).sum())
}

#[pymodule]
fn _slc(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyKernel>()?;
    m.add_class::<convert::TensorMemory>()?;
    m.add_class::<cuda::PyDeviceArray>()?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(eval, m)?)?;
    m.add_function(wrap_pyfunction!(zarr::_read_zarr, m)?)?;
    m.add_function(wrap_pyfunction!(clear_cache, m)?)?;
    m.add_function(wrap_pyfunction!(cache_size, m)?)?;
    Ok(())
}
