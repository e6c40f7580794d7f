//! Every `.slc` script in examples/ runs with `slc run` from the repository root, as its README
//! line says, and every script is listed in examples/README.md; every SVG there is what the
//! `slc show` command on its README line draws today.

#[path = "support/scratch.rs"]
mod scratch_dir;
use scratch_dir::scratch;
use std::path::Path;
use std::process::Command;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

#[test]
fn every_example_script_runs_and_is_listed() {
    let examples = Path::new(ROOT).join("examples");
    let readme = std::fs::read_to_string(examples.join("README.md")).unwrap();
    let home = scratch("examples", "home");
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
}

/// `text` split into words as a shell would, for the single-quoted words the README uses.
fn shell_words(text: &str) -> Vec<String> {
    let (mut words, mut word, mut quoted) = (vec![], String::new(), false);
    for c in text.chars() {
        match c {
            '\'' => quoted = !quoted,
            ' ' if !quoted => words.extend((!word.is_empty()).then(|| std::mem::take(&mut word))),
            c => word.push(c),
        }
    }
    words.extend((!word.is_empty()).then_some(word));
    words
}

#[test]
fn every_example_svg_is_what_slc_show_draws() {
    let examples = Path::new(ROOT).join("examples");
    let readme = std::fs::read_to_string(examples.join("README.md")).unwrap();
    let drawn_dir = scratch("examples", "svgs");
    let mut drawn = vec![];
    for line in readme.lines().filter(|l| l.contains("drawn by `slc show")) {
        let command = line.split("drawn by `").nth(1).unwrap().trim_end_matches('`');
        let mut args = shell_words(command);
        assert_eq!(args.remove(0), "slc");
        let stored = args.pop().unwrap();
        assert_eq!(args.pop().as_deref(), Some("-o"), "{line}");
        let fresh = drawn_dir.join(Path::new(&stored).file_name().unwrap());
        let out = Command::new(env!("CARGO_BIN_EXE_slc"))
            .args(&args)
            .arg("-o")
            .arg(&fresh)
            .current_dir(ROOT)
            .output()
            .unwrap();
        assert!(out.status.success(), "{command}: {}", String::from_utf8_lossy(&out.stderr));
        let expected = std::fs::read_to_string(Path::new(ROOT).join(&stored)).unwrap();
        assert!(
            std::fs::read_to_string(&fresh).unwrap() == expected,
            "{stored} is out of date; run: {command}"
        );
        drawn.push(Path::new(&stored).file_name().unwrap().to_owned());
    }
    let mut svgs: Vec<_> =
        std::fs::read_dir(examples.join("svg")).unwrap().map(|e| e.unwrap().file_name()).collect();
    svgs.sort();
    drawn.sort();
    assert_eq!(svgs, drawn, "every SVG in examples/svg has its command in examples/README.md");
}
