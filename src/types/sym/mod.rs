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

use std::fmt;
use std::sync::Arc;

// One concern a file: `poly` the normal form's arithmetic, `construct` the constructors,
// `cond` the conditions, `eval` evaluation, `bounds` intervals and proofs, `numpy` slice
// normalization, `text` printing and parsing.
mod bounds;
mod cond;
mod construct;
mod eval;
mod numpy;
mod poly;
mod text;

#[cfg(test)]
pub(crate) mod tests;

pub use bounds::{Assumptions, Interval};
pub use eval::Env;
pub use numpy::{SymRange, normalize_numpy};

/// The largest value a dimension symbol takes. Normalization and interval reasoning assume it (a
/// shape function refuses larger dimensions at call time): a tensor with a larger dimension
/// and any element at all would take more than 4 EiB.
pub const MAX_DIM: i64 = 1 << 62;

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
