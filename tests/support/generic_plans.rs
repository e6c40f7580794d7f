//! Generic plans written by hand for the tests and benchmarks of generic kernels (issue 20),
//! one per form of loop nest: the one place they are made, to switch to
//! `pipeline::compile_generic` once it lands.

#![allow(dead_code)]

use slc::plan::{Access, BufferId, Check, GenericPlan, Indirect, InputDecl, Origin, Plan};
use slc::types::OobMode;
use slc::types::sym::{SymExpr, normalize_numpy};
use slc_runtime::DType;

/// One NumPy slice of an axis: start, stop (constants or run-time scalars), step.
pub type Slice = (Option<SymExpr>, Option<SymExpr>, Option<i64>);

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

pub fn c(v: i64) -> Option<SymExpr> {
    Some(SymExpr::constant(v))
}

/// `a[slices]` over a dense `a` of `dims`, as the lowering builds it: each axis's NumPy range
/// (`sym::normalize_numpy`) at the axis's row-major stride. Scalar inputs named in `scalars`
/// (0-d i64) follow `a`.
pub fn slice_plan(dtype: DType, dims: &[Dim], slices: &[Slice], scalars: &[&str]) -> GenericPlan {
    let shape: Vec<SymExpr> = dims.iter().map(|&d| sym(d)).collect();
    let mut row = SymExpr::constant(1);
    let mut rows = vec![SymExpr::constant(0); shape.len()];
    for (r, n) in rows.iter_mut().zip(&shape).rev() {
        *r = row.clone();
        row = row.mul(n);
    }
    let (mut base, mut strides, mut out) = (SymExpr::constant(0), vec![], vec![]);
    for ((n, r), (start, stop, step)) in shape.iter().zip(&rows).zip(slices) {
        let range = normalize_numpy(n, start.as_ref(), stop.as_ref(), *step);
        base = base.add(&range.first.mul(r));
        strides.push(r.mul(&SymExpr::constant(range.step)));
        out.push(range.len);
    }
    let mut inputs = vec![InputDecl::dense("a", dtype, shape)];
    inputs.extend(scalars.iter().map(|k| InputDecl::dense(*k, DType::I64, vec![])));
    Plan {
        inputs,
        consts: vec![],
        requires: vec![],
        checks: vec![],
        dtype,
        shape: out,
        output: Access { buffer: BufferId::Input(0), base, strides, terms: vec![] },
    }
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
    let term = Indirect { index: Box::new(index(index_strides)), len, stride, mode };
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
    }
}

/// The generic programs under test: one per form of loop nest a generic kernel takes.
pub fn programs() -> Vec<Program> {
    use Dim::{Const, Sym};
    let (n, m) = (Sym("N"), Sym("M"));
    let k = || Some(SymExpr::scalar("k"));
    vec![
        Program {
            name: "reversed",
            plan: slice_plan(DType::F32, &[n, m], &[(c(1), c(3), None), (None, None, Some(-1))], &[]),
            src: Some(|_| "a[1:3, ::-1]".into()),
            dims: vec![vec![n, m]],
        },
        Program {
            name: "strided",
            plan: slice_plan(DType::U16, &[n, m], &[(None, None, Some(2)), (c(-1), None, Some(-3))], &[]),
            src: Some(|_| "a[::2, -1::-3]".into()),
            dims: vec![vec![n, m]],
        },
        Program {
            name: "crop (a symbolic run)",
            plan: slice_plan(DType::F32, &[n, m], &[(c(1), None, None), (c(1), c(-1), None)], &[]),
            src: Some(|_| "a[1:, 1:-1]".into()),
            dims: vec![vec![n, m]],
        },
        Program {
            name: "whole rows (merged axes)",
            plan: slice_plan(
                DType::F64,
                &[n, m, Const(3)],
                &[(c(1), None, None), (None, None, None), (None, None, None)],
                &[],
            ),
            src: Some(|_| "a[1:]".into()),
            dims: vec![vec![n, m, Const(3)]],
        },
        Program {
            name: "short rows of a constant width",
            plan: slice_plan(DType::F32, &[n, Const(16)], &[(None, None, Some(2)), (c(1), c(-1), None)], &[]),
            src: Some(|_| "a[::2, 1:-1]".into()),
            dims: vec![vec![n, Const(16)]],
        },
        Program {
            name: "reversed pixels",
            plan: slice_plan(
                DType::U8,
                &[n, m, Const(3)],
                &[(None, None, None), (None, None, None), (None, None, Some(-1))],
                &[],
            ),
            src: Some(|_| "a[..., ::-1]".into()),
            dims: vec![vec![n, m, Const(3)]],
        },
        Program {
            name: "run-time bounds",
            plan: slice_plan(DType::I32, &[n, m], &[(k(), None, None), (None, k(), Some(-1))], &["k"]),
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
