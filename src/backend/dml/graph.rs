//! [`DmlGraph`]: the `DML_GRAPH_DESC` that computes a plan, plus what a host needs around it —
//! which buffer each graph input binds (`DML_BUFFER_BINDING` offsets and sizes), the constant
//! index data slc computed, the index checks the host runs before dispatch, and the plan's
//! logical output type.

use super::desc::{
    DataType, FeatureLevel, GraphDesc, GraphEdgeDesc, GraphEdgeType, GraphNodeDesc, GraphNodeType,
    InputGraphEdgeDesc, OperatorDesc, OperatorGraphNodeDesc, OutputGraphEdgeDesc,
};
use crate::types::OobMode;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;

/// Where a graph input's bytes come from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub enum BindingSource {
    /// The plan input with this index (in [`DmlGraph::inputs`] order).
    Input(usize),
    /// The constant with this index in [`DmlGraph::constants`].
    Constant(usize),
}

/// `DML_BUFFER_BINDING` of one graph input: `Offset` (bytes, a multiple of 16) and
/// `SizeInBytes` into the source buffer. Sources are bound padded with zeros to a multiple of 4
/// bytes, as `TotalTensorSizeInBytes` rounds up to 4.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct InputBinding {
    pub source: BindingSource,
    pub offset: u64,
    pub size_in_bytes: u64,
}

/// A constant buffer slc made, C order: normalized index values, or a stored value's elements
/// as their bits (the unsigned integer of the element's width: a float's bit pattern).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct Constant {
    pub data_type: DataType,
    pub values: Vec<i64>,
}

impl Constant {
    /// The little-endian bytes of the values in `DataType`.
    pub fn bytes(&self) -> Vec<u8> {
        let w = self.data_type.size() as usize;
        self.values.iter().flat_map(|v| v.to_le_bytes()[..w].to_vec()).collect()
    }
}

/// A tensor of the plan, in slc's terms (`dtype` is slc's spelling, e.g. `bf16`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct TensorDecl {
    pub name: String,
    pub dtype: String,
    pub shape: Vec<i64>,
}

/// An index read the host performs before dispatch (a plan access over input buffers).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct HostAccess {
    /// The plan input or constant read.
    pub source: BindingSource,
    pub base: i64,
    pub strides: Vec<i64>,
    pub terms: Vec<HostTerm>,
}

/// `stride · norm(load(index))`, as in the plan IR.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct HostTerm {
    pub index: HostAccess,
    pub len: i64,
    pub stride: i64,
    /// Written by name: `error`, `zero`, `clamp` or `wrap`.
    #[serde(with = "mode_name")]
    pub mode: OobMode,
}

/// An [`OobMode`] in the JSON: its name, checked when the graph is read.
mod mode_name {
    use crate::types::OobMode;
    use serde::de::Error as _;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(mode: &OobMode, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(mode.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<OobMode, D::Error> {
        let name = String::deserialize(d)?;
        OobMode::from_name(&name).ok_or_else(|| D::Error::custom(format!("unknown mode `{name}`")))
    }
}

/// What a failed host check reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum HostCheckKind {
    /// The plan's check with this number (NumPy's IndexError on the whole index tensor).
    PlanCheck(usize),
    /// A guard for an `error`-mode gather that no plan check covers: DirectML leaves
    /// out-of-range indices undefined, so the host must reject them before dispatch.
    Guard,
}

/// Every value of `index` over `shape` must lie in `[-len, len)`; otherwise the host does not
/// dispatch and reports the error.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct HostCheck {
    pub kind: HostCheckKind,
    pub index: HostAccess,
    pub shape: Vec<i64>,
    pub len: i64,
    pub axis: usize,
}

/// The DirectML form of a plan. Serializes to the JSON of `slc compile --target dml`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct DmlGraph {
    /// The level every operator, data type and dimension count was chosen for.
    pub feature_level: FeatureLevel,
    /// The plan's inputs, bound by name.
    pub inputs: Vec<TensorDecl>,
    pub constants: Vec<Constant>,
    /// One per graph input (`GraphInputIndex` order).
    pub input_bindings: Vec<InputBinding>,
    /// `SizeInBytes` of the graph output's binding (offset 0).
    pub output_size_in_bytes: u64,
    /// What the host compiles, from feature level 2.1 on: `IDMLDevice1::CompileGraph` of this
    /// `DML_GRAPH_DESC` (empty when nothing is dispatched).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub graph_desc: Option<GraphDesc>,
    /// What the host compiles below feature level 2.1, which has no graph API: the one operator,
    /// created with `IDMLDevice::CreateOperator` and compiled with `IDMLDevice::CompileOperator`;
    /// input binding `k` binds the operator's input `k`. Absent when nothing is dispatched.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub operator_desc: Option<OperatorDesc>,
    /// The plan's result: the graph output's bytes are this tensor, C order (newaxis and shrunk
    /// dimensions are a reinterpretation of the packed output, not an operator).
    pub output: TensorDecl,
    /// False when the output is empty: DirectML tensors cannot have a size-0 dimension, so
    /// nothing is dispatched and the host makes the empty tensor.
    pub dispatch: bool,
    pub host_checks: Vec<HostCheck>,
    pub notes: Vec<String>,
}

impl DmlGraph {
    /// The JSON form: `directml.h` structures by their field names, enums as
    /// `{"Name": ..., "Value": ...}`.
    pub fn to_json(&self) -> String {
        // The model holds only strings, integers, vectors and maps: serialization cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads the JSON form back (checking each enum's name against its value, and that a graph
    /// and an operator are not both given).
    pub fn from_json(text: &str) -> Result<DmlGraph, serde_json::Error> {
        let g: DmlGraph = serde_json::from_str(text)?;
        if g.graph_desc.is_some() && g.operator_desc.is_some() {
            return Err(serde::de::Error::custom("both GraphDesc and OperatorDesc are given"));
        }
        Ok(g)
    }

    /// The operators and edges, as a graph whatever the form: an [`operator_desc`](Self::operator_desc)
    /// is the graph of that one node fed by input binding `k` at its input `k`.
    pub fn graph(&self) -> Cow<'_, GraphDesc> {
        match (&self.graph_desc, &self.operator_desc) {
            (Some(g), _) => Cow::Borrowed(g),
            (None, Some(op)) => Cow::Owned(one_operator_graph(op, self.input_bindings.len())),
            (None, None) => Cow::Owned(graph_of(vec![], vec![], vec![])),
        }
    }
}

/// The graph of one node `op` whose input `k` is graph input `k`, for `inputs` inputs.
fn one_operator_graph(op: &OperatorDesc, inputs: usize) -> GraphDesc {
    let node = GraphNodeDesc {
        r#type: GraphNodeType::Operator,
        desc: OperatorGraphNodeDesc { operator: op.clone(), name: "op0".into() },
    };
    let input_edges = (0..inputs as u32)
        .map(|k| GraphEdgeDesc {
            r#type: GraphEdgeType::Input,
            desc: InputGraphEdgeDesc {
                graph_input_index: k,
                to_node_index: 0,
                to_node_input_index: k,
                name: format!("in{k}"),
            },
        })
        .collect();
    let output = GraphEdgeDesc {
        r#type: GraphEdgeType::Output,
        desc: OutputGraphEdgeDesc {
            from_node_index: 0,
            from_node_output_index: 0,
            graph_output_index: 0,
            name: "out".into(),
        },
    };
    graph_of(vec![node], input_edges, vec![output])
}

fn graph_of(
    nodes: Vec<GraphNodeDesc>,
    input_edges: Vec<GraphEdgeDesc<InputGraphEdgeDesc>>,
    output_edges: Vec<GraphEdgeDesc<OutputGraphEdgeDesc>>,
) -> GraphDesc {
    GraphDesc {
        input_count: input_edges.len() as u32,
        output_count: output_edges.len() as u32,
        node_count: nodes.len() as u32,
        nodes,
        input_edge_count: input_edges.len() as u32,
        input_edges,
        output_edge_count: output_edges.len() as u32,
        output_edges,
        intermediate_edge_count: 0,
        intermediate_edges: vec![],
    }
}
