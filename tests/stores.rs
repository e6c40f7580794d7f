//! Stores (`a[items] = v`, `+=`, `*=`; docs/semantics.md, Stores): NumPy 2's values written out
//! for the rules that matter (last write wins, buffered `+=`, broadcasting, literal conversion),
//! the errors and where they point, the plan's store printed and parsed back, verification's
//! refusals, every run path against the interpreter, and the executors that refuse. The golden
//! corpus (tests/golden, ids 5100 on) holds 800 more, generated with NumPy.

use slc::backend::{interp, jit};
use slc::exec::{Executor, Runnable};
use slc::measure::SplitMix;
use slc::pipeline::compile_generic;
use slc::plan::{self, parse, verify};
use slc::sema::{InputTypes, InputValues, SymInputTypes};
use slc::types::TensorType;
use slc::{DType, Session, Tensor};

fn ints(dtype: DType, shape: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_i64s(dtype, shape, values).unwrap()
}

fn f32s(shape: &[usize], values: &[f32]) -> Tensor {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Tensor::from_bytes(DType::F32, shape, &bytes).unwrap()
}

fn values_f32(t: &Tensor) -> Vec<f32> {
    t.bytes().chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect()
}

fn values_i64(t: &Tensor) -> Vec<i64> {
    (0..t.numel()).map(|i| t.int_at(i).unwrap() as i64).collect()
}

/// `a: f32[4, 3]` = 0..12, `i: i64[4]` = [0, 2, 0, -1] (a duplicate), `v: f32[4]`,
/// `r: f32[3]`, `m: bool[4]`, `b: i64[5]` = 0..5.
fn session(executor: Executor) -> Session<'static> {
    let mut s = Session::with_executor(executor);
    s.bind("a", f32s(&[4, 3], &(0..12).map(|x| x as f32).collect::<Vec<_>>()));
    s.bind("i", ints(DType::I64, &[4], &[0, 2, 0, -1]));
    s.bind("v", f32s(&[4], &[10.0, 20.0, 30.0, 40.0]));
    s.bind("r", f32s(&[3], &[-1.0, -2.0, -3.0]));
    s.bind("m", Tensor::from_bytes(DType::Bool, &[4], &[1, 0, 0, 1]).unwrap());
    s.bind("b", ints(DType::I64, &[5], &[0, 1, 2, 3, 4]));
    s
}

fn eval(src: &str) -> Tensor {
    let s = session(Executor::Interpreter);
    s.eval(src).unwrap_or_else(|e| panic!("{}", e.render(src)))
}

#[test]
fn stores_give_numpys_values() {
    let a = |i: usize| i as f32;
    let base: Vec<f32> = (0..12).map(a).collect();
    let with = |changes: &[(usize, f32)]| {
        let mut v = base.clone();
        for &(at, x) in changes {
            v[at] = x;
        }
        v
    };
    let cases: &[(&str, Vec<f32>)] = &[
        // Basic subscripts, a scalar literal broadcast.
        ("a[1:3, ::-1] = 0", with(&[(3, 0.), (4, 0.), (5, 0.), (6, 0.), (7, 0.), (8, 0.)])),
        ("a[-1] = 7", with(&[(9, 7.), (10, 7.), (11, 7.)])),
        ("a[..., 1] = 5", with(&[(1, 5.), (4, 5.), (7, 5.), (10, 5.)])),
        ("a[None, 0, :2] = [8, 9]", with(&[(0, 8.), (1, 9.)])),
        // A row broadcast over the selected rows; `i` selects row 0 twice.
        (
            "a[i] = r",
            with(&[
                (0, -1.),
                (1, -2.),
                (2, -3.),
                (6, -1.),
                (7, -2.),
                (8, -3.),
                (9, -1.),
                (10, -2.),
                (11, -3.),
            ]),
        ),
        // Duplicates with `=`: the last write in C order wins (v[2] = 30 into a[0, 1]).
        ("a[i, 1] = v", with(&[(1, 30.), (7, 20.), (10, 40.)])),
        // Buffered `+=`: a[0, 1] gets 1 + 30 once, not 1 + 10 + 30.
        ("a[i, 1] += v", with(&[(1, 31.), (7, 27.), (10, 50.)])),
        ("a[i, 1] *= v", with(&[(1, 30.), (7, 140.), (10, 400.)])),
        // A mask, and a chain of basic subscripts ending in an index array.
        ("a[m] = r", with(&[(0, -1.), (1, -2.), (2, -3.), (9, -1.), (10, -2.), (11, -3.)])),
        ("a[1:][[0, 0], [2, 0]] = [5, 6]", with(&[(5, 5.), (3, 6.)])),
        // Through an index array, a list broadcasts as any array, by dims of 1 too.
        ("a[[2], 1:] = [[[5, 6]]]", with(&[(7, 5.), (8, 6.)])),
        // The value reads the target as it was: NumPy's overlapping copy.
        ("a[1:, 0] = a[:-1, 0]", with(&[(3, 0.), (6, 3.), (9, 6.)])),
        // An empty selection stores nothing.
        ("a[2:1] = 99", base.clone()),
    ];
    for (src, want) in cases {
        assert_eq!(values_f32(&eval(src)), *want, "{src}");
    }
}

#[test]
fn integer_literals_convert_as_numpy_2() {
    let mut s = Session::new();
    s.bind("u", ints(DType::U8, &[3], &[250, 1, 2]));
    s.bind("k", ints(DType::I8, &[3], &[120, 1, 2]));
    s.bind("n", ints(DType::I64, &[], &[7]));
    s.bind("big", ints(DType::U16, &[], &[300]));
    let run = |src: &str| s.eval(src).map(|t| values_i64(&t));
    assert_eq!(run("u[0] = 255").unwrap(), [255, 1, 2]);
    // Arithmetic wraps in the target's type, as NumPy's in-place operators do.
    assert_eq!(run("u[0] += 10").unwrap(), [4, 1, 2]);
    assert_eq!(run("k[[0, 0]] += [10, 20]").unwrap(), [-116, 1, 2]);
    // A list in `+=` is NumPy's int64 array: wrapped into a signed target.
    assert_eq!(run("k[1:2] += [300]").unwrap(), [120, 45, 2]);
    // A 0-d integer bound with its value (a Python `int` by name) converts as the literal.
    assert_eq!(run("u[2] = n").unwrap(), [250, 1, 7]);
    let mut f = Session::new();
    f.bind("a", f32s(&[2], &[0.5, 0.5]));
    f.bind("n", ints(DType::U8, &[], &[3]));
    assert_eq!(values_f32(&f.eval("a[1] += n").unwrap()), [0.5, 3.5]);
    // A 0-d integer of another dtype is a NumPy scalar, strongly typed (NEP 50): cast as
    // NumPy casts it (`u[0] = np.uint16(300)` is 44), refused where NumPy's `+=` refuses it.
    assert_eq!(run("u[0] = big").unwrap(), [44, 1, 2]);
    s.bind("neg", ints(DType::I8, &[], &[-1]));
    let run = |src: &str| s.eval(src).map(|t| values_i64(&t));
    assert_eq!(run("u[0] += neg").unwrap(), [249, 1, 2], "one element: computed in i16, cast back");
    for (src, code) in [
        ("u[0] = 256", "E0135"),
        ("u[0] = -1", "E0135"),
        ("u[1:] += [1, 2]", "E0134"),
        ("u[:2] += neg", "E0134"),
    ] {
        let e = run(src).expect_err(src);
        assert_eq!(e.diagnostic().code, code, "{src}");
    }
}

/// NumPy 2.4's answers (`x[...] = 2.7` on an array made the same way, and ml_dtypes 0.7's for
/// bfloat16), written out; python/tests/test_stores.py draws many more against NumPy itself.
#[test]
fn float_literals_convert_as_numpy_2() {
    let mut s = Session::new();
    s.bind("n", ints(DType::I32, &[4], &[0, 0, 0, 0]));
    s.bind("u", ints(DType::U8, &[2], &[0, 0]));
    s.bind("p", Tensor::from_bytes(DType::Bool, &[3], &[1, 0, 1]).unwrap());
    s.bind("f", f32s(&[2], &[1.0, 1.0]));
    s.bind("h", Tensor::from_bytes(DType::F16, &[1], &[0, 0]).unwrap());
    s.bind("g", Tensor::from_bytes(DType::BF16, &[1], &[0, 0]).unwrap());
    let run = |src: &str| s.eval(src).unwrap_or_else(|e| panic!("{}", e.render(src)));
    // Into integers `int(v)`: toward zero; a list is a float64 array cast the same way.
    assert_eq!(values_i64(&run("n[:] = [1.9, -1.9, 0.5, -0.5]")), [1, -1, 0, 0]);
    assert_eq!(values_i64(&run("n[0] = 2_147_483_647.9")), [2147483647, 0, 0, 0]);
    assert_eq!(values_i64(&run("u[0] = 255.9")), [255, 0]);
    assert_eq!(run("p[:] = [0.0, -0.0, 1e-300]").bytes(), [0, 0, 1]);
    // A bool element updated by an integer: the truth of NumPy's integer sum or product.
    assert_eq!(run("p[1] += 2").bytes(), [1, 1, 1]);
    assert_eq!(run("p[1] += 0").bytes(), [1, 0, 1]);
    assert_eq!(run("p[2] *= 2").bytes(), [1, 0, 1]);
    assert_eq!(run("p[2] *= 0").bytes(), [1, 0, 0]);
    assert_eq!(values_f32(&run("f[0] = -1.5e-3")), [-0.0015, 1.0]);
    // `+=` into a float target: a scalar converts first, then adds in f32.
    assert_eq!(values_f32(&run("f[:] += 0.1")), [1.1, 1.1]);
    assert_eq!(values_f32(&run("f[:] *= [0.5, 4]")), [0.5, 4.0]);
    // Just above the tie at f16's and bf16's precision: rounded once from the double, up
    // (through f32 it would land on the tie and round to even, down to 1).
    let bits = |t: Tensor| u16::from_le_bytes([t.bytes()[0], t.bytes()[1]]);
    assert_eq!(bits(run("h[0] = 1.0004882821813226")), 0x3c01);
    assert_eq!(bits(run("g[0] = 1.0039062509313226")), 0x3f81);
    assert_eq!(bits(run("h[0] = 1e999")), 0x7c00, "infinity, as NumPy (with its overflow warning)");
    // Out of the target's range, an infinity too: NumPy's OverflowError.
    for src in ["u[0] = 256.0", "u[0] = -1.5", "n[0] = 1e10", "n[0] = 1e999"] {
        assert_eq!(s.eval(src).expect_err(src).diagnostic().code, "E0135", "{src}");
    }
    for src in [
        "n[0] += 2.5",
        "p[1:] *= 2",
        // One element named by integers is NumPy's scalar path, but for an integer that flips it.
        "p[0] += -1",
        "p[:] += [1, 0, 0]",
        "f[:] += [0.5, 0.1]",
        // An int64 list too: NumPy combines it with f32 in float64.
        "f[:] += [16777217, 1]",
    ] {
        let e = s.eval(src).expect_err(src);
        assert_eq!(e.diagnostic().code, "E0134", "{src}");
    }
    // Only a store's value (or a scatter's updates) may be a float.
    for src in ["f[0.5]", "f[0] = f[1.5]", "f[:1.5]"] {
        let e = s.eval(src).expect_err(src);
        assert_eq!(e.diagnostic().code, "E0106", "{src}");
    }
    assert_eq!(values_f32(&run("scatter_nd(f, [[1]], [2.5])")), [1.0, 2.5]);
}

/// A 0-d float bound by name (a Python `float`, a NumPy float scalar) is read when the program
/// is checked and stored as a literal is; in `+=`/`*=` only a value the target holds exactly
/// (NumPy may combine a strong scalar in its wider type). A float tensor of one element that is
/// not 0-d is a tensor: not converted.
/// NumPy's assignment through one boolean mask over every axis (`a[m] = v`, `m` of `a`'s
/// rank) takes a value of at most one dimension: a TypeError for more, broadcastable or not.
#[test]
fn one_mask_over_every_axis_takes_a_value_of_one_dimension() {
    let mut s = Session::new();
    s.bind("a", f32s(&[2, 3], &[0.0; 6]));
    s.bind("m", Tensor::from_bytes(DType::Bool, &[2, 3], &[1, 0, 1, 1, 0, 1]).unwrap());
    s.bind("row", Tensor::from_bytes(DType::Bool, &[2], &[1, 0]).unwrap());
    s.bind("v", f32s(&[1, 1], &[5.0]));
    for src in ["a[m] = v", "a[m] = [[1]]", "a[:][m] = v"] {
        let e = s.eval(src).expect_err(src);
        assert_eq!(e.diagnostic().code, "E0133", "{src}");
        assert!(e.render(src).contains("at most one dimension"), "{src}");
    }
    // One dimension or none, a mask over fewer axes, and `+=` (NumPy's other path) broadcast.
    assert_eq!(values_f32(&s.eval("a[m] = [5]").unwrap()), [5.0, 0.0, 5.0, 5.0, 0.0, 5.0]);
    assert_eq!(values_f32(&s.eval("a[row] = v").unwrap()), [5.0, 5.0, 5.0, 0.0, 0.0, 0.0]);
    assert_eq!(values_f32(&s.eval("a[m, ...] = 2").unwrap()), [2.0, 0.0, 2.0, 2.0, 0.0, 2.0]);
}

#[test]
fn a_float_bound_by_name_converts_as_numpy() {
    let mut s = Session::new();
    s.bind("n", ints(DType::I32, &[3], &[0, 0, 0]));
    s.bind("f", f32s(&[2], &[1.0, 1.0]));
    s.bind("h", Tensor::from_bytes(DType::F16, &[1], &[0, 0]).unwrap());
    let scalar = |v: f64| Tensor::from_bytes(DType::F64, &[], &v.to_le_bytes()).unwrap();
    let run = |s: &Session, src: &str| s.eval(src).unwrap_or_else(|e| panic!("{}", e.render(src)));
    s.bind("k", scalar(-2.7));
    assert_eq!(values_i64(&run(&s, "n[1:] = k")), [0, -2, -2]);
    assert_eq!(values_f32(&run(&s, "f[0] = k")), [-2.7, 1.0]);
    s.bind("k", scalar(1.0004882821813226));
    let bits = |t: Tensor| u16::from_le_bytes([t.bytes()[0], t.bytes()[1]]);
    assert_eq!(bits(run(&s, "h[0] = k")), 0x3c01, "rounded once, as NumPy");
    s.bind("k", scalar(0.5));
    assert_eq!(values_f32(&run(&s, "f[:] *= k")), [0.5, 0.5]);
    s.bind("k32", Tensor::from_bytes(DType::F32, &[], &2.5f32.to_le_bytes()).unwrap());
    assert_eq!(values_i64(&run(&s, "n[0] = k32")), [2, 0, 0]);
    s.bind("k", scalar(0.1));
    for src in ["n[0] += k", "f[:] += k", "h[0] *= k"] {
        assert_eq!(s.eval(src).expect_err(src).diagnostic().code, "E0134", "{src}");
    }
    // NaN has no integer value (NumPy's ValueError); an infinity or 3e9 none of i32's
    // (NumPy's OverflowError).
    for (v, code) in [(f64::NAN, "E0134"), (f64::INFINITY, "E0135"), (3e9, "E0135")] {
        s.bind("k", scalar(v));
        assert_eq!(s.eval("n[0] = k").expect_err("{v}").diagnostic().code, code, "{v}");
    }
    // One element named by integers alone takes a scalar, whatever the value's dtype.
    s.bind("one", f32s(&[1], &[2.5]));
    assert_eq!(s.eval("n[0] = one").expect_err("a tensor").diagnostic().code, "E0133");
}

/// The diagnostic's code and the text its first label points at.
/// One element named by integers alone (`a[1, 2]`, `a[1][2]`, `a[()]` on a 0-d array) is NumPy
/// 2.4's scalar path: it takes a scalar and refuses a value of rank 1 or more ("setting an
/// array element with a sequence"), where `...` or a slice broadcasts it; a bool element takes
/// the truth of a one-element value instead, and of a list literal (`[0]` is not empty: `True`).
/// NumPy 2.4's answers written out; python/tests/test_numpy_parity.py holds NumPy itself to it.
#[test]
fn one_element_named_by_integers_takes_a_scalar() {
    let mut s = Session::new();
    s.bind("a", ints(DType::I32, &[2, 3], &[0, 1, 2, 3, 4, 5]));
    s.bind("v", ints(DType::I32, &[1], &[9]));
    s.bind("z", ints(DType::I32, &[], &[7]));
    s.bind("b", Tensor::from_bytes(DType::Bool, &[2, 3], &[0, 1, 0, 1, 0, 1]).unwrap());
    s.bind("t", Tensor::from_bytes(DType::Bool, &[1, 1], &[1]).unwrap());
    s.bind("f", Tensor::from_bytes(DType::Bool, &[1], &[0]).unwrap());
    s.bind("tt", Tensor::from_bytes(DType::Bool, &[2], &[1, 1]).unwrap());
    s.bind("s", ints(DType::I32, &[], &[3]));
    let run = |src: &str| {
        s.eval(src).map(|t| match t.dtype() {
            DType::Bool => t.bytes().iter().map(|&b| i64::from(b)).collect(),
            _ => values_i64(&t),
        })
    };
    for (src, want) in [
        ("a[1, 2] = z", [0, 1, 2, 3, 4, 7]),
        ("a[1, 2, ...] = v", [0, 1, 2, 3, 4, 9]),
        ("a[1, 2:] = v", [0, 1, 2, 3, 4, 9]),
        ("b[0, 0] = [0]", [1, 1, 0, 1, 0, 1]),
        ("b[0][1] = f", [0, 0, 0, 1, 0, 1]),
        ("b[0, 0] += t", [1, 1, 0, 1, 0, 1]),
        ("b[0, 1] *= f", [0, 0, 0, 1, 0, 1]),
        ("b[0, 0] += [0]", [0, 1, 0, 1, 0, 1]),
        ("b[0, 0] += [[2]]", [1, 1, 0, 1, 0, 1]),
    ] {
        assert_eq!(run(src).unwrap_or_else(|e| panic!("{}", e.render(src))), want, "{src}");
    }
    let mut zero_d = Session::new();
    zero_d.bind("x", f32s(&[], &[1.0]));
    zero_d.bind("v", f32s(&[1], &[2.0]));
    for (session, src, code, at) in [
        (&s, "a[1, 2] = v", "E0133", "v"),
        (&s, "a[1][-1] = v", "E0133", "v"),
        (&s, "a[1, s] = [5]", "E0133", "[5]"),
        (&s, "b[0, 0] = tt", "E0133", "tt"),
        (&s, "b[0, 0] *= [1]", "E0134", "[1]"),
        (&zero_d, "x[()] = v", "E0133", "v"),
    ] {
        let d = session.eval(src).expect_err(src).diagnostic();
        let span = d.labels[0].span;
        assert_eq!((d.code, &src[span.start..span.end]), (code, at), "{src}");
    }
}

fn code_and_target(src: &str) -> (&'static str, String) {
    let s = session(Executor::Interpreter);
    let e = s.eval(src).expect_err(src);
    let d = e.diagnostic();
    let span = d.labels[0].span;
    (d.code, src[span.start..span.end].to_string())
}

#[test]
fn errors_point_at_the_text_at_fault() {
    let cases: &[(&str, &str, &str)] = &[
        ("a = 1", "E0131", "a"),
        ("gather(a, [0])[0] = 1", "E0131", "gather(a, [0])"),
        ("let c = a\nc[0] = 1", "E0131", "c"),
        // NumPy would store into the copy `a[i]` selects, leaving `a` as it was.
        ("a[i][0] = 1", "E0131", "a[i][0]"),
        ("a[0] = 1\na", "E0132", "a"),
        ("a[0] = v", "E0133", "v"),
        ("a[i] = [[1, 2]]", "E0133", "[[1, 2]]"),
        // `+=` cannot grow a 0-d selection into a 1-d one (NumPy: "setting an array element
        // with a sequence").
        ("a[0, 0] += [1]", "E0133", "[1]"),
        ("a[0] += [[1, 2, 3]]", "E0133", "[[1, 2, 3]]"),
        // Through a view, NumPy makes a list an array of at most the view's rank.
        ("a[1:] = [[[1, 2, 3]]]", "E0133", "[[[1, 2, 3]]]"),
        // NumPy computes f32 * i64 in f64, rounded once: casting first would round twice.
        ("a[0, :2] *= b[:2]", "E0134", "b[:2]"),
        ("a[4] = 1", "E0102", "4"),
        ("a[0, 0, 0] = 1", "E0103", "0"),
        ("a[nope] = 1", "E0101", "nope"),
    ];
    for (src, code, target) in cases {
        assert_eq!(code_and_target(src), (*code, target.to_string()), "{src}");
    }
    // An index tensor's value out of range is found when it runs, and points at the tensor.
    let mut s = session(Executor::Jit);
    s.bind("bad", ints(DType::I64, &[2], &[0, 4]));
    let src = "a[bad] = 0";
    let d = s.eval(src).expect_err(src).diagnostic();
    assert_eq!((d.code, &src[d.labels[0].span.start..d.labels[0].span.end]), ("E0201", "bad"));
}

fn types() -> (InputTypes, InputValues) {
    let types = [("a", "f32[4, 3]"), ("i", "i64[4]"), ("v", "f32[4]"), ("r", "f32[3]"), ("m", "bool[4]")]
        .into_iter()
        .map(|(n, t)| (n.to_string(), t.parse::<TensorType>().unwrap()))
        .collect();
    let values = [("m".to_string(), Tensor::from_bytes(DType::Bool, &[4], &[1, 0, 0, 1]).unwrap())]
        .into_iter()
        .collect();
    (types, values)
}

const PROGRAMS: &[&str] = &[
    "a[1:3, ::-1] = 0",
    "a[i, 1] += v",
    "a[i] *= r",
    "a[m] = r",
    "a[m] = 7",
    "a[m, 1:] *= [2]",
    "a[None, 1:][[0, 0], -1, 2] = [5, 6]",
    "a[2:1] = 7",
    "a[1:, 0] = a[:-1, 0]",
    "scatter_elements(a, [[1, 0, 2], [1, 0, 2]], [[1, 2, 3], [4, 5, 6]], axis=0, reduction=add)",
    "scatter_nd_update(a, [[1], [1]], [[1, 2, 3], [4, 5, 6]], reduction=sub)",
    "scatter_nd(a, [[1], [1]], [[1, 2, 3], [4, 5, 6]], reduction=max)",
    "scatter_elements_update(a, [[1, 0, 2], [1, 0, 2]], [[1, 2, 3], [4, 5, 6]], 0, reduction=prod, use_init_val=false)",
];

#[test]
fn store_plans_print_and_parse_back() {
    let (types, values) = types();
    for src in PROGRAMS {
        let c =
            slc::compile_with_values(src, &types, &values).unwrap_or_else(|e| panic!("{}", e.render(src)));
        let text = c.plan.to_string();
        assert!(text.contains("\n  store "), "{src}: {text}");
        let reread = parse::parse(&text).unwrap_or_else(|e| panic!("{src}: {e}\n{text}"));
        assert_eq!(&reread, c.plan.plan(), "{src}");
        assert_eq!(reread.to_string(), text, "{src}");
        verify(reread).unwrap();
    }
    // A float literal's constant prints as its bits and reads back as the same value.
    let c = slc::compile_with_values("a[0] = 3", &types, &values).unwrap();
    assert!(c.plan.to_string().contains("const $0: f32[] = [1077936128]"), "{}", c.plan);
}

#[test]
fn verification_refuses_malformed_stores() {
    let good = "plan(a: f32[2, 3], v: f32[3]) -> f32[2, 3]\n  out a{0; 3, 1}\n  store set over [3] at a{3; 1} value v{0; 1}\n";
    verify(parse::parse(good).unwrap()).unwrap();
    let bad = [
        // Past the end of the target.
        good.replace("at a{3; 1}", "at a{4; 1}"),
        // A value of another dtype.
        good.replace("v: f32[3]", "v: i32[3]"),
        // The output is not the target's whole copy.
        good.replace("out a{0; 3, 1}", "out a{0; 1, 3}"),
        // Writing into the value, not the target.
        good.replace("at a{3; 1}", "at v{0; 1}"),
        good.replace("over [3]", "over [3, 1]"),
        // A mask that is not bool, or reaches past its end.
        good.replace("value v{0; 1}", "value v{0; 1} when v{0; 1}"),
        good.replace("v: f32[3]", "v: f32[3], m: bool[2]")
            .replace("value v{0; 1}", "value v{0; 1} when m{0; 1}"),
    ];
    let masked = good
        .replace("v: f32[3]", "v: f32[3], m: bool[3]")
        .replace("value v{0; 1}", "value v{0; 1} when m{0; 1}");
    verify(parse::parse(&masked).unwrap()).unwrap();
    for text in bad {
        let p = parse::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
        assert!(verify(p).is_err(), "{text}");
    }
    for text in
        ["store set over [3] at a{0; 1} value v{0; 1}", "store frob over [3] at a{0; 1} value v{0; 1}"]
    {
        let text = format!(
            "plan(a: f32[2, 3], v: f32[3]) -> f32[2, 3]\n  out a{{0; 3, 1}}\n  {text}\n  out a{{0; 3, 1}}\n"
        );
        assert!(parse::parse(&text).is_err(), "{text}");
    }
}

/// The programs above whose stores the JIT compiles: every `set` (slices, integers, index
/// arrays, masks), `+=`, `*=` on f32, and a scatter's reductions from the element (`mean`,
/// those without the element, and `+=`, `*=` on f16, bf16 and complex numbers run on the
/// interpreter).
const JIT_COMPILED: &[&str] = &[
    "a[1:3, ::-1] = 0",
    "a[i, 1] += v",
    "a[i] *= r",
    "a[m] = r",
    "a[m] = 7",
    "a[m, 1:] *= [2]",
    "a[None, 1:][[0, 0], -1, 2] = [5, 6]",
    "a[2:1] = 7",
    "a[1:, 0] = a[:-1, 0]",
    // Reductions from the element as bound, duplicates accumulated in C order.
    "scatter_elements(a, [[1, 0, 2], [1, 0, 2]], [[1, 2, 3], [4, 5, 6]], axis=0, reduction=add)",
    "scatter_nd_update(a, [[1], [1]], [[1, 2, 3], [4, 5, 6]], reduction=sub)",
    "scatter_nd(a, [[1], [1]], [[1, 2, 3], [4, 5, 6]], reduction=max)",
];

#[test]
fn every_cpu_path_runs_stores_as_the_interpreter() {
    let (types, values) = types();
    for src in PROGRAMS {
        let want = eval(src);
        // The JIT compiles these; the others run on the oracle.
        let compiled = JIT_COMPILED.contains(src);
        for threads in [1, 4] {
            let s = session(Executor::Jit);
            assert_eq!(s.eval(src).unwrap().bytes(), want.bytes(), "{src} on the session's JIT");
            let c = slc::compile_with_values(src, &types, &values).unwrap();
            let runnable = Runnable::prepare_in_plan_order(&c.plan, Executor::Jit, None).unwrap();
            let expected = if compiled { Executor::Jit } else { Executor::Interpreter };
            assert_eq!(runnable.executor(), expected, "{src}");
            let by_name = |n: &str| -> Tensor { session(Executor::Interpreter).eval(n).unwrap() };
            let args: Vec<Tensor> = c.plan.inputs.iter().map(|d| by_name(&d.name)).collect();
            let args: Vec<&Tensor> = args.iter().collect();
            assert_eq!(runnable.run(&c.plan, &args, threads).unwrap().bytes(), want.bytes(), "{src}");
            assert_eq!(interp::run(&c.plan, &args).unwrap().bytes(), want.bytes(), "{src}");
        }
    }
}

/// A small deterministic generator (splitmix64) for the programs below.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut g = SplitMix(self.0);
        let x = g.next_u64();
        self.0 = g.0;
        x
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo + 1) as u64) as i64
    }
}

/// `a[ITEMS] = VALUE` through slices, integers, `...`, new axes and, now and then, index
/// arrays (duplicates included: the last write wins) or a mask, on targets of every element
/// width, with values that broadcast, gather, or read the target.
fn box_store(r: &mut Rng, shape: &[usize]) -> String {
    let mut items = vec![];
    // Index arrays in one subscript broadcast together: all of one length.
    let gathered_len = 1 + r.below(4) as usize;
    for &n in shape {
        let n = n as i64;
        items.push(match r.below(6) {
            0 => r.range(-n, n - 1).to_string(),
            1 => ":".into(),
            2 | 3 if r.below(3) > 0 => {
                let values: Vec<String> = (0..gathered_len).map(|_| r.range(-n, n - 1).to_string()).collect();
                format!("[{}]", values.join(", "))
            }
            2 | 3 => {
                let bits: Vec<&str> = (0..n).map(|_| ["False", "True"][r.below(2) as usize]).collect();
                format!("[{}]", bits.join(", "))
            }
            _ => {
                let (a, b) = (r.range(-n - 1, n + 1), r.range(-n - 1, n + 1));
                let step = [1, 1, 2, 3, -1, -2][r.below(6) as usize];
                format!("{a}:{b}:{step}")
            }
        });
    }
    if r.below(3) == 0 {
        items.insert(r.below(items.len() as u64 + 1) as usize, "None".into());
    }
    if r.below(4) == 0 {
        let at = r.below(items.len() as u64) as usize;
        items[at] = "...".into();
    }
    let value = match r.below(4) {
        0 => r.below(100).to_string(),
        1 => "v".into(),
        // A gathered value: the nest reads it through index terms.
        2 => "v[j]".into(),
        // The target itself, read as it was bound.
        _ => "a[::-1]".into(),
    };
    format!("a[{}] = {value}", items.join(", "))
}

#[test]
fn jit_update_nests_equal_the_interpreter() {
    let mut r = Rng(28);
    let (mut compiled, mut gathered) = (0, 0);
    for case in 0..400 {
        let dtype =
            [DType::U8, DType::I16, DType::F32, DType::F64, DType::C128, DType::Bool, DType::I64][case % 7];
        // `+=` and `*=` too: the JIT computes them for every dtype here but the complex one.
        let op = ["=", "=", "+=", "*="][r.below(4) as usize];
        // Large enough, now and then, for the update to split across threads.
        let shape: Vec<usize> = match case % 7 {
            0 => vec![300, 1 + r.below(3) as usize, 257],
            _ => (0..1 + r.below(3)).map(|_| 1 + r.below(6) as usize).collect(),
        };
        let src = box_store(&mut r, &shape).replacen(" = ", &format!(" {op} "), 1);
        let n: usize = shape.iter().product();
        let bits = if dtype == DType::Bool { 1 } else { 0x7f };
        let bytes = |k: usize, seed: u64| -> Vec<u8> {
            let mut g = Rng(seed);
            (0..k * dtype.width()).map(|_| (g.next() >> 7) as u8 & bits).collect()
        };
        let a = Tensor::from_bytes(dtype, &shape, &bytes(n, case as u64)).unwrap();
        // `v` has the selection's trailing dims (some 1), found from the interpreter's answer.
        let mut s = Session::with_executor(Executor::Interpreter);
        s.bind("a", a.clone());
        let selection = s.eval(src.split(&format!(" {op} ")).next().unwrap());
        let Ok(selection) = selection else { continue };
        let cut = r.below(selection.rank() as u64 + 1) as usize;
        let vshape: Vec<usize> =
            selection.shape()[cut..].iter().map(|&d| if r.below(4) == 0 { 1 } else { d }).collect();
        let vn: usize = vshape.iter().product();
        let v = Tensor::from_bytes(dtype, &vshape, &bytes(vn, 1000 + case as u64)).unwrap();
        // `v[j]` reads row 0 of `v` for every row: the value's shape, gathered.
        let jn = vshape.first().copied().unwrap_or(1);
        let j = ints(DType::I32, &[jn], &vec![0; jn]);
        let bind = |s: &mut Session| {
            s.bind("a", a.clone());
            s.bind("v", v.clone());
            s.bind("j", j.clone());
        };
        bind(&mut s);
        let want = s.eval(&src);
        for threads in [1, 4] {
            let mut jit = Session::with_executor(Executor::Jit);
            jit.options_mut().threads = threads;
            bind(&mut jit);
            match (&want, jit.eval(&src)) {
                (Ok(x), Ok(y)) => assert_eq!(
                    x.bytes(),
                    y.bytes(),
                    "{src} on {dtype}{shape:?}, v {vshape:?}, {threads} threads"
                ),
                (Err(x), Err(y)) => assert_eq!(x.diagnostic().code, y.diagnostic().code, "{src}"),
                (x, y) => panic!("{src}: interpreter {x:?}, JIT {y:?}"),
            }
        }
        if want.is_ok() {
            compiled += 1;
            // Every store runs on the JIT, gathered destinations included, but a complex `+=`
            // or `*=`.
            let plan = s.compile(&src).unwrap().plan;
            let runnable = Runnable::prepare_in_plan_order(&plan, Executor::Jit, None).unwrap();
            let jit = op == "=" || dtype != DType::C128;
            assert_eq!(runnable.executor() == Executor::Jit, jit, "{src} on {dtype}");
            gathered += plan.store.as_ref().is_some_and(|st| !st.dest.terms.is_empty()) as usize;
        }
    }
    assert!(compiled > 200, "{compiled} programs ran");
    assert!(gathered > 50, "{gathered} programs stored through index arrays or masks");
}

#[test]
fn back_ends_without_update_nests_refuse_store_plans() {
    let (_, values) = types();
    // The JIT combines integers, floats and bools, not complex numbers (nor f16 and bf16).
    let complex: InputTypes =
        [("z".to_string(), "c64[4]".parse::<TensorType>().unwrap())].into_iter().collect();
    let c = slc::compile_with_values("z[1:] += 1", &complex, &values).unwrap();
    assert!(jit::compile(&c.plan.lift(), &jit::plan_order(&c.plan)).is_err());
    // The GPU runs every store but those combining complex numbers (docs/cuda.md).
    let e = match Runnable::prepare_in_plan_order(&c.plan, Executor::Cuda, None) {
        Err(e) => slc::Error::from(e),
        Ok(_) => panic!("the GPU took a store plan"),
    };
    assert_eq!(e.diagnostic().code, "E0210");
    // DirectML lowers the stores one scatter expresses (tests/dml_stores.rs); `+=` is not one.
    let dml = slc::backend::dml::lower(&c.plan, &Default::default()).unwrap_err();
    assert!(dml.to_string().contains("`+=`"), "{dml}");
    // The CUDA code generator itself, for callers that reach it past `exec` (the device-memory
    // kernels), says what it refuses.
    let e = slc::backend::cuda::generate(&c.plan.lift(), "k").unwrap_err();
    assert!(e.to_string().contains("`add` on c64"), "{e}");
}

#[test]
fn generic_store_plans_bind_to_the_concrete_ones() {
    // Symbolic dims, and a mask known only per call (its `nonzero()` derived).
    let types: SymInputTypes = [("a", "f32[N, 3]"), ("v", "f32[3]"), ("m", "bool[N]"), ("i", "i64[K]")]
        .into_iter()
        .map(|(n, t)| (n.to_string(), t.parse().unwrap()))
        .collect();
    let a = f32s(&[4, 3], &(0..12).map(|x| x as f32).collect::<Vec<_>>());
    let v = f32s(&[3], &[-1.0, -2.0, -3.0]);
    let m = Tensor::from_bytes(DType::Bool, &[4], &[0, 1, 0, 1]).unwrap();
    let i = ints(DType::I64, &[3], &[3, 0, 3]);
    let by_name = |n: &str| match n {
        "a" => Some(&a),
        "v" => Some(&v),
        "m" => Some(&m),
        "i" => Some(&i),
        _ => None,
    };
    for src in ["a[m] = v", "a[i] += v", "a[1:, ::2] = 0", "a[i, 0] = 5"] {
        let c = compile_generic(src, &types).unwrap_or_else(|e| panic!("{}", e.render(src)));
        let generic = plan::verify_generic(c.plan).unwrap();
        let text = generic.plan().to_string();
        assert_eq!(parse::parse_generic(&text).unwrap().to_string(), text, "{src}");
        let all = plan::input_tensors(&generic.plan().inputs, &by_name).unwrap();
        let args: Vec<&Tensor> = all.iter().map(|t| t.as_ref()).collect();
        let dims: Vec<Vec<i64>> =
            args.iter().map(|t| t.shape().iter().map(|&d| d as i64).collect()).collect();
        let dims: Vec<&[i64]> = dims.iter().map(Vec::as_slice).collect();
        let env = generic.plan().binding(&dims, &|_, _| None).unwrap();
        let bound = verify(generic.plan().bind(&env).unwrap()).unwrap();
        let got = interp::run(&bound, &args).unwrap();
        let mut s = Session::new();
        for n in ["a", "v", "m", "i"] {
            s.bind(n, by_name(n).unwrap().clone());
        }
        assert_eq!(got.bytes(), s.eval(src).unwrap().bytes(), "{src}");
    }
}

#[test]
fn a_session_store_leaves_the_bound_tensor_as_it_was() {
    let s = session(Executor::Jit);
    let before = s.eval("a").unwrap();
    let stored = s.eval("a[0] = 100").unwrap();
    assert_eq!(values_f32(&stored)[..3], [100.0, 100.0, 100.0]);
    assert_eq!(s.eval("a").unwrap().bytes(), before.bytes());
}

/// The fuzzer's store programs (`slc::fuzz::store_program`: assignments through every kind of
/// subscript, the scatters) on every CPU path: the session's JIT (which compiles the stores it
/// can and sends the rest to the interpreter) gives the interpreter's bytes or its error code,
/// on one thread and four, and every plan prints and parses back.
#[test]
fn fuzzed_store_programs_agree_on_every_cpu_path() {
    use slc::fuzz::{Rng as FuzzRng, fill, store_program};
    let mut r = FuzzRng::new(2028);
    let mut valid = 0;
    for case in 0..300 {
        let shape: &[usize] = [&[3, 4][..], &[4][..], &[3, 2, 2][..]][case % 3];
        let dtype = [DType::F32, DType::I16, DType::U8, DType::F64][case % 4];
        let src = store_program(&mut r, shape);
        let bind = |s: &mut Session| {
            s.bind("a", fill(dtype, shape, case as u64));
            s.bind("idx", ints(DType::I64, &[2], &[1, -1]));
            s.bind(
                "idx2",
                ints(
                    DType::I64,
                    &[shape[0], 2],
                    &(0..2 * shape[0] as i64).map(|v| v % 2).collect::<Vec<_>>(),
                ),
            );
            let bits: Vec<u8> = (0..shape[0]).map(|i| (i % 2) as u8).collect();
            s.bind("m", Tensor::from_bytes(DType::Bool, &[shape[0]], &bits).unwrap());
        };
        let mut interp = Session::with_executor(Executor::Interpreter);
        bind(&mut interp);
        let want = interp.eval(&src);
        if let Ok(c) = interp.compile(&src) {
            let text = c.plan.to_string();
            assert_eq!(
                parse::parse(&text).unwrap_or_else(|e| panic!("{src}: {e}\n{text}")).to_string(),
                text
            );
        }
        for threads in [1, 4] {
            let mut jit = Session::with_executor(Executor::Jit);
            jit.options_mut().threads = threads;
            bind(&mut jit);
            match (&want, jit.eval(&src)) {
                (Ok(x), Ok(y)) => assert_eq!(x.bytes(), y.bytes(), "{src} on {dtype}{shape:?}"),
                (Err(x), Err(y)) => assert_eq!(x.diagnostic().code, y.diagnostic().code, "{src}"),
                (x, y) => panic!("{src}: interpreter {x:?}, JIT {y:?}"),
            }
        }
        valid += want.is_ok() as usize;
    }
    assert!(valid > 150, "{valid} of 300 store programs were valid");
}

/// A scatter's `max` and `min` on the JIT pick as the interpreter does, bit for bit: a NaN
/// already there stays (its payload too), a NaN value replaces a number, ties (`-0` against
/// `+0`) keep the element, integers compare signed or unsigned by their dtype, bools as
/// `false < true` with their bytes kept; duplicates reduce in C order, on one thread and four.
#[test]
fn scatter_max_and_min_pick_as_the_interpreter() {
    let nan = f32::from_bits(0x7fc0_0001);
    let other_nan = f32::from_bits(0xffc0_0002);
    let specials = [0.0, -0.0, 1.5, -2.0, nan, other_nan, f32::INFINITY, f32::NEG_INFINITY];
    let f32_data: Vec<u8> = (0..24).flat_map(|k| specials[k % 8].to_le_bytes()).collect();
    let f32_updates: Vec<u8> = (0..24).flat_map(|k| specials[(k * 3 + 1) % 8].to_le_bytes()).collect();
    let bytes = |dtype: DType, k: usize, seed: u8| -> Vec<u8> {
        (0..k * dtype.width()).map(|i| (i as u8).wrapping_mul(37).wrapping_add(seed)).collect()
    };
    for reduction in ["max", "min"] {
        for dtype in [DType::F32, DType::F64, DType::I16, DType::U16, DType::I8, DType::Bool] {
            let (data, updates) = match dtype {
                DType::F32 => (f32_data.clone(), f32_updates.clone()),
                DType::F64 => (
                    f32_data
                        .chunks(4)
                        .flat_map(|c| (f32::from_le_bytes(c.try_into().unwrap()) as f64).to_le_bytes())
                        .collect(),
                    f32_updates
                        .chunks(4)
                        .flat_map(|c| (f32::from_le_bytes(c.try_into().unwrap()) as f64).to_le_bytes())
                        .collect(),
                ),
                DType::Bool => (
                    bytes(dtype, 24, 1).iter().map(|b| b % 3).collect(),
                    bytes(dtype, 24, 5).iter().map(|b| b % 3).collect(),
                ),
                _ => (bytes(dtype, 24, 1), bytes(dtype, 24, 9)),
            };
            let a = Tensor::from_bytes(dtype, &[6, 4], &data).unwrap();
            let u = Tensor::from_bytes(dtype, &[6, 4], &updates).unwrap();
            // Rows 1 and 4 take three updates each, in C order.
            let i = ints(DType::I64, &[6, 1], &[1, 4, 1, 4, 1, 0]);
            let src = format!("scatter_nd(a, i, u, reduction={reduction})");
            let bind = |s: &mut Session| {
                s.bind("a", a.clone());
                s.bind("u", u.clone());
                s.bind("i", i.clone());
            };
            let mut interp = Session::with_executor(Executor::Interpreter);
            bind(&mut interp);
            let want = interp.eval(&src).unwrap();
            let plan = interp.compile(&src).unwrap().plan;
            let runnable = Runnable::prepare_in_plan_order(&plan, Executor::Jit, None).unwrap();
            assert_eq!(runnable.executor(), Executor::Jit, "{src} on {dtype}");
            for threads in [1, 4] {
                let mut jit = Session::with_executor(Executor::Jit);
                jit.options_mut().threads = threads;
                bind(&mut jit);
                assert_eq!(
                    jit.eval(&src).unwrap().bytes(),
                    want.bytes(),
                    "{src} on {dtype}, {threads} threads"
                );
            }
        }
    }
}

/// A prepared kernel (`slc::Kernel`, the one kernel type of every surface) of a store with
/// symbolic dims, called on several shapes, and one over fixed dims called again: each call
/// gives the interpreter's stored array (the specialization policy may compile per shape).
#[test]
fn prepared_store_kernels_serve_every_shape() {
    use slc::Kernel;
    use slc::types::SymTensorType;
    let sym = |s: &str| -> SymTensorType { s.parse().unwrap() };
    let sigs = [("a", sym("f32[N, 4]")), ("i", sym("i64[K]")), ("v", sym("f32[4]"))];
    let programs = [
        "a[i] = v",
        "a[1:, ::2] = 5",
        "a[i, ::-1] += v",
        "scatter_elements(a, [[0, -1, 0, 0]], [[1, 2, 3, 4]])",
    ];
    for src in programs {
        let kernel = Kernel::prepare(src, &sigs).unwrap_or_else(|e| panic!("{}", e.render(src)));
        for n in [1usize, 3, 5, 3, 40] {
            let a = f32s(&[n, 4], &(0..4 * n).map(|x| x as f32).collect::<Vec<_>>());
            let i = ints(DType::I64, &[2], &[(n as i64) - 1, 0]);
            let v = f32s(&[4], &[-1.0, -2.0, -3.0, -4.0]);
            let got = kernel.run(&[&a, &i, &v]);
            let mut s = Session::with_executor(Executor::Interpreter);
            s.bind("a", a.clone());
            s.bind("i", i.clone());
            s.bind("v", v.clone());
            let want = s.eval(src);
            match (want, got) {
                (Ok(x), Ok(y)) => assert_eq!(x.bytes(), y.bytes(), "{src} at N={n}"),
                (Err(x), Err(y)) => assert_eq!(x.diagnostic().code, y.diagnostic().code, "{src} at N={n}"),
                (x, y) => panic!("{src} at N={n}: interpreter {x:?}, kernel {y:?}"),
            }
        }
    }
}
