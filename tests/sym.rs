//! `types::sym::normalize_numpy` against the concrete `sema::shape::normalize_numpy`: for every
//! binding, the symbolic first, step and length evaluate to the concrete ones, with the bounds
//! constant or run-time scalars, and their i64-checked evaluation (what generated shape
//! functions do) never fails where the concrete one is defined.

use proptest::prelude::*;
use slc::sema::shape::normalize_numpy as concrete;
use slc::types::sym::{Env, MAX_DIM, SymExpr, normalize_numpy};

fn edge_bound() -> impl Strategy<Value = i64> {
    prop_oneof![
        3 => -30i64..30,
        2 => prop::sample::select(vec![
            i64::MIN, i64::MIN + 1, i64::MIN + 2, i64::MAX, i64::MAX - 1, -(1 << 62), 1 << 62,
            (1 << 62) + 1, -(1 << 62) - 1, 1 << 32, -(1 << 32), 0, -1, 1,
        ]),
        1 => any::<i64>(),
    ]
}

fn step() -> impl Strategy<Value = i64> {
    prop_oneof![
        4 => 1i64..6,
        4 => -6i64..0,
        1 => prop::sample::select(vec![i64::MIN, i64::MIN + 1, i64::MAX, i64::MAX - 1, 1 << 40, -(1 << 40)]),
    ]
}

fn dim() -> impl Strategy<Value = i64> {
    prop_oneof![4 => 0i64..=1000, 1 => prop::sample::select(vec![0, 1, 2, MAX_DIM, MAX_DIM - 1, 1 << 40])]
}

/// How a bound is given: omitted, a constant, or a run-time scalar named `name`.
#[derive(Debug, Clone, Copy)]
enum Bound {
    None,
    Const(i64),
    Scalar(i64),
}

fn bound() -> impl Strategy<Value = Bound> {
    prop_oneof![
        1 => Just(Bound::None),
        3 => edge_bound().prop_map(Bound::Const),
        3 => edge_bound().prop_map(Bound::Scalar),
    ]
}

impl Bound {
    fn value(self) -> Option<i64> {
        match self {
            Bound::None => None,
            Bound::Const(v) | Bound::Scalar(v) => Some(v),
        }
    }

    fn expr(self, name: &str) -> Option<SymExpr> {
        match self {
            Bound::None => None,
            Bound::Const(v) => Some(SymExpr::constant(v)),
            Bound::Scalar(_) => Some(SymExpr::scalar(name)),
        }
    }
}

fn check(n: i64, start: Bound, stop: Bound, k: Option<i64>) -> Result<(), TestCaseError> {
    let want = concrete(n, start.value(), stop.value(), k);
    let r = normalize_numpy(&SymExpr::dim("N"), start.expr("s").as_ref(), stop.expr("e").as_ref(), k);
    let mut env = Env::new().dim("N", n);
    if let Bound::Scalar(v) = start {
        env = env.scalar("s", v);
    }
    if let Bound::Scalar(v) = stop {
        env = env.scalar("e", v);
    }
    let ctx = || format!("n={n} start={start:?} stop={stop:?} step={k:?}: first {} len {}", r.first, r.len);
    prop_assert_eq!(r.step, want.step, "{}", ctx());
    prop_assert_eq!(r.first.eval(&env), Some(want.first), "{}", ctx());
    prop_assert_eq!(r.len.eval(&env), Some(want.len), "{}", ctx());
    prop_assert_eq!(r.first.eval_i64(&env), Some(want.first), "{}", ctx());
    prop_assert_eq!(r.len.eval_i64(&env), Some(want.len), "{}", ctx());
    // The same expression with the dimension concrete folds to constants.
    if !matches!(start, Bound::Scalar(_)) && !matches!(stop, Bound::Scalar(_)) {
        let c = normalize_numpy(&SymExpr::constant(n), start.expr("s").as_ref(), stop.expr("e").as_ref(), k);
        prop_assert_eq!(c.first.as_const(), Some(want.first), "{}", ctx());
        prop_assert_eq!(c.len.as_const(), Some(want.len), "{}", ctx());
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(4000))]

    #[test]
    fn symbolic_numpy_normalization_is_numpys(
        n in dim(), start in bound(), stop in bound(), k in prop::option::weighted(0.85, step())
    ) {
        check(n, start, stop, k)?;
    }

    /// One symbolic normalization, many bindings of the dimension and the scalars.
    #[test]
    fn one_expression_for_every_binding(
        start in bound(), stop in bound(), k in prop::option::weighted(0.85, step()),
        bindings in prop::collection::vec((dim(), edge_bound(), edge_bound()), 16)
    ) {
        let r = normalize_numpy(&SymExpr::dim("N"), start.expr("s").as_ref(), stop.expr("e").as_ref(), k);
        for (n, s, e) in bindings {
            let start = match start { Bound::Scalar(_) => Bound::Scalar(s), b => b };
            let stop = match stop { Bound::Scalar(_) => Bound::Scalar(e), b => b };
            let want = concrete(n, start.value(), stop.value(), k);
            let env = Env::new().dim("N", n).scalar("s", s).scalar("e", e);
            prop_assert_eq!((r.first.eval(&env), r.len.eval(&env)), (Some(want.first), Some(want.len)),
                "n={} start={:?} stop={:?} k={:?}: first {} len {}", n, start, stop, k, r.first, r.len);
            prop_assert_eq!((r.first.eval_i64(&env), r.len.eval_i64(&env)), (Some(want.first), Some(want.len)));
        }
    }
}

/// The shapes `slc plan` will print, readable.
#[test]
fn readable_lengths() {
    let n = SymExpr::dim("N");
    let c = |v: i64| SymExpr::constant(v);
    let show = |start: Option<i64>, stop: Option<i64>, step: Option<i64>| {
        let r = normalize_numpy(&n, start.map(c).as_ref(), stop.map(c).as_ref(), step);
        (r.first.to_string(), r.len.to_string())
    };
    assert_eq!(show(None, None, None), ("0".into(), "N".into()));
    assert_eq!(show(Some(1), None, None), ("(0 if N <= 1 else 1)".into(), "max(0, N-1)".into()));
    assert_eq!(show(None, Some(-1), None), ("0".into(), "max(0, N-1)".into()));
    assert_eq!(show(Some(3), None, Some(2)), ("(0 if N <= 3 else 3)".into(), "max(0, N//2-1)".into()));
    assert_eq!(show(None, None, Some(-1)), ("(0 if N <= 0 else N-1)".into(), "N".into()));
    assert_eq!(show(None, None, Some(2)), ("0".into(), "(N+1)//2".into()));
    let s = SymExpr::scalar("k");
    let r = normalize_numpy(&n, None, Some(&s), None);
    println!("a[:k] -> first {} len {}", r.first, r.len);
    assert_eq!(r.first.to_string(), "0");
    // The printed forms read back.
    for e in [&r.first, &r.len] {
        assert_eq!(&SymExpr::parse(&e.to_string()).unwrap(), e);
    }
}
