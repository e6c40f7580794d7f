//! Evaluation results owned by C: their dtype, shape, data and size, and freeing them.

use crate::{dtype_code, slc_array};
use std::ffi::c_void;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

/// # Safety
/// `a` is null or a live array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_array_dtype(a: *const slc_array) -> i32 {
    // SAFETY: per the contract above.
    unsafe { a.as_ref() }.map_or(-1, |a| dtype_code(a.tensor.dtype()))
}

/// # Safety
/// `a` is null or a live array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_array_rank(a: *const slc_array) -> usize {
    // SAFETY: per the contract above.
    unsafe { a.as_ref() }.map_or(0, |a| a.shape.len())
}

/// # Safety
/// `a` is null or a live array. The result lives as long as the array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_array_shape(a: *const slc_array) -> *const i64 {
    // SAFETY: per the contract above.
    unsafe { a.as_ref() }.map_or(ptr::null(), |a| a.shape.as_ptr())
}

/// # Safety
/// `a` is null or a live array. The result lives as long as the array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_array_data(a: *const slc_array) -> *const c_void {
    // SAFETY: per the contract above.
    unsafe { a.as_ref() }.map_or(ptr::null(), |a| a.tensor.as_ptr().cast())
}

/// # Safety
/// `a` is null or a live array.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_array_nbytes(a: *const slc_array) -> usize {
    // SAFETY: per the contract above.
    unsafe { a.as_ref() }.map_or(0, |a| a.tensor.nbytes())
}

/// # Safety
/// `a` is null or an array from `slc_session_eval`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_array_free(a: *mut slc_array) {
    if !a.is_null() {
        // SAFETY: created by Box::into_raw in slc_session_eval.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(a) })));
    }
}
