//! The checked program: a tree of a few core tensor operations, every node typed (dtype and
//! shape, whose dims are symbolic integers: constants in a concrete program) and spanned. Surface syntax is gone: NumPy items, ellipses and negative bounds
//! are resolved into [`ViewDim`]s; index arrays (and boolean masks, as their `nonzero()`
//! arrays) are one [`TExprKind::AdvancedIndex`].

use crate::source::Span;
use crate::types::sym::{Cond, SymExpr};
use crate::types::{Combine, OobMode, SymTensorType};
use slc_runtime::Tensor;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct TExpr {
    pub kind: TExprKind,
    pub ty: SymTensorType,
    pub span: Span,
    /// Levels of nesting, this node included; at most [`MAX_NESTING`](crate::limits::MAX_NESTING).
    pub depth: usize,
    /// Nodes of the tree, this one included.
    pub nodes: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum TExprKind {
    /// A tensor bound outside the program.
    Input(String),
    /// A literal (an index list).
    Const(Tensor),
    /// Basic indexing: one [`ViewDim`] per input dimension, plus new axes, in output order.
    View { base: Box<TExpr>, dims: Vec<ViewDim> },
    /// `out = data.shape[:axis] + indices.shape[batch_dims:] + data.shape[axis+1:]`.
    Gather { data: Box<TExpr>, indices: Box<TExpr>, axis: usize, batch_dims: usize, mode: OobMode },
    /// ONNX GatherElements: `out` has the indices' shape, and `out[i] = data[i]` with `i[axis]`
    /// replaced by `indices[i]`.
    GatherElements { data: Box<TExpr>, indices: Box<TExpr>, axis: usize, mode: OobMode },
    /// ONNX GatherND: the indices' last dimension (`m` entries) selects a slice of `data` after
    /// the `batch_dims` leading dimensions the two share;
    /// `out = indices.shape[:-1] + data.shape[batch_dims+m:]`.
    GatherNd { data: Box<TExpr>, indices: Box<TExpr>, batch_dims: usize, mode: OobMode },
    /// NumPy's advanced indexing by index arrays broadcast together (docs/semantics.md, NumPy
    /// indexing): each of `arrays` selects on its own axis of `data` (distinct axes), with NumPy's
    /// rule for values (negative ones count from the end, out-of-range ones are errors: `error`
    /// mode). The output is `data`'s other axes in order, with the broadcast shape of the arrays
    /// inserted at output position `at`.
    AdvancedIndex { data: Box<TExpr>, arrays: Vec<IndexArray>, at: usize },
    /// NumPy's `nonzero()` of a boolean mask whose value is known only at run time (an input),
    /// stacked: `i64[T, max(1, rank)]`, row `j` the coordinates of the `j`-th `True` in C order,
    /// `T` (the dim symbol [`trues_symbol`]) their count. Executors derive it from the mask per
    /// call (`plan::nonzero`).
    Nonzero { mask: Box<TExpr> },
    /// A store (`a[items] = value`, `+=`, `*=`; docs/semantics.md, Stores), only ever the root:
    /// the tensor `target` (an input) with the elements `selection` reads replaced by `value`
    /// (`combine`d with the old ones). `selection` is a load whose data path leads to `target`
    /// through views and at most one final advanced index; `value` has the target's dtype and
    /// broadcasts to the selection's shape. The node has the target's type. `when`: a store
    /// through a mask whose value is the same for every update (`a[m] = 0`): `selection` is then
    /// the box the mask's axes span (the mask replaced by `:`), and `when` the mask viewed to
    /// broadcast onto it (unit axes where the box has others); an element of the box is
    /// updated where the mask is `True`.
    Store {
        target: Box<TExpr>,
        selection: Box<TExpr>,
        value: Box<TExpr>,
        combine: Combine,
        when: Option<Box<TExpr>>,
    },
}

/// The dim symbol of the number of `True`s of the run-time mask `mask` (an input's name): the
/// length of its [`TExprKind::Nonzero`]. `_` first and a non-digit last, so that it is never the
/// name of an anonymous dim (`_m0`).
pub fn trues_symbol(mask: &str) -> String {
    format!("_{mask}_trues")
}

/// The name of the plan input that holds the [`TExprKind::Nonzero`] of the mask input `mask`.
pub fn nonzero_input(mask: &str) -> String {
    format!("{mask}_nonzero")
}

/// One index array of an [`TExprKind::AdvancedIndex`].
#[derive(Debug, Clone, PartialEq)]
pub struct IndexArray {
    pub indices: TExpr,
    /// The axis of the data it selects on.
    pub axis: usize,
    /// The same axis as NumPy's messages count it: of the tensor the subscript indexes, before
    /// the subscript's own new axes and integers.
    pub source_axis: usize,
    /// Whether its values are checked against the axis. NumPy checks a 0-d array always (it is
    /// an integer to NumPy) and the others only when the broadcast shape is not empty.
    pub checked: bool,
}

impl TExprKind {
    /// The broadcast shape of an [`TExprKind::AdvancedIndex`] whose output has type `out`.
    pub fn broadcast_shape<'a>(&self, out: &'a SymTensorType) -> &'a [SymExpr] {
        match self {
            TExprKind::AdvancedIndex { data, arrays, at } => {
                let kept = data.ty.shape.len() - arrays.len();
                &out.shape[*at..*at + out.shape.len() - kept]
            }
            _ => &[],
        }
    }
}

/// The condition "a broadcast of this shape has no element" (false for a 0-d broadcast): NumPy
/// then checks no index value of the arrays.
pub fn broadcast_is_empty(broadcast: &[SymExpr]) -> Cond {
    let mut least = vec![SymExpr::constant(1)];
    least.extend(broadcast.iter().cloned());
    Cond::le(&SymExpr::min(&least), &SymExpr::constant(0))
}

impl TExpr {
    /// A node over already checked children, with its depth and size.
    pub fn new(kind: TExprKind, ty: SymTensorType, span: Span) -> TExpr {
        let depth = 1 + kind.children().map(|c| c.depth).max().unwrap_or(0);
        let nodes = 1 + kind.children().map(|c| c.nodes).sum::<usize>();
        TExpr { kind, ty, span, depth, nodes }
    }
}

impl TExprKind {
    /// The nodes directly below this one.
    pub fn children(&self) -> impl Iterator<Item = &TExpr> {
        let (first, second, third, rest) = match self {
            TExprKind::Input(_) | TExprKind::Const(_) => (None, None, None, &[][..]),
            TExprKind::View { base, .. } | TExprKind::Nonzero { mask: base } => {
                (Some(&**base), None, None, &[][..])
            }
            TExprKind::Gather { data, indices, .. }
            | TExprKind::GatherElements { data, indices, .. }
            | TExprKind::GatherNd { data, indices, .. } => (Some(&**data), Some(&**indices), None, &[][..]),
            TExprKind::AdvancedIndex { data, arrays, .. } => (Some(&**data), None, None, &arrays[..]),
            // The target is the selection's leaf: its children are the selection, the value and
            // the mask.
            TExprKind::Store { selection, value, when, .. } => {
                (Some(&**selection), Some(&**value), when.as_deref(), &[][..])
            }
        };
        first.into_iter().chain(second).chain(third).chain(rest.iter().map(|a| &a.indices))
    }
}

/// How one dimension of a view is produced. Steps are compile-time constants; starts, lengths
/// and picked indices are expressions in the program's symbols.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ViewDim {
    /// Consumes an input dimension: elements `start + j*step`, `j < len`.
    Range { start: SymExpr, step: i64, len: SymExpr },
    /// Consumes an input dimension and removes it: the element at `index` (in range wherever the
    /// program's [`ShapeCondition`]s hold).
    Pick(SymExpr),
    /// Adds a dimension of size 1.
    NewAxis,
}

impl ViewDim {
    /// All `len` elements of an input dimension, in order.
    pub fn whole(len: &SymExpr) -> ViewDim {
        ViewDim::Range { start: SymExpr::constant(0), step: 1, len: len.clone() }
    }
}

/// A condition on the symbols that checking could not decide: the shape function checks it per
/// call (docs/design/shape-generic.md). A concrete program has none.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ShapeCondition {
    pub cond: Cond,
    /// The diagnostic's message, as checking would report it, with symbolic sizes.
    pub message: String,
    /// Where the program text raises it.
    pub span: Span,
}

impl fmt::Display for TExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            TExprKind::Input(name) => write!(f, "{name}")?,
            TExprKind::Const(t) => {
                write!(f, "const")?;
                write_const(f, t)?
            }
            TExprKind::View { base, dims } => {
                write!(f, "view({base}; ")?;
                for (i, d) in dims.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    match d {
                        ViewDim::Range { start, step, len } => write!(f, "{start}:{step}x{len}")?,
                        ViewDim::Pick(i) => write!(f, "@{i}")?,
                        ViewDim::NewAxis => write!(f, "new")?,
                    }
                }
                write!(f, ")")?
            }
            TExprKind::Gather { data, indices, axis, batch_dims, mode } => write!(
                f,
                "gather({data}, {indices}, axis={axis}, batch_dims={batch_dims}, mode={})",
                mode.name()
            )?,
            TExprKind::AdvancedIndex { data, arrays, at } => {
                write!(f, "index({data}")?;
                for a in arrays {
                    write!(f, ", axis {}: {}", a.axis, a.indices)?;
                    if !a.checked {
                        write!(f, " unchecked")?;
                    }
                }
                write!(f, ", at={at})")?
            }
            TExprKind::GatherElements { data, indices, axis, mode } => {
                write!(f, "gather_elements({data}, {indices}, axis={axis}, mode={})", mode.name())?
            }
            TExprKind::GatherNd { data, indices, batch_dims, mode } => {
                write!(f, "gather_nd({data}, {indices}, batch_dims={batch_dims}, mode={})", mode.name())?
            }
            TExprKind::Nonzero { mask } => write!(f, "nonzero({mask})")?,
            TExprKind::Store { target, selection, value, combine, when } => {
                write!(f, "store({target}; {selection} {} {value}", combine.name())?;
                if let Some(when) = when {
                    write!(f, " when {when}")?;
                }
                write!(f, ")")?
            }
        }
        write!(f, ": {}", self.ty)
    }
}

fn write_const(f: &mut fmt::Formatter<'_>, t: &Tensor) -> fmt::Result {
    write!(f, "(")?;
    for i in 0..t.numel() {
        if i > 0 {
            write!(f, ", ")?;
        }
        match t.int_at(i) {
            Some(v) => write!(f, "{v}")?,
            None => write!(f, "?")?,
        }
    }
    write!(f, ")")
}
