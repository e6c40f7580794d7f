//! Zarr arrays in the REPL (docs/zarr.md, "The REPL"): `:load a=data.zarr` reads the metadata
//! only, and each evaluation decodes the chunks its plan reads: a store whose other chunks are
//! deleted or garbage answers the same; random slices and gathers of the lazy array equal the
//! interpreter's on the array read whole; a bad chunk inside a selection is an error naming the
//! store and the chunk, and the session goes on; `:vars`, `:show` and `:time` say what is read.

#![cfg(feature = "zarr")]

#[path = "support/command.rs"]
mod command;
#[path = "support/zarr_stores.rs"]
mod zarr_stores;

use command::{scratch, slc, stderr, stdout};
use slc::repl::{FailureKind, Repl, Reply};
use std::path::{Path, PathBuf};
use std::time::Duration;
use zarr_stores::{chunk_files, data, npy_inputs, s, store_array, variant};

fn repl() -> Repl {
    let mut r = Repl::new();
    r.echo_lets = false;
    r.time_budget = Duration::from_millis(20);
    r
}

#[track_caller]
fn ok(r: &mut Repl, entry: &str) -> String {
    let reply = r.feed(entry);
    assert!(reply.failure.is_none() && reply.err.is_empty(), "{entry:?} failed:\n{}", reply.err);
    reply.out
}

#[track_caller]
fn fails(r: &mut Repl, entry: &str) -> String {
    let reply = r.feed(entry);
    assert_eq!(reply.failure, Some(FailureKind::Runtime), "{entry:?}: out {:?} err {}", reply.out, reply.err);
    reply.err
}

/// A store of the variant called `name` in `dir`, holding the test array.
fn store(dir: &Path, name: &str, tag: &str) -> PathBuf {
    let (name, meta_name, meta) = &variant(name);
    let store = dir.join(format!("{name}-{tag}.zarr"));
    store_array(&store, "/", meta_name, meta.clone(), &data());
    store
}

/// Of the chunk files of `store`, those whose keys are not in `kept`: half deleted (they would
/// read as the fill value), half overwritten with garbage (an error if read).
fn spoil_all_but(store: &Path, kept: &[&str]) {
    let kept: Vec<PathBuf> = kept.iter().map(|key| store.join(key)).collect();
    for (n, file) in chunk_files(store).into_iter().filter(|f| !kept.contains(f)).enumerate() {
        if n % 2 == 0 {
            std::fs::remove_file(&file).unwrap();
        } else {
            std::fs::write(&file, b"not a chunk").unwrap();
        }
    }
}

#[test]
fn a_session_reads_only_the_chunks_each_evaluation_touches() {
    let dir = scratch("zarr_repl", "untouched");
    let (npy, idx) = npy_inputs(&dir);
    // Rows 8, 11, 14 (chunk row 1) and columns 10..15 (chunk column 2); the gather's rows 30,
    // 36, 2, 9 lie in chunk rows 3, 4, 0, 1, its columns 0..5 in chunk column 0.
    let cases: [(&str, &[&str], &[&str]); 2] = [
        ("a[8:16:3, 10:15]", &["c/1/2"], &["1.2"]),
        ("a[i, :5]", &["c/0/0", "c/1/0", "c/3/0", "c/4/0"], &["0.0", "1.0", "3.0", "4.0"]),
    ];
    let mut eager = repl();
    ok(&mut eager, &format!(":load a={}", s(&npy)));
    ok(&mut eager, &format!(":load i={}", s(&idx)));
    ok(&mut eager, ":backend interp");
    for (k, v2) in [("v3-zstd", false), ("v3-zstd-crc32c", false), ("v2-blosc", true)] {
        for (expr, v3_keys, v2_keys) in cases {
            let keys = if v2 { v2_keys } else { v3_keys };
            let store = store(&dir, k, &expr.len().to_string());
            spoil_all_but(&store, keys);
            let mut r = repl();
            ok(&mut r, &format!(":load i={}", s(&idx)));
            let loaded = ok(&mut r, &format!(":load a={}", s(&store)));
            assert!(loaded.contains("a: f32[37, 23]") && loaded.contains("Zarr array"), "{loaded}");
            assert_eq!(ok(&mut r, expr), ok(&mut eager, expr), "{}: {expr}", s(&store));
            let count = format!("reads {} of 25 chunks", keys.len());
            let time = ok(&mut r, &format!(":time {expr}"));
            assert!(time.contains(&count), "{expr}: {time}");
            let show = ok(&mut r, &format!(":show {expr}"));
            assert!(
                show.contains(&format!("Zarr input `a` reads {} of its 25 chunks.", keys.len())),
                "{show}"
            );
            // Checking, planning and completion read no chunk at all.
            assert!(ok(&mut r, ":plan a[::-1]").starts_with("plan(a: f32[37, 23])"));
            let completed = match r.complete("x = a", 5) {
                slc::repl::Completion::Words { candidates, .. } => candidates,
                slc::repl::Completion::Path => vec![],
            };
            assert!(completed.contains(&"a".to_string()), "{completed:?}");
            // The array is still lazy, and `:vars` says so.
            let vars = ok(&mut r, ":vars");
            assert!(vars.contains(&format!("Zarr '{}', read lazily", s(&store))), "{vars}");
            assert!(vars.contains(&format!("{}", 37 * 23 * 4)), "{vars}");
        }
    }
}

/// A small deterministic generator (xorshift64*): the same selections on every run.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) % n
    }

    fn int(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }

    /// A slice of an axis of `n`: bounds anywhere from -n-3 to n+3 or left out, any step.
    fn slice(&mut self, n: i64) -> String {
        let bound =
            |r: &mut Rng| if r.below(3) == 0 { String::new() } else { r.int(-n - 3, n + 3).to_string() };
        let (start, stop) = (bound(self), bound(self));
        let steps = ["", "1", "2", "3", "7", "-1", "-2", "-5"];
        match steps[self.below(steps.len() as u64) as usize] {
            "" => format!("{start}:{stop}"),
            step => format!("{start}:{stop}:{step}"),
        }
    }

    /// An index list of an axis of `n` (negative indices among them).
    fn gather(&mut self, n: i64) -> String {
        let k = self.int(1, 5);
        let items: Vec<String> = (0..k).map(|_| self.int(-n, n - 1).to_string()).collect();
        format!("[{}]", items.join(", "))
    }

    fn selection(&mut self) -> String {
        let (r, c) = (37, 23);
        match self.below(8) {
            0 => format!("a[{}, {}]", self.slice(r), self.slice(c)),
            1 => format!("a[{}, {}]", self.int(-r, r - 1), self.slice(c)),
            2 => format!("a[{}, {}]", self.slice(r), self.int(-c, c - 1)),
            3 => format!("a[{}, {}]", self.gather(r), self.slice(c)),
            4 => format!("a[{}, {}]", self.slice(r), self.gather(c)),
            5 => format!("a[{}][::{}, {}]", self.slice(r), self.int(1, 3), self.slice(c)),
            6 => format!("a[{}, None, {}]", self.slice(r), self.slice(c)),
            _ => format!("a[{}][:, {}]", self.gather(r), self.gather(c)),
        }
    }
}

/// Two replies alike: the same output, the same failure, the same diagnostic.
fn same(lazy: &Reply, eager: &Reply) -> bool {
    lazy.out == eager.out && lazy.failure == eager.failure && lazy.err == eager.err
}

#[test]
fn random_selections_of_a_lazy_array_equal_the_interpreters_on_the_array_read_whole() {
    let dir = scratch("zarr_repl", "differential");
    let (npy, _) = npy_inputs(&dir);
    let mut eager = repl();
    ok(&mut eager, &format!(":load a={}", s(&npy)));
    ok(&mut eager, ":backend interp");
    let mut rng = Rng(0x5eed_2911);
    // v3 with zstd (a chunk's prefix inflated), with zstd and crc32c, v3 sharded, v2 blosc.
    for k in ["v3-zstd", "v3-zstd-crc32c", "v3-sharded", "v2-blosc"] {
        let store = store(&dir, k, "all");
        let mut lazy = repl();
        ok(&mut lazy, &format!(":load a={}", s(&store)));
        let mut answered = 0;
        for _ in 0..40 {
            let expr = rng.selection();
            let (l, e) = (lazy.feed(&expr), eager.feed(&expr));
            assert!(same(&l, &e), "{}: {expr}\nlazy: {l:?}\neager: {e:?}", s(&store));
            answered += usize::from(e.failure.is_none());
        }
        // Most selections answer (an empty one answers too); the others fail alike.
        assert!(answered >= 30, "{answered} of 40 answered");
        // Still lazy after all of them.
        assert!(ok(&mut lazy, ":vars").contains("read lazily"));
    }
}

/// Masks and index arrays bound beside a lazy array: a mask's plan is not rebased (its
/// `nonzero()` is derived per run), so the array's whole shape is read, still only the chunks
/// touched; a bool Zarr array is read when bound, as checking may read its values.
#[test]
fn masks_and_index_arrays_beside_a_lazy_array_give_the_interpreters_answers() {
    let dir = scratch("zarr_repl", "masks");
    let (npy, idx) = npy_inputs(&dir);
    let mask: Vec<u8> = (0..37).map(|r| u8::from(r % 3 == 1 || r > 33)).collect();
    let m = dir.join("m.npy");
    slc_runtime::write_npy(
        &m,
        &slc_runtime::Tensor::from_bytes(slc_runtime::DType::Bool, &[37], &mask).unwrap(),
    )
    .unwrap();
    let mz = dir.join("m.zarr");
    let o = slc(&["eval", "m", "-i", &format!("m={}", s(&m)), "-o", s(&mz)]);
    assert!(o.status.success(), "{}", stderr(&o));
    let store = store(&dir, "v3-zstd-crc32c", "masks");
    let (mut lazy, mut eager) = (repl(), repl());
    ok(&mut eager, ":backend interp");
    for (r, a) in [(&mut lazy, &store), (&mut eager, &npy)] {
        ok(r, &format!(":load a={}", s(a)));
        ok(r, &format!(":load i={}", s(&idx)));
        ok(r, &format!(":load m={}", s(&m)));
        let loaded = ok(r, &format!(":load mz={}", s(&mz)));
        assert_eq!(loaded, format!("mz: bool[37] (from '{}')\n", s(&mz)));
    }
    for expr in
        ["a[m, 2:9]", "a[mz, ::-3]", "a[m][::2, 4]", "a[i, ::-4]", "a[i][:, [1, -2]]", "a[-1, m[:23]]"]
    {
        assert_eq!(ok(&mut lazy, expr), ok(&mut eager, expr), "{expr}");
    }
    // A mask is read when bound, within the size a result may have.
    let mut small = repl();
    small.options_mut().max_output_bytes = Some(36);
    let err = fails(&mut small, &format!(":load mz={}", s(&mz)));
    assert!(err.contains("37 bytes") && err.contains("36"), "{err}");
    // Rows 1, 4, ..., 34 and 35, 36: every chunk row; columns 2..9: chunk columns 0 and 1.
    assert!(ok(&mut lazy, ":show a[m, 2:9]").contains("Zarr input `a` reads 10 of its 25 chunks."));
}

#[test]
fn a_store_into_a_lazy_array_reads_it_whole_and_rebinds_it() {
    let dir = scratch("zarr_repl", "store");
    let (npy, _) = npy_inputs(&dir);
    let store = store(&dir, "v3-raw", "store");
    let (mut lazy, mut eager) = (repl(), repl());
    ok(&mut lazy, &format!(":load a={}", s(&store)));
    ok(&mut eager, &format!(":load a={}", s(&npy)));
    for entry in ["a[1:3, ::2] = 0", "a[[4, -1]] += 1", "a[:5, :4]", "a[-2:, -3:]", "a[::-9, 1]"] {
        assert_eq!(ok(&mut lazy, entry), ok(&mut eager, entry), "{entry}");
    }
    // `a` is a tensor now, in memory.
    let vars = ok(&mut lazy, ":vars");
    assert!(!vars.contains("Zarr") && vars.contains("3404"), "{vars}");
    // `:save` of a lazy array reads it whole.
    let mut r = repl();
    ok(&mut r, &format!(":load a={}", s(&store)));
    let out = dir.join("saved.npy");
    ok(&mut r, &format!(":save a {}", s(&out)));
    assert_eq!(std::fs::read(&out).unwrap(), std::fs::read(&npy).unwrap());
}

#[test]
fn a_bad_chunk_inside_a_selection_is_an_error_naming_it_and_the_session_goes_on() {
    let dir = scratch("zarr_repl", "corrupt");
    for (k, key) in [("v3-zstd", "c/1/2"), ("v3-zstd-crc32c", "c/1/2"), ("v2-zlib", "1.2")] {
        let store = store(&dir, k, "bad");
        std::fs::write(store.join(key), b"\x28\xb5\x2f\xfd garbage").unwrap();
        let mut r = repl();
        ok(&mut r, &format!(":load a={}", s(&store)));
        ok(&mut r, "let b = a[:2, :2]");
        for entry in ["a[8:16, 10:15]", "let c = a[9, 12]", "a[9, 12] = 1", ":time a[8:16, 10:15]"] {
            let err = fails(&mut r, entry);
            assert!(err.contains(&format!("chunk '{key}'")) && err.contains(s(&store)), "{entry}: {err}");
        }
        // Nothing was rebound, and the chunks outside the bad one still read.
        assert_eq!(ok(&mut r, "a[0, :3]"), "[0. 1. 2.]\nf32[3]\n");
        assert_eq!(ok(&mut r, "b"), "[[  0.   1.]\n [100. 101.]]\nf32[2, 2]\n");
        assert!(ok(&mut r, ":vars").contains("read lazily"));
        assert!(r.get("c").is_none());
    }
}

/// A store of 256 TiB, no chunk stored: slices read their box; what needs the whole array is
/// refused with the usual limits' error, before anything is read.
#[test]
fn a_store_larger_than_memory_is_sliced_and_refused_whole() {
    let dir = scratch("zarr_repl", "huge");
    let store = dir.join("huge.zarr");
    std::fs::create_dir_all(&store).unwrap();
    let meta = serde_json::json!({
        "zarr_format": 3, "node_type": "array", "shape": [1u64 << 34, 4096], "data_type": "float32",
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [256, 256]}},
        "chunk_key_encoding": {"name": "default", "configuration": {"separator": "/"}},
        "fill_value": 1.5, "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
    });
    std::fs::write(store.join("zarr.json"), meta.to_string()).unwrap();
    let mut r = repl();
    ok(&mut r, &format!(":load a={}", s(&store)));
    assert_eq!(ok(&mut r, "a[-2:, 3:5]"), "[[1.5 1.5]\n [1.5 1.5]]\nf32[2, 2]\n");
    assert!(ok(&mut r, ":show a[-1, ::1000]").contains("reads 5 of its 1073741824 chunks"));
    for entry in ["a", "a[0, 0] = 2", ":save a whole.npy"] {
        let err = r.feed(entry).err;
        assert!(err.contains("E0207") && err.contains("281474976710656 bytes"), "{entry}: {err}");
    }
    assert_eq!(ok(&mut r, "a[5, 7]"), "1.5\nf32[]\n");
}

#[test]
fn slc_repl_binds_an_array_inside_a_group_lazily() {
    let dir = scratch("zarr_repl", "cli");
    let (name, meta_name, meta) = &variant("v3-raw");
    let store = dir.join(format!("{name}.zarr"));
    store_array(&store, "/g/h/arr", meta_name, meta.clone(), &data());
    let inner = format!("a={}/g/h/arr", s(&store));
    let want = stdout(&slc(&["eval", "a[2:9, ::4]", "-i", &inner]));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_slc"))
        .args(["repl", "-i", &inner, "--no-history"])
        .env("NO_COLOR", "1")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    use std::io::Write;
    child.stdin.take().unwrap().write_all(b"a[2:9, ::4]\n:vars\n").unwrap();
    let o = child.wait_with_output().unwrap();
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.starts_with(&want), "{out}\nwant {want}");
    assert!(out.contains(&format!("Zarr '{}/g/h/arr', read lazily", s(&store))), "{out}");
}
