//! Symbolic integer expressions: the integers of shape-generic kernels (docs/design/shape-generic.md).
//!
//! A [`SymExpr`] is an immutable integer expression over dimension symbols (`N`: a tensor's
//! dimension, non-negative and at most [`MAX_DIM`]) and run-time scalars (`k[()]`: a 0-d integer
//! input; `k[2]`: element 2 of a 1-d one; any i64), built from constants, `+ - *`, Python floor
//! division `//` and modulo `%`, `min`, `max` and `select` (`(a if c else b)`, `c` a comparison
//! `<`, `<=` or `==` of two expressions). Cloning is an `Arc` clone.
//!
//! **Normal form.** The constructors fold and normalize: an expression is a sum of products
//! (integer coefficients over sorted *atoms*: symbols, and the non-polynomial operations), so
//! `N-1+1` is `N`, `2*N-N` is `N`, `(N+M)-M` is `N`, and expressions equal by these rules compare
//! and hash equal. An expression of constants is a constant. Besides, `min`/`max` flatten, sort,
//! drop duplicates and every argument another one provably bounds; a sum with a single `min` or
//! `max` term moves into its arguments (`N - min(1, N)` is `max(0, N-1)`); floor division by a
//! constant takes out the terms it divides and the constant's quotient (`(2*N+M-3)//2` is
//! `N + (M+1)//2 - 2`), distributes over `min`/`max`, and nests
//! (`N//2//3` is `N//6`); `N - 2*(N//2)` is `N%2`; a `select` whose condition is decided
//! (dimensions are ≥ 0) is its branch,
//! and `(a if a <= b else b)` is `min(a, b)`. Equality is sound, not complete: expressions that
//! compare unequal may still always have the same value.
//!
//! **Semantics.** [`SymExpr::eval`] gives the exact integer value, or `None` where a divisor is 0,
//! a binding is missing (or a dimension is bound outside `[0, MAX_DIM]`), or an operand of a
//! division, modulo, comparison, `min` or `max` leaves i128 (sums of products are exact at any
//! size); the result must fit in i64. It never wraps. Normalization is a
//! refinement of evaluating the expression as built, with every step checked in i64: wherever that
//! is defined, `eval` gives the same value (where it is not — `(N+M)-M` when `N+M` overflows,
//! `(a//0)*0` — the normal form may have a value). [`SymExpr::eval_i64`] evaluates the normal
//! form as generated code would, every intermediate checked in i64 (in the order the normal form
//! is printed, the constant last); it may fail where `eval` does not, never gives another value.
//! A constant operation that overflows i64 (`9223372036854775807 + 1`) is kept as written, and
//! evaluates to `None`.
//!
//! **Bounds.** [`SymExpr::interval`] bounds the value under [`Assumptions`] (dimensions in
//! `[0, MAX_DIM]`, optional bounds per symbol, narrowed by [`Assumptions::assume`] from a
//! condition known to hold or not); [`SymExpr::simplify`] rebuilds an expression under them, and
//! [`SymExpr::prove_le`] / [`SymExpr::prove_nonnegative`] answer through both: sound, `None`
//! when unsure.
//!
//! **Text.** `Display` prints the readable form (`max(0, N//2-1)`, `M*N`, `(0 if N <= 1 else 1)`,
//! `k[()]`); [`SymExpr::parse`] reads it back, and `parse(print(e)) == e`. `//` is Python's floor
//! division and `%` Python's modulo (the result takes the divisor's sign), as in the language.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Arc;

/// The largest value a dimension symbol takes. Normalization and interval reasoning assume it (a
/// shape function refuses larger dimensions at call time): a tensor with a larger dimension
/// and any element at all would take more than 4 EiB.
pub const MAX_DIM: i64 = 1 << 62;

/// The most terms a product distributes into; a larger product is kept as written, so that
/// expressions stay small whatever text is parsed.
const MAX_TERMS: usize = 256;

/// How deeply [`SymExpr::parse`] nests (parentheses, calls, unary minus).
const MAX_PARSE_DEPTH: usize = 200;

/// A symbol: a dimension (≥ 0) or a run-time integer scalar (any i64).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Sym {
    /// A named dimension: `N`.
    Dim(Arc<str>),
    /// A run-time scalar input: `k[()]` (0-d) or `k[2]` (element 2 of a 1-d tensor).
    Scalar { name: Arc<str>, index: Option<u32> },
}

impl fmt::Display for Sym {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Sym::Dim(n) => write!(f, "{n}"),
            Sym::Scalar { name, index: None } => write!(f, "{name}[()]"),
            Sym::Scalar { name, index: Some(i) } => write!(f, "{name}[{i}]"),
        }
    }
}

const KEYWORDS: &[&str] = &["min", "max", "if", "else"];

fn is_name(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !KEYWORDS.contains(&s)
}

/// A comparison operator of a `select` condition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum CmpOp {
    Lt,
    Le,
    Eq,
}

impl CmpOp {
    fn text(self) -> &'static str {
        match self {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Eq => "==",
        }
    }

    fn holds(self, a: i128, b: i128) -> bool {
        match self {
            CmpOp::Lt => a < b,
            CmpOp::Le => a <= b,
            CmpOp::Eq => a == b,
        }
    }
}

/// A condition `lhs OP rhs`, normalized: a constant side is moved right where possible
/// (`N-1 <= 0` is `N <= 1`), `a < c` with a constant `c` is `a <= c-1`, `==` orders its sides.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Cond {
    op: CmpOp,
    lhs: SymExpr,
    rhs: SymExpr,
}

/// An immutable, normalized integer expression (see the module documentation).
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct SymExpr(Arc<Poly>);

/// `constant + Σ coef·Π atoms`. Invariant: terms sorted by monomial, monomials distinct, sorted
/// and non-empty, coefficients non-zero.
#[derive(Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Clone)]
struct Poly {
    constant: i64,
    terms: Vec<(Vec<Atom>, i64)>,
}

/// A factor of a term of the normal form: what code generation walks (through
/// [`SymExpr::terms`]). Only this module makes expressions of them.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Atom {
    Sym(Sym),
    /// Python's `x // d`.
    FloorDiv(SymExpr, SymExpr),
    /// Python's `x % d`.
    Mod(SymExpr, SymExpr),
    /// At least two arguments, sorted.
    Min(Vec<SymExpr>),
    Max(Vec<SymExpr>),
    /// `(then if cond else otherwise)`: only the chosen branch is evaluated.
    Select(Box<Cond>, SymExpr, SymExpr),
    /// An operation kept as written because normalizing it overflowed i64 (a coefficient or a
    /// constant). Commutative ones have their operands sorted.
    Raw(RawOp, SymExpr, SymExpr),
}

/// The operation of an [`Atom::Raw`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum RawOp {
    Add,
    Sub,
    Mul,
}

/// Python's floor division in i128; `None` for a zero divisor or overflow.
fn py_div(a: i128, b: i128) -> Option<i128> {
    let q = a.checked_div(b)?;
    if a % b != 0 && ((a < 0) != (b < 0)) { q.checked_sub(1) } else { Some(q) }
}

/// Python's `%` in i128; `None` for a zero divisor.
fn py_mod(a: i128, b: i128) -> Option<i128> {
    if b == 0 {
        return None;
    }
    let r = a.checked_rem(b).unwrap_or(0);
    Some(if r != 0 && ((r < 0) != (b < 0)) { r + b } else { r })
}

fn fits(v: i128) -> Option<i64> {
    i64::try_from(v).ok()
}

// ---------------------------------------------------------------------------------------------
// Construction

impl Poly {
    fn constant(c: i64) -> Poly {
        Poly { constant: c, terms: vec![] }
    }

    fn atom(a: Atom) -> Poly {
        Poly { constant: 0, terms: vec![(vec![a], 1)] }
    }

    /// `self + sign*other`, or `None` when a coefficient overflows.
    fn add(&self, other: &Poly, sign: i64) -> Option<Poly> {
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
    fn mul(&self, other: &Poly) -> Option<Poly> {
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
    fn split_divisible(&self, d: i64) -> (Poly, Poly) {
        let (c, q) = match py_div(self.constant as i128, d as i128) {
            Some(q) if d.unsigned_abs() <= REDUCE_LIMIT => (self.constant as i128 - q * d as i128, q),
            _ => (self.constant as i128, 0),
        };
        let (mut rest, mut quot) = (Poly::constant(c as i64), Poly::constant(q as i64));
        for (m, c) in &self.terms {
            if c % d == 0 {
                quot.terms.push((m.clone(), c / d));
            } else {
                rest.terms.push((m.clone(), *c));
            }
        }
        (rest, quot)
    }
}

impl SymExpr {
    fn raw(p: Poly) -> SymExpr {
        SymExpr(Arc::new(p))
    }

    fn of_atom(a: Atom) -> SymExpr {
        SymExpr::raw(Poly::atom(a))
    }

    /// A constant.
    pub fn constant(c: i64) -> SymExpr {
        SymExpr::raw(Poly::constant(c))
    }

    /// A dimension symbol. Panics unless `name` is an identifier other than `min`, `max`, `if`,
    /// `else`.
    pub fn dim(name: &str) -> SymExpr {
        assert!(is_name(name), "`{name}` is not a dimension name");
        SymExpr::of_atom(Atom::Sym(Sym::Dim(name.into())))
    }

    /// A 0-d run-time scalar input (`k[()]`). Panics on a name as [`SymExpr::dim`] does.
    pub fn scalar(name: &str) -> SymExpr {
        assert!(is_name(name), "`{name}` is not a scalar name");
        SymExpr::of_atom(Atom::Sym(Sym::Scalar { name: name.into(), index: None }))
    }

    /// Element `index` of a 1-d run-time scalar input (`k[2]`).
    pub fn scalar_elem(name: &str, index: u32) -> SymExpr {
        assert!(is_name(name), "`{name}` is not a scalar name");
        SymExpr::of_atom(Atom::Sym(Sym::Scalar { name: name.into(), index: Some(index) }))
    }

    /// The expression of one symbol.
    pub fn sym(s: Sym) -> SymExpr {
        match &s {
            Sym::Dim(n) | Sym::Scalar { name: n, .. } => assert!(is_name(n), "`{n}` is not a name"),
        }
        SymExpr::of_atom(Atom::Sym(s))
    }

    /// The value of a constant expression.
    pub fn as_const(&self) -> Option<i64> {
        self.0.terms.is_empty().then_some(self.0.constant)
    }

    /// The symbol, if the expression is exactly one.
    pub fn as_sym(&self) -> Option<&Sym> {
        match self.single_atom() {
            Some(Atom::Sym(s)) => Some(s),
            _ => None,
        }
    }

    /// The atom, if the expression is exactly one (coefficient 1, no constant).
    fn single_atom(&self) -> Option<&Atom> {
        match (&self.0.terms[..], self.0.constant) {
            ([(m, 1)], 0) if m.len() == 1 => Some(&m[0]),
            _ => None,
        }
    }

    /// The symbols the expression reads, sorted, each once.
    pub fn symbols(&self) -> Vec<Sym> {
        let mut out = vec![];
        self.collect_symbols(&mut out);
        out.sort();
        out.dedup();
        out
    }

    /// The constant term of the normal form.
    pub fn constant_term(&self) -> i64 {
        self.0.constant
    }

    /// The non-constant terms `(coefficient, atoms)` in evaluation order (the printed order):
    /// the value is `Σ coefficient·Π atoms + constant_term()`, and [`SymExpr::eval_i64`]
    /// computes it in this order.
    pub fn terms(&self) -> impl Iterator<Item = (i64, &[Atom])> {
        print_order(&self.0).into_iter().map(|i| (self.0.terms[i].1, &self.0.terms[i].0[..]))
    }

    /// The expression with symbols replaced (`f` gives `None` to keep one), rebuilt through the
    /// constructors, so that replacing every symbol by a constant folds to a constant wherever
    /// [`SymExpr::eval_i64`] is defined with those values.
    pub fn subst(&self, f: &dyn Fn(&Sym) -> Option<SymExpr>) -> SymExpr {
        let mut acc = SymExpr::constant(0);
        for (c, atoms) in self.terms() {
            let mut prod = SymExpr::constant(c);
            for a in atoms {
                prod = prod.mul(&subst_atom(a, f));
            }
            acc = acc.add(&prod);
        }
        acc.add_const(self.0.constant)
    }

    fn collect_symbols(&self, out: &mut Vec<Sym>) {
        for (m, _) in &self.0.terms {
            for a in m {
                match a {
                    Atom::Sym(s) => out.push(s.clone()),
                    Atom::FloorDiv(x, y) | Atom::Mod(x, y) | Atom::Raw(_, x, y) => {
                        x.collect_symbols(out);
                        y.collect_symbols(out);
                    }
                    Atom::Min(v) | Atom::Max(v) => v.iter().for_each(|x| x.collect_symbols(out)),
                    Atom::Select(c, x, y) => {
                        c.lhs.collect_symbols(out);
                        c.rhs.collect_symbols(out);
                        x.collect_symbols(out);
                        y.collect_symbols(out);
                    }
                }
            }
        }
    }

    fn raw_op(op: RawOp, a: &SymExpr, b: &SymExpr) -> SymExpr {
        let (a, b) = if op != RawOp::Sub && b < a { (b, a) } else { (a, b) };
        SymExpr::of_atom(Atom::Raw(op, a.clone(), b.clone()))
    }

    /// `self + other`.
    pub fn add(&self, other: &SymExpr) -> SymExpr {
        match self.0.add(&other.0, 1) {
            Some(p) => finalize(p),
            None => SymExpr::raw_op(RawOp::Add, self, other),
        }
    }

    /// `self - other`.
    pub fn sub(&self, other: &SymExpr) -> SymExpr {
        match self.0.add(&other.0, -1) {
            Some(p) => finalize(p),
            None => SymExpr::raw_op(RawOp::Sub, self, other),
        }
    }

    /// `self * other`.
    pub fn mul(&self, other: &SymExpr) -> SymExpr {
        match self.0.mul(&other.0) {
            Some(p) => finalize(p),
            None => SymExpr::raw_op(RawOp::Mul, self, other),
        }
    }

    /// `-self`.
    pub fn neg(&self) -> SymExpr {
        SymExpr::constant(0).sub(self)
    }

    /// `self + c`.
    pub fn add_const(&self, c: i64) -> SymExpr {
        self.add(&SymExpr::constant(c))
    }

    /// Python's `self // d`.
    pub fn floor_div(&self, d: &SymExpr) -> SymExpr {
        let keep = || SymExpr::of_atom(Atom::FloorDiv(self.clone(), d.clone()));
        let Some(dc) = d.as_const() else { return keep() };
        if dc == 0 {
            return keep();
        }
        if let Some(a) = self.as_const() {
            return match py_div(a as i128, dc as i128).and_then(fits) {
                Some(q) => SymExpr::constant(q),
                None => keep(),
            };
        }
        if dc == 1 {
            return self.clone();
        }
        if dc == -1 {
            return self.neg();
        }
        // (d*q + r) // d == q + r // d.
        let (rest, quot) = self.0.split_divisible(dc);
        if !quot.terms.is_empty() || quot.constant != 0 {
            return finalize(quot).add(&finalize(rest).floor_div(d));
        }
        match self.single_atom() {
            // Floor division by a constant is monotone: it distributes over min and max.
            Some(Atom::Min(args)) | Some(Atom::Max(args)) => {
                let parts: Vec<SymExpr> = args.iter().map(|a| a.floor_div(d)).collect();
                let is_min = matches!(self.single_atom(), Some(Atom::Min(_)));
                return if is_min == (dc > 0) { SymExpr::min(&parts) } else { SymExpr::max(&parts) };
            }
            // x // a // b == x // (a*b) for positive a and b.
            Some(Atom::FloorDiv(x, a)) if dc > 0 => {
                if let Some(ab) = a.as_const().filter(|&a| a > 0).and_then(|a| a.checked_mul(dc)) {
                    return x.floor_div(&SymExpr::constant(ab));
                }
            }
            _ => {}
        }
        let (lo, hi) = self.interval_wide(&Assumptions::default());
        if dc > 0 && lo >= 0 && hi < dc as i128 {
            return SymExpr::constant(0);
        }
        keep()
    }

    /// Python's `self % d` (the result has the divisor's sign).
    pub fn modulo(&self, d: &SymExpr) -> SymExpr {
        let keep = |x: &SymExpr| SymExpr::of_atom(Atom::Mod(x.clone(), d.clone()));
        let Some(dc) = d.as_const() else { return keep(self) };
        if dc == 0 {
            return keep(self);
        }
        if let Some(a) = self.as_const() {
            return SymExpr::constant(py_mod(a as i128, dc as i128).and_then(fits).expect("fits"));
        }
        if dc == 1 || dc == -1 {
            return SymExpr::constant(0);
        }
        let (rest, _) = self.0.split_divisible(dc);
        let x = finalize(rest);
        if let Some(a) = x.as_const() {
            return SymExpr::constant(py_mod(a as i128, dc as i128).and_then(fits).expect("fits"));
        }
        let (lo, hi) = x.interval_wide(&Assumptions::default());
        if dc > 0 && lo >= 0 && hi < dc as i128 {
            return x;
        }
        keep(&x)
    }

    /// `min(args)`; panics on an empty list.
    pub fn min(args: &[SymExpr]) -> SymExpr {
        min_max(args, true)
    }

    /// `max(args)`; panics on an empty list.
    pub fn max(args: &[SymExpr]) -> SymExpr {
        min_max(args, false)
    }

    /// `min(self, other)`.
    pub fn min2(&self, other: &SymExpr) -> SymExpr {
        SymExpr::min(&[self.clone(), other.clone()])
    }

    /// `max(self, other)`.
    pub fn max2(&self, other: &SymExpr) -> SymExpr {
        SymExpr::max(&[self.clone(), other.clone()])
    }

    /// `(then if cond else otherwise)`.
    pub fn select(cond: Cond, then: &SymExpr, otherwise: &SymExpr) -> SymExpr {
        if then == otherwise {
            return then.clone();
        }
        match cond.decide(&Assumptions::default()) {
            Some(true) => return then.clone(),
            Some(false) => return otherwise.clone(),
            None => {}
        }
        // `(a if a <= b else b)` is min(a, b); `(b if a <= b else a)` is max(a, b).
        // With integers, `a <= k` is `a < k+1`: `(a if a <= k else k+1)` is min(a, k+1) too
        // (which is how `(a if a < 5 else 5)` arrives, its condition normalized to `a <= 4`).
        if cond.op != CmpOp::Eq {
            let (a, b) = (&cond.lhs, &cond.rhs);
            let succ = b.as_const().filter(|_| cond.op == CmpOp::Le).and_then(|k| k.checked_add(1));
            let is_b = |x: &SymExpr| x == b || (succ.is_some() && x.as_const() == succ);
            if then == a && is_b(otherwise) {
                return then.min2(otherwise);
            }
            if is_b(then) && otherwise == a {
                return then.max2(otherwise);
            }
        }
        SymExpr::of_atom(Atom::Select(Box::new(cond), then.clone(), otherwise.clone()))
    }
}

fn simplify_atom(a: &Atom, asm: &Assumptions) -> SymExpr {
    match a {
        Atom::Sym(s) => match asm.of(s) {
            (lo, hi) if lo == hi => SymExpr::constant(lo as i64),
            _ => SymExpr::of_atom(a.clone()),
        },
        Atom::FloorDiv(x, d) => x.simplify(asm).floor_div(&d.simplify(asm)),
        Atom::Mod(x, d) => x.simplify(asm).modulo(&d.simplify(asm)),
        Atom::Min(v) | Atom::Max(v) => {
            let is_min = matches!(a, Atom::Min(_));
            let args: Vec<SymExpr> = v.iter().map(|x| x.simplify(asm)).collect();
            // Drop each argument another kept one bounds under the assumptions.
            let mut kept: Vec<SymExpr> = vec![];
            for x in args {
                let bounds = |y: &SymExpr, x: &SymExpr| {
                    (if is_min { diff_interval(x, y, asm) } else { diff_interval(y, x, asm) }).0 >= 0
                };
                if kept.iter().any(|y| bounds(y, &x)) {
                    continue;
                }
                kept.retain(|y| !bounds(&x, y));
                kept.push(x);
            }
            min_max(&kept, is_min)
        }
        Atom::Select(c, t, e) => {
            let c = Cond::new(c.op, &c.lhs.simplify(asm), &c.rhs.simplify(asm));
            match c.decide(asm) {
                Some(true) => t.simplify(asm),
                Some(false) => e.simplify(asm),
                None => SymExpr::select(c, &t.simplify(asm), &e.simplify(asm)),
            }
        }
        Atom::Raw(op, x, y) => {
            let (x, y) = (x.simplify(asm), y.simplify(asm));
            match op {
                RawOp::Add => x.add(&y),
                RawOp::Sub => x.sub(&y),
                RawOp::Mul => x.mul(&y),
            }
        }
    }
}

fn subst_atom(a: &Atom, f: &dyn Fn(&Sym) -> Option<SymExpr>) -> SymExpr {
    match a {
        Atom::Sym(s) => f(s).unwrap_or_else(|| SymExpr::of_atom(a.clone())),
        Atom::FloorDiv(x, d) => x.subst(f).floor_div(&d.subst(f)),
        Atom::Mod(x, d) => x.subst(f).modulo(&d.subst(f)),
        Atom::Min(v) => SymExpr::min(&v.iter().map(|x| x.subst(f)).collect::<Vec<_>>()),
        Atom::Max(v) => SymExpr::max(&v.iter().map(|x| x.subst(f)).collect::<Vec<_>>()),
        Atom::Select(c, t, e) => {
            SymExpr::select(Cond::new(c.op, &c.lhs.subst(f), &c.rhs.subst(f)), &t.subst(f), &e.subst(f))
        }
        Atom::Raw(op, x, y) => {
            let (x, y) = (x.subst(f), y.subst(f));
            match op {
                RawOp::Add => x.add(&y),
                RawOp::Sub => x.sub(&y),
                RawOp::Mul => x.mul(&y),
            }
        }
    }
}

/// Applies the rewrite that looks at a whole sum: a single `min`/`max` term (coefficient ±1)
/// takes in the rest. The result does not depend on the order the sum was built in: a sum is
/// pushed in whenever it holds one such term, and one with two keeps both (and prints them
/// first, so that reading it back builds it the same way).
fn finalize(p: Poly) -> SymExpr {
    // x - d*(x//d) is x % d (Python's identity, either sign of d): a sum holding k*x and
    // -k*d*(x//d) holds k*(x % d) instead, which bounds well (`N - 2*(N//2)` is `N%2`).
    for (m, c) in &p.terms {
        if let [Atom::FloorDiv(x, d)] = &m[..]
            && let Some(dc) = d.as_const().filter(|&dc| dc != 0 && c % dc == 0)
            && !x.0.terms.is_empty()
        {
            let k = -(c / dc);
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

/// Bounds on `a - b`: of the difference when it normalizes, else of the two apart.
fn diff_interval(a: &SymExpr, b: &SymExpr, asm: &Assumptions) -> (i128, i128) {
    match a.0.add(&b.0, -1) {
        Some(d) => interval_poly(&d, asm),
        None => {
            let (a, b) = (a.interval_wide(asm), b.interval_wide(asm));
            (a.0.saturating_sub(b.1), a.1.saturating_sub(b.0))
        }
    }
}

fn min_max(args: &[SymExpr], is_min: bool) -> SymExpr {
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

    /// The condition, normalized.
    pub fn new(op: CmpOp, a: &SymExpr, b: &SymExpr) -> Cond {
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

macro_rules! binop {
    ($tr:ident, $f:ident, $method:ident) => {
        impl std::ops::$tr<&SymExpr> for &SymExpr {
            type Output = SymExpr;
            fn $f(self, rhs: &SymExpr) -> SymExpr {
                self.$method(rhs)
            }
        }
        impl std::ops::$tr<SymExpr> for SymExpr {
            type Output = SymExpr;
            fn $f(self, rhs: SymExpr) -> SymExpr {
                (&self).$method(&rhs)
            }
        }
        impl std::ops::$tr<i64> for &SymExpr {
            type Output = SymExpr;
            fn $f(self, rhs: i64) -> SymExpr {
                self.$method(&SymExpr::constant(rhs))
            }
        }
        impl std::ops::$tr<i64> for SymExpr {
            type Output = SymExpr;
            fn $f(self, rhs: i64) -> SymExpr {
                (&self).$method(&SymExpr::constant(rhs))
            }
        }
    };
}
binop!(Add, add, add);
binop!(Sub, sub, sub);
binop!(Mul, mul, mul);

impl std::ops::Neg for &SymExpr {
    type Output = SymExpr;
    fn neg(self) -> SymExpr {
        SymExpr::neg(self)
    }
}

impl From<i64> for SymExpr {
    fn from(c: i64) -> SymExpr {
        SymExpr::constant(c)
    }
}

// ---------------------------------------------------------------------------------------------
// Evaluation

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

// ---------------------------------------------------------------------------------------------
// Bounds

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

    fn of(&self, s: &Sym) -> (i128, i128) {
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

/// Saturating bounds on the exact (i128) values of a polynomial. Saturation at i128's ends is
/// sound: evaluation fails beyond them.
fn interval_poly(p: &Poly, asm: &Assumptions) -> (i128, i128) {
    let mut acc = (p.constant as i128, p.constant as i128);
    for (m, c) in &p.terms {
        let mut prod = (*c as i128, *c as i128);
        for a in m {
            prod = imul(prod, interval_atom(a, asm));
        }
        acc = (acc.0.saturating_add(prod.0), acc.1.saturating_add(prod.1));
    }
    acc
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
    fn interval_wide(&self, asm: &Assumptions) -> (i128, i128) {
        interval_poly(&self.0, asm)
    }

    /// Sound bounds on the expression's value under the assumptions.
    pub fn interval(&self, asm: &Assumptions) -> Interval {
        let (lo, hi) = self.interval_wide(asm);
        let clamp = |v: i128| v.clamp(i64::MIN as i128, i64::MAX as i128) as i64;
        Interval { lo: clamp(lo), hi: clamp(hi) }
    }

    /// The expression rebuilt under the assumptions: symbols they pin become constants,
    /// `select`s they decide become their branch, `min`/`max` lose the arguments they show
    /// redundant. Equal to `self` for every binding the assumptions allow.
    pub fn simplify(&self, asm: &Assumptions) -> SymExpr {
        let mut acc = SymExpr::constant(0);
        for (c, atoms) in self.terms() {
            let mut prod = SymExpr::constant(c);
            for a in atoms {
                prod = prod.mul(&simplify_atom(a, asm));
            }
            acc = acc.add(&prod);
        }
        acc.add_const(self.0.constant)
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

// ---------------------------------------------------------------------------------------------
// NumPy's slice normalization

/// A normalized slice in symbols: elements `first + j*step` for `j < len`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SymRange {
    pub first: SymExpr,
    pub step: i64,
    pub len: SymExpr,
}

/// NumPy / CPython slice normalization (`PySlice_AdjustIndices`) of a dimension `n` with bounds
/// that are expressions (constants or run-time scalars) and a constant step, exactly as
/// `sema::shape::normalize_numpy`, `len == 0 ⇒ first == 0` included: for every binding, the
/// values are that function's. No intermediate of the result leaves i64 (its [`SymExpr::eval_i64`]
/// is defined wherever `n` is a dimension up to [`MAX_DIM`] and the bounds are i64).
/// `step` must not be 0.
pub fn normalize_numpy(
    n: &SymExpr,
    start: Option<&SymExpr>,
    stop: Option<&SymExpr>,
    step: Option<i64>,
) -> SymRange {
    let k = step.unwrap_or(1).max(-i64::MAX);
    assert!(k != 0, "step 0");
    let zero = SymExpr::constant(0);
    let (lo, hi) = if k < 0 { (SymExpr::constant(-1), n - 1) } else { (zero.clone(), n.clone()) };
    // v < 0: v + n clamped below; else v clamped above. v + n is formed only for v < 0.
    let adjust = |v: &SymExpr| SymExpr::select(Cond::lt(v, &zero), &lo.max2(&(v + n)), &v.min2(&hi));
    let first = start.map_or_else(|| if k < 0 { n - 1 } else { zero.clone() }, adjust);
    let end = stop.map_or_else(|| if k < 0 { SymExpr::constant(-1) } else { n.clone() }, adjust);
    // The count as CPython computes it when it is positive; ≤ 0 exactly when the slice is empty.
    let raw = if k > 0 {
        (&end - &first - 1).floor_div(&SymExpr::constant(k)) + 1
    } else {
        (&first - &end - 1).floor_div(&SymExpr::constant(-k)) + 1
    };
    let len = zero.max2(&raw);
    // `first` where the slice is not empty, which the clamps may not reach.
    let nonempty = match start.and_then(SymExpr::as_const) {
        // 0 <= s < end <= n.
        Some(s) if k > 0 && s >= 0 => SymExpr::constant(s),
        // -1 <= end < first = max(-1, s + n), so s + n >= 0.
        Some(s) if k < 0 && s < 0 => n.add_const(s),
        _ => first,
    };
    let first = SymExpr::select(Cond::le(&raw, &zero), &zero, &nonempty);
    SymRange { first, step: k, len }
}

// ---------------------------------------------------------------------------------------------
// Printing

/// Terms in printed order: those with a `min` or `max` first (so that reading the text back
/// adds the others to two of them, which moves nothing into either), then by sign, positive
/// first, each group in canonical order.
fn print_order(p: &Poly) -> Vec<usize> {
    let minmax = |i: &usize| p.terms[*i].0.iter().any(|a| matches!(a, Atom::Min(_) | Atom::Max(_)));
    let mut v: Vec<usize> = vec![];
    for group in [true, false] {
        let of_group = |i: &usize| minmax(i) == group;
        v.extend((0..p.terms.len()).filter(of_group).filter(|&i| p.terms[i].1 > 0));
        v.extend((0..p.terms.len()).filter(of_group).filter(|&i| p.terms[i].1 < 0));
    }
    v
}

impl SymExpr {
    /// Whether the printed form is one self-delimiting primary (a name, a non-negative constant,
    /// a call, a parenthesized form).
    fn is_primary(&self) -> bool {
        match self.as_const() {
            Some(c) => c >= 0,
            None => matches!(
                self.single_atom(),
                Some(Atom::Sym(_) | Atom::Min(_) | Atom::Max(_) | Atom::Select(..) | Atom::Raw(..))
            ),
        }
    }

    fn fmt_primary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_primary() { write!(f, "{self}") } else { write!(f, "({self})") }
    }
}

fn fmt_atom(a: &Atom, f: &mut fmt::Formatter<'_>, alone: bool) -> fmt::Result {
    match a {
        Atom::Sym(s) => write!(f, "{s}"),
        Atom::FloorDiv(x, d) | Atom::Mod(x, d) => {
            if !alone {
                write!(f, "(")?;
            }
            x.fmt_primary(f)?;
            write!(f, "{}", if matches!(a, Atom::FloorDiv(..)) { "//" } else { "%" })?;
            d.fmt_primary(f)?;
            if !alone {
                write!(f, ")")?;
            }
            Ok(())
        }
        Atom::Min(v) | Atom::Max(v) => {
            write!(f, "{}(", if matches!(a, Atom::Min(_)) { "min" } else { "max" })?;
            // Constants first: `max(0, N-1)`.
            let order = v
                .iter()
                .filter(|x| x.as_const().is_some())
                .chain(v.iter().filter(|x| x.as_const().is_none()));
            for (i, x) in order.enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{x}")?;
            }
            write!(f, ")")
        }
        Atom::Select(c, t, e) => write!(f, "({t} if {} {} {} else {e})", c.lhs, c.op.text(), c.rhs),
        Atom::Raw(op, x, y) => {
            write!(f, "(")?;
            x.fmt_primary(f)?;
            write!(f, "{}", ["+", "-", "*"][*op as usize])?;
            // Always parenthesized: the parser reads `x-(5)` as a subtraction, `x-5` as x + -5.
            if y.as_sym().is_some() {
                write!(f, "{y}")?
            } else {
                write!(f, "({y})")?
            }
            write!(f, ")")
        }
    }
}

impl fmt::Display for SymExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.0;
        let order = print_order(p);
        if order.is_empty() {
            return write!(f, "{}", p.constant);
        }
        for (n, &i) in order.iter().enumerate() {
            let (m, c) = &p.terms[i];
            let mag = (*c as i128).abs();
            if *c < 0 {
                write!(f, "-")?;
            } else if n > 0 {
                write!(f, "+")?;
            }
            // A lone atom with coefficient 1 prints bare (`M+N//2`); `-(N//2)` and `2*(N//2)` need parentheses.
            let alone = mag == 1 && m.len() == 1 && *c > 0;
            if mag != 1 {
                write!(f, "{mag}*")?;
            }
            for (j, a) in m.iter().enumerate() {
                if j > 0 {
                    write!(f, "*")?;
                }
                fmt_atom(a, f, alone)?;
            }
        }
        match p.constant {
            0 => Ok(()),
            c if c > 0 => write!(f, "+{c}"),
            c => write!(f, "-{}", (c as i128).abs()),
        }
    }
}

impl fmt::Debug for SymExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SymExpr({self})")
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.lhs, self.op.text(), self.rhs)
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i128),
    Name(String),
    P(&'static str),
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = vec![];
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let j = (i..b.len()).find(|&j| !b[j].is_ascii_digit()).unwrap_or(b.len());
            let v: i128 = s[i..j].parse().ok().filter(|&v: &i128| v <= 1 << 63).ok_or("integer too large")?;
            out.push(Tok::Int(v));
            i = j;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let j =
                (i..b.len()).find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_')).unwrap_or(b.len());
            out.push(Tok::Name(s[i..j].to_string()));
            i = j;
        } else {
            let two = ["//", "<=", "==", ">="].into_iter().find(|p| s[i..].starts_with(p));
            let one = ["+", "-", "*", "%", "(", ")", "[", "]", ",", "<", ">"]
                .into_iter()
                .find(|p| s[i..].starts_with(p));
            match two.or(one) {
                Some(p) => {
                    out.push(Tok::P(p));
                    i += p.len();
                }
                None => return Err(format!("unexpected `{c}`")),
            }
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

/// A factor of a product: a literal (which a minus in front may negate to i64::MIN) or an
/// expression.
enum Factor {
    Lit(i128),
    Expr(SymExpr),
}

impl Factor {
    fn expr(self) -> Result<SymExpr, String> {
        match self {
            Factor::Lit(v) => {
                fits(v).map(SymExpr::constant).ok_or_else(|| format!("{v} does not fit in i64"))
            }
            Factor::Expr(e) => Ok(e),
        }
    }
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::P(q)) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) { Ok(()) } else { Err(format!("expected `{p}` at token {}", self.pos)) }
    }

    fn sum(&mut self) -> Result<SymExpr, String> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return Err("expression nested too deeply".into());
        }
        let negate = self.eat("-");
        let mut acc = match self.term(negate)? {
            (t, true) => SymExpr::constant(0).sub(&t),
            (t, false) => t,
        };
        loop {
            let negate = if self.eat("+") {
                false
            } else if self.eat("-") {
                true
            } else {
                break;
            };
            acc = match self.term(negate)? {
                (t, true) => acc.sub(&t),
                (t, false) => acc.add(&t),
            };
        }
        self.depth -= 1;
        Ok(acc)
    }

    /// A product, negated when `negate`: a leading literal of a pure product takes the sign
    /// (so that `-9223372036854775808` and `N-9223372036854775808*M` read). Returns the product
    /// and whether it is still to be subtracted.
    fn term(&mut self, negate: bool) -> Result<(SymExpr, bool), String> {
        let mut items = vec![("*", self.factor()?)];
        loop {
            let op = ["*", "//", "%"].into_iter().find(|p| matches!(self.peek(), Some(Tok::P(q)) if q == p));
            let Some(op) = op else { break };
            self.pos += 1;
            items.push((op, self.factor()?));
        }
        let pure = items.iter().all(|(op, _)| *op == "*");
        let mut negate = negate;
        if negate
            && pure
            && let Factor::Lit(v) = &mut items[0].1
        {
            *v = -*v;
            negate = false;
        }
        let mut it = items.into_iter();
        let mut acc = it.next().expect("one").1.expr()?;
        for (op, x) in it {
            let x = x.expr()?;
            acc = match op {
                "*" => acc.mul(&x),
                "//" => acc.floor_div(&x),
                _ => acc.modulo(&x),
            };
        }
        Ok((acc, negate))
    }

    fn factor(&mut self) -> Result<Factor, String> {
        match self.peek().cloned() {
            Some(Tok::Int(v)) => {
                self.pos += 1;
                Ok(Factor::Lit(v))
            }
            Some(Tok::P("-")) => {
                self.pos += 1;
                self.depth += 1;
                if self.depth > MAX_PARSE_DEPTH {
                    return Err("expression nested too deeply".into());
                }
                let f = self.factor()?;
                self.depth -= 1;
                Ok(match f {
                    Factor::Lit(v) => Factor::Lit(-v),
                    Factor::Expr(e) => Factor::Expr(e.neg()),
                })
            }
            Some(Tok::P("(")) => {
                self.pos += 1;
                let e = self.sum()?;
                if matches!(self.peek(), Some(Tok::Name(n)) if n == "if") {
                    self.pos += 1;
                    let c = self.cond()?;
                    match self.peek() {
                        Some(Tok::Name(n)) if n == "else" => self.pos += 1,
                        _ => return Err("expected `else`".into()),
                    }
                    let otherwise = self.sum()?;
                    self.expect(")")?;
                    return Ok(Factor::Expr(SymExpr::select(c, &e, &otherwise)));
                }
                self.expect(")")?;
                Ok(Factor::Expr(e))
            }
            Some(Tok::Name(n)) if (n == "min" || n == "max") => {
                self.pos += 1;
                self.expect("(")?;
                let mut args = vec![self.sum()?];
                while self.eat(",") {
                    args.push(self.sum()?);
                }
                self.expect(")")?;
                Ok(Factor::Expr(if n == "min" { SymExpr::min(&args) } else { SymExpr::max(&args) }))
            }
            Some(Tok::Name(n)) if is_name(&n) => {
                self.pos += 1;
                if self.eat("[") {
                    let e = if self.eat("(") {
                        self.expect(")")?;
                        SymExpr::scalar(&n)
                    } else {
                        match self.peek().cloned() {
                            Some(Tok::Int(i)) if i <= u32::MAX as i128 => {
                                self.pos += 1;
                                SymExpr::scalar_elem(&n, i as u32)
                            }
                            _ => return Err("expected `()` or an index after `[`".into()),
                        }
                    };
                    self.expect("]")?;
                    Ok(Factor::Expr(e))
                } else {
                    Ok(Factor::Expr(SymExpr::dim(&n)))
                }
            }
            other => Err(format!("unexpected {other:?}")),
        }
    }

    fn cond(&mut self) -> Result<Cond, String> {
        let a = self.sum()?;
        let op = match self.peek() {
            Some(Tok::P(p)) => *p,
            _ => return Err("expected a comparison".into()),
        };
        self.pos += 1;
        let b = self.sum()?;
        Ok(match op {
            "<" => Cond::lt(&a, &b),
            "<=" => Cond::le(&a, &b),
            "==" => Cond::eq(&a, &b),
            ">" => Cond::lt(&b, &a),
            ">=" => Cond::le(&b, &a),
            _ => return Err(format!("expected a comparison, found `{op}`")),
        })
    }
}

impl SymExpr {
    /// Reads the printed form (and Python-like input: `>`/`>=` too). The result is normalized.
    pub fn parse(s: &str) -> Result<SymExpr, String> {
        let mut p = Parser { toks: lex(s)?, pos: 0, depth: 0 };
        let e = p.sum()?;
        if p.pos != p.toks.len() {
            return Err(format!("unexpected {:?} after the expression", p.toks[p.pos]));
        }
        Ok(e)
    }
}

impl Cond {
    /// Reads a printed condition (`N <= 5`, `-N <= k[()]`; `>` and `>=` too). Normalized.
    pub fn parse(s: &str) -> Result<Cond, String> {
        let mut p = Parser { toks: lex(s)?, pos: 0, depth: 0 };
        let c = p.cond()?;
        if p.pos != p.toks.len() {
            return Err(format!("unexpected {:?} after the condition", p.toks[p.pos]));
        }
        Ok(c)
    }
}

impl std::str::FromStr for SymExpr {
    type Err = String;
    fn from_str(s: &str) -> Result<SymExpr, String> {
        SymExpr::parse(s)
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use proptest::prelude::*;

    fn p(s: &str) -> SymExpr {
        SymExpr::parse(s).unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    fn n() -> SymExpr {
        SymExpr::dim("N")
    }

    fn m() -> SymExpr {
        SymExpr::dim("M")
    }

    #[test]
    fn linear_terms_collect() {
        assert_eq!(&n() - 1 + 1, n());
        assert_eq!(&n() * 2 - n(), n());
        assert_eq!((n() + m()) - m(), n());
        assert_eq!(n() * m(), m() * n());
        assert_eq!(n().mul(&0.into()), SymExpr::constant(0));
        assert_eq!(n().mul(&1.into()).add(&0.into()), n());
        assert_eq!((SymExpr::constant(3) * 4 - 2).as_const(), Some(10));
        assert_eq!(SymExpr::min(&[n(), n()]), n());
        assert_eq!(SymExpr::max(&[SymExpr::constant(0), n()]), n());
        assert_eq!(SymExpr::constant(7).floor_div(&SymExpr::constant(-2)).as_const(), Some(-4));
        assert_eq!(SymExpr::constant(7).modulo(&SymExpr::constant(-2)).as_const(), Some(-1));
        // Equal by normalization hashes equal.
        use std::hash::{BuildHasher, RandomState};
        let h = RandomState::new();
        assert_eq!(h.hash_one(&n() - 1 + 1), h.hash_one(n()));
        assert_eq!(h.hash_one((n() + m()) - m()), h.hash_one(n()));
        assert_ne!(n(), m());
        assert_ne!(n() + 1, n());
    }

    #[test]
    fn readable_forms() {
        assert_eq!((n() - 1).to_string(), "N-1");
        assert_eq!((m() * n()).to_string(), "M*N");
        assert_eq!((n() * 2 + m() - 3).to_string(), "M+2*N-3");
        assert_eq!((m() - n() * 2).to_string(), "M-2*N");
        assert_eq!((SymExpr::constant(0) - n() - 1).to_string(), "-N-1");
        assert_eq!(
            SymExpr::max(&[SymExpr::constant(0), (n() - 3).floor_div(&2.into())]).to_string(),
            "max(0, (N+1)//2-2)"
        );
        assert_eq!((m() + n().floor_div(&2.into())).to_string(), "M+N//2");
        assert_eq!((m() - n().floor_div(&2.into())).to_string(), "M-(N//2)");
        assert_eq!((n().floor_div(&2.into()) * 2).to_string(), "2*(N//2)");
        assert_eq!(SymExpr::scalar("k").to_string(), "k[()]");
        assert_eq!(SymExpr::scalar_elem("k", 2).to_string(), "k[2]");
        let s = SymExpr::select(Cond::le(&n(), &m()), &SymExpr::constant(0), &SymExpr::constant(1));
        assert_eq!(s.to_string(), "(0 if N <= M else 1)");
        assert_eq!(SymExpr::constant(i64::MIN).to_string(), "-9223372036854775808");
    }

    #[test]
    fn rewrites() {
        assert_eq!(p("N - min(1, N)"), p("max(0, N-1)"));
        assert_eq!(p("(2*N + M) // 2"), p("N + M//2"));
        assert_eq!(p("(N-3)//2 + 1"), p("(N+1)//2 - 1"));
        assert_eq!(p("(N-3)//2").to_string(), "(N+1)//2-2");
        assert_eq!(p("(N-4)//(-4)").to_string(), "N//(-4)+1");
        assert_eq!(p("(N+7)%4").to_string(), "(N+3)%4");
        assert_eq!(p("N//2//3"), p("N//6"));
        assert_eq!(p("N - 2*(N//2)").to_string(), "N%2");
        assert_eq!(p("3*M + 3*N - 6*((M+N)//2) + 1").to_string(), "3*((M+N)%2)+1");
        assert_eq!(p("3*M + 2*N - 6*((M+N)//2)").to_string(), "3*M+2*N-6*((M+N)//2)");
        assert_eq!(p("N - (-3)*(N//(-3))").to_string(), "N%(-3)");
        assert_eq!(p("max(N-4, -1)//2"), p("max((N-4)//2, -1)"));
        assert_eq!(p("(N if N <= M else M)"), p("min(M, N)"));
        assert_eq!(p("(M if N <= M else N)"), p("max(M, N)"));
        assert_eq!(p("(N if N < 5 else 5)"), p("min(5, N)"));
        assert_eq!(p("(5 if N < 5 else N)"), p("max(5, N)"));
        assert_eq!(p("(N if N <= 5 else 6)"), p("min(6, N)"));
        assert_eq!(p("(N if N <= 5 else 7)").to_string(), "(N if N <= 5 else 7)");
        assert_eq!(p("(1 if N < 0 else 2)"), p("2"));
        assert_eq!(p("(1 if N >= 0 else 2)"), p("1"));
        assert_eq!(p("(N % 4) // 4"), p("0"));
        assert_eq!(p("(4*N + 5) % 4"), p("1"));
        assert_eq!(p("min(N, N+1, 5)").to_string(), "min(5, N)");
        assert_eq!(p("(0 if N-1 <= 0 else 1)").to_string(), "(0 if N <= 1 else 1)");
        assert_eq!(p("(0 if (N-2)//2 <= 0 else 3)").to_string(), "(0 if N <= 3 else 3)");
        assert_eq!(p("(0 if max(0, N-5) <= 0 else 3)").to_string(), "(0 if N <= 5 else 3)");
    }

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

    /// What a verifier needs: a slice's bounds proven under "the slice is not empty".
    #[test]
    fn proofs_under_assumptions() {
        let n = n();
        for (start, step) in [(Some(1), 1), (None, -1), (Some(3), 2), (Some(-2), -1), (None, 3)] {
            let r = normalize_numpy(&n, start.map(SymExpr::constant).as_ref(), None, Some(step));
            let nonempty = Assumptions::default().assume(&Cond::le(&r.len, &0.into()), false);
            let last = &r.first + &((&r.len - 1) * step);
            let what = format!("[{start:?}::{step}]: first {} len {} under {nonempty:?}", r.first, r.len);
            for at in [&r.first, &last] {
                assert_eq!(SymExpr::prove_le(&0.into(), at, &nonempty), Some(true), "{what}");
                assert_eq!(SymExpr::prove_le(at, &(&n - 1), &nonempty), Some(true), "{what}");
            }
        }
        let r = normalize_numpy(&n, Some(&1.into()), None, None);
        let asm = Assumptions::default().assume(&Cond::le(&r.len, &0.into()), false);
        assert_eq!(r.first.simplify(&asm), SymExpr::constant(1));
        assert_eq!(r.len.simplify(&asm), &n - 1);
        // Without the assumption nothing is proven.
        assert_eq!(SymExpr::prove_le(&r.first, &(&n - 1), &Assumptions::default()), None);
    }

    #[test]
    fn parse_errors() {
        for bad in ["", "N +", "min()", "(1 if N else 2)", "k[x]", "9223372036854775808", "N $ 2", "if"] {
            assert!(SymExpr::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(p("-9223372036854775808").as_const(), Some(i64::MIN));
        // Deep input is refused, never a stack overflow; a product of big sums is kept as written
        // past MAX_TERMS terms instead of distributed.
        assert!(SymExpr::parse(&format!("{}N", "-".repeat(100_000))).is_err());
        assert!(SymExpr::parse(&format!("{}N{}", "(".repeat(100_000), ")".repeat(100_000))).is_err());
        assert!(SymExpr::parse(&format!("{}N{}", "min(".repeat(100_000), ")".repeat(100_000))).is_err());
        let big = format!("({})", (0..20).map(|i| format!("A{i}")).collect::<Vec<_>>().join("+"));
        let e = p(&[big.as_str(); 8].join("*"));
        assert_eq!(p(&e.to_string()), e);
        let env = (0..20).fold(Env::new(), |env, i| env.dim(&format!("A{i}"), 1));
        assert_eq!(e.eval(&env), Some(20i64.pow(8)));
        assert_eq!(p("N-9223372036854775808*M").to_string(), "N-9223372036854775808*M");
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
        fn has_minmax(&self) -> bool {
            match self {
                T::C(_) | T::D(_) | T::S(_) => false,
                T::Min(..) | T::Max(..) | T::Sel(..) => true,
                T::Add(x, y) | T::Sub(x, y) | T::Mul(x, y) | T::Div(x, y) | T::Mod(x, y) => {
                    x.has_minmax() || y.has_minmax()
                }
            }
        }

        /// Whether every constant is far from i64's ends.
        fn small(&self) -> bool {
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

        fn eval(&self, env: &Env) -> Option<i64> {
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

        /// Replacing every symbol by its value folds to the value.
        #[test]
        fn subst_constants_folds(t in tree(), env in env()) {
            let e = t.build();
            let c = e.subst(&|s| env.get(s).map(SymExpr::constant));
            if let Some(v) = e.eval_i64(&env) {
                prop_assert_eq!(c.as_const(), Some(v), "{} -> {}", e, c);
            }
            if let (Some(k), Some(v)) = (c.as_const(), e.eval(&env)) {
                prop_assert_eq!(k, v);
            }
            // Substituting symbols for themselves changes nothing.
            prop_assert_eq!(e.subst(&|_| None), e.clone());
        }

        /// Operands in either order build the same expression, with the same hash.
        #[test]
        fn commutative_forms_are_equal(x in tree(), y in tree()) {
            use std::hash::{BuildHasher, RandomState};
            let h = RandomState::new();
            let (a, b) = (x.build(), y.build());
            for (l, r) in [
                (a.add(&b), b.add(&a)),
                (a.mul(&b), b.mul(&a)),
                (a.min2(&b), b.min2(&a)),
                (a.max2(&b), b.max2(&a)),
            ] {
                prop_assert_eq!(&l, &r);
                prop_assert_eq!(h.hash_one(&l), h.hash_one(&r));
            }
            // Without constants near i64's ends (whose sums are kept as written), subtraction is
            // adding the negation, and undoes addition where no min or max took a sum in.
            if x.small() && y.small() {
                prop_assert_eq!(a.sub(&b), b.neg().add(&a));
                if !x.has_minmax() && !y.has_minmax() {
                    prop_assert_eq!(a.add(&b).sub(&b), a.clone(), "{} + {} - {}", a, b, b);
                }
            }
        }

        /// The printed form reads back to the same expression.
        #[test]
        fn print_parse_round_trip(t in tree()) {
            let e = t.build();
            let text = e.to_string();
            let back = SymExpr::parse(&text);
            prop_assert_eq!(back.as_ref(), Ok(&e), "{}", text);
        }
    }
}
