//! GATHER_ELEMENTS: a term whose index walks every output dimension (ONNX GatherElements, and
//! OpenVINO Gather-8 when the indices span every output dimension) is read element for element.

use super::*;

impl Lowering<'_> {
    /// The descriptor of a GATHER_ELEMENTS over output dimensions `k` (count, data stride,
    /// index stride; every index stride non-zero) gathering `axis` (count, data stride), with
    /// its input and index tensor descriptions. `data_type` and `pairs` are the storage the
    /// feature level allows ([`storage`]).
    pub(super) fn gather_elements_node(
        &self,
        k: &[(i64, i64, i64)],
        axis: (i64, i64),
        data_type: DataType,
        pairs: bool,
        itype: DataType,
    ) -> Result<(OperatorFields, [TensorDesc; 2]), DmlError> {
        let op = Op::GatherElements;
        let scale = if pairs { 2 } else { 1 };
        let mut input: Vec<(i64, i64)> = k.iter().map(|d| (d.0, d.1 * scale)).collect();
        let mut index: Vec<(i64, i64)> = k.iter().map(|d| (d.0, d.2)).collect();
        let mut out: Vec<(i64, i64)> = k.iter().map(|d| (d.0, 0)).collect();
        // The gathered axis takes the place of an output dimension the data does not move along
        // (only the index walks it); without one, of a new unit dimension at the end. Every
        // other dimension is shared, the input broadcast (stride 0) where the data ignores it.
        let at = match k.iter().rposition(|d| d.1 == 0) {
            Some(at) => at,
            None => {
                for v in [&mut input, &mut index, &mut out] {
                    v.push((1, 0));
                }
                k.len()
            }
        };
        input[at] = (axis.0, axis.1 * scale);
        if pairs {
            input.push((2, 1));
            index.push((2, 0));
            out.push((2, 0));
        }
        let (min, max) = op.dims(self.level);
        if input.len() > max {
            return Err(DmlError::Rank {
                op: op.name(),
                dims: input.len(),
                allowed: format!("{min} to {max}"),
                level: self.level,
                detail: format!("the gather's input, indices and output have {} dimensions", input.len()),
            });
        }
        let pad = min.saturating_sub(input.len());
        for v in [&mut input, &mut index, &mut out] {
            v.splice(0..0, std::iter::repeat_n((1, 0), pad));
        }
        let input_tensor = tensor(data_type, &input, true)?;
        let indices_tensor = tensor(itype, &index, true)?;
        let output_tensor = tensor(data_type, &out, false)?;
        let ins = [input_tensor.clone(), indices_tensor.clone()];
        let fields = OperatorFields::GatherElements(GatherElementsDesc {
            input_tensor,
            indices_tensor,
            output_tensor,
            axis: (at + pad) as u32,
        });
        Ok((fields, ins))
    }
}
