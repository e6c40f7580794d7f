//! One `embed::Kernel` for fixed and symbolic signatures: dense views are read where they are,
//! strided views too (through a kernel specialized for their layout, never a packed copy), a
//! repeated call allocates nothing, a shape that repeats gets a kernel of its own (the
//! specialization policy), and every shape agrees with a fixed-shape kernel, errors included.

use slc::embed::{Kernel, TensorView};
use slc::{DType, Tensor};

#[path = "support/counting.rs"]
mod counting;
use counting::allocated;

/// A call on a dense view, and on a strided one, allocates nothing near its size, on a
/// symbolic and on a fixed signature; both give the fixed kernel's result on a dense copy.
#[test]
fn views_are_read_in_place() {
    for signature in ["f64[N, M]", "f64[256, 256]"] {
        let mut k = Kernel::prepare("x[1:, ::-1]", &[("x", signature.parse().unwrap())]).unwrap();
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
        assert!(bytes < 4096, "{signature}: a call on a dense view allocated {bytes} bytes");
        let fixed = Kernel::prepare("x[1:, ::-1]", &[("x", "f64[256, 256]".parse().unwrap())]).unwrap();
        assert_eq!(out, fixed.run(&[view.reborrow()]).unwrap());

        // Every other column of a 256x512 array, read backwards: not dense, read in place.
        let wide: Vec<u8> = (0..n * 2 * m * 8).map(|i| i as u8).collect();
        let strides = [16 * m as isize, -16];
        let strided = TensorView::strided(DType::F64, &shape, &strides, &wide, 8 * (2 * m - 2)).unwrap();
        k.run_into(&[strided.reborrow()], &mut out).unwrap();
        let before = allocated();
        k.run_into(&[strided.reborrow()], &mut out).unwrap();
        let bytes = allocated() - before;
        assert!(bytes < 4096, "{signature}: a call on a strided view allocated {bytes} bytes");
        let dense = strided.to_tensor().unwrap();
        assert_eq!(out, fixed.run(&[&dense]).unwrap(), "{signature}");
        assert_eq!(k.strided_plans().len(), 1, "{signature}: one kernel for the layout");
    }
}

/// One kernel, many shapes of views, against the fixed kernel of each shape.
#[test]
fn one_kernel_serves_every_shape() {
    let k = Kernel::prepare(
        "strided_slice(a, begin=[1, 0], end=[0, -1], stride=[2, 1], end_mask=[1, 0])[..., ::-1]",
        &[("a", "u16[N, M]".parse().unwrap())],
    )
    .unwrap();
    assert_eq!(k.output_shape(), None);
    for (n, m) in [(0, 0), (1, 1), (2, 5), (7, 3), (9, 1), (4, 16)] {
        let values: Vec<u16> = (0..n * m).map(|i| i as u16).collect();
        let shape = [n, m];
        let view = TensorView::from_slice(&shape, &values).unwrap();
        let ty = format!("u16[{n}, {m}]").parse().unwrap();
        let fixed = Kernel::prepare(k.source(), &[("a", ty)]).unwrap();
        assert_eq!(k.run(&[view.reborrow()]).unwrap(), fixed.run(&[view.reborrow()]).unwrap(), "{n}x{m}");
        assert_eq!(
            Some(&k.output_shape_for(&[view.reborrow()]).unwrap()[..]),
            fixed.output_shape(),
            "{n}x{m}"
        );
        let mut bytes = vec![0u8; fixed.output_nbytes().unwrap()];
        k.run_into_bytes(&[view.reborrow()], &mut bytes).unwrap();
        assert_eq!(bytes, fixed.run(&[view]).unwrap().bytes(), "{n}x{m}");
    }
}

/// A repeated call with the dims of the one before allocates nothing at all, before and after
/// the shape got a kernel of its own.
#[test]
fn repeated_calls_allocate_nothing() {
    let mut k = Kernel::prepare("a[1:3, ::-1]", &[("a", "f32[N, M]".parse().unwrap())]).unwrap();
    k.set_threads(1);
    let a = Tensor::zeros(DType::F32, &[4, 5]).unwrap();
    let mut out = Tensor::zeros(DType::F32, &[2, 5]).unwrap();
    k.run_into(&[&a], &mut out).unwrap();
    let before = allocated();
    k.run_into(&[&a], &mut out).unwrap();
    assert_eq!(allocated() - before, 0);
    for _ in 0..10 {
        k.run_into(&[&a], &mut out).unwrap();
    }
    let before = allocated();
    for _ in 0..10 {
        k.run_into(&[&a], &mut out).unwrap();
    }
    assert_eq!(allocated() - before, 0);
}

/// A generic store runs on the kernel's one shape-generic JIT kernel, a mask's positions
/// derived per call: no layout is compiled for a mask (a compile allocates tens of kilobytes;
/// a call, its binding's few hundred bytes and a mask's positions); a store that may run in
/// place does so through that kernel, and a bad index leaves the target as it was.
#[test]
fn generic_stores_run_on_the_one_kernel() {
    let a = Tensor::from_i64s(DType::I32, &[4, 5], &(0..20).collect::<Vec<_>>()).unwrap();
    let m = Tensor::from_bytes(DType::Bool, &[4, 5], &[1, 0, 0, 1, 1].repeat(4)).unwrap();
    let i = Tensor::from_i64s(DType::I64, &[2], &[3, 0]).unwrap();
    // (program, signature, inputs, whether it may run in place: a `+=` reads its target).
    type Case<'t> = (&'static str, Vec<(&'static str, &'static str)>, Vec<&'t Tensor>, bool);
    let cases: [Case<'_>; 3] = [
        ("a[m] = 0", vec![("a", "i32[N, M]"), ("m", "bool[N, M]")], vec![&a, &m], true),
        ("a[i, 1:] = 7", vec![("a", "i32[N, M]"), ("i", "i64[K]")], vec![&a, &i], true),
        ("a[i, 1:] += 1", vec![("a", "i32[N, M]"), ("i", "i64[K]")], vec![&a, &i], false),
    ];
    for (src, signature, inputs, in_place) in cases {
        let signature: Vec<(&str, slc::types::SymTensorType)> =
            signature.into_iter().map(|(n, t)| (n, t.parse().unwrap())).collect();
        let k = Kernel::prepare(src, &signature).unwrap();
        let want = k.run(&inputs).unwrap();
        for _ in 0..10 {
            assert_eq!(k.run(&inputs).unwrap(), want, "{src}");
        }
        let before = allocated();
        for _ in 0..10 {
            k.run(&inputs).unwrap();
        }
        let per_call = (allocated() - before) / 10;
        assert!(per_call < 8192, "{src}: {per_call} bytes allocated per call");
        // At most the repeated shape's kernel (the policy for every generic plan, its dims
        // bound); a mask is never compiled in: another mask runs on the same kernels.
        assert!(k.specializations() <= 1, "{src}: {} layouts compiled", k.specializations());
        if src.contains("[m]") {
            let compiled = k.specializations();
            let other = Tensor::from_bytes(DType::Bool, &[4, 5], &[0, 1, 1, 0, 1].repeat(4)).unwrap();
            let mut session = slc::Session::with_executor(slc::Executor::Interpreter);
            session.bind("a", a.clone());
            session.bind("m", other.clone());
            assert_eq!(k.run(&[&a, &other]).unwrap(), session.eval(src).unwrap(), "{src}, another mask");
            assert_eq!(k.specializations(), compiled, "{src}: another mask compiled nothing");
        }
        // Into the target itself, through the generic kernel; a bad index fails
        // before the first write.
        let bad = Tensor::from_i64s(DType::I64, &[2], &[3, 9]).unwrap();
        let runs: &[(Option<&Tensor>, bool)] =
            if src.contains("[i") { &[(None, true), (Some(&bad), false)] } else { &[(None, true)] };
        for &(index, good) in runs {
            let mut target = inputs[0].clone();
            let (dtype, shape) = (target.dtype(), target.shape().to_vec());
            // SAFETY: `target` holds the elements, and only the kernel touches it during the call.
            let view = unsafe { TensorView::from_raw(dtype, &shape, None, target.bytes_mut().as_mut_ptr()) }
                .unwrap();
            let others = inputs[1..].iter().map(|t| TensorView::of(index.unwrap_or(t)));
            let views: Vec<TensorView<'_>> = std::iter::once(view).chain(others).collect();
            // SAFETY: as above.
            let ran = unsafe { k.store_in_place(&views) };
            drop(views);
            match good {
                _ if !in_place => {
                    assert!(!ran.unwrap(), "{src}: declined");
                    assert_eq!(target, *inputs[0], "{src}: a declined store leaves its target");
                }
                true => {
                    assert!(ran.unwrap(), "{src}: a generic store runs in place");
                    assert_eq!(target, want, "{src}");
                }
                false => {
                    let e = ran.unwrap_err();
                    assert!(e.to_string().contains("out of"), "{src}: {e}");
                    assert_eq!(target, *inputs[0], "{src}: a failed store leaves its target");
                }
            }
        }
    }
}

/// The policy: a shape that comes back call after call is specialized once; a kernel meeting a
/// new shape every call specializes none; results never change.
#[test]
fn repeated_shapes_are_specialized() {
    let k = Kernel::prepare("a[::2, ::-1]", &[("a", "i32[N, M]".parse().unwrap())]).unwrap();
    let a = Tensor::from_i64s(DType::I32, &[3, 4], &(0..12).collect::<Vec<_>>()).unwrap();
    let want =
        Kernel::prepare(k.source(), &[("a", "i32[3, 4]".parse().unwrap())]).unwrap().run(&[&a]).unwrap();
    for _ in 0..10 {
        assert_eq!(k.run(&[&a]).unwrap(), want);
    }
    assert_eq!(k.specializations(), 1);
    let k = Kernel::prepare(k.source(), &[("a", "i32[N, M]".parse().unwrap())]).unwrap();
    for n in 1..20 {
        let a = Tensor::zeros(DType::I32, &[n, 2]).unwrap();
        assert_eq!(k.run(&[&a]).unwrap().shape(), &[n.div_ceil(2), 2]);
    }
    assert_eq!(k.specializations(), 0);
}

/// Errors read as a fixed-shape kernel reports them: a constant index outside a symbolic axis is
/// the front end's E0102 at the index; a wrong dtype or rank names the declared signature.
#[test]
fn errors_are_the_fixed_kernels() {
    let src = "a[5, 1:]";
    let k = Kernel::prepare(src, &[("a", "f32[N, M]".parse().unwrap())]).unwrap();
    let a = Tensor::zeros(DType::F32, &[4, 3]).unwrap();
    let generic = k.run(&[&a]).unwrap_err();
    let fixed = Kernel::prepare(src, &[("a", "f32[4, 3]".parse().unwrap())]).unwrap_err();
    assert_eq!(generic.diagnostic().code, "E0102");
    assert_eq!(generic.render(src), fixed.render(src));
    let b = Tensor::zeros(DType::I32, &[4, 3]).unwrap();
    let e = k.run(&[&b]).unwrap_err();
    assert!(e.to_string().contains("input `a` is i32[4, 3], but the plan was compiled for f32[N, M]"), "{e}");
}

/// A mask known only per call: the kernel derives its `nonzero()` for each call; results equal
/// a fixed kernel's compiled with the mask's value, on many shapes and masks.
#[test]
fn run_time_masks() {
    let src = "a[m][::-1, 1:]";
    let k = Kernel::prepare(src, &[("a", "i32[N, M]".parse().unwrap()), ("m", "bool[N]".parse().unwrap())])
        .unwrap();
    for (n, m, bits) in [(4, 3, vec![1u8, 0, 1, 1]), (1, 5, vec![0]), (6, 2, vec![1; 6]), (0, 3, vec![])] {
        let a = Tensor::from_i64s(DType::I32, &[n, m], &(0..(n * m) as i64).collect::<Vec<_>>()).unwrap();
        let mask = Tensor::from_bytes(DType::Bool, &[n], &bits).unwrap();
        let fixed = slc::embed::Kernel::prepare_with_values(
            src,
            &[("a", format!("i32[{n}, {m}]").parse().unwrap()), ("m", format!("bool[{n}]").parse().unwrap())],
            &[("m".to_string(), mask.clone())].into_iter().collect(),
            &slc::RunOptions::default(),
        )
        .unwrap();
        assert_eq!(k.run(&[&a, &mask]).unwrap(), fixed.run(&[&a, &mask]).unwrap(), "{n}x{m} {bits:?}");
    }
}

/// A generic kernel keeps the positions of the last mask it met: the same mask again takes
/// them, and another mask — of the same shape, or the same buffer rewritten in place — is
/// derived afresh, never served the kept positions.
#[test]
fn kept_mask_positions_serve_only_the_same_mask() {
    let src = "a[m] = 7";
    let k =
        Kernel::prepare(src, &[("a", "i32[N, M]".parse().unwrap()), ("m", "bool[N, M]".parse().unwrap())])
            .unwrap();
    let a = Tensor::from_i64s(DType::I32, &[3, 4], &(0..12).collect::<Vec<_>>()).unwrap();
    let masks: Vec<Vec<u8>> = vec![
        [1, 0, 0, 1].repeat(3),
        [0, 1, 1, 0].repeat(3),
        [1, 0, 0, 1].repeat(3),
        vec![1; 12],
        vec![0; 12],
        [1, 0, 0, 1].repeat(3),
    ];
    let mut buffer = vec![0u8; 12];
    for bits in &masks {
        let mask = Tensor::from_bytes(DType::Bool, &[3, 4], bits).unwrap();
        let want: Vec<i64> = (0..12).map(|e| if bits[e as usize] == 1 { 7 } else { e }).collect();
        let got = k.run(&[&a, &mask]).unwrap();
        assert_eq!((0..12).map(|e| got.int_at(e).unwrap() as i64).collect::<Vec<_>>(), want, "{bits:?}");
        // One buffer, its bits rewritten between calls (as a NumPy array changed in place).
        buffer.copy_from_slice(bits);
        // SAFETY: `buffer` holds the 12 elements, and nothing writes it during the call.
        let view =
            unsafe { slc::embed::TensorView::from_raw(DType::Bool, &[3, 4], None, buffer.as_mut_ptr()) }
                .unwrap();
        let got = k.run(&[slc::embed::TensorView::of(&a), view]).unwrap();
        assert_eq!(
            (0..12).map(|e| got.int_at(e).unwrap() as i64).collect::<Vec<_>>(),
            want,
            "{bits:?} in place"
        );
    }
}

/// An output that overlaps an input (possible through raw views, as C and Python make them) is
/// refused on every path — the fixed signature's entry, a strided layout's kernel once it is
/// kept, a symbolic kernel's repeated shape — and nothing is written; the same buffers, disjoint,
/// run.
#[test]
fn an_output_overlapping_an_input_is_refused_on_every_path() {
    // 16 f32 of input, then the output: `x[1:, ::-1]` of 4x4 is 3x4 = 48 bytes.
    let mut buf = vec![0u8; 64 + 48];
    for (i, b) in buf.iter_mut().enumerate() {
        *b = i as u8;
    }
    let base = buf.as_mut_ptr();
    let shape = [4usize, 4];
    for (signature, strides) in [
        ("f32[4, 4]", None),
        ("f32[4, 4]", Some([4isize, 16])),
        ("f32[N, M]", None),
        ("f32[N, M]", Some([4, 16])),
    ] {
        let k = Kernel::prepare("x[1:, ::-1]", &[("x", signature.parse().unwrap())]).unwrap();
        // SAFETY: the view reaches the first 64 bytes of `buf` (the transpose too), alive and
        // only read by the kernel while it runs.
        let view =
            unsafe { TensorView::from_raw(DType::F32, &shape, strides.as_ref().map(|s| &s[..]), base) }
                .unwrap();
        for call in 0..8 {
            // SAFETY: bytes 64.. of `buf`, disjoint from the view's.
            let disjoint = unsafe { std::slice::from_raw_parts_mut(base.add(64), 48) };
            k.run_into_bytes(&[view.reborrow()], disjoint).unwrap();
            // SAFETY: bytes 16..64 of `buf`: the view's own (an aliasing the API must catch).
            let overlapping = unsafe { std::slice::from_raw_parts_mut(base.add(16), 48) };
            let before = overlapping.to_vec();
            let e = k.run_into_bytes(&[view.reborrow()], overlapping).unwrap_err();
            assert!(e.to_string().contains("overlaps input `x`"), "{signature} {strides:?} call {call}: {e}");
            assert_eq!(overlapping, &before[..], "{signature} {strides:?} call {call}: written");
        }
    }
}

/// A mask axis of length 0 matches any axis, as NumPy matches it (it selects nothing), on a
/// symbolic signature as on fixed ones; another length is refused with the fixed kernel's error.
#[test]
fn a_mask_axis_of_length_zero_matches_any_axis() {
    let src = "a[:, m]";
    let k = Kernel::prepare(src, &[("a", "i32[N, M]".parse().unwrap()), ("m", "bool[K]".parse().unwrap())])
        .unwrap();
    let a = Tensor::from_i64s(DType::I32, &[2, 3], &[0, 1, 2, 3, 4, 5]).unwrap();
    for (len, bits) in [(0, vec![]), (3, vec![1u8, 0, 1]), (2, vec![1, 1])] {
        let mask = Tensor::from_bytes(DType::Bool, &[len], &bits).unwrap();
        let fixed = slc::embed::Kernel::prepare_with_values(
            src,
            &[("a", "i32[2, 3]".parse().unwrap()), ("m", format!("bool[{len}]").parse().unwrap())],
            &[("m".to_string(), mask.clone())].into_iter().collect(),
            &slc::RunOptions::default(),
        );
        match (k.run(&[&a, &mask]), fixed) {
            (Ok(generic), Ok(fixed)) => {
                assert_eq!(generic, fixed.run(&[&a, &mask]).unwrap(), "{bits:?}");
                assert_eq!(len == 0, generic.shape() == [2, 0], "{bits:?}");
            }
            (Err(generic), Err(fixed)) => {
                assert_eq!(len, 2);
                assert_eq!((generic.diagnostic().code, fixed.diagnostic().code), ("E0107", "E0107"));
            }
            (generic, fixed) => panic!("{bits:?}: generic {generic:?}, fixed {:?}", fixed.map(|_| ())),
        }
    }
}

/// An index list that is only the trailing dims of the broadcast (`[1, -3]` beside an
/// `i32[N, 2]`) is checked over the broadcast, as NumPy checks it: nothing when `N` is 0 (an
/// empty result), its out-of-range `-3` otherwise — on a symbolic signature as on fixed ones.
#[test]
fn index_values_are_checked_over_the_broadcast() {
    let src = "a[:, i, [1, -3]]";
    let k =
        Kernel::prepare(src, &[("a", "f32[A, B, C]".parse().unwrap()), ("i", "i32[N, 2]".parse().unwrap())])
            .unwrap();
    let a = Tensor::zeros(DType::F32, &[3, 2, 2]).unwrap();
    for n in [0usize, 1] {
        let i = Tensor::zeros(DType::I32, &[n, 2]).unwrap();
        let fixed = Kernel::prepare(
            src,
            &[("a", "f32[3, 2, 2]".parse().unwrap()), ("i", format!("i32[{n}, 2]").parse().unwrap())],
        )
        .and_then(|f| f.run(&[&a, &i]));
        let generic = k.run(&[&a, &i]);
        match (n, &generic, &fixed) {
            (0, Ok(g), Ok(f)) => assert_eq!((g, g.shape()), (f, &[3, 0, 2][..])),
            (1, Err(g), Err(f)) => assert_eq!(g.to_string(), f.to_string()),
            _ => panic!("n = {n}: generic {generic:?}, fixed {fixed:?}"),
        }
    }
}

/// A store whose value (or index) is a strided view runs in place through the kernel of its
/// layout, the strided view read where it is: the target's own bytes are written, with the
/// interpreter's result; a strided view that reaches into the target is declined (and
/// `Kernel::store` still gives the result NumPy gives, reading the target as it was).
#[test]
fn stores_with_strided_inputs_run_in_place() {
    let start: Vec<i64> = (0..60).collect();
    let a = Tensor::from_i64s(DType::I32, &[6, 10], &start).unwrap();
    let wide = Tensor::from_i64s(DType::I32, &[6, 20], &(100..220).collect::<Vec<_>>()).unwrap();
    let i = Tensor::from_i64s(DType::I64, &[3], &[5, 0, 2]).unwrap();
    // (program, the value's shape and byte strides over `wide`, the index if any)
    let cases: [(&str, [usize; 2], [isize; 2]); 3] = [
        ("a[i, 1:] = v", [3, 9], [80, 4]),
        ("a[1:, ::2] = v", [5, 5], [80, 8]),
        ("a[:, 1:] = v", [6, 9], [80, -4]),
    ];
    for (src, shape, strides) in cases {
        let offset = if strides[1] < 0 { 36 } else { 0 };
        let v = TensorView::strided(DType::I32, &shape, &strides, wide.bytes(), offset).unwrap();
        let dense_v = v.to_tensor().unwrap();
        let mut session = slc::Session::with_executor(slc::Executor::Interpreter);
        session.bind("a", a.clone());
        session.bind("i", i.clone());
        session.bind("v", dense_v.clone());
        let want = session.eval(src).unwrap();
        let names: Vec<&str> = if src.contains("[i") { vec!["a", "i", "v"] } else { vec!["a", "v"] };
        let signature: Vec<(&str, slc::types::SymTensorType)> = names
            .iter()
            .map(|&n| {
                let t = match n {
                    "a" => &a,
                    "i" => &i,
                    _ => &dense_v,
                };
                (n, slc::types::TensorType::of(t.dtype(), t.shape()).generic())
            })
            .collect();
        let k = Kernel::prepare(src, &signature).unwrap();
        let mut target = a.clone();
        let dims = target.shape().to_vec();
        // SAFETY: `target` holds the elements, and only the kernel touches it during the call.
        let view = unsafe { TensorView::from_raw(DType::I32, &dims, None, target.bytes_mut().as_mut_ptr()) }
            .unwrap();
        let mut views = vec![view];
        if src.contains("[i") {
            views.push(TensorView::of(&i));
        }
        views.push(v.reborrow());
        // SAFETY: as above.
        let ran = unsafe { k.store_in_place(&views) };
        drop(views);
        assert!(ran.unwrap(), "{src}: a strided value's layout stores in place");
        assert_eq!(target, want, "{src}");
        assert!(k.specializations() >= 1, "{src}: the strided layout has its kernel");
    }
    // The value a strided view of the target itself: declined in place, right through `store`.
    let src = "a[:, 1:] = v";
    let signature: Vec<(&str, slc::types::SymTensorType)> =
        vec![("a", "i32[6, 10]".parse().unwrap()), ("v", "i32[6, 9]".parse().unwrap())];
    let k = Kernel::prepare(src, &signature).unwrap();
    let reversed = TensorView::strided(DType::I32, &[6, 9], &[40, -4], a.bytes(), 36).unwrap();
    let mut session = slc::Session::with_executor(slc::Executor::Interpreter);
    session.bind("a", a.clone());
    session.bind("v", reversed.to_tensor().unwrap());
    let want = session.eval(src).unwrap();
    let mut target = a.clone();
    let dims = target.shape().to_vec();
    let ptr = target.bytes_mut().as_mut_ptr();
    // SAFETY: the view of the target and the value's view read the same live bytes; only the
    // kernel writes them, during the call.
    let (view, v) = unsafe {
        (
            TensorView::from_raw(DType::I32, &dims, None, ptr).unwrap(),
            TensorView::from_raw(DType::I32, &[6, 9], Some(&[40, -4]), ptr.add(36)).unwrap(),
        )
    };
    // SAFETY: as above.
    assert!(!unsafe { k.store_in_place(&[view.reborrow(), v.reborrow()]) }.unwrap(), "overlapping: declined");
    // SAFETY: as above.
    unsafe { k.store(&[view, v]) }.unwrap();
    assert_eq!(target, want, "{src} with the value a reversed view of the target");
}

/// A mask read only through its positions (`a[m]`) compiles no kernel of its layout when it is
/// strided (a Fortran-ordered mask): the positions come from one packed copy of it, which also
/// stands in for the declared mask, and another strided mask each call gives NumPy's result
/// with nothing compiled. (A layout's kernel folded each mask's values in: 2-3 s a call on a
/// 2048² mask.)
#[test]
fn a_strided_mask_is_read_through_its_positions() {
    let (rows, cols) = (40usize, 70usize);
    let a =
        Tensor::from_i64s(DType::I32, &[rows, cols], &(0..(rows * cols) as i64).collect::<Vec<_>>()).unwrap();
    let signature: Vec<(&str, slc::types::SymTensorType)> =
        vec![("a", "i32[N, M]".parse().unwrap()), ("m", "bool[N, M]".parse().unwrap())];
    let k = Kernel::prepare("a[m]", &signature).unwrap();
    let mut rng = slc::measure::SplitMix(0xf0);
    for round in 0..4 {
        // Column-major bytes: element (i, j) at j * rows + i.
        let bits: Vec<u8> = (0..rows * cols).map(|_| u8::from(rng.next_u64() % 3 == round % 3)).collect();
        let dims = [rows, cols];
        let m = TensorView::strided(DType::Bool, &dims, &[1, rows as isize], &bits, 0).unwrap();
        let want: Vec<i64> =
            (0..rows * cols).filter(|k| bits[(k % cols) * rows + k / cols] != 0).map(|k| k as i64).collect();
        let got = k.run(&[TensorView::of(&a), m]).unwrap();
        let got: Vec<i64> = (0..got.numel()).map(|i| got.int_at(i).unwrap() as i64).collect();
        assert_eq!(got, want, "round {round}");
        assert_eq!(k.specializations(), 0, "round {round}: no layout compiled for a mask");
    }
}
