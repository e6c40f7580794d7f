//! NumPy subscripts (`base[items]`; docs/semantics.md, NumPy indexing): each item classified
//! ([`Entry`]), then one walk over them that builds the view of the basic items and notes the
//! index arrays and masks with the axes they select on, which `advanced.rs` then applies.

use super::check::{Checker, Selector, Value, err, view};
use super::error::{SemaError, SemaErrorKind as K};
use super::shape::{bound_for, normalize_numpy};
use super::typed::{TExpr, ViewDim};
use crate::source::Span;
use crate::syntax::ast::{self, ItemKind};
use crate::types::sym::{self, Cond, SymExpr};
use slc_runtime::DType;

/// One index item after classification.
enum Entry {
    Slice {
        start: Option<SymExpr>,
        stop: Option<SymExpr>,
        step: Option<i64>,
    },
    Int(SymExpr),
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

impl Checker<'_> {
    /// `a.shape[i]` and `a.shape[i:j]`.
    pub(super) fn index_shape(
        &mut self,
        shape: &[SymExpr],
        items: &[ast::Item],
        span: Span,
    ) -> Result<Value, SemaError> {
        if items.is_empty() {
            let found = "the empty tuple `()`".to_string();
            return err(K::NotAnInteger { what: "an index of a shape", found }, span);
        }
        let [item] = items else {
            let extra = items.get(1).map_or(span, |i| i.span);
            return err(K::TooManyIndices { rank: 1, count: items.len() }, extra);
        };
        let n = shape.len() as i64;
        let known = |v: SymExpr| -> Result<i64, SemaError> {
            let what = "an index of a shape";
            v.as_const()
                .ok_or_else(|| SemaError::new(K::NotCompileTime { what, name: v.to_string() }, item.span))
        };
        match self.entry(item)? {
            Entry::Int(i) => {
                let i = known(i)?;
                let j = if i < 0 { i + n } else { i };
                if !(0..n).contains(&j) {
                    let (index, size) = (SymExpr::constant(i), SymExpr::constant(n));
                    return err(K::IndexOutOfRange { index, axis: 0, size }, item.span);
                }
                let dim = &shape[j as usize];
                Ok(dim.as_const().map_or_else(|| Value::Sym(dim.clone()), Value::Int))
            }
            Entry::Slice { start, stop, step } => {
                let (start, stop) = (start.map(known).transpose()?, stop.map(known).transpose()?);
                let r = normalize_numpy(n, start, stop, step);
                Ok(Value::Shape((0..r.len).map(|j| shape[(r.first + j * r.step) as usize].clone()).collect()))
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
                let mut bound = |e: &Option<ast::Expr>| -> Result<Option<SymExpr>, SemaError> {
                    e.as_ref().map(|e| self.sym_int(e, "a slice bound")).transpose()
                };
                let (start, stop) = (bound(start)?, bound(stop)?);
                let step = match step {
                    None => None,
                    Some(e) => Some(self.sym_int(e, "a slice bound")?.as_const().ok_or_else(|| {
                        SemaError::new(
                            K::NotCompileTime { what: "a slice step", name: format!("{e}") },
                            e.span,
                        )
                    })?),
                };
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
                Value::Int(v) => Ok(Entry::Int(SymExpr::constant(v))),
                Value::Sym(v) => Ok(Entry::Int(v)),
                Value::Tensor(t) if self.runtime_scalar(&t).is_some() => {
                    Ok(Entry::Int(self.runtime_scalar(&t).expect("checked in the guard")))
                }
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
    pub(super) fn index(&mut self, base: TExpr, items: &[ast::Item], span: Span) -> Result<TExpr, SemaError> {
        let walked = self.walk(base, items, span, false)?;
        if walked.selectors.is_empty() {
            return Ok(walked.viewed);
        }
        // NumPy's placement rule: when the advanced items are adjacent, the broadcast dimensions
        // replace them in place; otherwise they go first.
        let adjacent = walked.advanced.windows(2).all(|w| w[1] == w[0] + 1);
        self.advanced_index(walked.viewed, walked.selectors, adjacent, span)
    }

    /// Of `base[items]` where the items hold one mask and no index array (integers, slices,
    /// `...` and new axes besides): the box the mask's axes span (the mask as `:` over its own
    /// dims, which sema matches with the data's), the mask, and the box's axis where the mask's
    /// first lies. `None` for any other subscript. Checked as [`index`](Self::index) checks,
    /// without the mask's positions. A store through a mask with one value for every update
    /// writes this box where the mask is `True` (docs/semantics.md, Stores).
    pub(super) fn mask_box(
        &mut self,
        base: TExpr,
        items: &[ast::Item],
        span: Span,
    ) -> Result<Option<(TExpr, TExpr, usize)>, SemaError> {
        let mut walked = self.walk(base, items, span, true)?;
        // A 0-d mask selects on a new axis of its own: no box of the data's.
        let one_mask = walked.masks.len() == 1 && !walked.masks[0].0.ty.shape.is_empty();
        Ok(match one_mask && walked.selectors.is_empty() {
            true => walked.masks.pop().map(|(mask, at)| (walked.viewed, mask, at)),
            false => None,
        })
    }

    /// Classifies the items and builds the view of the basic ones. `boxed`: masks are recorded
    /// with their first view axis, not indexed through (their axes stay whole in the view).
    fn walk(
        &mut self,
        base: TExpr,
        items: &[ast::Item],
        span: Span,
        boxed: bool,
    ) -> Result<Walked, SemaError> {
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
        let mut masks = vec![];
        let mut advanced = vec![]; // entry positions of integers, index tensors and masks
        let (mut axis, mut out_pos) = (0usize, 0usize);
        let whole = ViewDim::whole;
        for (pos, (entry, item_span)) in entries.into_iter().enumerate() {
            match entry {
                Entry::Ellipsis => {
                    for _ in 0..rank - consumed {
                        dims.push(whole(&shape[axis]));
                        axis += 1;
                        out_pos += 1;
                    }
                }
                Entry::NewAxis => {
                    dims.push(ViewDim::NewAxis);
                    out_pos += 1;
                }
                Entry::Slice { start, stop, step } => {
                    let n = &shape[axis];
                    let (start, stop) = (start.map(|v| bound_for(&v, n)), stop.map(|v| bound_for(&v, n)));
                    let r = sym::normalize_numpy(n, start.as_ref(), stop.as_ref(), step);
                    dims.push(ViewDim::Range { start: r.first, step: r.step, len: r.len });
                    axis += 1;
                    out_pos += 1;
                }
                Entry::Int(i) => {
                    let n = shape[axis].clone();
                    let refusal = || {
                        SemaError::new(
                            K::IndexOutOfRange { index: i.clone(), axis, size: n.clone() },
                            item_span,
                        )
                    };
                    dims.push(ViewDim::Pick(self.index_into(&i, &n, refusal)?));
                    advanced.push(pos);
                    axis += 1;
                }
                Entry::Array(indices) => {
                    dims.push(whole(&shape[axis]));
                    selectors.push(Selector { indices, view_axis: out_pos, axis });
                    advanced.push(pos);
                    axis += 1;
                    out_pos += 1;
                }
                Entry::Mask(mask) => {
                    let covered = mask.ty.shape.len();
                    for (d, (size, mask_size)) in shape[axis..].iter().zip(&mask.ty.shape).enumerate() {
                        let refusal = || {
                            let (size, mask_size) = (size.clone(), mask_size.clone());
                            SemaError::new(K::MaskMismatch { axis: axis + d, size, mask_size }, item_span)
                        };
                        // NumPy matches a mask axis of length 0 to any axis (it selects nothing):
                        // `mask_size * (size - mask_size) == 0`, one condition for both cases.
                        let zero_or_equal = mask_size.clone() * (size.clone() - mask_size.clone());
                        self.require(Cond::eq(&zero_or_equal, &SymExpr::constant(0)), refusal)?;
                    }
                    if covered == 0 {
                        dims.push(ViewDim::NewAxis);
                    }
                    // The mask's dims (those of a literal are constants): the data's, or 0 (nothing selected).
                    dims.extend(mask.ty.shape.iter().map(whole));
                    match boxed {
                        true => masks.push((mask, out_pos)),
                        false => {
                            for (d, indices) in self.nonzero(&mask)?.into_iter().enumerate() {
                                selectors.push(Selector { indices, view_axis: out_pos + d, axis: axis + d });
                            }
                        }
                    }
                    advanced.push(pos);
                    axis += covered;
                    out_pos += covered.max(1);
                }
            }
        }

        Ok(Walked { viewed: view(base, dims, span)?, selectors, advanced, masks })
    }
}

/// A subscript's items walked ([`Checker::walk`]).
struct Walked {
    /// The base viewed by the basic items, every index array's and mask's axes whole.
    viewed: TExpr,
    selectors: Vec<Selector>,
    /// The item positions of integers, index arrays and masks (NumPy's placement rule).
    advanced: Vec<usize>,
    /// In a boxed walk, each mask and the view axis of its first dim.
    masks: Vec<(TExpr, usize)>,
}
