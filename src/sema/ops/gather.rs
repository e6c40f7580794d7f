//! `gather(data, indices, axis, batch_dims=0, mode=zero)`: OpenVINO Gather-8, with a choice of
//! out-of-range policy.

use super::{Checker, bind, invalid};
use crate::sema::check::{Value, const_tensor};
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::typed::TExpr;
use crate::source::Span;
use crate::syntax::ast::{Arg, ExprKind};
use crate::types::OobMode;
use crate::types::sym::{Cond, SymExpr};
use slc_runtime::Tensor;

/// The form's name and parameters, positional in this order (the operator table reads them).
pub(super) const NAME: &str = "gather";
pub(super) const REQUIRED: [&str; 3] = ["data", "indices", "axis"];
pub(super) const OPTIONAL: [&str; 2] = ["batch_dims", "mode"];

/// The arguments of a `gather` call.
pub(super) struct Args<'a> {
    pub(super) data: &'a Arg,
    pub(super) indices: &'a Arg,
    pub(super) axis: &'a Arg,
    pub(super) batch_dims: Option<&'a Arg>,
    pub(super) mode: Option<&'a Arg>,
}

impl<'a> Args<'a> {
    pub(super) fn bind(args: &'a [Arg], span: Span) -> Result<Args<'a>, SemaError> {
        let ([data, indices, axis], [batch_dims, mode]) = bind(NAME, REQUIRED, OPTIONAL, args, span)?;
        Ok(Args { data, indices, axis, batch_dims, mode })
    }
}

impl Checker<'_> {
    /// OpenVINO Gather-8 with a choice of out-of-range policy (docs/semantics.md, gather).
    pub(super) fn gather_call(&mut self, args: Args, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(args.data)?;
        let indices_arg = args.indices;
        let indices = self.indices_arg(indices_arg)?;
        let rank = data.ty.shape.len() as i64;
        let q = indices.ty.shape.len() as i64;
        let axis = self.axis_arg(args.axis, rank)? as i64;
        let batch_dims = match args.batch_dims {
            None => 0,
            Some(arg) => {
                let raw = self.int_scalar(arg)?;
                let bd = if raw < 0 { raw + q } else { raw };
                if bd < 0 || bd > q || bd > axis {
                    return invalid(
                        format!(
                            "batch_dims {raw} must lie in 0..={} (at most the rank of the indices, {q}, and the axis, {axis})",
                            q.min(axis)
                        ),
                        "batch_dims out of range",
                        arg.value.span,
                    );
                }
                bd
            }
        } as usize;
        let axis = axis as usize;
        for (d, i) in data.ty.shape[..batch_dims].iter().zip(&indices.ty.shape[..batch_dims]) {
            let refusal = || {
                let message = format!(
                    "the first {batch_dims} dimensions of data {} and indices {} must match",
                    data.ty, indices.ty
                );
                let label = "batch dimensions differ".into();
                SemaError::new(K::InvalidArgument { message, label }, indices_arg.value.span)
            };
            self.require(Cond::eq(d, i), refusal)?;
        }
        let mode = oob_mode(args.mode, OobMode::Zero)?;
        let n = data.ty.shape[axis].clone();
        self.check_empty_axis(mode, &n, &indices.ty.shape, axis, span)?;
        if mode == OobMode::Error {
            self.check_const_indices(&indices, axis, &n)?;
        }
        self.gather(data, indices, axis, batch_dims, mode, span)
    }

    /// An `axis=` argument in `[-rank, rank-1]`, negative values counted from the end.
    pub(super) fn axis_arg(&mut self, arg: &Arg, rank: i64) -> Result<usize, SemaError> {
        let axis = self.int_scalar(arg)?;
        if !(-rank..rank).contains(&axis) {
            let msg = format!("axis {axis} is out of range for data of rank {rank}");
            return invalid(msg, "axis out of range", arg.value.span);
        }
        Ok(if axis < 0 { axis + rank } else { axis } as usize)
    }

    /// The index operand of a gather form: an integer tensor, a list literal, or an integer
    /// expression (a 0-d index).
    pub(super) fn indices_arg(&mut self, arg: &Arg) -> Result<TExpr, SemaError> {
        match self.expr(&arg.value)? {
            Value::Int(v) => Ok(const_tensor(Tensor::scalar_i64(v), arg.value.span)),
            Value::Tensor(t) if t.ty.dtype.is_integer() => Ok(t),
            other => invalid(
                format!("indices must be an integer tensor, found {}", other.describe()),
                "not integer indices",
                arg.value.span,
            ),
        }
    }
}

/// The `mode=` argument of a gather form: a policy name, bare or as a string.
pub(super) fn oob_mode(arg: Option<&Arg>, default: OobMode) -> Result<OobMode, SemaError> {
    let Some(arg) = arg else { return Ok(default) };
    let word = match &arg.value.kind {
        ExprKind::Name(w) | ExprKind::Str(w) => Some(w.as_str()),
        _ => None,
    };
    match word.and_then(OobMode::from_name) {
        Some(m) => Ok(m),
        None => invalid("mode must be one of zero, error, clamp, wrap", "unknown mode", arg.value.span),
    }
}

impl Checker<'_> {
    /// `clamp` and `wrap` have nothing to map an index to on an empty axis: with at least one
    /// index (`indices_shape` has no 0), that is an error (docs/semantics.md, Out-of-range
    /// policies): `min(1, indices' dims) <= n`.
    pub(super) fn check_empty_axis(
        &mut self,
        mode: OobMode,
        n: &SymExpr,
        indices_shape: &[SymExpr],
        axis: usize,
        span: Span,
    ) -> Result<(), SemaError> {
        if !matches!(mode, OobMode::Clamp | OobMode::Wrap) {
            return Ok(());
        }
        let mut least = vec![SymExpr::constant(1)];
        least.extend(indices_shape.iter().cloned());
        let refusal = || {
            let message = format!("cannot {} indices into an empty axis {axis}", mode.name());
            SemaError::new(K::InvalidArgument { message, label: "axis is empty".into() }, span)
        };
        self.require(Cond::le(&SymExpr::min(&least), n), refusal)
    }
}
