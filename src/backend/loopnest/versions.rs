//! How many versions of its loops a kernel carries, and the budget that bounds them. A loop
//! whose strategy decides per call (a block of a symbolic length by its size class, reversed
//! tiles by their size, an unrolled loop by the call's strides) is generated once per case;
//! nested, those cases would multiply. [`LoopNest::versions`] counts them as the code generator
//! emits them, and [`fit_budget`] (the last step of scheduling) trades per-call decisions for
//! the plain loop, outermost first, until the nest carries at most [`MAX_VERSIONS`]: the budget
//! is a total over the nest, spent on the innermost loops, where size classes pay.

use super::{Copy, GatherAhead, LoopNest, Shuffle, Strategy};
use crate::types::sym::SymExpr;

/// The most versions of its loops one kernel carries. The dispatches of the rank-2 to 4
/// benchmark cases (B5's block rows by size: 20) fit with room to spare.
pub const MAX_VERSIONS: usize = 32;

/// Iterations per trip of the code generator's unrolled loops.
pub const UNROLL: i64 = 4;
/// The most bytes a pointer of an unrolled loop may advance per trip.
pub const UNROLLED_STEP_MAX: u64 = 4096;

/// The inline size classes of a block whose length is symbolic (32-64 bytes, 16-31, ... 1).
pub const SIZE_CLASS_COUNT: usize = 6;

/// Whether a loop whose pointer advances `stride` bytes per iteration may be unrolled.
pub fn unrolls(stride: i64) -> bool {
    stride.unsigned_abs().saturating_mul(UNROLL as u64) <= UNROLLED_STEP_MAX
}

/// How many versions of a loop over pointers advancing by `strides` the code generator emits:
/// two (unrolled, and one iteration per trip) when a stride is symbolic and the constant ones
/// are short enough to unroll, the call's strides choosing; otherwise one.
pub fn unroll_versions(strides: &[SymExpr]) -> usize {
    let constants_short = strides.iter().filter_map(SymExpr::as_const).all(unrolls);
    let any_symbolic = strides.iter().any(|s| s.as_const().is_none());
    if constants_short && any_symbolic { 2 } else { 1 }
}

impl LoopNest {
    /// The versions of its innermost work the kernel of this nest carries: one per case of
    /// every per-call decision, nested decisions multiplied. 1 for a concrete nest.
    pub fn versions(&self) -> usize {
        if self.empty { 1 } else { self.versions_from(0) }
    }

    /// The versions of loop `depth` and the loops inside it (past the last loop: one element).
    fn versions_from(&self, depth: usize) -> usize {
        let Some(&strategy) = self.strategies.get(depth) else { return 1 };
        let d = depth;
        let row = || [self.out[d].clone(), self.data.strides[d].clone()];
        match strategy {
            Strategy::Serial => self.versions_from(d + 1),
            Strategy::Block(Copy::BySize { loop_copy }) => SIZE_CLASS_COUNT + loop_copy as usize + 1,
            Strategy::Block(_) | Strategy::MaskedRun | Strategy::SpreadAhead => 1,
            // A fill or combine loop is unrolled or not by the call, as a strided copy's.
            Strategy::MaskedRow { .. } | Strategy::Fill { .. } => unroll_versions(&[self.out[d].clone()]),
            Strategy::Strided(_) => unroll_versions(&row()),
            Strategy::BlockRows { by_size: false } => unroll_versions(&row()),
            // A loop per size class, else the rows one by one with the inner block's copy.
            Strategy::BlockRows { by_size: true } => {
                let [o, s] = row();
                SIZE_CLASS_COUNT * unroll_versions(&[o.clone(), s.clone(), o, s]) + self.versions_from(d + 1)
            }
            Strategy::ReversedTiles { by_size: false } => 1,
            // Each row of a tile is a strided copy of the inner loop.
            Strategy::TransposeTiles => {
                unroll_versions(&[self.out[d + 1].clone(), self.data.strides[d + 1].clone()])
            }
            // A version per tile size of 2..=8 bytes, else a strided reverse per tile.
            Strategy::ReversedTiles { by_size: true } => {
                let inner = [self.out[d + 1].clone(), self.data.strides[d + 1].clone()];
                (8 / self.width as usize).saturating_sub(1) + unroll_versions(&inner)
            }
            Strategy::GuardedGather(ahead) => {
                let mut strides = row().to_vec();
                strides.extend(self.pending_terms(d).map(|t| t.index.strides[d].clone()));
                match ahead {
                    // With the read-ahead's pointer (a parameter of the call), and without.
                    Some(GatherAhead::ByCall) => {
                        let without = unroll_versions(&strides);
                        strides.extend(self.ahead_per_element());
                        unroll_versions(&strides) + without
                    }
                    _ => unroll_versions(&strides),
                }
            }
            Strategy::IndexTable(_) => {
                let inner = [self.out[d + 1].clone(), self.data.strides[d + 1].clone(), SymExpr::constant(8)];
                unroll_versions(&inner)
            }
            Strategy::Joined => unreachable!("the loop outside loop {depth} runs it"),
        }
    }
}

/// Replaces per-call decisions by the strategies that need none, outermost first, until `nest`
/// carries at most `budget` versions; says whether it changed anything. Each replacement is
/// what a nest of that shape gets where the decision is not taken: the rows one by one
/// (block rows), a strided reverse per tile (reversed tiles), memcpy (a block by size). What
/// remains at the least is an innermost loop unrolled or not by the call (2 versions).
pub fn fit_budget(nest: &mut LoopNest, budget: usize) -> bool {
    let mut changed = false;
    while nest.versions() > budget {
        let Some(d) = nest.strategies.iter().position(|s| deciding(*s)) else { break };
        match nest.strategies[d] {
            Strategy::BlockRows { by_size: true } => nest.strategies[d] = Strategy::Serial,
            Strategy::ReversedTiles { by_size: true } => {
                // Reversed tiles are dense and read backwards, on a target with shuffles.
                nest.strategies[d] = Strategy::Serial;
                nest.strategies[d + 1] = Strategy::Strided(Some(Shuffle::Reverse));
            }
            Strategy::Block(Copy::BySize { .. }) => nest.strategies[d] = Strategy::Block(Copy::Memcpy),
            _ => unreachable!("`deciding` lists these"),
        }
        changed = true;
    }
    changed
}

/// Whether a strategy decides per call between versions of itself (and can do without).
fn deciding(s: Strategy) -> bool {
    matches!(
        s,
        Strategy::BlockRows { by_size: true }
            | Strategy::ReversedTiles { by_size: true }
            | Strategy::Block(Copy::BySize { .. })
    )
}
