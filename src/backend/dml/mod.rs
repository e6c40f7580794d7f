//! The DirectML target: a verified [`Plan`] becomes a `DML_GRAPH_DESC` of DirectML operators
//! ([`lower`]), written as JSON mirroring `directml.h` ([`DmlGraph::to_json`]) or as C source
//! ([`DmlGraph::to_c`]), and executed on the CPU by an emulator of DirectML's documented
//! semantics ([`emulate`]), which is how it is tested: DirectML itself runs only on Windows.
//!
//! Lowering (spec §5.4, §6):
//! * an access without gathered terms (a view) is one `DML_OPERATOR_SLICE1`: each output
//!   dimension is matched to the input dimension it walks, giving per input dimension a window
//!   offset, size and signed stride; shrunk dimensions get a size-1 window and newaxis costs
//!   nothing (the output buffer is packed either way);
//! * one gathered term is a `DML_OPERATOR_GATHER` (no batch dimensions) or a
//!   `DML_OPERATOR_GATHER_ND1` whose index tensor is broadcast by stride 0 over the data-only
//!   leading dimensions (batch dimensions); the data view is folded into the input tensor
//!   description (strides, binding offset) when it can be, else materialized by a SLICE1 into an
//!   intermediate;
//! * several terms, or a gather of a gather, become a graph of such operators joined by
//!   intermediate edges.
//!
//! Out-of-range indices are undefined in DirectML, so the lowering never relies on them:
//! constant indices are normalized on the host (per mode), `error`-mode dynamic indices are
//! validated by the host before dispatch ([`DmlGraph::host_checks`]), and the other modes on
//! dynamic indices are refused with a diagnostic.

pub mod c;
pub mod desc;
mod emulate;
mod graph;
mod target;

pub use desc::{DataType, FeatureLevel, OperatorType};
pub use emulate::{EmulateError, emulate};
pub use graph::*;
pub use target::{Artifact, Target};

use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::plan::{Access, BufferId, IndexOutOfRange, OobMode, Plan};
use desc::*;
use slc_runtime::DType;

/// Options of the DirectML lowering.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DmlOptions {
    /// The feature level the descriptors must be valid at.
    pub feature_level: FeatureLevel,
}

impl Default for DmlOptions {
    /// Feature level 5.0, the newest level whose operator tables slc knows.
    fn default() -> DmlOptions {
        DmlOptions { feature_level: FeatureLevel::L5_0 }
    }
}

/// Why a plan cannot be expressed in DirectML at the requested feature level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DmlError {
    /// The operator does not exist at this feature level.
    #[error("{op} needs DirectML feature level {needs}; the target is {level}")]
    FeatureLevel { op: &'static str, needs: FeatureLevel, level: FeatureLevel },
    /// Too many dimensions after merging all that can be merged.
    #[error("{op} needs {dims} dimensions after merging; DirectML allows {allowed} at feature level {level}")]
    Rank { op: &'static str, dims: usize, allowed: String, level: FeatureLevel, detail: String },
    /// The element type has no DirectML form for this operator at this level.
    #[error("{op} does not support {dtype} data at DirectML feature level {level}")]
    DataType { op: &'static str, dtype: DType, level: FeatureLevel },
    /// The index tensor's type is not one DirectML gathers accept.
    #[error("DirectML gathers cannot read {dtype} indices at feature level {level}")]
    IndexType { dtype: DType, level: FeatureLevel },
    /// The out-of-range policy of a gather cannot be honoured.
    #[error("mode={mode} cannot be honoured by DirectML for {what}")]
    OobPolicy { mode: &'static str, what: String },
    /// A size, stride or offset does not fit the 32-bit fields of `directml.h`.
    #[error("{0} does not fit DirectML's 32-bit tensor fields")]
    TooLarge(String),
    /// A plan shape slc's DirectML lowering does not handle.
    #[error("unsupported by the DirectML target: {0}")]
    Unsupported(String),
}

impl IntoDiagnostic for DmlError {
    fn into_diagnostic(self) -> Diagnostic {
        let message = self.to_string();
        match self {
            DmlError::FeatureLevel { needs, .. } => Diagnostic::error("E0401", message)
                .help(format!("choose --feature-level {needs} or higher")),
            DmlError::Rank { detail, .. } => Diagnostic::error("E0402", message)
                .note(detail)
                .help("dimensions merge only where the window leaves them whole or they coalesce"),
            DmlError::DataType { .. } => Diagnostic::error("E0403", message)
                .help("64-bit types are native from feature level 4.1 (below, they move as pairs of UINT32)"),
            DmlError::IndexType { .. } => Diagnostic::error("E0404", message)
                .help("DirectML gathers take INT32/INT64/UINT32/UINT64 indices (UINT32 only below 3.0); cast the index tensor"),
            DmlError::OobPolicy { .. } => Diagnostic::error("E0405", message).help(
                "DirectML leaves out-of-range indices undefined: use constant indices, or mode=error (checked on the host before dispatch)",
            ),
            DmlError::TooLarge(_) => Diagnostic::error("E0406", message),
            DmlError::Unsupported(_) => Diagnostic::error("E0407", message),
        }
    }
}

/// The operators slc emits, with their `directml.h` availability and tensor support tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Slice1,
    Gather,
    GatherNd1,
}

const SMALL_TYPES: [DataType; 8] = [
    DataType::Float32,
    DataType::Float16,
    DataType::Int32,
    DataType::Int16,
    DataType::Int8,
    DataType::Uint32,
    DataType::Uint16,
    DataType::Uint8,
];
const WIDE_TYPES: [DataType; 3] = [DataType::Float64, DataType::Int64, DataType::Uint64];

impl Op {
    pub(crate) fn of(t: OperatorType) -> Op {
        match t {
            OperatorType::Slice1 => Op::Slice1,
            OperatorType::Gather => Op::Gather,
            OperatorType::GatherNd1 => Op::GatherNd1,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Slice1 => "DML_OPERATOR_SLICE1",
            Op::Gather => "DML_OPERATOR_GATHER",
            Op::GatherNd1 => "DML_OPERATOR_GATHER_ND1",
        }
    }

    pub(crate) fn introduced(self) -> FeatureLevel {
        match self {
            Op::Slice1 => FeatureLevel::L2_1,
            Op::Gather => FeatureLevel::L1_0,
            Op::GatherNd1 => FeatureLevel::L3_0,
        }
    }

    /// Data types of the input/output tensors at `level` (the docs' "Tensor support" tables).
    pub(crate) fn supports(self, level: FeatureLevel, t: DataType) -> bool {
        let small = SMALL_TYPES.contains(&t);
        let wide = WIDE_TYPES.contains(&t);
        match self {
            Op::Slice1 => (level >= FeatureLevel::L2_1 && small) || (level >= FeatureLevel::L4_1 && wide),
            Op::Gather => {
                (matches!(t, DataType::Float32 | DataType::Float16))
                    || (level >= FeatureLevel::L2_1 && small)
                    || (level >= FeatureLevel::L4_1 && wide)
            }
            Op::GatherNd1 => level >= FeatureLevel::L3_0 && small,
        }
    }

    /// Index types (gathers only).
    pub(crate) fn index_supports(self, level: FeatureLevel, t: DataType) -> bool {
        if level >= FeatureLevel::L3_0 {
            matches!(t, DataType::Int32 | DataType::Int64 | DataType::Uint32 | DataType::Uint64)
        } else {
            t == DataType::Uint32
        }
    }

    /// The allowed `DimensionCount`s.
    pub(crate) fn dims(self, level: FeatureLevel) -> (usize, usize) {
        match (self, level >= FeatureLevel::L3_0) {
            (_, true) | (Op::GatherNd1, _) => (1, 8),
            (Op::Slice1, false) => (4, 5),
            (Op::Gather, false) => (4, 4),
        }
    }
}

impl PartialOrd for FeatureLevel {
    fn partial_cmp(&self, other: &FeatureLevel) -> Option<std::cmp::Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for FeatureLevel {
    fn cmp(&self, other: &FeatureLevel) -> std::cmp::Ordering {
        self.value().cmp(&other.value())
    }
}

/// The DirectML type that holds `dtype`'s bytes: bool is UINT8 and bf16 UINT16 (slicing only
/// moves bits, so the bit pattern is all that matters).
pub fn natural_type(dtype: DType) -> DataType {
    match dtype {
        DType::Bool | DType::U8 => DataType::Uint8,
        DType::I8 => DataType::Int8,
        DType::I16 => DataType::Int16,
        DType::I32 => DataType::Int32,
        DType::I64 => DataType::Int64,
        DType::U16 | DType::BF16 => DataType::Uint16,
        DType::U32 => DataType::Uint32,
        DType::U64 => DataType::Uint64,
        DType::F16 => DataType::Float16,
        DType::F32 => DataType::Float32,
        DType::F64 => DataType::Float64,
    }
}

/// The binding offset granularity: `DML_MINIMUM_BUFFER_TENSOR_ALIGNMENT`.
const BINDING_ALIGNMENT: i64 = 16;

/// Lowers a verified plan to a DirectML graph valid at `opts.feature_level`.
pub fn lower(plan: &Plan, opts: &DmlOptions) -> Result<DmlGraph, DmlError> {
    let mut cx = Lowering { plan, level: opts.feature_level, parts: Parts::default() };
    cx.host_checks()?;
    let numel: i64 = plan.shape.iter().product();
    let dispatch = numel > 0;
    let mut notes = vec![];
    if dispatch {
        let acc = Acc::from_plan(&plan.output);
        let node = cx.emit(&acc, &plan.shape)?;
        cx.output_edge(node);
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
fn empty_axis(mode: OobMode) -> DmlError {
    DmlError::OobPolicy {
        mode: mode.name(),
        what: "an axis of size 0, where every index is out of range".into(),
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
                .map(|t| Term { index: Acc::from_plan(&t.index), len: t.len, stride: t.stride, mode: t.mode })
                .collect(),
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

/// One dimension of a SLICE1: the input tensor description's size and (unsigned) stride, and
/// the walk along it: `count` elements from `start` by `step`.
#[derive(Debug, Clone, PartialEq)]
struct Win {
    size: i64,
    stride: i64,
    start: i64,
    count: i64,
    step: i64,
    /// The input dimensions this one stands for (for diagnostics).
    label: String,
}

impl Win {
    fn offset(&self) -> i64 {
        if self.step > 0 { self.start } else { self.start + (self.count - 1) * self.step }
    }

    fn window(&self) -> i64 {
        (self.count - 1) * self.step.abs() + 1
    }
}

/// Row-major strides of a shape.
fn packed_strides(shape: &[i64]) -> Vec<i64> {
    let mut out = vec![0; shape.len()];
    let mut acc = 1i64;
    for d in (0..shape.len()).rev() {
        out[d] = acc;
        acc = acc.saturating_mul(shape[d].max(1));
    }
    out
}

/// Matches each output dimension `(count, stride)` of a view at `base` over a packed buffer of
/// `shape` to the buffer dimension it walks (spec §6): one window per buffer dimension, plus a
/// stride-0 dimension for a broadcast. Windows come in output order, so the SLICE1's packed
/// output is the view's. `None` when the view is not a product of per-dimension slices.
fn map_view(shape: &[i64], base: i64, dims: &[(i64, i64)]) -> Option<Vec<Win>> {
    let shape: Vec<i64> = if shape.is_empty() { vec![1] } else { shape.to_vec() };
    let sigma = packed_strides(&shape);
    let numel: i64 = shape.iter().product();
    if base < 0 || base >= numel {
        return None;
    }
    let first: Vec<i64> = (0..shape.len()).map(|b| (base / sigma[b]) % shape[b]).collect();
    let mut assigned: Vec<Option<(i64, i64, usize)>> = vec![None; shape.len()];
    let mut broadcast = vec![];
    for (pos, &(count, stride)) in dims.iter().enumerate() {
        if count == 1 {
            continue;
        }
        if stride == 0 {
            broadcast.push((pos, count));
            continue;
        }
        let b = (0..shape.len()).find(|&b| {
            let k = stride / sigma[b];
            shape[b] >= 2
                && assigned[b].is_none()
                && stride % sigma[b] == 0
                && (0..shape[b]).contains(&(first[b] + (count - 1) * k))
                && k.abs() < shape[b]
        })?;
        assigned[b] = Some((stride / sigma[b], count, pos));
    }
    // Sort key: an assigned dimension sits at its output position; an unassigned one (a
    // shrunk or size-1 dimension) just before the next assigned one, keeping buffer order.
    let mut keyed = vec![];
    for b in 0..shape.len() {
        let key = match assigned[b] {
            Some((_, _, pos)) => (pos, 1),
            None => ((b..shape.len()).find_map(|c| assigned[c].map(|a| a.2)).unwrap_or(dims.len()), 0),
        };
        let (step, count) = assigned[b].map_or((1, 1), |(k, c, _)| (k, c));
        let win =
            Win { size: shape[b], stride: sigma[b], start: first[b], count, step, label: b.to_string() };
        keyed.push((key, win));
    }
    for (pos, count) in broadcast {
        let win = Win { size: count, stride: 0, start: 0, count, step: 1, label: "broadcast".into() };
        keyed.push(((pos, 1), win));
    }
    keyed.sort_by_key(|(key, _)| *key);
    Some(keyed.into_iter().map(|(_, w)| w).collect())
}

/// Any affine view as a SLICE1 input: a leading stride-1 dimension carries the base offset, each
/// output dimension gets its own (unsigned) stride. Used when [`map_view`] finds no per-dimension
/// structure (a view of an intermediate laid out otherwise).
fn generic_view(base: i64, dims: &[(i64, i64)]) -> Vec<Win> {
    let low: i64 = base + dims.iter().filter(|d| d.1 < 0 && d.0 > 1).map(|&(c, s)| (c - 1) * s).sum::<i64>();
    let mut wins =
        vec![Win { size: low + 1, stride: 1, start: low, count: 1, step: 1, label: "offset".into() }];
    for (pos, &(count, stride)) in dims.iter().enumerate() {
        if count > 1 {
            let (start, step) = if stride < 0 { (count - 1, -1) } else { (0, 1) };
            wins.push(Win {
                size: count,
                stride: stride.abs(),
                start,
                count,
                step,
                label: format!("out{pos}"),
            });
        }
    }
    wins
}

/// Merges adjacent windows `a` (outer), `b` when they address one progression of a coalesced
/// dimension.
fn merge(a: &Win, b: &Win) -> Option<Win> {
    let layout = a.stride == b.stride.checked_mul(b.size)?;
    let walk = a.count == 1 || b.count == 1 || a.step * b.size == b.step * b.count;
    if !(layout && walk) {
        return None;
    }
    let step = if b.count >= 2 {
        b.step
    } else if a.count >= 2 {
        a.step * b.size
    } else {
        1
    };
    Some(Win {
        size: a.size.checked_mul(b.size)?,
        stride: b.stride,
        start: a.start * b.size + b.start,
        count: a.count * b.count,
        step,
        label: format!("{}+{}", a.label, b.label),
    })
}

/// Brings a window list into `[min, max]` dimensions: drops unit windows at offset 0, merges
/// coalescing neighbours, pads with leading unit dimensions.
fn fit(mut wins: Vec<Win>, min: usize, max: usize) -> Result<Vec<Win>, (usize, String)> {
    if wins.len() > max {
        let keep: Vec<Win> = wins.iter().filter(|w| !(w.count == 1 && w.start == 0)).cloned().collect();
        wins = if keep.is_empty() { wins[..1].to_vec() } else { keep };
    }
    while wins.len() > max {
        let Some(i) = (0..wins.len() - 1).find(|&i| merge(&wins[i], &wins[i + 1]).is_some()) else {
            let parts: Vec<String> = wins.iter().map(|w| format!("[{}]", w.label)).collect();
            return Err((
                wins.len(),
                format!(
                    "input dimensions {} each stay separate: the window cuts them (a partial range or a step) \
                     so no two neighbours coalesce",
                    parts.join(" ")
                ),
            ));
        };
        let merged = merge(&wins[i], &wins[i + 1]).ok_or((wins.len(), String::new()))?;
        wins.splice(i..i + 2, [merged]);
    }
    while wins.len() < min {
        wins.insert(0, Win { size: 1, stride: 0, start: 0, count: 1, step: 1, label: "pad".into() });
    }
    Ok(wins)
}

fn u32_of(v: i64, what: &str) -> Result<u32, DmlError> {
    u32::try_from(v).map_err(|_| DmlError::TooLarge(format!("{what} {v}")))
}

fn i32_of(v: i64, what: &str) -> Result<i32, DmlError> {
    i32::try_from(v).map_err(|_| DmlError::TooLarge(format!("{what} {v}")))
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

/// The element type of a tensor an operator moves: `(type, pairs)`, where `pairs` means a
/// 64-bit type moved as two UINT32 (an extra trailing dimension of 2, strides doubled).
fn storage(op: Op, level: FeatureLevel, dtype: DType) -> Result<(DataType, bool), DmlError> {
    let t = natural_type(dtype);
    if op.supports(level, t) {
        Ok((t, false))
    } else if t.size() == 8 && op.supports(level, DataType::Uint32) {
        Ok((DataType::Uint32, true))
    } else {
        Err(DmlError::DataType { op: op.name(), dtype, level })
    }
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
}

struct Lowering<'p> {
    plan: &'p Plan,
    level: FeatureLevel,
    parts: Parts,
}

/// All coordinates of `shape` in C order.
fn coords(shape: &[i64]) -> impl Iterator<Item = Vec<i64>> + '_ {
    let total: i64 = shape.iter().product();
    (0..total.max(0)).map(move |mut linear| {
        let mut c = vec![0; shape.len()];
        for d in (0..shape.len()).rev() {
            c[d] = linear % shape[d];
            linear /= shape[d];
        }
        c
    })
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

    fn require(&self, op: Op) -> Result<(), DmlError> {
        if self.level < op.introduced() {
            return Err(DmlError::FeatureLevel { op: op.name(), needs: op.introduced(), level: self.level });
        }
        Ok(())
    }

    /// The plan's checks, run by the host before dispatch. Checks of constant indices are
    /// decided now.
    fn host_checks(&mut self) -> Result<(), DmlError> {
        for (i, check) in self.plan.checks.iter().enumerate() {
            if let BufferId::Const(k) = check.index.buffer {
                if !check.index.terms.is_empty() {
                    return Err(DmlError::Unsupported("a check of a gathered constant index".into()));
                }
                let t = &self.plan.consts[k].tensor;
                for c in coords(&check.shape) {
                    let at = check.index.base
                        + c.iter().zip(&check.index.strides).map(|(o, s)| o * s).sum::<i64>();
                    let v = t.int_at(at as usize).unwrap_or_default();
                    if OobMode::Error.normalize(v, check.len).is_err() {
                        return Err(DmlError::Unsupported(format!(
                            "the constant index {v} is out of range for axis {} with size {}",
                            check.axis, check.len
                        )));
                    }
                }
                continue;
            }
            let index = self.host_access(&Acc::from_plan(&check.index))?;
            let shape = check.shape.clone();
            let kind = HostCheckKind::PlanCheck(i);
            self.parts.checks.push(HostCheck { kind, index, shape, len: check.len, axis: check.axis });
        }
        Ok(())
    }

    fn host_access(&mut self, acc: &Acc) -> Result<HostAccess, DmlError> {
        let source = match acc.src {
            Src::Plan(BufferId::Input(i)) => BindingSource::Input(i),
            Src::Plan(BufferId::Const(k)) => BindingSource::Constant(self.plan_const(k)),
            _ => return Err(DmlError::Unsupported("a checked index read from an intermediate".into())),
        };
        let mut terms = vec![];
        for t in &acc.terms {
            let index = self.host_access(&t.index)?;
            terms.push(HostTerm { index, len: t.len, stride: t.stride, mode: t.mode.name().to_string() });
        }
        Ok(HostAccess { source, base: acc.base, strides: acc.strides.clone(), terms })
    }

    /// Makes sure every value an `error`-mode term reads is validated before dispatch: a plan
    /// check over the whole index tensor covers it, otherwise a guard is added.
    fn guard(&mut self, t: &Term, shape: &[i64]) -> Result<(), DmlError> {
        let covered = t.index.terms.is_empty()
            && self.plan.checks.iter().any(|c| {
                let whole = self.shape_of(t.index.src);
                Src::Plan(c.index.buffer) == t.index.src
                    && c.index.terms.is_empty()
                    && c.len == t.len
                    && c.index.base == 0
                    && c.shape.iter().product::<i64>() == whole.iter().product::<i64>()
                    && c.shape
                        .iter()
                        .zip(c.index.strides.iter().zip(packed_strides(&c.shape)))
                        .all(|(&n, (&s, p))| n == 1 || s == p)
            });
        if !covered {
            let index = self.host_access(&t.index)?;
            let kind = HostCheckKind::Guard;
            self.parts.checks.push(HostCheck { kind, index, shape: shape.to_vec(), len: t.len, axis: 0 });
        }
        Ok(())
    }

    fn plan_const(&mut self, k: usize) -> usize {
        if let Some(&(_, c)) = self.parts.plan_consts.iter().find(|(p, _)| *p == k) {
            return c;
        }
        let t = &self.plan.consts[k].tensor;
        let values = (0..t.numel()).map(|i| t.int_at(i).unwrap_or_default() as i64).collect();
        self.parts.constants.push(Constant { data_type: natural_type(t.dtype()), values });
        let c = self.parts.constants.len() - 1;
        self.parts.plan_consts.push((k, c));
        c
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
        match acc.terms.len() {
            0 => {
                let dims: Vec<(i64, i64)> = shape.iter().copied().zip(acc.strides.iter().copied()).collect();
                self.slice1(acc.src, acc.base, &dims)
            }
            1 => self.gather(acc, shape),
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

    /// The index operand of a gather term over `shape`: source, base, per-dimension strides and
    /// DirectML type. Constant indices are normalized on the host; dynamic ones must be
    /// `error`-mode (validated before dispatch).
    fn index_operand(&mut self, t: &Term, shape: &[i64]) -> Result<(Src, i64, Vec<i64>, DataType), DmlError> {
        if let (Src::Plan(BufferId::Const(k)), true) = (t.index.src, t.index.terms.is_empty()) {
            let used: Vec<usize> =
                (0..shape.len()).filter(|&d| shape[d] >= 2 && t.index.strides[d] != 0).collect();
            let sub: Vec<i64> = used.iter().map(|&d| shape[d]).collect();
            let tensor = &self.plan.consts[k].tensor;
            let mut values = Vec::with_capacity(sub.iter().product::<i64>() as usize);
            for c in coords(&sub) {
                let at =
                    t.index.base + c.iter().zip(&used).map(|(o, &d)| o * t.index.strides[d]).sum::<i64>();
                let v = tensor.int_at(at as usize).unwrap_or_default();
                match t.mode.normalize(v, t.len) {
                    Ok(Some(j)) => values.push(j),
                    Ok(None) => {
                        return Err(DmlError::OobPolicy {
                            mode: t.mode.name(),
                            what: format!(
                                "the constant index {v} on an axis of {}: DirectML gathers have no zero fill",
                                t.len
                            ),
                        });
                    }
                    Err(IndexOutOfRange) => {
                        return Err(DmlError::Unsupported(format!(
                            "the constant index {v} is out of range for an axis of {}",
                            t.len
                        )));
                    }
                }
            }
            let data_type = if t.len <= u32::MAX as i64 { DataType::Uint32 } else { DataType::Uint64 };
            self.parts.constants.push(Constant { data_type, values });
            let packed = packed_strides(&sub);
            let mut strides = vec![0; shape.len()];
            for (i, &d) in used.iter().enumerate() {
                strides[d] = packed[i];
            }
            return Ok((Src::Made(self.parts.constants.len() - 1), 0, strides, data_type));
        }
        if t.mode != OobMode::Error {
            let what = match t.index.src {
                Src::Plan(b) => format!(
                    "the index tensor `{}`, whose values are known only at run time",
                    self.plan.buffer_name(b)
                ),
                _ => "a computed index".to_string(),
            };
            return Err(DmlError::OobPolicy { mode: t.mode.name(), what });
        }
        self.guard(t, shape)?;
        let (mut src, mut base, mut strides) = if t.index.terms.is_empty() {
            (t.index.src, t.index.base, t.index.strides.clone())
        } else {
            (Src::Node(self.emit(&t.index, shape)?), 0, packed_strides(shape))
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

    /// A single-term access: GATHER, or GATHER_ND1 with batch dimensions.
    fn gather(&mut self, acc: &Acc, shape: &[i64]) -> Result<usize, DmlError> {
        let t = &acc.terms[0];
        if t.len <= 0 {
            return Err(empty_axis(t.mode));
        }
        let m = shape.len();
        let (isrc, ibase, istrides, itype) = self.index_operand(t, shape)?;
        let dtype = self.dtype_of(acc.src);
        let mut ddims: Vec<(i64, i64)> = shape.iter().copied().zip(acc.strides.iter().copied()).collect();
        ddims.push((t.len, t.stride));
        let (mut dsrc, mut dbase) = (acc.src, acc.base);
        let mut dstrides: Vec<i64> = ddims.iter().map(|d| d.1).collect();
        let negative = ddims.iter().any(|&(c, s)| c >= 2 && s < 0);
        if negative || !self.bindable(dsrc, dbase) {
            let (node, s) = self.materialize(dsrc, dbase, &ddims)?;
            (dsrc, dbase, dstrides) = (Src::Node(node), 0, s);
        }
        // The output dimensions that matter: (count, data stride, index stride).
        let mut k: Vec<(i64, i64, i64)> =
            (0..m).filter(|&d| shape[d] >= 2).map(|d| (shape[d], dstrides[d], istrides[d])).collect();
        let axis = (t.len, dstrides[m]);
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
    fn gather_node(
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
    /// terms' axes whole, which the rest then gather from.
    fn peel(&mut self, acc: &Acc, shape: &[i64]) -> Result<usize, DmlError> {
        let m = shape.len();
        let rest = &acc.terms[1..];
        if let Some(t) = rest.iter().find(|t| t.len <= 0) {
            return Err(empty_axis(t.mode));
        }
        let mut ext_shape = shape.to_vec();
        ext_shape.extend(rest.iter().map(|t| t.len));
        let first = &acc.terms[0];
        let mut strides = acc.strides.clone();
        strides.extend(rest.iter().map(|t| t.stride));
        let inner = Acc {
            src: acc.src,
            base: acc.base,
            strides,
            terms: vec![Term { index: first.index.extended(rest.len()), ..first.clone() }],
        };
        let node = self.gather(&inner, &ext_shape)?;
        let packed = packed_strides(&ext_shape);
        let outer = Acc {
            src: Src::Node(node),
            base: 0,
            strides: packed[..m].to_vec(),
            terms: rest
                .iter()
                .enumerate()
                .map(|(i, t)| Term { stride: packed[m + i], ..t.clone() })
                .collect(),
        };
        self.emit(&outer, shape)
    }

    fn finish(self, dispatch: bool, notes: Vec<String>, output_size_in_bytes: u64) -> DmlGraph {
        let p = self.parts;
        let plan = self.plan;
        let decl = |name: &str, dtype: DType, shape: &[i64]| TensorDecl {
            name: name.to_string(),
            dtype: dtype.name().to_string(),
            shape: shape.to_vec(),
        };
        DmlGraph {
            feature_level: self.level,
            inputs: plan.inputs.iter().map(|d| decl(&d.name, d.dtype, &d.shape)).collect(),
            constants: p.constants,
            output_size_in_bytes,
            graph_desc: GraphDesc {
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
            },
            input_bindings: p.bindings,
            output: decl("out", plan.dtype, &plan.shape),
            dispatch,
            host_checks: p.checks,
            notes,
        }
    }
}
