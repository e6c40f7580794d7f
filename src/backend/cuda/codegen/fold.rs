//! A check the output's own gather makes. An `error`-mode gather checks its whole index tensor
//! in a nest of its own before the output is read (NumPy raises on any bad value, even one a
//! later slice drops). Where the output's only term reads that same index tensor at the same
//! elements, under the same bound, with every index element read by some output element, the
//! check's nest only reads the index a second time: on the GPU that is a whole extra pass over
//! it (`take_along_axis`: the index is as large as the output). The output nest then records its
//! term's failures as the check's own, and the check's nest is left out.
//!
//! The error is the same: the check's coordinates are the output's leading ones (the
//! remaining output dims, `per` elements in all, are no index dims), so the output element
//! `e` reads check element `e / per`, and the first failing output element in C order reads
//! the check's first failing element.

use crate::plan::VerifiedGenericPlan;
use crate::types::OobMode;

/// The plan's check that its output nest makes itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FoldedCheck {
    /// The check's index in the plan (its error word).
    pub check: usize,
    /// Output elements per element of the check (at least 1).
    pub per: u64,
}

/// The check of `plan` its output nest can make itself, if one can: a load with one check
/// and one output term, the term reading the check's index access over the output's leading
/// coordinates (0 strides over the others) under `error` with the check's bound, the output's
/// other dims constant and not empty (an empty one would leave check elements unread).
pub(crate) fn folded_check(plan: &VerifiedGenericPlan) -> Option<FoldedCheck> {
    let ([check], [term], None) = (&plan.checks[..], &plan.output.terms[..], &plan.store) else {
        return None;
    };
    let (index, own) = (&check.index, &term.index);
    let rank = check.shape.len();
    let same_elements = index.terms.is_empty()
        && own.terms.is_empty()
        && own.buffer == index.buffer
        && own.base == index.base
        && plan.shape.get(..rank) == Some(&check.shape[..])
        && own.strides.get(..rank) == Some(&index.strides[..])
        && own.strides[rank..].iter().all(|s| s.as_const() == Some(0));
    if term.mode != OobMode::Error || term.len != check.len || !same_elements {
        return None;
    }
    let per =
        plan.shape[rank..].iter().try_fold(1u64, |n, d| n.checked_mul(u64::try_from(d.as_const()?).ok()?))?;
    (per > 0).then_some(FoldedCheck { check: 0, per })
}
