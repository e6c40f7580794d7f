//! The NumPy golden corpus (tests/golden/cases.jsonl, made by tests/golden/gen.py): every case
//! runs through the reference interpreter and the JIT, and must give NumPy's dtype, shape and
//! bytes exactly — or an error where NumPy raised.

#[path = "support/data.rs"]
mod data;

use data::golden_input as input;
use serde_json::Value;
use slc::{Executor, Session};

fn shape_of(v: &Value) -> Vec<usize> {
    v.as_array().expect("a shape").iter().map(|d| d.as_u64().expect("a dimension") as usize).collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn run_corpus(backend: Executor) {
    let text = include_str!("golden/cases.jsonl");
    let cases: Vec<Value> = text.lines().map(|l| serde_json::from_str(l).expect("a JSON case")).collect();
    assert!(cases.len() >= 1500, "the corpus has {} cases", cases.len());
    let mut failures = vec![];
    let mut session = Session::with_executor(backend);
    for case in &cases {
        let src = case["src"].as_str().unwrap();
        for (name, spec) in case["inputs"].as_object().unwrap() {
            session.bind(name, input(spec));
        }
        let expect = &case["expect"];
        let got = session.eval(src);
        let problem = match (expect.get("error"), got) {
            (Some(_), Ok(t)) => Some(format!("NumPy raises {}, slc gives {t:?}", expect["message"])),
            (Some(_), Err(_)) => None,
            (None, Err(e)) => Some(format!("slc fails:\n{}", e.render(src))),
            (None, Ok(t)) => {
                let dtype = expect["dtype"].as_str().unwrap();
                let shape = shape_of(&expect["shape"]);
                let bytes = hex(t.bytes());
                let want = expect["hex"].as_str().unwrap();
                (t.dtype().name() != dtype || t.shape() != shape.as_slice() || bytes != want).then(|| {
                    format!("expected {dtype}{shape:?} {want}\n     got {}{:?} {bytes}", t.dtype(), t.shape())
                })
            }
        };
        if let Some(p) = problem {
            failures.push(format!("case {} `{src}` on {}: {p}", case["id"], case["inputs"]));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} golden cases fail ({backend:?}):\n{}",
        failures.len(),
        cases.len(),
        failures[..failures.len().min(30)].join("\n")
    );
}

#[test]
fn golden_cases_on_the_interpreter() {
    run_corpus(Executor::Interpreter);
}

#[test]
fn golden_cases_on_the_jit() {
    run_corpus(Executor::Jit);
}
