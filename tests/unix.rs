//! The `slc` command keeps Unix habits: `-o` writes through symbolic links and into FIFOs and
//! devices instead of replacing them, `-o -` and `-i NAME=-` make pipelines, a closed pipe ends
//! printing quietly, cheap checks answer before any data is read, conflicting bindings are
//! refused, and `.npz` archives are inputs.

use slc::{DType, Tensor};
use std::io::Read;
use std::os::unix::fs::FileTypeExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

const BIN: &str = env!("CARGO_BIN_EXE_slc");

#[path = "support/command.rs"]
mod command;

use command::{slc, stderr};

fn scratch(name: &str) -> command::Scratch {
    command::scratch("unix", name)
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

fn arange(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let values: Vec<i64> = (0..n as i64).collect();
    Tensor::from_i64s(DType::I64, shape, &values).unwrap()
}

/// `a` = arange(12) as i64[3, 4] in `dir`; returns its path and what `a[::-1]` is as `.npy`
/// bytes (computed by the library's interpreter, the oracle).
fn input_and_expected(dir: &Path) -> (PathBuf, Vec<u8>) {
    let a = dir.join("a.npy");
    slc_runtime::write_npy(&a, &arange(&[3, 4])).unwrap();
    let mut session = slc::Session::with_executor(slc::Executor::Interpreter);
    session.bind("a", arange(&[3, 4]));
    let expected = slc_runtime::encode_npy(&session.eval("a[::-1]").unwrap()).unwrap();
    (a, expected)
}

#[track_caller]
fn succeeds(o: &Output) {
    assert!(o.status.success(), "slc failed ({}): {}", o.status, stderr(o));
}

#[test]
fn output_through_a_symlink_replaces_the_target_and_keeps_the_link() {
    let dir = scratch("symlink");
    let (a, expected) = input_and_expected(&dir);
    std::fs::create_dir(dir.join("store")).unwrap();
    std::fs::write(dir.join("store/result.npy"), b"old").unwrap();
    // A relative link, resolved against the link's directory, not the working directory.
    std::os::unix::fs::symlink("store/result.npy", dir.join("link.npy")).unwrap();
    succeeds(&slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(&a)), "-o", s(&dir.join("link.npy"))]));
    assert!(std::fs::symlink_metadata(dir.join("link.npy")).unwrap().file_type().is_symlink());
    assert_eq!(std::fs::read(dir.join("store/result.npy")).unwrap(), expected);
    // No temporary file is left beside the target or the link.
    assert_eq!(std::fs::read_dir(dir.join("store")).unwrap().count(), 1);
    // A dangling link: its target is created.
    std::os::unix::fs::symlink("store/new.npy", dir.join("dangling.npy")).unwrap();
    succeeds(&slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(&a)), "-o", s(&dir.join("dangling.npy"))]));
    assert_eq!(std::fs::read(dir.join("store/new.npy")).unwrap(), expected);
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(s(path)).unwrap();
    // SAFETY: a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0, "mkfifo");
}

#[test]
fn output_into_a_fifo_is_written_in_place() {
    let dir = scratch("fifo");
    let (a, expected) = input_and_expected(&dir);
    let fifo = dir.join("out.fifo");
    mkfifo(&fifo);
    let reader = {
        let fifo = fifo.clone();
        std::thread::spawn(move || std::fs::read(fifo).unwrap())
    };
    succeeds(&slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(&a)), "-o", s(&fifo)]));
    assert_eq!(reader.join().unwrap(), expected);
    assert!(std::fs::symlink_metadata(&fifo).unwrap().file_type().is_fifo(), "the FIFO was replaced");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2, "a temporary file was left");
}

/// A character device of our own (the null device's numbers) where this process may make one,
/// so that a wrong implementation replaces only a file of this test; else /dev/null itself,
/// which a process that cannot make devices cannot replace either.
fn null_device(dir: &Path) -> PathBuf {
    let path = dir.join("null");
    let c = std::ffi::CString::new(s(&path)).unwrap();
    // SAFETY: a NUL-terminated path; makedev(1, 3) is /dev/null's.
    let made = unsafe { libc::mknod(c.as_ptr(), libc::S_IFCHR | 0o666, libc::makedev(1, 3)) } == 0;
    if made { path } else { PathBuf::from("/dev/null") }
}

#[test]
fn output_to_a_device_or_dev_stdout_is_never_replaced() {
    let dir = scratch("device");
    let (a, expected) = input_and_expected(&dir);
    let null = null_device(&dir);
    succeeds(&slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(&a)), "-o", s(&null)]));
    assert!(
        std::fs::symlink_metadata(&null).unwrap().file_type().is_char_device(),
        "the device was replaced"
    );

    // /dev/stdout is a link to the open standard output: the bytes go there.
    let o = slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(&a)), "-o", "/dev/stdout"]);
    succeeds(&o);
    assert_eq!(o.stdout, expected);
    assert!(std::fs::symlink_metadata("/dev/stdout").unwrap().file_type().is_symlink());
}

#[test]
fn dash_streams_npy_through_a_pipeline() {
    let dir = scratch("pipeline");
    let (a, _) = input_and_expected(&dir);
    // slc eval 'a[::-1]' -i a=A -o - | slc eval 'a[1:]' -i a=- -o out.npy
    let mut first = Command::new(BIN)
        .args(["eval", "a[::-1]", "-i", &format!("a={}", s(&a)), "-o", "-"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let out = dir.join("out.npy");
    let second = Command::new(BIN)
        .args(["eval", "a[1:]", "-i", "a=-", "-o", s(&out)])
        .stdin(first.stdout.take().unwrap())
        .output()
        .unwrap();
    assert!(first.wait().unwrap().success());
    succeeds(&second);
    let mut session = slc::Session::with_executor(slc::Executor::Interpreter);
    session.bind("a", arange(&[3, 4]));
    let expected = session.eval("a[::-1][1:]").unwrap();
    assert_eq!(slc_runtime::read_npy(&out).unwrap(), expected);

    // Two inputs cannot both be standard input; a bare `-` needs a name.
    let o = slc(&["eval", "a", "-i", "a=-", "-i", "b=-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("only one input can be read from standard input"), "{}", stderr(&o));
    assert_eq!(slc(&["eval", "a", "-i", "-"]).status.code(), Some(2));
}

#[test]
fn dash_output_is_refused_on_a_terminal() {
    let dir = scratch("tty");
    let (a, _) = input_and_expected(&dir);
    let mut cmd = Command::new(BIN);
    cmd.args(["eval", "a", "-i", &format!("a={}", s(&a)), "-o", "-"]).env("NO_COLOR", "1");
    let mut p =
        rexpect::session::spawn_with_options(cmd, rexpect::session::Options::new().timeout_ms(Some(30_000)))
            .expect("slc in a pty");
    p.exp_string("standard output, which is a terminal").expect("the refusal");
    match p.process().wait().unwrap() {
        rexpect::process::WaitStatus::Exited(_, code) => assert_eq!(code, 2),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_closed_pipe_ends_printing_quietly() {
    let dir = scratch("pipe");
    let big = dir.join("big.npy");
    slc_runtime::write_npy(&big, &arange(&[1 << 20])).unwrap();
    // Text far larger than a pipe's buffer, to a reader that has already gone.
    for args in [
        vec!["eval", "a[::-1]", "-i", "a=BIG"],
        vec!["plan", "a[::-1]", "--shape", "a=f32[100,100]", "--clif", "--dump-after", "all"],
        vec!["eval", "a", "-i", "a=BIG", "-o", "-"],
    ] {
        let args: Vec<String> = args.iter().map(|a| a.replace("BIG", s(&big))).collect();
        let mut child =
            Command::new(BIN).args(&args).stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().unwrap();
        let mut first = [0u8; 10];
        child.stdout.as_mut().unwrap().read_exact(&mut first).unwrap();
        drop(child.stdout.take()); // `| head -c 10`
        let o = child.wait_with_output().unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert_eq!(stderr(&o), "", "{args:?}");
    }
}

/// The `.npy` header of f32 data of `shape` (a Python tuple's inside, e.g. `7, 9`).
fn npy_header(shape: &str) -> Vec<u8> {
    let mut h = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({shape}), }}");
    let total = (10 + h.len() + 1).div_ceil(64) * 64;
    h.push_str(&" ".repeat(total - 10 - h.len() - 1));
    h.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((h.len() as u16).to_le_bytes());
    bytes.extend(h.as_bytes());
    bytes
}

/// `slc ARGS` with `-i a=-`, its standard input a pipe that has received only the header of a
/// 4 GB array and stays open: any attempt to read the data would block. Returns the run if it
/// ends by itself within 5 s, or `None` with the pipe still open (then it is killed).
fn with_header_only_stdin(args: &[&str]) -> Option<Output> {
    use std::io::Write;
    let mut child = Command::new(BIN)
        .args(args)
        .args(["-i", "a=-"])
        .env("NO_COLOR", "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    // A program that fails before it opens its inputs may be gone already: a broken pipe.
    let _ = stdin.write_all(&npy_header("1000000000, 1"));
    for _ in 0..50 {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    None
}

#[test]
fn cheap_checks_answer_before_any_data_is_read() {
    let dir = scratch("cheap");
    let answered = |args: &[&str], code: i32, message: &str| {
        let o =
            with_header_only_stdin(args).unwrap_or_else(|| panic!("{args:?} waited for the input's data"));
        assert_eq!(o.status.code(), Some(code), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    };
    // A syntax error, a type error: reported from the header alone.
    answered(&["eval", "a[1:"], 2, "[E0002]");
    answered(&["eval", "a[0, 4]"], 2, "[E0102]");
    // An output in a missing directory: refused before computing.
    let missing = dir.join("missing/out.npy");
    answered(&["eval", "a[1:]", "-o", s(&missing)], 1, "does not exist");
    // Not vacuous: a valid program reads the data, so it is still waiting when given up on.
    assert!(with_header_only_stdin(&["eval", "a[:1]"]).is_none());
}

#[test]
fn conflicting_bindings_are_refused() {
    let dir = scratch("conflicts");
    let (a, _) = input_and_expected(&dir);
    let a_in = format!("a={}", s(&a));
    let (newaxis_in, gather_in) = (format!("newaxis={}", s(&a)), format!("gather={}", s(&a)));
    let cases: [(Vec<&str>, &str); 5] = [
        (vec!["eval", "a", "-i", &a_in, "-i", &a_in], "bound twice with -i"),
        (vec!["plan", "a", "-i", &a_in, "--shape", "a=i64[3,4]"], "with both -i and --shape"),
        (vec!["plan", "a", "--shape", "a=i64[3]", "--shape", "a=i64[4]"], "bound twice with --shape"),
        (vec!["eval", "newaxis", "-i", &newaxis_in], "is a keyword"),
        (vec!["eval", "gather", "-i", &gather_in], "is a function"),
    ];
    for (args, message) in cases {
        let o = slc(&args);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(message), "{args:?}: {}", stderr(&o));
    }
    // A script may not rebind an input given with -i.
    let script = dir.join("s.slc");
    std::fs::write(&script, "let b = a[0]\nlet a = b\na\n").unwrap();
    let o = slc(&["run", s(&script), "-i", &a_in]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("[E0508]") && stderr(&o).contains("s.slc:2:5"), "{}", stderr(&o));
}

#[test]
fn npz_members_are_inputs() {
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data");
    let read = |name: &str| slc_runtime::read_npy(&data.join(name)).unwrap();
    let dir = scratch("npz");
    for (spec, expected) in [
        ("arrays.npz:a", read("a.npy")),
        ("arrays.npz:pairs", read("pairs.npy")),
        ("single.npz", read("x.npy")),
    ] {
        let out = dir.join("out.npy");
        succeeds(&slc(&["eval", "w", "-i", &format!("w={}", s(&data.join(spec))), "-o", s(&out)]));
        assert_eq!(slc_runtime::read_npy(&out).unwrap(), expected, "{spec}");
    }
    for (spec, message) in [
        ("arrays.npz", "holds 2 arrays (a, pairs)"),
        ("arrays.npz:b", "has no array 'b' (its arrays: a, pairs)"),
    ] {
        let o = slc(&["eval", "w", "-i", &format!("w={}", s(&data.join(spec)))]);
        assert_eq!(o.status.code(), Some(1), "{spec}");
        assert!(stderr(&o).contains(message), "{spec}: {}", stderr(&o));
    }
}

#[test]
fn compile_takes_types_from_npy_headers() {
    let dir = scratch("compile");
    let input = dir.join("a.npy");
    std::fs::write(&input, [npy_header("7, 9"), vec![0; 7 * 9 * 4]].concat()).unwrap();
    let header = dir.join("k.h");
    let o = slc(&[
        "compile",
        "a[1:]",
        "-i",
        &format!("a={}", s(&input)),
        "--target",
        "cpu",
        "-o",
        s(&dir.join("k.o")),
        "--header",
        s(&header),
    ]);
    succeeds(&o);
    let text = std::fs::read_to_string(header).unwrap();
    assert!(text.contains("a: f32[7, 9]") && text.contains("f32[6, 9]"), "{text}");
}

#[test]
fn unknown_pass_names_list_the_passes_and_print_nothing() {
    let o = slc(&["plan", "a[::-1]", "--shape", "a=f32[4]", "--dump-after", "nope"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    for pass in slc::backend::loopnest::PASSES {
        assert!(stderr(&o).contains(pass.name), "{}", stderr(&o));
    }
}

#[test]
fn the_help_of_dump_after_names_every_pass() {
    for command in ["plan", "explain"] {
        let o = slc(&[command, "--help"]);
        succeeds(&o);
        let help = String::from_utf8_lossy(&o.stdout).replace('\n', " ");
        for pass in slc::backend::loopnest::PASSES {
            assert!(help.contains(pass.name), "`slc {command} --help` lacks {}:\n{help}", pass.name);
        }
    }
}

#[test]
fn time_says_where_the_time_went() {
    let dir = scratch("time");
    let (a, _) = input_and_expected(&dir);
    let o = slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(&a)), "--time"]);
    succeeds(&o);
    let lines: Vec<String> = stderr(&o).lines().map(String::from).collect();
    let phases: Vec<&str> = lines.iter().map(|l| l.split_whitespace().next().unwrap_or("")).collect();
    assert_eq!(phases, ["read", "compile", "run", "write"], "{lines:?}");
    // A file is mapped: its pages are read as the kernel touches them, not in the read phase.
    assert!(lines[0].contains("0 bytes read; 96 mapped"), "{}", lines[0]);
    assert!(lines[2].contains("192 bytes moved") && lines[2].contains("1 thread"), "{}", lines[2]);

    // Standard input is read whole.
    let piped = Command::new(BIN)
        .args(["eval", "a[::-1]", "-i", "a=-", "--time"])
        .stdin(std::fs::File::open(&a).unwrap())
        .output()
        .unwrap();
    succeeds(&piped);
    assert!(stderr(&piped).lines().next().unwrap().contains("96 bytes read,"), "{}", stderr(&piped));

    // A slice touching a few rows of a larger file reads only those rows' bytes: 5 rows of
    // 4 i64 (`a[::1000, :4]` of i64[4096, 64]), not the file's 2 MiB.
    let big = dir.join("big.npy");
    slc_runtime::write_npy(&big, &arange(&[4096, 64])).unwrap();
    let o = slc(&["eval", "a[::1000, :4]", "-i", &format!("a={}", s(&big)), "--time", "-o", "-"]);
    succeeds(&o);
    let read = stderr(&o).lines().next().unwrap().to_string();
    assert!(read.contains(" 160 bytes read,") && !read.contains("mapped"), "{read}");
}
