//! NumPy's advanced indexing (docs/semantics.md, NumPy indexing): the index arrays of one
//! subscript, and the `nonzero()` arrays of its masks (read from the masks' values), broadcast
//! together into one [`TExprKind::AdvancedIndex`], with NumPy's placement rule for the broadcast
//! dimensions. `check.rs` walks the subscript; this file takes over once it has the arrays.
//! Every shape here is concrete (symbolic dims are refused with E0129).

use super::check::{Checker, Selector, const_tensor, err, node};
use super::error::{SemaError, SemaErrorKind as K};
use super::typed::{IndexArray, TExpr, TExprKind};
use crate::source::Span;
use crate::types::sym::SymExpr;
use crate::types::{Coords, ShapeDisplay, TensorType, checked_numel};
use slc_runtime::{DType, Tensor};

impl Checker<'_> {
    /// `data` (the subscript's view) indexed by `selectors`. Their broadcast dimensions replace them
    /// in place when the advanced items were `adjacent` in the subscript, and go first otherwise.
    pub(super) fn advanced_index(
        &mut self,
        data: TExpr,
        selectors: Vec<Selector>,
        adjacent: bool,
        span: Span,
    ) -> Result<TExpr, SemaError> {
        const FORM: &str = "indexing by an index array";
        let data_shape = self.concrete_shape(&data, FORM)?;
        let mut shapes = Vec::with_capacity(selectors.len());
        for s in &selectors {
            shapes.push(self.concrete_shape(&s.indices, FORM)?);
        }
        let broadcast = broadcast(&selectors, &shapes)?;
        // NumPy reads no array value when the broadcast is empty, so it raises for none; a 0-d
        // array is an integer to NumPy, and always checked.
        let empty = broadcast.contains(&0);
        let mut arrays = Vec::with_capacity(selectors.len());
        for s in selectors {
            let checked = s.indices.ty.shape.is_empty() || !empty;
            if checked {
                let size = SymExpr::constant(data_shape[s.view_axis]);
                self.check_const_indices(&s.indices, s.axis, &size)?;
            }
            arrays.push(IndexArray { indices: s.indices, axis: s.view_axis, source_axis: s.axis, checked });
        }
        let at = if adjacent { arrays[0].axis } else { 0 };
        let kept: Vec<i64> = (data_shape.iter().enumerate())
            .filter(|(d, _)| !arrays.iter().any(|a| a.axis == *d))
            .map(|(_, &n)| n)
            .collect();
        let shape: Vec<i64> = kept[..at].iter().chain(&broadcast).chain(&kept[at..]).copied().collect();
        if checked_numel(&shape).is_none() {
            return err(K::TooLarge { shape: format!("{}", ShapeDisplay(&shape)) }, span);
        }
        let ty =
            TensorType { dtype: data.ty.dtype, shape: shape.into_iter().map(SymExpr::constant).collect() };
        node(TExprKind::AdvancedIndex { data: Box::new(data), arrays, at }, ty, span)
    }

    /// A mask's `nonzero()`: one i64 array of the `True` positions per dimension, read from the
    /// mask's value now, since the result's shape depends on it. A 0-d mask is `[0]` or `[]`.
    pub(super) fn nonzero(&mut self, mask: &TExpr) -> Result<Vec<TExpr>, SemaError> {
        let bits = self.value_of(mask).map_err(|e| match e.kind {
            K::ValueUnknown { name } => SemaError::new(K::MaskValueUnknown { name }, e.span),
            _ => e,
        })?;
        let shape = &self.concrete_shape(mask, "indexing by a boolean mask")?;
        let mut coords: Vec<Vec<i64>> = vec![vec![]; shape.len().max(1)];
        for (c, bit) in Coords::new(shape).zip(bits) {
            if bit != 0 {
                for (out, &i) in coords.iter_mut().zip(c.iter().chain([&0])) {
                    out.push(i);
                }
            }
        }
        let arrays = coords.into_iter().map(|values| {
            let t =
                Tensor::from_i64s(DType::I64, &[values.len()], &values).expect("i64 values of a 1-d tensor");
            const_tensor(t, mask.span)
        });
        Ok(arrays.collect())
    }
}

/// NumPy's broadcast of the arrays' shapes: aligned at the last dimension, each pair of sizes
/// equal or one of them 1. The error points at the first array that does not fit. `shapes` are
/// the arrays' shapes.
fn broadcast(selectors: &[Selector], shapes: &[Vec<i64>]) -> Result<Vec<i64>, SemaError> {
    let mut out: Vec<i64> = vec![];
    for (s, shape) in selectors.iter().zip(shapes) {
        let rank = out.len().max(shape.len());
        let padded = |v: &[i64]| -> Vec<i64> {
            std::iter::repeat_n(1, rank - v.len()).chain(v.iter().copied()).collect()
        };
        let mut next = Vec::with_capacity(rank);
        for (x, y) in padded(&out).into_iter().zip(padded(shape)) {
            next.push(match (x, y) {
                _ if x == y || y == 1 => x,
                (1, _) => y,
                _ => {
                    let shapes: Vec<String> = shapes.iter().map(|s| python_tuple(s)).collect();
                    let first = selectors[0].indices.span;
                    return err(K::BroadcastMismatch { shapes: shapes.join(" "), first }, s.indices.span);
                }
            });
        }
        out = next;
    }
    Ok(out)
}

/// A shape as Python prints a tuple, as NumPy's message does: `(2,)`, `(3, 4)`, `()`.
fn python_tuple(shape: &[i64]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    }
}
