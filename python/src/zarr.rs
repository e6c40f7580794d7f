//! Zarr stores as `slc.eval` inputs (docs/zarr.md): `slc.eval("a[::2]", a="data.zarr")`, or a
//! store's `http(s)://` URL (read when the wheel is built with the `zarr-http` feature).
//! The Python wrapper (`slc/__init__.py`) passes the stores' paths here with the other inputs;
//! each store is opened, the program compiled over every input's type, and of each store the
//! box holding the chunks the plan reads is decoded. When some box is smaller than its array,
//! the plan rebased onto the boxes runs here and its result comes back; otherwise the arrays
//! (of the stores' shapes, their unread pages never written) go to `eval`.

use crate::convert::{Held, array_of_tensor, hold};
use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use slc::backend::jit::KernelCache;
use slc::sema::{InputTypes, InputValues};
use slc::types::TensorType;
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

/// Index arrays with more elements than this are not read to narrow a gather: its axis is
/// read whole.
const MAX_INDEX_ELEMENTS: usize = 1 << 22;

/// Rebased plans compiled so far kept up to this many, then forgotten together.
const MAX_KERNELS: usize = 256;

/// The kernels of rebased plans (keyed by the plan's text: a box is part of it).
static KERNELS: Mutex<Option<Arc<KernelCache>>> = Mutex::new(None);

fn kernels() -> Arc<KernelCache> {
    let mut kept = KERNELS.lock().unwrap_or_else(|e| e.into_inner());
    if kept.as_ref().is_some_and(|k| k.len() >= MAX_KERNELS) {
        *kept = None;
    }
    kept.get_or_insert_with(Default::default).clone()
}

/// ``_read_zarr(expr, stores, inputs)``: ``stores`` maps names to store paths or URLs (``str``);
/// ``inputs`` the other inputs. Returns ``(result, None)`` when it ran ``expr`` itself (on the
/// boxes of the stores it reads), else ``(None, arrays)``: ``stores``' names mapped to arrays
/// that hold what ``expr`` reads of each store, for ``eval``.
#[pyfunction]
pub fn _read_zarr<'py>(
    py: Python<'py>,
    expr: &str,
    stores: Bound<'py, PyDict>,
    inputs: Bound<'py, PyDict>,
) -> PyResult<(Bound<'py, PyAny>, Bound<'py, PyAny>)> {
    let mut others: Vec<(String, Held<'py>)> = vec![];
    let mut types = InputTypes::new();
    let mut values = InputValues::new();
    let mut known: BTreeMap<String, slc::Tensor> = BTreeMap::new();
    for (key, value) in inputs.iter() {
        let name: String = key.cast_into::<PyString>().map_err(PyErr::from)?.to_str()?.to_string();
        let held: Held<'_> = hold(&value, &name, None)?;
        types.insert(name.clone(), TensorType::of(held.dtype(), held.shape()));
        if held.is_python_int() {
            values.mark_python_ints([&name]);
        }
        let numel: usize = held.shape().iter().product();
        // Integer arrays: operator parameters, and index arrays that narrow a gather's rows.
        if held.dtype().is_integer() && numel <= MAX_INDEX_ELEMENTS {
            let tensor = held
                .view(&name)?
                .to_tensor()
                .map_err(|e| PyTypeError::new_err(format!("input '{name}': {e}")))?;
            if slc::sema::value_may_be_read(held.dtype(), numel) {
                values.insert(name.clone(), tensor.clone());
            }
            known.insert(name.clone(), tensor);
        } else if slc::sema::value_may_be_read(held.dtype(), numel) {
            let tensor = held
                .view(&name)?
                .to_tensor()
                .map_err(|e| PyTypeError::new_err(format!("input '{name}': {e}")))?;
            values.insert(name.clone(), tensor);
        }
        others.push((name, held));
    }
    let mut opened = vec![];
    for (key, value) in stores.iter() {
        let name: String = key.extract()?;
        // A URL (`http(s)://`) names a remote store, its metadata fetched without the GIL (other
        // threads run meanwhile, a server in this process among them); anything else a path.
        let zarr = match value.extract::<String>() {
            Ok(url) if slc::zarr::is_url(&url) => py.detach(|| slc::zarr::open_zarr_url(&url)),
            _ => slc::zarr::open_zarr(&value.extract::<PathBuf>()?),
        };
        let zarr = zarr.map_err(|e| PyOSError::new_err(format!("input '{name}': {e}")))?;
        types.insert(name.clone(), TensorType::of(zarr.dtype(), zarr.shape()));
        opened.push((name, zarr));
    }
    let compiled =
        slc::compile_with_values(expr, &types, &values).map_err(|e| crate::errors::to_py(py, &e, expr))?;
    let zarrs: Vec<(String, slc::zarr::PendingZarr)> = opened;
    let windows = slc::zarr::windows(&compiled.plan, zarrs, &[&values, &known])
        .map_err(|(name, e)| PyOSError::new_err(format!("input '{name}': {e}")))?;
    let mut read = InputValues::new();
    for input in &windows.inputs {
        let tensor = py
            .detach(|| input.read())
            .map_err(|e| PyOSError::new_err(format!("input '{}': {e}", input.name)))?;
        read.insert(input.name.clone(), tensor);
    }
    let Some(plan) = windows.plan else {
        let out = PyDict::new(py);
        for (name, tensor) in read {
            out.set_item(&name, array_of_tensor(py, tensor)?)?;
        }
        return Ok((py.None().into_bound(py), out.into_any()));
    };
    // The plan runs here, over the boxes and the other inputs as tensors.
    for (name, held) in others {
        if let std::collections::btree_map::Entry::Vacant(slot) = read.entry(name) {
            let name = slot.key();
            let tensor = match known.remove(name).or_else(|| values.remove(name)) {
                Some(tensor) => tensor,
                None => {
                    let view = held.view(name)?;
                    view.to_tensor().map_err(|e| PyTypeError::new_err(format!("input '{name}': {e}")))?
                }
            };
            slot.insert(tensor);
        }
    }
    let cache = kernels();
    let result = py
        .detach(|| slc::zarr::run_windowed(compiled, plan, &read, &slc::RunOptions::default(), &cache))
        .map_err(|e| crate::errors::to_py(py, &e, expr))?;
    Ok((array_of_tensor(py, result.0)?.into_any(), py.None().into_bound(py)))
}
