//! The scatters (docs/semantics.md, Scatters): the ONNX operator documents' worked examples
//! (ScatterND-18, ScatterElements-18), OpenVINO ScatterUpdate-3's, reductions over duplicate
//! indices against the specs' reference loop written out below, negative indices, and the
//! errors with their codes.

use slc::{DType, Executor, Session, Tensor};

fn f32s(shape: &[usize], values: &[f32]) -> Tensor {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Tensor::from_bytes(DType::F32, shape, &bytes).unwrap()
}

fn ints(shape: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_i64s(DType::I64, shape, values).unwrap()
}

fn values(t: &Tensor) -> Vec<f32> {
    t.bytes().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn run(src: &str, inputs: &[(&str, Tensor)]) -> Result<Tensor, slc::Error> {
    let mut results = vec![];
    for executor in [Executor::Interpreter, Executor::Jit] {
        let mut s = Session::with_executor(executor);
        for (n, t) in inputs {
            s.bind(n, t.clone());
        }
        results.push(s.eval(src));
    }
    let jit = results.pop().unwrap();
    let interp = results.pop().unwrap();
    match (&interp, &jit) {
        (Ok(x), Ok(y)) => assert_eq!(x.bytes(), y.bytes(), "{src}"),
        (Err(x), Err(y)) => assert_eq!(x.diagnostic().code, y.diagnostic().code, "{src}"),
        _ => panic!("{src}: interpreter {interp:?}, JIT {jit:?}"),
    }
    interp
}

fn ok(src: &str, inputs: &[(&str, Tensor)]) -> Vec<f32> {
    values(&run(src, inputs).unwrap_or_else(|e| panic!("{}", e.render(src))))
}

#[test]
fn the_onnx_documents_examples() {
    // ScatterND-18, example 1.
    let data = f32s(&[8], &[1., 2., 3., 4., 5., 6., 7., 8.]);
    let src = "scatter_nd(data, [[4], [3], [1], [7]], u)";
    let u = f32s(&[4], &[9., 10., 11., 12.]);
    assert_eq!(ok(src, &[("data", data), ("u", u)]), [1., 11., 3., 10., 9., 6., 7., 12.]);
    // ScatterND-18, example 2: whole slices of a 4x4x4 tensor.
    let pattern = [[1., 2., 3., 4.], [5., 6., 7., 8.], [8., 7., 6., 5.], [4., 3., 2., 1.]];
    let slab: Vec<f32> = pattern.iter().flatten().copied().collect();
    let data: Vec<f32> = (0..4).flat_map(|_| slab.clone()).collect();
    let u: Vec<f32> = [5., 6., 7., 8.].iter().flat_map(|&v| [v; 16]).collect();
    let got = ok(
        "scatter_nd(data, [[0], [2]], u)",
        &[("data", f32s(&[4, 4, 4], &data)), ("u", f32s(&[2, 4, 4], &u[..32]))],
    );
    let mut want = data.clone();
    want[..16].fill(5.);
    want[32..48].fill(6.);
    assert_eq!(got, want);
    // ScatterElements-18, examples 1 and 2, and the reduction example.
    let updates = f32s(&[2, 3], &[1.0, 1.1, 1.2, 2.0, 2.1, 2.2]);
    let got = ok(
        "scatter_elements(data, [[1, 0, 2], [0, 2, 1]], updates)",
        &[("data", f32s(&[3, 3], &[0.; 9])), ("updates", updates)],
    );
    assert_eq!(got, [2.0, 1.1, 0.0, 1.0, 0.0, 2.2, 0.0, 2.1, 1.2]);
    let data = f32s(&[1, 5], &[1., 2., 3., 4., 5.]);
    let u = f32s(&[1, 2], &[1.1, 2.1]);
    let inputs = [("data", data), ("u", u)];
    assert_eq!(ok("scatter_elements(data, [[1, 3]], u, axis=1)", &inputs), [1., 1.1, 3., 2.1, 5.]);
    assert_eq!(
        ok("scatter_elements(data, [[1, 1]], u, axis=1, reduction=add)", &inputs),
        [1., 2. + 1.1 + 2.1, 3., 4., 5.]
    );
    // Negative indices count from the end (ONNX-13 on).
    assert_eq!(ok("scatter_elements(data, [[-1, -5]], u, axis=1)", &inputs), [2.1, 2., 3., 4., 1.1]);
}

#[test]
fn openvino_scatter_update() {
    let data = f32s(&[3, 2], &[0.; 6]);
    let u = f32s(&[2, 2], &[1., 2., 3., 4.]);
    // Rows 2 and 0 replaced; along axis 1, columns.
    assert_eq!(
        ok("scatter_update(data, [2, 0], u, 0)", &[("data", data.clone()), ("u", u.clone())]),
        [3., 4., 0., 0., 1., 2.]
    );
    let u = f32s(&[3, 1], &[7., 8., 9.]);
    assert_eq!(
        ok("scatter_update(data, [1], u, axis=1)", &[("data", data), ("u", u)]),
        [0., 7., 0., 8., 0., 9.]
    );
}

/// The specs' reference loop for ScatterElements along axis 0 of a 2-D tensor: updates in C
/// order, each reduced into the output as updated so far.
fn reference(data: &[f32], cols: usize, idx: &[i64], upd: &[f32], reduction: &str) -> Vec<f32> {
    let mut out = data.to_vec();
    let n = (data.len() / cols) as i64;
    for i in 0..idx.len() {
        let c = i % cols;
        let j = if idx[i] < 0 { idx[i] + n } else { idx[i] };
        let at = j as usize * cols + c;
        let (o, u) = (out[at], upd[i]);
        out[at] = match reduction {
            "none" => u,
            "add" => o + u,
            "mul" => o * u,
            "max" => {
                if u.is_nan() || u > o {
                    u
                } else {
                    o
                }
            }
            _ => {
                if u.is_nan() || u < o {
                    u
                } else {
                    o
                }
            }
        };
    }
    out
}

#[test]
fn reductions_accumulate_over_duplicates_in_c_order() {
    let mut seed = 7u64;
    let mut next = |m: u64| {
        seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (seed >> 33) % m
    };
    for case in 0..60 {
        let (n, cols, rows) = (1 + next(4) as usize, 1 + next(3) as usize, 1 + next(5) as usize);
        let data: Vec<f32> = (0..n * cols).map(|_| next(9) as f32 - 4.).collect();
        // Few rows, many updates: duplicates in most columns.
        let idx: Vec<i64> = (0..rows * cols).map(|_| next(2 * n as u64) as i64 - n as i64).collect();
        let upd: Vec<f32> = (0..rows * cols).map(|_| next(7) as f32 - 3.).collect();
        let reduction = ["none", "add", "mul", "max", "min"][case % 5];
        let inputs = [
            ("d", f32s(&[n, cols], &data)),
            ("i", ints(&[rows, cols], &idx)),
            ("u", f32s(&[rows, cols], &upd)),
        ];
        let src = format!("scatter_elements(d, i, u, axis=0, reduction={reduction})");
        assert_eq!(ok(&src, &inputs), reference(&data, cols, &idx, &upd, reduction), "{src} {idx:?}");
    }
}

#[test]
fn errors_have_codes_and_point_at_the_argument() {
    let data = f32s(&[4], &[0.; 4]);
    let u = f32s(&[2], &[1., 2.]);
    let k = Tensor::from_i64s(DType::U8, &[4], &[0; 4]).unwrap();
    let inputs = [("a", data), ("u", u), ("bad", ints(&[2, 1], &[0, 4])), ("k", k)];
    let cases: &[(&str, &str, &str)] = &[
        ("scatter_nd(a, [[1], [4]], u)", "E0102", "[[1], [4]]"),
        ("scatter_nd(a, [[1]], u)", "E0125", "u"),
        ("scatter_nd(a, [[1], [2]], u, reduction=sum)", "E0125", "sum"),
        ("scatter_nd(a[1:], [[1], [2]], u)", "E0125", "a[1:]"),
        ("scatter_nd(a, [[1], [2]], u)[0]", "E0131", "scatter_nd(a, [[1], [2]], u)"),
        ("scatter_nd(k, [[1], [2]], [1, 300])", "E0135", "[1, 300]"),
        ("scatter_nd(a, [[1], [2]], k[:2])", "E0134", "k[:2]"),
    ];
    for (src, code, at) in cases {
        let e = run(src, &inputs).expect_err(src);
        let d = e.diagnostic();
        let span = d.labels[0].span;
        assert_eq!((d.code, &src[span.start..span.end]), (*code, *at), "{src}");
    }
    // An index tensor's value out of range is found when it runs, never written out of bounds.
    let e = run("scatter_nd(a, bad, u)", &inputs).expect_err("out of range");
    assert_eq!(e.diagnostic().code, "E0201");
}

#[test]
fn openvino_scatter_nd_update_reductions() {
    let data = f32s(&[4], &[1., 2., 3., 4.]);
    let u = f32s(&[3], &[10., 5., 1.]);
    let inputs = [("d", data), ("u", u)];
    let src = |r: &str| format!("scatter_nd_update(d, [[1], [1], [-1]], u, reduction={r})");
    // Duplicates accumulate in C order of the updates; `none` keeps the last.
    assert_eq!(ok(&src("none"), &inputs), [1., 5., 3., 1.]);
    assert_eq!(ok(&src("sum"), &inputs), [1., 17., 3., 5.]);
    assert_eq!(ok(&src("sub"), &inputs), [1., -13., 3., 3.]);
    assert_eq!(ok(&src("prod"), &inputs), [1., 100., 3., 4.]);
    assert_eq!(ok(&src("max"), &inputs), [1., 10., 3., 4.]);
    assert_eq!(ok(&src("min"), &inputs), [1., 2., 3., 1.]);
    // ONNX's spelling is not OpenVINO's.
    let e = run(&src("add"), &inputs).expect_err("add");
    assert_eq!(e.diagnostic().code, "E0125");
}

/// OpenVINO ScatterElementsUpdate-12's worked examples 1-5 (its spec), on the interpreter and
/// the JIT.
#[test]
fn openvino_scatter_elements_update_examples() {
    let data = f32s(&[4], &[2., 3., 4., 6.]);
    let u = f32s(&[6], &[10., 20., 30., 40., 70., 60.]);
    let inputs = [
        ("d", data),
        ("u", u),
        ("i", ints(&[6], &[1, 0, 0, -2, -1, 2])),
        ("j", ints(&[6], &[1, 0, 0, 2, 3, 2])),
    ];
    assert_eq!(ok("scatter_elements_update(d, i, u, 0, reduction=sum)", &inputs), [52., 13., 104., 76.]);
    let src = "scatter_elements_update(d, j, u, 0, reduction=sum, use_init_val=false)";
    assert_eq!(ok(src, &inputs), [50., 10., 100., 70.]);
    // The mean of the updates alone, or with the element: (2 + 10) / 2, (3 + 20 + 30) / 3, ...
    let src = "scatter_elements_update(d, j, u, 0, reduction=mean, use_init_val=False)";
    assert_eq!(ok(src, &inputs), [25., 10., 50., 70.]);
    let src = "scatter_elements_update(d, j, u, 0, reduction=mean)";
    assert_eq!(ok(src, &inputs), [52. / 3., 13. / 2., 104. / 3., 76. / 2.]);
    let idx = ints(&[2, 2], &[1, 1, 0, 3]);
    let u = f32s(&[2, 2], &[11., 12., 13., 14.]);
    let on = |fill: f32, src: &str| {
        ok(src, &[("d", f32s(&[3, 4], &[fill; 12])), ("i", idx.clone()), ("u", u.clone())])
    };
    let i = ints(&[2, 2], &[1, 2, 0, 3]);
    let got = ok(
        "scatter_elements_update(d, i, u, 1)",
        &[("d", f32s(&[3, 4], &[0.; 12])), ("i", i), ("u", u.clone())],
    );
    assert_eq!(got, [0., 11., 12., 0., 13., 0., 0., 14., 0., 0., 0., 0.]);
    let got = on(1., "scatter_elements_update(d, i, u, 1, reduction=sum)");
    assert_eq!(got, [1., 24., 1., 1., 14., 1., 1., 15., 1., 1., 1., 1.]);
    let got = on(2., "scatter_elements_update(d, i, u, 1, reduction=prod)");
    assert_eq!(got, [2., 264., 2., 2., 26., 2., 2., 28., 2., 2., 2., 2.]);
}

/// Every scatter refuses an index out of range — constant (`E0102`, at compile time) or bound
/// (`E0201`, before anything is written) — naming the index, its axis and the axis's size, and
/// pointing at the indices it came from, on both executors.
#[test]
fn every_scatter_names_an_index_out_of_range() {
    let inputs = [
        ("a", f32s(&[3, 4], &[0.; 12])),
        ("u4", f32s(&[1, 4], &[1.; 4])),
        ("u24", f32s(&[2, 4], &[1.; 8])),
        ("row", ints(&[1, 4], &[0, 1, 2, 4])),
        ("tuples", ints(&[2, 1], &[1, -4])),
        ("rows", ints(&[2], &[0, 3])),
    ];
    let cases: &[(&str, &str, &str, &str)] = &[
        (
            "scatter_nd(a, [[1], [-4]], u24)",
            "E0102",
            "[[1], [-4]]",
            "index -4 is out of bounds for axis 0 with size 3",
        ),
        (
            "scatter_nd(a, tuples, u24, reduction=add)",
            "E0201",
            "tuples",
            "index -4 is out of bounds for axis 0 with size 3",
        ),
        (
            "scatter_elements(a, [[0, 1, 2, 4]], u4, axis=1)",
            "E0102",
            "[[0, 1, 2, 4]]",
            "index 4 is out of bounds for axis 1 with size 4",
        ),
        (
            "scatter_elements(a, row, u4, axis=1, reduction=max)",
            "E0201",
            "row",
            "index 4 is out of bounds for axis 1 with size 4",
        ),
        (
            "scatter_update(a, [0, 3], u24, 0)",
            "E0102",
            "[0, 3]",
            "index 3 is out of bounds for axis 0 with size 3",
        ),
        (
            "scatter_update(a, rows, u24, 0)",
            "E0201",
            "rows",
            "index 3 is out of bounds for axis 0 with size 3",
        ),
        (
            "scatter_nd_update(a, [[1], [-4]], u24, reduction=sub)",
            "E0102",
            "[[1], [-4]]",
            "index -4 is out of bounds for axis 0 with size 3",
        ),
        (
            "scatter_nd_update(a, tuples, u24)",
            "E0201",
            "tuples",
            "index -4 is out of bounds for axis 0 with size 3",
        ),
        (
            "scatter_elements_update(a, [[0, 1, 2, 4]], u4, 1)",
            "E0102",
            "[[0, 1, 2, 4]]",
            "index 4 is out of bounds for axis 1 with size 4",
        ),
        (
            "scatter_elements_update(a, row, u4, 1, reduction=mean, use_init_val=false)",
            "E0201",
            "row",
            "index 4 is out of bounds for axis 1 with size 4",
        ),
    ];
    for (src, code, at, message) in cases {
        let e = run(src, &inputs).expect_err(src);
        let d = e.diagnostic();
        let span = d.labels[0].span;
        assert_eq!((d.code, &src[span.start..span.end]), (*code, *at), "{src}");
        assert!(d.message.contains(message), "{src}: {}", d.message);
    }
}

#[test]
fn scatter_elements_update_arguments() {
    let inputs = [("a", f32s(&[2, 2], &[1., 2., 3., 4.])), ("u", f32s(&[1, 2], &[5., 7.]))];
    // use_init_val as OpenVINO spells it, as Python does, or 0/1; it leaves `none` alone.
    let mean = |init: &str| {
        format!("scatter_elements_update(a, [[1, 1]], u, 0, reduction=mean, use_init_val={init})")
    };
    for (init, want) in [("true", [1., 2., 4., 5.5]), ("True", [1., 2., 4., 5.5]), ("1", [1., 2., 4., 5.5])] {
        assert_eq!(ok(&mean(init), &inputs), want, "{init}");
    }
    for init in ["false", "False", "0", "\"false\""] {
        assert_eq!(ok(&mean(init), &inputs), [1., 2., 5., 7.], "{init}");
    }
    let src = "scatter_elements_update(a, [[1, 1]], u, 0, use_init_val=false)";
    assert_eq!(ok(src, &inputs), [1., 2., 5., 7.]);
    let bools = Tensor::from_bytes(DType::Bool, &[2], &[1, 0]).unwrap();
    let cases: &[(&str, &str)] = &[
        ("scatter_elements_update(a, [[1, 1]], u, 0, use_init_val=2)", "2"),
        ("scatter_elements_update(a, [[1, 1]], u, 0, use_init_val=maybe)", "maybe"),
        ("scatter_elements_update(a, [[1, 1]], u, 0, reduction=add)", "add"),
        ("scatter_elements_update(a, [[1, 1]], u, 0, reduction=sub)", "sub"),
        ("scatter_elements_update(b, [1], [True], 0, reduction=mean)", "mean"),
    ];
    let with_bools = [("a", inputs[0].1.clone()), ("u", inputs[1].1.clone()), ("b", bools)];
    for (src, at) in cases {
        let e = run(src, &with_bools).expect_err(src);
        let d = e.diagnostic();
        let span = d.labels[0].span;
        assert_eq!((d.code, &src[span.start..span.end]), ("E0125", *at), "{src}");
    }
}

/// Every reduction's store prints in the plan (`store mean_no_init over ...`) and parses back
/// to the same plan.
#[test]
fn reductions_print_and_parse_back() {
    use slc::plan::{parse, verify};
    use slc::sema::{InputTypes, InputValues};
    let types: InputTypes = [("a", "f16[3, 4]"), ("i", "i64[2, 4]"), ("u", "f16[2, 4]")]
        .into_iter()
        .map(|(n, t)| (n.to_string(), t.parse().unwrap()))
        .collect();
    let programs = [
        ("scatter_elements(a, i, u, reduction=add)", "sum"),
        ("scatter_nd_update(a, i[:, :1], u, reduction=sub)", "sub"),
        ("scatter_elements_update(a, i, u, 0, reduction=prod)", "prod"),
        ("scatter_elements_update(a, i, u, 0, reduction=mean)", "mean"),
        ("scatter_elements_update(a, i, u, 0, reduction=mean, use_init_val=false)", "mean_no_init"),
        ("scatter_elements_update(a, i, u, 0, reduction=max, use_init_val=false)", "max_no_init"),
        ("scatter_elements_update(a, i, u, 0, reduction=none, use_init_val=false)", "set"),
    ];
    for (src, combine) in programs {
        let c = slc::compile_with_values(src, &types, &InputValues::new())
            .unwrap_or_else(|e| panic!("{}", e.render(src)));
        let text = c.plan.to_string();
        assert!(text.contains(&format!("\n  store {combine} over ")), "{src}: {text}");
        let reread = parse::parse(&text).unwrap_or_else(|e| panic!("{src}: {e}\n{text}"));
        assert_eq!(&reread, c.plan.plan(), "{src}");
        verify(reread).unwrap();
    }
}
