//! Running the tools AOT tests use (cc, nm, objdump, the programs they build), and the checks
//! every AOT object passes.

#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// Runs `cmd`, which must succeed; its standard output.
pub fn run(cmd: &mut Command) -> String {
    let out = cmd.output().unwrap_or_else(|e| panic!("cannot run {cmd:?}: {e}"));
    assert!(
        out.status.success(),
        "{cmd:?} failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// nm: the object `dir/NAME.o` defines exactly the global symbols `exports`, and needs no
/// symbol but libc's memcpy/memset. objdump: relocations only against the object's own
/// sections and symbols (`NAME.…`) or libc.
pub fn check_object(dir: &Path, name: &str, exports: &[&str]) {
    let obj = format!("{name}.o");
    let defined = run(Command::new("nm").current_dir(dir).args(["-g", "--defined-only", "-P", &obj]));
    let mut names: Vec<&str> = defined.lines().filter_map(|l| l.split_whitespace().next()).collect();
    names.sort();
    let mut expected = exports.to_vec();
    expected.sort();
    assert_eq!(names, expected, "{obj} exports {names:?}");
    let undefined = run(Command::new("nm").current_dir(dir).args(["-u", "-P", &obj]));
    for l in undefined.lines() {
        let sym = l.split_whitespace().next().unwrap_or("");
        assert!(["memcpy", "memset"].contains(&sym), "{obj} needs `{sym}`");
    }
    let relocs = run(Command::new("objdump").current_dir(dir).args(["-r", &obj]));
    for l in relocs.lines().filter(|l| l.starts_with(char::is_numeric)) {
        let target = l.split_whitespace().last().unwrap_or("");
        let target = target.split(['+', '-']).next().unwrap_or("");
        // The helpers the JIT provides are the object's own local functions (`clif::define_*`).
        use slc::backend::loopnest::{COPY_STREAMING, FILL_STREAMING, spread_ahead_symbol};
        let mut helper =
            [COPY_STREAMING, FILL_STREAMING].into_iter().chain([1, 2, 4, 8].map(spread_ahead_symbol));
        let own =
            target.starts_with(&format!("{name}.")) || target.starts_with('.') || helper.any(|h| h == target);
        assert!(own || ["memcpy", "memset"].contains(&target), "{obj} relocates against `{target}`:\n{l}");
    }
}

/// objdump: `dir/NAME.o` is a relocatable 64-bit ELF object.
pub fn check_elf(dir: &Path, name: &str) {
    let head = run(Command::new("objdump").current_dir(dir).args(["-f", &format!("{name}.o")]));
    assert!(head.contains("HAS_RELOC") && head.contains("elf64"), "not a relocatable ELF object:\n{head}");
}

/// Writes `driver` as `dir/driver.c`, links it with the objects `dir/NAME.o` of `names` by gcc
/// (C11, every warning an error) and runs it; its standard output.
pub fn link_and_run<'n>(dir: &Path, driver: &str, names: impl Iterator<Item = &'n str>) -> String {
    std::fs::write(dir.join("driver.c"), driver).unwrap();
    let objects: Vec<String> = names.map(|n| format!("{n}.o")).collect();
    run(Command::new("gcc")
        .current_dir(dir)
        .args(["-std=c11", "-O0", "-Wall", "-Werror", "-o", "driver", "driver.c"])
        .args(&objects));
    run(Command::new(dir.join("driver")).current_dir(dir))
}
