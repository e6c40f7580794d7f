//! Generic plans for the tests and benchmarks of generic kernels (issue 20), one per form of
//! loop nest: the front end's (`pipeline::compile_generic`), and gathers written by hand, since
//! the front end does not take index arrays with symbolic dims yet.

#![allow(dead_code)]

use slc::plan::{Access, BufferId, Check, GenericPlan, Indirect, InputDecl, Origin, Plan};
use slc::sema::SymInputTypes;
use slc::types::OobMode;
use slc::types::sym::SymExpr;
use slc_runtime::DType;

/// A generic program: its plan, and (for slices) its text for the concrete pipeline, given the
/// call's scalar values.
pub struct Program {
    pub name: &'static str,
    pub plan: GenericPlan,
    /// The NumPy text of the program with the scalars written in, where the concrete pipeline
    /// compiles it.
    pub src: Option<fn(&[i64]) -> String>,
    /// The declared shape of each input, a dim a name or a constant.
    pub dims: Vec<Vec<Dim>>,
}

#[derive(Clone, Copy)]
pub enum Dim {
    Sym(&'static str),
    Const(i64),
}

pub fn sym(d: Dim) -> SymExpr {
    match d {
        Dim::Sym(n) => SymExpr::dim(n),
        Dim::Const(c) => SymExpr::constant(c),
    }
}

/// The front end's generic plan of `src` for `inputs` (`("a", "f32[N, M]")`, in plan order).
pub fn compiled(src: &str, inputs: &[(&str, &str)]) -> GenericPlan {
    let types: SymInputTypes = inputs
        .iter()
        .map(|(name, ty)| (name.to_string(), ty.parse().unwrap_or_else(|e| panic!("{ty}: {e}"))))
        .collect();
    let plan = slc::pipeline::compile_generic(src, &types).unwrap_or_else(|e| panic!("`{src}`: {e}")).plan;
    let names: Vec<&str> = plan.inputs.iter().map(|d| d.name.as_str()).collect();
    let declared: Vec<&str> = inputs.iter().map(|(name, _)| *name).collect();
    assert_eq!(names, declared, "`{src}`: the plan's inputs");
    plan
}

/// `gather(a, idx, axis, mode)` of a 2-D `a` by a 1-D `idx`, as the lowering builds it (an
/// `error`-mode gather checks its whole index tensor).
pub fn gather_plan(a: [Dim; 2], idx: (DType, Dim), axis: usize, mode: OobMode) -> GenericPlan {
    let [n, m] = a.map(sym);
    let k = sym(idx.1);
    let zero = SymExpr::constant(0);
    let one = SymExpr::constant(1);
    let (shape, data_strides, index_strides, len, stride) = match axis {
        0 => (
            vec![k.clone(), m.clone()],
            vec![zero.clone(), one.clone()],
            vec![one.clone(), zero.clone()],
            n,
            m.clone(),
        ),
        _ => (
            vec![n, k.clone()],
            vec![m.clone(), zero.clone()],
            vec![zero.clone(), one.clone()],
            m,
            one.clone(),
        ),
    };
    let index = |strides: Vec<SymExpr>| Access {
        buffer: BufferId::Input(1),
        base: zero.clone(),
        strides,
        terms: vec![],
    };
    let checks = match mode {
        OobMode::Error => vec![Check {
            index: index(vec![one.clone()]),
            shape: vec![k],
            len: len.clone(),
            axis,
            origin: Origin(None),
        }],
        _ => vec![],
    };
    let term = Indirect { index: Box::new(index(index_strides)), len, stride, mode, origin: Origin(None) };
    Plan {
        inputs: vec![
            InputDecl::dense("a", DType::F32, vec![sym(a[0]), sym(a[1])]),
            InputDecl::dense("idx", idx.0, vec![sym(idx.1)]),
        ],
        consts: vec![],
        requires: vec![],
        checks,
        dtype: DType::F32,
        shape,
        output: Access { buffer: BufferId::Input(0), base: zero, strides: data_strides, terms: vec![term] },
        store: None,
    }
}

/// The generic programs under test: one per form of loop nest a generic kernel takes.
pub fn programs() -> Vec<Program> {
    use Dim::{Const, Sym};
    let (n, m) = (Sym("N"), Sym("M"));
    vec![
        Program {
            name: "reversed",
            plan: compiled("a[1:3, ::-1]", &[("a", "f32[N, M]")]),
            src: Some(|_| "a[1:3, ::-1]".into()),
            dims: vec![vec![n, m]],
        },
        Program {
            name: "strided",
            plan: compiled("a[::2, -1::-3]", &[("a", "u16[N, M]")]),
            src: Some(|_| "a[::2, -1::-3]".into()),
            dims: vec![vec![n, m]],
        },
        Program {
            name: "crop (a symbolic run)",
            plan: compiled("a[1:, 1:-1]", &[("a", "f32[N, M]")]),
            src: Some(|_| "a[1:, 1:-1]".into()),
            dims: vec![vec![n, m]],
        },
        Program {
            name: "whole rows (merged axes)",
            plan: compiled("a[1:]", &[("a", "f64[N, M, 3]")]),
            src: Some(|_| "a[1:]".into()),
            dims: vec![vec![n, m, Const(3)]],
        },
        Program {
            name: "short rows of a constant width",
            plan: compiled("a[::2, 1:-1]", &[("a", "f32[N, 16]")]),
            src: Some(|_| "a[::2, 1:-1]".into()),
            dims: vec![vec![n, Const(16)]],
        },
        Program {
            name: "reversed pixels",
            plan: compiled("a[..., ::-1]", &[("a", "u8[N, M, 3]")]),
            src: Some(|_| "a[..., ::-1]".into()),
            dims: vec![vec![n, m, Const(3)]],
        },
        Program {
            name: "reversed pixels of symbolic channels",
            plan: compiled("a[:, 1:, ::-1]", &[("a", "u8[N, M, C]")]),
            src: Some(|_| "a[:, 1:, ::-1]".into()),
            dims: vec![vec![n, m, Sym("C")]],
        },
        Program {
            name: "a column",
            plan: compiled("a[:, 0]", &[("a", "f32[N, M]")]),
            src: Some(|_| "a[:, 0]".into()),
            dims: vec![vec![n, m]],
        },
        Program {
            name: "run-time bounds",
            plan: compiled("a[k:, :k:-1]", &[("a", "i32[N, M]"), ("k", "i64[]")]),
            src: Some(|k| format!("a[{0}:, :{0}:-1]", k[0])),
            dims: vec![vec![n, m], vec![]],
        },
        Program {
            name: "gather, error mode",
            plan: gather_plan([n, m], (DType::I64, Sym("K")), 0, OobMode::Error),
            src: None,
            dims: vec![vec![n, m], vec![Sym("K")]],
        },
        Program {
            name: "gather, zero mode",
            plan: gather_plan([n, m], (DType::I32, Sym("K")), 1, OobMode::Zero),
            src: None,
            dims: vec![vec![n, m], vec![Sym("K")]],
        },
        Program {
            name: "gather, fixed columns",
            plan: gather_plan([n, m], (DType::I32, Const(5)), 1, OobMode::Zero),
            src: None,
            dims: vec![vec![n, m], vec![Const(5)]],
        },
        Program {
            name: "gather, clamp mode",
            plan: gather_plan([n, m], (DType::I16, Sym("K")), 1, OobMode::Clamp),
            src: None,
            dims: vec![vec![n, m], vec![Sym("K")]],
        },
        Program {
            name: "gather, wrap mode",
            plan: gather_plan([n, m], (DType::I64, Sym("K")), 0, OobMode::Wrap),
            src: None,
            dims: vec![vec![n, m], vec![Sym("K")]],
        },
    ]
}
