//! OpenVINO's own Gather-8 answers (tests/conformance/gather_openvino.jsonl, made by
//! tests/conformance/gather_openvino.py from OpenVINO's reference, the CPU plugin's own answer
//! beside where it differs): random data shapes, index tensors (i32 and i64, negative, outside
//! `[-n, n)`, at the integer extremes), axes and `batch_dims` (negative, and now and then
//! invalid), each run through the interpreter and the JIT. slc's `gather` is Gather-8 with
//! `mode=zero` by default, so it must give OpenVINO's shape and f32 bytes, or refuse where
//! OpenVINO refuses.

#[path = "support/openvino_cases.rs"]
mod openvino_cases;

use openvino_cases::{counting_from, dims, ints, run_cases};
use serde_json::Value;
use slc::{DType, Executor, Session, Tensor};

fn indices(case: &Value) -> Tensor {
    let idx = &case["indices"];
    let values = ints(&idx["values"]);
    let (dtype, bytes): (DType, Vec<u8>) = match idx["dtype"].as_str() {
        Some("i32") => (DType::I32, values.iter().flat_map(|&v| (v as i32).to_le_bytes()).collect()),
        _ => (DType::I64, values.iter().flat_map(|&v| v.to_le_bytes()).collect()),
    };
    Tensor::from_bytes(dtype, &dims(&idx["shape"]), &bytes).expect("an index tensor")
}

/// Data 1, 2, 3, ... (0 is the zero fill's alone) and the case's indices.
fn bind(session: &mut Session, case: &Value) -> (String, String) {
    let shape = dims(&case["shape"]);
    session.bind("x", counting_from(1, &shape));
    session.bind("i", indices(case));
    let idx = &case["indices"];
    let inputs = format!("x: f32{shape:?}, i: {}{} {}", idx["dtype"], idx["shape"], idx["values"]);
    (format!("gather(x, i, {}, batch_dims={})", case["axis"], case["batch_dims"]), inputs)
}

const CASES: &str = include_str!("conformance/gather_openvino.jsonl");

#[test]
fn openvino_gather_on_the_interpreter() {
    run_cases(CASES, Executor::Interpreter, 1000, 0.25, bind);
}

#[test]
fn openvino_gather_on_the_jit() {
    run_cases(CASES, Executor::Jit, 1000, 0.25, bind);
}
