//! Index arithmetic of NumPy indexing and of the program's integer expressions: CPython's slice
//! normalization and Python's floor division, and the pieces the operator forms' normalizers
//! share (they normalize by their own sources' rules, in their files under `sema/ops/`, on
//! symbolic integers: with constants they fold to the concrete answer).

use crate::types::sym::{self, Cond, MAX_DIM, SymExpr, SymRange};

/// A normalized slice of one dimension: elements `first + j*step` for `j < len`. Every form's
/// normalization (NumPy's here, the operators' in `sema/ops/`) produces one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub first: i64,
    pub step: i64,
    pub len: i64,
}

/// NumPy / CPython slice normalization (`PySlice_Unpack` + `PySlice_AdjustIndices`), exactly:
/// bounds clamp to `[0, n]` for a positive step and to `[-1, n-1]` for a negative one.
/// `step` must not be 0 (the caller reports that with a span). The symbolic
/// [`sym::normalize_numpy`] with constants.
pub fn normalize_numpy(n: i64, start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Range {
    let c = SymExpr::constant;
    let r = sym::normalize_numpy(&c(n), start.map(c).as_ref(), stop.map(c).as_ref(), step);
    let known = |e: &SymExpr| e.as_const().expect("constants fold: no intermediate leaves i64");
    Range { first: known(&r.first), step: r.step, len: known(&r.len) }
}

/// A constant slice bound with the same effect as `v` on an axis of `n` elements, inside
/// `[-MAX_DIM-1, MAX_DIM+1]` when `n` may be symbolic: every form clamps a bound at or past
/// either end the same way, and dims are at most [`MAX_DIM`]. The normalizers' intermediates
/// then stay inside i64 whatever expression `n` is (the length of an earlier slice, say). A
/// run-time scalar is kept (a `min`/`max` around it would not survive normalization, which
/// moves sums into them), and so is any bound on a constant `n` above `MAX_DIM`.
pub fn bound_for(v: &SymExpr, n: &SymExpr) -> SymExpr {
    match v.as_const() {
        Some(c) if n.as_const().is_none_or(|n| n <= MAX_DIM) => {
            SymExpr::constant(c.clamp(-MAX_DIM - 1, MAX_DIM + 1))
        }
        _ => v.clone(),
    }
}

/// `v` counted from the end of an axis of `n` when it is negative (`v + n`), then clamped into
/// `[lo, hi]` (`hi` where `lo > hi`), as the operator forms adjust a bound. Both branches sit in
/// one `select`, which normalization keeps whole: a sum over the result does not move into the
/// clamps, where `v` itself (a run-time scalar near ±2^63) would overflow.
pub fn adjusted(v: &SymExpr, n: &SymExpr, lo: &SymExpr, hi: &SymExpr) -> SymExpr {
    let clamp = |x: &SymExpr| x.max2(lo).min2(hi);
    SymExpr::select(Cond::lt(v, &SymExpr::constant(0)), &clamp(&(v + n)), &clamp(v))
}

/// The elements `first, first+step, ...` before `end` (`step` ≠ 0), the first 0 when there is
/// none. The count never leaves i64 where `first` and `end` lie in `[-1, n]`: it is
/// `(end - first - 1) // step + 1` (by `|step|` from the other side for a negative step), ≤ 0
/// exactly when the range is empty; `i64::MIN` counts as `-i64::MAX`, which changes no count
/// of elements of an axis.
pub fn stepped_range(first: &SymExpr, end: &SymExpr, step: i64) -> SymRange {
    let k = step.max(-i64::MAX);
    let zero = SymExpr::constant(0);
    let raw = if k > 0 {
        (end - first - 1).floor_div(&SymExpr::constant(k)) + 1
    } else {
        (first - end - 1).floor_div(&SymExpr::constant(-k)) + 1
    };
    SymRange { first: SymExpr::select(Cond::le(&raw, &zero), &zero, first), step, len: zero.max2(&raw) }
}

/// Python's floor division; `None` on division by zero or overflow.
pub fn floor_div(a: i64, b: i64) -> Option<i64> {
    let q = a.checked_div(b)?;
    if (a % b != 0) && ((a < 0) != (b < 0)) { q.checked_sub(1) } else { Some(q) }
}

/// Python's `%` (the result has the divisor's sign); `None` on a zero divisor.
pub fn floor_mod(a: i64, b: i64) -> Option<i64> {
    if b == 0 {
        return None;
    }
    // checked_rem fails only for MIN % -1, whose remainder is 0.
    let r = a.checked_rem(b).unwrap_or(0);
    Some(if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elements(n: i64, start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Vec<i64> {
        let r = normalize_numpy(n, start, stop, step);
        (0..r.len).map(|j| r.first + j * r.step).collect()
    }

    /// Worked examples of NumPy's slice normalization (docs/semantics.md, NumPy indexing).
    #[test]
    fn spec_table() {
        assert_eq!(elements(4, Some(2), Some(2), None), Vec::<i64>::new());
        assert_eq!(elements(4, Some(10), None, None), Vec::<i64>::new());
        assert_eq!(elements(4, Some(4), None, None), Vec::<i64>::new());
        assert_eq!(elements(4, Some(-10), None, None), vec![0, 1, 2, 3]);
        assert_eq!(elements(4, Some(3), Some(0), Some(-1)), vec![3, 2, 1]);
        assert_eq!(elements(4, None, None, Some(-1)), vec![3, 2, 1, 0]);
        assert_eq!(elements(4, None, Some(-5), Some(-1)), vec![3, 2, 1, 0]);
        assert_eq!(elements(4, Some(-5), None, Some(-1)), Vec::<i64>::new());
        assert_eq!(elements(4, Some(10), Some(-10), Some(-2)), vec![3, 1]);
        assert_eq!(elements(0, None, None, Some(-1)), Vec::<i64>::new());
    }

    #[test]
    fn extreme_bounds() {
        assert_eq!(elements(5, Some(i64::MIN), Some(i64::MAX), Some(i64::MAX)), vec![0]);
        assert_eq!(elements(5, Some(i64::MAX), Some(i64::MIN), Some(i64::MIN)), vec![4]);
        assert_eq!(elements(5, None, None, Some(i64::MIN)), vec![4]);
        assert_eq!(elements(5, Some(i64::MIN), None, Some(2)), vec![0, 2, 4]);
    }

    #[test]
    fn python_division() {
        assert_eq!(floor_div(-7, 2), Some(-4));
        assert_eq!(floor_div(7, -2), Some(-4));
        assert_eq!(floor_div(i64::MIN, -1), None);
        assert_eq!(floor_div(1, 0), None);
        assert_eq!(floor_mod(-7, 2), Some(1));
        assert_eq!(floor_mod(7, -2), Some(-1));
        assert_eq!(floor_mod(i64::MIN, -1), Some(0));
    }
}
