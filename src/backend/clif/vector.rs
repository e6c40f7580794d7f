//! Strided copies: an unrolled loop of element moves, after 16-byte shuffles where the nest
//! says (reversed runs, every other element, reversed tiles of pixels).

use super::index::StreamState;
use super::{Gen, NO_ARGS, vector_flags};
use crate::backend::loopnest::{Shuffle, is_const};
use crate::types::sym::SymExpr;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, BlockArg, InstBuilder, MemFlagsData, Value, types};

/// What one 16-byte move of [`Gen::vector_loop`] does.
#[derive(Clone, Copy)]
enum VectorMove {
    /// A strided run made contiguous.
    Run(Shuffle),
    /// Tiles of `elems` elements each reversed in place.
    Tiles { elems: i64 },
}

/// A strided run's start ([`Gen::strided_run`]): its first output and data addresses, its
/// element count, its output offset, and the block after it.
pub(super) struct StridedRun {
    pub dst: Value,
    pub src: Value,
    pub count: Value,
    pub out_off: Value,
    pub done: Block,
}

impl Gen<'_, '_> {
    /// The innermost loop when every gathered term is fixed along it: `count` elements from
    /// `src` by a constant stride into the output, shuffled 16 bytes at a time first where
    /// `shuffle` says. A zero-mode miss fills the run with zeros.
    pub(super) fn emit_strided(
        &mut self,
        depth: usize,
        shuffle: Option<Shuffle>,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let (stride, out_stride) = (&nest.data.strides[depth], &nest.out[depth]);
        let StridedRun { dst, src, count, out_off, done } =
            self.strided_run(depth, out, out_off, data, range);
        // A combining store's run (its nest has no zero-mode term: the passes see to it).
        if let (Some(combine), Some(old_base)) = (&nest.combine, self.old_base) {
            let old = self.b.ins().iadd(old_base, out_off);
            self.combine_run(combine, (dst, src, old), count, stride, out_stride);
            self.b.ins().jump(done, NO_ARGS);
            self.b.switch_to_block(done);
            return;
        }
        let (dst, src, count) = match shuffle {
            Some(s) => self.vector_loop(VectorMove::Run(s), dst, src, count),
            None => (dst, src, count),
        };
        self.scalar_loop(dst, src, count, stride, out_stride);
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// The innermost loop of a spread run past the caches: its elements stored by a call to the
    /// width's `loopnest::spread_ahead_symbol`, which prefetches as it goes.
    pub(super) fn emit_spread_ahead(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let f = self.spread_ahead.expect("imported where the nest spreads ahead");
        let StridedRun { dst, src, count, done, .. } = self.strided_run(depth, out, out_off, data, range);
        self.b.ins().call(f, &[dst, src, count]);
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// Where a strided run of loop `depth` starts, in its `range`: a zero-mode miss has filled
    /// it with zeros and jumped to `done`, which the caller switches to once it has moved it.
    pub(super) fn strided_run(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) -> StridedRun {
        let nest = self.nest;
        let (w, out_stride) = (nest.width as i64, &nest.out[depth]);
        let (lo, hi) = self.bounds(depth, range);
        let count = self.b.ins().isub(hi, lo);
        let data = self.advance(&nest.data, data, depth, lo);
        let (src, miss) = self.address(&nest.data, &data);
        let skip = self.mul_int(lo, out_stride);
        let out_off = self.b.ins().iadd(out_off, skip);
        let dst = self.b.ins().iadd(out, out_off);
        let done = self.b.create_block();
        // Only check nests write with strides other than w, and they have no zero-mode terms.
        debug_assert!(miss.is_none() || is_const(out_stride, w));
        self.zero_fill_on(miss, done, dst, count, w);
        StridedRun { dst, src, count, out_off, done }
    }

    /// Loops `depth` (tiles) and `depth + 1` (elements, reversed) of an affine copy: shuffled
    /// 16 bytes at a time, then tile by tile. A zero-mode miss fills the tiles with zeros. A
    /// symbolic tile size is compared with each size up to 8 bytes, whose version of the loop
    /// runs; larger tiles (or single elements) are copied as `[serial, strided reverse]`.
    pub(super) fn emit_reversed_tiles(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let w = nest.width as i64;
        let (lo, hi) = self.bounds(depth, range);
        let count = self.b.ins().isub(hi, lo);
        let data = self.advance(&nest.data, data, depth, lo);
        // The stream points at each tile's last element (read first).
        let (last, miss) = self.address(&nest.data, &data);
        let Some(elems) = nest.extents[depth + 1].as_const() else {
            let skip = self.mul_int(lo, &nest.out[depth]);
            let out_off = self.b.ins().iadd(out_off, skip);
            let dst = self.b.ins().iadd(out, out_off);
            let done = self.b.create_block();
            let bytes = self.mul_int(count, &nest.out[depth]);
            self.zero_fill_on(miss, done, dst, bytes, 1);
            let n = self.int(&nest.extents[depth + 1]);
            for elems in 2..=8 / w {
                let (this, next) = (self.b.create_block(), self.b.create_block());
                let is = self.b.ins().icmp_imm_s(IntCC::Equal, n, elems);
                self.b.ins().brif(is, this, NO_ARGS, next, NO_ARGS);
                self.b.switch_to_block(this);
                let src = self.b.ins().iadd_imm_s(last, -(elems - 1) * w);
                self.reversed_tiles(elems, dst, src, count);
                self.b.ins().jump(done, NO_ARGS);
                self.b.switch_to_block(next);
            }
            let zero = self.b.ins().iconst(types::I64, 0);
            self.counted_loop(zero, count, |g, i| {
                let step = g.mul_int(i, &nest.out[depth]);
                let tile_off = g.b.ins().iadd(out_off, step);
                let tile = g.advance(&nest.data, &data, depth, i);
                g.emit_strided(depth + 1, Some(Shuffle::Reverse), out, tile_off, &tile, None);
            });
            self.b.ins().jump(done, NO_ARGS);
            self.b.switch_to_block(done);
            return;
        };
        let tile = elems * w;
        let src = self.b.ins().iadd_imm_s(last, -(elems - 1) * w);
        let skip = self.b.ins().imul_imm_s(lo, tile);
        let dst = self.b.ins().iadd(out, out_off);
        let dst = self.b.ins().iadd(dst, skip);
        let done = self.b.create_block();
        self.zero_fill_on(miss, done, dst, count, tile);
        self.reversed_tiles(elems, dst, src, count);
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// `count` tiles of `elems` elements from `src` to `dst`, each reversed: shuffled 16 bytes
    /// at a time, then tile by tile.
    fn reversed_tiles(&mut self, elems: i64, dst: Value, src: Value, count: Value) {
        let w = self.nest.width as i64;
        let tile = elems * w;
        let (dst, src, count) = self.vector_loop(VectorMove::Tiles { elems }, dst, src, count);
        let ty = self.element_type();
        let tiles = SymExpr::constant(tile);
        self.strided_loop(&[dst, src], &[tiles.clone(), tiles], count, |g, p, k, _| {
            let (d, s) = (p[0], p[1]);
            for e in 0..elems {
                let v =
                    g.b.ins().load(ty, MemFlagsData::trusted(), s, (k * tile + (elems - 1 - e) * w) as i32);
                g.b.ins().store(MemFlagsData::trusted(), v, d, (k * tile + e * w) as i32);
            }
        });
    }

    /// Moves 16 output bytes per iteration while the loads stay inside the elements the loop
    /// reads; returns where the scalar tail starts.
    fn vector_loop(
        &mut self,
        kind: VectorMove,
        dst: Value,
        src: Value,
        count: Value,
    ) -> (Value, Value, Value) {
        let w = self.nest.width as i64;
        let lanes = 16 / w;
        // `count` counts elements, or tiles for Tiles; each trip moves `per_trip` of them and
        // `dst_step` output bytes, and needs `need` of them left for its loads and its store.
        let (mask, need, per_trip, dst_step, src_step, load_at): (Vec<u8>, i64, i64, i64, i64, i64) =
            match kind {
                // Lane j of the result is element j of the run, which sits at src − j·w.
                VectorMove::Run(Shuffle::Reverse) => {
                    let mask = (0..lanes).flat_map(|j| (0..w).map(move |b| ((lanes - 1 - j) * w + b) as u8));
                    (mask.collect(), lanes, lanes, 16, -16, w - 16)
                }
                // Lane j of the result is element 2j of the 32 bytes loaded; the second load reads one
                // element past the last one used, so one more element must remain.
                VectorMove::Run(Shuffle::Evens) => {
                    let mask = (0..lanes).flat_map(|j| (0..w).map(move |b| (2 * j * w + b) as u8));
                    (mask.collect(), lanes + 1, lanes, 16, 32, 0)
                }
                // Lane j of the result is, for even j, element j/2 of the 16 source bytes loaded (bytes
                // 16 on of the shuffle's pair), else lane j of the 16 output bytes loaded. The source
                // load reads `lanes` elements, and the output's last lane lies before the run's next
                // element: `lanes` must remain for `lanes / 2` written.
                VectorMove::Run(Shuffle::Spread) => {
                    let mask = (0..lanes).flat_map(|j| {
                        (0..w).map(move |b| match j % 2 {
                            0 => (16 + j / 2 * w + b) as u8,
                            _ => (j * w + b) as u8,
                        })
                    });
                    (mask.collect(), lanes, lanes / 2, 16, 8, 0)
                }
                // Byte j < tiles·E of the result is byte j of tile j/E with its elements reversed; the
                // bytes past the whole tiles are junk that the next trip (or the tail) overwrites, so
                // 16 bytes of tiles must remain for both the load and the store.
                VectorMove::Tiles { elems } => {
                    let tile = elems * w;
                    let tiles = 16 / tile;
                    let mask = (0..16).map(|j| match j < tiles * tile {
                        true => ((j / tile) * tile + (elems - 1 - (j % tile) / w) * w + j % w) as u8,
                        false => 0,
                    });
                    (mask.collect(), (16 + tile - 1) / tile, tiles, tiles * tile, tiles * tile, 0)
                }
            };
        let mask = self.b.func.dfg.immediates.push(mask.into());
        // Four vectors per trip while enough remain, then one at a time.
        let mut at = (dst, src, count);
        for vectors in [4, 1] {
            let (header, body, exit) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
            for block in [header, exit] {
                self.b.append_block_param(block, self.ptr);
                self.b.append_block_param(block, self.ptr);
                self.b.append_block_param(block, types::I64);
            }
            let (d, s, n) = at;
            self.b.ins().jump(header, &[BlockArg::Value(d), BlockArg::Value(s), BlockArg::Value(n)]);
            self.b.switch_to_block(header);
            let p = self.b.block_params(header).to_vec();
            let (d, s, n) = (p[0], p[1], p[2]);
            let more =
                self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, n, (vectors - 1) * per_trip + need);
            let args = [BlockArg::Value(d), BlockArg::Value(s), BlockArg::Value(n)];
            self.b.ins().brif(more, body, NO_ARGS, exit, &args);
            self.b.switch_to_block(body);
            for k in 0..vectors {
                let (from, to) = (k * src_step, k * dst_step);
                let v = self.b.ins().load(types::I8X16, vector_flags(), s, (from + load_at) as i32);
                let shuffled = match kind {
                    VectorMove::Run(Shuffle::Evens) => {
                        let hi = self.b.ins().load(types::I8X16, vector_flags(), s, (from + 16) as i32);
                        self.b.ins().shuffle(v, hi, mask)
                    }
                    VectorMove::Run(Shuffle::Spread) => {
                        let old = self.b.ins().load(types::I8X16, vector_flags(), d, to as i32);
                        self.b.ins().shuffle(old, v, mask)
                    }
                    _ => self.b.ins().shuffle(v, v, mask),
                };
                self.b.ins().store(vector_flags(), shuffled, d, to as i32);
            }
            let d2 = self.b.ins().iadd_imm_s(d, vectors * dst_step);
            let s2 = self.b.ins().iadd_imm_s(s, vectors * src_step);
            let n2 = self.b.ins().iadd_imm_s(n, -vectors * per_trip);
            self.b.ins().jump(header, &[BlockArg::Value(d2), BlockArg::Value(s2), BlockArg::Value(n2)]);
            self.b.switch_to_block(exit);
            let p = self.b.block_params(exit).to_vec();
            at = (p[0], p[1], p[2]);
        }
        at
    }

    /// `count` elements one at a time by pointer increments, four per loop trip.
    pub(super) fn scalar_loop(
        &mut self,
        dst: Value,
        src: Value,
        count: Value,
        stride: &SymExpr,
        out_stride: &SymExpr,
    ) {
        let ty = self.element_type();
        self.strided_loop(&[dst, src], &[out_stride.clone(), stride.clone()], count, |g, p, k, _| {
            let (d, s) = (p[0], p[1]);
            let (s, s_off) = g.at(s, k, stride);
            let (s, s_off) = g.split_offset(s, s_off);
            let v = g.b.ins().load(ty, MemFlagsData::trusted(), s, s_off);
            let (d, d_off) = g.at(d, k, out_stride);
            let (d, d_off) = g.split_offset(d, d_off);
            g.b.ins().store(MemFlagsData::trusted(), v, d, d_off);
        });
    }
}
