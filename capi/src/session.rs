//! Sessions: create and free one, set its back end and threads, bind tensors, evaluate.

use crate::{Fail, SLC_ERR_RUNTIME, arg, guard, lib_error, slc_array, slc_session, slc_tensor, text, view};
use slc::{Executor, Session};
use std::ffi::c_char;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

#[unsafe(no_mangle)]
pub extern "C" fn slc_session_new() -> *mut slc_session {
    guard(ptr::null_mut(), || {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let s = slc_session { session: Session::new(), executor: Executor::Jit, threads };
        Ok(Box::into_raw(Box::new(s)))
    })
    .0
}

/// # Safety
/// `s` is null or a session from `slc_session_new`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_session_free(s: *mut slc_session) {
    if !s.is_null() {
        // SAFETY: created by Box::into_raw in slc_session_new.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(s) })));
    }
}

/// # Safety
/// `s` is null or a live session.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_session_set_backend(s: *mut slc_session, backend: i32) -> i32 {
    guard((), || {
        // SAFETY: the caller passes a live session or null.
        let s = unsafe { s.as_mut() }.ok_or_else(|| arg("the session is NULL"))?;
        let b = match backend {
            0 => Executor::Jit,
            1 => Executor::Interpreter,
            2 => Executor::Cuda,
            _ => return Err(arg(format!("{backend} is not a back end (SLC_BACKEND_JIT, _INTERP or _CUDA)"))),
        };
        s.executor = b;
        s.session.options_mut().executor = b;
        Ok(())
    })
    .1
}

/// # Safety
/// `s` is null or a live session.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_session_set_threads(s: *mut slc_session, threads: usize) -> i32 {
    guard((), || {
        // SAFETY: the caller passes a live session or null.
        let s = unsafe { s.as_mut() }.ok_or_else(|| arg("the session is NULL"))?;
        s.threads = threads.max(1);
        s.session.options_mut().threads = s.threads;
        Ok(())
    })
    .1
}

/// Binds `name` to a copy of the tensor.
///
/// # Safety
/// `s` is null or a live session; `name` a C string; `t` null or a valid tensor description.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_session_bind(
    s: *mut slc_session,
    name: *const c_char,
    t: *const slc_tensor,
) -> i32 {
    guard((), || {
        // SAFETY: per the contract above.
        let s = unsafe { s.as_mut() }.ok_or_else(|| arg("the session is NULL"))?;
        let name = unsafe { text(name, "the name") }?;
        let t = unsafe { t.as_ref() }.ok_or_else(|| arg("the tensor is NULL"))?;
        let mut dims = vec![];
        let v = unsafe { view(t, &mut dims, name) }?;
        let owned = v.to_tensor().map_err(|e| Fail(SLC_ERR_RUNTIME, e.to_string()))?;
        s.session.bind(name, owned);
        Ok(())
    })
    .1
}

/// Evaluates a program over the bound tensors; NULL on error.
///
/// # Safety
/// `s` is null or a live session; `expr` a C string.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_session_eval(s: *mut slc_session, expr: *const c_char) -> *mut slc_array {
    guard(ptr::null_mut(), || {
        // SAFETY: per the contract above.
        let s = unsafe { s.as_mut() }.ok_or_else(|| arg("the session is NULL"))?;
        let src = unsafe { text(expr, "the expression") }?;
        let tensor = s.session.eval(src).map_err(|e| lib_error(&e, src))?;
        let shape = tensor.shape().iter().map(|&d| d as i64).collect();
        Ok(Box::into_raw(Box::new(slc_array { tensor, shape })))
    })
    .0
}
