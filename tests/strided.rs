//! Strided views are read in place: a kernel meeting a view that is not dense (a step, a
//! transpose, a negative stride, a broadcast) runs a plan that declares the view's strides.
//! Random programs (`slc::fuzz`'s generator) over random layouts of the same elements agree with
//! the interpreter on dense copies, bit for bit, and so do the strided plans themselves on the
//! interpreter and the JIT (`slc::fuzz::check_strided`, also a fuzz target); a call on a strided
//! view copies nothing.

use proptest::prelude::*;
use slc::embed::{Kernel, TensorView};
use slc::fuzz::{Case, Rng, check_strided};
use slc::types::TensorType;
use slc::{DType, Executor, RunOptions, Tensor};

/// Cases of the random comparison: 600, or `SLC_STRIDED_CASES` (.ci/valgrind runs fewer).
fn cases() -> u32 {
    std::env::var("SLC_STRIDED_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(600)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]
    #[test]
    fn strided_views_agree_with_dense_copies(seed in any::<u64>()) {
        let mut rng = Rng::new(seed);
        let case = Case::draw(&mut rng);
        // Panics on a mismatch, naming the program.
        check_strided(&case, &mut rng);
    }
}

/// The layouts NumPy users make every day, by name, with the plan each one runs.
#[test]
fn numpy_layouts_run_in_place() {
    let data: Vec<f32> = (0..48).map(|x| x as f32).collect();
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    let k = Kernel::prepare("a[1:, ::-1]", &[("a", "f32[3, 4]".parse().unwrap())]).unwrap();
    let cases: [(&str, [isize; 2], usize, &str); 4] = [
        // x[::2] of a 6x4 array, the transpose of a 4x3 one, x[::-1, ::-2] of a 3x8 one, and
        // np.broadcast_to of a row.
        ("x[::2]", [32, 4], 0, "strides [8, 1]"),
        ("x.T", [4, 12], 0, "strides [1, 3]"),
        ("x[::-1, ::-2]", [-32, -8], 92, "strides [-8, -2]"),
        ("broadcast_to(row, (3, 4))", [0, 4], 0, "strides [0, 1]"),
    ];
    for (what, strides, origin, declared) in cases {
        let v = TensorView::strided(DType::F32, &[3, 4], &strides, &bytes, origin).unwrap();
        let dense = v.to_tensor().unwrap();
        assert_eq!(k.run(&[&v]).unwrap().bytes(), k.run(&[&dense]).unwrap().bytes(), "{what}");
        let plans = k.strided_plans();
        let text = plans.last().unwrap().to_string();
        assert!(text.starts_with(&format!("plan(a: f32[3, 4] {declared})")), "{what}: {text}");
    }
    assert_eq!(k.strided_plans().len(), 4, "one plan per layout, compiled once");
    let again = TensorView::strided(DType::F32, &[3, 4], &[4, 12], &bytes, 0).unwrap();
    k.run(&[again]).unwrap();
    assert_eq!(k.strided_plans().len(), 4, "a layout met before reuses its kernel");
}

/// An index tensor read through strides still has every value checked, and the error names
/// the value, as for a dense one.
#[test]
fn strided_index_tensors_are_checked() {
    let k = Kernel::prepare("a[i]", &[("a", "i64[4]".parse().unwrap()), ("i", "i64[3]".parse().unwrap())])
        .unwrap();
    let a = Tensor::from_i64s(DType::I64, &[4], &[10, 11, 12, 13]).unwrap();
    let raw: Vec<u8> = [3i64, 99, -4, 99, 7].iter().flat_map(|x| x.to_le_bytes()).collect();
    // i = [7, -4, 3]: the last element first, every other one.
    let i = TensorView::strided(DType::I64, &[3], &[-16], &raw, 32).unwrap();
    let err = k.run(&[TensorView::of(&a), i]).unwrap_err().render("a[i]");
    assert!(err.contains("index 7 is out of bounds"), "{err}");
    let ok = TensorView::strided(DType::I64, &[2], &[-16], &raw, 16).unwrap();
    let k2 = Kernel::prepare("a[i]", &[("a", "i64[4]".parse().unwrap()), ("i", "i64[2]".parse().unwrap())])
        .unwrap();
    let got = k2.run(&[TensorView::of(&a), ok]).unwrap();
    assert_eq!((got.int_at(0), got.int_at(1)), (Some(10), Some(13)));
}

#[path = "support/counting.rs"]
mod counting;
use counting::allocated;

/// A call on a strided view of 1 MiB allocates a few small tables, not a copy of the view
/// (small enough for the count to see it: tensors of 2 MiB and up come from a mapped pool).
#[test]
fn strided_views_are_not_copied() {
    let n = 1 << 17;
    let data: Vec<u8> = (0..2 * n * 8).map(|i| i as u8).collect();
    let mut options = RunOptions { threads: 1, ..RunOptions::default() };
    for executor in [Executor::Jit, Executor::Interpreter] {
        options.executor = executor;
        let k =
            Kernel::prepare_with("x[::-1]", &[("x", TensorType::of(DType::F64, &[n]).generic())], &options)
                .unwrap();
        // Every other f64, backwards from the last.
        let shape = [n];
        let view = TensorView::strided(DType::F64, &shape, &[-16], &data, (2 * n - 2) * 8).unwrap();
        let mut out = k.output_tensor().unwrap();
        k.run_into(&[view.reborrow()], &mut out).unwrap();
        let before = allocated();
        k.run_into(&[view.reborrow()], &mut out).unwrap();
        let bytes = allocated() - before;
        // The interpreter packs (and so allocates the view's 1 MiB): the check can fail.
        match executor {
            Executor::Jit => assert!(bytes < 4096, "the JIT call allocated {bytes} bytes"),
            Executor::Interpreter | Executor::Cuda => {
                assert!(bytes >= 8 * n, "the interpreter allocated {bytes} bytes")
            }
        }
        assert_eq!(&out.bytes()[..8], &data[..8], "x[::-1][0] is the view's last element, data[0..8]");
    }
}

/// Verification bounds an access to a strided input by the view's window (from its lowest
/// element to its highest, relative to element [0, 0]) and rejects malformed layouts.
#[test]
fn verification_bounds_strided_inputs_by_their_window() {
    let verify = |text: &str| {
        let plan = slc::plan::parse::parse(text).unwrap_or_else(|e| panic!("{text}: {}", e.message));
        slc::plan::verify(plan).map(|_| ()).map_err(|e| e.to_string())
    };
    // a: 3x4 with strides [-8, 2]: elements -16..=6 around a[0, 0].
    let plan = |out: &str| format!("plan(a: u8[3, 4] strides [-8, 2]) -> u8[3, 4]\n  out a{{{out}}}\n");
    assert_eq!(verify(&plan("0; -8, 2")), Ok(()));
    // The rows reversed: from a[2, 0] (-16) up to a[0, 3] (6).
    assert_eq!(verify(&plan("-16; 8, 2")), Ok(()));
    let below = verify(&plan("-17; 8, 2")).unwrap_err();
    assert!(below.contains("reaches elements -17..=5 of a buffer that holds elements -16..=6"), "{below}");
    assert!(verify(&plan("0; -8, 3")).unwrap_err().contains("reaches elements -16..=9"));
    let malformed = [
        ("plan(a: u8[3, 4] strides [2]) -> u8[3]\n  out a{0; 2}\n", "1 strides for rank 2"),
        ("plan(a: u8[1, 4] strides [5, 1]) -> u8[4]\n  out a{0; 1}\n", "unit axis"),
        ("plan(a: u8[0, 4] strides [4, 2]) -> u8[4]\n  out a{0; 0}\n", "empty and has strides"),
        ("plan(a: u8[3, 4] strides [4611686018427387904, 1]) -> u8[4]\n  out a{0; 1}\n", "beyond i64 bytes"),
    ];
    for (text, why) in malformed {
        let err = verify(text).unwrap_err();
        assert!(err.contains(why), "{text}: {err}");
    }
}

/// Threads meeting new layouts at once each get a correct result, and each layout is kept once.
#[test]
fn threads_share_strided_kernels() {
    let data: Vec<u8> = (0..=255).collect();
    let k = Kernel::prepare("a[::-1, 1:]", &[("a", "u8[3, 4]".parse().unwrap())]).unwrap();
    // Four layouts of a 3x4 view of `data`, each met by four threads.
    let layouts: [([isize; 2], usize); 4] = [([8, 1], 0), ([1, 3], 0), ([-16, 2], 40), ([20, -5], 15)];
    std::thread::scope(|s| {
        for t in 0..16 {
            let (k, data) = (&k, &data);
            s.spawn(move || {
                let (strides, origin) = layouts[t % 4];
                let v = TensorView::strided(DType::U8, &[3, 4], &strides, data, origin).unwrap();
                let dense = v.to_tensor().unwrap();
                for _ in 0..50 {
                    assert_eq!(k.run(&[&v]).unwrap().bytes(), k.run(&[&dense]).unwrap().bytes());
                }
            });
        }
    });
    let mut plans: Vec<String> = k.strided_plans().iter().map(|p| p.to_string()).collect();
    plans.sort();
    plans.dedup();
    assert_eq!((k.strided_plans().len(), plans.len()), (4, 4), "{plans:?}");
}

/// Views that differ only in the strides of unit axes (NumPy leaves any value there) share one
/// layout and so one kernel.
#[test]
fn unit_axis_strides_share_a_kernel() {
    let bytes: Vec<u8> = (0..64).collect();
    let k = Kernel::prepare("a[0, ::-1]", &[("a", "u8[1, 4]".parse().unwrap())]).unwrap();
    for unit in [0, 7, -3, 100] {
        let v = TensorView::strided(DType::U8, &[1, 4], &[unit, 2], &bytes, 10).unwrap();
        assert_eq!(k.run(&[v]).unwrap().bytes(), &[16, 14, 12, 10]);
    }
    assert_eq!(k.strided_plans().len(), 1);
}

/// Transposed layouts (`x.T`, `x.transpose(0, 2, 1)`: the last axis steps across lines) are read
/// in tiles (`transpose-tiles`) and give the dense copy's result, byte for byte: elements of 1
/// to 16 bytes, extents that are not multiples of a tile, steps and reversals along either
/// axis, a third axis outside, on one thread and three (each a part of the rows).
#[test]
fn transposed_layouts_read_in_tiles_equal_dense_copies() {
    let mut seed = 0x7a11u64;
    for dtype in [DType::U8, DType::I16, DType::F32, DType::F64, DType::C128] {
        let w = dtype.width();
        for (batch, rows, cols) in [(1usize, 37usize, 53usize), (1, 130, 70), (3, 20, 33)] {
            // The base array is [batch, cols, rows]; the view swaps its last two axes.
            let bytes: Vec<u8> = (0..batch * rows * cols * w)
                .map(|_| {
                    seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                    (seed >> 56) as u8
                })
                .collect();
            let (shape, strides): (Vec<usize>, Vec<isize>) = match batch {
                1 => (vec![rows, cols], vec![w as isize, (rows * w) as isize]),
                _ => (
                    vec![batch, rows, cols],
                    vec![(rows * cols * w) as isize, w as isize, (rows * w) as isize],
                ),
            };
            let view = TensorView::strided(dtype, &shape, &strides, &bytes, 0).unwrap();
            let dense = view.to_tensor().unwrap();
            let lead = if batch == 1 { "" } else { ":, " };
            // (the items, their step along the columns)
            for (items, step) in
                [("1:", 1), ("::2, 1:", 1), (":, ::-1", 1), ("::-1, 3:-2", 1), ("5:, ::3", 3)]
            {
                let src = format!("a[{lead}{items}]");
                let sig = [("a", TensorType::of(dtype, &shape).generic())];
                let mut k = Kernel::prepare(&src, &sig).unwrap();
                let want = k.run(&[&dense]).unwrap();
                for threads in [1, 3] {
                    k.set_threads(threads);
                    let got = k.run(&[&view]).unwrap();
                    assert!(got.bytes() == want.bytes(), "{src} on {dtype} {shape:?}, {threads} threads");
                }
                let plan = k.strided_plans().pop().unwrap();
                let nest = slc::backend::jit::kernel_ir(&plan.lift()).unwrap().0.to_string();
                let across = step * rows * w >= 64;
                assert_eq!(nest.contains("transpose-tiles"), across, "{src} on {dtype} {shape:?}:\n{nest}");
            }
        }
    }
}

/// The fuzzer's store programs (`slc::fuzz::store_program`) into a target laid out at random
/// strides (steps, transposes, negative steps), written through in place by `Kernel::store`:
/// the view holds the interpreter's result on the dense target, every byte outside it is as it
/// was, an error is the interpreter's with nothing written, and the plans whose output is the
/// target's window run alike on the interpreter and the JIT (`slc::fuzz::check_store_through`).
#[test]
fn fuzzed_stores_write_through_strided_targets() {
    use slc::fuzz::{check_store_through, fill, store_program};
    let mut r = Rng::new(2029);
    let mut through = 0;
    for case in 0..1000 {
        let shapes: [&[usize]; 7] = [&[3, 4], &[4], &[3, 2, 2], &[5, 3], &[1, 4], &[3, 1, 2], &[2, 0]];
        let shape = shapes[case % shapes.len()];
        let dtype = [DType::F32, DType::I16, DType::U8, DType::F64, DType::I64][case % 5];
        let src = store_program(&mut r, shape);
        let ints = |shape: &[usize], v: &[i64]| Tensor::from_i64s(DType::I64, shape, v).unwrap();
        let pairs: Vec<i64> = (0..2 * shape[0] as i64).map(|v| v % 2).collect();
        let bits: Vec<u8> = (0..shape[0]).map(|i| (i % 2) as u8).collect();
        let inputs = [
            ("a", fill(dtype, shape, case as u64)),
            ("idx", ints(&[2], &[1, -1])),
            ("idx2", ints(&[shape[0], 2], &pairs)),
            ("m", Tensor::from_bytes(DType::Bool, &[shape[0]], &bits).unwrap()),
        ];
        // Only the inputs the program names (a kernel takes exactly its signature).
        let named: Vec<(&str, Tensor)> = (inputs.iter())
            .filter(|(n, _)| *n == "a" || src.contains(n))
            .map(|(n, t)| (*n, t.clone()))
            .collect();
        through += check_store_through(&src, &named, "a", &mut r) as usize;
    }
    assert!(through > 400, "{through} of 1000 programs stored through the view");
}

/// A store into a strided view of 512 KiB (`x[:, ::2][i] = v`, as NumPy writes through it) runs
/// through the view in place: the call allocates a few small tables, not a copy of the view
/// (small enough for the count to see: tensors of 2 MiB and up come from a mapped pool),
/// and writes NumPy's result, the other columns untouched. So does `x[:, ::2][i] += v` with a
/// duplicate row, as its three buffered kernels through the view (the duplicate adds once).
#[test]
fn stores_through_views_are_not_copied() {
    // The last write of a row wins: row 5 takes v's third row (onto its old value for `+=`).
    store_into_every_other_column("a[i] = v", |_, v| v);
    store_into_every_other_column("a[i] += v", |old, v| old + v);
}

/// `src` (storing `v` at rows `i`) into every other column of a 512 x 512 f32 array, twice:
/// the second call allocates less than 64 KiB; each updated element is `combine(old, value)`.
fn store_into_every_other_column(src: &str, combine: impl Fn(f32, f32) -> f32) {
    let (rows, cols) = (512usize, 512usize);
    let half = cols / 2;
    let mut memory: Vec<f32> = (0..rows * cols).map(|x| x as f32).collect();
    let rows_at: Vec<i64> = vec![5, 500, 5, 7];
    let i = Tensor::from_i64s(DType::I64, &[4], &rows_at).unwrap();
    let values: Vec<f32> = (0..4 * half).map(|x| -(x as f32)).collect();
    let v_bytes: Vec<u8> = values.iter().flat_map(|x| x.to_le_bytes()).collect();
    let v = Tensor::from_bytes(DType::F32, &[4, half], &v_bytes).unwrap();
    let sig = [
        ("a", format!("f32[{rows}, {half}]").parse().unwrap()),
        ("i", "i64[4]".parse().unwrap()),
        ("v", format!("f32[4, {half}]").parse().unwrap()),
    ];
    let k = Kernel::prepare(src, &sig).unwrap();
    let (strides, shape) = ([(cols * 4) as isize, 8], [rows, half]);
    let store = |memory: &mut Vec<f32>| {
        // SAFETY: the view's elements lie in `memory`, which only the kernel touches meanwhile.
        let target =
            unsafe { TensorView::from_raw(DType::F32, &shape, Some(&strides), memory.as_mut_ptr().cast()) }
                .unwrap();
        // SAFETY: as above.
        unsafe { k.store(&[target, TensorView::of(&i), TensorView::of(&v)]) }.unwrap();
    };
    let old = memory.clone();
    store(&mut memory);
    let first = memory.clone();
    let before = allocated();
    store(&mut memory);
    let bytes = allocated() - before;
    assert!(bytes < 64 << 10, "`{src}` through a view allocated {bytes} bytes");
    let text = k.strided_plans().last().unwrap().to_string();
    assert!(text.contains(&format!("-> f32[{}]", rows * cols - 1)), "the window's plan:\n{text}");
    for r in 0..rows {
        let from = rows_at.iter().rposition(|&at| at as usize == r);
        for c in 0..cols {
            let want = match from {
                Some(k) if c % 2 == 0 => combine(old[r * cols + c], values[k * half + c / 2]),
                _ => old[r * cols + c],
            };
            assert_eq!(first[r * cols + c], want, "`{src}`: element [{r}, {c}]");
        }
    }
}

/// A store through a view lowers to a plan whose output is the target's window
/// (`plan::lower_through_view`): it verifies, prints and parses back, and runs alike on the
/// interpreter and the JIT, writing the view's elements and leaving the window's others (a view
/// with a negative step too: its window starts below element `[0, 0]`); the ordinary lowering
/// and the DirectML target refuse it; the CUDA code generator writes it (`tests/cuda_views.rs`
/// runs its kernels).
#[test]
fn window_store_plans_run_on_the_cpu_and_cuda_only() {
    use slc::plan::{InputStrides, lower_through_view, lower_with_strides, parse, verify};
    let types: slc::sema::InputTypes =
        [("a", TensorType::of(DType::U8, &[2, 3])), ("v", TensorType::of(DType::U8, &[]))]
            .into_iter()
            .map(|(n, t)| (n.to_string(), t))
            .collect();
    let compiled = slc::compile("a[1] = v", &types).unwrap();
    // a: rows 8 bytes apart, every other byte: elements 0, 2, 4 and 8, 10, 12 of 13.
    let strides: InputStrides = [("a".to_string(), vec![8, 2])].into_iter().collect();
    let plan = verify(lower_through_view(&compiled.checked, &strides).unwrap()).unwrap();
    assert!(plan.stores_through_view());
    let text = plan.to_string();
    assert!(text.starts_with("plan(a: u8[2, 3] strides [8, 2], v: u8[]) -> u8[13]"), "{text}");
    assert_eq!(parse::parse(&text).unwrap().to_string(), text);
    // Rows backwards: a[1] lies 8 below a[0, 0], at the window's start.
    let backwards: InputStrides = [("a".to_string(), vec![-8, 2])].into_iter().collect();
    let back = verify(lower_through_view(&compiled.checked, &backwards).unwrap()).unwrap();
    let text = back.to_string();
    assert!(text.contains("out a{-8; 1}"), "{text}");
    let window = Tensor::from_bytes(DType::U8, &[13], &(0..13).collect::<Vec<u8>>()).unwrap();
    let v = Tensor::from_bytes(DType::U8, &[], &[99]).unwrap();
    for (plan, written) in [(&plan, [8, 10, 12]), (&back, [0, 2, 4])] {
        let mut want: Vec<u8> = (0..13).collect();
        written.iter().for_each(|&at| want[at] = 99);
        for executor in [Executor::Interpreter, Executor::Jit] {
            let run = slc::exec::Runnable::prepare_in_plan_order(plan, executor, None).unwrap();
            assert_eq!(run.run(plan, &[&window, &v], 1).unwrap().bytes(), &want[..], "{executor:?}");
        }
    }
    let e = lower_with_strides(&compiled.checked, &strides).unwrap_err().to_string();
    assert!(e.contains("must be dense"), "{e}");
    // The backwards window starts 8 bytes below a[0, 0]: a[1] is its first byte, and `+=`
    // reads the old element through a's pointer, 8 bytes back from the window's offset.
    let cuda = slc::backend::cuda::generate(&back.lift(), "k").unwrap();
    assert!(cuda.text.contains("= 0 + c0 * (2);"), "{}", cuda.text);
    let adds = slc::compile("a[1] += v", &types).unwrap();
    let adds = verify(lower_through_view(&adds.checked, &backwards).unwrap()).unwrap();
    let cuda = slc::backend::cuda::generate(&adds.lift(), "k").unwrap();
    assert!(cuda.text.contains(" - 8))"), "{}", cuda.text);
    let e = slc::backend::dml::lower(&plan, &Default::default()).unwrap_err().to_string();
    assert!(e.contains("strided view"), "{e}");
}
