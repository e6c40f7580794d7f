//! The gather rules: one gathered term is a GATHER, a GATHER_ELEMENTS (its index walks every
//! output dimension; [`super::gather_elements`]) or a GATHER_ND1 (batch dimensions), its index
//! operand normalized on the host when constant ([`super::fold`]); several terms that read one
//! index tuple are one GATHER_ND1 ([`super::gather_nd`]); other sets of terms with run-time
//! indices are peeled one at a time (a leading tuple at once).

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
        if t.index.terms.is_empty() {
            self.operand_view(t.index.src, t.index.base, t.index.strides.clone(), shape)
        } else {
            self.graph_because(
                "the indices of a gather are gathered themselves, through values known only at run \
                 time, so a gather computes them first",
            );
            // Computed over the dimensions the indices vary along only, not the whole output.
            let used = fold::varying_dims(&t.index, shape);
            let sub: Vec<i64> = used.iter().map(|&d| shape[d]).collect();
            let node = self.emit(&t.index.projected(&used), &sub)?;
            self.operand_view(Src::Node(node), 0, fold::spread_packed(shape, &used), shape)
        }
    }

    /// An index operand read from `src` at `base + Σ o_d·strides[d]` over `shape`, as a tensor
    /// description can say it: materialized when a used stride is negative or the base cannot
    /// be bound.
    pub(super) fn operand_view(
        &mut self,
        mut src: Src,
        mut base: i64,
        mut strides: Vec<i64>,
        shape: &[i64],
    ) -> Result<(Src, i64, Vec<i64>, DataType), DmlError> {
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
            return Err(DmlError::OobPolicy { mode: t.mode, refusal, at: t.origin });
        }
        self.guard(t, shape)
    }

    /// The data view of a gathering access over `shape`, its gathered axes last.
    fn data_dims(acc: &Acc, shape: &[i64]) -> Vec<(i64, i64)> {
        let mut ddims: Vec<(i64, i64)> = shape.iter().copied().zip(acc.strides.iter().copied()).collect();
        ddims.extend(acc.terms.iter().map(|t| (t.len, t.stride)));
        ddims
    }

    /// Whether a gather's input tensor description can express the data view of a gathering
    /// access (one term, or one index tuple): strides are unsigned, binding offsets multiples of
    /// 16 bytes.
    pub(super) fn data_describable(&self, acc: &Acc, shape: &[i64]) -> bool {
        let negative = Self::data_dims(acc, shape).iter().any(|&(c, s)| c >= 2 && s < 0);
        !negative && self.bindable(acc.src, acc.base)
    }

    /// A gathering access: one term (GATHER, GATHER_ELEMENTS, or GATHER_ND1 with batch
    /// dimensions), or several that form one index tuple (GATHER_ND1; see `tuple_operand`).
    pub(super) fn gather(&mut self, acc: &Acc, shape: &[i64]) -> Result<usize, DmlError> {
        if let Some(t) = acc.terms.iter().find(|t| t.len <= 0) {
            return Err(empty_axis(t));
        }
        let m = shape.len();
        let (isrc, ibase, istrides, itype) = match &acc.terms[..] {
            [t] => self.index_operand(t, shape)?,
            terms => self.tuple_operand(terms, shape)?,
        };
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
        let axes: Vec<(i64, i64)> = acc.terms.iter().zip(&dstrides[m..]).map(|(t, &s)| (t.len, s)).collect();
        // The stride between a tuple's entries (index operands have one more dimension then).
        let tuple_stride = istrides.get(m).copied().unwrap_or(0);
        self.place_gather(k, (&axes, tuple_stride), dtype, (dsrc, dbase), (isrc, ibase, itype), shape)
    }

    /// Emits the gather over output dimensions `k` and the gathered `axes` (count, data stride;
    /// several for an index tuple whose entries lie `tuple_stride` apart), reading the data at
    /// `(source, element offset)` and the indices at `(source, element offset, type)`;
    /// neighbours are coalesced while DirectML's dimension limit is exceeded.
    pub(super) fn place_gather(
        &mut self,
        mut k: Vec<(i64, i64, i64)>,
        (axes, tuple_stride): (&[(i64, i64)], i64),
        dtype: DType,
        (dsrc, dbase): (Src, i64),
        (isrc, ibase, itype): (Src, i64, DataType),
        shape: &[i64],
    ) -> Result<usize, DmlError> {
        loop {
            match self.gather_node(&k, axes, tuple_stride, dtype, itype) {
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
    /// `axes` (count, data stride; several for an index tuple whose entries lie `tuple_stride`
    /// apart); returns it with its input and index tensor descriptions.
    pub(super) fn gather_node(
        &self,
        k: &[(i64, i64, i64)],
        axes: &[(i64, i64)],
        tuple_stride: i64,
        dtype: DType,
        itype: DataType,
    ) -> Result<(OperatorFields, [TensorDesc; 2]), DmlError> {
        // Output = P ++ I ++ S: S the trailing data-only dimensions, I the index-only run before
        // them, P the rest (data-only for GATHER; anything for GATHER_ND1, as batch dimensions).
        let s_start = k.len() - k.iter().rev().take_while(|d| d.2 == 0).count();
        let i_start = s_start - k[..s_start].iter().rev().take_while(|d| d.1 == 0).count();
        let (p, i, s) = (&k[..i_start], &k[i_start..s_start], &k[s_start..]);
        let op = match (axes, p.iter().any(|d| d.2 != 0)) {
            ([_], false) => Op::Gather,
            // The index walks every output dimension: ONNX GatherElements' shape.
            ([_], true) if k.iter().all(|d| d.2 != 0) => Op::GatherElements,
            _ => Op::GatherNd1,
        };
        self.require(op)?;
        let (data_type, pairs) = storage(op, self.level, dtype)?;
        if !op.index_supports(self.level, itype) {
            return Err(DmlError::IndexType { dtype: index_dtype(itype), level: self.level });
        }
        if op == Op::GatherElements {
            return self.gather_elements_node(k, axes[0], data_type, pairs, itype);
        }
        let scale = if pairs { 2 } else { 1 };
        let data = |d: &(i64, i64, i64)| (d.0, d.1 * scale);
        let mut input: Vec<(i64, i64)> = p.iter().map(data).collect();
        input.extend(axes.iter().map(|a| (a.0, a.1 * scale)));
        input.extend(s.iter().map(data));
        let mut out: Vec<(i64, i64)> = k.iter().map(|d| (d.0, 0)).collect();
        let mut index: Vec<(i64, i64)> = match op {
            Op::GatherNd1 => {
                p.iter().chain(i).map(|d| (d.0, d.2)).chain([(axes.len() as i64, tuple_stride)]).collect()
            }
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
        let ([in_real, idx_real, _], dims) = fit_rank(
            op,
            self.level,
            "gather",
            ["input", "indices", "output"],
            [&mut input, &mut index, &mut out],
        )?;
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

    /// Several gathered terms: the first (or a leading index tuple) is gathered into an
    /// intermediate that keeps the other terms' axes whole (and only the output dimensions it
    /// varies along), which the rest then gather from.
    pub(super) fn peel(&mut self, acc: &Acc, shape: &[i64]) -> Result<usize, DmlError> {
        let m = shape.len();
        let lead = (2..acc.terms.len()).rev().find(|&g| gather_nd::is_tuple(&acc.terms[..g])).unwrap_or(1);
        let (first, rest) = acc.terms.split_at(lead);
        if let Some(t) = rest.iter().find(|t| t.len <= 0) {
            return Err(empty_axis(t));
        }
        self.graph_because(
            "gathers along several axes with indices known only at run time take one operator each, \
             joined by intermediates that keep the axes still to gather whole",
        );
        // The intermediate keeps the output dimensions the first gather's address varies
        // along, and the axes the other terms still gather from.
        let kept: Vec<usize> = (0..m)
            .filter(|&d| {
                shape[d] >= 2 && (acc.strides[d] != 0 || first.iter().any(|t| fold::varies(&t.index, d)))
            })
            .collect();
        let mut ext_shape: Vec<i64> = kept.iter().map(|&d| shape[d]).collect();
        ext_shape.extend(rest.iter().map(|t| t.len));
        let mut strides: Vec<i64> = kept.iter().map(|&d| acc.strides[d]).collect();
        strides.extend(rest.iter().map(|t| t.stride));
        let inner = Acc {
            src: acc.src,
            base: acc.base,
            strides,
            terms: first
                .iter()
                .map(|t| Term { index: t.index.projected(&kept).extended(rest.len()), ..t.clone() })
                .collect(),
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
