//! Bounds: intervals under [`Assumptions`], and the proofs built on them (`simplify`, which
//! rebuilds through the constructors, is in `construct.rs`).

use std::collections::BTreeMap;

use super::{Atom, CmpOp, Cond, MAX_DIM, Poly, RawOp, Sym, SymExpr, py_div};

/// What interval reasoning may assume: dimensions lie in `[0, max_dim]` (at most [`MAX_DIM`]),
/// scalars in i64, and any symbol in the bounds given for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Assumptions {
    pub max_dim: i64,
    bounds: BTreeMap<Sym, (i64, i64)>,
}

impl Default for Assumptions {
    fn default() -> Assumptions {
        Assumptions { max_dim: MAX_DIM, bounds: BTreeMap::new() }
    }
}

impl Assumptions {
    /// Assumes `lo <= s <= hi`.
    pub fn bound(mut self, s: Sym, lo: i64, hi: i64) -> Assumptions {
        self.bounds.insert(s, (lo, hi));
        self
    }

    /// Assumes that `cond` holds (or, with `holds == false`, that it does not). Only a
    /// comparison of one symbol with a constant narrows anything (`N <= 1` false: `N >= 2`);
    /// others assume nothing, which is sound.
    pub fn assume(mut self, cond: &Cond, holds: bool) -> Assumptions {
        let (s, k, sym_left) =
            match (cond.lhs.as_sym(), cond.rhs.as_const(), cond.lhs.as_const(), cond.rhs.as_sym()) {
                (Some(s), Some(k), _, _) => (s, k, true),
                (_, _, Some(k), Some(s)) => (s, k, false),
                _ => return self,
            };
        let (lo, hi) = match (cond.op, holds, sym_left) {
            (CmpOp::Le, true, true) | (CmpOp::Lt, false, false) => (None, Some(k)),
            (CmpOp::Le, false, true) | (CmpOp::Lt, true, false) => (k.checked_add(1), None),
            (CmpOp::Lt, true, true) | (CmpOp::Le, false, false) => (None, k.checked_sub(1)),
            (CmpOp::Lt, false, true) | (CmpOp::Le, true, false) => (Some(k), None),
            (CmpOp::Eq, true, _) => (Some(k), Some(k)),
            (CmpOp::Eq, false, _) => (None, None),
        };
        let (cur_lo, cur_hi) = self.bounds.get(s).copied().unwrap_or((i64::MIN, i64::MAX));
        let new = (lo.map_or(cur_lo, |l| l.max(cur_lo)), hi.map_or(cur_hi, |h| h.min(cur_hi)));
        self.bounds.insert(s.clone(), new);
        self
    }

    pub(super) fn of(&self, s: &Sym) -> (i128, i128) {
        let (lo, hi) = self.bounds.get(s).copied().unwrap_or((i64::MIN, i64::MAX));
        match s {
            Sym::Dim(_) => (lo.max(0) as i128, hi.min(self.max_dim.min(MAX_DIM)) as i128),
            Sym::Scalar { .. } => (lo as i128, hi as i128),
        }
    }
}

/// Bounds `lo <= v <= hi` on every value [`SymExpr::eval`] gives under the assumptions.
/// `[i64::MIN, i64::MAX]` is unbounded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Interval {
    pub lo: i64,
    pub hi: i64,
}

fn imul(a: (i128, i128), b: (i128, i128)) -> (i128, i128) {
    let c =
        [a.0.saturating_mul(b.0), a.0.saturating_mul(b.1), a.1.saturating_mul(b.0), a.1.saturating_mul(b.1)];
    (*c.iter().min().expect("4"), *c.iter().max().expect("4"))
}

fn hull(a: Option<(i128, i128)>, b: (i128, i128)) -> Option<(i128, i128)> {
    Some(a.map_or(b, |a| (a.0.min(b.0), a.1.max(b.1))))
}

/// Saturating bounds on the exact (i128) values of a polynomial. A bound at i128's end stands
/// for no bound: once a term's reaches it, so does the sum's (adding the other terms' finite
/// bounds to a saturated one would pull it back into range, which evaluation, factoring the
/// polynomial, need not respect: `(N - 4) * c` for a `c` near i128's end is 0 at N = 4).
pub(super) fn interval_poly(p: &Poly, asm: &Assumptions) -> (i128, i128) {
    let mut acc = (p.constant as i128, p.constant as i128);
    let (mut below, mut above) = (false, false);
    for (m, c) in &p.terms {
        let mut prod = (*c as i128, *c as i128);
        for a in m {
            prod = imul(prod, interval_atom(a, asm));
        }
        below |= prod.0 == i128::MIN;
        above |= prod.1 == i128::MAX;
        acc = (acc.0.saturating_add(prod.0), acc.1.saturating_add(prod.1));
    }
    (if below { i128::MIN } else { acc.0 }, if above { i128::MAX } else { acc.1 })
}

fn interval_atom(a: &Atom, asm: &Assumptions) -> (i128, i128) {
    match a {
        Atom::Sym(s) => asm.of(s),
        Atom::FloorDiv(x, d) => {
            let (x, d) = (x.interval_wide(asm), d.interval_wide(asm));
            let mut out = None;
            for (dlo, dhi) in [(d.0, d.1.min(-1)), (d.0.max(1), d.1)] {
                if dlo > dhi {
                    continue;
                }
                let q = |a: i128, b: i128| py_div(a, b).unwrap_or(i128::MAX);
                let c = [q(x.0, dlo), q(x.0, dhi), q(x.1, dlo), q(x.1, dhi)];
                out = hull(out, (*c.iter().min().expect("4"), *c.iter().max().expect("4")));
            }
            out.unwrap_or((0, 0))
        }
        Atom::Mod(x, d) => {
            let (x, d) = (x.interval_wide(asm), d.interval_wide(asm));
            let mut out = None;
            if d.1 >= 1 {
                let hi = d.1 - 1;
                out = hull(out, if x.0 >= 0 { (0, x.1.min(hi)) } else { (0, hi) });
            }
            if d.0 <= -1 {
                let lo = d.0 + 1;
                out = hull(out, if x.1 <= 0 { (x.0.max(lo), 0) } else { (lo, 0) });
            }
            out.unwrap_or((0, 0))
        }
        Atom::Min(v) | Atom::Max(v) => {
            let ivs: Vec<(i128, i128)> = v.iter().map(|x| x.interval_wide(asm)).collect();
            let (los, his) = (ivs.iter().map(|i| i.0), ivs.iter().map(|i| i.1));
            if matches!(a, Atom::Min(_)) {
                (los.min().expect("args"), his.min().expect("args"))
            } else {
                (los.max().expect("args"), his.max().expect("args"))
            }
        }
        Atom::Select(c, t, e) => match c.decide(asm) {
            Some(true) => t.interval_wide(asm),
            Some(false) => e.interval_wide(asm),
            None => {
                let (t, e) = (t.interval_wide(asm), e.interval_wide(asm));
                (t.0.min(e.0), t.1.max(e.1))
            }
        },
        Atom::Raw(op, x, y) => {
            let (x, y) = (x.interval_wide(asm), y.interval_wide(asm));
            match op {
                RawOp::Add => (x.0.saturating_add(y.0), x.1.saturating_add(y.1)),
                RawOp::Sub => (x.0.saturating_sub(y.1), x.1.saturating_sub(y.0)),
                RawOp::Mul => imul(x, y),
            }
        }
    }
}

impl SymExpr {
    pub(super) fn interval_wide(&self, asm: &Assumptions) -> (i128, i128) {
        interval_poly(&self.0, asm)
    }

    /// Sound bounds on the expression's value under the assumptions.
    pub fn interval(&self, asm: &Assumptions) -> Interval {
        let (lo, hi) = self.interval_wide(asm);
        let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        Interval { lo: clamp(lo), hi: clamp(hi) }
    }

    /// `Some(true)` when the value is ≥ 0 for every binding, `Some(false)` when it is < 0 for
    /// every one, `None` when unknown (intervals of the expression simplified under `asm`).
    pub fn prove_nonnegative(&self, asm: &Assumptions) -> Option<bool> {
        let (lo, hi) = self.simplify(asm).interval_wide(asm);
        if lo >= 0 {
            Some(true)
        } else if hi < 0 {
            Some(false)
        } else {
            None
        }
    }

    /// Whether `a <= b` for every binding (`Some(true)`), for none (`Some(false)`), or unknown.
    pub fn prove_le(a: &SymExpr, b: &SymExpr, asm: &Assumptions) -> Option<bool> {
        let c = Cond { op: CmpOp::Le, lhs: a.simplify(asm), rhs: b.simplify(asm) };
        c.decide(asm).or_else(|| b.sub(a).simplify(asm).prove_nonnegative(asm))
    }
}

/// Bounds on `a - b`: of the difference when it normalizes, else of the two apart.
pub(super) fn diff_interval(a: &SymExpr, b: &SymExpr, asm: &Assumptions) -> (i128, i128) {
    match a.0.add(&b.0, -1) {
        Some(d) => interval_poly(&d, asm),
        None => {
            let (a, b) = (a.interval_wide(asm), b.interval_wide(asm));
            (a.0.saturating_sub(b.1), a.1.saturating_sub(b.0))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn bounds() {
        let asm = Assumptions::default();
        assert_eq!(n().interval(&asm), Interval { lo: 0, hi: MAX_DIM });
        assert_eq!(n().prove_nonnegative(&asm), Some(true));
        assert_eq!((n() - 1).prove_nonnegative(&asm), None);
        assert_eq!((SymExpr::constant(-1) - n()).prove_nonnegative(&asm), Some(false));
        assert_eq!(SymExpr::prove_le(&(n() - 1), &n(), &asm), Some(true));
        assert_eq!(SymExpr::prove_le(&n(), &m(), &asm), None);
        let asm = asm.bound(Sym::Dim("N".into()), 2, 10).bound(
            Sym::Scalar { name: "k".into(), index: None },
            -3,
            3,
        );
        assert_eq!(p("N - k[()]").interval(&asm), Interval { lo: -1, hi: 13 });
        assert_eq!(p("N // 3").interval(&asm), Interval { lo: 0, hi: 3 });
        assert_eq!(p("k[()] % 4").interval(&asm), Interval { lo: 0, hi: 3 });
        assert_eq!(SymExpr::prove_le(&p("N*N"), &SymExpr::constant(100), &asm), Some(true));
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// Intervals under narrower assumptions hold every value the assumptions allow.
        #[test]
        fn intervals_are_sound(t in tree(), n_hi in 0i64..20, a_lo in -20i64..0, a_w in 0i64..30,
                               envs in prop::collection::vec(env(), 8)) {
            let e = t.build();
            let mut asm = Assumptions::default().bound(scalar_sym(0), a_lo, a_lo + a_w);
            asm.max_dim = n_hi;
            let iv = e.interval(&asm);
            for env in envs {
                let mut env = env;
                for d in DIMS {
                    let v = env.get(&Sym::Dim(d.into())).expect("bound");
                    env.bind(Sym::Dim(d.into()), v.min(n_hi));
                }
                let a = env.get(&scalar_sym(0)).expect("bound");
                env.bind(scalar_sym(0), a.clamp(a_lo, a_lo + a_w));
                if let Some(v) = e.eval(&env) {
                    prop_assert!(iv.lo <= v && v <= iv.hi, "{} = {} outside {:?} ({:?})", e, v, iv, env);
                }
                if let Some(true) = e.prove_nonnegative(&asm) {
                    prop_assert!(e.eval(&env).is_none_or(|v| v >= 0));
                }
            }
        }

        /// Simplifying under assumptions that hold for a binding keeps its value there, and the
        /// proofs are sound.
        #[test]
        fn simplify_keeps_values(t in tree(), env in env(), r in prop::collection::vec(0i64..4, 4)) {
            let e = t.build();
            let mut asm = Assumptions::default();
            for (i, d) in DIMS.iter().enumerate() {
                let v = env.get(&Sym::Dim((*d).into())).expect("bound");
                asm = asm.bound(Sym::Dim((*d).into()), v.saturating_sub(r[i]), v.saturating_add(r[i] / 2));
            }
            let a = env.get(&scalar_sym(0)).expect("bound");
            asm = asm.bound(scalar_sym(0), a.saturating_sub(r[3]), a.saturating_add(r[3]));
            let s = e.simplify(&asm);
            if let Some(v) = e.eval(&env) {
                prop_assert_eq!(s.eval(&env), Some(v), "{} under {:?} is {}", e, asm, s);
                let iv = s.interval(&asm);
                prop_assert!(iv.lo <= v && v <= iv.hi);
                match e.prove_nonnegative(&asm) {
                    Some(true) => prop_assert!(v >= 0, "{} proven >= 0, is {}", e, v),
                    Some(false) => prop_assert!(v < 0, "{} proven < 0, is {}", e, v),
                    None => {}
                }
                let zero = SymExpr::constant(0);
                if SymExpr::prove_le(&e, &zero, &asm) == Some(true) {
                    prop_assert!(v <= 0);
                }
            }
        }
    }
}
