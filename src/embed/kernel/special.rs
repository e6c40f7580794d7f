//! A call run on a specialized kernel (a strided view's layout, a repeated shape's dims, or the
//! interpreter's concrete plan), and the policy that makes one: kept apart from the generic
//! kernel's fast paths in `kernel.rs`.

use super::*;

impl Kernel {
    /// A specialized kernel, once `out` is checked against its output.
    pub(super) fn run_special_checked<V: AsView>(
        &self,
        special: &Special,
        inputs: &[V],
        out: &mut [u8],
        expect: &Expect<'_>,
    ) -> Result<(), Error> {
        if self.shared.out_fixed.is_none() {
            let dims = &special.out_dims;
            let nbytes = Tensor::byte_size(self.output_dtype(), dims).unwrap_or(usize::MAX);
            self.check_out(expect, out.len(), dims, nbytes)?;
        }
        self.run_special(special, inputs, out)
    }

    /// The specialization policy on a dense call of a generic plan: the kernel kept for its
    /// dims, or compiled now (the shape repeated).
    #[inline]
    pub(super) fn specialize_dense<V: AsView>(&self, inputs: &[V]) -> Option<Arc<Special>> {
        let s = &*self.shared;
        if let Some(special) = s.specials.find(inputs) {
            return Some(special);
        }
        if s.specials.note_dense(inputs) && self.check_signature(inputs).is_ok() {
            let views: Vec<TensorView<'_>> = inputs.iter().map(|v| v.as_view()).collect();
            // A shape the generic kernel refuses is not specialized (its error comes from the
            // generic path, explained).
            return s.specials.get_or_compile(&self.specializing(), &views).ok().flatten();
        }
        None
    }

    pub(super) fn specializing(&self) -> Source<'_> {
        let s = &*self.shared;
        Source {
            src: &s.src,
            names: &s.names,
            fixed: s.fixed.as_ref(),
            // The kernel's executor, not its generic plan's runnable (a store the loop nest
            // cannot write runs on the interpreter; `specialize::specialize` asks per layout).
            jit: s.executor == Executor::Jit,
            through_view: false,
        }
    }

    /// Runs a specialized kernel on the caller's inputs (strided views in place).
    fn run_special<V: AsView>(&self, special: &Special, inputs: &[V], out: &mut [u8]) -> Result<(), Error> {
        let Some(native) = &special.native else { return self.run_interp(special, inputs, out) };
        // SAFETY: `out` is a borrow of its own: writable, and no input reaches it.
        unsafe { self.call_special(special, native, inputs, out.as_mut_ptr(), out.len()) }
    }

    /// Runs `native`, `special`'s kernel, on the caller's inputs (strided views in place) into
    /// `out` (`out_nbytes` bytes): a store's target itself for a store in place.
    ///
    /// # Safety
    /// `out` holds `out_nbytes` writable bytes, exactly the output's (checked by the caller),
    /// which no input reaches unless `out` is a store's target that its kernel may write in
    /// place (`JitKernel::stores_in_place`).
    pub(super) unsafe fn call_special<V: AsView>(
        &self,
        special: &Special,
        native: &JitKernel,
        inputs: &[V],
        out: *mut u8,
        out_nbytes: usize,
    ) -> Result<(), Error> {
        let mut few = [std::ptr::null::<u8>(); FEW_INPUTS];
        let many: Vec<*const u8>;
        let table: &[*const u8] = if inputs.len() <= FEW_INPUTS {
            few.iter_mut().zip(inputs).for_each(|(slot, v)| *slot = v.as_view().as_ptr());
            &few[..inputs.len()]
        } else {
            many = inputs.iter().map(|v| v.as_view().as_ptr()).collect();
            &many
        };
        // SAFETY: the special matched the inputs' dtypes, dims and strides (its plan declares
        // them, and a view reaches only readable elements); `out` as the caller says.
        match unsafe { native.call(table, out, out_nbytes, self.threads) } {
            STATUS_OK => Ok(()),
            status => {
                let fallback: Error = jit::status_error(status).into();
                Err(self.interp_tensors(inputs).map_or(fallback.clone(), |tensors| {
                    match special.compiled.run_with(&tensors, &RunOptions::interpreter(), &Default::default())
                    {
                        Err(e) => e,
                        Ok(_) => fallback,
                    }
                }))
            }
        }
    }

    /// A specialized plan on the interpreter or the GPU (the kernel's executor): inputs copied
    /// into tensors, the result out of one.
    fn run_interp<V: AsView>(&self, special: &Special, inputs: &[V], out: &mut [u8]) -> Result<(), Error> {
        let tensors = self.interp_tensors(inputs)?;
        let args = special.compiled.plan_inputs(&tensors)?;
        let args: Vec<&Tensor> = args.iter().map(|a| &**a).collect();
        let result = special.runnable(self.shared.executor)?.run(&special.compiled.plan, &args, 1)?;
        out.copy_from_slice(result.bytes());
        Ok(())
    }

    pub(super) fn interp_tensors<V: AsView>(&self, inputs: &[V]) -> Result<BTreeMap<String, Tensor>, Error> {
        (self.shared.names.iter().zip(inputs))
            .map(|(n, v)| Ok((n.clone(), v.as_view().to_tensor().map_err(RuntimeError::from)?)))
            .collect()
    }
}
