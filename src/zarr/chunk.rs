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
use zstd::zstd_safe::{DCtx, InBuffer, OutBuffer, ResetDirective};

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
    zstd: Option<DCtx<'static>>,
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

    /// Calls `use_bytes` with the decoded bytes of the chunk stored in `file`: all `bytes` of
    /// them, or at least the first `needed` where stopping there saves inflating the rest.
    fn decode<R>(
        &self,
        mut file: std::fs::File,
        bytes: u64,
        needed: u64,
        use_bytes: impl FnOnce(&[u8]) -> R,
    ) -> Result<R, String> {
        BUFFERS.with_borrow_mut(|b| {
            b.encoded.clear();
            file.read_to_end(&mut b.encoded).map_err(|e| e.to_string())?;
            if !self.zstd {
                if b.encoded.len() as u64 != bytes {
                    return Err(format!("holds {} bytes, not the {bytes} of a chunk", b.encoded.len()));
                }
                return Ok(use_bytes(&b.encoded));
            }
            let dctx = match &mut b.zstd {
                Some(dctx) => dctx,
                None => b.zstd.insert(DCtx::try_create().ok_or("zstd: no memory for a context")?),
            };
            // Grown once per thread, never cleared: only what zstd writes is handed on.
            if (b.decoded.len() as u64) < bytes {
                b.decoded.resize(bytes as usize, 0);
            }
            let zstd = |code: usize| format!("zstd: {}", zstd::zstd_safe::get_error_name(code));
            if needed < bytes && stops_early(&b.encoded, bytes, needed) {
                let prefix = &mut b.decoded[..needed as usize];
                dctx.reset(ResetDirective::SessionOnly).map_err(zstd)?;
                let mut output = OutBuffer::around(prefix);
                let mut input = InBuffer::around(&b.encoded[..]);
                // Each call inflates into the prefix until it is full or the frame ends.
                while output.pos() < needed as usize {
                    let before = (input.pos(), output.pos());
                    let left = dctx.decompress_stream(&mut output, &mut input).map_err(zstd)?;
                    if left == 0 || before == (input.pos(), output.pos()) {
                        return Err(format!("decodes to fewer than the {bytes} bytes of a chunk"));
                    }
                }
                return Ok(use_bytes(&b.decoded[..needed as usize]));
            }
            // A frame saying it holds more than a chunk would not fit: name its size up front.
            if let Ok(Some(n)) = zstd::zstd_safe::get_frame_content_size(&b.encoded)
                && n > bytes
            {
                return Err(format!("decodes to {n} bytes, not the {bytes} of a chunk"));
            }
            let n = dctx.decompress(&mut b.decoded[..bytes as usize], &b.encoded[..]).map_err(zstd)?;
            if n as u64 != bytes {
                return Err(format!("decodes to {n} bytes, not the {bytes} of a chunk"));
            }
            Ok(use_bytes(&b.decoded[..n]))
        })
    }
}

/// Whether the zstd-compressed chunk `encoded` may be inflated only up to its first `needed`
/// bytes, and that saves a block: it is one whole frame, which says it holds `bytes` bytes and
/// carries no checksum, and `needed` ends before its last block can begin. A checksum covers the
/// whole frame, so a frame with one is inflated whole to check it; a truncated frame fails these
/// tests and is inflated whole, to its error. (Without a checksum, damage past the part read goes
/// unseen, as its bytes are never used.) Inflating a whole frame at once costs less than the
/// streaming decoder, which inflates each block into its own window and copies it out.
fn stops_early(encoded: &[u8], bytes: u64, needed: u64) -> bool {
    const MAGIC: [u8; 4] = 0xFD2F_B528u32.to_le_bytes();
    const CHECKSUM_FLAG: u8 = 0x04; // of the frame header descriptor, after the magic number
    // No block inflates to more (RFC 8878, 3.1.1.2.4), so the blocks before the last hold at
    // most this much each.
    const BLOCK_MAX: u64 = 128 << 10;
    encoded.len() > 4
        && encoded[..4] == MAGIC
        && encoded[4] & CHECKSUM_FLAG == 0
        && zstd::zstd_safe::get_frame_content_size(encoded).is_ok_and(|n| n == Some(bytes))
        && zstd::zstd_safe::find_frame_compressed_size(encoded).is_ok_and(|n| n == encoded.len())
        && block_count(encoded).is_some_and(|blocks| needed <= (blocks - 1) * BLOCK_MAX)
}

/// How many blocks the zstd frame `encoded` holds, by walking their headers (RFC 8878, 3.1.1):
/// `None` where a block would lie past the end.
fn block_count(encoded: &[u8]) -> Option<u64> {
    let descriptor = *encoded.get(4)?;
    let single_segment = descriptor & 0x20 != 0;
    let content_size_bytes = match descriptor >> 6 {
        0 => usize::from(single_segment),
        1 => 2,
        2 => 4,
        _ => 8,
    };
    let dictionary_id_bytes = [0, 1, 2, 4][usize::from(descriptor & 3)];
    let mut at = 5 + usize::from(!single_segment) + dictionary_id_bytes + content_size_bytes;
    let mut blocks = 0;
    loop {
        let header = encoded.get(at..at + 3)?;
        let header = u32::from_le_bytes([header[0], header[1], header[2], 0]);
        let rle = (header >> 1) & 3 == 1; // its content: one byte, repeated
        at += 3 + if rle { 1 } else { (header >> 3) as usize };
        if at > encoded.len() {
            return None;
        }
        blocks += 1;
        if header & 1 == 1 {
            return Some(blocks);
        }
    }
}

/// Calls `use_bytes` with the decoded bytes of chunk `ids` of `array` (`bytes` of them, or at
/// least the first `needed`, the end of what the caller reads): by the plain path where `plain`
/// is given, the chunk is stored and not too large, else by zarrs (a missing chunk: its fill
/// value). Errors do not name the chunk: the caller does.
pub(super) fn with_chunk<S: ?Sized + ReadableStorageTraits + 'static, R>(
    array: &Array<S>,
    plain: Option<&PlainChunks>,
    ids: &[u64],
    bytes: u64,
    needed: u64,
    use_bytes: impl FnOnce(&[u8]) -> R,
) -> Result<R, String> {
    if let Some(plain) = plain.filter(|_| bytes <= PLAIN_MAX_BYTES)
        && let Some(file) = plain.open(&array.chunk_key(ids))?
    {
        return plain.decode(file, bytes, needed, use_bytes);
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
        ids.map(|ids| with_chunk(array, plain, &ids, 24, 24, <[u8]>::to_vec)).collect()
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
        assert!(with_chunk(&array, Some(&path), &[0, 1], 24, 24, |_| ()).unwrap_err().contains("zstd"));
        std::fs::write(&file, &bytes[..5]).unwrap();
        assert!(with_chunk(&array, Some(&path), &[0, 1], 24, 24, |_| ()).is_err());
        // A frame of the wrong size: the chunk of another shape.
        std::fs::write(&file, zstd::bulk::compress(&[0u8; 20], 3).unwrap()).unwrap();
        assert!(
            with_chunk(&array, Some(&path), &[0, 1], 24, 24, |_| ())
                .unwrap_err()
                .contains("decodes to 20 bytes")
        );
    }

    /// A one-chunk f32 array of `n` elements, zstd-compressed with or without a checksum:
    /// its store's directory, the array with its plain path, the chunk's file and its bytes.
    #[allow(clippy::type_complexity)]
    fn one_chunk(
        n: u64,
        checksum: bool,
    ) -> (tempfile::TempDir, (Array<FilesystemStore>, PlainChunks), PathBuf, Vec<u8>) {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(FilesystemStore::new(dir.path()).unwrap());
        let array = ArrayBuilder::new(vec![n], vec![n], data_type::float32(), 0f32)
            .bytes_to_bytes_codecs(vec![Arc::new(ZstdCodec::new(3, checksum))])
            .build(store.clone(), "/a")
            .unwrap();
        array.store_metadata().unwrap();
        let values: Vec<f32> = (0..n).map(|k| (k.wrapping_mul(2_654_435_761) % 1000) as f32).collect();
        array.store_chunk(&[0], values.clone()).unwrap();
        let plain = PlainChunks::of(&array, &store).unwrap();
        let file = dir.path().join("a/c/0");
        (dir, (array, plain), file, values.iter().flat_map(|v| v.to_le_bytes()).collect())
    }

    /// The bytes the plain path hands on for the chunk of `array` when `needed` are read.
    fn read(
        (array, plain): &(Array<FilesystemStore>, PlainChunks),
        bytes: u64,
        needed: u64,
    ) -> Result<Vec<u8>, String> {
        with_chunk(array, Some(plain), &[0], bytes, needed, <[u8]>::to_vec)
    }

    #[test]
    fn a_chunk_without_checksum_is_inflated_only_up_to_the_part_read() {
        // 512 KiB: a frame of several blocks, so stopping early saves whole blocks.
        let (_dir, array, _file, whole) = one_chunk(1 << 17, false);
        let bytes = whole.len() as u64;
        for needed in [1, 4, 1000, 128 << 10, (128 << 10) + 1, 300_000, 384 << 10, (384 << 10) + 1, bytes - 1]
        {
            let got = read(&array, bytes, needed).unwrap();
            assert!(got.len() as u64 >= needed && whole.starts_with(&got), "needed {needed}");
            // Only the prefix, unless the part read reaches into the last of the 4 blocks.
            let stops = needed <= 3 << 17;
            assert_eq!(got.len() as u64, if stops { needed } else { bytes }, "needed {needed}");
        }
        assert_eq!(read(&array, bytes, bytes).unwrap(), whole);
    }

    #[test]
    fn blocks_are_counted_by_their_headers() {
        let mut random = 0x2545_f491_4f6c_dd1du64;
        let mut noise = move || {
            random ^= random << 13;
            random ^= random >> 7;
            random ^= random << 17;
            random as u8
        };
        for n in [1, 1000, 128 << 10, (128 << 10) + 1, (512 << 10) + 5] {
            let kinds: [(&str, Vec<u8>); 3] = [
                ("zeros (RLE blocks)", vec![0; n]),
                ("a ramp (compressed blocks)", (0..n).map(|i| (i % 251) as u8).collect()),
                ("noise (raw blocks)", (0..n).map(|_| noise()).collect()),
            ];
            for (kind, data) in kinds {
                for checksum in [false, true] {
                    let mut encoder = zstd::bulk::Compressor::new(3).unwrap();
                    encoder.include_checksum(checksum).unwrap();
                    let encoded = encoder.compress(&data).unwrap();
                    let want = n.div_ceil(128 << 10) as u64;
                    assert_eq!(block_count(&encoded), Some(want), "{kind}, {n} bytes");
                    assert_eq!(block_count(&encoded[..encoded.len() - 4 * usize::from(checksum) - 1]), None);
                }
            }
        }
    }

    #[test]
    fn a_frame_with_a_checksum_without_its_size_or_cut_short_is_inflated_whole() {
        let (_dir, array, file, whole) = one_chunk(1 << 17, true);
        let bytes = whole.len() as u64;
        assert_eq!(read(&array, bytes, 4).unwrap(), whole);
        let mut encoded = std::fs::read(&file).unwrap();
        let last = encoded.len() - 1;
        encoded[last] ^= 0xff; // the checksum: damage past the part read is still seen
        std::fs::write(&file, &encoded).unwrap();
        assert!(read(&array, bytes, 4).unwrap_err().contains("zstd"));
        // Without a checksum: a frame cut short past the part read is an error too.
        let (_dir, array, file, _) = one_chunk(1 << 17, false);
        let encoded = std::fs::read(&file).unwrap();
        std::fs::write(&file, &encoded[..encoded.len() - 10]).unwrap();
        assert!(read(&array, bytes, 4).unwrap_err().contains("zstd"));
        // A frame that does not say its size (a streaming encoder's) is inflated whole.
        let (_dir, array, file, whole) = one_chunk(1 << 17, false);
        let streamed = zstd::stream::encode_all(&whole[..], 3).unwrap();
        assert!(matches!(zstd::zstd_safe::get_frame_content_size(&streamed), Ok(None)));
        std::fs::write(&file, &streamed).unwrap();
        assert_eq!(read(&array, bytes, 4).unwrap(), whole);
        // A frame holding more than the chunk, however little of it is read.
        std::fs::write(&file, zstd::bulk::compress(&vec![0u8; bytes as usize + 8], 3).unwrap()).unwrap();
        let error = read(&array, bytes, 4).unwrap_err();
        assert!(error.contains(&format!("decodes to {} bytes", bytes + 8)), "{error}");
    }
}
