//! Every back end agrees with the reference interpreter, bit for bit: random programs (NumPy
//! indexing and the operator forms, chained, over every element width) through the JIT on one
//! and on several threads. Each plan also round-trips through its text form.

use proptest::prelude::*;
use slc::{Backend, DType, Session, Tensor};

fn fill(dtype: DType, shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product::<usize>() * dtype.width();
    let mut state = seed;
    let bytes: Vec<u8> = (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let b = (state >> 33) as u8;
            if dtype == DType::Bool { b & 1 } else { b }
        })
        .collect();
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

fn item() -> impl Strategy<Value = String> {
    let bound = proptest::option::of(-7i64..7).prop_map(|b| b.map(|v| v.to_string()).unwrap_or_default());
    let step = prop_oneof![
        Just(String::new()),
        (-3i64..0).prop_map(|s| format!(":{s}")),
        (1i64..4).prop_map(|s| format!(":{s}"))
    ];
    prop_oneof![
        4 => (bound.clone(), bound, step).prop_map(|(a, b, c)| format!("{a}:{b}{c}")),
        2 => (-2i64..2).prop_map(|i| i.to_string()),
        1 => Just("...".to_string()),
        1 => Just("newaxis".to_string()),
        1 => proptest::collection::vec(-3i64..3, 0..4).prop_map(|v| format!("{v:?}")),
        1 => Just("idx".to_string()),
    ]
}

fn step() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => proptest::collection::vec(item(), 1..4).prop_map(|items| format!("[{}]", items.join(", "))),
    ]
}

fn program() -> impl Strategy<Value = String> {
    let mode = prop_oneof![Just("zero"), Just("error"), Just("clamp"), Just("wrap")];
    prop_oneof![
        3 => proptest::collection::vec(step(), 1..4).prop_map(|s| format!("a{}", s.concat())),
        1 => (0usize..3, mode, proptest::collection::vec(step(), 0..2))
            .prop_map(|(axis, mode, s)| format!("gather(a, idx, axis={axis}, mode={mode}){}", s.concat())),
        1 => (0usize..2, proptest::collection::vec(step(), 0..2))
            .prop_map(|(axis, s)| format!("gather(a, idx2, axis={}, batch_dims=1){}", axis + 1, s.concat())),
        1 => proptest::collection::vec(step(), 0..2).prop_map(|s| format!("a[idx[::-1]][..., idx]{}", s.concat())),
    ]
}

const DTYPES: [DType; 5] = [DType::U8, DType::I16, DType::F32, DType::F64, DType::Bool];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]
    #[test]
    fn jit_equals_interpreter(
        shape in proptest::collection::vec(0usize..6, 1..5),
        dtype in proptest::sample::select(DTYPES.to_vec()),
        idx in proptest::collection::vec(-6i64..6, 0..5),
        idx_dtype in proptest::sample::select(vec![DType::I8, DType::U16, DType::I32, DType::I64, DType::U64]),
        src in program(),
        seed in any::<u64>(),
    ) {
        let idx: Vec<i64> = if idx_dtype.is_signed() { idx } else { idx.into_iter().map(|v| v.abs()).collect() };
        let a = fill(dtype, &shape, seed);
        let idx_t = Tensor::from_i64s(idx_dtype, &[idx.len()], &idx).unwrap();
        let b = shape[0];
        let idx2 = Tensor::from_i64s(DType::I32, &[b, 2], &(0..2 * b as i64).map(|v| v % 3 - 1).collect::<Vec<_>>()).unwrap();
        let mut sessions = [
            (Session::with_backend(Backend::Interp), 1),
            (Session::with_backend(Backend::Jit), 1),
            (Session::with_backend(Backend::Jit), 3),
        ];
        let mut results = vec![];
        for (s, threads) in sessions.iter_mut() {
            s.options_mut().threads = *threads;
            s.bind("a", a.clone());
            s.bind("idx", idx_t.clone());
            s.bind("idx2", idx2.clone());
            results.push(s.eval(&src).map_err(|e| e.to_string()));
        }
        // The plan's text form reads back to the same plan, which verifies again.
        if let Ok(compiled) = sessions[0].0.compile(&src) {
            let text = compiled.plan.to_string();
            let parsed = slc::plan::parse::parse(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
            prop_assert_eq!(&parsed, &compiled.plan);
            prop_assert!(slc::plan::verify(&parsed).is_ok());
        }
        prop_assert_eq!(&results[0], &results[1], "{}", src);
        prop_assert_eq!(&results[0], &results[2], "{} (threads)", src);
    }
}
