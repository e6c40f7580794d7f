//! A combining store whose updates may meet (`a[i] += v`, duplicates in `i`; `a[m] *= v`, one
//! value per `True`) as three plans, each of which runs in place, in NumPy's own order:
//! `a.__setitem__(i, a.__getitem__(i).__iadd__(v))`.
//!
//! 1. **gather**: the destination's old elements, a load over the update coordinates;
//! 2. **combine**: `old ∘= value`, a store into that buffer (its destination is affine: in
//!    place, each element once);
//! 3. **scatter**: the buffer stored through the destination with `set` (last write wins).
//!
//! Every read of the target comes before the first write, so this is the buffered semantics
//! of docs/semantics.md (`a[[0, 0]] += 1` adds once), and it touches only the updated elements:
//! the single plan, which cannot run in place (a duplicate would read an element already
//! updated), writes a whole copy of the target and copies it back.

use super::ir::*;
use super::{PlanError, VerifiedGenericPlan};
use crate::types::Combine;
use crate::types::sym::SymExpr;

/// The three plans of a buffered store ([the module documentation](self)). The combine and
/// scatter plans read the gathered buffer as one more input, after the store's own.
#[derive(Debug, Clone, PartialEq)]
pub struct BufferedStore {
    pub gather: GenericPlan,
    pub combine: GenericPlan,
    pub scatter: GenericPlan,
}

/// The buffered form of `plan`: a `+=` or `*=` store whose update coordinates are not empty
/// for every binding (constant or symbolic: the buffer's dims are the update's, bound per call);
/// `None` for any other plan.
pub fn buffered_store(plan: &GenericPlan) -> Option<BufferedStore> {
    let store = plan.store.as_ref()?;
    if !matches!(store.combine, Combine::Add | Combine::Mul) {
        return None;
    }
    if store.shape.iter().any(|d| d.as_const() == Some(0)) {
        return None;
    }
    let mut strides = vec![SymExpr::constant(1); store.shape.len()];
    for d in (1..strides.len()).rev() {
        strides[d - 1] = strides[d].mul(&store.shape[d]);
    }
    let buffer = plan.inputs.len();
    let dense =
        Access { buffer: BufferId::Input(buffer), base: SymExpr::constant(0), strides, terms: vec![] };
    let mut name = String::from("_old");
    while plan.inputs.iter().any(|i| i.name == name) {
        name.push('_');
    }
    let mut inputs = plan.inputs.clone();
    inputs.push(InputDecl::dense(name, plan.dtype, store.shape.clone()));
    let gather = Plan { shape: store.shape.clone(), output: store.dest.clone(), store: None, ..plan.clone() };
    let combine = Plan {
        inputs: inputs.clone(),
        shape: store.shape.clone(),
        output: dense.clone(),
        store: Some(Store { dest: dense.clone(), ..store.clone() }),
        ..plan.clone()
    };
    let scatter = Plan {
        inputs,
        store: Some(Store { value: dense, combine: Combine::Set, ..store.clone() }),
        ..plan.clone()
    };
    Some(BufferedStore { gather, combine, scatter })
}

/// Verifies one of the three plans: generically, or — where it reads a strided view (a store
/// through a view, [`Plan::stores_through_view`], whose plans are concrete: only a concrete
/// plan declares strides) — as the concrete plan it is, lifted.
pub fn verify_stage(stage: GenericPlan) -> Result<VerifiedGenericPlan, PlanError> {
    if stage.inputs.iter().all(|d| d.strides.is_none()) {
        return super::verify_generic(stage);
    }
    let concrete = stage.concrete().ok_or_else(|| {
        PlanError::Invalid("a buffered store through a strided view must be concrete".into())
    })?;
    Ok(super::verify(concrete)?.lift())
}
