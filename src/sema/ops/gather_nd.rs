//! `gather_nd(data, indices, batch_dims=0, mode=error)`: ONNX GatherND-13, with a choice of
//! out-of-range policy.

use super::gather::oob_mode;
use super::{Checker, bind, invalid};
use crate::sema::check::{err, node};
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::typed::{TExpr, TExprKind, broadcast_is_empty};
use crate::source::Span;
use crate::syntax::ast::Arg;
use crate::types::sym::{Cond, SymExpr};
use crate::types::{OobMode, TensorType};

/// The form's name and parameters, positional in this order (the operator table reads them).
pub(super) const NAME: &str = "gather_nd";
pub(super) const REQUIRED: [&str; 2] = ["data", "indices"];
pub(super) const OPTIONAL: [&str; 2] = ["batch_dims", "mode"];

/// The arguments of a `gather_nd` call.
pub(super) struct Args<'a> {
    pub(super) data: &'a Arg,
    pub(super) indices: &'a Arg,
    pub(super) batch_dims: Option<&'a Arg>,
    pub(super) mode: Option<&'a Arg>,
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
        let (d, i) = (&data.ty.shape, &indices.ty.shape);
        let (r, q) = (d.len(), i.len());
        let index_span = args.indices.value.span;
        if r == 0 {
            return invalid("gather_nd needs data of rank at least 1", "0-d data", args.data.value.span);
        }
        let Some(m) = i.last() else {
            return invalid("gather_nd needs indices of rank at least 1", "0-d indices", index_span);
        };
        // The tuples' length sets the output's rank: a value the program needs now.
        let Some(m) = m.as_const() else {
            let source = self.symbol_source(std::slice::from_ref(m)).unwrap_or_else(|| indices.to_string());
            let what = format!("the last dim of `{source}`");
            let form = "`gather_nd`'s tuple length (the last dim of `indices`: it sets the output's rank)";
            return err(K::SymbolicUnsupported { form, what }, index_span);
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
        for (x, y) in d[..b].iter().zip(&i[..b]) {
            let refusal = || {
                let message = format!(
                    "the first {b} dimensions of data {} and indices {} must match",
                    data.ty, indices.ty
                );
                SemaError::new(
                    K::InvalidArgument { message, label: "batch dimensions differ".into() },
                    index_span,
                )
            };
            self.require(Cond::eq(x, y), refusal)?;
        }
        let mode = oob_mode(args.mode, OobMode::Error)?;
        let tuples = &i[..q - 1];
        for j in 0..m {
            let tuple_dims = &indices.ty.shape[..q - 1];
            self.check_empty_axis(mode, &d[b + j], tuple_dims, b + j, span)?;
        }
        if mode == OobMode::Error && m > 0 {
            self.check_const_tuples(&indices, &d[b..b + m], b, &d[b + m..])?;
        }
        let shape: Vec<SymExpr> = tuples.iter().chain(&d[b + m..]).cloned().collect();
        self.require_numel_fits(&shape, span)?;
        let ty = TensorType { dtype: data.ty.dtype, shape };
        let kind =
            TExprKind::GatherNd { data: Box::new(data), indices: Box::new(indices), batch_dims: b, mode };
        node(kind, ty, span)
    }
}

impl Checker<'_> {
    /// Literal index tuples are checked now, pointing at the literal (against symbolic sizes:
    /// per call): entry `j` of each tuple indexes data axis `first_axis + j`, of size `sizes[j]`.
    /// Not where a `sliced` dim (those after the tuples' axes) is 0: the output is empty and
    /// ONNX Runtime reads no index (as the plan's check, `plan::lower`).
    fn check_const_tuples(
        &mut self,
        indices: &TExpr,
        sizes: &[SymExpr],
        first_axis: usize,
        sliced: &[SymExpr],
    ) -> Result<(), SemaError> {
        let empty = broadcast_is_empty(sliced);
        let empty = match empty.decide(&Default::default()) {
            Some(true) => return Ok(()),
            Some(false) => None,
            None => Some(empty),
        };
        if let TExprKind::Const(t) = &indices.kind {
            for at in 0..t.numel() {
                let j = at % sizes.len();
                // A u64 above i64::MAX is out of range of every axis, as i64::MAX is.
                let v = t.int_at(at).unwrap_or_default();
                let index = SymExpr::constant(i64::try_from(v).unwrap_or(i64::MAX));
                let (axis, size) = (first_axis + j, sizes[j].clone());
                let refusal = || {
                    SemaError::new(
                        K::IndexOutOfRange { index: index.clone(), axis, size: size.clone() },
                        indices.span,
                    )
                };
                // Per call where the output may be empty: then 0 in 0..1, which holds.
                let (index, size) = match &empty {
                    None => (index.clone(), sizes[j].clone()),
                    Some(empty) => (
                        SymExpr::select(empty.clone(), &SymExpr::constant(0), &index),
                        SymExpr::select(empty.clone(), &SymExpr::constant(1), &sizes[j]),
                    ),
                };
                self.index_into(&index, &size, refusal)?;
            }
        }
        Ok(())
    }
}
