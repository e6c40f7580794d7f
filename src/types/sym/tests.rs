//! Test helpers shared by the module's tests (also the random expressions of the machine-code
//! shape function's tests), and the property that ties normalization, evaluation and bounds
//! together.

use super::*;
use proptest::prelude::*;

pub(crate) fn p(s: &str) -> SymExpr {
    SymExpr::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
}

pub(crate) fn n() -> SymExpr {
    SymExpr::dim("N")
}

pub(crate) fn m() -> SymExpr {
    SymExpr::dim("M")
}

// ---- random expression trees -------------------------------------------------------------

/// An expression as built, evaluated literally with every step checked in i64 (also the
/// random expressions of the machine-code shape function's tests).
#[derive(Debug, Clone)]
pub(crate) enum T {
    C(i64),
    D(usize),
    S(usize),
    Add(Box<T>, Box<T>),
    Sub(Box<T>, Box<T>),
    Mul(Box<T>, Box<T>),
    Div(Box<T>, Box<T>),
    Mod(Box<T>, Box<T>),
    Min(Box<T>, Box<T>),
    Max(Box<T>, Box<T>),
    Sel(CmpOp, Box<T>, Box<T>, Box<T>, Box<T>),
}

pub(crate) const DIMS: [&str; 3] = ["K", "M", "N"];
pub(crate) const SCALARS: [(&str, Option<u32>); 2] = [("a", None), ("b", Some(3))];

fn leaf() -> impl Strategy<Value = T> {
    prop_oneof![
        (-6i64..7).prop_map(T::C),
        prop::sample::select(vec![i64::MIN, i64::MAX, i64::MIN + 1, 1 << 62, -(1 << 62), 1 << 31])
            .prop_map(T::C),
        (0..DIMS.len()).prop_map(T::D),
        (0..DIMS.len()).prop_map(T::D),
        (0..SCALARS.len()).prop_map(T::S),
    ]
}

pub(crate) fn tree() -> impl Strategy<Value = T> {
    leaf().prop_recursive(4, 24, 4, |inner| {
        let b = || inner.clone().prop_map(Box::new);
        prop_oneof![
            (b(), b()).prop_map(|(x, y)| T::Add(x, y)),
            (b(), b()).prop_map(|(x, y)| T::Sub(x, y)),
            (b(), b()).prop_map(|(x, y)| T::Mul(x, y)),
            (b(), b()).prop_map(|(x, y)| T::Div(x, y)),
            (b(), prop::sample::select(vec![-4i64, -3, -2, 2, 3, 4]).prop_map(|c| Box::new(T::C(c))))
                .prop_map(|(x, y)| T::Div(x, y)),
            (b(), prop::sample::select(vec![-4i64, -3, 2, 3]).prop_map(|c| Box::new(T::C(c))))
                .prop_map(|(x, y)| T::Mod(x, y)),
            (b(), b()).prop_map(|(x, y)| T::Mod(x, y)),
            (b(), b()).prop_map(|(x, y)| T::Min(x, y)),
            (b(), b()).prop_map(|(x, y)| T::Max(x, y)),
            (prop::sample::select(vec![CmpOp::Lt, CmpOp::Le, CmpOp::Eq]), b(), b(), b(), b())
                .prop_map(|(op, a, c, t, e)| T::Sel(op, a, c, t, e)),
        ]
    })
}

pub(crate) fn scalar_sym(i: usize) -> Sym {
    let (name, index) = SCALARS[i];
    Sym::Scalar { name: name.into(), index }
}

impl T {
    pub(crate) fn build(&self) -> SymExpr {
        match self {
            T::C(c) => SymExpr::constant(*c),
            T::D(i) => SymExpr::dim(DIMS[*i]),
            T::S(i) => SymExpr::sym(scalar_sym(*i)),
            T::Add(x, y) => x.build().add(&y.build()),
            T::Sub(x, y) => x.build().sub(&y.build()),
            T::Mul(x, y) => x.build().mul(&y.build()),
            T::Div(x, y) => x.build().floor_div(&y.build()),
            T::Mod(x, y) => x.build().modulo(&y.build()),
            T::Min(x, y) => x.build().min2(&y.build()),
            T::Max(x, y) => x.build().max2(&y.build()),
            T::Sel(op, a, c, t, e) => {
                SymExpr::select(Cond::new(*op, &a.build(), &c.build()), &t.build(), &e.build())
            }
        }
    }

    /// Whether a min, max or select (which may become one) occurs.
    pub(crate) fn has_minmax(&self) -> bool {
        match self {
            T::C(_) | T::D(_) | T::S(_) => false,
            T::Min(..) | T::Max(..) | T::Sel(..) => true,
            T::Add(x, y) | T::Sub(x, y) | T::Mul(x, y) | T::Div(x, y) | T::Mod(x, y) => {
                x.has_minmax() || y.has_minmax()
            }
        }
    }

    /// Whether every constant is far from i64's ends.
    pub(crate) fn small(&self) -> bool {
        match self {
            T::C(c) => c.unsigned_abs() <= 1 << 31,
            T::D(_) | T::S(_) => true,
            T::Add(x, y)
            | T::Sub(x, y)
            | T::Mul(x, y)
            | T::Div(x, y)
            | T::Mod(x, y)
            | T::Min(x, y)
            | T::Max(x, y) => x.small() && y.small(),
            T::Sel(_, a, c, t, e) => a.small() && c.small() && t.small() && e.small(),
        }
    }

    pub(crate) fn eval(&self, env: &Env) -> Option<i64> {
        let fit = |v: i128| fits(v);
        Some(match self {
            T::C(c) => *c,
            T::D(i) => env.get(&Sym::Dim(DIMS[*i].into()))?,
            T::S(i) => env.get(&scalar_sym(*i))?,
            T::Add(x, y) => x.eval(env)?.checked_add(y.eval(env)?)?,
            T::Sub(x, y) => x.eval(env)?.checked_sub(y.eval(env)?)?,
            T::Mul(x, y) => x.eval(env)?.checked_mul(y.eval(env)?)?,
            T::Div(x, y) => fit(py_div(x.eval(env)? as i128, y.eval(env)? as i128)?)?,
            T::Mod(x, y) => fit(py_mod(x.eval(env)? as i128, y.eval(env)? as i128)?)?,
            T::Min(x, y) => x.eval(env)?.min(y.eval(env)?),
            T::Max(x, y) => x.eval(env)?.max(y.eval(env)?),
            T::Sel(op, a, c, t, e) => {
                if op.holds(a.eval(env)? as i128, c.eval(env)? as i128) {
                    t.eval(env)?
                } else {
                    e.eval(env)?
                }
            }
        })
    }
}

pub(crate) fn env() -> impl Strategy<Value = Env> {
    let dim =
        prop_oneof![4 => 0i64..12, 1 => prop::sample::select(vec![0, 1, MAX_DIM, MAX_DIM - 1, 1 << 31])];
    let scalar = prop_oneof![
        4 => -12i64..12,
        1 => prop::sample::select(vec![i64::MIN, i64::MAX, i64::MIN + 1, -(1 << 62), 1 << 62]),
    ];
    (prop::collection::vec(dim, 3), prop::collection::vec(scalar, 2)).prop_map(|(d, s)| {
        let mut env = Env::new();
        for (i, v) in d.into_iter().enumerate() {
            env.bind(Sym::Dim(DIMS[i].into()), v);
        }
        for (i, v) in s.into_iter().enumerate() {
            env.bind(scalar_sym(i), v);
        }
        env
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// Wherever the expression as built evaluates, its normal form evaluates to the same value;
    /// eval_i64 never disagrees with eval; the interval holds the value.
    #[test]
    fn normal_form_refines_literal(t in tree(), envs in prop::collection::vec(env(), 8)) {
        let e = t.build();
        for env in &envs {
            let exact = e.eval(env);
            if let Some(v) = t.eval(env) {
                prop_assert_eq!(exact, Some(v), "{} = {:?}, built as {:?}", e, exact, t);
            }
            if let Some(v) = e.eval_i64(env) {
                prop_assert_eq!(exact, Some(v));
            }
            if let Some(v) = exact {
                let iv = e.interval(&Assumptions::default());
                prop_assert!(iv.lo <= v && v <= iv.hi, "{} = {} outside {:?}", e, v, iv);
            }
        }
    }
}
