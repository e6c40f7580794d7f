//! Generic JIT kernels (issue 20) agree with the reference interpreter on the concrete plan of
//! each call (`GenericPlan::bind`, `plan::verify`, `backend::interp`), over random shapes (0
//! and 1 included) and run-time bounds; the slices also with the concrete pipeline on the same
//! program text. One kernel serves every shape: a cache compiles it once.

#[path = "support/generic_plans.rs"]
mod generic_plans;

use generic_plans::{Dim, Program, gather_plan, programs};
use proptest::prelude::*;
use slc::backend::jit::{self, JitError, JitKernel, KernelCache};
use slc::backend::{RuntimeError, interp};
use slc::fuzz::{Draw, Rng};
use slc::plan::{GenericPlan, VerifiedGenericPlan, verify, verify_generic};
use slc::types::OobMode;
use slc::types::sym::Env;
use slc_runtime::{DType, Tensor};

/// The JIT kernel of `plan` for inputs in plan order.
fn compile_plan(plan: &VerifiedGenericPlan) -> Result<JitKernel, JitError> {
    jit::compile(plan, &jit::plan_order(plan))
}

/// The inputs of one call of `p`: each symbolic dim drawn (0 and 1 often), data random, index
/// values in `[-2n, 2n)` for an axis of `n`, scalars in `[-2n, 2n]` (a slice's bounds beyond
/// the axis included).
fn draw_inputs(p: &Program, rng: &mut Rng) -> (Vec<Tensor>, Vec<i64>) {
    let mut values = std::collections::HashMap::new();
    let mut dim = |d: Dim, rng: &mut Rng| match d {
        Dim::Const(c) => c,
        Dim::Sym(s) => *values.entry(s).or_insert_with(|| match rng.below(4) {
            0 => rng.range(0, 2),
            1 => rng.range(2, 5),
            _ => rng.range(0, 40),
        }),
    };
    let mut tensors = vec![];
    let mut scalars = vec![];
    let first: Vec<i64> = p.dims[0].iter().map(|&d| dim(d, rng)).collect();
    let span = first.iter().copied().max().unwrap_or(1).max(1);
    for (decl, dims) in p.plan.inputs.iter().zip(&p.dims) {
        let shape: Vec<usize> = dims.iter().map(|&d| dim(d, rng) as usize).collect();
        let numel: usize = shape.iter().product();
        let t = if decl.dtype.is_integer() && !dims.is_empty() && decl.name != "a" {
            let values: Vec<i64> = (0..numel).map(|_| rng.range(-2 * span, 2 * span)).collect();
            Tensor::from_i64s(decl.dtype, &shape, &values).unwrap()
        } else if dims.is_empty() {
            let v = rng.range(-2 * span, 2 * span + 1);
            scalars.push(v);
            Tensor::from_i64s(decl.dtype, &shape, &[v]).unwrap()
        } else {
            let bytes: Vec<u8> = (0..numel * decl.dtype.width()).map(|_| rng.bits() as u8).collect();
            Tensor::from_bytes(decl.dtype, &shape, &bytes).unwrap()
        };
        tensors.push(t);
    }
    (tensors, scalars)
}

/// The oracle: the interpreter on the concrete plan of this call, or the reason there is none.
fn interpreted(plan: &GenericPlan, inputs: &[&Tensor], scalars: &[i64]) -> Result<Tensor, String> {
    let mut env = Env::new();
    for (decl, t) in plan.inputs.iter().zip(inputs) {
        for (d, &n) in decl.shape.iter().zip(t.shape()) {
            if let Some(s) = d.as_sym() {
                env.bind(s.clone(), n as i64);
            }
        }
    }
    if let Some(&k) = scalars.first() {
        env = env.scalar("k", k);
    }
    let concrete = plan.bind(&env).map_err(|e| format!("shape mismatch: {e}"))?;
    let verified = verify(concrete).map_err(|e| format!("does not verify: {e}"))?;
    interp::run(&verified, inputs).map_err(|e| format!("run: {e}"))
}

fn check_program(p: &Program, kernel: &JitKernel, seed: u64) {
    let mut rng = Rng::new(seed);
    let (tensors, scalars) = draw_inputs(p, &mut rng);
    let inputs: Vec<&Tensor> = tensors.iter().collect();
    let shapes: Vec<&[usize]> = tensors.iter().map(Tensor::shape).collect();
    let expected = interpreted(&p.plan, &inputs, &scalars);
    for threads in [1, 3] {
        let got = kernel.run(&inputs, threads);
        match (&expected, &got) {
            (Ok(e), Ok(g)) => {
                assert_eq!(e.shape(), g.shape(), "{} on {shapes:?} {scalars:?}", p.name);
                assert_eq!(e.bytes(), g.bytes(), "{} on {shapes:?} {scalars:?}", p.name);
            }
            (Err(_), Err(_)) => {}
            _ => panic!(
                "{} on {shapes:?} {scalars:?}: interpreter {expected:?}, generic kernel {got:?}",
                p.name
            ),
        }
    }
    // The slices are the concrete pipeline's programs too.
    if let (Some(src), Ok(e)) = (p.src, &expected) {
        // Only `a`: the scalars are written into the text.
        let a = &tensors[0];
        let dims: Vec<String> = a.shape().iter().map(usize::to_string).collect();
        let ty = format!("{}[{}]", a.dtype(), dims.join(","));
        let types: slc::sema::InputTypes = [("a".to_string(), ty.parse().unwrap())].into_iter().collect();
        let src = src(&scalars);
        let concrete = slc::compile(&src, &types).unwrap_or_else(|e| panic!("{src}: {e}"));
        let out = interp::run(&concrete.plan, &[a]).unwrap();
        assert_eq!((out.shape(), out.bytes()), (e.shape(), e.bytes()), "{src} on {shapes:?}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]
    #[test]
    fn generic_kernels_equal_the_interpreter(seed in any::<u64>()) {
        for p in programs() {
            let plan = verify_generic(p.plan.clone()).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            let kernel = jit::compile(&plan, &jit::plan_order(&plan)).unwrap_or_else(|e| panic!("{}: {e}", p.name));
            for call in 0..8 {
                check_program(&p, &kernel, seed.wrapping_add(call));
            }
        }
    }
}

/// A program run on 1,000 shapes compiles once, and every run is right.
#[test]
fn one_compile_for_a_thousand_shapes() {
    let cache = KernelCache::default();
    let p = &programs()[0];
    let plan = verify_generic(p.plan.clone()).unwrap();
    let mut rng = Rng::new(7);
    for n in 0..1000 {
        let kernel = cache.get_or_compile(&plan, &jit::plan_order(&plan)).unwrap();
        let shape = [n % 37, n / 37 + rng.below(3) as usize];
        let bytes: Vec<u8> = (0..shape[0] * shape[1] * 4).map(|_| rng.bits() as u8).collect();
        let a = Tensor::from_bytes(DType::F32, &shape, &bytes).unwrap();
        let expected = interpreted(&p.plan, &[&a], &[]).unwrap();
        let got = kernel.run(&[&a], 1).unwrap();
        assert_eq!((got.shape(), got.bytes()), (expected.shape(), expected.bytes()), "{shape:?}");
    }
    assert_eq!(cache.compiles(), 1);
}

/// Equal names that get different sizes are refused, as are dims beside a constant.
#[test]
fn mismatched_dims_are_refused() {
    let p = gather_plan([Dim::Sym("N"), Dim::Sym("N")], (DType::I64, Dim::Const(2)), 0, OobMode::Error);
    let kernel = compile_plan(&verify_generic(p).unwrap()).unwrap();
    let a = Tensor::zeros(DType::F32, &[3, 4]).unwrap();
    let idx = Tensor::from_i64s(DType::I64, &[2], &[0, 1]).unwrap();
    let err = kernel.run(&[&a, &idx], 1).unwrap_err().to_string();
    assert!(err.contains("`N` is 3"), "{err}");
    let idx3 = Tensor::from_i64s(DType::I64, &[3], &[0, 1, 2]).unwrap();
    let a = Tensor::zeros(DType::F32, &[3, 3]).unwrap();
    let err = kernel.run(&[&a, &idx3], 1).unwrap_err().to_string();
    assert!(err.contains("not 2"), "{err}");
    // The same kernel still runs conforming inputs.
    assert_eq!(kernel.run(&[&a, &idx], 1).unwrap().shape(), [2, 3]);
}

/// Generic nests are scheduled by the same passes: dense axes merge by the normal forms'
/// equality, strategies that need a constant take the constant dims, the others fall back; every
/// nest takes a parameter block.
#[test]
fn generic_nests_choose_strategies_by_what_is_known() {
    let expected = [
        // Rows of a symbolic length reversed are tiles of a symbolic size (rows of 2 f32 shuffle).
        ("reversed", "run [(reversed-tiles if tiles of 2-8 B, else strided reverse), joined]"),
        ("strided", "run [serial, strided]"),
        (
            "crop (a symbolic run)",
            "run [(block-rows if <= 64 B, else serial), block (inline if <= 64 B, loop if <= 256 KiB, else memcpy)]",
        ),
        ("whole rows (merged axes)", "run [block memcpy]"),
        ("short rows of a constant width", "run [block-rows, joined]"),
        ("reversed pixels", "run [reversed-tiles, joined]"),
        (
            "reversed pixels of symbolic channels",
            "run [serial, (reversed-tiles if tiles of 2-8 B, else strided reverse), joined]",
        ),
        ("gather, zero mode", "run [serial, guarded-gather (ahead if the call's span qualifies)]"),
        ("gather, fixed columns", "run [index-table, joined]"),
        ("a column", "run [strided]"),
    ];
    let target = slc::backend::loopnest::Target { byte_shuffles: true };
    for p in programs() {
        let Some((_, run)) = expected.iter().find(|(name, _)| *name == p.name) else { continue };
        let plan = verify_generic(p.plan.clone()).unwrap();
        let nest = slc::backend::loopnest::schedule_generic(&plan, target, |_, _| {});
        assert!(nest.takes_params(), "{}:\n{nest}", p.name);
        assert_eq!(nest.to_string().lines().nth(1).map(str::trim), Some(*run), "{}:\n{nest}", p.name);
    }
}

fn program(name: &str) -> Program {
    programs().into_iter().find(|p| p.name == name).unwrap_or_else(|| panic!("no program {name}"))
}

fn compiled(p: &Program) -> JitKernel {
    compile_plan(&verify_generic(p.plan.clone()).unwrap()).unwrap()
}

fn random_tensor(dtype: DType, shape: &[usize], rng: &mut Rng) -> Tensor {
    let bytes: Vec<u8> =
        (0..shape.iter().product::<usize>() * dtype.width()).map(|_| rng.bits() as u8).collect();
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

/// A call with the dims of the call before but other scalar values binds again.
#[test]
fn the_last_binding_serves_only_the_same_dims_and_scalars() {
    let p = program("run-time bounds");
    let kernel = compiled(&p);
    let a = random_tensor(DType::I32, &[6, 7], &mut Rng::new(3));
    for k in [2, 2, -3, -3, 9, 0, 2] {
        let kt = Tensor::from_i64s(DType::I64, &[], &[k]).unwrap();
        let expected = interpreted(&p.plan, &[&a, &kt], &[k]).unwrap();
        let got = kernel.run(&[&a, &kt], 1).unwrap();
        assert_eq!((got.shape(), got.bytes()), (expected.shape(), expected.bytes()), "k = {k}");
    }
}

/// Outputs of a MiB and more split across threads, as concrete kernels do.
#[test]
fn large_outputs_split_across_threads() {
    for name in ["crop (a symbolic run)", "reversed pixels", "gather, zero mode"] {
        let p = program(name);
        let kernel = compiled(&p);
        let mut rng = Rng::new(11);
        let a = random_tensor(p.plan.inputs[0].dtype, &[700, 800, 3][..p.dims[0].len()], &mut rng);
        let mut inputs = vec![a];
        if p.plan.inputs.len() > 1 {
            let idx: Vec<i64> = (0..900).map(|_| rng.range(-850, 850)).collect();
            inputs.push(Tensor::from_i64s(p.plan.inputs[1].dtype, &[900], &idx).unwrap());
        }
        let inputs: Vec<&Tensor> = inputs.iter().collect();
        let expected = interpreted(&p.plan, &inputs, &[]).unwrap();
        assert!(expected.nbytes() >= 1 << 20, "{name}");
        let got = kernel.run(&inputs, 4).unwrap();
        assert_eq!(got.bytes(), expected.bytes(), "{name}");
    }
}

/// Dims at and past the limits (empty tensors with a huge axis): a shape mismatch where the
/// binding fails (an integer of the plan would not fit in 64 bits, a dim passes `MAX_DIM`), as
/// for the interpreter, or an output too large to allocate, and never a crash; an empty output
/// otherwise.
#[test]
fn dims_at_the_limits() {
    use slc::types::sym::MAX_DIM;
    for p in programs() {
        let kernel = compiled(&p);
        for huge in [MAX_DIM, MAX_DIM + 1, i64::MAX, 1 << 40] {
            let shape: Vec<usize> = match p.dims[0].len() {
                2 => vec![0, huge as usize],
                _ => vec![huge as usize, 0, 3],
            };
            let Ok(a) = Tensor::zeros(p.plan.inputs[0].dtype, &shape) else { continue };
            let mut inputs = vec![a];
            for decl in &p.plan.inputs[1..] {
                let shape: Vec<usize> =
                    decl.shape.iter().map(|d| d.as_const().unwrap_or(2) as usize).collect();
                let n = shape.iter().product();
                inputs.push(Tensor::from_i64s(decl.dtype, &shape, &vec![1; n]).unwrap());
            }
            let inputs: Vec<&Tensor> = inputs.iter().collect();
            let expected = interpreted(&p.plan, &inputs, &[1]);
            let got = kernel.run(&inputs, 1);
            match (&expected, &got) {
                (Ok(e), Ok(g)) => assert_eq!((e.shape(), e.bytes()), (g.shape(), g.bytes()), "{}", p.name),
                (Err(_), Err(g)) => {
                    use slc::backend::RuntimeError::{Alloc, Shape};
                    assert!(matches!(g, Shape(_) | Alloc(_)), "{} on {shape:?}: {g}", p.name)
                }
                _ => panic!("{} on {shape:?}: interpreter {expected:?}, generic kernel {got:?}", p.name),
            }
        }
    }
}

/// A loop whose pointer strides are symbolic runs unrolled when the call's strides are short
/// and one element per trip when they are long (a column of rows of 1,200 bytes and more), as a
/// concrete kernel does for those strides.
#[test]
fn symbolic_strides_unroll_by_the_call() {
    let p = program("a column");
    let kernel = compiled(&p);
    let mut rng = Rng::new(5);
    for shape in [[9, 3], [9, 256], [9, 257], [33, 300], [5, 1]] {
        let a = random_tensor(DType::F32, &shape, &mut rng);
        let expected = interpreted(&p.plan, &[&a], &[]).unwrap();
        let got = kernel.run(&[&a], 1).unwrap();
        assert_eq!(got.bytes(), expected.bytes(), "{shape:?}");
    }
}

/// Reversed tiles of a symbolic number of channels: each tile size up to 8 bytes runs its own
/// version of the loop, the others (one channel, more than 8 bytes) the strided fallback; every
/// channel count around those limits, for 1- and 2-byte elements, equals the interpreter.
#[test]
fn reversed_tiles_dispatch_on_the_tile_size() {
    let mut rng = Rng::new(7);
    for dtype in ["u8", "u16"] {
        let ty = format!("{dtype}[N, M, C]");
        let plan = generic_plans::compiled("a[:, 1:, ::-1]", &[("a", ty.as_str())]);
        let kernel = compile_plan(&verify_generic(plan.clone()).unwrap()).unwrap();
        for channels in 0..=12 {
            // Enough tiles per row for the 4-vector trips, the single ones and the tail.
            let a = random_tensor(DType::from_name(dtype).unwrap(), &[3, 41, channels], &mut rng);
            let expected = interpreted(&plan, &[&a], &[]).unwrap();
            let got = kernel.run(&[&a], 1).unwrap();
            assert_eq!(got.bytes(), expected.bytes(), "{dtype}, {channels} channels");
        }
    }
}

/// Rows of a block of a symbolic length: each size class of inline moves (runs of 1 to 64
/// bytes) runs its own version of the row loop, longer runs the rows one by one; every run
/// length from 0 to 72 bytes, under a loop whose rows go forward or backward, equals the
/// interpreter.
#[test]
fn block_rows_dispatch_on_the_run_length() {
    let mut rng = Rng::new(9);
    for (src, ty) in
        [("a[1:, 1:-1]", "u8[N, M]"), ("a[1:, 1:-1]", "f32[N, M]"), ("a[::2, ::-1, 1:]", "u8[K, N, M]")]
    {
        let plan = generic_plans::compiled(src, &[("a", ty)]);
        let kernel = compile_plan(&verify_generic(plan.clone()).unwrap()).unwrap();
        let dtype = plan.inputs[0].dtype;
        for bytes in 0..=72 {
            let m = bytes / dtype.width() + if src == "a[1:, 1:-1]" { 2 } else { 1 };
            // Enough rows for the unrolled trips and the single ones.
            let shape: Vec<usize> = if plan.inputs[0].shape.len() == 2 { vec![7, m] } else { vec![3, 6, m] };
            let a = random_tensor(dtype, &shape, &mut rng);
            let expected = interpreted(&plan, &[&a], &[]).unwrap();
            let got = kernel.run(&[&a], 1).unwrap();
            assert_eq!(got.bytes(), expected.bytes(), "{src} on {ty} {shape:?}");
        }
    }
}

fn concrete(src: &str, types: &[(&str, &str)]) -> slc::Compiled {
    let types = types.iter().map(|(n, t)| (n.to_string(), t.parse().unwrap())).collect();
    slc::compile(src, &types).unwrap()
}

/// A concrete plan lifted (`VerifiedPlan::lift`) is a generic plan with nothing to bind: it
/// prints as the concrete plan, and its kernel binds nothing, agrees with the interpreter, and
/// reports the interpreter's errors; so does a generic plan whose dims are all constants.
#[test]
fn plans_without_symbols_bind_nothing() {
    let compiled = concrete("a[i][:, ::-2]", &[("a", "i32[4,5]"), ("i", "i64[3]")]);
    let lifted = compiled.plan.lift();
    assert_eq!(lifted.to_string(), compiled.plan.to_string());
    assert!(lifted.binds_nothing());
    let kernel = compile_plan(&lifted).unwrap();
    assert!(!kernel.binds());
    let a = Tensor::from_i64s(DType::I32, &[4, 5], &(0..20).collect::<Vec<_>>()).unwrap();
    let i = Tensor::from_i64s(DType::I64, &[3], &[3, -4, 0]).unwrap();
    let want = interp::run(&compiled.plan, &[&a, &i]).unwrap();
    assert_eq!(kernel.run(&[&a, &i], 1).unwrap(), want);
    assert_eq!(kernel.output_shape(&[&a, &i]).unwrap(), want.shape());
    let bad = Tensor::from_i64s(DType::I64, &[3], &[4, 0, 0]).unwrap();
    let told = interp::run(&compiled.plan, &[&a, &bad]).unwrap_err();
    assert!(matches!(told, RuntimeError::IndexOutOfBounds { .. }));
    assert_eq!(kernel.run(&[&a, &bad], 1).unwrap_err(), told);
    // Wrong inputs and outputs are errors, the same as a kernel with symbols reports.
    let wrong = Tensor::zeros(DType::I32, &[5, 4]).unwrap();
    assert!(matches!(kernel.run(&[&wrong, &i], 1), Err(RuntimeError::InputMismatch { .. })));
    assert!(matches!(kernel.run(&[&a], 1), Err(RuntimeError::InputCount { expected: 2, found: 1 })));
    let mut out = Tensor::zeros(DType::I32, &[3, 2]).unwrap();
    let e = kernel.run_into(&[&a, &i], &mut out, 1).unwrap_err();
    assert_eq!(e.to_string(), "input `the output` is i32[3, 2], but the plan was compiled for i32[3, 3]");
    assert!(kernel.run_into_bytes(&[&a, &i], &mut [0u8; 35], 1).is_err());
    let mut bytes = [0u8; 36];
    kernel.run_into_bytes(&[&a, &i], &mut bytes, 1).unwrap();
    assert_eq!(&bytes[..], want.bytes());

    // The generic pipeline with constant dims: nothing to bind either.
    let types: slc::sema::SymInputTypes =
        [("a".to_string(), "i32[4, 5]".parse().unwrap())].into_iter().collect();
    let generic = slc::pipeline::compile_generic("a[1:, ::-2]", &types).unwrap();
    let generic = verify_generic(generic.plan).unwrap();
    let kernel = compile_plan(&generic).unwrap();
    assert!(generic.binds_nothing() && !kernel.binds());
    let want = interp::run(&concrete("a[1:, ::-2]", &[("a", "i32[4,5]")]).plan, &[&a]).unwrap();
    assert_eq!(kernel.run(&[&a], 1).unwrap(), want);
}

/// A kernel compiled for a caller's input order: its raw entry takes the table in that order,
/// the checked calls take the inputs in plan order. A kernel with symbols has no raw entry (it
/// needs the dims): the raw call refuses with SHAPE_MISMATCH and runs nothing.
#[test]
fn kernels_for_another_input_order() {
    // The caller declares (i, x); the plan reads x first.
    let compiled = concrete("x[i]", &[("i", "i32[2]"), ("x", "u8[4]")]);
    assert_eq!(compiled.plan.inputs[0].name, "x");
    let kernel = jit::compile(&compiled.plan.lift(), &[1, 0]).unwrap();
    let x = Tensor::from_bytes(DType::U8, &[4], &[10, 11, 12, 13]).unwrap();
    let i = Tensor::from_i64s(DType::I32, &[2], &[3, -4]).unwrap();
    assert_eq!(kernel.run(&[&x, &i], 1).unwrap().bytes(), &[13, 10]);
    let mut out = [0u8; 2];
    // SAFETY: the table holds the caller's inputs in its order, `out` the output's 2 bytes.
    let status = unsafe { kernel.call(&[i.as_ptr(), x.as_ptr()], out.as_mut_ptr(), 2, 1) };
    assert_eq!((status, out), (0, [13, 10]));

    let reversed = programs().into_iter().find(|p| p.name == "reversed").unwrap();
    let symbolic = compile_plan(&verify_generic(reversed.plan).unwrap()).unwrap();
    assert!(symbolic.binds());
    // SAFETY: a kernel with symbols reads nothing through the raw call.
    let status = unsafe { symbolic.call(&[x.as_ptr()], out.as_mut_ptr(), 2, 1) };
    assert_eq!((status, out), (slc::backend::clif::STATUS_SHAPE_MISMATCH, [13, 10]));
}

/// A lifted plan keeps its inputs' strides: its kernel reads a strided view's window in place,
/// as the interpreter does.
#[test]
fn lifted_plans_read_strided_windows() {
    let compiled = concrete("a[1:, ::-1]", &[("a", "i16[3,4]")]);
    // The transpose of a 4x3 array: element [r, c] at 3c + r.
    let strides: slc::plan::InputStrides = [("a".to_string(), vec![1, 3])].into_iter().collect();
    let plan = verify(slc::plan::lower_with_strides(&compiled.checked, &strides).unwrap()).unwrap();
    let kernel = compile_plan(&plan.lift()).unwrap();
    let window = Tensor::from_i64s(DType::I16, &[12], &(0..12).collect::<Vec<_>>()).unwrap();
    let want = interp::run(&plan, &[&window]).unwrap();
    assert_eq!(kernel.run(&[&window], 1).unwrap(), want);
    assert_eq!(want.shape(), &[2, 4]);
}

/// Programs that lower to one plan share a kernel (the cache keys it by text); a failed check
/// still points into the text of the program that ran, as the interpreter does.
#[test]
fn a_shared_kernel_reports_the_callers_place() {
    use slc::exec::{Executor, Runnable};
    let cache = KernelCache::default();
    let a = Tensor::from_i64s(DType::I64, &[2, 3], &[1, 2, 3, 4, 5, 6]).unwrap();
    let idx = Tensor::from_i64s(DType::I64, &[1], &[5]).unwrap();
    let mut errors = vec![];
    for src in ["a[idx]", "a[:][idx]"] {
        let c = concrete(src, &[("a", "i64[2,3]"), ("idx", "i64[1]")]);
        let r = Runnable::prepare_in_plan_order(&c.plan, Executor::Jit, Some(&cache)).unwrap();
        let e = r.run(&c.plan, &[&a, &idx], 1).unwrap_err();
        assert_eq!(e, interp::run(&c.plan, &[&a, &idx]).unwrap_err(), "{src}");
        errors.push(e);
    }
    assert_eq!(cache.compiles(), 1, "one plan, one kernel");
    assert_ne!(errors[0], errors[1], "each error points into its own program");
}
