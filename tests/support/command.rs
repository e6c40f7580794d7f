//! Running the `slc` binary from the command-line tests: its output as text, and a fresh
//! scratch directory per test.

#![allow(dead_code)] // each test file uses some of these

use std::path::PathBuf;
use std::process::{Command, Output};

/// `slc ARGS`, without colour.
pub fn slc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slc")).args(args).env("NO_COLOR", "1").output().expect("slc runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// An empty directory for test `name` of the test file `suite`, unique to this process.
pub fn scratch(suite: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("slc-{suite}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}
