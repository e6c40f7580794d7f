//! Replays every committed fuzz input (`fuzz/corpus/<target>/`, and the fixed crashes in
//! `fuzz/regressions/<target>/`) through the library functions the cargo-fuzz targets call, so
//! that plain `cargo test` keeps them passing without nightly or libFuzzer.

use std::path::Path;

fn replay(target: &str, run: fn(&[u8])) {
    let fuzz = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut count = 0;
    for dir in ["corpus", "regressions"] {
        let Ok(entries) = std::fs::read_dir(fuzz.join(dir).join(target)) else { continue };
        let mut paths: Vec<_> = entries.map(|e| e.expect("a directory entry").path()).collect();
        paths.sort();
        for path in paths {
            let data = std::fs::read(&path).expect("a readable input");
            if std::panic::catch_unwind(|| run(&data)).is_err() {
                panic!(
                    "{} fails: reproduce with `cargo +nightly fuzz run {target} {}`",
                    path.display(),
                    path.display()
                );
            }
            count += 1;
        }
    }
    assert!(count > 0, "no committed inputs for {target}");
}

#[test]
fn front_end() {
    replay("front_end", slc::fuzz::front_end);
}

#[test]
fn plan_text() {
    replay("plan_text", slc::fuzz::plan_text);
}

#[test]
fn npy() {
    replay("npy", slc::fuzz::npy);
}

#[test]
fn zarr_metadata() {
    replay("zarr_metadata", slc::fuzz::zarr_metadata);
}

#[test]
fn differential() {
    replay("differential", slc::fuzz::differential);
}

#[test]
fn strided() {
    replay("strided", slc::fuzz::strided);
}

#[test]
fn generic() {
    replay("generic", slc::fuzz::generic);
}
