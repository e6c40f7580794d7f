//! Boolean masks whose value is known only at run time, in shape-generic programs: a mask
//! input's `nonzero()` is an input the plan derives from it per call (`m_nonzero: i64[_m_trues,
//! 1] = nonzero(m)`), its count of `True`s a dim. Held against the concrete pipeline, which
//! reads the mask's value when it checks the program, on many shapes and mask values: the
//! generic JIT kernel and the interpreter on the bound generic plan give its output, or fail
//! where it fails; the plan text round-trips.

use slc::backend::interp;
use slc::backend::jit;
use slc::fuzz::{Draw, Rng, fill};
use slc::pipeline::compile_generic;
use slc::plan::{self, VerifiedGenericPlan};
use slc::sema::{InputTypes, InputValues, SymInputTypes};
use slc::types::{SymTensorType, TensorType};
use slc::{DType, Tensor};

/// The programs, over `a: f32[N, M]` (or `[N, M, P]`), masks `m: bool[N]`, `m2: bool[N, M]`,
/// `k: bool[M]`, `z: bool[]` and an index vector `i: i64[K]`.
const PROGRAMS: &[&str] = &[
    "a[m]",
    "a[m][::-1, 1:]",
    "a[:, k]",
    "a[m2]",
    "a[m2][1:]",
    "a[..., k]",
    "a[z]",
    "a[m, i]",
    "a[m][i]",
    "a[m, newaxis, k]",
    "a[m, :][:, k]",
];

fn types(rank3: bool) -> SymInputTypes {
    let a = if rank3 { "f32[N, M, P]" } else { "f32[N, M]" };
    let decls = [
        ("a", a),
        ("m", "bool[N]"),
        ("m2", "bool[N, M]"),
        ("k", "bool[M]"),
        ("z", "bool[]"),
        ("i", "i64[K]"),
    ];
    decls.iter().map(|(n, t)| (n.to_string(), SymTensorType::parse_for(t, n).unwrap())).collect()
}

/// Tensors of the declared types for dims `n, m, p, k`, masks about half true.
fn tensors(
    r: &mut Rng,
    rank3: bool,
    (n, m, p, k): (usize, usize, usize, usize),
) -> Vec<(&'static str, Tensor)> {
    let mask = |r: &mut Rng, shape: &[usize]| {
        let bits: Vec<u8> = (0..shape.iter().product()).map(|_| (r.below(2)) as u8).collect();
        Tensor::from_bytes(DType::Bool, shape, &bits).unwrap()
    };
    let a_shape: Vec<usize> = if rank3 { vec![n, m, p] } else { vec![n, m] };
    let idx: Vec<i64> = (0..k).map(|_| r.range(-3, 3)).collect();
    vec![
        ("a", fill(DType::F32, &a_shape, r.bits())),
        ("m", mask(r, &[n])),
        ("m2", mask(r, &[n, m])),
        ("k", mask(r, &[m])),
        ("z", mask(r, &[])),
        ("i", Tensor::from_i64s(DType::I64, &[k], &idx).unwrap()),
    ]
}

fn compiled(src: &str, rank3: bool) -> VerifiedGenericPlan {
    let c = compile_generic(src, &types(rank3)).unwrap_or_else(|e| panic!("{}", e.render(src)));
    plan::verify_generic(c.plan).unwrap()
}

#[test]
fn run_time_masks_give_the_concrete_pipelines_results() {
    let mut r = Rng::new(26);
    let mut agreed = 0;
    for &src in PROGRAMS {
        for rank3 in [false, true] {
            let plan = compiled(src, rank3);
            let text = plan.plan().to_string();
            assert!(text.contains("= nonzero("), "{src}: {text}");
            let reread = plan::parse::parse_generic(&text).unwrap_or_else(|e| panic!("{src}: {e}\n{text}"));
            assert_eq!(reread.to_string(), text, "{src}");
            let kernel = jit::compile(&plan, &jit::plan_order(&plan)).unwrap();
            for _ in 0..12 {
                let dims =
                    (r.below(5) as usize, r.below(4) as usize, 1 + r.below(3) as usize, r.below(4) as usize);
                let inputs = tensors(&mut r, rank3, dims);
                let by_name = |name: &str| inputs.iter().find(|(n, _)| *n == name).map(|(_, t)| t);
                let all = plan::input_tensors(&plan.plan().inputs, &by_name).unwrap();
                let args: Vec<&Tensor> = all.iter().map(|t| t.as_ref()).collect();
                let concrete_types: InputTypes = inputs
                    .iter()
                    .map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape())))
                    .collect();
                let values: InputValues = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
                let want = slc::compile_with_values(src, &concrete_types, &values).and_then(|c| {
                    let args: Vec<&Tensor> =
                        c.plan.inputs.iter().map(|d| by_name(&d.name).unwrap()).collect();
                    Ok(interp::run(&c.plan, &args)?)
                });
                let got = kernel.run(&args, 1);
                // The interpreter on the generic plan bound to this call's dims.
                let dims: Vec<Vec<i64>> =
                    args.iter().map(|t| t.shape().iter().map(|&d| d as i64).collect()).collect();
                let dims: Vec<&[i64]> = dims.iter().map(Vec::as_slice).collect();
                let interpreted = plan
                    .plan()
                    .binding(&dims, &|_, _| None)
                    .ok()
                    .and_then(|env| plan.plan().bind(&env).ok())
                    .map(|p| interp::run(&plan::verify(p).unwrap(), &args));
                match (&want, &got) {
                    (Ok(x), Ok(y)) => {
                        assert_eq!(x.bytes(), y.bytes(), "{src} on {dims:?}");
                        let i = interpreted.unwrap_or_else(|| panic!("{src}: binds")).unwrap();
                        assert_eq!(x.bytes(), i.bytes(), "{src} on {dims:?}");
                        agreed += 1;
                    }
                    (Err(_), Err(_)) => {}
                    _ => panic!("{src} on {dims:?}: concrete {want:?}, generic {got:?}"),
                }
            }
        }
    }
    // Most calls are valid (a few index `i` out of range, or a mask `z` on no axis).
    assert!(agreed > PROGRAMS.len() * 12, "{agreed} calls agreed");
}

#[test]
fn a_mask_must_match_the_axes_it_covers() {
    let plan = compiled("a[k]", false);
    let inputs = tensors(&mut Rng::new(1), false, (3, 4, 1, 2));
    let mut inputs: Vec<(&str, Tensor)> = inputs.into_iter().filter(|(n, _)| *n != "k").collect();
    inputs.push(("k", Tensor::from_bytes(DType::Bool, &[3], &[1, 0, 1]).unwrap()));
    let by_name = |name: &str| inputs.iter().find(|(n, _)| *n == name).map(|(_, t)| t);
    let all = plan::input_tensors(&plan.plan().inputs, &by_name).unwrap();
    let args: Vec<&Tensor> = all.iter().map(|t| t.as_ref()).collect();
    let e = jit::compile(&plan, &jit::plan_order(&plan)).unwrap().run(&args, 1).unwrap_err();
    assert!(e.to_string().contains('M') || e.to_string().contains("boolean index"), "{e}");
}

#[test]
fn aot_objects_refuse_run_time_masks() {
    let plan = compiled("a[m]", false);
    let declared = types(false);
    let declared: Vec<plan::InputDecl<slc::types::sym::SymExpr>> = ["a", "m"]
        .iter()
        .map(|n| plan::InputDecl::dense(*n, declared[*n].dtype, declared[*n].shape.clone()))
        .collect();
    assert!(slc::backend::aot::compile(&plan, "a[m]", &declared, "k").is_err());
}

#[test]
fn an_input_named_like_the_derived_one_keeps_the_mask_compile_time() {
    let mut t = types(false);
    t.insert("m_nonzero".into(), SymTensorType::parse_for("i64[T, 1]", "m_nonzero").unwrap());
    let e = compile_generic("a[m]", &t).unwrap_err();
    assert_eq!(e.diagnostic().code, "E0126", "{e}");
}

/// A session evaluating a mask program over changing shapes keeps it specialized (its
/// bindings hold no derived nonzero()): right results, and no generic kernel built per eval.
#[test]
fn sessions_keep_mask_programs_specialized() {
    let mut s = slc::Session::new();
    let mut r = Rng::new(7);
    let mut generic_tries = vec![];
    for n in [3usize, 4, 5, 4, 3, 6] {
        let inputs = tensors(&mut r, false, (n, 2, 1, 0));
        for (name, t) in &inputs {
            s.bind(name, t.clone());
        }
        let got = s.eval("a[m]").unwrap();
        let types: InputTypes =
            inputs.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
        let values: InputValues = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
        let c = slc::compile_with_values("a[m]", &types, &values).unwrap();
        let args: Vec<&Tensor> =
            c.plan.inputs.iter().map(|d| &inputs.iter().find(|(n, _)| *n == d.name).unwrap().1).collect();
        assert_eq!(got.bytes(), interp::run(&c.plan, &args).unwrap().bytes());
        generic_tries.push(s.compiles());
    }
    // Each shape compiles its specialized kernel at most once; nothing more.
    assert!(generic_tries.last().copied().unwrap_or(0) <= 6, "{generic_tries:?}");
}

/// A mask larger than `MASK_FOLD_MAX` given by value with fixed types is not folded into the
/// plan: the kernel is generic, derives the positions per call, serves other masks of the shape
/// (none compiles again), and gives the interpreter's result on the folded plan for each — loads
/// and stores. A mask at the limit still folds.
#[test]
fn large_masks_are_derived_per_call_not_folded() {
    let mut r = Rng::new(11);
    let (n, m) = (80usize, 60usize);
    assert!(n * m > slc::sema::MASK_FOLD_MAX);
    let a = fill(DType::F32, &[n, m], r.bits());
    let masks: Vec<Tensor> = [2u64, 1, 0, 9, 2]
        .iter()
        .map(|&kind| {
            // Random, all true, all false, nearly all false, random again.
            let bits: Vec<u8> = (0..n * m)
                .map(|e| match kind {
                    2 => r.below(2) as u8,
                    1 => 1,
                    0 => 0,
                    _ => (e % 997 == 3) as u8,
                })
                .collect();
            Tensor::from_bytes(DType::Bool, &[n, m], &bits).unwrap()
        })
        .collect();
    let types: InputTypes =
        [("a", TensorType::of(DType::F32, &[n, m])), ("m", TensorType::of(DType::Bool, &[n, m]))]
            .into_iter()
            .map(|(k, t)| (k.to_string(), t))
            .collect();
    let signature = [("a", "f32[80, 60]".parse().unwrap()), ("m", "bool[80, 60]".parse().unwrap())];
    for src in ["a[m]", "a[m][::-3]", "a[m] = 7", "a[m] += 1"] {
        let first: InputValues = [("m".to_string(), masks[0].clone())].into_iter().collect();
        let k =
            slc::Kernel::prepare_with_values(src, &signature, &first, &slc::RunOptions::default()).unwrap();
        assert!(k.fixed().is_none(), "{src}: a large mask is not folded");
        for (at, mask) in masks.iter().enumerate() {
            let values: InputValues = [("m".to_string(), mask.clone())].into_iter().collect();
            let c = slc::compile_with_values(src, &types, &values).unwrap();
            let args: Vec<&Tensor> =
                c.plan.inputs.iter().map(|d| if d.name == "a" { &a } else { mask }).collect();
            let want = interp::run(&c.plan, &args).unwrap();
            let got = k.run(&[&a, mask]).unwrap();
            assert_eq!((got.shape(), got.bytes()), (want.shape(), want.bytes()), "{src}, mask {at}");
        }
    }
    // At the limit, the positions are constants of a fixed kernel.
    let small = Tensor::from_bytes(DType::Bool, &[64, 64], &vec![1; 64 * 64]).unwrap();
    let values: InputValues = [("m".to_string(), small)].into_iter().collect();
    let signature = [("a", "f32[64, 64]".parse().unwrap()), ("m", "bool[64, 64]".parse().unwrap())];
    let k =
        slc::Kernel::prepare_with_values("a[m]", &signature, &values, &slc::RunOptions::default()).unwrap();
    assert!(k.fixed().is_some());
}

/// A session (the CLI's `eval`, the embedding's) evaluating a program over a large mask builds
/// one generic kernel at the first eval and keeps it for every other mask and shape; results
/// are the interpreter's on the folded plan.
#[test]
fn sessions_derive_large_masks_per_eval() {
    let mut s = slc::Session::new();
    let mut r = Rng::new(5);
    for (n, m) in [(70usize, 70usize), (70, 70), (90, 50), (70, 70)] {
        let a = fill(DType::F32, &[n, m], r.bits());
        let bits: Vec<u8> = (0..n * m).map(|_| r.below(2) as u8).collect();
        let mask = Tensor::from_bytes(DType::Bool, &[n, m], &bits).unwrap();
        s.bind("a", a.clone());
        s.bind("m", mask.clone());
        let got = s.eval("a[m][1:]").unwrap();
        let types: InputTypes = [("a", &a), ("m", &mask)]
            .into_iter()
            .map(|(k, t)| (k.to_string(), TensorType::of(t.dtype(), t.shape())))
            .collect();
        let values: InputValues = [("m".to_string(), mask.clone())].into_iter().collect();
        let c = slc::compile_with_values("a[m][1:]", &types, &values).unwrap();
        let args: Vec<&Tensor> =
            c.plan.inputs.iter().map(|d| if d.name == "a" { &a } else { &mask }).collect();
        assert_eq!(got.bytes(), interp::run(&c.plan, &args).unwrap().bytes(), "{n}x{m}");
        assert_eq!(s.compiles(), 1, "{n}x{m}: one generic kernel");
    }
}
