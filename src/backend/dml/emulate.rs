//! A CPU emulator of the DirectML operators slc emits, written from DirectML's documentation,
//! not from slc's lowering: it validates every descriptor against the documented constraints
//! (feature level, data types, dimension counts, windows, tensor sizes, binding offsets) and
//! executes the graph — SLICE1's window walk, strided buffer tensor descriptions, GATHER's and
//! GATHER_ND1's right-aligned index rules, the scatters ([`scatter`]). An index DirectML leaves undefined (out of range,
//! or negative where it is not supported) is an error here, so a lowering that relies on one
//! fails its tests instead of passing by luck.

mod scatter;

use super::caps::{GRAPHS, Op};
use super::desc::*;
use super::graph::*;
use super::window::each_coord;
use crate::backend::RuntimeError;
use crate::types::{IndexOutOfRange, OobMode};
use slc_runtime::{DType, Tensor};

/// Why emulation failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum EmulateError {
    /// What the host reports before dispatch (a failed index check), or wrong inputs.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A descriptor DirectML would reject.
    #[error("invalid descriptor: {0}")]
    Invalid(String),
    /// The operators would read an element whose value DirectML leaves undefined.
    #[error("undefined behaviour: {0}")]
    Undefined(String),
}

fn invalid<T>(msg: impl Into<String>) -> Result<T, EmulateError> {
    Err(EmulateError::Invalid(msg.into()))
}

/// Runs `graph` on `inputs` (in [`DmlGraph::inputs`] order) as DirectML would, after the
/// host's index checks; returns the plan's result.
pub fn emulate(graph: &DmlGraph, inputs: &[&Tensor]) -> Result<Tensor, EmulateError> {
    if graph.inputs.len() != inputs.len() {
        return Err(RuntimeError::InputCount { expected: graph.inputs.len(), found: inputs.len() }.into());
    }
    for (decl, t) in graph.inputs.iter().zip(inputs) {
        let shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
        if decl.dtype != t.dtype().name() || decl.shape != shape {
            return Err(RuntimeError::InputMismatch {
                name: decl.name.clone(),
                expected: format!("{}{:?}", decl.dtype, decl.shape),
                found: format!("{}{:?}", t.dtype(), shape),
            }
            .into());
        }
    }
    for check in &graph.host_checks {
        host_check(graph, check, inputs)?;
    }
    let Some(dtype) = DType::from_name(&graph.output.dtype) else {
        return invalid(format!("unknown output dtype {}", graph.output.dtype));
    };
    if graph.output.shape.iter().any(|&d| d < 0) {
        return invalid("negative output dimension");
    }
    let dims: Vec<usize> = graph.output.shape.iter().map(|&d| d as usize).collect();
    let numel: usize = dims.iter().product();
    if graph.graph_desc.is_some() && graph.feature_level < GRAPHS {
        return invalid(format!(
            "a DML_GRAPH_DESC at feature level {}: the graph API (IDMLDevice1::CompileGraph) arrives at {GRAPHS}",
            graph.feature_level
        ));
    }
    let whole = graph.graph();
    let g = &*whole;
    if !graph.dispatch {
        if numel != 0 || g.node_count != 0 {
            return invalid("a graph that is not dispatched must be empty and have an empty output");
        }
        return Tensor::zeros(dtype, &dims).map_err(|e| RuntimeError::from(e).into());
    }
    check_counts(graph, g)?;
    let mut outputs: Vec<Vec<u8>> = Vec::with_capacity(g.nodes.len());
    for (n, node) in g.nodes.iter().enumerate() {
        let op = &node.desc.operator;
        if op.r#type != op.desc.operator_type() {
            return invalid(format!("node {n}: Type {} does not match its Desc", op.r#type.name()));
        }
        let descs = op.desc.inputs();
        let mut args = vec![];
        for (slot, desc) in descs.iter().enumerate() {
            args.push(node_input(graph, g, inputs, &outputs, n, slot, desc)?);
        }
        let out = run_op(graph.feature_level, &op.desc, &args)
            .map_err(|e| prefix(e, &format!("node {n} ({})", op.r#type.name())))?;
        outputs.push(out);
    }
    let [edge] = g.output_edges.as_slice() else {
        return invalid("a dispatched graph has exactly one output edge");
    };
    let e = &edge.desc;
    let Some(bytes) = outputs.get(e.from_node_index as usize).filter(|_| e.from_node_output_index == 0)
    else {
        return invalid("the output edge names no node output");
    };
    let need = numel * dtype.width();
    if bytes.len() < need || round4(need as u64) > graph.output_size_in_bytes {
        return invalid(format!("the output holds {} bytes; the result needs {need}", bytes.len()));
    }
    Tensor::from_bytes(dtype, &dims, &bytes[..need]).map_err(|e| RuntimeError::from(e).into())
}

fn prefix(e: EmulateError, at: &str) -> EmulateError {
    match e {
        EmulateError::Invalid(m) => EmulateError::Invalid(format!("{at}: {m}")),
        EmulateError::Undefined(m) => EmulateError::Undefined(format!("{at}: {m}")),
        e => e,
    }
}

fn round4(b: u64) -> u64 {
    b.div_ceil(4) * 4
}

fn check_counts(graph: &DmlGraph, g: &GraphDesc) -> Result<(), EmulateError> {
    let counts = [
        (g.node_count, g.nodes.len(), "NodeCount"),
        (g.input_count, graph.input_bindings.len(), "InputCount"),
        (g.input_edge_count, g.input_edges.len(), "InputEdgeCount"),
        (g.output_edge_count, g.output_edges.len(), "OutputEdgeCount"),
        (g.intermediate_edge_count, g.intermediate_edges.len(), "IntermediateEdgeCount"),
        (g.output_count, 1, "OutputCount"),
    ];
    for (count, len, name) in counts {
        if count as usize != len {
            return invalid(format!("{name} is {count}, but there are {len}"));
        }
    }
    let types = g.input_edges.iter().all(|e| e.r#type == GraphEdgeType::Input)
        && g.output_edges.iter().all(|e| e.r#type == GraphEdgeType::Output)
        && g.intermediate_edges.iter().all(|e| e.r#type == GraphEdgeType::Intermediate);
    if !types {
        return invalid("an edge's Type does not match its list");
    }
    Ok(())
}

/// The bytes bound to input `slot` of node `n`: exactly one edge must feed it.
fn node_input<'a>(
    graph: &'a DmlGraph,
    g: &GraphDesc,
    inputs: &[&'a Tensor],
    outputs: &'a [Vec<u8>],
    n: usize,
    slot: usize,
    desc: &TensorDesc,
) -> Result<Vec<u8>, EmulateError> {
    let to = |node: u32, input: u32| node as usize == n && input as usize == slot;
    let from_inputs: Vec<_> =
        g.input_edges.iter().filter(|e| to(e.desc.to_node_index, e.desc.to_node_input_index)).collect();
    let from_nodes: Vec<_> = g
        .intermediate_edges
        .iter()
        .filter(|e| to(e.desc.to_node_index, e.desc.to_node_input_index))
        .collect();
    let total = desc.desc.total_tensor_size_in_bytes;
    match (from_inputs.as_slice(), from_nodes.as_slice()) {
        ([e], []) => {
            let Some(b) = graph.input_bindings.get(e.desc.graph_input_index as usize) else {
                return invalid(format!("GraphInputIndex {} has no binding", e.desc.graph_input_index));
            };
            let source: Vec<u8> = match b.source {
                BindingSource::Input(i) => match inputs.get(i) {
                    Some(t) => t.bytes().to_vec(),
                    None => return invalid(format!("a binding names input {i}")),
                },
                BindingSource::Constant(k) => match graph.constants.get(k) {
                    Some(c) => c.bytes(),
                    None => return invalid(format!("a binding names constant {k}")),
                },
            };
            let padded = round4(source.len() as u64);
            if b.offset % 16 != 0 {
                return invalid(format!("binding offset {} is not a multiple of 16", b.offset));
            }
            if b.offset.checked_add(b.size_in_bytes).is_none_or(|end| end > padded) {
                return invalid(format!(
                    "binding [{}, +{}) exceeds its buffer of {padded} bytes",
                    b.offset, b.size_in_bytes
                ));
            }
            if total > b.size_in_bytes {
                return invalid(format!(
                    "TotalTensorSizeInBytes {total} exceeds the binding's {}",
                    b.size_in_bytes
                ));
            }
            let mut bytes = source[(b.offset as usize).min(source.len())..].to_vec();
            bytes.resize(b.size_in_bytes as usize, 0);
            Ok(bytes)
        }
        ([], [e]) => {
            let from = e.desc.from_node_index as usize;
            if from >= n || e.desc.from_node_output_index != 0 {
                return invalid(format!("node {n} reads node {from}, which does not run before it"));
            }
            if total > outputs[from].len() as u64 {
                return invalid(format!(
                    "node {n} reads {total} bytes of a {}-byte intermediate",
                    outputs[from].len()
                ));
            }
            Ok(outputs[from].clone())
        }
        _ => invalid(format!("input {slot} of node {n} needs exactly one edge")),
    }
}

/// Checks a buffer tensor description on its own (sizes ≥ 1, size computation).
fn check_tensor(t: &TensorDesc, name: &str) -> Result<(), EmulateError> {
    let d = &t.desc;
    let n = d.dimension_count as usize;
    if d.sizes.len() != n || d.strides.as_ref().is_some_and(|s| s.len() != n) {
        return invalid(format!("{name}: DimensionCount {n} does not match Sizes/Strides"));
    }
    if d.sizes.contains(&0) {
        return invalid(format!("{name}: a size is 0"));
    }
    let Some(need) = calc_buffer_tensor_size(d.data_type, &d.sizes, d.strides.as_deref()) else {
        return invalid(format!("{name}: size overflows"));
    };
    if d.total_tensor_size_in_bytes < need {
        return invalid(format!("{name}: TotalTensorSizeInBytes {} < {need}", d.total_tensor_size_in_bytes));
    }
    if d.guaranteed_base_offset_alignment != 0
        && (!d.guaranteed_base_offset_alignment.is_power_of_two()
            || (d.guaranteed_base_offset_alignment as u64) < d.data_type.size())
    {
        return invalid(format!("{name}: bad GuaranteedBaseOffsetAlignment"));
    }
    Ok(())
}

fn check_dims(op: Op, level: FeatureLevel, tensors: &[(&TensorDesc, &str)]) -> Result<(), EmulateError> {
    let (min, max) = op.dims(level);
    for (t, name) in tensors {
        check_tensor(t, name)?;
        let n = t.desc.dimension_count as usize;
        if !(min..=max).contains(&n) {
            return invalid(format!(
                "{name}: DimensionCount {n} outside {min}..={max} at feature level {level}"
            ));
        }
    }
    Ok(())
}

/// The checks every gather operator makes of its input, indices and output descriptions.
fn check_gather(
    op: Op,
    level: FeatureLevel,
    i: &TensorDesc,
    x: &TensorDesc,
    o: &TensorDesc,
) -> Result<(), EmulateError> {
    check_dims(op, level, &[(i, "InputTensor"), (x, "IndicesTensor"), (o, "OutputTensor")])?;
    check_type(op, level, i, "InputTensor")?;
    if !op.index_supports(level, x.desc.data_type) {
        return invalid(format!("IndicesTensor: {} at feature level {level}", x.desc.data_type.name()));
    }
    Ok(())
}

fn check_type(op: Op, level: FeatureLevel, t: &TensorDesc, name: &str) -> Result<(), EmulateError> {
    if !op.supports(level, t.desc.data_type) {
        return invalid(format!(
            "{name}: {} is not supported at feature level {level}",
            t.desc.data_type.name()
        ));
    }
    Ok(())
}

/// Element offset (in elements) of `coord` (never negative) in a description.
fn offset(t: &TensorDesc, coord: &[i64]) -> u64 {
    t.desc.effective_strides().iter().zip(coord).map(|(s, &c)| s * c as u64).sum()
}

fn element<'b>(t: &TensorDesc, bytes: &'b [u8], coord: &[i64]) -> Result<&'b [u8], EmulateError> {
    let w = t.desc.data_type.size();
    let at = offset(t, coord) * w;
    if at + w > t.desc.total_tensor_size_in_bytes || at + w > bytes.len() as u64 {
        return invalid(format!("element {coord:?} lies outside the tensor's bytes"));
    }
    Ok(&bytes[at as usize..(at + w) as usize])
}

/// An output description's sizes, as the coordinates walked over it.
fn sizes(t: &TensorDesc) -> Vec<i64> {
    t.desc.sizes.iter().map(|&s| s as i64).collect()
}

fn int_value(t: DataType, b: &[u8]) -> i128 {
    let mut raw = [0u8; 8];
    raw[..b.len()].copy_from_slice(b);
    let u = u64::from_le_bytes(raw);
    match t {
        DataType::Int8 => u as u8 as i8 as i128,
        DataType::Int16 => u as u16 as i16 as i128,
        DataType::Int32 => u as u32 as i32 as i128,
        DataType::Int64 => u as i64 as i128,
        _ => u as i128,
    }
}

/// A gathered index read as DirectML documents it: negative values count from the end only
/// from feature level 3.0 with a signed type; anything else out of range is undefined.
fn resolve(level: FeatureLevel, t: DataType, raw: i128, n: u32) -> Result<i64, EmulateError> {
    let j = if raw < 0 && t.is_signed_int() && level >= FeatureLevel::L3_0 { raw + n as i128 } else { raw };
    if (0..n as i128).contains(&j) {
        Ok(j as i64)
    } else {
        Err(EmulateError::Undefined(format!("index {raw} on a dimension of {n}")))
    }
}

fn run_op(level: FeatureLevel, op: &OperatorFields, args: &[Vec<u8>]) -> Result<Vec<u8>, EmulateError> {
    let kind = Op::of(op.operator_type());
    if level < kind.introduced() {
        return invalid(format!("introduced at feature level {}", kind.introduced()));
    }
    let out_desc = op.output();
    if out_desc.desc.strides.is_some() {
        return invalid("slc's intermediates are packed: OutputTensor has no Strides");
    }
    let mut out = vec![0u8; out_desc.desc.total_tensor_size_in_bytes as usize];
    let w = out_desc.desc.data_type.size() as usize;
    let mut write = |coord: &[i64], src: &[u8]| -> Result<(), EmulateError> {
        let at = offset(out_desc, coord) as usize * w;
        out.get_mut(at..at + w)
            .ok_or(EmulateError::Invalid("output element out of bounds".into()))?
            .copy_from_slice(src);
        Ok(())
    };
    match op {
        OperatorFields::Slice1(d) => {
            let (i, o) = (&d.input_tensor, &d.output_tensor);
            check_dims(kind, level, &[(i, "InputTensor"), (o, "OutputTensor")])?;
            check_type(kind, level, i, "InputTensor")?;
            let n = d.dimension_count as usize;
            if i.desc.dimension_count as usize != n
                || o.desc.dimension_count as usize != n
                || d.input_window_offsets.len() != n
                || d.input_window_sizes.len() != n
                || d.input_window_strides.len() != n
            {
                return invalid("DimensionCount differs between the tensors and the window arrays");
            }
            if i.desc.data_type != o.desc.data_type {
                return invalid("InputTensor and OutputTensor differ in DataType");
            }
            let mut start = vec![0i64; n];
            for (k, first) in start.iter_mut().enumerate() {
                let (off, size, stride) = (
                    d.input_window_offsets[k] as u64,
                    d.input_window_sizes[k] as u64,
                    d.input_window_strides[k],
                );
                if size == 0 || stride == 0 || off + size > i.desc.sizes[k] as u64 {
                    return invalid(format!(
                        "window {k} ({off}, {size}, {stride}) is empty or leaves the input"
                    ));
                }
                let most = 1 + (size - 1) / stride.unsigned_abs() as u64;
                if o.desc.sizes[k] as u64 > most {
                    return invalid(format!("OutputTensor.Sizes[{k}] exceeds the window's {most} elements"));
                }
                *first = off as i64 + if stride < 0 { size as i64 - 1 } else { 0 };
            }
            let input = &args[0];
            each_coord(&sizes(o), |c| {
                let ic: Vec<i64> =
                    (0..n).map(|k| start[k] + d.input_window_strides[k] as i64 * c[k]).collect();
                write(c, element(i, input, &ic)?)
            })?;
        }
        OperatorFields::Gather(d) => {
            let (i, x, o) = (&d.input_tensor, &d.indices_tensor, &d.output_tensor);
            check_gather(kind, level, i, x, o)?;
            let dn = i.desc.dimension_count as usize;
            let (axis, q) = (d.axis as usize, d.index_dimensions as usize);
            if x.desc.dimension_count as usize != dn || o.desc.dimension_count as usize != dn {
                return invalid("InputTensor, IndicesTensor and OutputTensor differ in DimensionCount");
            }
            if i.desc.data_type != o.desc.data_type || axis >= dn || q > dn {
                return invalid("DataType, Axis or IndexDimensions out of range");
            }
            if x.desc.sizes[..dn - q].iter().any(|&s| s != 1) {
                return invalid("IndicesTensor has a leading dimension beyond IndexDimensions that is not 1");
            }
            // Sizes concatenate, then right-align: leading 1s that overflow are cropped.
            let mut cat: Vec<u32> = i.desc.sizes[..axis].to_vec();
            cat.extend(&x.desc.sizes[dn - q..]);
            cat.extend(&i.desc.sizes[axis + 1..]);
            let crop = cat.len().saturating_sub(dn);
            if cat.len() < dn || cat[..crop].iter().any(|&s| s != 1) || cat[crop..] != o.desc.sizes[..] {
                return invalid(format!(
                    "OutputTensor.Sizes {:?} should be {cat:?} right-aligned",
                    o.desc.sizes
                ));
            }
            let (input, indices) = (&args[0], &args[1]);
            each_coord(&sizes(o), |c| {
                let mut full = vec![0i64; crop];
                full.extend_from_slice(c);
                let mut xc = vec![0i64; dn - q];
                xc.extend_from_slice(&full[axis..axis + q]);
                let raw = int_value(x.desc.data_type, element(x, indices, &xc)?);
                let j = resolve(level, x.desc.data_type, raw, i.desc.sizes[axis])?;
                let mut ic = full[..axis].to_vec();
                ic.push(j);
                ic.extend_from_slice(&full[axis + q..]);
                write(c, element(i, input, &ic)?)
            })?;
        }
        OperatorFields::GatherElements(d) => {
            // output[c] = input[c with c[Axis] replaced by indices[c]]; all three tensors have
            // the same DimensionCount, the indices' Sizes are the input's except along Axis, and
            // the output's are the indices'.
            let (i, x, o) = (&d.input_tensor, &d.indices_tensor, &d.output_tensor);
            check_gather(kind, level, i, x, o)?;
            let (dn, axis) = (i.desc.dimension_count as usize, d.axis as usize);
            if x.desc.dimension_count as usize != dn || o.desc.dimension_count as usize != dn {
                return invalid("InputTensor, IndicesTensor and OutputTensor differ in DimensionCount");
            }
            if i.desc.data_type != o.desc.data_type || axis >= dn {
                return invalid("DataType or Axis out of range");
            }
            if (0..dn).any(|k| k != axis && x.desc.sizes[k] != i.desc.sizes[k]) {
                return invalid("IndicesTensor.Sizes differ from InputTensor.Sizes off the Axis");
            }
            if o.desc.sizes != x.desc.sizes {
                return invalid("OutputTensor.Sizes differ from IndicesTensor.Sizes");
            }
            let (input, indices) = (&args[0], &args[1]);
            each_coord(&sizes(o), |c| {
                let raw = int_value(x.desc.data_type, element(x, indices, c)?);
                let mut ic = c.to_vec();
                ic[axis] = resolve(level, x.desc.data_type, raw, i.desc.sizes[axis])?;
                write(c, element(i, input, &ic)?)
            })?;
        }
        OperatorFields::GatherNd1(d) => {
            let (i, x, o) = (&d.input_tensor, &d.indices_tensor, &d.output_tensor);
            check_gather(kind, level, i, x, o)?;
            let dn = i.desc.dimension_count as usize;
            if x.desc.dimension_count as usize != dn || o.desc.dimension_count as usize != dn {
                return invalid("InputTensor, IndicesTensor and OutputTensor differ in DimensionCount");
            }
            let (ni, nq, b) = (
                d.input_dimension_count as usize,
                d.indices_dimension_count as usize,
                d.batch_dimension_count as usize,
            );
            if i.desc.data_type != o.desc.data_type
                || ni == 0
                || nq == 0
                || ni > dn
                || nq > dn
                || b >= ni
                || b >= nq
            {
                return invalid("DataType or a dimension count out of range");
            }
            let tuple = x.desc.sizes[dn - 1] as usize;
            if tuple == 0 || b + tuple > ni {
                return invalid("the index tuple is longer than the input's non-batch dimensions");
            }
            let (real_in, real_idx) = (&i.desc.sizes[dn - ni..], &x.desc.sizes[dn - nq..]);
            if real_in[..b] != real_idx[..b] {
                return invalid("batch dimensions of InputTensor and IndicesTensor differ");
            }
            let mut real_out: Vec<u32> = real_idx[..nq - 1].to_vec();
            real_out.extend(&real_in[b + tuple..]);
            let r = real_out.len();
            if r > dn
                || o.desc.sizes[..dn - r].iter().any(|&s| s != 1)
                || o.desc.sizes[dn - r..] != real_out[..]
            {
                return invalid(format!(
                    "OutputTensor.Sizes {:?} should end with {real_out:?}",
                    o.desc.sizes
                ));
            }
            let (input, indices) = (&args[0], &args[1]);
            each_coord(&sizes(o), |c| {
                let rc = &c[dn - r..];
                let mut ic = vec![0i64; dn - ni];
                ic.extend_from_slice(&rc[..b]);
                for t in 0..tuple {
                    let mut xc = vec![0i64; dn - nq];
                    xc.extend_from_slice(&rc[..nq - 1]);
                    xc.push(t as i64);
                    let raw = int_value(x.desc.data_type, element(x, indices, &xc)?);
                    ic.push(resolve(level, x.desc.data_type, raw, real_in[b + t])?);
                }
                ic.extend_from_slice(&rc[nq - 1..]);
                write(c, element(i, input, &ic)?)
            })?;
        }
        OperatorFields::Scatter(_) | OperatorFields::ScatterNd(_) => return scatter::run(level, op, args),
    }
    Ok(out)
}

/// Runs one host check on the plan inputs, as the interpreter runs plan checks.
fn host_check(graph: &DmlGraph, check: &HostCheck, inputs: &[&Tensor]) -> Result<(), EmulateError> {
    each_coord(&check.shape, |coords| {
        let j = load(graph, &check.index, coords, inputs)?;
        if OobMode::Error.normalize(j, check.len).is_ok() {
            return Ok(());
        }
        Err(EmulateError::Runtime(match check.kind {
            HostCheckKind::PlanCheck(i) => RuntimeError::IndexOutOfBounds {
                check: i,
                index: j,
                axis: check.axis,
                len: check.len,
                span: None,
            },
            HostCheckKind::Guard => RuntimeError::GatherOutOfRange,
        }))
    })
}

/// The integer a host access reads at `coords` (0 where a `zero`-mode term misses), following
/// the plan IR's definition.
fn load(graph: &DmlGraph, a: &HostAccess, coords: &[i64], inputs: &[&Tensor]) -> Result<i128, EmulateError> {
    let mut address =
        a.base as i128 + coords.iter().zip(&a.strides).map(|(&o, &s)| o as i128 * s as i128).sum::<i128>();
    for term in &a.terms {
        let j = load(graph, &term.index, coords, inputs)?;
        match term.mode.normalize(j, term.len) {
            Ok(Some(j)) => address += j as i128 * term.stride as i128,
            Ok(None) => return Ok(0),
            // As the interpreter: an error-mode miss that no check covered.
            Err(IndexOutOfRange) if term.mode == OobMode::Error => {
                return Err(RuntimeError::GatherOutOfRange.into());
            }
            Err(IndexOutOfRange) => return Err(RuntimeError::EmptyAxis.into()),
        }
    }
    let value = match &a.source {
        BindingSource::Input(i) => {
            let Some(t) = inputs.get(*i) else {
                return invalid(format!("a host check reads input {i}"));
            };
            usize::try_from(address)
                .ok()
                .and_then(|at| t.int_at(at))
                .ok_or(RuntimeError::OutOfBuffer { address, len: t.numel() })?
        }
        BindingSource::Constant(k) => {
            let Some(c) = graph.constants.get(*k) else {
                return invalid(format!("a host check reads constant {k}"));
            };
            usize::try_from(address)
                .ok()
                .and_then(|at| c.values.get(at))
                .map(|&v| v as i128)
                .ok_or(RuntimeError::OutOfBuffer { address, len: c.values.len() })?
        }
    };
    Ok(value)
}
