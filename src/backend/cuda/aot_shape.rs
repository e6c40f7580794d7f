//! The ahead-of-time launcher's shape function, in C: the symbols bound from the caller's dims,
//! the plan's requirements checked in order, and every integer the launch needs evaluated as
//! `SymExpr::eval_i64` evaluates it (Python's floor division and modulo, every operation
//! checked: an overflow or a zero divisor fails the call). The JIT's shape function
//! (`clif::shape_fn`) does the same in Cranelift IR; this one is C text for nvcc's host compiler.

use super::CudaError;
use crate::plan::InputDecl;
use crate::types::sym::{Atom, CmpOp, Cond, MAX_DIM, RawOp, Sym, SymExpr};
use std::collections::HashMap;
use std::fmt::Write;

/// The C helpers the expressions call, each setting `*bad` where `eval_i64` is undefined.
pub const HELPERS: &str = "#ifndef SLC_AOT_HELPERS
#define SLC_AOT_HELPERS
static long long slc_add(long long a, long long b, int* bad) { long long r; if (__builtin_add_overflow(a, b, &r)) *bad = 1; return r; }
static long long slc_sub(long long a, long long b, int* bad) { long long r; if (__builtin_sub_overflow(a, b, &r)) *bad = 1; return r; }
static long long slc_mul(long long a, long long b, int* bad) { long long r; if (__builtin_mul_overflow(a, b, &r)) *bad = 1; return r; }
static long long slc_floordiv(long long x, long long d, int* bad) {
  long long q, r;
  if (d == 0 || (x == (-9223372036854775807LL - 1) && d == -1)) { *bad = 1; return 0; }
  q = x / d; r = x % d;
  return (r != 0 && ((r < 0) != (d < 0))) ? q - 1 : q;
}
static long long slc_mod(long long x, long long d, int* bad) {
  long long r;
  if (d == 0) { *bad = 1; return 0; }
  if (d == -1) return 0;
  r = x % d;
  return (r != 0 && ((r < 0) != (d < 0))) ? r + d : r;
}
static long long slc_min(long long a, long long b) { return a < b ? a : b; }
static long long slc_max(long long a, long long b) { return a > b ? a : b; }
#endif
";

/// The symbols of a plan as C: each dimension symbol is `sym[k]`.
pub struct CShape {
    symbols: HashMap<Sym, usize>,
}

impl CShape {
    /// The C statements of a function body that bind `sym[]` from `dims` (the `declared`
    /// inputs' dims, concatenated), each dim in `[0, MAX_DIM]`, and from `scalars` (the values
    /// of the run-time scalars `scalars` names, in its order), every other axis equal to its
    /// declared dim, then check `requires` in order: `return fail;` where one does not hold.
    /// Declares `int bad` and `long long sym[]`.
    pub fn bind(
        declared: &[InputDecl<SymExpr>],
        scalars: &[Sym],
        requires: &[&Cond],
        fail: &str,
    ) -> Result<(CShape, String), CudaError> {
        let mut shape = CShape { symbols: HashMap::new() };
        let mut body = String::new();
        for (j, s) in scalars.iter().enumerate() {
            let k = shape.symbols.len();
            shape.symbols.insert(s.clone(), k);
            let _ = writeln!(body, "  sym[{k}] = scalars[{j}];");
        }
        let mut computed = vec![];
        let mut at = 0usize;
        for d in declared {
            for e in &d.shape {
                let dim = format!("dims[{at}]");
                let _ = writeln!(body, "  if ({dim} < 0 || {dim} > {MAX_DIM}LL) return {fail};");
                match e.as_sym() {
                    Some(s @ Sym::Dim(_)) if !shape.symbols.contains_key(s) => {
                        let k = shape.symbols.len();
                        shape.symbols.insert(s.clone(), k);
                        let _ = writeln!(body, "  sym[{k}] = {dim};");
                    }
                    _ => computed.push((dim, e)),
                }
                at += 1;
            }
        }
        for (dim, e) in computed {
            let value = shape.expr(e)?;
            let _ = writeln!(body, "  if ({dim} != {value} || bad) return {fail};");
        }
        for c in requires {
            let holds = shape.cond(c)?;
            let _ = writeln!(body, "  if (!({holds}) || bad) return {fail};");
        }
        let head =
            format!("  int bad = 0;\n  long long sym[{}];\n  (void)sym;\n", shape.symbols.len().max(1));
        Ok((shape, head + &body))
    }

    /// `e` as a C expression of type `long long`; where it is undefined, it sets `bad` (the
    /// caller tests `bad` after it). Only a chosen `select` branch is evaluated (C's `?:`).
    pub fn expr(&self, e: &SymExpr) -> Result<String, CudaError> {
        let mut acc: Option<String> = None;
        for (coef, atoms) in e.terms() {
            // `1 * v` and `0 + v` cannot overflow: as `eval_i64` checks.
            let mut prod = (coef != 1).then(|| literal(coef));
            for atom in atoms {
                let v = self.atom(atom)?;
                prod = Some(match prod {
                    None => v,
                    Some(p) => format!("slc_mul({p}, {v}, &bad)"),
                });
            }
            let prod = prod.unwrap_or_else(|| literal(coef));
            acc = Some(match acc {
                None => prod,
                Some(a) => format!("slc_add({a}, {prod}, &bad)"),
            });
        }
        let constant = literal(e.constant_term());
        Ok(match acc {
            None => constant,
            Some(a) if e.constant_term() == 0 => a,
            Some(a) => format!("slc_add({a}, {constant}, &bad)"),
        })
    }

    /// `cond` as a C expression (0 or 1), both sides evaluated.
    pub fn cond(&self, cond: &Cond) -> Result<String, CudaError> {
        let op = match cond.op() {
            CmpOp::Lt => "<",
            CmpOp::Le => "<=",
            CmpOp::Eq => "==",
        };
        Ok(format!("({} {op} {})", self.expr(cond.lhs())?, self.expr(cond.rhs())?))
    }

    fn atom(&self, atom: &Atom) -> Result<String, CudaError> {
        Ok(match atom {
            Atom::Sym(s) => match self.symbols.get(s) {
                Some(k) => format!("sym[{k}]"),
                None => return Err(CudaError::Codegen(format!("the launcher does not bind `{s}`"))),
            },
            Atom::FloorDiv(x, d) => format!("slc_floordiv({}, {}, &bad)", self.expr(x)?, self.expr(d)?),
            Atom::Mod(x, d) => format!("slc_mod({}, {}, &bad)", self.expr(x)?, self.expr(d)?),
            Atom::Min(args) | Atom::Max(args) => {
                let f = if matches!(atom, Atom::Min(_)) { "slc_min" } else { "slc_max" };
                let mut acc = self.expr(&args[0])?;
                for a in &args[1..] {
                    acc = format!("{f}({acc}, {})", self.expr(a)?);
                }
                acc
            }
            Atom::Select(c, then, otherwise) => {
                format!("({} ? {} : {})", self.cond(c)?, self.expr(then)?, self.expr(otherwise)?)
            }
            Atom::Raw(op, x, y) => {
                let f = match op {
                    RawOp::Add => "slc_add",
                    RawOp::Sub => "slc_sub",
                    RawOp::Mul => "slc_mul",
                };
                format!("{f}({}, {}, &bad)", self.expr(x)?, self.expr(y)?)
            }
        })
    }
}

/// An i64 as a C literal (`i64::MIN` has none of its own).
fn literal(v: i64) -> String {
    match v {
        i64::MIN => "(-9223372036854775807LL - 1)".into(),
        v => format!("{v}LL"),
    }
}
