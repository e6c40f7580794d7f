//! Moving a strided view's elements to and from a dense C-order buffer: packing a view for a
//! kernel that reads dense inputs, and writing a dense result back through a view (a store
//! into a strided target, as NumPy's setitem writes through `x[:, ::2]`).

use super::TensorView;

/// The side of a tile [`TensorView::planes`] moves at a time, in elements.
const TILE: usize = 32;

impl TensorView<'_> {
    /// Copies the elements, in C order, into `out` (exactly `nbytes()` long).
    pub(crate) fn pack_into(&self, out: &mut [u8]) {
        assert_eq!(out.len(), self.nbytes());
        if out.is_empty() {
            return;
        }
        if self.strides.is_none() {
            // SAFETY: a dense view's `nbytes` bytes are readable (its constructors checked).
            out.copy_from_slice(unsafe { std::slice::from_raw_parts(self.ptr, out.len()) });
            return;
        }
        // SAFETY: `out` holds the view's elements, dense, writable; the view is read only.
        unsafe { self.planes_of_width(out.as_mut_ptr(), Direction::Pack) }
    }

    /// The elements of a dense view, in place; `None` for a strided one.
    pub(crate) fn dense_bytes(&self) -> Option<&[u8]> {
        match (&self.strides, self.nbytes()) {
            (Some(_), _) => None,
            (None, 0) => Some(&[]),
            // SAFETY: a dense view's `nbytes` bytes are readable (its constructors checked).
            (None, n) => Some(unsafe { std::slice::from_raw_parts(self.ptr, n) }),
        }
    }

    /// Writes `dense` (the view's elements in C order, exactly `nbytes()` long) into the view's
    /// own elements, through its strides.
    ///
    /// # Safety
    /// The view's elements are writable memory that nothing else reads or writes during the
    /// call, and they are distinct ([`elements_distinct`](Self::elements_distinct)).
    pub(crate) unsafe fn unpack_from(&self, dense: &[u8]) {
        assert_eq!(dense.len(), self.nbytes());
        if dense.is_empty() {
            return;
        }
        if self.strides.is_none() {
            // SAFETY: the caller's word on the view's bytes.
            unsafe { std::ptr::copy_nonoverlapping(dense.as_ptr(), self.ptr.cast_mut(), dense.len()) };
            return;
        }
        // SAFETY: the caller's word; `dense` is only read.
        unsafe { self.planes_of_width(dense.as_ptr().cast_mut(), Direction::Unpack) }
    }

    /// Whether no two elements of the view share a byte: the axes of more than one element,
    /// ordered by stride, each step past all the elements of the axes below it (as every view
    /// sliced from an array does). A zero stride, or strides that interleave, fail.
    pub fn elements_distinct(&self) -> bool {
        self.strides.as_ref().is_none_or(|strides| elements_distinct(&self.shape, strides))
    }

    /// # Safety
    /// As [`planes`](Self::planes).
    unsafe fn planes_of_width(&self, dense: *mut u8, direction: Direction) {
        // SAFETY: the caller's word.
        unsafe {
            match self.dtype.width() {
                1 => self.planes::<u8>(dense, direction),
                2 => self.planes::<u16>(dense, direction),
                4 => self.planes::<u32>(dense, direction),
                8 => self.planes::<u64>(dense, direction),
                _ => self.planes::<[u8; 16]>(dense, direction),
            }
        }
    }

    /// Moves a strided view's `T`-sized elements between the view and `dense` (C order):
    /// plane by plane (the last two axes), in tiles of [`TILE`]² elements, so that a transposed
    /// view's accesses (one line per element along a row) come back to each line while it is
    /// cached. An element-by-element walk took 10-40 ns an element on a Fortran-ordered mask.
    ///
    /// # Safety
    /// `dense` holds the view's `nbytes()`; for [`Direction::Pack`] it is writable, for
    /// [`Direction::Unpack`] the view's elements are writable, distinct and unshared.
    unsafe fn planes<T: Copy>(&self, dense: *mut u8, direction: Direction) {
        let strides = self.strides.as_deref().expect("a strided view");
        assert_eq!(std::mem::size_of::<T>(), self.dtype.width());
        let rank = self.shape.len();
        let (rows, cols) = match rank {
            0 => (1, 1),
            1 => (1, self.shape[0]),
            _ => (self.shape[rank - 2], self.shape[rank - 1]),
        };
        let (row_stride, col_stride) = match rank {
            0 => (0, 0),
            1 => (0, strides[0]),
            _ => (strides[rank - 2], strides[rank - 1]),
        };
        let outer = &self.shape[..rank.saturating_sub(2)];
        let mut index = vec![0usize; outer.len()];
        let mut base = 0isize; // in elements, from element 0
        let (view, dense) = (self.ptr.cast::<T>().cast_mut(), dense.cast::<T>());
        for plane in 0..self.numel() / (rows * cols).max(1) {
            let first = plane * rows * cols;
            for r0 in (0..rows).step_by(TILE) {
                for c0 in (0..cols).step_by(TILE) {
                    for r in r0..(r0 + TILE).min(rows) {
                        let from = base + r as isize * row_stride;
                        for c in c0..(c0 + TILE).min(cols) {
                            // SAFETY: the element lies in the view, which its constructor proved
                            // readable (writable: the caller's word); `first + r * cols + c` is
                            // below the element count `dense` holds.
                            unsafe {
                                let (e, d) = (
                                    view.offset(from + c as isize * col_stride),
                                    dense.add(first + r * cols + c),
                                );
                                match direction {
                                    Direction::Pack => d.write_unaligned(e.read_unaligned()),
                                    Direction::Unpack => e.write_unaligned(d.read_unaligned()),
                                }
                            }
                        }
                    }
                }
            }
            // Odometer step over the outer axes, in C order.
            for d in (0..outer.len()).rev() {
                index[d] += 1;
                base += strides[d];
                if index[d] < outer[d] {
                    break;
                }
                base -= strides[d] * outer[d] as isize;
                index[d] = 0;
            }
        }
    }
}

/// Which way [`TensorView::planes`] moves the elements.
#[derive(Clone, Copy)]
enum Direction {
    /// From the view into the dense buffer.
    Pack,
    /// From the dense buffer into the view.
    Unpack,
}

/// Whether no two elements of an array of `shape` at element `strides` share one: the axes of
/// more than one element, ordered by stride, each step past all the elements of the axes below
/// it (as every view sliced from an array does). A zero stride, or strides that interleave, fail.
pub(crate) fn elements_distinct(shape: &[usize], strides: &[isize]) -> bool {
    let mut axes: Vec<(usize, usize)> =
        (shape.iter().zip(strides)).filter(|(n, _)| **n > 1).map(|(&n, &s)| (s.unsigned_abs(), n)).collect();
    axes.sort_unstable();
    let mut reach = 1usize; // elements spanned by the axes so far
    for (stride, n) in axes {
        if stride < reach {
            return false;
        }
        reach = stride.saturating_mul(n - 1).saturating_add(reach);
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;
    use slc_runtime::DType;

    #[test]
    fn packing_follows_strides() {
        let bytes: Vec<u8> = (0..24).collect();
        // A 3x4 u8 array, transposed and with rows reversed.
        let v = TensorView::strided(DType::U8, &[4, 3], &[-1, 4], &bytes, 3).unwrap();
        let t = v.to_tensor().unwrap();
        assert_eq!(t.bytes(), &[3, 7, 11, 2, 6, 10, 1, 5, 9, 0, 4, 8]);
        // Broadcast (stride 0).
        let b = TensorView::strided(DType::U16, &[2, 2], &[0, 2], &bytes, 2).unwrap();
        assert_eq!(b.to_tensor().unwrap().bytes(), &[2, 3, 4, 5, 2, 3, 4, 5]);
    }

    /// The tiled pack against element-by-element addressing: ranks 0 to 4, dims across tile
    /// edges, negative, zero and transposed strides, every element width.
    #[test]
    fn packing_in_tiles_matches_element_by_element() {
        let mut rng = crate::measure::SplitMix(0x7a11);
        let bytes: Vec<u8> = (0..1 << 16).map(|_| rng.next_u64() as u8).collect();
        let mut checked = 0;
        for round in 0..300 {
            let dtype = [DType::U8, DType::I16, DType::F32, DType::F64, DType::C128][round % 5];
            let w = dtype.width() as isize;
            let rank = round % 5;
            let shape: Vec<usize> =
                (0..rank).map(|_| [1, 3, 31, 32, 33, 70][rng.next_u64() as usize % 6]).collect();
            if shape.iter().product::<usize>() > 4096 {
                continue;
            }
            // Element strides: each axis a multiple of the axes after it, sign and order mixed.
            let mut strides = vec![0isize; rank];
            let mut span = 1isize;
            let mut order: Vec<usize> = (0..rank).collect();
            order.rotate_left(round % rank.max(1));
            for &d in &order {
                let sign = if rng.next_u64().is_multiple_of(3) { -1 } else { 1 };
                strides[d] = if rng.next_u64().is_multiple_of(7) { 0 } else { sign * span };
                span *= shape[d] as isize + 1;
            }
            let lowest: isize = (0..rank).map(|d| (shape[d] as isize - 1) * strides[d].min(0)).sum();
            let offset = (-lowest * w) as usize;
            let byte_strides: Vec<isize> = strides.iter().map(|s| s * w).collect();
            let Ok(v) = TensorView::strided(dtype, &shape, &byte_strides, &bytes, offset) else { continue };
            let mut want = vec![];
            let numel: usize = shape.iter().product();
            for k in 0..numel {
                let (mut rest, mut at) = (k, offset as isize);
                for d in (0..rank).rev() {
                    at += (rest % shape[d]) as isize * byte_strides[d];
                    rest /= shape[d];
                }
                want.extend_from_slice(&bytes[at as usize..at as usize + w as usize]);
            }
            assert_eq!(v.to_tensor().unwrap().bytes(), &want[..], "{dtype}{shape:?} strides {strides:?}");
            checked += usize::from(v.layout().is_some());
        }
        assert!(checked >= 100, "{checked} strided views packed");
    }
}
