//! The calling thread's last error, as C reads it: status, message, code and rendered
//! diagnostic.

use crate::{LAST, LastError, SLC_OK};
use std::ffi::c_char;
use std::ptr;

fn last<R>(f: impl FnOnce(&LastError) -> R, none: R) -> R {
    LAST.with(|l| l.borrow().as_ref().map_or(none, f))
}

/// The last error's status on this thread (SLC_OK after a successful call).
#[unsafe(no_mangle)]
pub extern "C" fn slc_last_error_status() -> i32 {
    last(|e| e.status, SLC_OK)
}

/// The last error's one-line message, or NULL. Valid until the next slc call on this thread.
#[unsafe(no_mangle)]
pub extern "C" fn slc_last_error_message() -> *const c_char {
    last(|e| e.message.as_ptr(), ptr::null())
}

/// The last error's diagnostic code (`E0102`), "" when it has none, or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn slc_last_error_code() -> *const c_char {
    last(|e| e.code.as_ptr(), ptr::null())
}

/// The last error's diagnostic rendered against the expression (plain text, several lines),
/// or NULL.
#[unsafe(no_mangle)]
pub extern "C" fn slc_last_error_rendered() -> *const c_char {
    last(|e| e.rendered.as_ptr(), ptr::null())
}
