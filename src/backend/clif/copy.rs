//! Copies: single elements, block copies of contiguous runs (inline moves, a loop of 64-byte
//! moves, or memcpy, as the nest's [`Copy`] says), and rows of short blocks.

use super::index::StreamState;
use super::{Gen, NO_ARGS, vector_flags};
use crate::backend::loopnest::{Copy, INLINE_COPY_BYTES, LOOP_COPY_BYTES, SIZE_CLASS_COUNT};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, BlockArg, InstBuilder, MemFlagsData, Type, Value, types};

/// The runs of a size class of inline moves: `least` to `2 · least` bytes, moved `size` bytes at
/// a time as `ty`.
#[derive(Clone, Copy)]
struct SizeClass {
    least: i64,
    ty: Type,
    size: i64,
}

/// The size classes of runs of 1 to [`INLINE_COPY_BYTES`] bytes, largest first.
const SIZE_CLASSES: [SizeClass; SIZE_CLASS_COUNT] = [
    SizeClass { least: 32, ty: types::I8X16, size: 16 },
    SizeClass { least: 16, ty: types::I8X16, size: 16 },
    SizeClass { least: 8, ty: types::I64, size: 8 },
    SizeClass { least: 4, ty: types::I32, size: 4 },
    SizeClass { least: 2, ty: types::I16, size: 2 },
    SizeClass { least: 1, ty: types::I8, size: 1 },
];

/// The length of a block copy: known when compiling, or a value of the call.
#[derive(Clone, Copy)]
enum Bytes {
    Known(i64),
    Run(Value),
}

impl Gen<'_, '_> {
    pub(super) fn copy_element(&mut self, out: Value, out_off: Value, data: &StreamState) {
        let nest = self.nest;
        let ty = self.element_type();
        let (src, miss) = self.address(&nest.data, data);
        if let Some((value, _)) = self.masked_value {
            // `data` is the mask: the element becomes the value where its byte is nonzero and
            // stays itself elsewhere, with no branch on the byte.
            let bit = self.b.ins().load(types::I8, MemFlagsData::trusted(), src, 0);
            let dst = self.b.ins().iadd(out, out_off);
            let new = match (&nest.combine, self.old_base) {
                (Some(combine), Some(old_base)) => {
                    let at = self.b.ins().iadd(old_base, out_off);
                    self.combined(combine, at, 0, value)
                }
                _ => value,
            };
            let kept = self.b.ins().load(ty, MemFlagsData::trusted(), dst, 0);
            let element = self.b.ins().select(bit, new, kept);
            self.b.ins().store(MemFlagsData::trusted(), element, dst, 0);
            return;
        }
        let mut value = self.load_unless(ty, src, miss, nest.data.buffer);
        if let (Some(combine), Some(old_base)) = (&nest.combine, self.old_base) {
            let at = self.b.ins().iadd(old_base, out_off);
            value = self.combined(combine, at, 0, value);
        }
        let dst = self.b.ins().iadd(out, out_off);
        self.b.ins().store(MemFlagsData::trusted(), value, dst, 0);
    }

    /// The innermost loop `depth` as one block of bytes. Under an outer loop, the block is the
    /// whole run; alone (everything merged into one loop), the caller's range selects elements
    /// of it, and `copy` is memcpy.
    pub(super) fn emit_block(
        &mut self,
        depth: usize,
        copy: Copy,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let w = nest.width as i64;
        let (start, count) = match range {
            Some((begin, end)) => (begin, self.b.ins().isub(end, begin)),
            None => (self.b.ins().iconst(types::I64, 0), self.int(&nest.extents[depth])),
        };
        let skip = self.b.ins().imul_imm_s(start, w);
        let out_off = self.b.ins().iadd(out_off, skip);
        let data = self.advance(&nest.data, data, depth, start);
        let bytes = self.b.ins().imul_imm_s(count, w);
        let (src, miss) = self.address(&nest.data, &data);
        let dst = self.b.ins().iadd(out, out_off);
        let (copy_block, done) = (self.b.create_block(), self.b.create_block());
        if let Some(m) = miss {
            let zero_fill = self.b.create_block();
            self.b.ins().brif(m, zero_fill, NO_ARGS, copy_block, NO_ARGS);
            self.b.switch_to_block(zero_fill);
            let zero = self.b.ins().iconst(types::I8, 0);
            self.b.call_memset(self.config, dst, zero, bytes);
            self.b.ins().jump(done, NO_ARGS);
        } else {
            self.b.ins().jump(copy_block, NO_ARGS);
        }
        self.b.switch_to_block(copy_block);
        match copy {
            Copy::Inline => self.copy_inline((dst, 0), (src, 0), self.known(&nest.extents[depth]) * w),
            Copy::Loop => self.copy_loop(dst, src, Bytes::Known(self.known(&nest.extents[depth]) * w)),
            Copy::Memcpy => self.b.call_memcpy(self.config, dst, src, bytes),
            Copy::Streaming => {
                let f = self.copy_streaming.expect("imported where the nest streams");
                self.b.ins().call(f, &[dst, src, bytes]);
            }
            Copy::BySize { loop_copy } => {
                let (inline, longer) = (self.b.create_block(), self.b.create_block());
                let short = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, bytes, INLINE_COPY_BYTES);
                self.b.ins().brif(short, inline, NO_ARGS, longer, NO_ARGS);
                self.b.switch_to_block(inline);
                self.copy_inline_sized(dst, src, bytes);
                self.b.ins().jump(done, NO_ARGS);
                self.b.switch_to_block(longer);
                if loop_copy {
                    let (by_loop, by_call) = (self.b.create_block(), self.b.create_block());
                    let fits =
                        self.b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, bytes, LOOP_COPY_BYTES);
                    self.b.ins().brif(fits, by_loop, NO_ARGS, by_call, NO_ARGS);
                    self.b.switch_to_block(by_loop);
                    self.copy_loop(dst, src, Bytes::Run(bytes));
                    self.b.ins().jump(done, NO_ARGS);
                    self.b.switch_to_block(by_call);
                }
                self.b.call_memcpy(self.config, dst, src, bytes);
            }
        }
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// Copies `n` (≤ [`INLINE_COPY_BYTES`]) bytes from `src` to `dst` (each a pointer and a
    /// byte offset) with as few moves as possible: 16-byte vectors, the last one overlapping
    /// the one before, or for shorter runs two overlapping scalars.
    fn copy_inline(&mut self, dst: (Value, i64), src: (Value, i64), n: i64) {
        let mut moves: Vec<(Type, i64)> = vec![];
        let widest = [(16, types::I8X16), (8, types::I64), (4, types::I32), (2, types::I16), (1, types::I8)];
        if let Some(&(size, ty)) = widest.iter().find(|(size, _)| *size <= n) {
            let mut at = 0;
            while at + size <= n {
                moves.push((ty, at));
                at += size;
            }
            if at < n {
                moves.push((ty, n - size));
            }
        }
        // Load everything first: the moves may overlap each other, never the two buffers.
        let values: Vec<Value> = moves
            .iter()
            .map(|&(ty, at)| {
                let (p, off) = self.split_offset(src.0, src.1 + at);
                self.b.ins().load(ty, vector_flags(), p, off)
            })
            .collect();
        for (&(_, at), v) in moves.iter().zip(values) {
            let (p, off) = self.split_offset(dst.0, dst.1 + at);
            self.b.ins().store(vector_flags(), v, p, off);
        }
    }

    /// Copies `n` bytes, at most [`INLINE_COPY_BYTES`] and known only at run time, with the
    /// moves of the size class `n` falls in ([`Gen::copy_class`]).
    fn copy_inline_sized(&mut self, dst: Value, src: Value, n: Value) {
        let done = self.b.create_block();
        for class in SIZE_CLASSES {
            let (this, next) = (self.b.create_block(), self.b.create_block());
            let fits = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, n, class.least);
            self.b.ins().brif(fits, this, NO_ARGS, next, NO_ARGS);
            self.b.switch_to_block(this);
            let back = self.b.ins().iadd_imm_s(n, -class.least);
            let (src_end, dst_end) = (self.b.ins().iadd(src, back), self.b.ins().iadd(dst, back));
            self.copy_class(class, [(dst, 0), (src, 0)], [(dst_end, 0), (src_end, 0)]);
            self.b.ins().jump(done, NO_ARGS);
            self.b.switch_to_block(next);
        }
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// The moves [`Gen::copy_inline`] makes for a run of `class` (16-byte vectors, or two
    /// scalars of the widest size that fits): `class.least` bytes at `start` and `class.least`
    /// bytes at `end` (`class.least` before the run's end), each a destination and a source, a
    /// pointer and an offset; together all of a run of `class.least` to `2 · class.least` bytes.
    fn copy_class(&mut self, class: SizeClass, start: [(Value, i64); 2], end: [(Value, i64); 2]) {
        let moves: Vec<([(Value, i64); 2], i64)> = (0..class.least / class.size)
            .flat_map(|m| [(start, m * class.size), (end, m * class.size)])
            .collect();
        // Load everything first: the moves overlap each other, never the two buffers.
        let values: Vec<Value> = moves
            .iter()
            .map(|&([_, (s, at)], off)| {
                let (p, off) = self.split_offset(s, at + off);
                self.b.ins().load(class.ty, vector_flags(), p, off)
            })
            .collect();
        for (&([(d, at), _], off), v) in moves.iter().zip(values) {
            let (p, off) = self.split_offset(d, at + off);
            self.b.ins().store(vector_flags(), v, p, off);
        }
    }

    /// Copies `n` (at least [`INLINE_COPY_BYTES`]) bytes from `src` to `dst`: 64 bytes per
    /// loop trip, then the last 64 bytes again, overlapping what the loop copied (the buffers
    /// never overlap each other), for the part the loop left. Its own loop rather than
    /// [`Gen::strided_loop`]: at least one trip is known to run, and unrolled trips (256 bytes
    /// each) made `a[:, 1:-1]` compile half again as long for no measurable gain.
    fn copy_loop(&mut self, dst: Value, src: Value, n: Bytes) {
        let chunk = INLINE_COPY_BYTES;
        let trip = self.b.create_block();
        for ty in [self.ptr, self.ptr, types::I64] {
            self.b.append_block_param(trip, ty);
        }
        let trips = match n {
            Bytes::Known(n) => self.b.ins().iconst(types::I64, n / chunk),
            Bytes::Run(n) => self.b.ins().ushr_imm_s(n, chunk.trailing_zeros() as i64),
        };
        self.b.ins().jump(trip, &[BlockArg::Value(dst), BlockArg::Value(src), BlockArg::Value(trips)]);
        self.b.switch_to_block(trip);
        let p = self.b.block_params(trip).to_vec();
        self.copy_inline((p[0], 0), (p[1], 0), chunk);
        let d = self.b.ins().iadd_imm_s(p[0], chunk);
        let s = self.b.ins().iadd_imm_s(p[1], chunk);
        let left = self.b.ins().iadd_imm_s(p[2], -1);
        let (more, done) =
            (self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, left, 0), self.b.create_block());
        self.b.ins().brif(
            more,
            trip,
            &[BlockArg::Value(d), BlockArg::Value(s), BlockArg::Value(left)],
            done,
            NO_ARGS,
        );
        self.b.switch_to_block(done);
        match n {
            Bytes::Known(n) if n % chunk != 0 => self.copy_inline((dst, n - chunk), (src, n - chunk), chunk),
            Bytes::Known(_) => {}
            Bytes::Run(n) => {
                let last = self.b.ins().iadd_imm_s(n, -chunk);
                let (d, s) = (self.b.ins().iadd(dst, last), self.b.ins().iadd(src, last));
                self.copy_inline((d, 0), (s, 0), chunk);
            }
        }
    }

    /// Loops `depth` (rows) and `depth + 1` (a block short enough to copy inline) when every
    /// gather is fixed along the rows and none can miss (`a[2:, ..., :10]`: 40 bytes of every
    /// row of 256): pointers walk the rows, several per trip, so that more rows' reads are in
    /// flight at once (a row per trip left a third of the time on the table). A block of a
    /// symbolic length (`by_size`) picks its size class once, and runs that class's loop; a
    /// block longer than [`INLINE_COPY_BYTES`] runs the rows one by one, each copied by the
    /// inner loop's strategy.
    pub(super) fn emit_block_rows(
        &mut self,
        depth: usize,
        by_size: bool,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        // By size: the run's bytes, and where the rows run serially and where all runs end.
        let by_size = by_size.then(|| {
            let (short, serial, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
            let n = self.int(&nest.extents[depth + 1]);
            let n = self.b.ins().imul_imm_s(n, nest.width as i64);
            let fits = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThanOrEqual, n, INLINE_COPY_BYTES);
            self.b.ins().brif(fits, short, NO_ARGS, serial, NO_ARGS);
            self.b.switch_to_block(short);
            (n, serial, done)
        });
        let (lo, hi) = self.bounds(depth, range);
        let count = self.b.ins().isub(hi, lo);
        let data_lo = self.advance(&nest.data, data, depth, lo);
        let (src, _) = self.address(&nest.data, &data_lo);
        let skip = self.mul_int(lo, &nest.out[depth]);
        let dst = self.b.ins().iadd(out, out_off);
        let dst = self.b.ins().iadd(dst, skip);
        let steps = [nest.out[depth].clone(), nest.data.strides[depth].clone()];
        let Some((n, serial, done)) = by_size else {
            let bytes = self.known(&nest.extents[depth + 1]) * nest.width as i64;
            self.strided_loop(&[dst, src], &steps, count, |g, p, k, _| {
                let (dst, src) = (g.at(p[0], k, &steps[0]), g.at(p[1], k, &steps[1]));
                g.copy_inline(dst, src, bytes);
            });
            return;
        };
        for class in SIZE_CLASSES {
            let (this, next) = (self.b.create_block(), self.b.create_block());
            let fits = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, n, class.least);
            self.b.ins().brif(fits, this, NO_ARGS, next, NO_ARGS);
            self.b.switch_to_block(this);
            let back = self.b.ins().iadd_imm_s(n, -class.least);
            let (dst_end, src_end) = (self.b.ins().iadd(dst, back), self.b.ins().iadd(src, back));
            let pointers = [dst, src, dst_end, src_end];
            let strides = [steps[0].clone(), steps[1].clone(), steps[0].clone(), steps[1].clone()];
            self.strided_loop(&pointers, &strides, count, |g, p, k, _| {
                let [d, s, d_end, s_end] = [0, 1, 2, 3].map(|i| g.at(p[i], k, &strides[i]));
                g.copy_class(class, [d, s], [d_end, s_end]);
            });
            self.b.ins().jump(done, NO_ARGS);
            self.b.switch_to_block(next);
        }
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(serial);
        // Every destination term was added to `out_off` outside these rows (`out_fixed_from`).
        self.emit_serial(depth, out, out_off, data.clone(), vec![], range);
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// On a zero-mode `miss`, fills `count` units of `unit` bytes at `dst` with zeros and jumps
    /// to `done`; code emitted after this call runs on a hit.
    pub(super) fn zero_fill_on(
        &mut self,
        miss: Option<Value>,
        done: Block,
        dst: Value,
        count: Value,
        unit: i64,
    ) {
        let Some(m) = miss else { return };
        let (zero_fill, copy) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(m, zero_fill, NO_ARGS, copy, NO_ARGS);
        self.b.switch_to_block(zero_fill);
        let zero = self.b.ins().iconst(types::I8, 0);
        let bytes = self.b.ins().imul_imm_s(count, unit);
        self.b.call_memset(self.config, dst, zero, bytes);
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(copy);
    }
}
