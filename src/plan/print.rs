//! The text form of a plan; `plan::parse` reads it back (`parse(print(p)) == p`).
//!
//! ```text
//! plan(a: f32[4, 5], idx: i64[3]) -> f32[3, 5]
//!   const $0: i64[2] = [0, -1]
//!   check idx{0; 1} over [3] len 4 axis 0
//!   out a{5; 0, -1} + 5*error<4>(idx{0; 1, 0})
//! ```
//! An input read in place through a strided view says so: `a: f32[4, 5] strides [-5, 2]` (its
//! accesses count elements from `a[0, 0]`); one derived from a mask per call says how:
//! `m_nonzero: i64[_m_trues, 1] = nonzero(m)`.
//! An access is `BUFFER{BASE; STRIDES...}` followed by its indirect terms
//! `+ STRIDE*MODE<LEN>(INDEX ACCESS)`. Inputs are named, constants are `$N`.
//!
//! A store plan (`a[idx] = v`) ends with its updates after `out` (the target read whole):
//! `store COMBINE over [SHAPE] at DEST value VALUE [when MASK]`, accesses over the update
//! coordinates.
//! A constant of a non-integer dtype (a literal stored into a float tensor) lists each element's
//! little-endian bits as an integer (two per complex element: real, imaginary).
//!
//! A generic plan writes its integers as `SymExpr`s print them, and its requirements one per
//! line, each with the message a call that fails it reports:
//!
//! ```text
//! plan(a: f32[N, M]) -> f32[max(0, N-1), M]
//!   require 1 <= N  # index 1 is out of bounds for axis 0
//!   out a{M; M, 1}
//! ```
//! A symbolic integer never holds `,`, `;`, `}`, `]` or `>` outside parentheses, so the parser
//! finds its end; a term's stride is parenthesized unless it is a number or a name.

use super::ir::*;
use crate::types::sym::SymExpr;
use std::fmt;

/// An integer of the plan text: `i64`, or a `SymExpr` of a generic plan.
pub trait PlanInt: fmt::Display {
    /// Whether it reads as one token (a number or a name), so needs no parentheses before `*`.
    fn is_atomic(&self) -> bool;
}

impl PlanInt for i64 {
    fn is_atomic(&self) -> bool {
        true
    }
}

impl PlanInt for SymExpr {
    fn is_atomic(&self) -> bool {
        self.as_const().is_some() || matches!(self.as_sym(), Some(crate::types::sym::Sym::Dim(_)))
    }
}

/// `[a, b, c]`.
struct List<'a, D>(&'a [D]);

impl<D: fmt::Display> fmt::Display for List<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "[")?;
        for (i, d) in self.0.iter().enumerate() {
            write!(f, "{}{d}", if i == 0 { "" } else { ", " })?;
        }
        write!(f, "]")
    }
}

impl<D: PlanInt> fmt::Display for Plan<D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::limits::with_stack_for(self.nesting(), || self.write_text(f))
    }
}

impl<D: PlanInt> Plan<D> {
    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plan(")?;
        for (i, input) in self.inputs.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{}: {}{}", input.name, input.dtype, List(&input.shape))?;
            if let Some(strides) = &input.strides {
                write!(f, " strides {}", List(strides))?;
            }
            match &input.derived {
                Some(Derived::Nonzero { mask }) => write!(f, " = nonzero({mask})")?,
                Some(Derived::Cast { from }) => write!(f, " = cast({from})")?,
                None => {}
            }
        }
        writeln!(f, ") -> {}{}", self.dtype, List(&self.shape))?;
        for (i, c) in self.consts.iter().enumerate() {
            let shape: Vec<i64> = c.tensor.shape().iter().map(|&d| d as i64).collect();
            let values = const_values(&c.tensor);
            writeln!(f, "  const ${i}: {}{} = {}", c.tensor.dtype(), List(&shape), List(&values))?;
        }
        for r in &self.requires {
            // The message runs to the end of the line: it cannot hold a line break.
            writeln!(f, "  require {}  # {}", r.cond, r.message.replace('\n', " "))?;
        }
        for c in &self.checks {
            writeln!(
                f,
                "  check {} over {} len {} axis {}",
                Show(self, &c.index),
                List(&c.shape),
                c.len,
                c.axis
            )?;
        }
        writeln!(f, "  out {}", Show(self, &self.output))?;
        if let Some(s) = &self.store {
            write!(
                f,
                "  store {} over {} at {} value {}",
                s.combine.name(),
                List(&s.shape),
                Show(self, &s.dest),
                Show(self, &s.value)
            )?;
            if let Some(when) = &s.when {
                write!(f, " when {}", Show(self, when))?;
            }
            writeln!(f)?;
        }
        Ok(())
    }
}

/// The integers a constant prints as: an integer dtype's values; otherwise each element's (each
/// complex part's) little-endian bits, as `plan::parse` reads them back.
pub(super) fn const_values(t: &slc_runtime::Tensor) -> Vec<i64> {
    if t.dtype().is_integer() {
        return (0..t.numel()).map(|j| t.int_at(j).unwrap_or_default() as i64).collect();
    }
    let part = if t.dtype().is_complex() { t.dtype().width() / 2 } else { t.dtype().width() };
    (t.bytes().chunks_exact(part))
        .map(|c| {
            let mut wide = [0u8; 8];
            wide[..part].copy_from_slice(c);
            i64::from_le_bytes(wide)
        })
        .collect()
}

/// An access printed with the plan's buffer names.
struct Show<'a, D>(&'a Plan<D>, &'a Access<D>);

impl<D: PlanInt> fmt::Display for Show<'_, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Show(plan, access) = *self;
        write!(f, "{}{{{};", plan.buffer_name(access.buffer), access.base)?;
        for (i, s) in access.strides.iter().enumerate() {
            write!(f, "{}{s}", if i == 0 { " " } else { ", " })?;
        }
        write!(f, "}}")?;
        for t in &access.terms {
            match t.stride.is_atomic() {
                true => write!(f, " + {}", t.stride)?,
                false => write!(f, " + ({})", t.stride)?,
            }
            write!(f, "*{}<{}>({})", t.mode.name(), t.len, Show(plan, &t.index))?;
        }
        Ok(())
    }
}
