//! The inputs a plan derives from others per call ([`Derived`]): the `nonzero()` of a boolean
//! mask whose value a generic program does not know when it is checked
//! (docs/design/shape-generic.md, Masks), and a store's value cast to the target's dtype. The
//! count of `True`s is a dim of the derived input (`_m_trues`), so binding its dims binds the
//! count, as any dim; its rows are the coordinates NumPy's advanced indexing reads. Every
//! executor is handed the derived tensors with the others, made by one function ([`derive()`]).

use super::ir::{Derived, InputDecl};
use slc_runtime::{DType, Tensor};
use std::borrow::Cow;

/// NumPy's `nonzero()` of `mask`, stacked: an i64 tensor `[count, max(1, rank)]`, row `j` the
/// coordinates of the `j`-th nonzero element in C order (a 0-d mask: `[[0]]` or no row).
pub fn nonzero(mask: &Tensor) -> Tensor {
    nonzero_of_bytes(mask.bytes(), mask.shape(), mask.dtype().width())
        .expect("the coordinates of a tensor's elements fit in memory as it does")
}

/// [`nonzero`] of a dense mask's `bytes` (elements of `width` bytes, C order, of `shape`):
/// the `True`s counted first, then their coordinates written into the one tensor of that size
/// (a GPU-sized mask has tens of millions: no growing buffer, no copy of the mask). `Err` when
/// the coordinates do not fit in memory.
pub fn nonzero_of_bytes(
    bytes: &[u8],
    shape: &[usize],
    width: usize,
) -> Result<Tensor, slc_runtime::TensorError> {
    let columns = shape.len().max(1);
    let count = slc_runtime::count_nonzero(bytes, width);
    let mut out = Tensor::for_overwrite(DType::I64, &[count, columns])?;
    let data = out.bytes_mut();
    match shape.split_last() {
        None => {
            if count == 1 {
                data.copy_from_slice(&0i64.to_le_bytes());
            }
        }
        Some((&inner, outer_dims)) if inner > 0 && width > 0 && count > 0 => {
            // SAFETY: any bytes are a valid `i64`; a tensor's buffer is 64-byte aligned, so
            // the whole of it is `i64`s (asserted).
            let (head, rows, _) = unsafe { data.align_to_mut::<i64>() };
            assert!(head.is_empty() && rows.len() == count * columns, "a tensor's buffer is aligned");
            write_coordinates(rows, bytes, inner, outer_dims, width);
        }
        Some(_) => {}
    }
    Ok(out)
}

/// Writes the coordinates of the set elements of `bytes` (rows of `inner` elements of `width`
/// bytes, the outer coordinates counted as an odometer over `outer_dims`) into `rows`, one row
/// of `outer_dims.len() + 1` coordinates per set element, which `rows` holds exactly.
///
/// Every element's coordinates are written at the next free row, which only a set element then
/// takes: no branch on the mask's bits, which a random mask would mispredict every other
/// element. A line of the last axis whose every element could be set without passing the end
/// is written so, unchecked per element; the last few lines check each write.
fn write_coordinates(rows: &mut [i64], bytes: &[u8], inner: usize, outer_dims: &[usize], width: usize) {
    let columns = outer_dims.len() + 1;
    let end = rows.len();
    let set = |e: &[u8]| usize::from(e.iter().any(|&b| b != 0));
    let mut at = 0;
    let mut row = vec![0i64; columns];
    for line in bytes.chunks_exact(inner * width) {
        if at == end {
            return;
        }
        if at + inner * columns <= end {
            let span = &mut rows[at..at + inner * columns];
            let mut k = 0;
            match (width, columns) {
                // The common mask, a 2-d bool: two stores and an add per element.
                (1, 2) => {
                    let outer = row[0].to_le();
                    for (j, &b) in line.iter().enumerate() {
                        span[k] = outer;
                        span[k + 1] = (j as i64).to_le();
                        k += 2 * usize::from(b != 0);
                    }
                }
                (1, 1) => {
                    for (j, &b) in line.iter().enumerate() {
                        span[k] = (j as i64).to_le();
                        k += usize::from(b != 0);
                    }
                }
                _ => {
                    for (j, e) in line.chunks_exact(width).enumerate() {
                        row[columns - 1] = j as i64;
                        for (slot, &c) in span[k..k + columns].iter_mut().zip(&row) {
                            *slot = c.to_le();
                        }
                        k += columns * set(e);
                    }
                }
            }
            at += k;
        } else {
            for (j, e) in line.chunks_exact(width).enumerate() {
                if set(e) == 1 {
                    row[columns - 1] = j as i64;
                    for (slot, &c) in rows[at..at + columns].iter_mut().zip(&row) {
                        *slot = c.to_le();
                    }
                    at += columns;
                }
            }
        }
        for d in (0..outer_dims.len()).rev() {
            row[d] += 1;
            if row[d] < outer_dims[d] as i64 {
                break;
            }
            row[d] = 0;
        }
    }
}

/// Why an input could not be had for a call: the caller gave no tensor for it, or one from
/// which it cannot be derived.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeriveError {
    #[error("no tensor is bound to `{0}`")]
    Missing(String),
    #[error("the mask `{mask}` is {dtype}, not bool")]
    NotBool { mask: String, dtype: DType },
    /// No memory for the derived tensor.
    #[error("{0}")]
    Alloc(slc_runtime::TensorError),
    /// A store's value with an element the target's dtype has no value for.
    #[error(
        "cannot cast `{from}` to the store's dtype: {error} (slc casts all of `{from}`, elements the store does not read included)"
    )]
    Cast { from: String, error: slc_runtime::CastError },
}

/// The tensors of every input `decls` declares, in order: `given(name)` for the inputs the
/// caller passes, the derived ones computed from theirs.
pub fn input_tensors<'t, D>(
    decls: &[InputDecl<D>],
    given: &dyn Fn(&str) -> Option<&'t Tensor>,
) -> Result<Vec<Cow<'t, Tensor>>, DeriveError> {
    decls
        .iter()
        .map(|d| {
            let from = d.given_name();
            let t = given(from).ok_or_else(|| DeriveError::Missing(from.to_string()))?;
            match &d.derived {
                None => Ok(Cow::Borrowed(t)),
                Some(how) => derive(how, d.dtype, t.dtype(), t.bytes(), t.shape()).map(Cow::Owned),
            }
        })
        .collect()
}

/// The tensor of an input derived `how`, of dtype `to`, from the dense C-order elements `bytes`
/// (of `dtype` and `shape`) of the tensor given for its source. The one place every executor's
/// inputs are derived: the interpreter's and the JIT's, a kernel's generic route, the GPU's (on
/// the host, then copied in).
pub fn derive(
    how: &Derived,
    to: DType,
    dtype: DType,
    bytes: &[u8],
    shape: &[usize],
) -> Result<Tensor, DeriveError> {
    match how {
        Derived::Cast { from } => {
            slc_runtime::cast_bytes(dtype, bytes, shape, to).map_err(|error| match error {
                slc_runtime::CastError::Tensor(e) => DeriveError::Alloc(e),
                error => DeriveError::Cast { from: from.clone(), error },
            })
        }
        Derived::Nonzero { .. } if dtype == DType::Bool => {
            nonzero_of_bytes(bytes, shape, dtype.width()).map_err(DeriveError::Alloc)
        }
        Derived::Nonzero { mask } => Err(DeriveError::NotBool { mask: mask.clone(), dtype }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mask(shape: &[usize], bits: &[u8]) -> Tensor {
        Tensor::from_bytes(DType::Bool, shape, bits).unwrap()
    }

    fn values(t: &Tensor) -> (Vec<usize>, Vec<i64>) {
        (t.shape().to_vec(), (0..t.numel()).map(|i| t.int_at(i).unwrap() as i64).collect())
    }

    #[test]
    fn coordinates_of_the_trues_in_c_order() {
        assert_eq!(
            values(&nonzero(&mask(&[2, 3], &[0, 1, 0, 1, 0, 1]))),
            (vec![3, 2], vec![0, 1, 1, 0, 1, 2])
        );
        assert_eq!(values(&nonzero(&mask(&[4], &[1, 0, 0, 1]))), (vec![2, 1], vec![0, 3]));
        assert_eq!(values(&nonzero(&mask(&[0, 3], &[]))), (vec![0, 2], vec![]));
        assert_eq!(values(&nonzero(&mask(&[], &[1]))), (vec![1, 1], vec![0]));
        assert_eq!(values(&nonzero(&mask(&[], &[0]))), (vec![0, 1], vec![]));
        assert_eq!(values(&nonzero(&mask(&[3, 0], &[]))), (vec![0, 2], vec![]));
    }

    #[test]
    fn rows_equal_the_coordinates_of_every_true_element() {
        let shape = [3usize, 4, 5];
        let bits: Vec<u8> = (0..60u32).map(|i| u8::from(i * 7 % 11 < 4)).collect();
        let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
        let expected: Vec<i64> = crate::types::Coords::new(&dims)
            .zip(&bits)
            .filter(|(_, b)| **b != 0)
            .flat_map(|(c, _)| c)
            .collect();
        let count = bits.iter().filter(|&&b| b != 0).count();
        assert_eq!(values(&nonzero(&mask(&shape, &bits))), (vec![count, 3], expected));
    }

    /// The branch-free writer against the coordinates counted one by one: masks whose last
    /// element is `True` or not, all `True`, all false, and elements of 2 and 4 bytes (any
    /// nonzero byte is set); 1-d and 2-d bool masks (the writers of their own), and lines that
    /// are written unchecked (all but the last few of a dense mask).
    #[test]
    fn every_pattern_and_width_gives_the_coordinates() {
        let mut seed = 7u64;
        let cases = [
            (vec![5usize, 7], 1usize),
            (vec![40, 6], 1),
            (vec![2, 3, 4], 1),
            (vec![13], 1),
            (vec![9], 2),
            (vec![4, 4], 4),
        ];
        for (shape, width) in cases {
            let numel: usize = shape.iter().product();
            let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
            for pattern in 0..6 {
                let bytes: Vec<u8> = (0..numel * width)
                    .map(|b| {
                        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                        let last = b / width == numel - 1;
                        match pattern {
                            0 => 1,
                            1 => 0,
                            2 => u8::from(last && b % width == width - 1),
                            3 => u8::from(!last && seed >> 62 == 0),
                            _ => u8::from(seed >> 63 == 1) * (b % width == 0) as u8,
                        }
                    })
                    .collect();
                let set: Vec<bool> = bytes.chunks_exact(width).map(|e| e.iter().any(|&b| b != 0)).collect();
                let expected: Vec<i64> = crate::types::Coords::new(&dims)
                    .zip(&set)
                    .filter(|(_, s)| **s)
                    .flat_map(|(c, _)| c)
                    .collect();
                let got = nonzero_of_bytes(&bytes, &shape, width).unwrap();
                let count = set.iter().filter(|&&s| s).count();
                assert_eq!(
                    values(&got),
                    (vec![count, shape.len()], expected),
                    "{shape:?} w{width} p{pattern}"
                );
            }
        }
    }
}
