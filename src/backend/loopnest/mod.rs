//! Plan → LoopNest: the schedule a compiled kernel follows, in bytes. The plan says *what*
//! each output element is; the loop nest says *how* to walk them: which loops, which pointer
//! strides, where a contiguous run becomes one block copy. Shared by the JIT and AOT back ends.
//!
//! Loops run in output order (the output is dense and C-ordered, so the innermost loop is always
//! the output's contiguous axis). The passes, each a pure rewrite with a name for `--dump-after`:
//! `drop-unit-axes`, `merge-contiguous-axes`, `block-copy`.

use crate::plan::{Access, BufferId, OobMode, Plan};
use slc_runtime::DType;
use std::fmt;

/// One read stream over the loop coordinates, in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Stream {
    /// Index into the kernel's buffer table: the plan's inputs, then its constants.
    pub buffer: usize,
    pub base: i64,
    pub strides: Vec<i64>,
    pub terms: Vec<Term>,
}

/// A gathered coordinate: `stride · norm(index value)` bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Term {
    pub index: Stream,
    pub index_dtype: DType,
    pub len: i64,
    pub stride: i64,
    pub mode: OobMode,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoopNest {
    /// Element width in bytes (1, 2, 4 or 8): kernels move bytes, dtypes do not matter.
    pub width: u8,
    /// Loop extents, outermost first. Empty for a single element (0-d output).
    pub extents: Vec<i64>,
    /// Output byte strides per loop.
    pub out: Vec<i64>,
    pub data: Stream,
    /// The innermost loop is one contiguous run in both output and data: copy it as a block.
    pub block: bool,
    /// The output has no elements: nothing runs.
    pub empty: bool,
    /// The byte size of each buffer in the kernel's table (a zero-mode miss may read a
    /// non-empty buffer's first element instead of branching around the load).
    pub buffer_bytes: Vec<i64>,
}

impl LoopNest {
    /// The loop nest that walks `plan`'s output in C order, before any pass.
    pub fn from_plan(plan: &Plan) -> LoopNest {
        let width = plan.dtype.width() as u8;
        let buffer = |id: BufferId| match id {
            BufferId::Input(i) => i,
            BufferId::Const(i) => plan.inputs.len() + i,
        };
        fn stream(plan: &Plan, a: &Access, w: i64, buffer: &dyn Fn(BufferId) -> usize) -> Stream {
            Stream {
                buffer: buffer(a.buffer),
                base: a.base * w,
                strides: a.strides.iter().map(|s| s * w).collect(),
                terms: a
                    .terms
                    .iter()
                    .map(|t| {
                        let index_dtype = plan.buffer_dtype(t.index.buffer).unwrap_or(DType::I64);
                        Term {
                            index: stream(plan, &t.index, index_dtype.width() as i64, buffer),
                            index_dtype,
                            len: t.len,
                            stride: t.stride * w,
                            mode: t.mode,
                        }
                    })
                    .collect(),
            }
        }
        let w = width as i64;
        let mut out = vec![0; plan.shape.len()];
        let mut acc = w;
        for (o, &d) in out.iter_mut().zip(&plan.shape).rev() {
            *o = acc;
            acc = acc.saturating_mul(d);
        }
        let empty = plan.shape.contains(&0);
        let buffer_bytes = (0..plan.inputs.len())
            .map(BufferId::Input)
            .chain((0..plan.consts.len()).map(BufferId::Const))
            .map(|id| {
                let width = plan.buffer_dtype(id).map_or(0, |d| d.width() as i64);
                let shape = plan.buffer_shape(id).unwrap_or_default();
                crate::sema::shape::checked_numel(&shape).and_then(|n| n.checked_mul(width)).unwrap_or(0)
            })
            .collect();
        LoopNest {
            width,
            extents: plan.shape.clone(),
            out,
            data: stream(plan, &plan.output, w, &buffer),
            block: false,
            empty,
            buffer_bytes,
        }
    }

    /// Every stride vector of the nest (output, data, index streams at any depth).
    fn for_each_strides(&mut self, f: &mut dyn FnMut(&mut Vec<i64>)) {
        fn walk(s: &mut Stream, f: &mut dyn FnMut(&mut Vec<i64>)) {
            f(&mut s.strides);
            for t in &mut s.terms {
                walk(&mut t.index, f);
            }
        }
        f(&mut self.out);
        walk(&mut self.data, f);
    }

    fn all_strides(&self) -> Vec<Vec<i64>> {
        let mut copy = self.clone();
        let mut all = vec![];
        copy.for_each_strides(&mut |s| all.push(s.clone()));
        all
    }

    /// The number of elements of the outermost loop (the range a caller may split), or 1 for a
    /// 0-d output.
    pub fn outer_extent(&self) -> i64 {
        self.extents.first().copied().unwrap_or(1)
    }
}

/// A named rewrite of the loop nest.
pub struct Pass {
    pub name: &'static str,
    pub run: fn(&mut LoopNest) -> bool,
}

/// The passes, in order.
pub const PASSES: &[Pass] = &[
    Pass { name: "drop-unit-axes", run: drop_unit_axes },
    Pass { name: "merge-contiguous-axes", run: merge_contiguous_axes },
    Pass { name: "block-copy", run: block_copy },
];

/// Runs every pass; `dump` sees the nest after each pass that changed it.
pub fn schedule(plan: &Plan, mut dump: impl FnMut(&str, &LoopNest)) -> LoopNest {
    let mut nest = LoopNest::from_plan(plan);
    dump("initial", &nest);
    if nest.empty {
        return nest;
    }
    for pass in PASSES {
        if (pass.run)(&mut nest) {
            dump(pass.name, &nest);
        }
    }
    nest
}

/// A loop of one iteration only moves no pointer: remove it.
fn drop_unit_axes(nest: &mut LoopNest) -> bool {
    let keep: Vec<bool> = nest.extents.iter().map(|&e| e != 1).collect();
    if keep.iter().all(|&k| k) {
        return false;
    }
    nest.for_each_strides(&mut |s| {
        let mut i = 0;
        s.retain(|_| {
            i += 1;
            keep[i - 1]
        })
    });
    nest.extents.retain(|&e| e != 1);
    true
}

/// Loops d and d+1 are one loop when every stream steps over d exactly as a full run of d+1.
fn merge_contiguous_axes(nest: &mut LoopNest) -> bool {
    let mut changed = false;
    let mut d = nest.extents.len();
    while d >= 2 {
        d -= 1;
        let inner = nest.extents[d];
        let mergeable = nest.all_strides().iter().all(|s| s[d - 1] == s[d].saturating_mul(inner));
        if mergeable {
            nest.extents[d - 1] *= inner;
            nest.extents.remove(d);
            nest.for_each_strides(&mut |s| {
                s.remove(d - 1);
            });
            changed = true;
        }
    }
    changed
}

/// An innermost loop that reads one contiguous run (and gathers nothing that varies along it)
/// is a block copy.
fn block_copy(nest: &mut LoopNest) -> bool {
    let Some(last) = nest.extents.len().checked_sub(1) else { return false };
    let w = nest.width as i64;
    fn invariant(s: &Stream, d: usize) -> bool {
        s.terms.iter().all(|t| t.index.strides[d] == 0 && invariant(&t.index, d))
    }
    let contiguous = nest.out[last] == w && nest.data.strides[last] == w && invariant(&nest.data, last);
    if contiguous && !nest.block {
        nest.block = true;
        return true;
    }
    false
}

impl fmt::Display for Stream {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "buf{}+{} {:?}", self.buffer, self.base, self.strides)?;
        for t in &self.terms {
            write!(f, " + {}*{}<{}>({} {})", t.stride, t.mode.name(), t.len, t.index_dtype, t.index)?;
        }
        Ok(())
    }
}

impl fmt::Display for LoopNest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.empty {
            return writeln!(f, "loopnest w{} empty", self.width);
        }
        writeln!(
            f,
            "loopnest w{} loops {:?}{}",
            self.width,
            self.extents,
            if self.block { " (innermost: block copy)" } else { "" }
        )?;
        writeln!(f, "  out {:?}", self.out)?;
        writeln!(f, "  data {}", self.data)
    }
}
