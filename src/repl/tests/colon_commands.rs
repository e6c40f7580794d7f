//! The REPL's `:` commands (`:load`, `:save`, `:plan`, `:clif`, `:time`, `:backend`, `:help`,
//! `:vars`, `:dml`, `:show`) and completion: the command layer's tests, apart from those of the
//! entries that evaluate programs.

use super::*;

#[test]
fn commands_load_and_save() {
    let dir = scratch("repl", "commands");
    let mut r = repl();
    ok(&mut r, "let a = arange(4, dtype=u16); let k = 3");
    let path = dir.join("a.npy");
    assert_eq!(
        ok(&mut r, &format!(":save a {}", path.display())),
        format!("saved u16[4] to '{}'\n", path.display())
    );
    assert_eq!(
        ok(&mut r, &format!(":load b={}", path.display())),
        format!("b: u16[4] (from '{}')\n", path.display())
    );
    assert_eq!(r.get("a"), r.get("b"));
    // Without a name the file's stem is the name.
    ok(&mut r, &format!(":load {}", path.display()));
    ok(&mut r, &format!(":save k {}", dir.join("k.npy").display()));
    assert_eq!(slc_runtime::read_npy(&dir.join("k.npy")).unwrap(), Tensor::scalar_i64(3));
    let err = fails(&mut r, &format!(":save nope {}", path.display()), FailureKind::Program);
    assert!(err.contains("`nope` is not bound") && err.contains("input:1:7"), "{err}");
    let err = fails(&mut r, ":load 9x=a.npy", FailureKind::Program);
    assert!(err.contains("not a valid name"), "{err}");
    let err = fails(&mut r, &format!(":load c={}", dir.join("none.npy").display()), FailureKind::Runtime);
    assert!(err.contains("cannot read") && err.contains("input:1:9"), "{err}");
    fails(&mut r, ":load", FailureKind::Program);
    fails(&mut r, ":save a", FailureKind::Program);
    assert!(r.get("c").is_none());
}

#[test]
fn plan_clif_and_time() {
    let mut r = repl();
    ok(&mut r, "let a = arange(24, shape=[2, 3, 4]); let k = 1");
    assert_eq!(
        ok(&mut r, ":plan a[k:, ::-1]"),
        "plan(a: f32[2, 3, 4]) -> f32[1, 3, 4]\n  out a{20; 0, -4, 1}\n"
    );
    // A program's own lets are inlined, as in `slc eval`; helper calls are inputs.
    let plan = ok(&mut r, ":plan let b = a[0]; b[::2, 0]");
    assert!(plan.starts_with("plan(a: f32[2, 3, 4]) -> f32[2]"), "{plan}");
    let plan = ok(&mut r, ":plan arange(6)[::-1]");
    assert!(plan.starts_with("plan(arange(6): f32[6]) -> f32[6]"), "{plan}");
    let verbose = ok(&mut r, ":plan -v a[:, 0]");
    for part in
        ["== checked\nview(a", "== plan\nplan(a", "== loop nest (initial)\nloopnest", "== after block-copy"]
    {
        assert!(verbose.contains(part), "{part}: {verbose}");
    }
    assert!(verbose.contains("no change"), "{verbose}");
    // Shape-generically: every dim of the bindings a symbol (the integer binding stays one).
    let generic = ok(&mut r, ":plan -g a[k:, ::-1]");
    assert!(generic.starts_with("plan(a: f32[_a0, _a1, _a2]) -> f32[max(0, _a0-1), _a1, _a2]"), "{generic}");
    let generic = ok(&mut r, ":plan -g -v a[:, 0]");
    assert!(
        generic.contains("== checked\nview(a: f32[_a0, _a1, _a2]") && generic.contains("== loop nest\n"),
        "{generic}"
    );
    // An index the bound shape would refuse is a requirement of the generic plan.
    let generic = ok(&mut r, ":plan -g a[::2][5]");
    let required = "require 6 <= (_a0+1)//2  # index 5 is out of bounds for axis 0 with size (_a0+1)//2";
    assert!(generic.contains(required), "{generic}");
    let clif = ok(&mut r, ":clif a[::-1]");
    assert!(clif.starts_with("== loop nest\n") && clif.contains("== clif\nfunction"), "{clif}");
    for backend in ["jit", "interp"] {
        assert_eq!(ok(&mut r, &format!(":backend {backend}")), format!("backend: {backend}\n"));
        let time = ok(&mut r, ":time a[::-1, 1:]");
        assert!(time.contains("kernel") && time.contains(backend) && time.contains("memcpy"), "{time}");
        assert!(time.contains("ratio") && time.contains("GB/s"), "{time}");
    }
    assert_eq!(ok(&mut r, ":backend"), "backend: interp\n");
    let err = fails(&mut r, ":backend gpu", FailureKind::Program);
    assert!(err.contains("`gpu` is not a back end") && err.contains("input:1:10"), "{err}");
    // Errors in a command's expression point into the line as typed.
    let err = fails(&mut r, ":plan a[5]", FailureKind::Program);
    assert!(err.contains("input:1:9") && err.contains(":plan a[5]"), "{err}");
    let err = fails(&mut r, ":time -v", FailureKind::Program);
    assert!(err.contains("input:1:8"), "{err}");
    for cmd in [":plan", ":plan -v", ":plan -g -v", ":clif", ":time", ":dml"] {
        let err = fails(&mut r, cmd, FailureKind::Program);
        assert!(err.contains("needs an expression"), "{cmd}: {err}");
    }
    let err = fails(&mut r, ":time a[[0, 2]]", FailureKind::Program);
    assert!(err.contains("index 2 is out of bounds"), "{err}");
    // Temporaries of `:plan` and `:time` are gone afterwards.
    assert_eq!(r.names(), vec!["a", "k"]);
}

#[test]
fn help_quit_and_unknown_commands() {
    let mut r = repl();
    let help = ok(&mut r, ":help");
    for name in commands::NAMES {
        assert!(help.contains(name), "{name} missing from :help");
    }
    for name in helpers::HELPERS {
        assert!(help.contains(name), "{name} missing from :help");
    }
    // Every operator form, from the operator table: its signature and its example.
    for op in crate::sema::OPERATORS {
        assert!(help.contains(&op.signature()), "{} missing from :help", op.name);
        assert!(help.contains(op.example), "{}'s example missing from :help", op.name);
    }
    assert!(r.feed(":quit").quit && r.feed("  :q").quit);
    assert!(!r.feed(":vars").quit);
    assert!(ok(&mut r, ":vars").contains("no bindings"));
    let err = fails(&mut r, ":tmie a", FailureKind::Program);
    assert!(err.contains("unknown command `:tmie`") && err.contains("did you mean `:time`"), "{err}");
    let err = fails(&mut r, ":", FailureKind::Program);
    assert!(err.contains("unknown command"), "{err}");
}

#[test]
fn vars_lists_names_dtypes_shapes_and_bytes() {
    let mut r = repl();
    ok(&mut r, "let image = zeros([4, 6, 3], dtype=u8); let k = -2; let idx = arange(5, dtype=i64)");
    let vars = ok(&mut r, ":vars");
    assert_eq!(
        vars,
        "name   dtype  shape      bytes\nidx    i64    [5]           40\nimage  u8     [4, 6, 3]     72\nk      int    = -2\n"
    );
}

#[test]
fn completion_knows_names_helpers_and_commands() {
    let mut r = repl();
    ok(&mut r, "let alpha = zeros(1); let albedo = 3");
    let words = |r: &Repl, line: &str| match r.complete(line, line.len()) {
        Completion::Words { candidates, .. } => candidates,
        Completion::Path => vec!["<path>".into()],
    };
    assert_eq!(words(&r, "al"), vec!["albedo", "alpha"]);
    assert_eq!(words(&r, "ar"), vec!["arange("]);
    assert_eq!(words(&r, "x = ga"), vec!["gather(", "gather_elements(", "gather_nd("]);
    // Every operator form completes, from the operator table.
    for op in crate::sema::OPERATORS {
        assert!(words(&r, op.name).contains(&format!("{}(", op.name)), "{} does not complete", op.name);
    }
    assert_eq!(words(&r, ":ti"), vec![":time"]);
    assert_eq!(words(&r, "zeros(2, dtype=bf"), vec!["bf16"]);
    assert_eq!(words(&r, "load(\"sr"), vec!["<path>"]);
}

#[test]
fn dml_shows_the_directml_graph() {
    let mut r = repl();
    ok(&mut r, "let a = arange(24, shape=[2, 3, 4]); let i = arange(2, dtype=i64)");
    let json = ok(&mut r, ":dml a[::-1, 1]");
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    assert_eq!(value["OutputSizeInBytes"], 32, "{json}");
    assert!(json.contains("DML_OPERATOR_SLICE1") && json.contains("\"InputWindowStrides\""), "{json}");
    assert!(ok(&mut r, ":dml a[:, i]").contains("DML_OPERATOR_GATHER"));
    // What DirectML cannot honour is reported, not crashed on.
    let err = fails(&mut r, ":dml gather(a, i, axis=1, mode=clamp)", FailureKind::Program);
    assert!(err.contains("E0405") && err.contains("mode=clamp"), "{err}");
    // ... pointing at the gather, with the modes that would lower.
    assert!(err.contains("on indices known only at run time") && err.contains("mode=error"), "{err}");
}

#[test]
fn show_draws_what_an_expression_selects_from_the_bindings() {
    let mut r = repl();
    ok(&mut r, "let a = arange(12, shape=[3, 4])");
    let picture = ok(&mut r, ":show a[::-1, 1:3]");
    assert!(picture.starts_with("a[::-1, 1:3]  on  a: f32[3, 4]\n"), "{picture}");
    // Output element 0 reads row 2, column 1: the last row comes first.
    assert!(picture.contains("\n2  · 0 1 ·\n"), "{picture}");
    assert!(picture.contains("2 → 0, step -1"), "{picture}");
    // Helper calls and index lists work as in `:plan`, and their temporaries are gone after.
    let picture = ok(&mut r, ":show arange(5)[[4, 0]]");
    assert!(picture.contains("chosen by the index list $0"), "{picture}");
    assert_eq!(r.names(), vec!["a"]);
    let err = fails(&mut r, ":show", FailureKind::Program);
    assert!(err.contains("`:show` needs an expression"), "{err}");
    let err = fails(&mut r, ":show [1, 2][::-1]", FailureKind::Program);
    assert!(err.contains("reads no input tensor"), "{err}");
}

#[cfg(feature = "zarr")]
#[test]
fn load_reads_a_zarr_store() {
    let dir = scratch("repl", "zarr");
    let store = dir.join("s.zarr");
    let t = Tensor::from_i64s(slc_runtime::DType::I32, &[2, 3], &[0, 1, 2, 3, 4, 5]).unwrap();
    crate::zarr::write_zarr(&store, &t).unwrap();
    let mut r = repl();
    let p = store.display();
    assert_eq!(ok(&mut r, &format!(":load z={p}")), format!("z: i32[2, 3] (from '{p}')\n"));
    assert_eq!(ok(&mut r, "z[::-1, 1]"), "[4 1]\ni32[2]\n");
    let err = fails(&mut r, &format!(":load y={}", dir.join("none.zarr").display()), FailureKind::Runtime);
    assert!(err.contains("none.zarr"), "{err}");
}

#[cfg(not(feature = "zarr"))]
#[test]
fn load_of_a_zarr_store_without_the_feature_says_how_to_build_it() {
    let dir = scratch("repl", "no-zarr");
    let store = dir.join("s.zarr");
    std::fs::create_dir(&store).unwrap();
    std::fs::write(store.join("zarr.json"), "{}").unwrap();
    let mut r = repl();
    let err = fails(&mut r, &format!(":load z={}", store.display()), FailureKind::Runtime);
    assert!(err.contains("s.zarr") && err.contains("--features zarr"), "{err}");
    assert!(r.names().is_empty());
}
