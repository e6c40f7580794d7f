//! Every `.slc` script in examples/ runs with `slc run` from the repository root, as its README
//! line says, and every script is listed in examples/README.md.

use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn every_example_script_runs_and_is_listed() {
    let examples = Path::new(ROOT).join("examples");
    let readme = std::fs::read_to_string(examples.join("README.md")).unwrap();
    let home = std::env::temp_dir().join(format!("slc-examples-{}", std::process::id()));
    std::fs::create_dir_all(&home).unwrap();
    let mut scripts: Vec<_> = std::fs::read_dir(&examples)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "slc"))
        .collect();
    scripts.sort();
    assert!(scripts.len() >= 3, "{scripts:?}");
    for script in &scripts {
        let name = script.file_name().unwrap().to_str().unwrap();
        assert!(readme.contains(&format!("`{name}`")), "{name} is not listed in examples/README.md");
        let out = Command::new(env!("CARGO_BIN_EXE_slc"))
            .args(["run", &format!("examples/{name}")])
            .current_dir(ROOT)
            .env("HOME", &home)
            .env("SLC_HISTORY", home.join("history"))
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{name}: {}\n{stdout}", String::from_utf8_lossy(&out.stderr));
        // Each script draws at least one selection.
        assert!(stdout.contains("Output ") && stdout.contains(" on "), "{name} drew nothing:\n{stdout}");
    }
    let _ = std::fs::remove_dir_all(&home);
}
