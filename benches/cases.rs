//! The benchmark suite B1–B12 (issue 4): each case's prepared slc kernel, with a fresh output
//! (`run`, as `slc eval` does) and into the caller's buffer (`run_into`), single-threaded and on
//! all cores, against memcpy of the output's bytes and against the same operation written with
//! the `ndarray` crate, all in one run. `benches/report.py` turns criterion's medians into the
//! ratio table of docs/benchmarks.md (and adds NumPy's times from `benches/numpy_bench.py`).
//!
//! Inputs are the same memory for every contender, allocated as slc allocates the tensors it
//! reads (`slc eval`'s `.npy` inputs: large ones on transparent huge pages, which NumPy's
//! allocator also asks for); ndarray reads them through views.

use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime};
use ndarray::{
    Array, Array2, ArrayD, ArrayView, ArrayView2, ArrayViewD, Axis, Ix1, Ix2, Ix3, Ix4, IxDyn, NewAxis, Zip,
    s,
};
use slc::embed::{Element, Kernel, TensorView, ndarray_view};
use slc::measure::SplitMix;
use std::hint::black_box;
use std::time::Duration;

/// One input of a case, in slc's memory.
struct Input(slc::Tensor);

impl Input {
    fn view(&self) -> TensorView<'_> {
        TensorView::of(&self.0)
    }

    /// The input as ndarray sees it.
    fn array<T: Element>(&self) -> ArrayViewD<'_, T> {
        ndarray_view(&self.0).unwrap()
    }

    fn signature(&self) -> String {
        slc::types::TensorType::of(self.0.dtype(), self.0.shape()).to_string()
    }
}

/// Distinct, cheap values: the benchmarks time data movement, not the generator.
fn ramp<T: Element>(shape: &[usize], f: impl FnMut(usize) -> T) -> Input {
    let n = shape.iter().product();
    let values = Array::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap();
    Input(TensorView::from_ndarray(&values).to_tensor().unwrap())
}

fn f32s(shape: &[usize]) -> Input {
    ramp(shape, |i| i as f32)
}

/// Random in-range indices, deterministic across runs.
fn indices(shape: &[usize], bound: usize) -> Input {
    let mut rng = SplitMix(0x5EED);
    ramp(shape, |_| (rng.next_u64() % bound as u64) as i64)
}

fn config() -> Criterion {
    Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2))
        .configure_from_args()
}

/// Registers memcpy and the four slc variants of a case; the caller adds ndarray's.
fn slc_variants<'g>(
    c: &'g mut Criterion,
    id: &str,
    expr: &str,
    inputs: &[(&str, &Input)],
) -> BenchmarkGroup<'g, WallTime> {
    let types: Vec<(&str, slc::types::SymTensorType)> =
        inputs.iter().map(|(name, input)| (*name, input.signature().parse().unwrap())).collect();
    let mut kernel = Kernel::prepare(expr, &types).unwrap_or_else(|e| panic!("{id} `{expr}`: {e}"));
    let views: Vec<TensorView> = inputs.iter().map(|(_, input)| input.view()).collect();
    let out_bytes = kernel.output_nbytes().expect("fixed shapes");

    let mut group = c.benchmark_group(id);
    let src = vec![1u8; out_bytes];
    let mut dst = vec![0u8; out_bytes];
    group.bench_function("memcpy", |b| b.iter(|| dst.copy_from_slice(black_box(&src))));
    drop((src, dst));

    let mut out = kernel.output_tensor().unwrap();
    for threads in [1, 0] {
        // 0: the kernel's default, every core for outputs above the threading threshold.
        let suffix = if threads == 1 { "" } else { "_threads" };
        if threads == 1 {
            kernel.set_threads(1);
        } else {
            kernel = Kernel::prepare(expr, &types).unwrap();
        }
        group.bench_function(format!("slc_fresh{suffix}"), |b| {
            b.iter(|| kernel.run(black_box(&views)).unwrap())
        });
        group.bench_function(format!("slc_into{suffix}"), |b| {
            b.iter(|| kernel.run_into(black_box(&views), black_box(&mut out)).unwrap())
        });
    }
    group
}

/// ndarray's side of a view case: `slice(...).to_owned()` (fresh) and `assign` (into).
macro_rules! ndarray_slice {
    ($group:expr, $a:expr, $info:expr) => {{
        let a = $a;
        let mut out = a.slice($info).to_owned();
        $group.bench_function("ndarray_fresh", |b| b.iter(|| black_box(a).slice($info).to_owned()));
        $group.bench_function("ndarray_into", |b| b.iter(|| out.assign(&black_box(a).slice($info))));
        $group.finish();
    }};
}

/// A case over one f32 input of fixed rank `$ix`, sliced by `$info` in ndarray's terms.
macro_rules! f32_view_case {
    ($c:expr, $id:literal, $expr:literal, $shape:expr, $ix:ty, $info:expr) => {{
        let input = f32s(&$shape);
        let mut group = slc_variants($c, $id, $expr, &[("a", &input)]);
        let a: ArrayView<f32, $ix> = input.array().into_dimensionality().unwrap();
        ndarray_slice!(group, &a, $info);
    }};
}

fn views(c: &mut Criterion) {
    f32_view_case!(c, "B1", "a[:, 1:-1]", [4096, 4096], Ix2, s![.., 1..4095]);
    f32_view_case!(c, "B2", "a[::-1]", [16_777_216], Ix1, s![..;-1]);
    f32_view_case!(c, "B3", "a[:, ::2]", [4096, 4096], Ix2, s![.., ..;2]);
    f32_view_case!(c, "B4", "a[..., ::-1]", [4096, 4096], Ix2, s![.., ..;-1]);
    f32_view_case!(
        c,
        "B5",
        "a[2:, ..., newaxis, :10]",
        [64, 64, 64, 64],
        Ix4,
        s![2.., .., .., NewAxis, ..10]
    );
    f32_view_case!(c, "B6", "a[:, 0]", [4096, 4096], Ix2, s![.., 0]);
    f32_view_case!(c, "B11", "a[1:3, ::-1]", [4, 5], Ix2, s![1..3, ..;-1]);

    let img = ramp(&[1080, 1920, 3], |i| i as u8);
    let mut group = slc_variants(c, "B7", "img[100:900, 200:1800, ::-1]", &[("img", &img)]);
    let img: ArrayView<u8, Ix3> = img.array().into_dimensionality().unwrap();
    ndarray_slice!(group, &img, s![100..900, 200..1800, ..;-1]);

    let a = ramp(&[1024, 1024, 8], |i| i as f64);
    let mut group = slc_variants(c, "B12", "a[::2, ::-1, 1:]", &[("a", &a)]);
    let a: ArrayView<f64, Ix3> = a.array().into_dimensionality().unwrap();
    ndarray_slice!(group, &a, s![..;2, ..;-1, 1..]);
}

/// A gather case's inputs as ndarray sees them: 2-D data and indices as usize.
fn gather_inputs<'a>(a: &'a Input, idx: &Input) -> (ArrayView2<'a, f32>, ArrayD<usize>) {
    (a.array().into_dimensionality().unwrap(), idx.array::<i64>().mapv(|j| j as usize))
}

/// B8/B9: ndarray's `select` (fresh); into: row assignments (B8) or a loop over rows (B9), since
/// ndarray has no gather into an existing array.
fn gathers(c: &mut Criterion) {
    let (a, idx) = (f32s(&[100_000, 256]), indices(&[65_536], 100_000));
    let mut group = slc_variants(c, "B8", "gather(a, idx, axis=0)", &[("a", &a), ("idx", &idx)]);
    let (a, idx) = gather_inputs(&a, &idx);
    let idx = idx.as_slice().unwrap();
    let mut out = a.select(Axis(0), idx);
    group.bench_function("ndarray_fresh", |b| b.iter(|| black_box(&a).select(Axis(0), black_box(idx))));
    group.bench_function("ndarray_into", |b| {
        b.iter(|| {
            for (mut row, &j) in out.rows_mut().into_iter().zip(black_box(idx)) {
                row.assign(&a.row(j));
            }
        })
    });
    group.finish();

    let (a, idx) = (f32s(&[4096, 4096]), indices(&[2048], 4096));
    let mut group = slc_variants(c, "B9", "gather(a, idx, axis=1)", &[("a", &a), ("idx", &idx)]);
    let (a, idx) = gather_inputs(&a, &idx);
    let idx = idx.as_slice().unwrap();
    let mut out = a.select(Axis(1), idx);
    group.bench_function("ndarray_fresh", |b| b.iter(|| black_box(&a).select(Axis(1), black_box(idx))));
    group.bench_function("ndarray_into", |b| {
        b.iter(|| {
            Zip::from(out.rows_mut()).and(a.rows()).for_each(|o, row| {
                Zip::from(o).and(black_box(idx)).for_each(|o, &j| *o = row[j]);
            })
        })
    });
    group.finish();

    // B10 (batch_dims=1): ndarray has no batched gather; a loop over rows, as a user writes it.
    let (a, idx) = (f32s(&[512, 4096]), indices(&[512, 1024], 4096));
    let mut group =
        slc_variants(c, "B10", "gather(a, idx, axis=1, batch_dims=1)", &[("a", &a), ("idx", &idx)]);
    let (a, idx) = gather_inputs(&a, &idx);
    let idx: Array2<usize> = idx.into_dimensionality().unwrap();
    let mut out = Array2::<f32>::zeros(idx.dim());
    group.bench_function("ndarray_fresh", |b| {
        b.iter(|| {
            let mut fresh = Array2::<f32>::uninit(idx.dim());
            Zip::from(fresh.rows_mut()).and(a.rows()).and(idx.rows()).for_each(|o, row, i| {
                Zip::from(o).and(i).for_each(|o, &j| {
                    o.write(row[j]);
                })
            });
            // SAFETY: the loop above wrote every element.
            unsafe { fresh.assume_init() }
        })
    });
    group.bench_function("ndarray_into", |b| {
        b.iter(|| {
            Zip::from(out.rows_mut()).and(a.rows()).and(idx.rows()).for_each(|o, row, i| {
                Zip::from(o).and(i).for_each(|o, &j| *o = row[j]);
            })
        })
    });
    group.finish();
}

/// Cold compile (front end, plan, Cranelift, no cache) and `Session::eval` from text on a cache hit.
fn compile_and_cache(c: &mut Criterion) {
    let mut group = c.benchmark_group("compile");
    let types = [("a", "f32[4096,4096]".parse().unwrap())];
    group.bench_function("cold_prepare_B1", |b| {
        b.iter(|| Kernel::prepare(black_box("a[:, 1:-1]"), &types).unwrap())
    });
    let mut session = slc::Session::new();
    session.bind("a", f32s(&[4, 5]).0);
    session.eval("a[1:3, ::-1]").unwrap();
    group.bench_function("eval_cache_hit_B11", |b| {
        b.iter(|| session.eval(black_box("a[1:3, ::-1]")).unwrap())
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = config();
    targets = views, gathers, compile_and_cache
}
criterion_main!(benches);
