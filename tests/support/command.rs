//! Running the `slc` binary from the command-line tests: its output as text, and a fresh
//! scratch directory per test.

#![allow(dead_code)] // each test file uses some of these

#[path = "scratch.rs"]
mod scratch_dir;
#[allow(unused_imports)] // each test file uses some of these
pub use scratch_dir::{Scratch, scratch};
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
