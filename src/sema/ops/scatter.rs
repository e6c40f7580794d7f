//! The scatters (docs/semantics.md, Scatters): `scatter_nd` (ONNX ScatterND-18),
//! `scatter_elements` (ONNX ScatterElements-18), `scatter_update` (OpenVINO ScatterUpdate-3)
//! `scatter_nd_update` (OpenVINO ScatterNDUpdate-15) and `scatter_elements_update` (OpenVINO
//! ScatterElementsUpdate-12).
//! Each is the store of `updates` into the elements its gather counterpart reads — the same
//! checked selection, `error` mode (an index out of range is an error, never a wrap or a write
//! outside) — with the spec's reduction. A scatter's data is a bound tensor (the result is its
//! updated copy), and a scatter is the program's result, as an assignment is.

use super::{Checker, bind, gather, gather_elements, gather_nd, invalid};
use crate::sema::check::node;
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::typed::{TExpr, TExprKind};
use crate::source::Span;
use crate::syntax::ast::{Arg, Expr, ExprKind};
use crate::types::sym::Cond;
use crate::types::{Combine, Reduction, ShapeDisplay};

pub(super) const ND: &str = "scatter_nd";
pub(super) const ND_REQUIRED: [&str; 3] = ["data", "indices", "updates"];
pub(super) const ND_OPTIONAL: [&str; 1] = ["reduction"];
pub(super) const ELEMENTS: &str = "scatter_elements";
pub(super) const ELEMENTS_REQUIRED: [&str; 3] = ["data", "indices", "updates"];
pub(super) const ELEMENTS_OPTIONAL: [&str; 2] = ["axis", "reduction"];
pub(super) const UPDATE: &str = "scatter_update";
pub(super) const UPDATE_REQUIRED: [&str; 4] = ["data", "indices", "updates", "axis"];
pub(super) const UPDATE_OPTIONAL: [&str; 0] = [];
pub(super) const ND_UPDATE: &str = "scatter_nd_update";
pub(super) const ND_UPDATE_REQUIRED: [&str; 3] = ["data", "indices", "updates"];
pub(super) const ND_UPDATE_OPTIONAL: [&str; 1] = ["reduction"];
pub(super) const ELEMENTS_UPDATE: &str = "scatter_elements_update";
pub(super) const ELEMENTS_UPDATE_REQUIRED: [&str; 4] = ["data", "indices", "updates", "axis"];
pub(super) const ELEMENTS_UPDATE_OPTIONAL: [&str; 2] = ["reduction", "use_init_val"];

/// ONNX's `reduction`: `none` (the spec leaves duplicates undefined; slc's last write in C
/// order wins), or an accumulating `add`, `mul`, `max`, `min`.
const ONNX_REDUCTIONS: [(&str, Option<Reduction>); 5] = [
    ("none", None),
    ("add", Some(Reduction::Sum)),
    ("mul", Some(Reduction::Prod)),
    ("max", Some(Reduction::Max)),
    ("min", Some(Reduction::Min)),
];

/// OpenVINO ScatterNDUpdate-15's `reduction`, each accumulating: `none`, `sum`, `sub`, `prod`,
/// `min`, `max`.
const OPENVINO_ND_REDUCTIONS: [(&str, Option<Reduction>); 6] = [
    ("none", None),
    ("sum", Some(Reduction::Sum)),
    ("sub", Some(Reduction::Sub)),
    ("prod", Some(Reduction::Prod)),
    ("min", Some(Reduction::Min)),
    ("max", Some(Reduction::Max)),
];

/// OpenVINO ScatterElementsUpdate-12's `reduction`: `none`, `sum`, `prod`, `min`, `max`, `mean`.
const OPENVINO_ELEMENTS_REDUCTIONS: [(&str, Option<Reduction>); 6] = [
    ("none", None),
    ("sum", Some(Reduction::Sum)),
    ("prod", Some(Reduction::Prod)),
    ("min", Some(Reduction::Min)),
    ("max", Some(Reduction::Max)),
    ("mean", Some(Reduction::Mean)),
];

/// The `reduction` argument as one of `words` (a name or a string), reducing into the element
/// as bound; `none` (a set) when absent.
fn reduction(arg: Option<&Arg>, words: &[(&str, Option<Reduction>)]) -> Result<Combine, SemaError> {
    reduction_from(arg, words, true)
}

/// As [`reduction`], the element an operand of the reduction when `init`.
fn reduction_from(
    arg: Option<&Arg>,
    words: &[(&str, Option<Reduction>)],
    init: bool,
) -> Result<Combine, SemaError> {
    let Some(arg) = arg else { return Ok(Combine::Set) };
    let word = match &arg.value.kind {
        ExprKind::Name(w) | ExprKind::Str(w) => w.as_str(),
        _ => "",
    };
    match words.iter().find(|(w, _)| *w == word) {
        Some(&(_, None)) => Ok(Combine::Set),
        Some(&(_, Some(op))) => Ok(Combine::Reduce { op, init }),
        None => {
            let names: Vec<&str> = words.iter().map(|(w, _)| *w).collect();
            invalid(
                format!("reduction must be one of {}", names.join(", ")),
                "unknown reduction",
                arg.value.span,
            )
        }
    }
}

/// `error` as a mode argument, for the gathers that select a scatter's elements.
fn error_mode(span: Span) -> Arg {
    Arg { name: None, value: Expr::new(ExprKind::Str("error".into()), span), span }
}

impl Checker<'_> {
    /// `scatter_nd(data, indices, updates, reduction=none)`.
    pub(super) fn scatter_nd_call(&mut self, args: &[Arg], span: Span) -> Result<TExpr, SemaError> {
        let ([data, indices, updates], [red]) = bind(ND, ND_REQUIRED, ND_OPTIONAL, args, span)?;
        let mode = error_mode(span);
        let selection = self
            .gather_nd_call(gather_nd::Args { data, indices, batch_dims: None, mode: Some(&mode) }, span)?;
        self.scatter(data, selection, updates, reduction(red, &ONNX_REDUCTIONS)?, span)
    }

    /// `scatter_elements(data, indices, updates, axis=0, reduction=none)`.
    pub(super) fn scatter_elements_call(&mut self, args: &[Arg], span: Span) -> Result<TExpr, SemaError> {
        let ([data, indices, updates], [axis, red]) =
            bind(ELEMENTS, ELEMENTS_REQUIRED, ELEMENTS_OPTIONAL, args, span)?;
        let mode = error_mode(span);
        let selection = self
            .gather_elements_call(gather_elements::Args { data, indices, axis, mode: Some(&mode) }, span)?;
        self.scatter(data, selection, updates, reduction(red, &ONNX_REDUCTIONS)?, span)
    }

    /// `scatter_update(data, indices, updates, axis)`: OpenVINO ScatterUpdate-3, the slices of
    /// `data` along `axis` at `indices` replaced (no reduction: the last write wins).
    pub(super) fn scatter_update_call(&mut self, args: &[Arg], span: Span) -> Result<TExpr, SemaError> {
        let ([data, indices, updates, axis], []) =
            bind(UPDATE, UPDATE_REQUIRED, UPDATE_OPTIONAL, args, span)?;
        let mode = error_mode(span);
        let selection = self
            .gather_call(gather::Args { data, indices, axis, batch_dims: None, mode: Some(&mode) }, span)?;
        self.scatter(data, selection, updates, Combine::Set, span)
    }

    /// `scatter_nd_update(data, indices, updates, reduction=none)`: OpenVINO ScatterNDUpdate-15,
    /// ScatterND's selection with OpenVINO's reductions.
    pub(super) fn scatter_nd_update_call(&mut self, args: &[Arg], span: Span) -> Result<TExpr, SemaError> {
        let ([data, indices, updates], [red]) =
            bind(ND_UPDATE, ND_UPDATE_REQUIRED, ND_UPDATE_OPTIONAL, args, span)?;
        let mode = error_mode(span);
        let selection = self
            .gather_nd_call(gather_nd::Args { data, indices, batch_dims: None, mode: Some(&mode) }, span)?;
        self.scatter(data, selection, updates, reduction(red, &OPENVINO_ND_REDUCTIONS)?, span)
    }

    /// `scatter_elements_update(data, indices, updates, axis, reduction=none, use_init_val=true)`:
    /// OpenVINO ScatterElementsUpdate-12, ScatterElements' selection with OpenVINO's
    /// reductions, `mean` among them; `use_init_val=false` leaves the element out of its
    /// reduction (no effect under `none`).
    pub(super) fn scatter_elements_update_call(
        &mut self,
        args: &[Arg],
        span: Span,
    ) -> Result<TExpr, SemaError> {
        let ([data, indices, updates, axis], [red, init]) =
            bind(ELEMENTS_UPDATE, ELEMENTS_UPDATE_REQUIRED, ELEMENTS_UPDATE_OPTIONAL, args, span)?;
        let init = match init {
            None => true,
            Some(arg) => self.flag(arg, "use_init_val")?,
        };
        let combine = reduction_from(red, &OPENVINO_ELEMENTS_REDUCTIONS, init)?;
        if combine == (Combine::Reduce { op: Reduction::Mean, init }) {
            let dtype = self.tensor_arg(data)?.ty.dtype;
            if dtype == slc_runtime::DType::Bool || dtype.is_complex() {
                let msg = format!("reduction=mean is not defined on {dtype} data (OpenVINO has none)");
                return invalid(msg, "no mean", red.map_or(span, |r| r.value.span));
            }
        }
        let mode = error_mode(span);
        let selection = self.gather_elements_call(
            gather_elements::Args { data, indices, axis: Some(axis), mode: Some(&mode) },
            span,
        )?;
        self.scatter(data, selection, updates, combine, span)
    }

    /// A boolean argument: `True`/`False`, OpenVINO's `true`/`false` (a name or a string), or
    /// 1/0.
    fn flag(&mut self, arg: &Arg, name: &str) -> Result<bool, SemaError> {
        let refuse = || invalid(format!("{name} must be true or false"), "not a boolean", arg.value.span);
        match &arg.value.kind {
            ExprKind::Bool(b) => Ok(*b),
            ExprKind::Name(w) | ExprKind::Str(w) => match w.as_str() {
                "true" => Ok(true),
                "false" => Ok(false),
                _ => refuse(),
            },
            _ => match self.int_scalar(arg) {
                Ok(v @ (0 | 1)) => Ok(v == 1),
                _ => refuse(),
            },
        }
    }

    /// The store of `updates` (of the data's dtype, exactly the selection's shape: the specs
    /// do not broadcast) into `selection` of the bound tensor `data`.
    fn scatter(
        &mut self,
        data: &Arg,
        selection: TExpr,
        updates: &Arg,
        combine: Combine,
        span: Span,
    ) -> Result<TExpr, SemaError> {
        let target = self.tensor_arg(data)?;
        if !matches!(target.kind, TExprKind::Input(_)) {
            let msg = format!(
                "a scatter's data must be a bound tensor (its updated copy is the result), not `{}`",
                data.value
            );
            return invalid(msg, "not a bound tensor", data.value.span);
        }
        if target.ty.dtype.is_complex()
            && matches!(combine, Combine::Reduce { op: Reduction::Max | Reduction::Min, .. })
        {
            return invalid("max and min have no order on complex numbers", "complex data", data.value.span);
        }
        let value = self.value_expr(&updates.value)?;
        let value =
            self.store_value(value, &target, crate::sema::store::ValueOf::Scatter, updates.value.span)?;
        let (u, s) = (&value.ty.shape, &selection.ty.shape);
        let refusal = || {
            let message = format!(
                "updates {} must have the shape {} the indices select",
                ShapeDisplay(u),
                ShapeDisplay(s)
            );
            let kind = K::InvalidArgument { message, label: "shape differs".into() };
            SemaError::new(kind, updates.value.span)
        };
        if u.len() != s.len() {
            return Err(refusal());
        }
        for (a, b) in u.iter().zip(s) {
            self.require(Cond::eq(a, b), refusal)?;
        }
        let kind = TExprKind::Store {
            target: Box::new(target.clone()),
            selection: Box::new(selection),
            value: Box::new(value),
            combine,
            when: None,
        };
        node(kind, target.ty, span)
    }
}
