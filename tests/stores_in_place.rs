//! Stores in place (`Kernel::store_in_place`): the target's own bytes written, or the call
//! declined and the target untouched; and rows scattered past the caches (non-temporal
//! stores), against the interpreter.

use slc::exec::Executor;
use slc::measure::SplitMix;
use slc::sema::InputValues;
use slc::{DType, Session, Tensor};

fn ints(dtype: DType, shape: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_i64s(dtype, shape, values).unwrap()
}

fn f32s(shape: &[usize], values: &[f32]) -> Tensor {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Tensor::from_bytes(DType::F32, shape, &bytes).unwrap()
}

/// `Kernel::store_in_place` writes the target's own bytes (no copy) where the JIT runs the
/// update, with the interpreter's result, duplicates included (the last write wins on any
/// thread count); it declines, leaving the target as it was, where the update reads the
/// target, another input overlaps it, or a `+=` may meet one element twice.
#[test]
fn stores_in_place_write_the_target_itself() {
    use slc::Kernel;
    use slc::embed::TensorView;
    let sig = |s: &str| -> slc::types::SymTensorType { s.parse().unwrap() };
    let (rows, cols) = (600usize, 300usize);
    let (a_ty, i_ty, v_ty) =
        (format!("f32[{rows}, {cols}]"), "i64[5]".to_string(), format!("f32[5, {cols}]"));
    type Signature<'a> = &'a [(&'a str, &'a str)];
    let cases: [(&str, Signature, bool); 7] = [
        ("a[i] = v", &[("a", &a_ty), ("i", &i_ty), ("v", &v_ty)], true),
        ("a[::2, 1:] = 7", &[("a", &a_ty)], true),
        ("a[m] = 1", &[("a", &a_ty), ("m", "bool[600]")], true),
        ("a[1:] = a[:-1]", &[("a", &a_ty)], false),
        // `+=` reads each element before writing it: in place only where no two updates write
        // one element (in place, a repeated index would add twice).
        ("a[::2, 1:] += 7", &[("a", &a_ty)], true),
        ("a[i] += v", &[("a", &a_ty), ("i", &i_ty), ("v", &v_ty)], false),
        // One value through a mask: the mask's box, updated where it is `True` (distinct).
        ("a[m] *= 3", &[("a", &a_ty), ("m", "bool[600]")], true),
    ];
    let index = ints(DType::I64, &[5], &[3, -1, 3, 0, 3]);
    let value = f32s(&[5, cols], &(0..5 * cols).map(|x| x as f32 + 0.5).collect::<Vec<_>>());
    let mask =
        Tensor::from_bytes(DType::Bool, &[rows], &(0..rows).map(|r| (r % 3 == 1) as u8).collect::<Vec<_>>())
            .unwrap();
    for (src, sigs, in_place) in cases {
        let sigs: Vec<(&str, _)> = sigs.iter().map(|(n, t)| (*n, sig(t))).collect();
        let mut values = InputValues::new();
        values.insert("m".into(), mask.clone());
        let kernel = Kernel::prepare_with_values(src, &sigs, &values, &Default::default());
        let mut kernel = kernel.unwrap_or_else(|e| panic!("{}", e.render(src)));
        for threads in [1, 4] {
            kernel.set_threads(threads);
            let start: Vec<f32> = (0..rows * cols).map(|x| x as f32).collect();
            let a = f32s(&[rows, cols], &start);
            let mut s = Session::with_executor(Executor::Interpreter);
            s.bind("a", a.clone());
            s.bind("i", index.clone());
            s.bind("v", value.clone());
            s.bind("m", mask.clone());
            let want = s.eval(src).unwrap();
            let mut target = start.clone();
            let shape = [rows, cols];
            // SAFETY: `target` holds the elements, and only the kernel touches it during the call.
            let view = unsafe { TensorView::from_raw(DType::F32, &shape, None, target.as_mut_ptr().cast()) }
                .unwrap();
            let others = sigs[1..].iter().map(|(n, _)| match *n {
                "i" => TensorView::of(&index),
                "v" => TensorView::of(&value),
                _ => TensorView::of(&mask),
            });
            let inputs: Vec<TensorView<'_>> = std::iter::once(view).chain(others).collect();
            // SAFETY: as above.
            let ran = unsafe { kernel.store_in_place(&inputs) }.unwrap();
            drop(inputs);
            assert_eq!(ran, in_place, "{src}");
            let got: Vec<u8> = target.iter().flat_map(|x| x.to_le_bytes()).collect();
            match ran {
                true => assert_eq!(got, want.bytes(), "{src} on {threads} threads"),
                false => assert_eq!(target, start, "{src}: declined, yet the target changed"),
            }
        }
    }
}

/// A `+=` or `*=` whose updates may meet one element (index arrays, masks) runs in place as
/// three kernels (`Kernel::stores_buffered`: gather the old elements, combine, scatter with last
/// write wins) with the interpreter's result — duplicates added once, integers wrapping, the
/// value reading the target as it was — on one thread and four, for fixed and symbolic
/// signatures (a mask's positions then derived per call); a bad index fails before the target
/// is written. A device's store takes the same three plans.
#[test]
fn buffered_stores_update_the_target_as_the_interpreter() {
    use slc::Kernel;
    use slc::embed::TensorView;
    let sig = |s: &str| -> slc::types::SymTensorType { s.parse().unwrap() };
    let (rows, cols) = (40usize, 7usize);
    let mut rng = SplitMix(7);
    let index = ints(
        DType::I64,
        &[9],
        &(0..9).map(|_| (rng.next_u64() % (2 * rows as u64)) as i64 - rows as i64).collect::<Vec<_>>(),
    );
    let bad = ints(DType::I32, &[3], &[1, rows as i64, 2]);
    let value = ints(DType::U8, &[9, cols], &(0..9 * cols as i64).map(|x| x * 37 % 256).collect::<Vec<_>>());
    let mask =
        Tensor::from_bytes(DType::Bool, &[rows], &(0..rows).map(|r| (r % 3 == 1) as u8).collect::<Vec<_>>())
            .unwrap();
    let a_ty = format!("u8[{rows}, {cols}]");
    type Signature<'a> = &'a [(&'a str, &'a str)];
    let cases: [(&str, Signature, bool); 7] = [
        ("a[i] += v", &[("a", &a_ty), ("i", "i64[9]"), ("v", "u8[9, 7]")], true),
        ("a[i, 2:] *= 3", &[("a", &a_ty), ("i", "i64[9]")], true),
        // One value through a mask writes each element of the mask's box once: in place.
        ("a[m] += 200", &[("a", &a_ty), ("m", &format!("bool[{rows}]"))], false),
        ("a[m, 3:] += a[m, :4]", &[("a", &a_ty), ("m", &format!("bool[{rows}]"))], true),
        ("a[i] += a[::-1][i]", &[("a", &a_ty), ("i", "i64[9]")], true),
        ("a[i] = v", &[("a", &a_ty), ("i", "i64[9]"), ("v", "u8[9, 7]")], false),
        ("a[j] += 1", &[("a", &a_ty), ("j", "i32[3]")], true),
    ];
    // The same signatures with every dim a symbol.
    let symbolic = |t: &str| match t {
        "u8[40, 7]" => "u8[N, M]",
        "i64[9]" => "i64[K]",
        "u8[9, 7]" => "u8[K, M]",
        "bool[40]" => "bool[N]",
        "i32[3]" => "i32[J]",
        other => unreachable!("{other}"),
    };
    let both =
        [false, true].into_iter().flat_map(|generic| cases.map(|(src, sigs, b)| (src, sigs, b, generic)));
    for (src, sigs, buffered, generic) in both {
        let sigs: Vec<(&str, _)> =
            sigs.iter().map(|(n, t)| (*n, sig(if generic { symbolic(t) } else { t }))).collect();
        let mut values = InputValues::new();
        values.insert("m".into(), mask.clone());
        let kernel = Kernel::prepare_with_values(src, &sigs, &values, &Default::default());
        let mut kernel = kernel.unwrap_or_else(|e| panic!("{}", e.render(src)));
        assert_eq!(kernel.stores_buffered(), buffered, "{src} (symbolic: {generic})");
        // On a GPU (`Kernel::store_device`) the same three plans, as CUDA kernels.
        assert_eq!(kernel.stores_buffered_on_device(), buffered, "{src} on a device (symbolic: {generic})");
        for threads in [1, 4] {
            kernel.set_threads(threads);
            let start: Vec<u8> = (0..rows * cols).map(|x| (x * 11 % 256) as u8).collect();
            let mut s = Session::with_executor(Executor::Interpreter);
            s.bind("a", Tensor::from_bytes(DType::U8, &[rows, cols], &start).unwrap());
            s.bind("i", index.clone());
            s.bind("j", bad.clone());
            s.bind("v", value.clone());
            s.bind("m", mask.clone());
            let want = s.eval(src);
            let mut target = start.clone();
            let shape = [rows, cols];
            // SAFETY: `target` holds the elements, and only the kernel touches it during the call.
            let view = unsafe { TensorView::from_raw(DType::U8, &shape, None, target.as_mut_ptr()) }.unwrap();
            let others = sigs[1..].iter().map(|(n, _)| match *n {
                "i" => TensorView::of(&index),
                "j" => TensorView::of(&bad),
                "v" => TensorView::of(&value),
                _ => TensorView::of(&mask),
            });
            let inputs: Vec<TensorView<'_>> = std::iter::once(view).chain(others).collect();
            // SAFETY: as above.
            let ran = unsafe { kernel.store(&inputs) };
            drop(inputs);
            match want {
                Ok(want) => {
                    ran.unwrap_or_else(|e| panic!("{src}: {}", e.render(src)));
                    assert_eq!(target, want.bytes(), "{src} on {threads} threads");
                }
                Err(e) => {
                    let got = ran.expect_err(src);
                    assert_eq!(got.diagnostic().code, e.diagnostic().code, "{src}");
                    assert_eq!(target, start, "{src}: failed, yet the target changed");
                }
            }
        }
    }
}

/// Rows scattered over a destination larger than the caches are written with non-temporal
/// stores (the `stream-rows` pass): every aligned 16 bytes streamed, the few bytes at a row's
/// ends streamed 8 or 4 at a time where aligned, else stored as usual. The JIT gives the interpreter's bytes for rows that are and are not a
/// multiple of a line, on a target whose rows start off a line (and, in place, off its element
/// alignment's line too), duplicates and negative indices included, on one thread and four.
#[test]
fn rows_streamed_past_the_caches_equal_the_interpreter() {
    use slc::Kernel;
    use slc::embed::TensorView;
    // (dtype, rows, row length): each target over 16 MiB, rows of 1028, 300 and 512 bytes.
    let cases = [(DType::F32, 17_000usize, 257usize), (DType::U8, 60_000, 300), (DType::F64, 33_000, 64)];
    let mut r = SplitMix(0x57);
    for (dtype, rows, cols) in cases {
        let w = dtype.width();
        let fill = |n: usize, seed: u64| -> Vec<u8> {
            let mut g = SplitMix(seed);
            (0..n * w).map(|_| (g.next_u64() >> 9) as u8 & 0x7f).collect()
        };
        let updates = 2_000;
        let picks: Vec<i64> = (0..updates)
            .map(|k| {
                if k % 7 == 3 { -1 - (r.next_u64() % 50) as i64 } else { (r.next_u64() % rows as u64) as i64 }
            })
            .collect();
        let a = Tensor::from_bytes(dtype, &[rows, cols], &fill(rows * cols, 1)).unwrap();
        let i = ints(DType::I64, &[updates], &picks);
        let v = Tensor::from_bytes(dtype, &[updates, cols], &fill(updates * cols, 2)).unwrap();
        let mut s = Session::with_executor(Executor::Interpreter);
        for (name, t) in [("a", &a), ("i", &i), ("v", &v)] {
            s.bind(name, t.clone());
        }
        let want = s.eval("a[i] = v").unwrap();
        for threads in [1, 4] {
            let mut jit = Session::with_executor(Executor::Jit);
            jit.options_mut().threads = threads;
            for (name, t) in [("a", &a), ("i", &i), ("v", &v)] {
                jit.bind(name, t.clone());
            }
            let got = jit.eval("a[i] = v").unwrap();
            assert!(got.bytes() == want.bytes(), "{dtype}[{rows}, {cols}] on {threads} threads");
        }
        // In place, the target 8 bytes past a line's start.
        let sigs: Vec<(&str, slc::types::SymTensorType)> = [
            ("a", format!("{dtype}[{rows}, {cols}]")),
            ("i", format!("i64[{updates}]")),
            ("v", format!("{dtype}[{updates}, {cols}]")),
        ]
        .iter()
        .map(|(n, t)| (*n, t.parse().unwrap()))
        .collect();
        let kernel = Kernel::prepare_with_values("a[i] = v", &sigs, &InputValues::new(), &Default::default());
        let mut kernel = kernel.unwrap_or_else(|e| panic!("{}", e.render("a[i] = v")));
        kernel.set_threads(1);
        let mut buffer = vec![0u64; (a.bytes().len() + 64) / 8 + 1];
        let start = buffer.as_ptr().cast::<u8>().align_offset(64) + 8;
        // SAFETY: `buffer` is plain memory of at least `start + a.bytes().len()` bytes.
        let bytes = unsafe {
            std::slice::from_raw_parts_mut(buffer.as_mut_ptr().cast::<u8>().add(start), a.bytes().len())
        };
        bytes.copy_from_slice(a.bytes());
        let shape = [rows, cols];
        // SAFETY: `bytes` holds the target's elements, and only the kernel touches it during the call.
        let view = unsafe { TensorView::from_raw(dtype, &shape, None, bytes.as_mut_ptr()) }.unwrap();
        let inputs = [view, TensorView::of(&i), TensorView::of(&v)];
        // SAFETY: as above.
        assert!(unsafe { kernel.store_in_place(&inputs) }.unwrap());
        drop(inputs);
        assert!(bytes == want.bytes(), "{dtype}[{rows}, {cols}] in place");
    }
}

/// Every other element written from a contiguous run (`a[:, ::2] = b`: the `spread` shuffle,
/// a vector of output loaded, the selected lanes replaced, stored back): the interpreter's
/// bytes for every element width up to 8 bytes, runs of every length around the vector's,
/// on one thread and four (splitting runs between workers), and in place.
#[test]
fn every_other_element_stored_by_vectors_equals_the_interpreter() {
    use slc::Kernel;
    use slc::embed::TensorView;
    let mut r = SplitMix(0x5b);
    for dtype in [DType::U8, DType::I16, DType::F32, DType::F64] {
        for (rows, cols) in [(3usize, 1usize), (2, 7), (5, 8), (4, 9), (3, 33), (300, 1001)] {
            for src in ["a[:, ::2] = b", "a[:, 1::2] = b[:, :-1]", "a[::-1, ::2] = b"] {
                let w = dtype.width();
                let fill = |n: usize, g: &mut SplitMix| -> Vec<u8> {
                    (0..n * w).map(|_| g.next_u64() as u8).collect()
                };
                let a = Tensor::from_bytes(dtype, &[rows, cols], &fill(rows * cols, &mut r)).unwrap();
                let b = Tensor::from_bytes(
                    dtype,
                    &[rows, cols.div_ceil(2)],
                    &fill(rows * cols.div_ceil(2), &mut r),
                )
                .unwrap();
                let mut s = Session::with_executor(Executor::Interpreter);
                s.bind("a", a.clone());
                s.bind("b", b.clone());
                let Ok(want) = s.eval(src) else { continue };
                for threads in [1, 4] {
                    let mut jit = Session::with_executor(Executor::Jit);
                    jit.options_mut().threads = threads;
                    jit.bind("a", a.clone());
                    jit.bind("b", b.clone());
                    let got = jit.eval(src).unwrap();
                    assert!(
                        got.bytes() == want.bytes(),
                        "{src} on {dtype}[{rows}, {cols}], {threads} threads"
                    );
                }
                let sigs: Vec<(&str, slc::types::SymTensorType)> = [
                    ("a", format!("{dtype}[{rows}, {cols}]")),
                    ("b", format!("{dtype}[{rows}, {}]", cols.div_ceil(2))),
                ]
                .iter()
                .map(|(n, t)| (*n, t.parse().unwrap()))
                .collect();
                let mut kernel =
                    Kernel::prepare_with_values(src, &sigs, &InputValues::new(), &Default::default())
                        .unwrap();
                kernel.set_threads(4);
                let mut target = a.bytes().to_vec();
                let shape = [rows, cols];
                // SAFETY: `target` holds the elements, and only the kernel touches it during the call.
                let view = unsafe { TensorView::from_raw(dtype, &shape, None, target.as_mut_ptr()) }.unwrap();
                let inputs = [view, TensorView::of(&b)];
                // SAFETY: as above.
                assert!(unsafe { kernel.store_in_place(&inputs) }.unwrap(), "{src}");
                drop(inputs);
                assert!(target == want.bytes(), "{src} on {dtype}[{rows}, {cols}] in place");
            }
        }
    }
}

/// Every other element of a box past the caches (`spread ahead`: the JIT's `spread_ahead`, a
/// call per run that prefetches 4 KiB on as it stores) against the interpreter, byte for byte:
/// elements of 1, 2, 4 and 8 bytes, odd row lengths (runs that start off a vector), runs that start on an odd
/// element, reversed rows, on one thread and three (each a part of the run).
#[test]
#[cfg_attr(debug_assertions, ignore = "slow in a debug build: .ci/run runs it in release")]
fn every_other_element_past_the_caches_spreads_ahead() {
    let mut r = SplitMix(0x5c);
    for (dtype, cols) in [(DType::U8, 16389), (DType::I16, 8195), (DType::F32, 4097), (DType::F64, 2051)] {
        let w = dtype.width();
        let rows = (17 << 20) / (cols * w) + 1;
        let half = cols.div_ceil(2);
        let bytes =
            |n: usize, g: &mut SplitMix| -> Vec<u8> { (0..n * w).map(|_| g.next_u64() as u8).collect() };
        let a = Tensor::from_bytes(dtype, &[rows, cols], &bytes(rows * cols, &mut r)).unwrap();
        let b = Tensor::from_bytes(dtype, &[rows, half], &bytes(rows * half, &mut r)).unwrap();
        for src in
            ["a[:, ::2] = b", "a[:, 1::2] = b[:, 1:]", "a[::-1, ::2] = b", "a[:, :-1:2] = b[::-1, :-1]"]
        {
            let mut s = Session::with_executor(Executor::Interpreter);
            s.bind("a", a.clone());
            s.bind("b", b.clone());
            let want = s.eval(src).unwrap();
            let types: slc::sema::InputTypes = [("a", &a), ("b", &b)]
                .iter()
                .map(|(n, t)| (n.to_string(), slc::types::TensorType::of(t.dtype(), t.shape())))
                .collect();
            let plan = slc::compile(src, &types).unwrap().plan;
            let nest = slc::backend::jit::kernel_ir(&plan.lift()).unwrap().0.to_string();
            assert!(nest.contains("spread ahead"), "{src} on {dtype}[{rows}, {cols}]:\n{nest}");
            for threads in [1, 3] {
                let mut jit = Session::with_executor(Executor::Jit);
                jit.options_mut().threads = threads;
                jit.bind("a", a.clone());
                jit.bind("b", b.clone());
                let got = jit.eval(src).unwrap();
                assert!(got.bytes() == want.bytes(), "{src} on {dtype}[{rows}, {cols}], {threads} threads");
            }
        }
    }
}

/// `Kernel::store` on a strided target (a view such as NumPy's `x[:, ::2]` or `x.T`) writes the
/// view's elements in their place, through a dense copy, leaving the base's other elements as
/// they were: the interpreter's result on the packed view, unpacked. A target whose elements
/// share memory (a zero stride) is refused and left untouched.
#[test]
fn stores_write_through_a_strided_target() {
    use slc::embed::TensorView;
    let base: Vec<i64> = (0..48).collect();
    // (view shape, byte strides, byte offset) over a 6x8 i32 base
    let views: [([usize; 2], [isize; 2], usize); 3] =
        [([6, 4], [32, 8], 0), ([8, 6], [4, 32], 0), ([5, 3], [-32, 12], 5 * 32 + 4)];
    for (shape, strides, offset) in views {
        for src in ["a[1] = 7", "a[i] = v", "a[:, 1:] += 1"] {
            let mut memory = ints(DType::I32, &[6, 8], &base);
            let view = TensorView::strided(DType::I32, &shape, &strides, memory.bytes(), offset).unwrap();
            let packed = view.to_tensor().unwrap();
            let i = ints(DType::I64, &[2], &[0, -1]);
            let v = ints(DType::I32, &[2, shape[1]], &(100..100 + 2 * shape[1] as i64).collect::<Vec<_>>());
            let mut s = Session::with_executor(Executor::Interpreter);
            for (n, t) in [("a", &packed), ("i", &i), ("v", &v)] {
                s.bind(n, t.clone());
            }
            let want = s.eval(src).unwrap();
            let sig: Vec<(&str, slc::types::SymTensorType)> = [
                ("a", format!("i32[{}, {}]", shape[0], shape[1])),
                ("i", "i64[2]".into()),
                ("v", format!("i32[2, {}]", shape[1])),
            ]
            .iter()
            .map(|(n, t)| (*n, t.parse().unwrap()))
            .collect();
            let k = slc::Kernel::prepare(src, &sig).unwrap();
            let ptr = memory.bytes_mut().as_mut_ptr();
            // SAFETY: the view's elements lie in `memory`, which only the kernel touches during
            // the call.
            let target =
                unsafe { TensorView::from_raw(DType::I32, &shape, Some(&strides), ptr.add(offset)) }.unwrap();
            // SAFETY: as above.
            unsafe { k.store(&[target, TensorView::of(&i), TensorView::of(&v)]) }.unwrap();
            let after = TensorView::strided(DType::I32, &shape, &strides, memory.bytes(), offset).unwrap();
            assert_eq!(after.to_tensor().unwrap(), want, "{src} through {shape:?} {strides:?}");
            // The elements outside the view are the base's.
            let inside: Vec<usize> = (0..shape[0] * shape[1])
                .map(|k| {
                    (offset as isize
                        + (k / shape[1]) as isize * strides[0]
                        + (k % shape[1]) as isize * strides[1]) as usize
                        / 4
                })
                .collect();
            for k in (0..48).filter(|k| !inside.contains(k)) {
                assert_eq!(memory.int_at(k), Some(base[k] as i128), "{src}: element {k} outside the view");
            }
        }
    }
    // Elements that share memory: refused, untouched.
    let mut memory = ints(DType::I32, &[6, 8], &base);
    let sig: Vec<(&str, slc::types::SymTensorType)> = vec![("a", "i32[3, 4]".parse().unwrap())];
    let k = slc::Kernel::prepare("a[0] = 1", &sig).unwrap();
    let ptr = memory.bytes_mut().as_mut_ptr();
    // SAFETY: as above.
    let target = unsafe { TensorView::from_raw(DType::I32, &[3, 4], Some(&[0, 4]), ptr) }.unwrap();
    // SAFETY: as above.
    let e = unsafe { k.store(&[target]) }.unwrap_err();
    assert!(e.to_string().contains("share memory"), "{e}");
    assert_eq!(memory, ints(DType::I32, &[6, 8], &base));
}

/// A store's workers are sized by the bytes its updates write, not by its target's: `a[5] = 0`
/// on a 16 MiB target writes 8 KiB on one thread (two workers' start cost ten times the
/// write), while `a[1:] = 0` splits.
#[test]
fn store_workers_follow_the_updates_not_the_target() {
    use slc::backend::jit;
    let types: slc::sema::InputTypes =
        [("a".to_string(), slc::types::TensorType::of(DType::F32, &[2048, 2048]))].into_iter().collect();
    let target = 2048 * 2048 * 4;
    for (src, workers) in [("a[5] = 0", 1), ("a[:, 5] = 0", 1), ("a[1:] = 0", 4)] {
        let plan = slc::compile(src, &types).unwrap().plan.lift();
        let kernel = jit::compile(&plan, &jit::plan_order(&plan)).unwrap();
        assert_eq!(kernel.workers(target, 4), workers, "{src}");
    }
}
