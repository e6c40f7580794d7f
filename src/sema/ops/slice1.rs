//! `slice1(data, offsets, sizes, strides)`: the DirectML DML_SLICE1 window.

use super::{Checker, bind, invalid};
use crate::sema::check::{err, view};
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::typed::{TExpr, ViewDim};
use crate::source::Span;
use crate::syntax::ast::Arg;
use crate::types::sym::{Cond, SymExpr};

/// The form's name and parameters, positional in this order (the operator table reads them).
pub(super) const NAME: &str = "slice1";
pub(super) const REQUIRED: [&str; 4] = ["data", "offsets", "sizes", "strides"];
pub(super) const OPTIONAL: [&str; 0] = [];

/// The arguments of a `slice1` call.
pub(super) struct Args<'a> {
    data: &'a Arg,
    offsets: &'a Arg,
    sizes: &'a Arg,
    strides: &'a Arg,
}

impl<'a> Args<'a> {
    pub(super) fn bind(args: &'a [Arg], span: Span) -> Result<Args<'a>, SemaError> {
        let ([data, offsets, sizes, strides], []) = bind(NAME, REQUIRED, OPTIONAL, args, span)?;
        Ok(Args { data, offsets, sizes, strides })
    }
}

impl Checker<'_> {
    /// DirectML DML_SLICE1: per dimension a window `[offset, offset + size)` read with a signed
    /// stride; a negative stride starts at the window's end.
    pub(super) fn slice1(&mut self, args: Args, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(args.data)?;
        let rank = data.ty.shape.len();
        let mut lists = vec![];
        for (name, arg) in [("offsets", args.offsets), ("sizes", args.sizes), ("strides", args.strides)] {
            let values = self.int_list(arg)?;
            if values.len() != rank {
                let msg = format!("`{name}` has {} values, but the data has rank {rank}", values.len());
                return invalid(msg, "one value per dimension", arg.value.span);
            }
            lists.push((values, arg.value.span));
        }
        let [(offsets, offsets_span), (sizes, sizes_span), (strides, strides_span)] =
            <[_; 3]>::try_from(lists).expect("three lists");
        let mut dims = Vec::with_capacity(rank);
        for d in 0..rank {
            let (o, w, t, n) = (offsets[d], sizes[d], strides[d], data.ty.shape[d].clone());
            if t == 0 {
                return err(K::ZeroStep, strides_span);
            }
            if w < 1 {
                return invalid(
                    format!("window size {w} in dimension {d} is not positive"),
                    "empty window",
                    sizes_span,
                );
            }
            let refusal = || {
                let message = format!(
                    "the window {o}..{} of dimension {d} does not lie inside its {n} elements",
                    o.saturating_add(w)
                );
                let label = "window outside the tensor".into();
                SemaError::new(K::InvalidArgument { message, label }, offsets_span)
            };
            match o.checked_add(w) {
                Some(end) if o >= 0 => self.require(Cond::le(&SymExpr::constant(end), &n), refusal)?,
                _ => return Err(refusal()),
            }
            // i64::MIN has no absolute value in i64.
            let len = 1 + ((w - 1) as u64 / t.unsigned_abs()) as i64;
            let start = if t < 0 { o + w - 1 } else { o };
            dims.push(ViewDim::Range {
                start: SymExpr::constant(start),
                step: t,
                len: SymExpr::constant(len),
            });
        }
        view(data, dims, span)
    }
}
