//! Test cases shared by the AOT and C ABI tests: every runnable seed conformance example, the
//! ONNX Runtime gather cases, and a deterministic random sample of the NumPy golden corpus, with
//! their inputs built exactly as tests/conformance.rs and tests/golden.rs build them.

#![allow(dead_code)]

#[path = "data.rs"]
mod data;

use data::{element, golden_input};
use serde_json::Value;
use slc::Tensor;
use slc::types::TensorType;

pub struct Case {
    pub id: String,
    pub src: String,
    /// Declared inputs, in order.
    pub inputs: Vec<(String, Tensor)>,
}

impl Case {
    pub fn types(&self) -> Vec<(String, TensorType)> {
        self.inputs.iter().map(|(n, t)| (n.clone(), TensorType::of(t.dtype(), t.shape()))).collect()
    }
}

/// The seed examples whose inputs all have values (`in NAME: TYPE = ...`, `arange`, `arange1`).
pub fn seeds() -> Vec<Case> {
    conformance(include_str!("../conformance/seeds.txt"))
}

/// The ONNX Runtime gather cases (tests/conformance/onnx_gathers.txt), all runnable.
pub fn onnx_gathers() -> Vec<Case> {
    conformance(include_str!("../conformance/onnx_gathers.txt"))
}

/// The cases of a conformance file whose inputs all have values.
fn conformance(text: &str) -> Vec<Case> {
    let mut cases: Vec<Case> = vec![];
    let mut runnable = true;
    let finish = |cases: &mut Vec<Case>, runnable: bool| {
        if !runnable {
            cases.pop();
        }
    };
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        if let Some(id) = line.strip_prefix("== ") {
            finish(&mut cases, runnable);
            runnable = true;
            cases.push(Case { id: id.to_string(), src: String::new(), inputs: vec![] });
            continue;
        }
        let case = cases.last_mut().expect("a case header first");
        let (key, value) = line.split_once(':').expect("KEY: VALUE");
        let value = value.trim();
        if key == "src" {
            case.src = value.to_string();
        } else if let Some(name) = key.strip_prefix("in ") {
            let i = value.find(']').expect("a type");
            let ty: TensorType = value[..=i].parse().expect("a tensor type");
            let shape: Vec<usize> = ty.shape.iter().map(|&d| d as usize).collect();
            let n: usize = shape.iter().product();
            let bytes: Vec<u8> = match value[i + 1..].trim() {
                "" => {
                    runnable = false;
                    continue;
                }
                "arange" => (0..n as i64).flat_map(|v| element(ty.dtype, v)).collect(),
                "arange1" => (1..=n as i64).flat_map(|v| element(ty.dtype, v)).collect(),
                r => r
                    .strip_prefix('=')
                    .expect("= values")
                    .split_whitespace()
                    .flat_map(|v| element(ty.dtype, v.parse().expect("an integer")))
                    .collect(),
            };
            case.inputs
                .push((name.trim().to_string(), Tensor::from_bytes(ty.dtype, &shape, &bytes).unwrap()));
        }
    }
    finish(&mut cases, runnable);
    cases
}

/// `count` golden cases drawn without replacement by a fixed-seed generator (the same sample
/// every run, spread over the whole corpus).
pub fn golden_sample(count: usize, seed: u64) -> Vec<Case> {
    // The loads: the sample stays what it was before the stores (id 5100 on) were added.
    golden_drawn(count, seed, |line| !is_store(line))
}

/// `count` of the golden corpus's stores (`a[...] = v`, `+=`, `*=`), drawn as [`golden_sample`]
/// draws.
pub fn golden_stores(count: usize, seed: u64) -> Vec<Case> {
    golden_drawn(count, seed, is_store)
}

fn is_store(line: &str) -> bool {
    [" = ", " += ", " *= "].iter().any(|op| line.contains(op))
}

fn golden_drawn(count: usize, seed: u64, keep: fn(&str) -> bool) -> Vec<Case> {
    let lines: Vec<&str> = include_str!("../golden/cases.jsonl").lines().filter(|l| keep(l)).collect();
    let mut picks: Vec<usize> = (0..lines.len()).collect();
    let mut state = seed;
    for i in (1..picks.len()).rev() {
        state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        let j = (state >> 33) as usize % (i + 1);
        picks.swap(i, j);
    }
    picks.truncate(count);
    picks.sort_unstable();
    picks
        .into_iter()
        .map(|i| {
            let case: Value = serde_json::from_str(lines[i]).expect("a JSON case");
            let inputs = case["inputs"]
                .as_object()
                .unwrap()
                .iter()
                .map(|(name, spec)| (name.clone(), golden_input(spec)))
                .collect();
            Case {
                id: format!("golden-{}", case["id"]),
                src: case["src"].as_str().unwrap().to_string(),
                inputs,
            }
        })
        .collect()
}

/// The library interpreter's answer: `Ok(tensor)`, or `Err(status)` with the status a kernel
/// must return for the same failure (1 index out of range, 2 empty axis).
pub fn oracle(case: &Case) -> Result<Tensor, i32> {
    let mut s = slc::Session::with_executor(slc::Executor::Interpreter);
    for (name, t) in &case.inputs {
        s.bind(name, t.clone());
    }
    s.eval(&case.src).map_err(|e| match e {
        slc::Error::Runtime(slc::backend::RuntimeError::EmptyAxis) => 2,
        _ => 1,
    })
}

/// The opening of a C driver for linked kernels: the headers of `kernels` (name and case),
/// each case's inputs as arrays `inI_K` (kernel I, input K), `dump` (hex to stdout), two
/// 4 MiB outputs `outa` and `outb`, and `int main(void) {`.
pub fn c_driver_prelude<'c>(kernels: impl Iterator<Item = (&'c str, &'c Case)> + Clone) -> String {
    use std::fmt::Write as _;
    let mut c = String::from("#include <stdio.h>\n#include <string.h>\n#include <stdint.h>\n");
    for (name, _) in kernels.clone() {
        let _ = writeln!(c, "#include \"{name}.h\"");
    }
    for (i, (_, case)) in kernels.enumerate() {
        for (k, (_, t)) in case.inputs.iter().enumerate() {
            let _ = writeln!(c, "static _Alignas(64) const uint8_t in{i}_{k}[] = {};", c_bytes(t.bytes()));
        }
    }
    c.push_str(
        "static void dump(const uint8_t *p, long n) { for (long i = 0; i < n; i++) printf(\"%02x\", p[i]); }\n\
         static _Alignas(64) uint8_t outa[1 << 22];\nstatic _Alignas(64) uint8_t outb[1 << 22];\nint main(void) {\n",
    );
    c
}

/// `{0x01,0x02,...}` (at least one byte: C has no empty arrays).
pub fn c_bytes(bytes: &[u8]) -> String {
    if bytes.is_empty() {
        return "{0}".into();
    }
    let items: Vec<String> = bytes.iter().map(|b| format!("{b}")).collect();
    format!("{{{}}}", items.join(","))
}

pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}
