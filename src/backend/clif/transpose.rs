//! Reads of a transposed layout in tiles ([`TransposeTiles`](crate::backend::loopnest::Strategy::TransposeTiles)):
//! a tile's rows each copy its columns by a strided copy, so the lines the tile reads across
//! are used whole while they are cached.

use super::Gen;
use super::index::StreamState;
use crate::backend::loopnest::TRANSPOSE_TILE_BYTES;
use cranelift_codegen::ir::{InstBuilder, Value, types};

impl Gen<'_, '_> {
    /// Loops `depth` (rows, in `range`) and `depth + 1` (columns) in tiles of `tile` × `tile`
    /// elements (a line of each), the last ones cut to the loops' ends. The nest has no gathers,
    /// so nothing can miss.
    pub(super) fn emit_transpose_tiles(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let tile = (TRANSPOSE_TILE_BYTES / nest.width as i64).max(1);
        let (lo, hi) = self.bounds(depth, range);
        let cols = self.int(&nest.extents[depth + 1]);
        let (col_stride, col_out) = (&nest.data.strides[depth + 1], &nest.out[depth + 1]);
        let zero = self.b.ins().iconst(types::I64, 0);
        let row_tiles = self.tiles(lo, hi, tile);
        let col_tiles = self.tiles(zero, cols, tile);
        self.counted_loop(zero, row_tiles, |g, r| {
            let first_row = g.b.ins().imul_imm_s(r, tile);
            let first_row = g.b.ins().iadd(lo, first_row);
            let end_row = g.b.ins().iadd_imm_s(first_row, tile);
            let end_row = g.b.ins().smin(end_row, hi);
            g.counted_loop(zero, col_tiles, |g, c| {
                let first_col = g.b.ins().imul_imm_s(c, tile);
                let end_col = g.b.ins().iadd_imm_s(first_col, tile);
                let end_col = g.b.ins().smin(end_col, cols);
                let count = g.b.ins().isub(end_col, first_col);
                // The tile's first column in output row 0, once per tile.
                let col_off = g.mul_int(first_col, col_out);
                let tile_out = g.b.ins().iadd(out, out_off);
                let tile_out = g.b.ins().iadd(tile_out, col_off);
                let columns = g.advance(&nest.data, data, depth + 1, first_col);
                g.counted_loop(first_row, end_row, |g, i| {
                    let at = g.advance(&nest.data, &columns, depth, i);
                    let (src, _) = g.address(&nest.data, &at);
                    let row_off = g.mul_int(i, &nest.out[depth]);
                    let dst = g.b.ins().iadd(tile_out, row_off);
                    g.scalar_loop(dst, src, count, col_stride, col_out);
                });
            });
        });
    }

    /// The tiles of `tile` elements (a power of two) that cover `[lo, hi)`: none where it is empty.
    fn tiles(&mut self, lo: Value, hi: Value, tile: i64) -> Value {
        let n = self.b.ins().isub(hi, lo);
        let n = self.b.ins().iadd_imm_s(n, tile - 1);
        let zero = self.b.ins().iconst(types::I64, 0);
        let n = self.b.ins().smax(n, zero);
        self.b.ins().ushr_imm_u(n, tile.trailing_zeros() as i64)
    }
}
