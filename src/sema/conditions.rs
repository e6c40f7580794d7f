//! The conditions checking puts on the program's symbols (docs/design/shape-generic.md): each is
//! decided now where it can be — always true: nothing; never: today's diagnostic — and
//! otherwise becomes a [`ShapeCondition`] that the shape function checks per call, with the
//! diagnostic's message and span. With constant dims every condition is decided, so a concrete
//! program gets exactly today's diagnostics.

use super::check::{Checker, Value};
use super::error::{SemaError, SemaErrorKind as K};
use super::typed::{ShapeCondition, TExpr, TExprKind};
use crate::syntax::ast;
use crate::types::sym::{Assumptions, Cond, SymExpr};

impl Checker<'_> {
    /// A condition on the program's symbols: nothing when it always holds, `refusal` (the
    /// diagnostic it raises) when it never does, and otherwise a condition for the shape
    /// function, with the refusal's message and span.
    pub(super) fn require(
        &mut self,
        cond: Cond,
        refusal: impl FnOnce() -> SemaError,
    ) -> Result<(), SemaError> {
        match cond.decide(&Assumptions::default()) {
            Some(true) => Ok(()),
            Some(false) => Err(refusal()),
            None => {
                let refusal = refusal();
                let message = refusal.kind.to_string();
                let condition = ShapeCondition { cond, message, span: refusal.span };
                // A subscript walked twice (a store's mask box) requires the same things again.
                if !self.conditions.contains(&condition) {
                    self.conditions.push(condition);
                }
                Ok(())
            }
        }
    }

    /// An integer index `i` into an axis of size `n` (NumPy's rule: `-n <= i < n`, negative
    /// values count from the end), as the element it picks.
    pub(super) fn index_into(
        &mut self,
        i: &SymExpr,
        n: &SymExpr,
        refusal: impl Fn() -> SemaError,
    ) -> Result<SymExpr, SemaError> {
        self.require(Cond::lt(i, n), &refusal)?;
        self.require(Cond::le(&-n, i), &refusal)?;
        let zero = SymExpr::constant(0);
        Ok(SymExpr::select(Cond::lt(i, &zero), &(i + n), i))
    }

    /// The value of run-time arithmetic `e`, which must not overflow i64 (as compile-time
    /// arithmetic must not): the shape function checks `i64::MIN <= r <= i64::MAX` evaluating
    /// `r` itself, which fails where it overflows.
    pub(super) fn run_time_result(&mut self, r: SymExpr, e: &ast::Expr) -> Result<Value, SemaError> {
        let refusal = || SemaError::new(K::Overflow { expr: format!("{e}") }, e.span);
        self.require(Cond::le(&SymExpr::constant(i64::MIN), &r), refusal)?;
        self.require(Cond::le(&r, &SymExpr::constant(i64::MAX)), refusal)?;
        Ok(Value::Sym(r))
    }

    /// Literal index values are checked now, pointing at the literal, rather than at run time
    /// (against a symbolic size: the extreme values, per call).
    pub(super) fn check_const_indices(
        &mut self,
        indices: &TExpr,
        axis: usize,
        size: &SymExpr,
    ) -> Result<(), SemaError> {
        if let TExprKind::Const(t) = &indices.kind {
            for i in 0..t.numel() {
                let v = t.int_at(i).unwrap_or_default();
                // A u64 above i64::MAX is out of range of every axis, as i64::MAX is.
                let index = SymExpr::constant(i64::try_from(v).unwrap_or(i64::MAX));
                let refusal = || {
                    SemaError::new(
                        K::IndexOutOfRange { index: index.clone(), axis, size: size.clone() },
                        indices.span,
                    )
                };
                self.index_into(&index, size, refusal)?;
            }
        }
        Ok(())
    }

    /// The product of `factors` multiplied left to right, as [`checked_numel`] does, must not
    /// overflow i64. Factors are dims (never negative), so while none so far is 0 every partial
    /// product is at most the product so far, and `checked_numel` overflows exactly where, at
    /// some step with no factor 0 so far, the product so far exceeds i64: one condition per
    /// step, `(0 if min(factors so far) == 0 else product so far) <= i64::MAX` (evaluating the
    /// product fails where it overflows). A later factor 0 does not excuse an earlier overflow,
    /// as in `checked_numel`. Each condition holds each factor once: the product so far nested
    /// in the next step's condition and value would double the expression per factor (a rank-32
    /// input's conditions would not fit in memory).
    /// Returns the element count: 0 where a factor is, else the product.
    pub(super) fn require_product_fits(
        &mut self,
        factors: &[SymExpr],
        refusal: impl Fn() -> SemaError,
    ) -> Result<SymExpr, SemaError> {
        let (zero, max) = (SymExpr::constant(0), SymExpr::constant(i64::MAX));
        let mut product = SymExpr::constant(1);
        // The factors so far that may be 0 (a constant one decides every later step).
        let mut may_be_zero: Vec<SymExpr> = vec![];
        let mut value = product.clone();
        for d in factors {
            product = &product * d;
            if d.as_const().is_none() {
                may_be_zero.push(d.clone());
            }
            value = match may_be_zero.is_empty() {
                true => product.clone(),
                false => SymExpr::select(Cond::eq(&SymExpr::min(&may_be_zero), &zero), &zero, &product),
            };
            self.require(Cond::le(&value, &max), &refusal)?;
        }
        Ok(value)
    }
}
