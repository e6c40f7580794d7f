//! The Zarr metadata reader on arbitrary bytes (docs/zarr.md): the first byte picks the format
//! (`zarr.json`, v3, or `.zarray`, v2), the rest is the document. Opening is an error or an
//! array; a small array opened reads (its chunks all missing: the fill value) into a tensor of
//! its shape, or fails with an error naming the array and a chunk (a codec configuration zarrs
//! checks only when it reads).

use crate::zarr::open_zarr;

/// Arrays read after opening: at most this many bytes, chunks and bytes per chunk.
const READ_BYTES: u64 = 1 << 16;
const READ_CHUNKS: u64 = 64;

pub fn zarr_metadata(data: &[u8]) {
    let Some((&format, text)) = data.split_first() else { return };
    let dir = std::env::temp_dir().join(format!(
        "slc-fuzz-zarr-{}-{:?}.zarr",
        std::process::id(),
        std::thread::current().id()
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a scratch store");
    let name = if format % 2 == 0 { "zarr.json" } else { ".zarray" };
    std::fs::write(dir.join(name), text).expect("a scratch metadata file");
    if let Ok(array) = open_zarr(&dir) {
        let numel: u64 = array.shape().iter().map(|&d| d as u64).product();
        if array.data_bytes() <= READ_BYTES
            && let Ok((_, chunks)) = array.chunk_counts(None)
            && chunks <= READ_CHUNKS
            && array.chunk_bytes().is_some_and(|b| b <= READ_BYTES)
        {
            match array.read_all() {
                Ok(t) => {
                    assert_eq!(t.shape(), array.shape());
                    assert_eq!(t.numel() as u64, numel);
                }
                // A codec configuration zarrs checks only when it reads (a sharding codec's inner
                // chunk must divide its shard, even to find a shard missing): a clear error
                // naming the array and the chunk.
                Err(e) => assert!(e.starts_with("Zarr array '") && e.contains(", chunk '"), "{e}"),
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
