//! The gather rules: one gathered term is a GATHER or a GATHER_ND1 (batch dimensions), its
//! index operand normalized on the host when constant ([`super::fold`]); several terms with
//! run-time indices are peeled one at a time.

use super::*;

impl Lowering<'_> {
    /// The index operand of a gather term over `shape`: source, base, per-dimension strides and
    /// DirectML type. Constant indices are normalized on the host; dynamic ones must be
    /// `error`-mode (validated before dispatch).
    pub(super) fn index_operand(
        &mut self,
        t: &Term,
        shape: &[i64],
    ) -> Result<(Src, i64, Vec<i64>, DataType), DmlError> {
        if self.host_known(&t.index) {
            return self.constant_operand(t, shape);
        }
        self.runtime_index(t, shape)?;
        let (mut src, mut base, mut strides) = if t.index.terms.is_empty() {
            (t.index.src, t.index.base, t.index.strides.clone())
        } else {
            self.graph_because(
                "the indices of a gather are gathered themselves, through values known only at run \
                 time, so a gather computes them first",
            );
            // Computed over the dimensions the indices vary along only, not the whole output.
            let used = fold::varying_dims(&t.index, shape);
            let sub: Vec<i64> = used.iter().map(|&d| shape[d]).collect();
            (Src::Node(self.emit(&t.index.projected(&used), &sub)?), 0, fold::spread_packed(shape, &used))
        };
        let dtype = self.dtype_of(src);
        let used_negative = (0..shape.len()).any(|d| shape[d] >= 2 && strides[d] < 0);
        if used_negative || !self.bindable(src, base) {
            let dims: Vec<(i64, i64)> = shape.iter().copied().zip(strides.iter().copied()).collect();
            let (node, s) = self.materialize(src, base, &dims)?;
            (src, base, strides) = (Src::Node(node), 0, s);
        }
        Ok((src, base, strides, natural_type(dtype)))
    }

    /// Refuses a term whose run-time indices its mode cannot honour on the device; under
    /// `error`, makes sure the host validates them before dispatch.
    pub(super) fn runtime_index(&mut self, t: &Term, shape: &[i64]) -> Result<(), DmlError> {
        if t.mode != OobMode::Error {
            let tensor = match t.index.src {
                Src::Plan(b) => Some(self.plan.buffer_name(b)),
                _ => None,
            };
            let refusal = OobRefusal::RuntimeIndex { tensor };
            return Err(DmlError::OobPolicy { mode: t.mode, refusal, at: None });
        }
        self.guard(t, shape)
    }

    /// The data view of a single-term access over `shape`, gathered axis last.
    fn data_dims(acc: &Acc, shape: &[i64]) -> Vec<(i64, i64)> {
        let t = &acc.terms[0];
        let mut ddims: Vec<(i64, i64)> = shape.iter().copied().zip(acc.strides.iter().copied()).collect();
        ddims.push((t.len, t.stride));
        ddims
    }

    /// Whether a gather's input tensor description can express the data view of a single-term
    /// access: strides are unsigned, binding offsets multiples of 16 bytes.
    pub(super) fn data_describable(&self, acc: &Acc, shape: &[i64]) -> bool {
        let negative = Self::data_dims(acc, shape).iter().any(|&(c, s)| c >= 2 && s < 0);
        !negative && self.bindable(acc.src, acc.base)
    }

    /// A single-term access: GATHER, or GATHER_ND1 with batch dimensions.
    pub(super) fn gather(&mut self, acc: &Acc, shape: &[i64]) -> Result<usize, DmlError> {
        let t = &acc.terms[0];
        if t.len <= 0 {
            return Err(empty_axis(t.mode));
        }
        let m = shape.len();
        let (isrc, ibase, istrides, itype) = self.index_operand(t, shape)?;
        let dtype = self.dtype_of(acc.src);
        let ddims = Self::data_dims(acc, shape);
        let (mut dsrc, mut dbase) = (acc.src, acc.base);
        let mut dstrides: Vec<i64> = ddims.iter().map(|d| d.1).collect();
        if !self.data_describable(acc, shape) {
            let (node, s) = self.materialize(dsrc, dbase, &ddims)?;
            (dsrc, dbase, dstrides) = (Src::Node(node), 0, s);
        }
        // The output dimensions that matter: (count, data stride, index stride).
        let k: Vec<(i64, i64, i64)> =
            (0..m).filter(|&d| shape[d] >= 2).map(|d| (shape[d], dstrides[d], istrides[d])).collect();
        let axis = (t.len, dstrides[m]);
        self.place_gather(k, axis, dtype, (dsrc, dbase), (isrc, ibase, itype), shape)
    }

    /// Emits the gather over output dimensions `k` and the gathered `axis` (count, data stride),
    /// reading the data at `(source, element offset)` and the indices at `(source, element
    /// offset, type)`; neighbours are coalesced while DirectML's dimension limit is exceeded.
    pub(super) fn place_gather(
        &mut self,
        mut k: Vec<(i64, i64, i64)>,
        axis: (i64, i64),
        dtype: DType,
        (dsrc, dbase): (Src, i64),
        (isrc, ibase, itype): (Src, i64, DataType),
        shape: &[i64],
    ) -> Result<usize, DmlError> {
        loop {
            match self.gather_node(&k, axis, dtype, itype) {
                Ok((fields, ins)) => {
                    let node = self.push_node(fields, (dtype, shape.to_vec()));
                    let width = dtype.width() as u64;
                    self.connect(node, 0, dsrc, dbase as u64 * width, &ins[0]);
                    let iwidth = itype.size();
                    self.connect(node, 1, isrc, ibase as u64 * iwidth, &ins[1]);
                    return Ok(node);
                }
                Err(e @ DmlError::Rank { .. }) => {
                    // Coalesce a pair of neighbours whose data and index strides both merge.
                    let Some(i) = (0..k.len().saturating_sub(1))
                        .find(|&i| k[i].1 == k[i + 1].1 * k[i + 1].0 && k[i].2 == k[i + 1].2 * k[i + 1].0)
                    else {
                        return Err(e);
                    };
                    k.splice(i..i + 2, [(k[i].0 * k[i + 1].0, k[i + 1].1, k[i + 1].2)]);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// The descriptor of a gather over output dimensions `k` (in output order) and the gathered
    /// `axis` (count, data stride); returns it with its input and index tensor descriptions.
    pub(super) fn gather_node(
        &self,
        k: &[(i64, i64, i64)],
        axis: (i64, i64),
        dtype: DType,
        itype: DataType,
    ) -> Result<(OperatorFields, [TensorDesc; 2]), DmlError> {
        // Output = P ++ I ++ S: S the trailing data-only dimensions, I the index-only run before
        // them, P the rest (data-only for GATHER; anything for GATHER_ND1, as batch dimensions).
        let s_start = k.len() - k.iter().rev().take_while(|d| d.2 == 0).count();
        let i_start = s_start - k[..s_start].iter().rev().take_while(|d| d.1 == 0).count();
        let (p, i, s) = (&k[..i_start], &k[i_start..s_start], &k[s_start..]);
        let op = if p.iter().any(|d| d.2 != 0) { Op::GatherNd1 } else { Op::Gather };
        self.require(op)?;
        let (data_type, pairs) = storage(op, self.level, dtype)?;
        if !op.index_supports(self.level, itype) {
            let dtype = match itype {
                DataType::Int8 => DType::I8,
                DataType::Int16 => DType::I16,
                DataType::Int32 => DType::I32,
                DataType::Int64 => DType::I64,
                DataType::Uint8 => DType::U8,
                DataType::Uint16 => DType::U16,
                DataType::Uint32 => DType::U32,
                _ => DType::U64,
            };
            return Err(DmlError::IndexType { dtype, level: self.level });
        }
        let scale = if pairs { 2 } else { 1 };
        let data = |d: &(i64, i64, i64)| (d.0, d.1 * scale);
        let mut input: Vec<(i64, i64)> = p.iter().map(data).collect();
        input.push((axis.0, axis.1 * scale));
        input.extend(s.iter().map(data));
        let mut out: Vec<(i64, i64)> = k.iter().map(|d| (d.0, 0)).collect();
        let mut index: Vec<(i64, i64)> = match op {
            Op::GatherNd1 => p.iter().chain(i).map(|d| (d.0, d.2)).chain([(1, 0)]).collect(),
            _ if i.is_empty() => {
                out.insert(p.len(), (1, 0));
                vec![(1, 0)]
            }
            _ => i.iter().map(|d| (d.0, d.2)).collect(),
        };
        if pairs {
            input.push((2, 1));
            out.push((2, 0));
        }
        let (in_real, idx_real) = (input.len(), index.len());
        let (min, max) = op.dims(self.level);
        let dims = in_real.max(idx_real).max(out.len());
        if dims > max {
            return Err(DmlError::Rank {
                op: op.name(),
                dims,
                allowed: format!("{min} to {max}"),
                level: self.level,
                detail: format!(
                    "the gather's input has {in_real} dimensions, its indices {idx_real} and its output {}",
                    out.len()
                ),
            });
        }
        let dims = dims.max(min);
        for v in [&mut input, &mut index, &mut out] {
            while v.len() < dims {
                v.insert(0, (1, 0));
            }
        }
        let input_tensor = tensor(data_type, &input, true)?;
        let indices_tensor = tensor(itype, &index, true)?;
        let output_tensor = tensor(data_type, &out, false)?;
        let ins = [input_tensor.clone(), indices_tensor.clone()];
        let fields = match op {
            Op::GatherNd1 => OperatorFields::GatherNd1(GatherNd1Desc {
                input_tensor,
                indices_tensor,
                output_tensor,
                input_dimension_count: in_real as u32,
                indices_dimension_count: idx_real as u32,
                batch_dimension_count: p.len() as u32,
            }),
            _ => OperatorFields::Gather(GatherDesc {
                input_tensor,
                indices_tensor,
                output_tensor,
                axis: (dims - in_real + p.len()) as u32,
                index_dimensions: idx_real as u32,
            }),
        };
        Ok((fields, ins))
    }

    /// Several gathered terms: the first is gathered into an intermediate that keeps the other
    /// terms' axes whole (and only the output dimensions it varies along), which the rest then
    /// gather from.
    pub(super) fn peel(&mut self, acc: &Acc, shape: &[i64]) -> Result<usize, DmlError> {
        let m = shape.len();
        let rest = &acc.terms[1..];
        if let Some(t) = rest.iter().find(|t| t.len <= 0) {
            return Err(empty_axis(t.mode));
        }
        self.graph_because(
            "gathers along several axes with indices known only at run time take one operator each, \
             joined by intermediates that keep the axes still to gather whole",
        );
        let first = &acc.terms[0];
        // The intermediate keeps the output dimensions the first gather's address varies
        // along, and the axes the other terms still gather from.
        let kept: Vec<usize> = (0..m)
            .filter(|&d| shape[d] >= 2 && (acc.strides[d] != 0 || fold::varies(&first.index, d)))
            .collect();
        let mut ext_shape: Vec<i64> = kept.iter().map(|&d| shape[d]).collect();
        ext_shape.extend(rest.iter().map(|t| t.len));
        let mut strides: Vec<i64> = kept.iter().map(|&d| acc.strides[d]).collect();
        strides.extend(rest.iter().map(|t| t.stride));
        let inner = Acc {
            src: acc.src,
            base: acc.base,
            strides,
            terms: vec![Term { index: first.index.projected(&kept).extended(rest.len()), ..first.clone() }],
        };
        let node = self.emit(&inner, &ext_shape)?;
        let packed = packed_strides(&ext_shape);
        let mut outer_strides = vec![0; m];
        for (&d, &p) in kept.iter().zip(&packed) {
            outer_strides[d] = p;
        }
        let outer = Acc {
            src: Src::Node(node),
            base: 0,
            strides: outer_strides,
            terms: rest
                .iter()
                .enumerate()
                .map(|(i, t)| Term { stride: packed[kept.len() + i], ..t.clone() })
                .collect(),
        };
        self.emit(&outer, shape)
    }
}
