//! The benchmark suite B1–B12 (issue 4): each case's prepared slc kernel, with a fresh output
//! (`run`, as `slc eval` does) and into the caller's buffer (`run_into`), single-threaded and on
//! all cores, against memcpy of the output's bytes and against the same operation written with
//! the `ndarray` crate, all in one run. `benches/report.py` turns criterion's medians into the
//! ratio table of docs/benchmarks.md (and adds NumPy's times from `benches/numpy_bench.py`).
//!
//! Inputs are the same memory for every contender: slc reads the ndarray's buffer through a
//! borrowed view.

use criterion::{BenchmarkGroup, Criterion, criterion_group, criterion_main, measurement::WallTime};
use ndarray::{Array, Array2, ArrayD, Axis, Ix1, Ix2, Ix3, Ix4, IxDyn, NewAxis, Zip, s};
use slc::embed::{Kernel, TensorView};
use slc::measure::SplitMix;
use std::hint::black_box;
use std::time::Duration;

/// One input of a case: its name in the expression and its data.
enum Input {
    F32(ArrayD<f32>),
    F64(ArrayD<f64>),
    U8(ArrayD<u8>),
    I64(ArrayD<i64>),
}

impl Input {
    fn view(&self) -> TensorView<'_> {
        match self {
            Input::F32(a) => TensorView::from_slice(a.shape(), a.as_slice().unwrap()),
            Input::F64(a) => TensorView::from_slice(a.shape(), a.as_slice().unwrap()),
            Input::U8(a) => TensorView::from_slice(a.shape(), a.as_slice().unwrap()),
            Input::I64(a) => TensorView::from_slice(a.shape(), a.as_slice().unwrap()),
        }
        .unwrap()
    }

    fn signature(&self) -> String {
        let (dtype, shape) = match self {
            Input::F32(a) => ("f32", a.shape()),
            Input::F64(a) => ("f64", a.shape()),
            Input::U8(a) => ("u8", a.shape()),
            Input::I64(a) => ("i64", a.shape()),
        };
        let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
        format!("{dtype}[{}]", dims.join(","))
    }
}

/// Distinct, cheap values: the benchmarks time data movement, not the generator.
fn ramp<T>(shape: &[usize], f: impl FnMut(usize) -> T) -> ArrayD<T> {
    let n = shape.iter().product();
    Array::from_shape_vec(IxDyn(shape), (0..n).map(f).collect()).unwrap()
}

fn f32s(shape: &[usize]) -> ArrayD<f32> {
    ramp(shape, |i| i as f32)
}

/// Random in-range indices, deterministic across runs.
fn indices(shape: &[usize], bound: usize) -> ArrayD<i64> {
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
    let types: Vec<(&str, slc::sema::TensorType)> =
        inputs.iter().map(|(name, input)| (*name, input.signature().parse().unwrap())).collect();
    let mut kernel = Kernel::prepare(expr, &types).unwrap_or_else(|e| panic!("{id} `{expr}`: {e}"));
    let views: Vec<TensorView> = inputs.iter().map(|(_, input)| input.view()).collect();
    let out_bytes = kernel.output_nbytes();

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
        let input = Input::F32(f32s(&$shape));
        let mut group = slc_variants($c, $id, $expr, &[("a", &input)]);
        let Input::F32(a) = input else { unreachable!() };
        let a: Array<f32, $ix> = a.into_dimensionality().unwrap();
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

    let img = Input::U8(ramp(&[1080, 1920, 3], |i| i as u8));
    let mut group = slc_variants(c, "B7", "img[100:900, 200:1800, ::-1]", &[("img", &img)]);
    let Input::U8(img) = img else { unreachable!() };
    let img: Array<u8, Ix3> = img.into_dimensionality().unwrap();
    ndarray_slice!(group, &img, s![100..900, 200..1800, ..;-1]);

    let a = Input::F64(ramp(&[1024, 1024, 8], |i| i as f64));
    let mut group = slc_variants(c, "B12", "a[::2, ::-1, 1:]", &[("a", &a)]);
    let Input::F64(a) = a else { unreachable!() };
    let a: Array<f64, Ix3> = a.into_dimensionality().unwrap();
    ndarray_slice!(group, &a, s![..;2, ..;-1, 1..]);
}

/// A gather case's inputs as ndarray sees them: 2-D data and indices as usize.
fn gather_inputs(a: Input, idx: Input) -> (Array2<f32>, ArrayD<usize>) {
    let (Input::F32(a), Input::I64(idx)) = (a, idx) else { unreachable!() };
    (a.into_dimensionality().unwrap(), idx.mapv(|j| j as usize))
}

/// B8/B9: ndarray's `select` (fresh); into: row assignments (B8) or a loop over rows (B9), since
/// ndarray has no gather into an existing array.
fn gathers(c: &mut Criterion) {
    let (a, idx) = (Input::F32(f32s(&[100_000, 256])), Input::I64(indices(&[65_536], 100_000)));
    let mut group = slc_variants(c, "B8", "gather(a, idx, axis=0)", &[("a", &a), ("idx", &idx)]);
    let (a, idx) = gather_inputs(a, idx);
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

    let (a, idx) = (Input::F32(f32s(&[4096, 4096])), Input::I64(indices(&[2048], 4096)));
    let mut group = slc_variants(c, "B9", "gather(a, idx, axis=1)", &[("a", &a), ("idx", &idx)]);
    let (a, idx) = gather_inputs(a, idx);
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
    let (a, idx) = (Input::F32(f32s(&[512, 4096])), Input::I64(indices(&[512, 1024], 4096)));
    let mut group =
        slc_variants(c, "B10", "gather(a, idx, axis=1, batch_dims=1)", &[("a", &a), ("idx", &idx)]);
    let (a, idx) = gather_inputs(a, idx);
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
    let data = f32s(&[4, 5]);
    let mut session = slc::Session::new();
    let a = slc::Tensor::from_bytes(
        slc::DType::F32,
        &[4, 5],
        &data.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
    );
    session.bind("a", a.unwrap());
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
