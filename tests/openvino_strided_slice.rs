//! OpenVINO's own StridedSlice-1 answers (tests/conformance/strided_slice_openvino.jsonl, made by
//! tests/conformance/strided_slice_openvino.py from the CPU plugin): random mask and stride
//! combinations — masks shorter and longer than `begin`, several bits on one entry, zero strides
//! on entries that do not use them, bounds anywhere in i64 — each run through the interpreter and
//! the JIT. slc must give OpenVINO's shape and f32 bytes, or refuse where OpenVINO refuses. Where
//! a shrink entry carries a begin_mask bit, the expected answer is the spec's (the bit ignored,
//! as OpenVINO's reference does); the plugin's own answer is kept beside it as "plugin".

#[path = "support/openvino_cases.rs"]
mod openvino_cases;

use openvino_cases::{counting_from, dims, ints, run_cases};
use serde_json::Value;
use slc::{DType, Executor, Session, Tensor};

const MASKS: [&str; 5] = ["begin_mask", "end_mask", "new_axis_mask", "shrink_axis_mask", "ellipsis_mask"];

fn list(values: &[i64]) -> String {
    let items: Vec<String> = values.iter().map(i64::to_string).collect();
    format!("[{}]", items.join(", "))
}

/// The slc program for a case: every mask given, as OpenVINO requires (all of one length); a
/// length of 0 means OpenVINO got none, which slc spells by leaving them out.
fn source(case: &Value) -> String {
    let [begin, end, stride] = ["begin", "end", "stride"].map(|k| list(&ints(&case[k])));
    let mut src = format!("strided_slice(x, {begin}, {end}, {stride}");
    for name in MASKS {
        let mask = ints(&case["masks"][name]);
        if !mask.is_empty() {
            src += &format!(", {name}={}", list(&mask));
        }
    }
    src + ")"
}

/// f32 0, 1, 2, ... in C order: the input every case reads.
fn arange(shape: &[usize]) -> Tensor {
    counting_from(0, shape)
}

fn bind(session: &mut Session, case: &Value) -> (String, String) {
    let shape = dims(&case["shape"]);
    session.bind("x", arange(&shape));
    (source(case), format!("x: f32{shape:?}"))
}

const CASES: &str = include_str!("conformance/strided_slice_openvino.jsonl");

#[test]
fn openvino_strided_slice_on_the_interpreter() {
    run_cases(CASES, Executor::Interpreter, 500, 0.75, bind);
}

#[test]
fn openvino_strided_slice_on_the_jit() {
    run_cases(CASES, Executor::Jit, 500, 0.75, bind);
}

/// The corners docs/semantics.md ("Where the sources disagree") shows, on `a: f32[4, 5]`: each
/// program is quoted there, and gives what OpenVINO gives (the NumPy spelling), or fails.
#[test]
fn the_documented_corners_run() {
    let doc = include_str!("../docs/semantics.md");
    let corners: [(&str, Option<&str>); 9] = [
        ("strided_slice(a, [0, 0], [1, 1], [1, 0], new_axis_mask=[0, 1])", Some("a[0:1, newaxis]")),
        (
            "strided_slice(a, [0, 1], [1, 2], [0, 1], new_axis_mask=[1, 0], shrink_axis_mask=[1, 0])",
            Some("a[newaxis, 1:2]"),
        ),
        ("strided_slice(a, [0, 1], [1, 2], ellipsis_mask=[1, 0], new_axis_mask=[1, 0])", Some("a[..., 1:2]")),
        ("strided_slice(a, [5, 0], [0, 1], ellipsis_mask=[1, 0], shrink_axis_mask=[1, 0])", None),
        (
            "strided_slice(a, [-1, 0], [0, 1], ellipsis_mask=[1, 0], shrink_axis_mask=[1, 0])",
            Some("a[..., 0:1]"),
        ),
        ("strided_slice(a, [0, 0, 0], [1, 1, 1], ellipsis_mask=[0, 0, 1], shrink_axis_mask=[0, 0, 1])", None),
        ("strided_slice(a, [0, 0], [1, 1], ellipsis_mask=[1, 0, 1])", None),
        ("strided_slice(a, [2], [0], begin_mask=[1], shrink_axis_mask=[1])", Some("a[2]")),
        ("strided_slice(a, [7], [0], begin_mask=[1], shrink_axis_mask=[1])", None),
    ];
    for backend in [Executor::Interpreter, Executor::Jit] {
        let mut session = Session::with_executor(backend);
        session.bind("a", arange(&[4, 5]));
        for (src, numpy) in corners {
            assert!(doc.contains(&format!("`{src}`")), "docs/semantics.md does not show `{src}`");
            let got = session.eval(src);
            match numpy {
                Some(numpy) => {
                    assert_eq!(got.unwrap(), session.eval(numpy).unwrap(), "`{src}` ({backend:?})")
                }
                None => assert!(got.is_err(), "`{src}` ({backend:?}) must fail"),
            }
        }
    }
}

/// A shrink entry ignores its begin_mask bit and takes `begin` (the spec, OpenVINO's reference,
/// TensorFlow; the CPU plugin alone takes element 0): the example on `a: i32[8]`.
#[test]
fn begin_mask_on_a_shrink_entry_is_ignored() {
    let doc = include_str!("../docs/semantics.md");
    let src = "strided_slice(a, [-1], [0], [1], begin_mask=[1], shrink_axis_mask=[1])";
    assert!(doc.contains(&format!("`{src}`")), "docs/semantics.md does not show `{src}`");
    let values: Vec<i64> = (10..18).collect();
    for backend in [Executor::Interpreter, Executor::Jit] {
        let mut session = Session::with_executor(backend);
        session.bind("a", Tensor::from_i64s(DType::I32, &[8], &values).unwrap());
        let got = session.eval(src).unwrap();
        assert_eq!(got, Tensor::from_i64s(DType::I32, &[], &[17]).unwrap(), "{backend:?}");
        assert_eq!(got, session.eval("a[7]").unwrap());
    }
}
