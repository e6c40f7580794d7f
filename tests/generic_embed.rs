//! `embed::GenericKernel` reads dense inputs where they are (a call on new shapes allocates the
//! binding's few integers, a repeated call nothing near the inputs' size), packs strided views,
//! and agrees with the concrete pipeline on every shape.

use slc::embed::{GenericKernel, Kernel, TensorView};
use slc::{DType, Tensor};

#[path = "support/counting.rs"]
mod counting;
use counting::allocated;

/// A call on a dense view allocates nothing near its size; a strided view of it is packed
/// (so the check can fail), and both give the specialized kernel's result.
#[test]
fn dense_views_are_read_in_place() {
    let mut k = GenericKernel::prepare("x[1:, ::-1]", &[("x", "f64[N, M]".parse().unwrap())]).unwrap();
    k.set_threads(1);
    // 512 KB: a copy would come from the allocator this test counts (tensors of 2 MiB and up
    // come from the runtime's mapped pool).
    let (n, m) = (256, 256);
    let data: Vec<f64> = (0..n * m).map(|i| i as f64).collect();
    let shape = [n, m];
    let view = TensorView::from_slice(&shape, &data).unwrap();
    let mut out = Tensor::zeros(DType::F64, &[n - 1, m]).unwrap();
    k.run_into(&[view.reborrow()], &mut out).unwrap();
    let before = allocated();
    k.run_into(&[view.reborrow()], &mut out).unwrap();
    let bytes = allocated() - before;
    assert!(bytes < 4096, "a generic call on a dense view allocated {bytes} bytes");
    let specialized = Kernel::prepare("x[1:, ::-1]", &[("x", "f64[256, 256]".parse().unwrap())]).unwrap();
    assert_eq!(out, specialized.run(&[view.reborrow()]).unwrap());

    // Every other column, read backwards: not dense, so packed.
    let (n, m) = (512, 512);
    let bytes: Vec<u8> = (0..n * m * 8).map(|i| i as u8).collect();
    let (half, strides) = ([n, m / 2], [8 * m as isize, -16]);
    let strided = TensorView::strided(DType::F64, &half, &strides, &bytes, 8 * (m - 2)).unwrap();
    let before = allocated();
    let got = k.run(&[strided.reborrow()]).unwrap();
    let bytes = allocated() - before;
    assert!(bytes >= n * m / 2 * 8, "a strided view is packed: {bytes} bytes");
    let specialized = Kernel::prepare("x[1:, ::-1]", &[("x", "f64[512, 256]".parse().unwrap())]).unwrap();
    assert_eq!(got, specialized.run(&[strided]).unwrap());
}

/// One kernel, many shapes and dtypes of views, against the specialized kernel of each shape.
#[test]
fn one_kernel_serves_every_shape() {
    let k = GenericKernel::prepare(
        "strided_slice(a, begin=[1, 0], end=[0, -1], stride=[2, 1], end_mask=[1, 0])[..., ::-1]",
        &[("a", "u16[N, M]".parse().unwrap())],
    )
    .unwrap();
    for (n, m) in [(0, 0), (1, 1), (2, 5), (7, 3), (9, 1), (4, 16)] {
        let values: Vec<u16> = (0..n * m).map(|i| i as u16).collect();
        let shape = [n, m];
        let view = TensorView::from_slice(&shape, &values).unwrap();
        let ty = format!("u16[{n}, {m}]").parse().unwrap();
        let specialized = Kernel::prepare(k.source(), &[("a", ty)]).unwrap();
        assert_eq!(
            k.run(&[view.reborrow()]).unwrap(),
            specialized.run(&[view.reborrow()]).unwrap(),
            "{n}x{m}"
        );
        assert_eq!(k.output_shape(&[view.reborrow()]).unwrap(), specialized.output_shape(), "{n}x{m}");
        let mut bytes = vec![0u8; specialized.output_nbytes()];
        k.run_into_bytes(&[view.reborrow()], &mut bytes).unwrap();
        assert_eq!(bytes, specialized.run(&[view]).unwrap().bytes(), "{n}x{m}");
    }
}

/// A repeated call with the dims of the one before allocates nothing at all: the binding is
/// kept, the inputs gathered on the stack.
#[test]
fn repeated_calls_allocate_nothing() {
    let mut k = GenericKernel::prepare("a[1:3, ::-1]", &[("a", "f32[N, M]".parse().unwrap())]).unwrap();
    k.set_threads(1);
    let a = Tensor::zeros(DType::F32, &[4, 5]).unwrap();
    let mut out = Tensor::zeros(DType::F32, &[2, 5]).unwrap();
    k.run_into(&[&a], &mut out).unwrap();
    let before = allocated();
    for _ in 0..10 {
        k.run_into(&[&a], &mut out).unwrap();
    }
    assert_eq!(allocated() - before, 0);
}
