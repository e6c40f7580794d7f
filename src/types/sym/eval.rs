//! Evaluation: the exact value ([`SymExpr::eval`]) and the value as generated code computes it
//! ([`SymExpr::eval_i64`]).

use std::collections::BTreeMap;

use super::poly::print_order;
use super::{Atom, MAX_DIM, RawOp, Sym, SymExpr, fits, py_div, py_mod};

/// Values for symbols.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Env {
    values: BTreeMap<Sym, i64>,
}

impl Env {
    pub fn new() -> Env {
        Env::default()
    }

    /// Binds dimension `name`.
    pub fn dim(mut self, name: &str, v: i64) -> Env {
        self.values.insert(Sym::Dim(name.into()), v);
        self
    }

    /// Binds the 0-d scalar `name`.
    pub fn scalar(mut self, name: &str, v: i64) -> Env {
        self.values.insert(Sym::Scalar { name: name.into(), index: None }, v);
        self
    }

    /// Binds any symbol.
    pub fn bind(&mut self, s: Sym, v: i64) {
        self.values.insert(s, v);
    }

    pub fn get(&self, s: &Sym) -> Option<i64> {
        self.values.get(s).copied()
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Exact,
    I64,
}

impl SymExpr {
    /// The exact value (see the module documentation), or `None`.
    pub fn eval(&self, env: &Env) -> Option<i64> {
        self.eval_with(&|s| env.get(s))
    }

    /// [`SymExpr::eval`] with a lookup function.
    pub fn eval_with(&self, env: &dyn Fn(&Sym) -> Option<i64>) -> Option<i64> {
        fits(self.ev(env, Mode::Exact)?)
    }

    /// The value with every intermediate of the normal form checked in i64, as generated code
    /// computes it: each term in printed order, then the constant, each term its
    /// coefficient times its atoms left to right. `Some` only with the value of [`SymExpr::eval`].
    pub fn eval_i64(&self, env: &Env) -> Option<i64> {
        fits(self.ev(&|s| env.get(s), Mode::I64)?)
    }

    /// The value in i128: atoms' operands and results must fit (in i64 for `Mode::I64`); in
    /// `Mode::Exact` a sum of products is computed exactly, however large its terms.
    fn ev(&self, env: &dyn Fn(&Sym) -> Option<i64>, mode: Mode) -> Option<i128> {
        if mode == Mode::Exact {
            let mut acc = Big::from_i128(0);
            for i in print_order(&self.0) {
                let (m, c) = &self.0.terms[i];
                let mut prod = Big::from_i128(*c as i128);
                for a in m {
                    prod = prod.mul_i128(eval_atom(a, env, mode)?);
                }
                acc = acc.add(&prod);
            }
            return acc.add(&Big::from_i128(self.0.constant as i128)).to_i128();
        }
        let fit = |v: i128| fits(v).map(i128::from);
        let mut acc = 0i128;
        for i in print_order(&self.0) {
            let (m, c) = &self.0.terms[i];
            let mut prod = *c as i128;
            for a in m {
                prod = fit(prod.checked_mul(eval_atom(a, env, mode)?)?)?;
            }
            acc = fit(acc.checked_add(prod)?)?;
        }
        fit(acc.checked_add(self.0.constant as i128)?)
    }
}

/// A signed integer of any size: the exact sum of a polynomial's terms, whose products may
/// exceed i128 even where the sum is small (`K*N*a - K*N*a'` with `a == a'`).
#[derive(Debug, Clone, PartialEq)]
struct Big {
    neg: bool,
    /// Little-endian 32-bit limbs, no high zero limb; zero is empty (and not negative).
    mag: Vec<u32>,
}

impl Big {
    fn from_i128(v: i128) -> Big {
        let (mut m, mut mag) = (v.unsigned_abs(), vec![]);
        while m != 0 {
            mag.push(m as u32);
            m >>= 32;
        }
        Big { neg: v < 0, mag }
    }

    fn trimmed(mut self) -> Big {
        while self.mag.last() == Some(&0) {
            self.mag.pop();
        }
        if self.mag.is_empty() {
            self.neg = false;
        }
        self
    }

    fn to_i128(&self) -> Option<i128> {
        if self.mag.len() > 4 {
            return None;
        }
        let m = self.mag.iter().rev().fold(0u128, |m, &l| (m << 32) | l as u128);
        if self.neg { (m <= 1 << 127).then(|| (m as i128).wrapping_neg()) } else { i128::try_from(m).ok() }
    }

    fn mul_i128(&self, v: i128) -> Big {
        let b = Big::from_i128(v);
        let mut mag = vec![0u32; self.mag.len() + b.mag.len()];
        for (i, &x) in self.mag.iter().enumerate() {
            let mut carry = 0u64;
            for (j, &y) in b.mag.iter().enumerate() {
                let t = mag[i + j] as u64 + x as u64 * y as u64 + carry;
                mag[i + j] = t as u32;
                carry = t >> 32;
            }
            mag[i + b.mag.len()] = carry as u32;
        }
        Big { neg: self.neg != b.neg, mag }.trimmed()
    }

    fn add(&self, o: &Big) -> Big {
        let limb = |v: &[u32], i: usize| v.get(i).copied().unwrap_or(0) as i64;
        let n = self.mag.len().max(o.mag.len());
        if self.neg == o.neg {
            let (mut mag, mut carry) = (Vec::with_capacity(n + 1), 0i64);
            for i in 0..n {
                let t = limb(&self.mag, i) + limb(&o.mag, i) + carry;
                mag.push(t as u32);
                carry = t >> 32;
            }
            mag.push(carry as u32);
            return Big { neg: self.neg, mag }.trimmed();
        }
        // Opposite signs: the larger magnitude minus the smaller, with the larger one's sign.
        let cmp =
            self.mag.len().cmp(&o.mag.len()).then_with(|| self.mag.iter().rev().cmp(o.mag.iter().rev()));
        let (big, small) = if cmp.is_ge() { (self, o) } else { (o, self) };
        let (mut mag, mut borrow) = (Vec::with_capacity(n), 0i64);
        for i in 0..n {
            let mut t = limb(&big.mag, i) - limb(&small.mag, i) - borrow;
            borrow = i64::from(t < 0);
            if t < 0 {
                t += 1 << 32;
            }
            mag.push(t as u32);
        }
        Big { neg: big.neg, mag }.trimmed()
    }
}

fn eval_atom(a: &Atom, env: &dyn Fn(&Sym) -> Option<i64>, mode: Mode) -> Option<i128> {
    let fit = |v: i128| if mode == Mode::I64 { fits(v).map(i128::from) } else { Some(v) };
    match a {
        Atom::Sym(s) => {
            let v = env(s)?;
            if matches!(s, Sym::Dim(_)) && !(0..=MAX_DIM).contains(&v) {
                return None;
            }
            Some(v as i128)
        }
        Atom::FloorDiv(x, d) => fit(py_div(x.ev(env, mode)?, d.ev(env, mode)?)?),
        Atom::Mod(x, d) => fit(py_mod(x.ev(env, mode)?, d.ev(env, mode)?)?),
        Atom::Min(v) | Atom::Max(v) => {
            let vals = v.iter().map(|x| x.ev(env, mode)).collect::<Option<Vec<_>>>()?;
            if matches!(a, Atom::Min(_)) { vals.into_iter().min() } else { vals.into_iter().max() }
        }
        Atom::Select(c, t, e) => {
            if c.op.holds(c.lhs.ev(env, mode)?, c.rhs.ev(env, mode)?) {
                t.ev(env, mode)
            } else {
                e.ev(env, mode)
            }
        }
        Atom::Raw(op, x, y) => {
            let (x, y) = (x.ev(env, mode)?, y.ev(env, mode)?);
            fit(match op {
                RawOp::Add => x.checked_add(y)?,
                RawOp::Sub => x.checked_sub(y)?,
                RawOp::Mul => x.checked_mul(y)?,
            })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn evaluation_is_checked() {
        let env = Env::new().dim("N", 5).scalar("k", i64::MIN);
        assert_eq!(p("N*N - 1").eval(&env), Some(24));
        assert_eq!(p("N // (N - 5)").eval(&env), None);
        assert_eq!(p("N % (N - 5)").eval(&env), None);
        assert_eq!(p("k[()] - 1").eval(&env), None);
        assert_eq!(p("k[()] + N").eval(&env), Some(i64::MIN + 5));
        assert_eq!(p("k[()] // -1").eval(&env), None);
        assert_eq!(p("M").eval(&env), None);
        assert_eq!(p("9223372036854775807 + 1").eval(&env), None);
        assert_eq!(p("N").eval(&Env::new().dim("N", -1)), None);
        // Exact where an i64 intermediate overflows, and eval_i64 refuses it.
        let e = p("2*N - M");
        let env = Env::new().dim("N", 1 << 62).dim("M", 1 << 62);
        assert_eq!(e.eval(&env), Some(1 << 62));
        assert_eq!(e.eval_i64(&env), None);
    }

    proptest! {
        /// The exact sums agree with i128 arithmetic where it does not overflow.
        #[test]
        fn big_integers(a in any::<i64>(), b in any::<i64>(), c in any::<i128>(), d in any::<i128>()) {
            let (a, b) = (a as i128, b as i128);
            prop_assert_eq!(Big::from_i128(c).to_i128(), Some(c));
            prop_assert_eq!(Big::from_i128(a).mul_i128(b).to_i128(), Some(a * b));
            prop_assert_eq!(Big::from_i128(c).add(&Big::from_i128(d)).to_i128(), c.checked_add(d));
            let huge = Big::from_i128(c).mul_i128(i128::MAX);
            prop_assert_eq!(huge.add(&Big::from_i128(c).mul_i128(i128::MAX).mul_i128(-1)).to_i128(), Some(0));
            prop_assert_eq!(huge.add(&Big::from_i128(d)).to_i128(), c.checked_mul(i128::MAX).and_then(|x| x.checked_add(d)));
        }
    }
}
