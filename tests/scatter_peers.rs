//! The scatters against their peers (tests/conformance/scatters.jsonl, made by
//! tests/conformance/scatters.py): ONNX ScatterND-18 and ScatterElements-18 as ONNX Runtime and
//! the ONNX reference answer, OpenVINO ScatterUpdate-3, ScatterNDUpdate-15 and
//! ScatterElementsUpdate-12 as OpenVINO's CPU plugin and reference answer — every reduction,
//! negative and duplicate indices, f16/f32/f64/integers/bool, NaNs, infinities and signed zeros,
//! `use_init_val=false`, out-of-range indices. Each case runs on the interpreter and on the
//! default (JIT) executor, and must give the case's `expect` bit for bit (any NaN equals any NaN),
//! or fail naming the out-of-range index. Where a peer answers otherwise, the script has checked
//! that a documented disagreement (docs/semantics.md, Scatters) explains it.

use serde_json::Value;
use slc::{DType, Executor, Session, Tensor};

fn hex(s: &str) -> Vec<u8> {
    (0..s.len()).step_by(2).map(|i| u8::from_str_radix(&s[i..i + 2], 16).expect("hex")).collect()
}

fn tensor(v: &Value) -> Tensor {
    let dtype: DType = v["dtype"].as_str().expect("a dtype").parse().expect("a known dtype");
    let shape: Vec<usize> =
        v["shape"].as_array().expect("a shape").iter().map(|d| d.as_u64().expect("a dim") as usize).collect();
    Tensor::from_bytes(dtype, &shape, &hex(v["hex"].as_str().expect("hex bytes"))).expect("a tensor")
}

/// Element by element, bit for bit, except that any NaN equals any NaN.
fn same(got: &Tensor, want: &Tensor) -> bool {
    if got.dtype() != want.dtype() || got.shape() != want.shape() {
        return false;
    }
    let w = got.dtype().width();
    let nan = |b: &[u8]| match got.dtype() {
        DType::F16 => half::f16::from_le_bytes([b[0], b[1]]).is_nan(),
        DType::F32 => f32::from_le_bytes(b.try_into().expect("4 bytes")).is_nan(),
        DType::F64 => f64::from_le_bytes(b.try_into().expect("8 bytes")).is_nan(),
        _ => false,
    };
    got.bytes().chunks_exact(w).zip(want.bytes().chunks_exact(w)).all(|(a, b)| a == b || nan(a) && nan(b))
}

fn cases() -> Vec<Value> {
    let text = include_str!("conformance/scatters.jsonl");
    text.lines().map(|l| serde_json::from_str(l).expect("a JSON case")).collect()
}

fn run_cases(executor: Executor) {
    let cases = cases();
    let mut failures = vec![];
    for case in &cases {
        let mut s = Session::with_executor(executor);
        for name in ["data", "indices", "updates"] {
            s.bind(name, tensor(&case["inputs"][name]));
        }
        let src = case["src"].as_str().expect("a program");
        let expect = &case["expect"];
        let problem = match (expect.get("error"), s.eval(src)) {
            (Some(_), Ok(t)) => Some(format!("the peers refuse an index out of range; slc gives {t:?}")),
            (Some(_), Err(e)) => {
                let d = e.diagnostic();
                let at = d.labels.first().map(|l| &src[l.span.start..l.span.end]);
                (d.code != "E0201" || !d.message.contains("is out of bounds") || at != Some("indices"))
                    .then(|| format!("not the out-of-range error at `indices`:\n{}", e.render(src)))
            }
            (None, Err(e)) => Some(format!("slc refuses:\n{}", e.render(src))),
            (None, Ok(t)) => {
                let want = tensor(expect);
                let bytes = |t: &Tensor| t.bytes().iter().map(|b| format!("{b:02x}")).collect::<String>();
                (!same(&t, &want))
                    .then(|| format!("expected {want:?} {}, got {t:?} {}", bytes(&want), bytes(&t)))
            }
        };
        if let Some(p) = problem {
            failures.push(format!("{} `{src}`: {p}", case["id"]));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} peer cases fail ({executor:?}):\n{}",
        failures.len(),
        cases.len(),
        failures[..failures.len().min(20)].join("\n")
    );
}

#[test]
fn peers_on_the_interpreter() {
    run_cases(Executor::Interpreter);
}

#[test]
fn peers_on_the_jit() {
    run_cases(Executor::Jit);
}

/// The file covers what it claims: every operator and reduction, `use_init_val=false`, each
/// dtype, errors; each documented disagreement shown by the peer it belongs to; and cases that
/// tell slc's rules apart from the others (f16 rounded once, integer means rounded down) on
/// which the peers that follow them agree with slc.
#[test]
fn the_cases_cover_the_disagreements() {
    let cases = cases();
    assert!(cases.len() >= 1000, "{} cases", cases.len());
    let count = |f: &dyn Fn(&Value) -> bool| cases.iter().filter(|c| f(c)).count();
    let src = |c: &Value, s: &str| c["src"].as_str().unwrap_or("").contains(s);
    for needle in [
        "scatter_nd(",
        "scatter_elements(",
        "scatter_update(",
        "scatter_nd_update(",
        "scatter_elements_update(",
        "reduction=add",
        "reduction=mul",
        "reduction=sub",
        "reduction=prod",
        "reduction=mean",
        "reduction=max",
        "reduction=min",
        "use_init_val=false",
    ] {
        assert!(count(&|c| src(c, needle)) >= 10, "few cases with {needle}");
    }
    for dtype in ["f16", "f32", "f64", "i8", "u8", "i32", "i64", "bool"] {
        assert!(count(&|c| c["inputs"]["data"]["dtype"] == dtype) >= 20, "few {dtype} cases");
    }
    assert!(count(&|c| c["expect"].get("error").is_some()) >= 20);
    let has =
        |v: &Value, key: &str, rule: &str| v[key].as_array().is_some_and(|r| r.iter().any(|x| x == rule));
    let prefix = |c: &Value, p: &str| c["id"].as_str().unwrap_or("").starts_with(p);
    // (operator, peer, rule): the peer answers by its own rule, documented.
    for (op, peer, rule) in [
        ("onnx-", "ort", "maxmin=take"),
        ("onnx-elements-", "onnx_ref", "maxmin=keep"),
        ("onnx-nd-", "onnx_ref", "maxmin=numpy"),
        ("onnx-", "onnx_ref", "half=step"),
        ("ov-elements-update-", "ov_plugin", "int_mean=trunc"),
        ("ov-elements-update-", "ov_plugin", "no_init=finite"),
        ("ov-elements-update-", "ov_ref", "maxmin=take"),
        ("ov-nd-update-", "ov_plugin", "maxmin=keep"),
        ("ov-nd-update-", "ov_plugin", "bool_sub=arith"),
    ] {
        let shown = count(&|c| prefix(c, op) && c.get("peers").is_some_and(|p| has(&p[peer], "rules", rule)));
        assert!(shown >= 1, "no {op} case shows {peer}'s {rule}");
    }
    // (operator, peer, rule): on cases the other rule would answer otherwise, the peer agrees
    // with slc.
    for (op, peer, rule) in [
        ("ov-nd-update-", "ov_plugin", "half=step"),
        ("ov-nd-update-", "ov_ref", "half=step"),
        ("ov-elements-update-", "ov_plugin", "half=step"),
        ("ov-elements-update-", "ov_ref", "int_mean=trunc"),
        ("onnx-", "ort", "maxmin=keep"),
    ] {
        let agree = count(&|c| {
            prefix(c, op)
                && has(c, "distinguishes", rule)
                && c.get("peers").is_none_or(|p| p.get(peer).is_none())
        });
        assert!(agree >= 1, "no {op} case where {peer} follows slc rather than {rule}");
    }
}
