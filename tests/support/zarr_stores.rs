//! Zarr stores for the tests (`tests/zarr.rs`, `tests/zarr_repl.rs`): an `f32[37, 23]` array
//! in 8 × 5 chunks, written through zarrs in v3 and v2 with several codecs.

#![allow(dead_code)] // each test file uses some of these

use serde_json::json;
use slc_runtime::{DType, Tensor};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrs::array::{Array, ArrayBytes};
use zarrs::filesystem::FilesystemStore;

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub const SHAPE: [u64; 2] = [37, 23];
pub const CHUNKS: [u64; 2] = [8, 5];

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
        // zarr-python's default codecs, read by slc's own path, which inflates only a chunk's
        // prefix; with a checksum, whole.
        (
            "v3-zstd",
            "zarr.json",
            v3_meta(json!([bytes, {"name": "zstd", "configuration": {"level": 0, "checksum": false}}]), 0.0),
        ),
        (
            "v3-zstd-checksum",
            "zarr.json",
            v3_meta(json!([bytes, {"name": "zstd", "configuration": {"level": 3, "checksum": true}}]), 0.0),
        ),
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

/// The store of `variants()` called `name`.
pub fn variant(name: &str) -> (&'static str, &'static str, serde_json::Value) {
    variants().into_iter().find(|v| v.0 == name).unwrap_or_else(|| panic!("no store variant {name}"))
}

/// The chunk files of a store, by key (`c/1/2` in v3, `1.2` in v2).
pub fn chunk_files(store: &Path) -> Vec<PathBuf> {
    let mut files = vec![];
    let mut stack = vec![store.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            if p.is_dir() {
                stack.push(p);
            } else if !name.starts_with('.') && name != "zarr.json" {
                files.push(p);
            }
        }
    }
    files
}

/// The same array as a `.npy`, and an index array, in `dir`.
pub fn npy_inputs(dir: &Path) -> (PathBuf, PathBuf) {
    let a = dir.join("a.npy");
    let t =
        Tensor::from_bytes(DType::F32, &[SHAPE[0] as usize, SHAPE[1] as usize], &f32_bytes(&data())).unwrap();
    slc_runtime::write_npy(&a, &t).unwrap();
    let i = dir.join("i.npy");
    slc_runtime::write_npy(&i, &Tensor::from_i64s(DType::I64, &[4], &[30, -1, 2, 9]).unwrap()).unwrap();
    (a, i)
}
