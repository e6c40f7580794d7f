//! `gather_elements` and `gather_nd` (ONNX GatherElements-13 and GatherND-13): their checks
//! (each a diagnostic with a code and the span of the argument at fault), their run-time index
//! checks over the whole index tensor, and their fusion with everything else — a chain equals
//! its steps evaluated one by one on the interpreter and the JIT. tests/conformance.rs holds
//! them against ONNX Runtime itself.

use slc::{DType, Executor, Session, Tensor};

fn arange(dtype: DType, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_i64s(dtype, shape, &(0..n as i64).collect::<Vec<_>>()).unwrap()
}

fn session(executor: Executor) -> Session<'static> {
    let mut s = Session::with_executor(executor);
    s.bind("a", arange(DType::I32, &[2, 3, 4]));
    s.bind("m", arange(DType::I16, &[3, 4]));
    s.bind("ge", Tensor::from_i64s(DType::I64, &[2, 3], &[0, 2, -1, 1, -3, 0]).unwrap());
    s.bind("nd", Tensor::from_i64s(DType::I32, &[3, 2], &[1, -1, 0, 2, -2, 0]).unwrap());
    s.bind("bd", Tensor::from_i64s(DType::U8, &[2, 2, 1], &[2, 0, 1, 1]).unwrap());
    s.bind("bad", Tensor::from_i64s(DType::I64, &[3, 2], &[1, -1, 0, 3, -2, 0]).unwrap());
    s
}

/// The code of the error `src` gives, and the text its primary label covers.
fn error(src: &str) -> (String, String) {
    let e = session(Executor::Interpreter).eval(src).expect_err(src);
    let d = e.diagnostic();
    let span = d.labels.first().unwrap_or_else(|| panic!("{src}: no label")).span;
    (d.code.to_string(), src[span.start..span.end].to_string())
}

#[test]
fn values_follow_onnx() {
    let s = session(Executor::Interpreter);
    let m = |src: &str| s.eval(src).unwrap_or_else(|e| panic!("{}", e.render(src)));
    // take_along_axis: out[i][j] = m[ge[i][j]][j] on axis 0, m[i][ge[i][j]] on axis 1.
    let want = Tensor::from_i64s(DType::I16, &[2, 3], &[0, 9, 10, 4, 1, 2]).unwrap();
    assert_eq!(m("gather_elements(m, ge)"), want);
    let want = Tensor::from_i64s(DType::I16, &[2, 3], &[0, 2, 3, 5, 5, 4]).unwrap();
    assert_eq!(m("gather_elements(m, ge, axis=-1)"), want);
    // Index tuples select slices: a[1, 2], a[0, 2], a[0, 0].
    let t = m("gather_nd(a, nd)");
    assert_eq!(t.shape(), [3, 4]);
    assert_eq!(t, m("gather_nd(a, nd)[:, :]"));
    let rows: Vec<Tensor> = ["a[1, 2]", "a[0, 2]", "a[0, 0]"].iter().map(|r| m(r)).collect();
    for (k, row) in rows.iter().enumerate() {
        assert_eq!(&m(&format!("gather_nd(a, nd)[{k}]")), row);
    }
    // Batch dimensions: out[b, j] = a[b, bd[b, j, 0]].
    assert_eq!(m("gather_nd(a, bd, batch_dims=1)"), m("gather(a, bd[:, :, 0], axis=1, batch_dims=1)"));
    // Out-of-range policies, as gather's.
    assert_eq!(m("gather_nd(m, [[5, 1], [-4, 1]], mode=clamp)"), m("m[[2, 0], 1]"));
    assert_eq!(m("gather_elements(m[0], [7, -5], mode=wrap)"), m("m[0][[3, 3]]"));
    let zero = m("gather_nd(m, [[1, 1], [3, 0]], mode=zero)");
    assert_eq!(zero, Tensor::from_i64s(DType::I16, &[2], &[5, 0]).unwrap());
}

#[test]
fn every_rule_is_a_diagnostic_at_the_argument() {
    for (src, code, at) in [
        // gather_elements
        ("gather_elements(m, nd[0])", "E0125", "nd[0]"),
        ("gather_elements(m, ge, axis=2)", "E0125", "2"),
        ("gather_elements(m, [[0, 0, 0, 0, 0]], axis=0)", "E0125", "[[0, 0, 0, 0, 0]]"),
        ("gather_elements(a[0, 0, 0], 0)", "E0125", "a[0, 0, 0]"),
        ("gather_elements(m, [[3, 0]])", "E0102", "[[3, 0]]"),
        ("gather_elements(m, ge, mode=nearest)", "E0125", "nearest"),
        ("gather_elements(m[:0], [[1]], mode=wrap)", "E0125", "gather_elements(m[:0], [[1]], mode=wrap)"),
        ("gather_elements(m, a)", "E0125", "a"),
        ("gather_elements(m, ge, axes=1)", "E0122", "axes"),
        // gather_nd
        ("gather_nd(a, 1)", "E0125", "1"),
        ("gather_nd(a[0, 0, 0], [[]])", "E0125", "a[0, 0, 0]"),
        ("gather_nd(a, [[0, 0, 0, 0]])", "E0125", "[[0, 0, 0, 0]]"),
        ("gather_nd(a, [[], []])", "E0125", "[[], []]"),
        ("gather_nd(a, bd, batch_dims=-1)", "E0125", "-1"),
        ("gather_nd(a, bd, batch_dims=3)", "E0125", "3"),
        ("gather_nd(a, [[0], [1], [0]], batch_dims=1)", "E0125", "[[0], [1], [0]]"),
        ("gather_nd(a, [[1, 3]])", "E0102", "[[1, 3]]"),
        ("gather_nd(a[:, :0], [[1, 0]], mode=clamp)", "E0125", "gather_nd(a[:, :0], [[1, 0]], mode=clamp)"),
        ("gather_nd(a, nd, 0, zero, 1)", "E0121", "1"),
    ] {
        let (got_code, got_at) = error(src);
        assert_eq!((got_code.as_str(), got_at.as_str()), (code, at), "{src}");
    }
}

/// Index tuples of length 0 are refused, as the ONNX text says (`indices.shape[-1]` in
/// `[1, r - batch_dims]`), although ONNX Runtime accepts them: the example, on both
/// executors, pointing at the index tensor.
#[test]
fn empty_index_tuples_are_refused_at_the_indices() {
    for executor in [Executor::Interpreter, Executor::Jit] {
        let mut s = Session::with_executor(executor);
        s.bind("a", Tensor::from_i64s(DType::I8, &[5, 2, 3], &[0; 30]).unwrap());
        s.bind("idx", Tensor::from_i64s(DType::I32, &[5, 2, 0], &[]).unwrap());
        let src = "gather_nd(a, idx, batch_dims=1)";
        let e = s.eval(src).expect_err(src);
        let d = e.diagnostic();
        assert_eq!(d.code, "E0125", "{}", e.render(src));
        assert!(d.message.contains("at least 1"), "{}", d.message);
        let span = d.labels[0].span;
        assert_eq!(&src[span.start..span.end], "idx");
    }
}

#[test]
fn index_tensors_are_checked_whole_before_anything_runs() {
    for executor in [Executor::Interpreter, Executor::Jit] {
        let mut s = session(executor);
        // The bad tuple (0, 3) is row 1; the slices keep only good rows, and still the whole
        // index tensor is checked, as NumPy and ONNX raise.
        for src in ["gather_nd(a, bad)[:1]", "gather_nd(a, bad[::-1])[2:]", "gather_nd(a, bad)[:0]"] {
            let e = s.eval(src).expect_err(src);
            let d = e.diagnostic();
            assert_eq!(d.code, "E0201", "{src}");
            assert!(
                d.message.contains("index 3 is out of bounds for axis 1 with size 3"),
                "{src}: {}",
                d.message
            );
            let span = d.labels[0].span;
            assert!(src[span.start..span.end].starts_with("bad"), "{src}");
        }
        s.bind("bge", Tensor::from_i64s(DType::I64, &[2, 3], &[0, 2, -1, 1, -4, 0]).unwrap());
        let e = s.eval("gather_elements(m, bge)[:1, :2]").expect_err("bge");
        assert!(e.diagnostic().message.contains("index -4 is out of bounds for axis 0 with size 3"));
    }
}

/// Where `gather_nd`'s output is empty because a dim it slices is 0, no index is read and
/// none fails, as ONNX Runtime 1.32 gives (its Gather still checks, and so does slc's `gather`):
/// with the shapes known, and with them known per call (a symbolic dim bound to 0, then 1).
#[test]
fn gather_nd_reads_no_index_where_its_output_is_empty() {
    for executor in [Executor::Interpreter, Executor::Jit] {
        let mut s = session(executor);
        s.bind("z", arange(DType::I32, &[2, 3, 0]));
        let t = s.eval("gather_nd(z, bad)").unwrap();
        assert_eq!(t.shape(), [3, 0]);
        assert_eq!(s.eval("gather_nd(z, bd, batch_dims=1)").unwrap().shape(), [2, 2, 0]);
        // A literal too, checked as the program is: its output is [1, 3, 0].
        assert_eq!(s.eval("gather_nd(z, [[7]])").unwrap().shape(), [1, 3, 0]);
        let e = s.eval("gather_nd(z, [[0, 0, 5]])").expect_err("the tuple reaches the empty axis");
        assert_eq!(e.diagnostic().code, "E0102");
        s.bind("two", Tensor::from_i64s(DType::I64, &[1], &[2]).unwrap());
        let e = s.eval("gather(z, two, axis=0, mode=error)").expect_err("gather checks");
        assert_eq!(e.diagnostic().code, "E0201");
    }
    // Known per call: a literal's values, checked where the output is not empty.
    let k = slc::Kernel::prepare("gather_nd(d, [[7]])", &[("d", "f32[N, M]".parse().unwrap())]).unwrap();
    assert_eq!(k.run(&[&Tensor::zeros(DType::F32, &[3, 0]).unwrap()]).unwrap().shape(), [1, 0]);
    let e = k.run(&[&Tensor::zeros(DType::F32, &[3, 2]).unwrap()]).expect_err("M = 2");
    assert_eq!(e.diagnostic().code, "E0102", "{e}");
    let k = slc::Kernel::prepare(
        "gather_nd(d, i, batch_dims=1)",
        &[("d", "f32[B, N, M]".parse().unwrap()), ("i", "i64[B, K, 1]".parse().unwrap())],
    )
    .unwrap();
    let i = Tensor::from_i64s(DType::I64, &[2, 1, 1], &[7, -9]).unwrap();
    let empty = Tensor::zeros(DType::F32, &[2, 3, 0]).unwrap();
    assert_eq!(k.run(&[&empty, &i]).unwrap().shape(), [2, 1, 0]);
    let e = k.run(&[&Tensor::zeros(DType::F32, &[2, 3, 1]).unwrap(), &i]).expect_err("M = 1");
    assert!(e.diagnostic().message.contains("index 7 is out of bounds for axis 1 with size 3"), "{e}");
    assert_eq!(k.run(&[&empty, &i]).unwrap().shape(), [2, 1, 0]);
}

#[test]
fn chains_equal_their_steps() {
    let chains: &[(&str, &[&str])] = &[
        ("gather_nd(a[::-1], nd)[1:]", &["a[::-1]", "gather_nd(t0, nd)", "t1[1:]"]),
        ("gather_elements(m, ge)[..., ::2]", &["gather_elements(m, ge)", "t0[..., ::2]"]),
        (
            "gather_elements(m[::-1, 1:], ge[:, ::-1], axis=1)",
            &["m[::-1, 1:]", "ge[:, ::-1]", "gather_elements(t0, t1, axis=1)"],
        ),
        ("gather_nd(a, nd[nd[:, 0]])", &["nd[:, 0]", "nd[t0]", "gather_nd(a, t1)"]),
        (
            "gather_nd(a, bd, batch_dims=1)[:, newaxis, ::-1]",
            &["gather_nd(a, bd, batch_dims=1)", "t0[:, newaxis, ::-1]"],
        ),
        (
            "gather(gather_nd(a, nd), ge[0], axis=1, mode=wrap)",
            &["gather_nd(a, nd)", "ge[0]", "gather(t0, t1, axis=1, mode=wrap)"],
        ),
        (
            "gather_elements(gather_nd(a, nd)[:, :3], ge[[0, 1, 0]])",
            &["gather_nd(a, nd)[:, :3]", "ge[[0, 1, 0]]", "gather_elements(t0, t1)"],
        ),
        (
            "strided_slice(gather_nd(m, [[2], [0]]), [0, 1], [2, 4], [1, 2])",
            &["gather_nd(m, [[2], [0]])", "strided_slice(t0, [0, 1], [2, 4], [1, 2])"],
        ),
    ];
    for executor in [Executor::Interpreter, Executor::Jit] {
        for (chain, steps) in chains {
            let mut s = session(executor);
            let fused = s.eval(chain).unwrap_or_else(|e| panic!("{}", e.render(chain)));
            let mut last = None;
            for (k, step) in steps.iter().enumerate() {
                let t = s.eval(step).unwrap_or_else(|e| panic!("{chain}: {}", e.render(step)));
                s.bind(&format!("t{k}"), t.clone());
                last = Some(t);
            }
            assert_eq!(Some(fused), last, "{chain} ({executor:?})");
        }
    }
    // One plan: every step fuses into one access over the output.
    let s = session(Executor::Interpreter);
    let plan = s.compile("gather_nd(a[::-1], nd)[1:]").unwrap().plan;
    assert_eq!(plan.output.terms.len(), 2);
    assert_eq!(plan.checks.len(), 2);
}
