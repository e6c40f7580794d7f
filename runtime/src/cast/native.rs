//! The casts between the dtypes Rust has as primitives (the integers of 8 to 64 bits, f32 and
//! f64): one loop per pair, which the compiler vectorizes. The general loop
//! ([`super::cast_bytes`]) goes through an `i128` or an `f64` per element, up to twenty times
//! slower (an `i128` into a float is a library call). Rust's `as` is NumPy's cast on these:
//! integers wrap to the width, an integer or a float rounds once to the nearest float. A float
//! into an integer truncates toward zero; one with no integer value is an error, checked per
//! block so that the loop has no early exit.

use crate::DType;

/// An element type of a native dtype: read and written little-endian, unaligned.
pub(super) trait Lane: Copy {
    const WIDTH: usize;
    /// An integer type's range: `LO` its least value, `END` one past its greatest (both exact
    /// in an f64 but `LO - 1` of i64, which rounds to `LO`); 0 for a float.
    const LO: f64;
    const END: f64;
    fn load(b: &[u8]) -> Self;
    fn store(self, out: &mut [u8]);
    fn to_f64(self) -> f64;
}

/// `self` as a `T`, and whether it has a `T` value (false only for a float with no integer
/// value: out of the integer's range, NaN, an infinity).
pub(super) trait CastTo<T>: Lane {
    fn cast(self) -> (T, bool);
}

macro_rules! lanes {
    ($($kind:ident $t:ty: $lo:expr, $end:expr;)*) => {$(
        impl Lane for $t {
            const WIDTH: usize = size_of::<$t>();
            const LO: f64 = $lo;
            const END: f64 = $end;
            #[inline(always)]
            fn load(b: &[u8]) -> Self {
                <$t>::from_le_bytes(b.try_into().expect("one element's bytes"))
            }
            #[inline(always)]
            fn store(self, out: &mut [u8]) {
                out.copy_from_slice(&self.to_le_bytes())
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
        }
        casts_from!($kind $t);
    )*};
}

macro_rules! casts_from {
    (int $s:ty) => {
        casts_from!(as $s; i8 i16 i32 i64 u8 u16 u32 u64 f32 f64);
    };
    (float $s:ty) => {
        casts_from!(as $s; f32 f64);
        casts_from!(truncate $s; i8 i16 i32 i64 u8 u16 u32 u64);
    };
    (as $s:ty; $($d:ty)*) => {$(
        impl CastTo<$d> for $s {
            #[inline(always)]
            #[allow(clippy::unnecessary_cast)]
            fn cast(self) -> ($d, bool) {
                (self as $d, true)
            }
        }
    )*};
    // A float into an integer: truncated where the integer holds it, else 0 (and not fit).
    // Selecting first leaves a plain truncation, which vectorizes; `as` would saturate.
    (truncate $s:ty; $($d:ty)*) => {$(
        impl CastTo<$d> for $s {
            #[inline(always)]
            fn cast(self) -> ($d, bool) {
                let v = self as f64;
                let fits = (v > <$d>::LO - 1.0 || v >= <$d>::LO) && v < <$d>::END;
                let held = if fits { self } else { 0.0 };
                // SAFETY: `held` is finite and its integer part is in the range of `$d`.
                (unsafe { held.to_int_unchecked::<$d>() }, fits)
            }
        }
    )*};
}

const TWO_63: f64 = 9_223_372_036_854_775_808.0;
lanes! {
    int i8: -128.0, 128.0;
    int i16: -32_768.0, 32_768.0;
    int i32: -2_147_483_648.0, 2_147_483_648.0;
    int i64: -TWO_63, TWO_63;
    int u8: 0.0, 256.0;
    int u16: 0.0, 65_536.0;
    int u32: 0.0, 4_294_967_296.0;
    int u64: 0.0, 2.0 * TWO_63;
    float f32: 0.0, 0.0;
    float f64: 0.0, 0.0;
}

/// Every element of `src` (of `S`) cast into `dst` (of `D`); `Err`: the first float with no
/// integer value and its place.
fn cast_loop<S: CastTo<D>, D: Lane>(src: &[u8], dst: &mut [u8]) -> Result<(), (f64, usize)> {
    // Blocks small enough to be read again from the cache where one holds a bad element.
    const BLOCK: usize = 4096;
    let blocks = src.chunks(BLOCK * S::WIDTH).zip(dst.chunks_mut(BLOCK * D::WIDTH));
    for (b, (src, dst)) in blocks.enumerate() {
        let mut fits = true;
        for (s, d) in src.chunks_exact(S::WIDTH).zip(dst.chunks_exact_mut(D::WIDTH)) {
            let (v, ok) = S::load(s).cast();
            v.store(d);
            fits &= ok;
        }
        if !fits {
            let (at, s) = (src.chunks_exact(S::WIDTH).map(S::load).enumerate())
                .find(|(_, s)| !s.cast().1)
                .expect("a block that did not fit holds an element that does not");
            return Err((s.to_f64(), b * BLOCK + at));
        }
    }
    Ok(())
}

/// Every cast from a type to a native dtype.
macro_rules! cast_all {
    ($($d:ty)*) => {
        pub(super) trait CastAll: $(CastTo<$d> +)* {}
        impl<T: $(CastTo<$d> +)*> CastAll for T {}
    };
}
cast_all!(i8 i16 i32 i64 u8 u16 u32 u64 f32 f64);

/// The cast of `src` (of `from`) into `dst` (of `to`) where both dtypes are native; `None`
/// where either is not (bool, f16, bf16, the complex ones).
pub(super) fn cast(from: DType, to: DType, src: &[u8], dst: &mut [u8]) -> Option<Result<(), (f64, usize)>> {
    match from {
        DType::I8 => cast_from::<i8>(to, src, dst),
        DType::I16 => cast_from::<i16>(to, src, dst),
        DType::I32 => cast_from::<i32>(to, src, dst),
        DType::I64 => cast_from::<i64>(to, src, dst),
        DType::U8 => cast_from::<u8>(to, src, dst),
        DType::U16 => cast_from::<u16>(to, src, dst),
        DType::U32 => cast_from::<u32>(to, src, dst),
        DType::U64 => cast_from::<u64>(to, src, dst),
        DType::F32 => cast_from::<f32>(to, src, dst),
        DType::F64 => cast_from::<f64>(to, src, dst),
        _ => None,
    }
}

fn cast_from<S: CastAll>(to: DType, src: &[u8], dst: &mut [u8]) -> Option<Result<(), (f64, usize)>> {
    Some(match to {
        DType::I8 => cast_loop::<S, i8>(src, dst),
        DType::I16 => cast_loop::<S, i16>(src, dst),
        DType::I32 => cast_loop::<S, i32>(src, dst),
        DType::I64 => cast_loop::<S, i64>(src, dst),
        DType::U8 => cast_loop::<S, u8>(src, dst),
        DType::U16 => cast_loop::<S, u16>(src, dst),
        DType::U32 => cast_loop::<S, u32>(src, dst),
        DType::U64 => cast_loop::<S, u64>(src, dst),
        DType::F32 => cast_loop::<S, f32>(src, dst),
        DType::F64 => cast_loop::<S, f64>(src, dst),
        _ => return None,
    })
}
