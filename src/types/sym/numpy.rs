//! NumPy's slice normalization in symbols.

use super::{Cond, SymExpr};

/// A normalized slice in symbols: elements `first + j*step` for `j < len`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymRange {
    pub first: SymExpr,
    pub step: i64,
    pub len: SymExpr,
}

/// NumPy / CPython slice normalization (`PySlice_AdjustIndices`) of a dimension `n` with bounds
/// that are expressions (constants or run-time scalars) and a constant step, exactly as
/// `sema::shape::normalize_numpy`, `len == 0 ⇒ first == 0` included: for every binding, the
/// values are that function's. No intermediate of the result leaves i64 (its [`SymExpr::eval_i64`]
/// is defined wherever `n` is a dimension up to [`MAX_DIM`](super::MAX_DIM) and the bounds are i64).
/// `step` must not be 0.
pub fn normalize_numpy(
    n: &SymExpr,
    start: Option<&SymExpr>,
    stop: Option<&SymExpr>,
    step: Option<i64>,
) -> SymRange {
    let k = step.unwrap_or(1).max(-i64::MAX);
    assert!(k != 0, "step 0");
    let zero = SymExpr::constant(0);
    let (lo, hi) = if k < 0 { (SymExpr::constant(-1), n - 1) } else { (zero.clone(), n.clone()) };
    // v < 0: v + n clamped below; else v clamped above. v + n is formed only for v < 0.
    let adjust = |v: &SymExpr| SymExpr::select(Cond::lt(v, &zero), &lo.max2(&(v + n)), &v.min2(&hi));
    let first = start.map_or_else(|| if k < 0 { n - 1 } else { zero.clone() }, adjust);
    let end = stop.map_or_else(|| if k < 0 { SymExpr::constant(-1) } else { n.clone() }, adjust);
    // The count as CPython computes it when it is positive; ≤ 0 exactly when the slice is empty.
    let raw = if k > 0 {
        (&end - &first - 1).floor_div(&SymExpr::constant(k)) + 1
    } else {
        (&first - &end - 1).floor_div(&SymExpr::constant(-k)) + 1
    };
    let len = zero.max2(&raw);
    // `first` where the slice is not empty, which the clamps may not reach.
    let nonempty = match start.and_then(SymExpr::as_const) {
        // 0 <= s < end <= n.
        Some(s) if k > 0 && s >= 0 => SymExpr::constant(s),
        // -1 <= end < first = max(-1, s + n), so s + n >= 0.
        Some(s) if k < 0 && s < 0 => n.add_const(s),
        _ => first,
    };
    let first = SymExpr::select(Cond::le(&raw, &zero), &zero, &nonempty);
    SymRange { first, step: k, len }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;
    use super::*;

    /// What a verifier needs: a slice's bounds proven under "the slice is not empty".
    #[test]
    fn proofs_under_assumptions() {
        let n = n();
        for (start, step) in [(Some(1), 1), (None, -1), (Some(3), 2), (Some(-2), -1), (None, 3)] {
            let r = normalize_numpy(&n, start.map(SymExpr::constant).as_ref(), None, Some(step));
            let nonempty = Assumptions::default().assume(&Cond::le(&r.len, &0.into()), false);
            let last = &r.first + &((&r.len - 1) * step);
            let what = format!("[{start:?}::{step}]: first {} len {} under {nonempty:?}", r.first, r.len);
            for at in [&r.first, &last] {
                assert_eq!(SymExpr::prove_le(&0.into(), at, &nonempty), Some(true), "{what}");
                assert_eq!(SymExpr::prove_le(at, &(&n - 1), &nonempty), Some(true), "{what}");
            }
        }
        let r = normalize_numpy(&n, Some(&1.into()), None, None);
        let asm = Assumptions::default().assume(&Cond::le(&r.len, &0.into()), false);
        assert_eq!(r.first.simplify(&asm), SymExpr::constant(1));
        assert_eq!(r.len.simplify(&asm), &n - 1);
        // Without the assumption nothing is proven.
        assert_eq!(SymExpr::prove_le(&r.first, &(&n - 1), &Assumptions::default()), None);
    }
}
