//! Element types. Slicing moves bytes, so most of slc only needs a dtype's width; index
//! tensors also need its integer interpretation.

use std::fmt;
use std::str::FromStr;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DType {
    Bool,
    I8,
    I16,
    I32,
    I64,
    U8,
    U16,
    U32,
    U64,
    F16,
    /// bfloat16: NumPy has no such type, so it has no `.npy` form.
    BF16,
    F32,
    F64,
    /// Two f32s, real then imaginary (NumPy's complex64): slicing moves their bytes.
    C64,
    /// Two f64s (NumPy's complex128).
    C128,
}

use DType::*;

/// IMPORTANT: keep in sync — name, NumPy spelling, width, `.npy` descr (little-endian).
const TABLE: [(DType, &str, &str, usize, Option<&str>); 15] = [
    (Bool, "bool", "bool", 1, Some("|b1")),
    (I8, "i8", "int8", 1, Some("|i1")),
    (I16, "i16", "int16", 2, Some("<i2")),
    (I32, "i32", "int32", 4, Some("<i4")),
    (I64, "i64", "int64", 8, Some("<i8")),
    (U8, "u8", "uint8", 1, Some("|u1")),
    (U16, "u16", "uint16", 2, Some("<u2")),
    (U32, "u32", "uint32", 4, Some("<u4")),
    (U64, "u64", "uint64", 8, Some("<u8")),
    (F16, "f16", "float16", 2, Some("<f2")),
    (BF16, "bf16", "bfloat16", 2, None),
    (F32, "f32", "float32", 4, Some("<f4")),
    (F64, "f64", "float64", 8, Some("<f8")),
    (C64, "c64", "complex64", 8, Some("<c8")),
    (C128, "c128", "complex128", 16, Some("<c16")),
];

impl DType {
    pub const ALL: [DType; 15] = [Bool, I8, I16, I32, I64, U8, U16, U32, U64, F16, BF16, F32, F64, C64, C128];

    fn row(self) -> &'static (DType, &'static str, &'static str, usize, Option<&'static str>) {
        &TABLE[self as usize]
    }

    /// Bytes per element.
    pub fn width(self) -> usize {
        self.row().3
    }

    /// slc's spelling: `f32`, `i64`, `bool`, ...
    pub fn name(self) -> &'static str {
        self.row().1
    }

    /// The slc spelling or the NumPy one (`float32`, `int64`, ...).
    pub fn from_name(s: &str) -> Option<DType> {
        TABLE.iter().find(|r| r.1 == s || r.2 == s).map(|r| r.0)
    }

    /// Signed or unsigned integers (not bool, not floats).
    /// The value of one element of this integer dtype from its little-endian bytes (exactly
    /// `width` of them); `None` for other dtypes or lengths.
    pub fn int_from_le(self, bytes: &[u8]) -> Option<i128> {
        let w = self.width();
        if !self.is_integer() || bytes.len() != w {
            return None;
        }
        let mut wide = [0u8; 16];
        wide[..w].copy_from_slice(bytes);
        if self.is_signed() && bytes[w - 1] & 0x80 != 0 {
            wide[w..].fill(0xff);
        }
        Some(i128::from_le_bytes(wide))
    }

    pub fn is_integer(self) -> bool {
        matches!(self, I8 | I16 | I32 | I64 | U8 | U16 | U32 | U64)
    }

    pub fn is_signed(self) -> bool {
        matches!(self, I8 | I16 | I32 | I64)
    }

    pub fn is_float(self) -> bool {
        matches!(self, F16 | BF16 | F32 | F64)
    }

    pub fn is_complex(self) -> bool {
        matches!(self, C64 | C128)
    }

    /// Bytes per byte-swapped unit: the element's width, or one part's for a complex (its real
    /// and imaginary parts are swapped separately).
    pub fn swap_width(self) -> usize {
        if self.is_complex() { self.width() / 2 } else { self.width() }
    }

    /// The little-endian `.npy` descr; `None` for bf16.
    pub fn npy_descr(self) -> Option<&'static str> {
        self.row().4
    }

    /// The dtype of a `.npy` descr of any byte order (`<f4`, `>i8`, `|u1`, `=f8`), with whether
    /// its bytes must be swapped to read them on this (little-endian) host.
    pub fn from_npy_descr(descr: &str) -> Option<(DType, bool)> {
        // By characters: a header is arbitrary text, and its first character may take several bytes.
        let mut chars = descr.chars();
        let order = match chars.next()? {
            '<' | '|' | '=' => false,
            '>' => true,
            _ => return None,
        };
        let code = chars.as_str();
        let dtype = TABLE.iter().find(|r| r.4.is_some_and(|d| &d[1..] == code))?.0;
        Some((dtype, order && dtype.width() > 1))
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// The error of parsing a dtype name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown dtype `{0}` (expected one of bool, i8, i16, i32, i64, u8, u16, u32, u64, f16, bf16, f32, f64, c64, c128)"
)]
pub struct UnknownDType(pub String);

impl FromStr for DType {
    type Err = UnknownDType;

    fn from_str(s: &str) -> Result<DType, UnknownDType> {
        DType::from_name(s).ok_or_else(|| UnknownDType(s.to_string()))
    }
}

/// `v` rounded once to the nearest f16 (ties to even), as NumPy converts a double. (`half`'s
/// `from_f64` drops the double's low 32 bits first, which misrounds a value just above a tie.)
pub fn f16_of_f64(v: f64) -> half::f16 {
    half::f16::from_f32(f32_round_to_odd(v))
}

/// `v` rounded once to the nearest bf16 (ties to even), as ml_dtypes converts a double.
pub fn bf16_of_f64(v: f64) -> half::bf16 {
    half::bf16::from_f32(f32_round_to_odd(v))
}

/// `v` as an f32 rounded to odd: toward zero, its last bit set where that was inexact. Rounded
/// again to a format at least two bits narrower (f16, bf16), it gives what rounding `v` once
/// would: the set bit stands for everything dropped, so no tie appears that `v` did not have.
fn f32_round_to_odd(v: f64) -> f32 {
    let nearest = v as f32;
    if v.is_nan() || nearest as f64 == v {
        return nearest;
    }
    let mut bits = nearest.to_bits();
    // One step toward zero where rounding went away from it (from infinity: to the largest).
    if (nearest as f64).abs() > v.abs() {
        bits -= 1;
    }
    f32::from_bits(bits | 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_order_matches_the_enum() {
        for (i, d) in DType::ALL.iter().enumerate() {
            assert_eq!(TABLE[i].0, *d);
            assert_eq!(DType::from_name(d.name()), Some(*d));
            assert_eq!(DType::from_name(TABLE[i].2), Some(*d));
        }
    }

    #[test]
    fn npy_descrs() {
        assert_eq!(DType::from_npy_descr("<f4"), Some((F32, false)));
        assert_eq!(DType::from_npy_descr(">i8"), Some((I64, true)));
        assert_eq!(DType::from_npy_descr("\u{85}|i1"), None);
        assert_eq!(DType::from_npy_descr(""), None);
        assert_eq!(DType::from_npy_descr("|b1"), Some((Bool, false)));
        assert_eq!(DType::from_npy_descr(">u1"), Some((U8, false)));
        assert_eq!(DType::from_npy_descr("=f8"), Some((F64, false)));
        assert_eq!(DType::from_npy_descr("<c8"), Some((C64, false)));
        assert_eq!(DType::from_npy_descr(">c16"), Some((C128, true)));
        assert_eq!((C128.swap_width(), C64.swap_width(), F64.swap_width()), (8, 4, 8));
        assert_eq!(DType::from_npy_descr("<c32"), None);
        assert_eq!(DType::from_npy_descr("|O"), None);
        assert_eq!(BF16.npy_descr(), None);
        assert_eq!("float16".parse::<DType>(), Ok(F16));
        assert!("q8".parse::<DType>().is_err());
    }

    #[test]
    fn doubles_round_once_to_f16_and_bf16() {
        // Just above a tie at f16 (1 + 2^-11) and bf16 (1 + 2^-8): up, where rounding through
        // f32 first (or dropping the double's low bits) lands on the tie and rounds to even.
        assert_eq!(f16_of_f64(1.0 + 2f64.powi(-11) + 2f64.powi(-30)).to_f64(), 1.0 + 2f64.powi(-10));
        assert_eq!(bf16_of_f64(1.0 + 2f64.powi(-8) + 2f64.powi(-30)).to_f64(), 1.0 + 2f64.powi(-7));
        // Below: down; on the tie: to even; exact values, signs, overflow and NaN kept.
        assert_eq!(f16_of_f64(-(1.0 + 2f64.powi(-11) - 2f64.powi(-30))).to_f64(), -1.0);
        assert_eq!(f16_of_f64(1.0 + 3.0 * 2f64.powi(-11)).to_f64(), 1.0 + 2f64.powi(-9));
        assert_eq!(f16_of_f64(65504.0).to_f64(), 65504.0);
        assert_eq!(f16_of_f64(65520.0).to_f64(), f64::INFINITY);
        assert_eq!(bf16_of_f64(1e39).to_f64(), f64::INFINITY);
        assert_eq!(bf16_of_f64(-1e-50).to_bits(), 0x8000);
        assert_eq!(f16_of_f64(2f64.powi(-25) + 2f64.powi(-40)).to_bits(), 1, "the smallest subnormal");
        assert!(f16_of_f64(f64::NAN).is_nan() && bf16_of_f64(f64::NAN).is_nan());
    }
}
