//! Inputs larger than memory, through the command line: `.npy` inputs are mapped, so a slice
//! reads only the pages it touches. The files are sparse (their data a hole, costing no disk),
//! and what a run read is seen afterwards in the page cache (`mincore` on the file): a hole's
//! page enters the cache only when read.
#![cfg(target_os = "linux")]

use std::fs::File;
use std::io::Write;
use std::os::fd::AsRawFd;
use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

#[path = "support/command.rs"]
mod command;

use command::stderr;

const BIN: &str = env!("CARGO_BIN_EXE_slc");
/// Where np.save puts the data of a 2-d f32 array.
const DATA: u64 = 128;
const COLS: usize = 1024;
const ROW: u64 = COLS as u64 * 4;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// A sparse `f32[rows, 1024]` `.npy` whose rows listed in `filled` hold `row * 1024 + col`;
/// `None` where the file system cannot hold it.
fn sparse_npy(path: &Path, rows: u64, filled: &[u64]) -> Option<()> {
    let header = format!("{{'descr': '<f4', 'fortran_order': False, 'shape': ({rows}, {COLS}), }}");
    let mut h = header.clone();
    h.push_str(&" ".repeat(DATA as usize - 10 - header.len() - 1));
    h.push('\n');
    let mut f = File::create(path).unwrap();
    f.write_all(b"\x93NUMPY\x01\x00").unwrap();
    f.write_all(&(h.len() as u16).to_le_bytes()).unwrap();
    f.write_all(h.as_bytes()).unwrap();
    if let Err(e) = f.set_len(DATA + rows * ROW) {
        eprintln!("skipped: no sparse file of {rows} rows here ({e})");
        return None;
    }
    for &r in filled {
        f.write_all_at(&row_bytes(r, COLS), DATA + r * ROW).unwrap();
    }
    f.sync_all().unwrap();
    Some(())
}

fn row_bytes(r: u64, cols: usize) -> Vec<u8> {
    (0..cols).flat_map(|c| ((r as usize * COLS + c) as f32).to_le_bytes()).collect()
}

/// Which pages of the file are in the page cache, passed to `each` a window at a time (so that
/// a 64 GiB file's flags do not swell this process: see `serial`).
fn resident_pages(path: &Path, mut each: impl FnMut(usize, bool)) {
    const WINDOW: usize = 1 << 30;
    let f = File::open(path).unwrap();
    let len = f.metadata().unwrap().len() as usize;
    let mut flags = vec![0u8; WINDOW / 4096];
    for start in (0..len).step_by(WINDOW) {
        let n = WINDOW.min(len - start);
        // SAFETY: a fresh read-only mapping of part of the file, unmapped below; only its
        // residency is asked, no byte of it is read.
        unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                n,
                libc::PROT_READ,
                libc::MAP_SHARED,
                f.as_raw_fd(),
                start as i64,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(libc::mincore(p, n, flags.as_mut_ptr().cast()), 0);
            libc::munmap(p, n);
        }
        for (i, f) in flags[..n.div_ceil(4096)].iter().enumerate() {
            each(start / 4096 + i, f & 1 == 1);
        }
    }
}

fn resident_set(path: &Path) -> Vec<bool> {
    let mut pages = vec![];
    resident_pages(path, |_, r| pages.push(r));
    pages
}

/// Runs slc, returning its time and peak resident memory in bytes (`wait4`: this child's own).
#[allow(clippy::zombie_processes)] // reaped by wait4, which also gives its resource usage
fn run(args: &[&str]) -> (Duration, u64) {
    let started = Instant::now();
    let child = Command::new(BIN).args(args).env("NO_COLOR", "1").spawn().expect("slc runs");
    let mut status = 0;
    // SAFETY: a zeroed rusage is a valid value; wait4 fills it for our own child.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "slc {args:?} failed: {status}");
    (started.elapsed(), usage.ru_maxrss as u64 * 1024)
}

/// The `f32` values of a `.npy` file written by slc, and its shape.
fn read_f32(path: &Path) -> (Vec<usize>, Vec<f32>) {
    let t = slc_runtime::read_npy(path).unwrap();
    let values = t.bytes().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    (t.shape().to_vec(), values)
}

fn scratch(name: &str) -> command::Scratch {
    command::scratch("npy_mapped", name)
}

/// The tests of this file run one at a time, and keep this process small: a child's peak
/// memory as `wait4` reports it includes this process's peak (exec records the memory it
/// leaves, and the child starts as, or sharing, this process's memory); and each test holds
/// gigabytes of (sparse) file.
fn serial() -> std::sync::MutexGuard<'static, ()> {
    static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

#[test]
fn a_64_gib_input_answers_a_tail_slice_in_under_a_second() {
    let _serial = serial();
    let dir = scratch("tail");
    let (big, out) = (dir.join("big.npy"), dir.join("out.npy"));
    let rows = 16 << 20; // f32[16777216, 1024]: 64 GiB
    let filled = [rows - 3, rows - 1];
    if sparse_npy(&big, rows, &filled).is_none() {
        return;
    }
    let (took, _) = run(&["eval", "a[-3:, :8]", "-i", &format!("a={}", s(&big)), "-o", s(&out)]);
    assert!(took < Duration::from_secs(1), "took {took:?}");
    let (shape, values) = read_f32(&out);
    assert_eq!(shape, [3, 8]);
    let expected: Vec<f32> = [rows - 3, rows - 2, rows - 1]
        .iter()
        .flat_map(|&r| {
            (0..8).map(move |c| if filled.contains(&r) { (r as usize * COLS + c) as f32 } else { 0.0 })
        })
        .collect();
    assert_eq!(values, expected, "holes read as zeros, the rows written as written");
    let mut read = 0;
    resident_pages(&big, |_, r| read += r as usize);
    assert!(read < 64, "{read} pages of the 64 GiB file were read");
}

#[test]
fn a_strided_slice_of_a_4_gib_input_stays_under_64_mb() {
    let _serial = serial();
    let dir = scratch("strided");
    let (big, out) = (dir.join("big.npy"), dir.join("out.npy"));
    let rows = 1 << 20; // f32[1048576, 1024]: 4 GiB
    let filled = [0, 1000, 1048000];
    if sparse_npy(&big, rows, &filled).is_none() {
        return;
    }
    let args = ["eval", "a[::1000, :4]", "-i", &format!("a={}", s(&big)), "-o", s(&out)];
    let (_, peak) = run(&args);
    assert!(peak < 64 << 20, "peak resident memory {} MB, the file not cached", peak >> 20);
    // Again with the whole file in the page cache (where a mapping would map the cache's large
    // folios around each row read).
    let mut f = File::open(&big).unwrap();
    std::io::copy(&mut f, &mut std::io::sink()).unwrap();
    let (_, peak) = run(&args);
    assert!(peak < 64 << 20, "peak resident memory {} MB, the file cached", peak >> 20);
    let (shape, values) = read_f32(&out);
    assert_eq!(shape, [1049, 4]);
    for (i, row) in values.chunks(4).enumerate() {
        let r = i as u64 * 1000;
        let expected: Vec<f32> =
            (0..4).map(|c| if filled.contains(&r) { (r as usize * COLS + c) as f32 } else { 0.0 }).collect();
        assert_eq!(row, expected, "row {r}");
    }
}

#[test]
fn a_gather_of_random_rows_reads_only_their_pages() {
    let _serial = serial();
    let dir = scratch("gather");
    let (big, idx, out) = (dir.join("big.npy"), dir.join("idx.npy"), dir.join("out.npy"));
    let rows = 1u64 << 20;
    // 10,000 rows from a linear congruential generator, two of them written.
    let mut x = 12345u64;
    let mut picked: Vec<u64> = (0..10_000)
        .map(|_| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % rows
        })
        .collect();
    picked[10] = 5;
    picked[20] = 777_777;
    if sparse_npy(&big, rows, &[5, 777_777]).is_none() {
        return;
    }
    let values: Vec<i64> = picked.iter().map(|&r| r as i64).collect();
    let index = slc::Tensor::from_i64s(slc::DType::I64, &[values.len()], &values).unwrap();
    slc_runtime::write_npy(&idx, &index).unwrap();
    let before = resident_set(&big);
    // The first 8 of each row: the output stays small (see `serial`).
    run(&[
        "eval",
        "a[i, :8]",
        "-i",
        &format!("a={}", s(&big)),
        "-i",
        &format!("i={}", s(&idx)),
        "-o",
        s(&out),
    ]);
    let (shape, got) = read_f32(&out);
    assert_eq!(shape, [10_000, 8]);
    for (i, &r) in picked.iter().enumerate() {
        let row = &got[i * 8..(i + 1) * 8];
        if r == 5 || r == 777_777 {
            assert_eq!(row[7], (r as usize * COLS + 7) as f32, "row {r}");
        } else {
            assert!(row.iter().all(|&v| v == 0.0), "row {r}");
        }
    }
    // Row r spans bytes 128 + 4096 r .. 128 + 4096 (r + 1): pages r and r + 1.
    let mut allowed = vec![false; before.len()];
    for &r in &picked {
        allowed[r as usize] = true;
        allowed[r as usize + 1] = true;
    }
    let after = resident_set(&big);
    let stray: Vec<usize> = (0..after.len()).filter(|&p| after[p] && !before[p] && !allowed[p]).collect();
    assert!(
        stray.is_empty(),
        "{} pages read outside the gathered rows, e.g. {:?}",
        stray.len(),
        &stray[..5.min(stray.len())]
    );
}

#[test]
fn a_truncated_input_is_an_error_naming_it() {
    let _serial = serial();
    let dir = scratch("truncated");
    let big = dir.join("short.npy");
    if sparse_npy(&big, 1000, &[]).is_none() {
        return;
    }
    File::options().write(true).open(&big).unwrap().set_len(DATA + 999 * ROW).unwrap();
    let o = command::slc(&["eval", "a[::-1]", "-i", &format!("a={}", s(&big))]);
    assert_eq!(o.status.code(), Some(1));
    let e = stderr(&o);
    assert!(e.contains("short.npy") && e.contains("is truncated"), "{e}");
}

#[test]
fn an_input_truncated_while_mapped_is_named_not_a_bus_error() {
    let _serial = serial();
    use std::process::Stdio;
    let dir = scratch("shrinks");
    let big = dir.join("shrinks.npy");
    let rows = 4096;
    if sparse_npy(&big, rows, &[]).is_none() {
        return;
    }
    // `b` comes from a pipe and is read after `a` is mapped: while slc waits for b's data, `a`
    // is cut short; the kernel then reads pages that no longer exist.
    let b = slc::Tensor::zeros(slc::DType::F32, &[100_000]).unwrap();
    let b = slc_runtime::encode_npy(&b).unwrap();
    let mut child = Command::new(BIN)
        .args([
            "eval",
            "a[::-1, 0]",
            "-i",
            &format!("a={}", s(&big)),
            "-i",
            "b=-",
            "-o",
            s(&dir.join("out.npy")),
        ])
        .stdin(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&b[..128]).unwrap();
    // Wait for the mapping to appear in slc's address space.
    let maps = format!("/proc/{}/maps", child.id());
    let started = Instant::now();
    while !std::fs::read_to_string(&maps).unwrap_or_default().contains("shrinks.npy") {
        assert!(started.elapsed() < Duration::from_secs(20), "slc never mapped its input");
        std::thread::sleep(Duration::from_millis(5));
    }
    File::options().write(true).open(&big).unwrap().set_len(DATA + 10 * ROW).unwrap();
    stdin.write_all(&b[128..]).unwrap();
    drop(stdin);
    let o = child.wait_with_output().unwrap();
    let e = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{e}");
    assert!(e.contains("shrinks.npy") && e.contains("changed while being read"), "{e}");
    assert!(!dir.join("out.npy").exists(), "no output");
}

#[test]
fn sparse_slices_read_in_parts_equal_the_interpreter_on_the_whole_file() {
    let _serial = serial();
    let dir = scratch("parts");
    let (path, out) = (dir.join("a.npy"), dir.join("out.npy"));
    // f32[4096, 1024], every element distinct: 16 MiB, each row one page.
    let rows = 4096u64;
    let all: Vec<u64> = (0..rows).collect();
    if sparse_npy(&path, rows, &all).is_none() {
        return;
    }
    let whole = slc_runtime::open_npy(&path).unwrap().read_into_memory().unwrap();
    let mut oracle = slc::Session::with_executor(slc::Executor::Interpreter);
    oracle.bind("a", whole);
    let mut x = 99u64;
    let mut next = |m: u64| {
        x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (x >> 33) % m
    };
    for _ in 0..24 {
        let step = [40i64, -40, 97, -97, 500, 1000, -2000][next(7) as usize];
        let start = next(rows) as i64 - if next(2) == 0 { rows as i64 } else { 0 };
        let cols = match next(4) {
            0 => format!("{}", next(1024)),
            1 => format!("{}:{}", next(512), 512 + next(512)),
            2 => format!("::-{}", 1 + next(300)),
            _ => format!("{}::{}", next(64), 1 + next(5)),
        };
        let program = format!("a[{start}::{step}, {cols}]");
        let o = command::slc(&["eval", &program, "-i", &format!("a={}", s(&path)), "-o", s(&out)]);
        assert!(o.status.success(), "{program}: {}", stderr(&o));
        let expected = oracle.eval(&program).unwrap();
        assert_eq!(slc_runtime::read_npy(&out).unwrap(), expected, "{program}");
    }
}
