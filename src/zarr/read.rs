//! Zarr arrays (v2 and v3, local directory stores or, with `zarr-http`, URLs) as inputs:
//! `-i a=data.zarr`, or `-i a=data.zarr/path/to/array` for an array inside a group (docs/zarr.md).
//!
//! The metadata is read first (dtype and shape, for checking the program); then only the chunks
//! holding the elements the plan reads ([`super::touched()`]) are decoded, in parallel, into a
//! tensor whose other pages are never written and so cost nothing — the same sparse tensor that
//! a `.npy` read in parts lands in. Chunks absent from the store read as the fill value.

use super::chunk::{PlainChunks, with_chunk};
use super::path::split_store_path;
use super::region::Window;
use slc_runtime::{DType, Tensor};
use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};
use unsafe_cell_slice::UnsafeCellSlice;
use zarrs::array::{
    Array, ArrayBytesFixedDisjointView, ArrayShardedExt, ArraySubset, CodecOptions, data_type,
};
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
    /// Where the chunks take the plain path (a local store, the commonest codecs).
    plain: Option<PlainChunks>,
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
    let store = Arc::new(store);
    let mut zarr =
        open_array(store.clone(), &store_dir.display().to_string(), &inner, path.display().to_string())?;
    zarr.plain = PlainChunks::of(&zarr.array, &store);
    Ok(zarr)
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
    Ok(PendingZarr { array, label, dtype, shape, plain: None })
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
    /// window's shape: of each chunk, the box spanning what `touched` holds of it. The other
    /// elements are never read by the plan they were chosen for, and hold zeros (a large
    /// window's untouched pages cost nothing) or, in a window of at most 256 MiB, a dropped
    /// buffer's old bytes.
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
                self.decode_into(&batch, touched, window, &mut tensor)?;
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
        self.decode_into(&batch, touched, window, &mut tensor)?;
        Ok(tensor)
    }

    /// Reads the whole array.
    pub fn read_all(&self) -> Result<Tensor, String> {
        self.read(None, &Window::whole(&self.shape))
    }

    /// Decodes `chunks` in parallel, each by one thread, and copies what `touched` holds of it
    /// (the box spanning it) into its place in `tensor` (the bytes of `window`). Only that box:
    /// a slice that reads a sliver of each chunk copies the sliver, not the chunk. A sharded
    /// array's shards are read in part by zarrs (only the inner chunks the box holds).
    fn decode_into(
        &self,
        chunks: &[Vec<u64>],
        touched: Option<&[Vec<Range<u64>>]>,
        window: &Window,
        tensor: &mut Tensor,
    ) -> Result<(), String> {
        let shape: Vec<u64> = window.shape.iter().map(|&s| s as u64).collect();
        let bytes = UnsafeCellSlice::new(tensor.bytes_mut());
        let options = CodecOptions::default().with_concurrent_target(1);
        let width = self.dtype.width();
        let sharded = self.array.is_sharded();
        let decode_one = |ids: &Vec<u64>| -> Result<(), String> {
            let chunk = self.array.chunk_subset_bounded(ids).map_err(|e| self.error(ids, e))?;
            let Part { span: part, rows } = match touched {
                Some(touched) => touched_part(&chunk, touched).map_err(|e| self.error(ids, e))?,
                None => Part::whole(&chunk),
            };
            if part.num_elements() == 0 {
                return Ok(());
            }
            let start: Option<Vec<u64>> =
                part.start().iter().zip(&window.start).map(|(&s, &w)| s.checked_sub(w)).collect();
            let start = start.ok_or_else(|| self.error(ids, "lies outside the window read"))?;
            if sharded && part != chunk {
                let inside = ArraySubset::new_with_start_shape(start, part.shape().to_vec())
                    .map_err(|e| self.error(ids, e))?;
                // SAFETY: each chunk's part is its own: chunks do not overlap, and `tensor` is
                // borrowed mutably here, read by nothing else.
                let mut view = unsafe { ArrayBytesFixedDisjointView::new(bytes, width, &shape, inside) }
                    .map_err(|e| self.error(ids, e))?;
                return self
                    .array
                    .retrieve_array_subset_into_opt(&part, (&mut view).into(), &options)
                    .map_err(|e| self.error(ids, e));
            }
            // The chunk decoded (whole, or up to the part's end), then the part's rows copied:
            // cheaper than zarrs' copy into a view, which walks the rows through an iterator.
            let origin = self.array.chunk_origin(ids).map_err(|e| self.error(ids, e))?;
            let chunk_shape = self.array.chunk_shape(ids).map_err(|e| self.error(ids, e))?;
            let chunk_shape: Vec<u64> = chunk_shape.iter().map(|c| c.get()).collect();
            let from: Vec<u64> = part.start().iter().zip(&origin).map(|(&p, &o)| p - o).collect();
            let chunk_bytes = chunk_shape.iter().product::<u64>() * width as u64;
            // The bytes up to the part's last element: a decoder may stop there.
            let last = from.iter().zip(part.shape()).map(|(&f, &n)| f + n - 1);
            let needed = (offset(&chunk_shape, last, width) + width) as u64;
            let copy = |decoded: &[u8]| {
                if (decoded.len() as u64) < needed {
                    return Err("decodes to fewer bytes than its shape has".to_string());
                }
                let source = Boxed { bytes: decoded, shape: &chunk_shape, start: &from };
                // SAFETY: as above, each chunk's part of `tensor` is written by its thread only.
                let run = part.shape().last().copied().unwrap_or(1);
                unsafe { copy_rows(source, &rows, run, &bytes, &shape, &start, width) };
                Ok(())
            };
            with_chunk(&self.array, self.plain.as_ref(), ids, chunk_bytes, needed, copy)
                .and_then(|copied| copied)
                .map_err(|e| self.error(ids, e))
        };
        // Chunks are decoded in parallel, each by one thread: the calling thread and the JIT's
        // parked workers claim them one at a time, so the caller starts at once instead of
        // waiting for a pool's threads to wake. The first error stops the claiming.
        let first_error: Mutex<Option<String>> = Mutex::new(None);
        let status =
            crate::backend::split_one_by_one(chunks.len() as i64, rayon::current_num_threads(), &|b, e| {
                for ids in &chunks[b as usize..e as usize] {
                    if first_error.lock().is_ok_and(|f| f.is_some()) {
                        return 1;
                    }
                    if let Err(e) = decode_one(ids) {
                        first_error.lock().unwrap_or_else(|p| p.into_inner()).get_or_insert(e);
                        return 1;
                    }
                }
                0
            });
        match first_error.into_inner().unwrap_or_else(|p| p.into_inner()) {
            Some(e) => Err(e),
            None if status != 0 => {
                Err(format!("Zarr array '{}': a thread decoding its chunks failed", self.label))
            }
            None => Ok(()),
        }
    }

    /// An error reading chunk `ids`, naming the store and the chunk's key.
    fn error(&self, ids: &[u64], e: impl std::fmt::Display) -> String {
        format!("Zarr array '{}', chunk '{}': {e}", self.label, self.array.chunk_key(ids))
    }
}

/// What the plan reads of one chunk: `span`, the box spanning it, and along each axis but the
/// last, the offsets into the span of the indices it reads (sorted): the rows between them are
/// not copied (`a[i, :256]` reads 1000 scattered rows, about 31 of each chunk's 256). Along
/// the last axis the span's run is copied whole: one contiguous copy beats several short ones.
struct Part {
    span: ArraySubset,
    rows: Vec<Vec<u64>>,
}

impl Part {
    /// All of `chunk`.
    fn whole(chunk: &ArraySubset) -> Part {
        let outer = &chunk.shape()[..chunk.dimensionality().saturating_sub(1)];
        Part { span: chunk.clone(), rows: outer.iter().map(|&n| (0..n).collect()).collect() }
    }
}

/// What `touched` (per axis, sorted disjoint ranges) holds of `chunk`: along each axis, from the
/// first touched index in the chunk to the last, and the touched ones. Empty where the chunk
/// holds none.
fn touched_part(chunk: &ArraySubset, touched: &[Vec<Range<u64>>]) -> Result<Part, String> {
    let rank = touched.len();
    let mut start = Vec::with_capacity(rank);
    let mut shape = Vec::with_capacity(rank);
    let mut rows = Vec::with_capacity(rank.saturating_sub(1));
    for (d, ((&lo, &len), ranges)) in chunk.start().iter().zip(chunk.shape()).zip(touched).enumerate() {
        let hi = lo + len;
        // The ranges ending after the chunk starts, up to the first starting at or after its end.
        let first = ranges.partition_point(|r| r.end <= lo);
        let inside = &ranges[first..ranges[first..].partition_point(|r| r.start < hi) + first];
        // Sorted and disjoint: the first range starts the part, the last ends it.
        let from = inside.first().map_or(lo, |r| r.start.max(lo));
        let to = inside.last().map_or(lo, |r| r.end.min(hi));
        start.push(from);
        shape.push(to.saturating_sub(from));
        if d + 1 < rank {
            rows.push(inside.iter().flat_map(|r| r.start.max(lo) - from..r.end.min(hi) - from).collect());
        }
    }
    let span = ArraySubset::new_with_start_shape(start, shape).map_err(|e| e.to_string())?;
    Ok(Part { span, rows })
}

/// A box inside a C-ordered array's bytes: the array's shape and the box's first index.
struct Boxed<'a> {
    bytes: &'a [u8],
    shape: &'a [u64],
    start: &'a [u64],
}

/// The byte offset of index `at` in a C-ordered array of `shape` whose elements are `width`
/// bytes.
fn offset(shape: &[u64], at: impl Iterator<Item = u64>, width: usize) -> usize {
    let element = shape.iter().zip(at).fold(0u64, |o, (&n, i)| o * n + i);
    element as usize * width
}

/// Copies, of the box at `source.start` of `source`, the rows at `rows` (per axis but the
/// last, offsets into the box; each row `run` elements long) to the same offsets from `start`
/// of `target`, a C-ordered array of `shape`; both boxes lie inside their arrays (the callers'
/// subsets say so), so no index leaves them.
///
/// # Safety
/// No other thread reads or writes the target box while this runs.
unsafe fn copy_rows(
    source: Boxed<'_>,
    rows: &[Vec<u64>],
    run: u64,
    target: &UnsafeCellSlice<u8>,
    shape: &[u64],
    start: &[u64],
    width: usize,
) {
    if rows.iter().any(Vec::is_empty) {
        return;
    }
    let bytes = run as usize * width;
    // Which of each axis's rows: the last axis but one fastest.
    let mut which = vec![0usize; rows.len()];
    loop {
        let at = || rows.iter().zip(&which).map(|(r, &k)| r[k]).chain(std::iter::once(0));
        let from = offset(source.shape, source.start.iter().zip(at()).map(|(s, i)| s + i), width);
        let to = offset(shape, start.iter().zip(at()).map(|(s, i)| s + i), width);
        // SAFETY: `to..to + bytes` is a row of the target box, this thread's alone.
        let row = unsafe { target.index_mut(to..to + bytes) };
        row.copy_from_slice(&source.bytes[from..from + bytes]);
        let mut d = rows.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            which[d] += 1;
            if which[d] < rows[d].len() {
                break;
            }
            which[d] = 0;
        }
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
    #[allow(clippy::single_range_in_vec_init)] // one range per axis, as `touched` lists them
    fn of_a_chunk_only_the_box_spanning_its_touched_indices_is_decoded_into_place() {
        let chunk = ArraySubset::new_with_start_shape(vec![256, 0], vec![256, 256]).unwrap();
        let part = |touched: &[Vec<Range<u64>>]| {
            let p = touched_part(&chunk, touched).unwrap();
            (p.span.start().to_vec(), p.span.shape().to_vec())
        };
        // A box crossing the chunk: clipped to it.
        assert_eq!(part(&[vec![100..300], vec![200..400]]), (vec![256, 200], vec![44, 56]));
        // A strided axis: from the first touched row in the chunk to the last.
        let rows: Vec<Range<u64>> = (0..9).map(|k| k * 100..k * 100 + 1).collect();
        assert_eq!(part(&[rows.clone(), vec![0..64]]), (vec![300, 0], vec![201, 64]));
        // Of which only the rows touched are copied: offsets into the span.
        assert_eq!(touched_part(&chunk, &[rows, vec![0..64]]).unwrap().rows, [vec![0, 100, 200]]);
        let ranges = touched_part(&chunk, &[vec![250..260, 300..302, 511..600], vec![3..4, 9..10]]).unwrap();
        assert_eq!((ranges.span.start(), ranges.rows), (&[256, 3][..], vec![vec![0, 1, 2, 3, 44, 45, 255]]));
        // Ranges ending where the chunk starts or starting where it ends touch nothing of it.
        assert_eq!(part(&[vec![0..256, 512..600], vec![0..1]]).1, vec![0, 1]);
    }

    #[test]
    fn the_rows_of_a_box_are_copied_element_for_element() {
        // Rows of boxes of a 3-d source (element k holds k) copied into a larger target: each
        // copied element lands where it belongs; the rest is untouched.
        let (src_shape, dst_shape) = ([3u64, 4, 5], [4u64, 6, 7]);
        let source: Vec<u8> = (0..60).collect();
        let all = |n: u64| (0..n).collect::<Vec<u64>>();
        for (rows, run, from, to) in [
            ([all(3), all(4)], 5, [0, 0, 0], [1, 2, 2]),
            ([all(1), all(2)], 3, [2, 1, 2], [0, 0, 0]),
            ([all(2), all(1)], 1, [1, 3, 4], [2, 5, 6]),
            // Rows skipped along both outer axes.
            ([vec![0, 2], vec![1, 3]], 4, [0, 0, 1], [1, 1, 3]),
            ([vec![], vec![0]], 5, [0, 0, 0], [0, 0, 0]),
        ] {
            let mut target = vec![255u8; 4 * 6 * 7];
            let cells = UnsafeCellSlice::new(&mut target);
            let boxed = Boxed { bytes: &source, shape: &src_shape, start: &from };
            unsafe { copy_rows(boxed, &rows, run, &cells, &dst_shape, &to, 1) };
            for (k, &v) in target.iter().enumerate() {
                let t = [k as u64 / 42, k as u64 / 7 % 6, k as u64 % 7];
                let at = |d: usize| t[d].checked_sub(to[d]);
                let inside = at(0).is_some_and(|i| rows[0].contains(&i))
                    && at(1).is_some_and(|i| rows[1].contains(&i))
                    && at(2).is_some_and(|i| i < run);
                let expected = if inside {
                    let s: Vec<u64> = (0..3).map(|d| t[d] - to[d] + from[d]).collect();
                    (s[0] * 20 + s[1] * 5 + s[2]) as u8
                } else {
                    255
                };
                assert_eq!(v, expected, "{rows:?} {run} {from:?} {to:?} at {t:?}");
            }
        }
    }

    #[test]
    fn every_dtype_has_a_zarr_data_type_and_back() {
        for dtype in DType::ALL {
            assert_eq!(dtype_of(&data_type_of(dtype)), Some(dtype), "{dtype}");
        }
    }
}
