//! The REPL core, entry by entry: text in, output and diagnostics out.

#[path = "../../tests/support/scratch.rs"]
mod scratch_dir;
use super::*;
use crate::sema::InputTypes;
use crate::types::TensorType;
use scratch_dir::scratch;

mod colon_commands;

fn repl() -> Repl {
    let mut r = Repl::new();
    r.time_budget = Duration::from_millis(20);
    r
}

/// Runs an entry that must succeed; its standard output.
#[track_caller]
fn ok(r: &mut Repl, entry: &str) -> String {
    let reply = r.feed(entry);
    assert!(reply.failure.is_none(), "{entry:?} failed:\n{}", reply.err);
    assert!(reply.err.is_empty(), "{}", reply.err);
    reply.out
}

/// Runs an entry that must fail; its rendered diagnostic.
#[track_caller]
fn fails(r: &mut Repl, entry: &str, kind: FailureKind) -> String {
    let reply = r.feed(entry);
    assert_eq!(reply.failure, Some(kind), "{entry:?}: out {:?} err {}", reply.out, reply.err);
    reply.err
}

#[test]
fn statements_persist_across_entries() {
    let mut r = repl();
    assert_eq!(ok(&mut r, "let a = arange(24, shape=[2, 3, 4])"), "a: f32[2, 3, 4]\n");
    assert_eq!(ok(&mut r, "let b = a[::-1]"), "b: f32[2, 3, 4]\n");
    assert_eq!(ok(&mut r, "b[0, 0]"), "[12. 13. 14. 15.]\nf32[4]\n");
    // The binding is a value, computed once: rebinding `a` does not change `b`.
    ok(&mut r, "let a = zeros([1])");
    assert_eq!(ok(&mut r, "b[1, 2, 3]"), "11.0\nf32[]\n");
    assert_eq!(r.get("b").unwrap().shape(), &[2, 3, 4]);
}

#[test]
fn integer_lets_stay_static_integers() {
    let mut r = repl();
    ok(&mut r, "let a = arange(10, dtype=i64)");
    assert_eq!(ok(&mut r, "let k = 2 * 3 - 1"), "k = 5\n");
    assert_eq!(r.get_int("k"), Some(5));
    // Usable as a slice bound, which a run-time tensor could not be.
    assert_eq!(ok(&mut r, "a[:k]"), "[0 1 2 3 4]\ni64[5]\n");
    assert_eq!(ok(&mut r, "let n = -k; a[n]"), "n = -5\n5\ni64[]\n");
    assert_eq!(ok(&mut r, "k"), "5\n");
    assert_eq!(ok(&mut r, "a.shape[0] // 3"), "3\n");
    // Rebinding switches between kinds; `:vars` shows each name once.
    ok(&mut r, "let k = a[1:3]");
    assert_eq!(r.get_int("k"), None);
    ok(&mut r, "let a = 7");
    assert!(r.get("a").is_none());
    let vars = ok(&mut r, ":vars");
    assert_eq!(vars.matches("\na ").count(), 1, "{vars}");
    assert!(vars.contains("int    = 7"), "{vars}");
}

#[test]
fn one_entry_may_hold_several_statements() {
    let mut r = repl();
    r.echo_lets = false;
    assert_eq!(ok(&mut r, "let a = arange(6, dtype=i32); let b = a[::2]  # comment\nb"), "[0 2 4]\ni32[3]\n");
}

#[test]
fn errors_point_into_the_line_and_keep_the_bindings() {
    let mut r = repl();
    ok(&mut r, "let a = arange(6, shape=[2, 3], dtype=i64)");
    let err = fails(&mut r, "a[1, 7]", FailureKind::Program);
    assert!(err.contains("index 7 is out of bounds for axis 1 with size 3"), "{err}");
    assert!(err.contains("input:1:6"), "{err}");
    // The statements before the failing one have run; the failing one bound nothing.
    let err = fails(&mut r, "let c = a[0]; let d = a[::0]", FailureKind::Program);
    assert!(err.contains("slice step cannot be zero"), "{err}");
    assert!(r.get("c").is_some() && r.get("d").is_none());
    let err = fails(&mut r, "a[", FailureKind::Program);
    assert!(err.contains("input:1"), "{err}");
    let err = fails(&mut r, "let x = nope[0]", FailureKind::Program);
    assert!(err.contains("unknown name `nope`") && err.contains("bound names: a, c"), "{err}");
    assert_eq!(ok(&mut r, "a[1]"), "[3 4 5]\ni64[3]\n");
}

#[test]
fn unknown_names_in_an_empty_session_suggest_how_to_bind() {
    let mut r = repl();
    let err = fails(&mut r, "a[0]", FailureKind::Program);
    assert!(err.contains("load(") && !err.contains("-i NAME"), "{err}");
}

#[test]
fn index_tensor_values_out_of_range_are_runtime_errors_with_a_span() {
    for backend in [Executor::Jit, Executor::Interpreter] {
        let mut r = repl();
        r.options_mut().executor = backend;
        ok(&mut r, "let a = arange(2); let i = arange(3, dtype=i64)");
        let err = fails(&mut r, "a[::-1][i]", FailureKind::Runtime);
        assert!(err.contains("index 2 is out of bounds for axis 0 with size 2"), "{err}");
        assert!(err.contains("input:1:9"), "{err}");
        assert_eq!(ok(&mut r, "a[i[:2]]"), "[0. 1.]\nf32[2]\n");
    }
}

#[test]
fn helpers_make_data() {
    let mut r = repl();
    assert_eq!(ok(&mut r, "arange(4)"), "[0. 1. 2. 3.]\nf32[4]\n");
    assert_eq!(ok(&mut r, "arange(shape=[2, 2], dtype=u8)"), "[[0 1]\n [2 3]]\nu8[2, 2]\n");
    assert_eq!(ok(&mut r, "arange(3, dtype=f16)"), "[0. 1. 2.]\nf16[3]\n");
    assert_eq!(ok(&mut r, "arange(3, dtype=\"bfloat16\")"), "[0. 1. 2.]\nbf16[3]\n");
    assert_eq!(ok(&mut r, "arange(2, dtype=f64)"), "[0. 1.]\nf64[2]\n");
    assert_eq!(ok(&mut r, "zeros(2, dtype=i16)"), "[0 0]\ni16[2]\n");
    assert_eq!(ok(&mut r, "ones(shape=[1, 2], dtype=bool)"), "[[True True]]\nbool[1, 2]\n");
    assert_eq!(ok(&mut r, "zeros([])"), "0.0\nf32[]\n");
    ok(&mut r, "let a = ones([2, 3])");
    assert_eq!(ok(&mut r, "zeros(a.shape, dtype=i64)"), "[[0 0 0]\n [0 0 0]]\ni64[2, 3]\n");
    // Helpers inside expressions, operator forms included.
    assert_eq!(ok(&mut r, "arange(6, dtype=i64)[::-2]"), "[5 3 1]\ni64[3]\n");
    assert_eq!(ok(&mut r, "gather(arange(6, dtype=i64), [0, 5], axis=0)"), "[0 5]\ni64[2]\n");
    assert_eq!(ok(&mut r, "arange(4, dtype=i64)[arange(2, dtype=i64)]"), "[0 1]\ni64[2]\n");
    // Temporaries do not outlive their entry.
    assert_eq!(r.names(), vec!["a"]);
}

#[test]
fn large_results_are_summarized_like_numpy() {
    let mut r = repl();
    assert_eq!(ok(&mut r, "arange(2000, dtype=i64)"), "[   0    1    2 ... 1997 1998 1999]\ni64[2000]\n");
    let out = ok(&mut r, "arange(shape=[100, 100], dtype=i32)[::-1]");
    assert!(out.starts_with("[[9900 9901 9902 ... 9997 9998 9999]\n [9800 "), "{out}");
    assert!(out.contains("\n ...\n") && out.ends_with("   98   99]]\ni32[100, 100]\n"), "{out}");
}

#[test]
fn random_is_seeded_and_in_range() {
    let mut r = repl();
    r.echo_lets = false;
    ok(&mut r, "let x = random([1000], seed=7); let y = random(shape=[1000], seed=7)");
    assert_eq!(r.get("x"), r.get("y"));
    ok(&mut r, "let z = random([1000])");
    assert_ne!(r.get("x"), r.get("z"));
    let x = r.get("x").unwrap();
    let floats: Vec<f32> = x.bytes().chunks(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert!(floats.iter().all(|v| (0.0..1.0).contains(v)));
    ok(&mut r, "let i = random([500], dtype=i64, seed=1, high=4)");
    let i = r.get("i").unwrap();
    let values: Vec<i128> = (0..500).map(|k| i.int_at(k).unwrap()).collect();
    assert!(values.iter().all(|v| (0..4).contains(v)));
    assert!((0..4).all(|v| values.contains(&v)));
    ok(&mut r, "let b = random([64], dtype=bool, seed=3)");
    assert!(r.get("b").unwrap().bytes().iter().all(|&v| v <= 1));
}

#[test]
fn helper_misuse_is_reported_at_the_argument() {
    let mut r = repl();
    let p = FailureKind::Program;
    let err = fails(&mut r, "arange(3, dtyp=i64)", p);
    assert!(
        err.contains("`arange` has no parameter `dtyp`") && err.contains("did you mean `dtype`"),
        "{err}"
    );
    let err = fails(&mut r, "arange(6, shape=[4, 2])", p);
    assert!(err.contains("arange(6) cannot have shape [4, 2]") && err.contains("input:1:17"), "{err}");
    let err = fails(&mut r, "zeros()", p);
    assert!(err.contains("`zeros` needs the argument `shape`"), "{err}");
    let err = fails(&mut r, "ones([2], dtype=f33)", p);
    assert!(err.contains("`f33` is not a dtype") && err.contains("input:1:17"), "{err}");
    let err = fails(&mut r, "arange(300, dtype=i8)", p);
    assert!(err.contains("does not fit in i8"), "{err}");
    let err = fails(&mut r, "zeros([2, -1])", p);
    assert!(err.contains("dimension -1 is negative"), "{err}");
    let err = fails(&mut r, "arange(-1)", p);
    assert!(err.contains("must not be negative"), "{err}");
    let err = fails(&mut r, "random([2], high=0)", p);
    assert!(err.contains("high must be positive"), "{err}");
    let err = fails(&mut r, "random([2], seed=zeros(1))", p);
    assert!(err.contains("seed must be an integer"), "{err}");
    let err = fails(&mut r, "arange()", p);
    assert!(err.contains("needs the argument `n`"), "{err}");
    let err = fails(&mut r, "load(42)", p);
    assert!(err.contains("a path must be a string"), "{err}");
    let err = fails(&mut r, "zeros(dtype=i8, [2])", p);
    assert!(err.contains("positional argument cannot follow"), "{err}");
    let err = fails(&mut r, "zeros([1], i8, 3)", p);
    assert!(err.contains("takes at most 2 arguments"), "{err}");
    let err = fails(&mut r, "arnge(3)", p);
    assert!(err.contains("did you mean `arange`"), "{err}");
    let err = fails(&mut r, "frobnicate(3)", p);
    assert!(err.contains("functions: load, save, arange"), "{err}");
    // Too large to allocate: a run-time failure, not an abort.
    let err = fails(&mut r, "zeros([4294967296, 4294967296, 4294967296], dtype=u8)", p);
    assert!(err.contains("too many elements"), "{err}");
    let err = fails(&mut r, "zeros([1073741824, 1048576], dtype=u8)", FailureKind::Runtime);
    assert!(err.contains("E0207") && err.contains("bytes of memory available"), "{err}");
    r.options_mut().max_output_bytes = Some(1000);
    let err = fails(&mut r, "ones([1001], dtype=u8)", FailureKind::Runtime);
    assert!(err.contains("the result needs 1001 bytes, more than the 1000 allowed"), "{err}");
    assert!(r.names().is_empty());
}

#[test]
fn save_and_load_round_trip() {
    let dir = scratch("repl", "save");
    let mut r = repl();
    r.echo_lets = false;
    let path = dir.join("a.npy");
    let p = path.display();
    ok(&mut r, "let a = arange(6, shape=[2, 3], dtype=i32)");
    assert_eq!(ok(&mut r, &format!("save(a[::-1], \"{p}\")")), format!("saved i32[2, 3] to '{p}'\n"));
    assert_eq!(ok(&mut r, &format!("load(\"{p}\")[0]")), "[3 4 5]\ni32[3]\n");
    ok(&mut r, &format!("let b = load('{p}')"));
    assert_eq!(r.get("b").unwrap().shape(), &[2, 3]);
    // Integers are saved as 0-d i64 tensors.
    ok(&mut r, &format!("save(2 + 3, \"{}\")", dir.join("k.npy").display()));
    assert_eq!(slc_runtime::read_npy(&dir.join("k.npy")).unwrap(), Tensor::scalar_i64(5));

    let err = fails(&mut r, "let c = save(a, \"x.npy\")", FailureKind::Program);
    assert!(err.contains("has no value"), "{err}");
    let err = fails(&mut r, "save(a, \"x.npy\")[0]", FailureKind::Program);
    assert!(err.contains("has no value"), "{err}");
    let missing = dir.join("missing.npy");
    let err = fails(&mut r, &format!("load(\"{}\")", missing.display()), FailureKind::Runtime);
    assert!(err.contains("cannot read"), "{err}");
    let full = slc_runtime::encode_npy(r.get("a").unwrap()).unwrap();
    std::fs::write(dir.join("trunc.npy"), &full[..full.len() - 4]).unwrap();
    let err = fails(&mut r, &format!("load(\"{}\")", dir.join("trunc.npy").display()), FailureKind::Runtime);
    assert!(err.contains("truncated"), "{err}");
    let err = fails(
        &mut r,
        &format!("save(a, \"{}\")", dir.join("no/such/dir/x.npy").display()),
        FailureKind::Runtime,
    );
    assert!(err.contains("cannot write"), "{err}");
    assert!(!dir.join("no").exists());
}

#[test]
fn odd_input_never_panics_and_keeps_bindings() {
    let mut r = repl();
    ok(&mut r, "let a = arange(6, dtype=i64)");
    let inputs = [
        "",
        "   ",
        "# only a comment",
        ";;",
        "let",
        "let = 3",
        "let a",
        "a[",
        "a]]",
        "a[::]",
        "a[...,...]",
        "a[None, None, 0, 0]",
        "\"unterminated",
        "'",
        "é",
        "a[é]",
        "1.5",
        "a[1.5]",
        "-",
        "a[-9223372036854775808]",
        "a[9223372036854775807:]",
        "9223372036854775807 + 1",
        "18446744073709551616",
        "a.nope",
        "a.shape[9]",
        "\"text\"",
        "let s = \"text\"",
        "load",
        "load()",
        "save",
        "save()",
        "save(a)",
        "gather()",
        "a[[[]]]",
        "zeros(a)",
        "zeros([[1]])",
        "arange(a.shape)",
        "random([2], dtype=bf16, seed=-1)",
        ":",
        ":: x",
        ":plan ;",
        ":plan let x = 1",
        ":load =",
        ":load a=",
        ":save a ",
        ":backend  jit  ",
        "\u{0}",
        "a[\u{0}]",
        "{",
        "}",
        "a $ b",
        "a -> b",
        "let k = 2 ** 3",
    ];
    for input in inputs {
        let _ = r.feed(input);
        assert_eq!(r.get("a").unwrap().shape(), &[6], "after {input:?}");
    }
    assert_eq!(ok(&mut r, "a[-1]"), "5\ni64[]\n");
}

#[test]
fn diagnostics_render_against_a_script_line() {
    let mut r = repl();
    let text = "\n\n\nlet b = nope";
    let reply = r.feed_at(text, 3, "x.slc");
    assert!(reply.err.contains("x.slc:4:9"), "{}", reply.err);
    // A start past the end or inside a character is clamped, not a panic.
    let _ = r.feed_at("é", 1, "x");
    let _ = r.feed_at("a", 9, "x");
}

#[test]
fn masking_keeps_offsets() {
    assert_eq!(masked("ab\ncd:e", 5), "  \n  :e");
    assert_eq!(masked("é:x", 2), "  :x");
    assert_eq!(masked("abc", 0), "abc");
}

#[test]
fn colour_only_when_asked() {
    let mut r = repl();
    assert!(!fails(&mut r, "x", FailureKind::Program).contains('\x1b'));
    r.color = true;
    assert!(fails(&mut r, "x", FailureKind::Program).contains('\x1b'));
}

#[test]
fn an_assignment_rebinds_the_target_to_the_stored_array() {
    let mut r = repl();
    ok(&mut r, "let a = arange(6, dtype=i64)");
    // Buffered `+=`: the duplicate 0 adds once. Nothing is printed, as in Python.
    assert_eq!(ok(&mut r, "a[[0, 0, 2]] += 10"), "");
    assert_eq!(ok(&mut r, "a"), "[10  1 12  3  4  5]\ni64[6]\n");
    assert_eq!(ok(&mut r, "a[1:3] = [7, 8]; a[::-2]"), "[5 3 7]\ni64[3]\n");
    // A failed store leaves the binding as it was.
    assert!(fails(&mut r, "a[9] = 1", FailureKind::Program).contains("E0102"));
    assert!(fails(&mut r, "a[0] = zeros([2], dtype=i64)", FailureKind::Program).contains("E0133"));
    assert_eq!(ok(&mut r, "a"), "[10  7  8  3  4  5]\ni64[6]\n");
    // A binding made from `a` is a value: storing into `b` leaves `a` alone.
    ok(&mut r, "let b = a[::2]");
    ok(&mut r, "b[0] = -1");
    assert_eq!(ok(&mut r, "b"), "[-1  8  4]\ni64[3]\n");
    assert_eq!(r.get("a").unwrap().int_at(0), Some(10));
}

/// A mask larger than `sema::MASK_FOLD_MAX` is derived per run (`m_nonzero = nonzero(m)` in
/// the plan), not folded: loads, chains and stores through it equal the interpreter's on the
/// folded plan of `slc eval`, on the JIT and the interpreter; a mask at the limit still folds.
#[test]
fn large_masks_are_derived_per_run_not_folded() {
    let bits = |n: usize| -> Vec<u8> { (0..n).map(|i| u8::from((i * 7919) % 13 < 6)).collect() };
    let (rows, cols) = (90usize, 80usize);
    let a =
        Tensor::from_i64s(DType::I64, &[rows, cols], &(0..(rows * cols) as i64).collect::<Vec<_>>()).unwrap();
    let m = Tensor::from_bytes(DType::Bool, &[rows, cols], &bits(rows * cols)).unwrap();
    let tensors: crate::sema::InputValues = [("a".to_string(), a), ("m".to_string(), m)].into();
    let types: InputTypes =
        tensors.iter().map(|(n, t)| (n.clone(), TensorType::of(t.dtype(), t.shape()))).collect();
    for backend in ["jit", "interp"] {
        for src in ["a[m]", "a[m][::-3]", "a[m] = 7", "a[m] += 1", "a[m] = a[m][::-1]"] {
            let mut r = repl();
            ok(&mut r, &format!(":backend {backend}"));
            tensors.iter().for_each(|(n, t)| r.bind(n, t.clone()));
            let planned = ok(&mut r, &format!(":plan {src}"));
            // One value stored through the mask needs no positions: the mask is read in place.
            match src.ends_with("= 7") || src.ends_with("+= 1") {
                true => assert!(planned.contains("when m{") && !planned.contains("nonzero"), "{planned}"),
                false => assert!(planned.contains("m_nonzero: i64[3324, 2] = nonzero(m)"), "{planned}"),
            }
            let got = match src.contains('=') {
                true => ok(&mut r, &format!("{src}; a")),
                false => ok(&mut r, src),
            };
            let want = crate::compile_with_values(src, &types, &tensors).unwrap().run(&tensors).unwrap();
            assert_eq!(
                got,
                format!("{}\n{}\n", format_tensor(&want, &r.print), type_of(&want)),
                "{backend} {src}"
            );
        }
    }
    // Past the count: the index error, at its span, as for a folded mask.
    let mut r = repl();
    tensors.iter().for_each(|(n, t)| r.bind(n, t.clone()));
    assert!(fails(&mut r, "a[m][3324]", FailureKind::Program).contains("E0102"));
    // `:show` draws the cells the mask selects, its positions derived as a run derives them.
    let shown = ok(&mut r, ":show a[m][:4]");
    assert!(!shown.contains("values not given") && shown.contains("It reads 4 of"), "{shown}");
    // A binding with the derived input's name: the mask is folded, not refused.
    r.bind("m_nonzero", Tensor::zeros(DType::I64, &[1]).unwrap());
    assert!(!ok(&mut r, ":plan a[m][:2]").contains("= nonzero"));
    assert_eq!(ok(&mut r, "a[m][:2]"), ok(&mut r, "a[m[:, :]][:2]"));
    let small = Tensor::from_bytes(DType::Bool, &[64, 64], &bits(4096)).unwrap();
    r.bind("s", small);
    ok(&mut r, "let b = zeros([64, 64])");
    assert!(!ok(&mut r, ":plan b[s]").contains("nonzero"));
}
