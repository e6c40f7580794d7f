//! A store plan's update nest: which stores the loop nest writes ([`takes_store`]) and with
//! what arithmetic ([`Combining`]), where it may write in place, and whether its updates meet.

use crate::plan::{Access, BufferId, GenericPlan};
use crate::types::sym::SymExpr;
use crate::types::{Combine, OobMode, Reduction};
use slc_runtime::DType;

/// How an update nest combines each element it writes with the target's: `old ∘ value`, `old`
/// read from the target's buffer at the element's own offset (the output's offset from the
/// first destination, plus `base` bytes), never from the output being written: `a[[0, 0]] += 1`
/// adds once (NumPy's buffered semantics; docs/semantics.md, Stores). A scatter's reduction
/// (`accumulate`) reads `old` from the output instead, the element as updated so far, its
/// updates in C order (the nest is serial where destinations may meet).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Combining {
    pub op: CombineOp,
    /// `old` is the output's element (a scatter's reduction from the element as bound), not
    /// the target's.
    pub accumulate: bool,
    pub arithmetic: Arithmetic,
    /// Integers compare as signed ones (`max`, `min`).
    pub signed: bool,
    /// The target's buffer, numbered as the streams number theirs.
    pub target: usize,
    /// The first destination's byte offset in the target.
    pub base: SymExpr,
}

/// The operation of a combining store: `+=` and the reductions `sum`; `*=` and `prod`; `sub`;
/// `max` and `min` (the value replaces the element where it is larger, or smaller, or a NaN
/// where the element is not: ties and a NaN already there keep the element).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum CombineOp {
    Add,
    Mul,
    Sub,
    Max,
    Min,
}

/// The arithmetic of an element type, as `Combine::apply` does it (its reference): integers
/// wrap, floats round once, bools are `or` (`+`) and `and` (`*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Arithmetic {
    Int,
    F32,
    F64,
    Bool,
}

impl Arithmetic {
    /// The arithmetic of `dtype`, where the loop nest does it; `None` for f16, bf16 (rounded
    /// through f32) and the complex types: their combining stores run on the interpreter.
    pub fn of(dtype: DType) -> Option<Arithmetic> {
        match dtype {
            DType::Bool => Some(Arithmetic::Bool),
            DType::F32 => Some(Arithmetic::F32),
            DType::F64 => Some(Arithmetic::F64),
            DType::F16 | DType::BF16 | DType::C64 | DType::C128 => None,
            _ if dtype.is_integer() => Some(Arithmetic::Int),
            _ => None,
        }
    }
}

/// Whether the loop nest can write `plan`'s store: a `set`, or a `+=` or `*=` in an element type
/// it does the arithmetic of ([`Arithmetic::of`]), through slices, integers, index arrays and
/// masks, each gathered destination index checked or folded into range (an `error`, `clamp` or
/// `wrap` term: a `zero` term's miss would have to skip the write). Of a scatter's reductions,
/// `sum`, `prod`, `sub`, `max` and `min` from the element as bound (serial where updates may meet, each
/// update in C order, as the interpreter accumulates); the others run on the interpreter
/// (docs/semantics.md, Stores).
pub fn takes_store<D: PartialEq + From<i64>>(plan: &crate::plan::Plan<D>) -> bool {
    plan.store.as_ref().is_some_and(|s| {
        let arithmetic = match s.combine {
            Combine::Set => true,
            Combine::Add | Combine::Mul | Combine::Reduce { .. } => {
                combining(plan, SymExpr::constant(0)).is_some()
            }
        };
        // A masked store's value is one element (sema makes no other).
        let masked = s.when.as_ref().is_none_or(|w| w.terms.is_empty() && invariant(&s.value));
        arithmetic && masked && s.dest.terms.iter().all(|t| t.mode != OobMode::Zero)
    })
}

/// Whether `a` reads one element whatever the coordinates: no strides but zeros, no gathers.
fn invariant<D: PartialEq + From<i64>>(a: &Access<D>) -> bool {
    a.terms.is_empty() && a.strides.iter().all(|s| *s == D::from(0))
}

/// The byte offset of a store plan's first destination in its output, where the update nest
/// writes from: the destination's base less the output's (a view's window starts at its lowest
/// element, before element `[0, ..., 0]` where a step is negative); `None` without a store or
/// where it is not a constant.
pub fn store_base_bytes(plan: &GenericPlan) -> Option<i64> {
    let base = plan.store.as_ref()?.dest.base.as_const()?;
    let first = plan.output.base.as_const()?;
    base.checked_sub(first)?.checked_mul(plan.dtype.width() as i64)
}

/// Whether `plan`'s store may write its output in place, the output being the target's own
/// bytes: the update reads no byte of the target (not the value, not an index, not a check's
/// index, not a mask), and every `error`-mode index it reads either has a check, which runs before the
/// update, or is a constant proven in range, so that a failed call leaves the target as it
/// was. `false` without a store. (That no other input overlaps the target is the caller's to
/// see: only it knows where the inputs lie.)
pub fn store_may_run_in_place(plan: &GenericPlan) -> bool {
    use crate::plan::{Access, Indirect, all_in_range, counts_mask_dim};
    let Some(store) = &plan.store else { return false };
    let BufferId::Input(target) = plan.output.buffer else { return false };
    let dest_indices = store.dest.terms.iter().flat_map(|t| t.index.buffers());
    let checked = plan.checks.iter().flat_map(|c| c.index.buffers());
    let mask = store.when.iter().flat_map(|w| w.buffers());
    let reads_target = store
        .value
        .buffers()
        .into_iter()
        .chain(mask)
        .chain(dest_indices)
        .chain(checked)
        .any(|b| b == BufferId::Input(target));
    let covered = |t: &Indirect<SymExpr>| match t.index.buffer {
        BufferId::Const(c) if t.index.terms.is_empty() => {
            t.len.as_const().is_some_and(|len| all_in_range(&plan.consts[c].tensor, len))
        }
        _ if counts_mask_dim(&plan.inputs, &t.index, &t.len) => true,
        buffer => plan.checks.iter().any(|c| c.index.buffer == buffer && c.len == t.len),
    };
    fn all_checked(a: &Access<SymExpr>, covered: &dyn Fn(&Indirect<SymExpr>) -> bool) -> bool {
        (a.terms.iter()).all(|t| (t.mode != OobMode::Error || covered(t)) && all_checked(&t.index, covered))
    }
    // A `+=` in place would read an element a duplicate has already updated; a reduction reads
    // the element as updated so far, which in place is the target's own.
    let combines_once =
        store.combine == Combine::Set || store.combine.accumulates() || store_writes_distinct(store);
    !reads_target
        && combines_once
        && all_checked(&store.dest, &covered)
        && all_checked(&store.value, &covered)
}

/// The three plans ([`buffered_store`](crate::plan::buffered::buffered_store)) a `+=` or `*=`
/// store runs as in place when it cannot run in place itself (its updates may meet): its
/// combine and scatter plans can. `None` for any other plan.
pub fn buffered_in_place(plan: &GenericPlan) -> Option<crate::plan::buffered::BufferedStore> {
    if store_may_run_in_place(plan) {
        return None;
    }
    let parts = crate::plan::buffered::buffered_store(plan)?;
    (store_may_run_in_place(&parts.combine) && store_may_run_in_place(&parts.scatter)).then_some(parts)
}

/// Whether no two of `store`'s updates write the same element, as far as the strides show: no
/// gathered destination, and each stride, by size, passes every address the smaller ones reach
/// (sufficient, not necessary); or the strides are the update's own dense C order (a buffered
/// store's buffer, whatever its symbols). Other symbolic strides or extents: not known, `false`.
pub fn store_writes_distinct(store: &crate::plan::Store<SymExpr>) -> bool {
    if !store.dest.terms.is_empty() {
        return false;
    }
    let mut dense = SymExpr::constant(1);
    let c_order = store.shape.iter().zip(&store.dest.strides).rev().all(|(n, s)| {
        let same = *s == dense;
        dense = dense.mul(n);
        same
    });
    if c_order {
        return true;
    }
    let mut dims = Vec::with_capacity(store.shape.len());
    for (n, s) in store.shape.iter().zip(&store.dest.strides) {
        let (Some(n), Some(s)) = (n.as_const(), s.as_const()) else { return false };
        if n > 1 {
            dims.push(((s as i128).abs(), n as i128 - 1));
        }
    }
    dims.sort();
    let mut reach = 0i128;
    dims.into_iter().all(|(stride, extent)| {
        let passes = stride > reach;
        reach += stride * extent;
        passes
    })
}

/// The arithmetic of `plan`'s update nest (`dest_base`: its destination's byte base), where it
/// combines and the loop nest can compute it; `None` for a `set`, and for a combining store
/// the loop nest cannot write ([`takes_store`] asks here, so no update nest of a `+=` is ever
/// built without its arithmetic).
pub(super) fn combining<D>(plan: &crate::plan::Plan<D>, dest_base: SymExpr) -> Option<Combining> {
    let (op, accumulate) = match plan.store.as_ref()?.combine {
        Combine::Add => (CombineOp::Add, false),
        Combine::Mul => (CombineOp::Mul, false),
        // A reduction from the element as bound, one update at a time in its own type (as the
        // interpreter's `Accumulator` keeps every type the loop nest computes).
        Combine::Reduce { op: Reduction::Sum, init: true } => (CombineOp::Add, true),
        Combine::Reduce { op: Reduction::Prod, init: true } => (CombineOp::Mul, true),
        Combine::Reduce { op: Reduction::Sub, init: true } => (CombineOp::Sub, true),
        Combine::Reduce { op: Reduction::Max, init: true } => (CombineOp::Max, true),
        Combine::Reduce { op: Reduction::Min, init: true } => (CombineOp::Min, true),
        Combine::Set | Combine::Reduce { .. } => return None,
    };
    let BufferId::Input(target) = plan.output.buffer else { return None };
    let arithmetic = Arithmetic::of(plan.dtype)?;
    // A bool's `sub` is `xor`, which the nest does not compute.
    if arithmetic == Arithmetic::Bool && op == CombineOp::Sub {
        return None;
    }
    Some(Combining { op, accumulate, arithmetic, signed: plan.dtype.is_signed(), target, base: dest_base })
}
