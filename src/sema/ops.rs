//! The operator call forms: `strided_slice` (OpenVINO StridedSlice-1), `slice` (ONNX Slice-13),
//! `gather` (OpenVINO Gather-8, with a `mode=` for the out-of-range policy) and `slice1`
//! (DirectML DML_SLICE1). Each binds its arguments (positional in the listed order, or by
//! keyword), validates them with diagnostics that point at the argument, normalizes with its own
//! source's rules (shared/spec §2–§5), and produces the same core nodes as NumPy indexing: a
//! view or a gather. Nothing downstream knows which form a node came from.

use super::check::{Checker, Value, check_const_indices, edit_distance, err, gather, view};
use super::error::{SemaError, SemaErrorKind as K};
use super::typed::{TExpr, TExprKind, ViewDim};
use crate::backend::interp;
use crate::plan::{self, OobMode};
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind};
use slc_runtime::Tensor;

/// A parameter of a call form.
struct Param {
    name: &'static str,
    required: bool,
}

const fn req(name: &'static str) -> Param {
    Param { name, required: true }
}

const fn opt(name: &'static str) -> Param {
    Param { name, required: false }
}

const STRIDED_SLICE: &[Param] = &[
    req("data"),
    req("begin"),
    req("end"),
    opt("stride"),
    opt("begin_mask"),
    opt("end_mask"),
    opt("new_axis_mask"),
    opt("shrink_axis_mask"),
    opt("ellipsis_mask"),
];
const SLICE: &[Param] = &[req("data"), req("starts"), req("ends"), opt("axes"), opt("steps")];
const GATHER: &[Param] = &[req("data"), req("indices"), req("axis"), opt("batch_dims"), opt("mode")];
const SLICE1: &[Param] = &[req("data"), req("offsets"), req("sizes"), req("strides")];

pub const FUNCTIONS: &[&str] = &["strided_slice", "slice", "gather", "slice1"];

/// Arguments matched to parameters.
struct Bound<'a> {
    args: Vec<Option<&'a ast::Arg>>,
    params: &'static [Param],
}

impl<'a> Bound<'a> {
    fn get(&self, name: &str) -> Option<&'a ast::Arg> {
        let i = self.params.iter().position(|p| p.name == name)?;
        self.args[i]
    }
}

fn bind<'a>(
    function: &str,
    params: &'static [Param],
    args: &'a [ast::Arg],
    call_span: Span,
) -> Result<Bound<'a>, SemaError> {
    let mut bound: Vec<Option<&ast::Arg>> = vec![None; params.len()];
    let mut positional = 0;
    let mut seen_keyword = false;
    for arg in args {
        let slot = match &arg.name {
            None if seen_keyword => return err(K::PositionalAfterKeyword, arg.span),
            None => {
                positional += 1;
                if positional > params.len() {
                    let max = params.len();
                    return err(K::TooManyArguments { function: function.into(), max }, arg.span);
                }
                positional - 1
            }
            Some(name) => {
                seen_keyword = true;
                match params.iter().position(|p| p.name == name.name) {
                    Some(i) => i,
                    None => {
                        let suggestion = params
                            .iter()
                            .map(|p| (edit_distance(p.name, &name.name), p.name))
                            .filter(|(d, _)| *d <= 3)
                            .min()
                            .map(|(_, p)| p.to_string());
                        let known = params.iter().map(|p| p.name.to_string()).collect();
                        let kind = K::UnknownKeyword {
                            function: function.into(),
                            name: name.name.clone(),
                            suggestion,
                            known,
                        };
                        return err(kind, name.span);
                    }
                }
            }
        };
        if bound[slot].is_some() {
            return err(K::DuplicateArgument { name: params[slot].name.into() }, arg.span);
        }
        bound[slot] = Some(arg);
    }
    for (p, a) in params.iter().zip(&bound) {
        if p.required && a.is_none() {
            return err(K::MissingArgument { function: function.into(), name: p.name.into() }, call_span);
        }
    }
    Ok(Bound { args: bound, params })
}

fn invalid<T>(message: impl Into<String>, label: impl Into<String>, span: Span) -> Result<T, SemaError> {
    err(K::InvalidArgument { message: message.into(), label: label.into() }, span)
}

impl Checker<'_> {
    pub(super) fn call(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
    ) -> Result<TExpr, SemaError> {
        match callee.name.as_str() {
            "strided_slice" => self.strided_slice(&bind("strided_slice", STRIDED_SLICE, args, span)?, span),
            "slice" => self.onnx_slice(&bind("slice", SLICE, args, span)?, span),
            "gather" => self.gather_call(&bind("gather", GATHER, args, span)?, span),
            "slice1" => self.slice1(&bind("slice1", SLICE1, args, span)?, span),
            name => {
                let suggestion = FUNCTIONS
                    .iter()
                    .map(|f| (edit_distance(f, name), *f))
                    .filter(|(d, _)| *d <= 2)
                    .min()
                    .map(|(_, f)| f.to_string());
                err(K::UnknownFunction { name: name.into(), suggestion }, callee.span)
            }
        }
    }

    /// A tensor argument.
    fn tensor_arg(&mut self, arg: &ast::Arg) -> Result<TExpr, SemaError> {
        match self.expr(&arg.value)? {
            Value::Tensor(t) => Ok(t),
            other => invalid(
                format!("expected a tensor, found {}", other.describe()),
                "not a tensor",
                arg.value.span,
            ),
        }
    }

    /// An integer list argument: a list literal, `x.shape`, or a tensor whose value is known now
    /// (a bound tensor, or an expression over bound tensors).
    fn int_list(&mut self, arg: &ast::Arg) -> Result<Vec<i64>, SemaError> {
        let span = arg.value.span;
        let t = match self.expr(&arg.value)? {
            Value::Shape(s) => return Ok(s),
            Value::Tensor(t) => t,
            other => {
                return invalid(
                    format!("expected an integer list, found {}", other.describe()),
                    "not a list",
                    span,
                );
            }
        };
        if !t.ty.dtype.is_integer() || t.ty.shape.len() != 1 {
            return invalid(
                format!("expected a 1-D integer list, found a tensor {}", t.ty),
                "not a 1-D integer list",
                span,
            );
        }
        let value = self.value_of(&t)?;
        Ok((0..value.numel()).map(|i| value.int_at(i).unwrap_or_default() as i64).collect())
    }

    /// A single integer: an integer expression, or a one-element list or 0-d tensor.
    fn int_scalar(&mut self, arg: &ast::Arg) -> Result<i64, SemaError> {
        let span = arg.value.span;
        match self.expr(&arg.value)? {
            Value::Int(v) => Ok(v),
            Value::Tensor(t) if t.ty.dtype.is_integer() && t.ty.shape.iter().product::<i64>() == 1 => {
                let value = self.value_of(&t)?;
                Ok(value.int_at(0).unwrap_or_default() as i64)
            }
            other => {
                invalid(format!("expected an integer, found {}", other.describe()), "not an integer", span)
            }
        }
    }

    /// The value of a tensor expression at compile time: a literal, or an expression whose
    /// inputs are all bound with values, evaluated by the reference interpreter.
    fn value_of(&mut self, t: &TExpr) -> Result<Tensor, SemaError> {
        if let TExprKind::Const(value) = &t.kind {
            return Ok(value.clone());
        }
        let unknown = |name: &str| SemaError::new(K::ValueUnknown { name: name.into() }, t.span);
        let lowered = plan::lower(t).map_err(|_| unknown("this expression"))?;
        let info = plan::verify(&lowered.plan).map_err(|_| unknown("this expression"))?;
        let mut inputs = Vec::with_capacity(lowered.plan.inputs.len());
        for decl in &lowered.plan.inputs {
            inputs.push(self.values.get(&decl.name).ok_or_else(|| unknown(&decl.name))?);
            self.read.values.insert(decl.name.clone());
        }
        interp::run(&lowered.plan, &info, &inputs).map_err(|e| {
            SemaError::new(
                K::InvalidArgument { message: e.to_string(), label: "evaluating this failed".into() },
                t.span,
            )
        })
    }

    /// A 0/1 mask list; bits beyond `m` are ignored, missing bits are 0.
    fn mask(&mut self, arg: Option<&ast::Arg>, m: usize) -> Result<Vec<bool>, SemaError> {
        let Some(arg) = arg else { return Ok(vec![false; m]) };
        let values = self.int_list(arg)?;
        if let Some(bad) = values.iter().find(|v| !matches!(v, 0 | 1)) {
            return invalid(
                format!("mask values must be 0 or 1, found {bad}"),
                "not a 0/1 mask",
                arg.value.span,
            );
        }
        Ok((0..m).map(|i| values.get(i) == Some(&1)).collect())
    }

    /// OpenVINO StridedSlice-1 (shared/spec §2).
    fn strided_slice(&mut self, b: &Bound, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(b.get("data").expect("required"))?;
        let begin_arg = b.get("begin").expect("required");
        let begin = self.int_list(begin_arg)?;
        let end_arg = b.get("end").expect("required");
        let end = self.int_list(end_arg)?;
        let m = begin.len();
        if end.len() != m {
            return invalid(
                format!("`end` has {} values but `begin` has {m}", end.len()),
                "wrong length",
                end_arg.value.span,
            );
        }
        let stride = match b.get("stride") {
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
        let begin_mask = self.mask(b.get("begin_mask"), m)?;
        let end_mask = self.mask(b.get("end_mask"), m)?;
        let new_axis = self.mask(b.get("new_axis_mask"), m)?;
        let shrink = self.mask(b.get("shrink_axis_mask"), m)?;
        let ellipsis = self.mask(b.get("ellipsis_mask"), m)?;
        let ellipsis_span = b.get("ellipsis_mask").map_or(span, |a| a.value.span);

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
                dims.push(ViewDim::Range { start: r.0, step: stride[i], len: r.1 });
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

    /// ONNX Slice-13 (shared/spec §4).
    fn onnx_slice(&mut self, b: &Bound, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(b.get("data").expect("required"))?;
        let starts_arg = b.get("starts").expect("required");
        let starts = self.int_list(starts_arg)?;
        let ends_arg = b.get("ends").expect("required");
        let ends = self.int_list(ends_arg)?;
        let l = starts.len();
        let length = |what: &str, found: usize, arg: &ast::Arg| {
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
        let axes = match b.get("axes") {
            None => (0..l as i64).collect(),
            Some(arg) => {
                let axes = self.int_list(arg)?;
                if axes.len() != l {
                    length("axes", axes.len(), arg)?;
                }
                axes
            }
        };
        let steps = match b.get("steps") {
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
        let axes_span = b.get("axes").map_or(starts_arg.value.span, |a| a.value.span);
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
            let (first, len) = normalize_onnx(shape[a], starts[i], ends[i], steps[i]);
            dims[a] = ViewDim::Range { start: first, step: steps[i], len };
        }
        view(data, dims, span)
    }

    /// OpenVINO Gather-8 with a choice of out-of-range policy (shared/spec §3).
    fn gather_call(&mut self, b: &Bound, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(b.get("data").expect("required"))?;
        let indices_arg = b.get("indices").expect("required");
        let indices = match self.expr(&indices_arg.value)? {
            Value::Int(v) => super::check::const_tensor(Tensor::scalar_i64(v), indices_arg.value.span),
            Value::Tensor(t) if t.ty.dtype.is_integer() => t,
            other => {
                return invalid(
                    format!("indices must be an integer tensor, found {}", other.describe()),
                    "not integer indices",
                    indices_arg.value.span,
                );
            }
        };
        let rank = data.ty.shape.len() as i64;
        let q = indices.ty.shape.len() as i64;
        let axis_arg = b.get("axis").expect("required");
        let axis = self.int_scalar(axis_arg)?;
        if !(-rank..rank).contains(&axis) {
            let msg = format!("axis {axis} is out of range for data of rank {rank}");
            return invalid(msg, "axis out of range", axis_arg.value.span);
        }
        let axis = if axis < 0 { axis + rank } else { axis };
        let batch_dims = match b.get("batch_dims") {
            None => 0,
            Some(arg) => {
                let raw = self.int_scalar(arg)?;
                let bd = if raw < 0 { raw + q } else { raw };
                if bd < 0 || bd > q || bd > axis {
                    return invalid(
                        format!(
                            "batch_dims {raw} must lie in 0..={} (at most the rank of the indices, {q}, and the axis, {axis})",
                            q.min(axis)
                        ),
                        "batch_dims out of range",
                        arg.value.span,
                    );
                }
                bd
            }
        } as usize;
        let axis = axis as usize;
        if data.ty.shape[..batch_dims] != indices.ty.shape[..batch_dims] {
            return invalid(
                format!(
                    "the first {batch_dims} dimensions of data {} and indices {} must match",
                    data.ty, indices.ty
                ),
                "batch dimensions differ",
                indices_arg.value.span,
            );
        }
        let mode = match b.get("mode") {
            None => OobMode::Zero,
            Some(arg) => {
                let word = match &arg.value.kind {
                    ExprKind::Name(w) | ExprKind::Str(w) => Some(w.as_str()),
                    _ => None,
                };
                match word.and_then(OobMode::from_name) {
                    Some(m) => m,
                    None => {
                        return invalid(
                            "mode must be one of zero, error, clamp, wrap",
                            "unknown mode",
                            arg.value.span,
                        );
                    }
                }
            }
        };
        let n = data.ty.shape[axis];
        if matches!(mode, OobMode::Clamp | OobMode::Wrap) && n == 0 && indices.ty.shape.iter().all(|&d| d > 0)
        {
            return invalid(
                format!("cannot {} indices into an empty axis {axis}", mode.name()),
                "axis is empty",
                span,
            );
        }
        if mode == OobMode::Error {
            check_const_indices(&indices, axis, n)?;
        }
        gather(data, indices, axis, batch_dims, mode, span)
    }

    /// DirectML DML_SLICE1: per dimension a window `[offset, offset + size)` read with a signed
    /// stride; a negative stride starts at the window's end.
    fn slice1(&mut self, b: &Bound, span: Span) -> Result<TExpr, SemaError> {
        let data = self.tensor_arg(b.get("data").expect("required"))?;
        let rank = data.ty.shape.len();
        let mut lists = vec![];
        for name in ["offsets", "sizes", "strides"] {
            let arg = b.get(name).expect("required");
            let values = self.int_list(arg)?;
            if values.len() != rank {
                let msg = format!("`{name}` has {} values, but the data has rank {rank}", values.len());
                return invalid(msg, "one value per dimension", arg.value.span);
            }
            lists.push((values, arg.value.span));
        }
        let [(offsets, offsets_span), (sizes, sizes_span), (strides, strides_span)] =
            <[_; 3]>::try_from(lists).expect("three lists");
        let mut dims = Vec::with_capacity(rank);
        for d in 0..rank {
            let (o, w, t, n) = (offsets[d], sizes[d], strides[d], data.ty.shape[d]);
            if t == 0 {
                return err(K::ZeroStep, strides_span);
            }
            if w < 1 {
                return invalid(
                    format!("window size {w} in dimension {d} is not positive"),
                    "empty window",
                    sizes_span,
                );
            }
            if o < 0 || o.checked_add(w).is_none_or(|e| e > n) {
                return invalid(
                    format!(
                        "the window {o}..{} of dimension {d} does not lie inside its {n} elements",
                        o.saturating_add(w)
                    ),
                    "window outside the tensor",
                    offsets_span,
                );
            }
            // i64::MIN has no absolute value in i64.
            let len = 1 + ((w - 1) as u64 / t.unsigned_abs()) as i64;
            let start = if t < 0 { o + w - 1 } else { o };
            dims.push(ViewDim::Range { start, step: t, len });
        }
        view(data, dims, span)
    }
}

/// OpenVINO's per-axis normalization for an ordinary StridedSlice entry (shared/spec §2.3):
/// returns (first, count). A reverse begin still below 0 after adjustment clamps to 0 (unlike
/// NumPy, which clamps to -1 and yields nothing).
pub fn normalize_openvino(
    n: i64,
    begin: i64,
    end: i64,
    k: i64,
    begin_mask: bool,
    end_mask: bool,
) -> (i64, i64) {
    if n == 0 {
        return (0, 0);
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
    if c == 0 { (0, 0) } else { (f as i64, c as i64) }
}

/// ONNX Slice-13's per-axis normalization (shared/spec §4): returns (first, count).
pub fn normalize_onnx(n: i64, start: i64, end: i64, step: i64) -> (i64, i64) {
    if n == 0 {
        return (0, 0);
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
    if c == 0 { (0, 0) } else { (s as i64, c as i64) }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn elems((f, c): (i64, i64), k: i64) -> Vec<i64> {
        (0..c).map(|j| f + j * k).collect()
    }

    #[test]
    fn openvino_reverse_begin_clamps_to_zero() {
        // shared/spec §2.4: strided_slice(a, [-5], [0], [-1], end_mask=[1]) on n = 4 gives [0].
        assert_eq!(elems(normalize_openvino(4, -5, 0, -1, false, true), -1), vec![0]);
        assert_eq!(elems(normalize_openvino(4, 3, 0, -1, false, false), -1), vec![3, 2, 1]);
        assert_eq!(elems(normalize_openvino(4, 0, 0, -1, true, true), -1), vec![3, 2, 1, 0]);
        assert_eq!(elems(normalize_openvino(4, 1, 1, 1, false, false), 1), Vec::<i64>::new());
        assert_eq!(elems(normalize_openvino(2, 1234, 4321, -1, false, false), -1), Vec::<i64>::new());
    }

    #[test]
    fn onnx_clamping() {
        // shared/spec §4: starts [-10], ends [INT64_MIN], steps [-1] on length 4 gives [0].
        assert_eq!(elems(normalize_onnx(4, -10, i64::MIN, -1), -1), vec![0]);
        assert_eq!(elems(normalize_onnx(4, 3, i64::MAX, -1), -1), Vec::<i64>::new());
        assert_eq!(elems(normalize_onnx(4, 0, i64::MAX, 1), 1), vec![0, 1, 2, 3]);
        assert_eq!(elems(normalize_onnx(4, -1, i64::MIN, -2), -2), vec![3, 1]);
    }
}
