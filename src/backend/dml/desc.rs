//! The DirectML descriptor data model: Rust mirrors of the `directml.h` structures slc emits,
//! with every field under its `directml.h` name and every enum carrying its `directml.h` name and
//! numeric value. JSON (de)serialization goes through serde, so the JSON form is exactly this
//! model: `{"Name": "DML_OPERATOR_SLICE1", "Value": 111}` for an enum, `"InputWindowOffsets"`
//! for a field.
//!
//! IMPORTANT: keep the enum values in sync with `tests/dml/include/DirectML.h` (the minimal
//! header the generated C is compiled against) and with the Win32 metadata's `directml.h`
//! (README.md, "DirectML target").

use serde::de::Error as _;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// `{"Name": ..., "Value": ...}`: how every `directml.h` enum appears in the JSON.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
struct EnumRepr {
    name: String,
    value: u32,
}

/// Defines a `directml.h` enum: variants with their C name and value, `name()`, `value()`,
/// `from_name()` and the `{"Name", "Value"}` serde form (which rejects a mismatched pair).
macro_rules! dml_enum {
    ($(#[$meta:meta])* $ty:ident { $($(#[$vmeta:meta])* $variant:ident = $cname:literal, $value:expr;)+ }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $ty {
            $($(#[$vmeta])* $variant,)+
        }

        impl $ty {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant,)+];

            /// The `directml.h` spelling.
            pub fn name(self) -> &'static str {
                match self { $($ty::$variant => $cname,)+ }
            }

            /// The numeric value in `directml.h`.
            pub fn value(self) -> u32 {
                match self { $($ty::$variant => $value,)+ }
            }

            /// The variant spelled `name` in `directml.h`.
            pub fn from_name(name: &str) -> Option<$ty> {
                Self::ALL.iter().copied().find(|v| v.name() == name)
            }
        }

        impl Serialize for $ty {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                EnumRepr { name: self.name().to_string(), value: self.value() }.serialize(s)
            }
        }

        impl<'de> Deserialize<'de> for $ty {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<$ty, D::Error> {
                let r = EnumRepr::deserialize(d)?;
                match $ty::from_name(&r.name) {
                    Some(v) if v.value() == r.value => Ok(v),
                    Some(v) => Err(D::Error::custom(format!(
                        "{} has the value {}, not {}", r.name, v.value(), r.value
                    ))),
                    None => Err(D::Error::custom(format!("unknown {}: {}", stringify!($ty), r.name))),
                }
            }
        }
    };
}

dml_enum! {
    /// `DML_TENSOR_DATA_TYPE`.
    DataType {
        Float32 = "DML_TENSOR_DATA_TYPE_FLOAT32", 1;
        Float16 = "DML_TENSOR_DATA_TYPE_FLOAT16", 2;
        Uint32 = "DML_TENSOR_DATA_TYPE_UINT32", 3;
        Uint16 = "DML_TENSOR_DATA_TYPE_UINT16", 4;
        Uint8 = "DML_TENSOR_DATA_TYPE_UINT8", 5;
        Int32 = "DML_TENSOR_DATA_TYPE_INT32", 6;
        Int16 = "DML_TENSOR_DATA_TYPE_INT16", 7;
        Int8 = "DML_TENSOR_DATA_TYPE_INT8", 8;
        Float64 = "DML_TENSOR_DATA_TYPE_FLOAT64", 9;
        Uint64 = "DML_TENSOR_DATA_TYPE_UINT64", 10;
        Int64 = "DML_TENSOR_DATA_TYPE_INT64", 11;
    }
}

impl DataType {
    /// Bytes per element.
    pub fn size(self) -> u64 {
        match self {
            DataType::Uint8 | DataType::Int8 => 1,
            DataType::Float16 | DataType::Uint16 | DataType::Int16 => 2,
            DataType::Float32 | DataType::Uint32 | DataType::Int32 => 4,
            DataType::Float64 | DataType::Uint64 | DataType::Int64 => 8,
        }
    }

    pub fn is_signed_int(self) -> bool {
        matches!(self, DataType::Int8 | DataType::Int16 | DataType::Int32 | DataType::Int64)
    }

    pub fn is_int(self) -> bool {
        self.is_signed_int()
            || matches!(self, DataType::Uint8 | DataType::Uint16 | DataType::Uint32 | DataType::Uint64)
    }
}

dml_enum! {
    /// `DML_OPERATOR_TYPE` (the operators slc emits).
    OperatorType {
        Gather = "DML_OPERATOR_GATHER", 67;
        /// `DML_OPERATOR_SCATTER` (also spelled `DML_OPERATOR_SCATTER_ELEMENTS`, the same value).
        Scatter = "DML_OPERATOR_SCATTER", 94;
        GatherElements = "DML_OPERATOR_GATHER_ELEMENTS", 107;
        ScatterNd = "DML_OPERATOR_SCATTER_ND", 109;
        Slice1 = "DML_OPERATOR_SLICE1", 111;
        GatherNd1 = "DML_OPERATOR_GATHER_ND1", 140;
    }
}

dml_enum! {
    /// `DML_FEATURE_LEVEL`.
    FeatureLevel {
        L1_0 = "DML_FEATURE_LEVEL_1_0", 0x1000;
        L2_0 = "DML_FEATURE_LEVEL_2_0", 0x2000;
        L2_1 = "DML_FEATURE_LEVEL_2_1", 0x2100;
        L3_0 = "DML_FEATURE_LEVEL_3_0", 0x3000;
        L3_1 = "DML_FEATURE_LEVEL_3_1", 0x3100;
        L4_0 = "DML_FEATURE_LEVEL_4_0", 0x4000;
        L4_1 = "DML_FEATURE_LEVEL_4_1", 0x4100;
        L5_0 = "DML_FEATURE_LEVEL_5_0", 0x5000;
    }
}

impl FeatureLevel {
    /// Parses `MAJOR.MINOR` (`"4.1"`), the spelling of `--feature-level`.
    pub fn parse(s: &str) -> Option<FeatureLevel> {
        let (major, minor) = s.trim().split_once('.')?;
        let (major, minor): (u32, u32) = (major.parse().ok()?, minor.parse().ok()?);
        if major > 15 || minor > 15 {
            return None;
        }
        let value = (major << 12) | (minor << 8);
        Self::ALL.iter().copied().find(|l| l.value() == value)
    }

    /// `MAJOR.MINOR`.
    pub fn version(self) -> String {
        format!("{}.{}", self.value() >> 12, (self.value() >> 8) & 0xf)
    }
}

impl std::fmt::Display for FeatureLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.version())
    }
}

dml_enum! {
    /// `DML_TENSOR_TYPE`.
    TensorType {
        Buffer = "DML_TENSOR_TYPE_BUFFER", 1;
    }
}

dml_enum! {
    /// `DML_TENSOR_FLAGS` (slc's tensors carry no flag).
    TensorFlags {
        None = "DML_TENSOR_FLAG_NONE", 0;
    }
}

dml_enum! {
    /// `DML_GRAPH_NODE_TYPE`.
    GraphNodeType {
        Operator = "DML_GRAPH_NODE_TYPE_OPERATOR", 1;
    }
}

dml_enum! {
    /// `DML_GRAPH_EDGE_TYPE`.
    GraphEdgeType {
        Input = "DML_GRAPH_EDGE_TYPE_INPUT", 1;
        Output = "DML_GRAPH_EDGE_TYPE_OUTPUT", 2;
        Intermediate = "DML_GRAPH_EDGE_TYPE_INTERMEDIATE", 3;
    }
}

/// `DML_BUFFER_TENSOR_DESC`. Sizes and strides count elements; `Strides` is `null` for a packed
/// row-major tensor.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct BufferTensorDesc {
    pub data_type: DataType,
    pub flags: TensorFlags,
    pub dimension_count: u32,
    pub sizes: Vec<u32>,
    pub strides: Option<Vec<u32>>,
    pub total_tensor_size_in_bytes: u64,
    pub guaranteed_base_offset_alignment: u32,
}

/// `DMLCalcBufferTensorSize` (DirectMLX): the bytes a tensor description can reach, rounded up
/// to 4. `None` when it does not fit in u64.
pub fn calc_buffer_tensor_size(data_type: DataType, sizes: &[u32], strides: Option<&[u32]>) -> Option<u64> {
    let elements = match strides {
        None => sizes.iter().try_fold(1u64, |acc, &s| acc.checked_mul(s as u64))?,
        Some(strides) => {
            let mut last = 0u64;
            for (&s, &t) in sizes.iter().zip(strides) {
                last = last.checked_add((s as u64).checked_sub(1)?.checked_mul(t as u64)?)?;
            }
            last + 1
        }
    };
    let bytes = elements.checked_mul(data_type.size())?;
    bytes.checked_add(3).map(|b| b & !3)
}

impl BufferTensorDesc {
    /// A description with its `DimensionCount` and `TotalTensorSizeInBytes` computed.
    pub fn new(data_type: DataType, sizes: Vec<u32>, strides: Option<Vec<u32>>) -> Option<BufferTensorDesc> {
        let total = calc_buffer_tensor_size(data_type, &sizes, strides.as_deref())?;
        Some(BufferTensorDesc {
            data_type,
            flags: TensorFlags::None,
            dimension_count: sizes.len() as u32,
            sizes,
            strides,
            total_tensor_size_in_bytes: total,
            guaranteed_base_offset_alignment: 0,
        })
    }

    /// The element strides in effect (packed row-major when `Strides` is null).
    pub fn effective_strides(&self) -> Vec<u64> {
        match &self.strides {
            Some(s) => s.iter().map(|&v| v as u64).collect(),
            None => {
                let mut out = vec![0u64; self.sizes.len()];
                let mut acc = 1u64;
                for d in (0..self.sizes.len()).rev() {
                    out[d] = acc;
                    acc = acc.saturating_mul(self.sizes[d] as u64);
                }
                out
            }
        }
    }

    pub fn element_count(&self) -> u64 {
        self.sizes.iter().fold(1u64, |a, &s| a.saturating_mul(s as u64))
    }
}

/// `DML_TENSOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct TensorDesc {
    pub r#type: TensorType,
    pub desc: BufferTensorDesc,
}

impl TensorDesc {
    pub fn buffer(desc: BufferTensorDesc) -> TensorDesc {
        TensorDesc { r#type: TensorType::Buffer, desc }
    }
}

/// `DML_SLICE1_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct Slice1Desc {
    pub input_tensor: TensorDesc,
    pub output_tensor: TensorDesc,
    pub dimension_count: u32,
    pub input_window_offsets: Vec<u32>,
    pub input_window_sizes: Vec<u32>,
    pub input_window_strides: Vec<i32>,
}

/// `DML_GATHER_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct GatherDesc {
    pub input_tensor: TensorDesc,
    pub indices_tensor: TensorDesc,
    pub output_tensor: TensorDesc,
    pub axis: u32,
    pub index_dimensions: u32,
}

/// `DML_GATHER_ND1_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct GatherNd1Desc {
    pub input_tensor: TensorDesc,
    pub indices_tensor: TensorDesc,
    pub output_tensor: TensorDesc,
    pub input_dimension_count: u32,
    pub indices_dimension_count: u32,
    pub batch_dimension_count: u32,
}

/// `DML_GATHER_ELEMENTS_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct GatherElementsDesc {
    pub input_tensor: TensorDesc,
    pub indices_tensor: TensorDesc,
    pub output_tensor: TensorDesc,
    pub axis: u32,
}

/// `DML_SCATTER_OPERATOR_DESC` (ONNX ScatterElements without a reduction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct ScatterDesc {
    pub input_tensor: TensorDesc,
    pub indices_tensor: TensorDesc,
    pub updates_tensor: TensorDesc,
    pub output_tensor: TensorDesc,
    pub axis: u32,
}

/// `DML_SCATTER_ND_OPERATOR_DESC` (ONNX ScatterND without a reduction).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct ScatterNdDesc {
    pub input_tensor: TensorDesc,
    pub indices_tensor: TensorDesc,
    pub updates_tensor: TensorDesc,
    pub output_tensor: TensorDesc,
    pub input_dimension_count: u32,
    pub indices_dimension_count: u32,
}

/// The operator-specific half of a `DML_OPERATOR_DESC`. Untagged: each struct's field set is
/// distinct, and [`OperatorDesc`]'s `Type` must agree with it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum OperatorFields {
    Slice1(Slice1Desc),
    Gather(GatherDesc),
    GatherNd1(GatherNd1Desc),
    /// After `Gather`: its fields are a subset of GATHER's, which untagged parsing tries first.
    GatherElements(GatherElementsDesc),
    Scatter(ScatterDesc),
    ScatterNd(ScatterNdDesc),
}

impl OperatorFields {
    pub fn operator_type(&self) -> OperatorType {
        match self {
            OperatorFields::Slice1(_) => OperatorType::Slice1,
            OperatorFields::Gather(_) => OperatorType::Gather,
            OperatorFields::GatherNd1(_) => OperatorType::GatherNd1,
            OperatorFields::GatherElements(_) => OperatorType::GatherElements,
            OperatorFields::Scatter(_) => OperatorType::Scatter,
            OperatorFields::ScatterNd(_) => OperatorType::ScatterNd,
        }
    }

    /// The input tensors in binding order (`InputTensor`, then `IndicesTensor`, then a
    /// scatter's `UpdatesTensor`).
    pub fn inputs(&self) -> Vec<&TensorDesc> {
        match self {
            OperatorFields::Slice1(d) => vec![&d.input_tensor],
            OperatorFields::Gather(d) => vec![&d.input_tensor, &d.indices_tensor],
            OperatorFields::GatherNd1(d) => vec![&d.input_tensor, &d.indices_tensor],
            OperatorFields::GatherElements(d) => vec![&d.input_tensor, &d.indices_tensor],
            OperatorFields::Scatter(d) => vec![&d.input_tensor, &d.indices_tensor, &d.updates_tensor],
            OperatorFields::ScatterNd(d) => vec![&d.input_tensor, &d.indices_tensor, &d.updates_tensor],
        }
    }

    pub fn output(&self) -> &TensorDesc {
        match self {
            OperatorFields::Slice1(d) => &d.output_tensor,
            OperatorFields::Gather(d) => &d.output_tensor,
            OperatorFields::GatherNd1(d) => &d.output_tensor,
            OperatorFields::GatherElements(d) => &d.output_tensor,
            OperatorFields::Scatter(d) => &d.output_tensor,
            OperatorFields::ScatterNd(d) => &d.output_tensor,
        }
    }
}

/// `DML_OPERATOR_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct OperatorDesc {
    pub r#type: OperatorType,
    pub desc: OperatorFields,
}

impl OperatorDesc {
    pub fn new(desc: OperatorFields) -> OperatorDesc {
        OperatorDesc { r#type: desc.operator_type(), desc }
    }
}

/// `DML_OPERATOR_GRAPH_NODE_DESC`. `Operator` is an `IDMLOperator*` made at run time by
/// `IDMLDevice::CreateOperator` from this description, so the JSON holds the description.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct OperatorGraphNodeDesc {
    pub operator: OperatorDesc,
    pub name: String,
}

/// `DML_GRAPH_NODE_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct GraphNodeDesc {
    pub r#type: GraphNodeType,
    pub desc: OperatorGraphNodeDesc,
}

/// `DML_INPUT_GRAPH_EDGE_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct InputGraphEdgeDesc {
    pub graph_input_index: u32,
    pub to_node_index: u32,
    pub to_node_input_index: u32,
    pub name: String,
}

/// `DML_OUTPUT_GRAPH_EDGE_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct OutputGraphEdgeDesc {
    pub from_node_index: u32,
    pub from_node_output_index: u32,
    pub graph_output_index: u32,
    pub name: String,
}

/// `DML_INTERMEDIATE_GRAPH_EDGE_DESC`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct IntermediateGraphEdgeDesc {
    pub from_node_index: u32,
    pub from_node_output_index: u32,
    pub to_node_index: u32,
    pub to_node_input_index: u32,
    pub name: String,
}

/// `DML_GRAPH_EDGE_DESC` with its `Type` and the matching edge structure.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct GraphEdgeDesc<T> {
    pub r#type: GraphEdgeType,
    pub desc: T,
}

/// `DML_GRAPH_DESC`: the counts are stored as `directml.h` has them and checked against the
/// arrays by the emulator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "PascalCase", deny_unknown_fields)]
pub struct GraphDesc {
    pub input_count: u32,
    pub output_count: u32,
    pub node_count: u32,
    pub nodes: Vec<GraphNodeDesc>,
    pub input_edge_count: u32,
    pub input_edges: Vec<GraphEdgeDesc<InputGraphEdgeDesc>>,
    pub output_edge_count: u32,
    pub output_edges: Vec<GraphEdgeDesc<OutputGraphEdgeDesc>>,
    pub intermediate_edge_count: u32,
    pub intermediate_edges: Vec<GraphEdgeDesc<IntermediateGraphEdgeDesc>>,
}
