//! slc's errors as Python exceptions. The classes live in `slc/_errors.py` (plain Python, so
//! that they pickle, subclass builtins and read well in tracebacks); this module picks the class
//! for a diagnostic's code and fills in `.code`, `.span`, `.message` and the rendered text.

use pyo3::exceptions::PyTypeError;
use pyo3::prelude::*;
use pyo3::sync::PyOnceLock;
use pyo3::types::PyModule;

static ERRORS_MODULE: PyOnceLock<Py<PyModule>> = PyOnceLock::new();

fn errors_module(py: Python<'_>) -> PyResult<&Bound<'_, PyModule>> {
    ERRORS_MODULE
        .get_or_try_init(py, || Ok(PyModule::import(py, "slc._errors")?.unbind()))
        .map(|m| m.bind(py))
}

/// The exception class (a name in `slc._errors`) for a diagnostic code: the first two digits
/// are the stage (E00 parsing, E01 checking, E02 running, E03 the plan, E04 DirectML).
fn class_for(code: &str) -> &'static str {
    match code {
        // Where NumPy raises IndexError: out-of-range indices, found while checking (constant
        // indices) or while running (index tensors); too many indices, two ellipses, a float
        // index, a mask of the wrong shape, index arrays that do not broadcast.
        "E0102" | "E0201" | "E0202" | "E0103" | "E0104" | "E0106" | "E0107" | "E0108" => "IndexError",
        "E0204" | "E0207" => "MemoryError",
        // Where NumPy raises OverflowError: a Python int or float a store converts by its value.
        "E0135" => "OverflowError",
        // Inputs a shape-generic kernel cannot take: NumPy raises ValueError for shapes.
        "E0208" => "ShapeError",
        c if c.starts_with("E00") => "ParseError",
        c if c.starts_with("E01") || c.starts_with("E03") => "CompileError",
        c if c.starts_with("E02") => "RunError",
        c if c.starts_with("E04") => "DmlError",
        _ => "Error",
    }
}

/// `err` as the `slc.Error` subclass its code calls for; `src` is the program text the
/// diagnostic's spans point into.
pub fn to_py(py: Python<'_>, err: &slc::Error, src: &str) -> PyErr {
    let diagnostic = err.diagnostic();
    // Named as the CLI names the program (`slc eval`), so that the text is the same.
    let rendered = slc::diag::render(&diagnostic, "expr", src, false);
    let span = diagnostic.span().map(|s| (s.start, s.end));
    make(py, class_for(diagnostic.code), rendered, Some(diagnostic.code), span, &diagnostic.message)
}

/// A panic inside slc, caught before it reached Python: reported as `slc.InternalError`.
pub fn internal(py: Python<'_>, what: &str, payload: Box<dyn std::any::Any + Send>) -> PyErr {
    let detail = payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into());
    let message = format!("internal error while {what}: {detail} (please report it)");
    make(py, "InternalError", message.clone(), None, None, &message)
}

fn make(
    py: Python<'_>,
    class: &str,
    rendered: String,
    code: Option<&str>,
    span: Option<(usize, usize)>,
    message: &str,
) -> PyErr {
    let built = errors_module(py)
        .and_then(|m| m.getattr(class))
        .and_then(|cls| cls.call1((rendered.clone(), code, span, message)));
    match built {
        Ok(instance) => PyErr::from_value(instance),
        // Only when `slc._errors` cannot be imported (a broken installation): still an error.
        Err(e) => PyTypeError::new_err(format!("{rendered} (and slc._errors failed: {e})")),
    }
}
