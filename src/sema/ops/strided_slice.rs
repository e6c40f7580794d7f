//! `strided_slice(data, begin, end, stride, begin_mask=, end_mask=, new_axis_mask=,
//! shrink_axis_mask=, ellipsis_mask=)`: OpenVINO StridedSlice-1.

use super::{Checker, bind, invalid};
use crate::sema::check::{err, view};
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::shape::{adjusted, bound_for, stepped_range};
use crate::sema::typed::{TExpr, ViewDim};
use crate::source::Span;
use crate::syntax::ast::Arg;
use crate::types::sym::{SymExpr, SymRange};

/// The form's name and parameters, positional in this order (the operator table reads them).
pub(super) const NAME: &str = "strided_slice";
pub(super) const REQUIRED: [&str; 3] = ["data", "begin", "end"];
pub(super) const OPTIONAL: [&str; 6] =
    ["stride", "begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask"];

/// The arguments of a `strided_slice` call.
pub(super) struct Args<'a> {
    data: &'a Arg,
    begin: &'a Arg,
    end: &'a Arg,
    stride: Option<&'a Arg>,
    begin_mask: Option<&'a Arg>,
    end_mask: Option<&'a Arg>,
    new_axis_mask: Option<&'a Arg>,
    shrink_axis_mask: Option<&'a Arg>,
    ellipsis_mask: Option<&'a Arg>,
}

impl<'a> Args<'a> {
    pub(super) fn bind(args: &'a [Arg], span: Span) -> Result<Args<'a>, SemaError> {
        let (
            [data, begin, end],
            [stride, begin_mask, end_mask, new_axis_mask, shrink_axis_mask, ellipsis_mask],
        ) = bind(NAME, REQUIRED, OPTIONAL, args, span)?;
        Ok(Args {
            data,
            begin,
            end,
            stride,
            begin_mask,
            end_mask,
            new_axis_mask,
            shrink_axis_mask,
            ellipsis_mask,
        })
    }
}

impl Checker<'_> {
    /// OpenVINO StridedSlice-1 (docs/semantics.md, strided_slice).
    pub(super) fn strided_slice(&mut self, args: Args, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(args.data)?;
        let begin_arg = args.begin;
        let begin = self.bound_list(begin_arg)?;
        let end_arg = args.end;
        let end = self.bound_list(end_arg)?;
        let m = begin.len();
        if end.len() != m {
            return invalid(
                format!("`end` has {} values but `begin` has {m}", end.len()),
                "wrong length",
                end_arg.value.span,
            );
        }
        let stride = match args.stride {
            None => vec![1; m],
            Some(arg) => {
                let s = self.int_list(arg)?;
                if s.len() != m {
                    return invalid(
                        format!("`stride` has {} values but `begin` has {m}", s.len()),
                        "wrong length",
                        arg.value.span,
                    );
                }
                s
            }
        };
        let stride_span = args.stride.map_or(span, |a| a.value.span);
        let begin_mask = self.mask(args.begin_mask)?;
        let end_mask = self.mask(args.end_mask)?;
        let new_axis = self.mask(args.new_axis_mask)?;
        let shrink = self.mask(args.shrink_axis_mask)?;
        let ellipsis = self.mask(args.ellipsis_mask)?;
        let bit = |mask: &[bool], i: usize| mask.get(i) == Some(&true);

        // OpenVINO counts ellipsis bits over the whole mask, past the last entry too
        // (docs/semantics.md, Where the sources disagree).
        if ellipsis.iter().filter(|&&b| b).count() > 1 {
            let ellipsis_span = args.ellipsis_mask.map_or(span, |a| a.value.span);
            return invalid("at most one ellipsis bit may be set", "two ellipsis bits", ellipsis_span);
        }
        // One kind per entry, by OpenVINO's precedence; bits past the last entry mean nothing.
        let kinds: Vec<Entry> = (0..m)
            .map(|i| {
                if bit(&ellipsis, i) {
                    Entry::Ellipsis
                } else if bit(&new_axis, i) {
                    Entry::NewAxis
                } else if bit(&shrink, i) {
                    Entry::Shrink
                } else {
                    Entry::Ordinary
                }
            })
            .collect();
        let shape = data.ty.shape.clone();
        let rank = shape.len();
        let real = kinds.iter().filter(|k| matches!(k, Entry::Shrink | Entry::Ordinary)).count();
        if real > rank {
            return invalid(
                format!("{real} entries consume an axis, but the data has only {rank}"),
                "too many entries",
                begin_arg.value.span,
            );
        }
        let covered = rank - real; // by the (possibly implicit) ellipsis
        // A shrink entry's begin must index its axis (its begin_mask bit is ignored).
        let shrink_index = |checker: &mut Self, i: usize, axis: usize| -> Result<SymExpr, SemaError> {
            let (index, size) = (&begin[i], &shape[axis]);
            let refusal = || {
                let kind = K::IndexOutOfRange { index: index.clone(), axis, size: size.clone() };
                SemaError::new(kind, begin_arg.value.span)
            };
            checker.index_into(index, size, refusal)
        };
        let mut dims = Vec::with_capacity(m + rank);
        let mut axis = 0;
        for (i, kind) in kinds.iter().enumerate() {
            match kind {
                Entry::Ellipsis => {
                    // OpenVINO also checks the begin of an ellipsis entry that carries the shrink
                    // bit (and not the new-axis bit) against the first axis the ellipsis covers,
                    // and then ignores it (docs/semantics.md, Where the sources disagree).
                    if bit(&shrink, i) && !bit(&new_axis, i) {
                        if axis == rank {
                            return invalid(
                                format!(
                                    "entry {i} sets the ellipsis and shrink bits, but no axis is left to check its begin against"
                                ),
                                "ellipsis and shrink after the last axis",
                                begin_arg.value.span,
                            );
                        }
                        shrink_index(self, i, axis)?;
                    }
                    for _ in 0..covered {
                        dims.push(ViewDim::Range {
                            start: SymExpr::constant(0),
                            step: 1,
                            len: shape[axis].clone(),
                        });
                        axis += 1;
                    }
                }
                Entry::NewAxis => dims.push(ViewDim::NewAxis),
                Entry::Shrink => {
                    // begin_mask and end_mask mean nothing here: a shrink entry takes its begin,
                    // as the spec, OpenVINO's reference and TensorFlow say (the CPU plugin takes
                    // element 0 under begin_mask; docs/semantics.md, Where the sources disagree).
                    dims.push(ViewDim::Pick(shrink_index(self, i, axis)?));
                    axis += 1;
                }
                Entry::Ordinary => {
                    // Only ordinary entries read their stride; OpenVINO accepts 0 elsewhere.
                    if stride[i] == 0 {
                        return err(K::ZeroStep, stride_span);
                    }
                    let (b, e) = (bit(&begin_mask, i), bit(&end_mask, i));
                    let r = normalize_openvino(&shape[axis], &begin[i], &end[i], stride[i], b, e);
                    dims.push(ViewDim::Range { start: r.first, step: r.step, len: r.len });
                    axis += 1;
                }
            }
        }
        if !kinds.contains(&Entry::Ellipsis) {
            for n in &shape[axis..] {
                dims.push(ViewDim::whole(n));
            }
        }
        view(data, dims, span)
    }
}

/// What one entry of `begin` is: its first bit in the order ellipsis, new-axis, shrink.
#[derive(Clone, Copy, PartialEq)]
enum Entry {
    Ellipsis,
    NewAxis,
    Shrink,
    Ordinary,
}

/// OpenVINO's per-axis normalization for an ordinary StridedSlice entry (docs/semantics.md, strided_slice):
/// a reverse begin still below 0 after adjustment clamps to 0 (unlike NumPy, which clamps to -1
/// and yields nothing). An empty axis clamps to an empty range.
fn normalize_openvino(
    n: &SymExpr,
    begin: &SymExpr,
    end: &SymExpr,
    k: i64,
    begin_mask: bool,
    end_mask: bool,
) -> SymRange {
    let c = SymExpr::constant;
    let (begin, end) = (&bound_for(begin, n), &bound_for(end, n));
    let (f, e) = if k > 0 {
        let f = if begin_mask { c(0) } else { adjusted(begin, n, &c(0), n) };
        let e = if end_mask { n.clone() } else { adjusted(end, n, &c(0), n) };
        (f, e)
    } else {
        let f = if begin_mask { n - 1 } else { adjusted(begin, n, &c(0), &(n - 1)) };
        let e = if end_mask { c(-1) } else { adjusted(end, n, &c(-1), n) };
        (f, e)
    };
    stepped_range(&f, &e, k)
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

    fn normalize_openvino(
        n: i64,
        begin: i64,
        end: i64,
        k: i64,
        begin_mask: bool,
        end_mask: bool,
    ) -> SymRange {
        let c = SymExpr::constant;
        super::normalize_openvino(&c(n), &c(begin), &c(end), k, begin_mask, end_mask)
    }

    #[test]
    fn openvino_reverse_begin_clamps_to_zero() {
        // docs/semantics.md, strided_slice: strided_slice(a, [-5], [0], [-1], end_mask=[1]) on n = 4 gives [0].
        assert_eq!(elems(normalize_openvino(4, -5, 0, -1, false, true)), vec![0]);
        assert_eq!(elems(normalize_openvino(4, 3, 0, -1, false, false)), vec![3, 2, 1]);
        assert_eq!(elems(normalize_openvino(4, 0, 0, -1, true, true)), vec![3, 2, 1, 0]);
        assert_eq!(elems(normalize_openvino(4, 1, 1, 1, false, false)), Vec::<i64>::new());
        assert_eq!(elems(normalize_openvino(2, 1234, 4321, -1, false, false)), Vec::<i64>::new());
    }

    /// Over symbols (a dim, run-time bounds) the normalization evaluates, for every binding, to
    /// its constant form: the concrete normalization.
    fn symbolic_equals_concrete(n: i64, begin: i64, end: i64, k: i64, masks: (bool, bool)) {
        let env = Env::new().dim("N", n).scalar("b", begin).scalar("e", end);
        let (b, e) = (SymExpr::scalar("b"), SymExpr::scalar("e"));
        let r = super::normalize_openvino(&SymExpr::dim("N"), &b, &e, k, masks.0, masks.1);
        let c = normalize_openvino(n, begin, end, k, masks.0, masks.1);
        assert_eq!(r.first.eval_i64(&env), c.first.as_const(), "first of {r:?}");
        assert_eq!(r.len.eval_i64(&env), c.len.as_const(), "len of {r:?}");
    }

    fn wide() -> impl Strategy<Value = i64> {
        prop_oneof![-8i64..8, any::<i64>(), Just(i64::MIN), Just(i64::MAX)]
    }

    proptest! {
        #[test]
        fn symbolic_openvino_is_the_concrete_one(
            n in prop_oneof![0i64..8, Just(MAX_DIM), Just(MAX_DIM - 1)],
            begin in wide(),
            end in wide(),
            k in prop_oneof![-3i64..=3, Just(i64::MIN), Just(i64::MAX)].prop_filter("non-zero", |k| *k != 0),
            masks in any::<(bool, bool)>(),
        ) {
            symbolic_equals_concrete(n, begin, end, k, masks);
        }
    }
}
