//! Zarr arrays through the command line (docs/zarr.md): stores built here with `zarrs` (v3 and
//! v2, several codecs) give the results the same array gives as a `.npy` to the reference
//! interpreter; only the chunks a slice touches are read (the others deleted or garbage); a bad
//! chunk or bad metadata inside the selection is an error naming the store and the chunk, and
//! leaves no output; `-o out.zarr` writes a v3 array that reads back.

use serde_json::json;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use zarrs::array::Array;
use zarrs::filesystem::FilesystemStore;

#[path = "support/command.rs"]
mod command;
#[path = "support/zarr_stores.rs"]
mod zarr_stores;

use command::{scratch, slc, stderr};
use zarr_stores::{chunk_files, data, f32_bytes, npy_inputs, s, store_array, v3_meta, variant, variants};

/// `slc eval EXPR` over input `a` (and the index array `i`), its result's bytes, or its failure.
fn eval(expr: &str, a: &str, i: &Path, out: &Path, extra: &[&str]) -> Result<Vec<u8>, String> {
    let _ = std::fs::remove_file(out);
    let a = format!("a={a}");
    let i = format!("i={}", s(i));
    let mut args = vec!["eval", expr, "-i", &a, "-i", &i, "-o", s(out)];
    args.extend_from_slice(extra);
    let o = slc(&args);
    if o.status.success() { Ok(std::fs::read(out).unwrap()) } else { Err(stderr(&o)) }
}

const SELECTIONS: &[&str] = &[
    "a",
    "a[::3, 1:7]",
    "a[-5:, ::-2]",
    "a[::7, 4]",
    "a[[3, 30, 7]]",
    "a[i, 2:19:4]",
    "a[1:3, None, ::2]",
    "a[30:, 21:][::-1]",
    "a[i][:, [0, -1]]",
];

#[test]
fn zarr_inputs_give_what_the_npy_gives() {
    let dir = scratch("zarr", "variants");
    let (npy, idx) = npy_inputs(&dir);
    let out = dir.join("out.npy");
    let expected: Vec<Vec<u8>> =
        SELECTIONS.iter().map(|e| eval(e, s(&npy), &idx, &out, &["--backend", "interp"]).unwrap()).collect();
    for (name, meta_name, meta) in variants() {
        let store = dir.join(format!("{name}.zarr"));
        store_array(&store, "/", meta_name, meta, &data());
        for (expr, want) in SELECTIONS.iter().zip(&expected) {
            let got =
                eval(expr, s(&store), &idx, &out, &[]).unwrap_or_else(|e| panic!("{name}: {expr}: {e}"));
            assert!(&got == want, "{name}: {expr} differs from the .npy's result");
        }
    }
}

#[test]
fn an_array_inside_a_group_is_named_by_its_path() {
    let dir = scratch("zarr", "group");
    let (npy, idx) = npy_inputs(&dir);
    let out = dir.join("out.npy");
    for (name, meta_name, meta) in [variant("v3-raw"), variant("v2-raw")] {
        let store = dir.join(format!("{name}.zarr"));
        store_array(&store, "/g/h/arr", meta_name, meta.clone(), &data());
        let want = eval("a[2:9, ::4]", s(&npy), &idx, &out, &[]).unwrap();
        let inner = format!("{}/g/h/arr", s(&store));
        assert_eq!(eval("a[2:9, ::4]", &inner, &idx, &out, &[]).unwrap(), want, "{name}");
        // The group itself is no array.
        let err = eval("a", &format!("{}/g", s(&store)), &idx, &out, &[]).unwrap_err();
        assert!(err.contains("input `a`") && err.contains("/g"), "{err}");
    }
}

#[test]
fn only_the_chunks_a_slice_touches_are_read() {
    let dir = scratch("zarr", "untouched");
    let (npy, idx) = npy_inputs(&dir);
    let out = dir.join("out.npy");
    // Rows 8, 11, 14 (chunk row 1) and columns 10..15 (chunk column 2); the gather's rows 30,
    // 36, 2, 9 lie in chunk rows 3, 4, 0, 1, its columns 0..5 in chunk column 0.
    let cases: [(&str, &[&str], &[&str]); 2] = [
        ("a[8:16:3, 10:15]", &["c/1/2"], &["1.2"]),
        ("a[i, :5]", &["c/0/0", "c/1/0", "c/3/0", "c/4/0"], &["0.0", "1.0", "3.0", "4.0"]),
    ];
    for (name, meta_name, meta) in ["v3-zstd", "v3-zstd-checksum", "v3-zstd-crc32c", "v2-blosc"].map(variant)
    {
        for (expr, v3_keys, v2_keys) in cases {
            let want = eval(expr, s(&npy), &idx, &out, &["--backend", "interp"]).unwrap();
            let store = dir.join(format!("{name}-{}.zarr", expr.len()));
            store_array(&store, "/", meta_name, meta.clone(), &data());
            let keys = if meta_name == "zarr.json" { v3_keys } else { v2_keys };
            let kept: Vec<PathBuf> = keys.iter().map(|key| store.join(key)).collect();
            for (n, file) in chunk_files(&store).into_iter().filter(|f| !kept.contains(f)).enumerate() {
                // Half deleted (they would read as the fill value), half garbage (an error if read).
                if n % 2 == 0 {
                    std::fs::remove_file(&file).unwrap();
                } else {
                    std::fs::write(&file, b"not a chunk").unwrap();
                }
            }
            let o = slc(&[
                "eval",
                expr,
                "-i",
                &format!("a={}", s(&store)),
                "-i",
                &format!("i={}", s(&idx)),
                "-o",
                s(&out),
                "--time",
            ]);
            assert!(o.status.success(), "{name}: {expr}: {}", stderr(&o));
            assert_eq!(std::fs::read(&out).unwrap(), want, "{name}: {expr}");
            let count = format!("reads {} of 25 chunks", keys.len());
            assert!(stderr(&o).contains(&count), "{name}: {expr}: {}", stderr(&o));
        }
    }
}

#[test]
fn missing_chunks_read_as_the_fill_value() {
    let dir = scratch("zarr", "fill");
    let store = dir.join("sparse.zarr");
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    store_array(&store, "/", "zarr.json", v3_meta(json!([bytes]), 7.5), &data());
    std::fs::remove_dir_all(store.join("c/2")).unwrap();
    let out = dir.join("out.npy");
    let o = slc(&["eval", "a[15:18, 3]", "-i", &format!("a={}", s(&store)), "-o", s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Row 15 is in chunk row 1; rows 16 and 17 in the deleted chunk row 2.
    assert_eq!(std::fs::read(&out).unwrap()[128..], f32_bytes(&[1503.0, 7.5, 7.5]));
}

/// Memory grows with the chunks read, not with the array: of a store of 256 TiB (more than an
/// address space holds), no chunk stored, a slice reads the box of the chunks it touches.
#[test]
fn a_store_larger_than_memory_reads_the_box_a_slice_touches() {
    let dir = scratch("zarr", "huge");
    let store = dir.join("huge.zarr");
    std::fs::create_dir_all(&store).unwrap();
    let meta = json!({
        "zarr_format": 3, "node_type": "array", "shape": [1u64 << 34, 4096], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [256, 256]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 1.5, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    });
    std::fs::write(store.join("zarr.json"), meta.to_string()).unwrap();
    let out = dir.join("out.npy");
    let o = slc(&["eval", "a[-2:, 3:5]", "-i", &format!("a={}", s(&store)), "-o", s(&out), "--time"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("reads 1 of 1073741824 chunks (262144 bytes, decoded)"), "{}", stderr(&o));
    // The read phase counts the chunk decoded, not the array's 256 TiB.
    assert!(stderr(&o).contains(" 262144 bytes read,"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap()[128..], f32_bytes(&[1.5; 4]));
}

#[test]
fn a_bad_chunk_inside_the_selection_is_an_error_naming_it_and_leaves_no_output() {
    let dir = scratch("zarr", "corrupt");
    let (_, idx) = npy_inputs(&dir);
    for (name, meta_name, meta) in ["v3-zstd", "v3-zstd-checksum", "v3-zstd-crc32c", "v2-zlib"].map(variant) {
        let store = dir.join(format!("{name}.zarr"));
        store_array(&store, "/", meta_name, meta.clone(), &data());
        let key = if meta_name == "zarr.json" { "c/1/2" } else { "1.2" };
        std::fs::write(store.join(key), b"\x28\xb5\x2f\xfd garbage").unwrap();
        for out in [dir.join("out.npy"), dir.join("out.zarr")] {
            let o = slc(&[
                "eval",
                "a[8:16, 10:15]",
                "-i",
                &format!("a={}", s(&store)),
                "-i",
                &format!("i={}", s(&idx)),
                "-o",
                s(&out),
            ]);
            assert_eq!(o.status.code(), Some(1), "{name}");
            let err = stderr(&o);
            assert!(err.contains(&format!("chunk '{key}'")) && err.contains(s(&store)), "{name}: {err}");
            assert!(!out.exists(), "{name}: {} was written", out.display());
        }
        // Nothing staged is left beside the output either.
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
        assert!(left.iter().all(|n| !n.to_string_lossy().contains(".slc-")), "{left:?}");
    }
}

#[test]
fn bad_metadata_is_a_clear_error() {
    let dir = scratch("zarr", "metadata");
    let store = dir.join("m.zarr");
    let bytes = json!({"name": "bytes", "configuration": {"endian": "little"}});
    store_array(&store, "/", "zarr.json", v3_meta(json!([bytes]), 0.0), &data());
    let unknown = v3_meta(json!([bytes, {"name": "no-such-codec"}]), 0.0);
    let strings = json!({"zarr_format": 3, "node_type": "array", "shape": [3], "data_type": "string",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [3]}},
        "chunk_key_encoding": {"name": "default"}, "fill_value": "", "codecs": [{"name": "vlen-utf8"}]});
    let cases = [
        ("{\"zarr_format\": 3, \"node_type\": \"array\", \"shape\": [3,", "zarr.json"),
        (r#"{"zarr_format": 3, "node_type": "array", "shape": "big"}"#, "zarr.json"),
        (&unknown.to_string(), "no-such-codec"),
        (&strings.to_string(), "string"),
    ];
    let out = dir.join("out.npy");
    for (text, says) in cases {
        std::fs::write(store.join("zarr.json"), text).unwrap();
        let o = slc(&["eval", "a[0]", "-i", &format!("a={}", s(&store)), "-o", s(&out)]);
        assert_eq!(o.status.code(), Some(1), "{text}");
        let err = stderr(&o);
        assert!(err.contains("input `a`") && err.contains(s(&store)) && err.contains(says), "{text}: {err}");
        assert!(!out.exists());
    }
    // No store at all.
    let o = slc(&["eval", "a", "-i", &format!("a={}", s(&dir.join("none.zarr")))]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("none.zarr"), "{}", stderr(&o));
}

#[test]
fn results_written_as_zarr_read_back() {
    let dir = scratch("zarr", "output");
    let (npy, idx) = npy_inputs(&dir);
    let out_npy = dir.join("out.npy");
    let out = dir.join("out.zarr");
    for expr in ["a[::2, 3:]", "a[5]", "a[:0]", "a[3, 4]"] {
        let want = eval(expr, s(&npy), &idx, &out_npy, &[]).unwrap();
        let o = slc(&["eval", expr, "-i", &format!("a={}", s(&npy)), "-o", s(&out)]);
        assert!(o.status.success(), "{expr}: {}", stderr(&o));
        // A second write replaces the store; reading it back through slc gives the result.
        let o = slc(&["eval", expr, "-i", &format!("a={}", s(&npy)), "-o", &format!("{}/", s(&out))]);
        assert!(o.status.success(), "{expr}: {}", stderr(&o));
        let array = Array::open(Arc::new(FilesystemStore::new(&out).unwrap()), "/").unwrap();
        assert!(matches!(array.metadata(), zarrs::array::ArrayMetadata::V3(_)), "{expr}");
        let back = slc(&["eval", "a", "-i", &format!("a={}", s(&out)), "-o", s(&out_npy)]);
        assert!(back.status.success(), "{expr}: {}", stderr(&back));
        assert_eq!(std::fs::read(&out_npy).unwrap(), want, "{expr}");
    }
    // A directory that is no Zarr store is never replaced.
    let other = dir.join("other.zarr");
    std::fs::create_dir(&other).unwrap();
    std::fs::write(other.join("keep.txt"), "mine").unwrap();
    let o = slc(&["eval", "a", "-i", &format!("a={}", s(&npy)), "-o", s(&other)]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("not a Zarr store"), "{}", stderr(&o));
    assert!(other.join("keep.txt").exists());
}

#[test]
fn show_counts_the_chunks_a_selection_reads() {
    let dir = scratch("zarr", "show");
    let (_, meta_name, meta) = &variant("v3-raw");
    let store = dir.join("s.zarr");
    store_array(&store, "/", meta_name, meta.clone(), &data());
    for (expr, says) in
        [("a[8:16:3, 10:15]", "reads 1 of its 25 chunks"), ("a[::-1]", "reads 25 of its 25 chunks")]
    {
        let o = slc(&["show", expr, "-i", &format!("a={}", s(&store))]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(
            command::stdout(&o).contains(&format!("Zarr input `a` {says}.")),
            "{expr}: {}",
            command::stdout(&o)
        );
    }
}
