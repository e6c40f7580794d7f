//! B11: the cost of one prepared-kernel call on a tiny tensor (`a[1:3, ::-1]` on f32[4,5]):
//! validation, the pointer table, the call into machine code; for a dense input, and for a
//! strided view (its layout's kernel looked up).

use criterion::{Criterion, criterion_group, criterion_main};
use slc::embed::{Kernel, TensorView};
use slc::{DType, Tensor};
use std::hint::black_box;

fn kernel_call(c: &mut Criterion) {
    let k = Kernel::prepare("a[1:3, ::-1]", &[("a", "f32[4,5]".parse().unwrap())]).unwrap();
    let data: Vec<f32> = (0..20).map(|x| x as f32).collect();
    let a = Tensor::from_bytes(
        DType::F32,
        &[4, 5],
        &data.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<_>>(),
    )
    .unwrap();
    let mut out = k.output_tensor().unwrap();
    c.bench_function("B11 run_into tensor a[1:3, ::-1] f32[4,5]", |b| {
        b.iter(|| k.run_into(black_box(&[&a]), black_box(&mut out)).unwrap())
    });
    let view = TensorView::from_slice(&[4, 5], &data).unwrap();
    c.bench_function("B11 run_into view a[1:3, ::-1] f32[4,5]", |b| {
        b.iter(|| k.run_into(black_box(&[&view]), black_box(&mut out)).unwrap())
    });
    // The transpose of a 5x4 array: read in place by the kernel compiled for its strides.
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    let transposed = TensorView::strided(DType::F32, &[4, 5], &[4, 16], &bytes, 0).unwrap();
    c.bench_function("B11 run_into strided view (a transpose) a[1:3, ::-1] f32[4,5]", |b| {
        b.iter(|| k.run_into(black_box(&[&transposed]), black_box(&mut out)).unwrap())
    });
    let g = Kernel::prepare("a[[2, 0]][:, ::2]", &[("a", "f32[4,5]".parse().unwrap())]).unwrap();
    let mut gout = g.output_tensor().unwrap();
    c.bench_function("B11 run_into gather with checks a[[2, 0]][:, ::2] f32[4,5]", |b| {
        b.iter(|| g.run_into(black_box(&[&a]), black_box(&mut gout)).unwrap())
    });
}

/// B11 through a generic kernel (`a: f32[N, M]`) beside the concrete kernel, both called
/// directly (no embedding layer): the generic call binds the shape (the last binding reused).
fn generic_kernel_call(c: &mut Criterion) {
    use slc::backend::jit;
    let generic =
        generic_plans::programs().into_iter().find(|p| p.name == "reversed").expect("B11's program");
    let generic = slc::plan::verify_generic(generic.plan).unwrap();
    let generic = jit::compile(&generic, &jit::plan_order(&generic)).unwrap();
    let concrete =
        slc::compile("a[1:3, ::-1]", &[("a".to_string(), "f32[4,5]".parse().unwrap())].into_iter().collect())
            .unwrap()
            .plan;
    let kernel = jit::compile(&concrete.lift(), &jit::plan_order(&concrete)).unwrap();
    let a = Tensor::from_bytes(DType::F32, &[4, 5], &[7; 80]).unwrap();
    let mut out = Tensor::zeros(DType::F32, &[2, 5]).unwrap();
    c.bench_function("B11 concrete JitKernel::run_into a[1:3, ::-1] f32[4,5]", |b| {
        b.iter(|| kernel.run_into(black_box(&[&a]), black_box(&mut out), 1).unwrap())
    });
    c.bench_function("B11 generic JitKernel::run_into a[1:3, ::-1] f32[N,M] on 4x5", |b| {
        b.iter(|| generic.run_into(black_box(&[&a]), black_box(&mut out), 1).unwrap())
    });
    // The embedding layer over each: the prepared call users make.
    let k = Kernel::prepare("a[1:3, ::-1]", &[("a", "f32[4,5]".parse().unwrap())]).unwrap();
    let mut g = Kernel::prepare("a[1:3, ::-1]", &[("a", "f32[N, M]".parse().unwrap())]).unwrap();
    g.set_threads(1);
    c.bench_function("B11 Kernel::run_into a[1:3, ::-1] f32[4,5] (fixed)", |b| {
        b.iter(|| k.run_into(black_box(&[&a]), black_box(&mut out)).unwrap())
    });
    c.bench_function("B11 Kernel::run_into a[1:3, ::-1] f32[N,M] on 4x5", |b| {
        b.iter(|| g.run_into(black_box(&[&a]), black_box(&mut out)).unwrap())
    });
}

#[path = "../tests/support/generic_plans.rs"]
mod generic_plans;

criterion_group!(benches, kernel_call, generic_kernel_call);
criterion_main!(benches);
