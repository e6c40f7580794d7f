//! Gathers whose indices slc knows when it compiles, folded on the host so that one operator
//! does what would otherwise take a graph with intermediate tensors:
//! * a term of stride 0 moves nothing (a gather of a gather keeps one to check the inner
//!   indices against the outer axis): it is validated and dropped;
//! * indices computed from constants through other gathers (`a[[3, 1][[1, 0]]]`) become one
//!   constant tensor;
//! * several constant gathers, or one over a view that no tensor description can express
//!   (a negative step, an offset not a multiple of 16 bytes), become one GATHER of precomputed
//!   element offsets into the data buffer seen as one axis — except an index tuple that a
//!   GATHER_ND1 of the feature level reads over a describable view (`gather_nd.rs`, whose
//!   constant tuples interleave one normalized constant per entry); a constant tuple below
//!   GATHER_ND1's level, or over such a view, is folded here like any other set of terms.

use super::*;
use crate::types::IndexOutOfRange;

/// Whether the address `acc` forms varies along output dimension `d`.
pub(super) fn varies(acc: &Acc, d: usize) -> bool {
    acc.strides[d] != 0 || acc.terms.iter().any(|t| varies(&t.index, d))
}

/// The output dimensions (of size ≥ 2) along which the address `acc` forms varies: an index
/// operand is made over these alone, and broadcast over the others by stride 0.
pub(super) fn varying_dims(acc: &Acc, shape: &[i64]) -> Vec<usize> {
    (0..shape.len()).filter(|&d| shape[d] >= 2 && varies(acc, d)).collect()
}

/// Strides over `shape` of a tensor packed over its dimensions `used`: 0 on the others.
pub(super) fn spread_packed(shape: &[i64], used: &[usize]) -> Vec<i64> {
    let packed = packed_strides(&used.iter().map(|&d| shape[d]).collect::<Vec<_>>());
    let mut strides = vec![0; shape.len()];
    for (&d, p) in used.iter().zip(packed) {
        strides[d] = p;
    }
    strides
}

impl Lowering<'_> {
    /// Whether `acc` reads only the plan's constants, through its nested terms too.
    pub(super) fn host_known(&self, acc: &Acc) -> bool {
        matches!(acc.src, Src::Plan(BufferId::Const(_)))
            && acc.terms.iter().all(|t| self.host_known(&t.index))
    }

    /// The element address `acc` forms at output coordinate `c`, its terms' indices read from
    /// the plan's constants and normalized by their modes.
    pub(super) fn host_address(&self, acc: &Acc, c: &[i64]) -> Result<i64, DmlError> {
        let mut at = acc.base + c.iter().zip(&acc.strides).map(|(o, s)| o * s).sum::<i64>();
        for t in &acc.terms {
            at += t.stride * self.host_index(t, c)?;
        }
        Ok(at)
    }

    /// The index term `t` selects at output coordinate `c`: its host-known value normalized by
    /// the term's mode. A value the mode cannot map is refused as the device would need it.
    fn host_index(&self, t: &Term, c: &[i64]) -> Result<i64, DmlError> {
        let Src::Plan(BufferId::Const(k)) = t.index.src else {
            return Err(DmlError::Unsupported("a run-time index evaluated on the host".into()));
        };
        let at = self.host_address(&t.index, c)?;
        let v = self.plan.consts[k].tensor.int_at(at as usize).unwrap_or_default();
        match t.mode.normalize(v, t.len) {
            Ok(Some(j)) => Ok(j),
            Ok(None) => {
                let refusal = OobRefusal::ZeroFill { index: v, len: t.len };
                Err(DmlError::OobPolicy { mode: t.mode, refusal, at: t.origin })
            }
            Err(IndexOutOfRange) => Err(DmlError::Unsupported(format!(
                "the constant index {v} is out of range for an axis of {}",
                t.len
            ))),
        }
    }

    /// The host-known indices of `t` over `shape`: the output dimensions they vary along
    /// (size ≥ 2) and their values, C order over those dimensions.
    fn host_indices(&self, t: &Term, shape: &[i64]) -> Result<(Vec<usize>, Vec<i64>), DmlError> {
        let used = varying_dims(&t.index, shape);
        // Over an empty shape no index is read, so none is out of range (NumPy checks nothing
        // there either): `a[[], [-2]]` on an axis of 1.
        if shape.contains(&0) {
            return Ok((used, vec![]));
        }
        let sub: Vec<i64> = used.iter().map(|&d| shape[d]).collect();
        let mut values = Vec::with_capacity(sub.iter().product::<i64>() as usize);
        let mut c = vec![0; shape.len()];
        each_coord(&sub, |o| {
            for (&d, &v) in used.iter().zip(o) {
                c[d] = v;
            }
            values.push(self.host_index(t, &c)?);
            Ok::<(), DmlError>(())
        })?;
        Ok((used, values))
    }

    /// The index operand of a term with host-known indices: one constant of the normalized
    /// indices over the dimensions they vary along (stride 0 elsewhere).
    pub(super) fn constant_operand(
        &mut self,
        t: &Term,
        shape: &[i64],
    ) -> Result<(Src, i64, Vec<i64>, DataType), DmlError> {
        let (used, values) = self.host_indices(t, shape)?;
        let data_type = if t.len <= u32::MAX as i64 { DataType::Uint32 } else { DataType::Uint64 };
        self.parts.constants.push(Constant { data_type, values });
        Ok((Src::Made(self.parts.constants.len() - 1), 0, spread_packed(shape, &used), data_type))
    }

    /// `acc` without its terms of stride 0, each validated as its gather would be: host-known
    /// indices must map under their mode, run-time ones are checked by the host before dispatch.
    pub(super) fn without_unused_terms(&mut self, acc: &Acc, shape: &[i64]) -> Result<Acc, DmlError> {
        // A gather over an empty axis fails wherever it is read, before any index inside it
        // would be (`a[[], [-2]][idx]`: `[-2]` is never read).
        if let Some(t) = acc.terms.iter().find(|t| t.len <= 0) {
            return Err(empty_axis(t));
        }
        let mut live = Acc { terms: vec![], ..acc.clone() };
        // A view alone is a SLICE1; below its level, a gather that moves nothing more does the copy.
        let keep_one = self.level < Op::Slice1.introduced() && acc.terms.iter().all(|t| t.stride == 0);
        for (i, t) in acc.terms.iter().enumerate() {
            if t.stride != 0 || (keep_one && i == 0) {
                live.terms.push(t.clone());
            } else if t.len <= 0 {
                return Err(empty_axis(t));
            } else if self.host_known(&t.index) {
                self.host_indices(t, shape)?;
            } else {
                self.runtime_index(t, shape)?;
            }
        }
        Ok(live)
    }

    /// Whether [`Lowering::composite`] should lower `acc`: its data is a plan buffer, every index
    /// is host-known, and the access would otherwise need a graph (or an operator the feature
    /// level lacks) — several gathered terms other than one index tuple a GATHER_ND1 of this
    /// level reads as they stand, or one term whose data view must first be copied by a SLICE1.
    pub(super) fn composite_fits(&self, acc: &Acc, shape: &[i64]) -> bool {
        let one_operator = match acc.terms.len() {
            1 => true,
            _ => gather_nd::is_tuple(&acc.terms) && self.level >= Op::GatherNd1.introduced(),
        };
        matches!(acc.src, Src::Plan(_))
            && !acc.terms.is_empty()
            && acc.terms.iter().all(|t| self.host_known(&t.index))
            && !(one_operator && self.data_describable(acc, shape))
    }

    /// One GATHER for an access whose indices are all host-known: the output dimensions any
    /// index varies along (and those before them) are folded into a constant of element
    /// offsets into the data buffer, seen as one axis; the trailing dimensions no index varies
    /// along stay dimensions of the gather's input and output.
    pub(super) fn composite(&mut self, acc: &Acc, shape: &[i64]) -> Result<usize, DmlError> {
        if let Some(t) = acc.terms.iter().find(|t| t.len <= 0) {
            return Err(empty_axis(t));
        }
        let m = shape.len();
        let indexed = |d: usize| acc.terms.iter().any(|t| varies(&t.index, d));
        let mut s_start = m;
        while s_start > 0
            && (shape[s_start - 1] < 2 || (!indexed(s_start - 1) && acc.strides[s_start - 1] >= 0))
        {
            s_start -= 1;
        }
        let folded: Vec<usize> = (0..s_start).filter(|&d| shape[d] >= 2).collect();
        // Over an empty shape no address is formed (nor an index read): no offsets.
        let sub: Vec<i64> = match shape.contains(&0) {
            true => vec![0],
            false => folded.iter().map(|&d| shape[d]).collect(),
        };
        let mut offsets = Vec::with_capacity(sub.iter().product::<i64>() as usize);
        let mut c = vec![0; m];
        each_coord(&sub, |o| {
            for (&d, &v) in folded.iter().zip(o) {
                c[d] = v;
            }
            offsets.push(self.host_address(acc, &c)?);
            Ok::<(), DmlError>(())
        })?;
        if offsets.iter().any(|&v| v < 0) {
            // A verified plan addresses only inside its buffers.
            return Err(DmlError::Unsupported("a negative element offset".into()));
        }
        let len = offsets.iter().copied().max().unwrap_or(0) + 1;
        let itype = if len <= u32::MAX as i64 { DataType::Uint32 } else { DataType::Uint64 };
        self.parts.constants.push(Constant { data_type: itype, values: offsets });
        let index = Src::Made(self.parts.constants.len() - 1);
        let packed = packed_strides(&sub);
        let mut k: Vec<(i64, i64, i64)> = folded.iter().zip(packed).map(|(&d, p)| (shape[d], 0, p)).collect();
        k.extend((s_start..m).filter(|&d| shape[d] >= 2).map(|d| (shape[d], acc.strides[d], 0)));
        let dtype = self.dtype_of(acc.src);
        self.place_gather(k, (&[(len, 1)], 0), dtype, (acc.src, 0), (index, 0, itype), shape)
    }
}
