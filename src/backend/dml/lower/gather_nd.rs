//! Index tuples (ONNX GatherND): terms that read consecutive entries of one index tensor's
//! dimension — `index{b; s} + j·c` for entry `j` — are one GATHER_ND1 whose indices have that
//! dimension last, instead of a graph of one gather per entry.

use super::*;
use crate::plan::Check;

/// Whether `terms` (at least two) read one index tuple: the same index buffer through the same
/// strides, entry `j` at `base_0 + j·c`, under one mode; constant tuples are normalized on the
/// host, dynamic ones must be `error`-mode (validated there), as for single terms.
pub(super) fn is_tuple(terms: &[Term]) -> bool {
    let Some((first, rest)) = terms.split_first() else { return false };
    let step = rest.first().map_or(0, |t| t.index.base - first.index.base);
    let constant = matches!(first.index.src, Src::Plan(BufferId::Const(_)));
    !rest.is_empty()
        && (constant || first.mode == OobMode::Error)
        && terms.iter().enumerate().all(|(j, t)| {
            t.index.terms.is_empty()
                && t.index.src == first.index.src
                && t.index.strides == first.index.strides
                && t.mode == first.mode
                && Some(t.index.base)
                    == (j as i64).checked_mul(step).and_then(|o| o.checked_add(first.index.base))
        })
}

/// Whether plan check `c` validates every value `index` reads over `shape` against `len`: the
/// check reads the same addresses over the leading dimensions and `index` ignores the rest
/// (gather_nd's per-entry checks cover its terms this way).
pub(super) fn covers(c: &Check, index: &Acc, len: i64, shape: &[i64]) -> bool {
    let lead = c.shape.len();
    index.terms.is_empty()
        && c.index.terms.is_empty()
        && Src::Plan(c.index.buffer) == index.src
        && c.len == len
        && c.index.base == index.base
        && lead <= shape.len()
        && c.shape[..] == shape[..lead]
        && (0..shape.len()).all(|d| {
            let want = if d < lead { c.index.strides[d] } else { 0 };
            shape[d] <= 1 || index.strides[d] == want
        })
}

impl Lowering<'_> {
    /// The index operand of a tuple of terms ([`is_tuple`]) over `shape`: like a single term's
    /// (`index_operand`), with one more dimension, the tuple, last.
    pub(super) fn tuple_operand(
        &mut self,
        terms: &[Term],
        shape: &[i64],
    ) -> Result<(Src, i64, Vec<i64>, DataType), DmlError> {
        let m = terms.len();
        let first = &terms[0];
        let mut ext_shape = shape.to_vec();
        ext_shape.push(m as i64);
        if let Src::Plan(BufferId::Const(_)) = first.index.src {
            // Each entry is normalized against its own axis, as a single term's constant; the
            // entries' constants (alike in layout) are then interleaved into one.
            let parts = terms.iter().map(|t| self.index_operand(t, shape)).collect::<Result<Vec<_>, _>>()?;
            let made = self.parts.constants.split_off(self.parts.constants.len() - m);
            let data_type = if made.iter().any(|c| c.data_type == DataType::Uint64) {
                DataType::Uint64
            } else {
                DataType::Uint32
            };
            let values =
                (0..made[0].values.len()).flat_map(|i| made.iter().map(move |c| c.values[i])).collect();
            self.parts.constants.push(Constant { data_type, values });
            let mut strides: Vec<i64> = parts[0].2.iter().map(|s| s * m as i64).collect();
            strides.push(1);
            return Ok((Src::Made(self.parts.constants.len() - 1), 0, strides, data_type));
        }
        for t in terms {
            self.guard(t, shape)?;
        }
        let mut strides = first.index.strides.clone();
        strides.push(terms[1].index.base - first.index.base);
        self.operand_view(first.index.src, first.index.base, strides, &ext_shape)
    }
}
