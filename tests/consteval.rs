//! Compile-time evaluation (`slc::sema::consteval`, which gives operator parameters their values
//! while a program is checked) against the reference interpreter of the plan, on random
//! programs over integer tensors: the same elements, and an error exactly where the interpreter
//! fails.

use slc::fuzz::{Case, Rng};
use slc::sema::consteval::{self, ConstEvalError};
use slc::{Executor, Session};

#[test]
fn consteval_equals_the_interpreter() {
    let (mut compared, mut failed) = (0, 0);
    for seed in 0..3000 {
        let case = Case::draw(&mut Rng::new(seed));
        if !case.inputs[0].1.dtype().is_integer() {
            continue;
        }
        let Ok(compiled) = slc::compile(&case.src, &case.types()) else { continue };
        let mut session = Session::with_executor(Executor::Interpreter);
        for (name, t) in &case.inputs {
            session.bind(name, t.clone());
        }
        let value_of = |name: &str| case.inputs.iter().find(|(n, _)| *n == name).map(|(_, t)| t);
        let got = consteval::evaluate(&compiled.checked, &value_of);
        match session.eval(&case.src) {
            Ok(want) => {
                let want: Vec<i128> = (0..want.numel()).map(|i| want.int_at(i).unwrap()).collect();
                assert_eq!(got, Ok(want), "{}", case.src);
                compared += 1;
            }
            Err(e) => {
                assert!(
                    matches!(got, Err(ConstEvalError::IndexOutOfRange { .. })),
                    "{}: {e} but {got:?}",
                    case.src
                );
                failed += 1;
            }
        }
    }
    assert!(compared > 300 && failed > 10, "{compared} compared, {failed} failures compared");
}

/// Forms the random programs seldom reach: NumPy's placement rule moving gathered dimensions
/// in front, several index arrays broadcast together, batch dimensions, every mode.
#[test]
fn placements_and_modes_equal_the_interpreter() {
    let a = slc::fuzz::fill(slc::DType::I32, &[2, 3, 4, 5], 7);
    let i = slc::Tensor::from_i64s(slc::DType::I64, &[2, 2], &[0, -1, 3, 9]).unwrap();
    let b = slc::Tensor::from_i64s(slc::DType::I16, &[2, 3], &[0, 1, -1, 2, 7, -9]).unwrap();
    let inputs = [("a", a), ("i", i), ("b", b)];
    let programs = [
        "a[0, :, i[:1]]",
        "a[:, 1, :, i[0]]",
        "a[1, ..., i[:, :1]][::-1]",
        "gather(a, b, axis=2, mode=clamp)",
        "gather(a, b, axis=3, mode=wrap)[:, ::2]",
        "gather(a, b, axis=1, batch_dims=1, mode=zero)",
        "gather(a, b, axis=2, batch_dims=-1, mode=clamp)",
        "a[0, :, i]",
        "gather_elements(a[0, 0], b, axis=1, mode=wrap)",
        "gather_elements(a[1, :, 0], b[::-1], axis=-1, mode=clamp)[1:]",
        "gather_elements(a[0, 0], b, axis=0)",
        "gather_nd(a, b[:, :2], batch_dims=1, mode=clamp)",
        "gather_nd(a[::-1], i, mode=zero)[1:]",
        "gather_nd(a, i[:, :1])",
        "gather_nd(a, i)",
        // Several index arrays broadcast together, integers and masks among them.
        "a[i[:1, :1], :, [[0], [3]], b[0]]",
        "a[..., b[:1, :2], [[1], [-2]]][::-1]",
        "a[[True, False], :, [0, -1], 1]",
        "a[:, [True, False, True], i[0]]",
        "a[i[:, :1], 2, b[:, 1:3]]",
    ];
    let types = inputs
        .iter()
        .map(|(n, t)| (n.to_string(), slc::types::TensorType::of(t.dtype(), t.shape())))
        .collect();
    let mut session = Session::with_executor(Executor::Interpreter);
    for (name, t) in &inputs {
        session.bind(name, t.clone());
    }
    let value_of = |name: &str| inputs.iter().find(|(n, _)| *n == name).map(|(_, t)| t);
    for src in programs {
        let compiled = slc::compile(src, &types).unwrap_or_else(|e| panic!("{src}: {e}"));
        let got = consteval::evaluate(&compiled.checked, &value_of);
        match session.eval(src) {
            Ok(want) => {
                let want: Vec<i128> = (0..want.numel()).map(|i| want.int_at(i).unwrap()).collect();
                assert_eq!(got, Ok(want), "{src}");
            }
            Err(e) => {
                assert!(matches!(got, Err(ConstEvalError::IndexOutOfRange { .. })), "{src}: {e} but {got:?}")
            }
        }
    }
}

/// A u64 parameter beyond i64's range means what its value says (here: "to the end"), not
/// the negative number its bits would make.
#[test]
fn large_unsigned_parameters_saturate() {
    let x = slc::Tensor::from_i64s(slc::DType::I64, &[4], &[1, 2, 3, 4]).unwrap();
    let big = slc::Tensor::from_bytes(slc::DType::U64, &[1], &u64::MAX.to_le_bytes()).unwrap();
    let mut session = Session::new();
    session.bind("x", x);
    session.bind("big", big);
    let bounded = session.eval("strided_slice(x, [1], big)").unwrap();
    assert_eq!(bounded, session.eval("x[1:]").unwrap());
    let from_beyond_the_end = session.eval("strided_slice(x, big, [9])").unwrap();
    assert_eq!(from_beyond_the_end.numel(), 0);
}
