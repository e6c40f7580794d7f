//! The scatters, as DirectML documents them: the output is the input, then each update replaces
//! the element its index selects (DML_SCATTER: along `Axis`, the update's other coordinates
//! kept; DML_SCATTER_ND: through index tuples, the updates' trailing coordinates kept). Two
//! updates that write different bytes to one element are undefined ("no guarantee of which
//! last write wins"), so the emulator reports them instead of picking one.

use super::*;
use std::collections::HashMap;

/// Runs a SCATTER or SCATTER_ND node on its (input, indices, updates) bytes.
pub(super) fn run(
    level: FeatureLevel,
    op: &OperatorFields,
    args: &[Vec<u8>],
) -> Result<Vec<u8>, EmulateError> {
    let kind = Op::of(op.operator_type());
    let (i, x, u, o) = match op {
        OperatorFields::Scatter(d) => {
            (&d.input_tensor, &d.indices_tensor, &d.updates_tensor, &d.output_tensor)
        }
        OperatorFields::ScatterNd(d) => {
            (&d.input_tensor, &d.indices_tensor, &d.updates_tensor, &d.output_tensor)
        }
        _ => return invalid("not a scatter"),
    };
    let tensors = [(i, "InputTensor"), (x, "IndicesTensor"), (u, "UpdatesTensor"), (o, "OutputTensor")];
    check_dims(kind, level, &tensors)?;
    for (t, name) in [(i, "InputTensor"), (u, "UpdatesTensor")] {
        check_type(kind, level, t, name)?;
    }
    if !kind.index_supports(level, x.desc.data_type) {
        return invalid(format!("IndicesTensor: {} at feature level {level}", x.desc.data_type.name()));
    }
    let dn = i.desc.dimension_count as usize;
    if tensors.iter().any(|(t, _)| t.desc.dimension_count as usize != dn) {
        return invalid("the four tensors differ in DimensionCount");
    }
    if u.desc.data_type != i.desc.data_type || o.desc.data_type != i.desc.data_type {
        return invalid("InputTensor, UpdatesTensor and OutputTensor differ in DataType");
    }
    if o.desc.sizes != i.desc.sizes {
        return invalid("OutputTensor.Sizes differ from InputTensor.Sizes");
    }
    let (input, indices, updates) = (&args[0], &args[1], &args[2]);
    let w = o.desc.data_type.size() as usize;
    let mut out = vec![0u8; o.desc.total_tensor_size_in_bytes as usize];
    each_coord(&sizes(o), |c| {
        let at = offset(o, c) as usize * w;
        out[at..at + w].copy_from_slice(element(i, input, c)?);
        Ok::<(), EmulateError>(())
    })?;
    let mut written: HashMap<usize, Vec<u8>> = HashMap::new();
    let mut write = |c: &[i64], bytes: &[u8]| -> Result<(), EmulateError> {
        let at = offset(o, c) as usize * w;
        match written.get(&at) {
            Some(b) if b != bytes => {
                return Err(EmulateError::Undefined(format!(
                    "two updates write different values to element {c:?}"
                )));
            }
            _ => {
                written.insert(at, bytes.to_vec());
            }
        }
        out.get_mut(at..at + w)
            .ok_or(EmulateError::Invalid("output element out of bounds".into()))?
            .copy_from_slice(bytes);
        Ok(())
    };
    match op {
        OperatorFields::Scatter(d) => {
            let axis = d.axis as usize;
            if axis >= dn {
                return invalid("Axis out of range");
            }
            if (0..dn).any(|k| k != axis && x.desc.sizes[k] != i.desc.sizes[k]) {
                return invalid("IndicesTensor.Sizes differ from InputTensor.Sizes off the Axis");
            }
            if u.desc.sizes != x.desc.sizes {
                return invalid("UpdatesTensor.Sizes differ from IndicesTensor.Sizes");
            }
            each_coord(&sizes(x), |c| {
                let raw = int_value(x.desc.data_type, element(x, indices, c)?);
                let mut oc = c.to_vec();
                oc[axis] = resolve(level, x.desc.data_type, raw, i.desc.sizes[axis])?;
                write(&oc, element(u, updates, c)?)
            })?;
        }
        OperatorFields::ScatterNd(d) => {
            let (ni, nq) = (d.input_dimension_count as usize, d.indices_dimension_count as usize);
            if ni == 0 || nq == 0 || ni > dn || nq > dn {
                return invalid("InputDimensionCount or IndicesDimensionCount out of range");
            }
            let (real_in, real_idx) = (&i.desc.sizes[dn - ni..], &x.desc.sizes[dn - nq..]);
            if i.desc.sizes[..dn - ni].iter().chain(&x.desc.sizes[..dn - nq]).any(|&s| s != 1) {
                return invalid("a leading dimension beyond the dimension counts is not 1");
            }
            let tuple = real_idx[nq - 1] as usize;
            if tuple == 0 || tuple > ni {
                return invalid("the index tuple is longer than the input's dimensions");
            }
            // Updates: the indices' leading sizes, then the input's after the tuple, right-aligned.
            let mut real_upd: Vec<u32> = real_idx[..nq - 1].to_vec();
            real_upd.extend(&real_in[tuple..]);
            let r = real_upd.len();
            if r > dn
                || u.desc.sizes[..dn - r].iter().any(|&s| s != 1)
                || u.desc.sizes[dn - r..] != real_upd[..]
            {
                return invalid(format!(
                    "UpdatesTensor.Sizes {:?} should end with {real_upd:?}",
                    u.desc.sizes
                ));
            }
            each_coord(&sizes(u), |c| {
                let rc = &c[dn - r..];
                let mut oc = vec![0i64; dn - ni];
                for (t, &len) in real_in[..tuple].iter().enumerate() {
                    let mut xc = vec![0i64; dn - nq];
                    xc.extend_from_slice(&rc[..nq - 1]);
                    xc.push(t as i64);
                    let raw = int_value(x.desc.data_type, element(x, indices, &xc)?);
                    oc.push(resolve(level, x.desc.data_type, raw, len)?);
                }
                oc.extend_from_slice(&rc[nq - 1..]);
                write(&oc, element(u, updates, c)?)
            })?;
        }
        _ => return invalid("not a scatter"),
    }
    Ok(out)
}
