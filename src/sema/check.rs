//! Checks a parsed program against the types of its inputs and produces the checked tree.
//!
//! Integers (literals, arithmetic, `a.shape[i]`) are evaluated here, and overflow is reported
//! with its span. Dims are symbolic integers ([`SymExpr`]; constants in a concrete program): a
//! check that depends on symbols is decided where it can be, and otherwise becomes a
//! [`ShapeCondition`] the shape function checks per call. With run-time scalars on
//! ([`check_program_generic`]), a 0-d integer input used as an integer (a slice bound, an index)
//! is a symbol too. `let` bindings are substituted where they are used, so a chain written over
//! several statements still fuses into one plan.

use super::error::{SemaError, SemaErrorKind as K};
pub use super::inputs::{
    InputTypes, InputValues, InputsRead, MASK_FOLD_MAX, MaskPolicy, SymInputTypes, holds_large_mask,
    is_large_mask, value_may_be_read,
};
use super::shape::{floor_div, floor_mod};
use super::typed::{ShapeCondition, TExpr, TExprKind, ViewDim};
use crate::diag::suggest::closest;
use crate::limits::{MAX_NESTING, MAX_PROGRAM_NODES, MAX_RANK};
use crate::source::Span;
use crate::syntax::ast::{self, BinOp, ExprKind, StmtKind};
use crate::types::sym::{self, SymExpr};
use crate::types::{OobMode, ShapeDisplay, SymTensorType, TensorType, checked_numel};
use slc_runtime::{DType, Tensor};
use std::collections::HashMap;

/// Checks `program`; its last statement must be an expression, whose checked tree is returned
/// with the inputs it read.
pub fn check_program(
    program: &ast::Program,
    inputs: &InputTypes,
    values: &InputValues,
) -> Result<(TExpr, InputsRead), SemaError> {
    check_program_with(program, inputs, values, MaskPolicy::default())
}

/// As [`check_program`], with masks treated as `policy` says.
pub fn check_program_with(
    program: &ast::Program,
    inputs: &InputTypes,
    values: &InputValues,
    policy: MaskPolicy,
) -> Result<(TExpr, InputsRead), SemaError> {
    let inputs = inputs.iter().map(|(n, t)| (n.clone(), t.generic())).collect();
    let mut checker = Checker::new(&inputs, values, false);
    checker.masks = policy;
    let (checked, read) = checker.program(program)?;
    // Constant dims decide every condition.
    debug_assert!(checker.conditions.is_empty());
    Ok((checked, read))
}

/// A generic program checked: its tree, the inputs it read, and the conditions the shape
/// function checks per call, in program order.
pub type CheckedGeneric = (TExpr, InputsRead, Vec<ShapeCondition>);

/// Checks `program` over inputs whose dims may be symbols, with run-time scalars: a 0-d integer
/// input whose value is not bound, used as an integer, is the symbol `k[()]`; a 1-d one as the
/// `begin`/`end` of `strided_slice` or the `starts`/`ends` of `slice`, the symbols `k[0]`, `k[1]`, ...
pub fn check_program_generic(
    program: &ast::Program,
    inputs: &SymInputTypes,
    values: &InputValues,
) -> Result<CheckedGeneric, SemaError> {
    let mut checker = Checker::new(inputs, values, true);
    let (checked, read) = checker.program(program)?;
    Ok((checked, read, checker.conditions))
}

impl<'a> Checker<'a> {
    fn new(inputs: &'a SymInputTypes, values: &'a InputValues, runtime_scalars: bool) -> Checker<'a> {
        Checker {
            inputs,
            values,
            read: InputsRead::default(),
            locals: HashMap::new(),
            copied: 0,
            runtime_scalars,
            masks: MaskPolicy::default(),
            conditions: vec![],
            float_literals: false,
        }
    }

    fn program(&mut self, program: &ast::Program) -> Result<(TExpr, InputsRead), SemaError> {
        let checker = self;
        let mut result = None;
        for stmt in &program.stmts {
            match &stmt.kind {
                StmtKind::Let { name, value } => {
                    let v = checker.expr(value)?;
                    checker.locals.insert(name.name.clone(), v);
                    result = None;
                }
                StmtKind::Expr(e) => result = Some((checker.expr(e)?, e.span)),
                StmtKind::Assign { target, op, value } => {
                    // A later statement would read the target as it was bound, not as stored:
                    // a store is the program's last statement (docs/semantics.md, Stores).
                    if let Some(next) = program.stmts.iter().skip_while(|s| !std::ptr::eq(*s, stmt)).nth(1) {
                        return err(K::StoreNotLast, next.span);
                    }
                    let stored = checker.assignment(target, *op, value, stmt.span)?;
                    result = Some((Value::Tensor(stored), stmt.span));
                }
            }
        }
        match result {
            Some((value, span)) => {
                let result = checker.to_tensor(value, span)?;
                // A scatter's result is its data's updated copy: only ever the program's result.
                if let Some(inner) = result.kind.children().find_map(nested_store) {
                    let reason = "a scatter is only ever the program's result, not an operand".to_string();
                    return err(K::StoreTarget { reason }, inner);
                }
                Ok((result, std::mem::take(&mut checker.read)))
            }
            None => {
                let span = program.stmts.last().map_or(Span::default(), |s| s.span);
                Err(SemaError::new(K::NoResult, span))
            }
        }
    }
}

/// The value of a checked expression.
#[derive(Debug, Clone)]
pub(super) enum Value {
    Int(i64),
    /// An integer known only at run time: an expression in run-time scalars.
    Sym(SymExpr),
    /// `a.shape` (or a slice of it): symbolic dims are integers known at run time.
    Shape(Vec<SymExpr>),
    Tensor(TExpr),
    Str(String),
}

impl Value {
    pub(super) fn describe(&self) -> String {
        match self {
            Value::Int(_) => "an integer".into(),
            Value::Sym(e) => format!("the run-time integer `{e}`"),
            Value::Shape(s) => format!("a shape {}", ShapeDisplay(s)),
            Value::Tensor(t) => format!("a tensor {}", t.ty),
            Value::Str(s) => format!("the string {s:?}"),
        }
    }
}

pub(super) struct Checker<'a> {
    inputs: &'a SymInputTypes,
    pub(super) values: &'a InputValues,
    pub(super) read: InputsRead,
    locals: HashMap<String, Value>,
    /// Nodes copied by uses of `let` names so far, bounded by [`MAX_PROGRAM_NODES`].
    copied: usize,
    /// Whether 0-d integer inputs used as integers are run-time scalars (symbols).
    pub(super) runtime_scalars: bool,
    /// How masks with a bound value are treated ([`check_program_with`]).
    pub(super) masks: MaskPolicy,
    /// The conditions checking could not decide, in program order.
    pub(super) conditions: Vec<ShapeCondition>,
    /// Whether float literals are values: only while a store's value literal is checked
    /// (`a[m] = 0.5`, `a[:2] = [1, 2.5]`); elsewhere a float is `E0106`.
    pub(super) float_literals: bool,
}

/// An index array of a subscript, and the axis it selects on (sema/advanced.rs uses them).
pub(super) struct Selector {
    pub indices: TExpr,
    /// The axis of the viewed data (the subscript's slices, integers and new axes applied).
    pub view_axis: usize,
    /// The axis of the indexed tensor, as NumPy's messages count it.
    pub axis: usize,
}

/// The span of a store in `t` (a scatter used as an operand), if any.
fn nested_store(t: &TExpr) -> Option<Span> {
    match t.kind {
        TExprKind::Store { .. } => Some(t.span),
        _ => t.kind.children().find_map(nested_store),
    }
}

/// A 0-d f64 holding `v`: a float literal of a store's value, NumPy's Python `float`.
fn float_scalar(v: f64) -> Tensor {
    Tensor::from_bytes(DType::F64, &[], &v.to_le_bytes()).expect("eight bytes make one f64")
}

pub(super) fn err<T>(kind: K, span: Span) -> Result<T, SemaError> {
    Err(SemaError::new(kind, span))
}

impl Checker<'_> {
    pub(super) fn expr(&mut self, e: &ast::Expr) -> Result<Value, SemaError> {
        match &e.kind {
            ExprKind::Name(name) => self.name(name, e.span),
            ExprKind::Int(v) => match i64::try_from(*v) {
                Ok(v) => Ok(Value::Int(v)),
                Err(_) => err(K::LiteralOutOfRange { value: *v }, e.span),
            },
            ExprKind::Bool(b) => Ok(Value::Tensor(const_tensor(bool_tensor(&[], &[*b]), e.span))),
            ExprKind::Float(text) => match self.float_literal(e) {
                Some(v) => Ok(Value::Tensor(const_tensor(float_scalar(v), e.span))),
                None => err(K::Float { text: text.clone() }, e.span),
            },
            ExprKind::Str(s) => Ok(Value::Str(s.clone())),
            ExprKind::List(_) => self.list(e).map(Value::Tensor),
            ExprKind::Neg(_) if let Some(v) = self.float_literal(e) => {
                Ok(Value::Tensor(const_tensor(float_scalar(v), e.span)))
            }
            ExprKind::Neg(inner) => {
                // `-9223372036854775808` is in range although its magnitude is not.
                if let ExprKind::Int(v) = inner.kind
                    && v == 1u64 << 63
                {
                    return Ok(Value::Int(i64::MIN));
                }
                let v = self.sym_int(inner, "the operand of `-`")?;
                let Some(v) = v.as_const() else { return self.run_time_result(-&v, e) };
                match v.checked_neg() {
                    Some(v) => Ok(Value::Int(v)),
                    None => err(K::Overflow { expr: format!("{e}") }, e.span),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let what = "an arithmetic operand";
                let (a, b) = (self.sym_int(lhs, what)?, self.sym_int(rhs, what)?);
                let (Some(a), Some(b)) = (a.as_const(), b.as_const()) else {
                    let r = run_time_arithmetic(*op, &a, &b, rhs)?;
                    return self.run_time_result(r, e);
                };
                let value = match op {
                    BinOp::Add => a.checked_add(b),
                    BinOp::Sub => a.checked_sub(b),
                    BinOp::Mul => a.checked_mul(b),
                    BinOp::FloorDiv | BinOp::Mod if b == 0 => {
                        return err(K::DivisionByZero, rhs.span);
                    }
                    BinOp::FloorDiv => floor_div(a, b),
                    BinOp::Mod => floor_mod(a, b),
                };
                match value {
                    Some(v) => Ok(Value::Int(v)),
                    None => err(K::Overflow { expr: format!("{e}") }, e.span),
                }
            }
            ExprKind::Index { base, items } => match self.expr(base)? {
                Value::Tensor(t) => self.index(t, items, e.span).map(Value::Tensor),
                Value::Shape(shape) => self.index_shape(&shape, items, base.span),
                other => err(K::NotIndexable { what: other.describe() }, base.span),
            },
            ExprKind::Attr { base, name } => {
                let t = match self.expr(base)? {
                    Value::Tensor(t) => t,
                    other => {
                        return err(K::NotIndexable { what: other.describe() }, base.span);
                    }
                };
                match name.name.as_str() {
                    "shape" => Ok(Value::Shape(t.ty.shape.clone())),
                    "ndim" => Ok(Value::Int(t.ty.shape.len() as i64)),
                    "size" => match t.ty.concrete_shape() {
                        Some(shape) => match checked_numel(&shape) {
                            Some(n) => Ok(Value::Int(n)),
                            None => err(K::Overflow { expr: format!("{e}") }, e.span),
                        },
                        None => {
                            let refusal = || SemaError::new(K::Overflow { expr: format!("{e}") }, e.span);
                            Ok(Value::Sym(self.require_product_fits(&t.ty.shape, refusal)?))
                        }
                    },
                    other => err(K::UnknownAttribute { name: other.into() }, name.span),
                }
            }
            ExprKind::Call { callee, args } => self.call(callee, args, e.span).map(Value::Tensor),
        }
    }

    fn name(&mut self, name: &str, span: Span) -> Result<Value, SemaError> {
        if let Some(v) = self.locals.get(name) {
            if let Value::Tensor(t) = v {
                // Each use copies the bound expression: bound the copying, not only the result.
                self.copied = self.copied.saturating_add(t.nodes);
                if self.copied > MAX_PROGRAM_NODES {
                    return err(K::ProgramTooLarge, span);
                }
            }
            return Ok(v.clone());
        }
        if let Some(ty) = self.inputs.get(name) {
            check_input_type(name, ty, span)?;
            if self.read.types.insert(name.to_string()) && !ty.is_concrete() {
                // Its size in bytes must fit in i64, as a concrete input's must: checked per
                // call, multiplying in the order `checked_numel` does (evaluating a step fails
                // where it overflows; a product already 0 takes no more factors).
                let mut factors = ty.shape.clone();
                factors.push(SymExpr::constant(ty.dtype.width() as i64));
                let refusal = || {
                    let reason = format!("{ty} has more than {} bytes", i64::MAX);
                    SemaError::new(K::BadInput { name: name.into(), reason }, span)
                };
                self.require_product_fits(&factors, refusal)?;
            }
            let kind = TExprKind::Input(name.to_string());
            return Ok(Value::Tensor(TExpr::new(kind, ty.clone(), span)));
        }
        let mut known: Vec<String> = self.inputs.keys().chain(self.locals.keys()).cloned().collect();
        known.sort();
        known.dedup();
        let suggestion = closest(name, known.iter().map(String::as_str), 2).map(str::to_string);
        err(K::UnknownName { name: name.into(), suggestion, known }, span)
    }

    /// An integer-valued expression known when the program is checked.
    pub(super) fn int(&mut self, e: &ast::Expr, what: &'static str) -> Result<i64, SemaError> {
        let v = self.sym_int(e, what)?;
        v.as_const().ok_or_else(|| SemaError::new(K::NotCompileTime { what, name: format!("{e}") }, e.span))
    }

    /// An integer-valued expression, which may depend on run-time scalars.
    pub(super) fn sym_int(&mut self, e: &ast::Expr, what: &'static str) -> Result<SymExpr, SemaError> {
        match self.expr(e)? {
            Value::Int(v) => Ok(SymExpr::constant(v)),
            Value::Sym(v) => Ok(v),
            Value::Tensor(t) if self.runtime_scalar(&t).is_some() => {
                Ok(self.runtime_scalar(&t).expect("checked in the guard"))
            }
            // A 0-d integer input bound with its value is that integer, as NumPy takes a 0-d
            // integer array (or a Python `int`) as a slice bound (`a[:k]`); the value is recorded
            // as read, so caches key on it.
            Value::Tensor(t) if self.bound_scalar(&t) => {
                let value = self.value_of(&t)?[0];
                let value = i64::try_from(value)
                    .map_err(|_| SemaError::new(K::Overflow { expr: format!("{e} = {value}") }, e.span))?;
                Ok(SymExpr::constant(value))
            }
            other => err(K::NotAnInteger { what, found: other.describe() }, e.span),
        }
    }

    /// Whether `t` is a 0-d integer input bound with its value.
    pub(super) fn bound_scalar(&self, t: &TExpr) -> bool {
        matches!(&t.kind, TExprKind::Input(name) if self.values.contains_key(name))
            && t.ty.shape.is_empty()
            && t.ty.dtype.is_integer()
    }

    /// Whether `t` is a 0-d float input bound with its value.
    pub(super) fn bound_float(&self, t: &TExpr) -> bool {
        matches!(&t.kind, TExprKind::Input(name) if self.values.contains_key(name))
            && t.ty.shape.is_empty()
            && t.ty.dtype.is_float()
    }

    /// The value of `t`, a 0-d float input bound with its value ([`Checker::bound_float`]),
    /// recorded as read.
    pub(super) fn float_value_of(&mut self, t: &TExpr) -> f64 {
        let TExprKind::Input(name) = &t.kind else { unreachable!("a bound float is an input") };
        self.read.values.insert(name.to_string());
        self.values[name].float_at(0).expect("a bound float holds one float")
    }

    /// The run-time scalar a tensor stands for where an integer is needed: a 0-d integer input
    /// bound without a value, when run-time scalars are on.
    pub(super) fn runtime_scalar(&self, t: &TExpr) -> Option<SymExpr> {
        match &t.kind {
            TExprKind::Input(name)
                if self.runtime_scalars
                    && t.ty.shape.is_empty()
                    && t.ty.dtype.is_integer()
                    && !self.values.contains_key(name) =>
            {
                SymExpr::parse(name).ok().filter(|e| e.as_sym().is_some()).map(|_| SymExpr::scalar(name))
            }
            _ => None,
        }
    }

    /// The dims of `t`, which `form` needs as numbers: an error naming where a symbolic one
    /// comes from otherwise.
    pub(super) fn concrete_shape(&self, t: &TExpr, form: &'static str) -> Result<Vec<i64>, SemaError> {
        if let Some(shape) = t.ty.concrete_shape() {
            return Ok(shape);
        }
        let what =
            format!("the dims of `{}`", self.symbol_source(&t.ty.shape).unwrap_or_else(|| t.to_string()));
        err(K::SymbolicUnsupported { form, what }, t.span)
    }

    /// The types of the inputs the program may name.
    pub(super) fn input_types(&self) -> &SymInputTypes {
        self.inputs
    }

    /// The input whose dims (or value) the first symbol of `dims` comes from.
    pub(super) fn symbol_source(&self, dims: &[SymExpr]) -> Option<String> {
        Some(match dims.iter().flat_map(SymExpr::symbols).next()? {
            sym::Sym::Scalar { name, .. } => name.to_string(),
            sym::Sym::Dim(dim) => (self.inputs.iter())
                .find(|(_, ty)| ty.shape.iter().any(|d| d.symbols().contains(&sym::Sym::Dim(dim.clone()))))
                .map_or_else(|| dim.to_string(), |(name, _)| name.clone()),
        })
    }

    /// Whether `name` is bound by a `let` of the program.
    pub(super) fn is_local(&self, name: &str) -> bool {
        self.locals.contains_key(name)
    }

    /// The bound input `name` as a tensor node (or the unknown-name error).
    pub(super) fn tensor_name(&mut self, name: &str, span: Span) -> Result<TExpr, SemaError> {
        let v = self.name(name, span)?;
        self.to_tensor(v, span)
    }

    pub(super) fn to_tensor_value(&self, value: Value, span: Span) -> Result<TExpr, SemaError> {
        self.to_tensor(value, span)
    }

    fn to_tensor(&self, value: Value, span: Span) -> Result<TExpr, SemaError> {
        match value {
            Value::Tensor(t) => Ok(t),
            Value::Int(v) => Ok(const_tensor(Tensor::scalar_i64(v), span)),
            Value::Shape(s) => {
                let Some(s) = s.iter().map(SymExpr::as_const).collect::<Option<Vec<i64>>>() else {
                    let what = "a shape as a tensor";
                    return err(K::NotCompileTime { what, name: format!("{}", ShapeDisplay(&s)) }, span);
                };
                let t = Tensor::from_i64s(DType::I64, &[s.len()], &s)
                    .map_err(|_| SemaError::new(K::TooLarge { shape: format!("[{}]", s.len()) }, span))?;
                Ok(const_tensor(t, span))
            }
            Value::Str(_) | Value::Sym(_) => err(K::NotATensor { what: value.describe() }, span),
        }
    }
}

/// Arithmetic on integers of which one is known only at run time. A division or modulo needs a
/// non-zero compile-time divisor (Python's rules then hold for every value).
fn run_time_arithmetic(op: BinOp, a: &SymExpr, b: &SymExpr, rhs: &ast::Expr) -> Result<SymExpr, SemaError> {
    let divisor = || match b.as_const() {
        Some(0) => err(K::DivisionByZero, rhs.span),
        Some(_) => Ok(()),
        None => err(K::NotCompileTime { what: "a divisor", name: format!("{rhs}") }, rhs.span),
    };
    Ok(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::FloorDiv => {
            divisor()?;
            a.floor_div(b)
        }
        BinOp::Mod => {
            divisor()?;
            a.modulo(b)
        }
    })
}

/// A bool tensor of `shape` (its size checked by the caller).
pub(super) fn bool_tensor(shape: &[usize], bits: &[bool]) -> Tensor {
    let bytes: Vec<u8> = bits.iter().map(|&b| u8::from(b)).collect();
    Tensor::from_bytes(DType::Bool, shape, &bytes).expect("one byte per element")
}

pub(super) fn const_tensor(t: Tensor, span: Span) -> TExpr {
    let ty = TensorType {
        dtype: t.dtype(),
        shape: t.shape().iter().map(|&d| SymExpr::constant(d as i64)).collect(),
    };
    TExpr::new(TExprKind::Const(t), ty, span)
}

/// A node of the checked tree, within the limits on rank and nesting.
pub(super) fn node(kind: TExprKind, ty: SymTensorType, span: Span) -> Result<TExpr, SemaError> {
    if ty.shape.len() > MAX_RANK {
        return err(K::TooManyDims { rank: ty.shape.len() }, span);
    }
    let node = TExpr::new(kind, ty, span);
    if node.depth > MAX_NESTING {
        return err(K::NestingTooDeep, span);
    }
    Ok(node)
}

/// An input's type must describe a tensor slc can address: every later shape, stride and
/// offset computation relies on its size fitting in i64 bytes. A symbolic dim is a size the
/// shape function checks per call.
fn check_input_type(name: &str, ty: &SymTensorType, span: Span) -> Result<(), SemaError> {
    let bad = |reason: String| err(K::BadInput { name: name.into(), reason }, span);
    if ty.shape.len() > MAX_RANK {
        return err(K::TooManyDims { rank: ty.shape.len() }, span);
    }
    if let Some(d) = ty.shape.iter().find(|d| d.as_const().is_some_and(|d| d < 0)) {
        return bad(format!("its shape {} has a negative dimension {d}", ShapeDisplay(&ty.shape)));
    }
    if let Some(shape) = ty.concrete_shape()
        && checked_numel(&shape).and_then(|n| n.checked_mul(ty.dtype.width() as i64)).is_none()
    {
        return bad(format!("{ty} has more than {} bytes", i64::MAX));
    }
    Ok(())
}

/// A typed view; the identity view is no node at all.
pub(super) fn view(base: TExpr, dims: Vec<ViewDim>, span: Span) -> Result<TExpr, SemaError> {
    let shape = &base.ty.shape;
    let is_identity = dims.len() == shape.len()
        && dims.iter().zip(shape).all(|(d, n)| match d {
            ViewDim::Range { start, step: 1, len } => start.as_const() == Some(0) && len == n,
            _ => false,
        });
    if is_identity {
        return Ok(base);
    }
    let out_shape = dims
        .iter()
        .filter_map(|d| match d {
            ViewDim::Range { len, .. } => Some(len.clone()),
            ViewDim::Pick(_) => None,
            ViewDim::NewAxis => Some(SymExpr::constant(1)),
        })
        .collect();
    let ty = TensorType { dtype: base.ty.dtype, shape: out_shape };
    node(TExprKind::View { base: Box::new(base), dims }, ty, span)
}

impl Checker<'_> {
    /// A typed gather, OpenVINO Gather-8's shape rule:
    /// `data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:]`. The caller has
    /// checked `batch_dims <= axis`, `batch_dims <= rank(indices)` and that the batch dimensions
    /// agree. Its element count must fit in i64 (per call where the dims are symbols).
    pub(super) fn gather(
        &mut self,
        data: TExpr,
        indices: TExpr,
        axis: usize,
        batch_dims: usize,
        mode: OobMode,
        span: Span,
    ) -> Result<TExpr, SemaError> {
        let d = &data.ty.shape;
        let shape: Vec<SymExpr> =
            d[..axis].iter().chain(&indices.ty.shape[batch_dims..]).chain(&d[axis + 1..]).cloned().collect();
        let ty = TensorType { dtype: data.ty.dtype, shape };
        self.require_numel_fits(&ty.shape, span)?;
        let kind =
            TExprKind::Gather { data: Box::new(data), indices: Box::new(indices), axis, batch_dims, mode };
        node(kind, ty, span)
    }
}

impl Checker<'_> {
    /// The element count of a result of `shape` must fit in i64: refused now where the dims
    /// are constants, required per call where they are not.
    pub(super) fn require_numel_fits(&mut self, shape: &[SymExpr], span: Span) -> Result<(), SemaError> {
        let refusal = || SemaError::new(K::TooLarge { shape: format!("{}", ShapeDisplay(shape)) }, span);
        match shape.iter().map(SymExpr::as_const).collect::<Option<Vec<i64>>>() {
            Some(s) if checked_numel(&s).is_none() => Err(refusal()),
            Some(_) => Ok(()),
            None => self.require_product_fits(shape, refusal).map(drop),
        }
    }
}
