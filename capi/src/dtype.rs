//! Dtype codes as C reads them: a code's name and element size.

use crate::dtype;
use std::ffi::{CStr, c_char};
use std::ptr;

/// The name of a dtype code (`"f32"`), or NULL for an unknown code.
#[unsafe(no_mangle)]
pub extern "C" fn slc_dtype_name(code: i32) -> *const c_char {
    const NAMES: [&CStr; 15] = [
        c"bool", c"i8", c"i16", c"i32", c"i64", c"u8", c"u16", c"u32", c"u64", c"f16", c"bf16", c"f32",
        c"f64", c"c64", c"c128",
    ];
    usize::try_from(code).ok().and_then(|i| NAMES.get(i)).map_or(ptr::null(), |n| n.as_ptr())
}

/// Bytes per element of a dtype code, 0 for an unknown code.
#[unsafe(no_mangle)]
pub extern "C" fn slc_dtype_size(code: i32) -> usize {
    dtype(code).map_or(0, |d| d.width())
}
