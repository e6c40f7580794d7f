//! Stores of one value per run of consecutive elements (`a[1:] = 0`, `a[:, 1:] = c[:, None]`):
//! the JIT's fill runs (`fill-runs`: the value loaded once, stored 16 bytes at a time, past the
//! caches with non-temporal stores) against the interpreter, byte for byte.

#[path = "support/data.rs"]
mod data;

use data::element;
use slc::exec::Executor;
use slc::measure::SplitMix;
use slc::sema::InputTypes;
use slc::types::TensorType;
use slc::{DType, Session, Tensor};

/// `src` on the interpreter and on the JIT, the bytes of the result (or the error's code).
fn both(src: &str, inputs: &[(&str, &Tensor)]) -> [Result<Vec<u8>, &'static str>; 2] {
    [Executor::Interpreter, Executor::Jit].map(|executor| {
        let mut s = Session::with_executor(executor);
        for (name, t) in inputs {
            s.bind(name, (*t).clone());
        }
        s.eval(src).map(|t| t.bytes().to_vec()).map_err(|e| e.diagnostic().code)
    })
}

/// The loop nest the JIT runs for `src` on `inputs`' types.
fn nest_of(src: &str, inputs: &[(&str, &Tensor)]) -> String {
    let types: InputTypes =
        inputs.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
    let plan = slc::compile(src, &types).unwrap_or_else(|e| panic!("{}", e.render(src))).plan;
    slc::backend::jit::kernel_ir(&plan.lift()).unwrap().0.to_string()
}

/// Fill runs on every dtype (vectors of 1-, 2-, 4- and 8-byte elements, then a scalar tail;
/// 16-byte elements stay a strided copy), runs of 1 to 150 elements starting at offsets a
/// vector does not align with, a value per row (`c[:, None]`), a bound 0-d value, reversed
/// rows, on one thread and on several.
#[test]
fn fill_runs_match_the_interpreter_on_every_width() {
    let mut rng = SplitMix(47);
    let dtypes = [
        DType::U8,
        DType::I8,
        DType::I16,
        DType::F16,
        DType::BF16,
        DType::I32,
        DType::F32,
        DType::I64,
        DType::F64,
        DType::C64,
        DType::C128,
        DType::Bool,
    ];
    let programs = [
        "a[1:] = 3",
        "a[:, 2:] = 5",
        "a[1:, 3:] = c[1:, None]",
        "a[::-1, 1:] = v",
        "a[:, 1:-1] = c[::-1, None]",
        "a[..., 5:] = a[0, 0]",
    ];
    for round in 0..96 {
        let dtype = dtypes[round % dtypes.len()];
        let (rows, cols) = match round % 6 {
            5 => (300, 301),
            _ => (1 + rng.next_u64() as usize % 4, 1 + rng.next_u64() as usize % 150),
        };
        let start: Vec<u8> =
            (0..rows * cols).flat_map(|k| element(dtype, (k as i64 * 7) % 61 - 30)).collect();
        let per_row: Vec<u8> = (0..rows).flat_map(|k| element(dtype, k as i64 % 9 + 1)).collect();
        let a = Tensor::from_bytes(dtype, &[rows, cols], &start).unwrap();
        let c = Tensor::from_bytes(dtype, &[rows], &per_row).unwrap();
        let v = Tensor::from_bytes(dtype, &[], &element(dtype, 11)).unwrap();
        let inputs = [("a", &a), ("c", &c), ("v", &v)];
        for src in programs {
            let [want, got] = both(src, &inputs);
            assert!(want.is_ok(), "{src} on {dtype}[{rows}, {cols}]: {want:?}");
            assert!(got == want, "{src} on {dtype}[{rows}, {cols}]");
        }
        if dtype.width() <= 8 && cols >= 3 {
            let nest = nest_of("a[:, 2:] = 5", &inputs);
            assert!(nest.contains("fill"), "a[:, 2:] = 5 on {dtype}[{rows}, {cols}]:\n{nest}");
        }
    }
}

/// Fills of a box larger than the caches, by non-temporal stores (the JIT's `fill_streaming`:
/// a head and a tail stored as usual around the aligned vectors), against the interpreter byte
/// for byte: runs starting at every alignment (odd row lengths, a column offset), elements of
/// 1, 2, 4 and 8 bytes, one run for the whole box and a run per row, on several threads.
#[test]
#[cfg_attr(debug_assertions, ignore = "slow in a debug build: .ci/run runs it in release")]
fn streaming_fills_match_the_interpreter() {
    for (dtype, cols) in [(DType::F32, 1101), (DType::U8, 4099), (DType::I16, 2053), (DType::F64, 517)] {
        let rows = (17 << 20) / (cols * dtype.width()) + 1;
        let start: Vec<u8> = (0..rows * cols * dtype.width()).map(|k| (k % 251) as u8).collect();
        let per_row: Vec<u8> = (0..rows).flat_map(|k| element(dtype, k as i64 % 9 + 1)).collect();
        let a = Tensor::from_bytes(dtype, &[rows, cols], &start).unwrap();
        let c = Tensor::from_bytes(dtype, &[rows], &per_row).unwrap();
        let inputs = [("a", &a), ("c", &c)];
        for src in ["a[1:] = 7", "a[:, 3:] = c[:, None]", "a[::-1, 1:-2] = 1"] {
            let nest = nest_of(src, &inputs);
            assert!(nest.contains("fill streaming"), "{src} on {dtype}:\n{nest}");
            let [want, got] = both(src, &inputs);
            assert!(want.is_ok() && got == want, "{src} on {dtype}[{rows}, {cols}]");
        }
    }
}
