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

/// `slc ARGS` without colour, `stdin` written to its standard input, `env` added to its
/// environment.
pub fn slc_with(args: &[&str], stdin: &str, env: Vec<(String, String)>) -> Output {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_slc"))
        .args(args)
        .envs(env)
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("slc runs");
    child.stdin.take().expect("piped").write_all(stdin.as_bytes()).expect("slc reads its input");
    child.wait_with_output().expect("slc runs")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
