//! The NumPy golden corpus (tests/golden/cases.jsonl, made by tests/golden/gen.py): every case
//! runs through the reference interpreter and the JIT, and must give NumPy's dtype, shape and
//! bytes exactly — or an error where NumPy raised.

use serde_json::Value;
use slc::{DType, Executor, Session, Tensor};

/// splitmix64 bytes, as gen.py's fill().
fn fill(dtype: DType, shape: &[usize], seed: u64) -> Tensor {
    let n = Tensor::byte_size(dtype, shape).expect("a small tensor");
    let mut bytes = Vec::with_capacity(n + 8);
    let mut state = seed;
    while bytes.len() < n {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        bytes.extend_from_slice(&z.to_le_bytes());
    }
    bytes.truncate(n);
    if dtype == DType::Bool {
        bytes.iter_mut().for_each(|b| *b &= 1);
    }
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

fn shape_of(v: &Value) -> Vec<usize> {
    v.as_array().expect("a shape").iter().map(|d| d.as_u64().expect("a dimension") as usize).collect()
}

fn input(spec: &Value) -> Tensor {
    let dtype = DType::from_name(spec["dtype"].as_str().expect("dtype")).expect("a known dtype");
    let shape = shape_of(&spec["shape"]);
    match spec.get("values") {
        // u64 values above i64::MAX do not occur: gen.py keeps index values small. A mask's
        // values are 0 and 1.
        Some(values) => {
            let values: Vec<i64> =
                values.as_array().unwrap().iter().map(|v| v.as_i64().expect("an i64")).collect();
            if dtype == DType::Bool {
                let bytes: Vec<u8> = values.iter().map(|&v| v as u8).collect();
                return Tensor::from_bytes(dtype, &shape, &bytes).unwrap();
            }
            Tensor::from_i64s(dtype, &shape, &values).unwrap()
        }
        None => fill(dtype, &shape, spec["seed"].as_u64().expect("a seed")),
    }
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
