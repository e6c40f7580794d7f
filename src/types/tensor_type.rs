//! A tensor's type: its dtype and static shape, printed and parsed as `f32[2, 3]`.

use slc_runtime::DType;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorType {
    pub dtype: DType,
    pub shape: Vec<i64>,
}

impl fmt::Display for TensorType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.dtype, ShapeDisplay(&self.shape))
    }
}

/// Prints `[2, 3, 4]`.
pub struct ShapeDisplay<'a>(pub &'a [i64]);

impl fmt::Display for ShapeDisplay<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[")?;
        for (i, d) in self.0.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{d}")?;
        }
        write!(f, "]")
    }
}

impl TensorType {
    /// A signature from a dtype and dimensions (`"f32[4,5]".parse()` is the same).
    ///
    /// ```
    /// use slc::{DType, types::TensorType};
    /// assert_eq!(TensorType::of(DType::F32, &[4, 5]), "f32[4,5]".parse().unwrap());
    /// ```
    pub fn of(dtype: DType, shape: &[usize]) -> TensorType {
        TensorType { dtype, shape: shape.iter().map(|&d| i64::try_from(d).unwrap_or(i64::MAX)).collect() }
    }
}

impl std::str::FromStr for TensorType {
    type Err = String;

    /// Parses the printed form `f32[2, 3]` (`i64[]` is 0-d).
    fn from_str(s: &str) -> Result<TensorType, String> {
        let usage = || format!("`{s}` is not a tensor type DTYPE[d0, d1, ...] (e.g. f32[2,3,4])");
        let (dtype, dims) = s.trim().split_once('[').ok_or_else(usage)?;
        let dtype =
            DType::from_name(dtype.trim()).ok_or_else(|| format!("unknown dtype `{}`", dtype.trim()))?;
        let dims = dims.trim_end().strip_suffix(']').ok_or_else(usage)?;
        let shape = dims
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .map(|d| {
                d.parse::<i64>()
                    .ok()
                    .filter(|&d| d >= 0)
                    .ok_or_else(|| format!("`{d}` is not a dimension size"))
            })
            .collect::<Result<Vec<i64>, String>>()?;
        Ok(TensorType { dtype, shape })
    }
}
