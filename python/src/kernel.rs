//! `slc.Kernel`: a program compiled once for input types — fixed (``("float32", (4, 5))``) or
//! with symbolic dims (``("float32", ("N", "M"))``) — called many times.

use crate::convert::{Held, descr_of, hold, numpy_name, show_shape};
use crate::errors;
use crate::run::run_kernel;
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString, PyTuple};
use slc::DType;
use slc::types::SymTensorType;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::{Arc, Mutex};

/// A slice program compiled for input dtypes and shapes (see ``slc.compile``); a dim may be a
/// name (``("float32", ("N", "M"))``), and then one kernel serves arrays of every shape the
/// names admit (a name used twice must be the same size each time).
///
/// Calling it: ``kernel(*, out=None, threads=None, **inputs)``, the inputs by name
/// (``kernel(a=x)``). Each input is a ``numpy.ndarray`` of any strides (read in place; a
/// non-contiguous one through a kernel compiled once for its layout, past 16 layouts packed
/// into a dense copy first), any object NumPy reads without copying (``memoryview``,
/// ``array.array``, ``__array_interface__``), or a Python ``int`` for a 0-d integer input; each
/// is checked against the type it was compiled for (a wrong dtype raises ``TypeError``, a wrong
/// shape ``ValueError``, both naming the input). It returns a new ``numpy.ndarray``, or writes
/// into ``out=`` (a writable, C-contiguous array of the result's dtype and shape) and returns
/// it. ``threads=``: worker threads for large results (default: one per core; 1 runs on the
/// calling thread only). Inputs that break what the program needs of their shapes raise
/// ``slc.ShapeError`` (also a ``ValueError``); an index NumPy would refuse raises
/// ``slc.IndexError`` (also an ``IndexError``). One kernel may be called from many threads at
/// once; large calls release the GIL. (CPython shows its own text for ``help(Kernel.__call__)``:
/// an extension type's call slot keeps no docstring.)
#[pyclass(name = "Kernel", module = "slc", frozen)]
pub struct PyKernel {
    kernel: Arc<slc::Kernel>,
    /// Copies of the kernel set to other thread counts (`threads=`), made on first use: the
    /// machine code is shared, only the setting differs.
    by_threads: Mutex<Vec<(usize, Arc<slc::Kernel>)>>,
    /// The inputs whose values the program read while compiling (operator parameters such as
    /// `slice`'s starts), by position, with those values' bytes: calls must pass the same.
    parameters: Vec<(usize, Vec<u8>)>,
    /// Of those, the Python `int`s a store converts by their value (NumPy's "weak" scalars):
    /// calls must pass Python `int`s there too, not NumPy integers (which it would cast).
    python_ints: Vec<usize>,
    /// The 0-d inputs a store casts to another dtype per call, by position, with that dtype:
    /// a Python `int` given there must fit it, as NumPy converts a Python `int` by its value.
    cast_scalars: Vec<(usize, DType)>,
    /// The input names as interned Python strings: a dict lookup by one of them reuses its
    /// cached hash instead of building a string per call.
    keys: Vec<Py<PyString>>,
    /// The threads the kernel was prepared with (one per core).
    default_threads: usize,
}

impl PyKernel {
    /// `values`: the example values it was compiled with (those checking may read: small integer
    /// inputs, masks).
    pub fn new(py: Python<'_>, kernel: slc::Kernel, values: &slc::sema::InputValues) -> PyKernel {
        let read = kernel.fixed().map(|c| c.read.values.clone()).unwrap_or_default();
        let parameters = kernel
            .inputs()
            .enumerate()
            .filter(|(_, (name, _))| read.contains(*name))
            .filter_map(|(i, (name, _))| values.get(name).map(|t| (i, t.bytes().to_vec())))
            .collect();
        let python_ints = kernel.fixed().map(|c| c.read.python_ints.clone()).unwrap_or_default();
        let python_ints = (kernel.inputs().enumerate())
            .filter(|(_, (name, _))| python_ints.contains(*name))
            .map(|(i, _)| i)
            .collect();
        let cast_scalars = (kernel.inputs().enumerate())
            .filter(|(_, (_, ty))| ty.shape.is_empty())
            .filter_map(|(i, (name, _))| {
                let cast = kernel.plan().inputs.iter().find(|d| d.cast_of() == Some(name))?;
                Some((i, cast.dtype))
            })
            .collect();
        let keys = kernel.inputs().map(|(name, _)| PyString::intern(py, name).unbind()).collect();
        let default_threads = slc::RunOptions::default().threads;
        PyKernel {
            kernel: Arc::new(kernel),
            by_threads: Mutex::new(Vec::new()),
            parameters,
            python_ints,
            cast_scalars,
            keys,
            default_threads,
        }
    }

    fn with_threads(&self, threads: usize) -> Arc<slc::Kernel> {
        let mut copies = self.by_threads.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, k)) = copies.iter().find(|(t, _)| *t == threads) {
            return k.clone();
        }
        let mut copy = (*self.kernel).clone();
        copy.set_threads(threads);
        let copy = Arc::new(copy);
        copies.push((threads, copy.clone()));
        copy
    }
}

/// Compiles `src` for `inputs` (names and types, in call order) with the GIL released;
/// `values`: integer inputs whose values operator parameters may read.
pub fn prepare(
    py: Python<'_>,
    src: &str,
    inputs: &[(String, SymTensorType)],
    values: &slc::sema::InputValues,
) -> PyResult<slc::Kernel> {
    let result = py.detach(|| {
        catch_unwind(AssertUnwindSafe(|| {
            let signatures: Vec<(&str, SymTensorType)> =
                inputs.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
            slc::Kernel::prepare_with_values(src, &signatures, values, &slc::RunOptions::default())
        }))
    });
    match result {
        Ok(Ok(kernel)) => Ok(kernel),
        Ok(Err(e)) => Err(errors::to_py(py, &e, src)),
        Err(panic) => Err(errors::internal(py, "compiling", panic)),
    }
}

impl PyKernel {
    /// Whether the input at `i` is a 0-d value a store converts, which [`Self::check_store_scalar`]
    /// checks per call (few kernels have one: the call's other inputs are not looked at).
    fn converts_scalar(&self, i: usize) -> bool {
        self.python_ints.contains(&i) || self.cast_scalars.iter().any(|&(at, _)| at == i)
    }

    /// The checks of a 0-d input that a store converts, the input at `i` in call order, as it
    /// is held on the host (`None`: on the device, so not a Python `int`): where the kernel was
    /// compiled for a Python `int` there, a Python `int` again (a NumPy integer would be cast,
    /// not converted by its value); a Python `int` that a store casts must fit the target's
    /// dtype, as NumPy's conversion raises OverflowError.
    fn check_store_scalar(&self, i: usize, name: &str, held: Option<&Held<'_>>) -> PyResult<()> {
        let python_int = held.is_some_and(Held::is_python_int);
        if self.python_ints.contains(&i) && !python_int {
            return Err(PyValueError::new_err(format!(
                "input '{name}' was a Python int when the kernel was compiled, which a store converts by its value where it casts a NumPy integer: pass a Python int, or compile again for this one (slc.eval does so by itself)"
            )));
        }
        match (held, self.cast_scalars.iter().find(|(at, _)| *at == i)) {
            (Some(held), Some(&(_, dtype))) if python_int => {
                crate::convert::python_int_fits(held, name, dtype)
            }
            _ => Ok(()),
        }
    }

    /// `__call__` where an input or `out` is on the GPU (`crate::cuda`).
    fn call_on_device<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyDict>,
        out: Option<&Bound<'py, PyAny>>,
        stream: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        let mut values = Vec::with_capacity(inputs.len());
        for ((name, ty), key) in self.kernel.inputs().zip(&self.keys) {
            let Some(value) = inputs.get_item(key.bind(py))? else {
                return Err(PyTypeError::new_err(format!(
                    "missing input '{name}' (the kernel takes {})",
                    input_list(&self.kernel)
                )));
            };
            let on_device = crate::cuda::is_cuda(&value);
            let i = values.len();
            if self.converts_scalar(i) {
                let held = match on_device {
                    true => None,
                    false => Some(hold(&value, name, Some(crate::convert::python_int_dtype(ty)))?),
                };
                self.check_store_scalar(i, name, held.as_ref())?;
            }
            values.push((name.to_string(), value, on_device));
        }
        if values.len() != inputs.len() {
            return Err(PyTypeError::new_err(format!(
                "unexpected inputs (the kernel takes {})",
                input_list(&self.kernel)
            )));
        }
        crate::cuda::run_on_device(py, &self.kernel, &values, out, crate::cuda::stream_of(stream)?)
    }
}

/// A type as a NumPy user reads it: `float32 (4, 5)`, `float32 (N, 5)`.
fn show_type(ty: &SymTensorType) -> String {
    format!("{} {}", numpy_name(ty.dtype), dims_text(ty))
}

/// Checks that `held` fits the type `name` was compiled for: its dtype, rank and constant dims
/// (the kernel binds the symbolic ones).
pub fn check_input(name: &str, held: &Held<'_>, ty: &SymTensorType) -> PyResult<()> {
    if held.dtype() != ty.dtype {
        return Err(PyTypeError::new_err(format!(
            "input '{name}' has dtype {}, but the kernel was compiled for {}",
            numpy_name(held.dtype()),
            show_type(ty)
        )));
    }
    let fits = held.shape().len() == ty.shape.len()
        && (ty.shape.iter().zip(held.shape())).all(|(d, &n)| d.as_const().is_none_or(|d| d as usize == n));
    if !fits {
        return Err(PyValueError::new_err(format!(
            "input '{name}' has shape {}, but the kernel was compiled for {}",
            show_shape(held.shape()),
            show_type(ty)
        )));
    }
    Ok(())
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

#[pymethods]
impl PyKernel {
    /// Runs the kernel. Each input is passed by name: a ``numpy.ndarray`` (any strides: read in
    /// place, a non-contiguous one through a kernel compiled once for its layout; past 16
    /// layouts, packed into a dense copy first), any object NumPy
    /// reads without copying (``memoryview``, ``array.array``, ``__array_interface__``), or a
    /// Python ``int`` for a 0-d integer input. A wrong dtype raises ``TypeError``, a wrong shape
    /// ``ValueError``, both naming the input.
    ///
    /// ``out``: a writable, C-contiguous array of the result's dtype and shape to write into
    /// (it is returned). A store kernel (``a[i] = v``) writes the array given for its target in
    /// place and returns ``None``, as ``slc.eval`` does; with ``out=`` it writes the updated copy
    /// there instead and leaves the target as it was. ``threads``: worker threads for large results (default: one per core;
    /// 1 runs on the calling thread only). An index out of range raises ``slc.IndexError``.
    #[pyo3(signature = (*, out=None, threads=None, stream=None, **inputs))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        out: Option<Bound<'py, PyAny>>,
        threads: Option<usize>,
        stream: Option<Bound<'py, PyAny>>,
        inputs: Option<Bound<'py, PyDict>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        if let Some(d) = &inputs {
            crate::convert::numpy_scalars_fit(&self.kernel, d)?;
        }
        if let Some(d) = &inputs
            && (d.iter().any(|(_, v)| crate::cuda::is_cuda(&v))
                || out.as_ref().is_some_and(crate::cuda::is_cuda))
        {
            return self.call_on_device(py, d, out.as_ref(), stream.as_ref());
        }
        if stream.is_some() {
            return Err(PyValueError::new_err(
                "stream= is for inputs in CUDA device memory; these are on the host",
            ));
        }
        let kernel = match threads {
            None => self.kernel.clone(),
            Some(0) => return Err(PyValueError::new_err("threads= must be at least 1")),
            // An output too small to split runs on the calling thread whatever `threads` says
            // (the default is one per core): no copy of the kernel to find.
            Some(n)
                if n <= self.default_threads
                    && self.kernel.output_shape().is_some_and(|dims| self.kernel.threads_used(dims) == 1) =>
            {
                self.kernel.clone()
            }
            Some(n) => self.with_threads(n),
        };
        let given = inputs.as_ref().map_or(0, |d| d.len());
        let mut names = Vec::with_capacity(given);
        let mut held = Vec::with_capacity(given);
        for ((name, ty), key) in kernel.inputs().zip(&self.keys) {
            let value = match &inputs {
                Some(d) => d.get_item(key.bind(py))?,
                None => None,
            };
            let Some(value) = value else {
                return Err(PyTypeError::new_err(format!(
                    "missing input '{name}' (the kernel takes {})",
                    input_list(&kernel)
                )));
            };
            // A Python int fills a 0-d integer input of whichever width it was compiled for.
            let int_dtype = crate::convert::python_int_dtype(ty);
            let h = hold(&value, name, Some(int_dtype))?;
            check_input(name, &h, ty)?;
            names.push(name);
            held.push(h);
        }
        if given != names.len()
            && let Some(d) = &inputs
        {
            for key in d.keys() {
                let key: String = key.extract()?;
                if !names.contains(&key.as_str()) {
                    return Err(PyTypeError::new_err(format!(
                        "unexpected input '{key}' (the kernel takes {})",
                        input_list(&kernel)
                    )));
                }
            }
        }
        for (i, bytes) in &self.parameters {
            let value =
                held[*i].view(names[*i])?.to_tensor().map_err(|e| PyValueError::new_err(e.to_string()))?;
            if value.bytes() != bytes.as_slice() {
                return Err(PyValueError::new_err(format!(
                    "input '{}' is an operator parameter, a boolean mask or a float stored into another dtype, and the kernel was compiled for another value of it: compile again for this one (slc.eval does so by itself)",
                    names[*i]
                )));
            }
        }
        for i in (0..held.len()).filter(|&i| self.converts_scalar(i)) {
            self.check_store_scalar(i, names[i], Some(&held[i]))?;
        }
        // A store kernel (`a[i] = v`) updates the array given for its target in place, as
        // `slc.eval` does, unless `out=` asks for the updated copy.
        let plan = kernel.plan();
        if let (None, Some(_), slc::plan::BufferId::Input(t)) = (&out, &plan.store, plan.output.buffer) {
            let target = &plan.inputs[t].name;
            let array = inputs.as_ref().and_then(|d| d.get_item(target).ok().flatten());
            let array = array.ok_or_else(|| PyTypeError::new_err(format!("missing input '{target}'")))?;
            crate::run::run_store(py, &kernel, &names, &held, target, &array)?;
            return Ok(py.None().into_bound(py));
        }
        run_kernel(py, &kernel, &names, &held, out.as_ref())
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

    /// The result's shape: a tuple of ints, and texts where it depends on symbolic dims
    /// (``("max(0, N-1)", "M")``).
    #[getter]
    fn shape<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyTuple>> {
        dims_tuple(py, &self.kernel.output_type())
    }

    /// The program text the kernel was compiled from.
    #[getter]
    fn source(&self) -> &str {
        self.kernel.source()
    }

    /// The verified plan IR, as text (what ``slc plan`` prints; with symbolic dims, the
    /// shape-generic plan and its requirements).
    #[getter]
    fn plan(&self) -> String {
        match self.kernel.fixed() {
            Some(fixed) => fixed.plan.to_string(),
            None => self.kernel.plan().to_string(),
        }
    }

    /// The plans compiled so far for non-contiguous inputs (``x[::2]``, ``x.T``, negative
    /// strides): such an input is read in place by a kernel whose plan declares its strides,
    /// compiled once per layout.
    #[getter]
    fn strided_plans(&self) -> Vec<String> {
        self.kernel.strided_plans().iter().map(|p| p.to_string()).collect()
    }

    /// The loop nest the JIT generates code from, after the scheduling passes (text).
    fn loop_nest(&self, py: Python<'_>) -> PyResult<String> {
        let plan = &self.fixed("the loop nest")?.plan;
        guarded(py, "scheduling the loop nest", || {
            let (nest, _) = slc::backend::jit::kernel_ir(&plan.lift()).map_err(|e| e.to_string())?;
            Ok(nest.to_string())
        })
    }

    /// The JIT kernel's Cranelift IR (text), as ``slc plan --clif`` prints it.
    fn clif(&self, py: Python<'_>) -> PyResult<String> {
        let plan = &self.fixed("the Cranelift IR")?.plan;
        guarded(py, "generating Cranelift IR", || {
            let (_, ir) = slc::backend::jit::kernel_ir(&plan.lift()).map_err(|e| e.to_string())?;
            Ok(ir)
        })
    }

    /// The program as DirectML operator descriptors (the JSON of ``slc compile --target dml``,
    /// parsed). ``feature_level``: ``"MAJOR.MINOR"`` such as ``"4.1"`` (default: the newest
    /// slc knows). A program DirectML cannot express raises ``slc.DmlError``.
    #[pyo3(signature = (feature_level=None))]
    fn dml<'py>(&self, py: Python<'py>, feature_level: Option<&str>) -> PyResult<Bound<'py, PyAny>> {
        use slc::backend::dml::{DmlOptions, FeatureLevel};
        let mut options = DmlOptions::default();
        if let Some(level) = feature_level {
            options.feature_level = FeatureLevel::parse(level).ok_or_else(|| {
                let known: Vec<String> = FeatureLevel::ALL.iter().map(|l| l.version()).collect();
                PyValueError::new_err(format!(
                    "unknown DirectML feature level '{level}' (known: {})",
                    known.join(", ")
                ))
            })?;
        }
        let compiled = self.fixed("DirectML descriptors")?;
        let lowered = catch_unwind(AssertUnwindSafe(|| slc::target::lower_program(compiled, &options)));
        let json = match lowered {
            Ok(Ok(graph)) => graph.to_json(),
            Ok(Err(e)) => return Err(errors::to_py(py, &e.into(), self.kernel.source())),
            Err(panic) => return Err(errors::internal(py, "lowering to DirectML", panic)),
        };
        PyModule::import(py, "json")?.getattr("loads")?.call1((json,))
    }

    /// What the program selects from its input, drawn as SVG — the picture ``slc show -o``
    /// writes: the input as a grid, the selected cells coloured and numbered in output order,
    /// arrows for each axis's direction, a chain drawn stage by stage, and a summary of the copy.
    /// A kernel knows its input types, not its index values: a gathered axis is drawn as chosen
    /// by its index. Jupyter shows it for a kernel at the end of a cell (``_repr_svg_``).
    fn show(&self, py: Python<'_>) -> PyResult<String> {
        let compiled = self.fixed("a picture of the selection")?;
        let types: slc::sema::InputTypes =
            self.kernel.inputs().filter_map(|(name, ty)| Some((name.to_string(), ty.concrete()?))).collect();
        // The operator parameters it was compiled with: each stage of a chain compiles again.
        let mut values = slc::sema::InputValues::new();
        for (i, bytes) in &self.parameters {
            let Some((name, ty)) = self.kernel.inputs().nth(*i) else { continue };
            let shape: Vec<usize> =
                ty.shape.iter().filter_map(|d| d.as_const()).map(|d| d as usize).collect();
            if let Ok(t) = slc::Tensor::from_bytes(ty.dtype, &shape, bytes) {
                values.insert(name.to_string(), t);
            }
        }
        let source = self.kernel.source().to_string();
        let drawn = py.detach(|| {
            catch_unwind(AssertUnwindSafe(|| {
                let selection = slc::show::Selection::of(&compiled.plan, &values)?;
                let stages = slc::show::stages::chain_selections(&source, selection, &types, &values);
                Ok::<_, slc::show::SelectError>(slc::show::svg::render_stages(&stages))
            }))
        });
        match drawn {
            Ok(Ok(svg)) => Ok(svg),
            Ok(Err(e)) => Err(PyValueError::new_err(format!("cannot draw `{source}`: {e}"))),
            Err(panic) => Err(errors::internal(py, "drawing the selection", panic)),
        }
    }

    /// The selection as SVG, for Jupyter (see ``show``).
    fn _repr_svg_(&self, py: Python<'_>) -> PyResult<String> {
        self.show(py)
    }

    fn __repr__(&self) -> String {
        let inputs: Vec<String> = self
            .kernel
            .inputs()
            .map(|(n, t)| format!("{n}=({:?}, {})", numpy_name(t.dtype), dims_text(t)))
            .collect();
        format!(
            "slc.compile({:?}{}) -> {}",
            self.kernel.source(),
            inputs.iter().map(|i| format!(", {i}")).collect::<String>(),
            show_type(&self.kernel.output_type())
        )
    }
}

impl PyKernel {
    /// The front end's product for the declared types, which `what` needs: fixed shapes.
    fn fixed(&self, what: &str) -> PyResult<&slc::pipeline::Compiled> {
        self.kernel.fixed().ok_or_else(|| {
            PyValueError::new_err(format!(
                "{what} needs fixed input shapes; this kernel's are symbolic ({})",
                input_types_text(&self.kernel)
            ))
        })
    }
}

/// `a: float32 (N, M)`, for messages.
fn input_types_text(kernel: &slc::Kernel) -> String {
    let types: Vec<String> = kernel.inputs().map(|(n, t)| format!("{n}: {}", show_type(t))).collect();
    types.join(", ")
}

/// The kernel's inputs, for messages: `a, b` or `no inputs`.
fn input_list(kernel: &slc::Kernel) -> String {
    let names: Vec<&str> = kernel.inputs().map(|(n, _)| n).collect();
    if names.is_empty() { "no inputs".into() } else { names.join(", ") }
}

/// Runs `f` with the GIL released; its error or panic becomes `slc.InternalError`.
fn guarded<T: Send>(py: Python<'_>, what: &str, f: impl FnOnce() -> Result<T, String> + Send) -> PyResult<T> {
    match py.detach(|| catch_unwind(AssertUnwindSafe(f))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(message)) => Err(errors::internal(py, what, Box::new(message))),
        Err(panic) => Err(errors::internal(py, what, panic)),
    }
}
