//! Helpers shared by the DirectML test files (tests/dml*.rs): input types, feature levels,
//! lowering a source, the operators of a graph, test tensors, and `agree` (lower, emulate and
//! compare with the interpreter).

#![allow(dead_code)] // each test file uses some of these

use slc::backend::dml::desc::*;
use slc::backend::dml::{DmlError, DmlGraph, DmlOptions, EmulateError, FeatureLevel, emulate, lower};
use slc::backend::interp;
use slc::sema::InputTypes;
use slc::types::TensorType;
use slc::{DType, Tensor};

pub fn types(decls: &[(&str, DType, &[i64])]) -> InputTypes {
    decls.iter().map(|(n, d, s)| (n.to_string(), TensorType { dtype: *d, shape: s.to_vec() })).collect()
}

pub fn level(s: &str) -> DmlOptions {
    DmlOptions { feature_level: FeatureLevel::parse(s).unwrap() }
}

pub fn lower_src(
    src: &str,
    decls: &[(&str, DType, &[i64])],
    opts: &DmlOptions,
) -> Result<DmlGraph, DmlError> {
    let compiled = slc::compile(src, &types(decls)).unwrap_or_else(|e| panic!("{src}: {e}"));
    lower(&compiled.plan, opts)
}

/// The operators, in node order: the graph's nodes, or the one operator below 2.1.
pub fn ops(g: &DmlGraph) -> Vec<&OperatorFields> {
    match &g.operator_desc {
        Some(op) => vec![&op.desc],
        None => g.graph_desc.iter().flat_map(|gd| gd.nodes.iter().map(|n| &n.desc.operator.desc)).collect(),
    }
}

pub fn slice1(g: &DmlGraph, n: usize) -> &Slice1Desc {
    match ops(g)[n] {
        OperatorFields::Slice1(d) => d,
        other => panic!("node {n} is {:?}", other.operator_type()),
    }
}

/// 0, 1, 2, ... (mod 100) in any dtype.
pub fn arange(dtype: DType, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let values: Vec<i64> = (0..n as i64).map(|v| v % 100).collect();
    let bytes: Vec<u8> = match dtype {
        DType::F32 => values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
        DType::F64 => values.iter().flat_map(|&v| (v as f64).to_le_bytes()).collect(),
        DType::F16 => values.iter().flat_map(|&v| half::f16::from_f32(v as f32).to_le_bytes()).collect(),
        DType::BF16 => values.iter().flat_map(|&v| half::bf16::from_f32(v as f32).to_le_bytes()).collect(),
        DType::Bool => values.iter().map(|&v| (v & 1) as u8).collect(),
        _ => return Tensor::from_i64s(dtype, shape, &values).unwrap(),
    };
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

/// Lowers, emulates and compares with the interpreter on the given tensors.
pub fn agree(src: &str, tensors: &[(&str, Tensor)], opts: &DmlOptions) -> DmlGraph {
    let decls: InputTypes =
        tensors.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
    let compiled = slc::compile(src, &decls).unwrap_or_else(|e| panic!("{src}: {e}"));
    let args: Vec<&Tensor> =
        compiled.plan.inputs.iter().map(|d| &tensors.iter().find(|(n, _)| *n == d.name).unwrap().1).collect();
    let want = interp::run(&compiled.plan, &args);
    let g = lower(&compiled.plan, opts).unwrap_or_else(|e| panic!("{src}: {e}"));
    let got = emulate(&g, &args);
    match (want, got) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{src}"),
        (Err(a), Err(EmulateError::Runtime(b))) => assert_eq!(a, b.located(&compiled.plan), "{src}"),
        (a, b) => panic!("{src}: interpreter {a:?}, emulator {b:?}\n{}", g.to_json()),
    }
    g
}
