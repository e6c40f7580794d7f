//! The generic target: a case compiled with every dim a symbol, checked against the concrete
//! pipeline, so that the shape-generic path is fuzzed with the same programs.

use super::{Bytes, Case};
use crate::error::Error;
use crate::exec::Runnable;
use crate::plan;
use slc_runtime::Tensor;

/// The case's program compiled shape-generically (every dim of every input a symbol): where the
/// generic pipeline takes it, its verified plan reads back, and its JIT kernel gives the
/// concrete pipeline's interpreter result on the case's tensors, bit for bit, or fails where
/// that fails (a requirement of the shape function may stand for a compile-time diagnostic).
pub fn check_generic(case: &Case) {
    let src = &case.src;
    let Ok(compiled) = crate::pipeline::compile_generic(src, &case.symbolic_types()) else { return };
    let plan = crate::plan::verify_generic(compiled.plan).unwrap_or_else(|e| panic!("{src}: {e}"));
    let text = plan.to_string();
    let reread = crate::plan::parse::parse_generic(&text).unwrap_or_else(|e| panic!("{src}: {e}\n{text}"));
    assert_eq!(reread.to_string(), text, "{src}: generic plan text round trip");
    // A store the loop nest cannot write (a scatter's reduction) runs on the interpreter.
    if plan.store.is_some() && !crate::backend::loopnest::takes_store(plan.plan()) {
        return;
    }
    let kernel = crate::backend::jit::compile(&plan, &crate::backend::jit::plan_order(&plan))
        .unwrap_or_else(|e| panic!("{src}: {e}\n{text}"));
    let by_name = |name: &str| &case.inputs.iter().find(|(n, _)| *n == name).expect("a declared input").1;
    // With the `nonzero()` of a run-time mask, and a value of another dtype cast, derived per
    // call (which fails for a float with no value of an integer target: E0211).
    let code = |e: plan::DeriveError| Error::from(crate::backend::RuntimeError::from(e)).diagnostic().code;
    let derived = plan::input_tensors(&plan.inputs, &|name| Some(by_name(name)));
    let got = derived.map_err(code).and_then(|tensors| {
        let args: Vec<&Tensor> = tensors.iter().map(|t| t.as_ref()).collect();
        let got = kernel.run(&args, 1).map_err(|e| Error::from(e).diagnostic().code);
        if let Ok(got) = &got {
            // Split across workers where the output is large enough, as one worker writes it.
            assert_eq!(kernel.run(&args, 4).as_ref().ok(), Some(got), "{src}: on four threads");
        }
        got
    });
    // The concrete pipeline reads the masks' values when it checks the program.
    let want = crate::compile_with_values(src, &case.types(), &case.values())
        .map_err(|e| e.diagnostic().code)
        .and_then(|c| {
            let tensors = plan::input_tensors(&c.plan.inputs, &|name| Some(by_name(name))).map_err(code)?;
            let args: Vec<&Tensor> = tensors.iter().map(|t| t.as_ref()).collect();
            Runnable::Interpreter.run(&c.plan, &args, 1).map_err(|e| Error::from(e).diagnostic().code)
        });
    match (&want, &got) {
        (Ok(x), Ok(y)) => assert!(x == y, "{src}: interpreter {x:?}, generic kernel {y:?}\n{text}"),
        (Err(_), Err(_)) => {}
        _ => panic!("{src}: concrete pipeline {want:?}, generic kernel {got:?}\n{text}"),
    }
}

/// [`check_generic`] on a case drawn from the fuzzer's bytes.
pub fn generic(data: &[u8]) {
    check_generic(&Case::draw(&mut Bytes::new(data)));
}
