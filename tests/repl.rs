//! The REPL end to end: the real `slc` binary in a pseudo-terminal (rustyline: prompt, line
//! editing, completion, multi-line entries, Ctrl-C, Ctrl-D, history that outlives the session),
//! with statements piped in, and `slc run` on scripts.
//!
//! Every run gets its own directory as working directory, `HOME` and `SLC_HISTORY`, so the
//! user's real history is never read or written. Timeouts are generous: the machine may be busy.

#![cfg(unix)]

#[path = "support/scratch.rs"]
mod scratch_dir;
use rexpect::process::WaitStatus;
use rexpect::session::{Options, PtySession, spawn_with_options};
use scratch_dir::scratch;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_slc");
const TIMEOUT_MS: u64 = 120_000;

/// `slc ARGS` with the environment pinned to `dir`.
fn command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args)
        .current_dir(dir)
        .env("HOME", dir)
        .env("XDG_DATA_HOME", dir.join("data"))
        .env("SLC_HISTORY", dir.join("history"))
        .env("TERM", "xterm")
        .env_remove("NO_COLOR");
    cmd
}

/// The REPL in a pseudo-terminal; `color` leaves colours on (the terminal asks for them).
fn spawn_repl(dir: &Path, color: bool) -> PtySession {
    let mut cmd = command(dir, &["repl"]);
    if !color {
        cmd.env("NO_COLOR", "1");
    }
    let options = Options::new().timeout_ms(Some(TIMEOUT_MS)).strip_ansi_escape_codes(!color);
    let mut p = spawn_with_options(cmd, options).expect("spawn slc repl in a pty");
    // With colours the prompt's `slc>` is wrapped in escapes.
    p.exp_string("slc>").expect("first prompt");
    p
}

/// Sends one line and waits for each of `expected` in order, then for the next prompt; returns
/// everything read.
#[track_caller]
fn entry(p: &mut PtySession, line: &str, expected: &[&str]) -> String {
    p.send_line(line).unwrap();
    p.flush().unwrap();
    let mut seen = String::new();
    for e in expected {
        match p.exp_string(e) {
            Ok(before) => {
                seen.push_str(&before);
                seen.push_str(e);
            }
            Err(err) => panic!("after {line:?}: waiting for {e:?}: {err}\nread so far: {seen:?}"),
        }
    }
    seen.push_str(&p.exp_string("slc> ").unwrap_or_else(|e| panic!("no prompt after {line:?}: {e}")));
    seen
}

#[test]
fn a_session_at_the_terminal() {
    let dir = scratch("repl-e2e", "session");
    let mut p = spawn_repl(&dir, false);

    entry(&mut p, "let a = arange(24, shape=[2, 3, 4])", &["a: f32[2, 3, 4]"]);
    entry(&mut p, "let b = a[::-1, 0]", &["b: f32[2, 4]"]);
    entry(&mut p, "b[0]", &["[12. 13. 14. 15.]", "f32[4]"]);

    // A mistake: the report points into the line just typed; the bindings survive it.
    let report = entry(&mut p, "b[5]", &["index 5 is out of bounds for axis 0 with size 2", "input:1:3"]);
    assert!(report.contains("out of range for axis 0"), "{report}");
    entry(&mut p, "b[1, ::2]", &["[0. 2.]", "f32[2]"]);

    // An open bracket continues the entry on the next line.
    p.send_line("a[1,").unwrap();
    p.flush().unwrap();
    entry(&mut p, "  2]", &["[20. 21. 22. 23.]"]);

    let plan = entry(&mut p, ":plan a[1:, ::-1]", &["plan(a: f32[2, 3, 4]) -> f32[1, 3, 4]", "out a{20;"]);
    assert!(!plan.contains("Error"), "{plan}");
    entry(&mut p, ":plan -v a[:, 0]", &["== checked", "== plan", "== loop nest (initial)", "== after"]);
    entry(&mut p, ":time a[::-1]", &["kernel", "median of", "memcpy", "ratio", "GB/s"]);
    entry(&mut p, ":vars", &["name", "a", "f32", "[2, 3, 4]", "96"]);

    // Tab completes a function name.
    p.send("ara").unwrap();
    p.send("\t").unwrap();
    p.flush().unwrap();
    p.exp_string("arange(").expect("completion of `ara`");
    entry(&mut p, "3, dtype=i64)", &["[0 1 2]", "i64[3]"]);

    // Up-arrow recalls the previous entry.
    entry(&mut p, "b[1, 3]", &["3.", "f32[]"]);
    p.send("\x1b[A").unwrap();
    p.flush().unwrap();
    entry(&mut p, "", &["b[1, 3]", "3.", "f32[]"]);

    // Ctrl-C drops the line being typed; the session goes on.
    p.send("nonsense_name").unwrap();
    p.flush().unwrap();
    p.send_control('c').unwrap();
    p.exp_string("slc> ").expect("prompt after Ctrl-C");
    let after = entry(&mut p, "b[0, 0]", &["12.", "f32[]"]);
    assert!(!after.contains("unknown name"), "{after}");

    // Ctrl-D quits with status 0.
    p.send_control('d').unwrap();
    p.exp_eof().expect("exit on Ctrl-D");
    match p.process().wait().unwrap() {
        WaitStatus::Exited(_, code) => assert_eq!(code, 0),
        other => panic!("slc repl ended with {other:?}"),
    }

    // History outlived the session, in the file SLC_HISTORY names.
    let history = std::fs::read_to_string(dir.join("history")).expect("history file");
    assert!(history.contains("let a = arange(24, shape=[2, 3, 4])"), "{history}");
    assert!(!history.contains("nonsense_name"), "{history}");
    assert!(!dir.join("data").exists(), "the default history location was touched");

    // A new session recalls the last session's entries.
    let mut p = spawn_repl(&dir, false);
    entry(&mut p, "let b = arange(8, shape=[2, 4])", &["b: f32[2, 4]"]);
    p.send("\x1b[A\x1b[A").unwrap(); // `b[0, 0]`, from the previous session
    p.flush().unwrap();
    entry(&mut p, "", &["0.", "f32[]"]);
    p.send_line(":quit").unwrap();
    p.flush().unwrap();
    p.exp_eof().expect("exit on :quit");
}

#[test]
fn slc_alone_at_a_terminal_is_the_repl() {
    let dir = scratch("repl-e2e", "bare");
    let options = Options::new().timeout_ms(Some(TIMEOUT_MS)).strip_ansi_escape_codes(true);
    let mut cmd = command(&dir, &[]);
    cmd.env("NO_COLOR", "1");
    let mut p = spawn_with_options(cmd, options).expect("spawn slc in a pty");
    p.exp_string("slc> ").expect("prompt");
    entry(&mut p, "zeros([2], dtype=u8)", &["[0 0]", "u8[2]"]);
    p.send_control('d').unwrap();
    p.exp_eof().expect("exit on Ctrl-D");
}

#[test]
fn colours_at_a_terminal_unless_no_color() {
    let dir = scratch("repl-e2e", "colour");
    let mut p = spawn_repl(&dir, true);
    p.send_line("nope").unwrap();
    p.flush().unwrap();
    let report = p.exp_string("not bound").unwrap();
    assert!(report.contains("\x1b["), "no colour at a terminal: {report:?}");
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();

    let mut p = spawn_repl(&dir, false);
    let report = entry(&mut p, "nope", &["not bound"]);
    assert!(!report.contains("\x1b[3"), "colour despite NO_COLOR: {report:?}");
    p.send_control('d').unwrap();
    p.exp_eof().unwrap();
}

/// `slc ARGS` with `stdin` piped in.
fn piped(dir: &Path, args: &[&str], stdin: &str) -> Output {
    let mut child = command(dir, args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // A command that does not read its input (usage errors) may be gone already.
    if let Err(e) = child.stdin.take().unwrap().write_all(stdin.as_bytes()) {
        assert_eq!(e.kind(), std::io::ErrorKind::BrokenPipe, "{e}");
    }
    child.wait_with_output().unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

#[test]
fn statements_piped_into_the_repl() {
    let dir = scratch("repl-e2e", "piped");
    let out = piped(&dir, &["repl"], "let a = arange(6, dtype=i64)\na[::-1]\n");
    assert_eq!(text(&out.stdout), "[5 4 3 2 1 0]\ni64[6]\n");
    assert!(out.stderr.is_empty() && out.status.success(), "{}", text(&out.stderr));

    // Every entry runs; the report has no colour (not a terminal); the exit code tells.
    let out = piped(&dir, &["repl"], "let a = arange(6, dtype=i64)\na[9]\na[\n  ::2]\n");
    assert_eq!(text(&out.stdout), "[0 2 4]\ni64[3]\n");
    let err = text(&out.stderr);
    assert!(
        err.contains("index 9 is out of bounds") && err.contains("stdin:2:3") && !err.contains('\x1b'),
        "{err}"
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(!dir.join("history").exists(), "piped input went into the history");

    // A data error is exit 1.
    let out = piped(&dir, &["repl"], "load(\"missing.npy\")\n");
    assert_eq!(out.status.code(), Some(1), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("cannot read 'missing.npy'"));

    // `slc` alone without a terminal: usage, not a hang.
    let out = piped(&dir, &[], "a\n");
    assert_eq!(out.status.code(), Some(2));
    assert!(text(&out.stderr).contains("Usage"), "{}", text(&out.stderr));
}

/// `:dml` plans as `slc compile --target dml` does: a store of one value through a mask, which
/// the REPL's own plan reads in place (`when`), takes the mask's positions and lowers to a
/// scatter, where it was refused before.
#[test]
fn dml_takes_a_masked_stores_positions_as_the_dml_target_does() {
    let dir = scratch("repl-e2e", "dml-mask");
    let entries = "let a = arange(6, shape=[2, 3])\n:plan a[[True, False]] = 0\n:dml a[[True, False]] = 0\n";
    let out = piped(&dir, &["repl"], entries);
    assert!(out.status.success(), "{}", text(&out.stderr));
    let printed = text(&out.stdout);
    assert!(printed.contains(" when "), "the REPL's plan reads the mask in place:\n{printed}");
    assert!(printed.contains("DML_OPERATOR_SCATTER_ND"), "{printed}");
}

#[test]
fn scripts_run_until_the_first_error() {
    let dir = scratch("repl-e2e", "run");
    let write = |name: &str, src: &str| std::fs::write(dir.join(name), src).unwrap();
    write(
        "ok.slc",
        "# make, slice, save, reload\nlet a = arange(12, shape=[3, 4], dtype=i32)\nlet k = 2\n\
         save(a[::-1, :k], \"out.npy\")\nlet b = load(\"out.npy\")\nb[\n  0]\n:plan a[1]\n",
    );
    let out = command(&dir, &["run", "ok.slc"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        "saved i32[3, 2] to 'out.npy'\n[8 9]\ni32[2]\nplan(a: i32[3, 4]) -> i32[4]\n  out a{4; 1}\n"
    );

    write("bad.slc", "let a = arange(4)\na[0]\nlet b = a[1, 2]\na[1]\n");
    let out = command(&dir, &["run", "bad.slc"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(text(&out.stdout), "0.0\nf32[]\n", "the run went on after the error");
    let err = text(&out.stderr);
    assert!(err.contains("bad.slc:3:") && err.contains("too many indices"), "{err}");

    write("io.slc", "let a = load(\"nowhere.npy\")\n");
    let out = command(&dir, &["run", "io.slc"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("io.slc:1:14"), "{}", text(&out.stderr));

    let out = command(&dir, &["run", "absent.slc"]).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    assert!(text(&out.stderr).contains("cannot read 'absent.slc'"));

    // Inputs bound on the command line, as with `slc eval`.
    let out = command(&dir, &["run", "-i", "x=out.npy", "--backend", "interp", "ok.slc"]).output().unwrap();
    assert!(out.status.success(), "{}", text(&out.stderr));
}
