//! Generic AOT kernels, end to end: one object per program serves every shape. Each program's
//! generic plan is compiled with `aot::compile` (the generic ABI); a generated C driver links all the
//! objects and runs each over a few hundred shapes (empty and unit dims among them) through
//! `NAME_shape` then `NAME` (whole range, split range, bad ranges), and prints the output; the
//! expected output of each shape comes from the concrete pipeline and the interpreter (a
//! `Session` with that shape). Dims that do not fit (one name, two sizes; a constant dim that
//! differs) must return SHAPE_MISMATCH from both functions and write nothing.

#[path = "support/cases.rs"]
mod cases;
#[path = "support/generic_plans.rs"]
mod generic_plans;
#[path = "support/objects.rs"]
mod objects;

#[path = "support/scratch.rs"]
mod scratch_dir;
use cases::{c_bytes, hex};
use generic_plans::{Dim, gather_plan};
use objects::{check_elf, check_object, run};
use scratch_dir::scratch;
use slc::backend::aot;
use slc::fuzz::{Draw, Rng};
use slc::plan::{InputDecl, VerifiedGenericPlan, verify_generic};
use slc::sema::SymInputTypes;
use slc::types::sym::{MAX_DIM, SymExpr};
use slc::types::{OobMode, TensorType};
use slc::{DType, Tensor};
use std::fmt::Write as _;
use std::process::Command;

const SHAPE_MISMATCH: i32 = 4;
const INDEX_OUT_OF_RANGE: i32 = 1;

fn n(name: &str) -> SymExpr {
    SymExpr::dim(name)
}

fn c(v: i64) -> SymExpr {
    SymExpr::constant(v)
}

/// The generic plan of `src` for `inputs` (dims: symbols or constants), verified: the front
/// end's, except for gathers, whose symbolic dims it does not take yet (the plan written by hand
/// in tests/support/generic_plans.rs then, for `a[idx]` with `a: f32[N, M]`, `idx: i64[K or N]`).
fn generic_plan(src: &str, inputs: &[InputDecl<SymExpr>]) -> VerifiedGenericPlan {
    let plan = if src == "a[idx]" {
        let k = if inputs[1].shape[0] == n("N") { Dim::Sym("N") } else { Dim::Sym("K") };
        let plan = gather_plan([Dim::Sym("N"), Dim::Sym("M")], (DType::I64, k), 0, OobMode::Error);
        assert_eq!(plan.inputs, inputs, "the declared inputs of the hand-written gather");
        plan
    } else {
        let types: SymInputTypes = inputs
            .iter()
            .map(|d| (d.name.clone(), TensorType { dtype: d.dtype, shape: d.shape.clone() }))
            .collect();
        slc::pipeline::compile_generic(src, &types).unwrap_or_else(|e| panic!("`{src}`: {e}")).plan
    };
    verify_generic(plan).unwrap_or_else(|e| panic!("`{src}`: {e}"))
}

/// One generic kernel and the calls the driver makes to it.
struct Program {
    name: String,
    src: &'static str,
    inputs: Vec<InputDecl<SymExpr>>,
    calls: Vec<Call>,
}

/// One call: the inputs' values (their shapes are the dims passed) and what must come out.
struct Call {
    inputs: Vec<Tensor>,
    expect: Expect,
}

#[derive(Debug, Clone, PartialEq)]
enum Expect {
    Output {
        shape: Vec<i64>,
        bytes: Vec<u8>,
    },
    /// An index value out of range: NumPy's IndexError, at run time.
    IndexError,
    /// The shape function refuses the dims.
    Mismatch,
}

fn tensor(dtype: DType, shape: &[usize], rng: &mut Rng) -> Tensor {
    let numel: usize = shape.iter().product();
    let values: Vec<i64> =
        (0..numel).map(|_| rng.range(0, 100) + if dtype.is_signed() { -50 } else { 0 }).collect();
    if dtype == DType::F32 {
        let bytes: Vec<u8> = values.iter().flat_map(|&v| (v as f32 + 0.5).to_le_bytes()).collect();
        return Tensor::from_bytes(dtype, shape, &bytes).unwrap();
    }
    Tensor::from_i64s(dtype, shape, &values).unwrap()
}

/// What the concrete pipeline and the interpreter give for `src` on these inputs: an output,
/// an index error at run time, or a program error for this shape (the generic kernel's shape
/// function refuses that shape).
fn oracle(src: &str, names: &[&str], inputs: &[Tensor]) -> Expect {
    let mut s = slc::Session::with_executor(slc::Executor::Interpreter);
    for (name, t) in names.iter().zip(inputs) {
        s.bind(name, t.clone());
    }
    match s.eval(src) {
        Ok(t) => {
            Expect::Output { shape: t.shape().iter().map(|&d| d as i64).collect(), bytes: t.bytes().to_vec() }
        }
        Err(slc::Error::Runtime(slc::backend::RuntimeError::IndexOutOfBounds { .. })) => Expect::IndexError,
        Err(slc::Error::Runtime(e)) => panic!("`{src}`: unexpected run-time error {e}"),
        Err(_) => Expect::Mismatch,
    }
}

fn programs() -> Vec<Program> {
    let mut rng = Rng::new(20);
    let decl = |name: &str, dtype, shape| InputDecl::dense(name, dtype, shape);
    let matrix_programs: [(&str, DType); 7] = [
        ("a[1:, ::-1]", DType::F32),
        ("a[::2, 1]", DType::I32),
        ("a[..., newaxis, :3]", DType::U8),
        ("a[1:, ::2][::-1]", DType::I16),
        ("a[-1, 0]", DType::I64),
        ("slice(a, [1, -1], [-1, -9223372036854775808], axes=[0, 1], steps=[1, -2])", DType::U16),
        ("strided_slice(a, [0, 1], [2, 0], [1, 1], end_mask=[0, 1])", DType::I8),
    ];
    let mut shapes: Vec<[usize; 2]> = (0..7).flat_map(|r| (0..7).map(move |c| [r, c])).collect();
    shapes.extend([[1, 17], [17, 1], [9, 33], [64, 3]]);
    // Empty tensors with a dim at the limit, and past it.
    let limit = MAX_DIM as usize;
    shapes.extend([[0, limit], [limit, 0], [limit + 1, 0], [0, usize::MAX >> 1]]);
    let mut programs = vec![];
    for (src, dtype) in matrix_programs {
        let inputs = vec![decl("a", dtype, vec![n("N"), n("M")])];
        let calls = shapes
            .iter()
            .map(|shape| {
                let a = tensor(dtype, shape, &mut rng);
                let expect = if shape.iter().any(|&d| d > limit) {
                    Expect::Mismatch
                } else {
                    oracle(src, &["a"], std::slice::from_ref(&a))
                };
                Call { expect, inputs: vec![a] }
            })
            .collect();
        programs.push(Program { name: String::new(), src, inputs, calls });
    }
    // A constant dim: other sizes are refused.
    let inputs = vec![decl("a", DType::U8, vec![n("N"), c(4)])];
    let calls = [[3, 4], [0, 4], [3, 5], [2, 0]]
        .iter()
        .map(|shape| {
            let a = tensor(DType::U8, shape, &mut rng);
            let expect = if shape[1] == 4 {
                oracle("a[..., newaxis, :3]", &["a"], std::slice::from_ref(&a))
            } else {
                Expect::Mismatch
            };
            Call { inputs: vec![a], expect }
        })
        .collect();
    programs.push(Program { name: String::new(), src: "a[..., newaxis, :3]", inputs, calls });
    // A gather with symbolic dims, its index values in range, negative, or out of range.
    let gather = |k_dim: SymExpr| {
        vec![decl("a", DType::F32, vec![n("N"), n("M")]), decl("idx", DType::I64, vec![k_dim])]
    };
    let mut calls = vec![];
    for rows in 0..5usize {
        for cols in 0..4usize {
            for k in 0..4usize {
                let a = tensor(DType::F32, &[rows, cols], &mut rng);
                let span = rows as i64 + 1; // one value in each span is out of range
                let values: Vec<i64> = (0..k).map(|_| rng.range(-span, span + 1)).collect();
                let i = Tensor::from_i64s(DType::I64, &[k], &values).unwrap();
                let expect = oracle("a[idx]", &["a", "idx"], &[a.clone(), i.clone()]);
                calls.push(Call { inputs: vec![a, i], expect });
            }
        }
    }
    programs.push(Program { name: String::new(), src: "a[idx]", inputs: gather(n("K")), calls });
    // One name for two axes: the index list is as long as the gathered axis.
    let mut calls = vec![];
    for (rows, k) in [(3usize, 3usize), (0, 0), (2, 3), (3, 2), (0, 1)] {
        let a = tensor(DType::F32, &[rows, 2], &mut rng);
        let values: Vec<i64> = (0..k as i64).map(|j| rows as i64 - 1 - j).collect();
        let i = Tensor::from_i64s(DType::I64, &[k], &values).unwrap();
        let expect = if rows == k {
            oracle("a[idx]", &["a", "idx"], &[a.clone(), i.clone()])
        } else {
            Expect::Mismatch
        };
        calls.push(Call { inputs: vec![a, i], expect });
    }
    programs.push(Program { name: String::new(), src: "a[idx]", inputs: gather(n("N")), calls });
    // A run-time scalar as a slice bound: NAME_shape reads it from the inputs.
    let mut calls = vec![];
    let bounds = [-9, -3, -1, 0, 1, 2, 5, 9, i64::MIN, i64::MAX];
    for len in [0usize, 1, 4, 7] {
        for k in bounds {
            // The concrete program has the bound's value in its text.
            let a = tensor(DType::I32, &[len], &mut rng);
            let expect = oracle(&format!("a[:{k}]"), &["a"], std::slice::from_ref(&a));
            calls.push(Call { inputs: vec![a, Tensor::scalar_i64(k)], expect });
        }
    }
    let inputs = vec![decl("a", DType::I32, vec![n("N")]), decl("k", DType::I64, vec![])];
    programs.push(Program { name: String::new(), src: "a[:k]", inputs, calls });
    // An unsigned scalar above i64::MAX does not fit.
    let mut calls = vec![];
    for k in [3u64, 1 << 63, u64::MAX] {
        let a = tensor(DType::I32, &[5], &mut rng);
        let expect = if k <= i64::MAX as u64 {
            oracle(&format!("a[:{k}]"), &["a"], std::slice::from_ref(&a))
        } else {
            Expect::Mismatch
        };
        let k = Tensor::from_bytes(DType::U64, &[], &k.to_le_bytes()).unwrap();
        calls.push(Call { inputs: vec![a, k], expect });
    }
    let inputs = vec![decl("a", DType::I32, vec![n("N")]), decl("k", DType::U64, vec![])];
    programs.push(Program { name: String::new(), src: "a[:k]", inputs, calls });
    // The elements of a 1-d run-time input (an i32, sign-extended) as operator bounds; a
    // tensor of another length does not fit.
    let src = "strided_slice(a, b, [9, 9], [1, 1])";
    let mut calls = vec![];
    for (rows, cols) in [(0usize, 0usize), (1, 3), (4, 5), (6, 2)] {
        for begin in [[0, 0], [1, -1], [-2, 2], [-9, 7], [i32::MIN, i32::MAX]] {
            let a = tensor(DType::F32, &[rows, cols], &mut rng);
            let text = format!("strided_slice(a, [{}, {}], [9, 9], [1, 1])", begin[0], begin[1]);
            let expect = oracle(&text, &["a"], std::slice::from_ref(&a));
            let b = Tensor::from_i64s(DType::I32, &[2], &[begin[0] as i64, begin[1] as i64]).unwrap();
            calls.push(Call { inputs: vec![a, b], expect });
        }
    }
    let a = tensor(DType::F32, &[2, 2], &mut rng);
    let short = Tensor::from_i64s(DType::I32, &[1], &[0]).unwrap();
    calls.push(Call { inputs: vec![a, short], expect: Expect::Mismatch });
    let inputs = vec![decl("a", DType::F32, vec![n("N"), n("M")]), decl("b", DType::I32, vec![c(2)])];
    programs.push(Program { name: String::new(), src, inputs, calls });
    for (k, p) in programs.iter_mut().enumerate() {
        p.name = format!("g{k}");
    }
    programs
}

/// The driver: per call, `NAME_shape` then `NAME` over the whole range, split in two, and bad
/// ranges; one line per call: `PROGRAM CALL SHAPE_STATUS DIMS... | STATUS SPLIT SAME UNTOUCHED
/// BAD_RANGE HEX`.
fn driver(programs: &[Program], entries: &[aot::AotKernel]) -> String {
    let mut c = String::from("#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\n");
    for p in programs {
        let _ = writeln!(c, "#include \"{}.h\"", p.name);
    }
    for (i, p) in programs.iter().enumerate() {
        for (j, call) in p.calls.iter().enumerate() {
            for (k, t) in call.inputs.iter().enumerate() {
                let _ = writeln!(
                    c,
                    "static _Alignas(64) const uint8_t in{i}_{j}_{k}[] = {};",
                    c_bytes(t.bytes())
                );
                let dims: Vec<String> = t.shape().iter().map(|d| format!("{d}")).collect();
                let dims = if dims.is_empty() { "0".to_string() } else { dims.join(",") };
                let _ = writeln!(c, "static const int64_t dims{i}_{j}_{k}[] = {{{dims}}};");
            }
        }
    }
    c.push_str(
        "static void dump(const uint8_t *p, long n) { for (long i = 0; i < n; i++) printf(\"%02x\", p[i]); }\n\
         static int untouched(const uint8_t *p, long from, long to, uint8_t v) {\n\
         \x20 for (long i = from; i < to; i++) if (p[i] != v) return 0;\n  return 1;\n}\n\
         static _Alignas(64) uint8_t outa[1 << 16];\nstatic _Alignas(64) uint8_t outb[1 << 16];\nint main(void) {\n",
    );
    for (i, (p, k)) in programs.iter().zip(entries).enumerate() {
        let (name, up) = (&p.name, p.name.to_uppercase());
        let shape_inputs = if k.entry.shape_reads_inputs { "in, " } else { "" };
        for j in 0..p.calls.len() {
            let list = |prefix: &str| {
                (0..p.inputs.len()).map(|k| format!("{prefix}{i}_{j}_{k}, ")).collect::<String>()
            };
            let _ = writeln!(
                c,
                "  {{ const uint8_t *in[] = {{ {ins}NULL }}; const int64_t *dims[] = {{ {dims}NULL }};\n\
                 \x20   int64_t od[{up}_OUT_RANK + 1]; int64_t outer = -1; long nb = {up}_OUT_ELEM_SIZE;\n\
                 \x20   int s0 = {name}_shape({shape_inputs}dims, od, &outer);\n\
                 \x20   printf(\"{i} {j} %d\", s0);\n\
                 \x20   for (int d = 0; d < {up}_OUT_RANK; d++) {{ if (s0 == 0) {{ printf(\" %lld\", (long long)od[d]); nb *= od[d]; }} }}\n\
                 \x20   if (s0 != 0) {{ nb = 0; outer = 0; }}\n\
                 \x20   memset(outa, 0xab, sizeof outa); memset(outb, 0xcd, sizeof outb);\n\
                 \x20   int s = {name}(in, dims, outa, 0, outer);\n\
                 \x20   int64_t mid = outer / 2;\n\
                 \x20   int s1 = {name}(in, dims, outb, 0, mid); int s2 = {name}(in, dims, outb, mid, outer);\n\
                 \x20   int same = s != 0 || memcmp(outa, outb, nb) == 0;\n\
                 \x20   int rest = untouched(outa, s == 0 ? nb : 0, sizeof outa, 0xab);\n\
                 \x20   int bad = s0 != 0 || ({name}(in, dims, outa, -1, 0) == {up}_STATUS_BAD_RANGE\n\
                 \x20       && {name}(in, dims, outa, 0, outer + 1) == {up}_STATUS_BAD_RANGE && (outer == 0 || {name}(in, dims, outa, 1, 0) == {up}_STATUS_BAD_RANGE));\n\
                 \x20   printf(\" | %d %d %d %d %d \", s, s1 ? s1 : s2, same, rest, bad); if (s == 0) dump(outa, nb); printf(\"\\n\"); }}",
                ins = list("in"),
                dims = list("dims"),
            );
        }
    }
    c.push_str("  return 0;\n}\n");
    c
}

#[test]
fn generic_objects_run_every_shape_as_the_interpreter() {
    let programs = programs();
    let dir = scratch("aot-generic", "shapes");
    let mut kernels = vec![];
    for p in &programs {
        let plan = generic_plan(p.src, &p.inputs);
        let k = aot::compile(&plan, p.src, &p.inputs, &p.name).unwrap_or_else(|e| panic!("`{}`: {e}", p.src));
        std::fs::write(dir.join(format!("{}.o", p.name)), &k.object).unwrap();
        std::fs::write(dir.join(format!("{}.h", p.name)), &k.header).unwrap();
        check_object(&dir, &p.name, &[p.name.as_str(), &format!("{}_shape", p.name)]);
        kernels.push(k);
    }
    check_elf(&dir, &programs[0].name);
    std::fs::write(dir.join("driver.c"), driver(&programs, &kernels)).unwrap();
    let objects: Vec<String> = programs.iter().map(|p| format!("{}.o", p.name)).collect();
    run(Command::new("cc")
        .current_dir(&dir)
        .args(["-std=c11", "-O0", "-Wall", "-Werror", "-o", "driver", "driver.c"])
        .args(&objects));
    let out = run(Command::new(dir.join("driver")).current_dir(&dir));
    let mut failures = vec![];
    let mut seen = 0;
    let mut kinds = [0usize; 3];
    for line in out.lines() {
        let (shape_part, run_part) = line.split_once(" | ").expect("two parts");
        let f: Vec<i64> = shape_part.split(' ').map(|x| x.parse().unwrap()).collect();
        let (i, j, s0, dims) = (f[0] as usize, f[1] as usize, f[2] as i32, &f[3..]);
        let r: Vec<&str> = run_part.split(' ').collect();
        let (s, split, same, rest, bad) = (r[0], r[1], r[2], r[3], r[4]);
        let got_hex = r.get(5).copied().unwrap_or("");
        let (p, call) = (&programs[i], &programs[i].calls[j]);
        let shapes: Vec<&[usize]> = call.inputs.iter().map(|t| t.shape()).collect();
        let ok = match &call.expect {
            Expect::Output { shape, bytes } => {
                kinds[0] += 1;
                s0 == 0
                    && dims == &shape[..]
                    && s == "0"
                    && split == "0"
                    && same == "1"
                    && bad == "1"
                    && rest == "1"
                    && got_hex == hex(bytes)
            }
            Expect::IndexError => {
                kinds[1] += 1;
                s0 == 0 && s == INDEX_OUT_OF_RANGE.to_string() && split == s && bad == "1"
            }
            Expect::Mismatch => {
                kinds[2] += 1;
                s0 == SHAPE_MISMATCH && s == SHAPE_MISMATCH.to_string() && split == s && rest == "1"
            }
        };
        if !ok {
            failures.push(format!(
                "`{}` {:?} on {shapes:?}: expected {:?}, got `{line}`",
                p.src, p.inputs, call.expect
            ));
        }
        seen += 1;
    }
    let total: usize = programs.iter().map(|p| p.calls.len()).sum();
    assert_eq!(seen, total, "the driver stopped early:\n{out}");
    assert!(failures.is_empty(), "{} of {total} calls failed:\n{}", failures.len(), failures.join("\n"));
    // The sample covers every outcome.
    assert!(total >= 300 && kinds.iter().all(|&k| k >= 5), "{kinds:?}");
}

#[test]
fn generic_header_declares_the_shape_function() {
    let inputs = vec![InputDecl::dense("a", DType::F32, vec![n("N"), n("M")])];
    let plan = generic_plan("a[1:, ::-1]", &inputs);
    let k = aot::compile(&plan, "a[1:, ::-1]", &inputs, "rev").unwrap();
    for line in [
        "#define REV_STATUS_SHAPE_MISMATCH 4",
        "#define REV_OUT_RANK 2",
        "#define REV_IN0_RANK 2",
        "#define REV_SHAPE_READS_INPUTS 0",
        "int32_t rev_shape(const int64_t *const *in_dims, int64_t *out_dims, int64_t *outer);",
        "int32_t rev(const uint8_t *const *inputs, const int64_t *const *in_dims, uint8_t *out,",
        "/* The output: f32[max(0, N-1), M]. */",
        " * Plan:\n *     plan(a: f32[N, M]) -> f32[max(0, N-1), M]\n",
    ] {
        assert!(k.header.contains(line), "no `{line}` in\n{}", k.header);
    }
    let bad = aot::compile(&plan, "a", &inputs, "9rev");
    assert!(matches!(bad, Err(aot::AotError::BadName(_))));
    // With a run-time scalar, the shape function reads the inputs.
    let inputs =
        vec![InputDecl::dense("a", DType::I32, vec![n("N")]), InputDecl::dense("k", DType::I64, vec![])];
    let k = aot::compile(&generic_plan("a[:k]", &inputs), "a[:k]", &inputs, "head").unwrap();
    for line in [
        "#define HEAD_SHAPE_READS_INPUTS 1",
        "int32_t head_shape(const uint8_t *const *inputs, const int64_t *const *in_dims, int64_t *out_dims, int64_t *outer);",
        "#define HEAD_IN1_RANK 0",
        "/* inputs[1]: k: i64[] */",
    ] {
        assert!(k.header.contains(line), "no `{line}` in\n{}", k.header);
    }
}

/// `slc compile --target cpu` with symbolic dims writes the generic object and header;
/// `--target dml` refuses symbolic dims.
#[test]
fn cli_compiles_symbolic_shapes() {
    let dir = scratch("aot-generic", "cli");
    let slc = env!("CARGO_BIN_EXE_slc");
    let args = ["compile", "a[::2, 1]", "--shape", "a=i32[N, M]", "--name", "pick"];
    run(Command::new(slc)
        .current_dir(&dir)
        .args(args)
        .args(["--target", "cpu", "-o", "pick.o", "--header", "pick.h"]));
    check_object(&dir, "pick", &["pick", "pick_shape"]);
    let header = std::fs::read_to_string(dir.join("pick.h")).unwrap();
    assert!(header.contains("int32_t pick_shape(const int64_t *const *in_dims"), "{header}");
    assert!(header.contains("/* The output: i32[(N+1)//2]. */"), "{header}");
    let dml = Command::new(slc).current_dir(&dir).args(args).args(["--target", "dml"]).output().unwrap();
    let stderr = String::from_utf8_lossy(&dml.stderr);
    assert_eq!(dml.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--target dml needs concrete shapes") && stderr.contains("`a` is i32[N, M]"),
        "{stderr}"
    );
}

/// One `aot::compile` for every plan: the ABI follows from what there is to bind. A plan
/// without symbols for inputs of constant dims (a concrete plan lifted, or the generic pipeline
/// on constant dims) gets the concrete ABI and the shape macros; a declared input with a
/// symbolic dim, even one the program does not read, gets the generic ABI.
#[test]
fn the_abi_follows_what_there_is_to_bind() {
    let inputs = vec![InputDecl::dense("a", DType::F32, vec![c(4), c(5)])];
    let types = [("a".to_string(), "f32[4,5]".parse().unwrap())].into_iter().collect();
    let lifted = slc::compile("a[1:3, ::-1]", &types).unwrap().plan.lift();
    let from_generic = generic_plan("a[1:3, ::-1]", &inputs);
    for plan in [&lifted, &from_generic] {
        let k = aot::compile(plan, "a[1:3, ::-1]", &inputs, "rev").unwrap();
        assert!(!k.entry.binds());
        for line in [
            "#define REV_OUTER INT64_C(2)",
            "#define REV_IN0_SHAPE {INT64_C(4), INT64_C(5)} /* [4, 5] */",
            "#define REV_OUT_NBYTES INT64_C(40)",
            "int32_t rev(const uint8_t *const *inputs, uint8_t *out, int64_t begin, int64_t end);",
        ] {
            assert!(k.header.contains(line), "no `{line}` in\n{}", k.header);
        }
        assert!(!k.header.contains("rev_shape") && !k.header.contains("SHAPE_MISMATCH"));
    }
    let mut with_symbolic = inputs.clone();
    with_symbolic.push(InputDecl::dense("b", DType::U8, vec![n("N")]));
    let k = aot::compile(&lifted, "a[1:3, ::-1]", &with_symbolic, "rev").unwrap();
    assert!(k.entry.binds() && !k.entry.shape_reads_inputs);
    for line in [
        "int32_t rev_shape(",
        "#define REV_IN1_RANK 1",
        "/* inputs[1]: b: u8[N] (not read by the program) */",
    ] {
        assert!(k.header.contains(line), "no `{line}` in\n{}", k.header);
    }
    assert!(!k.header.contains("REV_OUTER"));
}
