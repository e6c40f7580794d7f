//! The C ABI of slc, declared in `runtime/include/slc.h` (keep the two in sync).
//!
//! Conventions: functions that create something return a pointer, NULL on failure; functions
//! that act return an `slc_status` (0 on success). On failure the calling thread's last error
//! is set (message, diagnostic code, diagnostic rendered against the expression); a successful
//! call clears it. No panic crosses the boundary: every entry point catches unwinding and
//! reports it as `SLC_ERR_INTERNAL`. Null pointers, bad dtype codes, non-UTF-8 text and
//! mismatched buffers are errors, never crashes.

#![allow(non_camel_case_types)]

mod array;
mod dtype;
mod error;
mod kernel;
mod session;

pub use array::*;
pub use dtype::*;
pub use error::*;
pub use kernel::*;
pub use session::*;

use slc::embed::{Kernel, TensorView};
use slc::{DType, Error, Executor, Session, Tensor};
use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};

pub const SLC_OK: i32 = 0;
/// A null pointer, an unknown dtype or back end code, text that is not UTF-8.
pub const SLC_ERR_ARGUMENT: i32 = 1;
/// The program does not parse or check (a diagnostic points into it).
pub const SLC_ERR_PROGRAM: i32 = 2;
/// Running failed: an index value out of range, an input or output that does not match.
pub const SLC_ERR_RUNTIME: i32 = 3;
/// A bug in slc (a caught panic).
pub const SLC_ERR_INTERNAL: i32 = 4;

/// The last error of this thread.
struct LastError {
    status: i32,
    message: CString,
    code: CString,
    rendered: CString,
}

thread_local! {
    static LAST: RefCell<Option<LastError>> = const { RefCell::new(None) };
}

/// Text for C: interior NULs (impossible in our messages, but never trust) become spaces.
fn c_string(s: &str) -> CString {
    CString::new(s.replace('\0', " ")).unwrap_or_default()
}

fn set_error(status: i32, message: &str, code: &str, rendered: &str) {
    let e =
        LastError { status, message: c_string(message), code: c_string(code), rendered: c_string(rendered) };
    LAST.with(|l| *l.borrow_mut() = Some(e));
}

fn clear_error() {
    LAST.with(|l| *l.borrow_mut() = None);
}

/// An error the C caller made (no source to point into).
struct Fail(i32, String);

fn arg(msg: impl Into<String>) -> Fail {
    Fail(SLC_ERR_ARGUMENT, msg.into())
}

/// A library error: its status, and the diagnostic rendered against `src`.
fn lib_error(e: &Error, src: &str) -> Fail {
    let status = if e.is_program_error() { SLC_ERR_PROGRAM } else { SLC_ERR_RUNTIME };
    let d = e.diagnostic();
    set_error(status, &e.to_string(), d.code, &e.render(src));
    Fail(status, String::new())
}

/// Runs `f`, catching panics; records the outcome as the thread's last error.
fn guard<T>(fallback: T, f: impl FnOnce() -> Result<T, Fail>) -> (T, i32) {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => {
            clear_error();
            (v, SLC_OK)
        }
        Ok(Err(Fail(status, msg))) => {
            // Library errors recorded themselves (with their diagnostic); the rest here.
            if !msg.is_empty() {
                set_error(status, &msg, "", &format!("error: {msg}\n"));
            }
            (fallback, status)
        }
        Err(panic) => {
            let what = panic
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| panic.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let msg = format!("internal error: {what}");
            set_error(SLC_ERR_INTERNAL, &msg, "", &format!("error: {msg}\n"));
            (fallback, SLC_ERR_INTERNAL)
        }
    }
}

/// # Safety
/// `s` is null or a NUL-terminated string.
unsafe fn text<'a>(s: *const c_char, what: &str) -> Result<&'a str, Fail> {
    if s.is_null() {
        return Err(arg(format!("{what} is NULL")));
    }
    // SAFETY: the caller passes a NUL-terminated string.
    unsafe { CStr::from_ptr(s) }.to_str().map_err(|_| arg(format!("{what} is not UTF-8")))
}

fn dtype(code: i32) -> Result<DType, Fail> {
    usize::try_from(code)
        .ok()
        .and_then(|i| DType::ALL.get(i).copied())
        .ok_or_else(|| arg(format!("{code} is not a dtype code (0..=14, see slc_dtype)")))
}

fn dtype_code(d: DType) -> i32 {
    DType::ALL.iter().position(|&x| x == d).map_or(-1, |i| i as i32)
}

/// # Safety
/// `dims` is null or points to `rank` values.
unsafe fn shape<'a>(dims: *const i64, rank: usize, what: &str) -> Result<&'a [i64], Fail> {
    if rank == 0 {
        return Ok(&[]);
    }
    if dims.is_null() {
        return Err(arg(format!("the shape of {what} is NULL")));
    }
    // SAFETY: the caller passes `rank` dimensions.
    let s = unsafe { std::slice::from_raw_parts(dims, rank) };
    if let Some(d) = s.iter().find(|&&d| d < 0) {
        return Err(arg(format!("{what} has a negative dimension {d}")));
    }
    Ok(s)
}

/// A session: options, and tensors bound by copy.
pub struct slc_session {
    session: Session<'static>,
    executor: Executor,
    threads: usize,
}

/// A prepared kernel, and its output shape as C reads it when that does not depend on the
/// inputs.
pub struct slc_kernel {
    kernel: Kernel,
    out_shape: Option<Vec<i64>>,
}

impl slc_kernel {
    fn new(kernel: Kernel) -> slc_kernel {
        let out_shape = kernel.output_shape().map(|dims| dims.iter().map(|&d| d as i64).collect());
        slc_kernel { kernel, out_shape }
    }

    fn source(&self) -> &str {
        self.kernel.source()
    }

    fn input_name(&self, i: usize) -> Option<&str> {
        self.kernel.inputs().nth(i).map(|(n, _)| n)
    }
}

/// An evaluation result owned by C until `slc_array_free`.
pub struct slc_array {
    tensor: Tensor,
    shape: Vec<i64>,
}

/// The signature of one kernel input (see slc.h).
#[repr(C)]
pub struct slc_input_sig {
    pub name: *const c_char,
    pub dtype: i32,
    pub rank: usize,
    pub shape: *const i64,
}

/// A tensor in caller memory (see slc.h). `strides` are in bytes; NULL means dense C order.
#[repr(C)]
pub struct slc_tensor {
    pub dtype: i32,
    pub rank: usize,
    pub shape: *const i64,
    pub strides: *const i64,
    pub data: *const c_void,
}

/// Reads a C tensor description into a view over its memory.
///
/// # Safety
/// `t` describes readable memory (see slc.h).
/// Views of the `n_inputs` C tensors at `inputs` (each must describe readable memory), named
/// after the kernel's inputs in messages; `storage` holds their dims.
unsafe fn input_views<'a>(
    k: &slc_kernel,
    inputs: *const slc_tensor,
    n_inputs: usize,
    storage: &'a mut Vec<Vec<usize>>,
) -> Result<Vec<TensorView<'a>>, Fail> {
    // SAFETY: per the caller.
    let ts = unsafe { tensors(inputs, n_inputs) }?;
    *storage = ts.iter().map(|_| Vec::new()).collect();
    let mut views = Vec::with_capacity(ts.len());
    for ((i, t), dims) in ts.iter().enumerate().zip(storage.iter_mut()) {
        let what = k.input_name(i).map_or_else(|| format!("input {i}"), |n| format!("input `{n}`"));
        // SAFETY: per the caller.
        views.push(unsafe { view(t, dims, &what) }?);
    }
    Ok(views)
}

/// The `n_inputs` tensor descriptions at `inputs` (which may be NULL when there are none).
///
/// # Safety
/// A non-null `inputs` points to `n_inputs` descriptions.
unsafe fn tensors<'a>(inputs: *const slc_tensor, n_inputs: usize) -> Result<&'a [slc_tensor], Fail> {
    match (n_inputs, inputs.is_null()) {
        (0, _) => Ok(&[]),
        (_, true) => Err(arg("the inputs are NULL")),
        // SAFETY: per the caller.
        _ => Ok(unsafe { std::slice::from_raw_parts(inputs, n_inputs) }),
    }
}

unsafe fn view<'a>(
    t: &slc_tensor,
    shape_storage: &'a mut Vec<usize>,
    what: &str,
) -> Result<TensorView<'a>, Fail> {
    let d = dtype(t.dtype)?;
    // SAFETY: per the caller.
    let dims = unsafe { shape(t.shape, t.rank, what) }?;
    *shape_storage = dims.iter().map(|&x| x as usize).collect();
    let strides: Option<Vec<isize>> = if t.strides.is_null() {
        None
    } else {
        // SAFETY: a non-null `strides` has `rank` entries.
        let s = unsafe { std::slice::from_raw_parts(t.strides, t.rank) };
        Some(s.iter().map(|&x| isize::try_from(x).unwrap_or(isize::MAX)).collect())
    };
    // SAFETY: the caller guarantees the memory (slc.h documents it).
    unsafe { TensorView::from_raw(d, shape_storage, strides.as_deref(), t.data.cast()) }
        .map_err(|e| Fail(SLC_ERR_RUNTIME, format!("{what}: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_codes_follow_the_header() {
        for (i, d) in DType::ALL.iter().enumerate() {
            assert_eq!(dtype_code(*d), i as i32);
            // SAFETY: a static C string.
            let name = unsafe { CStr::from_ptr(slc_dtype_name(i as i32)) };
            assert_eq!(name.to_str().unwrap(), d.name());
        }
        assert!(slc_dtype_name(15).is_null());
        assert!(slc_dtype_name(-1).is_null());
    }
}
