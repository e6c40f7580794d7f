//! The sum-of-products normal form: arithmetic on `Poly`, the rewrites that look at a whole sum
//! (`finalize`), the normal form of `min`/`max`, and the order terms print and evaluate in.

use std::collections::BTreeMap;

use super::bounds::{Assumptions, diff_interval};
use super::{Atom, Poly, SymExpr, py_div};

/// The most terms a product distributes into; a larger product is kept as written, so that
/// expressions stay small whatever text is parsed.
const MAX_TERMS: usize = 256;

impl Poly {
    pub(super) fn constant(c: i64) -> Poly {
        Poly { constant: c, terms: vec![] }
    }

    pub(super) fn atom(a: Atom) -> Poly {
        Poly { constant: 0, terms: vec![(vec![a], 1)] }
    }

    /// `self + sign*other`, or `None` when a coefficient overflows.
    pub(super) fn add(&self, other: &Poly, sign: i64) -> Option<Poly> {
        let op = |a: i64, b: i64| if sign == 1 { a.checked_add(b) } else { a.checked_sub(b) };
        let constant = op(self.constant, other.constant)?;
        let mut terms: BTreeMap<&Vec<Atom>, i64> = self.terms.iter().map(|(m, c)| (m, *c)).collect();
        for (m, c) in &other.terms {
            let e = terms.entry(m).or_insert(0);
            *e = op(*e, *c)?;
        }
        let terms = terms.into_iter().filter(|(_, c)| *c != 0).map(|(m, c)| (m.clone(), c)).collect();
        Some(Poly { constant, terms })
    }

    /// `self * other`, or `None` when a coefficient overflows or the product would have more
    /// than [`MAX_TERMS`] terms (then it is kept as written).
    pub(super) fn mul(&self, other: &Poly) -> Option<Poly> {
        if (self.terms.len() + 1).saturating_mul(other.terms.len() + 1) > MAX_TERMS {
            return None;
        }
        // Each side as a list of (monomial, coefficient) with the constant as the empty monomial.
        let expand = |p: &Poly| {
            let mut v: Vec<(Vec<Atom>, i64)> = p.terms.clone();
            if p.constant != 0 {
                v.push((vec![], p.constant));
            }
            v
        };
        let mut acc: BTreeMap<Vec<Atom>, i64> = BTreeMap::new();
        for (ma, ca) in expand(self) {
            for (mb, cb) in expand(other) {
                let mut m = ma.clone();
                m.extend(mb.iter().cloned());
                m.sort();
                let c = ca.checked_mul(cb)?;
                let e = acc.entry(m).or_insert(0);
                *e = e.checked_add(c)?;
            }
        }
        let constant = acc.remove(&vec![]).unwrap_or(0);
        let terms = acc.into_iter().filter(|(_, c)| *c != 0).collect();
        Some(Poly { constant, terms })
    }

    /// Splits off the terms whose coefficients `d` divides, and the constant's quotient when
    /// `|d| <= REDUCE_LIMIT`: `(self - d*q, q)`, the constant of `self - d*q` then in `[0, d)`
    /// (`(d, 0]` for a negative `d`).
    pub(super) fn split_divisible(&self, d: i64) -> (Poly, Poly) {
        let (c, q) = match py_div(self.constant as i128, d as i128) {
            Some(q) if d.unsigned_abs() <= REDUCE_LIMIT => (self.constant as i128 - q * d as i128, q),
            _ => (self.constant as i128, 0),
        };
        let (mut rest, mut quot) = (Poly::constant(c as i64), Poly::constant(q as i64));
        for (m, c) in &self.terms {
            // Checked: i64::MIN / -1 does not fit (the term then stays whole).
            match c.checked_rem(d).filter(|&r| r == 0).and_then(|_| c.checked_div(d)) {
                Some(q) => quot.terms.push((m.clone(), q)),
                None => rest.terms.push((m.clone(), *c)),
            }
        }
        (rest, quot)
    }
}

/// Applies the rewrite that looks at a whole sum: a single `min`/`max` term (coefficient ±1)
/// takes in the rest. The result does not depend on the order the sum was built in: a sum is
/// pushed in whenever it holds one such term, and one with two keeps both (and prints them
/// first, so that reading it back builds it the same way).
pub(super) fn finalize(p: Poly) -> SymExpr {
    // x - d*(x//d) is x % d (Python's identity, either sign of d): a sum holding k*x and
    // -k*d*(x//d) holds k*(x % d) instead, which bounds well (`N - 2*(N//2)` is `N%2`).
    for (m, c) in &p.terms {
        if let [Atom::FloorDiv(x, d)] = &m[..]
            && let Some(dc) = d.as_const().filter(|&dc| c.checked_rem(dc) == Some(0))
            && !x.0.terms.is_empty()
            // Checked: i64::MIN / -1, and its negation, do not fit.
            && let Some(k) = c.checked_div(dc).and_then(i64::checked_neg)
        {
            let holds_kx = x.0.terms.iter().all(|(xm, xc)| {
                xc.checked_mul(k).is_some_and(|v| p.terms.iter().any(|(pm, pc)| pm == xm && *pc == v))
            });
            let this = Poly { constant: 0, terms: vec![(m.clone(), *c)] };
            let modk = x.modulo(d).0.mul(&Poly::constant(k));
            if holds_kx
                && let Some(rest) = x.0.mul(&Poly::constant(k)).and_then(|kx| p.add(&kx, -1))
                && let Some(rest) = rest.add(&this, -1)
                && let Some(sum) = modk.and_then(|mk| rest.add(&mk, 1))
            {
                return finalize(sum);
            }
        }
    }
    let is_minmax = |a: &Atom| matches!(a, Atom::Min(_) | Atom::Max(_));
    let has_minmax = |m: &Vec<Atom>| m.iter().any(is_minmax);
    if p.terms.len() + usize::from(p.constant != 0) >= 2 {
        let candidates: Vec<usize> = (0..p.terms.len()).filter(|&i| has_minmax(&p.terms[i].0)).collect();
        if let [i] = candidates[..] {
            let (m, c) = &p.terms[i];
            if m.len() == 1 && (*c == 1 || *c == -1) {
                let mut rest = p.clone();
                rest.terms.remove(i);
                let rest = finalize(rest);
                let (args, is_min) = match (&m[0], c) {
                    (Atom::Min(v), 1) => (v.iter().map(|a| rest.add(a)).collect::<Vec<_>>(), true),
                    (Atom::Max(v), 1) => (v.iter().map(|a| rest.add(a)).collect(), false),
                    (Atom::Min(v), _) => (v.iter().map(|a| rest.sub(a)).collect(), false),
                    (Atom::Max(v), _) => (v.iter().map(|a| rest.sub(a)).collect(), true),
                    _ => unreachable!("a min or max"),
                };
                return min_max(&args, is_min);
            }
        }
    }
    SymExpr::raw(p)
}

/// The largest divisor whose multiples floor division and modulo take out of a constant
/// numerator term: beyond it, the remainder could leave the numerator no headroom in i64.
const REDUCE_LIMIT: u64 = 1 << 32;

pub(super) fn min_max(args: &[SymExpr], is_min: bool) -> SymExpr {
    assert!(!args.is_empty(), "min/max of nothing");
    let mut flat: Vec<SymExpr> = vec![];
    let mut konst: Option<i64> = None;
    for a in args {
        let nested = match (a.single_atom(), is_min) {
            (Some(Atom::Min(v)), true) | (Some(Atom::Max(v)), false) => v.clone(),
            _ => vec![a.clone()],
        };
        for x in nested {
            match x.as_const() {
                Some(c) => konst = Some(konst.map_or(c, |k| if is_min { k.min(c) } else { k.max(c) })),
                None => flat.push(x),
            }
        }
    }
    if let Some(c) = konst {
        flat.push(SymExpr::constant(c));
    }
    flat.sort();
    flat.dedup();
    // Drop every argument another one provably bounds (for min: x with some y <= x).
    let asm = Assumptions::default();
    let mut kept: Vec<SymExpr> = vec![];
    for x in flat {
        let dominated = |y: &SymExpr, x: &SymExpr| {
            // min: y <= x makes x redundant; max: y >= x.
            let (lo, _) = if is_min { diff_interval(x, y, &asm) } else { diff_interval(y, x, &asm) };
            lo >= 0
        };
        if kept.iter().any(|y| dominated(y, &x)) {
            continue;
        }
        kept.retain(|y| !dominated(&x, y));
        kept.push(x);
    }
    if kept.len() == 1 {
        return kept.pop().expect("one");
    }
    kept.sort();
    SymExpr::of_atom(if is_min { Atom::Min(kept) } else { Atom::Max(kept) })
}

/// Terms in printed order: those with a `min` or `max` first (so that reading the text back
/// adds the others to two of them, which moves nothing into either), then by sign, positive
/// first, each group in canonical order.
pub(super) fn print_order(p: &Poly) -> Vec<usize> {
    let minmax = |i: &usize| p.terms[*i].0.iter().any(|a| matches!(a, Atom::Min(_) | Atom::Max(_)));
    let mut v: Vec<usize> = vec![];
    for group in [true, false] {
        let of_group = |i: &usize| minmax(i) == group;
        v.extend((0..p.terms.len()).filter(of_group).filter(|&i| p.terms[i].1 > 0));
        v.extend((0..p.terms.len()).filter(of_group).filter(|&i| p.terms[i].1 < 0));
    }
    v
}
