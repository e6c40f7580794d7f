//! Which elements of an input a plan can read, axis by axis: the index sets a chunked input (a
//! Zarr store) is read over, so that only the chunks holding them are decoded (docs/zarr.md).
//!
//! An access addresses `base + Σ o_j·s_j + Σ v_t·s_t` elements into a C-order input (output
//! coordinates `o_j`, gathered index values `v_t`). Each step is attributed to the input axis
//! whose stride divides it; when every axis's sum stays inside that axis for every coordinate,
//! the address's multi-index is exactly those sums (mixed-radix numbers are unique), so the
//! sets cover every element read. Otherwise the input is read whole. This is the per-axis
//! counterpart of the byte ranges `cli::access::sparse_parts` reads of a `.npy`.

use crate::plan::{Access, BufferId, Indirect, Plan};
use slc_runtime::Tensor;
use std::collections::BTreeMap;
use std::ops::Range;

/// Tensors already read, by input name: index arrays whose values narrow a gathered axis.
pub type Known<'t> = [&'t BTreeMap<String, Tensor>];

/// Per input axis, sorted disjoint ranges of the indices the plan may read.
pub type Touched = Vec<Vec<Range<u64>>>;

/// More single indices than this along one axis and the axis is read as one range.
const MAX_POINTS: usize = 1 << 16;
/// Index tensors with more elements than this are not scanned: their axis is read whole.
const MAX_INDEX_VALUES: usize = 1 << 22;

/// The indices `plan` may read of input `name`, or `None` when it reads it whole or in a way
/// this cannot bound. `known` holds the other inputs already read: the index arrays among them
/// narrow a gathered axis to the rows they name.
pub fn touched(plan: &Plan, name: &str, known: &Known) -> Option<Touched> {
    let k = plan.inputs.iter().position(|i| i.name == name)?;
    let input = &plan.inputs[k];
    // A store plan reads its target whole; a strided declaration addresses a view, not C order.
    if plan.store.is_some() || input.strides.is_some() {
        return None;
    }
    let dims = &input.shape;
    let mut accesses: Vec<(&Access, &[i64])> = vec![];
    collect(&plan.output, &plan.shape, &mut accesses);
    for check in &plan.checks {
        collect(&check.index, &check.shape, &mut accesses);
    }
    let mut union: Touched = vec![vec![]; dims.len()];
    for (access, shape) in accesses.into_iter().filter(|(a, _)| a.buffer == BufferId::Input(k)) {
        let sets = access_sets(plan, access, shape, dims, known)?;
        for (into, set) in union.iter_mut().zip(sets) {
            into.extend(set);
            *into = merge(std::mem::take(into));
        }
    }
    Some(union)
}

fn collect<'p>(access: &'p Access, shape: &'p [i64], into: &mut Vec<(&'p Access, &'p [i64])>) {
    into.push((access, shape));
    for term in &access.terms {
        collect(&term.index, shape, into);
    }
}

/// One axis's share of an access: `q·t` for `t < n` (a coordinate), or `q·v` for index values.
enum Share {
    Steps { q: i64, n: i64 },
    Values { q: i64, values: Vec<i64> },
}

impl Share {
    fn offsets(&self) -> Vec<i64> {
        match self {
            Share::Steps { q, n } => (0..*n).map(|t| q * t).collect(),
            Share::Values { q, values } => values.iter().map(|v| q * v).collect(),
        }
    }

    fn count(&self) -> usize {
        match self {
            Share::Steps { n, .. } => *n as usize,
            Share::Values { values, .. } => values.len(),
        }
    }

    /// The least and greatest offset.
    fn reach(&self) -> (i64, i64) {
        let (a, b) = match self {
            Share::Steps { q, n } => (0, q * (n - 1)),
            Share::Values { q, values } => {
                (q * values.first().copied().unwrap_or(0), q * values.last().copied().unwrap_or(0))
            }
        };
        (a.min(b), a.max(b))
    }
}

/// An access into a C-order input of `dims`, split by axis: each of its steps and gather
/// terms attributed to the first axis whose stride divides it, its base split into a
/// multi-index (docs/zarr.md, "What is read").
pub(super) struct Split {
    /// The base's multi-index.
    pub base: Vec<i64>,
    /// Per coordinate dimension: its axis and the multiple of that axis's stride it steps,
    /// `None` where it does not move (one step, or stride 0).
    pub steps: Vec<Option<(usize, i64)>>,
    /// Per gather term, as `steps`.
    pub terms: Vec<Option<(usize, i64)>>,
}

/// Splits `access` over `shape` into an input of `dims` (none empty); `None` when a step
/// divides no axis's stride.
pub(super) fn split(access: &Access, shape: &[i64], dims: &[i64]) -> Option<Split> {
    let rank = dims.len();
    let mut strides = vec![1i64; rank];
    for d in (0..rank.saturating_sub(1)).rev() {
        strides[d] = strides[d + 1].checked_mul(dims[d + 1])?;
    }
    let axis_of = |step: i64| -> Option<Option<(usize, i64)>> {
        if step == 0 {
            return Some(None);
        }
        let d = strides.iter().position(|&s| step % s == 0)?;
        Some(Some((d, step / strides[d])))
    };
    let steps = shape
        .iter()
        .zip(&access.strides)
        .map(|(&n, &s)| if n > 1 { axis_of(s) } else { Some(None) })
        .collect::<Option<Vec<_>>>()?;
    let terms = access.terms.iter().map(|t| axis_of(t.stride)).collect::<Option<Vec<_>>>()?;
    let mut rest = access.base;
    let mut base = Vec::with_capacity(rank);
    for &s in &strides {
        base.push(rest / s);
        rest -= (rest / s) * s;
    }
    Some(Split { base, steps, terms })
}

/// The per-axis index sets of one access over `shape` into an input of `dims`.
fn access_sets(plan: &Plan, access: &Access, shape: &[i64], dims: &[i64], known: &Known) -> Option<Touched> {
    let rank = dims.len();
    if shape.contains(&0) || dims.contains(&0) {
        return Some(vec![vec![]; rank]);
    }
    let split = split(access, shape, dims)?;
    let mut shares: Vec<Vec<Share>> = (0..rank).map(|_| vec![]).collect();
    for (&n, step) in shape.iter().zip(&split.steps) {
        if let Some((d, q)) = *step {
            shares[d].push(Share::Steps { q, n });
        }
    }
    for (term, at) in access.terms.iter().zip(&split.terms) {
        if let Some((d, q)) = *at {
            shares[d].push(Share::Values { q, values: term_values(plan, term, known) });
        }
    }
    let mut sets = Vec::with_capacity(rank);
    for d in 0..rank {
        let b = split.base[d];
        let set = match &shares[d][..] {
            [] => std::iter::once(b..b + 1).collect(),
            [one] if one.count() <= MAX_POINTS => merge_points(one.offsets().into_iter().map(|o| b + o)),
            many => {
                let (lo, hi) = many.iter().fold((b, b), |(lo, hi), s| {
                    let (l, h) = s.reach();
                    (lo + l, hi + h)
                });
                std::iter::once(lo..hi + 1).collect()
            }
        };
        // A sum outside its axis carries into the next: the sets would not describe the reads.
        if set.first().is_some_and(|r| r.start < 0) || set.last().is_some_and(|r| r.end > dims[d]) {
            return None;
        }
        sets.push(set.into_iter().map(|r| r.start as u64..r.end as u64).collect());
    }
    Some(sets)
}

/// The normalized index values a gather term can load: those of its index tensor when known
/// (a constant, or an input read already), else its whole axis.
fn term_values(plan: &Plan, term: &Indirect, known: &Known) -> Vec<i64> {
    let whole = || (0..term.len).collect();
    let tensor = match term.index.buffer {
        BufferId::Const(c) => plan.consts.get(c).map(|c| &c.tensor),
        BufferId::Input(k) => plan.inputs.get(k).and_then(|i| known.iter().find_map(|m| m.get(&i.name))),
    };
    let Some(tensor) = tensor.filter(|t| t.numel() <= MAX_INDEX_VALUES) else {
        return whole();
    };
    let mut values = Vec::with_capacity(tensor.numel());
    for i in 0..tensor.numel() {
        let Some(raw) = tensor.int_at(i) else { return whole() };
        // A value no mode maps into the axis is an error (or a zero) at run time: it reads nothing.
        if let Ok(Some(j)) = term.mode.normalize(raw, term.len) {
            values.push(j);
        }
    }
    values.sort_unstable();
    values.dedup();
    values
}

fn merge_points(points: impl Iterator<Item = i64>) -> Vec<Range<i64>> {
    let mut points: Vec<i64> = points.collect();
    points.sort_unstable();
    points.dedup();
    let mut ranges: Vec<Range<i64>> = vec![];
    for p in points {
        match ranges.last_mut() {
            Some(r) if r.end == p => r.end += 1,
            _ => ranges.push(p..p + 1),
        }
    }
    ranges
}

/// Sorted, disjoint, adjacent ranges joined.
fn merge(mut ranges: Vec<Range<u64>>) -> Vec<Range<u64>> {
    ranges.sort_by_key(|r| r.start);
    let mut out: Vec<Range<u64>> = vec![];
    for r in ranges.into_iter().filter(|r| r.start < r.end) {
        match out.last_mut() {
            Some(last) if r.start <= last.end => last.end = last.end.max(r.end),
            _ => out.push(r),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TensorType;

    fn touched_by(src: &str, ty: &str, idx: Option<&Tensor>) -> Option<Touched> {
        let mut types = crate::sema::InputTypes::new();
        types.insert("a".into(), ty.parse::<TensorType>().unwrap());
        if let Some(i) = idx {
            types.insert("i".into(), TensorType::of(i.dtype(), i.shape()));
        }
        let plan = crate::compile(src, &types).unwrap().plan;
        let known: BTreeMap<String, Tensor> = idx.map(|i| ("i".to_string(), i.clone())).into_iter().collect();
        touched(&plan, "a", &[&known])
    }

    #[test]
    fn views_touch_their_rows_and_columns() {
        let t = touched_by("a[::1000, :4]", "f32[4000, 1024]", None).unwrap();
        assert_eq!(t, vec![vec![0..1, 1000..1001, 2000..2001, 3000..3001], vec![0..4]]);
        let t = touched_by("a[-3:, 5:8]", "f32[100, 10]", None).unwrap();
        assert_eq!(t, vec![vec![97..100], vec![5..8]]);
        let t = touched_by("a[::-1, 2]", "f32[6, 4]", None).unwrap();
        assert_eq!(t, vec![vec![0..6], vec![2..3]]);
        let t = touched_by("a[1:3, None, ::2]", "i8[4, 5, 6]", None).unwrap();
        assert_eq!(t, vec![vec![1..3], vec![0..1, 2..3, 4..5], vec![0..6]]);
        assert_eq!(touched_by("a[:0]", "f32[6, 4]", None).unwrap(), vec![vec![], vec![]]);
    }

    #[test]
    fn gathers_touch_the_rows_their_indices_name() {
        let idx = Tensor::from_i64s(slc_runtime::DType::I64, &[3], &[7, -1, 2]).unwrap();
        let t = touched_by("a[i, 1:3]", "f32[10, 4]", Some(&idx)).unwrap();
        assert_eq!(t, vec![vec![2..3, 7..8, 9..10], vec![1..3]]);
        // Not read yet: the whole axis.
        let mut types = crate::sema::InputTypes::new();
        types.insert("a".into(), "f32[10, 4]".parse::<TensorType>().unwrap());
        types.insert("i".into(), "i64[3]".parse::<TensorType>().unwrap());
        let plan = crate::compile("a[i, 1:3]", &types).unwrap().plan;
        assert_eq!(touched(&plan, "a", &[]).unwrap(), vec![vec![0..10], vec![1..3]]);
        // Constant indices are in the plan.
        assert_eq!(touched_by("a[[4, 1]]", "f32[10, 4]", None).unwrap(), vec![vec![1..2, 4..5], vec![0..4]]);
    }

    #[test]
    fn stores_read_whole() {
        assert!(touched_by("a[1] = 0", "f32[10, 4]", None).is_none());
    }
}
