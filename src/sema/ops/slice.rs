//! `slice(data, starts, ends, axes=, steps=)`: ONNX Slice-13 (the same results as 10 and 11).

use super::{Checker, bind, invalid};
use crate::sema::check::{err, view};
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::shape::{adjusted, bound_for, stepped_range};
use crate::sema::typed::{TExpr, ViewDim};
use crate::source::Span;
use crate::syntax::ast::Arg;
use crate::types::sym::{Cond, SymExpr, SymRange};

/// The form's name and parameters, positional in this order (the operator table reads them).
pub(super) const NAME: &str = "slice";
pub(super) const REQUIRED: [&str; 3] = ["data", "starts", "ends"];
pub(super) const OPTIONAL: [&str; 2] = ["axes", "steps"];

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
        let ([data, starts, ends], [axes, steps]) = bind(NAME, REQUIRED, OPTIONAL, args, span)?;
        Ok(Args { data, starts, ends, axes, steps })
    }
}

impl Checker<'_> {
    /// ONNX Slice-13 (docs/semantics.md, slice).
    pub(super) fn onnx_slice(&mut self, args: Args, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(args.data)?;
        let starts_arg = args.starts;
        let starts = self.bound_list(starts_arg)?;
        let ends_arg = args.ends;
        let ends = self.bound_list(ends_arg)?;
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
        let mut dims: Vec<ViewDim> = shape.iter().map(ViewDim::whole).collect();
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
            let r = normalize_onnx(&shape[a], &starts[i], &ends[i], steps[i]);
            dims[a] = ViewDim::Range { start: r.first, step: r.step, len: r.len };
        }
        view(data, dims, span)
    }
}

/// ONNX Slice-13's per-axis normalization (docs/semantics.md, slice): bounds counted from the
/// end when negative, then clamped to `[0, n]` (`[0, n-1]` and `[-1, n-1]` for a negative step).
/// An empty axis clamps to an empty range. With a negative step, an end of `INT32_MAX` or
/// `INT64_MAX` means "through element 0", as ONNX Runtime reads it (the text would clamp it to
/// `n-1`, giving nothing).
fn normalize_onnx(n: &SymExpr, start: &SymExpr, end: &SymExpr, step: i64) -> SymRange {
    let c = SymExpr::constant;
    let (raw_end, start, end) = (end, &bound_for(start, n), &bound_for(end, n));
    let (s, e) = if step > 0 {
        (adjusted(start, n, &c(0), n), adjusted(end, n, &c(0), n))
    } else {
        let last = n - 1;
        let clamped = adjusted(end, n, &c(-1), &last);
        let to_the_end = [i64::MAX, i32::MAX as i64];
        let e = match raw_end.as_const() {
            Some(v) if to_the_end.contains(&v) => c(-1),
            Some(_) => clamped,
            None => {
                to_the_end.iter().fold(clamped, |e, &v| SymExpr::select(Cond::eq(raw_end, &c(v)), &c(-1), &e))
            }
        };
        (adjusted(start, n, &c(0), &last), e)
    };
    stepped_range(&s, &e, step)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::sym::{Env, MAX_DIM};
    use proptest::prelude::*;

    fn elems(r: SymRange) -> Vec<i64> {
        let (first, len) = (r.first.as_const().unwrap(), r.len.as_const().unwrap());
        (0..len).map(|j| first + j * r.step).collect()
    }

    fn normalize_onnx(n: i64, start: i64, end: i64, step: i64) -> SymRange {
        let c = SymExpr::constant;
        super::normalize_onnx(&c(n), &c(start), &c(end), step)
    }

    #[test]
    fn onnx_clamping() {
        // docs/semantics.md, slice: starts [-10], ends [INT64_MIN], steps [-1] on length 4 gives [0].
        assert_eq!(elems(normalize_onnx(4, -10, i64::MIN, -1)), vec![0]);
        // ONNX Runtime: INT64_MAX and INT32_MAX ends with a negative step run through element 0.
        assert_eq!(elems(normalize_onnx(4, 3, i64::MAX, -1)), vec![3, 2, 1, 0]);
        assert_eq!(elems(normalize_onnx(4, 9, i32::MAX as i64, -2)), vec![3, 1]);
        assert_eq!(elems(normalize_onnx(4, 3, i32::MAX as i64 + 1, -1)), Vec::<i64>::new());
        assert_eq!(elems(normalize_onnx(0, 3, i64::MAX, -1)), Vec::<i64>::new());
        assert_eq!(elems(normalize_onnx(4, 0, i64::MAX, 1)), vec![0, 1, 2, 3]);
        assert_eq!(elems(normalize_onnx(4, -1, i64::MIN, -2)), vec![3, 1]);
    }

    /// Over symbols (a dim, run-time bounds) the normalization evaluates, for every binding, to
    /// its constant form: the concrete normalization.
    fn symbolic_equals_concrete(n: i64, start: i64, end: i64, step: i64) {
        let env = Env::new().dim("N", n).scalar("s", start).scalar("e", end);
        let r = super::normalize_onnx(&SymExpr::dim("N"), &SymExpr::scalar("s"), &SymExpr::scalar("e"), step);
        let c = normalize_onnx(n, start, end, step);
        assert_eq!(r.first.eval_i64(&env), c.first.as_const(), "first of {r:?}");
        assert_eq!(r.len.eval_i64(&env), c.len.as_const(), "len of {r:?}");
    }

    fn wide() -> impl Strategy<Value = i64> {
        prop_oneof![-8i64..8, any::<i64>(), Just(i64::MIN), Just(i64::MAX), Just(i32::MAX as i64)]
    }

    proptest! {
        #[test]
        fn symbolic_onnx_is_the_concrete_one(
            n in prop_oneof![0i64..8, Just(MAX_DIM), Just(MAX_DIM - 1)],
            start in wide(),
            end in wide(),
            step in prop_oneof![-3i64..=3, Just(i64::MIN), Just(i64::MAX)].prop_filter("non-zero", |k| *k != 0),
        ) {
            symbolic_equals_concrete(n, start, end, step);
        }
    }
}
