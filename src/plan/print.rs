//! The text form of a plan; `plan::parse` reads it back (`parse(print(p)) == p`).
//!
//! ```text
//! plan(a: f32[4, 5], idx: i64[3]) -> f32[3, 5]
//!   const $0: i64[2] = [0, -1]
//!   check idx{0; 1} over [3] len 4 axis 0
//!   out a{5; 0, -1} + 5*error<4>(idx{0; 1, 0})
//! ```
//! An input read in place through a strided view says so: `a: f32[4, 5] strides [-5, 2]` (its
//! accesses count elements from `a[0, 0]`).
//! An access is `BUFFER{BASE; STRIDES...}` followed by its indirect terms
//! `+ STRIDE*MODE<LEN>(INDEX ACCESS)`. Inputs are named, constants are `$N`.

use super::ir::*;
use crate::types::ShapeDisplay;
use std::fmt;

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        crate::limits::with_stack_for(self.nesting(), || self.write_text(f))
    }
}

impl Plan {
    fn write_text(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "plan(")?;
        for (i, input) in self.inputs.iter().enumerate() {
            if i > 0 {
                write!(f, ", ")?;
            }
            write!(f, "{}: {}{}", input.name, input.dtype, ShapeDisplay(&input.shape))?;
            if let Some(strides) = &input.strides {
                write!(f, " strides {}", ShapeDisplay(strides))?;
            }
        }
        writeln!(f, ") -> {}{}", self.dtype, ShapeDisplay(&self.shape))?;
        for (i, c) in self.consts.iter().enumerate() {
            let shape: Vec<i64> = c.tensor.shape().iter().map(|&d| d as i64).collect();
            let values: Vec<i64> =
                (0..c.tensor.numel()).map(|j| c.tensor.int_at(j).unwrap_or_default() as i64).collect();
            writeln!(
                f,
                "  const ${i}: {}{} = {}",
                c.tensor.dtype(),
                ShapeDisplay(&shape),
                ShapeDisplay(&values)
            )?;
        }
        for c in &self.checks {
            writeln!(
                f,
                "  check {} over {} len {} axis {}",
                Show(self, &c.index),
                ShapeDisplay(&c.shape),
                c.len,
                c.axis
            )?;
        }
        writeln!(f, "  out {}", Show(self, &self.output))
    }
}

/// An access printed with the plan's buffer names.
struct Show<'a>(&'a Plan, &'a Access);

impl fmt::Display for Show<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let Show(plan, access) = *self;
        write!(f, "{}{{{};", plan.buffer_name(access.buffer), access.base)?;
        for (i, s) in access.strides.iter().enumerate() {
            write!(f, "{}{s}", if i == 0 { " " } else { ", " })?;
        }
        write!(f, "}}")?;
        for t in &access.terms {
            write!(f, " + {}*{}<{}>({})", t.stride, t.mode.name(), t.len, Show(plan, &t.index))?;
        }
        Ok(())
    }
}
