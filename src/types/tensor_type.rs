//! A tensor's type: its dtype and shape, printed and parsed as `f32[2, 3]`. The dims are i64 in a
//! concrete type (`TensorType`, what every back end takes) and symbolic integers in a generic one
//! ([`SymTensorType`]: `f32[N, M-1]`, docs/design/shape-generic.md); a generic type whose dims
//! are all constants is a concrete type ([`SymTensorType::concrete`]).

use super::sym::SymExpr;
use slc_runtime::DType;
use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct TensorType<D = i64> {
    pub dtype: DType,
    pub shape: Vec<D>,
}

/// A tensor type whose dims may be symbolic.
pub type SymTensorType = TensorType<SymExpr>;

impl<D: fmt::Display> fmt::Display for TensorType<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", self.dtype, ShapeDisplay(&self.shape))
    }
}

/// Prints `[2, 3, 4]` (or `[N, M-1]`).
pub struct ShapeDisplay<'a, D = i64>(pub &'a [D]);

impl<D: fmt::Display> fmt::Display for ShapeDisplay<'_, D> {
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

    /// This type with every dim a symbol named from `input` and the axis (`_a0` for axis 0 of
    /// `a`), as `?` names them: the type of every tensor of this dtype and rank.
    pub fn symbolic(&self, input: &str) -> SymTensorType {
        let dims = (0..self.shape.len()).map(|axis| SymExpr::dim(&format!("_{input}{axis}"))).collect();
        TensorType { dtype: self.dtype, shape: dims }
    }

    /// This type with constant symbolic dims.
    pub fn generic(&self) -> SymTensorType {
        TensorType { dtype: self.dtype, shape: self.shape.iter().map(|&d| SymExpr::constant(d)).collect() }
    }
}

impl SymTensorType {
    /// The dims, when every one is a constant.
    pub fn concrete_shape(&self) -> Option<Vec<i64>> {
        self.shape.iter().map(SymExpr::as_const).collect()
    }

    /// The concrete type, when every dim is a constant.
    pub fn concrete(&self) -> Option<TensorType> {
        Some(TensorType { dtype: self.dtype, shape: self.concrete_shape()? })
    }

    /// Whether every dim is a constant.
    pub fn is_concrete(&self) -> bool {
        self.shape.iter().all(|d| d.as_const().is_some())
    }

    /// Parses the type of input `input`: as [`FromStr`](std::str::FromStr), where each `?` dim
    /// is a dimension symbol named from the input and the axis (`_a0` for axis 0 of `a`), so
    /// that plans print stably.
    pub fn parse_for(text: &str, input: &str) -> Result<SymTensorType, String> {
        let (dtype, dims) = split_type(text)?;
        let shape = dims
            .into_iter()
            .enumerate()
            .map(|(axis, d)| match d {
                "?" => {
                    let name = format!("_{input}{axis}");
                    SymExpr::parse(&name).map_err(|_| format!("`{input}` cannot name an anonymous dimension"))
                }
                d => parse_sym_dim(d),
            })
            .collect::<Result<Vec<SymExpr>, String>>()?;
        Ok(TensorType { dtype, shape })
    }
}

/// Splits `f32[2, N]` into its dtype and its dims' texts. A dim may hold commas inside
/// parentheses (`max(0, N-1)`).
fn split_type(s: &str) -> Result<(DType, Vec<&str>), String> {
    let usage = || format!("`{s}` is not a tensor type DTYPE[d0, d1, ...] (e.g. f32[2,3,4] or f32[N, M])");
    let (dtype, dims) = s.trim().split_once('[').ok_or_else(usage)?;
    let dtype = DType::from_name(dtype.trim()).ok_or_else(|| format!("unknown dtype `{}`", dtype.trim()))?;
    let dims = dims.trim_end().strip_suffix(']').ok_or_else(usage)?;
    let (mut out, mut depth, mut start) = (vec![], 0i32, 0);
    for (i, c) in dims.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => depth -= 1,
            ',' if depth == 0 => {
                out.push(dims[start..i].trim());
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(dims[start..].trim());
    // `i64[]` is 0-d, and an empty item adds no dim.
    out.retain(|d| !d.is_empty());
    Ok((dtype, out))
}

/// A symbolic dim: a non-negative constant or an expression (`N`, `N-1`, `max(0, N//2-1)`).
fn parse_sym_dim(d: &str) -> Result<SymExpr, String> {
    let e = SymExpr::parse(d).map_err(|e| format!("`{d}` is not a dimension: {e}"))?;
    match e.as_const() {
        Some(c) if c < 0 => Err(format!("`{d}` is not a dimension size")),
        _ => Ok(e),
    }
}

impl std::str::FromStr for TensorType {
    type Err = String;

    /// Parses the printed form `f32[2, 3]` (`i64[]` is 0-d).
    fn from_str(s: &str) -> Result<TensorType, String> {
        let (dtype, dims) = split_type(s)?;
        let shape = dims
            .into_iter()
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

impl std::str::FromStr for SymTensorType {
    type Err = String;

    /// Parses `f32[N, 3]`, `f32[N-1, M]` and every printed form (`?` needs the input's name:
    /// [`SymTensorType::parse_for`]).
    fn from_str(s: &str) -> Result<SymTensorType, String> {
        let (dtype, dims) = split_type(s)?;
        let shape = dims
            .into_iter()
            .map(|d| match d {
                "?" => Err("an anonymous dimension `?` needs the input's name".to_string()),
                d => parse_sym_dim(d),
            })
            .collect::<Result<Vec<SymExpr>, String>>()?;
        Ok(TensorType { dtype, shape })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbolic_types_parse_and_print() {
        let t: SymTensorType = "f32[N, 3]".parse().unwrap();
        assert_eq!(t.to_string(), "f32[N, 3]");
        assert!(!t.is_concrete());
        assert_eq!(t.concrete(), None);
        let t: SymTensorType = "f32[max(0, N//2-1), M]".parse().unwrap();
        assert_eq!(t.to_string(), "f32[max(0, N//2-1), M]");
        assert_eq!(t.to_string().parse::<SymTensorType>().unwrap(), t);
        let t: SymTensorType = "i64[]".parse().unwrap();
        assert_eq!(t.concrete(), Some("i64[]".parse().unwrap()));
        let t: SymTensorType = "u8[2, 3]".parse().unwrap();
        assert_eq!(t.concrete(), Some(TensorType { dtype: DType::U8, shape: vec![2, 3] }));
        assert_eq!(t.concrete().unwrap().generic(), t);
    }

    #[test]
    fn anonymous_dims_are_named_from_input_and_axis() {
        let t = SymTensorType::parse_for("f32[?, 4, ?]", "a").unwrap();
        assert_eq!(t.to_string(), "f32[_a0, 4, _a2]");
        assert!("f32[?]".parse::<SymTensorType>().unwrap_err().contains("input's name"));
    }

    #[test]
    fn bad_symbolic_types_are_refused() {
        for bad in ["f32[N", "f33[N]", "f32[-1]", "f32[N+]", "f32[min]"] {
            assert!(bad.parse::<SymTensorType>().is_err(), "{bad}");
        }
        assert!("f32[N]".parse::<TensorType>().is_err());
    }
}
