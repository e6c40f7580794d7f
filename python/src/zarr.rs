//! Zarr stores as `slc.eval` inputs (docs/zarr.md): `slc.eval("a[::2]", a="data.zarr")`.
//! The Python wrapper (`slc/__init__.py`) passes the stores' paths here with the other inputs;
//! each store is opened, the program compiled over every input's type, and only the chunks
//! holding what the plan reads are decoded into an array the size of the store's, whose
//! other pages are never written (they cost no memory). That array then goes to `eval`.

use crate::convert::{Held, array_of_tensor, hold};
use pyo3::exceptions::{PyOSError, PyTypeError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use slc::DType;
use slc::sema::{InputTypes, InputValues};
use slc::types::TensorType;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Index arrays with more elements than this are not read to narrow a gather: its axis is
/// read whole.
const MAX_INDEX_ELEMENTS: usize = 1 << 22;

/// ``_read_zarr(expr, stores, inputs)``: ``stores`` maps names to store paths (``str``);
/// ``inputs`` the other inputs. Returns ``stores``' names mapped to arrays that hold what
/// ``expr`` reads of each store.
#[pyfunction]
pub fn _read_zarr<'py>(
    py: Python<'py>,
    expr: &str,
    stores: Bound<'py, PyDict>,
    inputs: Bound<'py, PyDict>,
) -> PyResult<Bound<'py, PyDict>> {
    let mut types = InputTypes::new();
    let mut values = InputValues::new();
    let mut known: BTreeMap<String, slc::Tensor> = BTreeMap::new();
    for (key, value) in inputs.iter() {
        let name: String = key.cast_into::<PyString>().map_err(PyErr::from)?.to_str()?.to_string();
        let held: Held<'_> = hold(&value, &name, DType::I64)?;
        types.insert(name.clone(), TensorType::of(held.dtype(), held.shape()));
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
            known.insert(name, tensor);
        } else if slc::sema::value_may_be_read(held.dtype(), numel) {
            let tensor = held
                .view(&name)?
                .to_tensor()
                .map_err(|e| PyTypeError::new_err(format!("input '{name}': {e}")))?;
            values.insert(name, tensor);
        }
    }
    let mut opened = vec![];
    for (key, value) in stores.iter() {
        let name: String = key.extract()?;
        let path: PathBuf = value.extract()?;
        let zarr =
            slc::zarr::open_zarr(&path).map_err(|e| PyOSError::new_err(format!("input '{name}': {e}")))?;
        types.insert(name.clone(), TensorType::of(zarr.dtype(), zarr.shape()));
        opened.push((name, zarr));
    }
    let compiled =
        slc::compile_with_values(expr, &types, &values).map_err(|e| crate::errors::to_py(py, &e, expr))?;
    let out = PyDict::new(py);
    for (name, zarr) in opened {
        let touched = slc::zarr::touched(&compiled.plan, &name, &[&values, &known]);
        let tensor = py
            .detach(|| zarr.read(touched.as_deref()))
            .map_err(|e| PyOSError::new_err(format!("input '{name}': {e}")))?;
        out.set_item(&name, array_of_tensor(py, tensor)?)?;
    }
    Ok(out)
}
