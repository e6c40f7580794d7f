//! `Session::eval` keeps the kernels it builds by program text: a repeated eval must give what a
//! fresh session gives whenever the bindings it depends on change (types, parameter values,
//! views, options), and must not compile again when they do not.

use slc::embed::TensorView;
use slc::{DType, Executor, Session, Tensor};

fn ints(dtype: DType, shape: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_i64s(dtype, shape, values).unwrap()
}

fn iota(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    ints(DType::I32, shape, &(0..n as i64).collect::<Vec<_>>())
}

/// The result of `src` in a session that has evaluated nothing before.
fn fresh(session: &Session<'_>, src: &str) -> Tensor {
    let mut s = Session::new();
    for name in ["a", "b", "i"] {
        if let Some(view) = session.get_view(name) {
            s.bind(name, view.to_tensor().unwrap());
        }
    }
    s.eval(src).unwrap()
}

fn same(a: &Tensor, b: &Tensor) -> bool {
    a.dtype() == b.dtype() && a.shape() == b.shape() && a.bytes() == b.bytes()
}

#[test]
fn a_repeated_eval_compiles_once() {
    let mut s = Session::new();
    s.bind("a", iota(&[4, 5]));
    let first = s.eval("a[1:3, ::-1]").unwrap();
    let second = s.eval("a[1:3, ::-1]").unwrap();
    assert!(same(&first, &second));
    assert_eq!(s.cached_kernels(), 1);
    // Another text with the same plan shares the machine code.
    let spelled = s.eval("a[1:-1, -1::-1]").unwrap();
    assert!(same(&first, &spelled));
    assert_eq!(s.cached_kernels(), 1);
}

#[test]
fn rebinding_to_another_type_builds_another_kernel() {
    let mut s = Session::new();
    s.bind("a", iota(&[4, 5]));
    s.eval("a[::2, 1]").unwrap();
    for shape in [&[6, 3][..], &[2, 2], &[4, 5]] {
        s.bind("a", iota(shape));
        let got = s.eval("a[::2, 1]").unwrap();
        assert!(same(&got, &fresh(&s, "a[::2, 1]")), "shape {shape:?}");
    }
    // A different dtype of the same shape is another kernel too.
    s.bind("a", ints(DType::I64, &[4, 5], &(0..20).collect::<Vec<_>>()));
    assert_eq!(s.eval("a[::2, 1]").unwrap().dtype(), DType::I64);
    // And an input the text needs but that is no longer bound is an error, not a stale kernel.
    let mut t = Session::new();
    t.bind("b", iota(&[3]));
    assert!(t.eval("a[0]").is_err());
}

#[test]
fn new_parameter_values_are_not_served_a_stale_kernel() {
    let src = "strided_slice(a, b, [4], [1], begin_mask=[0], end_mask=[0])";
    let mut s = Session::new();
    s.bind("a", iota(&[6]));
    for begin in [1, 3, -2, 1] {
        s.bind("b", ints(DType::I64, &[1], &[begin]));
        let got = s.eval(src).unwrap();
        assert!(same(&got, &fresh(&s, src)), "begin {begin}");
    }
    // Parameters read from a view are compared by value too.
    let begins = [2i64, 0];
    for begin in &begins {
        let mut v = Session::new();
        v.bind("a", iota(&[6]));
        v.bind_view("b", TensorView::from_slice(&[1], std::slice::from_ref(begin)).unwrap());
        assert_eq!(v.eval(src).unwrap().shape(), &[(4 - begin) as usize]);
    }
}

#[test]
fn views_are_read_afresh_on_every_eval() {
    let one: Vec<f32> = (0..12).map(|x| x as f32).collect();
    let two: Vec<f32> = (0..12).map(|x| 100.0 - x as f32).collect();
    let mut s = Session::new();
    s.bind_view("a", TensorView::from_slice(&[3, 4], &one).unwrap());
    let before = s.eval("a[::-1, 2]").unwrap();
    s.bind_view("a", TensorView::from_slice(&[3, 4], &two).unwrap());
    let after = s.eval("a[::-1, 2]").unwrap();
    assert!(!same(&before, &after));
    assert!(same(&after, &fresh(&s, "a[::-1, 2]")));
    assert_eq!(s.cached_kernels(), 1);
}

#[test]
fn changed_options_apply_to_cached_texts() {
    let mut s = Session::new();
    s.bind("a", iota(&[4]));
    s.bind("i", ints(DType::I64, &[1], &[7]));
    assert!(s.eval("a[i]").unwrap_err().render("a[i]").contains("index 7 is out of bounds"));
    s.options_mut().executor = Executor::Interpreter;
    assert!(s.eval("a[i]").unwrap_err().render("a[i]").contains("index 7 is out of bounds"));
    s.bind("i", ints(DType::I64, &[2], &[-1, 0]));
    let got = s.eval("a[i]").unwrap();
    assert_eq!((got.int_at(0), got.int_at(1)), (Some(3), Some(0)));
    s.options_mut().max_output_bytes = Some(4);
    assert_eq!(s.eval("a[i]").unwrap_err().diagnostic().code, "E0207");
}

/// A value out of range at run time points at the index expression it came through, on every
/// way of running a program: the check carries its origin in the plan.
#[test]
fn run_time_index_errors_point_at_the_index_expression() {
    let src = "let v = a[::-1]\nv[idx][1:]";
    let at = src.find("idx").unwrap();
    let a = iota(&[4, 3]);
    let idx = ints(DType::I32, &[2], &[7, 0]);
    let label_start = |e: slc::Error| {
        let d = e.diagnostic();
        assert!(d.message.contains("index 7 is out of bounds for axis 0 with size 4"), "{}", d.message);
        d.span().map(|s| s.start)
    };
    for backend in [Executor::Jit, Executor::Interpreter] {
        let mut s = Session::with_executor(backend);
        s.bind("a", a.clone());
        s.bind("idx", idx.clone());
        assert_eq!(label_start(s.eval(src).unwrap_err()), Some(at), "{backend:?}");
    }
    let sigs = [("a", "i32[4,3]".parse().unwrap()), ("idx", "i32[2]".parse().unwrap())];
    let kernel = slc::embed::Kernel::prepare(src, &sigs).unwrap();
    assert_eq!(label_start(kernel.run(&[&a, &idx]).unwrap_err()), Some(at));
}

/// A text evaluated over many shapes: the first gets a specialized kernel, the others share one
/// shape-generic kernel, and every result is the interpreter's for that shape.
#[test]
fn a_thousand_shapes_compile_twice() {
    let mut s = Session::new();
    let mut oracle = Session::with_executor(Executor::Interpreter);
    let programs = [
        "a[1:, ::-1]",
        "gather(a[::2, 1:-1], i, axis=0, mode=clamp)",
        "slice(a, b, [100, 100])",
        "a[..., None, :3]",
    ];
    for (k, src) in programs.iter().enumerate() {
        let before = s.compiles();
        for n in 0..1000usize {
            let (rows, cols) = (n % 37, n / 37 + (n % 5));
            let a = iota(&[rows, cols]);
            let i = ints(DType::I64, &[n % 3], &[(n % 3) as i64 - 1, 0, 7][..n % 3]);
            let b = ints(DType::I64, &[2], &[(n % 7) as i64 - 3, (n % 4) as i64]);
            for (name, t) in [("a", &a), ("i", &i), ("b", &b)] {
                s.bind(name, t.clone());
                oracle.bind(name, t.clone());
            }
            match (s.eval(src), oracle.eval(src)) {
                (Ok(got), Ok(want)) => assert!(same(&got, &want), "{src} on {rows}x{cols}"),
                (Err(got), Err(want)) => {
                    assert_eq!(got.to_string(), want.to_string(), "{src} on {rows}x{cols}")
                }
                (got, want) => panic!("{src} on {rows}x{cols}: {got:?} vs the interpreter's {want:?}"),
            }
        }
        // One specialized kernel and one generic (none for a first shape whose output is
        // empty, or whose plan an earlier text compiled).
        let compiled = s.compiles() - before;
        assert!((1..=2).contains(&compiled), "program {k} ({src}) compiled {compiled} times");
    }
}

/// Errors read the same once a text runs on its generic kernel: they come from the specialized
/// pipeline, with their codes and spans.
#[test]
fn errors_after_going_generic_are_the_specialized_ones() {
    let mut s = Session::new();
    for n in [8, 9, 10, 3] {
        s.bind("a", iota(&[n]));
        let result = s.eval("a[5]");
        match n {
            3 => assert_eq!(result.unwrap_err().diagnostic().code, "E0102"),
            _ => assert_eq!(result.unwrap().int_at(0), Some(5)),
        }
    }
}
