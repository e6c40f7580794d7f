//! Gathers whose indices change along the innermost loop: guarded trips that test a trip's
//! indices at once ([`GatherRun`]), tables of offsets normalized once for every row
//! ([`TableRun`]), and reads of the next row ahead of the gathers within a row.

use super::index::StreamState;
use super::loops::Iteration;
use super::{Gen, NO_ARGS};
use crate::backend::loopnest::{ByteWindow, CACHE_LINE, GatherAhead, ReadAhead};
use crate::backend::loopnest::{TOUCH_MAX_BYTES, TOUCH_MIN_BYTES};
use crate::types::sym::SymExpr;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, Type, Value, types};

/// A table entry for a zero-mode miss; no real contribution (|index · stride| < buffer size)
/// can equal it.
const TABLE_MISS: i64 = i64::MIN;

/// A loop's reads of the next row ahead ([`ReadAhead`], [`Gen::row_ahead`]): a pointer from
/// `next` advancing `per_element` bytes per element (a parameter when read ahead by the call,
/// which reads ahead only where a line per unrolled trip covers the trip's elements).
struct RowAhead {
    next: Value,
    per_element: SymExpr,
}

/// The most bytes per element a read-ahead by the call may advance: a line per unrolled trip
/// of four elements covers them.
const BY_CALL_PER_ELEMENT_MAX: i64 = CACHE_LINE / 4;

/// The elements of a gather whose indices change along the loop ([`Gen::emit_guarded_gather`]).
/// Pointers: the output, the data (before the gathered contributions), one per index tensor
/// of `terms` (the pending terms of the data stream), then the next row's read-ahead if any.
/// Indices already in `[0, len)` mean the same under every mode, so an unrolled trip loads its
/// indices, tests them all at once, and when they are all inside (nearly always, in practice)
/// each element is a load and a store; a trip with an index outside, or under a missed row,
/// runs its elements one at a time with the mode's full normalization.
struct GatherRun {
    terms: Vec<usize>,
    strides: Vec<SymExpr>,
    /// A zero-mode miss of the row the data stream points into.
    row_miss: Option<Value>,
    ahead: Option<RowAhead>,
    /// The current trip's widened index values, by term then iteration (from the guard).
    indices: Vec<Vec<Value>>,
}

impl GatherRun {
    /// The index of term `n` for iteration `k` at pointers `p`, as stored (its index dtype).
    fn load_index(&self, g: &mut Gen, p: &[Value], n: usize, k: i64) -> Value {
        let t = &g.nest.data.terms[self.terms[n]];
        let ty = Type::int_with_byte_size(t.index_dtype.width() as u16).expect("1, 2, 4 or 8 bytes");
        let (ptr, off) = g.at(p[2 + n], k, &self.strides[2 + n]);
        let (ptr, off) = g.split_offset(ptr, off);
        g.b.ins().load(ty, MemFlagsData::trusted(), ptr, off)
    }
}

impl<'a, 'n> Iteration<'a, 'n> for GatherRun {
    fn guard(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], trip: i64) -> Option<Value> {
        let nest = g.nest;
        self.indices.clear();
        let mut bail = self.row_miss;
        for (n, &j) in self.terms.iter().enumerate() {
            let t = &nest.data.terms[j];
            let values: Vec<Value> = (0..trip)
                .map(|k| {
                    let raw = self.load_index(g, p, n, k);
                    g.widen_index(t, raw)
                })
                .collect();
            // As unsigned numbers (negatives are huge), all values are below len exactly when
            // their maximum is; for a power-of-two len, exactly when their bitwise or is.
            let pow2 = t.len.as_const().is_some_and(|n| n > 0 && n & (n - 1) == 0);
            let top = values
                .iter()
                .copied()
                .reduce(|a, b| if pow2 { g.b.ins().bor(a, b) } else { g.b.ins().umax(a, b) })
                .expect("a trip has iterations");
            let outside = g.cmp_int(IntCC::UnsignedGreaterThanOrEqual, top, &t.len);
            bail = g.either(bail, Some(outside));
            self.indices.push(values);
        }
        bail
    }

    fn element(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], k: i64, trip: i64, guarded: bool) {
        let nest = g.nest;
        let ty = g.element_type();
        let (data, off) = g.at(p[1], k, &self.strides[1]);
        let mut addr = g.advanced(data, off);
        let value = if guarded {
            for (n, &j) in self.terms.iter().enumerate() {
                let c = g.mul_int(self.indices[n][k as usize], &nest.data.terms[j].stride);
                addr = g.b.ins().iadd(addr, c);
            }
            g.b.ins().load(ty, MemFlagsData::trusted(), addr, 0)
        } else {
            let mut miss = self.row_miss;
            for (n, &j) in self.terms.iter().enumerate() {
                let raw = self.load_index(g, p, n, k);
                let (c, m) = g.contribution(&nest.data.terms[j], raw);
                addr = g.b.ins().iadd(addr, c);
                miss = g.either(miss, m);
            }
            g.load_unless(ty, addr, miss, nest.data.buffer)
        };
        let ahead = self.ahead.as_ref().map(|a| (a, p[2 + self.terms.len()]));
        let (out, off) = g.at(p[0], k, &self.strides[0]);
        g.store_element(value, out, off, ahead, k, trip);
    }
}

/// The elements of a row gathered through a table of normalized contributions
/// ([`Gen::emit_index_table`]). Pointers: the output, the data row, the table, then the
/// next row's read-ahead if any. The table holds a column of `columns` entries per pending
/// term; trips run without testing for misses unless `missed` holds.
struct TableRun {
    strides: Vec<SymExpr>,
    columns: i64,
    /// For each term's column, whether it may hold [`TABLE_MISS`] entries.
    may_miss: Vec<bool>,
    /// A zero-mode miss of the row the data stream points into.
    row_miss: Option<Value>,
    /// Whether any entry of the table, or the row, missed.
    missed: Option<Value>,
    ahead: Option<RowAhead>,
}

impl<'a, 'n> Iteration<'a, 'n> for TableRun {
    fn guard(&mut self, _g: &mut Gen<'a, 'n>, _p: &[Value], _trip: i64) -> Option<Value> {
        self.missed
    }

    fn element(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], k: i64, trip: i64, guarded: bool) {
        let nest = g.nest;
        let ty = g.element_type();
        let (data, off) = g.at(p[1], k, &self.strides[1]);
        let mut addr = g.advanced(data, off);
        let mut miss = if guarded { None } else { self.row_miss };
        for (j, &may) in self.may_miss.iter().enumerate() {
            let (t, t_off) = g.split_offset(p[2], (j as i64 * self.columns + k) * 8);
            let c = g.b.ins().load(types::I64, MemFlagsData::trusted(), t, t_off);
            addr = g.b.ins().iadd(addr, c);
            if may && !guarded {
                let m = g.b.ins().icmp_imm_s(IntCC::Equal, c, TABLE_MISS);
                miss = g.either(miss, Some(m));
            }
        }
        let value = g.load_unless(ty, addr, miss, nest.data.buffer);
        let ahead = self.ahead.as_ref().map(|a| (a, p[3]));
        let (out, off) = g.at(p[0], k, &self.strides[0]);
        g.store_element(value, out, off, ahead, k, trip);
    }
}

impl Gen<'_, '_> {
    /// The innermost loop over gathered elements whose indices change with it (`a[idx]` with
    /// 2-D `idx`, batched gathers): pointers into the output, the data and each index tensor
    /// advance together, several elements per trip ([`GatherRun`]).
    pub(super) fn emit_guarded_gather(
        &mut self,
        depth: usize,
        ahead: Option<GatherAhead>,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let (lo, hi) = self.bounds(depth, range);
        let count = self.b.ins().isub(hi, lo);
        let mut st = self.advance(&nest.data, data, depth, lo);
        let pending: Vec<usize> = (0..st.terms.len()).filter(|&j| st.terms[j].value.is_none()).collect();
        let mut starts = vec![];
        let mut strides = vec![nest.out[depth].clone(), nest.data.strides[depth].clone()];
        for &j in &pending {
            let index = &nest.data.terms[j].index;
            let base = self.base(index.buffer);
            starts.push(self.b.ins().iadd(base, st.terms[j].index.offset));
            strides.push(index.strides[depth].clone());
        }
        let zero = self.b.ins().iconst(types::I64, 0);
        for &j in &pending {
            st.terms[j].value = Some((zero, None));
        }
        let (src, row_miss) = self.address(&nest.data, &st);
        let known = match ahead {
            Some(GatherAhead::Known(a)) => Some(self.row_ahead(src, a, self.known(&nest.extents[depth]))),
            _ => None,
        };
        let skip = self.mul_int(lo, &nest.out[depth]);
        let dst = self.b.ins().iadd(out, out_off);
        let dst = self.b.ins().iadd(dst, skip);
        let starts: Vec<Value> = [dst, src].into_iter().chain(starts).collect();
        let run = |g: &mut Self, ahead: Option<RowAhead>| {
            let (mut starts, mut strides) = (starts.clone(), strides.clone());
            if let Some(a) = &ahead {
                starts.push(a.next);
                strides.push(a.per_element.clone());
            }
            let run = GatherRun {
                terms: pending.clone(),
                strides: strides.clone(),
                row_miss,
                ahead,
                indices: vec![],
            };
            g.loop_over(&starts, &strides, count, run);
        };
        if ahead != Some(GatherAhead::ByCall) {
            return run(self, known);
        }
        // Read ahead only where the call's span and pace qualify.
        let (ahead, without, done) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        let (qualifies, next) = self.row_ahead_by_call(src);
        self.b.ins().brif(qualifies, ahead, NO_ARGS, without, NO_ARGS);
        self.b.switch_to_block(ahead);
        let per_element = nest.ahead_per_element().expect("a read-ahead by the call");
        run(self, Some(RowAhead { next, per_element }));
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(without);
        run(self, None);
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// For a guarded gather over the outermost loop's rows reading ahead by the call
    /// ([`GatherAhead::ByCall`]): whether the call qualifies (the span within the `read-ahead`
    /// pass's limits, the pace per element from 1 to [`BY_CALL_PER_ELEMENT_MAX`] bytes), and the
    /// start of the next row's span from `src` (this row's address of gathered index 0),
    /// clamped between the first row's and the last row's (the last row touches itself).
    fn row_ahead_by_call(&mut self, src: Value) -> (Value, Value) {
        let nest = self.nest;
        let t = &nest.data.terms[0];
        let (w, stride) = (nest.width as i64, self.known(&t.stride));
        let per_element = self.param(&nest.ahead_per_element().expect("a read-ahead by the call"));
        let len = self.int(&t.len);
        let reach = self.b.ins().iadd_imm_s(len, -1);
        let reach = self.b.ins().imul_imm_s(reach, stride.abs());
        let span = self.b.ins().iadd_imm_s(reach, w);
        let mut qualifies = vec![
            self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, span, TOUCH_MIN_BYTES),
            self.b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, span, TOUCH_MAX_BYTES),
            self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, per_element, 1),
        ];
        qualifies.push(self.b.ins().icmp_imm_s(
            IntCC::SignedLessThanOrEqual,
            per_element,
            BY_CALL_PER_ELEMENT_MAX,
        ));
        let qualifies = qualifies.into_iter().reduce(|a, b| self.b.ins().band(a, b)).expect("conditions");
        // From gathered index 0 to the span's start: the reach, when the gather runs backwards.
        let to_start = match stride < 0 {
            true => self.b.ins().ineg(reach),
            false => self.b.ins().iconst(types::I64, 0),
        };
        let step = self.int(&nest.data.strides[0]);
        let next = self.b.ins().iadd(src, step);
        let next = self.b.ins().iadd(next, to_start);
        let base = self.base(nest.data.buffer);
        let first = self.add_int(base, &nest.data.base);
        let first = self.b.ins().iadd(first, to_start);
        let rows = self.int(&nest.extents[0]);
        let rows = self.b.ins().iadd_imm_s(rows, -1);
        let to_last = self.b.ins().imul(rows, step);
        let last = self.b.ins().iadd(first, to_last);
        let (lowest, highest) = (self.b.ins().umin(first, last), self.b.ins().umax(first, last));
        let next = self.b.ins().umax(next, lowest);
        (qualifies, self.b.ins().umin(next, highest))
    }

    /// Loops `depth` (rows) and `depth + 1` (columns) when the columns' gathers do not depend
    /// on the row: the gathered contributions are normalized once into a table on the stack,
    /// then every row copies through it.
    pub(super) fn emit_index_table(
        &mut self,
        depth: usize,
        ahead: Option<ReadAhead>,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let inner = depth + 1;
        let columns = self.known(&nest.extents[inner]);
        let pending: Vec<usize> = (0..data.terms.len()).filter(|&j| data.terms[j].value.is_none()).collect();
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (pending.len() as i64 * columns * 8) as u32,
            3,
        ));
        let table = self.b.ins().stack_addr(self.ptr, slot, 0);
        let (lo, hi) = self.bounds(depth, range);
        // No rows, no index reads: an empty range must not report an index error.
        let (fill, done) = (self.b.create_block(), self.b.create_block());
        let any = self.b.ins().icmp(IntCC::SignedLessThan, lo, hi);
        self.b.ins().brif(any, fill, NO_ARGS, done, NO_ARGS);
        self.b.switch_to_block(fill);

        // Fill: the contribution of every pending term for every column.
        let (zero, n) = (self.b.ins().iconst(types::I64, 0), self.b.ins().iconst(types::I64, columns));
        let mut may_miss = vec![false; pending.len()];
        // Whether any column missed: if none did, the rows need not test the table for misses.
        let missed = self.b.declare_var(types::I8);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b.def_var(missed, no);
        self.counted_loop(zero, n, |g, k| {
            let mut st = g.advance(&nest.data, data, inner, k);
            g.evaluate_terms(&nest.data, &mut st, nest.extents.len());
            let entry = g.b.ins().imul_imm_s(k, 8);
            let entry = g.b.ins().iadd(table, entry);
            for (j, &t) in pending.iter().enumerate() {
                let (c, miss) = st.terms[t].value.expect("evaluated above");
                let c = match miss {
                    Some(m) => {
                        may_miss[j] = true;
                        let so_far = g.b.use_var(missed);
                        let so_far = g.b.ins().bor(so_far, m);
                        g.b.def_var(missed, so_far);
                        let sentinel = g.b.ins().iconst(types::I64, TABLE_MISS);
                        g.b.ins().select(m, sentinel, c)
                    }
                    None => c,
                };
                g.b.ins().store(MemFlagsData::trusted(), c, entry, (j as i64 * columns * 8) as i32);
            }
        });
        // Rows: each copies its columns through the table; while neither the table (tested
        // once) nor the row missed (the common case), without testing for misses.
        let any_missed = may_miss.contains(&true).then(|| self.b.use_var(missed));
        self.counted_loop(lo, hi, |g, row| {
            let step = g.mul_int(row, &nest.out[depth]);
            let row_out = g.b.ins().iadd(out_off, step);
            let mut st = g.advance(&nest.data, data, depth, row);
            let zero = g.b.ins().iconst(types::I64, 0);
            for &t in &pending {
                st.terms[t].value = Some((zero, None));
            }
            let (src, row_miss) = g.address(&nest.data, &st);
            let ahead = ahead.map(|a| g.row_ahead(src, a, columns));
            let dst = g.b.ins().iadd(out, row_out);
            let mut starts = vec![dst, src, table];
            let mut strides =
                vec![nest.out[inner].clone(), nest.data.strides[inner].clone(), SymExpr::constant(8)];
            if let Some(a) = &ahead {
                starts.push(a.next);
                strides.push(a.per_element.clone());
            }
            let missed = g.either(any_missed, row_miss);
            let run = TableRun {
                strides: strides.clone(),
                columns,
                may_miss: may_miss.clone(),
                row_miss,
                missed,
                ahead,
            };
            let n = g.b.ins().iconst(types::I64, columns);
            g.loop_over(&starts, &strides, n, run);
        });
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// The pointer into the next row of a loop over a row's `elements` that reads it ahead:
    /// from `src`, this row's address of gathered index 0, clamped into the buffer (the last row
    /// touches itself). It advances by the span's bytes per element rounded down, so the
    /// touches stay inside the span without a test each ([`Gen::touch_ahead`]) and may leave
    /// its last few bytes (fewer than `elements`) unread.
    fn row_ahead(&mut self, src: Value, ahead: ReadAhead, elements: i64) -> RowAhead {
        let nest = self.nest;
        let ReadAhead { step, reach, span } = ahead;
        // Read ahead only runs over a buffer that holds the span (loopnest::passes::read_ahead).
        let window = nest.buffer_windows[nest.data.buffer].unwrap_or(ByteWindow { first: 0, end: span });
        let base = self.base(nest.data.buffer);
        let next = self.b.ins().iadd_imm_s(src, step + reach.min(0));
        let first = self.b.ins().iadd_imm_s(base, window.first);
        let last = self.b.ins().iadd_imm_s(base, window.end - span);
        let next = self.b.ins().umax(next, first);
        let next = self.b.ins().umin(next, last);
        RowAhead { next, per_element: SymExpr::constant(span / elements) }
    }

    /// Stores iteration `k`'s `value` at `out + off`, then reads ahead through `ahead` (the
    /// read-ahead and its loop pointer), if any.
    fn store_element(
        &mut self,
        value: Value,
        out: Value,
        off: i64,
        ahead: Option<(&RowAhead, Value)>,
        k: i64,
        trip: i64,
    ) {
        let (d, off) = self.split_offset(out, off);
        self.b.ins().store(MemFlagsData::trusted(), value, d, off);
        if let Some((a, at)) = ahead {
            self.touch_ahead(a, at, k, trip);
        }
    }

    /// Iteration `k` of a trip of `trip` iterations of a loop that reads the next row ahead:
    /// the trip's first iteration touches the lines its elements cover. `at`: the loop's pointer
    /// into the next row. The touches lie below `at + trip · per_element` (the last one is under
    /// a line past the one before), so, the whole loop advancing `at` by at most the span, inside
    /// the span.
    fn touch_ahead(&mut self, ahead: &RowAhead, at: Value, k: i64, trip: i64) {
        if k != 0 {
            return;
        }
        // By the call: a line per trip covers it (BY_CALL_PER_ELEMENT_MAX).
        let lines = ahead.per_element.as_const().map_or(1, |p| (trip * p + CACHE_LINE - 1) / CACHE_LINE);
        for line in 0..lines {
            self.b.ins().load(types::I8, MemFlagsData::trusted(), at, (line * CACHE_LINE) as i32);
        }
    }
}
