//! How a program will read each input, estimated from its plan before any data is read: which
//! inputs it touches sparsely — a few pages of many, as a strided slice (`a[::1000, :4]`) or a
//! gather of rows does — so that their mapped pages are read one at a time, without the
//! read-ahead that would otherwise read (and map) the pages around each one (docs/inputs.md).

use crate::plan::{Access, BufferId, Plan};
use slc_runtime::Tensor;
use std::collections::BTreeMap;
use std::ops::Range;

/// The page size the estimate counts in (the common one; only ratios matter).
const PAGE: u128 = 4096;

/// An input is sparse when it is gathered, or when a view touches less than this fraction of
/// its pages. Measured (docs/benchmarks.md, a 4 GiB file not in the page cache): one page in
/// 1000 reads 35× faster without read-ahead, one in 16 twice as slow.
const SPARSE_BELOW: f64 = 1.0 / 32.0;

/// The names of the inputs `plan` reads sparsely.
pub fn sparse_inputs(plan: &Plan) -> Vec<String> {
    let mut sparse = vec![];
    visit(plan, &plan.output, &plan.shape, &mut sparse);
    sparse.sort();
    sparse.dedup();
    sparse
}

/// Gives each mapped input the read-ahead its reading calls for.
pub fn advise(name: &str, tensor: &Tensor, sparse: &[String]) {
    if tensor.is_mapped() && sparse.iter().any(|s| s == name) {
        tensor.advise(slc_runtime::Access::Sparse);
    }
}

/// More runs than this and an input is mapped instead (a `pread` each would cost more).
const MAX_PARTS: u128 = 1 << 20;

/// For each sparse input that `plan` reads through exactly one affine access (no gather, no
/// other access), the byte ranges of its data that access can reach: reading just those
/// (`PendingNpy::read_parts`) costs memory for the pages read only.
pub fn sparse_parts(plan: &Plan, sparse: &[String]) -> BTreeMap<String, Vec<Range<u64>>> {
    let mut accesses: Vec<(&Access, &[i64])> = vec![];
    collect(&plan.output, &plan.shape, &mut accesses);
    for check in &plan.checks {
        collect(&check.index, &check.shape, &mut accesses);
    }
    let mut parts = BTreeMap::new();
    for (k, input) in plan.inputs.iter().enumerate() {
        let mine: Vec<_> = accesses.iter().filter(|(a, _)| a.buffer == BufferId::Input(k)).collect();
        if let [(access, shape)] = mine[..]
            && access.terms.is_empty()
            && input.strides.is_none()
            && sparse.contains(&input.name)
            && let Some(ranges) = runs(access.base, shape, &access.strides, input.dtype.width() as i64)
        {
            parts.insert(input.name.clone(), ranges);
        }
    }
    parts
}

fn collect<'p>(access: &'p Access, shape: &'p [i64], into: &mut Vec<(&'p Access, &'p [i64])>) {
    into.push((access, shape));
    for term in &access.terms {
        collect(&term.index, shape, into);
    }
}

/// The byte ranges holding every element `base + Σ o_d·strides[d]` (`0 ≤ o_d < shape[d]`) of
/// `width`-byte elements: the axes whose steps stay within a page span one range, each
/// combination of the other axes' coordinates starts one. `None` when there are too many.
fn runs(base: i64, shape: &[i64], strides: &[i64], width: i64) -> Option<Vec<Range<u64>>> {
    if shape.contains(&0) {
        return Some(vec![]);
    }
    let (mut lo, mut hi) = (base as i128, base as i128);
    let mut outer: Vec<(i64, i128)> = vec![];
    for (&n, &s) in shape.iter().zip(strides) {
        let reach = (n as i128 - 1) * s as i128;
        if s.unsigned_abs() as u128 * (width as u128) < PAGE {
            if reach < 0 { lo += reach } else { hi += reach }
        } else if n > 1 {
            outer.push((n, s as i128));
        }
    }
    let count = outer.iter().try_fold(1u128, |acc, &(n, _)| acc.checked_mul(n as u128))?;
    if count > MAX_PARTS {
        return None;
    }
    let mut ranges = Vec::with_capacity(count as usize);
    let mut coords = vec![0i64; outer.len()];
    let mut start = 0i128;
    loop {
        let (from, to) = ((lo + start) * width as i128, (hi + start + 1) * width as i128);
        ranges.push(u64::try_from(from).ok()?..u64::try_from(to).ok()?);
        // The next combination of the outer coordinates, the last axis fastest.
        let mut d = outer.len();
        loop {
            if d == 0 {
                return Some(ranges);
            }
            d -= 1;
            coords[d] += 1;
            start += outer[d].1;
            if coords[d] < outer[d].0 {
                break;
            }
            start -= outer[d].1 * outer[d].0 as i128;
            coords[d] = 0;
        }
    }
}

fn visit(plan: &Plan, access: &Access, shape: &[i64], sparse: &mut Vec<String>) {
    if let BufferId::Input(k) = access.buffer
        && let Some(input) = plan.inputs.get(k)
    {
        // A gathered input is read where its index values say, in no order read-ahead helps.
        let gathered = !access.terms.is_empty();
        let width = input.dtype.width() as u128;
        let total = crate::types::checked_numel(&input.shape).map_or(0, |n| n as u128 * width);
        let pages = pages_touched(shape, &access.strides, width);
        if gathered || (pages as f64) < SPARSE_BELOW * total.div_ceil(PAGE) as f64 {
            sparse.push(input.name.clone());
        }
    }
    for term in &access.terms {
        visit(plan, &term.index, shape, sparse);
    }
}

/// About how many pages an affine read of `width`-byte elements touches over `shape` with
/// element `strides`: the axes whose steps stay within a page make one run of bytes, and each
/// step of a longer axis starts a run elsewhere.
fn pages_touched(shape: &[i64], strides: &[i64], width: u128) -> u128 {
    let mut axes: Vec<(u128, u128)> = shape
        .iter()
        .zip(strides)
        .filter(|&(&n, &s)| n > 1 && s != 0)
        .map(|(&n, &s)| (n as u128, s.unsigned_abs() as u128 * width))
        .collect();
    if shape.contains(&0) {
        return 0;
    }
    axes.sort_by_key(|&(_, step)| step);
    let (mut run, mut runs) = (width, 1u128);
    for (n, step) in axes {
        if step < PAGE {
            run = run.saturating_add((n - 1).saturating_mul(step));
        } else {
            runs = runs.saturating_mul(n);
        }
    }
    runs.saturating_mul(run.div_ceil(PAGE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::TensorType;
    use slc_runtime::DType;

    fn sparse(src: &str, inputs: &[(&str, &str)]) -> Vec<String> {
        let mut types = crate::sema::InputTypes::new();
        for (name, ty) in inputs {
            types.insert(name.to_string(), ty.parse::<TensorType>().unwrap());
        }
        sparse_inputs(&crate::compile(src, &types).unwrap().plan)
    }

    #[test]
    fn strided_slices_and_gathers_are_sparse_whole_reads_are_not() {
        let big = [("a", "f32[1048576, 1024]"), ("i", "i64[10000]")];
        assert_eq!(sparse("a[::1000, :4]", &big), ["a"]);
        assert_eq!(sparse("a[-3:, :8]", &big), ["a"]);
        assert_eq!(sparse("a[i]", &big), ["a"]);
        // Every row is a page: a[:, :4] touches them all, as a reversal does.
        assert!(sparse("a[:, :4]", &big).is_empty());
        assert!(sparse("a[::-1]", &big).is_empty());
        assert!(sparse("a[::2]", &big).is_empty());
        assert!(sparse("a[::16, :4]", &big).is_empty());
        assert_eq!(sparse("a[::64, :4]", &big), ["a"]);
    }

    #[test]
    fn runs_cover_every_element_read() {
        // Brute force: every address of small accesses (with steps across pages) lies in a run.
        let mut x = 7u64;
        let mut next = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..300 {
            let rank = 1 + next(3) as usize;
            let shape: Vec<i64> = (0..rank).map(|_| 1 + next(5) as i64).collect();
            let strides: Vec<i64> =
                (0..rank).map(|_| [1, -1, 3, 1024, -1024, 5000, 0][next(7) as usize]).collect();
            let width = [1, 4, 8][next(3) as usize];
            let reach: i64 = shape.iter().zip(&strides).map(|(&n, &s)| (n - 1) * s.abs()).sum();
            let base = reach + next(100) as i64;
            let ranges = runs(base, &shape, &strides, width).unwrap();
            let mut o = vec![0i64; rank];
            loop {
                let e: i64 = base + o.iter().zip(&strides).map(|(a, s)| a * s).sum::<i64>();
                let (b0, b1) = ((e * width) as u64, ((e + 1) * width) as u64);
                assert!(
                    ranges.iter().any(|r| r.start <= b0 && b1 <= r.end),
                    "element {e} of {shape:?} {strides:?} base {base} width {width}: {ranges:?}"
                );
                let Some(d) = (0..rank).rev().find(|&d| o[d] + 1 < shape[d]) else { break };
                o[d] += 1;
                o[d + 1..].iter_mut().for_each(|c| *c = 0);
            }
        }
    }

    #[test]
    fn sparse_parts_are_one_range_per_row_read() {
        let mut types = crate::sema::InputTypes::new();
        types.insert("a".into(), "f32[1048576, 1024]".parse::<TensorType>().unwrap());
        types.insert("i".into(), "i64[10000]".parse::<TensorType>().unwrap());
        let parts = |src| {
            let plan = crate::compile(src, &types).unwrap().plan;
            sparse_parts(&plan, &sparse_inputs(&plan))
        };
        let tail = &parts("a[-3:, :8]")["a"];
        let row = 1024 * 4;
        assert_eq!(
            tail,
            &[
                (1048573 * row)..(1048573 * row + 32),
                (1048574 * row)..(1048574 * row + 32),
                (1048575 * row)..(1048575 * row + 32)
            ]
        );
        assert_eq!(parts("a[::1000, :4]")["a"].len(), 1049);
        // Gathered: read where the index says, not known before it runs.
        assert!(!parts("a[i]").contains_key("a"));
        assert!(parts("a[::-1]").is_empty());
    }

    #[test]
    fn page_estimates() {
        let w = DType::F32.width() as u128;
        assert_eq!(pages_touched(&[1049, 4], &[1000 * 1024, 1], w), 1049);
        assert_eq!(pages_touched(&[1048576, 1024], &[-1024, 1], w), 1048576);
        assert_eq!(pages_touched(&[0, 4], &[1024, 1], w), 0);
        assert_eq!(pages_touched(&[], &[], w), 1);
    }
}
