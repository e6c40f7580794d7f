//! `-o out.zarr`: the result as a Zarr v3 array (docs/zarr.md).
//!
//! Chunks of about [`CHUNK_BYTES`]: the trailing axes whole while they fit, the leading ones
//! split; each chunk zstd-compressed. The store is written beside its destination and renamed
//! into place, so a failure leaves no partial store; an existing Zarr store there is replaced,
//! any other directory refused.

use super::path::holds_zarr;
use super::read::data_type_of;
use slc_runtime::Tensor;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrs::array::codec::ZstdCodec;
use zarrs::array::{ArrayBuilder, ArrayBytes};
use zarrs::filesystem::FilesystemStore;

/// The bytes a chunk holds, about: large enough that per-chunk costs vanish, small enough that
/// a reader of a few elements decodes little.
pub const CHUNK_BYTES: usize = 1 << 20;

/// zstd's level: fast to write, and most of what higher levels save on array data.
const ZSTD_LEVEL: i32 = 3;

/// The chunk shape for `shape` with `width`-byte elements: the last axes whole while the chunk
/// stays under [`CHUNK_BYTES`], then as many steps of the next axis as fit (at least one).
pub fn chunk_shape(shape: &[usize], width: usize) -> Vec<u64> {
    let mut chunk = vec![1u64; shape.len()];
    let mut room = (CHUNK_BYTES / width.max(1)).max(1);
    for d in (0..shape.len()).rev() {
        let n = shape[d].max(1);
        let take = n.min(room).max(1);
        chunk[d] = take as u64;
        room /= take;
        if take < n || room <= 1 {
            break;
        }
    }
    chunk
}

/// Checks, before anything is computed, that `path` can receive a store.
pub fn check_destination(path: &Path) -> Result<(), String> {
    if path.exists() && !(path.is_dir() && holds_zarr(path)) {
        return Err(format!(
            "'{}' exists and is not a Zarr store; slc replaces only Zarr stores",
            path.display()
        ));
    }
    let parent = parent_of(path);
    if !parent.is_dir() {
        return Err(format!("directory '{}' does not exist", parent.display()));
    }
    Ok(())
}

fn parent_of(path: &Path) -> PathBuf {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// Writes `tensor` as a Zarr v3 array at `path`, whole or not at all.
pub fn write_zarr(path: &Path, tensor: &Tensor) -> Result<(), String> {
    check_destination(path)?;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
    let staging = parent_of(path).join(format!(".{name}.slc-{}", std::process::id()));
    let written = write_store(&staging, tensor);
    let placed = written.and_then(|()| replace(&staging, path));
    if placed.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    placed.map_err(|e| format!("cannot write '{}': {e}", path.display()))
}

fn write_store(dir: &Path, tensor: &Tensor) -> Result<(), String> {
    std::fs::create_dir(dir).map_err(|e| e.to_string())?;
    let store = Arc::new(FilesystemStore::new(dir).map_err(|e| e.to_string())?);
    let shape: Vec<u64> = tensor.shape().iter().map(|&d| d as u64).collect();
    let chunks = chunk_shape(tensor.shape(), tensor.dtype().width());
    let array = ArrayBuilder::new(
        shape,
        chunks.as_slice(),
        data_type_of(tensor.dtype()),
        zarrs::array::FillValue::from(vec![0u8; tensor.dtype().width()]),
    )
    .bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(ZSTD_LEVEL, false))])
    .build(store, "/")
    .map_err(|e| e.to_string())?;
    array.store_metadata().map_err(|e| e.to_string())?;
    if tensor.numel() > 0 {
        array
            .store_array_subset(&array.subset_all(), ArrayBytes::new_flen(tensor.bytes()))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Moves the finished store at `staging` to `path`, replacing a store there.
fn replace(staging: &Path, path: &Path) -> Result<(), String> {
    if !path.exists() {
        return std::fs::rename(staging, path).map_err(|e| e.to_string());
    }
    let old = staging.with_extension("old");
    std::fs::rename(path, &old).map_err(|e| e.to_string())?;
    if let Err(e) = std::fs::rename(staging, path) {
        let _ = std::fs::rename(&old, path);
        return Err(e.to_string());
    }
    std::fs::remove_dir_all(&old).map_err(|e| format!("the old store was kept at '{}': {e}", old.display()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_hold_about_a_mebibyte() {
        assert_eq!(chunk_shape(&[1_000_000, 1024], 4), vec![256, 1024]);
        assert_eq!(chunk_shape(&[10, 20], 8), vec![10, 20]);
        assert_eq!(chunk_shape(&[4, 1 << 20], 1), vec![1, 1 << 20]);
        assert_eq!(chunk_shape(&[3, 1 << 21], 4), vec![1, 1 << 18]);
        assert_eq!(chunk_shape(&[0, 5], 4), vec![1, 5]);
        assert_eq!(chunk_shape(&[], 4), Vec::<u64>::new());
    }
}
