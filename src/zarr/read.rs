//! Zarr arrays (v2 and v3, local directory stores or, with `zarr-http`, URLs) as inputs:
//! `-i a=data.zarr`, or `-i a=data.zarr/path/to/array` for an array inside a group (docs/zarr.md).
//!
//! The metadata is read first (dtype and shape, for checking the program); then only the chunks
//! holding the elements the plan reads ([`super::touched()`]) are decoded, in parallel, into a
//! tensor whose other pages are never written and so cost nothing — the same sparse tensor that
//! a `.npy` read in parts lands in. Chunks absent from the store read as the fill value.

use super::path::split_store_path;
use super::region::Window;
use slc_runtime::{DType, Tensor};
use std::ops::Range;
use std::path::Path;
use std::sync::Arc;
use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::{Array, ArrayBytesFixedDisjointView, ArraySubset, CodecOptions, data_type};
use zarrs::filesystem::FilesystemStore;
use zarrs::storage::{ReadableStorage, ReadableStorageTraits};

/// Chunk indices listed at once: enough to keep every core busy.
const BATCH: usize = 256;
/// Boxes up to this size are decoded into a reused buffer (below); larger ones into a sparse one.
const REUSED_BYTES: usize = 256 << 20;
/// Chunks larger than this, decoded, are refused: each thread holds one while it decodes it.
const MAX_CHUNK_BYTES: u64 = 1 << 32;

/// A Zarr array whose metadata has been read, its data not yet.
pub struct PendingZarr {
    /// Over any store: a local directory, or (`zarr-http`) a URL.
    array: Array<dyn ReadableStorageTraits>,
    /// `data.zarr/path` (or its URL) as given, for errors.
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

/// Opens the array at `path` (a local directory store, or an array inside one) and reads its
/// metadata (`zarr.json`, or v2's `.zarray`).
pub fn open_zarr(path: &Path) -> Result<PendingZarr, String> {
    let (store_dir, inner) = split_store_path(path);
    if !store_dir.is_dir() {
        return Err(format!("Zarr store '{}' is not a directory", store_dir.display()));
    }
    let store = FilesystemStore::new(&store_dir)
        .map_err(|e| format!("Zarr store '{}' cannot be opened: {e}", store_dir.display()))?;
    open_array(Arc::new(store), &store_dir.display().to_string(), &inner, path.display().to_string())
}

/// Opens the array at `inner` of `store` (`store_name` in errors; `label` names the array) and
/// reads its metadata: any store, local or remote, is read the same way from here on.
pub(super) fn open_array(
    store: ReadableStorage,
    store_name: &str,
    inner: &str,
    label: String,
) -> Result<PendingZarr, String> {
    let array = Array::open(store, inner)
        .map_err(|e| format!("Zarr array '{inner}' of store '{store_name}': {e}"))?;
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
        let regular = self.regular(&chunk);
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

    /// Whether every chunk of the grid has the shape `chunk` (the first chunk's): the last
    /// along each axis starts where that says.
    fn regular(&self, chunk: &[u64]) -> bool {
        let grid = self.array.chunk_grid_shape();
        (0..self.shape.len()).all(|d| {
            let mut last = vec![0u64; self.shape.len()];
            last[d] = grid[d].saturating_sub(1);
            self.array.chunk_origin(&last).is_ok_and(|o| o[d] == last[d] * chunk[d])
        })
    }

    /// How many chunks reading `touched` decodes, of how many the array has.
    pub fn chunk_counts(&self, touched: Option<&[Vec<Range<u64>>]>) -> Result<(u64, u64), String> {
        let read = count(self.chunks(touched)?.iter().map(|ids| ids.len() as u64));
        Ok((read, count(self.array.chunk_grid_shape().iter().copied())))
    }

    /// The box of the array holding the chunks that hold `touched`: from the first chunk's start
    /// to the last one's end along each axis, clipped to the array. The whole array when it
    /// reads nothing or everything, or when its chunk grid is irregular.
    pub fn window(&self, touched: Option<&[Vec<Range<u64>>]>) -> Result<Window, String> {
        let per_axis = self.chunks(touched)?;
        let first = vec![0u64; self.shape.len()];
        let chunk = self.array.chunk_shape(&first).map_err(|e| self.error(&first, e))?;
        let mut window = Window::whole(&self.shape);
        let sizes: Vec<u64> = chunk.iter().map(|c| c.get()).collect();
        if per_axis.iter().any(Vec::is_empty) || !self.regular(&sizes) {
            return Ok(window);
        }
        for (d, ids) in per_axis.iter().enumerate() {
            let (Some(&lo), Some(&hi)) = (ids.first(), ids.last()) else { continue };
            let c = chunk[d].get();
            let end = ((hi + 1) * c).min(self.shape[d] as u64);
            window.start[d] = lo * c;
            window.shape[d] = (end - lo * c) as usize;
        }
        Ok(window)
    }

    /// Reads the chunks holding `touched` (or all of them), which lie in `window` (the
    /// [`window`](Self::window) of `touched`, or one holding it), into a tensor of the
    /// window's shape; its other elements are never read by the plan they were chosen for,
    /// and hold zeros (a large window's untouched pages cost nothing) or, in a window of at
    /// most 256 MiB, a dropped buffer's old bytes.
    pub fn read(&self, touched: Option<&[Vec<Range<u64>>]>, window: &Window) -> Result<Tensor, String> {
        let per_axis = self.chunks(touched)?;
        // What the plan reads of the box is decoded into it; the rest (gaps between chunks read)
        // is never read. So a buffer dropped recently will do, its old bytes left in the gaps:
        // no fresh pages to fault in, in a process that reads again. A large box is sparse:
        // its gaps cost nothing.
        let tensor = match Tensor::byte_size(self.dtype, &window.shape).is_some_and(|b| b <= REUSED_BYTES) {
            true => Tensor::for_overwrite(self.dtype, &window.shape),
            false => Tensor::sparse_zeros(self.dtype, &window.shape),
        };
        let mut tensor = tensor.map_err(|e| format!("Zarr array '{}': {e}", self.label))?;
        let count = count(per_axis.iter().map(|ids| ids.len() as u64));
        let mut batch: Vec<Vec<u64>> = Vec::with_capacity(BATCH);
        let mut at = vec![0usize; per_axis.len()];
        for _ in 0..count {
            batch.push(at.iter().zip(&per_axis).map(|(&i, ids)| ids[i]).collect());
            if batch.len() == BATCH {
                self.decode_into(&batch, window, &mut tensor)?;
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
        self.decode_into(&batch, window, &mut tensor)?;
        Ok(tensor)
    }

    /// Reads the whole array.
    pub fn read_all(&self) -> Result<Tensor, String> {
        self.read(None, &Window::whole(&self.shape))
    }

    /// Decodes `chunks` in parallel, each straight into its place in `tensor` (the bytes of
    /// `window`), by the thread that reads it.
    fn decode_into(&self, chunks: &[Vec<u64>], window: &Window, tensor: &mut Tensor) -> Result<(), String> {
        use rayon::prelude::*;
        let shape: Vec<u64> = window.shape.iter().map(|&s| s as u64).collect();
        let bytes = UnsafeCellSlice::new(tensor.bytes_mut());
        // Chunks are decoded in parallel, each by one thread.
        let options = CodecOptions::default().with_concurrent_target(1);
        let width = self.dtype.width();
        chunks.par_iter().try_for_each(|ids| {
            let subset = self.array.chunk_subset_bounded(ids).map_err(|e| self.error(ids, e))?;
            if subset.num_elements() == 0 {
                return Ok(());
            }
            let start: Option<Vec<u64>> =
                subset.start().iter().zip(&window.start).map(|(&s, &w)| s.checked_sub(w)).collect();
            let start = start.ok_or_else(|| self.error(ids, "lies outside the window read"))?;
            let inside = ArraySubset::new_with_start_shape(start, subset.shape().to_vec())
                .map_err(|e| self.error(ids, e))?;
            // SAFETY: each chunk's subset is its own: chunks do not overlap, and `tensor` is
            // borrowed mutably here, read by nothing else.
            let mut view = unsafe { ArrayBytesFixedDisjointView::new(bytes, width, &shape, inside) }
                .map_err(|e| self.error(ids, e))?;
            self.array
                .retrieve_array_subset_into_opt(&subset, (&mut view).into(), &options)
                .map_err(|e| self.error(ids, e))
        })
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
