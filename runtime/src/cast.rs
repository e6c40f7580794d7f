//! NumPy's `astype` with `unsafe` casting, element by element: how a store converts a value of
//! another dtype (`a[i] = v`, docs/semantics.md, Stores). Integers wrap to the target's width,
//! floats round once to the nearest (ties to even), a complex number keeps its real part, and a
//! bool is `x != 0`. A float whose integer part the target cannot hold (NaN and the infinities
//! included) has no defined result in NumPy (its C cast is undefined; x86 gives one answer,
//! ARM another): it is an error here, never a platform's answer.

use crate::{DType, Tensor, TensorError, bf16_of_f64, f16_of_f64};

mod native;

/// An element read exactly: integers and bools as integers, real floats as an f64 (which
/// holds every f16, bf16 and f32), complex numbers as two.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Element {
    Int(i128),
    Float(f64),
    Complex(f64, f64),
}

/// Why a cast failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CastError {
    #[error(
        "element {at}, the {from} {value}, has no {to} value: NumPy's cast of a float outside the integer's range (or of NaN, an infinity) is undefined"
    )]
    NoIntegerValue { from: DType, to: DType, value: f64, at: usize },
    #[error(transparent)]
    Tensor(#[from] TensorError),
}

/// `t` with every element cast to `to` as NumPy's `t.astype(to)` casts it ([the module
/// documentation](self)); the same shape, dense.
pub fn cast(t: &Tensor, to: DType) -> Result<Tensor, CastError> {
    cast_bytes(t.dtype(), t.bytes(), t.shape(), to)
}

/// [`cast`] of the dense C-order elements `bytes` (of `from`, `shape`) read in place.
pub fn cast_bytes(from: DType, bytes: &[u8], shape: &[usize], to: DType) -> Result<Tensor, CastError> {
    let mut out = Tensor::for_overwrite(to, shape)?;
    let elements = out.numel();
    if bytes.len() != elements * from.width() {
        return Err(
            TensorError::LengthMismatch { expected: elements * from.width(), actual: bytes.len() }.into()
        );
    }
    let ran = native::cast(from, to, bytes, out.bytes_mut())
        .unwrap_or_else(|| cast_any(from, to, bytes, out.bytes_mut()));
    ran.map_err(|(value, at)| CastError::NoIntegerValue { from, to, value, at })?;
    Ok(out)
}

/// The cast of `src` (of `from`) into `dst` (of `to`) for any pair of dtypes, each element
/// read exactly (an [`Element`]) and written: the reference of the native loops, and the cast
/// of the pairs they do not take.
fn cast_any(from: DType, to: DType, src: &[u8], dst: &mut [u8]) -> Result<(), (f64, usize)> {
    // One loop per pair of dtypes, each with its reads and writes inlined (a match per
    // element would cost ten times the memory traffic).
    macro_rules! each {
        ($d:expr, $k:ident => $body:expr) => {
            each!(@ $d, $k => $body; 0 1 2 3 4 5 6 7 8 9 10 11 12 13 14)
        };
        (@ $d:expr, $k:ident => $body:expr; $($n:literal)*) => {
            match $d as u8 {
                $($n => {
                    const $k: u8 = $n;
                    $body
                })*
                _ => unreachable!("fifteen dtypes"),
            }
        };
    }
    each!(from, F => each!(to, T => cast_loop::<F, T>(src, dst)))
}

/// Every element of `src` (of `DType::ALL[F]`) cast into `dst` (of `DType::ALL[T]`); `Err`:
/// the float with no integer value and its place.
fn cast_loop<const F: u8, const T: u8>(src: &[u8], dst: &mut [u8]) -> Result<(), (f64, usize)> {
    let (from, to) = (DType::ALL[F as usize], DType::ALL[T as usize]);
    for (at, (s, d)) in src.chunks_exact(from.width()).zip(dst.chunks_exact_mut(to.width())).enumerate() {
        write(to, read(from, s), d).map_err(|value| (value, at))?;
    }
    Ok(())
}

#[inline(always)]
fn read(dtype: DType, b: &[u8]) -> Element {
    let f32_at = |i: usize| f32::from_le_bytes(b[i..i + 4].try_into().expect("four bytes")) as f64;
    let f64_at = |i: usize| f64::from_le_bytes(b[i..i + 8].try_into().expect("eight bytes"));
    match dtype {
        DType::Bool => Element::Int(i128::from(b[0] != 0)),
        DType::F16 => Element::Float(half::f16::from_le_bytes([b[0], b[1]]).to_f64()),
        DType::BF16 => Element::Float(half::bf16::from_le_bytes([b[0], b[1]]).to_f64()),
        DType::F32 => Element::Float(f32_at(0)),
        DType::F64 => Element::Float(f64_at(0)),
        DType::C64 => Element::Complex(f32_at(0), f32_at(4)),
        DType::C128 => Element::Complex(f64_at(0), f64_at(8)),
        d => Element::Int(d.int_from_le(b).expect("an integer dtype")),
    }
}

/// Writes `x` as an element of `dtype` into `out`; `Err(v)`: the float `v` has no value of the
/// integer `dtype`.
#[inline(always)]
fn write(dtype: DType, x: Element, out: &mut [u8]) -> Result<(), f64> {
    let real = || match x {
        Element::Int(i) => i as f64,
        Element::Float(v) | Element::Complex(v, _) => v,
    };
    match dtype {
        DType::Bool => {
            out[0] = u8::from(match x {
                Element::Int(i) => i != 0,
                Element::Float(v) => v != 0.0,
                Element::Complex(re, im) => re != 0.0 || im != 0.0,
            })
        }
        d if d.is_integer() => {
            let i = match x {
                Element::Int(i) => i,
                _ => integer_part(d, real()).ok_or_else(real)?,
            };
            // Two's complement, the target's low bytes: wraps as NumPy's integer casts do.
            out.copy_from_slice(&i.to_le_bytes()[..d.width()]);
        }
        // Integers round once, from their exact value (an i64 above 2^53 included).
        DType::F32 => {
            let v = match x {
                Element::Int(i) => i as f32,
                _ => real() as f32,
            };
            out.copy_from_slice(&v.to_le_bytes());
        }
        DType::F64 => out.copy_from_slice(&real().to_le_bytes()),
        // An integer past 2^53 that f64 rounds is past f16's range too (inf either way); bf16
        // rounds it from its f32, as ml_dtypes casts an integer.
        DType::F16 => out.copy_from_slice(&f16_of_f64(real()).to_le_bytes()),
        DType::BF16 => {
            let v = match x {
                Element::Int(i) => half::bf16::from_f32(i as f32),
                _ => bf16_of_f64(real()),
            };
            out.copy_from_slice(&v.to_le_bytes());
        }
        DType::C64 | DType::C128 => {
            let (re, im) = match x {
                Element::Complex(re, im) => (re, im),
                _ => (real(), 0.0),
            };
            match dtype {
                DType::C64 => {
                    let re = match x {
                        Element::Int(i) => i as f32,
                        _ => re as f32,
                    };
                    out[..4].copy_from_slice(&re.to_le_bytes());
                    out[4..].copy_from_slice(&(im as f32).to_le_bytes());
                }
                _ => {
                    out[..8].copy_from_slice(&re.to_le_bytes());
                    out[8..].copy_from_slice(&im.to_le_bytes());
                }
            }
        }
        _ => unreachable!("every dtype is covered above"),
    }
    Ok(())
}

/// `v` truncated toward zero, where the integer `dtype` holds it. Compared before truncating
/// (`trunc` is a library call on baseline x86-64): the bounds are integers, exact in an f64
/// but for `lo - 1` of i64 (which rounds to `lo`, with no f64 between), and NaN fails every
/// comparison; `as` then truncates.
#[inline(always)]
fn integer_part(dtype: DType, v: f64) -> Option<i128> {
    let bits = dtype.width() as u32 * 8;
    let (lo, end) = match dtype.is_signed() {
        true => (-((1u128 << (bits - 1)) as f64), (1u128 << (bits - 1)) as f64),
        false => (0.0, (1u128 << bits) as f64),
    };
    if !((v > lo - 1.0 || v >= lo) && v < end) {
        return None;
    }
    Some(match dtype {
        DType::U64 => v as u64 as i128,
        _ => v as i64 as i128,
    })
}

/// Whether NumPy casts every value of `from` to `to` exactly (`np.can_cast(from, to, "safe")`,
/// ml_dtypes' bfloat16 included): then NumPy's promotion of the two is `to`.
pub fn casts_safely(from: DType, to: DType) -> bool {
    use DType::*;
    let bits = |d: DType| d.width() * 8;
    match (from, to) {
        _ if from == to || from == Bool => true,
        (_, Bool) => false,
        (f, t) if f.is_integer() && t.is_integer() => match (f.is_signed(), t.is_signed()) {
            (true, true) | (false, false) => bits(t) >= bits(f),
            (false, true) => bits(t) > bits(f),
            (true, false) => false,
        },
        (f, F16 | BF16) if f.is_integer() => bits(f) == 8,
        (f, F32 | C64) if f.is_integer() => bits(f) <= 16,
        (f, F64 | C128) if f.is_integer() => true,
        (F16 | BF16, F32 | F64 | C64 | C128) => true,
        (F32, F64 | C64 | C128) => true,
        (F64 | C64, C128) => true,
        _ => false,
    }
}

/// Whether NumPy's `target op= value` (`+=`, `*=`) for a `value` of another dtype gives what
/// casting the value to `target` first and combining in `target` gives. NumPy computes in
/// the two dtypes' promotion and casts back `same_kind`: where the promotion is `target`
/// itself ([`casts_safely`]) the value is cast first; into an integer target a wider
/// integer's result wraps back as the cast value's does (sums and products modulo 2^bits),
/// where NumPy casts it back: into a signed target from any integer but u64 (whose promotion
/// with a signed one is float64), into an unsigned one from unsigned ones. Anything else NumPy
/// refuses (a float into integers, a signed integer into unsigned ones, anything but bool
/// into bool) or rounds once in a wider dtype.
pub fn combines_as_cast(target: DType, value: DType) -> bool {
    casts_safely(value, target)
        || (target.is_integer()
            && value.is_integer()
            && if target.is_signed() { value != DType::U64 } else { !value.is_signed() })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(dtype: DType, bytes: &[u8]) -> Tensor {
        Tensor::from_bytes(dtype, &[bytes.len() / dtype.width()], bytes).unwrap()
    }

    fn f64s(v: &[f64]) -> Tensor {
        t(DType::F64, &v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>())
    }

    #[test]
    fn integers_wrap_floats_truncate_and_bools_test_nonzero() {
        let wide = t(DType::I32, &[300i32, -1, 128].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>());
        assert_eq!(cast(&wide, DType::U8).unwrap().bytes(), &[44, 255, 128]);
        assert_eq!(cast(&wide, DType::I8).unwrap().bytes(), &[44, 255, 128]);
        assert_eq!(cast(&f64s(&[1.9, -1.9, -0.5]), DType::I8).unwrap().bytes(), &[1, 255, 0]);
        assert_eq!(cast(&f64s(&[0.0, f64::NAN, -0.0, 1e-300]), DType::Bool).unwrap().bytes(), &[0, 1, 0, 1]);
        let c = t(DType::C64, &[0f32, 2.0].iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>());
        assert_eq!(cast(&c, DType::Bool).unwrap().bytes(), &[1], "an imaginary part is not zero");
        assert_eq!(cast(&c, DType::F32).unwrap().bytes(), &0f32.to_le_bytes(), "the real part");
    }

    #[test]
    fn a_float_with_no_integer_value_is_an_error_with_its_place() {
        for (v, to) in [(256.0, DType::U8), (-1.0, DType::U8), (f64::NAN, DType::I64), (9.3e18, DType::I64)] {
            let e = cast(&f64s(&[0.0, v]), to).unwrap_err();
            assert!(matches!(e, CastError::NoIntegerValue { at: 1, .. }), "{v} into {to}: {e}");
        }
        let e = cast(&f64s(&[255.9, -128.5]), DType::U8).unwrap_err().to_string();
        assert!(e.contains("element 1, the f64 -128.5, has no u8 value"), "{e}");
        let top = cast(&f64s(&[18_446_744_073_709_549_568.0]), DType::U64).unwrap();
        assert_eq!(top.int_at(0), Some(18_446_744_073_709_549_568));
    }

    #[test]
    fn safe_casts_are_numpys() {
        use DType::*;
        // np.can_cast(from, to, "safe") for a few of each kind (ml_dtypes for bfloat16).
        for (from, to, safe) in [
            (I8, I16, true),
            (U8, I16, true),
            (U16, I16, false),
            (I8, U64, false),
            (U32, U64, true),
            (I8, F16, true),
            (I16, F16, false),
            (U8, BF16, true),
            (I16, F32, true),
            (I32, F32, false),
            (U64, F64, true),
            (I64, C128, true),
            (I32, C64, false),
            (F16, BF16, false),
            (BF16, F16, false),
            (BF16, F32, true),
            (F64, C64, false),
            (C64, C128, true),
            (C64, F64, false),
            (Bool, C64, true),
            (I8, Bool, false),
        ] {
            assert_eq!(casts_safely(from, to), safe, "{from} -> {to}");
        }
        assert!(combines_as_cast(I8, U32) && combines_as_cast(U8, U64) && !combines_as_cast(U8, I8));
        assert!(!combines_as_cast(I8, U64) && !combines_as_cast(F32, F64) && combines_as_cast(C64, F32));
    }

    #[test]
    fn the_integer_ranges_end_where_numpys_do() {
        let two63 = 9_223_372_036_854_775_808.0;
        let i64s = cast(&f64s(&[-two63, two63 - 1024.0, -0.9]), DType::I64).unwrap();
        assert_eq!(
            (0..3).map(|i| i64s.int_at(i).unwrap()).collect::<Vec<_>>(),
            [i64::MIN as i128, (1 << 63) - 1024, 0]
        );
        let i8s = cast(&f64s(&[127.9, -128.9, -0.5]), DType::I8).unwrap();
        assert_eq!(i8s.bytes(), &[127, 128, 0]);
        assert_eq!(cast(&f64s(&[-0.9, 255.5]), DType::U8).unwrap().bytes(), &[0, 255]);
        for (v, to) in
            [(two63, DType::I64), (-two63 - 2048.0, DType::I64), (128.0, DType::I8), (-129.0, DType::I8)]
        {
            assert!(cast(&f64s(&[v]), to).is_err(), "{v} into {to}");
        }
        for (v, to) in [
            (2.0 * two63, DType::U64),
            (-1.0, DType::U64),
            (4_294_967_296.0, DType::U32),
            (f64::INFINITY, DType::U16),
        ] {
            assert!(cast(&f64s(&[v]), to).is_err(), "{v} into {to}");
        }
    }

    /// The native loops against the element-by-element reference on every pair they take:
    /// random bit patterns (most floats have no integer value there), random values inside
    /// and around each integer's range, and one bad element past the first block (its place).
    #[test]
    fn the_native_loops_cast_as_the_reference_does() {
        use DType::*;
        let native = [I8, I16, I32, I64, U8, U16, U32, U64, F32, F64];
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        };
        let (n, taken) = (5000usize, std::cell::Cell::new(0));
        for from in native {
            for to in native {
                let bits: Vec<u8> = (0..n * from.width()).map(|_| next() as u8).collect();
                // Values around `to`'s range (a float target: around i64's), written as `from`.
                let (lo, end) = match to.is_integer() {
                    true => (to_range(to).0, to_range(to).1),
                    false => (-1e19, 1e19),
                };
                let mut around = |i: usize| -> f64 {
                    let u = (next() >> 11) as f64 / (1u64 << 53) as f64;
                    match i % 7 {
                        0 => lo - 1.0 + u * 2.0,
                        1 => end - 1.0 + u * 2.0,
                        2 => lo + u * (end - lo),
                        _ => (u - 0.5) * 300.0,
                    }
                };
                let values: Vec<f64> = (0..n).map(&mut around).collect();
                let tame = f64s(&values);
                let (least, past) = from_range(from);
                let tame =
                    cast_any_tensor(&tame, from, &|v| v.clamp(least, f64::from_bits(past.to_bits() - 1)));
                // Inside both ranges but one NaN in the second block.
                let (lo_in, end_in) = (least.max(lo), past.min(end));
                let mut bad = cast_any_tensor(&f64s(&values), from, &|v| {
                    v.clamp(lo_in, f64::from_bits(end_in.to_bits() - 1))
                });
                if from.is_float() && to.is_integer() {
                    bad[4100 * from.width()..4101 * from.width()].copy_from_slice(&nan(from));
                }
                for src in [&bits, &tame, &bad] {
                    let mut fast = vec![0u8; n * to.width()];
                    let mut reference = vec![0u8; n * to.width()];
                    let f = native::cast(from, to, src, &mut fast).expect("a native pair");
                    let r = cast_any(from, to, src, &mut reference);
                    match (&f, &r) {
                        (Ok(()), Ok(())) => assert!(same_elements(to, &fast, &reference), "{from} -> {to}"),
                        _ => {
                            let same =
                                |a: &Result<(), (f64, usize)>, b: &Result<(), (f64, usize)>| match (a, b) {
                                    (Err((x, i)), Err((y, j))) => {
                                        i == j && (x == y || x.is_nan() && y.is_nan())
                                    }
                                    _ => false,
                                };
                            assert!(same(&f, &r), "{from} -> {to}: {f:?} against {r:?}");
                            taken.set(taken.get() + 1);
                        }
                    }
                }
            }
        }
        assert!(taken.get() > 20, "errors compared: {}", taken.get());
        for pair in [(Bool, I8), (I8, Bool), (F16, F32), (F32, BF16), (C64, F64)] {
            assert!(native::cast(pair.0, pair.1, &[], &mut []).is_none(), "{pair:?}");
        }
    }

    /// Whether `a` and `b` hold the same elements of `dtype`: the same bytes, or two NaNs. A
    /// NaN's payload is the hardware's: the reference goes from f32 through f64 and back, which
    /// quiets a signaling NaN (in a debug build; an optimized one may keep it), where the
    /// native f32 -> f32 loop copies it.
    fn same_elements(dtype: DType, a: &[u8], b: &[u8]) -> bool {
        let nan = |e: &[u8]| match dtype {
            DType::F32 => f32::from_le_bytes(e.try_into().unwrap()).is_nan(),
            DType::F64 => f64::from_le_bytes(e.try_into().unwrap()).is_nan(),
            _ => false,
        };
        let w = dtype.width();
        a.len() == b.len()
            && a.chunks_exact(w).zip(b.chunks_exact(w)).all(|(x, y)| x == y || nan(x) && nan(y))
    }

    /// An integer dtype's least value and one past its greatest.
    fn to_range(d: DType) -> (f64, f64) {
        let bits = d.width() as i32 * 8;
        match d.is_signed() {
            true => (-(2f64.powi(bits - 1)), 2f64.powi(bits - 1)),
            false => (0.0, 2f64.powi(bits)),
        }
    }

    /// The values a dtype holds (a float: a little past i64's).
    fn from_range(d: DType) -> (f64, f64) {
        match d.is_integer() {
            true => to_range(d),
            false => (-2e19, 2e19),
        }
    }

    /// The f64s `t` clamped by `clamp` and cast to `to` by the reference (their bytes).
    fn cast_any_tensor(t: &Tensor, to: DType, clamp: &dyn Fn(f64) -> f64) -> Vec<u8> {
        let clamped: Vec<f64> = (0..t.numel()).map(|i| clamp(t.float_at(i).unwrap())).collect();
        let clamped = f64s(&clamped);
        let mut out = vec![0u8; t.numel() * to.width()];
        cast_any(DType::F64, to, clamped.bytes(), &mut out).unwrap();
        out
    }

    fn nan(d: DType) -> Vec<u8> {
        match d {
            DType::F32 => f32::NAN.to_le_bytes().to_vec(),
            _ => f64::NAN.to_le_bytes().to_vec(),
        }
    }

    #[test]
    fn wide_integers_round_once() {
        // 2^53 + 1 is not an f64: an f32 rounds it from its exact value.
        let i = t(DType::I64, &((1i64 << 53) + 1).to_le_bytes());
        assert_eq!(cast(&i, DType::F32).unwrap().bytes(), &((1i64 << 53) as f32).to_le_bytes());
        let u = t(DType::U64, &u64::MAX.to_le_bytes());
        assert_eq!(cast(&u, DType::F64).unwrap().float_at(0), Some(18_446_744_073_709_551_616.0));
    }
}
