//! List literals (`[[1, 2], [3, 4]]`, `[True, False]`) checked into constant tensors: the
//! walk that finds their shape and refuses ragged lists is apart from the rest of checking.

use super::check::{Checker, bool_tensor, const_tensor, err};
use super::error::{SemaError, SemaErrorKind as K};
use super::typed::TExpr;
use crate::limits::MAX_RANK;
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind};
use crate::types::{ShapeDisplay, checked_numel};
use slc_runtime::{DType, Tensor};

/// One element of a list literal.
#[derive(Clone, Copy)]
enum Element {
    Int(i64),
    Bool(bool),
    /// Only where float literals are allowed ([`Checker::float_literal`]).
    Float(f64),
}

impl Element {
    fn as_i64(&self) -> i64 {
        match *self {
            Element::Int(v) => v,
            Element::Bool(b) => i64::from(b),
            Element::Float(_) => unreachable!("a list with a float is made float64"),
        }
    }

    /// As NumPy makes a list with a float a float64 array (an int rounded to the nearest).
    fn as_f64(&self) -> f64 {
        match *self {
            Element::Float(v) => v,
            other => other.as_i64() as f64,
        }
    }
}

impl Checker<'_> {
    /// A (nested) list literal as a constant: bool when every element is `True` or `False`
    /// (a mask), f64 when one is a float (store values only: [`Checker::float_literal`]),
    /// otherwise i64, with `True` and `False` as 1 and 0 (as NumPy converts the list).
    pub(super) fn list(&mut self, e: &ast::Expr) -> Result<TExpr, SemaError> {
        let mut shape: Option<Vec<i64>> = None;
        let mut values = vec![];
        self.list_into(e, 0, &mut vec![], &mut shape, &mut values)?;
        let shape = shape.unwrap_or_else(|| vec![0]);
        if shape.len() > MAX_RANK {
            return err(K::TooManyDims { rank: shape.len() }, e.span);
        }
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let too_large = || SemaError::new(K::TooLarge { shape: format!("{}", ShapeDisplay(&shape)) }, e.span);
        if checked_numel(&shape).is_none() {
            return Err(too_large());
        }
        if !values.is_empty() && values.iter().all(|v| matches!(v, Element::Bool(_))) {
            let bits: Vec<bool> = values.iter().map(|v| matches!(v, Element::Bool(true))).collect();
            return Ok(const_tensor(bool_tensor(&dims, &bits), e.span));
        }
        // A float anywhere makes the list NumPy's float64 array (store values only).
        if values.iter().any(|v| matches!(v, Element::Float(_))) {
            let bytes: Vec<u8> = values.iter().flat_map(|v| v.as_f64().to_le_bytes()).collect();
            let t = Tensor::from_bytes(DType::F64, &dims, &bytes).map_err(|_| too_large())?;
            return Ok(const_tensor(t, e.span));
        }
        let values: Vec<i64> = values.iter().map(Element::as_i64).collect();
        let t = Tensor::from_i64s(DType::I64, &dims, &values).map_err(|_| too_large())?;
        Ok(const_tensor(t, e.span))
    }

    /// Walks a list literal depth-first; the first complete path fixes the shape every other
    /// element must agree with.
    fn list_into(
        &mut self,
        e: &ast::Expr,
        depth: usize,
        path: &mut Vec<i64>,
        shape: &mut Option<Vec<i64>>,
        values: &mut Vec<Element>,
    ) -> Result<(), SemaError> {
        let describe = |s: &[i64]| {
            if s.is_empty() {
                "an integer".to_string()
            } else {
                format!("a list of shape {}", ShapeDisplay(s))
            }
        };
        match &e.kind {
            ExprKind::List(items) => {
                path.push(items.len() as i64);
                if items.is_empty() {
                    // `[]` ends a path: its shape is the path so far.
                    self.leaf_shape(path, depth + 1, shape, e.span, describe)?;
                }
                for item in items {
                    self.list_into(item, depth + 1, path, shape, values)?;
                }
                path.pop();
                Ok(())
            }
            ExprKind::Bool(b) => {
                self.leaf_shape(path, depth, shape, e.span, describe)?;
                values.push(Element::Bool(*b));
                Ok(())
            }
            _ => {
                self.leaf_shape(path, depth, shape, e.span, describe)?;
                values.push(match self.float_literal(e) {
                    Some(v) => Element::Float(v),
                    None => Element::Int(self.int(e, "a list element")?),
                });
                Ok(())
            }
        }
    }

    fn leaf_shape(
        &self,
        path: &[i64],
        depth: usize,
        shape: &mut Option<Vec<i64>>,
        span: Span,
        describe: impl Fn(&[i64]) -> String,
    ) -> Result<(), SemaError> {
        // The shape below this leaf, as seen from the root: the lengths along the path.
        let here: Vec<i64> = path[..depth.min(path.len())].to_vec();
        match shape {
            None => {
                *shape = Some(here);
                Ok(())
            }
            Some(s) if *s == here => Ok(()),
            Some(s) => {
                let expected = describe(&s[depth.min(s.len())..]);
                let found = describe(&here[depth.min(here.len())..]);
                let (expected, found) = if expected == found {
                    (format!("shape {}", ShapeDisplay(s)), format!("shape {}", ShapeDisplay(&here)))
                } else {
                    (expected, found)
                };
                err(K::RaggedList { expected, found }, span)
            }
        }
    }

    /// The value of a float literal (`2.5`, `-1e3`) where store values allow them
    /// ([`Checker::float_literals`]); `None` for anything else, which then checks as before
    /// (a float is `E0106` outside store values).
    pub(super) fn float_literal(&self, e: &ast::Expr) -> Option<f64> {
        if !self.float_literals {
            return None;
        }
        match &e.kind {
            // The lexer's float: digits, `_`, one `.` and an exponent, which Rust parses once
            // the `_`s are gone (as Python reads `1_000.5`); too large is infinite, as Python's.
            ExprKind::Float(text) => text.replace('_', "").parse::<f64>().ok(),
            ExprKind::Neg(inner) => self.float_literal(inner).map(|v| -v),
            _ => None,
        }
    }
}
