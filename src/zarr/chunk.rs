//! The decoded bytes of one chunk. zarrs' codec pipeline decodes any chunk; for the commonest
//! arrays — a local store, Zarr v3, codecs `bytes` (little-endian) and optionally `zstd`, the
//! default of zarr-python — a chunk is read and inflated here instead, into buffers each thread
//! keeps: zarrs allocates the file's bytes, the inflated bytes and a zstd context per chunk, and
//! faulting in those fresh pages cost as much as inflating them (docs/zarr.md, "Costs"). Both
//! give the same bytes (tests below, and every store test reads through one or the other).

use std::cell::RefCell;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use zarrs::array::{Array, ArrayBytes, CodecOptions};
use zarrs::filesystem::FilesystemStore;
use zarrs::metadata::ArrayMetadata;
use zarrs::storage::ReadableStorageTraits;

/// Chunks up to this size, decoded, take the plain path: each thread keeps two buffers of it.
const PLAIN_MAX_BYTES: u64 = 4 << 20;

/// How the chunks of an array whose codecs are `bytes` (little-endian) and at most `zstd` are
/// stored: the file of each chunk in a local store, its bytes as they are or zstd-compressed.
pub(super) struct PlainChunks {
    store: Arc<FilesystemStore>,
    zstd: bool,
}

/// What each thread keeps between chunks of the plain path.
#[derive(Default)]
struct Buffers {
    encoded: Vec<u8>,
    decoded: Vec<u8>,
    zstd: Option<zstd::bulk::Decompressor<'static>>,
}

thread_local! {
    static BUFFERS: RefCell<Buffers> = RefCell::default();
}

impl PlainChunks {
    /// The plain path for `array` of `store`, if its chunks take it.
    pub(super) fn of<S: ?Sized>(array: &Array<S>, store: &Arc<FilesystemStore>) -> Option<PlainChunks> {
        let ArrayMetadata::V3(meta) = array.metadata() else { return None };
        if !meta.storage_transformers.is_empty() || cfg!(target_endian = "big") {
            return None;
        }
        let config =
            |i: usize| meta.codecs[i].to_configuration::<serde_json::Map<String, serde_json::Value>>();
        let little = |i: usize| {
            meta.codecs[i].configuration_is_none_or_empty()
                || config(i).is_ok_and(|c| c.iter().all(|(k, v)| k == "endian" && v == "little"))
        };
        let zstd = match meta.codecs.iter().map(|c| c.name()).collect::<Vec<_>>()[..] {
            ["bytes"] if little(0) => false,
            // A checksum, if the frame has one, is checked as it inflates.
            ["bytes", "zstd"] if little(0) => {
                config(1).is_ok_and(|c| c.keys().all(|k| k == "level" || k == "checksum"))
            }
            _ => return None,
        };
        Some(PlainChunks { store: store.clone(), zstd })
    }

    /// The file of chunk `key`, or `None` where the chunk is not stored (zarrs then gives its
    /// fill value).
    fn open(&self, key: &zarrs::storage::StoreKey) -> Result<Option<std::fs::File>, String> {
        let path: PathBuf = self.store.key_to_fspath(key);
        match std::fs::File::open(&path) {
            Ok(file) => Ok(Some(file)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    /// Calls `use_bytes` with the decoded bytes (`bytes` of them) of the chunk stored in `file`.
    fn decode<R>(
        &self,
        mut file: std::fs::File,
        bytes: u64,
        use_bytes: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, String> {
        BUFFERS.with_borrow_mut(|b| {
            b.encoded.clear();
            file.read_to_end(&mut b.encoded).map_err(|e| e.to_string())?;
            let decoded = if self.zstd {
                let zstd = match &mut b.zstd {
                    Some(z) => z,
                    None => b.zstd.insert(zstd::bulk::Decompressor::new().map_err(|e| e.to_string())?),
                };
                b.decoded.clear();
                b.decoded.reserve(bytes as usize);
                zstd.decompress_to_buffer(&b.encoded[..], &mut b.decoded)
                    .map_err(|e| format!("zstd: {e}"))?;
                &b.decoded
            } else {
                &b.encoded
            };
            if decoded.len() as u64 != bytes {
                return Err(format!("decodes to {} bytes, not the {bytes} of a chunk", decoded.len()));
            }
            Ok(use_bytes(decoded))
        })
    }
}

/// Calls `use_bytes` with the decoded bytes of chunk `ids` of `array` (`bytes` of them): by the
/// plain path where `plain` is given, the chunk is stored and not too large, else by zarrs (a
/// missing chunk: its fill value). Errors do not name the chunk: the caller does.
pub(super) fn with_chunk<S: ?Sized + ReadableStorageTraits + 'static, R>(
    array: &Array<S>,
    plain: Option<&PlainChunks>,
    ids: &[u64],
    bytes: u64,
    use_bytes: impl FnOnce(&[u8]) -> R,
) -> Result<R, String> {
    if let Some(plain) = plain.filter(|_| bytes <= PLAIN_MAX_BYTES)
        && let Some(file) = plain.open(&array.chunk_key(ids))?
    {
        return plain.decode(file, bytes, use_bytes);
    }
    let options = CodecOptions::default().with_concurrent_target(1);
    let decoded: ArrayBytes = array.retrieve_chunk_opt(ids, &options).map_err(|e| e.to_string())?;
    let decoded = decoded.into_fixed().map_err(|e| e.to_string())?;
    Ok(use_bytes(&decoded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use zarrs::array::codec::{BytesCodec, GzipCodec, ZstdCodec};
    use zarrs::array::{ArrayBuilder, data_type};

    /// An f32 array of 5 × 7 in chunks of 2 × 3 with `codecs` (bytes-to-bytes) in a fresh store,
    /// every chunk but the one at (1, 1) written.
    fn store(
        codecs: Vec<Arc<dyn zarrs::array::BytesToBytesCodecTraits>>,
    ) -> (tempfile::TempDir, Arc<FilesystemStore>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(FilesystemStore::new(dir.path()).unwrap());
        let array = ArrayBuilder::new(vec![5, 7], vec![2, 3], data_type::float32(), 0.5f32)
            .array_to_bytes_codec(Arc::new(BytesCodec::little()))
            .bytes_to_bytes_codecs(codecs)
            .build(store.clone(), "/a")
            .unwrap();
        array.store_metadata().unwrap();
        let grid = array.chunk_grid_shape().to_vec();
        for i in 0..grid[0] {
            for j in 0..grid[1] {
                if (i, j) != (1, 1) {
                    let n = array.chunk_shape(&[i, j]).unwrap().iter().map(|c| c.get()).product::<u64>();
                    let values: Vec<f32> = (0..n).map(|k| (i * 100 + j * 10 + k) as f32).collect();
                    array.store_chunk(&[i, j], values).unwrap();
                }
            }
        }
        (dir, store)
    }

    fn chunks(array: &Array<FilesystemStore>, plain: Option<&PlainChunks>) -> Vec<Result<Vec<u8>, String>> {
        let grid = array.chunk_grid_shape().to_vec();
        let ids = (0..grid[0]).flat_map(|i| (0..grid[1]).map(move |j| vec![i, j]));
        ids.map(|ids| with_chunk(array, plain, &ids, 24, <[u8]>::to_vec)).collect()
    }

    #[test]
    fn the_plain_path_gives_what_zarrs_gives() {
        for (codecs, plain) in [
            (vec![], true),
            (vec![Arc::new(ZstdCodec::new(3, true)) as _], true),
            (vec![Arc::new(ZstdCodec::new(1, false)) as _], true),
            (vec![Arc::new(GzipCodec::new(5).unwrap()) as _], false),
        ] {
            let (_dir, store) = store(codecs);
            let array = Array::open(store.clone(), "/a").unwrap();
            let path = PlainChunks::of(&array, &store);
            assert_eq!(path.is_some(), plain);
            let (fast, general) = (chunks(&array, path.as_ref()), chunks(&array, None));
            assert_eq!(fast, general);
            // The missing chunk reads as the fill value.
            assert_eq!(general[4].as_deref().unwrap(), 0.5f32.to_le_bytes().repeat(6));
        }
    }

    #[test]
    fn a_corrupt_or_short_chunk_is_an_error_on_the_plain_path() {
        let (dir, store) = store(vec![Arc::new(ZstdCodec::new(3, true)) as _]);
        let array = Array::open(store.clone(), "/a").unwrap();
        let path = PlainChunks::of(&array, &store).unwrap();
        let file = dir.path().join("a/c/0/1");
        let mut bytes = std::fs::read(&file).unwrap();
        let last = bytes.len() - 1;
        bytes[last] ^= 0xff; // the checksum
        std::fs::write(&file, &bytes).unwrap();
        assert!(with_chunk(&array, Some(&path), &[0, 1], 24, |_| ()).unwrap_err().contains("zstd"));
        std::fs::write(&file, &bytes[..5]).unwrap();
        assert!(with_chunk(&array, Some(&path), &[0, 1], 24, |_| ()).is_err());
        // A frame of the wrong size: the chunk of another shape.
        std::fs::write(&file, zstd::bulk::compress(&[0u8; 20], 3).unwrap()).unwrap();
        assert!(
            with_chunk(&array, Some(&path), &[0, 1], 24, |_| ()).unwrap_err().contains("decodes to 20 bytes")
        );
    }
}
