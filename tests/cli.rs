//! The `slc` binary's contract: outputs, exit codes, and no partial files.

use std::path::Path;

#[path = "support/command.rs"]
mod command;

use command::{slc, stderr, stdout};

fn scratch(name: &str) -> command::Scratch {
    command::scratch("cli", name)
}

fn write_input(dir: &Path, name: &str, t: &slc::Tensor) -> String {
    let path = dir.join(name);
    slc_runtime::write_npy(&path, t).unwrap();
    path.display().to_string()
}

fn arange(shape: &[usize]) -> slc::Tensor {
    let n: usize = shape.iter().product();
    let values: Vec<i64> = (0..n as i64).collect();
    slc::Tensor::from_i64s(slc::DType::I64, shape, &values).unwrap()
}

#[test]
fn eval_writes_the_result() {
    let dir = scratch("eval");
    let a = write_input(&dir, "a.npy", &arange(&[3, 4]));
    let out = dir.join("out.npy");
    let o = slc(&["eval", "a[1:, ::-1]", "-i", &format!("a={a}"), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = slc_runtime::read_npy(&out).unwrap();
    assert_eq!(t.shape(), &[2, 4]);
    let values: Vec<i128> = (0..8).map(|i| t.int_at(i).unwrap()).collect();
    assert_eq!(values, vec![7, 6, 5, 4, 11, 10, 9, 8]);
}

#[test]
fn eval_prints_the_result_with_its_type() {
    let dir = scratch("print");
    let a = write_input(&dir, "a.npy", &arange(&[3, 4]));
    let o = slc(&["eval", "a[::2, 1:3]", "-i", &format!("a={a}")]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(stdout(&o), "[[ 1  2]\n [ 9 10]]\ni64[2, 2]\n");
}

#[test]
fn zero_d_result_is_a_zero_d_file() {
    let dir = scratch("zerod");
    let a = write_input(&dir, "a.npy", &arange(&[3, 4]));
    let out = dir.join("s.npy");
    let o = slc(&["eval", "a[-1, -1]", "-i", &format!("a={a}"), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = slc_runtime::read_npy(&out).unwrap();
    assert_eq!((t.shape().len(), t.int_at(0)), (0, Some(11)));
}

#[test]
fn program_errors_exit_2_with_a_diagnostic_and_write_nothing() {
    let dir = scratch("err2");
    let a = write_input(&dir, "a.npy", &arange(&[3, 4]));
    let out = dir.join("out.npy");
    let o = slc(&["eval", "a[1, 4]", "-i", &format!("a={a}"), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(err.contains("index 4 is out of bounds for axis 1 with size 4"), "{err}");
    assert!(err.contains("a[1, 4]"), "the report shows the source: {err}");
    assert!(!out.exists());
}

#[test]
fn runtime_index_errors_exit_1_and_keep_an_existing_output() {
    let dir = scratch("err1");
    let a = write_input(&dir, "a.npy", &arange(&[3, 4]));
    let idx = slc::Tensor::from_i64s(slc::DType::I32, &[2], &[0, 7]).unwrap();
    let i = write_input(&dir, "i.npy", &idx);
    let out = dir.join("out.npy");
    std::fs::write(&out, b"previous").unwrap();
    let o = slc(&[
        "eval",
        "a[i][1:]",
        "-i",
        &format!("a={a}"),
        "-i",
        &format!("i={i}"),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("index 7 is out of bounds for axis 0 with size 3"), "{}", stderr(&o));
    assert_eq!(std::fs::read(&out).unwrap(), b"previous");
}

#[test]
fn bad_files_exit_1_naming_the_file() {
    let dir = scratch("badfile");
    let bogus = dir.join("bogus.npy");
    std::fs::write(&bogus, b"this is not numpy").unwrap();
    let o = slc(&["eval", "a", "-i", &format!("a={}", bogus.display())]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("bogus.npy"), "{}", stderr(&o));

    let missing = dir.join("missing.npy");
    let o = slc(&["eval", "a", "-i", &format!("a={}", missing.display())]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("missing.npy"), "{}", stderr(&o));
}

#[test]
fn output_into_a_missing_directory_fails_cleanly() {
    let dir = scratch("nodir");
    let a = write_input(&dir, "a.npy", &arange(&[3]));
    let out = dir.join("no/such/dir/out.npy");
    let o = slc(&["eval", "a", "-i", &format!("a={a}"), "-o", out.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("out.npy"), "{}", stderr(&o));
}

#[test]
fn output_over_an_input_is_refused() {
    let dir = scratch("overwrite");
    let a = write_input(&dir, "a.npy", &arange(&[3]));
    let before = std::fs::read(&a).unwrap();
    let o = slc(&["eval", "a[::-1]", "-i", &format!("a={a}"), "-o", &a]);
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(std::fs::read(&a).unwrap(), before);
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(slc(&["eval"]).status.code(), Some(2));
    assert_eq!(slc(&["plan", "a", "--shape", "a=f33[2]"]).status.code(), Some(2));
    assert_eq!(slc(&["frobnicate"]).status.code(), Some(2));
}

#[test]
fn plan_prints_a_parseable_plan() {
    let o = slc(&["plan", "a[1:][::2, 0][::-1]", "--shape", "a=f32[10,8]"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.starts_with("plan(a: f32[10, 8]) -> f32[5]"), "{text}");
    let plan = slc::plan::parse::parse(&text).unwrap();
    assert_eq!(plan.to_string(), text);
}

#[test]
fn subcommands_take_symbolic_shapes() {
    let o = slc(&["explain", "a[1:]", "--shape", "a=f32[N, M]"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("): f32[max(0, N-1), M]"), "{}", stdout(&o));
    let o = slc(&["plan", "a[:k, ::2]", "--shape", "a=f32[?, 6]", "--shape", "k=i64[]"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("_a0"), "{}", stdout(&o));
    // A program error on symbolic shapes is a diagnostic, as on concrete ones.
    let o = slc(&["plan", "gather_nd(a, j)", "--shape", "a=f32[N]", "--shape", "j=i64[K, T]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("E0129"), "{}", stderr(&o));
    // bench needs a size for each symbol; DirectML needs concrete shapes.
    let o = slc(&["bench", "a[1:]", "--shape", "a=f32[N, M]", "--size", "N=4"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--size M=SIZE"), "{}", stderr(&o));
    let o = slc(&["compile", "a[1:]", "--target", "dml", "--shape", "a=f32[N, M]"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("needs concrete shapes"), "{}", stderr(&o));
    // The generic kernel's loop nest and Cranelift IR: it loads its integers from a parameter block.
    let o = slc(&["plan", "a[1:]", "--shape", "a=f32[N, M]", "--clif"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("== clif"), "{}", stdout(&o));
    let o = slc(&["plan", "a[1:]", "--shape", "a=f32[N, min]"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn a_store_writes_the_updated_copy_and_leaves_the_input_file_alone() {
    let dir = scratch("store");
    let a = write_input(&dir, "a.npy", &arange(&[3, 4]));
    let i = write_input(&dir, "i.npy", &slc::Tensor::from_i64s(slc::DType::I64, &[3], &[2, 0, 2]).unwrap());
    let before = std::fs::read(&a).unwrap();
    let out = dir.join("y.npy");
    let args = ["-i", &format!("a={a}"), "-i", &format!("i={i}"), "-o", out.to_str().unwrap()];
    let o = slc(&[&["eval", "a[1:3, ::-1] = 0"][..], &args[..2], &args[4..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let t = slc_runtime::read_npy(&out).unwrap();
    let values: Vec<i128> = (0..12).map(|k| t.int_at(k).unwrap()).collect();
    assert_eq!(values, vec![0, 1, 2, 3, 0, 0, 0, 0, 0, 0, 0, 0]);
    // Index arrays with a duplicate: buffered `+=` adds once per element.
    let o = slc(&[&["eval", "a[i, 0] += 100"][..], &args[..]].concat());
    assert!(o.status.success(), "{}", stderr(&o));
    let t = slc_runtime::read_npy(&out).unwrap();
    assert_eq!((t.int_at(0), t.int_at(4), t.int_at(8)), (Some(100), Some(4), Some(108)));
    assert_eq!(std::fs::read(&a).unwrap(), before, "the input file is unchanged");
    // A float into integers: `=` truncates, as NumPy's `int(1.5)`; `+=` is refused, as NumPy
    // refuses to cast its float64 sum back (E0134).
    let o = slc(&["eval", "a[0, :2] = [1.5, -2.9]", "-i", &format!("a={a}"), "-o", out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let t = slc_runtime::read_npy(&out).unwrap();
    assert_eq!((t.int_at(0), t.int_at(1), t.int_at(2)), (Some(1), Some(-2), Some(2)));
    let o = slc(&["eval", "a[0] += 1.5", "-i", &format!("a={a}")]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("E0134"), "{}", stderr(&o));
    // Back ends without update kernels refuse, with a code: CUDA, DirectML.
    for (target, code) in [("cuda", "E0210"), ("dml", "E0407")] {
        let o = slc(&["compile", "a[1:] = 0", "--shape", "a=f32[4]", "--target", target]);
        assert!(!o.status.success() && stderr(&o).contains(code), "{target}: {}", stderr(&o));
    }
    // AOT objects compile `set`, `+=` and `*=` stores (tests/aot_stores.rs runs them) and refuse
    // the ones the interpreter runs (a complex `+=`, a scatter's reductions).
    let (obj, header) = (dir.join("k.o"), dir.join("k.h"));
    let (o_arg, h_arg) = (obj.to_str().unwrap(), header.to_str().unwrap());
    let o = slc(&[
        "compile",
        "a[1:] = 0",
        "--shape",
        "a=f32[4]",
        "--target",
        "cpu",
        "-o",
        o_arg,
        "--header",
        h_arg,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(std::fs::read_to_string(&header).unwrap().contains("#define SLC_KERNEL_STORE_TARGET 0"));
    std::fs::remove_file(&obj).unwrap();
    let o = slc(&["compile", "a[1:] += 1", "--shape", "a=c64[4]", "--target", "cpu", "-o", o_arg]);
    assert!(!o.status.success() && stderr(&o).contains("run on the interpreter"), "{}", stderr(&o));
    assert!(!obj.exists());
}

/// A mask too large to fold into the plan (its positions derived as the kernel runs) gives the
/// interpreter's result (which folds them), for a load and a store.
#[test]
fn a_large_mask_gives_the_interpreters_result() {
    let dir = scratch("large_mask");
    let a = write_input(&dir, "a.npy", &arange(&[100, 50]));
    let bits: Vec<u8> = (0..5000u32).map(|e| (e.wrapping_mul(2654435761) >> 31) as u8).collect();
    let m =
        write_input(&dir, "m.npy", &slc::Tensor::from_bytes(slc::DType::Bool, &[100, 50], &bits).unwrap());
    for src in ["a[m][::-1]", "a[m] = -1"] {
        let mut outputs = vec![];
        for backend in ["jit", "interp"] {
            let out = dir.join(format!("{backend}.npy"));
            let args = ["eval", src, "-i", &format!("a={a}"), "-i", &format!("m={m}"), "--backend", backend];
            let o = slc(&[&args[..], &["-o", out.to_str().unwrap()]].concat());
            assert!(o.status.success(), "{src} {backend}: {}", stderr(&o));
            outputs.push(std::fs::read(&out).unwrap());
        }
        assert_eq!(outputs[0], outputs[1], "{src}");
    }
}
