//! `slice(data, starts, ends, axes=, steps=)`: ONNX Slice-13 (the same results as 10 and 11).

use super::{Checker, bind, invalid};
use crate::sema::check::{err, view};
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::shape::Range;
use crate::sema::typed::{TExpr, ViewDim};
use crate::source::Span;
use crate::syntax::ast::Arg;

/// The arguments of a `slice` call.
pub(super) struct Args<'a> {
    data: &'a Arg,
    starts: &'a Arg,
    ends: &'a Arg,
    axes: Option<&'a Arg>,
    steps: Option<&'a Arg>,
}

impl<'a> Args<'a> {
    pub(super) fn bind(args: &'a [Arg], span: Span) -> Result<Args<'a>, SemaError> {
        let ([data, starts, ends], [axes, steps]) =
            bind("slice", ["data", "starts", "ends"], ["axes", "steps"], args, span)?;
        Ok(Args { data, starts, ends, axes, steps })
    }
}

impl Checker<'_> {
    /// ONNX Slice-13 (docs/semantics.md, slice).
    pub(super) fn onnx_slice(&mut self, args: Args, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(args.data)?;
        let starts_arg = args.starts;
        let starts = self.int_list(starts_arg)?;
        let ends_arg = args.ends;
        let ends = self.int_list(ends_arg)?;
        let l = starts.len();
        let length = |what: &str, found: usize, arg: &Arg| {
            invalid::<()>(
                format!("`{what}` has {found} values but `starts` has {l}"),
                "wrong length",
                arg.value.span,
            )
        };
        if ends.len() != l {
            length("ends", ends.len(), ends_arg)?;
        }
        let rank = data.ty.shape.len() as i64;
        let axes = match args.axes {
            None => (0..l as i64).collect(),
            Some(arg) => {
                let axes = self.int_list(arg)?;
                if axes.len() != l {
                    length("axes", axes.len(), arg)?;
                }
                axes
            }
        };
        let steps = match args.steps {
            None => vec![1; l],
            Some(arg) => {
                let steps = self.int_list(arg)?;
                if steps.len() != l {
                    length("steps", steps.len(), arg)?;
                }
                if steps.contains(&0) {
                    return err(K::ZeroStep, arg.value.span);
                }
                steps
            }
        };
        let axes_span = args.axes.map_or(starts_arg.value.span, |a| a.value.span);
        let shape = data.ty.shape.clone();
        let mut dims: Vec<ViewDim> =
            shape.iter().map(|&n| ViewDim::Range { start: 0, step: 1, len: n }).collect();
        let mut seen = vec![false; shape.len()];
        for i in 0..l {
            let a = axes[i];
            if !(-rank..rank).contains(&a) {
                return invalid(
                    format!("axis {a} is out of range for a tensor of rank {rank}"),
                    "axis out of range",
                    axes_span,
                );
            }
            let a = if a < 0 { a + rank } else { a } as usize;
            if std::mem::replace(&mut seen[a], true) {
                return invalid(format!("axis {a} is repeated"), "repeated axis", axes_span);
            }
            dims[a] = normalize_onnx(shape[a], starts[i], ends[i], steps[i]).into();
        }
        view(data, dims, span)
    }
}

/// ONNX Slice-13's per-axis normalization (docs/semantics.md, slice).
fn normalize_onnx(n: i64, start: i64, end: i64, step: i64) -> Range {
    if n == 0 {
        return Range { first: 0, step, len: 0 };
    }
    let (n, s, e, k) = (n as i128, start as i128, end as i128, step as i128);
    let adjust = |v: i128| if v < 0 { v + n } else { v };
    let (s, e) = if k > 0 {
        (adjust(s).clamp(0, n), adjust(e).clamp(0, n))
    } else {
        (adjust(s).clamp(0, n - 1), adjust(e).clamp(-1, n - 1))
    };
    // ceil((e - s) / k) for either sign of k, at least 0.
    let c = if k > 0 { (e - s + k - 1).div_euclid(k) } else { (s - e + (-k) - 1).div_euclid(-k) };
    let c = c.max(0);
    if c == 0 { Range { first: 0, step, len: 0 } } else { Range { first: s as i64, step, len: c as i64 } }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elems(r: Range) -> Vec<i64> {
        (0..r.len).map(|j| r.first + j * r.step).collect()
    }

    #[test]
    fn onnx_clamping() {
        // docs/semantics.md, slice: starts [-10], ends [INT64_MIN], steps [-1] on length 4 gives [0].
        assert_eq!(elems(normalize_onnx(4, -10, i64::MIN, -1)), vec![0]);
        assert_eq!(elems(normalize_onnx(4, 3, i64::MAX, -1)), Vec::<i64>::new());
        assert_eq!(elems(normalize_onnx(4, 0, i64::MAX, 1)), vec![0, 1, 2, 3]);
        assert_eq!(elems(normalize_onnx(4, -1, i64::MIN, -2)), vec![3, 1]);
    }
}
