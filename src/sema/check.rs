//! Checks a parsed program against the types of its inputs and produces the checked tree.
//!
//! Integers (literals, arithmetic, `a.shape[i]`) are evaluated here: shapes are static, so every
//! integer in a program is a compile-time constant, and overflow is reported with its span.
//! `let` bindings are substituted where they are used, so a chain written over several
//! statements still fuses into one plan.

use super::error::{SemaError, SemaErrorKind as K};
use super::shape::{floor_div, floor_mod, normalize_numpy};
use super::typed::{TExpr, TExprKind, ViewDim};
use crate::limits::{MAX_NESTING, MAX_PROGRAM_NODES, MAX_RANK};
use crate::source::Span;
use crate::syntax::ast::{self, BinOp, ExprKind, ItemKind, StmtKind};
use crate::types::{OobMode, ShapeDisplay, TensorType, checked_numel};
use slc_runtime::{DType, Tensor};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// The tensors a program may name, by type.
pub type InputTypes = BTreeMap<String, TensorType>;

/// The values of bound tensors, where known: operator parameters such as `strided_slice`'s
/// `begin` may come from a bound tensor, and must then be known when the program is checked.
pub type InputValues = BTreeMap<String, Tensor>;

/// Whether checking a program may read the value of an input of this dtype and size: a small
/// integer tensor may be an operator parameter (parameters are short lists), and a bool tensor of
/// any size a boolean mask, whose value decides the result's shape. Callers that read inputs
/// lazily read these with their headers.
pub fn value_may_be_read(dtype: DType, numel: usize) -> bool {
    dtype == DType::Bool || (dtype.is_integer() && numel <= 1 << 12)
}

/// The bound names a checked program depends on: the inputs whose types it read, and those
/// whose values it read (operator parameters). Checking again with these unchanged gives the
/// same result, whatever else is bound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputsRead {
    pub types: BTreeSet<String>,
    pub values: BTreeSet<String>,
}

/// Checks `program`; its last statement must be an expression, whose checked tree is returned
/// with the inputs it read.
pub fn check_program(
    program: &ast::Program,
    inputs: &InputTypes,
    values: &InputValues,
) -> Result<(TExpr, InputsRead), SemaError> {
    let mut checker =
        Checker { inputs, values, read: InputsRead::default(), locals: HashMap::new(), copied: 0 };
    let mut result = None;
    for stmt in &program.stmts {
        match &stmt.kind {
            StmtKind::Let { name, value } => {
                let v = checker.expr(value)?;
                checker.locals.insert(name.name.clone(), v);
                result = None;
            }
            StmtKind::Expr(e) => result = Some((checker.expr(e)?, e.span)),
        }
    }
    match result {
        Some((value, span)) => Ok((checker.to_tensor(value, span)?, checker.read)),
        None => {
            let span = program.stmts.last().map_or(Span::default(), |s| s.span);
            Err(SemaError::new(K::NoResult, span))
        }
    }
}

/// The value of a checked expression.
#[derive(Debug, Clone)]
pub(super) enum Value {
    Int(i64),
    /// `a.shape` (or a slice of it).
    Shape(Vec<i64>),
    Tensor(TExpr),
    Str(String),
}

impl Value {
    pub(super) fn describe(&self) -> String {
        match self {
            Value::Int(_) => "an integer".into(),
            Value::Shape(s) => format!("a shape {}", ShapeDisplay(s)),
            Value::Tensor(t) => format!("a tensor {}", t.ty),
            Value::Str(s) => format!("the string {s:?}"),
        }
    }
}

pub(super) struct Checker<'a> {
    inputs: &'a InputTypes,
    pub(super) values: &'a InputValues,
    pub(super) read: InputsRead,
    locals: HashMap<String, Value>,
    /// Nodes copied by uses of `let` names so far, bounded by [`MAX_PROGRAM_NODES`].
    copied: usize,
}

/// An index array of a subscript, and the axis it selects on (sema/advanced.rs uses them).
pub(super) struct Selector {
    pub indices: TExpr,
    /// The axis of the viewed data (the subscript's slices, integers and new axes applied).
    pub view_axis: usize,
    /// The axis of the indexed tensor, as NumPy's messages count it.
    pub axis: usize,
}

/// One index item after classification.
enum Entry {
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: Option<i64>,
    },
    Int(i64),
    /// An integer tensor: 0-d behaves as an integer whose value is known only at run time.
    Array(TExpr),
    /// A bool tensor: its `nonzero()` arrays, over as many axes as it has dimensions.
    Mask(TExpr),
    Ellipsis,
    NewAxis,
}

impl Entry {
    /// The input axes the item consumes.
    fn axes(&self) -> usize {
        match self {
            Entry::Slice { .. } | Entry::Int(_) | Entry::Array(_) => 1,
            Entry::Mask(m) => m.ty.shape.len(),
            Entry::Ellipsis | Entry::NewAxis => 0,
        }
    }
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
            ExprKind::Float(text) => err(K::Float { text: text.clone() }, e.span),
            ExprKind::Str(s) => Ok(Value::Str(s.clone())),
            ExprKind::List(_) => self.list(e).map(Value::Tensor),
            ExprKind::Neg(inner) => {
                // `-9223372036854775808` is in range although its magnitude is not.
                if let ExprKind::Int(v) = inner.kind
                    && v == 1u64 << 63
                {
                    return Ok(Value::Int(i64::MIN));
                }
                let v = self.int(inner, "the operand of `-`")?;
                match v.checked_neg() {
                    Some(v) => Ok(Value::Int(v)),
                    None => err(K::Overflow { expr: format!("{e}") }, e.span),
                }
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let what = "an arithmetic operand";
                let (a, b) = (self.int(lhs, what)?, self.int(rhs, what)?);
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
                    "shape" => Ok(Value::Shape(t.ty.shape)),
                    "ndim" => Ok(Value::Int(t.ty.shape.len() as i64)),
                    "size" => match checked_numel(&t.ty.shape) {
                        Some(n) => Ok(Value::Int(n)),
                        None => err(K::Overflow { expr: format!("{e}") }, e.span),
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
            self.read.types.insert(name.to_string());
            let kind = TExprKind::Input(name.to_string());
            return Ok(Value::Tensor(TExpr::new(kind, ty.clone(), span)));
        }
        let mut known: Vec<String> = self.inputs.keys().chain(self.locals.keys()).cloned().collect();
        known.sort();
        known.dedup();
        let suggestion = known
            .iter()
            .map(|k| (edit_distance(k, name), k))
            .filter(|(d, k)| *d <= 2 && *d < k.len().max(name.len()))
            .min()
            .map(|(_, k)| k.clone());
        err(K::UnknownName { name: name.into(), suggestion, known }, span)
    }

    /// An integer-valued expression.
    pub(super) fn int(&mut self, e: &ast::Expr, what: &'static str) -> Result<i64, SemaError> {
        match self.expr(e)? {
            Value::Int(v) => Ok(v),
            other => err(K::NotAnInteger { what, found: other.describe() }, e.span),
        }
    }

    fn to_tensor(&self, value: Value, span: Span) -> Result<TExpr, SemaError> {
        match value {
            Value::Tensor(t) => Ok(t),
            Value::Int(v) => Ok(const_tensor(Tensor::scalar_i64(v), span)),
            Value::Shape(s) => {
                let t = Tensor::from_i64s(DType::I64, &[s.len()], &s)
                    .map_err(|_| SemaError::new(K::TooLarge { shape: format!("[{}]", s.len()) }, span))?;
                Ok(const_tensor(t, span))
            }
            Value::Str(_) => err(K::NotATensor { what: value.describe() }, span),
        }
    }

    /// A (nested) list literal as a constant: bool when every element is `True` or `False`
    /// (a mask), otherwise i64, with `True` and `False` as 1 and 0 (as NumPy converts the list).
    fn list(&mut self, e: &ast::Expr) -> Result<TExpr, SemaError> {
        let mut shape: Option<Vec<i64>> = None;
        let mut values = vec![];
        self.list_into(e, 0, &mut vec![], &mut shape, &mut values)?;
        let shape = shape.unwrap_or_else(|| vec![0]);
        if shape.len() > MAX_RANK {
            return err(K::TooManyDims { rank: shape.len() }, e.span);
        }
        let dims: Vec<usize> = shape.iter().map(|&d| d as usize).collect();
        let too_large = || SemaError::new(K::TooLarge { shape: format!("{}", ShapeDisplay(&shape)) }, e.span);
        if !values.is_empty() && values.iter().all(|&(_, is_bool)| is_bool) {
            let bits: Vec<bool> = values.iter().map(|&(v, _)| v == 1).collect();
            if checked_numel(&shape).is_none() {
                return Err(too_large());
            }
            return Ok(const_tensor(bool_tensor(&dims, &bits), e.span));
        }
        let values: Vec<i64> = values.into_iter().map(|(v, _)| v).collect();
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
        values: &mut Vec<(i64, bool)>,
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
                values.push((i64::from(*b), true));
                Ok(())
            }
            _ => {
                self.leaf_shape(path, depth, shape, e.span, describe)?;
                values.push((self.int(e, "a list element")?, false));
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

    /// `a.shape[i]` and `a.shape[i:j]`.
    fn index_shape(&mut self, shape: &[i64], items: &[ast::Item], span: Span) -> Result<Value, SemaError> {
        let [item] = items else {
            let extra = items.get(1).map_or(span, |i| i.span);
            return err(K::TooManyIndices { rank: 1, count: items.len() }, extra);
        };
        let n = shape.len() as i64;
        match self.entry(item)? {
            Entry::Int(i) => {
                let j = if i < 0 { i + n } else { i };
                if !(0..n).contains(&j) {
                    return err(K::IndexOutOfRange { index: i, axis: 0, size: n }, item.span);
                }
                Ok(Value::Int(shape[j as usize]))
            }
            Entry::Slice { start, stop, step } => {
                let r = normalize_numpy(n, start, stop, step);
                Ok(Value::Shape((0..r.len).map(|j| shape[(r.first + j * r.step) as usize]).collect()))
            }
            _ => err(K::NotIndexable { what: "a shape with this index".into() }, item.span),
        }
    }

    /// Classifies one index item.
    fn entry(&mut self, item: &ast::Item) -> Result<Entry, SemaError> {
        match &item.kind {
            ItemKind::Ellipsis => Ok(Entry::Ellipsis),
            ItemKind::NewAxis => Ok(Entry::NewAxis),
            ItemKind::Slice { start, stop, step } => {
                let mut bound = |e: &Option<ast::Expr>| -> Result<Option<i64>, SemaError> {
                    e.as_ref().map(|e| self.int(e, "a slice bound")).transpose()
                };
                let (start, stop, step) = (bound(start)?, bound(stop)?, bound(step)?);
                if step == Some(0) {
                    let span = match &item.kind {
                        ItemKind::Slice { step: Some(e), .. } => e.span,
                        _ => item.span,
                    };
                    return err(K::ZeroStep, span);
                }
                Ok(Entry::Slice { start, stop, step })
            }
            ItemKind::Expr(e) => match self.expr(e)? {
                Value::Int(v) => Ok(Entry::Int(v)),
                Value::Tensor(t) if t.ty.dtype == DType::Bool => Ok(Entry::Mask(t)),
                Value::Tensor(t) if !t.ty.dtype.is_integer() => {
                    err(K::NonIntegerIndexTensor { dtype: t.ty.dtype.to_string() }, e.span)
                }
                Value::Tensor(t) => Ok(Entry::Array(t)),
                other => err(K::NotAnInteger { what: "an index", found: other.describe() }, e.span),
            },
        }
    }

    /// NumPy indexing `base[items]` (docs/semantics.md, NumPy indexing).
    fn index(&mut self, base: TExpr, items: &[ast::Item], span: Span) -> Result<TExpr, SemaError> {
        let mut entries = Vec::with_capacity(items.len());
        let mut ellipsis: Option<Span> = None;
        let rank = base.ty.shape.len();
        let mut consumed = 0;
        for item in items {
            let entry = self.entry(item)?;
            if let Entry::Ellipsis = entry {
                match ellipsis {
                    Some(first) => return err(K::TwoEllipses { first }, item.span),
                    None => ellipsis = Some(item.span),
                }
            }
            consumed += entry.axes();
            if consumed > rank {
                let count = consumed
                    + items[entries.len() + 1..]
                        .iter()
                        .filter(|i| !matches!(i.kind, ItemKind::Ellipsis | ItemKind::NewAxis))
                        .count();
                return err(K::TooManyIndices { rank, count }, item.span);
            }
            entries.push((entry, item.span));
        }
        if ellipsis.is_none() {
            entries.push((Entry::Ellipsis, span));
        }

        // Walk the entries with an input-axis cursor, building the view and noting the index
        // arrays with the view axes they select on. A mask's axes stay whole in the view and
        // its `nonzero()` arrays select on them; a 0-d mask selects on a new axis of 1.
        let shape = &base.ty.shape;
        let mut dims = Vec::with_capacity(entries.len());
        let mut selectors: Vec<Selector> = vec![];
        let mut advanced = vec![]; // entry positions of integers, index tensors and masks
        let (mut axis, mut out_pos) = (0usize, 0usize);
        let whole = |n: i64| ViewDim::Range { start: 0, step: 1, len: n };
        for (pos, (entry, item_span)) in entries.into_iter().enumerate() {
            match entry {
                Entry::Ellipsis => {
                    for _ in 0..rank - consumed {
                        dims.push(whole(shape[axis]));
                        axis += 1;
                        out_pos += 1;
                    }
                }
                Entry::NewAxis => {
                    dims.push(ViewDim::NewAxis);
                    out_pos += 1;
                }
                Entry::Slice { start, stop, step } => {
                    let r = normalize_numpy(shape[axis], start, stop, step);
                    dims.push(r.into());
                    axis += 1;
                    out_pos += 1;
                }
                Entry::Int(i) => {
                    let n = shape[axis];
                    match OobMode::Error.normalize(i as i128, n) {
                        Ok(Some(j)) => dims.push(ViewDim::Pick(j)),
                        _ => {
                            return err(K::IndexOutOfRange { index: i, axis, size: n }, item_span);
                        }
                    }
                    advanced.push(pos);
                    axis += 1;
                }
                Entry::Array(indices) => {
                    dims.push(whole(shape[axis]));
                    selectors.push(Selector { indices, view_axis: out_pos, axis });
                    advanced.push(pos);
                    axis += 1;
                    out_pos += 1;
                }
                Entry::Mask(mask) => {
                    let covered = mask.ty.shape.len();
                    for (d, (&size, &mask_size)) in shape[axis..].iter().zip(&mask.ty.shape).enumerate() {
                        if size != mask_size {
                            return err(K::MaskMismatch { axis: axis + d, size, mask_size }, item_span);
                        }
                    }
                    if covered == 0 {
                        dims.push(ViewDim::NewAxis);
                    }
                    dims.extend(shape[axis..axis + covered].iter().map(|&n| whole(n)));
                    for (d, indices) in self.nonzero(&mask)?.into_iter().enumerate() {
                        selectors.push(Selector { indices, view_axis: out_pos + d, axis: axis + d });
                    }
                    advanced.push(pos);
                    axis += covered;
                    out_pos += covered.max(1);
                }
            }
        }

        let viewed = view(base, dims, span)?;
        if selectors.is_empty() {
            return Ok(viewed);
        }
        // NumPy's placement rule: when the advanced items are adjacent, the broadcast dimensions
        // replace them in place; otherwise they go first.
        let adjacent = advanced.windows(2).all(|w| w[1] == w[0] + 1);
        self.advanced_index(viewed, selectors, adjacent, span)
    }
}

/// A bool tensor of `shape` (its size checked by the caller).
fn bool_tensor(shape: &[usize], bits: &[bool]) -> Tensor {
    let bytes: Vec<u8> = bits.iter().map(|&b| u8::from(b)).collect();
    Tensor::from_bytes(DType::Bool, shape, &bytes).expect("one byte per element")
}

pub(super) fn const_tensor(t: Tensor, span: Span) -> TExpr {
    let ty = TensorType { dtype: t.dtype(), shape: t.shape().iter().map(|&d| d as i64).collect() };
    TExpr::new(TExprKind::Const(t), ty, span)
}

/// A node of the checked tree, within the limits on rank and nesting.
pub(super) fn node(kind: TExprKind, ty: TensorType, span: Span) -> Result<TExpr, SemaError> {
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
/// offset computation relies on its size fitting in i64 bytes.
fn check_input_type(name: &str, ty: &TensorType, span: Span) -> Result<(), SemaError> {
    let bad = |reason: String| err(K::BadInput { name: name.into(), reason }, span);
    if ty.shape.len() > MAX_RANK {
        return err(K::TooManyDims { rank: ty.shape.len() }, span);
    }
    if let Some(d) = ty.shape.iter().find(|&&d| d < 0) {
        return bad(format!("its shape {} has a negative dimension {d}", ShapeDisplay(&ty.shape)));
    }
    if checked_numel(&ty.shape).and_then(|n| n.checked_mul(ty.dtype.width() as i64)).is_none() {
        return bad(format!("{ty} has more than {} bytes", i64::MAX));
    }
    Ok(())
}

/// Literal index values are checked now, pointing at the literal, rather than at run time.
pub(super) fn check_const_indices(indices: &TExpr, axis: usize, size: i64) -> Result<(), SemaError> {
    if let TExprKind::Const(t) = &indices.kind {
        for i in 0..t.numel() {
            let v = t.int_at(i).unwrap_or_default();
            if OobMode::Error.normalize(v, size).is_err() {
                return err(K::IndexOutOfRange { index: v as i64, axis, size }, indices.span);
            }
        }
    }
    Ok(())
}

/// A typed view; the identity view is no node at all.
pub(super) fn view(base: TExpr, dims: Vec<ViewDim>, span: Span) -> Result<TExpr, SemaError> {
    let shape = &base.ty.shape;
    let is_identity = dims.len() == shape.len()
        && dims.iter().zip(shape).all(|(d, &n)| *d == ViewDim::Range { start: 0, step: 1, len: n });
    if is_identity {
        return Ok(base);
    }
    let out_shape = dims
        .iter()
        .filter_map(|d| match d {
            ViewDim::Range { len, .. } => Some(*len),
            ViewDim::Pick(_) => None,
            ViewDim::NewAxis => Some(1),
        })
        .collect();
    let ty = TensorType { dtype: base.ty.dtype, shape: out_shape };
    node(TExprKind::View { base: Box::new(base), dims }, ty, span)
}

/// A typed gather, OpenVINO Gather-8's shape rule:
/// `data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:]`. The caller has checked
/// `batch_dims <= axis`, `batch_dims <= rank(indices)` and that the batch dimensions agree.
pub(super) fn gather(
    data: TExpr,
    indices: TExpr,
    axis: usize,
    batch_dims: usize,
    mode: OobMode,
    span: Span,
) -> Result<TExpr, SemaError> {
    let d = &data.ty.shape;
    let shape: Vec<i64> =
        d[..axis].iter().chain(&indices.ty.shape[batch_dims..]).chain(&d[axis + 1..]).copied().collect();
    if checked_numel(&shape).is_none() {
        return err(K::TooLarge { shape: format!("{}", ShapeDisplay(&shape)) }, span);
    }
    let ty = TensorType { dtype: data.ty.dtype, shape };
    let kind = TExprKind::Gather { data: Box::new(data), indices: Box::new(indices), axis, batch_dims, mode };
    node(kind, ty, span)
}

/// Levenshtein distance, for "did you mean" suggestions.
pub(super) fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}
