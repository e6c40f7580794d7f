//! Assignment statements (`a[items] = value`, `+=`, `*=`; docs/semantics.md, Stores): the
//! target must be a bound input subscripted one or more times, the selection is checked as the
//! same subscripts load, and the value is made the target's dtype (literals as NumPy converts a
//! Python `int`) and checked to broadcast to the selection's shape by NumPy's rule. One value
//! through a mask (`a[m] = 0`) selects the mask's box instead, read where the mask is set.

use super::check::{Checker, const_tensor, err, node, view};
use super::error::{SemaError, SemaErrorKind as K};
use super::typed::{TExpr, TExprKind, ViewDim};
use crate::source::Span;
use crate::syntax::ast::{self, AssignOp, ExprKind};
use crate::types::sym::{Cond, SymExpr};
use crate::types::{Combine, ShapeDisplay, literal_element};
use slc_runtime::{DType, Tensor};

impl Checker<'_> {
    /// The checked store `target op value`: a [`TExprKind::Store`] with the target's type.
    pub(super) fn assignment(
        &mut self,
        target: &ast::Expr,
        op: AssignOp,
        value: &ast::Expr,
        span: Span,
    ) -> Result<TExpr, SemaError> {
        // Peel the subscripts down to the name they index.
        let mut subscripts = vec![];
        let mut leaf = target;
        while let ExprKind::Index { base, items } = &leaf.kind {
            subscripts.push((items, leaf.span));
            leaf = base;
        }
        let refuse = |reason: String, at: Span| err(K::StoreTarget { reason }, at);
        let ExprKind::Name(name) = &leaf.kind else {
            return refuse(format!("`{leaf}` is not a name"), leaf.span);
        };
        if subscripts.is_empty() {
            return refuse(format!("`{name}` is not subscripted: bind a new name with `let`"), target.span);
        }
        if self.is_local(name) {
            return refuse(format!("`{name}` is a `let` name, not a bound input"), leaf.span);
        }
        let base = self.tensor_name(name, leaf.span)?;
        let mut selection = base.clone();
        let (last_items, last_at) = subscripts[0];
        for (level, (items, at)) in subscripts.iter().rev().enumerate() {
            if level > 0 && copies(&selection) {
                return refuse(
                    "index arrays and masks select a copy: NumPy stores into that copy, not the array; \
                     put them in the last subscript"
                        .into(),
                    *at,
                );
            }
            if level + 1 < subscripts.len() {
                selection = self.index(selection, items, *at)?;
            }
        }
        let combine = match op {
            AssignOp::Set => Combine::Set,
            AssignOp::Add => Combine::Add,
            AssignOp::Mul => Combine::Mul,
        };
        // A store through a mask: its box, before the value (the subscript is checked first).
        let boxed = match self.masks.stores_read_masks {
            true => self.mask_box(selection.clone(), last_items, last_at)?,
            false => None,
        };
        let list = matches!(value.kind, ExprKind::List(_));
        let value_value = self.expr(value)?;
        let value = self.store_value(value_value, &base, list && combine != Combine::Set, value.span)?;
        // One value for every update (a scalar, or one element, which broadcasts to any
        // selection): through a mask, the box the mask spans is written where the mask is
        // `True`, and none of its positions is needed.
        let one_value = value.ty.shape.len() <= 1 && value.ty.shape.iter().all(|d| d.as_const() == Some(1));
        let (selection, when) = match boxed.filter(|_| one_value) {
            Some((boxed, mask, at)) => {
                let rank = boxed.ty.shape.len();
                let dims = (0..at)
                    .map(|_| ViewDim::NewAxis)
                    .chain(mask.ty.shape.iter().map(ViewDim::whole))
                    .chain((at + mask.ty.shape.len()..rank).map(|_| ViewDim::NewAxis))
                    .collect();
                let span = mask.span;
                (boxed, Some(Box::new(view(mask, dims, span)?)))
            }
            None => {
                let selection = self.index(selection, last_items, last_at)?;
                self.broadcast_to_selection(&value, &selection, combine)?;
                (selection, None)
            }
        };
        let kind = TExprKind::Store {
            target: Box::new(base.clone()),
            selection: Box::new(selection),
            value: Box::new(value),
            combine,
            when,
        };
        node(kind, base.ty.clone(), span)
    }

    /// The value as a tensor of the target's dtype: a literal (an integer, `True`/`False`, a
    /// list) converted as NumPy converts a Python `int` (refused where an integer type cannot
    /// hold it); any other tensor must already have the target's dtype. `in_arithmetic`: a list
    /// literal of `+=`/`*=`, which NumPy makes an int64 array and combines in int64 before
    /// casting back `same_kind` — wrapping into a signed target, refused by an unsigned one.
    pub(in crate::sema) fn store_value(
        &mut self,
        v: super::check::Value,
        target: &TExpr,
        in_arithmetic: bool,
        span: Span,
    ) -> Result<TExpr, SemaError> {
        let v = self.to_tensor_value(v, span)?;
        let dtype = target.ty.dtype;
        // A 0-d integer bound with its value (a Python `int` passed by name) is the literal it
        // holds, as NumPy takes `x[i] = k`; its value is recorded as read.
        let v = match v.ty.dtype != dtype && self.bound_scalar(&v) {
            true => {
                let value = self.value_of(&v)?[0];
                let Ok(value) = i64::try_from(value) else {
                    return err(
                        K::StoreLiteralRange { value: value.to_string(), target: dtype.name().into() },
                        span,
                    );
                };
                const_tensor(Tensor::scalar_i64(value), v.span)
            }
            false => v,
        };
        if v.ty.dtype == dtype {
            return Ok(v);
        }
        let TExprKind::Const(t) = &v.kind else {
            return err(K::StoreDtype { value: v.ty.dtype.name().into(), target: dtype.name().into() }, span);
        };
        let mut bytes = Vec::with_capacity(t.numel() * dtype.width());
        for i in 0..t.numel() {
            let bit = || (t.dtype() == DType::Bool).then(|| i128::from(t.bytes()[i]));
            let x = t.int_at(i).or_else(bit).and_then(|x| i64::try_from(x).ok());
            let wrapped = |x: i64| match in_arithmetic && t.dtype() == DType::I64 {
                // (a + v) in int64, cast back: v's low bits are what is added.
                true if dtype.is_signed() => Some(x.to_le_bytes()[..dtype.width()].to_vec()),
                true if dtype.is_integer() => None,
                _ => literal_element(dtype, x),
            };
            if in_arithmetic && t.dtype() == DType::I64 && dtype.is_integer() && !dtype.is_signed() {
                return err(K::StoreListArithmetic { target: dtype.name().into() }, span);
            }
            let Some(element) = x.and_then(wrapped) else {
                let shown = x.map_or_else(|| "?".into(), |x| x.to_string());
                return err(K::StoreLiteralRange { value: shown, target: dtype.name().into() }, span);
            };
            bytes.extend(element);
        }
        let converted = Tensor::from_bytes(dtype, t.shape(), &bytes)
            .map_err(|_| SemaError::new(K::TooLarge { shape: format!("{:?}", t.shape()) }, span))?;
        Ok(const_tensor(converted, span))
    }

    /// NumPy's rule for a stored value: aligned at the last dimension, each of its dims equal
    /// to the selection's or 1 (a symbol either, per call), and any dims beyond the selection's
    /// rank 1 — none for `+=` and `*=`, whose in-place operation cannot grow the selection
    /// ("non-broadcastable output").
    fn broadcast_to_selection(
        &mut self,
        value: &TExpr,
        selection: &TExpr,
        combine: Combine,
    ) -> Result<(), SemaError> {
        let (v, s) = (&value.ty.shape, &selection.ty.shape);
        if combine != Combine::Set && v.len() > s.len() {
            return Err(broadcast_refusal(value, selection));
        }
        let one = SymExpr::constant(1);
        let extra = v.len().saturating_sub(s.len());
        for d in &v[..extra] {
            self.require(Cond::eq(d, &one), || broadcast_refusal(value, selection))?;
        }
        for (d, n) in v[extra..].iter().zip(&s[s.len() - (v.len() - extra)..]) {
            match d.as_const() {
                Some(1) => {}
                // A size that is not 1 must be the selection's.
                Some(_) => self.require(Cond::eq(d, n), || broadcast_refusal(value, selection))?,
                // A symbol may be 1 (stretched: the lowering reads it at 0 then) or the
                // selection's size, decided per call.
                None => {
                    let stretched = SymExpr::select(Cond::eq(d, &one), n, d);
                    self.require(Cond::eq(&stretched, n), || broadcast_refusal(value, selection))?;
                }
            }
        }
        Ok(())
    }
}

fn broadcast_refusal(value: &TExpr, selection: &TExpr) -> SemaError {
    let shape = |t: &TExpr| format!("{}", ShapeDisplay(&t.ty.shape));
    SemaError::new(K::StoreBroadcast { value: shape(value), selection: shape(selection) }, value.span)
}

/// Whether the selection so far is a copy in NumPy: an advanced index on its data path.
fn copies(t: &TExpr) -> bool {
    match &t.kind {
        TExprKind::View { base, .. } => copies(base),
        TExprKind::Input(_) => false,
        _ => true,
    }
}
