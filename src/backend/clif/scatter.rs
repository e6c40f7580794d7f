//! Rows written through a gathered destination ([`Strategy::WriteAhead`]): the serial loop
//! over rows asks for the destination lines of the row two ahead before copying this one.
//!
//! [`Strategy::WriteAhead`]: crate::backend::loopnest::Strategy::WriteAhead

use super::index::{StreamState, TermState, widen};
use super::{Gen, NO_ARGS};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types};

/// How many rows ahead the destination is prefetched: far enough that its lines arrive while
/// the rows between are copied.
const ROWS_AHEAD: i64 = 2;

impl Gen<'_, '_> {
    /// The loop over rows `depth` ([`Gen::emit_serial`]'s), each iteration first prefetching
    /// for writing the `row_bytes` of the destination [`ROWS_AHEAD`] rows on, where there is one.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn emit_write_ahead(
        &mut self,
        depth: usize,
        row_bytes: i64,
        out: Value,
        out_off: Value,
        data: StreamState,
        dest: Vec<TermState>,
        range: Option<(Value, Value)>,
    ) {
        let (lo, hi) = self.bounds(depth, range);
        self.counted_loop(lo, hi, |g, i| {
            let ahead = g.b.ins().iadd_imm_s(i, ROWS_AHEAD);
            let exists = g.b.ins().icmp(IntCC::SignedLessThan, ahead, hi);
            let (prefetch, body) = (g.b.create_block(), g.b.create_block());
            g.b.ins().brif(exists, prefetch, NO_ARGS, body, NO_ARGS);
            g.b.switch_to_block(prefetch);
            g.prefetch_destination(depth, row_bytes, out, out_off, &dest, ahead);
            g.b.ins().jump(body, NO_ARGS);
            g.b.switch_to_block(body);
            g.emit_iteration(depth, i, out, out_off, &data, &dest);
        });
    }

    /// Prefetches for writing the destination row of iteration `i` of loop `depth`. Its
    /// indices are read straight from their tensors (the pass admits no nested gather) and
    /// folded into range whatever their mode (negative ones counted from the end, then at most
    /// the last): a prefetch never faults, but its address stays in the output all the same.
    fn prefetch_destination(
        &mut self,
        depth: usize,
        row_bytes: i64,
        out: Value,
        out_off: Value,
        dest: &[TermState],
        i: Value,
    ) {
        let nest = self.nest;
        let step = self.mul_int(i, &nest.out[depth]);
        let mut at = self.b.ins().iadd(out_off, step);
        let states = self.advance_terms(&nest.out_terms, dest, depth, i);
        for (t, ts) in nest.out_terms.iter().zip(&states) {
            let (addr, _) = self.address(&t.index, &ts.index);
            let ty = Type::int_with_byte_size(t.index_dtype.width() as u16).expect("1, 2, 4 or 8 bytes");
            let raw = self.b.ins().load(ty, MemFlagsData::trusted(), addr, 0);
            let j = widen(&mut self.b, t.index_dtype, raw);
            let n = self.known(&t.len);
            let wrapped = match t.index_dtype.is_signed() {
                true => {
                    let negative = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, j, 0);
                    let from_end = self.b.ins().iadd_imm_s(j, n);
                    self.b.ins().select(negative, from_end, j)
                }
                false => j,
            };
            let last = self.b.ins().iconst(types::I64, n - 1);
            let index = self.b.ins().umin(wrapped, last);
            let contribution = self.mul_int(index, &t.stride);
            at = self.b.ins().iadd(at, contribution);
        }
        let row = self.b.ins().iadd(out, at);
        let bytes = self.b.ins().iconst(types::I64, row_bytes);
        let prefetch = self.prefetch.expect("a write-ahead nest's kernel imports the prefetch");
        self.b.ins().call(prefetch, &[row, bytes]);
    }
}
