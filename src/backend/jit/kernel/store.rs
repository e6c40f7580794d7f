//! Store plans on the JIT (docs/semantics.md, Stores). The entry compiled from a store plan
//! runs the plan's checks, then its *update nest* (`LoopNest::from_plan`): a `set` through an
//! affine destination, written as a copy into output addresses. A call first copies the target
//! into the output (one block copy), then runs the entry with the output pointer at the first
//! destination. Combining stores (`+=`, `*=`) and destinations through index arrays or masks
//! are not compiled: `exec::Runnable` runs them on the interpreter.

use super::super::JitError;
use crate::backend::loopnest;
use crate::plan::{BufferId, VerifiedGenericPlan, VerifiedPlan};

/// What a call of a store plan's entry does around it.
pub(super) struct StoreCall {
    /// The table slot of the target.
    target_slot: usize,
    /// Bytes from the output's start to the first destination.
    base_bytes: isize,
    /// The destinations may coincide (a hand-written plan: subscripts never make such a
    /// store): one worker, so that the last write in C order wins.
    serial: bool,
}

/// The store of `plan` (`concrete`: the same plan, concrete) as its entry's calls run it, for
/// inputs in table slots `order` (`None`: plan order); `None` without a store. A store the loop
/// nest cannot write is refused.
pub(super) fn store_call(
    plan: &VerifiedGenericPlan,
    concrete: &VerifiedPlan,
    order: Option<&[usize]>,
) -> Result<Option<StoreCall>, JitError> {
    let Some(store) = &concrete.store else { return Ok(None) };
    let refused =
        || JitError::Codegen("this store plan has no update nest: it runs on the interpreter".into());
    if !loopnest::takes_store(concrete.plan()) {
        return Err(refused());
    }
    let BufferId::Input(target) = concrete.output.buffer else { return Err(refused()) };
    let base = loopnest::store_base_bytes(plan.plan()).ok_or_else(refused)?;
    // Sufficient for distinct addresses: each stride, by size, passes every address the
    // smaller ones reach.
    let mut dims: Vec<(i128, i128)> = (store.shape.iter().zip(&store.dest.strides))
        .filter(|&(&n, _)| n > 1)
        .map(|(&n, &s)| ((s as i128).abs(), n as i128 - 1))
        .collect();
    dims.sort();
    let mut reach = 0i128;
    let mut distinct = true;
    for (stride, extent) in dims {
        distinct &= stride > reach;
        reach += stride * extent;
    }
    Ok(Some(StoreCall {
        target_slot: order.map_or(target, |o| o[target]),
        base_bytes: isize::try_from(base).map_err(|_| refused())?,
        serial: !distinct,
    }))
}

impl StoreCall {
    /// Copies the target (`table[slot]`, the output's `out_nbytes` bytes) into `out` and
    /// returns the pointer the update nest writes from, and the workers it may take.
    ///
    /// # Safety
    /// `table` and `out` as for `JitKernel::call`: the target is dense, of the output's dtype
    /// and shape, and does not overlap `out`.
    pub(super) unsafe fn prepare(
        &self,
        table: &[*const u8],
        out: *mut u8,
        out_nbytes: usize,
        workers: usize,
    ) -> (*mut u8, usize) {
        if out_nbytes > 0 {
            // SAFETY: the caller's guarantees: both hold `out_nbytes` bytes.
            unsafe { std::ptr::copy_nonoverlapping(table[self.target_slot], out, out_nbytes) };
        }
        (out.wrapping_offset(self.base_bytes), if self.serial { 1 } else { workers })
    }
}
