//! Every back end agrees with the reference interpreter, bit for bit: random programs (NumPy
//! indexing and the operator forms, chained, over every element width; `slc::fuzz`'s generator)
//! through the JIT on one and on several threads. Each plan also round-trips through its text
//! form.

use proptest::prelude::*;
use slc::fuzz::{Case, Rng, check_case};
use slc::{Executor, Session};

proptest! {
    #![proptest_config(ProptestConfig::with_cases(1500))]
    #[test]
    fn jit_equals_interpreter(seed in any::<u64>()) {
        let case = Case::draw(&mut Rng::new(seed));
        // One thread, and the plan's text form (panics on a mismatch).
        check_case(&case);
        // Several threads, through sessions as an embedder uses them.
        let mut sessions = [
            (Session::with_executor(Executor::Interpreter), 1),
            (Session::with_executor(Executor::Jit), 3),
        ];
        let mut results = vec![];
        for (s, threads) in sessions.iter_mut() {
            s.options_mut().threads = *threads;
            for (name, t) in &case.inputs {
                s.bind(name, t.clone());
            }
            results.push(s.eval(&case.src).map_err(|e| e.to_string()));
        }
        prop_assert_eq!(&results[0], &results[1], "{} (threads)", case.src);
    }
}

/// Gathers whose indices are the same in every row (`a[:, idx]`) run through a table of
/// normalized indices filled once per chunk of columns, and gathers whose indices change along
/// the row walk the index tensor by pointer (in-range indices on a short path): chunk edges,
/// every out-of-range policy, nested and narrow indices, reversed rows, and thread ranges all
/// agree with the interpreter.
#[test]
fn row_gathers_agree_with_the_interpreter() {
    use slc::{DType, Tensor};
    let ramp = |shape: &[usize]| {
        let n: usize = shape.iter().product();
        let values: Vec<u8> = (0..n).flat_map(|i| (i as f32).to_le_bytes()).collect();
        Tensor::from_bytes(DType::F32, shape, &values).unwrap()
    };
    // 600 columns: two full chunks of the table and a partial one.
    let columns: Vec<i64> = (0..600).map(|k| (k * 7919 % 700) - 100).collect();
    let in_range: Vec<i64> = columns.iter().map(|&j| j.rem_euclid(300) - 150).collect();
    let narrow: Vec<i64> = (0..600).map(|k| k * 13 % 256).collect();
    // Values in [0, len) of 512 rows of 600, but for one in 97 (negative or past the end).
    let sprinkled = |len: i64| -> Vec<i64> {
        (0..512 * 600)
            .map(|k: i64| match k % 97 {
                0 if k % 2 == 0 => -1 - k % 7,
                0 => len + k % 5,
                _ => k * 7919 % len,
            })
            .collect()
    };
    let inputs = [
        ("a", ramp(&[512, 300])),
        ("b", ramp(&[3, 4, 300])),
        ("idx", Tensor::from_i64s(DType::I64, &[600], &columns).unwrap()),
        ("ok", Tensor::from_i64s(DType::I32, &[600], &in_range).unwrap()),
        ("u", Tensor::from_i64s(DType::U8, &[600], &narrow).unwrap()),
        ("perm", Tensor::from_i64s(DType::I64, &[300], &(0..300).rev().collect::<Vec<_>>()).unwrap()),
        ("rows", Tensor::from_i64s(DType::I64, &[512, 600], &columns.repeat(512)).unwrap()),
        ("rows16", Tensor::from_i64s(DType::I16, &[512, 600], &in_range.repeat(512)).unwrap()),
        // More columns than the table holds.
        ("wide", ramp(&[8, 5000])),
        ("cols", Tensor::from_i64s(DType::I64, &[3000], &columns.repeat(5)).unwrap()),
        // Batched indices nearly all in range: unrolled trips of in-range indices (tested at
        // once, by their maximum for a length of 300 and by their bitwise or for 256) among
        // trips with one index out.
        ("fine", Tensor::from_i64s(DType::I64, &[512, 600], &sprinkled(300)).unwrap()),
        ("fine32", Tensor::from_i64s(DType::I32, &[512, 600], &sprinkled(256)).unwrap()),
        ("c", ramp(&[512, 256])),
        // A mask over `a`: a row in 3 true, and each true row's columns in a pattern.
        ("m", {
            let bits: Vec<u8> = (0..512 * 300).map(|k| u8::from((k / 300) % 3 == 0 && k % 7 != 3)).collect();
            Tensor::from_bytes(DType::Bool, &[512, 300], &bits).unwrap()
        }),
    ];
    let programs = [
        "gather(a, idx, axis=1)",
        "gather(a, idx, axis=1, mode=clamp)",
        "gather(a, idx, axis=1, mode=wrap)",
        "gather(a, idx, axis=1, mode=error)",
        "a[:, ok]",
        "a[:, idx]",
        "a[::-1, ok][::3]",
        "b[:, :, ok]",
        "gather(b, u, axis=2)",
        "a[:, perm[ok]]",
        "gather(a, gather(perm, idx, axis=0), axis=1)",
        "a[1:3, ok]",
        "gather(a, rows, axis=1, batch_dims=1)",
        "gather(a, rows, axis=1, batch_dims=1, mode=clamp)",
        "gather(a, rows, axis=1, batch_dims=1, mode=wrap)",
        "gather(a, rows, axis=1, batch_dims=1, mode=error)",
        "gather(a[::-1], rows16[:, ::-1], axis=1, batch_dims=1, mode=error)",
        "a[rows16[:2, :3]]",
        "gather(a, rows[7], axis=1)",
        "gather(wide, cols, axis=1)",
        "wide[:, cols[200:]]",
        // Zero mode with every index in range: the rows skip the miss tests.
        "gather(a, ok, axis=1)",
        "gather(a[::-1], ok[::-1], axis=1, mode=zero)",
        // Batched gathers take a short path for in-range indices and branch out for the rest;
        // here a zero-mode miss of the outer row gather also sends whole rows out.
        "gather(gather(a, idx[:512], axis=0, mode=zero), rows, axis=1, batch_dims=1, mode=wrap)",
        "gather(gather(a, idx[:512], axis=0, mode=zero), rows16, axis=1, batch_dims=1, mode=error)",
        "gather(a, fine, axis=1, batch_dims=1)",
        "gather(a, fine, axis=1, batch_dims=1, mode=clamp)",
        "gather(c, fine32, axis=1, batch_dims=1, mode=wrap)",
        "gather(c[:, ::-1], fine32, axis=1, batch_dims=1)",
        "gather(c, fine32[:, 1:], axis=1, batch_dims=1, mode=error)",
        "gather(gather(a, idx[:512], axis=0, mode=zero), fine, axis=1, batch_dims=1, mode=clamp)",
        // Rows of 1200 bytes read ahead, forwards and backwards.
        "gather(a[:, ::-1], idx, axis=1)",
        "gather(a[::-1, ::-1], rows, axis=1, batch_dims=1, mode=wrap)",
        // Several index arrays broadcast together: one term fixed along the row (its dimension
        // of 1), one walking it; or both walking it; masks as constant index arrays.
        "a[perm[:, newaxis], ok]",
        "a[rows16, ok][::-1]",
        "a[idx[:512, newaxis], perm[::7]]",
        "b[[[0], [2]], 1:, ok]",
        "a[m][::-1]",
        "a[m[::-1, 0], 1:][:, ::-1]",
    ];
    for src in programs {
        let mut results = vec![];
        for (backend, threads) in [(Executor::Interpreter, 1), (Executor::Jit, 1), (Executor::Jit, 3)] {
            let mut s = Session::with_executor(backend);
            s.options_mut().threads = threads;
            for (name, t) in &inputs {
                s.bind(name, t.clone());
            }
            results.push(s.eval(src).map_err(|e| e.to_string()));
        }
        assert_eq!(results[0], results[1], "{src}");
        assert_eq!(results[0], results[2], "{src} (3 threads)");
    }
}

/// Reversed small tiles (`img[..., ::-1]` on pixels) are shuffled 16 bytes at a time: every tile
/// size up to 8 bytes, row lengths that leave tails, zero-mode misses on an outer gather, and
/// thread ranges agree with the interpreter.
#[test]
fn reversed_tiles_agree_with_the_interpreter() {
    use slc::{DType, Tensor};
    let filled = |dtype: DType, shape: &[usize]| {
        let n: usize = shape.iter().product::<usize>() * dtype.width();
        Tensor::from_bytes(dtype, shape, &(0..n).map(|i| (i * 37 % 251) as u8).collect::<Vec<_>>()).unwrap()
    };
    let rows = Tensor::from_i64s(DType::I64, &[5], &[3, -1, 70, 0, -70]).unwrap();
    for (dtype, elems) in
        [(DType::U8, 2), (DType::U8, 3), (DType::U8, 5), (DType::U8, 8), (DType::I16, 3), (DType::F32, 2)]
    {
        // The large shapes' outputs just pass the 1 MiB that threads need (src/backend/jit.rs), on
        // every dtype and tile, with room for `1:`; the 2-D one splits the tiles themselves.
        let tile = elems * dtype.width();
        for shape in [
            [64, 1, elems],
            [64, 5, elems],
            [64, 7, elems],
            [64, 33, elems],
            [(1 << 20) / (1000 * tile) + 8, 1000, elems],
            [1, (1 << 20) / tile + 64, elems],
        ] {
            let img = filled(dtype, &shape);
            let flat = filled(dtype, &[shape[0] * shape[1], elems]);
            for src in [
                "img[..., ::-1]",
                "img[::-1, 1:, ::-1]",
                "gather(img, rows, axis=0)[..., ::-1]",
                "flat[:, ::-1]",
            ] {
                let mut results = vec![];
                for (backend, threads) in [(Executor::Interpreter, 1), (Executor::Jit, 1), (Executor::Jit, 3)]
                {
                    let mut s = Session::with_executor(backend);
                    s.options_mut().threads = threads;
                    s.bind("img", img.clone());
                    s.bind("flat", flat.clone());
                    s.bind("rows", rows.clone());
                    results.push(s.eval(src).map_err(|e| e.to_string()));
                }
                let what = format!("{src} on {dtype:?}{shape:?}");
                assert_eq!(results[0], results[1], "{what}");
                assert_eq!(results[0], results[2], "{what} (3 threads)");
            }
        }
    }
}

/// Short rows (at most 64 bytes) under a loop over rows are copied inline, several rows per
/// trip: every width, row counts that leave tails, reversed and strided rows, a gather fixed
/// along the rows (and a zero-mode one that may miss, which takes the general loop), and thread
/// ranges agree with the interpreter.
#[test]
fn short_rows_agree_with_the_interpreter() {
    use slc::{DType, Tensor};
    let filled = |dtype: DType, shape: &[usize]| {
        let n: usize = shape.iter().product::<usize>() * dtype.width();
        Tensor::from_bytes(dtype, shape, &(0..n).map(|i| (i * 37 % 251) as u8).collect::<Vec<_>>()).unwrap()
    };
    let pick = Tensor::from_i64s(DType::I64, &[], &[-2]).unwrap();
    let far = Tensor::from_i64s(DType::I64, &[], &[9]).unwrap();
    for dtype in [DType::U8, DType::I16, DType::F32, DType::F64] {
        for rows in [1, 3, 4, 7, 4099] {
            let a = filled(dtype, &[rows, 5, 24]);
            for src in [
                "a[:, :, :10]",
                "a[::-1, 1:, 3:]",
                "a[:, ::2, -8:]",
                "a[::-1, ::-1, :1]",
                "a[..., None, 2:-2]",
                "gather(a, p, axis=1)[:, 1:9]",
                "gather(a, f, axis=1, mode=zero)[:, 1:9]",
            ] {
                let mut results = vec![];
                for (backend, threads) in [(Executor::Interpreter, 1), (Executor::Jit, 1), (Executor::Jit, 3)]
                {
                    let mut s = Session::with_executor(backend);
                    s.options_mut().threads = threads;
                    s.bind("a", a.clone());
                    s.bind("p", pick.clone());
                    s.bind("f", far.clone());
                    results.push(s.eval(src).map_err(|e| e.to_string()));
                }
                let what = format!("{src} on {dtype:?}[{rows}, 5, 24]");
                assert!(results[0].is_ok(), "{what}: {:?}", results[0]);
                assert_eq!(results[0], results[1], "{what}");
                assert_eq!(results[0], results[2], "{what} (3 threads)");
            }
        }
    }
}

/// Contiguous runs longer than an inline copy are copied by a loop of 64-byte moves (the last
/// 64 bytes again for a run that is no multiple of 64), up to 256 KiB, then by memcpy; gathered
/// rows always by memcpy: every length around those edges, on one and on several threads,
/// agrees with the interpreter.
#[test]
fn copy_loops_agree_with_the_interpreter() {
    use slc::{DType, Tensor};
    for run in [65, 100, 127, 128, 129, 1000, 4096, (1 << 18) - 1, 1 << 18, (1 << 18) + 1] {
        let rows = if run > 4096 { 3 } else { 9 };
        let n = rows * (run + 2);
        let bytes: Vec<u8> = (0..n).map(|i| (i * 37 % 251) as u8).collect();
        let a = Tensor::from_bytes(DType::U8, &[rows, run + 2], &bytes).unwrap();
        for src in ["a[:, 1:-1]", "a[::-2, 2:]", "a[[2, 0, 1]][:, 1:-1]"] {
            let mut results = vec![];
            for (backend, threads) in [(Executor::Interpreter, 1), (Executor::Jit, 1), (Executor::Jit, 2)] {
                let mut s = Session::with_executor(backend);
                s.options_mut().threads = threads;
                s.bind("a", a.clone());
                results.push(s.eval(src).map_err(|e| e.to_string()));
            }
            let what = format!("{src} on u8[{rows}, {}]", run + 2);
            assert!(results[0].is_ok(), "{what}: {:?}", results[0]);
            assert_eq!(results[0], results[1], "{what}");
            assert_eq!(results[0], results[2], "{what} (2 threads)");
        }
    }
}

/// Loop shapes the benchmarks depend on, read off the Cranelift IR: short rows are copied
/// several per trip; loops whose unrolled trip would leap more than a page run one element per
/// trip (the stride prefetcher follows each load instruction, and loses strides that long).
#[test]
fn row_loops_unroll_only_short_strides() {
    use slc::DType;
    use slc::types::TensorType;
    let clif = |src: &str, shape: &[usize]| {
        let types = [("a".to_string(), TensorType::of(DType::F32, shape))].into_iter().collect();
        let compiled = slc::compile(src, &types).unwrap_or_else(|e| panic!("{src}: {e}"));
        slc::backend::jit::kernel_ir(&compiled.plan.lift()).unwrap().1
    };
    // 40 bytes of every 256-byte row: the fourth row of a trip is read 768 bytes on.
    let short_rows = clif("a[2:, ..., None, :10]", &[64, 64, 64, 64]);
    assert!(short_rows.contains("+768"), "{short_rows}");
    // One element of every 1 KiB row: four per trip; of every 16 KiB row: one per trip.
    assert!(clif("a[:, 0]", &[64, 256]).contains("+3072"));
    let long_rows = clif("a[:, 0]", &[4096, 4096]);
    assert!(!long_rows.contains("+0x4000") && !long_rows.contains("+0xc000"), "{long_rows}");
    // Rows of 16 KiB in order: a copy loop; gathered rows and a run of 4 MiB: memcpy.
    assert!(!clif("a[:, 1:-1]", &[4096, 4096]).contains("Memcpy"));
    assert!(clif("a[[3, 1]][:, 1:-1]", &[4096, 4096]).contains("Memcpy"));
    assert!(clif("a[1:]", &[1024, 1024]).contains("Memcpy"));
}

/// Every out-of-range policy of a gather, over every element width (complex128's 16 bytes
/// included: a zero fill of an element wider than a machine word), 0-d and 1-d indices, through
/// the JIT, the interpreter and the DirectML emulator (`check_case`).
#[test]
fn gathers_of_every_width_and_policy() {
    use slc::DType;
    for dtype in DType::ALL {
        let data: Vec<u8> = (0..5 * dtype.width())
            .map(|i| (i * 7 + 1) as u8 & if dtype == DType::Bool { 1 } else { 0xff })
            .collect();
        let a = slc::Tensor::from_bytes(dtype, &[5], &data).unwrap();
        for index in [
            slc::Tensor::from_i64s(DType::I8, &[], &[7]).unwrap(),
            slc::Tensor::from_i64s(DType::I32, &[4], &[0, -1, 5, -9]).unwrap(),
        ] {
            for mode in ["zero", "clamp", "wrap", "error"] {
                let case = Case {
                    src: format!("gather(a, i, axis=0, mode={mode})"),
                    inputs: vec![("a", a.clone()), ("i", index.clone())],
                    level: slc::backend::dml::FeatureLevel::L5_0,
                };
                check_case(&case);
            }
        }
    }
}
