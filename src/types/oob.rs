//! What a gather does with an index outside its axis.

/// What happens when a gathered index `j` lies outside `[-n, n)` (after negative wrap: `[0, n)`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OobMode {
    /// Evaluation fails (NumPy indexing, ONNX Gather).
    Error,
    /// The output element is 0 (OpenVINO Gather-8).
    Zero,
    /// `j` is clipped into `[0, n-1]`, negatives included (`np.take(mode="clip")`).
    Clamp,
    /// `j mod n` (`np.take(mode="wrap")`).
    Wrap,
}

/// An index that no out-of-range policy can map into its axis.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexOutOfRange;

impl OobMode {
    pub fn name(self) -> &'static str {
        match self {
            OobMode::Error => "error",
            OobMode::Zero => "zero",
            OobMode::Clamp => "clamp",
            OobMode::Wrap => "wrap",
        }
    }

    pub fn from_name(s: &str) -> Option<OobMode> {
        [OobMode::Error, OobMode::Zero, OobMode::Clamp, OobMode::Wrap].into_iter().find(|m| m.name() == s)
    }

    /// Normalizes a loaded index against an axis of `n` elements: `Ok(Some(j'))` with
    /// `0 ≤ j' < n`, `Ok(None)` for a `zero`-mode miss, `Err(IndexOutOfRange)` for an `error`-mode miss
    /// (and for clamp/wrap on an empty axis, where no index is valid).
    pub fn normalize(self, j: i128, n: i64) -> Result<Option<i64>, IndexOutOfRange> {
        let n = n as i128;
        let wrapped = if j < 0 { j + n } else { j };
        let inside = (0..n).contains(&wrapped);
        match self {
            OobMode::Error if inside => Ok(Some(wrapped as i64)),
            OobMode::Error => Err(IndexOutOfRange),
            OobMode::Zero => Ok(inside.then_some(wrapped as i64)),
            _ if n == 0 => Err(IndexOutOfRange),
            OobMode::Clamp => Ok(Some(j.clamp(0, n - 1) as i64)),
            OobMode::Wrap => Ok(Some(j.rem_euclid(n) as i64)),
        }
    }
}
