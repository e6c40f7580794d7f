//! How a program will read each input, estimated from its plan before any data is read: which
//! inputs it touches sparsely — a few pages of many, as a strided slice (`a[::1000, :4]`) or a
//! gather of rows does — so that their mapped pages are read one at a time, without the
//! read-ahead that would otherwise read (and map) the pages around each one (docs/inputs.md).

use crate::plan::{Access, BufferId, Plan};
use slc_runtime::Tensor;

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
    fn page_estimates() {
        let w = DType::F32.width() as u128;
        assert_eq!(pages_touched(&[1049, 4], &[1000 * 1024, 1], w), 1049);
        assert_eq!(pages_touched(&[1048576, 1024], &[-1024, 1], w), 1048576);
        assert_eq!(pages_touched(&[0, 4], &[1024, 1], w), 0);
        assert_eq!(pages_touched(&[], &[], w), 1);
    }
}
