//! A store kernel (`a[i] = v`) on a caller's device arrays, writing its target in place as
//! [`Kernel::store`] does on the host (`kernel/store.rs`): the update straight into the target
//! where that is safe, a `+=` whose updates may meet as three kernels, a strided target through
//! its view, else through a copy.

use super::*;
use crate::backend::loopnest::store_may_run_in_place;
use crate::embed::view::elements_distinct;

/// A `+=` or `*=` store whose updates may meet, on the device as on the host
/// ([`buffered_in_place`]): the old elements gathered into a buffer of the update's size, combined
/// with the value there, then stored back with `set` (the last write wins) — three kernels on
/// the caller's stream, each in place, touching only the updated elements. (The single plan
/// updates a copy of the whole target, copied back after.)
pub(crate) struct BufferedOnDevice {
    /// The gather, combine and scatter plans, verified, and their kernels.
    stages: [(VerifiedGenericPlan, Loaded); 3],
}

impl BufferedOnDevice {
    /// The buffered form of `plan`, loaded, if it has one.
    fn prepare(gpu: &device::Device, plan: &VerifiedGenericPlan) -> Result<Option<BufferedOnDevice>, Error> {
        let Some(parts) = buffered_in_place(plan.plan()) else { return Ok(None) };
        let load = |p| -> Result<Option<(VerifiedGenericPlan, Loaded)>, Error> {
            let Ok(verified) = plan::buffered::verify_stage(p) else { return Ok(None) };
            let loaded = gpu.load(&verified).map_err(|e| gpu_error(e.into()))?;
            Ok(Some((verified, loaded)))
        };
        let (Some(gather), Some(combine), Some(scatter)) =
            (load(parts.gather)?, load(parts.combine)?, load(parts.scatter)?)
        else {
            return Ok(None);
        };
        Ok(Some(BufferedOnDevice { stages: [gather, combine, scatter] }))
    }

    /// Runs on `inputs` (plan order), updating the target among them, which no other input
    /// overlaps; `expected` checks the scatter's output dims (the target's, or its window's).
    /// An index out of range fails the gather, before anything is written.
    ///
    /// # Safety
    /// As [`Kernel::store_device`].
    unsafe fn run(
        &self,
        gpu: &device::Device,
        inputs: &[DeviceArray],
        expected: impl Fn(&[usize]) -> Result<(), Error>,
        stream: Stream,
    ) -> Result<(), Error> {
        let [(gather, g), (combine, c), (scatter, s)] = &self.stages;
        let bound = gpu.bind(gather, g, inputs).map_err(gpu_error)?;
        let old = gpu.alloc(bound.out_bytes, stream).map_err(|e| gpu_error(e.into()))?;
        // SAFETY: the caller's arrays as promised; `old` is fresh, so nothing overlaps it.
        unsafe { gpu.launch_on(g, &bound, inputs, old.ptr, stream) }.map_err(gpu_error)?;
        let mut all = inputs.to_vec();
        all.push(DeviceArray {
            ptr: old.ptr,
            dtype: gather.dtype,
            shape: bound.shape.clone(),
            strides: None,
        });
        let bound = gpu.bind(combine, c, &all).map_err(gpu_error)?;
        // SAFETY: the combine's target is `old` (its last input), written in place: its
        // destination is `old`'s elements in order, each once.
        unsafe { gpu.launch_on(c, &bound, &all, old.ptr, stream) }.map_err(gpu_error)?;
        let bound = gpu.bind(scatter, s, &all).map_err(gpu_error)?;
        expected(&bound.shape)?;
        let plan::BufferId::Input(t) = scatter.output.buffer else {
            return Err(RuntimeError::Cuda("a buffered store writes an input".into()).into());
        };
        // SAFETY: the scatter writes the caller's target in place (a view's window: its plan
        // stores through the view; its value is `old`, its indices the caller's, none of them
        // the target); `old` lives until the stream has run
        // it (freed, or kept for reuse, in the stream's order).
        unsafe { gpu.launch_on(s, &bound, &all, all[t].window().ptr, stream) }.map_err(gpu_error)
    }
}

impl Kernel {
    /// Runs a store (`a[i] = v`) on arrays in device memory into its target, the input it
    /// stores into, as [`Kernel::store`] does on the host: in place where the update reads no
    /// byte of the target and fails, if it does, before its first write
    /// ([`loopnest::store_may_run_in_place`](crate::backend::loopnest::store_may_run_in_place)),
    /// and no other input overlaps it; a `+=` or `*=` whose updates may meet as three kernels,
    /// each in place (`BufferedOnDevice`); else into new device memory, copied over the target
    /// after the update. A strided target (a PyTorch or CuPy view; its elements distinct) is
    /// written through the view in place, as on the host (`plan::lower_through_view`), else
    /// through a dense copy written back. Not a store: an error.
    ///
    /// # Safety
    /// As [`run_device`](Self::run_device); the target's memory is writable.
    pub unsafe fn store_device(&self, inputs: &[DeviceArray], stream: Stream) -> Result<(), Error> {
        // SAFETY: the caller's word.
        unsafe { self.store_on_device(inputs, stream, true) }
    }

    /// [`store_device`](Self::store_device); `may_pack`: a strided target that cannot be stored
    /// through may be packed into a dense copy (not when this call writes such a copy back).
    unsafe fn store_on_device(
        &self,
        inputs: &[DeviceArray],
        stream: Stream,
        may_pack: bool,
    ) -> Result<(), Error> {
        let plan = self.plan();
        let (Some(_), plan::BufferId::Input(t)) = (&plan.store, plan.output.buffer) else {
            return Err(RuntimeError::Cuda("store_device runs stores (`a[i] = v`) only".into()).into());
        };
        let slot = self.shared.order.get(t).copied().filter(|&i| i < inputs.len());
        let Some(slot) = slot else {
            return Err(
                RuntimeError::InputCount { expected: self.shared.names.len(), found: inputs.len() }.into()
            );
        };
        let target = &inputs[slot];
        let (lo, hi) = target.reach();
        let (first, end) = (target.ptr as i128 + lo, target.ptr as i128 + hi);
        let overlapped = inputs.iter().enumerate().any(|(i, a)| {
            let (alo, ahi) = a.reach();
            i != slot && alo < ahi && a.ptr as i128 + alo < end && first < a.ptr as i128 + ahi
        });
        if let Some(strides) = target.layout() {
            if !elements_distinct(&target.shape, strides) {
                let name = &self.shared.names[slot];
                let why = format!(
                    "the store's target `{name}` has elements that share memory (a zero or overlapping stride)"
                );
                return Err(ViewError::Signature(why).into());
            }
            // SAFETY: the caller's word.
            return unsafe { self.store_device_strided(inputs, slot, overlapped, stream, may_pack) };
        }
        let expected = |shape: &[usize]| match shape == target.shape {
            true => Ok(()),
            false => Err(Error::from(RuntimeError::InputMismatch {
                name: self.shared.names[slot].clone(),
                expected: show(self.output_dtype(), shape),
                found: show(target.dtype, &target.shape),
            })),
        };
        if !overlapped && crate::backend::loopnest::store_may_run_in_place(plan.plan()) {
            let gpu = gpu()?;
            let call = self.device_call(inputs, stream)?;
            let bound = self.bind_call(gpu, &call)?;
            expected(&bound.shape)?;
            // SAFETY: the caller's arrays as promised; the output is the target itself, which the
            // update never reads, and no other input overlaps it.
            return unsafe { gpu.launch_on(&call.loaded, &bound, &call.inputs, target.ptr, stream) }
                .map_err(gpu_error);
        }
        // Only a `+=` or `*=` has a buffered form: any other store goes straight to the copy,
        // without preparing its call twice (a layout's call reruns the front end).
        let combines = plan.store.as_ref().is_some_and(|s| matches!(s.combine, Combine::Add | Combine::Mul));
        if !overlapped && combines {
            let gpu = gpu()?;
            let call = self.device_call(inputs, stream)?;
            // The generic plan's kept; a layout's plan (values read, views) loaded for the call.
            let cache = &self.shared.device.buffered;
            let buffered = match (&call.plan, cache.get()) {
                (Cow::Borrowed(_), Some(kept)) => kept.clone(),
                (Cow::Borrowed(p), None) => {
                    let made = BufferedOnDevice::prepare(gpu, p)?.map(Arc::new);
                    cache.get_or_init(|| made).clone()
                }
                (Cow::Owned(p), _) => BufferedOnDevice::prepare(gpu, p)?.map(Arc::new),
            };
            if let Some(b) = buffered {
                // SAFETY: the caller's arrays as promised, no other input overlapping the target.
                return unsafe { b.run(gpu, &call.inputs, expected, stream) };
            }
        }
        // SAFETY: the caller's arrays as promised.
        let updated = unsafe { self.run_device(inputs, stream) }?;
        let gpu = gpu()?;
        // SAFETY: `updated` is fresh device memory of the output's bytes, the target's dense
        // bytes (the output is the target's dtype and shape), both on `stream`.
        unsafe { gpu.copy(target.ptr, updated.memory.ptr, updated.memory.bytes, stream) }
            .map_err(|e| gpu_error(e.into()))
    }

    /// Whether [`store_device`](Self::store_device) runs this kernel's `+=` or `*=` (dense
    /// inputs, no other overlapping the target) as three kernels in place, touching only the
    /// updated elements, rather than through a copy of the whole target.
    pub fn stores_buffered_on_device(&self) -> bool {
        buffered_in_place(self.plan().plan()).is_some()
    }

    /// A store into a strided device target (its elements distinct), through the view in
    /// place: a plan of the call's layout whose output is the target's window
    /// (`plan::lower_through_view`), launched on the window, or its buffered form for a `+=`
    /// whose updates may meet. Where it cannot (another input reaching the window, an update
    /// that reads the target, a program that does not lower so), and `may_pack`, the view is
    /// packed into new device memory, stored into there and written back through the view.
    ///
    /// # Safety
    /// As [`store_device`](Self::store_device).
    unsafe fn store_device_strided(
        &self,
        inputs: &[DeviceArray],
        slot: usize,
        overlapped: bool,
        stream: Stream,
        may_pack: bool,
    ) -> Result<(), Error> {
        let target = &inputs[slot];
        let window = target.window();
        let gpu = gpu()?;
        // A program that does not lower through the view is stored into the packed copy, which
        // gives its error where it has one.
        let call = match overlapped {
            false => self.layout_call(gpu, inputs, true).ok().filter(|c| c.plan.stores_through_view()),
            true => None,
        };
        if let Some(call) = call {
            let plan = call.plan.plan();
            let expected = |shape: &[usize]| match shape == window.shape {
                true => Ok(()),
                false => Err(Error::from(RuntimeError::Cuda(format!(
                    "a store through a view wrote {shape:?} elements, not its window's {:?}",
                    window.shape
                )))),
            };
            if store_may_run_in_place(plan) {
                let bound = self.bind_call(gpu, &call)?;
                expected(&bound.shape)?;
                // SAFETY: the caller's arrays as promised; the output is the target's window,
                // which no other input reaches and the update never reads: only the view's
                // updated elements are written.
                return unsafe { gpu.launch_on(&call.loaded, &bound, &call.inputs, window.ptr, stream) }
                    .map_err(gpu_error);
            }
            let combines =
                plan.store.as_ref().is_some_and(|s| matches!(s.combine, Combine::Add | Combine::Mul));
            if combines && let Some(buffered) = BufferedOnDevice::prepare(gpu, &call.plan)? {
                // SAFETY: the caller's arrays as promised, no other input reaching the window.
                return unsafe { buffered.run(gpu, &call.inputs, expected, stream) };
            }
        }
        if !may_pack {
            return Err(
                RuntimeError::Cuda("a store through a strided view found no way to write it".into()).into()
            );
        }
        // SAFETY: the caller's word.
        unsafe { self.store_device_packed(inputs, slot, stream) }
    }

    /// A store into a strided device target through a dense copy: the store's updated copy of
    /// the view made in new device memory ([`run_device`](Self::run_device)), then written back
    /// through the view (the kernel `a[...] = b`, which stores through it), all on `stream`; a
    /// failed store writes nothing back.
    ///
    /// # Safety
    /// As [`store_device`](Self::store_device).
    unsafe fn store_device_packed(
        &self,
        inputs: &[DeviceArray],
        slot: usize,
        stream: Stream,
    ) -> Result<(), Error> {
        let target = &inputs[slot];
        // SAFETY: the caller's arrays, read.
        let updated = unsafe { self.run_device(inputs, stream) }?;
        let dense = DeviceArray { ptr: updated.memory.ptr, strides: None, ..target.clone() };
        let unpack = copy_kernel(ViewCopy::Unpack, target.dtype, target.shape.len())?;
        // SAFETY: the caller's target, written through its view (its elements distinct); the
        // copy is fresh, so it reaches no byte of the view, and is freed in the stream's order,
        // after this kernel.
        unsafe { unpack.store_on_device(&[target.clone(), dense], stream, false) }
    }

    /// The input a store kernel's call stores into, where it is a strided view (the store then
    /// runs through [`store_copy_of_view`](Self::store_copy_of_view) for a separate output).
    pub(super) fn strided_store_target(&self, inputs: &[DeviceArray]) -> Option<usize> {
        let plan = self.plan();
        let (Some(_), plan::BufferId::Input(t)) = (&plan.store, plan.output.buffer) else { return None };
        let slot = self.shared.order.get(t).copied().filter(|&i| i < inputs.len())?;
        inputs[slot].layout().is_some().then_some(slot)
    }

    /// A store's updated copy of its strided target `inputs[slot]`, into `out` (dense, the
    /// target's dtype and dims, overlapping no input): the view packed into `out` (the kernel `a`
    /// of its layout), then the store run on `out` in place, on `stream`.
    ///
    /// # Safety
    /// As [`store_device`](Self::store_device); `out` is writable device memory.
    pub(super) unsafe fn store_copy_of_view(
        &self,
        inputs: &[DeviceArray],
        slot: usize,
        out: &DeviceArray,
        stream: Stream,
    ) -> Result<(), Error> {
        let target = &inputs[slot];
        let pack = copy_kernel(ViewCopy::Pack, target.dtype, target.shape.len())?;
        // SAFETY: the caller's target, read; `out` of its dense bytes, overlapping no input.
        unsafe { pack.run_device_into(std::slice::from_ref(target), out, stream) }?;
        let mut on_copy = inputs.to_vec();
        on_copy[slot] = out.clone();
        // SAFETY: `out` holds the target's copy, lent to this call alone.
        unsafe { self.store_on_device(&on_copy, stream, false) }
    }
}

/// The copies between a strided view and a dense array of its elements.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum ViewCopy {
    /// `a`: the view's elements into a dense array.
    Pack,
    /// `a[...] = b`: a dense array's elements back through the view.
    Unpack,
}

/// The kernel of `copy` for `dtype` arrays of `rank` dims, every dim symbolic: prepared once per
/// process (the front end costs more than a small copy), each layout it meets compiled once
/// by the kernel itself.
fn copy_kernel(copy: ViewCopy, dtype: DType, rank: usize) -> Result<Arc<Kernel>, Error> {
    type Kernels = std::collections::HashMap<(ViewCopy, DType, usize), Arc<Kernel>>;
    static KERNELS: std::sync::Mutex<Option<Kernels>> = std::sync::Mutex::new(None);
    let key = (copy, dtype, rank);
    if let Some(k) = KERNELS.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert_default().get(&key) {
        return Ok(k.clone());
    }
    let dims: Vec<String> = (0..rank).map(|d| format!("D{d}")).collect();
    let ty: crate::types::SymTensorType = format!("{dtype}[{}]", dims.join(", "))
        .parse()
        .map_err(|e| Error::from(RuntimeError::Cuda(format!("the copy's signature: {e}"))))?;
    let k = Arc::new(match copy {
        ViewCopy::Pack => Kernel::prepare("a", &[("a", ty)])?,
        ViewCopy::Unpack => Kernel::prepare("a[...] = b", &[("a", ty.clone()), ("b", ty)])?,
    });
    let mut kernels = KERNELS.lock().unwrap_or_else(|e| e.into_inner());
    Ok(kernels.get_or_insert_default().entry(key).or_insert(k).clone())
}
