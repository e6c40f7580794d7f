//! The operator call forms: `strided_slice` (OpenVINO StridedSlice-1), `slice` (ONNX Slice-13),
//! `gather` (OpenVINO Gather-8, with a `mode=` for the out-of-range policy), `gather_elements`
//! and `gather_nd` (ONNX GatherElements-13 and GatherND-13, with the same `mode=`) and `slice1`
//! (DirectML DML_SLICE1), one file each. A form binds its arguments (positional in the listed
//! order, or by keyword) into a struct of its own, validates them with diagnostics that point at
//! the argument, normalizes with its own source's rules (docs/semantics.md), and produces the
//! same core nodes as NumPy indexing: a view or a gather. Nothing downstream knows which form a
//! node came from. `table` lists every form once (name, parameters, description, example);
//! checking dispatches through it and the help text, completion and the fuzzer's coverage test
//! read it. This file holds what the forms share: binding and argument values.

mod gather;
mod gather_elements;
mod gather_nd;
mod scatter;
mod slice;
mod slice1;
mod strided_slice;
mod table;

use super::check::{Checker, Value, err};
use super::consteval::{self, ConstEvalError};
use super::error::{SemaError, SemaErrorKind as K};
use super::typed::{TExpr, TExprKind};
use crate::diag::suggest::closest;
use crate::source::Span;
use crate::syntax::ast;
use crate::types::sym::SymExpr;

pub use table::{FUNCTIONS, OPERATORS, Operator, operator};

/// Matches `args` to a form's parameters: `REQUIRED` first (positional or keyword), then
/// `OPTIONAL`. The arrays come back in the order of the names.
fn bind<'a, const REQUIRED: usize, const OPTIONAL: usize>(
    function: &str,
    required: [&'static str; REQUIRED],
    optional: [&'static str; OPTIONAL],
    args: &'a [ast::Arg],
    call_span: Span,
) -> Result<([&'a ast::Arg; REQUIRED], [Option<&'a ast::Arg>; OPTIONAL]), SemaError> {
    let slots = bind_args(function, &required, &optional, args, call_span)?;
    let bound_required =
        std::array::from_fn(|i| slots[i].expect("every required slot is filled, checked by bind_args"));
    let bound_optional = std::array::from_fn(|i| slots[REQUIRED + i]);
    Ok((bound_required, bound_optional))
}

/// Matches `args` to parameters, one slot each in the order of the names: `required` first
/// (positional or keyword; each must be given), then `optional`. The operator forms and the
/// REPL's helpers bind with it, so their calls follow one rule and report alike.
pub fn bind_args<'a>(
    function: &str,
    required: &[&str],
    optional: &[&str],
    args: &'a [ast::Arg],
    call_span: Span,
) -> Result<Vec<Option<&'a ast::Arg>>, SemaError> {
    let names: Vec<&str> = required.iter().chain(optional).copied().collect();
    let mut slots: Vec<Option<&ast::Arg>> = vec![None; names.len()];
    let mut positional = 0;
    let mut seen_keyword = false;
    for arg in args {
        let slot = match &arg.name {
            None if seen_keyword => return err(K::PositionalAfterKeyword, arg.span),
            None => {
                positional += 1;
                if positional > names.len() {
                    return err(
                        K::TooManyArguments { function: function.into(), max: names.len() },
                        arg.span,
                    );
                }
                positional - 1
            }
            Some(name) => {
                seen_keyword = true;
                match names.iter().position(|p| *p == name.name) {
                    Some(i) => i,
                    None => return err(unknown_keyword(function, &names, &name.name), name.span),
                }
            }
        };
        if slots[slot].is_some() {
            return err(K::DuplicateArgument { name: names[slot].into() }, arg.span);
        }
        slots[slot] = Some(arg);
    }
    if let Some(missing) = required.iter().zip(&slots).find(|(_, slot)| slot.is_none()) {
        return err(K::MissingArgument { function: function.into(), name: (*missing.0).into() }, call_span);
    }
    Ok(slots)
}

fn unknown_keyword(function: &str, names: &[&str], name: &str) -> K {
    let suggestion = closest(name, names.iter().copied(), 3).map(str::to_string);
    let known = names.iter().map(|p| p.to_string()).collect();
    K::UnknownKeyword { function: function.into(), name: name.into(), suggestion, known }
}

fn invalid<T>(message: impl Into<String>, label: impl Into<String>, span: Span) -> Result<T, SemaError> {
    err(K::InvalidArgument { message: message.into(), label: label.into() }, span)
}

impl Checker<'_> {
    pub(super) fn call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
    ) -> Result<TExpr, SemaError> {
        match operator(&callee.name) {
            Some(op) => (op.check)(self, args, span),
            None => {
                let name = callee.name.as_str();
                let suggestion = closest(name, FUNCTIONS.iter().copied(), 2).map(str::to_string);
                let known = FUNCTIONS.iter().map(|f| f.to_string()).collect();
                err(K::UnknownFunction { name: name.into(), suggestion, known }, callee.span)
            }
        }
    }

    /// A tensor argument.
    fn tensor_arg(&mut self, arg: &ast::Arg) -> Result<TExpr, SemaError> {
        match self.expr(&arg.value)? {
            Value::Tensor(t) => Ok(t),
            other => invalid(
                format!("expected a tensor, found {}", other.describe()),
                "not a tensor",
                arg.value.span,
            ),
        }
    }

    /// An integer list argument: a list literal, `x.shape`, or a tensor whose value is known now
    /// (a bound tensor, or an expression over bound tensors).
    fn int_list(&mut self, arg: &ast::Arg) -> Result<Vec<i64>, SemaError> {
        let span = arg.value.span;
        let t = match self.expr(&arg.value)? {
            Value::Shape(s) => {
                return s.iter().map(SymExpr::as_const).collect::<Option<Vec<i64>>>().ok_or_else(|| {
                    let name = format!("{}", arg.value);
                    SemaError::new(K::NotCompileTime { what: "this operator parameter", name }, span)
                });
            }
            Value::Tensor(t) => t,
            other => {
                return invalid(
                    format!("expected an integer list, found {}", other.describe()),
                    "not a list",
                    span,
                );
            }
        };
        if !t.ty.dtype.is_integer() || t.ty.shape.len() != 1 {
            return invalid(
                format!("expected a 1-D integer list, found a tensor {}", t.ty),
                "not a 1-D integer list",
                span,
            );
        }
        Ok(self.value_of(&t)?.into_iter().map(saturating_i64).collect())
    }

    /// A single integer: an integer expression, or a one-element list or 0-d tensor.
    fn int_scalar(&mut self, arg: &ast::Arg) -> Result<i64, SemaError> {
        let span = arg.value.span;
        match self.expr(&arg.value)? {
            Value::Int(v) => Ok(v),
            Value::Tensor(t)
                if t.ty.dtype.is_integer()
                    && t.ty.concrete_shape().is_some_and(|s| s.iter().product::<i64>() == 1) =>
            {
                Ok(saturating_i64(self.value_of(&t)?[0]))
            }
            other => {
                invalid(format!("expected an integer, found {}", other.describe()), "not an integer", span)
            }
        }
    }

    /// The bounds of a slicing form (`begin`/`end`, `starts`/`ends`): an integer list, `x.shape`
    /// (symbolic dims included), or with run-time scalars on, a list literal whose elements are
    /// integers known at run time (`[k, n - 1]`), or a 1-d integer input bound without a value,
    /// whose elements are the symbols `k[0]`, `k[1]`, ...
    fn bound_list(&mut self, arg: &ast::Arg) -> Result<Vec<SymExpr>, SemaError> {
        if let ast::ExprKind::Attr { name, .. } = &arg.value.kind
            && name.name == "shape"
            && let Value::Shape(s) = self.expr(&arg.value)?
        {
            return Ok(s);
        }
        if self.runtime_scalars
            && let ast::ExprKind::List(items) = &arg.value.kind
            && !items.iter().any(|i| matches!(i.kind, ast::ExprKind::List(_) | ast::ExprKind::Bool(_)))
            && let Ok(bounds) =
                items.iter().map(|i| self.sym_int(i, "a bound")).collect::<Result<Vec<_>, _>>()
            && bounds.iter().any(|b| b.as_const().is_none())
        {
            // (A list of constants, or one with an error, is read as every integer list is.)
            return Ok(bounds);
        }
        if self.runtime_scalars
            && let ast::ExprKind::Name(name) = &arg.value.kind
            && let Ok(Value::Tensor(t)) = self.expr(&arg.value)
            && let TExprKind::Input(input) = &t.kind
            && input == name
            && t.ty.dtype.is_integer()
            && !self.values.contains_key(name)
            && let Some([len]) = t.ty.concrete_shape().as_deref()
            && SymExpr::parse(name).is_ok_and(|e| e.as_sym().is_some())
            && u32::try_from(*len).is_ok()
        {
            return Ok((0..*len as u32).map(|i| SymExpr::scalar_elem(name, i)).collect());
        }
        Ok(self.int_list(arg)?.into_iter().map(SymExpr::constant).collect())
    }

    /// The elements of an integer tensor expression at compile time: a literal, or an
    /// expression whose inputs are all bound with values.
    pub(super) fn value_of(&mut self, t: &TExpr) -> Result<Vec<i128>, SemaError> {
        let mut inputs = vec![];
        inputs_of(t, &mut inputs);
        for name in inputs {
            self.read.values.insert(name.to_string());
        }
        let values = self.values;
        let runtime_scalars = self.runtime_scalars;
        consteval::evaluate(t, &|name| values.get(name)).map_err(|e| match e {
            ConstEvalError::Unknown(name) if runtime_scalars => {
                SemaError::new(K::NotCompileTime { what: "this operator parameter", name }, t.span)
            }
            ConstEvalError::Unknown(name) => SemaError::new(K::ValueUnknown { name }, t.span),
            ConstEvalError::Symbolic => {
                let source = self.symbol_source(&symbolic_dims(t)).unwrap_or_else(|| t.to_string());
                let what = format!("the dims of `{source}`");
                SemaError::new(K::SymbolicUnsupported { form: "this operator parameter", what }, t.span)
            }
            ConstEvalError::IndexOutOfRange { index, axis, len } => SemaError::new(
                K::InvalidArgument {
                    message: format!("index {index} is out of bounds for axis {axis} with size {len}"),
                    label: "evaluating this failed".into(),
                },
                t.span,
            ),
            ConstEvalError::NotInteger => {
                SemaError::new(K::ValueUnknown { name: "this expression".into() }, t.span)
            }
        })
    }

    /// A 0/1 mask list, as long as it was given (empty when it was not). The caller decides what
    /// bits past its entries mean.
    fn mask(&mut self, arg: Option<&ast::Arg>) -> Result<Vec<bool>, SemaError> {
        let Some(arg) = arg else { return Ok(vec![]) };
        let values = self.int_list(arg)?;
        if let Some(bad) = values.iter().find(|v| !matches!(v, 0 | 1)) {
            return invalid(
                format!("mask values must be 0 or 1, found {bad}"),
                "not a 0/1 mask",
                arg.value.span,
            );
        }
        Ok(values.iter().map(|&v| v == 1).collect())
    }
}

/// A parameter's value as i64. A u64 beyond i64's range saturates, which keeps its meaning:
/// every bound, stride, axis and window of the forms is clamped or range-checked against
/// dimensions far below i64::MAX.
fn saturating_i64(v: i128) -> i64 {
    v.clamp(i64::MIN as i128, i64::MAX as i128) as i64
}

/// The dims of the nodes of `t`, its own first: the symbolic one among them is what evaluating
/// `t` now stumbled on.
fn symbolic_dims(t: &TExpr) -> Vec<SymExpr> {
    let mut dims = t.ty.shape.clone();
    for child in t.kind.children() {
        dims.extend(symbolic_dims(child));
    }
    dims.retain(|d| d.as_const().is_none());
    dims
}

/// The names of the inputs an expression reads.
fn inputs_of<'t>(t: &'t TExpr, out: &mut Vec<&'t str>) {
    if let TExprKind::Input(name) = &t.kind {
        out.push(name);
    }
    for child in t.kind.children() {
        inputs_of(child, out);
    }
}
