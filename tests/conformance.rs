//! The seed documents' worked examples (tests/conformance/seeds.txt), and ONNX Runtime's results
//! on random Gather, GatherElements and GatherND models (tests/conformance/onnx_gathers.txt,
//! written by onnx_gathers.py next to it), run on the interpreter and the JIT. See the data files
//! for the format and for each contradiction between a source and what slc does.

#[path = "support/data.rs"]
mod data;

use data::element;
use slc::sema::InputTypes;
use slc::types::TensorType;
use slc::{Executor, Session, Tensor};

#[derive(Debug, Default)]
struct Case {
    id: String,
    src: String,
    inputs: Vec<(String, TensorType, Option<Values>)>,
    out: Option<Expect>,
    same: Option<String>,
}

#[derive(Debug, Clone)]
enum Values {
    Explicit(Vec<i64>),
    /// 0, 1, 2, ... (from `start`), wrapping in narrow integer types.
    Arange(i64),
}

#[derive(Debug)]
enum Expect {
    Error,
    Type(TensorType, Option<Vec<i64>>),
}

fn parse_values(text: &str) -> Vec<i64> {
    text.split_whitespace().map(|v| v.parse().unwrap_or_else(|_| panic!("bad value `{v}`"))).collect()
}

/// `TYPE = values`, `TYPE arange`, `TYPE arange1` or `TYPE`.
fn parse_typed(text: &str) -> (TensorType, Option<Values>) {
    let (ty, rest) = match text.find(']') {
        Some(i) => (&text[..=i], text[i + 1..].trim()),
        None => panic!("bad type in `{text}`"),
    };
    let ty: TensorType = ty.parse().expect("a tensor type");
    let values = match rest {
        "" => None,
        "arange" => Some(Values::Arange(0)),
        "arange1" => Some(Values::Arange(1)),
        r => Some(Values::Explicit(parse_values(r.strip_prefix('=').expect("`= values`")))),
    };
    (ty, values)
}

fn load(text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = vec![];
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(id) = line.strip_prefix("== ") {
            cases.push(Case { id: id.to_string(), ..Case::default() });
            continue;
        }
        let case = cases.last_mut().expect("a case header first");
        let (key, value) = line.split_once(':').expect("KEY: VALUE");
        let value = value.trim();
        match key {
            "src" => case.src = value.to_string(),
            "same" => case.same = Some(value.to_string()),
            "out" if value == "error" => case.out = Some(Expect::Error),
            "out" => {
                let (ty, values) = parse_typed(value);
                let values = values.map(|v| match v {
                    Values::Explicit(v) => v,
                    Values::Arange(_) => panic!("{}: expected values are explicit", case.id),
                });
                case.out = Some(Expect::Type(ty, values));
            }
            k if k.starts_with("in ") => {
                let (ty, values) = parse_typed(value);
                case.inputs.push((k[3..].trim().to_string(), ty, values));
            }
            _ => panic!("{}: unknown key `{key}`", case.id),
        }
    }
    cases
}

fn tensor(ty: &TensorType, values: &Values) -> Tensor {
    let shape: Vec<usize> = ty.shape.iter().map(|&d| d as usize).collect();
    let n: usize = shape.iter().product();
    let bytes: Vec<u8> = match values {
        Values::Explicit(v) => {
            assert_eq!(v.len(), n, "value count for {ty}");
            v.iter().flat_map(|&x| element(ty.dtype, x)).collect()
        }
        Values::Arange(start) => (0..n as i64).flat_map(|i| element(ty.dtype, start + i)).collect(),
    };
    Tensor::from_bytes(ty.dtype, &shape, &bytes).unwrap()
}

/// Runs one case; `Err` describes how it fails.
fn check(case: &Case, backend: Executor) -> Result<(), String> {
    let expect = case.out.as_ref().ok_or("no `out:` line")?;
    let runnable = case.inputs.iter().all(|(_, _, v)| v.is_some());
    if !runnable {
        // Compile only: the inputs are too large to allocate.
        let types: InputTypes = case.inputs.iter().map(|(n, t, _)| (n.clone(), t.clone())).collect();
        return match (slc::compile(&case.src, &types), expect) {
            (Err(_), Expect::Error) => Ok(()),
            (Ok(c), Expect::Type(ty, None)) if c.plan.dtype == ty.dtype && c.plan.shape == ty.shape => Ok(()),
            (Ok(c), e) => Err(format!("compiles to {}{:?}, expected {e:?}", c.plan.dtype, c.plan.shape)),
            (Err(e), _) => Err(e.render(&case.src)),
        };
    }
    let mut session = Session::with_executor(backend);
    for (name, ty, values) in &case.inputs {
        session.bind(name, tensor(ty, values.as_ref().expect("runnable")));
    }
    let got = session.eval(&case.src);
    match (expect, &got) {
        (Expect::Error, Ok(t)) => return Err(format!("expected an error, got {t:?}")),
        (Expect::Error, Err(_)) => return Ok(()),
        (Expect::Type(_, _), Err(e)) => return Err(e.render(&case.src)),
        (Expect::Type(ty, values), Ok(t)) => {
            let shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
            if t.dtype() != ty.dtype || shape != ty.shape {
                return Err(format!("got {}{shape:?}, expected {ty}", t.dtype()));
            }
            if let Some(values) = values {
                let want = tensor(ty, &Values::Explicit(values.clone()));
                if want.bytes() != t.bytes() {
                    return Err(format!("values differ from {values:?}"));
                }
            }
        }
    }
    if let (Some(same), Ok(t)) = (&case.same, got) {
        let other = session.eval(same).map_err(|e| e.render(same))?;
        if other != t {
            return Err(format!("differs from `{same}`"));
        }
    }
    Ok(())
}

fn run_seed(prefix: &str, expected_cases: usize) {
    let cases = load(include_str!("conformance/seeds.txt"));
    let cases: Vec<Case> = cases.into_iter().filter(|c| c.id.starts_with(prefix)).collect();
    assert_eq!(cases.len(), expected_cases, "cases for seed {prefix}");
    run_cases(&cases);
}

fn run_cases(cases: &[Case]) {
    let mut failures = vec![];
    for case in cases {
        for backend in [Executor::Interpreter, Executor::Jit] {
            if let Err(why) = check(case, backend) {
                failures.push(format!("{} ({backend:?}) `{}`: {why}", case.id, case.src));
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn seed_000_strided_slice_japanese() {
    run_seed("000-", 18);
}

#[test]
fn seed_001_gather() {
    run_seed("001-", 14);
}

#[test]
fn seed_002_dml_slice1() {
    run_seed("002-", 3);
}

#[test]
fn seed_003_strided_slice_english() {
    run_seed("003-", 5);
}

#[test]
fn seed_004_onnx_slice() {
    run_seed("004-", 17);
}

/// Random Slice-13 models (bounds at the INT32/INT64 extremes, every sign of step) as ONNX
/// Runtime answers them (tests/conformance/onnx_slices.py).
#[test]
fn onnx_runtime_slices() {
    let cases = load(include_str!("conformance/onnx_slices.txt"));
    assert_eq!(cases.iter().filter(|c| c.id.starts_with("ort-slice-")).count(), 600);
    run_cases(&cases);
}

#[test]
fn onnx_runtime_gathers() {
    let cases = load(include_str!("conformance/onnx_gathers.txt"));
    for (op, count) in [("ort-gather-", 120), ("ort-gather-elements-", 120), ("ort-gather-nd-", 120)] {
        let n = cases.iter().filter(|c| c.id.starts_with(op) && !c.id[op.len()..].contains('-')).count();
        assert_eq!(n, count, "cases {op}*");
    }
    run_cases(&cases);
}
