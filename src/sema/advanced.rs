//! NumPy's advanced indexing (docs/semantics.md, NumPy indexing): the index arrays of one
//! subscript, and the `nonzero()` arrays of its masks (read from the masks' values now, or for
//! a mask input of a generic program, derived from it per call: [`TExprKind::Nonzero`]), broadcast
//! together into one [`TExprKind::AdvancedIndex`], with NumPy's placement rule for the broadcast
//! dimensions. `check.rs` walks the subscript; this file takes over once it has the arrays.
//!
//! Shapes may be symbolic. Two dims that broadcast for some bindings and not for others put a
//! requirement on the shape function (NumPy's message, at the array's span), and their
//! broadcast is `(N if M == 1 else M)`. Whether the broadcast is empty (then NumPy checks no
//! value) is decided per call where the dims are symbols: lowering runs such an array's check
//! over no element when the broadcast is empty.

use super::check::{Checker, Selector, const_tensor, err, is_large_mask, node, view};
use super::error::{SemaError, SemaErrorKind as K};
use super::typed::{IndexArray, TExpr, TExprKind, ViewDim, broadcast_is_empty, nonzero_input, trues_symbol};
use crate::source::Span;
use crate::types::sym::{Cond, SymExpr};
use crate::types::{Coords, TensorType};
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
        let broadcast = self.broadcast(&selectors)?;
        // NumPy reads no array value when the broadcast is empty, so it raises for none; a 0-d
        // array is an integer to NumPy, and always checked. Undecided, the values are checked
        // at run time (by the plan's checks, over nothing when the broadcast is empty).
        let empty = broadcast_is_empty(&broadcast).decide(&Default::default());
        let data_shape = data.ty.shape.clone();
        let mut arrays = Vec::with_capacity(selectors.len());
        for s in selectors {
            let zero_d = s.indices.ty.shape.is_empty();
            let checked = zero_d || empty != Some(true);
            if zero_d || empty == Some(false) {
                self.check_const_indices(&s.indices, s.axis, &data_shape[s.view_axis])?;
            }
            arrays.push(IndexArray { indices: s.indices, axis: s.view_axis, source_axis: s.axis, checked });
        }
        let at = if adjacent { arrays[0].axis } else { 0 };
        let kept: Vec<SymExpr> = (data_shape.iter().enumerate())
            .filter(|(d, _)| !arrays.iter().any(|a| a.axis == *d))
            .map(|(_, n)| n.clone())
            .collect();
        let shape: Vec<SymExpr> = kept[..at].iter().chain(&broadcast).chain(&kept[at..]).cloned().collect();
        self.require_numel_fits(&shape, span)?;
        let ty = TensorType { dtype: data.ty.dtype, shape };
        node(TExprKind::AdvancedIndex { data: Box::new(data), arrays, at }, ty, span)
    }

    /// A mask's `nonzero()`: one i64 array of the `True` positions per dimension, read from the
    /// mask's value now, since the result's shape depends on it (in a generic program, a mask
    /// input's are read per call). A 0-d mask is `[0]` or `[]`.
    pub(super) fn nonzero(&mut self, mask: &TExpr) -> Result<Vec<TExpr>, SemaError> {
        if let TExprKind::Input(name) = &mask.kind {
            match self.values.get(name) {
                None if self.runtime_scalars => return self.run_time_nonzero(mask, name, None),
                // Folded after all where a bound input has the derived input's name.
                Some(bits)
                    if self.masks.derive_large_masks
                        && is_large_mask(bits.dtype(), bits.numel())
                        && !self.input_types().contains_key(&nonzero_input(name)) =>
                {
                    let count = slc_runtime::count_nonzero(bits.bytes(), bits.dtype().width());
                    return self.run_time_nonzero(mask, name, Some(count));
                }
                _ => {}
            }
        }
        let bits = self.value_of(mask).map_err(|e| match e.kind {
            K::ValueUnknown { name } | K::NotCompileTime { name, .. } => {
                SemaError::new(K::MaskValueUnknown { name }, e.span)
            }
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

    /// The `nonzero()` arrays of a mask input derived per run: the columns of its
    /// [`TExprKind::Nonzero`], of the run-time length `_m_trues`, or of `count` where the mask's
    /// value is known now (and too large to fold).
    fn run_time_nonzero(
        &mut self,
        mask: &TExpr,
        name: &str,
        count: Option<usize>,
    ) -> Result<Vec<TExpr>, SemaError> {
        // The plan names the derived input so; a bound input of that name would be mistaken
        // for it by an executor that looks inputs up by name.
        if self.input_types().contains_key(&nonzero_input(name)) {
            return err(K::MaskValueUnknown { name: name.into() }, mask.span);
        }
        let count = count.map_or_else(|| SymExpr::dim(&trues_symbol(name)), |c| SymExpr::constant(c as i64));
        let columns = mask.ty.shape.len().max(1);
        let shape = vec![count.clone(), SymExpr::constant(columns as i64)];
        let ty = TensorType { dtype: DType::I64, shape };
        let nonzero = node(TExprKind::Nonzero { mask: Box::new(mask.clone()) }, ty, mask.span)?;
        (0..columns)
            .map(|d| {
                let rows = ViewDim::whole(&count);
                view(nonzero.clone(), vec![rows, ViewDim::Pick(SymExpr::constant(d as i64))], mask.span)
            })
            .collect()
    }

    /// NumPy's broadcast of the arrays' shapes: aligned at the last dimension, each pair of
    /// sizes equal or one of them 1. The error points at the first array that does not fit; a
    /// pair of symbols that may not fit is required to, per call, with the same message.
    fn broadcast(&mut self, selectors: &[Selector]) -> Result<Vec<SymExpr>, SemaError> {
        let one = SymExpr::constant(1);
        let mismatch = |at: usize| {
            let shapes: Vec<String> = selectors.iter().map(|s| python_tuple(&s.indices.ty.shape)).collect();
            let first = selectors[0].indices.span;
            SemaError::new(
                K::BroadcastMismatch { shapes: shapes.join(" "), first },
                selectors[at].indices.span,
            )
        };
        let mut out: Vec<SymExpr> = vec![];
        for (at, s) in selectors.iter().enumerate() {
            let shape = &s.indices.ty.shape;
            let rank = out.len().max(shape.len());
            let padded = |v: &[SymExpr]| -> Vec<SymExpr> {
                std::iter::repeat_n(one.clone(), rank - v.len()).chain(v.iter().cloned()).collect()
            };
            let mut next = Vec::with_capacity(rank);
            for (x, y) in padded(&out).into_iter().zip(padded(shape)) {
                next.push(if x == y || y == one {
                    x
                } else if x == one {
                    y
                } else {
                    self.require(Cond::eq(&broadcasts(&x, &y), &one), || mismatch(at))?;
                    SymExpr::select(Cond::eq(&x, &one), &y, &x)
                });
            }
            out = next;
        }
        Ok(out)
    }
}

/// 1 where sizes `x` and `y` broadcast together (equal, or one of them 1), else 0.
fn broadcasts(x: &SymExpr, y: &SymExpr) -> SymExpr {
    let (zero, one) = (SymExpr::constant(0), SymExpr::constant(1));
    let either_one =
        SymExpr::select(Cond::eq(x, &one), &one, &SymExpr::select(Cond::eq(y, &one), &one, &zero));
    SymExpr::select(Cond::eq(x, y), &one, &either_one)
}

/// A shape as Python prints a tuple, as NumPy's message does: `(2,)`, `(3, 4)`, `()`.
fn python_tuple(shape: &[SymExpr]) -> String {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    match dims.as_slice() {
        [one] => format!("({one},)"),
        _ => format!("({})", dims.join(", ")),
    }
}
