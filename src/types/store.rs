//! What a store does with the element it overwrites (`=`, `+=`, `*=`), and the element
//! arithmetic the combining stores need. Slicing only moves bytes; these are the only places
//! slc computes on element values, so they are written once here for every back end.

use half::{bf16, f16};
use slc_runtime::DType;

/// How a store's value meets the element it writes (docs/semantics.md, Stores).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Combine {
    /// `=`: the value replaces the element.
    Set,
    /// `+=`: the element becomes `old + value`, `old` read from the target *before* any store
    /// (NumPy's buffered semantics: `a[[0, 0]] += 1` adds once).
    Add,
    /// `*=`: `old * value`, buffered likewise.
    Mul,
    /// A scatter's `reduction=add`: every update adds to the element as updated so far
    /// (duplicates accumulate, in C order of the updates).
    Sum,
    /// OpenVINO's `reduction=sub`: the element minus every update, accumulating likewise.
    Sub,
    /// `reduction=mul`, accumulating likewise.
    Prod,
    /// `reduction=max`, accumulating; a NaN wins (NumPy's `maximum`).
    Max,
    /// `reduction=min`, accumulating; a NaN wins (NumPy's `minimum`).
    Min,
}

const ALL: [Combine; 8] = [
    Combine::Set,
    Combine::Add,
    Combine::Mul,
    Combine::Sum,
    Combine::Sub,
    Combine::Prod,
    Combine::Max,
    Combine::Min,
];

impl Combine {
    pub fn name(self) -> &'static str {
        match self {
            Combine::Set => "set",
            Combine::Add => "add",
            Combine::Mul => "mul",
            Combine::Sum => "sum",
            Combine::Sub => "sub",
            Combine::Prod => "prod",
            Combine::Max => "max",
            Combine::Min => "min",
        }
    }

    pub fn from_name(s: &str) -> Option<Combine> {
        ALL.into_iter().find(|c| c.name() == s)
    }

    /// Whether `old` is the element as updated so far (a scatter's reduction), rather than the
    /// target's element before any update (`=`, `+=`, `*=`).
    pub fn accumulates(self) -> bool {
        matches!(self, Combine::Sum | Combine::Sub | Combine::Prod | Combine::Max | Combine::Min)
    }

    /// The element `old ∘ value` of `dtype` (little-endian bytes, each `dtype.width()` long),
    /// as NumPy computes it in the element's own type: integers wrap, floats round once (f16
    /// and bf16 through f32, exact for one operation), bools are `or` and `and`, complex
    /// numbers multiply as complex numbers. `Set` is `value`.
    pub fn apply(self, dtype: DType, old: &[u8], value: &[u8], out: &mut [u8]) {
        let w = dtype.width();
        if self == Combine::Set {
            out[..w].copy_from_slice(&value[..w]);
            return;
        }
        if matches!(self, Combine::Max | Combine::Min) {
            let pick_value = extreme(dtype, old, value, self == Combine::Max);
            out[..w].copy_from_slice(if pick_value { &value[..w] } else { &old[..w] });
            return;
        }
        #[derive(PartialEq)]
        enum Op {
            Add,
            Sub,
            Mul,
        }
        let op = match self {
            Combine::Add | Combine::Sum => Op::Add,
            Combine::Sub => Op::Sub,
            _ => Op::Mul,
        };
        macro_rules! int {
            ($t:ty) => {{
                let a = <$t>::from_le_bytes(old[..w].try_into().expect("width"));
                let b = <$t>::from_le_bytes(value[..w].try_into().expect("width"));
                let r = match op {
                    Op::Add => a.wrapping_add(b),
                    Op::Sub => a.wrapping_sub(b),
                    Op::Mul => a.wrapping_mul(b),
                };
                out[..w].copy_from_slice(&r.to_le_bytes());
            }};
        }
        macro_rules! float {
            ($t:ty) => {{
                let a = <$t>::from_le_bytes(old[..w].try_into().expect("width"));
                let b = <$t>::from_le_bytes(value[..w].try_into().expect("width"));
                let r = match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                };
                out[..w].copy_from_slice(&r.to_le_bytes());
            }};
        }
        macro_rules! half {
            ($t:ty) => {{
                let a = <$t>::from_le_bytes(old[..w].try_into().expect("width")).to_f32();
                let b = <$t>::from_le_bytes(value[..w].try_into().expect("width")).to_f32();
                // One f32 operation on two half-precision values is exact or correctly rounded
                // before the final rounding, as NumPy's float16 arithmetic gives.
                let r = <$t>::from_f32(match op {
                    Op::Add => a + b,
                    Op::Sub => a - b,
                    Op::Mul => a * b,
                });
                out[..w].copy_from_slice(&r.to_le_bytes());
            }};
        }
        macro_rules! complex {
            ($t:ty) => {{
                let h = w / 2;
                let part = |b: &[u8], i: usize| {
                    <$t>::from_le_bytes(b[i * h..(i + 1) * h].try_into().expect("width"))
                };
                let (ar, ai, br, bi) = (part(old, 0), part(old, 1), part(value, 0), part(value, 1));
                let (r, i) = match op {
                    Op::Add => (ar + br, ai + bi),
                    Op::Sub => (ar - br, ai - bi),
                    Op::Mul => (ar * br - ai * bi, ar * bi + ai * br),
                };
                out[..h].copy_from_slice(&r.to_le_bytes());
                out[h..w].copy_from_slice(&i.to_le_bytes());
            }};
        }
        match dtype {
            DType::Bool => {
                // NumPy's bool `+` is `or`, `*` is `and`; `-` (OpenVINO's `sub`) is `xor`.
                let (a, b) = (old[0] != 0, value[0] != 0);
                out[0] = u8::from(match op {
                    Op::Add => a || b,
                    Op::Sub => a != b,
                    Op::Mul => a && b,
                });
            }
            DType::I8 => int!(i8),
            DType::I16 => int!(i16),
            DType::I32 => int!(i32),
            DType::I64 => int!(i64),
            DType::U8 => int!(u8),
            DType::U16 => int!(u16),
            DType::U32 => int!(u32),
            DType::U64 => int!(u64),
            DType::F16 => half!(f16),
            DType::BF16 => half!(bf16),
            DType::F32 => float!(f32),
            DType::F64 => float!(f64),
            DType::C64 => complex!(f32),
            DType::C128 => complex!(f64),
        }
    }
}

/// Whether `value` replaces `old` under `max` (`greater`) or `min`: it is larger (smaller), or a
/// NaN where `old` is not (NumPy's `maximum` and `minimum` propagate NaNs). Complex numbers
/// compare lexicographically, as NumPy orders them.
fn extreme(dtype: DType, old: &[u8], value: &[u8], greater: bool) -> bool {
    use std::cmp::Ordering;
    let w = dtype.width();
    // A NaN already there stays; a NaN value replaces anything else (as `maximum` and
    // `minimum` propagate them); otherwise the order decides.
    let float = |v: f64, o: f64| -> Result<Ordering, bool> {
        match (v.is_nan(), o.is_nan()) {
            (_, true) => Err(false),
            (true, false) => Err(true),
            _ => Ok(v.partial_cmp(&o).unwrap_or(Ordering::Equal)),
        }
    };
    macro_rules! int {
        ($t:ty) => {
            <$t>::from_le_bytes(value[..w].try_into().expect("width"))
                .cmp(&<$t>::from_le_bytes(old[..w].try_into().expect("width")))
        };
    }
    macro_rules! fl {
        ($t:ty, $conv:expr) => {{
            let conv = $conv;
            let v: f64 = conv(<$t>::from_le_bytes(value[..w].try_into().expect("width")));
            let o: f64 = conv(<$t>::from_le_bytes(old[..w].try_into().expect("width")));
            match float(v, o) {
                Ok(order) => order,
                Err(replace) => return replace,
            }
        }};
    }
    let part = |b: &[u8], i: usize, h: usize| -> f64 {
        match h {
            4 => f32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().expect("width")) as f64,
            _ => f64::from_le_bytes(b[i * 8..i * 8 + 8].try_into().expect("width")),
        }
    };
    let order = match dtype {
        DType::Bool => (value[0] != 0).cmp(&(old[0] != 0)),
        DType::I8 => int!(i8),
        DType::I16 => int!(i16),
        DType::I32 => int!(i32),
        DType::I64 => int!(i64),
        DType::U8 => int!(u8),
        DType::U16 => int!(u16),
        DType::U32 => int!(u32),
        DType::U64 => int!(u64),
        DType::F16 => fl!(f16, |x: f16| x.to_f64()),
        DType::BF16 => fl!(bf16, |x: bf16| x.to_f64()),
        DType::F32 => fl!(f32, |x: f32| x as f64),
        DType::F64 => fl!(f64, |x: f64| x),
        DType::C64 | DType::C128 => {
            let h = w / 2;
            let (vr, vi, or, oi) = (part(value, 0, h), part(value, 1, h), part(old, 0, h), part(old, 1, h));
            if vr.is_nan() || vi.is_nan() {
                return !(or.is_nan() || oi.is_nan());
            }
            if or.is_nan() || oi.is_nan() {
                return false;
            }
            vr.partial_cmp(&or)
                .unwrap_or(Ordering::Equal)
                .then(vi.partial_cmp(&oi).unwrap_or(Ordering::Equal))
        }
    };
    if greater { order == Ordering::Greater } else { order == Ordering::Less }
}

/// The element of `dtype` that the integer literal `v` stores as (NumPy 2's assignment of a
/// Python `int`): an integer type must hold it exactly (`None` otherwise: NumPy's
/// OverflowError), a bool is `v != 0`, a float the nearest value, a complex number `v + 0j`.
pub fn literal_element(dtype: DType, v: i64) -> Option<Vec<u8>> {
    let w = dtype.width();
    Some(match dtype {
        DType::Bool => vec![u8::from(v != 0)],
        d if d.is_integer() => {
            let fits = match (d.is_signed(), w) {
                (true, 8) => true,
                (false, 8) => v >= 0,
                (true, _) => (-(1i64 << (8 * w - 1))..(1i64 << (8 * w - 1))).contains(&v),
                (false, _) => (0..(1i64 << (8 * w))).contains(&v),
            };
            if !fits {
                return None;
            }
            v.to_le_bytes()[..w].to_vec()
        }
        DType::F16 => f16::from_f64(v as f64).to_le_bytes().to_vec(),
        DType::BF16 => bf16::from_f64(v as f64).to_le_bytes().to_vec(),
        DType::F32 => (v as f32).to_le_bytes().to_vec(),
        DType::F64 => (v as f64).to_le_bytes().to_vec(),
        DType::C64 => [(v as f32).to_le_bytes(), 0f32.to_le_bytes()].concat(),
        DType::C128 => [(v as f64).to_le_bytes(), 0f64.to_le_bytes()].concat(),
        _ => unreachable!("every dtype is covered above"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn apply(c: Combine, d: DType, a: &[u8], b: &[u8]) -> Vec<u8> {
        let mut out = vec![0; d.width()];
        c.apply(d, a, b, &mut out);
        out
    }

    #[test]
    fn integers_wrap_as_numpy() {
        assert_eq!(apply(Combine::Add, DType::U8, &[250], &[10]), vec![4]);
        assert_eq!(apply(Combine::Mul, DType::I8, &[0x40], &[2]), vec![0x80]);
        let (a, b) = (i32::MAX.to_le_bytes(), 1i32.to_le_bytes());
        assert_eq!(apply(Combine::Add, DType::I32, &a, &b), i32::MIN.to_le_bytes());
    }

    #[test]
    fn floats_and_halves_round_once() {
        let r = apply(Combine::Add, DType::F32, &0.1f32.to_le_bytes(), &0.2f32.to_le_bytes());
        assert_eq!(r, (0.1f32 + 0.2f32).to_le_bytes());
        let (a, b) = (f16::from_f32(2048.0), f16::from_f32(1.0));
        let r = apply(Combine::Add, DType::F16, &a.to_le_bytes(), &b.to_le_bytes());
        assert_eq!(r, f16::from_f32(2048.0).to_le_bytes(), "2049 is not an f16: rounds to even");
        let r = apply(
            Combine::Mul,
            DType::BF16,
            &bf16::from_f32(3.0).to_le_bytes(),
            &bf16::from_f32(0.5).to_le_bytes(),
        );
        assert_eq!(r, bf16::from_f32(1.5).to_le_bytes());
    }

    #[test]
    fn bools_and_complex() {
        assert_eq!(apply(Combine::Add, DType::Bool, &[1], &[1]), vec![1]);
        assert_eq!(apply(Combine::Mul, DType::Bool, &[1], &[0]), vec![0]);
        // (1 + 2j)(3 + 4j) = -5 + 10j
        let c = |r: f32, i: f32| [r.to_le_bytes(), i.to_le_bytes()].concat();
        assert_eq!(apply(Combine::Mul, DType::C64, &c(1.0, 2.0), &c(3.0, 4.0)), c(-5.0, 10.0));
        assert_eq!(apply(Combine::Set, DType::C64, &c(1.0, 2.0), &c(3.0, 4.0)), c(3.0, 4.0));
    }

    #[test]
    fn reductions_accumulate_and_nans_win() {
        assert_eq!(apply(Combine::Sum, DType::U8, &[250], &[10]), vec![4]);
        assert_eq!(apply(Combine::Max, DType::I8, &[0xff], &[1]), vec![1]);
        assert_eq!(apply(Combine::Min, DType::I8, &[0xff], &[1]), vec![0xff]);
        let f = |x: f32| x.to_le_bytes().to_vec();
        assert_eq!(apply(Combine::Max, DType::F32, &f(1.0), &f(f32::NAN))[..], f(f32::NAN)[..]);
        assert_eq!(apply(Combine::Min, DType::F32, &f(f32::NAN), &f(1.0))[..], f(f32::NAN)[..]);
        assert_eq!(apply(Combine::Min, DType::F32, &f(2.0), &f(-1.0)), f(-1.0));
        assert!(Combine::Sum.accumulates() && !Combine::Add.accumulates());
        assert_eq!(apply(Combine::Sub, DType::U8, &[1], &[2]), vec![255]);
        assert_eq!(apply(Combine::Sub, DType::F32, &f(1.0), &f(0.25)), f(0.75));
        for c in ALL {
            assert_eq!(Combine::from_name(c.name()), Some(c));
        }
    }

    #[test]
    fn literals_fit_or_are_refused() {
        assert_eq!(literal_element(DType::U8, 255), Some(vec![255]));
        assert_eq!(literal_element(DType::U8, 256), None);
        assert_eq!(literal_element(DType::U8, -1), None);
        assert_eq!(literal_element(DType::I8, -128), Some(vec![0x80]));
        assert_eq!(literal_element(DType::U64, -1), None);
        assert_eq!(literal_element(DType::Bool, 7), Some(vec![1]));
        assert_eq!(literal_element(DType::F32, 3), Some(3f32.to_le_bytes().to_vec()));
    }
}
