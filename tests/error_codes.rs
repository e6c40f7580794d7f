//! One registry of diagnostic codes (`slc::diag::codes`): every code the sources report is in
//! it, every code in it is reported somewhere, and docs/robustness.md's table is the registry.

use std::path::Path;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// The `"E0123"` string literals in the Rust sources under `dir`.
fn codes_in(dir: &Path, found: &mut Vec<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            codes_in(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") && !path.ends_with("diag/codes.rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let bytes = text.as_bytes();
            for (at, _) in text.match_indices("\"E") {
                let code = &bytes[at + 1..(at + 7).min(bytes.len())];
                if code.len() == 6 && code[1..5].iter().all(u8::is_ascii_digit) && code[5] == b'"' {
                    found.push(String::from_utf8(code[..5].to_vec()).unwrap());
                }
            }
        }
    }
}

#[test]
fn every_code_used_is_registered_and_every_registered_code_is_used() {
    let mut used = vec![];
    for dir in ["src", "capi/src", "runtime/src"] {
        codes_in(&Path::new(ROOT).join(dir), &mut used);
    }
    used.sort();
    used.dedup();
    let registered: Vec<String> = slc::diag::codes::CODES.iter().map(|(c, _)| c.to_string()).collect();
    let mut sorted = registered.clone();
    sorted.sort();
    assert_eq!(registered, sorted, "the registry is in order");
    assert_eq!(used, registered, "codes used in the sources vs. the registry");
}

#[test]
fn the_documented_table_is_the_registry() {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/robustness.md")).unwrap();
    let rows: Vec<(String, String)> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("| `E"))
        .map(|rest| {
            let (digits, meaning) = rest.split_once("` | ").unwrap();
            (format!("E{digits}"), meaning.strip_suffix(" |").unwrap().to_string())
        })
        .collect();
    let registry: Vec<(String, String)> =
        slc::diag::codes::CODES.iter().map(|(c, m)| (c.to_string(), m.to_string())).collect();
    assert_eq!(rows, registry);
}
