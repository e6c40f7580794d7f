//! The README cannot drift from the tool: every command it shows runs here and must print what
//! the README says it prints.
//!
//! - A ```` ```console ```` block holds `$ COMMAND` lines, each followed by its expected output
//!   (standard output and standard error, as a terminal shows them). A command must exit 0
//!   unless its expected output reports an error (a diagnostic `[E…] Error:` or `error: …`), and
//!   then it must not.
//! - A ```` ```text ```` block that starts with `$ slc repl` is a REPL session: it runs in a
//!   pseudo-terminal, each `slc> ` line is typed, and what follows it must be what the REPL
//!   answers.
//! - In expected output, `...` alone on a line stands for any lines and `[..]` for any text
//!   within a line (timings, temporary paths).
//!
//! Commands run with bash, in a scratch directory holding a copy of `examples/`, with the binary
//! under test first on `PATH`; `cargo run --release --` runs that binary too. Commands that
//! build, test or time the project itself run elsewhere: [`RUN_ELSEWHERE`] says where.

#[path = "support/scratch.rs"]
mod scratch_dir;
use rexpect::session::{Options, spawn_with_options};
use scratch_dir::{Scratch, scratch};
use std::path::Path;
use std::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_slc");
const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// Commands (by prefix, or by a word they contain) that this test does not run, and where they
/// do run.
const RUN_ELSEWHERE: &[(&str, &str)] = &[
    ("cargo test", ".ci/run runs it verbatim"),
    ("cargo build", ".ci/run builds the whole workspace"),
    ("libslc_c.a", "capi/tests/capi.rs builds and runs the README's C program"),
    ("pip install ./python", "python/ci.sh installs the package so, in a fresh virtual environment"),
    ("python3 examples/python/", "python/tests/test_examples.py runs it and compares with the README"),
    ("bash python/ci.sh", ".ci/run runs it"),
    ("cargo bench", "timings; .ci/run runs the suite once as a test"),
    ("python3 benches/", "timings, by hand"),
    ("bash benches/", "timings, by hand"),
];

fn runs_elsewhere(command: &str) -> bool {
    RUN_ELSEWHERE.iter().any(|(pattern, _)| command.starts_with(pattern) || command.contains(pattern))
}

struct Block {
    /// The line in README.md where the block starts (for messages).
    line: usize,
    info: String,
    text: String,
}

fn blocks(markdown: &str) -> Vec<Block> {
    let mut out = vec![];
    let mut open: Option<Block> = None;
    for (i, line) in markdown.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => {
                open = Some(Block { line: i + 1, info: info.trim().to_string(), text: String::new() })
            }
            (Some(_), Some(_)) => out.push(open.take().unwrap()),
            (Some(b), None) => {
                b.text.push_str(line);
                b.text.push('\n');
            }
            (None, None) => {}
        }
    }
    out
}

/// A command and the output it should print.
struct Example {
    command: String,
    expected: Vec<String>,
}

fn examples(text: &str, prompt: &str) -> Vec<Example> {
    let mut out: Vec<Example> = vec![];
    for line in text.lines() {
        match line.strip_prefix(prompt) {
            Some(command) => out.push(Example { command: command.to_string(), expected: vec![] }),
            None => match out.last_mut() {
                Some(e) => e.expected.push(line.trim_end().to_string()),
                None => panic!("expected output before any command: {line:?}"),
            },
        }
    }
    out
}

/// Whether `line` matches `pattern`, where `[..]` in the pattern matches any text.
fn line_matches(pattern: &str, line: &str) -> bool {
    let mut parts = pattern.split("[..]");
    let first = parts.next().unwrap();
    let Some(mut rest) = line.strip_prefix(first) else { return false };
    let parts: Vec<&str> = parts.collect();
    for (k, part) in parts.iter().enumerate() {
        if k + 1 == parts.len() {
            return rest.ends_with(part);
        }
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    rest.is_empty()
}

/// Whether `actual` matches the `expected` lines, where a `...` line matches any lines.
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((e, rest)) if e == "..." => (0..=actual.len()).any(|skip| matches(rest, &actual[skip..])),
        Some((e, rest)) => {
            actual.split_first().is_some_and(|(a, more)| line_matches(e, a) && matches(rest, more))
        }
    }
}

/// A scratch directory holding a copy of `examples/`.
fn scratch_with_examples(name: &str) -> Scratch {
    let dir = scratch("readme", name);
    let copied =
        Command::new("cp").arg("-r").arg(Path::new(ROOT).join("examples")).arg(&dir).status().unwrap();
    assert!(copied.success());
    dir
}

fn path_with_slc() -> String {
    let bin_dir = Path::new(BIN).parent().unwrap();
    format!("{}:{}", bin_dir.display(), std::env::var("PATH").unwrap_or_default())
}

#[track_caller]
fn check(block: &Block, example: &Example, actual: &str) {
    let lines: Vec<&str> = actual.lines().map(str::trim_end).collect();
    assert!(
        matches(&example.expected, &lines),
        "README.md, block at line {}: `{}` printed\n{actual}\nbut the README says\n{}",
        block.line,
        example.command,
        example.expected.join("\n")
    );
}

fn run_console(block: &Block, dir: &Path) {
    for example in examples(&block.text, "$ ") {
        if runs_elsewhere(&example.command) {
            continue;
        }
        let command = example.command.replace("cargo run --release --", "slc");
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("exec 2>&1; {command}"))
            .current_dir(dir)
            .env("PATH", path_with_slc())
            .env("NO_COLOR", "1")
            .output()
            .unwrap();
        let actual = String::from_utf8_lossy(&out.stdout);
        check(block, &example, &actual);
        let diagnostic = example.expected.iter().any(|l| l.contains("] Error:") || l.starts_with("error: "));
        assert_eq!(
            out.status.success(),
            !diagnostic,
            "README.md, block at line {}: `{command}` exited with {}",
            block.line,
            out.status
        );
    }
}

fn utf8(latin1: &str) -> String {
    String::from_utf8_lossy(&latin1.chars().map(|c| c as u8).collect::<Vec<u8>>()).into_owned()
}

fn run_repl(block: &Block, dir: &Path) {
    let mut cmd = Command::new(BIN);
    cmd.args(["repl", "--no-history"]).current_dir(dir).env("NO_COLOR", "1").env("TERM", "xterm");
    let options = Options::new().timeout_ms(Some(30_000)).strip_ansi_escape_codes(true);
    let mut p = spawn_with_options(cmd, options).expect("spawn slc repl in a pty");
    let body = block.text.split_once('\n').unwrap().1; // after `$ slc repl`
    let (banner, session) = body.split_once("\nslc> ").expect("a banner, then `slc> ` lines");
    let greeting = utf8(&p.exp_string("slc> ").expect("first prompt")).replace('\r', "");
    let banner = Example { command: "slc repl".into(), expected: banner.lines().map(String::from).collect() };
    check(block, &banner, &greeting);
    for example in examples(&format!("slc> {session}"), "slc> ") {
        p.send_line(&example.command).unwrap();
        let answer =
            p.exp_string("slc> ").unwrap_or_else(|e| panic!("no prompt after {:?}: {e}", example.command));
        // rexpect hands bytes over as Latin-1 characters; the terminal echoes the line typed,
        // and the answer follows it.
        let answer = utf8(&answer).replace('\r', "");
        let answer = answer.split_once('\n').map_or("", |(_, rest)| rest);
        check(block, &example, answer);
    }
}

#[test]
fn every_readme_command_prints_what_the_readme_says() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let dir = scratch_with_examples("console");
    let mut ran = 0;
    for block in blocks(&readme) {
        match block.info.as_str() {
            "console" => run_console(&block, &dir),
            "text" if block.text.starts_with("$ slc repl") => {
                run_repl(&block, &scratch_with_examples("repl"))
            }
            "sh" | "shell" | "bash" => {
                panic!("README.md line {}: show commands as ```console with their output", block.line)
            }
            _ => continue,
        }
        ran += 1;
    }
    assert!(ran >= 10, "only {ran} blocks of commands found in README.md");
}

#[test]
fn the_readme_c_programs_are_the_shipped_examples() {
    let readme = std::fs::read_to_string(Path::new(ROOT).join("README.md")).unwrap();
    let programs: Vec<Block> = blocks(&readme).into_iter().filter(|b| b.info == "c").collect();
    assert!(!programs.is_empty());
    for block in programs {
        let first = block.text.lines().next().unwrap();
        let file = first.strip_prefix("// ").unwrap_or_else(|| {
            panic!("README.md line {}: a C block starts with `// examples/FILE.c`", block.line)
        });
        let shipped = std::fs::read_to_string(Path::new(ROOT).join(file)).unwrap();
        assert_eq!(shipped, block.text, "README.md line {}: the program differs from {file}", block.line);
    }
}

#[test]
fn patterns_match_as_documented() {
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(matches(&lines(&["a", "...", "z"]), &["a", "b", "c", "z"]));
    assert!(matches(&lines(&["a", "...", "z"]), &["a", "z"]));
    assert!(!matches(&lines(&["a", "z"]), &["a", "b", "z"]));
    assert!(line_matches("kernel [..] ms  median of [..] runs", "kernel 1.2 ms  median of 99 runs"));
    assert!(!line_matches("kernel [..] ms", "kernel 1.2 us"));
    assert!(!line_matches("f32[2, 3]", "f32[2, 3, 4]"));
}
