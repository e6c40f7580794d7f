//! Plan → [`DmlGraph`]: the lowering rules of the module documentation. This file holds the
//! walk over the plan's output access, the SLICE1 rule and the graph under construction;
//! [`gather`] holds the gather rules ([`gather_elements`] and [`gather_nd`] the ONNX-shaped
//! ones), [`fold`] what the host computes from constant indices so that one operator suffices,
//! and [`checks`] the host's index checks.

mod checks;
mod fold;
mod gather;
mod gather_elements;
mod gather_nd;
mod scatter;

use super::DmlOptions;
use super::caps::{GRAPHS, Op, natural_type, storage};
use super::desc::*;
use super::error::{DmlError, OobRefusal};
use super::graph::*;
use super::window::{Win, each_coord, fit, generic_view, map_view, packed_strides};
use crate::plan::{Access, BufferId, Plan, VerifiedPlan};
use crate::source::Span;
use crate::types::OobMode;
use slc_runtime::DType;

/// The binding offset granularity: `DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT`.
const BINDING_ALIGNMENT: i64 = 16;

/// Lowers a verified plan to a DirectML graph valid at `opts.feature_level`.
pub fn lower(plan: &VerifiedPlan, opts: &DmlOptions) -> Result<DmlGraph, DmlError> {
    if let Some(strided) = plan.inputs.iter().find(|d| d.strides.is_some()) {
        return Err(DmlError::Unsupported(format!(
            "input `{}` is a strided view (bindings are dense)",
            strided.name
        )));
    }
    if let Some(cast) = plan.inputs.iter().find(|d| d.cast_of().is_some()) {
        return Err(DmlError::Unsupported(format!(
            "input `{}` is a store's value cast to {} per call (give the value in the target's dtype)",
            cast.name, cast.dtype
        )));
    }
    // DirectML's widest element is 8 bytes: complex64 moves as UINT64 bits, complex128 not at all.
    let dtypes =
        plan.inputs.iter().map(|d| (d.name.to_string(), d.dtype)).chain([("the output".into(), plan.dtype)]);
    if let Some((name, dtype)) = dtypes.into_iter().find(|(_, d)| d.width() > 8) {
        return Err(DmlError::ElementSize { dtype, name });
    }
    let mut cx = Lowering { plan, level: opts.feature_level, parts: Parts::default() };
    cx.host_checks()?;
    let numel: i64 = plan.shape.iter().product();
    let dispatch = numel > 0;
    let mut notes = vec![];
    if dispatch {
        // A store that updates nothing is its target's copy, as a load.
        let node = match &plan.store {
            Some(store) if store.shape.iter().product::<i64>() > 0 => cx.store(store)?,
            _ => cx.emit(&Acc::from_plan(&plan.output), &plan.shape)?,
        };
        cx.output_edge(node);
        let nodes = cx.parts.nodes.len();
        if nodes > 1 {
            let why = cx.parts.graph_reasons.join("; ");
            if cx.level < GRAPHS {
                return Err(DmlError::Graph { nodes, why, needs: GRAPHS, level: cx.level });
            }
            notes.push(format!("a graph of {nodes} operators: {why}"));
        }
    } else {
        notes.push(
            "the result is empty: DirectML tensors cannot have a size-0 dimension, so no operator is \
             dispatched; the host makes the empty tensor"
                .to_string(),
        );
    }
    let output_size_in_bytes = round4(numel.max(0) as u64 * plan.dtype.width() as u64);
    Ok(cx.finish(dispatch, notes, output_size_in_bytes))
}

/// A gather from an axis of size 0 into a non-empty result: no index is valid, so the CPU
/// result is an error (or zeros); DirectML tensors cannot describe the axis at all.
fn empty_axis(t: &Term) -> DmlError {
    DmlError::OobPolicy { mode: t.mode, refusal: OobRefusal::EmptyAxis, at: t.origin }
}

/// slc's dtype of a DirectML index type (for a refusal).
fn index_dtype(t: DataType) -> DType {
    match t {
        DataType::Int8 => DType::I8,
        DataType::Int16 => DType::I16,
        DataType::Int32 => DType::I32,
        DataType::Int64 => DType::I64,
        DataType::Uint8 => DType::U8,
        DataType::Uint16 => DType::U16,
        DataType::Uint32 => DType::U32,
        _ => DType::U64,
    }
}

fn round4(bytes: u64) -> u64 {
    bytes.div_ceil(4) * 4
}

/// A buffer an operator reads: one of the plan's, or a node's output (an intermediate).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Src {
    Plan(BufferId),
    Node(usize),
    /// A constant slc made (index `k` of [`DmlGraph::constants`]).
    Made(usize),
}

/// The plan's [`Access`] over a [`Src`]: intermediates are addressed like plan buffers.
#[derive(Debug, Clone)]
struct Acc {
    src: Src,
    base: i64,
    strides: Vec<i64>,
    terms: Vec<Term>,
}

#[derive(Debug, Clone)]
struct Term {
    index: Acc,
    len: i64,
    stride: i64,
    mode: OobMode,
    /// The gather in the program text (the plan term's origin), where a refusal points.
    origin: Option<Span>,
}

impl Acc {
    fn from_plan(a: &Access) -> Acc {
        Acc {
            src: Src::Plan(a.buffer),
            base: a.base,
            strides: a.strides.clone(),
            terms: a
                .terms
                .iter()
                .map(|t| Term {
                    index: Acc::from_plan(&t.index),
                    len: t.len,
                    stride: t.stride,
                    mode: t.mode,
                    origin: t.origin.0,
                })
                .collect(),
        }
    }

    /// The same access over the output dimensions `dims` only (the others held at 0).
    fn projected(&self, dims: &[usize]) -> Acc {
        Acc {
            src: self.src,
            base: self.base,
            strides: dims.iter().map(|&d| self.strides[d]).collect(),
            terms: self.terms.iter().map(|t| Term { index: t.index.projected(dims), ..t.clone() }).collect(),
        }
    }

    /// The same access over `extra` more trailing coordinates that it ignores.
    fn extended(&self, extra: usize) -> Acc {
        let mut a = self.clone();
        a.strides.extend(std::iter::repeat_n(0, extra));
        for t in &mut a.terms {
            t.index = t.index.extended(extra);
        }
        a
    }
}

fn u32_of(v: i64, what: &str) -> Result<u32, DmlError> {
    u32::try_from(v).map_err(|_| DmlError::TooLarge(format!("{what} {v}")))
}

fn i32_of(v: i64, what: &str) -> Result<i32, DmlError> {
    i32::try_from(v).map_err(|_| DmlError::TooLarge(format!("{what} {v}")))
}

/// Pads an operator's three operands (`(size, stride)` per dim, outermost first; named by
/// `names`, the first its input) with leading unit dims to one count within `op`'s range at
/// `level`: the most any of them has, at least the least allowed. More than `op` takes is a
/// [`DmlError::Rank`] naming each operand's count, `what` naming the operation. Returns the
/// operands' counts before padding, and after.
fn fit_rank(
    op: Op,
    level: FeatureLevel,
    what: &str,
    names: [&str; 3],
    operands: [&mut Vec<(i64, i64)>; 3],
) -> Result<([usize; 3], usize), DmlError> {
    let counts = operands.each_ref().map(|v| v.len());
    let (min, max) = op.dims(level);
    let dims = counts.into_iter().max().unwrap_or(0);
    if dims > max {
        let [a, b, c] = counts;
        let [_, nb, nc] = names;
        return Err(DmlError::Rank {
            op: op.name(),
            dims,
            allowed: format!("{min} to {max}"),
            level,
            detail: format!("the {what}'s input has {a} dimensions, its {nb} {b} and its {nc} {c}"),
        });
    }
    let padded = dims.max(min);
    for v in operands {
        while v.len() < padded {
            v.insert(0, (1, 0));
        }
    }
    Ok((counts, padded))
}

/// A buffer tensor description over dims `(size, stride)`; `None` strides = packed.
fn tensor(data_type: DataType, dims: &[(i64, i64)], strided: bool) -> Result<TensorDesc, DmlError> {
    let sizes = dims.iter().map(|d| u32_of(d.0, "a size")).collect::<Result<Vec<_>, _>>()?;
    let strides = if strided {
        Some(dims.iter().map(|d| u32_of(d.1, "a stride")).collect::<Result<Vec<_>, _>>()?)
    } else {
        None
    };
    let desc = BufferTensorDesc::new(data_type, sizes, strides)
        .ok_or_else(|| DmlError::TooLarge("a tensor's byte size".into()))?;
    if desc.total_tensor_size_in_bytes / data_type.size() > u32::MAX as u64 {
        return Err(DmlError::TooLarge(format!("a tensor of {} bytes", desc.total_tensor_size_in_bytes)));
    }
    Ok(TensorDesc::buffer(desc))
}

/// What the lowering accumulates: the graph under construction.
#[derive(Default)]
struct Parts {
    nodes: Vec<GraphNodeDesc>,
    /// Each node's output: dtype and logical shape (packed, C order).
    node_out: Vec<(DType, Vec<i64>)>,
    constants: Vec<Constant>,
    /// Plan constant → index in `constants`.
    plan_consts: Vec<(usize, usize)>,
    bindings: Vec<InputBinding>,
    input_edges: Vec<GraphEdgeDesc<InputGraphEdgeDesc>>,
    inter_edges: Vec<GraphEdgeDesc<IntermediateGraphEdgeDesc>>,
    output_edges: Vec<GraphEdgeDesc<OutputGraphEdgeDesc>>,
    checks: Vec<HostCheck>,
    /// Why one operator did not suffice, each reason once (the graph's note, or the refusal
    /// below the level that has graphs).
    graph_reasons: Vec<String>,
}

struct Lowering<'p> {
    plan: &'p Plan,
    level: FeatureLevel,
    parts: Parts,
}

impl Lowering<'_> {
    fn dtype_of(&self, src: Src) -> DType {
        match src {
            Src::Plan(b) => self.plan.buffer_dtype(b).unwrap_or(self.plan.dtype),
            Src::Node(n) => self.parts.node_out[n].0,
            Src::Made(_) => DType::U32,
        }
    }

    fn shape_of(&self, src: Src) -> Vec<i64> {
        match src {
            Src::Plan(b) => self.plan.buffer_shape(b).unwrap_or_default(),
            Src::Node(n) => self.parts.node_out[n].1.clone(),
            Src::Made(k) => vec![self.parts.constants[k].values.len() as i64],
        }
    }

    /// Records why the lowering adds a node feeding another one.
    fn graph_because(&mut self, why: &str) {
        if !self.parts.graph_reasons.iter().any(|r| r == why) {
            self.parts.graph_reasons.push(why.to_string());
        }
    }

    fn require(&self, op: Op) -> Result<(), DmlError> {
        if self.level < op.introduced() {
            return Err(DmlError::FeatureLevel { op: op.name(), needs: op.introduced(), level: self.level });
        }
        Ok(())
    }

    /// Binds input `slot` of `node` to `src` (a graph input at `offset` bytes, or an
    /// intermediate edge).
    fn connect(&mut self, node: usize, slot: u32, src: Src, offset: u64, desc: &TensorDesc) {
        let source = match src {
            Src::Node(from) => {
                let edge = IntermediateGraphEdgeDesc {
                    from_node_index: from as u32,
                    from_node_output_index: 0,
                    to_node_index: node as u32,
                    to_node_input_index: slot,
                    name: format!("t{from}"),
                };
                self.parts
                    .inter_edges
                    .push(GraphEdgeDesc { r#type: GraphEdgeType::Intermediate, desc: edge });
                return;
            }
            Src::Plan(BufferId::Input(i)) => BindingSource::Input(i),
            Src::Plan(BufferId::Const(k)) => BindingSource::Constant(self.plan_const(k)),
            Src::Made(k) => BindingSource::Constant(k),
        };
        let name = match &source {
            BindingSource::Input(i) => self.plan.inputs.get(*i).map_or_else(String::new, |d| d.name.clone()),
            BindingSource::Constant(k) => format!("const{k}"),
        };
        let size_in_bytes = desc.desc.total_tensor_size_in_bytes;
        self.parts.bindings.push(InputBinding { source, offset, size_in_bytes });
        let edge = InputGraphEdgeDesc {
            graph_input_index: self.parts.bindings.len() as u32 - 1,
            to_node_index: node as u32,
            to_node_input_index: slot,
            name,
        };
        self.parts.input_edges.push(GraphEdgeDesc { r#type: GraphEdgeType::Input, desc: edge });
    }

    fn push_node(&mut self, fields: OperatorFields, out: (DType, Vec<i64>)) -> usize {
        let index = self.parts.nodes.len();
        let kind = fields.operator_type().name().trim_start_matches("DML_OPERATOR_").to_lowercase();
        let name = format!("{kind}_{index}");
        let desc = OperatorGraphNodeDesc { operator: OperatorDesc::new(fields), name };
        self.parts.nodes.push(GraphNodeDesc { r#type: GraphNodeType::Operator, desc });
        self.parts.node_out.push(out);
        index
    }

    fn output_edge(&mut self, node: usize) {
        let desc = OutputGraphEdgeDesc {
            from_node_index: node as u32,
            from_node_output_index: 0,
            graph_output_index: 0,
            name: "out".into(),
        };
        self.parts.output_edges.push(GraphEdgeDesc { r#type: GraphEdgeType::Output, desc });
    }

    /// Emits operators whose output is `acc` over `shape`, packed in C order.
    fn emit(&mut self, acc: &Acc, shape: &[i64]) -> Result<usize, DmlError> {
        let acc = &self.without_unused_terms(acc, shape)?;
        match acc.terms.len() {
            0 => {
                let dims: Vec<(i64, i64)> = shape.iter().copied().zip(acc.strides.iter().copied()).collect();
                self.slice1(acc.src, acc.base, &dims)
            }
            _ if self.composite_fits(acc, shape) => self.composite(acc, shape),
            1 => self.gather(acc, shape),
            _ if gather_nd::is_tuple(&acc.terms) => self.gather(acc, shape),
            _ => self.peel(acc, shape),
        }
    }

    /// One SLICE1 copying the view `base + Σ o_d·dims[d].1` of `src` into a packed intermediate.
    fn slice1(&mut self, src: Src, base: i64, dims: &[(i64, i64)]) -> Result<usize, DmlError> {
        self.require(Op::Slice1)?;
        let dtype = self.dtype_of(src);
        let (data_type, pairs) = storage(Op::Slice1, self.level, dtype)?;
        let wins = map_view(&self.shape_of(src), base, dims).unwrap_or_else(|| generic_view(base, dims));
        let (min, max) = Op::Slice1.dims(self.level);
        let extra = usize::from(pairs);
        let mut wins = fit(wins, min.saturating_sub(extra).max(1), max - extra).map_err(|(n, detail)| {
            DmlError::Rank {
                op: Op::Slice1.name(),
                dims: n + extra,
                allowed: format!("{min} to {max}"),
                level: self.level,
                detail,
            }
        })?;
        if pairs {
            for w in &mut wins {
                w.stride *= 2;
            }
            wins.push(Win { size: 2, stride: 1, start: 0, count: 2, step: 1, label: "pair".into() });
        }
        let input = tensor(data_type, &wins.iter().map(|w| (w.size, w.stride)).collect::<Vec<_>>(), true)?;
        let output = tensor(data_type, &wins.iter().map(|w| (w.count, 0)).collect::<Vec<_>>(), false)?;
        let fields = Slice1Desc {
            dimension_count: wins.len() as u32,
            input_window_offsets: wins
                .iter()
                .map(|w| u32_of(w.offset(), "a window offset"))
                .collect::<Result<_, _>>()?,
            input_window_sizes: wins
                .iter()
                .map(|w| u32_of(w.window(), "a window size"))
                .collect::<Result<_, _>>()?,
            input_window_strides: wins
                .iter()
                .map(|w| i32_of(w.step, "a window stride"))
                .collect::<Result<_, _>>()?,
            input_tensor: input.clone(),
            output_tensor: output,
        };
        let shape = dims.iter().map(|d| d.0).collect();
        let node = self.push_node(OperatorFields::Slice1(fields), (dtype, shape));
        self.connect(node, 0, src, 0, &input);
        Ok(node)
    }

    /// Whether a view of `src` at `base` can be bound directly (binding offsets are multiples
    /// of 16 bytes; intermediate edges have none).
    fn bindable(&self, src: Src, base: i64) -> bool {
        match src {
            Src::Plan(_) | Src::Made(_) => base * self.dtype_of(src).width() as i64 % BINDING_ALIGNMENT == 0,
            Src::Node(_) => base == 0,
        }
    }

    /// Copies the used dimensions (count ≥ 2, stride ≠ 0) of a view into a packed intermediate;
    /// returns it and the view's new strides over it (0 on unused dimensions).
    fn materialize(
        &mut self,
        src: Src,
        base: i64,
        dims: &[(i64, i64)],
    ) -> Result<(usize, Vec<i64>), DmlError> {
        self.graph_because(
            "a view with a negative step, or at an offset that is not a multiple of 16 bytes, cannot \
             be a gather's tensor description, so a SLICE1 copies it first",
        );
        let used: Vec<usize> = (0..dims.len()).filter(|&d| dims[d].0 >= 2 && dims[d].1 != 0).collect();
        let sub: Vec<(i64, i64)> = used.iter().map(|&d| dims[d]).collect();
        let node = self.slice1(src, base, &sub)?;
        let packed = packed_strides(&sub.iter().map(|d| d.0).collect::<Vec<_>>());
        let mut strides = vec![0; dims.len()];
        for (k, &d) in used.iter().enumerate() {
            strides[d] = packed[k];
        }
        Ok((node, strides))
    }

    fn finish(self, dispatch: bool, notes: Vec<String>, output_size_in_bytes: u64) -> DmlGraph {
        let mut p = self.parts;
        let plan = self.plan;
        let decl = |name: &str, dtype: DType, shape: &[i64]| TensorDecl {
            name: name.to_string(),
            dtype: dtype.name().to_string(),
            shape: shape.to_vec(),
        };
        // Below 2.1 there is no graph API: the lowering made one operator (or none), which the
        // host compiles alone, binding its inputs in the order of its input slots.
        let (graph_desc, operator_desc) = if self.level >= GRAPHS {
            (true, None)
        } else {
            let mut slots: Vec<(u32, InputBinding)> =
                p.input_edges.iter().map(|e| e.desc.to_node_input_index).zip(p.bindings).collect();
            slots.sort_by_key(|(slot, _)| *slot);
            p.bindings = slots.into_iter().map(|(_, b)| b).collect();
            (false, p.nodes.pop().map(|n| n.desc.operator))
        };
        DmlGraph {
            feature_level: self.level,
            inputs: plan.inputs.iter().map(|d| decl(&d.name, d.dtype, &d.shape)).collect(),
            constants: p.constants,
            output_size_in_bytes,
            operator_desc,
            graph_desc: graph_desc.then_some(GraphDesc {
                input_count: p.bindings.len() as u32,
                output_count: p.output_edges.len() as u32,
                node_count: p.nodes.len() as u32,
                nodes: p.nodes,
                input_edge_count: p.input_edges.len() as u32,
                input_edges: p.input_edges,
                output_edge_count: p.output_edges.len() as u32,
                output_edges: p.output_edges,
                intermediate_edge_count: p.inter_edges.len() as u32,
                intermediate_edges: p.inter_edges,
            }),
            input_bindings: p.bindings,
            output: decl("out", plan.dtype, &plan.shape),
            dispatch,
            host_checks: p.checks,
            notes,
        }
    }
}
