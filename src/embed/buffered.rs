//! `a[i] += v` into the caller's array where updates may meet (`plan::buffered`): the old
//! elements gathered into a buffer of the update's size, combined with the value there, and
//! stored back with last-write-wins — three JIT kernels, each in place, touching only the
//! updated elements. The single plan cannot run in place, and its fallback (a whole copy of the
//! target, updated and copied back) costs the target's size however few elements change.

use super::TensorView;
use super::held::Held;
use crate::backend::RuntimeError;
use crate::backend::jit::{self, JitKernel};
use crate::backend::loopnest::buffered_in_place;
use crate::exec::Runnable;
use crate::plan::VerifiedGenericPlan;
use crate::plan::buffered::verify_stage;

/// The three kernels of a buffered store.
pub(crate) struct Buffered {
    gather: JitKernel,
    combine: JitKernel,
    scatter: JitKernel,
}

impl Buffered {
    /// The kernels of `plan`'s buffered form ([`buffered_in_place`], a device's too), when it
    /// has one and the JIT compiles all three (dtypes whose arithmetic it computes; shapes
    /// constant or symbolic; a store through a view's concrete plans, which take the inputs'
    /// windows).
    pub(crate) fn prepare(plan: &VerifiedGenericPlan) -> Option<Buffered> {
        let parts = buffered_in_place(plan.plan())?;
        let compile = |p| {
            let verified = verify_stage(p).ok()?;
            let runnable = Runnable::prepare(
                &verified,
                &jit::plan_order(verified.plan()),
                crate::exec::Executor::Jit,
                None,
            );
            match runnable.ok()? {
                Runnable::Jit(k) => std::sync::Arc::into_inner(k),
                _ => None,
            }
        };
        let (combine, scatter) = (compile(parts.combine)?, compile(parts.scatter)?);
        Some(Buffered { gather: compile(parts.gather)?, combine, scatter })
    }

    /// Runs on `held` (the store's inputs in plan order, its target writable). `None` where a
    /// kernel declined to run in place (an input overlaps the target, say): then nothing of
    /// the target was written, and the caller runs the store another way.
    ///
    /// # Safety
    /// As [`JitKernel::store_in_place`]: the target's bytes are writable, and nothing else
    /// reads or writes them during the call.
    pub(crate) unsafe fn run(&self, held: &[Held<'_>], threads: usize) -> Option<Result<(), RuntimeError>> {
        let mut old = match self.gather.run(held, threads) {
            Ok(t) => t,
            Err(e) => return Some(Err(e)),
        };
        let shape = old.shape().to_vec();
        // SAFETY: `old` is this call's own tensor, alive and not otherwise used until the last
        // kernel returns; the view is its dense bytes.
        let view = unsafe { TensorView::from_raw(old.dtype(), &shape, None, old.as_mut_ptr()) }.ok()?;
        let buffer = Held::InPlace(view);
        let all: Vec<&Held<'_>> = held.iter().chain(std::iter::once(&buffer)).collect();
        // SAFETY: the combine writes the buffer alone (its target), which nothing else reads;
        // the scatter writes the caller's target, as the caller allows.
        unsafe {
            match self.combine.store_in_place(&all, threads)? {
                Ok(()) => self.scatter.store_in_place(&all, threads),
                Err(e) => Some(Err(e)),
            }
        }
    }
}
