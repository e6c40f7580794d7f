//! A stored tensor of another dtype than its target's (docs/semantics.md, Stores: "A value of
//! another dtype"): cast per call as NumPy 2's `astype` casts it (NumPy's answers written out),
//! on every CPU path; the `+=`/`*=` NumPy refuses or rounds in a wider dtype refused (E0134); a
//! float with no integer value an error before anything is written (E0211); the derived input
//! printed and parsed back, and verification's refusals. python/tests/test_numpy_parity.py
//! checks every pair of dtypes against NumPy itself.

use slc::exec::Executor;
use slc::plan::{parse, verify};
use slc::types::SymTensorType;
use slc::{DType, Kernel, Session, Tensor};

fn ints(dtype: DType, shape: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_i64s(dtype, shape, values).unwrap()
}

fn f64s(shape: &[usize], values: &[f64]) -> Tensor {
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    Tensor::from_bytes(DType::F64, shape, &bytes).unwrap()
}

fn values_i64(t: &Tensor) -> Vec<i64> {
    let bit = |i: usize| (t.dtype() == DType::Bool).then(|| i128::from(t.bytes()[i]));
    (0..t.numel()).map(|i| t.int_at(i).or_else(|| bit(i)).unwrap() as i64).collect()
}

/// `a: i32[2, 3]` = 0..6, `u: u8[3]` = 0..3, `m: bool[3]`, `b: f64[3]`, `w: i32[3]`,
/// `k: i8[3]`, `n: f64[2]` with a NaN, `big: f64[3]` with 1e10.
fn session(executor: Executor) -> Session<'static> {
    let mut s = Session::with_executor(executor);
    s.bind("a", ints(DType::I32, &[2, 3], &[0, 1, 2, 3, 4, 5]));
    s.bind("u", ints(DType::U8, &[3], &[0, 1, 2]));
    s.bind("m", Tensor::from_bytes(DType::Bool, &[3], &[0, 0, 0]).unwrap());
    s.bind("b", f64s(&[3], &[1.7, -2.5, 300.9]));
    s.bind("w", ints(DType::I32, &[3], &[300, -1, 128]));
    s.bind("k", ints(DType::I8, &[3], &[-1, 2, -3]));
    s.bind("n", f64s(&[3], &[0.0, f64::NAN, -0.0]));
    s.bind("big", f64s(&[3], &[1e10, 2.0, 3.0]));
    s
}

const EXECUTORS: [Executor; 2] = [Executor::Interpreter, Executor::Jit];

#[test]
fn values_are_cast_as_numpy_casts_them() {
    // (program, NumPy 2.4's stored array)
    let cases: &[(&str, &[i64])] = &[
        // Floats truncate toward zero.
        ("a[0] = b", &[1, -2, 300, 3, 4, 5]),
        ("a[:, ::-1] = b", &[300, -2, 1, 300, -2, 1]),
        ("a[1, [2, 0]] = b[:2]", &[0, 1, 2, -2, 4, 1]),
        ("a[0, 1:] = b[::-2]", &[0, 300, 1, 3, 4, 5]),
        // Integers wrap to the target's width.
        ("u[:] = w", &[44, 255, 128]),
        ("u[[2, 2, 0]] = w", &[128, 1, 255]),
        // NaN is not zero: True.
        ("m[:] = n", &[0, 1, 0]),
        // i32 += i8: NumPy computes in i32, the value cast first; duplicates add once.
        ("a[[1, 1, 0]] += k", &[-1, 3, -1, 2, 6, 2]),
        ("a[0] *= k", &[0, 2, -6, 3, 4, 5]),
        // One element: NumPy's scalar path computes u8 + i8 in i16 and casts back (wraps).
        ("u[1] += k[0]", &[0, 0, 2]),
        ("u[0] = w[1]", &[255, 1, 2]),
    ];
    for executor in EXECUTORS {
        let s = session(executor);
        for (src, want) in cases {
            let got = s.eval(src).unwrap_or_else(|e| panic!("{}", e.render(src)));
            assert_eq!(values_i64(&got), *want, "{src} on {executor:?}");
        }
    }
    // Floats round once to the nearest: f64 to f16, to complex64 (the imaginary part 0).
    let mut s = session(Executor::Jit);
    s.bind("h", Tensor::from_bytes(DType::F16, &[1], &[0, 0]).unwrap());
    s.bind("d", f64s(&[1], &[1.0004882821813226]));
    assert_eq!(s.eval("h[:] = d").unwrap().bytes(), &0x3c01u16.to_le_bytes(), "rounded once");
    s.bind("z", Tensor::from_bytes(DType::C64, &[1], &[0; 8]).unwrap());
    let want: Vec<u8> = [2.5f32, 0.0].iter().flat_map(|v| v.to_le_bytes()).collect();
    s.bind("f", f64s(&[1], &[2.5]));
    assert_eq!(s.eval("z[:] = f").unwrap().bytes(), want.as_slice());
}

#[test]
fn a_float_with_no_integer_value_stores_nothing() {
    for executor in EXECUTORS {
        let s = session(executor);
        for src in ["a[1] = big", "u[:] = b", "a[0] = n[::-1]", "a[0, 1:] += big[:2]"] {
            let Err(e) = s.eval(src) else {
                // `+=` of a float into integers is refused before it runs.
                panic!("{src} ran on {executor:?}");
            };
            let code = e.diagnostic().code;
            assert!(code == "E0211" || (src.contains("+=") && code == "E0134"), "{src}: {code}");
        }
        assert_eq!(values_i64(&s.eval("a").unwrap()), [0, 1, 2, 3, 4, 5], "nothing written");
    }
    let e = session(Executor::Jit).eval("a[1] = big").unwrap_err();
    let text = e.render("a[1] = big");
    assert!(text.contains("`big`") && text.contains("10000000000") && text.contains("i32"), "{text}");
    // slc casts the whole input, so an element the store does not read fails it too (NumPy
    // casts only what it stores: a documented difference, a refusal, never another value).
    let e = session(Executor::Jit).eval("u[0] = b[0]").unwrap_err();
    assert_eq!(e.diagnostic().code, "E0211");
    assert!(e.render("u[0] = b[0]").contains("element 1, the f64 -2.5, has no u8 value"));
}

#[test]
fn combining_stores_numpy_computes_in_another_dtype_are_refused() {
    let mut s = session(Executor::Jit);
    s.bind("f", Tensor::from_bytes(DType::F32, &[3], &[0; 12]).unwrap());
    s.bind("c", Tensor::from_bytes(DType::C64, &[3], &[0; 24]).unwrap());
    s.bind("h16", Tensor::from_bytes(DType::F16, &[3], &[0; 6]).unwrap());
    // (program, refused): NumPy raises UFuncTypeError, or computes in a wider dtype and
    // rounds once, where casting first would round twice.
    let cases = [
        ("u[:] += k", true),    // i8 + u8 is i16: not cast back to u8 (same_kind)
        ("a[0] += b", true),    // f64 into i32
        ("m[:] += k", true),    // i8 into bool
        ("f[:] += b", true),    // f32 + f64 is f64, rounded once
        ("f[:] *= a[0]", true), // f32 * i32 is f64
        ("f[:] += c", true),    // complex into real
        ("a[0] += u", false),   // u8 into i32: safe
        ("f[:] += h16", false), // f16 into f32: safe
        ("c[:] *= f", false),   // f32 into c64: safe
        ("a[0] += k", false),   // i8 into i32
        ("f[:] += m", false),   // bool into anything
    ];
    for (src, refused) in cases {
        match s.eval(src) {
            Err(e) if refused => assert_eq!(e.diagnostic().code, "E0134", "{src}"),
            Ok(_) if !refused => {}
            Err(e) => panic!("{}", e.render(src)),
            Ok(_) => panic!("{src} ran"),
        }
    }
}

/// The one kernel type, over symbolic dims, called on several shapes (the specialization
/// policy compiles a repeated one): each call gives the interpreter's stored array.
#[test]
fn prepared_kernels_cast_on_every_call() {
    let sym = |s: &str| -> SymTensorType { s.parse().unwrap() };
    let sigs = [("a", sym("i16[N, 3]")), ("i", sym("i64[K]")), ("v", sym("f64[3]"))];
    for src in ["a[i] = v", "a[:, ::-1] = v", "a[i, 1:] = v[:2]"] {
        let kernel = Kernel::prepare(src, &sigs).unwrap_or_else(|e| panic!("{}", e.render(src)));
        for (n, big) in [(1usize, false), (3, false), (3, false), (3, true), (5, false)] {
            let a = ints(DType::I16, &[n, 3], &(0..3 * n as i64).collect::<Vec<_>>());
            let i = ints(DType::I64, &[2], &[n as i64 - 1, 0]);
            let v = f64s(&[3], &[-1.5, if big { 40000.0 } else { 2.9 }, 7.0]);
            let got = kernel.run(&[&a, &i, &v]);
            let mut s = Session::with_executor(Executor::Interpreter);
            s.bind("a", a.clone());
            s.bind("i", i.clone());
            s.bind("v", v.clone());
            match (s.eval(src), got) {
                (Ok(x), Ok(y)) => assert_eq!(x.bytes(), y.bytes(), "{src} at N={n}"),
                (Err(x), Err(y)) => {
                    assert_eq!((x.diagnostic().code, y.diagnostic().code), ("E0211", "E0211"), "{src}")
                }
                (x, y) => panic!("{src} at N={n}: interpreter {x:?}, kernel {y:?}"),
            }
        }
    }
}

#[test]
fn the_cast_is_a_derived_input_of_the_plan_printed_and_parsed_back() {
    let types: slc::sema::InputTypes = [("a", "i32[2, 3]"), ("b", "f64[3]")]
        .into_iter()
        .map(|(n, t)| (n.to_string(), t.parse::<slc::types::TensorType>().unwrap()))
        .collect();
    let c = slc::compile_with_values("a[0] = b", &types, &Default::default()).unwrap();
    let text = c.plan.to_string();
    assert!(text.contains("b_as_i32: i32[3] = cast(b)"), "{text}");
    let parsed = parse::parse(&text).unwrap_or_else(|e| panic!("{e:?}\n{text}"));
    assert_eq!(parsed.to_string(), text);
    verify(parsed).unwrap();
    // A cast to the same dtype, or of another shape, is no plan.
    for (from, to) in [("b_as_i32: i32[3]", "b_as_i32: f64[3]"), ("b_as_i32: i32[3]", "b_as_i32: i32[4]")] {
        let bad = parse::parse(&text.replace(from, to)).unwrap();
        let e = verify(bad).unwrap_err().to_string();
        assert!(e.contains("cast of `b`") || e.contains("dtype"), "{to}: {e}");
    }
}

#[path = "support/command.rs"]
mod command;

/// The command line casts as the library does, and the targets whose callers would have to
/// cast (AOT objects, DirectML graphs) refuse such a store with a message, never an object
/// that reads the value's bytes as the target's.
#[test]
fn the_command_line_casts_and_the_compile_targets_refuse() {
    use command::{slc, stderr, stdout};
    let dir = command::scratch("store_casts", "cli");
    let write = |name: &str, t: &Tensor| {
        let path = dir.join(name);
        slc_runtime::write_npy(&path, t).unwrap();
        format!("{}={}", &name[..1], path.display())
    };
    let (a, b) = (
        write("a.npy", &ints(DType::I32, &[2, 3], &[0, 1, 2, 3, 4, 5])),
        write("b.npy", &f64s(&[3], &[1.7, -2.5, 300.9])),
    );
    let o = slc(&["eval", "a[0] = b", "-i", &a, "-i", &b]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stdout(&o).contains("[  1  -2 300]"), "{}", stdout(&o));
    // A `.npy` file's 0-d int64 is a NumPy integer: cast (`u[0] = np.load(k)` is 44), and
    // `u[:] += np.load(k)` refused as NumPy refuses it.
    let (u, k) =
        (write("u.npy", &ints(DType::U8, &[3], &[0, 1, 2])), write("k.npy", &Tensor::scalar_i64(300)));
    let o = slc(&["eval", "u[0] = k", "-i", &u, "-i", &k]);
    assert!(stdout(&o).contains("[44  1  2]"), "{}{}", stdout(&o), stderr(&o));
    let o = slc(&["eval", "u[:] += k", "-i", &u, "-i", &k]);
    assert!(o.status.code() == Some(2) && stderr(&o).contains("E0134"), "{}", stderr(&o));
    let out = dir.join("k.out");
    for target in ["cpu", "dml"] {
        let o = slc(&[
            "compile",
            "a[0] = b",
            "--target",
            target,
            "-i",
            &a,
            "-i",
            &b,
            "-o",
            out.to_str().unwrap(),
        ]);
        assert!(!o.status.success() && !out.exists(), "{target}");
        assert!(stderr(&o).contains("cast"), "{target}: {}", stderr(&o));
    }
}

/// A 0-d int64 is a NumPy integer, cast as any tensor of another dtype ("strong", NEP 50); one
/// marked as a Python `int` is converted by its value ("weak"), as NumPy converts `x[0] = 300`
/// (OverflowError into u8) where it casts `x[0] = np.array(300)` (44). NumPy 2.4's answers.
#[test]
fn a_python_int_converts_by_its_value_and_a_numpy_integer_casts() {
    let sym = |s: &str| -> SymTensorType { s.parse().unwrap() };
    let sigs = [("u", sym("u8[3]")), ("a", sym("i32[2]")), ("k", sym("i64[]"))];
    let u = ints(DType::U8, &[3], &[0, 1, 2]);
    let a = ints(DType::I32, &[2], &[0, 1]);
    // (program, k, as a NumPy integer, as a Python int); None: refused (a Python int out of
    // the target's range E0135, NumPy's OverflowError; a NumPy integer's `+=` E0134).
    type Stored = Option<&'static [i64]>;
    let cases: &[(&str, i64, Stored, Stored)] = &[
        ("u[0] = k", 300, Some(&[44, 1, 2]), None),
        ("u[0] = k", 7, Some(&[7, 1, 2]), Some(&[7, 1, 2])),
        ("u[:] += k", 5, None, Some(&[5, 6, 7])),
        ("a[:] += k", (1 << 40) + 3, Some(&[3, 4]), None),
        ("a[0] += k", (1 << 40) + 3, None, None),
        ("a[0] += k", 3, None, Some(&[3, 1])),
    ];
    for &(src, k, numpy, python) in cases {
        for (python_int, want) in [(false, numpy), (true, python)] {
            let mut values = slc::sema::InputValues::new();
            match python_int {
                true => values.insert_python_int("k", k),
                false => drop(values.insert("k".into(), Tensor::scalar_i64(k))),
            }
            let kernel = Kernel::prepare_with_values(src, &sigs, &values, &Default::default());
            let got = kernel.and_then(|kernel| kernel.run(&[&u, &a, &Tensor::scalar_i64(k)]));
            let what = format!("{src} with k = {k}, a Python int: {python_int}");
            match (got, want) {
                (Ok(t), Some(want)) => assert_eq!(values_i64(&t), want, "{what}"),
                (Err(e), None) => {
                    let code = if python_int { "E0135" } else { "E0134" };
                    assert_eq!(e.diagnostic().code, code, "{what}");
                }
                (got, _) => panic!("{what}: {got:?}"),
            }
        }
    }
    // A generic program takes a NumPy integer's value per call and casts it; a Python int's
    // value it would have to convert by its value, which it does not know: refused.
    let generic = [("u", sym("u8[N]")), ("k", sym("i64[]"))];
    let kernel = Kernel::prepare("u[0] = k", &generic).unwrap();
    assert_eq!(values_i64(&kernel.run(&[&u, &Tensor::scalar_i64(300)]).unwrap()), [44, 1, 2]);
    let mut marked = slc::sema::InputValues::new();
    marked.mark_python_ints([&"k".to_string()]);
    let e = Kernel::prepare_with_values("u[0] = k", &generic, &marked, &Default::default()).unwrap_err();
    assert_eq!(e.diagnostic().code, "E0134");
    assert!(e.render("u[0] = k").contains("Python int"), "{}", e.render("u[0] = k"));
}

/// NumPy's setitem converts a NumPy integer *scalar* by its value where `=` goes through basic
/// subscripts into a signed integer target (`i8[0] = np.int16(300)` raises OverflowError), and
/// casts it everywhere else, as it casts a 0-d array (index arrays and masks, unsigned, bool and
/// float targets, `+=`). The plan casts in every case; the checker names the inputs the Python
/// package must check per call (`InputsRead::setitem_scalars`), with the target's dtype.
#[test]
fn the_inputs_numpy_converts_by_value_as_scalars_are_named() {
    let sym = |s: &str| -> SymTensorType { s.parse().unwrap() };
    let sigs = [
        ("a", sym("i8[2, 3]")),
        ("u", sym("u8[3]")),
        ("f", sym("f32[3]")),
        ("v", sym("i16[]")),
        ("s", sym("i8[]")),
        ("j", sym("i64[]")),
        ("i", sym("i64[1]")),
        ("m", sym("bool[3]")),
    ];
    let named = |src: &str| -> Vec<(String, DType)> {
        let kernel = Kernel::prepare(src, &sigs).unwrap_or_else(|e| panic!("{src}: {}", e.render(src)));
        kernel.program().read.setitem_scalars.clone().into_iter().collect()
    };
    let v_as_i8 = vec![("v".to_string(), DType::I8)];
    for src in ["a[0] = v", "a[0, 1] = v", "a[...] = v", "a[:, 1:] = v", "a[None, j] = v", "a[1:][0] = v"] {
        assert_eq!(named(src), v_as_i8, "{src}");
    }
    // Index arrays and masks (NumPy's fancy setitem casts), another target dtype, `+=`, a value
    // of the target's dtype, and a value that is not a 0-d input.
    for src in
        ["a[0, i] = v", "a[0, m] = v", "u[0] = v", "f[0] = v", "a[:] += v", "a[0] = s", "a[0] = a[1, 0]"]
    {
        assert_eq!(named(src), vec![], "{src}");
    }
}

/// A Python `int` from 2^63 to 2^64 − 1 (the Python package binds it as a 0-d u64 marked as a
/// Python `int`) converts by its value as NumPy converts it: a u64 target holds it, a float
/// one rounds it, a bool one takes its truth, and any other integer dtype refuses it (E0135,
/// NumPy's OverflowError).
#[test]
fn a_python_int_past_i64_converts_by_its_value() {
    let sym = |s: &str| -> SymTensorType { s.parse().unwrap() };
    let big = u64::MAX - 4;
    let k = Tensor::from_bytes(DType::U64, &[], &big.to_le_bytes()).unwrap();
    let mut values = slc::sema::InputValues::new();
    values.insert("k".into(), k.clone());
    values.mark_python_ints([&"k".to_string()]);
    let run = |target: &str, dtype: DType| {
        let sigs = [("a", sym(target)), ("k", sym("u64[]"))];
        let a = Tensor::zeros(dtype, &[2]).unwrap();
        Kernel::prepare_with_values("a[1] = k", &sigs, &values, &Default::default())
            .and_then(|kernel| kernel.run(&[&a, &k]))
    };
    assert_eq!(run("u64[2]", DType::U64).unwrap().bytes()[8..], big.to_le_bytes());
    assert_eq!(run("f64[2]", DType::F64).unwrap().bytes()[8..], (big as f64).to_le_bytes());
    assert_eq!(run("bool[2]", DType::Bool).unwrap().bytes(), [0, 1]);
    for (target, dtype) in [("i64[2]", DType::I64), ("u32[2]", DType::U32)] {
        assert_eq!(run(target, dtype).unwrap_err().diagnostic().code, "E0135", "{target}");
    }
    // A bool element's `*=` is NumPy's scalar path, which computes in int64: OverflowError.
    let sigs = [("a", sym("bool[2]")), ("k", sym("u64[]"))];
    let e = Kernel::prepare_with_values("a[1] *= k", &sigs, &values, &Default::default()).unwrap_err();
    assert_eq!(e.diagnostic().code, "E0135");
}
