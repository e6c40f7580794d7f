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
    /// A scatter's reduction: the element becomes the reduction of its updates, in C order of
    /// the updates (duplicates accumulate), starting from the element as bound (`init`: every
    /// scatter but OpenVINO's `use_init_val=false`) or from the reduction's identity.
    Reduce { op: Reduction, init: bool },
}

/// A scatter's reduction operator (docs/semantics.md, Scatters).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    /// ONNX's `add`, OpenVINO's `sum`.
    Sum,
    /// OpenVINO's `sub`: the element minus every update.
    Sub,
    /// ONNX's `mul`, OpenVINO's `prod`.
    Prod,
    /// A NaN, already there or arriving, wins; ties keep the element.
    Max,
    /// As `Max`.
    Min,
    /// OpenVINO's `mean`: the sum divided by the number of its terms once all are in (integers
    /// round down).
    Mean,
}

const REDUCTIONS: [Reduction; 6] =
    [Reduction::Sum, Reduction::Sub, Reduction::Prod, Reduction::Max, Reduction::Min, Reduction::Mean];

impl Reduction {
    /// Its name in plan text, and with the suffix `_no_init` when the element is not an operand.
    fn names(self) -> [&'static str; 2] {
        match self {
            Reduction::Sum => ["sum", "sum_no_init"],
            Reduction::Sub => ["sub", "sub_no_init"],
            Reduction::Prod => ["prod", "prod_no_init"],
            Reduction::Max => ["max", "max_no_init"],
            Reduction::Min => ["min", "min_no_init"],
            Reduction::Mean => ["mean", "mean_no_init"],
        }
    }

    /// The elementwise step that accumulates one update (`mean` sums).
    fn step(self) -> Step {
        match self {
            Reduction::Sum | Reduction::Mean => Step::Arith(Arith::Add),
            Reduction::Sub => Step::Arith(Arith::Sub),
            Reduction::Prod => Step::Arith(Arith::Mul),
            Reduction::Max => Step::Extreme { greater: true },
            Reduction::Min => Step::Extreme { greater: false },
        }
    }
}

/// One element operation (see [`Combine::apply`]).
#[derive(Clone, Copy, PartialEq)]
enum Step {
    Arith(Arith),
    /// `max` (`greater`) or `min`.
    Extreme {
        greater: bool,
    },
}

#[derive(Clone, Copy, PartialEq)]
enum Arith {
    Add,
    Sub,
    Mul,
}

impl Combine {
    pub fn name(self) -> &'static str {
        match self {
            Combine::Set => "set",
            Combine::Add => "add",
            Combine::Mul => "mul",
            Combine::Reduce { op, init } => op.names()[usize::from(!init)],
        }
    }

    pub fn from_name(s: &str) -> Option<Combine> {
        let plain = [Combine::Set, Combine::Add, Combine::Mul];
        let reductions =
            REDUCTIONS.iter().flat_map(|&op| [true, false].map(|init| Combine::Reduce { op, init }));
        plain.into_iter().chain(reductions).find(|c| c.name() == s)
    }

    /// Whether the updates reduce into the element as updated so far (a scatter's reduction),
    /// rather than each combining with the target's element before any update (`=`, `+=`, `*=`).
    pub fn accumulates(self) -> bool {
        matches!(self, Combine::Reduce { .. })
    }

    /// The element `old ∘ value` of `dtype` (little-endian bytes, each `dtype.width()` long),
    /// as NumPy computes it in the element's own type: integers wrap, floats round once (f16
    /// and bf16 through f32, exact for one operation), bools are `or` and `and`, complex
    /// numbers multiply as complex numbers. `Set` is `value`; a reduction is one step of it
    /// (`mean` adds); [`Accumulator`] runs a reduction whole.
    pub fn apply(self, dtype: DType, old: &[u8], value: &[u8], out: &mut [u8]) {
        let w = dtype.width();
        let op = match self {
            Combine::Set => {
                out[..w].copy_from_slice(&value[..w]);
                return;
            }
            Combine::Add => Step::Arith(Arith::Add),
            Combine::Mul => Step::Arith(Arith::Mul),
            Combine::Reduce { op, .. } => op.step(),
        };
        step(op, dtype, old, value, out);
    }
}

/// A scatter reduction of one element, its updates added in C order. It accumulates as the
/// runtimes do (docs/semantics.md, Scatters): in the element's type, except f16 and bf16,
/// which accumulate in f32 and round once at the end (OpenVINO, measured); `mean` divides once
/// all terms are in. Without `init` it starts from the reduction's identity: 0 (`sum`, `sub`,
/// `mean`), 1, −∞ or the lowest integer (`max`), +∞ or the highest (`min`).
pub struct Accumulator {
    op: Reduction,
    dtype: DType,
    /// The type the running value is kept in.
    wide: DType,
    value: Vec<u8>,
    /// How many terms `mean` divides by.
    terms: u64,
}

impl Accumulator {
    /// The reduction `op` of an element of `dtype` that is bound to `element`.
    pub fn new(op: Reduction, init: bool, dtype: DType, element: &[u8]) -> Accumulator {
        let wide = match (dtype, op) {
            (DType::F16 | DType::BF16, _) => DType::F32,
            // floor(mean) of 0s and 1s: the terms counted as integers.
            (DType::Bool, Reduction::Mean) => DType::U64,
            _ => dtype,
        };
        let value = match init {
            true => widen(dtype, wide, element),
            false => identity(op, wide),
        };
        Accumulator { op, dtype, wide, value, terms: u64::from(init) }
    }

    /// One more update.
    pub fn add(&mut self, update: &[u8]) {
        let update = widen(self.dtype, self.wide, update);
        let old = self.value.clone();
        step(self.op.step(), self.wide, &old, &update, &mut self.value);
        self.terms += 1;
    }

    /// The element: the running value in the element's type (a mean divided first).
    pub fn finish(&self, out: &mut [u8]) {
        let mut value = self.value.clone();
        if self.op == Reduction::Mean && self.terms > 0 {
            divide(self.wide, &mut value, self.terms);
        }
        narrow(self.wide, self.dtype, &value, out);
    }
}

/// `element` of `dtype` as a value of the accumulation type `wide`.
fn widen(dtype: DType, wide: DType, element: &[u8]) -> Vec<u8> {
    let f = |x: f32| x.to_le_bytes().to_vec();
    match (dtype, wide) {
        (DType::F16, DType::F32) => f(f16::from_le_bytes([element[0], element[1]]).to_f32()),
        (DType::BF16, DType::F32) => f(bf16::from_le_bytes([element[0], element[1]]).to_f32()),
        (DType::Bool, DType::U64) => u64::from(element[0] != 0).to_le_bytes().to_vec(),
        _ => element[..dtype.width()].to_vec(),
    }
}

/// The running value of type `wide` as an element of `dtype`, rounded once.
fn narrow(wide: DType, dtype: DType, value: &[u8], out: &mut [u8]) {
    let f = || f32::from_le_bytes(value[..4].try_into().expect("width"));
    match (wide, dtype) {
        (DType::F32, DType::F16) => out[..2].copy_from_slice(&f16::from_f32(f()).to_le_bytes()),
        (DType::F32, DType::BF16) => out[..2].copy_from_slice(&bf16::from_f32(f()).to_le_bytes()),
        (DType::U64, DType::Bool) => out[0] = u8::from(value.iter().any(|&b| b != 0)),
        _ => out[..dtype.width()].copy_from_slice(&value[..dtype.width()]),
    }
}

/// The identity of `op` in `dtype`: what an element not used as an operand starts from.
fn identity(op: Reduction, dtype: DType) -> Vec<u8> {
    let w = dtype.width();
    let extreme_float = |top: bool| -> Vec<u8> {
        let inf = if top { f64::INFINITY } else { f64::NEG_INFINITY };
        match dtype {
            DType::F32 => (inf as f32).to_le_bytes().to_vec(),
            DType::F16 => slc_runtime::f16_of_f64(inf).to_le_bytes().to_vec(),
            DType::BF16 => slc_runtime::bf16_of_f64(inf).to_le_bytes().to_vec(),
            _ => inf.to_le_bytes().to_vec(),
        }
    };
    let extreme_int = |top: bool| -> Vec<u8> {
        // Two's complement: the highest signed value is 0x7f..., the lowest 0x80...; unsigned
        // 0xff... and 0.
        let mut v = vec![if top { 0xff } else { 0 }; w];
        if dtype.is_signed() {
            v[w - 1] = if top { 0x7f } else { 0x80 };
        }
        v
    };
    match op {
        Reduction::Sum | Reduction::Sub | Reduction::Mean => vec![0; w],
        Reduction::Prod => literal_element(dtype, 1).expect("1 fits every dtype"),
        Reduction::Max | Reduction::Min => {
            let top = op == Reduction::Min;
            match dtype {
                DType::Bool => vec![u8::from(top)],
                d if d.is_float() => extreme_float(top),
                // No order on complex numbers (sema refuses them); the lexicographic extremes.
                DType::C64 => {
                    let inf = if top { f32::INFINITY } else { f32::NEG_INFINITY };
                    [inf.to_le_bytes(), inf.to_le_bytes()].concat()
                }
                DType::C128 => {
                    let inf = if top { f64::INFINITY } else { f64::NEG_INFINITY };
                    [inf.to_le_bytes(), inf.to_le_bytes()].concat()
                }
                _ => extreme_int(top),
            }
        }
    }
}

/// A running `mean`'s sum divided by its `terms`: floats in their type, integers rounded down
/// (OpenVINO's spec and reference implementation), complex numbers part by part.
fn divide(dtype: DType, value: &mut [u8], terms: u64) {
    let w = dtype.width();
    macro_rules! float {
        ($t:ty, $at:expr) => {{
            let range = $at..$at + std::mem::size_of::<$t>();
            let x = <$t>::from_le_bytes(value[range.clone()].try_into().expect("width"));
            value[range].copy_from_slice(&(x / terms as $t).to_le_bytes());
        }};
    }
    match dtype {
        DType::F32 => float!(f32, 0),
        DType::F64 => float!(f64, 0),
        DType::C64 => {
            float!(f32, 0);
            float!(f32, 4);
        }
        DType::C128 => {
            float!(f64, 0);
            float!(f64, 8);
        }
        d => {
            let x = d.int_from_le(&value[..w]).expect("an integer dtype");
            let q = x.div_euclid(i128::from(terms));
            value[..w].copy_from_slice(&q.to_le_bytes()[..w]);
        }
    }
}

/// `old ∘ value` in `dtype` (see [`Combine::apply`]).
fn step(op: Step, dtype: DType, old: &[u8], value: &[u8], out: &mut [u8]) {
    let w = dtype.width();
    let op = match op {
        Step::Arith(op) => op,
        Step::Extreme { greater } => {
            let pick_value = extreme(dtype, old, value, greater);
            out[..w].copy_from_slice(if pick_value { &value[..w] } else { &old[..w] });
            return;
        }
    };
    macro_rules! int {
        ($t:ty) => {{
            let a = <$t>::from_le_bytes(old[..w].try_into().expect("width"));
            let b = <$t>::from_le_bytes(value[..w].try_into().expect("width"));
            let r = match op {
                Arith::Add => a.wrapping_add(b),
                Arith::Sub => a.wrapping_sub(b),
                Arith::Mul => a.wrapping_mul(b),
            };
            out[..w].copy_from_slice(&r.to_le_bytes());
        }};
    }
    // A float of type `$t`, computed in `$wide` (f32 for the half types: one f32 operation on
    // two half-precision values is exact or correctly rounded before the final rounding, as
    // NumPy's float16 arithmetic gives).
    macro_rules! float {
        ($t:ty, $wide:ty, $widen:expr, $narrow:expr) => {{
            let widen: fn($t) -> $wide = $widen;
            let narrow: fn($wide) -> $t = $narrow;
            let a = widen(<$t>::from_le_bytes(old[..w].try_into().expect("width")));
            let b = widen(<$t>::from_le_bytes(value[..w].try_into().expect("width")));
            let r = narrow(match op {
                Arith::Add => a + b,
                Arith::Sub => a - b,
                Arith::Mul => a * b,
            });
            out[..w].copy_from_slice(&r.to_le_bytes());
        }};
    }
    macro_rules! complex {
        ($t:ty) => {{
            let h = w / 2;
            let part =
                |b: &[u8], i: usize| <$t>::from_le_bytes(b[i * h..(i + 1) * h].try_into().expect("width"));
            let (ar, ai, br, bi) = (part(old, 0), part(old, 1), part(value, 0), part(value, 1));
            let (r, i) = match op {
                Arith::Add => (ar + br, ai + bi),
                Arith::Sub => (ar - br, ai - bi),
                Arith::Mul => (ar * br - ai * bi, ar * bi + ai * br),
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
                Arith::Add => a || b,
                Arith::Sub => a != b,
                Arith::Mul => a && b,
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
        DType::F16 => float!(f16, f32, f16::to_f32, f16::from_f32),
        DType::BF16 => float!(bf16, f32, bf16::to_f32, bf16::from_f32),
        DType::F32 => float!(f32, f32, |x| x, |x| x),
        DType::F64 => float!(f64, f64, |x| x, |x| x),
        DType::C64 => complex!(f32),
        DType::C128 => complex!(f64),
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
pub fn literal_element(dtype: DType, v: i128) -> Option<Vec<u8>> {
    let w = dtype.width();
    Some(match dtype {
        DType::Bool => vec![u8::from(v != 0)],
        d if d.is_integer() => {
            let fits = match d.is_signed() {
                true => (-(1i128 << (8 * w - 1))..(1i128 << (8 * w - 1))).contains(&v),
                false => (0..(1i128 << (8 * w))).contains(&v),
            };
            if !fits {
                return None;
            }
            v.to_le_bytes()[..w].to_vec()
        }
        DType::F16 => slc_runtime::f16_of_f64(v as f64).to_le_bytes().to_vec(),
        DType::BF16 => slc_runtime::bf16_of_f64(v as f64).to_le_bytes().to_vec(),
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

    fn reduce(op: Reduction) -> Combine {
        Combine::Reduce { op, init: true }
    }

    #[test]
    fn reduction_steps_and_nans_win() {
        assert_eq!(apply(reduce(Reduction::Sum), DType::U8, &[250], &[10]), vec![4]);
        assert_eq!(apply(reduce(Reduction::Max), DType::I8, &[0xff], &[1]), vec![1]);
        assert_eq!(apply(reduce(Reduction::Min), DType::I8, &[0xff], &[1]), vec![0xff]);
        let f = |x: f32| x.to_le_bytes().to_vec();
        assert_eq!(apply(reduce(Reduction::Max), DType::F32, &f(1.0), &f(f32::NAN))[..], f(f32::NAN)[..]);
        assert_eq!(apply(reduce(Reduction::Min), DType::F32, &f(f32::NAN), &f(1.0))[..], f(f32::NAN)[..]);
        assert_eq!(apply(reduce(Reduction::Min), DType::F32, &f(2.0), &f(-1.0)), f(-1.0));
        assert!(reduce(Reduction::Sum).accumulates() && !Combine::Add.accumulates());
        assert_eq!(apply(reduce(Reduction::Sub), DType::U8, &[1], &[2]), vec![255]);
        assert_eq!(apply(reduce(Reduction::Sub), DType::F32, &f(1.0), &f(0.25)), f(0.75));
        let all = [Combine::Set, Combine::Add, Combine::Mul]
            .into_iter()
            .chain(REDUCTIONS.iter().flat_map(|&op| [true, false].map(|init| Combine::Reduce { op, init })));
        for c in all {
            assert_eq!(Combine::from_name(c.name()), Some(c));
        }
    }

    /// Runs a reduction of `updates` into `element` to the end.
    fn reduce_all(op: Reduction, init: bool, dtype: DType, element: &[u8], updates: &[&[u8]]) -> Vec<u8> {
        let mut acc = Accumulator::new(op, init, dtype, element);
        for u in updates {
            acc.add(u);
        }
        let mut out = vec![0; dtype.width()];
        acc.finish(&mut out);
        out
    }

    #[test]
    fn halves_accumulate_in_f32_and_round_once() {
        let h = |x: f32| f16::from_f32(x).to_le_bytes().to_vec();
        let one = h(1.0);
        // 2048 + 1 + 1 + 1 = 2051 in f32, 2052 in f16 (rounding each step would stay at 2048).
        let got = reduce_all(Reduction::Sum, true, DType::F16, &h(2048.0), &[&one, &one, &one]);
        assert_eq!(got, h(2052.0));
        // 60000 + 60000 - 60000: no overflow to infinity on the way.
        let got = reduce_all(Reduction::Sum, true, DType::F16, &h(60000.0), &[&h(60000.0), &h(-60000.0)]);
        assert_eq!(got, h(60000.0));
        // (2048 + 1 + 1 + 1) / 4 = 512.75, one rounding: 513.
        let got = reduce_all(Reduction::Mean, true, DType::F16, &h(2048.0), &[&one, &one, &one]);
        assert_eq!(got, h(513.0));
        let b = |x: f32| bf16::from_f32(x).to_le_bytes().to_vec();
        let got = reduce_all(Reduction::Sum, true, DType::BF16, &b(256.0), &[&b(1.0), &b(1.0)]);
        assert_eq!(got, b(258.0));
    }

    #[test]
    fn integer_means_round_down_and_sums_wrap() {
        let i = |x: i32| x.to_le_bytes().to_vec();
        // (3 - 2 - 3) / 3 = -2/3: -1 (rounded down, not towards zero).
        let got = reduce_all(Reduction::Mean, true, DType::I32, &i(3), &[&i(-2), &i(-3)]);
        assert_eq!(got, i(-1));
        let got = reduce_all(Reduction::Mean, false, DType::I32, &i(3), &[&i(-2), &i(-3)]);
        assert_eq!(got, i(-3));
        // The sum wraps in the element's type before the division: 300 mod 256 = 44.
        let got = reduce_all(Reduction::Mean, true, DType::U8, &[100], &[&[100], &[100]]);
        assert_eq!(got, vec![14]);
    }

    #[test]
    fn without_init_the_identity_starts() {
        let f = |x: f32| x.to_le_bytes().to_vec();
        let ninf = f(f32::NEG_INFINITY);
        let got = reduce_all(Reduction::Max, false, DType::F32, &f(7.0), &[&ninf, &ninf]);
        assert_eq!(got, ninf, "the maximum of the updates, not the lowest finite f32");
        let got = reduce_all(Reduction::Sum, false, DType::F32, &f(7.0), &[&f(-0.0)]);
        assert_eq!(got, f(0.0), "0 + -0 is +0");
        let got = reduce_all(Reduction::Prod, false, DType::I8, &[7], &[&[3], &[2]]);
        assert_eq!(got, vec![6]);
        let got = reduce_all(Reduction::Min, false, DType::U16, &[0, 0], &[&[9, 0]]);
        assert_eq!(got, vec![9, 0]);
        let got = reduce_all(Reduction::Min, false, DType::I16, &[0, 0], &[&[9, 0]]);
        assert_eq!(got, vec![9, 0]);
        let got = reduce_all(Reduction::Mean, false, DType::F32, &f(7.0), &[&f(1.0), &f(2.0)]);
        assert_eq!(got, f(1.5));
        let got = reduce_all(Reduction::Mean, true, DType::Bool, &[1], &[&[1], &[0]]);
        assert_eq!(got, vec![0], "floor of the mean of 1, 1, 0");
    }

    #[test]
    fn literals_fit_or_are_refused() {
        assert_eq!(literal_element(DType::U8, 255), Some(vec![255]));
        assert_eq!(literal_element(DType::U8, 256), None);
        assert_eq!(literal_element(DType::U8, -1), None);
        assert_eq!(literal_element(DType::I8, -128), Some(vec![0x80]));
        assert_eq!(literal_element(DType::U64, -1), None);
        assert_eq!(literal_element(DType::U64, (1 << 64) - 1), Some(vec![255; 8]));
        assert_eq!(literal_element(DType::U64, 1 << 64), None);
        assert_eq!(literal_element(DType::I64, 1 << 63), None);
        assert_eq!(literal_element(DType::I64, -(1 << 63)), Some(i64::MIN.to_le_bytes().to_vec()));
        assert_eq!(literal_element(DType::F64, 1 << 63), Some(2f64.powi(63).to_le_bytes().to_vec()));
        assert_eq!(literal_element(DType::Bool, 7), Some(vec![1]));
        assert_eq!(literal_element(DType::F32, 3), Some(3f32.to_le_bytes().to_vec()));
    }
}
