//! Test data built the way the recorded corpora were: an integer as an element of any dtype
//! (the conformance files), splitmix64 bytes (tests/golden/gen.py's `fill()`), and a golden
//! case's input. tests/conformance.rs, tests/golden.rs and the shared cases (cases.rs) use them.

#![allow(dead_code)]

use serde_json::Value;
use slc::measure::SplitMix;
use slc::{DType, Tensor};

/// Little-endian bytes of `v` as an element of `dtype` (integers wrap, floats are exact here).
pub fn element(dtype: DType, v: i64) -> Vec<u8> {
    match dtype {
        DType::Bool => vec![(v != 0) as u8],
        DType::F16 => half::f16::from_f64(v as f64).to_le_bytes().to_vec(),
        DType::BF16 => half::bf16::from_f64(v as f64).to_le_bytes().to_vec(),
        DType::F32 => (v as f32).to_le_bytes().to_vec(),
        DType::F64 => (v as f64).to_le_bytes().to_vec(),
        // `v - vi`: both parts nonzero, so a swapped or dropped half shows.
        DType::C64 => [(v as f32).to_le_bytes(), (-v as f32).to_le_bytes()].concat(),
        DType::C128 => [(v as f64).to_le_bytes(), (-v as f64).to_le_bytes()].concat(),
        d => v.to_le_bytes()[..d.width()].to_vec(),
    }
}

/// splitmix64 bytes from `seed`, as gen.py's `fill()` (bools masked to 0 and 1).
pub fn splitmix_fill(dtype: DType, shape: &[usize], seed: u64) -> Tensor {
    let n = Tensor::byte_size(dtype, shape).expect("a small tensor");
    let mut rng = SplitMix(seed);
    let mut bytes = Vec::with_capacity(n + 8);
    while bytes.len() < n {
        bytes.extend_from_slice(&rng.next_u64().to_le_bytes());
    }
    bytes.truncate(n);
    if dtype == DType::Bool {
        bytes.iter_mut().for_each(|b| *b &= 1);
    }
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

/// A golden case's input: its listed values, or gen.py's bytes from its seed.
pub fn golden_input(spec: &Value) -> Tensor {
    let dtype = DType::from_name(spec["dtype"].as_str().expect("dtype")).expect("a known dtype");
    let shape: Vec<usize> = spec["shape"]
        .as_array()
        .expect("a shape")
        .iter()
        .map(|d| d.as_u64().expect("a dimension") as usize)
        .collect();
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
        None => splitmix_fill(dtype, &shape, spec["seed"].as_u64().expect("a seed")),
    }
}
