//! The verifier of generic plans: the same structural rules as [`verify`](fn@super::verify), and
//! the address bounds as symbolic inequalities. Each bound is proven for every shape where it
//! can be (`SymExpr::prove_le`); one that cannot becomes a [`Requirement`] that the shape
//! function checks per call, before anything is read. So a [`VerifiedGenericPlan`] certifies:
//! every address lies inside its buffer *whenever the shape function succeeds* — and
//! [`GenericPlan::bind`] then gives a concrete plan that [`verify`](fn@super::verify) accepts.

use super::ir::*;
use super::verify::{PlanError, VerifiedPlan};
use crate::limits::MAX_RANK;
use crate::types::sym::{Assumptions, Cond, SymExpr};

/// A generic plan that [`verify_generic`] accepted, with the requirements it added. Only
/// `verify_generic` makes one; it reads as the plan it holds.
#[derive(Debug, Clone, PartialEq)]
pub struct VerifiedGenericPlan {
    plan: GenericPlan,
}

impl std::ops::Deref for VerifiedGenericPlan {
    type Target = GenericPlan;

    fn deref(&self) -> &GenericPlan {
        &self.plan
    }
}

impl VerifiedGenericPlan {
    pub fn plan(&self) -> &GenericPlan {
        &self.plan
    }

    /// Whether every integer is a constant and nothing is required: a concrete plan in generic
    /// form, with nothing to bind per call.
    pub fn binds_nothing(&self) -> bool {
        self.plan.requires.is_empty() && self.plan.symbols().is_empty()
    }
}

impl VerifiedPlan {
    /// This plan as a verified generic plan with nothing to bind: its integers as constants, no
    /// requirements, its inputs' strides kept (the one kind of generic plan that declares
    /// strides: [`verify`](fn@super::verify) bounded them, which `verify_generic` cannot). Lowering,
    /// scheduling and code generation treat constants as immediates, so the back ends compile
    /// every plan from this one type.
    pub fn lift(&self) -> VerifiedGenericPlan {
        // The mapping recurses once per nested index access.
        let plan = crate::limits::with_stack_for(self.nesting(), || self.plan().generic());
        VerifiedGenericPlan { plan }
    }
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, PlanError> {
    Err(PlanError::Invalid(msg.into()))
}

/// Checks the structure of `plan` and proves its addresses in bounds, adding a requirement for
/// each bound it cannot prove.
pub fn verify_generic(mut plan: GenericPlan) -> Result<VerifiedGenericPlan, PlanError> {
    let added = crate::limits::with_stack_for(plan.nesting(), || requirements(&plan))?;
    plan.requires.extend(added);
    Ok(VerifiedGenericPlan { plan })
}

fn requirements(plan: &GenericPlan) -> Result<Vec<Requirement>, PlanError> {
    for input in &plan.inputs {
        if input.shape.len() > MAX_RANK {
            return invalid(format!("input `{}` has more than {MAX_RANK} dimensions", input.name));
        }
        if input.strides.is_some() {
            return invalid(format!("input `{}` of a generic plan has strides", input.name));
        }
    }
    super::verify::check_structure(plan)?;
    let mut v = Verifier { plan, added: vec![] };
    for check in &plan.checks {
        if check.shape.len() > MAX_RANK {
            return invalid(format!("a check has more than {MAX_RANK} dimensions"));
        }
        v.access(&check.index, &check.shape, true)?;
    }
    v.access(&plan.output, &plan.shape, false)?;
    if let Some(store) = &plan.store {
        // The structure (a dense target read whole) is checked by `check_structure`; the
        // output's strides again when the bound plan is verified before it runs.
        for access in store.accesses() {
            v.access(access, &store.shape, false)?;
        }
    }
    Ok(v.added)
}

struct Verifier<'p> {
    plan: &'p GenericPlan,
    added: Vec<Requirement>,
}

impl Verifier<'_> {
    /// Bounds `access` over `shape` by its buffer, as `verify` does: lowest and highest element
    /// over every coordinate and every normalized gathered index. An access reads nothing where
    /// an extent or a gathered length is 0, so each bound is required only where all are ≥ 1.
    fn access(
        &mut self,
        access: &Access<SymExpr>,
        shape: &[SymExpr],
        is_index: bool,
    ) -> Result<(), PlanError> {
        let (name, _) = super::verify::check_access(self.plan, access, shape.len(), is_index)?;
        for t in &access.terms {
            self.access(&t.index, shape, true)?;
        }
        let zero = SymExpr::constant(0);
        let reaches =
            shape.iter().zip(&access.strides).map(|(n, s)| (n.add_const(-1).max2(&zero), s.clone()));
        let term_reaches = access.terms.iter().map(|t| (t.len.add_const(-1).max2(&zero), t.stride.clone()));
        let (mut lo, mut hi) = (access.base.clone(), access.base.clone());
        for (extent, stride) in reaches.chain(term_reaches) {
            let reach = extent.mul(&stride);
            lo = lo.add(&reach.min2(&zero));
            hi = hi.add(&reach.max2(&zero));
        }
        let sizes: Vec<SymExpr> =
            shape.iter().cloned().chain(access.terms.iter().map(|t| t.len.clone())).collect();
        let last = self.buffer_numel(access.buffer).add_const(-1);
        let mut assume = Assumptions::default();
        for n in &sizes {
            assume = assume.assume(&Cond::le(n, &zero), false);
        }
        // `reads` is false where nothing is read; a bound is required only where it is true.
        let reads = (!sizes.is_empty()).then(|| Cond::le(&SymExpr::min(&sizes), &zero));
        let guarded = |e: &SymExpr| match &reads {
            Some(empty) => SymExpr::select(empty.clone(), &zero, e),
            None => e.clone(),
        };
        for (low, high, what) in [(&zero, &lo, "before"), (&hi, &last, "past the end of")] {
            if SymExpr::prove_le(low, high, &assume) == Some(true) {
                continue;
            }
            self.added.push(Requirement {
                cond: Cond::le(&guarded(low), &guarded(high)),
                message: format!("these shapes would read {what} `{name}`"),
                origin: Origin(None),
            });
        }
        Ok(())
    }

    /// The elements of a buffer.
    fn buffer_numel(&self, id: BufferId) -> SymExpr {
        match id {
            BufferId::Input(i) => {
                self.plan.inputs[i].shape.iter().fold(SymExpr::constant(1), |acc, d| acc.mul(d))
            }
            BufferId::Const(i) => SymExpr::constant(self.plan.consts[i].tensor.numel() as i64),
        }
    }
}
