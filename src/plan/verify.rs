//! The verifier: proves that a plan is well formed and that every address it can form lies
//! inside its buffer. Back ends take the returned [`VerifiedPlan`], which nothing else can make,
//! so an unverified plan cannot reach code generation or execution:
//!
//! ```compile_fail
//! // Only `verify` makes a VerifiedPlan: its fields are private.
//! let plan = slc::plan::parse::parse("plan(a: f32[2]) -> f32[2]\n  out a{0; 1}\n").unwrap();
//! let proof = slc::plan::VerifiedPlan { plan, footprints: vec![] };
//! ```

use super::ir::*;
use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::limits::{MAX_NESTING, MAX_PLAN_ACCESSES, MAX_RANK};
use crate::source::Span;
use crate::types::checked_numel;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    /// An offset or stride does not fit in i64 (found while lowering the expression at `span`).
    #[error("address arithmetic overflows i64")]
    Overflow { span: Span },
    /// The plan is malformed or can address outside a buffer.
    #[error("invalid plan: {0}")]
    Invalid(String),
    /// Fusing the expression at `span` would read buffers through more than
    /// [`MAX_PLAN_ACCESSES`] accesses.
    #[error("the fused plan needs more than {MAX_PLAN_ACCESSES} buffer accesses")]
    TooComplex { span: Span },
}

impl IntoDiagnostic for PlanError {
    fn into_diagnostic(self) -> Diagnostic {
        match self {
            PlanError::Overflow { span } => Diagnostic::error("E0301", self.to_string())
                .label(span, "the offsets of this expression do not fit in 64 bits"),
            PlanError::Invalid(_) => Diagnostic::error("E0302", self.to_string()),
            PlanError::TooComplex { span } => Diagnostic::error("E0304", self.to_string())
                .label(span, "the limit is reached here")
                .help("each gather fused into a chain copies its index reads into every read that moves along the gathered axis"),
        }
    }
}

/// A plan that [`verify`] accepted: every address it can form lies inside its buffer, and every
/// offset fits i64 in bytes. Only `verify` makes one and nothing changes it afterwards, so the
/// back ends — the interpreter, the scheduler and code generators, AOT, DirectML — take this
/// and nothing else: no back end runs a plan that was not proven. It reads as the plan it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedPlan {
    plan: Plan,
    /// The element range `[lo, hi]` each access may touch, per buffer, when it touches any.
    footprints: Vec<(BufferId, i64, i64)>,
}

impl std::ops::Deref for VerifiedPlan {
    type Target = Plan;

    fn deref(&self) -> &Plan {
        &self.plan
    }
}

impl std::fmt::Display for VerifiedPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.plan.fmt(f)
    }
}

impl VerifiedPlan {
    pub fn plan(&self) -> &Plan {
        &self.plan
    }

    /// The plan, to change it (it must be verified again to run).
    pub fn into_plan(self) -> Plan {
        self.plan
    }

    /// What verification established: for each access that reads anything, its buffer and the
    /// element range `[lo, hi]` it may touch.
    pub fn footprints(&self) -> &[(BufferId, i64, i64)] {
        &self.footprints
    }
}

/// A shape of at most [`MAX_RANK`] non-negative dimensions whose bytes fit in i64.
fn addressable(dtype: slc_runtime::DType, shape: &[i64]) -> bool {
    shape.len() <= MAX_RANK
        && shape.iter().all(|&d| d >= 0)
        && checked_numel(shape).and_then(|n| n.checked_mul(dtype.width() as i64)).is_some()
}

/// A strided input's layout is one stride per axis, 0 along unit axes, and its window's byte
/// offsets (from element `[0, ..., 0]`, both ways) fit i64.
fn strided_layout(input: &InputDecl, strides: &[i64]) -> Result<(), PlanError> {
    let name = &input.name;
    if strides.len() != input.shape.len() {
        return invalid(format!(
            "input `{name}` has {} strides for rank {}",
            strides.len(),
            input.shape.len()
        ));
    }
    if input.shape.iter().zip(strides).any(|(&d, &s)| d == 1 && s != 0) {
        return invalid(format!("input `{name}` has a non-zero stride along a unit axis"));
    }
    let width = input.dtype.width() as i64;
    let fits =
        |(lo, hi): (i64, i64)| lo.checked_mul(width).is_some() && (hi + 1).checked_mul(width).is_some();
    match input.window() {
        Some(window) if fits(window) => Ok(()),
        None if input.shape.contains(&0) => invalid(format!("input `{name}` is empty and has strides")),
        _ => invalid(format!("input `{name}`'s strides reach beyond i64 bytes")),
    }
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, PlanError> {
    Err(PlanError::Invalid(msg.into()))
}

/// Proves every address `plan` can form inside its buffer.
pub fn verify(plan: Plan) -> Result<VerifiedPlan, PlanError> {
    let footprints = crate::limits::with_stack_for(plan.nesting(), || verify_in_place(&plan))?;
    Ok(VerifiedPlan { plan, footprints })
}

fn verify_in_place(plan: &Plan) -> Result<Vec<(BufferId, i64, i64)>, PlanError> {
    for input in &plan.inputs {
        if !addressable(input.dtype, &input.shape) {
            return invalid(format!("input `{}` has an invalid shape", input.name));
        }
        if let Some(strides) = &input.strides {
            strided_layout(input, strides)?;
        }
    }
    if !addressable(plan.dtype, &plan.shape) {
        return invalid("the output shape is invalid");
    }
    check_structure(plan)?;
    let output_numel = checked_numel(&plan.shape).unwrap_or_default();
    let mut v = Verifier { plan, footprints: vec![] };
    for check in &plan.checks {
        if check.shape.len() > MAX_RANK || check.shape.iter().any(|&d| d < 0) || check.len < 0 {
            return invalid("a check has an invalid shape");
        }
        v.access(&check.index, &check.shape, true)?;
    }
    if output_numel > 0 {
        v.access(&plan.output, &plan.shape, false)?;
    } else if !plan.output.terms.is_empty() || plan.output.strides.len() != plan.shape.len() {
        return invalid("an empty output must have the canonical empty access");
    }
    if let Some(store) = &plan.store {
        verify_store(plan, store, &mut v)?;
    }
    Ok(v.footprints)
}

/// A store's output is the target's whole copy (base 0, the row-major strides lowering gives,
/// 0 along unit axes) — a strided target's window, one axis, from its lowest element (the base)
/// — and both update accesses stay inside their buffers over the update coordinates: `dest`
/// inside the target, whose copy is the output.
fn verify_store(plan: &Plan, store: &Store, v: &mut Verifier) -> Result<(), PlanError> {
    let BufferId::Input(target) = plan.output.buffer else {
        return invalid("a store plan's output must read its target input");
    };
    let target = &plan.inputs[target];
    let first = match target.strides {
        Some(_) => target.window().map_or(0, |(lo, _)| lo),
        None => 0,
    };
    if target.tensor_shape() != plan.shape {
        return invalid("a store plan's output must have its target's shape (a strided target's window)");
    }
    if !plan.shape.contains(&0) {
        let mut strides = crate::types::row_major_strides(&plan.shape, 1)
            .ok_or_else(|| PlanError::Invalid("the target's size overflows".into()))?;
        for (s, &d) in strides.iter_mut().zip(&plan.shape) {
            if d == 1 {
                *s = 0;
            }
        }
        if plan.output.base != first || plan.output.strides != strides {
            return invalid("a store plan's output must read its target (a view's window) whole, in C order");
        }
    }
    if store.shape.len() > MAX_RANK || store.shape.iter().any(|&d| d < 0) {
        return invalid("a store has an invalid shape");
    }
    if store.shape.contains(&0) {
        let canonical = |a: &Access| a.terms.is_empty() && a.strides.len() == store.shape.len();
        if !store.accesses().all(canonical) {
            return invalid("an empty store must have canonical empty accesses");
        }
        return Ok(());
    }
    for access in store.accesses() {
        v.access(access, &store.shape, false)?;
    }
    Ok(())
}

/// What a plan must be whatever its integers: constants and the output of at most
/// [`MAX_RANK`] dimensions, at most [`MAX_PLAN_ACCESSES`] accesses nested at most
/// [`MAX_NESTING`] deep (verification and every back end recurse once per level), an output
/// access reading a buffer of the output's dtype. Shared by `verify` and `verify_generic`.
pub(super) fn check_structure<D: PartialEq>(plan: &Plan<D>) -> Result<(), PlanError> {
    for (i, c) in plan.consts.iter().enumerate() {
        if c.tensor.rank() > MAX_RANK {
            return invalid(format!("constant ${i} has more than {MAX_RANK} dimensions"));
        }
    }
    if plan.shape.len() > MAX_RANK {
        return invalid(format!("the output has more than {MAX_RANK} dimensions"));
    }
    let stores = plan.store.iter().flat_map(|s| s.accesses());
    let accesses = plan.checks.iter().map(|c| &c.index).chain([&plan.output]).chain(stores);
    if accesses.clone().map(Access::accesses).sum::<usize>() > MAX_PLAN_ACCESSES {
        return invalid(format!("the plan has more than {MAX_PLAN_ACCESSES} accesses"));
    }
    if accesses.clone().any(|a| a.nesting() > MAX_NESTING) {
        return invalid(format!("index accesses nest more than {MAX_NESTING} levels deep"));
    }
    if plan.buffer_dtype(plan.output.buffer) != Some(plan.dtype) {
        return invalid("the output access reads a buffer of another dtype");
    }
    if let Some(store) = &plan.store {
        // The target: an input given by the caller (dense, or a view stored through), read
        // whole by the output access.
        let given = match plan.output.buffer {
            BufferId::Input(i) => plan.inputs[i].derived.is_none(),
            BufferId::Const(_) => false,
        };
        if !given || !plan.output.terms.is_empty() {
            return invalid("a store plan's output must read an input (its target) whole");
        }
        if store.dest.buffer != plan.output.buffer {
            return invalid("a store must write into its target, the buffer the output reads");
        }
        if plan.buffer_dtype(store.value.buffer) != Some(plan.dtype) {
            return invalid("a store's value must be a buffer of the output's dtype");
        }
        if store.shape.len() > MAX_RANK {
            return invalid(format!("a store has more than {MAX_RANK} dimensions"));
        }
        if let Some(when) = &store.when {
            if plan.buffer_dtype(when.buffer) != Some(slc_runtime::DType::Bool) {
                return invalid("a store's mask must be a bool buffer");
            }
            if !when.terms.is_empty() {
                return invalid("a store's mask is read directly, without index terms");
            }
        }
        for access in store.accesses() {
            check_access(plan, access, store.shape.len(), false)?;
        }
    }
    for d in &plan.inputs {
        let Some(derived) = &d.derived else { continue };
        let from = d.given_name();
        let Some(m) = plan.inputs.iter().find(|m| m.name == from && m.derived.is_none()) else {
            return invalid(format!("`{}` is derived from `{from}`, which is no input given", d.name));
        };
        if let Derived::Cast { .. } = derived {
            // Executors cast the given tensor element by element, layout and all.
            if m.shape != d.shape || m.strides != d.strides || m.dtype == d.dtype {
                return invalid(format!(
                    "`{}` must be a cast of `{from}` to another dtype, of its shape and strides",
                    d.name
                ));
            }
            continue;
        }
        // Executors derive it as `plan::nonzero` makes it (its length is bound like any dim).
        if m.dtype != slc_runtime::DType::Bool || d.dtype != slc_runtime::DType::I64 || d.shape.len() != 2 {
            return invalid(format!(
                "`{}` must be the i64[count, columns] nonzero() of a bool input",
                d.name
            ));
        }
    }
    Ok(())
}

/// The name and dtype of the buffer `access` reads, after checking what holds whatever the
/// integers: the buffer is declared, of an integer dtype where it holds indices, and the access
/// has one stride per coordinate of its `rank`.
pub(super) fn check_access<D>(
    plan: &Plan<D>,
    access: &Access<D>,
    rank: usize,
    is_index: bool,
) -> Result<(String, slc_runtime::DType), PlanError> {
    let name = plan.buffer_name(access.buffer);
    let Some(dtype) = plan.buffer_dtype(access.buffer) else {
        return invalid(format!("access to an undeclared buffer `{name}`"));
    };
    if is_index && !dtype.is_integer() {
        return invalid(format!("index buffer `{name}` is not of an integer dtype"));
    }
    if access.strides.len() != rank {
        return invalid(format!("access to `{name}` has {} strides for rank {rank}", access.strides.len()));
    }
    Ok((name, dtype))
}

struct Verifier<'p> {
    plan: &'p Plan,
    footprints: Vec<(BufferId, i64, i64)>,
}

impl Verifier<'_> {
    /// Proves `access` over `shape` stays inside its buffer; `is_index` requires an integer buffer.
    fn access(&mut self, access: &Access, shape: &[i64], is_index: bool) -> Result<(), PlanError> {
        let (name, dtype) = check_access(self.plan, access, shape.len(), is_index)?;
        // Back ends address bytes in i64: every offset must be one, even where it is never
        // added (a stride along a unit axis, a term of an empty axis).
        let width = dtype.width() as i64;
        let offsets = [access.base].into_iter().chain(access.strides.iter().copied());
        if offsets.chain(access.terms.iter().map(|t| t.stride)).any(|v| v.checked_mul(width).is_none()) {
            return invalid(format!("an offset of the access to `{name}` overflows i64 in bytes"));
        }
        if shape.contains(&0) {
            return Ok(()); // nothing is read
        }
        // i128 holds any sum of i64 products exactly, so this bound cannot itself overflow.
        let (mut lo, mut hi) = (access.base as i128, access.base as i128);
        let extents = shape.iter().map(|&d| d - 1).zip(&access.strides);
        let term_extents = access.terms.iter().map(|t| (t.len - 1, &t.stride));
        let mut dead = false;
        for t in &access.terms {
            // Modes normalize indices into `[0, len)`: a negative length has no such range.
            if t.len < 0 {
                return invalid(format!("a gather from `{name}` has the negative axis length {}", t.len));
            }
            self.access(&t.index, shape, true)?;
            // An empty gathered axis admits no index: the term never forms an address.
            dead |= t.len == 0;
        }
        if dead {
            return Ok(());
        }
        for (extent, &stride) in extents.chain(term_extents) {
            let reach = extent as i128 * stride as i128;
            if reach < 0 { lo += reach } else { hi += reach }
        }
        let fits = |(first, last): (i64, i64)| first as i128 <= lo && hi <= last as i128;
        if !self.plan.buffer_window(access.buffer).is_some_and(fits) {
            let holds = match self.plan.buffer_window(access.buffer) {
                Some((first, last)) => format!("elements {first}..={last}"),
                None => "no element".into(),
            };
            return invalid(format!(
                "access to `{name}` reaches elements {lo}..={hi} of a buffer that holds {holds}"
            ));
        }
        self.footprints.push((access.buffer, lo as i64, hi as i64));
        Ok(())
    }
}
