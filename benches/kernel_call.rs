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

criterion_group!(benches, kernel_call);
criterion_main!(benches);
