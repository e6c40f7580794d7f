//! The recorded OpenVINO answers both OpenVINO suites read (`openvino_strided_slice`,
//! `openvino_gather`): one JSON case per line, each with an "expect" — an f32 result
//! (`{"shape", "values"}`) or `{"error"}` — and slc's result compared with it.

use serde_json::Value;
use slc::{DType, Executor, Session, Tensor};

pub fn ints(v: &Value) -> Vec<i64> {
    v.as_array().expect("a list").iter().map(|x| x.as_i64().expect("an i64")).collect()
}

pub fn dims(v: &Value) -> Vec<usize> {
    ints(v).into_iter().map(|d| d as usize).collect()
}

/// f32 `first`, `first + 1`, ... in C order.
pub fn counting_from(first: usize, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let bytes: Vec<u8> = (first..first + n).flat_map(|i| (i as f32).to_le_bytes()).collect();
    Tensor::from_bytes(DType::F32, shape, &bytes).expect("a small tensor")
}

/// Runs every case of `text` on `backend`: `bind` binds the case's inputs into the session and
/// returns the program and how to describe the inputs. Fails, listing the first 30, unless slc
/// gives each expected f32 result (shape and bytes) and refuses where OpenVINO refuses.
/// `min_cases` and `max_refused` (a fraction) keep the file from shrinking into refusals.
pub fn run_cases(
    text: &str,
    backend: Executor,
    min_cases: usize,
    max_refused: f64,
    bind: impl Fn(&mut Session, &Value) -> (String, String),
) {
    let cases: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON case")).collect();
    assert!(cases.len() >= min_cases, "the file has {} cases", cases.len());
    let refused = cases.iter().filter(|c| c["expect"].get("error").is_some()).count();
    assert!(
        (refused as f64) < cases.len() as f64 * max_refused,
        "{refused} of {} cases are refusals",
        cases.len()
    );
    let mut failures = vec![];
    let mut session = Session::with_executor(backend);
    for case in &cases {
        let (src, inputs) = bind(&mut session, case);
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
            failures.push(format!("case {} on {inputs}: `{src}`: {p}", case["id"]));
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
