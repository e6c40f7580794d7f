//! Stores of one value through a mask (`a[m] = 0`, `a[m, 1:] += 2`; docs/semantics.md,
//! Stores): the plan reads the mask in place, and every CPU path, the vectorized masked runs
//! on each element width included, writes exactly the elements the mask selects.

#[path = "support/data.rs"]
mod data;

use data::element;
use slc::exec::Executor;
use slc::measure::SplitMix;
use slc::sema::{InputTypes, InputValues};
use slc::types::TensorType;
use slc::{DType, Session, Tensor};

fn values_i64(t: &Tensor) -> Vec<i64> {
    (0..t.numel()).map(|i| t.int_at(i).unwrap() as i64).collect()
}

/// One value through a mask (`a[m] = 7`, `a[m, 1:] += 2`; docs/semantics.md, Stores): the plan
/// reads the mask in place over its box (`when`), with no positions, folded or derived; every
/// CPU path writes exactly the elements the mask selects, against a loop over the mask written
/// out here, on random masks (empty and full ones among them), shapes and dtypes.
#[test]
fn one_value_through_a_mask_reads_the_mask_in_place() {
    let mut rng = SplitMix(44);
    for round in 0..60 {
        let (rows, cols) = (1 + rng.next_u64() % 9, 1 + rng.next_u64() % 70);
        let (rows, cols) = (rows as usize, cols as usize);
        let density = [0, 1, 2, 4, 8][round % 5];
        let bits: Vec<u8> = (0..rows * cols).map(|_| u8::from(rng.next_u64() % 8 < density)).collect();
        let start: Vec<i64> = (0..(rows * cols) as i64).map(|x| x * 7 % 100).collect();
        let dtype = [DType::I32, DType::U8, DType::I16, DType::I64][round % 4];
        let a = Tensor::from_i64s(dtype, &[rows, cols], &start).unwrap();
        let row_mask: Vec<u8> = (0..rows).map(|r| bits[r * cols]).collect();
        let m = Tensor::from_bytes(DType::Bool, &[rows, cols], &bits).unwrap();
        let r = Tensor::from_bytes(DType::Bool, &[rows], &row_mask).unwrap();
        // (program, the element a selected one becomes, the cells it may select)
        type Rule = fn(i64) -> i64;
        // Whether cell (i, j) is selected, from the mask's bits, the row mask's and the columns.
        type Selects = fn(usize, usize, &[u8], &[u8], usize) -> bool;
        let cases: [(&str, Rule, Selects); 4] = [
            ("a[m] = 7", |_| 7, |i, j, m, _, cols| m[i * cols + j] != 0),
            ("a[m] += 2", |x| x + 2, |i, j, m, _, cols| m[i * cols + j] != 0),
            ("a[r, 1:] *= 3", |x| x * 3, |i, j, _, r, _| r[i] != 0 && j >= 1),
            ("a[::-1][r[::-1]] = 1", |_| 1, |i, _, _, r, _| r[i] != 0),
        ];
        for (src, rule, selects) in cases {
            let inputs = [("a", &a), ("m", &m), ("r", &r)];
            let types: InputTypes =
                inputs.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
            let values: InputValues = inputs.iter().map(|(n, t)| (n.to_string(), (*t).clone())).collect();
            let c = slc::compile_with_values(src, &types, &values)
                .unwrap_or_else(|e| panic!("{}", e.render(src)));
            let store = c.plan.plan().store.as_ref().unwrap();
            assert!(store.when.is_some(), "{src}: {}", c.plan);
            assert!(c.plan.plan().inputs.iter().all(|d| d.derived.is_none()), "{src}: {}", c.plan);
            assert!(
                c.plan.plan().consts.iter().all(|k| k.tensor.numel() <= 1),
                "{src}: nothing folded\n{}",
                c.plan
            );
            let want: Vec<i64> = (0..rows * cols)
                .map(|k| {
                    let (i, j) = (k / cols, k % cols);
                    let wrap = |x: i64| match dtype {
                        DType::U8 => x.rem_euclid(256),
                        DType::I16 => x as i16 as i64,
                        DType::I32 => x as i32 as i64,
                        _ => x,
                    };
                    if selects(i, j, &bits, &row_mask, cols) { wrap(rule(start[k])) } else { start[k] }
                })
                .collect();
            for executor in [Executor::Interpreter, Executor::Jit] {
                let mut s = Session::with_executor(executor);
                for (name, t) in inputs {
                    s.bind(name, t.clone());
                }
                let got = s.eval(src).unwrap_or_else(|e| panic!("{}", e.render(src)));
                assert_eq!(values_i64(&got), want, "{src} on {executor:?}, {rows}x{cols} {dtype}");
            }
        }
    }
}

/// The JIT's masked runs (16 mask bytes widened into the lanes of 1-, 2-, 4- and 8-byte
/// elements, then a scalar tail) and masked rows (one byte per row: skipped, or filled 16
/// bytes at a time, or combined) against the interpreter, byte for byte: every dtype, rows
/// from 1 to 150 elements (trips and tails of each length), masks empty, full and between,
/// starting at offsets a vector does not align with, strided rows, on one thread and on
/// several.
#[test]
fn masked_runs_match_the_interpreter_on_every_width() {
    let mut rng = SplitMix(45);
    let dtypes = [
        DType::U8,
        DType::I8,
        DType::I16,
        DType::U16,
        DType::F16,
        DType::BF16,
        DType::I32,
        DType::U32,
        DType::F32,
        DType::I64,
        DType::F64,
        DType::C64,
        DType::C128,
        DType::Bool,
    ];
    let programs = [
        "a[m] = 3",
        "a[m] += 3",
        "a[m] *= 2",
        "a[1:][m[1:]] = 5",
        "a[:, 3:][m[:, 3:]] += 1",
        // Masked rows: one byte per row.
        "a[r] = 3",
        "a[r, 2:] += 3",
        "a[r] *= 2",
        "a[:, ::2][r] = 1",
        "a[::-1, 1::3][r[::-1]] += 1",
    ];
    for round in 0..120 {
        let dtype = dtypes[round % dtypes.len()];
        let (rows, cols) = match round % 6 {
            5 => (300, 301),
            _ => (1 + rng.next_u64() as usize % 4, 1 + rng.next_u64() as usize % 150),
        };
        let density = [0, 1, 4, 7, 8][round % 5];
        let bits: Vec<u8> = (0..rows * cols).map(|_| u8::from(rng.next_u64() % 8 < density)).collect();
        let start: Vec<u8> =
            (0..rows * cols).flat_map(|k| element(dtype, (k as i64 * 7) % 61 - 30)).collect();
        let a = Tensor::from_bytes(dtype, &[rows, cols], &start).unwrap();
        let m = Tensor::from_bytes(DType::Bool, &[rows, cols], &bits).unwrap();
        let r = Tensor::from_bytes(DType::Bool, &[rows], &bits[..rows]).unwrap();
        for src in programs {
            if dtype == DType::Bool && src.contains("*=") {
                continue;
            }
            let run = |executor: Executor| {
                let mut s = Session::with_executor(executor);
                s.bind("a", a.clone());
                s.bind("m", m.clone());
                s.bind("r", r.clone());
                s.eval(src).map(|t| t.bytes().to_vec()).map_err(|e| e.diagnostic().code)
            };
            let want = run(Executor::Interpreter);
            assert_eq!(run(Executor::Jit), want, "{src} on {dtype}[{rows}, {cols}], density {density}/8");
        }
    }
}

/// Masked rows of a box larger than the caches, filled with non-temporal stores (the JIT's
/// `fill_streaming`: a head and a tail stored as usual around the aligned vectors), against the
/// interpreter byte for byte: rows starting at every alignment (odd row lengths, a column
/// offset), elements of 1, 2, 4 and 8 bytes, on one thread and on several.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow in a debug build: .ci/run runs it in release")]
fn streaming_masked_rows_match_the_interpreter() {
    let mut rng = SplitMix(46);
    for (dtype, cols) in [(DType::F32, 1101), (DType::U8, 4099), (DType::I16, 2053), (DType::F64, 517)] {
        let rows = (17 << 20) / (cols * dtype.width()) + 1;
        let start: Vec<u8> = (0..rows * cols * dtype.width()).map(|k| (k % 251) as u8).collect();
        let a = Tensor::from_bytes(dtype, &[rows, cols], &start).unwrap();
        let bits: Vec<u8> = (0..rows).map(|_| (rng.next_u64() % 2) as u8).collect();
        let r = Tensor::from_bytes(DType::Bool, &[rows], &bits).unwrap();
        for src in ["a[r] = 7", "a[r, 3:] = 5", "a[::-1][r[::-1]] = 1"] {
            let types: InputTypes = [("a", &a), ("r", &r)]
                .iter()
                .map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape())))
                .collect();
            let nest =
                slc::backend::jit::kernel_ir(&slc::compile(src, &types).unwrap().plan.lift()).unwrap().0;
            assert!(nest.to_string().contains("masked-row streaming"), "{src} on {dtype}:\n{nest}");
            let run = |executor: Executor| {
                let mut s = Session::with_executor(executor);
                s.bind("a", a.clone());
                s.bind("r", r.clone());
                s.eval(src).map(|t| t.bytes().to_vec()).map_err(|e| e.diagnostic().code)
            };
            let want = run(Executor::Interpreter);
            assert!(run(Executor::Jit) == want, "{src} on {dtype}[{rows}, {cols}]");
        }
    }
}
