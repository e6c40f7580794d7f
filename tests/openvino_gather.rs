//! OpenVINO's own Gather-8 answers (tests/conformance/gather_openvino.jsonl, made by
//! tests/conformance/gather_openvino.py from the CPU plugin): random data shapes, index tensors
//! (i32 and i64, negative, outside `[-n, n)`, at the integer extremes, empty), axes and
//! `batch_dims` (negative, and now and then invalid), each run through the interpreter and the
//! JIT. slc's `gather` is Gather-8 with `mode=zero` by default, so it must give OpenVINO's shape
//! and f32 bytes, or refuse where OpenVINO refuses.

use serde_json::Value;
use slc::{DType, Executor, Session, Tensor};

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().expect("a list").iter().map(|x| x.as_i64().expect("an i64")).collect()
}

fn dims(v: &Value) -> Vec<usize> {
    ints(v).into_iter().map(|d| d as usize).collect()
}

/// f32 1, 2, 3, ... in C order: the data every case reads (0 is the zero fill's alone).
fn data(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let bytes: Vec<u8> = (1..=n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    Tensor::from_bytes(DType::F32, shape, &bytes).expect("a small tensor")
}

fn indices(case: &Value) -> Tensor {
    let idx = &case["indices"];
    let values = ints(&idx["values"]);
    let (dtype, bytes): (DType, Vec<u8>) = match idx["dtype"].as_str() {
        Some("i32") => (DType::I32, values.iter().flat_map(|&v| (v as i32).to_le_bytes()).collect()),
        _ => (DType::I64, values.iter().flat_map(|&v| v.to_le_bytes()).collect()),
    };
    Tensor::from_bytes(dtype, &dims(&idx["shape"]), &bytes).expect("an index tensor")
}

fn run_cases(backend: Executor) {
    let text = include_str!("conformance/gather_openvino.jsonl");
    let cases: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON case")).collect();
    assert!(cases.len() >= 1000, "the file has {} cases", cases.len());
    let refused = cases.iter().filter(|c| c["expect"].get("error").is_some()).count();
    assert!(refused * 4 < cases.len(), "{refused} of {} cases are refusals", cases.len());
    let mut failures = vec![];
    let mut session = Session::with_executor(backend);
    for case in &cases {
        let shape = dims(&case["shape"]);
        session.bind("x", data(&shape));
        session.bind("i", indices(case));
        let src = format!("gather(x, i, {}, batch_dims={})", case["axis"], case["batch_dims"]);
        let expect = &case["expect"];
        let problem = match (expect.get("error"), session.eval(&src)) {
            (Some(e), Ok(t)) => Some(format!("OpenVINO refuses ({e}), slc gives {:?}", t.shape())),
            (Some(_), Err(_)) => None,
            (None, Err(e)) => Some(format!("slc refuses:\n{}", e.render(&src))),
            (None, Ok(t)) => {
                let want_shape = dims(&expect["shape"]);
                let want: Vec<u8> =
                    ints(&expect["values"]).into_iter().flat_map(|v| (v as f32).to_le_bytes()).collect();
                (t.dtype() != DType::F32
                    || t.shape() != want_shape.as_slice()
                    || t.bytes() != want.as_slice())
                .then(|| format!("expected {want_shape:?} {:?}, got {t:?}", ints(&expect["values"])))
            }
        };
        if let Some(p) = problem {
            let idx = &case["indices"];
            failures.push(format!(
                "case {} on x: f32{shape:?}, i: {}{} {}: `{src}`: {p}",
                case["id"], idx["dtype"], idx["shape"], idx["values"]
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} OpenVINO cases fail ({backend:?}):\n{}",
        failures.len(),
        cases.len(),
        failures[..failures.len().min(30)].join("\n")
    );
}

#[test]
fn openvino_gather_on_the_interpreter() {
    run_cases(Executor::Interpreter);
}

#[test]
fn openvino_gather_on_the_jit() {
    run_cases(Executor::Jit);
}
