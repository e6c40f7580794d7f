//! The prepared call's fastest path: a compiled entry with nothing to bind, for one layout of
//! its inputs (dtypes, dims, and element strides where an input is not dense), in call order.
//! The kernel of a fixed signature is one; so is a kernel's first specialization (a strided
//! view's layout, a symbolic kernel's repeated shape). A call that fits is a few comparisons, a
//! pointer table on the stack and the entry; anything else (a failed status included) falls
//! back to the checked path, which reports it.

use super::held::FEW_INPUTS;
use super::view::{AsView, reach};
use crate::backend::clif::STATUS_OK;
use crate::backend::jit::JitKernel;
use slc_runtime::{DType, Tensor};

/// What the caller's output must be.
pub(crate) enum Expect<'d> {
    /// A tensor of this dtype and these dims, which must be the output's.
    Shape(DType, &'d [usize]),
    /// Bytes, exactly the output's.
    Bytes,
}

impl Expect<'_> {
    /// Whether an output of `len` bytes is the output of `dtype` and `dims` (`nbytes` bytes).
    #[inline]
    pub fn fits(&self, dtype: DType, dims: &[usize], nbytes: usize, len: usize) -> bool {
        match *self {
            Expect::Shape(d, found) => d == dtype && same_dims(found, dims),
            Expect::Bytes => len == nbytes,
        }
    }
}

/// One input the entry takes: its dtype, dims, element strides when not dense, and the bytes
/// it reaches relative to element 0 (`[lo, hi)`; empty when it has no elements).
#[derive(Debug, Clone)]
struct Slot {
    dtype: DType,
    dims: Vec<usize>,
    strides: Option<Vec<isize>>,
    reach: (i128, i128),
}

/// An input's layout: dtype, dims, and element strides (`None`: dense).
pub(crate) type InputLayout = (DType, Vec<usize>, Option<Vec<isize>>);

/// The fixed layout of an entry that binds nothing.
#[derive(Debug, Clone)]
pub(crate) struct LayoutEntry {
    inputs: Vec<Slot>,
    out_dtype: DType,
    out_dims: Vec<usize>,
    out_nbytes: usize,
}

impl LayoutEntry {
    /// The entry's layout: its inputs' dtypes, dims and strides (`None`: dense) in call order,
    /// and its output's; `None` when more inputs than the stack table holds, or a size past
    /// addressing.
    pub fn new(inputs: &[InputLayout], out_dtype: DType, out_dims: Vec<usize>) -> Option<LayoutEntry> {
        if inputs.len() > FEW_INPUTS {
            return None;
        }
        let slot = |(dtype, dims, strides): &InputLayout| {
            let nbytes = Tensor::byte_size(*dtype, dims)?;
            let reach = match strides {
                None => (0, nbytes as i128),
                Some(s) => reach(dims, s, dtype.width()).unwrap_or((0, 0)),
            };
            Some(Slot { dtype: *dtype, dims: dims.clone(), strides: strides.clone(), reach })
        };
        let inputs = inputs.iter().map(slot).collect::<Option<Vec<_>>>()?;
        let out_nbytes = Tensor::byte_size(out_dtype, &out_dims)?;
        Some(LayoutEntry { inputs, out_dtype, out_dims, out_nbytes })
    }

    /// Runs `kernel` (compiled for this signature) when `inputs` and the output fit it; false
    /// when they do not or the entry failed (nothing is reported: the caller's checked path
    /// runs again and explains).
    ///
    /// # Safety
    /// `out` points to `out_len` writable bytes, and `kernel` was compiled for this signature
    /// with its inputs in call order and nothing to bind.
    #[inline]
    pub unsafe fn try_call<V: AsView>(
        &self,
        kernel: &JitKernel,
        inputs: &[V],
        expect: &Expect<'_>,
        out: *mut u8,
        out_len: usize,
        threads: usize,
    ) -> bool {
        if inputs.len() != self.inputs.len()
            || !expect.fits(self.out_dtype, &self.out_dims, self.out_nbytes, out_len)
        {
            return false;
        }
        let (first, end) = (out as usize as i128, out as usize as i128 + out_len as i128);
        let mut table = [std::ptr::null::<u8>(); FEW_INPUTS];
        for ((slot, input), want) in table.iter_mut().zip(inputs).zip(&self.inputs) {
            let v = input.as_view();
            let at = v.as_ptr() as usize as i128;
            // Safe Rust cannot lend an output that overlaps an input, but views made from raw
            // pointers (C, Python) can.
            let (lo, hi) = want.reach;
            let disjoint = lo == hi || at + hi <= first || end <= at + lo;
            if v.dtype() != want.dtype
                || !same_dims(v.shape(), &want.dims)
                || !same_strides(v.layout(), want.strides.as_deref())
                || !disjoint
            {
                return false;
            }
            *slot = v.as_ptr();
        }
        // SAFETY: each input has the dtype, dims and strides the entry was compiled for (a view
        // reaches only readable elements), is in its slot, and overlaps no byte of `out`, which has the output's bytes (the caller's word).
        unsafe { kernel.call(&table[..inputs.len()], out, out_len, threads) == STATUS_OK }
    }
}

/// Dims compared in line: slice equality calls `memcmp`, which costs more than the two or three
/// words a tensor's dims usually are.
#[inline]
pub(crate) fn same_dims(a: &[usize], b: &[usize]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y)
}

/// Element strides compared: both dense, or both these strides.
#[inline]
fn same_strides(a: Option<&[isize]>, b: Option<&[isize]>) -> bool {
    match (a, b) {
        (None, None) => true,
        (Some(a), Some(b)) => a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x == y),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dims_compare_by_length_and_values() {
        assert!(same_dims(&[4, 5], &[4, 5]));
        assert!(same_dims(&[], &[]));
        assert!(!same_dims(&[4, 5], &[4]));
        assert!(!same_dims(&[4, 5], &[5, 4]));
    }

    #[test]
    fn strides_compare_with_density() {
        assert!(same_strides(None, None));
        assert!(same_strides(Some(&[4, 1]), Some(&[4, 1])));
        assert!(!same_strides(Some(&[4, 1]), None));
        assert!(!same_strides(Some(&[1, 4]), Some(&[4, 1])));
    }

    #[test]
    fn signatures_past_addressing_or_the_table_have_no_entry() {
        assert!(LayoutEntry::new(&[(DType::F32, vec![usize::MAX, 2], None)], DType::F32, vec![1]).is_none());
        let many = vec![(DType::U8, vec![1], None); FEW_INPUTS + 1];
        assert!(LayoutEntry::new(&many, DType::U8, vec![1]).is_none());
        assert!(LayoutEntry::new(&many[..FEW_INPUTS], DType::U8, vec![1]).is_some());
    }
}
