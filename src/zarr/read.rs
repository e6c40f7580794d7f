//! Zarr arrays (v2 and v3, local directory stores) as inputs: `-i a=data.zarr`, or
//! `-i a=data.zarr/path/to/array` for an array inside a group (docs/zarr.md).
//!
//! The metadata is read first (dtype and shape, for checking the program); then only the chunks
//! holding the elements the plan reads ([`super::touched()`]) are decoded, in parallel, into a
//! tensor whose other pages are never written and so cost nothing — the same sparse tensor that
//! a `.npy` read in parts lands in. Chunks absent from the store read as the fill value.

use super::path::split_store_path;
use slc_runtime::{DType, Tensor};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use zarrs::array::{Array, ArrayBytes, data_type};
use zarrs::filesystem::FilesystemStore;

/// Chunk indices listed at once: enough to keep every core busy.
const BATCH: usize = 256;
/// Chunks larger than this, decoded, are refused: each thread holds one while it decodes it.
const MAX_CHUNK_BYTES: u64 = 1 << 32;

/// A Zarr array whose metadata has been read, its data not yet.
pub struct PendingZarr {
    array: Array<FilesystemStore>,
    /// `data.zarr/path` as given, for errors.
    label: String,
    dtype: DType,
    shape: Vec<usize>,
}

/// Each slc dtype and the Zarr data type that holds it.
fn data_types() -> [(zarrs::array::DataType, DType); DType::ALL.len()] {
    [
        (data_type::bool(), DType::Bool),
        (data_type::int8(), DType::I8),
        (data_type::int16(), DType::I16),
        (data_type::int32(), DType::I32),
        (data_type::int64(), DType::I64),
        (data_type::uint8(), DType::U8),
        (data_type::uint16(), DType::U16),
        (data_type::uint32(), DType::U32),
        (data_type::uint64(), DType::U64),
        (data_type::float16(), DType::F16),
        (data_type::bfloat16(), DType::BF16),
        (data_type::float32(), DType::F32),
        (data_type::float64(), DType::F64),
        (data_type::complex64(), DType::C64),
        (data_type::complex128(), DType::C128),
    ]
}

/// The slc dtype of a Zarr data type, when slc has one.
fn dtype_of(zarr: &zarrs::array::DataType) -> Option<DType> {
    data_types().into_iter().find(|(z, _)| z == zarr).map(|(_, d)| d)
}

/// The Zarr data type of an slc dtype (every slc dtype has one).
pub fn data_type_of(dtype: DType) -> zarrs::array::DataType {
    let found = data_types().into_iter().find(|&(_, d)| d == dtype);
    found.expect("the table holds every dtype").0
}

/// Opens the array at `path` and reads its metadata (`zarr.json`, or v2's `.zarray`).
pub fn open_zarr(path: &Path) -> Result<PendingZarr, String> {
    let label = path.display().to_string();
    let (store_dir, inner) = split_store_path(path);
    if !store_dir.is_dir() {
        return Err(format!("Zarr store '{}' is not a directory", store_dir.display()));
    }
    let store = FilesystemStore::new(&store_dir)
        .map_err(|e| format!("Zarr store '{}' cannot be opened: {e}", store_dir.display()))?;
    let array = Array::open(Arc::new(store), &inner)
        .map_err(|e| format!("Zarr array '{inner}' of store '{}': {e}", store_dir.display()))?;
    let dtype = dtype_of(array.data_type()).ok_or_else(|| {
        format!("Zarr array '{label}' holds {}, which slc has no dtype for", array.data_type())
    })?;
    let shape = array
        .shape()
        .iter()
        .map(|&d| usize::try_from(d).map_err(|_| format!("Zarr array '{label}' is too large to address")))
        .collect::<Result<Vec<_>, _>>()?;
    if Tensor::byte_size(dtype, &shape).is_none() {
        return Err(format!("Zarr array '{label}' of shape {shape:?} is too large to address"));
    }
    Ok(PendingZarr { array, label, dtype, shape })
}

impl PendingZarr {
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The bytes of the whole array, decoded.
    pub fn data_bytes(&self) -> u64 {
        // Checked when the array was opened.
        Tensor::byte_size(self.dtype, &self.shape).unwrap_or(usize::MAX) as u64
    }

    /// The bytes of one chunk, decoded (the first; a regular grid's are all alike), if it
    /// counts in a `u64`.
    pub fn chunk_bytes(&self) -> Option<u64> {
        let first = vec![0u64; self.shape.len()];
        let chunk = self.array.chunk_shape(&first).ok()?;
        chunk.iter().try_fold(self.dtype.width() as u64, |n, c| n.checked_mul(c.get()))
    }

    /// The chunks along each axis that hold the indices of `touched` (per axis, sorted ranges;
    /// `None`: the whole array).
    fn chunks(&self, touched: Option<&[Vec<Range<u64>>]>) -> Result<Vec<Vec<u64>>, String> {
        let rank = self.shape.len();
        let grid = self.array.chunk_grid_shape().to_vec();
        let first = vec![0u64; rank];
        let chunk = self.array.chunk_shape(&first).map_err(|e| self.error(&first, e))?;
        let chunk: Vec<u64> = chunk.iter().map(|c| c.get()).collect();
        if self.chunk_bytes().is_none_or(|b| b > MAX_CHUNK_BYTES) {
            return Err(format!(
                "Zarr array '{}' has chunks of shape {chunk:?}, larger than slc decodes ({MAX_CHUNK_BYTES} bytes)",
                self.label
            ));
        }
        let regular = (0..rank).all(|d| {
            let mut last = first.clone();
            last[d] = grid[d].saturating_sub(1);
            self.array.chunk_origin(&last).is_ok_and(|o| o[d] == last[d] * chunk[d])
        });
        Ok((0..rank)
            .map(|d| match touched {
                Some(t) if regular => {
                    let mut ids: Vec<u64> =
                        t[d].iter().flat_map(|r| r.start / chunk[d]..(r.end - 1) / chunk[d] + 1).collect();
                    ids.dedup();
                    ids
                }
                _ => (0..grid[d]).collect(),
            })
            .collect())
    }

    /// How many chunks reading `touched` decodes, of how many the array has.
    pub fn chunk_counts(&self, touched: Option<&[Vec<Range<u64>>]>) -> Result<(u64, u64), String> {
        let read = count(self.chunks(touched)?.iter().map(|ids| ids.len() as u64));
        Ok((read, count(self.array.chunk_grid_shape().iter().copied())))
    }

    /// Reads the chunks holding `touched` (or all of them) into a tensor of the array's shape;
    /// its other elements are zero and never read by the plan they were chosen for.
    pub fn read(&self, touched: Option<&[Vec<Range<u64>>]>) -> Result<Tensor, String> {
        let mut tensor = Tensor::sparse_zeros(self.dtype, &self.shape)
            .map_err(|e| format!("Zarr array '{}': {e}", self.label))?;
        let per_axis = self.chunks(touched)?;
        let count = count(per_axis.iter().map(|ids| ids.len() as u64));
        let mut batch: Vec<Vec<u64>> = Vec::with_capacity(BATCH);
        let mut at = vec![0usize; per_axis.len()];
        for _ in 0..count {
            batch.push(at.iter().zip(&per_axis).map(|(&i, ids)| ids[i]).collect());
            if batch.len() == BATCH {
                self.decode_into(&batch, &mut tensor)?;
                batch.clear();
            }
            // The next chunk, the last axis fastest.
            for d in (0..at.len()).rev() {
                at[d] += 1;
                if at[d] < per_axis[d].len() {
                    break;
                }
                at[d] = 0;
            }
        }
        self.decode_into(&batch, &mut tensor)?;
        Ok(tensor)
    }

    /// Decodes `chunks` in parallel, each copied into its place in `tensor` by the thread that
    /// decoded it (so at most one decoded chunk per thread is held at a time).
    fn decode_into(&self, chunks: &[Vec<u64>], tensor: &mut Tensor) -> Result<(), String> {
        use rayon::prelude::*;
        let dest = Dest { ptr: tensor.as_mut_ptr(), len: tensor.nbytes() };
        chunks.par_iter().try_for_each(|ids| {
            let bytes =
                self.array.retrieve_chunk::<ArrayBytes<'static>>(ids).map_err(|e| self.error(ids, e))?;
            let bytes = bytes.into_fixed().map_err(|e| self.error(ids, e))?;
            self.place(ids, &bytes, &dest)
        })
    }

    /// Copies a decoded chunk (its full shape, edge chunks included) into `dest`, clipped to
    /// the array.
    fn place(&self, ids: &[u64], chunk: &[u8], dest: &Dest) -> Result<(), String> {
        let w = self.dtype.width();
        let full = self.array.chunk_shape_usize(ids).map_err(|e| self.error(ids, e))?;
        let subset = self.array.chunk_subset_bounded(ids).map_err(|e| self.error(ids, e))?;
        let origin: Vec<usize> = subset.start().iter().map(|&s| s as usize).collect();
        let inside: Vec<usize> = subset.shape().iter().map(|&s| s as usize).collect();
        if Some(chunk.len()) != Tensor::byte_size(self.dtype, &full) {
            return Err(self.error(ids, "decoded to the wrong number of bytes"));
        }
        let rank = self.shape.len();
        if inside.contains(&0) {
            return Ok(());
        }
        let row = inside.last().map_or(1, |&n| n) * w;
        let mut at = vec![0usize; rank.saturating_sub(1)];
        loop {
            let (mut src, mut dst) = (0usize, 0usize);
            for d in 0..rank {
                let i = if d + 1 < rank { at[d] } else { 0 };
                src = src * full[d] + i;
                dst = dst * self.shape[d] + origin[d] + i;
            }
            dest.write(dst * w, &chunk[src * w..src * w + row]);
            let Some(d) = (0..at.len()).rev().find(|&d| at[d] + 1 < inside[d]) else { return Ok(()) };
            at[d] += 1;
            at[d + 1..].iter_mut().for_each(|a| *a = 0);
        }
    }

    /// An error reading chunk `ids`, naming the store and the chunk's key.
    fn error(&self, ids: &[u64], e: impl std::fmt::Display) -> String {
        format!("Zarr array '{}', chunk '{}': {e}", self.label, self.array.chunk_key(ids))
    }
}

/// The product of chunk counts: 0 if any is (an empty axis), else saturating.
fn count(counts: impl Iterator<Item = u64>) -> u64 {
    let counts: Vec<u64> = counts.collect();
    if counts.contains(&0) { 0 } else { counts.into_iter().fold(1, u64::saturating_mul) }
}

/// The bytes of the tensor being filled, written by several threads at once: each writes the
/// region of its own chunk, and chunks do not overlap.
struct Dest {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: writes go through `write`, into disjoint regions (distinct chunks), while the tensor
// is borrowed mutably by `decode_into` and nothing else reads it.
unsafe impl Sync for Dest {}

impl Dest {
    fn write(&self, at: usize, bytes: &[u8]) {
        assert!(
            at.checked_add(bytes.len()).is_some_and(|end| end <= self.len),
            "a chunk lies inside its array"
        );
        // SAFETY: in bounds (checked above); no other thread writes these bytes (see `Sync`).
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), self.ptr.add(at), bytes.len()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_dtype_has_a_zarr_data_type_and_back() {
        for dtype in DType::ALL {
            assert_eq!(dtype_of(&data_type_of(dtype)), Some(dtype), "{dtype}");
        }
    }
}
