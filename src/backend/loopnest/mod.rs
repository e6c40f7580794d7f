//! Plan → LoopNest: the schedule a compiled kernel follows, in bytes. The plan says *what*
//! each output element is; the loop nest says *how* to walk them: which loops, which pointer
//! strides, and how each loop runs (its [`Strategy`]: a block copy, a vector shuffle, a table of
//! gathered offsets, ...). The code generator translates each strategy as it is written and
//! chooses none itself, so `slc plan --dump-after all` shows how every loop runs (what remains
//! in the code generator is instruction-level: move widths, unrolling, branch-free loads).
//! Shared by the JIT and AOT back ends.
//!
//! Loops run in output order (the output is dense and C-ordered, so the innermost loop is always
//! the output's contiguous axis). A nest is either a plan's output or one of its index checks
//! ([`NestKind`]); both come from the same [`PASSES`], each a pure rewrite with a name for
//! `--dump-after`.
//!
//! Every integer of a nest is a [`SymExpr`]: a concrete plan's nest has constants only, and is
//! scheduled and compiled exactly as its numbers say; a generic plan's nest has expressions over
//! its shape symbols. Passes decide with constants (`as_const()`) and compare expressions by
//! their normal forms, falling back to strategies that need no number where one is symbolic.
//! The nest lists its symbolic integers in [`LoopNest::params`]: the slots of the parameter
//! block a generic kernel receives, filled once per call.

mod build;
mod passes;
mod print;
mod store;
mod versions;

pub use passes::{CACHE_LINE, INLINE_COPY_BYTES, LOOP_COPY_BYTES, PASSES, Pass};
pub use passes::{TOUCH_MAX_BYTES, TOUCH_MIN_BYTES};
pub use store::{Arithmetic, CombineOp, Combining};
pub use store::{
    buffered_in_place, store_base_bytes, store_may_run_in_place, store_writes_distinct, takes_store,
};
pub use versions::{MAX_VERSIONS, SIZE_CLASS_COUNT, UNROLL, UNROLLED_STEP_MAX};
pub use versions::{fit_budget, unroll_versions, unrolls};

use crate::plan::{Check, VerifiedGenericPlan, VerifiedPlan};
use crate::types::OobMode;
use crate::types::sym::SymExpr;
pub use build::ByteWindow;
use slc_runtime::DType;

/// One read stream over the loop coordinates, in bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Stream {
    /// Index into the kernel's buffer table: the plan's inputs, then its constants.
    pub buffer: usize,
    pub base: SymExpr,
    pub strides: Vec<SymExpr>,
    pub terms: Vec<Term>,
}

/// A gathered coordinate: `stride · norm(index value)` bytes.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Term {
    pub index: Stream,
    pub index_dtype: DType,
    pub len: SymExpr,
    pub stride: SymExpr,
    pub mode: OobMode,
}

/// What a nest computes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NestKind {
    /// The plan's output.
    Output,
    /// One of the plan's index checks: every value of an index tensor is loaded through an
    /// `error`-mode term, so the kernel returns `STATUS_INDEX_OUT_OF_RANGE` at the first value
    /// outside `[-len, len)`, as NumPy raises even for values a later slice drops. Every element
    /// goes to the same 8-byte scratch slot (output strides 0).
    Check,
}

/// How one loop runs. Strategies that take two loops sit on the outer one and mark the inner
/// one [`Strategy::Joined`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Strategy {
    /// A counted loop around the loops inside it; innermost, one element per iteration with
    /// every gather normalized by its mode.
    Serial,
    /// Innermost: one contiguous run in both output and data, copied as a block.
    Block(Copy),
    /// Innermost, every gather fixed along it: a copy by a constant stride, unrolled, with 16
    /// bytes shuffled at a time where `Some`.
    Strided(Option<Shuffle>),
    /// Innermost, its gathers moving along it and reading index tensors directly (no gather of a
    /// gather): pointers walk the index tensors, and each unrolled trip tests its indices at
    /// once, running element by element with the mode's handling only when one is outside.
    /// Under a loop over rows, it may read the next row ahead.
    GuardedGather(Option<GatherAhead>),
    /// Over the rows of a short block (at most [`INLINE_COPY_BYTES`]), every gather fixed and
    /// none able to miss: several rows per trip, each copied inline. `by_size`: the block's
    /// length is symbolic, and each run of rows dispatches on it: a version of the loop per size
    /// class of [`Copy::BySize`]'s inline moves, else a loop over the rows running the inner
    /// loop's own strategy (which stays `Block(BySize)` instead of `Joined`).
    BlockRows { by_size: bool },
    /// Over rows whose inner loop's gathers do not depend on the row: those are normalized once
    /// into a table of byte offsets on the stack, then every row copies through it, maybe
    /// reading the next row ahead.
    IndexTable(Option<ReadAhead>),
    /// Over dense tiles of at most 8 bytes whose elements the inner loop reverses
    /// (`img[..., ::-1]` on pixels): 16 bytes of tiles shuffled at a time. `by_size`: the
    /// tile's element count is symbolic, and each run of tiles dispatches on it: a version of
    /// the loop per tile size up to 8 bytes, else a strided reversed copy per tile.
    ReversedTiles { by_size: bool },
    /// Innermost in a masked store, output elements and mask bytes both consecutive: 16
    /// elements per trip, blended with the value by their mask bytes, then one at a time.
    MaskedRun,
    /// Innermost in a masked store, the mask fixed along it: the row's one mask byte skips it
    /// or sets (combines) every element of it; `streaming`: a set row is filled with
    /// non-temporal stores ([`FILL_STREAMING`]).
    MaskedRow { streaming: bool },
    /// Innermost, the data fixed along it and the output elements consecutive (`a[1:] = 0`, a
    /// value broadcast along the row): the run's one value loaded once and stored 16 bytes at
    /// a time; `streaming`: with non-temporal stores ([`FILL_STREAMING`]).
    Fill { streaming: bool },
    /// Innermost, a contiguous run stored into every other element of a target the caches
    /// cannot hold (a [`Shuffle::Spread`] run past them, `a[:, ::2] = b`): by a call to the
    /// width's [`spread_ahead_symbol`], which prefetches the lines 4 KiB on as it writes.
    SpreadAhead,
    /// Over rows whose inner loop reads the data across its lines (each element in another
    /// line: `x.T[1:]`, the transpose of a C-ordered array) while the rows move within them,
    /// the output consecutive along the inner loop: tiles of [`TRANSPOSE_TILE_BYTES`] / width
    /// rows by as many columns, so every line a tile reads is used whole by its rows before it
    /// leaves the cache, and every output line whole by its columns.
    TransposeTiles,
    /// Run by the strategy of the loop outside it.
    Joined,
}

/// A loop over a row's gathered elements that also reads the same span of the next row, a
/// line every few elements, in order (the `read-ahead` pass says why). The span starts
/// `step + min(reach, 0)` bytes past the row's gathered index 0, clamped into the buffer.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ReadAhead {
    /// Bytes from one row to the next.
    pub step: i64,
    /// Bytes from the row's gathered index 0 to its last index (negative when reversed).
    pub reach: i64,
    /// Bytes of a row the gather reaches.
    pub span: i64,
}

/// A guarded gather's read-ahead: of numbers known when compiling, or of a row span and a
/// pace per element that are parameters of the call ([`LoopNest::ahead_per_element`]); the
/// kernel reads ahead for the calls whose numbers qualify (the `read-ahead` pass's limits,
/// and a line per unrolled trip covering the trip's share of the span) and gathers without
/// otherwise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GatherAhead {
    Known(ReadAhead),
    ByCall,
}

/// How a block is copied.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Copy {
    /// At most [`INLINE_COPY_BYTES`]: a few overlapping loads and stores.
    Inline,
    /// A loop of 64-byte moves (runs without gathers, up to 256 KiB).
    Loop,
    /// A call to memcpy (long runs, and the outermost loop's run, whose length the caller's
    /// range sets).
    Memcpy,
    /// A run whose length is symbolic, copied as its length in the call says: inline moves up
    /// to [`INLINE_COPY_BYTES`], then (where `loop_copy`: runs without gathers) the loop of
    /// 64-byte moves up to 256 KiB, else memcpy.
    BySize { loop_copy: bool },
    /// A run written around the caches: its whole destination lines with non-temporal stores,
    /// by a call to [`COPY_STREAMING`] (rows scattered over a destination larger than the
    /// caches, `a[i] = v`: an ordinary store first reads each line it writes, a third more
    /// traffic than the copy itself, where a non-temporal store writes the line whole).
    Streaming,
}

/// A 16-byte shuffle that makes a strided run contiguous.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Shuffle {
    /// Source stride −width: elements reversed.
    Reverse,
    /// Source stride 2·width: every other element kept.
    Evens,
    /// Output stride 2·width, source stride width (a store's `a[:, ::2] = b`): every other
    /// output element written, a vector at a time, the elements between loaded with it and
    /// stored back unchanged. A vector ends before the run's next element, so it never reaches
    /// past the run, nor into another worker's part of it.
    Spread,
}

/// What the code generator can do on the machine a nest is scheduled for.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Target {
    /// One instruction shuffles the bytes of a 128-bit vector by a constant mask (x86 SSSE3
    /// `pshufb`, AArch64 `tbl`).
    pub byte_shuffles: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct LoopNest {
    pub kind: NestKind,
    /// Element width in bytes (1, 2, 4 or 8): kernels move bytes, dtypes do not matter.
    pub width: u8,
    /// Loop extents, outermost first. Empty for a single element (0-d output).
    pub extents: Vec<SymExpr>,
    /// Output byte strides per loop.
    pub out: Vec<SymExpr>,
    /// A store's gathered destination (`a[idx] = v`): byte contributions added to the output
    /// offset, each where its index stops moving ([`Term::hoist_level`]); empty for loads. The
    /// passes give no loop a strategy of its own outside a pending output term, so only
    /// serial loops walk them.
    pub out_terms: Vec<Term>,
    pub data: Stream,
    /// How each loop runs, outermost first.
    pub strategies: Vec<Strategy>,
    /// The output has no elements for any binding: nothing runs. (A generic kernel also runs
    /// nothing when an extent is 0 at run time: it tests its symbolic extents first.)
    pub empty: bool,
    /// The bytes each buffer in the kernel's table holds, relative to its table pointer (a
    /// zero-mode miss may read a non-empty buffer's element `[0, ..., 0]` instead of branching
    /// around the load; read-ahead stays inside them); `None` for an empty buffer, or one whose
    /// size is symbolic.
    pub buffer_windows: Vec<Option<ByteWindow>>,
    /// Every distinct symbolic integer of the nest (extents, strides, bases, gather lengths), in
    /// the order of its slot in the parameter block; empty for a concrete nest. Set once the
    /// passes have run.
    pub params: Vec<SymExpr>,
    /// A combining store's arithmetic (`+=`, `*=`), done on each element as it is written; its
    /// innermost loop may be `Strided` (computed along the stride), no other strategy: the
    /// element is computed, not copied.
    pub combine: Option<Combining>,
    /// A masked store's value (`a[m] = 0`, `a[m, 1:] += 1`): one element, read at the same
    /// address for every update (its strides are all 0). `data` then reads the mask's bytes,
    /// and each element of the box is written with the value where its byte is nonzero and with
    /// itself elsewhere, so no branch depends on the mask. The loops stay serial, the innermost
    /// maybe a [`Strategy::MaskedRun`] or [`Strategy::MaskedRow`].
    pub masked_value: Option<Stream>,
}

/// The symbol of the function a [`Copy::Streaming`] block calls, `(dst, src, bytes)`: it copies
/// `bytes` bytes, the destination's whole cache lines with non-temporal stores. The JIT provides
/// it (`jit::copy_streaming`) and fences those stores when the kernel returns; an AOT object
/// defines it as a plain memcpy (`clif::define_copy_streaming`).
pub const COPY_STREAMING: &str = "slc_copy_streaming";

/// The symbol of the function a streaming [`Strategy::MaskedRow`] or [`Strategy::Fill`] calls, `(dst, pattern,
/// bytes)`: it fills `bytes` bytes with the 16 bytes at `pattern` repeated from `dst` on, the
/// destination's whole lines with non-temporal stores. The JIT provides it
/// (`jit::fill_streaming`); an AOT object defines it as a plain fill
/// (`clif::define_fill_streaming`).
pub const FILL_STREAMING: &str = "slc_fill_streaming";

/// The symbol of the function a [`Strategy::SpreadAhead`] run of `width`-byte elements calls,
/// `(dst, src, count)`: it stores element `k` of the `count` at `src` into element `2k` from
/// `dst`, and never touches the elements between. The JIT provides it (`jit::spread_ahead`),
/// prefetching both streams 4 KiB ahead: a store into every other element reads each line of
/// its target first, and the hardware's prefetchers stop at each 4 KiB page, which left
/// `a[:, ::2] = b` at the memory's latency (`benches/strided_store_floor.c`). An AOT object
/// defines it as a plain loop (`clif::define_spread_ahead`: Cranelift has no prefetch).
pub fn spread_ahead_symbol(width: u8) -> &'static str {
    match width {
        1 => "slc_spread_ahead_1",
        2 => "slc_spread_ahead_2",
        4 => "slc_spread_ahead_4",
        _ => "slc_spread_ahead_8",
    }
}

/// The bytes of a [`Strategy::TransposeTiles`] tile's side: a cache line.
pub const TRANSPOSE_TILE_BYTES: i64 = 64;

/// Whether `e` is the constant `c`.
pub fn is_const(e: &SymExpr, c: i64) -> bool {
    e.as_const() == Some(c)
}

impl Stream {
    /// Every integer of the stream (base, strides, then each gather's index stream, length and
    /// stride), depth first: the order code generation meets them.
    pub fn push_numbers(&self, all: &mut Vec<SymExpr>) {
        all.push(self.base.clone());
        all.extend(self.strides.iter().cloned());
        for t in &self.terms {
            t.push_numbers(all);
        }
    }

    /// Whether loop `level` leaves the stream (and every index stream nested in it) where it is.
    pub fn invariant_at(&self, level: usize) -> bool {
        is_const(&self.strides[level], 0) && self.terms.iter().all(|t| t.index.invariant_at(level))
    }
}

impl Term {
    /// Every integer of the term (its index stream's, its length and stride), depth first.
    pub fn push_numbers(&self, all: &mut Vec<SymExpr>) {
        self.index.push_numbers(all);
        all.push(self.len.clone());
        all.push(self.stride.clone());
    }

    /// The loop depth from which the term's index no longer changes: one past the deepest loop
    /// its index stream (or any nested one) moves along. Code generation evaluates the term
    /// there, once for all the loops inside.
    pub fn hoist_level(&self) -> usize {
        fn deepest(s: &Stream) -> usize {
            let own = s.strides.iter().rposition(|x| !is_const(x, 0)).map_or(0, |d| d + 1);
            s.terms.iter().map(Term::hoist_level).fold(own, usize::max)
        }
        deepest(&self.index)
    }
}

impl LoopNest {
    /// Every stride vector of the nest (output, data, index streams at any depth).
    fn for_each_strides(&mut self, f: &mut dyn FnMut(&mut Vec<SymExpr>)) {
        fn walk(s: &mut Stream, f: &mut dyn FnMut(&mut Vec<SymExpr>)) {
            f(&mut s.strides);
            for t in &mut s.terms {
                walk(&mut t.index, f);
            }
        }
        f(&mut self.out);
        for t in &mut self.out_terms {
            walk(&mut t.index, f);
        }
        walk(&mut self.data, f);
        if let Some(value) = &mut self.masked_value {
            walk(value, f);
        }
    }

    fn all_strides(&self) -> Vec<Vec<SymExpr>> {
        let mut copy = self.clone();
        let mut all = vec![];
        copy.for_each_strides(&mut |s| all.push(s.clone()));
        all
    }

    /// The data stream's gathers that loop `depth` (or one inside it) moves: those evaluated
    /// inside the loop rather than once before it.
    pub fn pending_terms(&self, depth: usize) -> impl Iterator<Item = &Term> {
        self.data.terms.iter().filter(move |t| t.hoist_level() > depth)
    }

    /// Whether every gathered destination index stays put along loop `depth` and the loops
    /// inside it: the output offset is known on entering the loop, as strategies other than a
    /// serial loop need.
    pub fn out_fixed_from(&self, depth: usize) -> bool {
        self.out_terms.iter().all(|t| t.hoist_level() <= depth)
    }

    /// The number of elements of the outermost loop (the range a caller may split), or 1 for a
    /// 0-d output.
    pub fn outer_extent(&self) -> SymExpr {
        self.extents.first().cloned().unwrap_or_else(|| SymExpr::constant(1))
    }

    /// For a guarded gather reading ahead by the call ([`GatherAhead::ByCall`]): the bytes of
    /// the next row's span its pointer advances per element of the row, the span's bytes
    /// (`(len - 1) · |stride| + width`) divided by the row's elements, rounded down.
    pub fn ahead_per_element(&self) -> Option<SymExpr> {
        let last = self.extents.len().checked_sub(1)?;
        if self.strategies[last] != Strategy::GuardedGather(Some(GatherAhead::ByCall)) {
            return None;
        }
        let t = &self.data.terms[0];
        let reach = t.len.add_const(-1).mul(&SymExpr::constant(t.stride.as_const()?.abs()));
        let span = reach.add_const(self.width as i64);
        // A row of no elements runs nothing; the divisor stays positive for every binding.
        Some(span.floor_div(&self.extents[last].max2(&SymExpr::constant(1))))
    }

    /// Whether the kernel of this nest calls [`COPY_STREAMING`].
    pub fn streams(&self) -> bool {
        self.strategies.contains(&Strategy::Block(Copy::Streaming))
    }

    /// Whether a loop of the nest fills with [`FILL_STREAMING`].
    pub fn fills_streaming(&self) -> bool {
        self.strategies.iter().any(|s| {
            matches!(s, Strategy::MaskedRow { streaming: true } | Strategy::Fill { streaming: true })
        })
    }

    /// Whether a loop of the nest calls its width's [`spread_ahead_symbol`].
    pub fn spreads_ahead(&self) -> bool {
        self.strategies.contains(&Strategy::SpreadAhead)
    }

    /// Whether the kernel of this nest takes a parameter block: it has symbolic integers.
    pub fn takes_params(&self) -> bool {
        !self.params.is_empty()
    }

    /// The nest's symbolic integers, each once, in the order code generation meets them:
    /// extents, output strides, then the data stream depth first, then a combining store's
    /// first destination in its target.
    fn collect_params(&self) -> Vec<SymExpr> {
        let mut all: Vec<SymExpr> = self.extents.iter().chain(&self.out).cloned().collect();
        for t in &self.out_terms {
            t.push_numbers(&mut all);
        }
        self.data.push_numbers(&mut all);
        if let Some(value) = &self.masked_value {
            value.push_numbers(&mut all);
        }
        all.extend(self.ahead_per_element());
        all.extend(self.combine.as_ref().map(|c| c.base.clone()));
        let mut seen = std::collections::HashSet::new();
        all.into_iter().filter(|e| e.as_const().is_none() && seen.insert(e.clone())).collect()
    }
}

/// A concrete check as a generic one whose integers are constants.
fn generic_check(c: &Check) -> Check<SymExpr> {
    let constant = &mut |&v: &i64| Ok::<_, std::convert::Infallible>(SymExpr::constant(v));
    let index = c.index.try_map(constant).unwrap_or_else(|e| match e {});
    let shape = c.shape.iter().map(|&d| SymExpr::constant(d)).collect();
    Check { index, shape, len: SymExpr::constant(c.len), axis: c.axis, origin: c.origin }
}

/// The loop nest of `plan`'s output for `target`; `dump` sees it before the passes and after
/// each pass that changed it.
pub fn schedule(plan: &VerifiedPlan, target: Target, dump: impl FnMut(&str, &LoopNest)) -> LoopNest {
    passes::run(LoopNest::from_plan(&plan.generic()), target, dump)
}

/// The loop nest of `check` of `plan` for `target`, or `None` when it checks no value.
pub fn schedule_check(plan: &VerifiedPlan, check: &Check, target: Target) -> Option<LoopNest> {
    let nest = passes::run(LoopNest::from_check(&plan.generic(), &generic_check(check)), target, |_, _| {});
    (!nest.empty).then_some(nest)
}

/// The loop nest of a generic plan's output for `target` ([`schedule`] for every shape).
pub fn schedule_generic(
    plan: &VerifiedGenericPlan,
    target: Target,
    dump: impl FnMut(&str, &LoopNest),
) -> LoopNest {
    passes::run(LoopNest::from_plan(plan), target, dump)
}

/// The loop nest of `check` of a generic plan for `target`, or `None` when it checks no value
/// for any binding.
pub fn schedule_generic_check(
    plan: &VerifiedGenericPlan,
    check: &Check<SymExpr>,
    target: Target,
) -> Option<LoopNest> {
    let nest = passes::run(LoopNest::from_check(plan, check), target, |_, _| {});
    (!nest.empty).then_some(nest)
}

#[cfg(test)]
mod tests;
