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

/// Formats every shown float the way NumPy's default `FloatingFormat` does: positional with
/// the fewest digits that round-trip (`1.`, `0.5`), or scientific when the magnitudes call for it.
struct FloatStyle {
    scientific: bool,
    /// Digits after the point (positional): the most any shown value needs.
    precision: usize,
}

fn shortest(v: f64, dtype: DType) -> String {
    // The shortest round-trip digits for the value's own precision.
    match dtype {
        DType::F32 => format!("{}", v as f32),
        DType::F16 => format!("{}", half::f16::from_f64(v)),
        DType::BF16 => format!("{}", half::bf16::from_f64(v)),
        _ => format!("{v}"),
    }
}

fn float_style(values: &[f64], dtype: DType) -> FloatStyle {
    let finite: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    let abs_nonzero: Vec<f64> = finite.iter().map(|v| v.abs()).filter(|&v| v > 0.0).collect();
    let max = abs_nonzero.iter().copied().fold(0.0, f64::max);
    let min = abs_nonzero.iter().copied().fold(f64::INFINITY, f64::min);
    let scientific = !abs_nonzero.is_empty() && (max >= 1e16 || min < 1e-4 || max / min > 1e3);
    let digits_after_point = |s: &str| s.split_once('.').map_or(0, |(_, frac)| frac.len());
    let precision = finite
        .iter()
        .map(|&v| {
            if scientific {
                digits_after_point(&scientific_parts(v, dtype).0)
            } else {
                digits_after_point(&shortest(v, dtype))
            }
        })
        .max()
        .unwrap_or(0);
    FloatStyle { scientific, precision }
}

fn format_float(v: f64, style: &FloatStyle, dtype: DType) -> String {
    if v.is_nan() {
        return "nan".into();
    }
    if v.is_infinite() {
        return if v > 0.0 { "inf".into() } else { "-inf".into() };
    }
    if style.scientific {
        let (mantissa, exp) = scientific_parts(v, dtype);
        let (int, frac) = mantissa.split_once('.').unwrap_or((&mantissa, ""));
        let zeros = "0".repeat(style.precision.saturating_sub(frac.len()));
        return format!("{int}.{frac}{zeros}e{}{:02}", if exp < 0 { '-' } else { '+' }, exp.abs());
    }
    let s = shortest(v, dtype);
    let (int, frac) = s.split_once('.').unwrap_or((&s, ""));
    format!("{int}.{frac}{}", " ".repeat(style.precision.saturating_sub(frac.len())))
}

/// The shortest round-trip mantissa (`1.5`, `2`) and the decimal exponent of `v`.
fn scientific_parts(v: f64, dtype: DType) -> (String, i32) {
    let s = match dtype {
        DType::F32 => format!("{:e}", v as f32),
        DType::F16 => format!("{:e}", half::f16::from_f64(v).to_f32()),
        DType::BF16 => format!("{:e}", half::bf16::from_f64(v).to_f32()),
        _ => format!("{v:e}"),
    };
    let (mantissa, exp) = s.split_once('e').unwrap_or((&s, "0"));
    (mantissa.to_string(), exp.parse().unwrap_or(0))
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
    let mut visible = vec![];
    collect(shape, 0, 0, &shown, &mut visible);
    let dtype = t.dtype();
    let texts: Vec<String> = if dtype.is_float() {
        let values: Vec<f64> = visible.iter().map(|&i| t.float_at(i).expect("a float element")).collect();
        let style = float_style(&values, dtype);
        values.iter().map(|&v| format_float(v, &style, dtype)).collect()
    } else if dtype.is_complex() {
        // As NumPy writes them: the real parts in one float style, the imaginary parts in
        // another, signed, then `j` (`1.+2.j`, `0.5-1.j`).
        let part = if dtype == DType::C64 { DType::F32 } else { DType::F64 };
        let (re, im): (Vec<f64>, Vec<f64>) = visible.iter().map(|&i| complex_at(t, i)).unzip();
        let (re_style, im_style) = (float_style(&re, part), float_style(&im, part));
        let reals: Vec<String> = re.iter().map(|&r| format_float(r, &re_style, part)).collect();
        let imags: Vec<String> = (im.iter())
            .map(|&i| {
                let imag = format_float(i, &im_style, part);
                if imag.starts_with('-') { imag } else { format!("+{imag}") }
            })
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
                // The separator before the wrap is dropped (NumPy strips the line).
                if out.ends_with(' ') {
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
        assert_eq!(show(&Tensor::from_bytes(DType::C128, &[], &one).unwrap()), "3.+0.j");
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
