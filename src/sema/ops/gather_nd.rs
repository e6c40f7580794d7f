//! `gather_nd(data, indices, batch_dims=0, mode=error)`: ONNX GatherND-13, with a choice of
//! out-of-range policy.

use super::gather::oob_mode;
use super::{Checker, bind, invalid};
use crate::sema::check::{err, node};
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::typed::{TExpr, TExprKind};
use crate::source::Span;
use crate::syntax::ast::Arg;
use crate::types::sym::SymExpr;
use crate::types::{OobMode, ShapeDisplay, TensorType, checked_numel};

/// The form's name and parameters, positional in this order (the operator table reads them).
pub(super) const NAME: &str = "gather_nd";
pub(super) const REQUIRED: [&str; 2] = ["data", "indices"];
pub(super) const OPTIONAL: [&str; 2] = ["batch_dims", "mode"];

/// The arguments of a `gather_nd` call.
pub(super) struct Args<'a> {
    data: &'a Arg,
    indices: &'a Arg,
    batch_dims: Option<&'a Arg>,
    mode: Option<&'a Arg>,
}

impl<'a> Args<'a> {
    pub(super) fn bind(args: &'a [Arg], span: Span) -> Result<Args<'a>, SemaError> {
        let ([data, indices], [batch_dims, mode]) = bind(NAME, REQUIRED, OPTIONAL, args, span)?;
        Ok(Args { data, indices, batch_dims, mode })
    }
}

impl Checker<'_> {
    /// ONNX GatherND-13 (docs/semantics.md, gather_nd).
    pub(super) fn gather_nd_call(&mut self, args: Args, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(args.data)?;
        let indices = self.indices_arg(args.indices)?;
        const FORM: &str = "`gather_nd`";
        let (d, i) = (&self.concrete_shape(&data, FORM)?, &self.concrete_shape(&indices, FORM)?);
        let (r, q) = (d.len(), i.len());
        let index_span = args.indices.value.span;
        if r == 0 {
            return invalid("gather_nd needs data of rank at least 1", "0-d data", args.data.value.span);
        }
        let Some(&m) = i.last() else {
            return invalid("gather_nd needs indices of rank at least 1", "0-d indices", index_span);
        };
        let b = match args.batch_dims {
            None => 0,
            Some(arg) => {
                let raw = self.int_scalar(arg)?;
                if !(0..q as i64).contains(&raw) {
                    let msg = format!("batch_dims {raw} must lie in 0..{q} (below the rank of the indices)");
                    return invalid(msg, "batch_dims out of range", arg.value.span);
                }
                raw as usize
            }
        };
        // The index tuples select among the data's dimensions after the batch ones, at least one
        // (the ONNX text: `indices.shape[-1]` in `[1, r - b]`; ONNX Runtime also accepts 0).
        if m == 0 {
            let msg = "the indices' last dimension is the length of an index tuple, which must be at least 1";
            return invalid(msg, "index tuples of length 0", index_span);
        }
        if b > r || m > (r - b) as i64 {
            let msg = format!(
                "the indices' last dimension ({m}) must be at most the data's rank after {b} batch dimensions ({})",
                r.saturating_sub(b)
            );
            return invalid(msg, "index tuples too long", index_span);
        }
        let m = m as usize;
        if d[..b] != i[..b] {
            let msg =
                format!("the first {b} dimensions of data {} and indices {} must match", data.ty, indices.ty);
            return invalid(msg, "batch dimensions differ", index_span);
        }
        let mode = oob_mode(args.mode, OobMode::Error)?;
        let tuples = &i[..q - 1];
        for j in 0..m {
            let tuple_dims = &indices.ty.shape[..q - 1];
            self.check_empty_axis(mode, &SymExpr::constant(d[b + j]), tuple_dims, b + j, span)?;
        }
        if mode == OobMode::Error {
            check_const_tuples(&indices, &d[b..b + m], b)?;
        }
        let shape: Vec<i64> = tuples.iter().chain(&d[b + m..]).copied().collect();
        if checked_numel(&shape).is_none() {
            return err(K::TooLarge { shape: format!("{}", ShapeDisplay(&shape)) }, span);
        }
        let ty =
            TensorType { dtype: data.ty.dtype, shape: shape.into_iter().map(SymExpr::constant).collect() };
        let kind =
            TExprKind::GatherNd { data: Box::new(data), indices: Box::new(indices), batch_dims: b, mode };
        node(kind, ty, span)
    }
}

/// Literal index tuples are checked now, pointing at the literal: entry `j` of each tuple
/// indexes data axis `first_axis + j`, of size `sizes[j]` (not empty).
fn check_const_tuples(indices: &TExpr, sizes: &[i64], first_axis: usize) -> Result<(), SemaError> {
    if let TExprKind::Const(t) = &indices.kind {
        for at in 0..t.numel() {
            let j = at % sizes.len();
            let v = t.int_at(at).unwrap_or_default();
            if OobMode::Error.normalize(v, sizes[j]).is_err() {
                let (index, size) = (SymExpr::constant(v as i64), SymExpr::constant(sizes[j]));
                let kind = K::IndexOutOfRange { index, axis: first_axis + j, size };
                return err(kind, indices.span);
            }
        }
    }
    Ok(())
}
