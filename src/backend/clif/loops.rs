//! The loops the strategies share: unrolled pointer loops whose trips may be guarded
//! ([`Gen::loop_over`]), and plain counted loops.

use super::{Gen, NO_ARGS};
use crate::backend::loopnest::{UNROLL, UNROLLED_STEP_MAX, unroll_versions, unrolls};
use crate::types::sym::SymExpr;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{BlockArg, InstBuilder, Value, types};

/// The body of a loop emitted by [`Gen::loop_over`].
pub(super) trait Iteration<'a, 'n> {
    /// Emitted first in every unrolled trip of `trip` iterations at pointers `p`: a condition
    /// under which the trip's iterations run one per trip instead (their general form); the
    /// iterations of a trip whose guard passed are emitted `guarded` and may assume it did.
    fn guard(&mut self, _g: &mut Gen<'a, 'n>, _p: &[Value], _trip: i64) -> Option<Value> {
        None
    }

    /// Iteration `k` of a trip of `trip` iterations at pointers `p`.
    fn element(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], k: i64, trip: i64, guarded: bool);
}

/// A loop body with no guard: `body(g, pointers, k, trip)`.
struct Plain<F>(F);

impl<'a, 'n, F: FnMut(&mut Gen<'a, 'n>, &[Value], i64, i64)> Iteration<'a, 'n> for Plain<F> {
    fn element(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], k: i64, trip: i64, _guarded: bool) {
        (self.0)(g, p, k, trip)
    }
}

impl<'a, 'n> Gen<'a, 'n> {
    /// `count` iterations over pointers that advance by `strides` bytes each, [`UNROLL`]
    /// iterations per loop trip then one: `body(pointers, k, trip)` emits iteration `k` of a
    /// trip of `trip` iterations ([`Gen::loop_over`]).
    pub(super) fn strided_loop(
        &mut self,
        starts: &[Value],
        strides: &[SymExpr],
        count: Value,
        body: impl FnMut(&mut Self, &[Value], i64, i64),
    ) {
        self.loop_over(starts, strides, count, Plain(body));
    }

    /// `count` iterations over pointers that advance by `strides` bytes each: [`UNROLL`] per
    /// loop trip while that many remain, then one per trip. A trip whose [`Iteration::guard`]
    /// holds runs its iterations one per trip instead. Loops whose pointers leap more than
    /// [`UNROLLED_STEP_MAX`] bytes per unrolled trip run one iteration per trip: each load of
    /// an unrolled trip is its own instruction, and the hardware's per-instruction stride
    /// prefetcher stops following such strides (`a[:, 0]` on rows of 16 KiB ran 30 % slower
    /// unrolled). Where a stride is symbolic the loop is emitted both ways and the call's
    /// strides choose. Both loops test at the bottom of their trips.
    pub(super) fn loop_over(
        &mut self,
        starts: &[Value],
        strides: &[SymExpr],
        count: Value,
        mut body: impl Iteration<'a, 'n>,
    ) {
        if !strides.iter().filter_map(SymExpr::as_const).all(unrolls) {
            return self.loop_over_as(starts, strides, count, &mut body, false);
        }
        let mut all_short = None;
        for s in strides.iter().filter(|s| s.as_const().is_none()) {
            let v = self.param(s);
            let magnitude = self.b.ins().iabs(v);
            let limit = (UNROLLED_STEP_MAX / UNROLL as u64) as i64;
            let ok = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, magnitude, limit);
            all_short = Some(match all_short {
                Some(a) => self.b.ins().band(a, ok),
                None => ok,
            });
        }
        let Some(all_short) = all_short else {
            return self.loop_over_as(starts, strides, count, &mut body, true);
        };
        // `LoopNest::versions` counts the two loops.
        debug_assert_eq!(unroll_versions(strides), 2);
        let (unrolled, rolled, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().brif(all_short, unrolled, NO_ARGS, rolled, NO_ARGS);
        for (block, unroll) in [(unrolled, true), (rolled, false)] {
            self.b.switch_to_block(block);
            self.loop_over_as(starts, strides, count, &mut body, unroll);
            self.b.ins().jump(join, NO_ARGS);
        }
        self.b.switch_to_block(join);
    }

    /// [`Gen::loop_over`], unrolled or not.
    fn loop_over_as(
        &mut self,
        starts: &[Value],
        strides: &[SymExpr],
        count: Value,
        body: &mut impl Iteration<'a, 'n>,
        unroll: bool,
    ) {
        let pointers = starts.len();
        // Each block takes the pointers and the iterations left; `single` also the count at
        // which to stop stepping one at a time (0, or where a guarded trip that bailed ends).
        let [unrolled, single, after] = [(); 3].map(|_| {
            let block = self.b.create_block();
            for _ in 0..pointers {
                self.b.append_block_param(block, self.ptr);
            }
            self.b.append_block_param(block, types::I64);
            block
        });
        self.b.append_block_param(single, types::I64);
        let (tail, exit) = (self.b.create_block(), self.b.create_block());
        let args = |values: &[Value], more: &[Value]| -> Vec<BlockArg> {
            values.iter().chain(more).map(|&v| BlockArg::Value(v)).collect()
        };
        let stepped = |g: &mut Self, p: &[Value], trip: i64| -> Vec<Value> {
            let mut next: Vec<Value> = (0..pointers)
                .map(|i| match strides[i].as_const() {
                    Some(s) => g.b.ins().iadd_imm_s(p[i], trip.wrapping_mul(s)),
                    None => {
                        let (step, _) = g.offset(None, trip, &strides[i]);
                        g.b.ins().iadd(p[i], step.expect("a symbolic stride's offset is a value"))
                    }
                })
                .collect();
            next.push(g.b.ins().iadd_imm_s(p[pointers], -trip));
            next
        };
        let mut at = starts.to_vec();
        at.push(count);
        self.b.ins().jump(after, &args(&at, &[]));

        // After a run of single steps (and at the start): unrolled trips while enough remain,
        // single steps to the end otherwise.
        self.b.switch_to_block(after);
        let p = self.b.block_params(after).to_vec();
        let n = p[pointers];
        if unroll {
            let more = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, n, UNROLL);
            self.b.ins().brif(more, unrolled, &args(&p, &[]), tail, NO_ARGS);
        } else {
            self.b.ins().jump(tail, NO_ARGS);
        }
        self.b.switch_to_block(tail);
        let (any, zero) =
            (self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, n, 0), self.b.ins().iconst(types::I64, 0));
        self.b.ins().brif(any, single, &args(&p, &[zero]), exit, NO_ARGS);

        if unroll {
            self.b.switch_to_block(unrolled);
            let p = self.b.block_params(unrolled).to_vec();
            if let Some(bail) = body.guard(self, &p[..pointers], UNROLL) {
                let (fast, stop) = (self.b.create_block(), self.b.ins().iadd_imm_s(p[pointers], -UNROLL));
                self.b.ins().brif(bail, single, &args(&p, &[stop]), fast, NO_ARGS);
                self.b.switch_to_block(fast);
            }
            for k in 0..UNROLL {
                body.element(self, &p[..pointers], k, UNROLL, true);
            }
            // The pointers may step past their buffers after the last trip (never used).
            let next = stepped(self, &p, UNROLL);
            let more = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, next[pointers], UNROLL);
            self.b.ins().brif(more, unrolled, &args(&next, &[]), after, &args(&next, &[]));
        }

        self.b.switch_to_block(single);
        let p = self.b.block_params(single).to_vec();
        body.element(self, &p[..pointers], 0, 1, false);
        let next = stepped(self, &p[..=pointers], 1);
        let stop = p[pointers + 1];
        let more = self.b.ins().icmp(IntCC::SignedGreaterThan, next[pointers], stop);
        self.b.ins().brif(more, single, &args(&next, &[stop]), after, &args(&next, &[]));
        self.b.switch_to_block(exit);
    }

    /// `for (i = lo; i < hi; i++) body(i)`.
    pub(super) fn counted_loop(&mut self, lo: Value, hi: Value, mut body: impl FnMut(&mut Self, Value)) {
        let (header, block, exit) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(header, types::I64);
        self.b.ins().jump(header, &[BlockArg::Value(lo)]);
        self.b.switch_to_block(header);
        let i = self.b.block_params(header)[0];
        let more = self.b.ins().icmp(IntCC::SignedLessThan, i, hi);
        self.b.ins().brif(more, block, NO_ARGS, exit, NO_ARGS);
        self.b.switch_to_block(block);
        body(self, i);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(header, &[BlockArg::Value(next)]);
        self.b.switch_to_block(exit);
    }
}

impl Gen<'_, '_> {
    /// Iteration `k` of a trip at pointer `p` advancing by `stride` per iteration: `p + k ·
    /// stride` as a pointer and an immediate offset (`p` itself and `k · stride` for a constant
    /// stride; a new pointer for a symbolic one). With `p` `None`: the offset alone.
    pub(super) fn offset(&mut self, p: Option<Value>, k: i64, stride: &SymExpr) -> (Option<Value>, i64) {
        match stride.as_const() {
            Some(s) => (p, k * s),
            None if k == 0 => (p, 0),
            None => {
                let s = self.param(stride);
                let step = if k == 1 { s } else { self.b.ins().imul_imm_s(s, k) };
                (Some(p.map_or(step, |p| self.b.ins().iadd(p, step))), 0)
            }
        }
    }

    /// [`Gen::offset`] from a pointer.
    pub(super) fn at(&mut self, p: Value, k: i64, stride: &SymExpr) -> (Value, i64) {
        let (q, off) = self.offset(Some(p), k, stride);
        (q.unwrap_or(p), off)
    }
}
