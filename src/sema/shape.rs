//! Index arithmetic of NumPy indexing and of the program's integer expressions: CPython's slice
//! normalization and Python's floor division. The operator forms normalize by their own
//! sources' rules, in their files under `sema/ops/`.

/// A normalized slice of one dimension: elements `first + j*step` for `j < len`. Every form's
/// normalization (NumPy's here, the operators' in `sema/ops/`) produces one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Range {
    pub first: i64,
    pub step: i64,
    pub len: i64,
}

impl From<Range> for super::typed::ViewDim {
    fn from(r: Range) -> Self {
        super::typed::ViewDim::Range { start: r.first, step: r.step, len: r.len }
    }
}

/// NumPy / CPython slice normalization (`PySlice_Unpack` + `PySlice_AdjustIndices`), exactly:
/// bounds clamp to `[0, n]` for a positive step and to `[-1, n-1]` for a negative one.
/// `step` must not be 0 (the caller reports that with a span).
pub fn normalize_numpy(n: i64, start: Option<i64>, stop: Option<i64>, step: Option<i64>) -> Range {
    let k = step.unwrap_or(1).max(-i64::MAX); // CPython's guard, so that -k cannot overflow
    debug_assert!(k != 0);
    // i128 keeps `v + n` exact for any i64 bound.
    let adjust = |v: i64| -> i64 {
        let (v, n) = (v as i128, n as i128);
        let v = if v < 0 {
            let v = v + n;
            if v < 0 { if k < 0 { -1 } else { 0 } } else { v }
        } else if v >= n {
            if k < 0 { n - 1 } else { n }
        } else {
            v
        };
        v as i64
    };
    let first = match start {
        None => {
            if k < 0 {
                n - 1
            } else {
                0
            }
        }
        Some(v) => adjust(v),
    };
    let end = match stop {
        None => {
            if k < 0 {
                -1
            } else {
                n
            }
        }
        Some(v) => adjust(v),
    };
    let len = if k > 0 {
        if first < end { (end - first - 1) / k + 1 } else { 0 }
    } else if end < first {
        // (first - end - 1) fits: first ≤ n-1 and end ≥ -1.
        (first - end - 1) / (-k) + 1
    } else {
        0
    };
    Range { first: if len == 0 { 0 } else { first }, step: k, len }
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
