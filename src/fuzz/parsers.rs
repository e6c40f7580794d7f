//! The targets that feed arbitrary bytes to a reader (the front end, the plan text parser, the
//! `.npy` reader): each has its own inputs and checks, apart from the random program cases.

use super::{fill, jit_equals_interp, plan_round_trip};
use crate::error::Error;
use crate::plan;
use crate::sema::{InputTypes, InputValues};
use slc_runtime::{DType, Tensor, encode_npy, parse_npy, read_npy};
use std::sync::OnceLock;

/// Input declarations for [`front_end`]: small tensors of several dtypes (some with known
/// values, usable as operator parameters), then the same names at extreme sizes.
fn front_end_inputs() -> &'static [(InputTypes, InputValues); 2] {
    static INPUTS: OnceLock<[(InputTypes, InputValues); 2]> = OnceLock::new();
    INPUTS.get_or_init(|| {
        let decl = |decls: &[(&str, &str)]| -> InputTypes {
            decls.iter().map(|(n, t)| (n.to_string(), t.parse().expect("a type"))).collect()
        };
        let value = |dtype, shape: &[usize], v: &[i64]| Tensor::from_i64s(dtype, shape, v).expect("a value");
        let small = decl(&[
            ("a", "f32[2, 3, 4]"),
            ("b", "bool[3]"),
            ("c", "f16[0, 3]"),
            ("data", "i64[4, 4, 4]"),
            ("img", "u8[4, 6, 3]"),
            ("x", "bf16[1, 1, 2, 1, 1, 1, 1, 1, 2]"),
            ("i1", "i64[2]"),
            ("i2", "u16[2, 1]"),
            ("idx", "i32[2, 2]"),
            ("k", "i64[]"),
        ]);
        let values: InputValues = [
            ("i1", value(DType::I64, &[2], &[1, -1])),
            ("i2", value(DType::U16, &[2, 1], &[0, 2])),
            ("idx", value(DType::I32, &[2, 2], &[0, 1, -1, 2])),
            ("k", value(DType::I64, &[], &[1])),
            ("b", Tensor::from_bytes(DType::Bool, &[3], &[1, 0, 1]).expect("a mask")),
        ]
        .into_iter()
        .map(|(n, t)| (n.to_string(), t))
        .collect();
        let huge = decl(&[
            ("a", "u8[3037000499, 3037000499]"),
            ("b", "f64[4611686018427387904]"),
            ("c", "i8[0, 9223372036854775807]"),
            ("data", "i64[2147483648, 2, 2147483648]"),
            ("img", "u8[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"),
            ("x", "bf16[9223372036854775807]"),
            ("i1", "i64[4294967296]"),
            ("i2", "u16[65536, 65536]"),
            ("idx", "i32[2, 2]"),
            ("k", "i64[]"),
        ]);
        [(small, values.clone()), (huge, values)]
    })
}

/// A diagnostic renders against the text it came from, whatever its spans.
fn check_diagnostic(e: &Error, src: &str) {
    let d = e.diagnostic();
    assert!(!d.code.is_empty() && !d.message.is_empty(), "{e:?}");
    let text = e.render(src);
    assert!(text.contains(d.code), "{text}");
}

/// The whole front end on arbitrary text, against two sets of declared inputs: every program is
/// compiled (its plan's text must read back) or rejected with a diagnostic that renders.
pub fn front_end(data: &[u8]) {
    let src = String::from_utf8_lossy(data);
    for (types, values) in front_end_inputs() {
        match crate::compile_with_values(&src, types, values) {
            Ok(compiled) => plan_round_trip(&compiled.plan),
            Err(e) => check_diagnostic(&e, &src),
        }
    }
}

/// Plans small enough to run in [`plan_text`]: elements per input, and of the output.
const RUN_MAX_ELEMENTS: i64 = 1 << 16;

/// The plan text parser on arbitrary text. A plan that parses prints to text that parses back
/// to the same plan; verification accepts or rejects it without panicking; a plan it accepts
/// (when small) runs on the interpreter without leaving a buffer, and the JIT agrees.
pub fn plan_text(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(p) = plan::parse::parse(&text) else { return };
    let printed = p.to_string();
    let again = plan::parse::parse(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert_eq!(again, p, "{printed}");
    assert_eq!(again.to_string(), printed);
    let Ok(p) = plan::verify(p) else { return };
    let small = |shape: &[i64]| {
        shape.iter().try_fold(1i64, |n, &d| n.checked_mul(d)).is_some_and(|n| n <= RUN_MAX_ELEMENTS)
    };
    if !small(&p.shape) || !p.inputs.iter().all(|d| small(&d.tensor_shape())) {
        return;
    }
    // Integer inputs hold small values, so that index checks pass as often as they fail.
    let inputs: Vec<Tensor> = p
        .inputs
        .iter()
        .map(|d| {
            let shape: Vec<usize> = d.tensor_shape().iter().map(|&v| v as usize).collect();
            if d.dtype.is_integer() {
                let n: usize = shape.iter().product();
                let values: Vec<i64> =
                    (0..n as i64).map(|v| v % 5 - if d.dtype.is_signed() { 2 } else { 0 }).collect();
                Tensor::from_i64s(d.dtype, &shape, &values).expect("small values")
            } else {
                fill(d.dtype, &shape, shape.len() as u64)
            }
        })
        .collect();
    let args: Vec<&Tensor> = inputs.iter().collect();
    let _ = jit_equals_interp(&p, &args, &printed);
}

/// The `.npy` reader on arbitrary bytes: an error, or a tensor whose buffer holds exactly its
/// shape's elements and which writes back to bytes that read to the same tensor. The file
/// reader (which reads the header in pieces) agrees with the in-memory one.
pub fn npy(data: &[u8]) {
    let parsed = parse_npy(data);
    if let Ok(t) = &parsed {
        assert_eq!(Some(t.nbytes()), Tensor::byte_size(t.dtype(), t.shape()), "{t:?}");
        let bytes = encode_npy(t).expect("a tensor read from .npy has a .npy dtype");
        let again = parse_npy(&bytes).unwrap_or_else(|e| panic!("{t:?} written, then: {e}"));
        assert_eq!(&again, t);
        assert_eq!(encode_npy(&again).ok(), Some(bytes), "writing is deterministic");
    }
    let path = std::env::temp_dir().join(format!(
        "slc-fuzz-npy-{}-{:?}.npy",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::write(&path, data).expect("a scratch file");
    let from_file = read_npy(&path);
    let _ = std::fs::remove_file(&path);
    // A file that starts as a zip archive is read as `.npz` (its one array), which bytes in
    // memory are not: reading it must only not crash.
    if data.starts_with(b"PK\x03\x04") {
        return;
    }
    match (&parsed, &from_file) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(a), Err(b)) => {
            assert_eq!(std::mem::discriminant(a), std::mem::discriminant(b), "memory: {a}; file: {b}")
        }
        _ => panic!("memory: {parsed:?}; file: {from_file:?}"),
    }
}
