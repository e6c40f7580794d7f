//! A [`Kernel`] on arrays in GPU memory: the caller's device pointers read in place, the output
//! written into the caller's device array or a new one, on the caller's stream
//! (`backend::cuda::buffers`). Dense inputs take the kernel's one generic plan, loaded on the
//! device once; a boolean mask of a generic plan is copied to the host for its `nonzero()`, as
//! PyTorch reads a mask before it knows the output's size, and the positions copied in. A
//! strided view, or an input whose values a fixed program's front end read (a short index
//! list), gets the plan of the call's layout, those values copied to the host first.

mod store;

use super::Kernel;
use crate::backend::RuntimeError;
use crate::backend::cuda::Bound;
use crate::backend::cuda::buffers::Loaded;
pub use crate::backend::cuda::buffers::{DeviceArray, DeviceMemory, Stream};
use crate::backend::cuda::device::{self, GpuError};
use crate::backend::loopnest::buffered_in_place;
use crate::embed::{TensorView, ViewError};
use crate::error::Error;
use crate::pipeline::compile_with_values;
use crate::plan::{self, InputStrides, VerifiedGenericPlan};
use crate::sema::{InputTypes, InputValues, value_may_be_read};
use crate::types::{Combine, ShapeDisplay, TensorType};
use slc_runtime::{DType, Tensor};
use std::borrow::Cow;
use std::sync::{Arc, OnceLock};
use store::BufferedOnDevice;

/// A kernel's output in device memory that slc allocated (on the call's stream).
#[derive(Debug)]
pub struct DeviceOutput {
    pub memory: DeviceMemory,
    pub dtype: DType,
    pub shape: Vec<usize>,
}

/// The generic plan's kernels on the GPU, loaded at a kernel's first device call, and — for a
/// plan with nothing to bind — its one binding, made once (a call then checks its inputs' types
/// and launches: the per-call cost of small arrays).
#[derive(Default)]
pub(crate) struct DeviceCache {
    loaded: OnceLock<Arc<Loaded>>,
    fixed: OnceLock<(Vec<InputType>, Arc<Bound>)>,
    /// The generic plan's buffered store, loaded at its first in-place `+=` (`None`: it has none).
    buffered: OnceLock<Option<Arc<BufferedOnDevice>>>,
}

/// An input's dtype and dims.
type InputType = (DType, Vec<usize>);

/// A plan, its kernels, and the caller's inputs in its order.
struct DeviceCall<'k> {
    plan: Cow<'k, VerifiedGenericPlan>,
    loaded: Arc<Loaded>,
    inputs: Vec<DeviceArray>,
    /// The device memory of inputs derived for this call (a mask's `nonzero()`), freed in the
    /// order of the call's stream once the call is queued.
    _derived: Vec<DeviceMemory>,
}

/// The process's GPU, or the error every surface gives without one (E0209).
fn gpu() -> Result<&'static device::Device, Error> {
    device::device().map_err(|e| Error::from(RuntimeError::Cuda(e.to_string())))
}

fn gpu_error(e: GpuError) -> Error {
    match e {
        GpuError::Run(e) => e.into(),
        GpuError::Cuda(e) => RuntimeError::Cuda(e.to_string()).into(),
    }
}

fn show(dtype: DType, dims: &[usize]) -> String {
    let dims: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
    format!("{dtype}{}", ShapeDisplay(&dims))
}

impl Kernel {
    /// Runs on arrays in device memory into a new device array allocated on `stream`; the
    /// launch is queued on `stream` (the call waits for it only when an index can fail, to
    /// report the error with its location, as on the CPU).
    ///
    /// # Safety
    /// Each input's pointer, dims and strides describe device memory of this process's current
    /// GPU that stays readable until `stream` has run the kernel; `stream` is valid.
    pub unsafe fn run_device(&self, inputs: &[DeviceArray], stream: Stream) -> Result<DeviceOutput, Error> {
        let gpu = gpu()?;
        if let Some(slot) = self.strided_store_target(inputs) {
            let target = &inputs[slot];
            let (dtype, shape) = (target.dtype, target.shape.clone());
            let bytes = shape.iter().product::<usize>() * dtype.width();
            if let Some(max) = self.shared.max_output_bytes {
                crate::exec::check_output(bytes as u64, Some(max), None)?;
            }
            let memory = gpu.alloc(bytes, stream).map_err(|e| gpu_error(e.into()))?;
            let out = DeviceArray { ptr: memory.ptr, dtype, shape: shape.clone(), strides: None };
            // SAFETY: the caller's inputs; `memory` is fresh, of the target's dense bytes.
            unsafe { self.store_copy_of_view(inputs, slot, &out, stream) }?;
            return Ok(DeviceOutput { memory, dtype, shape });
        }
        let call = self.device_call(inputs, stream)?;
        let bound = self.bind_call(gpu, &call)?;
        // Only a limit the caller set: the host's free memory is no bound on device memory (the
        // allocation reports the device's own), and reading it (/proc, the cgroup's files) cost
        // a call from Python 15-20 µs, more than the launch (outputs of 64 MiB and more).
        if let Some(max) = self.shared.max_output_bytes {
            crate::exec::check_output(bound.out_bytes as u64, Some(max), None)?;
        }
        let memory = gpu.alloc(bound.out_bytes, stream).map_err(|e| gpu_error(e.into()))?;
        // SAFETY: the caller's inputs as promised; `memory` is fresh, so nothing overlaps it.
        unsafe { gpu.launch_on(&call.loaded, &bound, &call.inputs, memory.ptr, stream) }
            .map_err(gpu_error)?;
        Ok(DeviceOutput { memory, dtype: self.output_dtype(), shape: bound.shape.clone() })
    }

    /// Runs on arrays in device memory into `out`, a dense device array of the output's dtype
    /// and the dims these inputs give, that overlaps no input.
    ///
    /// # Safety
    /// As [`run_device`](Self::run_device); `out` describes writable device memory.
    pub unsafe fn run_device_into(
        &self,
        inputs: &[DeviceArray],
        out: &DeviceArray,
        stream: Stream,
    ) -> Result<(), Error> {
        // SAFETY: as the caller promises.
        unsafe { self.run_device_checked(inputs, out, stream, None) }
    }

    /// As [`run_device_into`](Self::run_device_into), into `out_nbytes` bytes at device address
    /// `out` (dense, C order: the C ABI's form).
    ///
    /// # Safety
    /// As [`run_device_into`](Self::run_device_into).
    pub unsafe fn run_device_into_bytes(
        &self,
        inputs: &[DeviceArray],
        out: u64,
        out_nbytes: usize,
        stream: Stream,
    ) -> Result<(), Error> {
        let out = DeviceArray { ptr: out, dtype: DType::U8, shape: vec![out_nbytes], strides: None };
        // SAFETY: as the caller promises.
        unsafe { self.run_device_checked(inputs, &out, stream, Some(out_nbytes)) }
    }

    /// `out` checked against the call's output (its bytes only, when `bytes` is given), then run.
    unsafe fn run_device_checked(
        &self,
        inputs: &[DeviceArray],
        out: &DeviceArray,
        stream: Stream,
        bytes: Option<usize>,
    ) -> Result<(), Error> {
        let gpu = gpu()?;
        // A store into a strided view: its updated copy is the view's dtype and dims.
        let viewed = self.strided_store_target(inputs);
        let (call, bound, shape) = match viewed {
            Some(slot) => (None, None, inputs[slot].shape.clone()),
            None => {
                let call = self.device_call(inputs, stream)?;
                let bound = self.bind_call(gpu, &call)?;
                let shape = bound.shape.clone();
                (Some(call), Some(bound), shape)
            }
        };
        let out_bytes = shape.iter().product::<usize>() * self.output_dtype().width();
        if let Some(len) = bytes {
            if len != out_bytes {
                return Err(ViewError::OutputLength { expected: out_bytes, len }.into());
            }
        } else if out.dtype != self.output_dtype() || out.shape != shape || out.layout().is_some() {
            let strided = if out.layout().is_some() { " (strided)" } else { "" };
            return Err(RuntimeError::InputMismatch {
                name: "the output".into(),
                expected: format!("{} dense", show(self.output_dtype(), &shape)),
                found: format!("{}{strided}", show(out.dtype, &out.shape)),
            }
            .into());
        }
        let (lo, hi) = out.reach();
        let (first, end) = (out.ptr as i128 + lo, out.ptr as i128 + hi);
        for (i, a) in inputs.iter().enumerate() {
            let (alo, ahi) = a.reach();
            if alo < ahi && a.ptr as i128 + alo < end && first < a.ptr as i128 + ahi {
                return Err(ViewError::Overlap(self.shared.names.get(i).cloned().unwrap_or_default()).into());
            }
        }
        let (Some(call), Some(bound)) = (call, bound) else {
            let slot = viewed.unwrap_or_default();
            let dense = DeviceArray { ptr: out.ptr, dtype: self.output_dtype(), shape, strides: None };
            // SAFETY: the caller's arrays as promised, `out` checked against the output.
            return unsafe { self.store_copy_of_view(inputs, slot, &dense, stream) };
        };
        // SAFETY: the caller's arrays as promised, `out` checked against the output.
        unsafe { gpu.launch_on(&call.loaded, &bound, &call.inputs, out.ptr, stream) }.map_err(gpu_error)
    }

    /// The plan for these inputs and its kernels: the generic plan for dense inputs, else the
    /// plan of their layout.
    fn device_call(&self, inputs: &[DeviceArray], stream: Stream) -> Result<DeviceCall<'_>, Error> {
        let s = &*self.shared;
        if inputs.len() != s.names.len() {
            return Err(RuntimeError::InputCount { expected: s.names.len(), found: inputs.len() }.into());
        }
        let gpu = gpu()?;
        let dense = inputs.iter().all(|a| a.layout().is_none());
        // A program compiled for values it read (a mask's, an operator parameter's) is compiled
        // again for the call's values, read from the device.
        let read_values = s.fixed.as_ref().is_some_and(|c| !c.read.values.is_empty());
        if dense && !read_values {
            let loaded = match s.device.loaded.get() {
                Some(loaded) => loaded.clone(),
                None => {
                    let loaded = Arc::new(gpu.load(&s.plan).map_err(|e| gpu_error(e.into()))?);
                    s.device.loaded.get_or_init(|| loaded).clone()
                }
            };
            // A mask's `nonzero()` is made on the host, as the CPU's generic route makes it, and
            // copied in: the generic kernel takes it as any input. (Compiling for the mask's
            // values instead would make every position a constant of the kernel's source.)
            // A store's value of another dtype is cast there too, as the CPU casts it.
            let mut derived = vec![];
            let mut ordered = Vec::with_capacity(s.order.len());
            for ((&i, &is_derived), decl) in s.order.iter().zip(&s.derived).zip(&s.plan.inputs) {
                if !is_derived {
                    ordered.push(inputs[i].clone());
                    continue;
                }
                let given = elements_to_host(&inputs[i])?;
                let how = decl.derived.as_ref().expect("a derived input");
                let rows = plan::derive(how, decl.dtype, given.dtype(), given.bytes(), given.shape())
                    .map_err(RuntimeError::from)?;
                let memory = gpu.upload(rows.bytes(), stream).map_err(|e| gpu_error(e.into()))?;
                ordered.push(DeviceArray {
                    ptr: memory.ptr,
                    dtype: rows.dtype(),
                    shape: rows.shape().to_vec(),
                    strides: None,
                });
                derived.push(memory);
            }
            return Ok(DeviceCall {
                plan: Cow::Borrowed(&s.plan),
                loaded,
                inputs: ordered,
                _derived: derived,
            });
        }
        self.layout_call(gpu, inputs, false)
    }

    /// The front end for the call's dims and the values it reads (copied from the device), the
    /// plan lowered with the views' strides; `through_view`: a store's strided target stored
    /// through in place (`plan::lower_through_view`), its window the output.
    #[cold]
    fn layout_call(
        &self,
        gpu: &device::Device,
        inputs: &[DeviceArray],
        through_view: bool,
    ) -> Result<DeviceCall<'_>, Error> {
        let s = &*self.shared;
        for (i, (a, t)) in inputs.iter().zip(&s.types).enumerate() {
            if a.dtype != t.dtype || a.shape.len() != t.shape.len() {
                return Err(RuntimeError::InputMismatch {
                    name: s.names[i].clone(),
                    expected: t.to_string(),
                    found: show(a.dtype, &a.shape),
                }
                .into());
            }
        }
        let types: InputTypes = (s.names.iter().zip(inputs))
            .map(|(n, a)| (n.clone(), TensorType::of(a.dtype, &a.shape)))
            .collect();
        let mut values = InputValues::new();
        for (n, a) in s.names.iter().zip(inputs) {
            if value_may_be_read(a.dtype, a.shape.iter().product()) {
                values.insert(n.clone(), elements_to_host(a)?);
            }
        }
        // The Python `int`s the kernel was compiled for are Python `int`s again.
        values.mark_python_ints(s.fixed.iter().flat_map(|c| &c.read.python_ints));
        let compiled = compile_with_values(&s.src, &types, &values)?;
        let strides: InputStrides = (s.names.iter().zip(inputs))
            .filter_map(|(n, a)| Some((n.clone(), a.layout()?.iter().map(|&x| x as i64).collect())))
            .collect();
        let plan = match strides.is_empty() {
            true => compiled.plan.clone(),
            false => crate::limits::with_stack_for(compiled.checked.depth, || {
                let lower = if through_view { plan::lower_through_view } else { plan::lower_with_strides };
                plan::verify(lower(&compiled.checked, &strides)?).map_err(Error::from)
            })?,
        };
        let plan = plan.lift();
        if plan.inputs.iter().any(|d| d.cast_of().is_some()) {
            let what = "a store's value of another dtype than its target's in a kernel compiled per call (strided inputs, values it reads): give the value in the target's dtype";
            return Err(RuntimeError::Unsupported { executor: "cuda", what }.into());
        }
        let ordered = (plan.inputs.iter())
            .map(|d| {
                let at = s.names.iter().position(|n| *n == d.name);
                at.map(|i| inputs[i].clone()).ok_or_else(|| RuntimeError::UnboundInput(d.name.clone()))
            })
            .collect::<Result<Vec<_>, _>>()?;
        let loaded = Arc::new(gpu.load(&plan).map_err(|e| gpu_error(e.into()))?);
        Ok(DeviceCall { plan: Cow::Owned(plan), loaded, inputs: ordered, _derived: vec![] })
    }

    /// The call's binding: the kernel's one binding when its plan binds nothing and the inputs
    /// have its types, else bound now.
    fn bind_call(&self, gpu: &device::Device, call: &DeviceCall<'_>) -> Result<Arc<Bound>, Error> {
        let cache = &self.shared.device;
        let generic = matches!(call.plan, Cow::Borrowed(_)) && call.plan.binds_nothing();
        let same = |types: &[InputType]| {
            types.len() == call.inputs.len()
                && types.iter().zip(&call.inputs).all(|((d, dims), a)| *d == a.dtype && *dims == a.shape)
        };
        if generic
            && let Some((types, bound)) = cache.fixed.get()
            && same(types)
        {
            return Ok(bound.clone());
        }
        let bound = Arc::new(gpu.bind(&call.plan, &call.loaded, &call.inputs).map_err(gpu_error)?);
        if generic {
            let types = call.inputs.iter().map(|a| (a.dtype, a.shape.clone())).collect();
            let _ = cache.fixed.set((types, bound.clone()));
        }
        Ok(bound)
    }
}

/// A device array's elements on the host, dense in C order: its window copied over, a strided
/// array's elements then packed as a host view packs them. Synchronous.
pub fn elements_to_host(a: &DeviceArray) -> Result<Tensor, Error> {
    let window = a.window().to_host().map_err(|e| gpu_error(e.into()))?;
    let Some(strides) = a.layout() else { return Ok(window) };
    let width = a.dtype.width() as isize;
    let bytes: Vec<isize> = strides.iter().map(|s| s * width).collect();
    // Element [0, ..., 0] lies `-lo` bytes into the window.
    let first = usize::try_from(-a.reach().0).map_err(|_| RuntimeError::Cuda("a strided window".into()))?;
    // SAFETY: the window holds every element the dims and strides reach from element 0.
    let view =
        unsafe { TensorView::from_raw(a.dtype, &a.shape, Some(&bytes), window.bytes().as_ptr().add(first)) }?;
    Ok(view.to_tensor().map_err(RuntimeError::from)?)
}
