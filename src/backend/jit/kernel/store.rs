//! Store plans on the JIT (docs/semantics.md, Stores). The entry compiled from a store plan
//! runs the plan's checks, then its *update nest* (`LoopNest::from_plan`): a `set` through the
//! destination's addresses (slices, integers, index arrays, masks), written as a copy into
//! output addresses. A call first copies the target into the output (one block copy) unless
//! the output *is* the target (a store in place), then runs the entry with the output pointer
//! at the first destination. A plan with symbols does the same per binding: its first
//! destination is an expression of the symbols ([`BoundStore`]), evaluated with the nests'
//! integers. A `+=` or `*=` computes each element from the target's
//! (`clif::combine`); a scatter's reductions are not compiled: `exec::Runnable` runs them on
//! the interpreter.

use super::super::JitError;
use crate::backend::loopnest;
use crate::plan::{BufferId, VerifiedGenericPlan, VerifiedPlan};
use crate::types::sym::SymExpr;

/// What a call of a store plan's entry does around it.
pub(super) struct StoreCall {
    /// The table slot of the target.
    target_slot: usize,
    /// Bytes from the target's element `[0, ..., 0]` (its table pointer) to the output's first,
    /// the window's lowest element: negative for a view with a negative step, else 0.
    target_first: isize,
    /// The bytes the update nest writes (its coordinates times the element's width): what
    /// sizes its workers, not the target's (`a[5] = 0` on a large target is a small write).
    pub(super) update_bytes: usize,
    /// Bytes from the output's start to the first destination.
    base_bytes: isize,
    /// The destinations may coincide (an index array may repeat a row; a hand-written plan's
    /// strides may overlap): one worker, so that the last write in C order wins.
    serial: bool,
    /// The update nest reads no byte of the target (the value and the indices are other
    /// buffers), and every index it may find out of range is checked before it runs, so the
    /// output may be the target itself.
    in_place: bool,
}

/// The store of `plan` (`concrete`: the same plan, concrete) as its entry's calls run it, for
/// inputs in table slots `order` (`None`: plan order); `None` without a store. A store the loop
/// nest cannot write is refused.
pub(super) fn store_call(
    plan: &VerifiedGenericPlan,
    concrete: &VerifiedPlan,
    order: Option<&[usize]>,
) -> Result<Option<StoreCall>, JitError> {
    if concrete.store.is_none() {
        return Ok(None);
    }
    if !loopnest::takes_store(concrete.plan()) {
        return Err(refused());
    }
    let BufferId::Input(target) = concrete.output.buffer else { return Err(refused()) };
    let base = loopnest::store_base_bytes(plan.plan()).ok_or_else(refused)?;
    let updates = concrete.store.as_ref().map_or(0, |s| s.shape.iter().product::<i64>());
    let first = concrete.output.base.checked_mul(concrete.dtype.width() as i64);
    Ok(Some(StoreCall {
        target_slot: order.map_or(target, |o| o[target]),
        target_first: first.and_then(|f| isize::try_from(f).ok()).ok_or_else(refused)?,
        update_bytes: (updates as usize).saturating_mul(concrete.dtype.width()),
        base_bytes: isize::try_from(base).map_err(|_| refused())?,
        serial: !plan.store.as_ref().is_some_and(loopnest::store_writes_distinct),
        in_place: loopnest::store_may_run_in_place(plan.plan()),
    }))
}

/// Why a store plan is not compiled: the loop nest cannot write it (a scatter's reduction, a
/// `+=` on f16, bf16 or complex numbers).
fn refused() -> JitError {
    JitError::Codegen("this store plan has no update nest: it runs on the interpreter".into())
}

/// The store of a plan with symbols, as [`StoreCall`] is a concrete one's: per binding, its
/// first destination's byte offset is evaluated ([`BoundStore::base_bytes`]).
pub(super) struct BoundStore {
    /// The target's plan input (bound calls take inputs in plan order).
    pub(super) target: usize,
    /// Elements from the output's start to the first destination.
    base: SymExpr,
    /// As [`StoreCall`]'s.
    pub(super) serial: bool,
    pub(super) in_place: bool,
}

/// The store of `plan` (with symbols) as its bound calls run it; `None` without a store. A
/// store the loop nest cannot write is refused.
pub(super) fn bound_store(plan: &VerifiedGenericPlan) -> Result<Option<BoundStore>, JitError> {
    let Some(store) = &plan.store else { return Ok(None) };
    if !loopnest::takes_store(plan.plan()) {
        return Err(refused());
    }
    let BufferId::Input(target) = plan.output.buffer else { return Err(refused()) };
    Ok(Some(BoundStore {
        target,
        base: store.dest.base.clone(),
        serial: !loopnest::store_writes_distinct(store),
        in_place: loopnest::store_may_run_in_place(plan.plan()),
    }))
}

impl BoundStore {
    /// The first destination's byte offset under `env`; `None` where it does not fit.
    pub(super) fn base_bytes(&self, env: &crate::types::sym::Env, width: usize) -> Option<isize> {
        let bytes = self.base.eval_i64(env)?.checked_mul(width as i64)?;
        isize::try_from(bytes).ok()
    }
}

impl StoreCall {
    /// Whether a call may write the target in place (`out` the target's own bytes).
    pub(super) fn in_place(&self) -> bool {
        self.in_place
    }

    /// Copies the target (the output's `out_nbytes` bytes from `table[slot]`, or from a view's
    /// lowest element) into `out`, unless `out` is the target (in place), and returns the
    /// pointer the update nest writes from, and the workers it may take.
    ///
    /// # Safety
    /// `table` and `out` as for `JitKernel::call`: the target (a dense input, or a view's
    /// window) has the output's dtype and shape, and either is `out` ([`StoreCall::in_place`]
    /// holds) or does not overlap it.
    pub(super) unsafe fn prepare(
        &self,
        table: &[*const u8],
        out: *mut u8,
        out_nbytes: usize,
        workers: usize,
    ) -> (*mut u8, usize) {
        let target = table[self.target_slot].wrapping_offset(self.target_first);
        if out_nbytes > 0 && !std::ptr::eq(target, out) {
            // SAFETY: the caller's guarantees: both hold `out_nbytes` bytes (the target's, or
            // its window's from the lowest element).
            unsafe { std::ptr::copy_nonoverlapping(target, out, out_nbytes) };
        }
        (out.wrapping_offset(self.base_bytes), if self.serial { 1 } else { workers })
    }
}
