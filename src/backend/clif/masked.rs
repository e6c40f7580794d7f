//! A masked store's innermost loop, where its mask bytes are consecutive or one for the whole
//! row ([`MaskedRun`](crate::backend::loopnest::Strategy::MaskedRun),
//! [`MaskedRow`](crate::backend::loopnest::Strategy::MaskedRow)).
//!
//! A masked run: output elements and mask bytes both consecutive. Each trip reads 16 mask bytes, compares
//! them with zero once, and for each 16 output bytes they cover shuffles the comparison into
//! that vector's lanes (a lane of `w` bytes repeats its element's byte `w` times), then blends
//! the value into the element where set. Elements outside the mask are loaded and stored back
//! unchanged, as the element-by-element loop does, so no branch depends on the mask.
//!
//! A masked row (`a[r] = 0` with a mask over rows): the row's one byte skips it or sets all of
//! it, so the rows the mask leaves out are not touched at all.

use super::index::StreamState;
use super::{Gen, NO_ARGS, vector_flags};
use crate::backend::loopnest::Combining;
use crate::types::sym::SymExpr;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Endianness, InstBuilder, MemFlagsData, Type, Value, types};

/// Mask bytes, and so elements, per vector trip.
const LANES: i64 = 16;

impl Gen<'_, '_> {
    /// Loop `depth`, a masked run: 16 elements per trip, then one at a time.
    pub(super) fn emit_masked_run(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let w = nest.width as i64;
        let (value, _) = self.masked_value.expect("a masked run belongs to a masked store");
        let (lo, hi) = self.bounds(depth, range);
        let count = self.b.ins().isub(hi, lo);
        let data = self.advance(&nest.data, data, depth, lo);
        // The mask has no index terms (verified): its address cannot miss.
        let (mask, _) = self.address(&nest.data, &data);
        let skip = self.b.ins().imul_imm_s(lo, w);
        let out_off = self.b.ins().iadd(out_off, skip);
        let dst = self.b.ins().iadd(out, out_off);
        let old = match (&nest.combine, self.old_base) {
            (Some(_), Some(old_base)) => self.b.ins().iadd(old_base, out_off),
            _ => dst,
        };
        let combine = nest.combine.as_ref();
        let blend = match combine {
            None => Some(Blend::Set(self.splat_bytes(value))),
            Some(c) => self.combine_vector_type(c).map(|ty| {
                let lane = match ty.lane_type() == self.element_type() {
                    true => value,
                    false => self.b.ins().bitcast(ty.lane_type(), MemFlagsData::new(), value),
                };
                Blend::Combined(ty, self.b.ins().splat(ty, lane))
            }),
        };
        let (mut dst, mut mask, mut old, mut count) = (dst, mask, old, count);
        if let Some(blend) = blend {
            let trips = self.b.ins().ushr_imm_u(count, LANES.trailing_zeros() as i64);
            let bytes = SymExpr::constant(LANES * w);
            let steps = [bytes.clone(), SymExpr::constant(LANES), bytes];
            self.strided_loop(&[dst, mask, old], &steps, trips, |g, p, k, _| {
                g.masked_trip(combine, blend, (p[0], p[1], p[2]), k);
            });
            let done = self.b.ins().ishl_imm_u(trips, LANES.trailing_zeros() as i64);
            let done_bytes = self.b.ins().imul_imm_s(done, w);
            dst = self.b.ins().iadd(dst, done_bytes);
            old = self.b.ins().iadd(old, done_bytes);
            mask = self.b.ins().iadd(mask, done);
            count = self.b.ins().isub(count, done);
        }
        let ty = self.element_type();
        let steps = [SymExpr::constant(w), SymExpr::constant(1), SymExpr::constant(w)];
        self.strided_loop(&[dst, mask, old], &steps, count, |g, p, k, _| {
            let set = g.b.ins().load(types::I8, MemFlagsData::trusted(), p[1], k as i32);
            let new = match combine {
                Some(c) => g.combined(c, p[2], (k * w) as i32, value),
                None => value,
            };
            let kept = g.b.ins().load(ty, MemFlagsData::trusted(), p[0], (k * w) as i32);
            let element = g.b.ins().select(set, new, kept);
            g.b.ins().store(MemFlagsData::trusted(), element, p[0], (k * w) as i32);
        });
    }

    /// Loop `depth`, a masked row: its one mask byte, read once, skips the row or sets (or
    /// combines) every element of it, 16 bytes at a time where the elements are consecutive.
    pub(super) fn emit_masked_row(
        &mut self,
        depth: usize,
        streaming: bool,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let (value, value_at) = self.masked_value.expect("a masked row belongs to a masked store");
        let (lo, hi) = self.bounds(depth, range);
        // The mask does not move along the row, nor miss (it has no index terms).
        let (mask, _) = self.address(&nest.data, data);
        let (fill, done) = (self.b.create_block(), self.b.create_block());
        let set = self.b.ins().load(types::I8, MemFlagsData::trusted(), mask, 0);
        self.b.ins().brif(set, fill, NO_ARGS, done, NO_ARGS);
        self.b.switch_to_block(fill);
        let count = self.b.ins().isub(hi, lo);
        let out_stride = &nest.out[depth];
        let skip = self.mul_int(lo, out_stride);
        let out_off = self.b.ins().iadd(out_off, skip);
        let dst = self.b.ins().iadd(out, out_off);
        match (&nest.combine, self.old_base) {
            (Some(combine), Some(old_base)) => {
                let old = self.b.ins().iadd(old_base, out_off);
                let broadcast = SymExpr::constant(0);
                self.combine_run(combine, (dst, value_at, old), count, &broadcast, out_stride);
            }
            _ if streaming => self.fill_streaming(dst, count, value),
            _ => self.fill_run(dst, count, out_stride, value),
        }
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// Trip `k` of the vector loop: 16 elements at `dst` (old ones at `old`), 16 mask bytes at
    /// `mask`.
    fn masked_trip(
        &mut self,
        combine: Option<&Combining>,
        blend: Blend,
        (dst, mask, old): (Value, Value, Value),
        k: i64,
    ) {
        let w = self.nest.width as i64;
        let bytes = self.b.ins().load(types::I8X16, vector_flags(), mask, (k * LANES) as i32);
        let zero = self.b.ins().iconst(types::I8, 0);
        let zero = self.b.ins().splat(types::I8X16, zero);
        let set = self.b.ins().icmp(IntCC::NotEqual, bytes, zero);
        for v in 0..w {
            let at = (k * LANES * w + v * 16) as i32;
            // Byte j of vector v belongs to element v·16/w + j/w.
            let lanes = match w {
                1 => set,
                _ => {
                    let order: Vec<u8> = (0..16).map(|j| (v * 16 / w + j / w) as u8).collect();
                    let order = self.b.func.dfg.immediates.push(order.into());
                    self.b.ins().shuffle(set, set, order)
                }
            };
            let new = match blend {
                Blend::Set(value) => value,
                Blend::Combined(ty, value) => {
                    let before = self.b.ins().load(ty, vector_flags(), old, at);
                    let c = combine.expect("a combined blend has a combine");
                    let r = self.combine_values(c, before, value);
                    self.b.ins().bitcast(types::I8X16, little(), r)
                }
            };
            let kept = self.b.ins().load(types::I8X16, vector_flags(), dst, at);
            let element = self.b.ins().bitselect(lanes, new, kept);
            self.b.ins().store(vector_flags(), element, dst, at);
        }
    }
}

/// What a trip blends into the elements its mask selects.
#[derive(Clone, Copy)]
enum Blend {
    /// The value's bytes, repeated.
    Set(Value),
    /// The value repeated in lanes of the combine's vector type, combined with the old elements.
    Combined(Type, Value),
}

/// Byte order for a bitcast between vectors of different lanes: memory's, so lane `i` of `w`
/// bytes is bytes `i·w..` of the 16.
pub(super) fn little() -> MemFlagsData {
    MemFlagsData::new().with_endianness(Endianness::Little)
}
