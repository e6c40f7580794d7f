//! Embedding slc in a Rust program: evaluate text over borrowed memory, prepare a kernel once
//! and run it many times, and handle errors as values.
//!
//! `cargo run --example embed` (add `--features ndarray` for the ndarray part).

use slc::embed::{Kernel, TensorView};
use slc::{DType, Session, Tensor};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    // 1. A session over the caller's memory: no copy when binding a view.
    let image: Vec<u8> = (0..4 * 6 * 3).map(|x| x as u8).collect();
    let mut session = Session::new();
    session.bind_view("img", TensorView::from_slice(&[4, 6, 3], &image)?);
    let green = session.eval("img[::2, ::-1, 1]")?;
    println!("img[::2, ::-1, 1] -> {}{:?}", green.dtype(), green.shape());

    // 2. A kernel prepared for fixed signatures, run into a reused output (no allocation).
    let kernel = Kernel::prepare("a[1:3, ::-1]", &[("a", "f32[4,5]".parse()?)])?;
    let data: Vec<f32> = (0..20).map(|x| x as f32).collect();
    let mut out = kernel.output_tensor()?;
    for _ in 0..3 {
        kernel.run_into(&[TensorView::from_slice(&[4, 5], &data)?], &mut out)?;
    }
    let first = f32::from_le_bytes(out.bytes()[..4].try_into()?);
    println!(
        "a[1:3, ::-1] -> {}{:?}, first element {first}",
        kernel.output_dtype(),
        kernel.output_shape().unwrap_or_default()
    );

    // 3. Strided views (here: the transpose of a 5x4 buffer) are accepted as they are.
    let bytes: Vec<u8> = data.iter().flat_map(|x| x.to_le_bytes()).collect();
    let transposed = TensorView::strided(DType::F32, &[4, 5], &[4, 16], &bytes, 0)?;
    println!("transposed input -> {:?}", kernel.run(&[transposed])?);

    // 4. Errors are values: structured (code, message, spans) and renderable.
    let src = "a[1, 7]";
    match Kernel::prepare(src, &[("a", "f32[4,5]".parse()?)]) {
        Ok(_) => unreachable!("7 is out of bounds"),
        Err(e) => {
            let d = e.diagnostic();
            println!("error {}: {}", d.code, d.message);
            print!("{}", e.render(src));
        }
    }
    let idx = Kernel::prepare("a[i]", &[("a", "f32[4,5]".parse()?), ("i", "i64[2]".parse()?)])?;
    let a = Tensor::zeros(DType::F32, &[4, 5])?;
    let i = Tensor::from_i64s(DType::I64, &[2], &[0, 9])?;
    if let Err(e) = idx.run(&[&a, &i]) {
        print!("{}", e.render(idx.source()));
    }

    #[cfg(feature = "ndarray")]
    {
        // 5. ndarray: views in, arrays out.
        let arr = ndarray::Array2::from_shape_fn((4, 5), |(i, j)| (i * 5 + j) as f32);
        let result = kernel.run_array::<f32, _>(&[TensorView::from_ndarray(&arr.view())])?;
        println!("ndarray result:\n{result}");
    }
    Ok(())
}

/// `cargo test` runs the tour too (Cargo.toml: `test = true`), so it cannot rot.
#[test]
fn the_tour_runs() {
    main().expect("the embedding tour runs");
}
