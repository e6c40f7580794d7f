//! Running a prepared slc kernel on held NumPy inputs, into a new array or `out=`.

use crate::convert::{Held, array_byte_range, array_of_tensor, data_ptr, empty_array, output_bytes};
use crate::errors;
use numpy::PyUntypedArray;
use pyo3::exceptions::{PyMemoryError, PyValueError};
use pyo3::prelude::*;
use slc::TensorView;
use std::panic::{AssertUnwindSafe, catch_unwind};

/// Outputs smaller than this run without releasing the GIL: such a kernel finishes in less time
/// than releasing and retaking the GIL costs (about 0.2 µs), and other threads would gain
/// nothing from the gap.
const KEEP_GIL_BELOW_BYTES: usize = 16 << 10;

/// Results from this size on live in slc tensors (see `run_kernel`): slc's runtime maps and
/// pools buffers from 2 MiB on.
const POOLED_RESULT_BYTES: usize = 2 << 20;

/// Runs `kernel` with `held` (in the kernel's input order) into `out` (checked here) or a new
/// array, and returns the array written. Errors, panics included, become Python exceptions.
pub fn run_kernel<'py>(
    py: Python<'py>,
    kernel: &slc::Kernel,
    names: &[&str],
    held: &[Held<'_>],
    out: Option<&Bound<'py, PyAny>>,
) -> PyResult<Bound<'py, PyAny>> {
    let views =
        held.iter().zip(names).map(|(h, name)| h.view(name)).collect::<PyResult<Vec<TensorView<'_>>>>()?;
    let dtype = kernel.output_dtype();
    let computed: Vec<usize>;
    let shape: &[usize] = match kernel.output_shape() {
        Some(dims) => dims,
        None => {
            computed = kernel.output_shape_for(&views).map_err(|e| errors::to_py(py, &e, kernel.source()))?;
            &computed
        }
    };
    let nbytes = slc::Tensor::byte_size(dtype, shape)
        .ok_or_else(|| PyMemoryError::new_err(format!("the result of shape {shape:?} is too large")))?;
    let (array, data): (Bound<'py, PyUntypedArray>, *mut u8) = match out {
        Some(out) => {
            let (array, data) = output_bytes(out, dtype, shape, nbytes)?;
            // An input overlapping `out=` would be read while it is written: run into a
            // temporary first, as NumPy does for overlapping operands.
            if let Some(target) = array_byte_range(&array)
                && held.iter().filter_map(|h| h.byte_range()).any(|r| r.0 < target.1 && target.0 < r.1)
            {
                let mut temporary = vec![0u8; nbytes];
                execute(py, kernel, &views, &mut temporary)?;
                // SAFETY: `out=` was checked writable, C-contiguous and `nbytes` long.
                unsafe { std::ptr::copy_nonoverlapping(temporary.as_ptr(), data, nbytes) };
                return Ok(array.into_any());
            }
            (array, data)
        }
        // Large results go into an slc tensor: its buffer comes from slc's pool of mapped,
        // huge-page-backed memory, already faulted in when the previous result of the same
        // size was dropped, where a fresh NumPy allocation pays a page fault per page.
        None if nbytes >= POOLED_RESULT_BYTES => {
            let mut tensor = slc::Tensor::for_overwrite(dtype, shape)
                .map_err(|e| PyMemoryError::new_err(format!("the result: {e}")))?;
            execute(py, kernel, &views, tensor.bytes_mut())?;
            return in_source_order(kernel, names, held, array_of_tensor(py, tensor)?.into_any());
        }
        None => {
            let array = empty_array(py, dtype, shape, nbytes)?;
            let data = data_ptr(&array);
            (array, data)
        }
    };
    // SAFETY: `data` is the start of `nbytes` writable bytes, C-ordered, owned by `array`, which
    // lives (and nothing else writes) until this function returns.
    let bytes =
        if nbytes == 0 { &mut [][..] } else { unsafe { std::slice::from_raw_parts_mut(data, nbytes) } };
    execute(py, kernel, &views, bytes)?;
    match out {
        Some(_) => Ok(array.into_any()),
        None => in_source_order(kernel, names, held, array.into_any()),
    }
}

/// NumPy keeps an input's byte order in what is read from it (`x[1:]` of a `>i4` array is
/// `>i4`): a new result read from a byte-swapped input, which slc read as a native copy, is put
/// back in the input's order. (`out=` keeps its own dtype, as NumPy's `take(..., out=)` does.)
fn in_source_order<'py>(
    kernel: &slc::Kernel,
    names: &[&str],
    held: &[Held<'_>],
    result: Bound<'py, PyAny>,
) -> PyResult<Bound<'py, PyAny>> {
    let plan = kernel.plan();
    let slc::plan::BufferId::Input(source) = plan.output.buffer else { return Ok(result) };
    let name = plan.inputs[source].name.as_str();
    match names.iter().position(|n| *n == name).map(|at| &held[at]) {
        Some(Held::Array { dtype, swapped: Some(order), .. }) if *dtype == kernel.output_dtype() => {
            result.call_method1("astype", (order.clone().unbind(),))
        }
        _ => Ok(result),
    }
}

/// Runs a store kernel (`a[i] = v`) into `target`, the array bound to its target `name`, as
/// NumPy's `x[i] = v` does: in place where the kernel can (the JIT writes the target's own
/// bytes, no copy), else into a temporary copied over it, so that every read sees the array as
/// it was (NumPy's buffered semantics): `slc::Kernel::store`.
pub fn run_store<'py>(
    py: Python<'py>,
    kernel: &slc::Kernel,
    names: &[&str],
    held: &[Held<'_>],
    name: &str,
    target: &Bound<'py, PyAny>,
) -> PyResult<()> {
    let flag = |f: &str| -> PyResult<bool> { target.getattr("flags")?.getattr(f)?.extract() };
    if !target.is_instance_of::<PyUntypedArray>() || !flag("writeable")? {
        return Err(PyValueError::new_err(format!(
            "the store's target `{name}` must be a writeable numpy.ndarray: slc stores into it in place"
        )));
    }
    let views = held.iter().zip(names).map(|(h, n)| h.view(n)).collect::<PyResult<Vec<TensorView<'_>>>>()?;
    if let Some(view) = names.iter().position(|n| *n == name).map(|at| &views[at])
        && !view.elements_distinct()
    {
        return Err(PyValueError::new_err(format!(
            "the store's target `{name}` has elements that share memory (a zero or overlapping stride): \
             which write lands there would be arbitrary"
        )));
    }
    let store = |views: &[TensorView<'_>]| {
        // SAFETY: the target's view is the writeable array's own memory (checked above, any
        // strides: a strided one is stored through a dense copy), lent by the caller for the call.
        catch_unwind(AssertUnwindSafe(|| unsafe { kernel.store(views) }))
    };
    let ran = match kernel.output_nbytes().is_some_and(|n| n < KEEP_GIL_BELOW_BYTES) {
        true => store(&views),
        false => py.detach(|| store(&views)),
    };
    match ran {
        Ok(Ok(())) => {}
        Ok(Err(e)) => return Err(errors::to_py(py, &e, kernel.source())),
        Err(panic) => return Err(errors::internal(py, "running a kernel", panic)),
    }
    // A byte-swapped target was held as a native copy (`convert::hold`): the store went there,
    // whole, and NumPy's own assignment now puts it back in the target's byte order.
    let held_target = names.iter().position(|n| *n == name).map(|at| &held[at]);
    if let Some(Held::Array { array, .. }) = held_target
        && !array.is(target)
    {
        target.set_item(py.Ellipsis(), array)?;
    }
    Ok(())
}

/// The kernel call proper; large ones release the GIL. A panic is caught and reported.
fn execute(py: Python<'_>, kernel: &slc::Kernel, views: &[TensorView<'_>], out: &mut [u8]) -> PyResult<()> {
    let keep_gil = out.len() < KEEP_GIL_BELOW_BYTES;
    let mut call = move || catch_unwind(AssertUnwindSafe(|| kernel.run_into_bytes(views, out)));
    let result = if keep_gil { call() } else { py.detach(call) };
    match result {
        Ok(Ok(())) => Ok(()),
        Ok(Err(e)) => Err(errors::to_py(py, &e, kernel.source())),
        Err(panic) => Err(errors::internal(py, "running a kernel", panic)),
    }
}
