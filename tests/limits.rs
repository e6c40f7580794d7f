//! Every limit of docs/robustness.md, met with inputs far beyond it: each is a clear error with
//! its code, in bounded time, and nothing overflows the stack — neither the `slc` binary's main
//! thread nor a library call on a thread with a small stack.

#[path = "support/command.rs"]
mod command;
use command::scratch;
use slc::limits::{MAX_NESTING, MAX_PLAN_ACCESSES, MAX_RANK, MAX_SOURCE_BYTES};
use slc::sema::InputTypes;
use slc::types::TensorType;
use slc::{DType, Error, Executor, RunOptions, Session, Tensor};
use std::process::Output;
use std::time::{Duration, Instant};

/// The stack of a thread an embedder might call the library on.
const SMALL_STACK: usize = 256 << 10;

/// Runs `f` on a thread with a 256 KiB stack; a stack overflow aborts the test binary.
fn on_small_stack<T: Send + 'static>(f: impl FnOnce() -> T + Send + 'static) -> T {
    std::thread::Builder::new().stack_size(SMALL_STACK).spawn(f).unwrap().join().unwrap()
}

fn types(decls: &[(&str, &str)]) -> InputTypes {
    decls.iter().map(|(n, t)| (n.to_string(), t.parse::<TensorType>().unwrap())).collect()
}

fn code(r: Result<impl std::fmt::Debug, Error>) -> String {
    match r {
        Ok(v) => format!("ok {v:?}"),
        Err(e) => e.diagnostic().code.to_string(),
    }
}

/// Programs nested `n` levels deep in each of the ways a program can nest.
fn nested(n: usize) -> Vec<(&'static str, String)> {
    vec![
        ("negation", format!("a[{}1]", "-".repeat(n))),
        ("parentheses", format!("a[{}1{}]", "(".repeat(n), ")".repeat(n))),
        ("index of index", format!("{}0{}", "a[".repeat(n), "]".repeat(n))),
        ("slice chain", format!("a{}", "[:]".repeat(n))),
        ("sum", format!("a[0{}]", "+0".repeat(n))),
        ("list", format!("a[{}0{}]", "[".repeat(n), "]".repeat(n))),
        ("call", format!("{}0{}", "gather(a, ".repeat(n), ", 0)".repeat(n))),
        ("attribute", format!("a[{}]", "a.shape[0] - ".repeat(n) + "1")),
    ]
}

#[test]
fn deep_programs_are_errors_on_a_small_stack() {
    for n in [MAX_NESTING + 1, 100_000, 1_000_000] {
        for (what, src) in nested(n) {
            let t = Instant::now();
            let expected = if src.len() > MAX_SOURCE_BYTES { "E0003" } else { "E0004" };
            let got = on_small_stack(move || code(slc::compile(&src, &types(&[("a", "i64[3]")]))));
            assert_eq!(got, expected, "{what} at depth {n}");
            assert!(t.elapsed() < Duration::from_secs(5), "{what} at depth {n}: {:?}", t.elapsed());
        }
    }
}

#[test]
fn programs_at_the_nesting_limit_run_on_a_small_stack() {
    // The deepest programs accepted, compiled, run on both back ends and dropped on a 256 KiB
    // stack. (Nested indexing `a[a[...]]` reaches the plan's access limit first.)
    let deepest = [
        format!("a[{}1]", "-".repeat(MAX_NESTING - 2)),
        format!("a{}", "[:]".repeat(MAX_NESTING - 1)),
        format!("{}i{}", "gather(a, ".repeat(MAX_NESTING - 1), ", 0)".repeat(MAX_NESTING - 1)),
    ];
    for src in deepest {
        let shown = src.clone();
        let results = on_small_stack(move || {
            [Executor::Jit, Executor::Interpreter].map(|backend| {
                let mut s = Session::with_executor(backend);
                s.bind("a", Tensor::from_i64s(DType::I64, &[3], &[2, 0, 1]).unwrap());
                s.bind("i", Tensor::from_i64s(DType::I64, &[2], &[1, -1]).unwrap());
                s.eval(&src).map_err(|e| e.diagnostic().code)
            })
        });
        assert!(results[0].is_ok(), "{shown:.40}: {:?}", results[0]);
        assert_eq!(results[0], results[1], "{shown:.40}");
    }
}

#[test]
fn let_substitution_is_bounded_in_depth_and_size() {
    let t = types(&[("a", "i64[3]")]);
    // Each line nests the same name one level deeper: the limit holds after substitution.
    let chain = format!("let x = a\n{}x", "let x = x[::-1]\n".repeat(MAX_NESTING + 1));
    assert_eq!(code(slc::compile(&chain, &t)), "E0118");
    // Each line doubles the program: refused long before it could exhaust time or memory.
    let t0 = Instant::now();
    let doubling = format!("let x = a[a]\n{}x", "let x = x[x]\n".repeat(64));
    assert_eq!(code(slc::compile(&doubling, &t)), "E0127");
    assert!(t0.elapsed() < Duration::from_secs(5), "{:?}", t0.elapsed());
}

#[test]
fn ranks_above_the_maximum_are_errors() {
    let t = types(&[("a", "f32[2]")]);
    let newaxes = format!("a[{}]", "None, ".repeat(MAX_RANK));
    assert_eq!(code(slc::compile(&newaxes, &t)), "E0119");
    assert!(slc::compile(&format!("a[{}]", "None, ".repeat(MAX_RANK - 1)), &t).is_ok());
    let list = format!("a[{}0{}]", "[".repeat(MAX_RANK + 1), "]".repeat(MAX_RANK + 1));
    assert_eq!(code(slc::compile(&list, &t)), "E0119");
    let wide = format!("f32[{}]", vec!["1"; MAX_RANK + 1].join(","));
    assert_eq!(code(slc::compile("b", &types(&[("b", &wide)]))), "E0119");
    // A gather whose indices add dimensions beyond the maximum.
    let idx = format!("i64[{}]", vec!["1"; MAX_RANK].join(","));
    let gather = slc::compile("gather(c, i, 0)", &types(&[("c", "f32[2, 2]"), ("i", &idx)]));
    assert_eq!(code(gather), "E0119");
}

#[test]
fn input_types_must_be_addressable() {
    let negative =
        InputTypes::from([("a".to_string(), TensorType { dtype: DType::F32, shape: vec![2, -3] })]);
    assert_eq!(code(slc::compile("a[0]", &negative)), "E0128");
    let huge = types(&[("a", "f64[4611686018427387904]")]);
    assert_eq!(code(slc::compile("a[::-1]", &huge)), "E0128");
    // Bound but unused: no error.
    assert!(
        slc::compile(
            "b",
            &InputTypes::from([negative.into_iter().next().unwrap(), ("b".into(), "u8[1]".parse().unwrap())])
        )
        .is_ok()
    );
}

#[test]
fn symbolic_input_sizes_are_refused_exactly_where_concrete_ones_are() {
    // Products of dims near i64::MAX bytes, with a 0 dim before an overflow, after it, or none:
    // a later 0 does not excuse an earlier overflow. (Strides stay within i64: a concrete plan
    // whose strides overflow is refused by lowering, E0301, where an empty generic one runs.)
    let shapes: [[i64; 4]; 9] = [
        [1 << 20, 1 << 20, 1 << 20, 0],
        [1 << 31, 1 << 31, 2, 0],
        [0, 1 << 20, 1 << 20, 1 << 20],
        [1 << 40, 1 << 22, 0, 1],
        [1 << 30, 1 << 30, 2, 1],
        [1 << 30, 1 << 30, 1, 1],
        [1 << 62, 1, 1, 1],
        [1 << 62, 0, 1, 1],
        [3, 5, 7, 11],
    ];
    let generic = slc::pipeline::compile_generic("a[::-1]", &types_sym("f32[A, B, C, D]")).unwrap();
    let plan = slc::plan::verify_generic(generic.plan).unwrap();
    for shape in shapes {
        let concrete = format!("f32[{}]", shape.map(|d| d.to_string()).join(", "));
        let expected =
            slc::compile("a[::-1]", &types(&[("a", &concrete)])).map(drop).map_err(|e| e.diagnostic().code);
        let env = plan.binding(&[&shape], &|_, _| None).unwrap();
        let got = plan.bind(&env).map(drop);
        assert_eq!(got.is_ok(), expected.is_ok(), "{concrete}: {expected:?}, generic {got:?}");
        if let Err(code) = expected {
            assert_eq!(code, "E0128", "{concrete}");
        }
    }
}

fn types_sym(a: &str) -> slc::sema::SymInputTypes {
    [("a".to_string(), a.parse().unwrap())].into()
}

#[test]
fn plans_are_bounded_in_accesses() {
    // A gather of a gather of itself, twice per line: within the checker's copy budget, but
    // its fused reads multiply.
    let t = types(&[("a", "i64[3]")]);
    let doubling = format!("let x = a[a]\n{}x", "let x = x[x]\n".repeat(8));
    assert_eq!(code(slc::compile(&doubling, &t)), "E0304");
    // Nested indexing checks every level's whole index expression: quadratic, and accepted.
    let ok = slc::compile(&format!("{}0{}", "a[".repeat(200), "]".repeat(200)), &t).unwrap();
    let accesses: usize =
        ok.plan.checks.iter().map(|c| c.index.accesses()).sum::<usize>() + ok.plan.output.accesses();
    assert!(accesses <= MAX_PLAN_ACCESSES);
}

#[test]
fn plan_text_is_bounded_too() {
    let nested = format!(
        "plan(a: i64[3]) -> i64[]\n  out a{{0;}}{}\n",
        " + 1*error<3>(a{0;}".repeat(MAX_NESTING + 1) + &")".repeat(MAX_NESTING + 1)
    );
    let err = on_small_stack(move || slc::plan::parse::parse(&nested).unwrap_err().message);
    assert!(err.contains("nest more than"), "{err}");
    let rank = format!(
        "plan(a: f32[{}]) -> f32[]\n  out a{{0; {}}}\n",
        vec!["1"; MAX_RANK + 1].join(", "),
        vec!["0"; MAX_RANK + 1].join(", ")
    );
    let plan = slc::plan::parse::parse(&rank).unwrap();
    assert!(slc::plan::verify(plan).is_err());
    // A stride no byte offset can express, along an axis where it is never added.
    let stride = "plan(a: f64[1]) -> f64[1]\n  out a{0; 4611686018427387904}\n";
    let plan = slc::plan::parse::parse(stride).unwrap();
    assert!(slc::plan::verify(plan).unwrap_err().to_string().contains("overflows i64 in bytes"));
}

#[test]
fn outputs_above_the_bound_are_refused_before_anything_runs() {
    let a = Tensor::zeros(DType::U8, &[1000]).unwrap();
    let mut s = Session::new();
    s.bind("a", a);
    s.options_mut().max_output_bytes = Some(999);
    assert_eq!(code(s.eval("a[::-1]")), "E0207");
    assert_eq!(s.cached_kernels(), 0, "no kernel was generated");
    assert!(s.eval("a[1:]").is_ok());
    // Kernels check at preparation, before code generation.
    let options = RunOptions { max_output_bytes: Some(10), ..RunOptions::default() };
    let k = slc::Kernel::prepare_with("a[:11]", &[("a", "u8[20]".parse().unwrap())], &options);
    assert_eq!(code(k.map(drop)), "E0207");
    // The default is the memory available: a terabyte result is refused, not attempted.
    let g = slc::compile("gather(a, i, 0)", &types(&[("a", "f32[1000000]"), ("i", "i64[1000000, 1000000]")]))
        .unwrap();
    let plan_bytes = g.plan.output_bytes();
    assert!(plan_bytes > 1 << 40);
    let k = slc::Kernel::prepare(
        "gather(a, i, 0)",
        &[("a", "f32[1000000]".parse().unwrap()), ("i", "i64[1000000, 1000000]".parse().unwrap())],
    );
    let err = k.unwrap_err();
    assert_eq!(err.diagnostic().code, "E0207");
    assert!(
        err.render("gather(a, i, 0)").contains("bytes of memory available"),
        "{}",
        err.render("gather(a, i, 0)")
    );
}

#[test]
fn source_longer_than_the_limit_is_refused_without_echoing_it() {
    let src = format!("a[{}0]", "0+".repeat(MAX_SOURCE_BYTES / 2));
    let err = slc::compile(&src, &types(&[("a", "f32[2]")])).unwrap_err();
    assert_eq!(err.diagnostic().code, "E0003");
    assert!(err.render(&src).len() < 1000);
}

/// The forms the compile cost of all-symbolic programs of many dims is held to.
const HIGH_RANK_FORMS: [&str; 5] =
    ["a[1:, ::-1]", "a[::-1]", "a[..., ::2]", "a[2:, ..., None, :10]", "a[::2, ::-1, 1:]"];

/// `a` of `rank` dims, every one a symbol of its own.
fn all_symbolic(dtype: &str, rank: usize) -> slc::sema::SymInputTypes {
    let dims: Vec<String> = (0..rank).map(|i| format!("d{i}")).collect();
    let ty = format!("{dtype}[{}]", dims.join(", "));
    [("a".to_string(), ty.parse().unwrap())].into()
}

/// The work of compiling `src` generically over `all_symbolic(rank)`, counted rather than
/// timed: the plan's text (its shape function included), its requirements, the versions of
/// its loops the kernel carries, and the lines of the kernel's Cranelift IR.
fn generic_compile_work(src: &str, rank: usize) -> (usize, usize, usize, usize) {
    let isa = slc::backend::jit::host_isa().unwrap();
    let target = slc::backend::clif::target(&*isa);
    let compiled = slc::pipeline::compile_generic(src, &all_symbolic("f32", rank)).unwrap();
    let plan = slc::plan::verify_generic(compiled.plan).unwrap();
    let nest = slc::backend::loopnest::schedule_generic(&plan, target, |_, _| {});
    let ir = slc::backend::clif::kernel_ir(&*isa, &nest).lines().count();
    (plan.to_string().len(), plan.requires.len(), nest.versions(), ir)
}

#[test]
fn all_symbolic_compile_work_is_polynomial_in_rank() {
    use slc::backend::loopnest::MAX_VERSIONS;
    for src in HIGH_RANK_FORMS {
        let r4 = generic_compile_work(src, 4);
        let mut text = vec![];
        for rank in [16, 32] {
            let (bytes, requires, versions, ir) = generic_compile_work(src, rank);
            // Per-call versions are a budget for the nest, not a product over its axes.
            assert!(versions <= MAX_VERSIONS && versions == r4.2, "{src} at rank {rank}: {versions}");
            assert!(requires <= rank + 2, "{src} at rank {rank}: {requires} requirements");
            assert!(ir <= r4.3 + 40 * rank, "{src} at rank {rank}: {ir} lines of IR, {} at rank 4", r4.3);
            // Each requirement holds each dim once (the input's size check doubled with every
            // dim when each step nested the one before twice: 3 MB of text at rank 16).
            assert!(bytes < 64 << 10, "{src} at rank {rank}: {bytes} bytes of plan");
            text.push(bytes);
        }
        // Quadratic in the rank at most.
        assert!(text[1] <= 5 * text[0], "{src}: {text:?} bytes of plan at ranks 16 and 32");
    }
}

#[test]
fn rank_32_symbolic_kernels_agree_with_the_interpreter() {
    // Shapes of 32 dims, most 1 or 2; the first is compiled for its shape, the others by the
    // all-symbolic kernel.
    let shape = |big: &[(usize, usize)]| {
        let mut s = vec![1usize; 32];
        for &(axis, n) in big {
            s[axis] = n;
        }
        s
    };
    let shapes = [
        shape(&[(0, 3), (1, 2), (31, 4)]),
        shape(&[(0, 4), (5, 2), (17, 2), (30, 3), (31, 2)]),
        shape(&[(0, 3), (1, 2), (2, 2), (16, 2), (31, 5)]),
        shape(&[(0, 5), (2, 3), (29, 2)]),
    ];
    for src in HIGH_RANK_FORMS {
        let (mut jit, mut oracle) =
            (Session::with_executor(Executor::Jit), Session::with_executor(Executor::Interpreter));
        for (k, s) in shapes.iter().enumerate() {
            let n: usize = s.iter().product();
            let values: Vec<i64> = (0..n as i64).map(|v| v * 7 - 11).collect();
            let a = Tensor::from_i64s(DType::I32, s, &values).unwrap();
            jit.bind("a", a.clone());
            oracle.bind("a", a);
            let (got, expected) = (jit.eval(src).unwrap(), oracle.eval(src).unwrap());
            assert_eq!(got.shape(), expected.shape(), "{src} on shape {k}");
            assert_eq!(got.bytes(), expected.bytes(), "{src} on shape {k}");
        }
        assert_eq!(jit.compiles(), 2, "{src}: one specialized kernel, then the generic one for every shape");
    }
}

fn slc(args: &[&str], stdin: Option<&str>) -> Output {
    command::slc_with(args, stdin.unwrap_or(""), vec![])
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn the_binary_reports_deep_and_long_programs() {
    let dir = scratch("limits", "binary");
    // On the command line, as deep as an argument can be (Linux caps one at 128 KiB).
    let o = slc(&["plan", &format!("a[{}1]", "-".repeat(100_000)), "--shape", "a=f32[3]"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("E0004"), "{}", stderr(&o));
    // Longer programs come from files and pipes.
    for (what, src) in nested(1_000_000).into_iter().chain(nested(100_000)) {
        let script = dir.join("deep.slc");
        std::fs::write(&script, format!("let a = arange(3, dtype=i64)\n{src}\n")).unwrap();
        let o = slc(&["run", script.to_str().unwrap()], None);
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
        assert!(stderr(&o).contains("E000"), "{what}: {:.300}", stderr(&o));
        let o = slc(&["repl"], Some(&format!("let a = arange(3, dtype=i64)\n{src}\n")));
        assert_eq!(o.status.code(), Some(2), "{what}: {}", stderr(&o));
    }
    // Extreme shapes: errors, not aborts.
    for args in [
        ["bench", "a[::-1]", "--shape", "a=f32[100000000000,100]"],
        ["bench", "a[::-1]", "--shape", "a=u8[1000000000000000]"],
    ] {
        let o = slc(&args, None);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains("E0207"), "{args:?}: {}", stderr(&o));
    }
    let o = slc(
        &[
            "compile",
            "a[::-1]",
            "--shape",
            "a=f64[4611686018427387904]",
            "--target",
            "cpu",
            "-o",
            dir.join("k.o").to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("E0128"), "{}", stderr(&o));
    let o = slc(
        &["repl", "--max-output-bytes", "100"],
        Some(
            "arange(50, dtype=u8)\nzeros([1000000, 1000000, 1000000])\nrandom([4000000000000])\nzeros([10000000000, 10000000000])\n",
        ),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o).matches("E0207").count(), 2, "{}", stderr(&o));
    assert!(stderr(&o).contains("too many elements"), "{}", stderr(&o));
}

/// The codes in `"E0123"` string literals of the sources.
fn codes_in(dir: &std::path::Path, found: &mut std::collections::BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            codes_in(&path, found);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            for (i, _) in text.match_indices("\"E0") {
                let code = &text[i + 1..(i + 6).min(text.len())];
                if code[1..].bytes().all(|b| b.is_ascii_digit()) && text[i + 6..].starts_with('"') {
                    found.insert(code.to_string());
                }
            }
        }
    }
}

#[test]
fn every_error_code_is_documented() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut in_sources = std::collections::BTreeSet::new();
    for dir in ["src", "runtime/src", "capi/src"] {
        codes_in(&root.join(dir), &mut in_sources);
    }
    let docs = std::fs::read_to_string(root.join("docs/robustness.md")).unwrap();
    let documented: std::collections::BTreeSet<String> = docs
        .lines()
        .filter_map(|l| l.strip_prefix("| `E0"))
        .map(|rest| format!("E0{}", &rest[..3]))
        .collect();
    assert!(in_sources.len() > 50, "{in_sources:?}");
    assert_eq!(in_sources, documented, "docs/robustness.md's table lists exactly the codes in use");
}
