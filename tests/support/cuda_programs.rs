//! The programs the CUDA tests generate kernels for: every golden-corpus case that compiles
//! (its concrete plan, on the case's inputs), and differential-fuzzer programs, each both
//! concrete and shape-generic (every dim a symbol: the kernels take their integers per call).
//! Each comes with its inputs in plan order (a mask's `nonzero()` derived) and what the CPU
//! gives: the interpreter for a concrete plan, the JIT kernel of the same generic plan (whose
//! errors are the interpreter's on the bound plan) for a generic one.

#![allow(dead_code)]

use serde_json::Value;
use slc::backend::RuntimeError;
use slc::backend::cuda::codegen::store::supported;
use slc::backend::{interp, jit};
use slc::fuzz::{Case, Rng};
use slc::plan::VerifiedGenericPlan;
use slc::sema::{InputTypes, InputValues};
use slc::types::TensorType;
use slc::{Tensor, plan};
use std::collections::BTreeMap;

#[path = "data.rs"]
mod data;

pub struct Program {
    /// The source and where it comes from, for messages.
    pub what: String,
    pub plan: VerifiedGenericPlan,
    pub inputs: Vec<Tensor>,
    pub want: Result<Tensor, RuntimeError>,
}

/// Inputs by name to plan order, derived masks included.
fn plan_inputs(plan: &VerifiedGenericPlan, given: &BTreeMap<String, Tensor>) -> Option<Vec<Tensor>> {
    let tensors = plan::input_tensors(&plan.inputs, &|name| given.get(name)).ok()?;
    Some(tensors.into_iter().map(|t| t.into_owned()).collect())
}

/// The concrete program `src` on `given`, with the interpreter's result; `None` when it does
/// not compile.
pub fn concrete(what: String, src: &str, given: &BTreeMap<String, Tensor>) -> Option<Program> {
    let types: InputTypes =
        given.iter().map(|(n, t)| (n.clone(), TensorType::of(t.dtype(), t.shape()))).collect();
    let values: InputValues = given.clone().into_iter().collect();
    let compiled = slc::compile_with_values(src, &types, &values).ok()?;
    // The CUDA back end refuses stores combining complex numbers (docs/cuda.md).
    if compiled.plan.store.as_ref().is_some_and(|s| supported(s.combine, compiled.plan.dtype).is_err()) {
        return None;
    }
    let plan = compiled.plan.lift();
    let inputs = plan_inputs(&plan, given)?;
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let want = interp::run(&compiled.plan, &refs);
    Some(Program { what, plan, inputs, want })
}

/// Every golden case that compiles.
pub fn golden() -> Vec<Program> {
    let text = include_str!("../golden/cases.jsonl");
    let mut out = vec![];
    for line in text.lines() {
        let case: Value = serde_json::from_str(line).expect("a JSON case");
        let src = case["src"].as_str().unwrap();
        let given: BTreeMap<String, Tensor> = case["inputs"]
            .as_object()
            .unwrap()
            .iter()
            .map(|(n, spec)| (n.clone(), data::golden_input(spec)))
            .collect();
        out.extend(concrete(format!("golden case {} `{src}`", case["id"]), src, &given));
    }
    out
}

/// The fuzzer's programs of seeds `seeds`: concrete where they compile, and generic where the
/// generic pipeline takes them.
pub fn fuzzed(seeds: std::ops::RangeInclusive<u64>) -> Vec<Program> {
    let mut out = vec![];
    for seed in seeds {
        let case = Case::draw(&mut Rng::new(seed));
        let given: BTreeMap<String, Tensor> =
            case.inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
        out.extend(concrete(format!("fuzz seed {seed} `{}`", case.src), &case.src, &given));
        let Ok(compiled) = slc::pipeline::compile_generic(&case.src, &case.symbolic_types()) else {
            continue;
        };
        let Ok(plan) = slc::plan::verify_generic(compiled.plan) else { continue };
        let Some(inputs) = plan_inputs(&plan, &given) else { continue };
        let kernel = jit::compile(&plan, &jit::plan_order(&plan)).expect("the JIT compiles a verified plan");
        let refs: Vec<&Tensor> = inputs.iter().collect();
        let want = kernel.run(&refs, 1);
        out.push(Program { what: format!("generic fuzz seed {seed} `{}`", case.src), plan, inputs, want });
    }
    out
}

/// The interpreter on a generic plan bound to `inputs` (in plan order): what any back end
/// running the generic plan must give.
pub fn interpret_generic(plan: &VerifiedGenericPlan, inputs: &[Tensor]) -> Result<Tensor, RuntimeError> {
    let dims: Vec<Vec<i64>> = inputs.iter().map(|t| t.shape().iter().map(|&d| d as i64).collect()).collect();
    let dims: Vec<&[i64]> = dims.iter().map(Vec::as_slice).collect();
    let env = plan.binding(&dims, &|_, _| None)?;
    let bound = plan.bind(&env)?;
    let verified = plan::verify(bound).expect("a bound generic plan verifies");
    let refs: Vec<&Tensor> = inputs.iter().collect();
    interp::run(&verified, &refs)
}

/// The fuzzer's store programs (`slc::fuzz::store_program`: `=`, `+=` and `*=` through every
/// kind of subscript, the scatters; their reductions left out), `cases` of them over targets of
/// a few shapes and dtypes, with the index arrays and mask they name: each concrete, and
/// shape-generic where the generic pipeline takes it.
pub fn stores(cases: usize) -> Vec<Program> {
    use slc::DType;
    use slc::fuzz::{fill, store_program};
    let mut r = Rng::new(2027);
    let mut out = vec![];
    for case in 0..cases {
        let shape: &[usize] = [&[3, 4][..], &[4][..], &[3, 2, 2][..], &[5, 3][..]][case % 4];
        let dtypes = [
            DType::F32,
            DType::I16,
            DType::U8,
            DType::F64,
            DType::F16,
            DType::BF16,
            DType::Bool,
            DType::C128,
        ];
        let dtype = dtypes[case % dtypes.len()];
        // One value through a mask (the mask read over its box, no positions), which random
        // draws reach rarely: every 40th case is one, in a form every dtype takes.
        const MASKED: [&str; 4] = ["a[m] = 3", "a[m] += True", "a[m, ...] *= True", "a[::-1][m] = [1]"];
        let src = match case % 40 {
            0 => MASKED[case / 40 % MASKED.len()].to_string(),
            _ => store_program(&mut r, shape),
        };
        let rows = shape[0];
        let mut given = BTreeMap::new();
        given.insert("a".to_string(), fill(dtype, shape, case as u64));
        // Duplicates (1 and -1 of 3 rows are distinct; 1 and 1 - rows... ) and a miss for
        // the out-of-range policies: -1 and `rows` wrap, clamp and zero-fill differently.
        let idx = [1, -1, 1, rows as i64][..2 + case % 3].to_vec();
        given.insert("idx".to_string(), Tensor::from_i64s(DType::I64, &[idx.len()], &idx).unwrap());
        let pairs: Vec<i64> = (0..2 * rows as i64).map(|v| v % 2).collect();
        given.insert("idx2".to_string(), Tensor::from_i64s(DType::I64, &[rows, 2], &pairs).unwrap());
        let bits: Vec<u8> = (0..rows).map(|i| (i % 2) as u8).collect();
        given.insert("m".to_string(), Tensor::from_bytes(DType::Bool, &[rows], &bits).unwrap());
        out.extend(concrete(format!("store case {case} `{src}` on {dtype}{shape:?}"), &src, &given));
        let types: slc::sema::SymInputTypes = given
            .iter()
            .map(|(n, t)| (n.clone(), TensorType::of(t.dtype(), t.shape()).symbolic(n)))
            .collect();
        let Ok(compiled) = slc::pipeline::compile_generic(&src, &types) else { continue };
        let Ok(plan) = slc::plan::verify_generic(compiled.plan) else { continue };
        if plan.store.as_ref().is_some_and(|s| supported(s.combine, plan.dtype).is_err()) {
            continue;
        }
        let Some(inputs) = plan_inputs(&plan, &given) else { continue };
        let want = interpret_generic(&plan, &inputs);
        out.push(Program {
            what: format!("generic store case {case} `{src}` on {dtype}{shape:?}"),
            plan,
            inputs,
            want,
        });
    }
    out
}

/// Whether `got` is `want` for `plan`: the same bytes or the same error — except that where the
/// plan's store computes (`+=`, `*=`, reductions) a NaN may carry any payload (which operand's
/// NaN an addition keeps is the compiler's and the hardware's choice; a GPU returns its
/// canonical NaN), so two NaNs of a float element match.
pub fn same_result<E>(
    plan: &VerifiedGenericPlan,
    want: &Result<Tensor, RuntimeError>,
    got: &Result<Tensor, E>,
    same_error: impl Fn(&RuntimeError, &E) -> bool,
) -> bool {
    use slc::DType;
    let (x, y) = match (want, got) {
        (Ok(x), Ok(y)) => (x, y),
        (Err(x), Err(y)) => return same_error(x, y),
        _ => return false,
    };
    let computes = plan.store.as_ref().is_some_and(|s| s.combine != slc::types::Combine::Set);
    if x == y || !computes || x.dtype() != y.dtype() || x.shape() != y.shape() {
        return x == y;
    }
    let w = x.dtype().width();
    let nan = |b: &[u8]| match x.dtype() {
        DType::F16 => half::f16::from_le_bytes([b[0], b[1]]).is_nan(),
        DType::BF16 => half::bf16::from_le_bytes([b[0], b[1]]).is_nan(),
        DType::F32 => f32::from_le_bytes(b.try_into().unwrap()).is_nan(),
        DType::F64 => f64::from_le_bytes(b.try_into().unwrap()).is_nan(),
        _ => false,
    };
    x.bytes().chunks(w).zip(y.bytes().chunks(w)).all(|(a, b)| a == b || (nan(a) && nan(b)))
}
