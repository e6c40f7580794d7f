//! `slc compile --target cuda`: the file it writes (kernels and host launcher) compiled under
//! `host_emulation.h` and called through its C ABI — `NAME_launch(inputs, out, dims, stream)`
//! and `NAME_status(stream, &check, &element)` — on host memory, against the interpreter:
//! results, dims refused, and each out-of-range policy's outcome; symbolic dims too (one
//! source for every shape, `NAME_output_dims` giving the output's).

#[path = "support/command.rs"]
mod command;

use command::{scratch, slc, stderr};
use slc::backend::cuda::{self, emulate};
use slc::fuzz::Draw;
use slc::sema::InputTypes;
use slc::types::TensorType;
use slc::{DType, Tensor};
use std::ffi::c_void;

type LaunchFn = unsafe extern "C" fn(*const *const c_void, *mut c_void, *const i64, *mut c_void) -> i32;
type StatusFn = unsafe extern "C" fn(*mut c_void, *mut i32, *mut u64) -> i32;
type OutputDimsFn = unsafe extern "C" fn(*const i64, *mut i64) -> i32;

/// What the launcher gave: the output, or `NAME_status`'s code with its check and element.
#[derive(Debug, PartialEq)]
enum Outcome {
    Ok(Tensor),
    Status(i32, i32, u64),
}

/// `slc compile EXPR --target cuda` for inputs `a` and `idx`, compiled and launched on them.
fn launch(expr: &str, a: &Tensor, idx: &Tensor, dims: Option<&[i64]>) -> Result<Outcome, i32> {
    launch_at(expr, a, idx, dims, 0)
}

/// [`launch`], the output written `shift` bytes past a 16-byte boundary (a caller's pointer).
fn launch_at(
    expr: &str,
    a: &Tensor,
    idx: &Tensor,
    dims: Option<&[i64]>,
    shift: usize,
) -> Result<Outcome, i32> {
    let ty = |t: &Tensor| format!("{}{:?}", t.dtype(), t.shape()).replace(' ', "");
    let kernel = Compiled::new(expr, &ty(a), &ty(idx));
    kernel.launch(expr, a, idx, dims, shift)
}

/// `slc compile EXPR --target cuda` for inputs `a` and `idx` of the declared types (dims may be
/// symbols), compiled under the emulation header and loaded.
struct Compiled {
    object: emulate::Emulator,
    launch: LaunchFn,
    status: StatusFn,
    output_dims: OutputDimsFn,
}

impl Compiled {
    fn new(expr: &str, a_type: &str, idx_type: &str) -> Compiled {
        let (object, header) = compile_and_load(expr, &[("a", a_type), ("idx", idx_type)]);
        assert!(header.contains(
            "int kern_launch(const void* const* inputs, void* out, const long long* dims, cudaStream_t stream);"
        ));
        assert!(header.contains("int kern_output_dims(const long long* dims, long long* out_dims);"));
        // SAFETY: the launcher's documented signatures.
        unsafe {
            Compiled {
                launch: std::mem::transmute::<*mut c_void, LaunchFn>(object.symbol("kern_launch")),
                status: std::mem::transmute::<*mut c_void, StatusFn>(object.symbol("kern_status")),
                output_dims: std::mem::transmute::<*mut c_void, OutputDimsFn>(
                    object.symbol("kern_output_dims"),
                ),
                object,
            }
        }
    }

    /// The output's dims for the inputs' `dims` (concatenated), or the launcher's refusal.
    fn output_dims(&self, dims: &[i64], rank: usize) -> Result<Vec<i64>, i32> {
        let mut out = vec![0i64; rank.max(1)];
        // SAFETY: `dims` holds the declared inputs' dims, `out` the output's rank.
        match unsafe { (self.output_dims)(dims.as_ptr(), out.as_mut_ptr()) } {
            0 => Ok(out[..rank].to_vec()),
            code => Err(code),
        }
    }

    /// Launches on `a` and `idx` (with their own dims, or `dims`), the output written `shift`
    /// bytes past a 16-byte boundary; the output has the interpreter's dims for them.
    fn launch(
        &self,
        expr: &str,
        a: &Tensor,
        idx: &Tensor,
        dims: Option<&[i64]>,
        shift: usize,
    ) -> Result<Outcome, i32> {
        let _ = &self.object;
        let types: InputTypes = [("a", a), ("idx", idx)]
            .iter()
            .map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape())))
            .collect();
        let compiled = slc::compile(expr, &types).unwrap();
        let shape: Vec<usize> = compiled.plan.shape.iter().map(|&d| d as usize).collect();
        let mut result = Tensor::zeros(compiled.plan.dtype, &shape).unwrap();
        let mut placed = vec![0u128; (shift + result.nbytes()).div_ceil(16).max(1)];
        // SAFETY: the words hold at least `shift` plus the output's bytes.
        let out = unsafe { placed.as_mut_ptr().cast::<u8>().add(shift) };
        let given: Vec<i64> = [a, idx].iter().flat_map(|t| t.shape().iter().map(|&d| d as i64)).collect();
        let dims = dims.unwrap_or(&given);
        let inputs = [a.as_ptr().cast::<c_void>(), idx.as_ptr().cast::<c_void>()];
        // SAFETY: host pointers stand for device pointers under emulation; the inputs have the
        // given dims (or the launcher refuses the dims before reading anything).
        let code = unsafe { (self.launch)(inputs.as_ptr(), out.cast(), dims.as_ptr(), std::ptr::null_mut()) };
        // SAFETY: as above; the launcher wrote the output there.
        let written = unsafe { std::slice::from_raw_parts(out, result.nbytes()) };
        result.bytes_mut().copy_from_slice(written);
        if code != 0 {
            return Err(code);
        }
        let (mut check, mut element) = (-1i32, 0u64);
        // SAFETY: as above.
        let code = unsafe { (self.status)(std::ptr::null_mut(), &mut check, &mut element) };
        Ok(if code == 0 { Outcome::Ok(result) } else { Outcome::Status(code, check, element) })
    }
}

/// `slc compile EXPR --target cuda --name kern` for inputs of the declared types (`shapes`,
/// in order), compiled under the emulation header and loaded; and the header written.
fn compile_and_load(expr: &str, shapes: &[(&str, &str)]) -> (emulate::Emulator, String) {
    let key = format!("{expr}{shapes:?}");
    let dir = scratch(
        "cuda_compile",
        &format!(
            "{:x}",
            key.len() * 31 + key.bytes().enumerate().map(|(i, b)| (i + 1) * b as usize).sum::<usize>()
        ),
    );
    let cu = dir.join("k.cu");
    let h = dir.join("k.h");
    let mut args = vec!["compile".to_string(), expr.to_string()];
    for (name, ty) in shapes {
        args.extend(["--shape".to_string(), format!("{name}={ty}")]);
    }
    let paths = [cu.to_str().unwrap(), h.to_str().unwrap()];
    args.extend(
        ["--target", "cuda", "--name", "kern", "-o", paths[0], "--header", paths[1]].map(String::from),
    );
    let out = slc(&args.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(out.status.success(), "{}", stderr(&out));
    let header = std::fs::read_to_string(&h).unwrap();
    let text = format!("{}{}", cuda::HOST_EMULATION_H, std::fs::read_to_string(&cu).unwrap());
    let object = emulate::load(&text, &dir).unwrap_or_else(|e| panic!("{e}"));
    (object, header)
}

fn interp(expr: &str, a: &Tensor, idx: &Tensor) -> Result<Tensor, slc::Error> {
    let inputs = [("a".to_string(), a.clone()), ("idx".to_string(), idx.clone())].into_iter().collect();
    let types: InputTypes = [("a", a), ("idx", idx)]
        .iter()
        .map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape())))
        .collect();
    slc::compile(expr, &types)?.run(&inputs)
}

fn tensors(values: &[i64]) -> (Tensor, Tensor) {
    let a = slc::fuzz::fill(DType::F32, &[4, 5], 7);
    let idx = Tensor::from_i64s(DType::I64, &[values.len()], values).unwrap();
    (a, idx)
}

#[test]
fn the_launcher_gives_the_interpreters_results_for_every_policy() {
    let (a, idx) = tensors(&[4, -1, 9, -7, 0]);
    for mode in ["clamp", "wrap", "zero"] {
        let expr = format!("gather(a, idx, axis=1, mode={mode})[::-1, 1:]");
        let want = interp(&expr, &a, &idx).unwrap();
        assert_eq!(launch(&expr, &a, &idx, None), Ok(Outcome::Ok(want)), "{expr}");
    }
}

#[test]
fn a_callers_output_off_a_16_byte_boundary_takes_element_stores() {
    // f32 elements, grouped by four per 16-byte store; 4 rows of 3: the last group is partial.
    let (a, idx) = tensors(&[3, 0, 1]);
    for expr in ["a[:, 1:-1]", "a[:, idx]", "a[::-1, :4][:, ::-1]"] {
        let want = interp(expr, &a, &idx).unwrap();
        for shift in [0, 4, 8] {
            assert_eq!(
                launch_at(expr, &a, &idx, None, shift),
                Ok(Outcome::Ok(want.clone())),
                "{expr} at {shift}"
            );
        }
    }
}

#[test]
fn an_index_out_of_range_is_reported_with_its_check_and_first_element() {
    let (a, idx) = tensors(&[1, 2, 9, -7, 0]);
    let expr = "a[:, idx]";
    let err = interp(expr, &a, &idx).unwrap_err();
    assert!(err.to_string().contains("index 9 is out of bounds for axis 1 with size 5"), "{err}");
    // Check 0 fails first at element 2 (the 9; the -7 at element 3 fails too).
    assert_eq!(launch(expr, &a, &idx, None), Ok(Outcome::Status(1, 0, 2)));
}

#[test]
fn dims_other_than_the_compiled_ones_are_refused() {
    let (a, idx) = tensors(&[0, 1]);
    assert_eq!(launch("a[idx]", &a, &idx, Some(&[4, 6, 2])), Err(-1));
}

/// One source for every shape: `--shape a=f32[N, M]` compiled once, launched on several
/// shapes (empty ones included) with the interpreter's results and errors; dims its
/// requirements refuse, and negative ones, are refused before anything runs.
#[test]
fn symbolic_shapes_launch_one_source_on_every_shape() {
    for expr in
        ["a[1:, ::-1][:, idx]", "a[::2, idx]", "gather(a, idx, axis=1, mode=wrap)[::-1]", "a[..., 1:-1]"]
    {
        let kernel = Compiled::new(expr, "f32[N,M]", "i64[K]");
        for (n, m, k) in [(4, 5, 3), (1, 7, 2), (9, 3, 5), (3, 3, 0), (0, 4, 2), (6, 16, 7)] {
            let a = slc::fuzz::fill(DType::F32, &[n, m], (n * m) as u64);
            let values: Vec<i64> = (0..k as i64).map(|i| (i * 5 + 1) % (m as i64 + 1) - 1).collect();
            let idx = Tensor::from_i64s(DType::I64, &[k], &values).unwrap();
            let dims = [n as i64, m as i64, k as i64];
            match interp(expr, &a, &idx) {
                Ok(want) => {
                    let shape: Vec<i64> = want.shape().iter().map(|&d| d as i64).collect();
                    assert_eq!(kernel.output_dims(&dims, shape.len()), Ok(shape), "{expr} on {dims:?}");
                    assert_eq!(
                        kernel.launch(expr, &a, &idx, None, 0),
                        Ok(Outcome::Ok(want)),
                        "{expr} on {dims:?}"
                    );
                }
                Err(e) => {
                    let out = kernel.launch(expr, &a, &idx, None, 0);
                    assert!(
                        matches!(out, Ok(Outcome::Status(1, ..))),
                        "{expr} on {dims:?}: {e}, launcher {out:?}"
                    );
                }
            }
        }
        assert_eq!(kernel.output_dims(&[-1, 4, 2], 2), Err(-1), "{expr}");
    }
    // A requirement (the integer index needs a row) fails before any launch.
    let kernel = Compiled::new("a[2]", "f32[N,M]", "i64[K]");
    assert_eq!(kernel.output_dims(&[2, 4, 1], 1), Err(-1));
    assert_eq!(kernel.output_dims(&[3, 4, 1], 1), Ok(vec![4]));
    let (a, idx) = (Tensor::zeros(DType::F32, &[2, 4]).unwrap(), Tensor::zeros(DType::I64, &[1]).unwrap());
    assert_eq!(kernel.launch("a[1]", &a, &idx, Some(&[2, 4, 1]), 0), Err(-1));
}

type ScalarLaunchFn =
    unsafe extern "C" fn(*const *const c_void, *mut c_void, *const i64, *const i64, *mut c_void) -> i32;
type ScalarOutputDimsFn = unsafe extern "C" fn(*const i64, *const i64, *mut i64) -> i32;

/// Run-time scalar bounds (`a[:k]`, `k=i64[]`; `j=i32[]`) are host values the
/// launcher and `NAME_output_dims` take in `scalars`: one source for every shape and bound,
/// against the interpreter run on tensors holding those values (negative, past the ends, the
/// extremes of i64 included); bounds the program refuses are refused before any launch.
#[test]
fn run_time_scalar_bounds_are_host_values() {
    let shapes = [("a", "f32[N,M]"), ("j", "i32[]"), ("k", "i64[]")];
    let extremes = [i64::MIN, i64::MIN + 1, -1 << 40, i64::MAX];
    for expr in ["a[:k]", "a[k:, j:-1]", "a[-k:, ::-1][j:]", "a[::2, j:][:, :k]"] {
        let (object, header) = compile_and_load(expr, &shapes);
        assert!(header.contains("const long long* dims, const long long* scalars, cudaStream_t stream);"));
        assert!(header.contains("scalars[0] = j[()], scalars[1] = k[()]") || !expr.contains('j'));
        // SAFETY: the launcher's documented signatures for a program with run-time scalars.
        let (launch, output_dims, status) = unsafe {
            (
                std::mem::transmute::<*mut c_void, ScalarLaunchFn>(object.symbol("kern_launch")),
                std::mem::transmute::<*mut c_void, ScalarOutputDimsFn>(object.symbol("kern_output_dims")),
                std::mem::transmute::<*mut c_void, StatusFn>(object.symbol("kern_status")),
            )
        };
        let mut rng = slc::fuzz::Rng::new(expr.len() as u64);
        for round in 0..60 {
            let (n, m) = (rng.below(7) as usize, rng.below(6) as usize);
            let value = |r: &mut slc::fuzz::Rng| match r.below(8) {
                0 => extremes[r.below(4) as usize],
                _ => r.below(19) as i64 - 9,
            };
            let (j, k) = (value(&mut rng) % 7, value(&mut rng));
            let a = slc::fuzz::fill(DType::F32, &[n, m], round);
            let kt = Tensor::from_i64s(DType::I64, &[], &[k]).unwrap();
            let jt = Tensor::from_i64s(DType::I32, &[], &[j]).unwrap();
            // The oracle: the program with the values written in, through the concrete pipeline.
            let bound = expr.replace('j', &format!("({j})"));
            let bound = bound.replace('k', &format!("({k})"));
            let types: InputTypes =
                [("a".to_string(), TensorType::of(DType::F32, &[n, m]))].into_iter().collect();
            let want =
                slc::compile(&bound, &types).and_then(|c| c.run(&[("a".to_string(), a.clone())].into()));
            let dims = [n as i64, m as i64];
            // The program's scalars, in the header's order.
            let scalars: Vec<i64> = if expr.contains('j') { vec![j, k] } else { vec![k] };
            let case = format!("{expr} on [{n}, {m}], j={j}, k={k}");
            let mut out_dims = [0i64; 2];
            // SAFETY: `dims`, `scalars` and `out_dims` as the header declares them.
            let code = unsafe { output_dims(dims.as_ptr(), scalars.as_ptr(), out_dims.as_mut_ptr()) };
            let Ok(want) = want.as_ref() else {
                assert_eq!(code, -1, "{case}: the interpreter refused it: {want:?}");
                continue;
            };
            let shape: Vec<i64> = want.shape().iter().map(|&d| d as i64).collect();
            assert_eq!((code, &out_dims[..shape.len()]), (0, &shape[..]), "{case}");
            let mut out = vec![0u8; want.nbytes().max(1)];
            let pointers = [a.as_ptr().cast::<c_void>(), jt.as_ptr().cast(), kt.as_ptr().cast()];
            // SAFETY: host pointers stand for device pointers under emulation; `out` holds the
            // output's bytes.
            let code = unsafe {
                launch(
                    pointers.as_ptr(),
                    out.as_mut_ptr().cast(),
                    dims.as_ptr(),
                    scalars.as_ptr(),
                    std::ptr::null_mut(),
                )
            };
            assert_eq!(code, 0, "{case}");
            let (mut check, mut element) = (-1i32, 0u64);
            // SAFETY: as above.
            assert_eq!(unsafe { status(std::ptr::null_mut(), &mut check, &mut element) }, 0, "{case}");
            assert_eq!(&out[..want.nbytes()], want.bytes(), "{case}");
        }
    }
}
