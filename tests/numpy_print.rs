//! slc prints a result as NumPy's `str(x)` does (`slc eval`, the REPL): NumPy's text for 1,500
//! random float and complex arrays (tests/conformance/numpy_print.jsonl, written by
//! numpy_print.py next to it from NumPy 2.4), each compared whole.

use slc::{DType, Tensor};
use slc_runtime::{PrintOptions, format_tensor};

#[test]
fn floats_print_as_numpy_prints_them() {
    let corpus = include_str!("conformance/numpy_print.jsonl");
    let mut wrong = vec![];
    let mut cases = 0;
    for line in corpus.lines() {
        let case: serde_json::Value = serde_json::from_str(line).expect("a JSON line");
        let dtype = match case["dtype"].as_str().unwrap() {
            "float16" => DType::F16,
            "float32" => DType::F32,
            "float64" => DType::F64,
            "complex64" => DType::C64,
            other => {
                assert_eq!(other, "complex128");
                DType::C128
            }
        };
        let shape: Vec<usize> =
            case["shape"].as_array().unwrap().iter().map(|d| d.as_u64().unwrap() as usize).collect();
        let hex = case["hex"].as_str().unwrap();
        let bytes: Vec<u8> =
            (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
        let tensor = Tensor::from_bytes(dtype, &shape, &bytes).unwrap();
        let got = format_tensor(&tensor, &PrintOptions::default());
        let want = case["str"].as_str().unwrap();
        if got != want {
            wrong.push(format!("{} {:?} {hex}\n  NumPy: {want:?}\n  slc:   {got:?}", dtype.name(), shape));
        }
        cases += 1;
    }
    assert_eq!(cases, 1500);
    assert!(
        wrong.is_empty(),
        "{} of {cases} differ:\n{}",
        wrong.len(),
        wrong[..wrong.len().min(25)].join("\n")
    );
}
