//! A store kernel (`a[i] = v`) run on its target's own bytes: in place where it can, as three
//! in-place kernels for a `+=` whose updates may meet, else through a temporary copied back. The
//! rules of when writing in place is safe are apart from the kernel's ordinary runs.

use super::*;
use crate::embed::buffered::Buffered;

impl Kernel {
    /// Runs a store kernel (`a[i] = v`) writing its target's own bytes, as NumPy's `x[i] = v`
    /// does: the target is not copied. `Ok(false)` when this kernel does not store in place
    /// (the update runs on the interpreter, reads the target, may combine with one element
    /// twice, or an input overlaps it; the target view is strided): run it into a separate
    /// output instead, as [`run_into_bytes`](Self::run_into_bytes) does.
    ///
    /// # Safety
    /// The target's view points to writable memory that nothing else reads or writes during
    /// the call (views made from raw pointers: C, Python).
    pub unsafe fn store_in_place<V: AsView>(&self, inputs: &[V]) -> Result<bool, Error> {
        let s = &*self.shared;
        if self.plan().store.is_none() || s.executor != Executor::Jit {
            return Ok(false);
        }
        match self.route_general(inputs)? {
            // A strided target's view was packed into a copy: writing the copy would be lost.
            Route::Dense(_, held) if !matches!(self.plan().output.buffer, BufferId::Input(t) if matches!(held.get(t), Some(Held::InPlace(_)))) => {
                Ok(false)
            }
            // SAFETY: the caller's word on the target; the route checked the inputs.
            Route::Dense(jit, held) => match unsafe { jit.store_in_place(&held, self.threads) } {
                None => Ok(false),
                Some(ran) => ran.map(|()| true).map_err(|e| self.explain(e, inputs)),
            },
            // A layout's concrete store (a strided view's, a repeated shape's) on the caller's
            // views, strided ones read in place (packing them, the store ran into a copy of
            // the whole target copied back: `a[:65536, 1:] = v[:, 1:]` took 5x NumPy's time).
            Route::Special(special) => {
                let Some(native) = &special.native else { return Ok(false) };
                let BufferId::Input(t) = special.plan.output.buffer else { return Ok(false) };
                let Some(at) = s.names.iter().position(|n| *n == special.plan.inputs[t].name) else {
                    return Ok(false);
                };
                let target = inputs[at].as_view();
                let overlaps = input_reaching(inputs, Some(at), target.byte_span()).is_some();
                if !native.stores_in_place() || !target.is_contiguous() || overlaps {
                    return Ok(false);
                }
                // SAFETY: the target is dense and writable, and nothing else reads or writes
                // it (the caller's word); no other input reaches it, and the kernel's update
                // reads none of it (`stores_in_place`).
                unsafe {
                    self.call_special(&special, native, inputs, target.as_ptr().cast_mut(), target.nbytes())
                }
                .map(|()| true)
            }
        }
    }

    /// Runs a store kernel (`a[i] = v`) updating its target's own bytes: in place where it can
    /// ([`store_in_place`](Self::store_in_place)); a `+=` or `*=` whose updates may meet, by
    /// kernels that each run in place (`embed/buffered.rs`); else computed into a temporary that
    /// is then copied over the target, so that every read sees the target as it was. A strided
    /// target is stored through a dense copy of it; a kernel without a store is an error.
    ///
    /// # Safety
    /// As for [`store_in_place`](Self::store_in_place).
    pub unsafe fn store<V: AsView>(&self, inputs: &[V]) -> Result<(), Error> {
        let plan = self.plan();
        let target = match (&plan.store, plan.output.buffer) {
            (Some(_), BufferId::Input(t)) => self.shared.names.iter().position(|n| *n == plan.inputs[t].name),
            _ => None,
        };
        let Some((t, view)) = target.and_then(|t| Some((t, inputs.get(t)?.as_view()))) else {
            return Err(ViewError::Signature("the kernel has no store (`a[i] = v`) to run".into()).into());
        };
        if !view.is_contiguous() {
            // SAFETY: the caller's word.
            return unsafe { self.store_through(inputs, t, &view) };
        }
        // SAFETY: the caller's word.
        if unsafe { self.store_in_place(inputs) }? || unsafe { self.store_buffered(inputs) }? {
            return Ok(());
        }
        let mut updated = vec![0u8; view.nbytes()];
        self.run_into_bytes(inputs, &mut updated)?;
        // SAFETY: the target is dense, `nbytes` long, and writable (the caller's word); the
        // kernel has finished reading it.
        unsafe { std::ptr::copy_nonoverlapping(updated.as_ptr(), view.as_ptr().cast_mut(), updated.len()) };
        Ok(())
    }

    /// A store into a strided target (a NumPy view such as `x[:, ::2]`): run on a dense copy of
    /// the target, which is then written back through its strides, as NumPy's setitem writes
    /// through a view. The other inputs read the target as it was (they may be views of it).
    /// A target whose elements share bytes (a zero stride) is refused: which write lands there
    /// would be arbitrary.
    ///
    /// # Safety
    /// As for [`store_in_place`](Self::store_in_place).
    unsafe fn store_through<V: AsView>(
        &self,
        inputs: &[V],
        t: usize,
        target: &TensorView<'_>,
    ) -> Result<(), Error> {
        if !target.elements_distinct() {
            let name = &self.shared.names[t];
            let why = format!(
                "the store's target `{name}` has elements that share memory (a zero or overlapping stride)"
            );
            return Err(ViewError::Signature(why).into());
        }
        // SAFETY: the caller's word.
        if unsafe { self.store_through_view(inputs, t, target) }? {
            return Ok(());
        }
        let mut copy = target.to_tensor().map_err(RuntimeError::from)?;
        let (dtype, dims) = (copy.dtype(), copy.shape().to_vec());
        {
            // SAFETY: `copy` owns its dense bytes, written only by the store below.
            let dense = unsafe { TensorView::from_raw(dtype, &dims, None, copy.bytes_mut().as_mut_ptr()) }?;
            let views: Vec<TensorView<'_>> = (inputs.iter().enumerate())
                .map(|(i, v)| if i == t { dense.reborrow() } else { v.as_view() })
                .collect();
            // SAFETY: the copy is dense and lent to this call alone.
            unsafe { self.store(&views) }?;
        }
        // SAFETY: the caller's word on the target's memory; its elements are distinct.
        unsafe { target.unpack_from(copy.bytes()) };
        Ok(())
    }

    /// A store into a strided target (its elements distinct) written through the view in
    /// place, as NumPy's setitem writes: a kernel of the call's layout whose output is the
    /// target's window and whose updates address it through the view's strides
    /// (`plan::lower_through_view`), so that only the updated elements are touched. `Ok(false)`
    /// where it cannot, for a dense copy to be stored into instead: not the JIT, another input
    /// reaching the target's window, an update that reads the target or has no update nest, or
    /// more layouts than a kernel keeps.
    ///
    /// # Safety
    /// As for [`store_in_place`](Self::store_in_place).
    unsafe fn store_through_view<V: AsView>(
        &self,
        inputs: &[V],
        t: usize,
        target: &TensorView<'_>,
    ) -> Result<bool, Error> {
        let s = &*self.shared;
        if s.executor != Executor::Jit || target.numel() == 0 {
            return Ok(false);
        }
        let window = target.byte_span();
        if input_reaching(inputs, Some(t), window).is_some() {
            return Ok(false);
        }
        self.check_signature(inputs)?;
        let views: Vec<TensorView<'_>> = inputs.iter().map(|v| v.as_view()).collect();
        let source = Source { through_view: true, ..self.specializing() };
        // A program that does not lower through the view (or fails to compile for this layout)
        // is stored into a dense copy, which gives its error where it has one.
        let Ok(Some(special)) = s.through_view.get_or_compile(&source, &views) else { return Ok(false) };
        let bytes = window.1 - window.0;
        if !special.plan.stores_through_view() || special.plan.output_bytes() != bytes as u64 {
            return Ok(false);
        }
        let Some(native) = special.native.as_ref().filter(|n| n.stores_in_place()) else {
            // SAFETY: the caller's word; no other input reaches the window.
            return unsafe { self.store_through_view_buffered(&special, inputs) };
        };
        // The window's lowest byte: element [0, ..., 0] less what negative steps reach below it.
        let first = target.as_ptr().cast_mut().wrapping_sub(target.as_ptr() as usize - window.0);
        // SAFETY: the plan's output is the target's window, starting at `first`, `bytes` long;
        // given the window itself, the kernel copies nothing and writes only the updated
        // elements, the view's own, which are writable and nothing else reads or writes (the
        // caller's word; no other input reaches the window). Its update reads no byte of the
        // target (`stores_in_place`).
        unsafe { self.call_special(&special, native, inputs, first, bytes) }.map(|()| true)
    }

    /// A `+=` or `*=` through a view whose updates may meet ([`store_through_view`]'s plan
    /// cannot run in place): the plan's three buffered kernels (`embed/buffered.rs`), on the
    /// inputs' windows, touching only the updated elements. `Ok(false)` where it has none or a
    /// kernel declined, nothing written.
    ///
    /// # Safety
    /// As for [`store_in_place`](Self::store_in_place); no other input reaches the target's
    /// window.
    unsafe fn store_through_view_buffered<V: AsView>(
        &self,
        special: &Special,
        inputs: &[V],
    ) -> Result<bool, Error> {
        let buffered = special.buffered.get_or_init(|| Buffered::prepare(&special.plan.lift()));
        let Some(buffered) = buffered.as_ref() else { return Ok(false) };
        // The plan's inputs in its order: a strided one as its window (its bytes from its lowest
        // element, one axis), as the plan declares it.
        let mut at = Vec::with_capacity(special.plan.inputs.len());
        for d in &special.plan.inputs {
            let Some(i) = self.shared.names.iter().position(|n| *n == d.name) else { return Ok(false) };
            let (lo, hi) = inputs[i].as_view().byte_span();
            at.push((i, lo, [(hi - lo) / d.dtype.width()]));
        }
        let mut held = Vec::with_capacity(at.len());
        for (d, (i, lo, dims)) in special.plan.inputs.iter().zip(&at) {
            let view = match d.strides {
                None => inputs[*i].as_view(),
                // SAFETY: the view's window, inside the caller's memory (a view reaches only its
                // elements' bytes); the target's writable, as the caller's word.
                Some(_) => unsafe { TensorView::from_raw(d.dtype, dims, None, *lo as *mut u8) }?,
            };
            held.push(Held::InPlace(view));
        }
        // SAFETY: the caller's word on the target; the inputs as the plan declares them.
        match unsafe { buffered.run(&held, self.threads) } {
            None => Ok(false),
            Some(ran) => ran.map(|()| true).map_err(|e| self.explain(e, inputs)),
        }
    }

    /// Runs a `+=` or `*=` store whose updates may meet in place, as three kernels
    /// (`embed/buffered.rs`); `Ok(false)` where it has no such form or a kernel declined.
    ///
    /// # Safety
    /// As for [`store_in_place`](Self::store_in_place).
    unsafe fn store_buffered<V: AsView>(&self, inputs: &[V]) -> Result<bool, Error> {
        let Some(buffered) = self.buffered() else { return Ok(false) };
        let Route::Dense(_, held) = self.route_general(inputs)? else { return Ok(false) };
        // A strided target's view was packed into a copy: writing the copy would be lost.
        if !matches!(self.plan().output.buffer, BufferId::Input(t) if matches!(held.get(t), Some(Held::InPlace(_))))
        {
            return Ok(false);
        }
        // SAFETY: the caller's word on the target; the route checked the inputs.
        match unsafe { buffered.run(&held, self.threads) } {
            None => Ok(false),
            Some(ran) => ran.map(|()| true).map_err(|e| self.explain(e, inputs)),
        }
    }
}
