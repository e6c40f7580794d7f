//! `gather_elements(data, indices, axis=0, mode=error)`: ONNX GatherElements-13 (NumPy's
//! `take_along_axis`), with a choice of out-of-range policy.

use super::gather::oob_mode;
use super::{Checker, bind, invalid};
use crate::sema::check::node;
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::typed::{TExpr, TExprKind};
use crate::source::Span;
use crate::syntax::ast::Arg;
use crate::types::sym::Cond;
use crate::types::{OobMode, ShapeDisplay, TensorType};

/// The form's name and parameters, positional in this order (the operator table reads them).
pub(super) const NAME: &str = "gather_elements";
pub(super) const REQUIRED: [&str; 2] = ["data", "indices"];
pub(super) const OPTIONAL: [&str; 2] = ["axis", "mode"];

/// The arguments of a `gather_elements` call.
pub(super) struct Args<'a> {
    pub(super) data: &'a Arg,
    pub(super) indices: &'a Arg,
    pub(super) axis: Option<&'a Arg>,
    pub(super) mode: Option<&'a Arg>,
}

impl<'a> Args<'a> {
    pub(super) fn bind(args: &'a [Arg], span: Span) -> Result<Args<'a>, SemaError> {
        let ([data, indices], [axis, mode]) = bind(NAME, REQUIRED, OPTIONAL, args, span)?;
        Ok(Args { data, indices, axis, mode })
    }
}

impl Checker<'_> {
    /// ONNX GatherElements-13 (docs/semantics.md, gather_elements).
    pub(super) fn gather_elements_call(&mut self, args: Args, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(args.data)?;
        let indices = self.indices_arg(args.indices)?;
        let rank = data.ty.shape.len();
        let axis = match args.axis {
            Some(arg) => self.axis_arg(arg, rank as i64)?,
            // ONNX's default axis 0 does not exist in a 0-d tensor.
            None if rank == 0 => {
                return invalid("data of rank 0 has no axis 0", "0-d data", args.data.value.span);
            }
            None => 0,
        };
        let (d, i) = (&data.ty.shape, &indices.ty.shape);
        let index_span = args.indices.value.span;
        if i.len() != rank {
            let msg = format!("indices {} must have the rank of data {}", indices.ty, data.ty);
            return invalid(msg, "rank differs from the data's", index_span);
        }
        // Off the axis, ONNX Runtime accepts indices smaller than the data (a corner of it is
        // read), not larger; along the axis any length is fine.
        for k in (0..rank).filter(|&k| k != axis) {
            let refusal = || {
                let msg = format!(
                    "indices {} must not exceed data {} off the axis {axis}: dimension {k} is {} > {}",
                    ShapeDisplay(i),
                    ShapeDisplay(d),
                    i[k],
                    d[k]
                );
                let label = "larger than the data";
                SemaError::new(K::InvalidArgument { message: msg, label: label.into() }, index_span)
            };
            self.require(Cond::le(&i[k], &d[k]), refusal)?;
        }
        let mode = oob_mode(args.mode, OobMode::Error)?;
        let size = d[axis].clone();
        self.check_empty_axis(mode, &size, &indices.ty.shape, axis, span)?;
        if mode == OobMode::Error {
            self.check_const_indices(&indices, axis, &size)?;
        }
        let ty = TensorType { dtype: data.ty.dtype, shape: indices.ty.shape.clone() };
        let kind = TExprKind::GatherElements { data: Box::new(data), indices: Box::new(indices), axis, mode };
        node(kind, ty, span)
    }
}
