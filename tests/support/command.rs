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

/// `slc ARGS` without colour, `stdin` written to its standard input (from a thread of its own,
/// so that a long input and a long output cannot block each other; slc may stop reading early),
/// `env` added to its environment.
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
    let mut pipe = child.stdin.take().expect("piped");
    let text = stdin.to_string();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(text.as_bytes());
    });
    let out = child.wait_with_output().expect("slc runs");
    writer.join().expect("the writer thread");
    out
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
