//! A run of one value over consecutive elements: a fill run
//! ([`Fill`](crate::backend::loopnest::Strategy::Fill), `a[1:] = 0`) and the set rows of a
//! masked row. 16 bytes at a time, or past the caches by `loopnest::FILL_STREAMING`, whose
//! non-temporal stores do not read a line before writing it.

use super::index::StreamState;
use super::masked::little;
use super::vector::StridedRun;
use super::{Gen, NO_ARGS, vector_flags};
use crate::backend::loopnest::is_const;
use crate::types::sym::SymExpr;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Value, types};

impl Gen<'_, '_> {
    /// Loop `depth`, a fill run: its one value, loaded once (a zero-mode miss fills zeros),
    /// set over the run.
    pub(super) fn emit_fill(
        &mut self,
        depth: usize,
        streaming: bool,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let StridedRun { dst, src, count, done, .. } = self.strided_run(depth, out, out_off, data, range);
        let fill = self.b.create_block();
        // A thread's share of the run may be empty: then nothing is read.
        let empty = self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, count, 0);
        self.b.ins().brif(empty, done, NO_ARGS, fill, NO_ARGS);
        self.b.switch_to_block(fill);
        let ty = self.element_type();
        let value = self.b.ins().load(ty, MemFlagsData::trusted(), src, 0);
        match streaming {
            true => self.fill_streaming(dst, count, value),
            false => self.fill_run(dst, count, &self.nest.out[depth], value),
        }
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// `count` elements by `out_stride` bytes from `dst` set to `value`: 16 bytes at a time
    /// where they are consecutive, then one at a time.
    pub(super) fn fill_run(&mut self, dst: Value, count: Value, out_stride: &SymExpr, value: Value) {
        let w = self.nest.width as i64;
        let (mut dst, mut count) = (dst, count);
        if is_const(out_stride, w) && w <= 8 {
            let lanes = (16 / w).trailing_zeros() as i64;
            let bytes = self.splat_bytes(value);
            let trips = self.b.ins().ushr_imm_u(count, lanes);
            self.strided_loop(&[dst], &[SymExpr::constant(16)], trips, |g, p, k, _| {
                g.b.ins().store(vector_flags(), bytes, p[0], (k * 16) as i32);
            });
            let done = self.b.ins().ishl_imm_u(trips, lanes);
            let done_bytes = self.b.ins().imul_imm_s(done, w);
            dst = self.b.ins().iadd(dst, done_bytes);
            count = self.b.ins().isub(count, done);
        }
        self.strided_loop(&[dst], std::slice::from_ref(out_stride), count, |g, p, k, _| {
            let (d, d_off) = g.at(p[0], k, out_stride);
            let (d, d_off) = g.split_offset(d, d_off);
            g.b.ins().store(MemFlagsData::trusted(), value, d, d_off);
        });
    }

    /// `count` consecutive elements from `dst` set to `value` by `loopnest::FILL_STREAMING`,
    /// the value's 16 bytes passed on the stack.
    pub(super) fn fill_streaming(&mut self, dst: Value, count: Value, value: Value) {
        let f = self.fill_streaming.expect("imported where the nest fills streaming");
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4));
        let pattern = self.b.ins().stack_addr(self.ptr, slot, 0);
        let bytes = self.splat_bytes(value);
        self.b.ins().store(vector_flags(), bytes, pattern, 0);
        let n = self.b.ins().imul_imm_s(count, self.nest.width as i64);
        self.b.ins().call(f, &[dst, pattern, n]);
    }

    /// One element's bits repeated over 16 bytes.
    pub(super) fn splat_bytes(&mut self, value: Value) -> Value {
        let ty = self.element_type();
        let lanes = ty.by(16 / ty.bytes()).expect("an element of at most 8 bytes");
        let v = self.b.ins().splat(lanes, value);
        match lanes == types::I8X16 {
            true => v,
            false => self.b.ins().bitcast(types::I8X16, little(), v),
        }
    }
}
