//! The C ABI of slc, declared in `runtime/include/slc.h` (keep the two in sync).
//!
//! Conventions: functions that create something return a pointer, NULL on failure; functions
//! that act return an `slc_status` (0 on success). On failure the calling thread's last error
//! is set (message, diagnostic code, diagnostic rendered against the expression); a successful
//! call clears it. No panic crosses the boundary: every entry point catches unwinding and
//! reports it as `SLC_ERR_INTERNAL`. Null pointers, bad dtype codes, non-UTF-8 text and
//! mismatched buffers are errors, never crashes.

#![allow(non_camel_case_types)]

use slc::embed::{Kernel, TensorView};
use slc::types::{SymTensorType, TensorType};
use slc::{DType, Error, Executor, Session, Tensor};
use std::cell::RefCell;
use std::ffi::{CStr, CString, c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

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

/// Compiles `expr` for the inputs described; NULL on error.
///
/// # Safety
/// `s` is null or a live session; `expr` a C string; `inputs` points to `n_inputs` signatures.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_new(
    s: *const slc_session,
    expr: *const c_char,
    inputs: *const slc_input_sig,
    n_inputs: usize,
) -> *mut slc_kernel {
    guard(ptr::null_mut(), || {
        // SAFETY: per the contract above.
        let s = unsafe { s.as_ref() }.ok_or_else(|| arg("the session is NULL"))?;
        let src = unsafe { text(expr, "the expression") }?;
        let sigs: &[slc_input_sig] = if n_inputs == 0 {
            &[]
        } else if inputs.is_null() {
            return Err(arg("the input signatures are NULL"));
        } else {
            unsafe { std::slice::from_raw_parts(inputs, n_inputs) }
        };
        let mut named = Vec::with_capacity(sigs.len());
        for (i, sig) in sigs.iter().enumerate() {
            let name = unsafe { text(sig.name, &format!("the name of input {i}")) }?;
            let d = dtype(sig.dtype)?;
            let dims = unsafe { shape(sig.shape, sig.rank, name) }?;
            named.push((name, TensorType { dtype: d, shape: dims.to_vec() }.generic()));
        }
        let kernel = s.session.prepare(src, &named).map_err(|e| lib_error(&e, src))?;
        Ok(Box::into_raw(Box::new(slc_kernel::new(kernel))))
    })
    .0
}

/// Compiles `expr` once for inputs declared by name and type text, whose dims may be names
/// (`"f32[N, M]"`, `?` for a name of its own): a generic kernel for inputs of any conforming
/// shapes. NULL on error.
///
/// # Safety
/// `s` is null or a live session; `expr` a C string; `names` and `types` point to `n_inputs`
/// C strings each.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_new_generic(
    s: *const slc_session,
    expr: *const c_char,
    names: *const *const c_char,
    types: *const *const c_char,
    n_inputs: usize,
) -> *mut slc_kernel {
    guard(ptr::null_mut(), || {
        // SAFETY: per the contract above.
        let s = unsafe { s.as_ref() }.ok_or_else(|| arg("the session is NULL"))?;
        let src = unsafe { text(expr, "the expression") }?;
        if n_inputs > 0 && (names.is_null() || types.is_null()) {
            return Err(arg("the input names or types are NULL"));
        }
        let mut declared = Vec::with_capacity(n_inputs);
        for i in 0..n_inputs {
            // SAFETY: `names` and `types` hold `n_inputs` pointers.
            let name = unsafe { text(*names.add(i), &format!("the name of input {i}")) }?;
            let ty = unsafe { text(*types.add(i), &format!("the type of input `{name}`")) }?;
            let ty = SymTensorType::parse_for(ty, name).map_err(|e| arg(format!("input `{name}`: {e}")))?;
            declared.push((name, ty));
        }
        let kernel = s.session.prepare(src, &declared).map_err(|e| lib_error(&e, src))?;
        Ok(Box::into_raw(Box::new(slc_kernel::new(kernel))))
    })
    .0
}

/// The output's dims for these inputs (`slc_kernel_output_rank` values into `dims`): what a
/// generic kernel's next `slc_kernel_run` on them writes.
///
/// # Safety
/// `k` is null or a live kernel; `inputs` as for `slc_kernel_run`; `dims` points to
/// `slc_kernel_output_rank(k)` writable values.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_output_shape_for(
    k: *const slc_kernel,
    inputs: *const slc_tensor,
    n_inputs: usize,
    dims: *mut i64,
) -> i32 {
    guard((), || {
        // SAFETY: per the contract above.
        let k = unsafe { k.as_ref() }.ok_or_else(|| arg("the kernel is NULL"))?;
        let mut storage = vec![];
        let views = unsafe { input_views(k, inputs, n_inputs, &mut storage) }?;
        let shape: Vec<i64> = (k.kernel.output_shape_for(&views))
            .map_err(|e| lib_error(&e, k.source()))?
            .iter()
            .map(|&d| d as i64)
            .collect();
        if !shape.is_empty() {
            if dims.is_null() {
                return Err(arg("the dims are NULL"));
            }
            // SAFETY: `dims` has room for the output's rank.
            unsafe { std::ptr::copy_nonoverlapping(shape.as_ptr(), dims, shape.len()) };
        }
        Ok(())
    })
    .1
}

/// # Safety
/// `k` is null or a kernel from `slc_kernel_new`, not used afterwards.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_free(k: *mut slc_kernel) {
    if !k.is_null() {
        // SAFETY: created by Box::into_raw in slc_kernel_new.
        let _ = catch_unwind(AssertUnwindSafe(|| drop(unsafe { Box::from_raw(k) })));
    }
}

/// Runs the kernel into `out` (exactly `slc_kernel_output_nbytes` bytes).
///
/// # Safety
/// `k` is null or a live kernel; `inputs` points to `n_inputs` tensor descriptions of readable
/// memory; `out` to `out_nbytes` writable bytes that overlap no input.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_run(
    k: *const slc_kernel,
    inputs: *const slc_tensor,
    n_inputs: usize,
    out: *mut c_void,
    out_nbytes: usize,
) -> i32 {
    guard((), || {
        // SAFETY: per the contract above.
        let k = unsafe { k.as_ref() }.ok_or_else(|| arg("the kernel is NULL"))?;
        if out.is_null() && out_nbytes > 0 {
            return Err(arg("the output buffer is NULL"));
        }
        let mut storage = vec![];
        let views = unsafe { input_views(k, inputs, n_inputs, &mut storage) }?;
        let out: &mut [u8] = if out_nbytes == 0 {
            &mut []
        } else {
            unsafe { std::slice::from_raw_parts_mut(out.cast::<u8>(), out_nbytes) }
        };
        k.kernel.run_into_bytes(&views, out).map_err(|e| lib_error(&e, k.source()))
    })
    .1
}

/// Runs a store kernel (`a[i] = v`), updating the memory of its target input (dense) as
/// NumPy's `x[i] = v` does: in place, no copy, where the update reads no byte of the target;
/// else computed aside and copied over it.
///
/// # Safety
/// `k` is null or a live kernel; `inputs` points to `n_inputs` tensor descriptions of readable
/// memory, the target's also writable and touched by nothing else during the call.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_store(
    k: *const slc_kernel,
    inputs: *const slc_tensor,
    n_inputs: usize,
) -> i32 {
    guard((), || {
        // SAFETY: per the contract above.
        let k = unsafe { k.as_ref() }.ok_or_else(|| arg("the kernel is NULL"))?;
        let mut storage = vec![];
        let views = unsafe { input_views(k, inputs, n_inputs, &mut storage) }?;
        // SAFETY: the target's memory is writable and lent for the call (the contract).
        unsafe { k.kernel.store(&views) }.map_err(|e| lib_error(&e, k.source()))
    })
    .1
}

/// Runs the kernel on arrays in CUDA device memory (device 0) on `stream`: `inputs` describe
/// device memory (`data` a device pointer, strides in bytes), `out` is `out_nbytes` bytes of
/// device memory, dense, overlapping no input.
///
/// # Safety
/// `k` is null or a live kernel; each input describes device memory that stays readable until
/// the stream has run the kernel; `out` is writable device memory; `stream` a valid `CUstream`
/// of device 0's primary context (or 0, or `CU_STREAM_LEGACY`/`CU_STREAM_PER_THREAD`).
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_run_device(
    k: *const slc_kernel,
    inputs: *const slc_tensor,
    n_inputs: usize,
    out: *mut c_void,
    out_nbytes: usize,
    stream: *mut c_void,
) -> i32 {
    guard((), || {
        // SAFETY: per the contract above.
        let k = unsafe { k.as_ref() }.ok_or_else(|| arg("the kernel is NULL"))?;
        if out.is_null() && out_nbytes > 0 {
            return Err(arg("the output buffer is NULL"));
        }
        // SAFETY: per the contract above.
        let ts = unsafe { tensors(inputs, n_inputs) }?;
        let mut arrays = Vec::with_capacity(ts.len());
        for (i, t) in ts.iter().enumerate() {
            let what = k.input_name(i).map_or_else(|| format!("input {i}"), |n| format!("input `{n}`"));
            let d = dtype(t.dtype)?;
            // SAFETY: per the caller.
            let dims = unsafe { shape(t.shape, t.rank, &what) }?;
            let strides = match t.strides.is_null() {
                true => None,
                false => {
                    // SAFETY: a non-null `strides` has `rank` entries.
                    let bytes = unsafe { std::slice::from_raw_parts(t.strides, t.rank) };
                    let w = d.width() as i64;
                    if let Some(b) = bytes.iter().find(|&&b| b % w != 0) {
                        return Err(Fail(
                            SLC_ERR_RUNTIME,
                            format!("{what}: the byte stride {b} is not a multiple of the element size {w}"),
                        ));
                    }
                    Some(bytes.iter().map(|&b| (b / w) as isize).collect())
                }
            };
            if t.data.is_null() && dims.iter().all(|&x| x > 0) {
                return Err(Fail(SLC_ERR_RUNTIME, format!("{what}: the data pointer is NULL")));
            }
            let dims = dims.iter().map(|&x| x as usize).collect();
            arrays.push(slc::embed::DeviceArray { ptr: t.data as u64, dtype: d, shape: dims, strides });
        }
        let stream = slc::embed::Stream(stream as usize);
        // SAFETY: per the contract above.
        unsafe { k.kernel.run_device_into_bytes(&arrays, out as u64, out_nbytes, stream) }
            .map_err(|e| lib_error(&e, k.source()))
    })
    .1
}

/// # Safety
/// `k` is null or a live kernel.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_num_inputs(k: *const slc_kernel) -> usize {
    // SAFETY: per the contract above.
    unsafe { k.as_ref() }.map_or(0, |k| k.kernel.inputs().count())
}

/// # Safety
/// `k` is null or a live kernel.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_output_dtype(k: *const slc_kernel) -> i32 {
    // SAFETY: per the contract above.
    unsafe { k.as_ref() }.map_or(-1, |k| dtype_code(k.kernel.output_dtype()))
}

/// # Safety
/// `k` is null or a live kernel.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_output_rank(k: *const slc_kernel) -> usize {
    // SAFETY: per the contract above.
    unsafe { k.as_ref() }.map_or(0, |k| k.kernel.output_type().shape.len())
}

/// # Safety
/// `k` is null or a live kernel. The result lives as long as the kernel.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_output_shape(k: *const slc_kernel) -> *const i64 {
    // SAFETY: per the contract above.
    unsafe { k.as_ref() }.map_or(ptr::null(), |k| k.out_shape.as_ref().map_or(ptr::null(), |s| s.as_ptr()))
}

/// # Safety
/// `k` is null or a live kernel.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn slc_kernel_output_nbytes(k: *const slc_kernel) -> usize {
    // SAFETY: per the contract above.
    unsafe { k.as_ref() }.map_or(0, |k| k.kernel.output_nbytes().unwrap_or(0))
}

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
