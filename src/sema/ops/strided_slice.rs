//! `strided_slice(data, begin, end, stride, begin_mask=, end_mask=, new_axis_mask=,
//! shrink_axis_mask=, ellipsis_mask=)`: OpenVINO StridedSlice-1.

use super::{Checker, bind, invalid};
use crate::sema::check::{err, view};
use crate::sema::error::{SemaError, SemaErrorKind as K};
use crate::sema::shape::Range;
use crate::sema::typed::{TExpr, ViewDim};
use crate::source::Span;
use crate::syntax::ast::Arg;
use crate::types::OobMode;

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
        ) = bind(
            "strided_slice",
            ["data", "begin", "end"],
            ["stride", "begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask"],
            args,
            span,
        )?;
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
        let begin = self.int_list(begin_arg)?;
        let end_arg = args.end;
        let end = self.int_list(end_arg)?;
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
                if s.contains(&0) {
                    return err(K::ZeroStep, arg.value.span);
                }
                s
            }
        };
        let begin_mask = self.mask(args.begin_mask, m)?;
        let end_mask = self.mask(args.end_mask, m)?;
        let new_axis = self.mask(args.new_axis_mask, m)?;
        let shrink = self.mask(args.shrink_axis_mask, m)?;
        let ellipsis = self.mask(args.ellipsis_mask, m)?;
        let ellipsis_span = args.ellipsis_mask.map_or(span, |a| a.value.span);

        let ellipses: Vec<usize> = (0..m).filter(|&i| ellipsis[i]).collect();
        if ellipses.len() > 1 {
            return invalid("at most one ellipsis bit may be set", "two ellipsis bits", ellipsis_span);
        }
        if let Some(&i) = ellipses.first()
            && (new_axis[i] || shrink[i])
        {
            return invalid(
                format!("entry {i} sets the ellipsis bit together with new_axis or shrink_axis"),
                "conflicting bits",
                ellipsis_span,
            );
        }
        let rank = data.ty.shape.len();
        // Entries that consume an input dimension (shrink entries do).
        let real = (0..m).filter(|&i| !ellipsis[i] && !new_axis[i]).count();
        if real > rank {
            return invalid(
                format!("{real} entries consume an axis, but the data has only {rank}"),
                "too many entries",
                begin_arg.value.span,
            );
        }
        let covered = rank - real; // by the (possibly implicit) ellipsis
        let shape = data.ty.shape.clone();
        let mut dims = Vec::with_capacity(m + rank);
        let mut axis = 0;
        for i in 0..m {
            if ellipsis[i] {
                for _ in 0..covered {
                    dims.push(ViewDim::Range { start: 0, step: 1, len: shape[axis] });
                    axis += 1;
                }
            } else if new_axis[i] {
                dims.push(ViewDim::NewAxis);
            } else if shrink[i] {
                let n = shape[axis];
                match OobMode::Error.normalize(begin[i] as i128, n) {
                    Ok(Some(j)) => dims.push(ViewDim::Pick(j)),
                    _ => {
                        return err(
                            K::IndexOutOfRange { index: begin[i], axis, size: n },
                            begin_arg.value.span,
                        );
                    }
                }
                axis += 1;
            } else {
                let r =
                    normalize_openvino(shape[axis], begin[i], end[i], stride[i], begin_mask[i], end_mask[i]);
                dims.push(r.into());
                axis += 1;
            }
        }
        if ellipses.is_empty() {
            for &n in &shape[axis..] {
                dims.push(ViewDim::Range { start: 0, step: 1, len: n });
            }
        }
        view(data, dims, span)
    }
}

/// OpenVINO's per-axis normalization for an ordinary StridedSlice entry (docs/semantics.md, strided_slice):
/// a reverse begin still below 0 after adjustment clamps to 0 (unlike NumPy, which clamps to -1
/// and yields nothing).
fn normalize_openvino(n: i64, begin: i64, end: i64, k: i64, begin_mask: bool, end_mask: bool) -> Range {
    let step = k;
    if n == 0 {
        return Range { first: 0, step, len: 0 };
    }
    let (n, begin, end, k) = (n as i128, begin as i128, end as i128, k as i128);
    let adjust = |v: i128| if v < 0 { v + n } else { v };
    let (f, c) = if k > 0 {
        let f = if begin_mask { 0 } else { adjust(begin).clamp(0, n) };
        let e = if end_mask { n } else { adjust(end).clamp(0, n) };
        (f, if e > f { (e - f + k - 1) / k } else { 0 })
    } else {
        let f = if begin_mask { n - 1 } else { adjust(begin).clamp(0, n - 1) };
        let e = if end_mask { -1 } else { adjust(end).clamp(-1, n) };
        (f, if f > e { (f - e + (-k) - 1) / (-k) } else { 0 })
    };
    if c == 0 { Range { first: 0, step, len: 0 } } else { Range { first: f as i64, step, len: c as i64 } }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elems(r: Range) -> Vec<i64> {
        (0..r.len).map(|j| r.first + j * r.step).collect()
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
}
