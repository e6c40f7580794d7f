//! Store plans (`a[i] = v`, `scatter_nd`, `scatter_elements`, `scatter_update`): a destination
//! that one DirectML scatter expresses exactly becomes that scatter, reading the target whole
//! as its `InputTensor` (the plan's output starts as the target's copy, as the scatter's does):
//!
//! * `DML_OPERATOR_SCATTER_ND`: index terms on the target's leading `k` axes (one index tuple,
//!   or one term, whose index tensor gets a trailing tuple dimension of 1 by its description),
//!   the update coordinates being batch dimensions the indices walk followed by the target's
//!   other axes whole (`a[i] = v` along axis 0, `scatter_nd`);
//! * `DML_OPERATOR_SCATTER`: one index term on any axis, the update coordinates walking every
//!   other axis whole (`a[:, i] = v`, `scatter_elements` whose indices span the other axes).
//!
//! DirectML leaves the order of two writes to one element undefined, and slc's `=` keeps the
//! last, so a store lowers only when no two updates can write different values to one element:
//! its indices are constants whose destinations the host proves distinct, or its value is the
//! same for every update that can collide (`a[i] = 0`). Out-of-range indices are handled as for
//! gathers: constants are normalized on the host, run-time ones host-checked before dispatch.
//! Everything else (`+=`, reductions, destinations without index arrays, masks read in place
//! (`a[m] = 0`) and other shapes no scatter expresses) is refused, saying why.

use super::fold::{spread_packed, varying_dims};
use super::*;
use crate::plan::Store;
use crate::types::Combine;
use std::collections::HashSet;

/// A scatter's index operand: source, element offset, strides, type and sizes.
type IndexOperand = (Src, i64, Vec<i64>, DataType, Vec<i64>);

/// Which scatter expresses a destination.
#[derive(Debug, Clone, Copy)]
enum Form {
    /// SCATTER_ND: the terms index the leading `k` axes; the first `batch` update dimensions are
    /// the indices' own.
    Nd { k: usize, batch: usize },
    /// SCATTER: the one term indexes `axis`; every other update dimension is the target's.
    Elements { axis: usize },
}

impl Form {
    fn op(self) -> Op {
        match self {
            Form::Nd { .. } => Op::ScatterNd,
            Form::Elements { .. } => Op::Scatter,
        }
    }
}

fn refuse<T>(why: impl Into<String>) -> Result<T, DmlError> {
    Err(DmlError::Unsupported(format!("a store plan: {}", why.into())))
}

impl Lowering<'_> {
    /// The scatter that computes the store's result (its output is the updated target).
    pub(super) fn store(&mut self, store: &Store) -> Result<usize, DmlError> {
        if store.when.is_some() {
            // `a[m] = 0`: the mask read in place over its box, which no scatter expresses.
            return refuse(
                "a store through a mask with one value (`a[m] = 0`) writes where the mask is set, which no DirectML scatter expresses",
            );
        }
        match store.combine {
            Combine::Set => {}
            Combine::Add | Combine::Mul => {
                let op = if store.combine == Combine::Add { "+=" } else { "*=" };
                return refuse(format!(
                    "`{op}` combines with the target's element, and DirectML's scatters only replace it"
                ));
            }
            Combine::Reduce { .. } => {
                return refuse(format!(
                    "reduction={}: DML_SCATTER_OPERATOR_DESC and DML_SCATTER_ND_OPERATOR_DESC have no \
                     reduction (they only replace elements)",
                    store.combine.name()
                ));
            }
        }
        if self.plan.stores_through_view() {
            return refuse("its target is a strided view (stored through on the CPU's JIT)");
        }
        let Src::Plan(BufferId::Input(target)) = Acc::from_plan(&self.plan.output).src else {
            return refuse("its target is not an input");
        };
        let (a, u) = (self.plan.shape.clone(), store.shape.clone());
        let dest = Acc::from_plan(&store.dest);
        let value = Acc::from_plan(&store.value);
        if let Some(t) = dest.terms.iter().find(|t| t.len <= 0) {
            return Err(empty_axis(t));
        }
        // The first form whose operator the level has (SCATTER_ND, a level newer, is preferred);
        // when none, the refusal names the oldest.
        let forms = scatter_forms(&dest, &u, &a)?;
        let oldest = forms.iter().copied().min_by_key(|f| f.op().introduced()).unwrap_or(forms[0]);
        let form = forms.iter().copied().find(|f| self.level >= f.op().introduced()).unwrap_or(oldest);
        let op = form.op();
        self.require(op)?;
        self.distinct(&dest, &value, &u, form)?;
        let dtype = self.plan.dtype;
        let (data_type, pairs) = storage(op, self.level, dtype)?;
        let (isrc, ibase, istrides, itype, isizes) = self.scatter_indices(&dest, &u, form)?;
        if !op.index_supports(self.level, itype) {
            return Err(DmlError::IndexType { dtype: index_dtype(itype), level: self.level });
        }
        let (vsrc, vbase, vstrides) = self.updates(&value, &u, data_type)?;
        let operands = [(Src::Plan(BufferId::Input(target)), 0), (isrc, ibase), (vsrc, vbase)];
        self.scatter_node(form, (data_type, pairs, itype), (&a, &u), (&isizes, istrides, &vstrides), operands)
    }

    /// Emits the scatter of `form` over a target of shape `a` and updates of shape `u`, its
    /// index description `(sizes, strides)` and the updates' strides given, reading the target,
    /// the indices and the updates at `operands` (source, element offset).
    fn scatter_node(
        &mut self,
        form: Form,
        (data_type, pairs, itype): (DataType, bool, DataType),
        (a, u): (&[i64], &[i64]),
        (isizes, istrides, vstrides): (&[i64], Vec<i64>, &[i64]),
        operands: [(Src, i64); 3],
    ) -> Result<usize, DmlError> {
        let op = form.op();
        // Per tensor: (size, stride) lists; 64-bit data moves as pairs of UINT32.
        let scale = if pairs { 2 } else { 1 };
        let packed = packed_strides(a);
        let mut input: Vec<(i64, i64)> = a.iter().zip(&packed).map(|(&n, &s)| (n, s * scale)).collect();
        let mut updates: Vec<(i64, i64)> = u.iter().zip(vstrides).map(|(&n, &s)| (n, s * scale)).collect();
        let mut indices: Vec<(i64, i64)> = isizes.iter().copied().zip(istrides).collect();
        if pairs {
            input.push((2, 1));
            updates.push((2, 1));
            // SCATTER's indices span every dimension but the axis: the pair's two halves share one.
            if let Form::Elements { .. } = form {
                indices.push((2, 0));
            }
        }
        let ([in_real, idx_real, _], dims) = fit_rank(
            op,
            self.level,
            "scatter",
            ["input", "indices", "updates"],
            [&mut input, &mut indices, &mut updates],
        )?;
        let input_tensor = tensor(data_type, &input, true)?;
        let indices_tensor = tensor(itype, &indices, true)?;
        let updates_tensor = tensor(data_type, &updates, true)?;
        let output_tensor = tensor(data_type, &input, false)?;
        let ins = [input_tensor.clone(), indices_tensor.clone(), updates_tensor.clone()];
        let fields = match form {
            Form::Nd { .. } => OperatorFields::ScatterNd(ScatterNdDesc {
                input_tensor,
                indices_tensor,
                updates_tensor,
                output_tensor,
                input_dimension_count: in_real as u32,
                indices_dimension_count: idx_real as u32,
            }),
            Form::Elements { axis } => OperatorFields::Scatter(ScatterDesc {
                input_tensor,
                indices_tensor,
                updates_tensor,
                output_tensor,
                axis: (dims - in_real + axis) as u32,
            }),
        };
        let dtype = self.plan.dtype;
        let node = self.push_node(fields, (dtype, a.to_vec()));
        let widths = [dtype.width() as u64, itype.size(), dtype.width() as u64];
        for (slot, (((src, base), desc), width)) in operands.into_iter().zip(&ins).zip(widths).enumerate() {
            self.connect(node, slot as u32, src, base as u64 * width, desc);
        }
        Ok(node)
    }

    /// Refuses a store whose updates may write different values to one element: DirectML does
    /// not say which write wins, and slc's `=` keeps the last.
    fn distinct(&self, dest: &Acc, value: &Acc, u: &[i64], form: Form) -> Result<(), DmlError> {
        // The update dimensions along which two updates can share a destination: the indices'
        // own (the others map one to one onto the target's axes).
        let colliding: Vec<usize> = match form {
            Form::Nd { batch, .. } => (0..batch).collect(),
            Form::Elements { axis } => vec![axis],
        };
        let colliding: Vec<usize> = colliding.into_iter().filter(|&d| u[d] >= 2).collect();
        if dest.terms.iter().all(|t| self.host_known(&t.index)) {
            // Walked: the colliding dimensions and those the indices vary along (SCATTER's
            // indices differ from row to row); the others are held at 0, adding one offset to
            // every address.
            let walked: Vec<usize> = (0..u.len())
                .filter(|&d| colliding.contains(&d) || dest.terms.iter().any(|t| fold::varies(&t.index, d)))
                .filter(|&d| u[d] >= 2)
                .collect();
            let mut seen = HashSet::new();
            let mut sub = vec![0; u.len()];
            let shape: Vec<i64> = walked.iter().map(|&d| u[d]).collect();
            return each_coord(&shape, |c| {
                for (&d, &v) in walked.iter().zip(c) {
                    sub[d] = v;
                }
                let at = self.host_address(dest, &sub)?;
                if seen.insert(at) {
                    return Ok(());
                }
                refuse(format!(
                    "its constant indices write element {at} of the target more than once; DirectML \
                     leaves the order of such writes undefined and slc's `=` keeps the last, so only \
                     constant indices proven distinct lower"
                ))
            });
        }
        let same_value = value.terms.is_empty() && colliding.iter().all(|&d| value.strides[d] == 0);
        if same_value {
            return Ok(());
        }
        let names: Vec<String> = dest
            .terms
            .iter()
            .filter(|t| !self.host_known(&t.index))
            .map(|t| match t.index.src {
                Src::Plan(b) => format!("`{}`", self.plan.buffer_name(b)),
                _ => "a computed index".into(),
            })
            .collect();
        refuse(format!(
            "its destinations may repeat: the indices {} are known only at run time, DirectML leaves \
             the order of writes to one element undefined and slc's `=` keeps the last; constant \
             indices proven distinct lower, and so does a value that is the same for every update \
             (`a[i] = 0`)",
            names.join(", ")
        ))
    }

    /// The index operand of a scatter: source, element offset, strides, type, and the sizes of
    /// its description.
    fn scatter_indices(&mut self, dest: &Acc, u: &[i64], form: Form) -> Result<IndexOperand, DmlError> {
        match form {
            Form::Elements { .. } => {
                let (src, base, strides, itype) = self.index_operand(&dest.terms[0], u)?;
                Ok((src, base, strides, itype, u.to_vec()))
            }
            Form::Nd { k, batch } => {
                let lead: Vec<usize> = (0..batch).collect();
                let terms: Vec<Term> = dest
                    .terms
                    .iter()
                    .map(|t| Term { index: t.index.projected(&lead), ..t.clone() })
                    .collect();
                let b = &u[..batch];
                let mut sizes = b.to_vec();
                sizes.push(k as i64);
                let (src, base, mut strides, itype) = match &terms[..] {
                    [t] => self.index_operand(t, b)?,
                    terms => self.tuple_operand(terms, b)?,
                };
                strides.resize(batch + 1, 0);
                Ok((src, base, strides, itype, sizes))
            }
        }
    }

    /// The updates operand over `u`: source, element offset and strides. A gathered value is
    /// computed first; a constant value is laid out on the host over the dimensions it varies
    /// along (its bits, so that any type is exact).
    fn updates(
        &mut self,
        value: &Acc,
        u: &[i64],
        data_type: DataType,
    ) -> Result<(Src, i64, Vec<i64>), DmlError> {
        if !value.terms.is_empty() {
            self.graph_because("the stored value is gathered itself, so an operator computes it first");
            let node = self.emit(value, u)?;
            return Ok((Src::Node(node), 0, packed_strides(u)));
        }
        if let Src::Plan(BufferId::Const(k)) = value.src {
            let used = varying_dims(value, u);
            let tensor = &self.plan.consts[k].tensor;
            let w = tensor.dtype().width();
            let sub: Vec<i64> = used.iter().map(|&d| u[d]).collect();
            let mut bytes = vec![];
            let mut c = vec![0; u.len()];
            each_coord(&sub, |o| {
                for (&d, &v) in used.iter().zip(o) {
                    c[d] = v;
                }
                let at = value.base + c.iter().zip(&value.strides).map(|(o, s)| o * s).sum::<i64>();
                let at = usize::try_from(at).ok().map(|at| at * w);
                match at.and_then(|at| tensor.bytes().get(at..at + w)) {
                    Some(b) => bytes.extend_from_slice(b),
                    None => {
                        return Err(DmlError::Unsupported("a stored value read past its constant".into()));
                    }
                }
                Ok(())
            })?;
            self.parts.constants.push(bits_constant(&bytes, data_type));
            return Ok((Src::Made(self.parts.constants.len() - 1), 0, spread_packed(u, &used)));
        }
        let (src, base, strides, _) = self.operand_view(value.src, value.base, value.strides.clone(), u)?;
        Ok((src, base, strides))
    }
}

/// A constant of `bytes` whose elements are `data_type`'s width: each element's bits, as the
/// unsigned integer of that width (a float's bit pattern, not its value).
fn bits_constant(bytes: &[u8], data_type: DataType) -> Constant {
    let w = data_type.size() as usize;
    let values = bytes
        .chunks_exact(w)
        .map(|b| {
            let mut raw = [0u8; 8];
            raw[..w].copy_from_slice(b);
            i64::from_le_bytes(raw)
        })
        .collect();
    let data_type = match w {
        1 => DataType::Uint8,
        2 => DataType::Uint16,
        4 => DataType::Uint32,
        _ => DataType::Uint64,
    };
    Constant { data_type, values }
}

/// The scatters that write `dest` over update coordinates `u` into a target of shape `a`
/// (SCATTER_ND first), or why none does.
fn scatter_forms(dest: &Acc, u: &[i64], a: &[i64]) -> Result<Vec<Form>, DmlError> {
    if dest.terms.is_empty() {
        return refuse(
            "its destination has no index array (slices and integers only), and DirectML's scatters \
             write through an index tensor",
        );
    }
    if dest.terms.iter().any(|t| !t.index.terms.is_empty()) {
        return refuse(
            "its indices are gathered through other indices, which no scatter's index tensor describes",
        );
    }
    let packed = packed_strides(a);
    let (n, r, k) = (a.len(), u.len(), dest.terms.len());
    let mut forms = vec![];
    let whole = |d: usize, axis: usize| u[d] == a[axis] && (u[d] <= 1 || dest.strides[d] == packed[axis]);
    // SCATTER_ND: the terms index axes 0..k in order; the update dims are batch ++ a[k..].
    let leading =
        k <= n && dest.terms.iter().enumerate().all(|(j, t)| t.stride == packed[j] && t.len == a[j]);
    if leading && dest.base == 0 && r >= n - k {
        let batch = r - (n - k);
        let trailing_whole = (batch..r).all(|d| whole(d, k + d - batch));
        let batch_free = (0..batch).all(|d| u[d] <= 1 || dest.strides[d] == 0);
        let indices_batch_only =
            dest.terms.iter().all(|t| (batch..r).all(|d| u[d] <= 1 || t.index.strides[d] == 0));
        let one_tuple = k == 1 || gather_nd::is_tuple(&dest.terms);
        if trailing_whole && batch_free && indices_batch_only && one_tuple {
            forms.push(Form::Nd { k, batch });
        }
    }
    // SCATTER: one term on `axis`; the other update dims are the target's axes, whole.
    if let [t] = &dest.terms[..] {
        let fits = |axis: usize| {
            r == n
                && dest.base == 0
                && t.stride == packed[axis]
                && t.len == a[axis]
                && (u[axis] <= 1 || dest.strides[axis] == 0)
                && (0..n).all(|d| d == axis || whole(d, d))
        };
        if let Some(axis) = (0..n).find(|&axis| fits(axis)) {
            forms.push(Form::Elements { axis });
        }
    }
    if !forms.is_empty() {
        return Ok(forms);
    }
    refuse(
        "no DirectML scatter writes this destination: DML_SCATTER_ND needs index arrays on the leading \
         axes with the other axes whole, and DML_SCATTER one index array with every other axis whole \
         (a mask, a slice beside an index array or several separate index arrays are none of these)",
    )
}
