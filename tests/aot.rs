//! Ahead-of-time kernels, end to end: every runnable seed example and a random sample of the
//! golden corpus is compiled to an object file and header, linked (all at once) with a
//! generated C driver by gcc, run, and its output bytes and status compared with the library
//! interpreter's. The objects pass nm/objdump checks: one exported symbol, nothing undefined but
//! libc's memcpy/memset. A few cases go through `slc compile` and `slc eval` themselves.

#[path = "support/cases.rs"]
mod cases;
#[path = "support/objects.rs"]
mod objects;

#[path = "support/scratch.rs"]
mod scratch_dir;
use cases::{Case, hex, oracle};
use objects::{check_elf, check_object, link_and_run, run};
use scratch_dir::scratch;
use slc::backend::aot;
use slc::plan::InputDecl;
use slc::types::TensorType;
use slc::types::sym::SymExpr;
use std::fmt::Write as _;
use std::path::Path;
use std::process::Command;

/// Declared inputs of constant dims, as `aot::compile` takes them.
fn declared(types: &[(String, TensorType)]) -> Vec<InputDecl<SymExpr>> {
    types.iter().map(|(n, t)| InputDecl::dense(n, t.dtype, t.generic().shape)).collect()
}

/// One kernel of the batch: its case, name and expected outcome.
struct Job<'c> {
    case: &'c Case,
    name: String,
    expect: Result<Vec<u8>, i32>,
}

/// Compiles every case that compiles from types alone; writes objects and headers into `dir`.
fn build_kernels<'c>(cases: &'c [Case], dir: &Path) -> (Vec<Job<'c>>, usize) {
    let mut jobs = vec![];
    let mut skipped = 0;
    for (i, case) in cases.iter().enumerate() {
        let types = case.types();
        let compiled = match slc::compile(&case.src, &types.iter().cloned().collect()) {
            Ok(c) => c,
            // Program errors, and parameters that need bound values: nothing to link.
            Err(_) => {
                skipped += 1;
                continue;
            }
        };
        let name = format!("k{i}");
        let k = aot::compile(&compiled.plan.lift(), &case.src, &declared(&types), &name)
            .unwrap_or_else(|e| panic!("{} `{}`: {e}", case.id, case.src));
        std::fs::write(dir.join(format!("{name}.o")), &k.object).unwrap();
        std::fs::write(dir.join(format!("{name}.h")), &k.header).unwrap();
        let expect = oracle(case).map(|t| t.bytes().to_vec());
        jobs.push(Job { case, name, expect });
    }
    (jobs, skipped)
}

/// A C program that runs every kernel three ways (whole range; split in two; a bad range) and
/// prints `INDEX STATUS SPLIT_STATUS SAME CANARY BAD_RANGE HEX` per kernel.
fn driver(jobs: &[Job]) -> String {
    let mut c = cases::c_driver_prelude(jobs.iter().map(|j| (j.name.as_str(), j.case)));
    for (i, j) in jobs.iter().enumerate() {
        let up = j.name.to_uppercase();
        let n = &j.name;
        let ptrs: Vec<String> = (0..j.case.inputs.len()).map(|k| format!("in{i}_{k}")).collect();
        let _ = writeln!(
            c,
            "  {{ const uint8_t *in[] = {{ {ptrs} NULL }};\n\
             \x20   long nb = (long){up}_OUT_NBYTES; int64_t mid = {up}_OUTER / 2;\n\
             \x20   memset(outa, 0xab, nb + 64); memset(outb, 0xcd, nb + 64);\n\
             \x20   int s = {n}(in, outa, 0, {up}_OUTER);\n\
             \x20   int s1 = {n}(in, outb, 0, mid); int s2 = {n}(in, outb, mid, {up}_OUTER);\n\
             \x20   int canary = 1; for (long b = nb; b < nb + 64; b++) canary &= outa[b] == 0xab;\n\
             \x20   int bad = {n}(in, outa, -1, 0) == {up}_STATUS_BAD_RANGE && {n}(in, outa, 0, {up}_OUTER + 1) == {up}_STATUS_BAD_RANGE\n\
             \x20       && {n}(in, outa, 1, 0) == {up}_STATUS_BAD_RANGE;\n\
             \x20   printf(\"{i} %d %d %d %d %d \", s, s1 ? s1 : s2, memcmp(outa, outb, nb) == 0, canary, bad); dump(outa, nb); printf(\"\\n\"); }}",
            ptrs = ptrs.iter().map(|p| format!("{p},")).collect::<String>(),
        );
    }
    c.push_str("  return 0;\n}\n");
    c
}

/// Builds, links and runs the batch; returns the failures.
fn check_batch(cases: &[Case], label: &str) -> (usize, usize) {
    let dir = scratch("aot", label);
    let (jobs, skipped) = build_kernels(cases, &dir);
    assert!(!jobs.is_empty(), "{label}: nothing compiled");
    let out = link_and_run(&dir, &driver(&jobs), jobs.iter().map(|j| j.name.as_str()));
    let mut failures = vec![];
    let mut seen = 0;
    for line in out.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let i: usize = f[0].parse().unwrap();
        let j = &jobs[i];
        seen += 1;
        let (status, split, same, canary, bad) = (f[1], f[2], f[3], f[4], f[5]);
        let bytes = f.get(6).copied().unwrap_or("");
        let problem = match &j.expect {
            _ if canary != "1" => Some("wrote past the output".to_string()),
            _ if bad != "1" => Some("a bad range was not refused".to_string()),
            Ok(_) if status != "0" => Some(format!("status {status}, expected success")),
            Ok(want) if bytes != hex(want) => Some(format!("bytes {bytes}, expected {}", hex(want))),
            Ok(_) if split != "0" || same != "1" => Some(format!("split run: status {split}, same {same}")),
            Err(code) if status != code.to_string() => Some(format!("status {status}, expected {code}")),
            _ => None,
        };
        if let Some(p) = problem {
            failures.push(format!("{} `{}`: {p}", j.case.id, j.case.src));
        }
    }
    assert_eq!(seen, jobs.len(), "{label}: the driver stopped early:\n{out}");
    assert!(
        failures.is_empty(),
        "{label}: {} of {} kernels fail:\n{}",
        failures.len(),
        jobs.len(),
        failures.join("\n")
    );
    symbol_checks(&dir, &jobs);
    (jobs.len(), skipped)
}

/// Each object exports exactly its kernel and needs only libc (`objects::check_object`).
fn symbol_checks(dir: &Path, jobs: &[Job]) {
    for j in jobs {
        check_object(dir, &j.name, &[j.name.as_str()]);
    }
    check_elf(dir, &jobs[0].name);
}

#[test]
fn seed_examples_as_linked_kernels() {
    let seeds = cases::seeds();
    assert!(seeds.len() >= 40, "{} runnable seed examples", seeds.len());
    let (ran, skipped) = check_batch(&seeds, "seeds");
    // Only program errors (expected by the seeds themselves) and parameters from values are skipped.
    assert!(ran >= 35, "{ran} seed kernels ran, {skipped} skipped");
}

#[test]
fn onnx_runtime_gathers_as_linked_kernels() {
    let cases = cases::onnx_gathers();
    let (ran, skipped) = check_batch(&cases, "onnx-gathers");
    // Skipped: the programs ONNX Runtime and slc reject.
    assert!(ran >= 250, "{ran} gather kernels ran, {skipped} skipped");
}

#[test]
fn golden_sample_as_linked_kernels() {
    let sample = cases::golden_sample(400, 0x05ee_da07);
    let (ran, skipped) = check_batch(&sample, "golden");
    assert!(ran >= 250, "{ran} golden kernels ran, {skipped} skipped");
}

fn slc_bin() -> &'static str {
    env!("CARGO_BIN_EXE_slc")
}

/// The command line: `slc compile` writes what a C program links, `slc eval -o` what it must
/// produce; both go through the released binary.
#[test]
fn slc_compile_matches_slc_eval() {
    let dir = scratch("aot", "cli");
    let data: Vec<u8> = (0..20).flat_map(|x| (x as f32).to_le_bytes()).collect();
    let npy =
        slc_runtime::encode_npy(&slc::Tensor::from_bytes(slc::DType::F32, &[4, 5], &data).unwrap()).unwrap();
    std::fs::write(dir.join("a.npy"), npy).unwrap();
    let src = "a[1:3, ::-1][[1, 0, -1]]";
    run(Command::new(slc_bin()).current_dir(&dir).args([
        "compile",
        src,
        "--shape",
        "a=f32[4,5]",
        "--target",
        "cpu",
        "-o",
        "kern.o",
        "--header",
        "kern.h",
        "--name",
        "kern",
    ]));
    run(Command::new(slc_bin()).current_dir(&dir).args(["eval", src, "-i", "a=a.npy", "-o", "want.npy"]));
    let header = std::fs::read_to_string(dir.join("kern.h")).unwrap();
    for needle in [
        src,
        "plan(a: f32[4, 5]) -> f32[3, 5]",
        "#define KERN_OUTER INT64_C(3)",
        "KERN_STATUS_INDEX_OUT_OF_RANGE 1",
    ] {
        assert!(header.contains(needle), "the header lacks `{needle}`:\n{header}");
    }
    let driver = r#"
#include <stdio.h>
#include "kern.h"
int main(void) {
    float a[20]; for (int i = 0; i < 20; i++) a[i] = (float)i;
    float out[KERN_OUT_NUMEL];
    const uint8_t *inputs[KERN_NUM_INPUTS] = { (const uint8_t *)a };
    int s = kern(inputs, (uint8_t *)out, 0, KERN_OUTER);
    fwrite(out, 1, sizeof out, stdout);
    return s;
}
"#;
    std::fs::write(dir.join("main.c"), driver).unwrap();
    run(Command::new("gcc").current_dir(&dir).args(["-Wall", "-Werror", "-o", "main", "main.c", "kern.o"]));
    let got = Command::new(dir.join("main")).output().unwrap();
    assert!(got.status.success());
    let want = slc_runtime::read_npy(&dir.join("want.npy")).unwrap();
    assert_eq!(got.stdout, want.bytes());

    // Usage errors: exit 2, nothing written.
    for bad in [&["--name", "9lives"][..], &["--shape", "a=f32[2]"][..]] {
        let out = Command::new(slc_bin())
            .current_dir(&dir)
            .args(["compile", "a[0]", "--shape", "a=f32[4,5]", "--target", "cpu", "-o", "bad.o"])
            .args(bad)
            .output()
            .unwrap();
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(!dir.join("bad.o").exists());
    }
    let out = Command::new(slc_bin())
        .current_dir(&dir)
        .args(["compile", "a[0]", "--shape", "a=f32[4,5]", "--target", "cpu"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// Inputs the program does not read are never touched (NULL is fine), and the declared order
/// is the call order even when the program uses the inputs in another order.
#[test]
fn declared_order_and_unused_inputs() {
    let types: Vec<(String, slc::types::TensorType)> = vec![
        ("unused".into(), "f64[1000]".parse().unwrap()),
        ("i".into(), "i32[2]".parse().unwrap()),
        ("x".into(), "u8[4]".parse().unwrap()),
    ];
    let src = "x[i]";
    let compiled = slc::compile(src, &types.iter().cloned().collect()).unwrap();
    assert_eq!(compiled.plan.inputs[0].name, "x", "the plan lists x first");
    let dir = scratch("aot", "order");
    let k = aot::compile(&compiled.plan.lift(), src, &declared(&types), "pick").unwrap();
    std::fs::write(dir.join("pick.o"), &k.object).unwrap();
    std::fs::write(dir.join("pick.h"), &k.header).unwrap();
    assert!(k.header.contains("#define PICK_IN_x 2") && k.header.contains("(not read by the program)"));
    let driver = r#"
#include <stdio.h>
#include "pick.h"
int main(void) {
    int32_t i[2] = { 3, -4 };
    uint8_t x[4] = { 10, 11, 12, 13 }, out[2] = { 0, 0 };
    const uint8_t *in[PICK_NUM_INPUTS] = { NULL, (const uint8_t *)i, x };
    int s = pick(in, out, 0, PICK_OUTER);
    i[1] = 4; /* out of range */
    int e = pick(in, out, 0, PICK_OUTER);
    printf("%d %d %d %d\n", s, out[0], out[1], e);
    return 0;
}
"#;
    std::fs::write(dir.join("main.c"), driver).unwrap();
    run(Command::new("gcc").current_dir(&dir).args(["-Wall", "-Werror", "-o", "main", "main.c", "pick.o"]));
    let out = run(&mut Command::new(dir.join("main")));
    assert_eq!(out.trim(), "0 13 10 1");
}

#[test]
fn bad_names_are_refused() {
    let types = vec![("a".to_string(), "u8[2]".parse().unwrap())];
    let compiled = slc::compile("a", &types.iter().cloned().collect()).unwrap();
    for bad in ["", "1a", "a-b", "a.b", "é"] {
        assert!(matches!(
            aot::compile(&compiled.plan.lift(), "a", &declared(&types), bad),
            Err(aot::AotError::BadName(_))
        ));
    }
    let twice = vec![types[0].clone(), types[0].clone()];
    assert!(matches!(
        aot::compile(&compiled.plan.lift(), "a", &declared(&twice), "k"),
        Err(aot::AotError::DuplicateInput(_))
    ));
}
