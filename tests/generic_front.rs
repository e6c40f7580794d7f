//! The front half on symbolic input types (docs/design/shape-generic.md, steps 1–3 and 7):
//! checking over symbolic dims and run-time scalars, and lowering to a generic plan, held
//! against the concrete pipeline as the oracle. A random program over random symbolic types is
//! compiled once generically; for random bindings (empty and unit dims, dims near `MAX_DIM`,
//! bounds and scalar values near ±2^63) the concrete pipeline compiles the same program with the
//! bound types (and the scalars' values written into the text). Where it succeeds, binding the
//! generic plan succeeds, gives the same plan, and the interpreter gives the same output on the
//! same data; where it fails, binding (or verifying the bound plan) fails too.

use proptest::prelude::*;
use slc::backend::interp;
use slc::fuzz::{Draw, Rng, fill};
use slc::pipeline::compile_generic;
use slc::plan::{self, ShapeMismatch};
use slc::sema::{InputTypes, SymInputTypes};
use slc::types::sym::{Env, MAX_DIM, Sym, SymExpr};
use slc::types::{SymTensorType, TensorType};
use slc::{DType, Error, Tensor};

fn sym_types(decls: &[(&str, &str)]) -> SymInputTypes {
    decls.iter().map(|(n, t)| (n.to_string(), SymTensorType::parse_for(t, n).unwrap())).collect()
}

fn code(e: &Error) -> String {
    e.diagnostic().code.to_string()
}

/// The checked program's result type for `src` over `decls`.
fn result_type(src: &str, decls: &[(&str, &str)]) -> String {
    let compiled = compile_generic(src, &sym_types(decls)).unwrap_or_else(|e| panic!("{}", e.render(src)));
    compiled.checked.ty.to_string()
}

/// The error code `src` fails with over `decls`.
fn error(src: &str, decls: &[(&str, &str)]) -> (String, String) {
    let e = compile_generic(src, &sym_types(decls)).expect_err(src);
    (code(&e), e.to_string())
}

#[test]
fn output_types_are_expressions_in_the_symbols() {
    let a = [("a", "f32[N, M]")];
    assert_eq!(result_type("a[1:]", &a), "f32[max(0, N-1), M]");
    assert_eq!(result_type("a[3::2]", &a), "f32[max(0, N//2-1), M]");
    assert_eq!(result_type("a[:, ::-1]", &a), "f32[N, M]");
    assert_eq!(result_type("a[:2, newaxis, 0]", &a), "f32[min(2, N), 1]");
    assert_eq!(result_type("a[..., 1:][1:]", &a), "f32[max(0, N-1), max(0, M-1)]");
    // Equal to max(0, M-2), which the normal form does not find.
    assert_eq!(
        result_type("slice(a, [1], [-1], axes=[1])", &a),
        "f32[N, max(0, min(M, max(0, M-1))-min(1, M))]"
    );
    assert_eq!(result_type("strided_slice(a, [0, 1], [0, 0], [1, 2], end_mask=[1, 1])", &a), "f32[N, M//2]");
    assert_eq!(result_type("slice1(a, [0, 1], [2, 2], [1, -1])", &a), "f32[2, 2]");
    let g = [("a", "f32[N, M]"), ("i", "i64[K, 2]")];
    assert_eq!(result_type("gather(a, i, axis=1)", &g), "f32[N, K, 2]");
    assert_eq!(result_type("let x = a[1:]\nx[:, :3]", &a), "f32[max(0, N-1), min(3, M)]");
    // `?` dims are named from the input and the axis.
    assert_eq!(result_type("a[1:]", &[("a", "f32[?, 3]")]), "f32[max(0, _a0-1), 3]");
}

#[test]
fn run_time_scalars_are_slice_bounds() {
    let a = [("a", "f32[N, M]"), ("k", "i64[]"), ("b", "i64[2]")];
    // NumPy's clamping of a bound known only per call, in the symbols.
    assert_eq!(
        result_type("a[:k]", &a),
        "f32[max(0, (max(0, N+k[()]) if k[()] <= -1 else min(N, k[()]))), M]"
    );
    // Huge constant bounds clamp to ±(MAX_DIM+1): the same slice of every axis.
    assert_eq!(result_type("a[-9223372036854775808:9223372036854775807]", &a), "f32[N, M]");
    let t = result_type("a[k:k+3]", &a);
    assert!(t.contains("k[()]") && t.ends_with(", M]"), "{t}");
    // A 0-d scalar as an index picks one element, per call.
    assert_eq!(result_type("a[::2][k]", &a), "f32[M]");
    let t = result_type("strided_slice(a, b, [0, 0], end_mask=[1, 1])", &a);
    assert!(t.contains("b[0]") && t.contains("b[1]"), "{t}");
    let t = result_type("slice(a, b, [5, 5])", &a);
    assert!(t.contains("b[0]") && t.contains("b[1]"), "{t}");
}

#[test]
fn undecided_checks_become_requirements_with_the_diagnostics_message() {
    let a = [("a", "f32[N, M]")];
    let plan = compile_generic("a[5]", &sym_types(&a)).unwrap().plan;
    let messages: Vec<&str> = plan.requires.iter().map(|r| r.message.as_str()).collect();
    assert!(messages.contains(&"index 5 is out of bounds for axis 0 with size N"), "{messages:?}");
    assert!(matches!(
        plan.bind(&Env::new().dim("N", 3).dim("M", 2)),
        Err(ShapeMismatch::Failed { message, .. }) if message.contains("index 5")
    ));
    assert!(plan.bind(&Env::new().dim("N", 6).dim("M", 2)).is_ok());
    // Decided ones are not: proven true vanishes, proven false is today's diagnostic.
    let plan = compile_generic("a[-1:][0]", &sym_types(&a)).unwrap().plan;
    // `-min(1, N) <= 0` holds for every N; `0 < min(1, N)` does not.
    let index: Vec<String> = plan
        .requires
        .iter()
        .filter(|r| r.message.starts_with("index 0"))
        .map(|r| r.cond.to_string())
        .collect();
    assert_eq!(index, ["1 <= min(1, N)"]);
    assert_eq!(error("a[:, :][0, 0, 0]", &a).0, "E0103");
    let g = [("a", "f32[N, 4]"), ("i", "i64[K]")];
    let plan = compile_generic("gather(a, i, axis=1, mode=clamp)", &sym_types(&g)).unwrap().plan;
    assert!(!plan.requires.iter().any(|r| r.message.contains("empty axis")), "axis 1 has 4 elements");
    let plan = compile_generic("gather(a, i, axis=0, mode=clamp)", &sym_types(&g)).unwrap().plan;
    let empty = plan.requires.iter().find(|r| r.message.contains("empty axis")).expect("a requirement");
    assert_eq!(empty.cond.to_string(), "min(1, K) <= N");
    // Batch dims must agree: N == K per call.
    let plan = compile_generic("gather(a, i, axis=1, batch_dims=1)", &sym_types(&g)).unwrap().plan;
    assert!(plan.requires.iter().any(|r| r.message.contains("must match")));
    // A concrete constant index against a concrete dim is decided, as today.
    assert_eq!(error("a[:, 4]", &[("a", "f32[N, 4]")]).0, "E0102");
}

#[test]
fn index_arrays_gathers_and_shapes_are_generic() {
    let a = [
        ("a", "f32[N, M]"),
        ("i", "i64[K]"),
        ("i2", "i64[J, 1]"),
        ("i3", "i64[J]"),
        ("j", "i64[K, 1]"),
        ("k", "i64[]"),
        ("s", "i64[]"),
        ("e", "i64[]"),
    ];
    assert_eq!(result_type("a[i]", &a), "f32[K, M]");
    assert_eq!(result_type("a[[0, 1]]", &a), "f32[2, M]");
    assert_eq!(result_type("a[:, i]", &a), "f32[N, K]");
    // NumPy's placement: separated arrays put the broadcast dims first.
    assert_eq!(result_type("a[i, newaxis, i]", &a), "f32[K, 1]");
    // Broadcasting by symbols: `(K if J == 1 else J)`-style sizes, with a requirement.
    assert_eq!(result_type("a[i2, i]", &a), "f32[J, K]");
    let compiled = compile_generic("a[i, i3]", &sym_types(&a)).unwrap();
    assert_eq!(compiled.checked.ty.to_string(), "f32[(J if K == 1 else K)]");
    let broadcast = compiled.plan.requires.iter().find(|r| r.message.contains("could not be broadcast"));
    assert!(broadcast.is_some(), "{:?}", compiled.plan.requires);
    assert!(compiled.plan.bind(&Env::new().dim("N", 3).dim("M", 2).dim("K", 4).dim("J", 4)).is_ok());
    assert!(compiled.plan.bind(&Env::new().dim("N", 3).dim("M", 2).dim("K", 4).dim("J", 1)).is_ok());
    assert!(compiled.plan.bind(&Env::new().dim("N", 3).dim("M", 2).dim("K", 1).dim("J", 0)).is_ok());
    assert!(matches!(
        compiled.plan.bind(&Env::new().dim("N", 3).dim("M", 2).dim("K", 4).dim("J", 3)),
        Err(ShapeMismatch::Failed { message, .. }) if message.contains("could not be broadcast")
    ));
    // Literal masks over symbolic dims: the dims must match the mask's, per call.
    assert_eq!(result_type("a[[True, False, True]]", &a), "f32[2, M]");
    assert_eq!(result_type("gather_elements(a, j, axis=0)", &a), "f32[K, 1]");
    assert_eq!(result_type("gather_nd(a, j)", &a), "f32[K, M]");
    assert_eq!(result_type("gather_nd(a, [[1, 0]])", &a), "f32[1]");
    // `.shape` and `.size` of symbolic dims are integers known at run time.
    assert_eq!(result_type("a[:a.shape[1]]", &a), "f32[min(M, N), M]");
    assert!(result_type("a[:, :a.size - 1]", &a).starts_with("f32[N, "));
    assert!(result_type("slice(a, a.shape, [0, 0], steps=[-1, -1])", &a).contains('N'));
    // List literals of run-time scalars are operator bounds.
    assert!(result_type("slice(a, [s], [e], axes=[0], steps=[-1])", &a).ends_with(", M]"));
    assert!(result_type("strided_slice(a, [k, 0], [e, 1], [1, 1])", &a).contains("k[()]"));
    // Each prints as plan text that parses back, and verifies.
    for src in [
        "a[i]",
        "a[i, i3]",
        "a[i2, i][::-1]",
        "a[[True, False, True]]",
        "gather_elements(a, j, axis=1, mode=wrap)",
        "gather_nd(a, j, mode=error)",
        "a[:a.shape[1]]",
        "slice(a, [s], [e], axes=[0], steps=[-1])",
    ] {
        let plan = plan::verify_generic(compile_generic(src, &sym_types(&a)).unwrap().plan).unwrap();
        let text = plan.to_string();
        let reread = plan::parse::parse_generic(&text).unwrap_or_else(|e| panic!("{src}: {e}\n{text}"));
        assert_eq!(reread.to_string(), text, "{src}");
    }
}

#[test]
fn values_the_program_needs_now_say_what_to_make_concrete() {
    let a = [("a", "f32[N, M]"), ("j", "i64[K, T]"), ("m", "bool[2]"), ("k", "i64[]")];
    // The tuple length sets gather_nd's rank: a value, not a shape.
    let (c, message) = error("gather_nd(a, j)", &a);
    assert_eq!(c, "E0129", "{message}");
    assert!(message.contains("the last dim of `j`") && message.contains("rank"), "{message}");
    // An operator parameter computed from a symbolic dim.
    let (c, message) = error("slice(a, [0], [1], axes=[a.shape[0] - 1])", &a);
    assert!(c == "E0130" || c == "E0129", "{c}: {message}");
    // Steps, axes and masks are compile-time.
    for src in [
        "a[::k]",
        "a[k // k:]",
        "slice(a, [0], [1], steps=[k])",
        "strided_slice(a, [0], [1], [1], begin_mask=k)",
    ] {
        let (c, message) = error(src, &a);
        assert!(c == "E0130" || c == "E0125", "{src}: {c} {message}");
        if c == "E0130" {
            assert!(message.contains("run-time scalar"), "{src}: {message}");
        }
    }
    let (c, message) = error("a[::k]", &a);
    assert_eq!(c, "E0130");
    assert!(message.contains("a slice step"), "{message}");
}

#[test]
fn concrete_types_give_todays_plans() {
    let types = [("a", "f32[3, 4]"), ("i", "i64[2]")];
    for src in ["a[1:, ::-1]", "a[..., 1][::2]", "gather(a, i, axis=1, mode=wrap)[1:]", "a[i]", "a[5:]"] {
        let generic = compile_generic(src, &sym_types(&types)).unwrap();
        let concrete_types: InputTypes =
            types.iter().map(|(n, t)| (n.to_string(), t.parse().unwrap())).collect();
        let concrete = slc::compile(src, &concrete_types).unwrap();
        assert_eq!(generic.plan.concrete().as_ref(), Some(concrete.plan.plan()), "{src}");
        assert_eq!(generic.checked.to_string(), concrete.checked.to_string(), "{src}");
    }
}

// ---------------------------------------------------------------------------------------------
// The property test

/// A program text in two forms: with the run-time scalars' names (for the generic pipeline) and
/// with their values written in (for the concrete one).
#[derive(Default)]
struct Text {
    generic: String,
    concrete: String,
}

impl Text {
    fn both(&mut self, s: &str) {
        self.generic += s;
        self.concrete += s;
    }
}

/// The random inputs of a case: `a`'s dims (symbols or constants), the scalars' values.
struct Case {
    text: Text,
    a_dims: Vec<SymExpr>,
    dtype: DType,
    idx_dim: SymExpr,
    /// The dims of the index tensors `jdx` (1-d, broadcast against `idx`), `ge` (of `a`'s
    /// rank, for gather_elements) and `nd` (index tuples of 1 or 2 entries, for gather_nd).
    jdx_dim: SymExpr,
    ge_dims: Vec<SymExpr>,
    nd_dims: Vec<SymExpr>,
    k: i64,
    b: Vec<i64>,
    e: Vec<i64>,
}

const SYMBOLS: &[&str] = &["N", "M", "P"];

fn scalar_value(r: &mut Rng) -> i64 {
    match r.below(12) {
        0 => *r.pick(&[i64::MIN, i64::MAX, 1 << 62, -(1 << 62), i64::MIN + 1, i64::MAX - 1]),
        _ => r.range(-7, 8),
    }
}

fn literal_bound(r: &mut Rng) -> String {
    match r.below(10) {
        0 => r
            .pick(&[
                "-9223372036854775808",
                "9223372036854775807",
                "4611686018427387904",
                "-4611686018427387904",
            ])
            .to_string(),
        _ => r.range(-7, 8).to_string(),
    }
}

/// A NumPy slice bound: omitted, a literal, or an expression in the run-time scalar `k`.
fn bound(r: &mut Rng, t: &mut Text, k: i64) {
    match r.below(6) {
        0 => {}
        1 | 2 => t.both(&literal_bound(r)),
        3 => {
            t.generic += "k";
            t.concrete += &format!("({k})");
        }
        4 => {
            let d = r.range(-3, 4);
            t.generic += &format!("k+{d}");
            t.concrete += &format!("({k})+{d}");
        }
        _ => {
            t.generic += "-k";
            t.concrete += &format!("-({k})");
        }
    }
}

fn item(r: &mut Rng, t: &mut Text, k: i64) {
    match r.below(10) {
        0..=5 => {
            bound(r, t, k);
            t.both(":");
            bound(r, t, k);
            match r.below(4) {
                0 => t.both(&format!(":{}", r.pick(&[-3i64, -2, -1, 1, 2, 3, 1 << 62, -(1 << 62)]))),
                1 => t.both(":"),
                _ => {}
            }
        }
        6 => t.both(&r.range(-3, 3).to_string()),
        7 => {
            t.generic += "k";
            t.concrete += &format!("({k})");
        }
        8 => t.both("newaxis"),
        _ => t.both("..."),
    }
}

fn subscript(r: &mut Rng, t: &mut Text, k: i64) {
    t.both("[");
    for i in 0..1 + r.below(3) {
        if i > 0 {
            t.both(", ");
        }
        item(r, t, k);
    }
    t.both("]");
}

fn list(v: &[i64]) -> String {
    format!("{v:?}")
}

fn bits(r: &mut Rng, n: usize) -> String {
    list(&(0..n).map(|_| (r.below(4) == 0) as i64).collect::<Vec<_>>())
}

fn draw(r: &mut Rng) -> Case {
    let rank = 1 + r.below(3) as usize;
    let a_dims: Vec<SymExpr> = (0..rank)
        .map(|_| match r.below(4) {
            0 => SymExpr::constant(r.range(0, 5)),
            _ => SymExpr::dim(SYMBOLS[r.below(SYMBOLS.len() as u64) as usize]),
        })
        .collect();
    let dtype = *r.pick(&[DType::F32, DType::I16, DType::U8]);
    let idx_dim = if r.below(2) == 0 { SymExpr::dim("K") } else { SymExpr::constant(r.range(0, 4)) };
    let k = scalar_value(r);
    let n = 1 + r.below(rank as u64) as usize;
    let b: Vec<i64> = (0..n).map(|_| scalar_value(r)).collect();
    let e: Vec<i64> = (0..n).map(|_| scalar_value(r)).collect();
    let mut t = Text::default();
    let run_time = |r: &mut Rng, t: &mut Text, name: &str, values: &[i64]| {
        if r.below(2) == 0 {
            t.generic += name;
            t.concrete += &list(values);
        } else {
            t.both(&list(values));
        }
    };
    let jdx_dim = if r.below(2) == 0 { SymExpr::dim("J") } else { SymExpr::constant(r.range(0, 3)) };
    let ge_dims: Vec<SymExpr> =
        (0..rank).map(|_| if r.below(2) == 0 { SymExpr::dim("K") } else { SymExpr::constant(1) }).collect();
    let nd_dims = vec![idx_dim.clone(), SymExpr::constant(r.range(1, 3))];
    match r.below(12) {
        8 => {
            let forms: [&str; 6] =
                ["a[idx]", "a[..., idx]", "a[idx, jdx]", "a[idx, :, jdx]", "a[jdx][idx]", "a[1:, idx][::-1]"];
            let form = r.pick::<&str>(&forms);
            t.both(form)
        }
        9 => {
            let mode = r.pick(&["error", "zero", "clamp", "wrap"]);
            let axis = r.range(-(rank as i64), rank as i64);
            t.both(&format!("gather_elements(a, ge, axis={axis}, mode={mode})"));
        }
        10 => {
            let mode = r.pick(&["error", "zero", "clamp", "wrap"]);
            t.both(&format!("gather_nd(a, nd, batch_dims={}, mode={mode})", r.below(2)));
        }
        11 => {
            let mask: Vec<&str> = (0..r.below(4)).map(|_| *r.pick(&["True", "False"])).collect();
            let item = match r.below(3) {
                0 => format!("[{}]", mask.join(", ")),
                1 => format!("..., [{}]", mask.join(", ")),
                _ => ":a.shape[-1]".to_string(),
            };
            t.both(&format!("a[{item}]"));
        }
        0..=2 => {
            t.both("a");
            for _ in 0..1 + r.below(2) {
                subscript(r, &mut t, k);
            }
        }
        3 => {
            t.both("strided_slice(a, ");
            run_time(r, &mut t, "b", &b);
            t.both(", ");
            run_time(r, &mut t, "e", &e);
            let strides: Vec<i64> = (0..n).map(|_| *r.pick(&[-2, -1, 1, 1, 2, 3])).collect();
            t.both(&format!(
                ", {}, begin_mask={}, end_mask={}, new_axis_mask={}, shrink_axis_mask={})",
                list(&strides),
                bits(r, n),
                bits(r, n),
                bits(r, n),
                bits(r, n)
            ));
        }
        4 => {
            t.both("slice(a, ");
            run_time(r, &mut t, "b", &b);
            t.both(", ");
            run_time(r, &mut t, "e", &e);
            let axes: Vec<i64> =
                (0..n as i64).map(|i| if r.below(2) == 0 { i } else { i - rank as i64 }).collect();
            let steps: Vec<i64> = (0..n).map(|_| *r.pick(&[-2, -1, 1, 1, 2, 3])).collect();
            t.both(&format!(", axes={}, steps={})", list(&axes), list(&steps)));
        }
        5 => {
            let offsets: Vec<i64> = (0..rank).map(|_| r.range(0, 3)).collect();
            let sizes: Vec<i64> = (0..rank).map(|_| r.range(1, 4)).collect();
            let strides: Vec<i64> = (0..rank).map(|_| *r.pick(&[-2, -1, 1, 2])).collect();
            t.both(&format!("slice1(a, {}, {}, {})", list(&offsets), list(&sizes), list(&strides)));
        }
        _ => {
            let mode = r.pick(&["error", "zero", "clamp", "wrap"]);
            let axis = r.range(-(rank as i64), rank as i64);
            t.both(&format!("gather(a, idx, axis={axis}, mode={mode})"));
        }
    }
    match r.below(6) {
        0 | 1 => subscript(r, &mut t, k),
        // Through a `let`, which is substituted where it is used.
        2 => {
            t = Text {
                generic: format!("let x = {}\nx", t.generic),
                concrete: format!("let x = {}\nx", t.concrete),
            };
            subscript(r, &mut t, k);
        }
        _ => {}
    }
    Case { text: t, a_dims, dtype, idx_dim, jdx_dim, ge_dims, nd_dims, k, b, e }
}

fn dim_value(r: &mut Rng) -> i64 {
    match r.below(16) {
        0 => *r.pick(&[MAX_DIM, MAX_DIM - 1, 1 << 40]),
        1..=3 => 0,
        4..=6 => 1,
        _ => r.range(2, 6),
    }
}

/// A binding of every symbol the case may name.
fn bind(r: &mut Rng, case: &Case) -> Env {
    let mut env = Env::new();
    for s in SYMBOLS.iter().chain(&["K", "J"]) {
        env = env.dim(s, dim_value(r));
    }
    env = env.scalar("k", case.k);
    for (name, values) in [("b", &case.b), ("e", &case.e)] {
        for (i, &v) in values.iter().enumerate() {
            env.bind(Sym::Scalar { name: name.into(), index: Some(i as u32) }, v);
        }
    }
    env
}

fn shape_of(dims: &[SymExpr], env: &Env) -> Vec<i64> {
    dims.iter().map(|d| d.eval(env).unwrap()).collect()
}

fn check(seed: u64) {
    let mut r = Rng::new(seed);
    let case = draw(&mut r);
    let a_ty = SymTensorType { dtype: case.dtype, shape: case.a_dims.clone() };
    let list_ty =
        |v: &[i64]| SymTensorType { dtype: DType::I64, shape: vec![SymExpr::constant(v.len() as i64)] };
    let index_ty = |dims: &[SymExpr]| SymTensorType { dtype: DType::I64, shape: dims.to_vec() };
    let indices = [
        ("idx", std::slice::from_ref(&case.idx_dim)),
        ("jdx", std::slice::from_ref(&case.jdx_dim)),
        ("ge", &case.ge_dims[..]),
        ("nd", &case.nd_dims[..]),
    ];
    let mut types: SymInputTypes = [("a".to_string(), a_ty)].into_iter().collect();
    types.extend(indices.iter().map(|(n, dims)| (n.to_string(), index_ty(dims))));
    types.insert("k".into(), SymTensorType { dtype: DType::I64, shape: vec![] });
    types.insert("b".into(), list_ty(&case.b));
    types.insert("e".into(), list_ty(&case.e));
    let src = &case.text;
    let generic = compile_generic(&src.generic, &types);
    for _ in 0..6 {
        let env = bind(&mut r, &case);
        let a_shape = shape_of(&case.a_dims, &env);
        let index_shapes: Vec<(&str, Vec<i64>)> =
            indices.iter().map(|(n, d)| (*n, shape_of(d, &env))).collect();
        let mut bound_types: InputTypes =
            [("a".to_string(), TensorType { dtype: case.dtype, shape: a_shape.clone() })]
                .into_iter()
                .collect();
        for (n, shape) in &index_shapes {
            bound_types.insert(n.to_string(), TensorType { dtype: DType::I64, shape: shape.clone() });
        }
        let concrete = slc::compile(&src.concrete, &bound_types);
        let generic = match &generic {
            Ok(g) => g,
            Err(e) => {
                // Only a form the generic pipeline does not take may fail where the concrete
                // one succeeds.
                assert!(
                    concrete.is_err() || ["E0129", "E0130"].contains(&code(e).as_str()),
                    "generic failed, concrete succeeded: {}\n{}",
                    src.generic,
                    e.render(&src.generic)
                );
                return;
            }
        };
        let bound = generic.plan.bind(&env);
        let concrete = match concrete {
            Ok(c) => c,
            Err(e) => {
                // Refused for these shapes: so is the binding, or the bound plan. Except where
                // the concrete lowering's address arithmetic overflowed in an intermediate
                // (E0301) and the generic plan's evaluation order does not: then the bound plan
                // must verify (every address in its buffer).
                let refused = match &bound {
                    Err(_) => true,
                    Ok(p) => plan::verify(p.clone()).is_err(),
                };
                if code(&e) == "E0301"
                    && let Ok(p) = &bound
                {
                    assert!(plan::verify(p.clone()).is_ok(), "{}", src.generic);
                    continue;
                }
                assert!(refused, "concrete refused ({}), generic bound: {}\n{env:?}", e, src.generic);
                continue;
            }
        };
        // Known limitation: a run-time bound near ±2^63 on an axis whose length is itself an
        // expression (an earlier slice's) may make an intermediate of the normal form overflow.
        let huge_scalar = [case.k].iter().chain(&case.b).chain(&case.e).any(|v| v.unsigned_abs() > 1 << 61);
        if huge_scalar && matches!(bound, Err(ShapeMismatch::TooLarge { .. })) {
            continue;
        }
        // Known limitation: a generic plan keeps a step's stride along a range that may have
        // one element, where the concrete plan writes 0; for an input of more than 2^48 bytes
        // (no machine holds one) that stride may not fit in 64 bits, and binding refuses.
        let unreal = numel_bytes(&a_shape, case.dtype).is_none_or(|b| b > 1 << 48) && !a_shape.contains(&0);
        if unreal && matches!(bound, Err(ShapeMismatch::TooLarge { .. })) {
            continue;
        }
        let mut bound = bound
            .unwrap_or_else(|e| panic!("{}: bind failed: {e}\n{:?}", src.generic, generic.plan.requires));
        // Binding keeps the requirements it has checked; the concrete plan has none.
        bound.requires.clear();
        let want = concrete.plan.plan();
        // The run-time scalars' inputs come last in a generic plan (its executors read their
        // values); the concrete program has their values written in.
        bound.inputs.retain(|d| want.inputs.iter().any(|w| w.name == d.name));
        assert_eq!(bound.shape, want.shape, "{} / {}", src.generic, src.concrete);
        // A generic plan keeps the stride of an axis whose size is a symbol bound to 1 (a
        // coordinate that is always 0 never multiplies it); the concrete plan writes 0 there.
        assert_eq!(
            unit_axes_zeroed(bound.clone()),
            unit_axes_zeroed(want.clone()),
            "{} / {}",
            src.generic,
            src.concrete
        );
        let numel = |s: &[i64]| s.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d));
        let too_big = |s: &[i64]| numel(s).is_none_or(|n| n > 4096);
        if too_big(&a_shape) || index_shapes.iter().any(|(_, s)| too_big(s)) || too_big(&want.shape) {
            continue;
        }
        let usize_shape = |s: &[i64]| s.iter().map(|&d| d as usize).collect::<Vec<_>>();
        let a = fill(case.dtype, &usize_shape(&a_shape), seed);
        let index_tensors: Vec<(&str, Tensor)> = (index_shapes.iter())
            .map(|(n, shape)| {
                let values: Vec<i64> = (0..shape.iter().product::<i64>()).map(|_| r.range(-4, 4)).collect();
                (*n, Tensor::from_i64s(DType::I64, &usize_shape(shape), &values).unwrap())
            })
            .collect();
        let by_name = |name: &str| index_tensors.iter().find(|(n, _)| *n == name).map_or(&a, |(_, t)| t);
        let tensors: Vec<&Tensor> = want.inputs.iter().map(|i| by_name(&i.name)).collect();
        let verified = plan::verify(bound).unwrap_or_else(|e| panic!("{}: {e}", src.generic));
        let got = interp::run(&verified, &tensors).map(|t| t.bytes().to_vec()).map_err(|e| e.to_string());
        let expected =
            interp::run(&concrete.plan, &tensors).map(|t| t.bytes().to_vec()).map_err(|e| e.to_string());
        assert_eq!(got, expected, "{} / {}", src.generic, src.concrete);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 3000, ..ProptestConfig::default() })]

    #[test]
    fn generic_plans_bind_to_the_concrete_pipelines_plans(seed in any::<u64>()) {
        check(seed);
    }
}

/// `plan` in the concrete plan's canonical form: every stride along an axis of size 1 is 0, so
/// is a gathered axis' of length 1 (its one index is 0) or 0, and an index access drops a term that
/// moves nowhere (the output access keeps its terms: their range checks decide its elements).
fn unit_axes_zeroed(mut plan: slc::plan::Plan) -> slc::plan::Plan {
    fn zero(access: &mut slc::plan::Access, shape: &[i64], top: bool) {
        for (s, &d) in access.strides.iter_mut().zip(shape) {
            if d == 1 {
                *s = 0;
            }
        }
        for t in &mut access.terms {
            zero(&mut t.index, shape, false);
            // One element, or none (every index is out of range), moves nowhere.
            if t.len <= 1 {
                t.stride = 0;
            }
        }
        if !top {
            access.terms.retain(|t| t.stride != 0);
        }
    }
    /// The access over `shape` without its axes of one element (their coordinate is always 0).
    fn drop_unit_axes(access: &mut slc::plan::Access, shape: &[i64]) {
        let mut axis = 0;
        access.strides.retain(|_| {
            axis += 1;
            shape[axis - 1] != 1
        });
        for t in &mut access.terms {
            drop_unit_axes(&mut t.index, shape);
        }
    }
    zero(&mut plan.output, &plan.shape.clone(), true);
    for c in &mut plan.checks {
        zero(&mut c.index, &c.shape.clone(), false);
        // A generic gather_nd's check has a last axis of 0 or 1 (`plan::lower`: none of its
        // indices is read where its output is empty): with 1, it checks what the concrete one does.
        drop_unit_axes(&mut c.index, &c.shape.clone());
        c.shape.retain(|&d| d != 1);
    }
    // A check over no element checks nothing (a generic plan's may be empty for a binding).
    plan.checks.retain(|c| !c.shape.contains(&0));
    plan
}

/// The bytes of a tensor of `shape`, if they fit in i64.
fn numel_bytes(shape: &[i64], dtype: DType) -> Option<i64> {
    shape.iter().try_fold(dtype.width() as i64, |acc, &d| acc.checked_mul(d))
}
