//! The programs the CUDA tests generate kernels for: every golden-corpus case that compiles
//! (its concrete plan, on the case's inputs), and differential-fuzzer programs, each both
//! concrete and shape-generic (every dim a symbol: the kernels take their integers per call).
//! Each comes with its inputs in plan order (a mask's `nonzero()` derived) and what the CPU
//! gives: the interpreter for a concrete plan, the JIT kernel of the same generic plan (whose
//! errors are the interpreter's on the bound plan) for a generic one.

#![allow(dead_code)]

use serde_json::Value;
use slc::backend::RuntimeError;
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
fn concrete(what: String, src: &str, given: &BTreeMap<String, Tensor>) -> Option<Program> {
    let types: InputTypes =
        given.iter().map(|(n, t)| (n.clone(), TensorType::of(t.dtype(), t.shape()))).collect();
    let values: InputValues = given.clone();
    let compiled = slc::compile_with_values(src, &types, &values).ok()?;
    // The CUDA back end refuses store plans (the golden corpus's stores; docs/semantics.md).
    if compiled.plan.store.is_some() {
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
