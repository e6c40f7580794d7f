//! Zarr stores for the store tests (tests/zarr.rs, tests/zarr_http.rs): one `f32[37, 23]` array
//! written through `zarrs` under several metadata documents (v3 and v2, several codecs, sharded).

#![allow(dead_code)] // each test file uses some of these

use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use zarrs::array::{Array, ArrayBytes};
use zarrs::filesystem::FilesystemStore;

pub const SHAPE: [u64; 2] = [37, 23];
pub const CHUNKS: [u64; 2] = [8, 5];

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `f32[37, 23]` holding `row * 100 + col`.
pub fn data() -> Vec<f32> {
    (0..SHAPE[0]).flat_map(|r| (0..SHAPE[1]).map(move |c| (r * 100 + c) as f32)).collect()
}

pub fn f32_bytes(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// Writes the metadata document `meta` (`zarr.json`, or v2's `.zarray`) for an array at
/// `store/inner`, then `values` through zarrs, which encodes them as the metadata says.
pub fn store_array(store: &Path, inner: &str, meta_name: &str, meta: serde_json::Value, values: &[f32]) {
    let dir = store.join(inner.trim_start_matches('/'));
    std::fs::create_dir_all(&dir).unwrap();
    if store != dir {
        // The groups between the store's root and the array.
        let mut at = store.to_path_buf();
        let group = if meta_name == "zarr.json" {
            ("zarr.json", json!({"zarr_format": 3, "node_type": "group"}))
        } else {
            (".zgroup", json!({"zarr_format": 2}))
        };
        for part in inner.trim_start_matches('/').split('/') {
            std::fs::write(at.join(group.0), group.1.to_string()).unwrap();
            at = at.join(part);
        }
    }
    std::fs::write(dir.join(meta_name), meta.to_string()).unwrap();
    let array = Array::open(Arc::new(FilesystemStore::new(store).unwrap()), inner).unwrap();
    array.store_array_subset(&array.subset_all(), ArrayBytes::new_flen(f32_bytes(values))).unwrap();
}

pub fn v3_meta(codecs: serde_json::Value, fill: f32) -> serde_json::Value {
    json!({
        "zarr_format": 3, "node_type": "array", "shape": SHAPE, "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": CHUNKS}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": fill, "codecs": codecs,
    })
}

pub fn v2_meta(compressor: serde_json::Value) -> serde_json::Value {
    json!({
        "zarr_format": 2, "shape": SHAPE, "chunks": CHUNKS, "dtype": "<f4", "fill_value": 0.0,
        "order": "C", "filters": null, "compressor": compressor,
    })
}

/// The stores every selection is checked on: (name, metadata file, metadata).
pub fn variants() -> Vec<(&'static str, &'static str, serde_json::Value)> {
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    let big = json!({"name": "bytes", "configuration": {"endian": "big"}});
    let blosc = json!({"name": "blosc", "configuration":
        {"cname": "lz4", "clevel": 5, "shuffle": "shuffle", "typesize": 4, "blocksize": 0}});
    vec![
        ("v3-raw", "zarr.json", v3_meta(json!([bytes]), 0.0)),
        ("v3-big-endian", "zarr.json", v3_meta(json!([big]), 0.0)),
        (
            "v3-zstd-crc32c",
            "zarr.json",
            v3_meta(
                json!([bytes, {"name": "zstd", "configuration": {"level": 3, "checksum": false}}, {"name": "crc32c"}]),
                0.0,
            ),
        ),
        (
            "v3-gzip",
            "zarr.json",
            v3_meta(json!([bytes, {"name": "gzip", "configuration": {"level": 5}}]), 0.0),
        ),
        ("v3-blosc", "zarr.json", v3_meta(json!([bytes, blosc]), 0.0)),
        (
            "v3-sharded",
            "zarr.json",
            v3_meta(
                json!([{"name": "sharding_indexed", "configuration": {
                    "chunk_shape": [4, 5], "codecs": [bytes, {"name": "zstd", "configuration": {"level": 1, "checksum": false}}],
                    "index_codecs": [bytes, {"name": "crc32c"}], "index_location": "end"}}]),
                0.0,
            ),
        ),
        ("v2-raw", ".zarray", v2_meta(json!(null))),
        (
            "v2-blosc",
            ".zarray",
            v2_meta(json!({"id": "blosc", "cname": "zstd", "clevel": 3, "shuffle": 1, "blocksize": 0})),
        ),
        ("v2-zlib", ".zarray", v2_meta(json!({"id": "zlib", "level": 4}))),
        ("v2-gzip", ".zarray", v2_meta(json!({"id": "gzip", "level": 4}))),
        ("v2-zstd", ".zarray", v2_meta(json!({"id": "zstd", "level": 2}))),
    ]
}
