//! The C ABI end to end: C programs built with gcc against runtime/include/slc.h and the static
//! library create a session, prepare kernels for the seed examples and a golden sample, run them
//! into their own buffers, and print the bytes, which must equal the library interpreter's.
//! Error paths (bad programs with their rendered diagnostics, NULLs, wrong buffers, strided
//! inputs) are driven from C too.

#[path = "../../tests/support/cases.rs"]
mod cases;
#[path = "../../tests/support/scratch.rs"]
mod scratch_dir;
#[path = "../../tests/support/cuda_stand_in.rs"]
mod stand_in;

use cases::{Case, c_bytes, hex, oracle};
use scratch_dir::scratch;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Where cargo built libslc_c.a before running this test: beside the test executable
/// (target/<profile>/deps), or in target/<profile> after a `cargo build`.
fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let deps = exe.parent().unwrap().to_path_buf();
    let candidates = [deps.clone(), deps.parent().unwrap().to_path_buf()];
    let found = candidates.iter().find(|d| d.join("libslc_c.a").exists());
    found.unwrap_or_else(|| panic!("no libslc_c.a in {}", deps.display())).clone()
}

fn include_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../runtime/include")
}

/// Compiles `source` against slc.h and libslc_c.a, runs it, returns its standard output.
fn build_and_run(name: &str, source: &str) -> String {
    build_and_run_with(name, source, vec![])
}

/// [`build_and_run`], the program run with `env` added to its environment.
fn build_and_run_with(name: &str, source: &str, env: Vec<(String, String)>) -> String {
    let dir = scratch("capi", name);
    std::fs::write(dir.join("main.c"), source).unwrap();
    let lib = lib_dir();
    let out = Command::new("gcc")
        .current_dir(&dir)
        .args(["-std=c11", "-O0", "-Wall", "-Werror", "-o", "main", "main.c"])
        .arg(format!("-I{}", include_dir().display()))
        .arg(lib.join("libslc_c.a"))
        .args(["-lpthread", "-ldl", "-lm"])
        .output()
        .unwrap();
    assert!(out.status.success(), "gcc failed:\n{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(dir.join("main")).envs(env).output().unwrap();
    assert!(
        run.status.success(),
        "the C program failed ({:?}):\n{}\n{}",
        run.status,
        String::from_utf8_lossy(&run.stdout),
        String::from_utf8_lossy(&run.stderr)
    );
    String::from_utf8_lossy(&run.stdout).into_owned()
}

fn c_string(s: &str) -> String {
    format!("{s:?}") // Rust's escapes are valid C for the ASCII our programs use
}

/// A C program preparing and running a kernel per case; prints `INDEX STATUS HEX` per case.
fn driver(cases: &[Case]) -> String {
    let mut c = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n#include <string.h>\n#include \"slc.h\"\n\
         static void dump(const uint8_t *p, size_t n) { for (size_t i = 0; i < n; i++) printf(\"%02x\", p[i]); }\n\
         int main(void) {\n  slc_session *s = slc_session_new();\n  if (!s) return 1;\n",
    );
    for (i, case) in cases.iter().enumerate() {
        let _ = writeln!(c, "  {{");
        for (k, (_, t)) in case.inputs.iter().enumerate() {
            let dims: Vec<String> = t.shape().iter().map(|d| d.to_string()).collect();
            let _ = writeln!(
                c,
                "    static const int64_t shape{k}[] = {{ {} 0 }};",
                dims.join(", ") + if dims.is_empty() { "" } else { "," }
            );
            let _ = writeln!(c, "    static const uint8_t data{k}[] = {};", c_bytes(t.bytes()));
        }
        let sigs: Vec<String> = case
            .inputs
            .iter()
            .enumerate()
            .map(|(k, (n, t))| format!("{{ {}, {}, {}, shape{k} }}", c_string(n), code(t.dtype()), t.rank()))
            .collect();
        let tensors: Vec<String> = case
            .inputs
            .iter()
            .enumerate()
            .map(|(k, (_, t))| format!("{{ {}, {}, shape{k}, NULL, data{k} }}", code(t.dtype()), t.rank()))
            .collect();
        let n = case.inputs.len();
        let _ = writeln!(
            c,
            "    slc_input_sig sigs[] = {{ {} }};\n\
             \x20   slc_tensor ins[] = {{ {} }};\n\
             \x20   slc_kernel *k = slc_kernel_new(s, {}, sigs, {n});\n\
             \x20   if (!k) {{ printf(\"{i} compile %d\\n\", slc_last_error_status()); }}\n\
             \x20   else {{\n\
             \x20     /* The output's size for these inputs (a 0-d index input may make it depend on them). */\n\
             \x20     int64_t dims[64]; size_t nb = slc_dtype_size(slc_kernel_output_dtype(k));\n\
             \x20     int shaped = slc_kernel_output_shape_for(k, ins, {n}, dims);\n\
             \x20     for (size_t d = 0; shaped == SLC_OK && d < slc_kernel_output_rank(k); d++) nb *= (size_t)dims[d];\n\
             \x20     uint8_t *out = malloc(nb + 1);\n\
             \x20     int st = slc_kernel_run(k, ins, {n}, out, nb);\n\
             \x20     printf(\"{i} %d \", st); if (st == SLC_OK) dump(out, nb); printf(\"\\n\");\n\
             \x20     free(out); slc_kernel_free(k);\n\
             \x20   }}\n  }}",
            if sigs.is_empty() { "{ 0 }".to_string() } else { sigs.join(", ") },
            if tensors.is_empty() { "{ 0 }".to_string() } else { tensors.join(", ") },
            c_string(&case.src),
        );
    }
    c.push_str("  slc_session_free(s);\n  return 0;\n}\n");
    c
}

fn code(d: slc::DType) -> usize {
    slc::DType::ALL.iter().position(|&x| x == d).unwrap()
}

fn check_cases(cases: &[Case], label: &str) -> usize {
    let out = build_and_run(label, &driver(cases));
    let mut failures = vec![];
    let mut ran = 0;
    for line in out.lines() {
        let f: Vec<&str> = line.split(' ').collect();
        let case = &cases[f[0].parse::<usize>().unwrap()];
        if f[1] == "compile" {
            // Must be a case that does not compile from types alone.
            let types = case.types().into_iter().collect();
            assert!(slc::compile(&case.src, &types).is_err(), "{}: slc_kernel_new failed", case.id);
            continue;
        }
        ran += 1;
        let problem = match (oracle(case), f[1]) {
            (Ok(t), "0") if f.get(2).copied().unwrap_or("") == hex(t.bytes()) => None,
            (Ok(t), s) => Some(format!("status {s} {:?}, expected {}", f.get(2), hex(t.bytes()))),
            // A run-time error, or (a 0-d index input making the kernel generic) the error the
            // front end reports for the call's values, as a fixed compile would.
            (Err(_), "3" | "2") => None,
            (Err(_), s) => Some(format!("status {s}, expected SLC_ERR_RUNTIME or SLC_ERR_COMPILE")),
        };
        if let Some(p) = problem {
            failures.push(format!("{} `{}`: {p}", case.id, case.src));
        }
    }
    assert!(failures.is_empty(), "{label}: {} failures:\n{}", failures.len(), failures.join("\n"));
    ran
}

#[test]
fn seed_examples_through_the_c_abi() {
    let ran = check_cases(&cases::seeds(), "seeds");
    assert!(ran >= 35, "{ran} seed kernels ran");
}

#[test]
fn golden_sample_through_the_c_abi() {
    let ran = check_cases(&cases::golden_sample(200, 0xc0ffee), "golden");
    assert!(ran >= 120, "{ran} golden kernels ran");
}

/// Errors from C: diagnostics rendered against the expression, argument errors, strided and
/// mismatched inputs, session evaluation, and NULL everywhere.
#[test]
fn errors_views_and_sessions_from_c() {
    let program = r#"
#include <stdio.h>
#include <string.h>
#include "slc.h"
#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); return 1; } } while (0)
int main(void) {
    slc_session *s = slc_session_new();
    int64_t shape[2] = { 3, 4 };
    slc_input_sig sig = { "a", SLC_F32, 2, shape };

    /* A program error: NULL, the status, the code, the rendered diagnostic. */
    CHECK(slc_kernel_new(s, "a[1, 4]", &sig, 1) == NULL);
    CHECK(slc_last_error_status() == SLC_ERR_PROGRAM);
    CHECK(strcmp(slc_last_error_code(), "E0102") == 0);
    CHECK(strstr(slc_last_error_message(), "index 4 is out of bounds for axis 1 with size 4") != NULL);
    CHECK(strstr(slc_last_error_rendered(), "a[1, 4]") != NULL);
    CHECK(strstr(slc_last_error_rendered(), "^") != NULL || strstr(slc_last_error_rendered(), "\xe2\x94\xac") != NULL);

    /* NULLs and bad codes are argument errors, never crashes. */
    CHECK(slc_kernel_new(NULL, "a", &sig, 1) == NULL && slc_last_error_status() == SLC_ERR_ARGUMENT);
    CHECK(slc_kernel_new(s, NULL, &sig, 1) == NULL && slc_last_error_status() == SLC_ERR_ARGUMENT);
    CHECK(slc_kernel_new(s, "a", NULL, 1) == NULL && slc_last_error_status() == SLC_ERR_ARGUMENT);
    slc_input_sig bad = { "a", 99, 2, shape };
    CHECK(slc_kernel_new(s, "a", &bad, 1) == NULL && slc_last_error_status() == SLC_ERR_ARGUMENT);
    CHECK(slc_kernel_new(s, "\xff", &sig, 1) == NULL && slc_last_error_status() == SLC_ERR_ARGUMENT);
    CHECK(slc_session_set_backend(s, 7) == SLC_ERR_ARGUMENT);
    CHECK(slc_kernel_run(NULL, NULL, 0, NULL, 0) == SLC_ERR_ARGUMENT);
    CHECK(slc_kernel_output_dtype(NULL) == -1 && slc_kernel_output_shape(NULL) == NULL);
    slc_kernel_free(NULL); slc_session_free(NULL); slc_array_free(NULL);

    /* A kernel: output type queries, a run, a strided (transposed) input. */
    slc_kernel *k = slc_kernel_new(s, "a[1:3, ::-1]", &sig, 1);
    CHECK(k != NULL && slc_last_error_message() == NULL);
    CHECK(slc_kernel_output_dtype(k) == SLC_F32 && slc_kernel_output_rank(k) == 2);
    CHECK(slc_kernel_output_shape(k)[0] == 2 && slc_kernel_output_shape(k)[1] == 4);
    CHECK(slc_kernel_output_nbytes(k) == 32 && slc_kernel_num_inputs(k) == 1);
    float a[12], out[8];
    for (int i = 0; i < 12; i++) a[i] = (float)i;
    slc_tensor in = { SLC_F32, 2, shape, NULL, a };
    CHECK(slc_kernel_run(k, &in, 1, out, sizeof out) == SLC_OK);
    CHECK(out[0] == 7.0f && out[3] == 4.0f && out[4] == 11.0f);
    /* The same elements, stored transposed (4x3 memory read through byte strides). */
    float t[12];
    for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) t[j * 3 + i] = (float)(i * 4 + j);
    int64_t tstrides[2] = { 4, 12 };
    slc_tensor tin = { SLC_F32, 2, shape, tstrides, t };
    float out2[8];
    CHECK(slc_kernel_run(k, &tin, 1, out2, sizeof out2) == SLC_OK);
    CHECK(memcmp(out, out2, sizeof out) == 0);
    /* Byte strides that split elements, wrong shapes, wrong dtypes, wrong buffers. */
    int64_t odd[2] = { 16, 2 };
    slc_tensor oin = { SLC_F32, 2, shape, odd, a };
    CHECK(slc_kernel_run(k, &oin, 1, out, sizeof out) == SLC_ERR_RUNTIME);
    CHECK(strstr(slc_last_error_message(), "not a multiple of the element size") != NULL);
    int64_t other[2] = { 4, 3 };
    slc_tensor win = { SLC_F32, 2, other, NULL, a };
    CHECK(slc_kernel_run(k, &win, 1, out, sizeof out) == SLC_ERR_RUNTIME);
    CHECK(strstr(slc_last_error_message(), "f32[3, 4]") != NULL);
    slc_tensor din = { SLC_I32, 2, shape, NULL, a };
    CHECK(slc_kernel_run(k, &din, 1, out, sizeof out) == SLC_ERR_RUNTIME);
    CHECK(slc_kernel_run(k, &in, 1, out, sizeof out - 1) == SLC_ERR_RUNTIME);
    CHECK(slc_kernel_run(k, &in, 0, out, sizeof out) == SLC_ERR_RUNTIME);
    slc_tensor nin = { SLC_F32, 2, shape, NULL, NULL };
    CHECK(slc_kernel_run(k, &nin, 1, out, sizeof out) == SLC_ERR_RUNTIME);
    slc_kernel_free(k);

    /* Index values out of range: a run-time error with NumPy's message. */
    int64_t ishape[1] = { 2 };
    slc_input_sig sigs[2] = { sig, { "i", SLC_I64, 1, ishape } };
    slc_kernel *g = slc_kernel_new(s, "a[i]", sigs, 2);
    CHECK(g != NULL);
    int64_t idx[2] = { 2, 3 };
    slc_tensor gin[2] = { in, { SLC_I64, 1, ishape, NULL, idx } };
    float gout[8];
    CHECK(slc_kernel_run(g, gin, 2, gout, sizeof gout) == SLC_ERR_RUNTIME);
    CHECK(strstr(slc_last_error_message(), "index 3 is out of bounds for axis 0 with size 3") != NULL);
    CHECK(strcmp(slc_last_error_code(), "E0201") == 0);
    idx[1] = -3;
    CHECK(slc_kernel_run(g, gin, 2, gout, sizeof gout) == SLC_OK && gout[0] == 8.0f && gout[4] == 0.0f);
    slc_kernel_free(g);

    /* The interpreter gives the same bytes. */
    CHECK(slc_session_set_backend(s, SLC_BACKEND_INTERP) == SLC_OK);
    slc_kernel *ki = slc_kernel_new(s, "a[1:3, ::-1]", &sig, 1);
    float out3[8];
    CHECK(ki && slc_kernel_run(ki, &tin, 1, out3, sizeof out3) == SLC_OK && memcmp(out, out3, sizeof out) == 0);
    slc_kernel_free(ki);

    /* The GPU: the same bytes where there is one, E0209 (no CUDA driver) where there is none. */
    CHECK(slc_session_set_backend(s, SLC_BACKEND_CUDA) == SLC_OK);
    slc_kernel *kc = slc_kernel_new(s, "a[1:3, ::-1]", &sig, 1);
    if (kc) {
        float out4[8];
        CHECK(slc_kernel_run(kc, &tin, 1, out4, sizeof out4) == SLC_OK && memcmp(out, out4, sizeof out) == 0);
        slc_kernel_free(kc);
    } else {
        CHECK(slc_last_error_status() == SLC_ERR_RUNTIME && strcmp(slc_last_error_code(), "E0209") == 0);
        /* Device memory without a driver: E0209 too, before any pointer is touched. */
        slc_kernel *kd = slc_kernel_new(s, "a[1:3, ::-1]", &sig, 1);
        CHECK(kd == NULL);
        CHECK(slc_session_set_backend(s, SLC_BACKEND_JIT) == SLC_OK);
        kd = slc_kernel_new(s, "a[1:3, ::-1]", &sig, 1);
        CHECK(kd && slc_kernel_run_device(kd, &tin, 1, (void *)16, 32, NULL) == SLC_ERR_RUNTIME);
        CHECK(strcmp(slc_last_error_code(), "E0209") == 0 && strstr(slc_last_error_message(), "CUDA") != NULL);
        CHECK(slc_kernel_run_device(NULL, &tin, 1, (void *)16, 32, NULL) == SLC_ERR_ARGUMENT);
        slc_kernel_free(kd);
    }
    /* A store kernel updates its target in place; a bad index leaves it as it was. */
    CHECK(slc_session_set_backend(s, SLC_BACKEND_JIT) == SLC_OK);
    int64_t rshape[1] = { 2 };
    slc_input_sig ssig[2] = { { "a", SLC_F32, 2, shape }, { "i", SLC_I64, 1, rshape } };
    slc_kernel *ks = slc_kernel_new(s, "a[i, ::2] = -1", ssig, 2);
    float target[12], before[12];
    for (int i = 0; i < 12; i++) target[i] = (float)i;
    int64_t rows[2] = { 2, -3 };
    slc_tensor sin[2] = { { SLC_F32, 2, shape, NULL, target }, { SLC_I64, 1, rshape, NULL, rows } };
    CHECK(ks && slc_kernel_store(ks, sin, 2) == SLC_OK);
    CHECK(target[0] == -1.0f && target[1] == 1.0f && target[2] == -1.0f && target[8] == -1.0f && target[4] == 4.0f);
    memcpy(before, target, sizeof target);
    rows[0] = 1; rows[1] = 3;
    CHECK(slc_kernel_store(ks, sin, 2) == SLC_ERR_RUNTIME && memcmp(before, target, sizeof target) == 0);
    CHECK(strstr(slc_last_error_message(), "out of bounds") != NULL);
    CHECK(slc_kernel_store(NULL, sin, 2) == SLC_ERR_ARGUMENT);
    slc_kernel *kl = slc_kernel_new(s, "a[1:]", &sig, 1);
    CHECK(kl && slc_kernel_store(kl, &in, 1) == SLC_ERR_RUNTIME);
    slc_kernel_free(kl);
    slc_kernel_free(ks);
    CHECK(slc_session_set_backend(s, SLC_BACKEND_INTERP) == SLC_OK);

    /* Session evaluation over a bound copy. */
    CHECK(slc_session_bind(s, "a", &in) == SLC_OK);
    a[5] = 100.0f; /* the session holds a copy */
    slc_array *r = slc_session_eval(s, "a[::2, 1]");
    CHECK(r != NULL && slc_array_dtype(r) == SLC_F32 && slc_array_rank(r) == 1 && slc_array_shape(r)[0] == 2);
    CHECK(slc_array_nbytes(r) == 8 && ((const float *)slc_array_data(r))[1] == 9.0f);
    slc_array_free(r);
    CHECK(slc_session_eval(s, "b") == NULL && slc_last_error_status() == SLC_ERR_PROGRAM);
    CHECK(strstr(slc_last_error_rendered(), "b") != NULL);
    CHECK(strcmp(slc_dtype_name(SLC_BF16), "bf16") == 0 && slc_dtype_size(SLC_F64) == 8 && slc_dtype_name(15) == NULL);
    CHECK(strcmp(slc_dtype_name(SLC_C128), "c128") == 0 && slc_dtype_size(SLC_C128) == 16 && slc_dtype_size(SLC_C64) == 8);
    slc_session_free(s);
    printf("ok\n");
    return 0;
}
"#;
    assert_eq!(build_and_run("errors", program).trim(), "ok");
}

/// The README's C program (shipped as examples/capi/main.c) prints what the README says.
#[test]
fn the_readme_program_prints_what_the_readme_says() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let command = readme.lines().position(|l| l.starts_with("$ gcc") && l.contains("examples/capi/main.c"));
    let expected = readme.lines().nth(command.expect("the README builds examples/capi/main.c") + 1).unwrap();
    let source = std::fs::read_to_string(root.join("examples/capi/main.c")).unwrap();
    assert_eq!(build_and_run("readme", &source), format!("{expected}\n"));
}

/// A generic kernel from C: one kernel over many shapes, each output's dims asked first, every
/// element compared with the interpreter's; dims of one name that differ are refused (E0208).
#[test]
fn generic_kernels_from_c() {
    let shapes: Vec<(usize, usize)> = (0..40).map(|i| (i % 7, (i * 3) % 5)).collect();
    let mut c = String::from(
        "#include <stdio.h>\n#include <stdlib.h>\n#include \"slc.h\"\n\
         int main(void) {\n  slc_session *s = slc_session_new();\n\
           const char *names[] = {\"a\", \"b\"};\n  const char *types[] = {\"i32[N, M]\", \"i32[N]\"};\n\
           slc_kernel *k = slc_kernel_new_generic(s, \"a[1:, ::-1]\", names, types, 1);\n\
           if (!k || slc_kernel_output_rank(k) != 2 || slc_kernel_output_shape(k) != NULL) return 1;\n",
    );
    for (n, m) in &shapes {
        let _ = writeln!(
            c,
            "  {{ int32_t a[{cap}]; for (int i = 0; i < {cap}; i++) a[i] = i;\n\
                 int64_t shape[2] = {{{n}, {m}}}; slc_tensor t = {{SLC_I32, 2, shape, NULL, a}};\n\
                 int64_t dims[2]; if (slc_kernel_output_shape_for(k, &t, 1, dims) != SLC_OK) return 2;\n\
                 size_t count = (size_t)(dims[0] * dims[1]); int32_t out[{cap}];\n\
                 if (slc_kernel_run(k, &t, 1, out, count * 4) != SLC_OK) return 3;\n\
                 printf(\"%lld %lld:\", (long long)dims[0], (long long)dims[1]);\n\
                 for (size_t i = 0; i < count; i++) {{ printf(\" %d\", out[i]); }}\n printf(\"\\n\"); }}",
            cap = (n * m).max(1)
        );
    }
    c.push_str(
        "  slc_kernel *eq = slc_kernel_new_generic(s, \"b\", names, types, 2);\n\
           int64_t s2[2] = {3, 1}, s1[1] = {4}; int32_t x[4] = {0};\n\
           slc_tensor ts[2] = {{SLC_I32, 2, s2, NULL, x}, {SLC_I32, 1, s1, NULL, x}};\n\
           int32_t o[4];\n\
           int st = slc_kernel_run(eq, ts, 2, o, 16);\n printf(\"%d %s %s\\n\", st, slc_last_error_code(), slc_last_error_message());\n\
           slc_kernel_free(eq); slc_kernel_free(k); slc_session_free(s); return 0;\n}\n",
    );
    let printed = build_and_run("generic", &c);
    let mut lines = printed.lines();
    let mut s = slc::Session::with_executor(slc::Executor::Interpreter);
    for &(n, m) in &shapes {
        let values: Vec<i64> = (0..(n * m) as i64).collect();
        s.bind("a", slc::Tensor::from_i64s(slc::DType::I32, &[n, m], &values).unwrap());
        let want = s.eval("a[1:, ::-1]").unwrap();
        let elements: String = (0..want.numel()).map(|i| format!(" {}", want.int_at(i).unwrap())).collect();
        let expected = format!("{} {}:{elements}", want.shape()[0], want.shape()[1]);
        assert_eq!(lines.next(), Some(expected.as_str()), "{n}x{m}");
    }
    let refused = "3 E0208 `N` is 3 (axis 0 of `a`) but 4 (axis 0 of `b`)";
    assert_eq!(lines.next(), Some(refused), "dims of one name that differ: SLC_ERR_RUNTIME");
}

/// `slc_kernel_run_device` on device memory of the stand-in CUDA driver (tests/support/
/// cuda_stand_in.c; the program finds its entry points as a CUDA program linked with libcuda
/// would): dense and byte-strided inputs, a gather whose index is out of range (the host's
/// error and code), an output buffer too small, and a session on `SLC_BACKEND_CUDA`, each
/// against the host's bytes.
#[test]
fn kernels_on_device_memory_from_c() {
    if let Err(e) = stand_in::available() {
        eprintln!("skipped: the stand-in CUDA driver is not available ({e})");
        return;
    }
    let program = r#"
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include "slc.h"
#define CHECK(c) do { if (!(c)) { printf("FAIL line %d: %s\n", __LINE__, #c); return 1; } } while (0)
typedef unsigned long long dptr;
int main(void) {
    int (*cu_init)(unsigned) = (int (*)(unsigned))dlsym(RTLD_DEFAULT, "cuInit");
    int (*cu_alloc)(dptr *, size_t) = (int (*)(dptr *, size_t))dlsym(RTLD_DEFAULT, "cuMemAlloc_v2");
    int (*cu_htod)(dptr, const void *, size_t) = (int (*)(dptr, const void *, size_t))dlsym(RTLD_DEFAULT, "cuMemcpyHtoD_v2");
    int (*cu_dtoh)(void *, dptr, size_t) = (int (*)(void *, dptr, size_t))dlsym(RTLD_DEFAULT, "cuMemcpyDtoH_v2");
    CHECK(cu_init && cu_alloc && cu_htod && cu_dtoh && cu_init(0) == 0);
    slc_session *s = slc_session_new();
    int64_t shape[2] = { 3, 4 };
    slc_input_sig sig = { "a", SLC_F32, 2, shape };
    slc_kernel *k = slc_kernel_new(s, "a[1:3, ::-1]", &sig, 1);
    CHECK(k != NULL);
    float a[12], want[8], got[8];
    for (int i = 0; i < 12; i++) a[i] = (float)i;
    slc_tensor in = { SLC_F32, 2, shape, NULL, a };
    CHECK(slc_kernel_run(k, &in, 1, want, sizeof want) == SLC_OK);
    dptr da, dout;
    CHECK(cu_alloc(&da, sizeof a) == 0 && cu_htod(da, a, sizeof a) == 0 && cu_alloc(&dout, sizeof got) == 0);
    slc_tensor din = { SLC_F32, 2, shape, NULL, (const void *)da };
    CHECK(slc_kernel_run_device(k, &din, 1, (void *)dout, sizeof got, NULL) == SLC_OK);
    CHECK(cu_dtoh(got, dout, sizeof got) == 0 && memcmp(want, got, sizeof got) == 0);
    /* The same elements stored transposed, read through byte strides on the device. */
    float t[12];
    for (int i = 0; i < 3; i++) for (int j = 0; j < 4; j++) t[j * 3 + i] = (float)(i * 4 + j);
    int64_t tstrides[2] = { 4, 12 };
    dptr dt;
    CHECK(cu_alloc(&dt, sizeof t) == 0 && cu_htod(dt, t, sizeof t) == 0);
    slc_tensor tin = { SLC_F32, 2, shape, tstrides, (const void *)dt };
    memset(got, 0, sizeof got);
    CHECK(slc_kernel_run_device(k, &tin, 1, (void *)dout, sizeof got, NULL) == SLC_OK);
    CHECK(cu_dtoh(got, dout, sizeof got) == 0 && memcmp(want, got, sizeof got) == 0);
    CHECK(slc_kernel_run_device(k, &din, 1, (void *)dout, sizeof got - 4, NULL) == SLC_ERR_RUNTIME);
    slc_kernel_free(k);
    /* An index out of range: the host's message and code, from the device's error words. */
    int64_t ishape[1] = { 2 };
    slc_input_sig sigs[2] = { sig, { "i", SLC_I64, 1, ishape } };
    slc_kernel *g = slc_kernel_new(s, "a[i]", sigs, 2);
    CHECK(g != NULL);
    int64_t idx[2] = { 2, 3 };
    dptr di;
    CHECK(cu_alloc(&di, sizeof idx) == 0 && cu_htod(di, idx, sizeof idx) == 0);
    slc_tensor gin[2] = { din, { SLC_I64, 1, ishape, NULL, (const void *)di } };
    CHECK(slc_kernel_run_device(g, gin, 2, (void *)dout, 32, NULL) == SLC_ERR_RUNTIME);
    CHECK(strstr(slc_last_error_message(), "index 3 is out of bounds for axis 0 with size 3") != NULL);
    CHECK(strcmp(slc_last_error_code(), "E0201") == 0);
    idx[1] = -3;
    CHECK(cu_htod(di, idx, sizeof idx) == 0);
    CHECK(slc_kernel_run_device(g, gin, 2, (void *)dout, 32, NULL) == SLC_OK);
    CHECK(cu_dtoh(got, dout, sizeof got) == 0 && got[0] == 8.0f && got[4] == 0.0f);
    slc_kernel_free(g);
    /* A session on the GPU: host buffers in and out, the same bytes. */
    CHECK(slc_session_set_backend(s, SLC_BACKEND_CUDA) == SLC_OK);
    slc_kernel *kc = slc_kernel_new(s, "a[1:3, ::-1]", &sig, 1);
    CHECK(kc != NULL);
    memset(got, 0, sizeof got);
    CHECK(slc_kernel_run(kc, &in, 1, got, sizeof got) == SLC_OK && memcmp(want, got, sizeof got) == 0);
    slc_kernel_free(kc);
    slc_session_free(s);
    printf("ok\n");
    return 0;
}
"#;
    assert_eq!(build_and_run_with("device", program, stand_in::environment()), "ok\n");
}
