//! Lowering a store (`a[items] = value`; docs/semantics.md, Stores). The selection is lowered
//! exactly as the same subscripts load — one address computation, its index checks included —
//! so its access over the selection's coordinates is where each update writes; the value is
//! lowered as any expression and broadcast onto those coordinates; the output is a whole read
//! of the target, the copy the updates are applied to.

use super::ir::*;
use super::lower::{Builder, Coord, substitute};
use super::verify::PlanError;
use crate::sema::{TExpr, TExprKind};
use crate::source::Span;
use crate::types::Combine;
use crate::types::sym::{Cond, SymExpr};

type Lowered = (Store<SymExpr>, Access<SymExpr>, Vec<SymExpr>);

impl Builder<'_> {
    /// The store of `value` into `selection` of `target`, with the output access (the target
    /// read whole) and the output's shape.
    pub(super) fn store(
        &mut self,
        target: &TExpr,
        selection: &TExpr,
        value: &TExpr,
        combine: Combine,
        when: Option<&TExpr>,
        span: Span,
    ) -> Result<Lowered, PlanError> {
        let TExprKind::Input(name) = &target.kind else {
            return Err(PlanError::Invalid(format!("a store's target must be an input, not {target}")));
        };
        let (output, shape) = match self.strides.contains_key(name) {
            // The output is the target's dense copy, and a store's addresses are the output's.
            true if !self.through_view => {
                return Err(PlanError::Invalid(format!(
                    "the store's target `{name}` must be dense, not a strided view"
                )));
            }
            true => self.window_of(target, name)?,
            false => self.expr(target)?,
        };
        let (dest, selection_shape) = self.expr(selection)?;
        if dest.buffer != output.buffer {
            return Err(PlanError::Invalid(format!("a store's selection must address its target `{name}`")));
        }
        let mut value = self.broadcast_onto(value, &selection_shape, span)?;
        // A value of another dtype is read cast to the target's (docs/semantics.md, Stores).
        let dtype = self.buffer_dtype(output.buffer);
        if self.buffer_dtype(value.buffer) != dtype {
            value.buffer = match value.buffer {
                BufferId::Input(i) => BufferId::Input(self.cast_input(i, dtype)),
                BufferId::Const(c) => BufferId::Const(self.cast_const(c, dtype, span)?),
            };
        }
        let when = when.map(|w| self.broadcast_onto(w, &selection_shape, span)).transpose()?;
        let rank = selection_shape.len();
        let store = match selection_shape.iter().any(|d| d.as_const() == Some(0)) {
            // No update: the canonical empty accesses form no address (as an empty output's).
            true => {
                let canonical = |a: &Access<SymExpr>| Access {
                    buffer: a.buffer,
                    base: SymExpr::constant(0),
                    strides: vec![SymExpr::constant(0); rank],
                    terms: vec![],
                };
                Store {
                    shape: selection_shape,
                    dest: canonical(&dest),
                    value: canonical(&value),
                    combine,
                    when: when.as_ref().map(canonical),
                }
            }
            false => Store { shape: selection_shape, dest, value, combine, when },
        };
        Ok((store, output, shape))
    }

    /// The read of a strided target's window, whole (its elements from the lowest to the
    /// highest, one axis), and the window's shape: the output of a store through a view
    /// ([`super::lower_through_view`]). The read starts at the lowest element's address
    /// (relative to element `[0, ..., 0]`, as every access to the view counts), so an update's
    /// output element is its address less that base.
    fn window_of(
        &mut self,
        target: &TExpr,
        name: &str,
    ) -> Result<(Access<SymExpr>, Vec<SymExpr>), PlanError> {
        let (read, shape) = self.expr(target)?;
        let BufferId::Input(i) = read.buffer else { return Ok((read, shape)) };
        let Some(strides) = self.inputs[i].strides.clone() else { return Ok((read, shape)) };
        let refused = |why: &str| PlanError::Invalid(format!("the store's target `{name}` {why}"));
        let dims: Option<Vec<i64>> = shape.iter().map(SymExpr::as_const).collect();
        let dims = dims.ok_or_else(|| refused("has symbolic dims"))?;
        let decl = InputDecl { strides: Some(strides), ..InputDecl::dense(name, self.inputs[i].dtype, dims) };
        let Some((first, last)) = decl.window() else { return Err(refused("is an empty view")) };
        let len = last - first + 1;
        let stride = SymExpr::constant(i64::from(len > 1));
        let whole = Access {
            buffer: read.buffer,
            base: SymExpr::constant(first),
            strides: vec![stride],
            terms: vec![],
        };
        Ok((whole, vec![SymExpr::constant(len)]))
    }

    /// `e` lowered and broadcast onto the update coordinates by NumPy's rule (checked by sema):
    /// aligned at the last dimension; a dim of 1 (and any dim beyond the selection's rank)
    /// stays at 0, and a symbol that may be 1 where the selection's is another size moves by
    /// `(0 if n == 1 else 1)`.
    fn broadcast_onto(
        &mut self,
        e: &TExpr,
        selection_shape: &[SymExpr],
        span: Span,
    ) -> Result<Access<SymExpr>, PlanError> {
        let (access, shape) = self.expr(e)?;
        let rank = selection_shape.len();
        let extra = shape.len().saturating_sub(rank);
        let coords: Vec<Coord> = (shape.iter().enumerate())
            .map(|(d, n)| {
                let (zero, one) = (SymExpr::constant(0), SymExpr::constant(1));
                if d < extra || n.as_const() == Some(1) {
                    return Coord::Affine { dim: None, offset: zero.clone(), scale: zero };
                }
                let at = rank + d - shape.len();
                let scale = match n.as_const().is_none() && *n != selection_shape[at] {
                    true => SymExpr::select(Cond::eq(n, &one), &zero, &one),
                    false => one,
                };
                Coord::Affine { dim: Some(at), offset: zero, scale }
            })
            .collect();
        substitute(&access, &coords, rank, true, span, &mut self.budget)
    }
}
