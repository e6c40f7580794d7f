//! `slc.GenericKernel`: a program compiled once for input types with symbolic dims
//! (``("float32", ("N", "M"))``), called on arrays of any shapes those types admit.

use crate::convert::{Held, array_of_tensor, descr_of, hold, numpy_name};
use crate::errors;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use slc::DType;
use slc::types::SymTensorType;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// A slice program compiled once for input types whose dims may be names (see
/// ``slc.compile``): ``slc.compile("a[1:, ::-1]", a=("float32", ("N", "M")))``. Call it with
/// the inputs by name, arrays of any shapes the types admit (a name used twice must be the same
/// size each time); it returns a new ``numpy.ndarray`` (or writes into ``out=``). Inputs that
/// break what the program needs of their shapes raise ``slc.ShapeError`` (also a Python
/// ``ValueError``).
#[pyclass(name = "GenericKernel", module = "slc", frozen)]
pub struct PyGenericKernel {
    kernel: slc::GenericKernel,
    keys: Vec<Py<PyString>>,
}

impl PyGenericKernel {
    pub fn new(py: Python<'_>, kernel: slc::GenericKernel) -> PyGenericKernel {
        let keys = kernel.inputs().map(|(name, _)| PyString::intern(py, name).unbind()).collect();
        PyGenericKernel { kernel, keys }
    }
}

/// Compiles `src` for symbolic `inputs` with the GIL released.
pub fn prepare_generic(
    py: Python<'_>,
    src: &str,
    inputs: &[(String, SymTensorType)],
) -> PyResult<slc::GenericKernel> {
    let result = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let signatures: Vec<(&str, SymTensorType)> = inputs.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
            slc::GenericKernel::prepare(src, &signatures)
        }))
    });
    match result {
        Ok(Ok(kernel)) => Ok(kernel),
        Ok(Err(e)) => Err(errors::to_py(py, &e, src)),
        Err(panic) => Err(errors::internal(py, "compiling", panic)),
    }
}

#[pymethods]
impl PyGenericKernel {
    /// Runs the kernel on the inputs, by name (arrays of the declared dtypes and ranks, in any
    /// shapes the declared dims admit; a Python ``int`` for a 0-d integer input). ``out``: a
    /// writable, C-contiguous array of the result's dtype and shape. ``threads``: worker
    /// threads for large results.
    #[pyo3(signature = (*, out=None, threads=None, **inputs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        out: Option<Bound<'py, PyAny>>,
        threads: Option<usize>,
        inputs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut kernel = self.kernel.clone();
        match threads {
            Some(0) => return Err(PyValueError::new_err("threads= must be at least 1")),
            Some(n) => kernel.set_threads(n),
            None => {}
        }
        let mut held: Vec<Held<'py>> = Vec::with_capacity(self.keys.len());
        for ((name, ty), key) in self.kernel.inputs().zip(&self.keys) {
            let value = match &inputs {
                Some(d) => d.get_item(key.bind(py))?,
                None => None,
            };
            let Some(value) = value else {
                return Err(PyTypeError::new_err(format!("missing input '{name}' (the kernel takes {})", self.input_list())));
            };
            let int_dtype = if ty.shape.is_empty() && ty.dtype.is_integer() { ty.dtype } else { DType::I64 };
            let h = hold(&value, name, int_dtype)?;
            if h.dtype() != ty.dtype {
                return Err(PyTypeError::new_err(format!(
                    "input '{name}' has dtype {}, but the kernel was compiled for {} {}",
                    numpy_name(h.dtype()),
                    numpy_name(ty.dtype),
                    dims_text(ty)
                )));
            }
            held.push(h);
        }
        if let Some(d) = &inputs
            && d.len() != held.len()
        {
            for key in d.keys() {
                let key: String = key.extract()?;
                if !self.kernel.inputs().any(|(n, _)| n == key) {
                    return Err(PyTypeError::new_err(format!(
                        "unexpected input '{key}' (the kernel takes {})",
                        self.input_list()
                    )));
                }
            }
        }
        let names: Vec<&str> = self.kernel.inputs().map(|(n, _)| n).collect();
        let views = held.iter().zip(&names).map(|(h, n)| h.view(n)).collect::<PyResult<Vec<_>>>()?;
        let result = py.detach(|| catch_unwind(AssertUnwindSafe(|| kernel.run(&views))));
        let tensor = match result {
            Ok(Ok(t)) => t,
            Ok(Err(e)) => return Err(errors::to_py(py, &e, kernel.source())),
            Err(panic) => return Err(errors::internal(py, "running a kernel", panic)),
        };
        match out {
            None => Ok(array_of_tensor(py, tensor)?.into_any()),
            Some(out) => {
                let (array, data) = crate::convert::output_bytes(&out, tensor.dtype(), tensor.shape(), tensor.nbytes())?;
                // SAFETY: `out=` was checked writable, C-contiguous and as long as the result.
                unsafe { std::ptr::copy_nonoverlapping(tensor.as_ptr(), data, tensor.nbytes()) };
                Ok(array.into_any())
            }
        }
    }

    /// The input names, in the order they were given to ``slc.compile``.
    #[getter]
    fn input_names<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        PyTuple::new(py, self.kernel.inputs().map(|(n, _)| n).collect::<Vec<_>>())
    }

    /// The input types: a dict from name to ``(numpy.dtype, dims)``, each dim an ``int`` or
    /// the text of its symbol (``"N"``).
    #[getter]
    fn input_types<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let types = PyDict::new(py);
        for (name, ty) in self.kernel.inputs() {
            types.set_item(name, (descr_of(py, ty.dtype)?, dims_tuple(py, ty)?))?;
        }
        Ok(types)
    }

    /// The result's ``numpy.dtype``.
    #[getter]
    fn dtype<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        Ok(descr_of(py, self.kernel.output_dtype())?.into_any())
    }

    /// The result's dims in the symbols: a tuple of ints and texts (``("max(0, N-1)", "M")``).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        dims_tuple(py, &self.kernel.output_type())
    }

    /// The program text the kernel was compiled from.
    #[getter]
    fn source(&self) -> &str {
        self.kernel.source()
    }

    /// The verified generic plan IR, as text (what ``slc plan`` prints for symbolic shapes).
    #[getter]
    fn plan(&self) -> String {
        self.kernel.plan().to_string()
    }

    fn __repr__(&self) -> String {
        let inputs: Vec<String> = self
            .kernel
            .inputs()
            .map(|(n, t)| format!("{n}=({:?}, {})", numpy_name(t.dtype), dims_text(t)))
            .collect();
        let out = self.kernel.output_type();
        format!(
            "slc.compile({:?}{}) -> {} {}",
            self.kernel.source(),
            inputs.iter().map(|i| format!(", {i}")).collect::<String>(),
            numpy_name(out.dtype),
            dims_text(&out)
        )
    }
}

impl PyGenericKernel {
    fn input_list(&self) -> String {
        let names: Vec<&str> = self.kernel.inputs().map(|(n, _)| n).collect();
        if names.is_empty() { "no inputs".into() } else { names.join(", ") }
    }
}

/// A type's dims as Python sees them: ints, and texts for symbolic ones.
fn dims_tuple<'py>(py: Python<'py>, ty: &SymTensorType) -> PyResult<Bound<'py, PyTuple>> {
    let dims: Vec<Bound<'py, PyAny>> = ty
        .shape
        .iter()
        .map(|d| match d.as_const() {
            Some(c) => c.into_pyobject(py).map(|o| o.into_any()).map_err(PyErr::from),
            None => d.to_string().into_pyobject(py).map(|o| o.into_any()).map_err(PyErr::from),
        })
        .collect::<PyResult<_>>()?;
    PyTuple::new(py, dims)
}

/// `(N, 3)` as a reader of Python sees a shape.
fn dims_text(ty: &SymTensorType) -> String {
    let dims: Vec<String> = ty.shape.iter().map(|d| d.to_string()).collect();
    match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    }
}
