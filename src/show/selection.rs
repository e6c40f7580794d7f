//! From a plan to what it selects: which cells of the input each output element reads, in
//! output order. Every address comes from the reference interpreter's evaluation of the plan's
//! output access ([`Machine`]); nothing here re-derives the indexing rules. What is read from
//! the plan's structure is only *which* terms are gathers and along which output axes their
//! index varies.

use crate::backend::RuntimeError;
use crate::backend::interp::Machine;
use crate::plan::{Access, BufferId, Plan, VerifiedPlan};
use crate::types::{Coords, row_major_strides};
use slc_runtime::{DType, Tensor};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Outputs larger than this are refused: every element is evaluated, twice.
pub const MAX_OUTPUT_ELEMENTS: u64 = 1 << 24;
/// Inputs up to this many elements have their distinct reads counted (a bit per element).
const MAX_COUNTED_INPUT: u64 = 1 << 28;

/// What an input axis contributes to the output.
#[derive(Debug, Clone, PartialEq)]
pub enum AxisUse {
    /// An arithmetic run of indices along one output axis, `first` to `last` by `step`.
    Range { first: i64, last: i64, step: i64, count: i64, out_axis: usize },
    /// One index for the whole output: the axis is removed (or kept with length 1).
    Fixed(i64),
    /// Chosen by the values of an index tensor that varies along `out_axes`; `chosen` maps each
    /// selected coordinate to the index values that chose it (empty when they are unknown).
    Gathered { by: String, out_axes: Vec<usize>, chosen: BTreeMap<i64, BTreeSet<i128>> },
    /// Any other pattern (several output axes walk it at once).
    Other,
    /// The output is empty: nothing is read.
    Unread,
}

/// How a shown input cell is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// By the output element `first` (C order), and `count` times in all; for a store's
    /// writes, `first` is the last update that writes the cell, whose value it keeps.
    Read { first: u64, count: u64 },
    /// Possibly: along a gathered axis whose index values are not known.
    Maybe,
}

/// The selection of a plan on its data input, summarized for drawing.
#[derive(Debug, Clone)]
pub struct Selection {
    pub input: String,
    pub input_dtype: DType,
    pub input_shape: Vec<i64>,
    pub output_dtype: DType,
    pub output_shape: Vec<i64>,
    /// One per input axis.
    pub axes: Vec<AxisUse>,
    /// Output axes that read no input axis (newaxis, or a broadcast), with their length.
    pub new_axes: Vec<usize>,
    /// Per input axis, the indices worth drawing, ascending (all of a short axis; of a long one
    /// its ends and the edges of the selection).
    pub shown: Vec<Vec<i64>>,
    /// The shown cells that are read, by input coordinates.
    pub cells: HashMap<Vec<i64>, Mark>,
    /// Output elements.
    pub numel: u64,
    /// Distinct input elements read; `None` when unknown (index values not given, or an input
    /// too large to count).
    pub distinct: Option<u64>,
    /// Output elements that read nothing (a `zero`-mode index out of range): they are 0.
    pub misses: u64,
    /// Consecutive output elements read consecutive input elements, all of them.
    pub contiguous: bool,
    /// Some index values were not given (`--shape` only): gathered axes are drawn as unknown.
    pub values_unknown: bool,
    /// A store's selection (`a[i] = v`): the cells marked are the ones the updates write, the
    /// "output" is the update coordinates, and the "input" the target.
    pub writes: bool,
    /// A store's value: its buffer's name, and the update axes (of more than one element) it
    /// is broadcast along, repeating the same element.
    pub value: Option<(String, Vec<usize>)>,
}

#[derive(Debug, thiserror::Error)]
pub enum SelectError {
    #[error("the program reads no input tensor to draw (it reads a constant)")]
    NoInput,
    #[error("the output has {0} elements; `show` draws at most {MAX_OUTPUT_ELEMENTS}: slice a part of it")]
    TooLarge(u64),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
}

impl Selection {
    /// The selection of `plan` on the input its output reads, or for a store plan the cells of
    /// the target its updates write. `values` holds the tensors whose values are known (by
    /// input name; a mask's for its derived positions); index tensors missing from it are drawn
    /// as unknown.
    pub fn of(plan: &VerifiedPlan, values: &BTreeMap<String, Tensor>) -> Result<Selection, SelectError> {
        let (access, shape) = match &plan.store {
            Some(store) => (&store.dest, &store.shape),
            None => (&plan.output, &plan.shape),
        };
        let BufferId::Input(data) = access.buffer else { return Err(SelectError::NoInput) };
        let numel = shape.iter().map(|&d| d.max(0) as u64).product::<u64>();
        if numel > MAX_OUTPUT_ELEMENTS {
            return Err(SelectError::TooLarge(numel));
        }
        let mut index_buffers = BTreeSet::new();
        index_buffers_of(access, &mut index_buffers);
        // A masked store's mask says which cells of its box are written.
        let when = plan.store.as_ref().and_then(|s| s.when.as_ref());
        if let Some(BufferId::Input(mask)) = when.map(|w| w.buffer) {
            index_buffers.insert(mask);
        }
        let mut values_unknown = false;
        // Buffers that no index access reads are never touched: an empty stand-in will do.
        let stand_ins: Vec<Tensor> = plan
            .inputs
            .iter()
            .enumerate()
            .map(|(i, decl)| match values.get(decl.given_name()) {
                // A large mask's positions, derived from its value (as executors derive them).
                Some(m) if index_buffers.contains(&i) && decl.nonzero_of().is_some() => {
                    Ok(crate::plan::nonzero(m))
                }
                Some(t) if index_buffers.contains(&i) => Ok(t.clone()),
                _ if index_buffers.contains(&i) => {
                    values_unknown = true;
                    let dims: Vec<usize> = decl.shape.iter().map(|&d| d as usize).collect();
                    Tensor::zeros(decl.dtype, &dims)
                }
                _ => Tensor::zeros(decl.dtype, &[0]),
            })
            .collect::<Result<_, _>>()
            .map_err(RuntimeError::from)?;
        let refs: Vec<&Tensor> = stand_ins.iter().collect();
        let walk = Walk { when, ..Walk::new(plan, access, shape, data, &refs) };
        walk.select(numel, values_unknown)
    }

    pub fn rank(&self) -> usize {
        self.input_shape.len()
    }

    /// Whether some output axis reads an input axis with a negative step.
    pub fn reversed(&self) -> bool {
        self.axes.iter().any(|a| matches!(a, AxisUse::Range { step, .. } if *step < 0))
    }

    /// Whether the reads skip input elements: a step beyond 1, or rows of a partly read axis
    /// (what is left of a non-contiguous copy once reversals and gathers are accounted for).
    pub fn strided(&self) -> bool {
        let stepped = self.axes.iter().any(|a| matches!(a, AxisUse::Range { step, .. } if step.abs() > 1));
        let pitched = !self.contiguous && !self.reversed() && !self.gathered() && self.numel > 1;
        stepped || pitched
    }

    pub fn gathered(&self) -> bool {
        self.axes.iter().any(|a| matches!(a, AxisUse::Gathered { .. }))
    }
}

/// The input buffers read by index accesses under `access`.
fn index_buffers_of(access: &Access, out: &mut BTreeSet<usize>) {
    for term in &access.terms {
        if let BufferId::Input(i) = term.index.buffer {
            out.insert(i);
        }
        index_buffers_of(&term.index, out);
    }
}

/// Whether `access`'s value changes along output axis `k`, through its strides or its terms.
fn varies_along(access: &Access, k: usize) -> bool {
    access.strides.get(k).is_some_and(|&s| s != 0) || access.terms.iter().any(|t| varies_along(&t.index, k))
}

/// One evaluation of the walked access (the output's, or a store's destination) per element
/// of its coordinates.
struct Walk<'a> {
    plan: &'a Plan,
    access: &'a Access,
    /// The coordinates walked: the output's shape, or a store's update shape.
    over: &'a [i64],
    machine: Machine<'a>,
    shape: Vec<i64>,
    /// Row-major strides of the data input, in elements.
    strides: Vec<i64>,
    /// The input axis each indirect term of the output access selects on.
    term_axes: Vec<usize>,
    /// A masked store's mask: the updates whose byte is 0 write nothing.
    when: Option<&'a Access>,
}

/// Where one output element reads: the element's address in the input, and its coordinates.
struct Read {
    address: i128,
    coords: Vec<i64>,
}

impl<'a> Walk<'a> {
    fn new(
        plan: &'a VerifiedPlan,
        access: &'a Access,
        over: &'a [i64],
        data: usize,
        inputs: &'a [&'a Tensor],
    ) -> Walk<'a> {
        let shape = plan.inputs[data].shape.clone();
        let strides = row_major_strides(&shape, 1).unwrap_or_else(|| vec![0; shape.len()]);
        // A term moves the address by a multiple of its stride: it selects along the outermost
        // axis whose stride divides it (a gather after a step, `a[::2][i]`, has twice the
        // axis's stride).
        let term_axes = (access.terms.iter())
            .map(|t| (0..shape.len()).find(|&d| strides[d] != 0 && t.stride % strides[d] == 0).unwrap_or(0))
            .collect();
        Walk {
            plan,
            access,
            over,
            machine: Machine::new(plan, inputs),
            shape,
            strides,
            term_axes,
            when: None,
        }
    }

    /// Whether the update at `out` writes (every one but a masked store's where its mask is
    /// 0; all of them where the mask's value is not given).
    fn applies(&self, out: &[i64], values_unknown: bool) -> Result<bool, RuntimeError> {
        match self.when {
            Some(mask) if !values_unknown => match self.machine.address(mask, out)? {
                Some(at) => Ok(self.machine.element(mask.buffer, at)? != [0]),
                None => Ok(false),
            },
            _ => Ok(true),
        }
    }

    fn read(&self, out: &[i64]) -> Result<Option<Read>, RuntimeError> {
        let Some(address) = self.machine.address(self.access, out)? else { return Ok(None) };
        let mut rest = address as i64;
        let coords = self
            .strides
            .iter()
            .map(|&s| {
                let c = if s == 0 { 0 } else { rest / s };
                rest -= c * s;
                c
            })
            .collect();
        Ok(Some(Read { address, coords }))
    }

    /// The raw index value of term `t` at output coordinates `out`.
    fn index_value(&self, t: usize, out: &[i64]) -> Result<i128, RuntimeError> {
        self.machine.load(&self.access.terms[t].index, out)
    }

    fn select(&self, numel: u64, values_unknown: bool) -> Result<Selection, SelectError> {
        let plan = self.plan;
        let rank = self.shape.len();
        let input_numel = self.shape.iter().map(|&d| d as u64).product::<u64>();
        let mut counted =
            (input_numel <= MAX_COUNTED_INPUT).then(|| vec![0u64; input_numel.div_ceil(64) as usize]);
        let mut distinct = 0u64;
        let mut selected: Vec<BTreeSet<i64>> = vec![BTreeSet::new(); rank];
        let mut chosen: Vec<BTreeMap<i64, BTreeSet<i128>>> = vec![BTreeMap::new(); rank];
        let (mut misses, mut contiguous, mut previous) = (0u64, self.access.terms.is_empty(), None);
        // Pass 1: what each axis selects, and the counts.
        let mut applied = 0u64;
        for out in Coords::new(self.over) {
            if !self.applies(&out, values_unknown)? {
                contiguous = false;
                continue;
            }
            applied += 1;
            let Some(read) = self.read(&out)? else {
                misses += 1;
                contiguous = false;
                continue;
            };
            contiguous &= previous.is_none_or(|p: i128| p + 1 == read.address);
            previous = Some(read.address);
            if let Some(bits) = &mut counted {
                let (word, bit) = ((read.address / 64) as usize, read.address % 64);
                if bits[word] & (1 << bit) == 0 {
                    bits[word] |= 1 << bit;
                    distinct += 1;
                }
            }
            for (d, &c) in read.coords.iter().enumerate() {
                selected[d].insert(c);
            }
            if !values_unknown {
                for (t, &d) in self.term_axes.iter().enumerate() {
                    chosen[d].entry(read.coords[d]).or_default().insert(self.index_value(t, &out)?);
                }
            }
        }
        let axes = self.axis_uses(numel, &mut chosen)?;
        let gathered: Vec<usize> =
            (0..rank).filter(|&d| matches!(axes[d], AxisUse::Gathered { .. })).collect();
        let shown: Vec<Vec<i64>> = (0..rank)
            .map(|d| {
                let grid_axis = d + 2 >= rank;
                shown_indices(self.shape[d], &selected[d], if grid_axis { GRID_FULL } else { OUTER_FULL })
            })
            .collect();
        // Pass 2: the marks of the shown cells.
        let mut cells = HashMap::new();
        // Each update's ordinal (a masked store's counts the updates that write).
        let mut linear = 0usize;
        for out in Coords::new(self.over) {
            if !self.applies(&out, values_unknown)? {
                continue;
            }
            linear += 1;
            let linear = linear - 1;
            let Some(read) = self.read(&out)? else { continue };
            let visible = |d: usize, c: &i64| values_unknown && gathered.contains(&d) || shown[d].contains(c);
            if !read.coords.iter().enumerate().all(|(d, c)| visible(d, c)) {
                continue;
            }
            if values_unknown && !gathered.is_empty() {
                mark_maybe(&read.coords, &gathered, &shown, &mut cells);
                continue;
            }
            match cells.entry(read.coords).or_insert(Mark::Read { first: linear as u64, count: 0 }) {
                Mark::Read { count, first } => {
                    *count += 1;
                    // A cell written more than once holds the last write.
                    if plan.store.is_some() {
                        *first = linear as u64;
                    }
                }
                Mark::Maybe => {}
            }
        }
        // An empty output reads nothing, so none of its axes is new.
        let new_axes = (0..self.over.len())
            .filter(|_| numel > 0)
            .filter(|&k| {
                let from_input =
                    axes.iter().any(|a| matches!(a, AxisUse::Range { out_axis, .. } if *out_axis == k));
                let gathers = self.access.terms.iter().any(|t| varies_along(&t.index, k));
                !from_input && !gathers && self.access.strides.get(k) == Some(&0)
            })
            .collect();
        let distinct = counted.and(Some(distinct)).filter(|_| !values_unknown);
        Ok(Selection {
            input: plan.buffer_name(self.access.buffer),
            input_dtype: plan.buffer_dtype(self.access.buffer).unwrap_or(plan.dtype),
            input_shape: self.shape.clone(),
            output_dtype: plan.dtype,
            output_shape: self.over.to_vec(),
            axes,
            new_axes,
            shown,
            cells,
            // A masked store writes only where its mask is `True`.
            numel: if self.when.is_some() { applied } else { numel },
            distinct,
            misses,
            contiguous: contiguous && numel > 0,
            values_unknown,
            writes: plan.store.is_some(),
            value: plan.store.as_ref().map(|st| {
                let along = (0..self.over.len()).filter(|&k| self.over[k] > 1 && !varies_along(&st.value, k));
                (plan.buffer_name(st.value.buffer), along.collect())
            }),
        })
    }

    /// What each input axis contributes, from the reads at the output's origin and one step
    /// along each output axis.
    fn axis_uses(
        &self,
        numel: u64,
        chosen: &mut [BTreeMap<i64, BTreeSet<i128>>],
    ) -> Result<Vec<AxisUse>, RuntimeError> {
        let plan = self.plan;
        let rank = self.shape.len();
        let origin = vec![0; self.over.len()];
        let first = match self.read(&origin)? {
            Some(read) if numel > 0 => read.coords,
            _ => return Ok(vec![AxisUse::Unread; rank]),
        };
        let mut uses: Vec<AxisUse> = first.iter().map(|&c| AxisUse::Fixed(c)).collect();
        for (t, &d) in self.term_axes.iter().enumerate() {
            let term = &self.access.terms[t];
            uses[d] = AxisUse::Gathered {
                by: plan.buffer_name(term.index.buffer),
                out_axes: (0..self.over.len()).filter(|&k| varies_along(&term.index, k)).collect(),
                chosen: std::mem::take(&mut chosen[d]),
            };
        }
        for (k, &len) in self.over.iter().enumerate() {
            if len < 2 || self.access.strides[k] == 0 {
                continue;
            }
            let mut step_along = origin.clone();
            step_along[k] = 1;
            let Some(next) = self.read(&step_along)? else { continue };
            for d in 0..rank {
                let step = next.coords[d] - first[d];
                if step == 0 || matches!(uses[d], AxisUse::Gathered { .. }) {
                    continue;
                }
                uses[d] = match uses[d] {
                    AxisUse::Fixed(_) => AxisUse::Range {
                        first: first[d],
                        last: first[d] + step * (len - 1),
                        step,
                        count: len,
                        out_axis: k,
                    },
                    _ => AxisUse::Other,
                };
            }
        }
        Ok(uses)
    }
}

/// Marks every shown cell that the read at `coords` may reach along the gathered axes.
fn mark_maybe(coords: &[i64], gathered: &[usize], shown: &[Vec<i64>], cells: &mut HashMap<Vec<i64>, Mark>) {
    let mut reach = vec![coords.to_vec()];
    for &d in gathered {
        reach = reach
            .iter()
            .flat_map(|c| {
                shown[d].iter().map(move |&i| {
                    let mut c = c.clone();
                    c[d] = i;
                    c
                })
            })
            .collect();
    }
    for c in reach {
        cells.entry(c).or_insert(Mark::Maybe);
    }
}

/// Grid axes (the last two) up to this length are drawn whole.
const GRID_FULL: i64 = 16;
/// Outer axes (one panel per index) up to this length are drawn whole.
const OUTER_FULL: i64 = 3;

/// The indices of an axis of length `len` worth drawing: all of a short axis; of a long one its
/// two ends and the edges of the selection, with a neighbour each side, so that where the
/// selection starts and stops is visible.
fn shown_indices(len: i64, selected: &BTreeSet<i64>, full: i64) -> Vec<i64> {
    if len <= full {
        return (0..len).collect();
    }
    let mut keep: BTreeSet<i64> = [0, len - 1].into();
    let runs = runs(selected);
    let edges: Vec<i64> = if runs.len() <= 3 {
        runs.iter().flat_map(|&(s, e)| [s, e]).collect()
    } else {
        // Many runs (a step): the first and last few selected indices show the pattern.
        let first = selected.iter().take(2).copied();
        let last = selected.iter().rev().take(2).copied();
        first.chain(last).collect()
    };
    let reach = if full >= GRID_FULL { 1 } else { 0 };
    for e in edges {
        for i in e - reach..=e + reach {
            if (0..len).contains(&i) {
                keep.insert(i);
            }
        }
    }
    keep.into_iter().collect()
}

/// The maximal runs of consecutive indices, as (first, last).
fn runs(indices: &BTreeSet<i64>) -> Vec<(i64, i64)> {
    let mut out: Vec<(i64, i64)> = vec![];
    for &i in indices {
        match out.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => out.push((i, i)),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_axis_shows_its_ends_and_the_selection_edges() {
        let selected: BTreeSet<i64> = (100..900).collect();
        assert_eq!(shown_indices(1080, &selected, GRID_FULL), [0, 99, 100, 101, 898, 899, 900, 1079]);
        assert_eq!(shown_indices(5, &selected, GRID_FULL), [0, 1, 2, 3, 4]);
        let stepped: BTreeSet<i64> = (0..40).step_by(2).collect();
        assert_eq!(shown_indices(40, &stepped, GRID_FULL), [0, 1, 2, 3, 35, 36, 37, 38, 39]);
        assert_eq!(runs(&[1, 2, 3, 7].into()), [(1, 3), (7, 7)]);
    }
}
