//! Prepared kernels: compile one (for constant or symbolic input shapes), run it into caller
//! buffers (or in place, or on a device), and read its signature and output shape.

use crate::{
    Fail, SLC_ERR_RUNTIME, arg, dtype, dtype_code, guard, input_views, lib_error, shape, slc_input_sig,
    slc_kernel, slc_session, slc_tensor, tensors, text,
};
use slc::types::{SymTensorType, TensorType};
use std::ffi::{c_char, c_void};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::ptr;

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

/// Runs a store kernel (`a[i] = v`), updating the memory of its target input as NumPy's
/// `x[i] = v` does: in place, no copy, where the update reads no byte of the target; else
/// computed aside and copied over it. A strided target is written through its strides.
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
