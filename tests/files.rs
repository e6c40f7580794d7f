//! Hostile files through the `slc` binary: every bad input or output path is an error naming the
//! file with exit code 1, outputs appear whole or not at all — also when the process is killed
//! while writing — and no temporary file is ever left behind.

use slc::{DType, Tensor};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

#[path = "support/command.rs"]
mod command;

use command::{slc, stderr};

fn scratch(name: &str) -> command::Scratch {
    command::scratch("files", name)
}

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A `.npy` file with this header dict and data, laid out as NumPy does.
fn npy_file(header: &str, data: &[u8]) -> Vec<u8> {
    let mut h = header.to_string();
    let total = (10 + h.len() + 1).div_ceil(64) * 64;
    h.push_str(&" ".repeat(total - 10 - h.len() - 1));
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((h.len() as u16).to_le_bytes());
    out.extend(h.as_bytes());
    out.extend(data);
    out
}

fn arange(n: usize) -> Tensor {
    let values: Vec<i64> = (0..n as i64).collect();
    Tensor::from_i64s(DType::I64, &[n], &values).unwrap()
}

#[test]
fn bad_inputs_are_errors_naming_the_file() {
    let dir = scratch("inputs");
    let good = dir.join("good.npy");
    slc_runtime::write_npy(&good, &arange(6)).unwrap();
    let bytes = std::fs::read(&good).unwrap();
    let mut files: Vec<(&str, Vec<u8>)> = vec![
        ("empty.npy", vec![]),
        ("text.npy", b"hello, world".to_vec()),
        ("preamble.npy", bytes[..8].to_vec()),
        ("in_header.npy", bytes[..40].to_vec()),
        ("truncated.npy", bytes[..bytes.len() - 1].to_vec()),
        ("trailing.npy", [&bytes[..], b"x"].concat()),
        (
            "absurd.npy",
            npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000,), }", &[0; 8]),
        ),
        (
            "overflow.npy",
            npy_file(
                "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296), }",
                &[],
            ),
        ),
        ("smaller.npy", npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (2,), }", &[0; 48])),
        (
            "huge_dim.npy",
            npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (99999999999999999999999,), }", &[]),
        ),
        ("negative.npy", npy_file("{'descr': '<i8', 'fortran_order': False, 'shape': (-1,), }", &[])),
        ("object.npy", npy_file("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", &[0; 8])),
        ("fortran.npy", npy_file("{'descr': '<i8', 'fortran_order': True, 'shape': (2, 3), }", &[0; 40])),
        ("bool.npy", npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (1,), }", &[2])),
    ];
    let dims = vec!["1"; slc::limits::MAX_RANK + 1].join(", ");
    files.push((
        "rank.npy",
        npy_file(&format!("{{'descr': '<i8', 'fortran_order': False, 'shape': ({dims}), }}"), &[0; 8]),
    ));
    // A header whose length field promises 4 GiB (version 2), in a short file; and a real one
    // above the reader's header limit.
    let mut lying_length = b"\x93NUMPY\x02\x00\xff\xff\xff\xff".to_vec();
    lying_length.extend(&bytes[10..]);
    files.push(("header_length.npy", lying_length));
    let mut long_header = b"\x93NUMPY\x02\x00".to_vec();
    let pad = slc_runtime::npy::MAX_HEADER_BYTES + 64;
    long_header.extend((pad as u32).to_le_bytes());
    long_header.extend(vec![b' '; pad]);
    files.push(("header_size.npy", long_header));
    for (name, content) in &files {
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        let o = slc(&["eval", "a", "-i", &format!("a={}", s(&path))]);
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(name), "{name}: {}", stderr(&o));
    }
    // Not a file at all.
    for path in [dir.join("missing.npy"), good.join("inside.npy"), dir.to_path_buf(), PathBuf::from("/dev/null")] {
        let o = slc(&["eval", "a", "-i", &format!("a={}", s(&path))]);
        assert_eq!(o.status.code(), Some(1), "{path:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(s(&path)), "{path:?}: {}", stderr(&o));
    }
}

#[test]
fn bad_output_paths_are_errors_naming_the_file_and_leave_nothing() {
    let dir = scratch("outputs");
    let a = dir.join("a.npy");
    slc_runtime::write_npy(&a, &arange(4)).unwrap();
    let taken = dir.join("taken");
    std::fs::create_dir(&taken).unwrap();
    let before = listing(&dir);
    for out in [dir.join("no/such/dir/out.npy"), taken.clone(), PathBuf::from("/proc/slc-out.npy")] {
        let o = slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(&a)), "-o", s(&out)]);
        assert_eq!(o.status.code(), Some(1), "{out:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(s(&out)), "{out:?}: {}", stderr(&o));
        assert_eq!(listing(&dir), before, "{out:?}: nothing created");
        assert!(listing(&taken).is_empty());
    }
    // The same for the compiler's outputs.
    let missing = dir.join("no/kernel.o");
    for args in [
        vec!["compile", "a[::-1]", "--shape", "a=f32[4]", "--target", "cpu", "-o", s(&missing)],
        vec!["compile", "a[::-1]", "--shape", "a=f32[4]", "--target", "dml", "-o", s(&taken)],
    ] {
        let o = slc(&args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert_eq!(listing(&dir), before, "{args:?}");
    }
    let header = dir.join("k.h");
    let o = slc(&[
        "compile",
        "a",
        "--shape",
        "a=f32[4]",
        "--target",
        "cpu",
        "-o",
        s(&dir.join("k.o")),
        "--header",
        s(&header),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(listing(&dir).iter().all(|n| !n.contains("tmp")), "{:?}", listing(&dir));
}

#[test]
fn an_output_that_is_an_input_is_refused_unless_it_is_another_name() {
    let dir = scratch("alias");
    let x = dir.join("x.npy");
    slc_runtime::write_npy(&x, &arange(4)).unwrap();
    let before = std::fs::read(&x).unwrap();
    let link = dir.join("link.npy");
    std::os::unix::fs::symlink(&x, &link).unwrap();
    let dotted = dir.join(".").join("x.npy");
    for (input, out) in [(&x, &x), (&x, &dotted), (&link, &x)] {
        let o = slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(input)), "-o", s(out)]);
        assert_eq!(o.status.code(), Some(2), "{input:?} -> {out:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("is also input `a`"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&x).unwrap(), before);
    }
    // A hard link is not recognised, and needs not be: inputs are read whole before the output
    // replaces the path, so the result is right and the other name keeps the input.
    let hard = dir.join("hard.npy");
    std::fs::hard_link(&x, &hard).unwrap();
    let o = slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(&hard)), "-o", s(&x)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let reversed: Vec<i128> = (0..4).map(|i| slc_runtime::read_npy(&x).unwrap().int_at(i).unwrap()).collect();
    assert_eq!(reversed, vec![3, 2, 1, 0]);
    assert_eq!(slc_runtime::read_npy(&hard).unwrap(), arange(4));
}

#[test]
fn a_run_killed_while_writing_leaves_the_old_file_or_the_new_one() {
    let dir = scratch("killed");
    let big = dir.join("big.npy");
    slc_runtime::write_npy(&big, &Tensor::zeros(DType::U8, &[96 << 20]).unwrap()).unwrap();
    let out = dir.join("out.npy");
    std::fs::write(&out, b"old").unwrap();
    let before = listing(&dir);
    for delay_ms in [0, 20, 50, 100, 150, 250, 400] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_slc"))
            .args(["eval", "a[::-1]", "-i", &format!("a={}", s(&big)), "-o", s(&out)])
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(delay_ms));
        let _ = child.kill();
        let _ = child.wait();
        assert_eq!(listing(&dir), before, "after {delay_ms} ms: no temporary file remains");
        let content = std::fs::read(&out).unwrap();
        if content != b"old" {
            let t = slc_runtime::read_npy(&out).expect("a replaced output is whole");
            assert_eq!(t.shape(), &[96 << 20]);
            std::fs::write(&out, b"old").unwrap();
        }
    }
}

#[test]
fn repl_saves_are_atomic_and_name_the_file() {
    let dir = scratch("repl");
    let target = dir.join("keep.npy");
    std::fs::write(&target, b"old").unwrap();
    let missing = dir.join("no/x.npy");
    let script = format!(
        "let a = arange(3)\nsave(a, \"{}\")\n:save a {}\n:save a {}\n",
        s(&missing),
        s(&missing),
        s(&dir)
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_slc"))
        .arg("repl")
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(script.as_bytes()).unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("E0503").count(), 3, "{}", stderr(&o));
    assert!(stderr(&o).contains("no/x.npy"), "{}", stderr(&o));
    assert_eq!(listing(&dir), vec!["keep.npy"]);
    assert_eq!(std::fs::read(&target).unwrap(), b"old");
}
