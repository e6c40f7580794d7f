//! Grouped steps: a step of an output nest that moves no vectors takes the 16 bytes of
//! consecutive output elements that start at `lin * group` (C order) — their coordinates by
//! division once, then advanced element by element with carries into the outer loops — reads
//! each as the element code does (its index terms, out-of-range policies and zero-filled
//! misses), and stores them with one 16-byte store where the output pointer allows it (slc's
//! allocations do; a caller's pointer need not be aligned: then element by element). The last
//! step of the nest takes the elements left over, stored one by one.
//!
//! A failure aborts the whole step (the rest of its group is neither read nor stored) and
//! records its own element, `first + k`: the group's elements run in C order, so the first
//! failing element in C order is still the one `atomicMin` keeps.

use super::{Body, Gen, move_type};
use crate::backend::cuda::CudaError;
use crate::backend::loopnest::LoopNest;
use std::fmt::Write;

impl Gen<'_> {
    /// The body of one step of the output `nest` (error word `slot`) moving `group` elements.
    pub(super) fn group_step(
        &self,
        b: &mut Body,
        nest: &LoopNest,
        slot: usize,
        group: u64,
    ) -> Result<(), CudaError> {
        let t = b.t;
        let width = nest.width;
        let (ty, lane) = (move_type(width), lanes(width));
        // `first` stays below the nest's element count: see `NARROW_ELEMENTS` for why that
        // fits the 32-bit kernel.
        let _ = writeln!(b.text, "      const {} first = lin * {group};", t.u);
        self.coordinates(b, nest, "first", 1, true);
        // The next element's coordinates: the innermost one steps, carrying outwards; past the
        // nest's last element (the outermost coordinate at its extent) the group ends.
        let mut advance = String::from("break;");
        for (d, extent) in nest.extents.iter().enumerate() {
            let e = self.int(extent, t);
            advance = if d == 0 {
                format!("if (++c0 == {e}) {advance}")
            } else {
                format!("if (++c{d} == {e}) {{ c{d} = 0; {advance} }}")
            };
        }
        let end = b.label();
        let miss = b.label();
        // Unrolled (NVRTC, nvcc), so that the lanes stay in registers; a host compiler ignores
        // the pragma.
        let _ = writeln!(
            b.text,
            "      slc_g16 g;\n      {u} k;\n#pragma unroll\n      for (k = 0; k < {group}; k++) {{\n      if (k > 0) {{ {advance} }}",
            u = t.u
        );
        // To the step's end, out of the loop (`continue` would go on to the next element); the
        // jump passes no initialization in scope at the label, which C++ would refuse.
        let fail = |kind: u64| format!("{{ {} goto {end}; }}", self.record(slot, "first + k", kind, true));
        let offset = self.access(b, &nest.data, &fail, &miss, false)?;
        let _ = writeln!(
            b.text,
            "      g.{lane}[k] = *(const {ty}*)(b{} + {offset}); continue;\n      {miss}: g.{lane}[k] = 0;\n      }}",
            nest.data.buffer
        );
        // `k` elements were gathered: all of the group but at the nest's end.
        let _ = writeln!(
            b.text,
            "      if (k == {group} && out16) *(slc_v16*)(out + ({s})first * {width}) = g.v;
      else {{
        {u} j;
#pragma unroll
        for (j = 0; j < {group}; j++) if (j < k) *({ty}*)(out + ({s})(first + j) * {width}) = g.{lane}[j];
      }}
      {end}:;",
            s = t.s,
            u = t.u
        );
        Ok(())
    }
}

/// The lanes of `slc_g16` holding elements of `width` bytes.
fn lanes(width: u8) -> &'static str {
    match width {
        1 => "b",
        2 => "h",
        4 => "w",
        _ => "d",
    }
}
