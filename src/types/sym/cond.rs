//! The conditions of `select`: comparisons, normalized, decided under assumptions.

use super::bounds::{Assumptions, diff_interval};
use super::eval::Env;
use super::poly::finalize;
use super::{Atom, CmpOp, Cond, Poly, SymExpr};

impl CmpOp {
    pub(super) fn text(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Eq => "==",
        }
    }

    pub(super) fn holds(self, a: i128, b: i128) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Eq => a == b,
        }
    }
}

impl Cond {
    /// `a < b`.
    pub fn lt(a: &SymExpr, b: &SymExpr) -> Cond {
        Cond::new(CmpOp::Lt, a, b)
    }

    /// `a <= b`.
    pub fn le(a: &SymExpr, b: &SymExpr) -> Cond {
        Cond::new(CmpOp::Le, a, b)
    }

    /// `a == b`.
    pub fn eq(a: &SymExpr, b: &SymExpr) -> Cond {
        Cond::new(CmpOp::Eq, a, b)
    }

    /// The condition, normalized: normalizing it again changes nothing.
    pub fn new(op: CmpOp, a: &SymExpr, b: &SymExpr) -> Cond {
        // One pass is a fixed point except where a constant could not move for overflow and
        // a later step made it movable (`C - a < 1` near `i64::MIN`): a few passes settle it.
        // Every other pass ends with no constant beside the symbols of a side facing a constant
        // side, so only such a condition is normalized again.
        let mut cond = Cond::normalize_once(op, a, b);
        for _ in 0..3 {
            if !cond.constant_left_to_move() {
                break;
            }
            let again = Cond::normalize_once(cond.op, &cond.lhs, &cond.rhs);
            if again == cond {
                break;
            }
            cond = again;
        }
        cond
    }

    /// Whether a side with symbols still holds a constant term while the other is a constant.
    fn constant_left_to_move(&self) -> bool {
        let stuck = |side: &SymExpr, other: &SymExpr| {
            side.as_const().is_none() && side.0.constant != 0 && other.as_const().is_some()
        };
        stuck(&self.lhs, &self.rhs) || stuck(&self.rhs, &self.lhs)
    }

    /// One pass of [`new`](Self::new)'s rules.
    fn normalize_once(op: CmpOp, a: &SymExpr, b: &SymExpr) -> Cond {
        let (mut op, mut lhs, mut rhs) = (op, a.clone(), b.clone());
        // Move the constant of the left side to a constant right side, and the other way round.
        if let Some(c) = rhs.as_const()
            && lhs.as_const().is_none()
        {
            let k = lhs.0.constant;
            if let Some(c2) = c.checked_sub(k) {
                lhs = finalize(Poly { constant: 0, terms: lhs.0.terms.clone() });
                rhs = SymExpr::constant(c2);
            }
            let c = rhs.as_const().expect("constant");
            if op == CmpOp::Lt
                && let Some(c1) = c.checked_sub(1)
            {
                (op, rhs) = (CmpOp::Le, SymExpr::constant(c1));
            }
            if op == CmpOp::Le {
                let c = rhs.as_const().expect("constant");
                match lhs.single_atom() {
                    // max(args) <= c: an argument that is a constant at most c says nothing.
                    Some(Atom::Max(args)) => {
                        let rest: Vec<SymExpr> =
                            args.iter().filter(|a| a.as_const().is_none_or(|v| v > c)).cloned().collect();
                        if rest.len() < args.len() && !rest.is_empty() {
                            return Cond::new(op, &SymExpr::max(&rest), &rhs);
                        }
                    }
                    // x // d <= c  ⇔  x <= c*d + d - 1 (d > 0).
                    Some(Atom::FloorDiv(x, d)) => {
                        if let Some(d) = d.as_const().filter(|&d| d > 0)
                            && let Some(bound) = c.checked_mul(d).and_then(|v| v.checked_add(d - 1))
                        {
                            return Cond::new(op, x, &SymExpr::constant(bound));
                        }
                    }
                    _ => {}
                }
            }
        } else if let Some(c) = lhs.as_const()
            && rhs.as_const().is_none()
        {
            let k = rhs.0.constant;
            if let Some(c2) = c.checked_sub(k) {
                rhs = finalize(Poly { constant: 0, terms: rhs.0.terms.clone() });
                lhs = SymExpr::constant(c2);
            }
            // c < x  ⇔  c+1 <= x.
            if op == CmpOp::Lt
                && let Some(c1) = lhs.as_const().and_then(|c| c.checked_add(1))
            {
                (op, lhs) = (CmpOp::Le, SymExpr::constant(c1));
            }
        }
        if op == CmpOp::Eq && rhs < lhs {
            std::mem::swap(&mut lhs, &mut rhs);
        }
        Cond { op, lhs, rhs }
    }

    pub fn op(&self) -> CmpOp {
        self.op
    }

    pub fn lhs(&self) -> &SymExpr {
        &self.lhs
    }

    pub fn rhs(&self) -> &SymExpr {
        &self.rhs
    }

    /// Whether the condition holds for every binding the assumptions allow (`Some(true)`), for
    /// none (`Some(false)`), or unknown.
    pub fn decide(&self, asm: &Assumptions) -> Option<bool> {
        // Bounds on rhs - lhs: of the difference when it normalizes, else of the sides apart.
        let (lo, hi) = diff_interval(&self.rhs, &self.lhs, asm);
        match self.op {
            CmpOp::Lt if lo >= 1 => Some(true),
            CmpOp::Lt if hi <= 0 => Some(false),
            CmpOp::Le if lo >= 0 => Some(true),
            CmpOp::Le if hi < 0 => Some(false),
            CmpOp::Eq if lo == 0 && hi == 0 => Some(true),
            CmpOp::Eq if lo > 0 || hi < 0 => Some(false),
            _ => None,
        }
    }

    /// Whether the condition holds under `env`, both sides evaluated as generated code does
    /// ([`SymExpr::eval_i64`]); `None` when a side is undefined there.
    pub fn eval_i64(&self, env: &Env) -> Option<bool> {
        let (a, b) = (self.lhs.eval_i64(env)?, self.rhs.eval_i64(env)?);
        Some(self.op.holds(a as i128, b as i128))
    }
}
