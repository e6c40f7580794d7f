//! NumPy-style printing (`str(array)`): nested brackets, right-aligned columns, rows wrapped at
//! the line width, and `...` summaries above a threshold, with NumPy's defaults.

use crate::{DType, Tensor};

#[derive(Debug, Clone)]
pub struct PrintOptions {
    /// Summarize when there are more elements than this.
    pub threshold: usize,
    /// Elements shown at each end of a summarized axis.
    pub edgeitems: usize,
    pub linewidth: usize,
}

impl Default for PrintOptions {
    fn default() -> PrintOptions {
        PrintOptions { threshold: 1000, edgeitems: 3, linewidth: 75 }
    }
}

fn widest(texts: &[String]) -> usize {
    texts.iter().map(String::len).max().unwrap_or(0)
}

/// One complex element's parts as f64, and the float dtype of its parts.
fn complex_at(t: &Tensor, i: usize) -> (f64, f64) {
    let w = t.dtype().width();
    let b = &t.bytes()[i * w..(i + 1) * w];
    let (re, im) = b.split_at(w / 2);
    match t.dtype() {
        DType::C64 => (
            f32::from_le_bytes(re.try_into().expect("4 bytes")) as f64,
            f32::from_le_bytes(im.try_into().expect("4 bytes")) as f64,
        ),
        _ => (
            f64::from_le_bytes(re.try_into().expect("8 bytes")),
            f64::from_le_bytes(im.try_into().expect("8 bytes")),
        ),
    }
}

/// NumPy's default print precision (`precision=8`): at most this many digits after the point,
/// positional or in a scientific mantissa.
const PRECISION: usize = 8;

/// The fewest significant digits of `|v|` that read back as `v` in `dtype` (NumPy's "unique"),
/// the nearest such, a tie to the even digit (Dragon4's rule; Rust's own shortest digits may
/// take the odd one): the digits, and the exponent of the first (`|v| = d.ddd × 10^exp`).
fn unique_digits(v: f64, dtype: DType) -> (String, i32) {
    let v = v.abs();
    // Rust's shortest digits say how many there are; which they are is chosen here.
    let fewest = |text: String, reads_back: &dyn Fn(&str) -> bool| {
        let shortest = split_exponent(&text);
        reading_back_at(v, shortest.0.len() - 1, reads_back).unwrap_or(shortest)
    };
    match dtype {
        DType::F32 => fewest(format!("{:e}", v as f32), &|t| t.parse::<f32>().is_ok_and(|x| x == v as f32)),
        // (`half`'s own formatting goes through f32, whose shortest digits are too many here.)
        DType::F16 => shortest_reading_back(v, &|t| decimal(t) == crate::f16_of_f64(v)),
        DType::BF16 => shortest_reading_back(v, &|t| decimal_bf16(t) == crate::bf16_of_f64(v)),
        _ => fewest(format!("{v:e}"), &|t| t.parse::<f64>().is_ok_and(|x| x == v)),
    }
}

fn decimal(text: &str) -> half::f16 {
    crate::f16_of_f64(text.parse().expect("a decimal"))
}

fn decimal_bf16(text: &str) -> half::bf16 {
    crate::bf16_of_f64(text.parse().expect("a decimal"))
}

/// The digits and the exponent of a Rust `{:e}` text of a non-negative number.
fn split_exponent(text: &str) -> (String, i32) {
    let (mantissa, exp) = text.split_once('e').expect("an exponent");
    (mantissa.replace('.', ""), exp.parse().expect("an integer exponent"))
}

/// `digits` (the last at 10^`last_exp`) normalized: the exponent of the first, no trailing zeros.
fn normalized(digits: u64, last_exp: i32) -> (String, i32) {
    let text = digits.to_string();
    let exp = last_exp + text.len() as i32 - 1;
    let trimmed = text.trim_end_matches('0');
    (if trimmed.is_empty() { "0".into() } else { trimmed.into() }, exp)
}

/// The decimal of `places + 1` significant digits nearest `v` (v ≥ 0, finite; a tie to the even
/// digit) if it `reads_back` as `v`, else its neighbour on the other side of `v` if that does
/// (a power of two's lower rounding interval is half its upper one); `None` if neither does.
fn reading_back_at(v: f64, places: usize, reads_back: &dyn Fn(&str) -> bool) -> Option<(String, i32)> {
    let (digits, exp) = split_exponent(&format!("{v:.places$e}"));
    let last_exp = exp - places as i32;
    let m: u64 = digits.parse().expect("decimal digits");
    let text = |m: u64| format!("{m}e{last_exp}");
    if reads_back(&text(m)) {
        return Some(normalized(m, last_exp));
    }
    let nearest: f64 = text(m).parse().expect("a decimal");
    let other = if nearest < v { m + 1 } else { m.checked_sub(1)? };
    reads_back(&text(other)).then(|| normalized(other, last_exp))
}

/// The fewest significant digits whose decimal `reads_back` as `v` (v ≥ 0, finite).
fn shortest_reading_back(v: f64, reads_back: &dyn Fn(&str) -> bool) -> (String, i32) {
    (0..17)
        .find_map(|places| reading_back_at(v, places, reads_back))
        .unwrap_or_else(|| split_exponent(&format!("{v:e}")))
}

/// `|v|` positional, as NumPy's first pass writes it: its unique digits (`unique`), or rounded
/// at [`PRECISION`] digits after the point and trailing zeros dropped; `(integer part, fraction)`.
fn positional_parts(v: f64, (digits, exp): &(String, i32)) -> (String, String) {
    let exp = *exp;
    if digits.len() as i32 - 1 - exp > PRECISION as i32 {
        let text = format!("{:.PRECISION$}", v.abs());
        let (int, frac) = text.split_once('.').expect("a point");
        return (int.into(), frac.trim_end_matches('0').into());
    }
    positional(digits, exp)
}

/// Digits `d.ddd × 10^exp` written positionally: `(integer part, fraction)`.
fn positional(digits: &str, exp: i32) -> (String, String) {
    let n = digits.len() as i32;
    if exp >= n - 1 {
        (format!("{digits}{}", "0".repeat((exp - n + 1) as usize)), String::new())
    } else if exp >= 0 {
        let (int, frac) = digits.split_at(exp as usize + 1);
        (int.into(), frac.into())
    } else {
        ("0".into(), format!("{}{digits}", "0".repeat((-exp - 1) as usize)))
    }
}

/// The digits after the point of `|v|`'s scientific mantissa in NumPy's first pass: its unique
/// digits (`digits`), or [`PRECISION`] of them rounded, trailing zeros dropped.
fn scientific_precision(v: f64, digits: &str) -> usize {
    if digits.len() - 1 <= PRECISION {
        return digits.len() - 1;
    }
    let (digits, _) = split_exponent(&format!("{:.PRECISION$e}", v.abs()));
    digits.trim_end_matches('0').len().max(1) - 1
}

/// `|v|`'s scientific mantissa with `precision` digits after the point, as NumPy's second pass
/// writes it (`min_digits`): its unique digits where they are that many, else its exact value
/// rounded to them (`9.998e-02` for f16's 0.1 among values that need three).
fn scientific_text(v: f64, (digits, exp): &(String, i32), precision: usize) -> (String, i32) {
    if digits.len() - 1 != precision {
        return scientific_parts(v, precision);
    }
    let (first, rest) = digits.split_at(1);
    (if rest.is_empty() { first.into() } else { format!("{first}.{rest}") }, *exp)
}

/// `|v|` with `precision` digits after its mantissa's point, rounded from its exact value:
/// `(mantissa, exponent)`.
fn scientific_parts(v: f64, precision: usize) -> (String, i32) {
    let text = format!("{:.precision$e}", v.abs());
    let (mantissa, exp) = text.split_once('e').expect("an exponent");
    (mantissa.into(), exp.parse().expect("an integer exponent"))
}

/// `v` rounded to `dtype` (NumPy 2 compares an array's values with a Python float, and
/// divides them, in the array's dtype).
fn in_dtype(v: f64, dtype: DType) -> f64 {
    match dtype {
        DType::F16 => crate::f16_of_f64(v).to_f64(),
        DType::BF16 => crate::bf16_of_f64(v).to_f64(),
        DType::F32 => v as f32 as f64,
        _ => v,
    }
}

/// NumPy's `finfo(dtype).precision`: the decimal digits the dtype holds.
fn decimal_digits(dtype: DType) -> i32 {
    match dtype {
        DType::F16 => 3,
        DType::BF16 => 2,
        DType::F32 => 6,
        _ => 15,
    }
}

/// Every shown float's text, as NumPy's default `FloatingFormat` (floatmode `maxprec`) writes
/// them: positional with the fewest digits that read back in the value's own dtype (`1.`, `0.5`),
/// at most [`PRECISION`] after the point, padded with spaces to the most any value needs; or
/// scientific when the magnitudes call for it, every mantissa with as many digits as the longest
/// needs (more than a value needs are more of its exact digits, NumPy's `min_digits`) and every
/// exponent as wide. Each value's unique digits are found once.
fn format_floats(values: &[f64], dtype: DType) -> Vec<String> {
    let unique: Vec<Option<(String, i32)>> =
        values.iter().map(|&v| v.is_finite().then(|| unique_digits(v, dtype))).collect();
    let finite = || values.iter().zip(&unique).filter_map(|(&v, u)| Some((v, u.as_ref()?)));
    let abs_nonzero: Vec<f64> = finite().map(|(v, _)| v.abs()).filter(|&v| v > 0.0).collect();
    let max = abs_nonzero.iter().copied().fold(0.0, f64::max);
    let min = abs_nonzero.iter().copied().fold(f64::INFINITY, f64::min);
    // NumPy 2's cutoffs: 10^min(8, the dtype's digits) and up, under 1e-4, or spread by over 1e3.
    let cutoff = 10f64.powi(decimal_digits(dtype).min(8));
    let scientific = !abs_nonzero.is_empty()
        && (max >= cutoff || min < in_dtype(1e-4, dtype) || in_dtype(max / min, dtype) > 1e3);
    let sign = |v: f64| if v.is_sign_negative() { "-" } else { "" };
    let non_finite = |v: f64| match v.is_nan() {
        true => "nan".to_string(),
        false => format!("{}inf", sign(v)),
    };
    if scientific {
        let precision = finite().map(|(v, (digits, _))| scientific_precision(v, digits)).max().unwrap_or(0);
        let parts: Vec<Option<(String, i32)>> = (values.iter().zip(&unique))
            .map(|(&v, u)| Some(scientific_text(v, u.as_ref()?, precision)))
            .collect();
        let exp_digits = parts.iter().flatten().map(|(_, exp)| exp.unsigned_abs().to_string().len()).max();
        let exp_digits = exp_digits.unwrap_or(0).max(2);
        return (values.iter().zip(parts))
            .map(|(&v, part)| {
                let Some((mantissa, exp)) = part else { return non_finite(v) };
                let point = if mantissa.contains('.') { "" } else { "." };
                let exp_sign = if exp < 0 { '-' } else { '+' };
                format!("{}{mantissa}{point}e{exp_sign}{:0exp_digits$}", sign(v), exp.abs())
            })
            .collect();
    }
    let parts: Vec<Option<(String, String)>> =
        values.iter().zip(&unique).map(|(&v, u)| Some(positional_parts(v, u.as_ref()?))).collect();
    let precision = parts.iter().flatten().map(|(_, frac)| frac.len()).max().unwrap_or(0);
    (values.iter().zip(parts))
        .map(|(&v, part)| {
            let Some((int, frac)) = part else { return non_finite(v) };
            format!("{}{int}.{frac}{}", sign(v), " ".repeat(precision - frac.len()))
        })
        .collect()
}

/// A 0-d array's text: NumPy prints its scalar (`str(np.float32(2))` is `2.0`, where an element
/// of an array is `2.`): the unique digits, positional from 1e-4 up to a cutoff of the dtype's
/// (f16 1e3, f32 1e6, f64 1e16), scientific otherwise (`1e+16`); a complex number as Python
/// writes one (`(3+0j)`, `1j`, `(1e+20-0.5j)`).
fn scalar_text(t: &Tensor) -> String {
    let dtype = t.dtype();
    if dtype.is_complex() {
        let part = if dtype == DType::C64 { DType::F32 } else { DType::F64 };
        let (re, im) = complex_at(t, 0);
        let imag = scalar_float(im, part, false);
        if re == 0.0 && !re.is_sign_negative() {
            return format!("{imag}j");
        }
        let sign = if imag.starts_with('-') { "" } else { "+" };
        return format!("({}{sign}{imag}j)", scalar_float(re, part, false));
    }
    scalar_float(t.float_at(0).expect("a float scalar"), dtype, true)
}

/// One float as NumPy's scalar `str` writes it; `point_zero`: a whole number keeps `.0`
/// (a complex number's parts do not).
fn scalar_float(v: f64, dtype: DType, point_zero: bool) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    let sign = if v.is_sign_negative() { "-" } else { "" };
    let cutoff = match dtype {
        DType::F64 => 1e16,
        d => 10f64.powi(decimal_digits(d)),
    };
    let (digits, exp) = unique_digits(v, dtype);
    let a = v.abs();
    if a == 0.0 || (1e-4..cutoff).contains(&a) {
        let (int, frac) = positional(&digits, exp);
        return match (frac.is_empty(), point_zero) {
            (true, true) => format!("{sign}{int}.0"),
            (true, false) => format!("{sign}{int}"),
            (false, _) => format!("{sign}{int}.{frac}"),
        };
    }
    let (first, rest) = digits.split_at(1);
    let point = if rest.is_empty() { "" } else { "." };
    format!("{sign}{first}{point}{rest}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs())
}

pub fn format_tensor(t: &Tensor, opts: &PrintOptions) -> String {
    let n = t.numel();
    let summarize = n > opts.threshold;
    let shape = t.shape();
    // The linear indices of the elements that are shown.
    let shown = |axis: usize, len: usize| -> Vec<Option<usize>> {
        let _ = axis;
        if summarize && len > 2 * opts.edgeitems {
            (0..opts.edgeitems).map(Some).chain([None]).chain((len - opts.edgeitems..len).map(Some)).collect()
        } else {
            (0..len).map(Some).collect()
        }
    };
    let dtype = t.dtype();
    if shape.is_empty() && (dtype.is_float() || dtype.is_complex()) {
        return scalar_text(t);
    }
    let mut visible = vec![];
    collect(shape, 0, 0, &shown, &mut visible);
    let texts: Vec<String> = if dtype.is_float() {
        let values: Vec<f64> = visible.iter().map(|&i| t.float_at(i).expect("a float element")).collect();
        format_floats(&values, dtype)
    } else if dtype.is_complex() {
        // As NumPy writes them: the real parts in one float style, the imaginary parts in
        // another, signed, then `j` (`1.+2.j`, `0.5-1.j`).
        let part = if dtype == DType::C64 { DType::F32 } else { DType::F64 };
        let (re, im): (Vec<f64>, Vec<f64>) = visible.iter().map(|&i| complex_at(t, i)).unzip();
        let reals = format_floats(&re, part);
        let imags: Vec<String> = (format_floats(&im, part).into_iter())
            .map(|imag| if imag.starts_with('-') { imag } else { format!("+{imag}") })
            .collect();
        // Each part right-aligned among its own kind; the imaginary digits' padding after the `j`.
        let (re_width, im_width) = (widest(&reals), widest(&imags));
        (reals.iter().zip(&imags))
            .map(|(r, i)| {
                let digits = i.trim_end();
                let pad = " ".repeat(i.len() - digits.len());
                format!("{r:>re_width$}{digits:>0$}j{pad}", im_width - pad.len())
            })
            .collect()
    } else if dtype == DType::Bool {
        visible.iter().map(|&i| if t.bytes()[i] != 0 { "True".into() } else { "False".into() }).collect()
    } else {
        visible.iter().map(|&i| t.int_at(i).unwrap_or_default().to_string()).collect()
    };
    if shape.is_empty() {
        return texts.into_iter().next().unwrap_or_default().trim_end().to_string();
    }
    if n == 0 {
        return "[]".into();
    }
    let width = texts.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut it = texts.into_iter();
    let mut out = String::new();
    block(shape, 0, &shown, &mut it, width, opts.linewidth, &mut out);
    out
}

/// The linear indices shown, in print order.
fn collect(
    shape: &[usize],
    axis: usize,
    base: usize,
    shown: &dyn Fn(usize, usize) -> Vec<Option<usize>>,
    out: &mut Vec<usize>,
) {
    if axis == shape.len() {
        out.push(base);
        return;
    }
    let stride: usize = shape[axis + 1..].iter().product();
    for i in shown(axis, shape[axis]).into_iter().flatten() {
        collect(shape, axis + 1, base + i * stride, shown, out);
    }
}

fn block(
    shape: &[usize],
    axis: usize,
    shown: &dyn Fn(usize, usize) -> Vec<Option<usize>>,
    texts: &mut impl Iterator<Item = String>,
    width: usize,
    linewidth: usize,
    out: &mut String,
) {
    let rank = shape.len();
    let indent = " ".repeat(axis + 1);
    out.push('[');
    let items = shown(axis, shape[axis]);
    if axis + 1 == rank {
        // NumPy's rule (arrayprint._formatArray): a word wraps when the line, hanging indent and
        // trailing separator included, would pass the width left at this depth minus one for
        // the closing bracket; a line holding only the indent never wraps.
        let limit = linewidth.saturating_sub(axis + 1);
        let mut line_len = axis + 1;
        for (k, item) in items.iter().enumerate() {
            let word = match item {
                Some(_) => format!("{:>width$}", texts.next().unwrap_or_default()),
                None => "...".to_string(),
            };
            if line_len + word.len() > limit && line_len > axis + 1 {
                // The separator and padding before the wrap are dropped (NumPy strips the line).
                while out.ends_with(' ') {
                    out.pop();
                }
                out.push('\n');
                out.push_str(&indent);
                line_len = axis + 1;
            }
            out.push_str(&word);
            line_len += word.len();
            if k + 1 < items.len() {
                out.push(' ');
                line_len += 1;
            }
        }
    } else {
        let blank_lines = rank - axis - 1;
        for (k, item) in items.iter().enumerate() {
            if k > 0 {
                out.push_str(&"\n".repeat(blank_lines));
                out.push_str(&indent);
            }
            match item {
                Some(_) => block(shape, axis + 1, shown, texts, width, linewidth, out),
                None => out.push_str("..."),
            }
        }
    }
    out.push(']');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ints(dtype: DType, shape: &[usize]) -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_i64s(dtype, shape, &(0..n as i64).collect::<Vec<_>>()).unwrap()
    }

    fn floats(shape: &[usize], values: &[f32]) -> Tensor {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        Tensor::from_bytes(DType::F32, shape, &bytes).unwrap()
    }

    fn show(t: &Tensor) -> String {
        format_tensor(t, &PrintOptions::default())
    }

    // Expected strings are NumPy 2.x's `str(x)` for the same arrays.
    #[test]
    fn integers() {
        assert_eq!(show(&ints(DType::I64, &[2, 3])), "[[0 1 2]\n [3 4 5]]");
        assert_eq!(show(&ints(DType::I32, &[2, 2, 2])), "[[[0 1]\n  [2 3]]\n\n [[4 5]\n  [6 7]]]");
        assert_eq!(
            show(&Tensor::from_i64s(DType::I8, &[2, 2], &[1, 2, 9, 10]).unwrap()),
            "[[ 1  2]\n [ 9 10]]"
        );
        assert_eq!(show(&Tensor::scalar_i64(-7)), "-7");
        assert_eq!(show(&ints(DType::U8, &[0, 3])), "[]");
    }

    #[test]
    fn summarized() {
        assert_eq!(show(&ints(DType::I64, &[2000])), "[   0    1    2 ... 1997 1998 1999]");
    }

    #[test]
    fn wrapped() {
        let s = show(&ints(DType::I64, &[30]));
        assert_eq!(
            s,
            "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n 24 25 26 27 28 29]"
        );
        let s = show(&ints(DType::I64, &[25]));
        assert_eq!(s, "[ 0  1  2  3  4  5  6  7  8  9 10 11 12 13 14 15 16 17 18 19 20 21 22 23\n 24]");
        let m =
            Tensor::from_i64s(DType::I64, &[2, 6], &(0..12).map(|v| v * 1000).collect::<Vec<_>>()).unwrap();
        assert_eq!(
            show(&m),
            "[[    0  1000  2000  3000  4000  5000]\n [ 6000  7000  8000  9000 10000 11000]]"
        );
    }

    #[test]
    fn complexes() {
        let values: Vec<u8> = [1.0f32, 2.0, 0.5, -4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(show(&Tensor::from_bytes(DType::C64, &[2], &values).unwrap()), "[1. +2.j 0.5-4.j]");
        let values: Vec<u8> = [1.0f64, 2.5, 3.0, -4.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(show(&Tensor::from_bytes(DType::C128, &[2], &values).unwrap()), "[1.+2.5j 3.-4.j ]");
        let one: Vec<u8> = [3.0f64, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
        assert_eq!(show(&Tensor::from_bytes(DType::C128, &[], &one).unwrap()), "(3+0j)");
    }

    #[test]
    fn floats_and_bools() {
        assert_eq!(show(&floats(&[3], &[0.0, 1.0, 2.0])), "[0. 1. 2.]");
        assert_eq!(show(&floats(&[3], &[0.5, 1.25, -2.0])), "[ 0.5   1.25 -2.  ]");
        assert_eq!(show(&floats(&[2], &[f32::NAN, f32::NEG_INFINITY])), "[ nan -inf]");
        assert_eq!(show(&floats(&[2], &[0.1, 0.25])), "[0.1  0.25]");
        assert_eq!(show(&floats(&[2], &[-0.0, 1.0])), "[-0.  1.]");
        assert_eq!(show(&floats(&[2], &[1e-5, 1.0])), "[1.e-05 1.e+00]");
        assert_eq!(show(&floats(&[2], &[1.5e10, 2.0])), "[1.5e+10 2.0e+00]");
        let b = Tensor::from_bytes(DType::Bool, &[2], &[1, 0]).unwrap();
        assert_eq!(show(&b), "[ True False]");
    }
}
