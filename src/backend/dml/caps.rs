//! What DirectML offers at each feature level: the operators slc emits, when each was
//! introduced, and the data types and dimension counts their descriptors accept (the
//! "Availability" and "Tensor support" sections of each operator's documentation).

use super::desc::{DataType, FeatureLevel, OperatorType};
use super::error::DmlError;
use slc_runtime::DType;

/// The operators slc emits, with their `directml.h` availability and tensor support tables.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Slice1,
    Gather,
    GatherNd1,
    GatherElements,
    Scatter,
    ScatterNd,
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
            OperatorType::GatherElements => Op::GatherElements,
            OperatorType::Scatter => Op::Scatter,
            OperatorType::ScatterNd => Op::ScatterNd,
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Op::Slice1 => "DML_OPERATOR_SLICE1",
            Op::Gather => "DML_OPERATOR_GATHER",
            Op::GatherNd1 => "DML_OPERATOR_GATHER_ND1",
            Op::GatherElements => "DML_OPERATOR_GATHER_ELEMENTS",
            Op::Scatter => "DML_OPERATOR_SCATTER",
            Op::ScatterNd => "DML_OPERATOR_SCATTER_ND",
        }
    }

    pub(crate) fn introduced(self) -> FeatureLevel {
        match self {
            Op::Slice1 => FeatureLevel::L2_1,
            Op::Gather => FeatureLevel::L1_0,
            Op::GatherNd1 => FeatureLevel::L3_0,
            Op::GatherElements => FeatureLevel::L2_1,
            // DirectML's feature level history: SCATTER (= SCATTER_ELEMENTS) arrives at 2.0,
            // SCATTER_ND at 2.1.
            Op::Scatter => FeatureLevel::L2_0,
            Op::ScatterNd => FeatureLevel::L2_1,
        }
    }

    /// Data types of the input/output tensors at `level` (the docs' "Tensor support" tables).
    pub(crate) fn supports(self, level: FeatureLevel, t: DataType) -> bool {
        let small = SMALL_TYPES.contains(&t);
        let wide = WIDE_TYPES.contains(&t);
        match self {
            Op::Slice1 | Op::GatherElements => {
                (level >= FeatureLevel::L2_1 && small) || (level >= FeatureLevel::L4_1 && wide)
            }
            Op::Gather => {
                (matches!(t, DataType::Float32 | DataType::Float16))
                    || (level >= FeatureLevel::L2_1 && small)
                    || (level >= FeatureLevel::L4_1 && wide)
            }
            Op::GatherNd1 => level >= FeatureLevel::L3_0 && small,
            // SCATTER_ND's page lists the 8 small types from 2.1 (4 dimensions) and 3.0 (1 to 8);
            // SCATTER moves floats from 2.0 and gains the integer types at 2.1 (the feature level
            // history), as GATHER does. 64-bit data moves as UINT32 pairs, which copying bits
            // allows.
            Op::Scatter => {
                (level >= FeatureLevel::L2_0 && matches!(t, DataType::Float32 | DataType::Float16))
                    || (level >= FeatureLevel::L2_1 && small)
            }
            Op::ScatterNd => level >= FeatureLevel::L2_1 && small,
        }
    }

    /// Index types (gathers and scatters: the same table, UINT32 only below 3.0).
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
            (Op::Gather | Op::GatherElements | Op::Scatter | Op::ScatterNd, false) => (4, 4),
        }
    }
}

/// The first level with DirectML's graph API: `directml.h` declares `DML_GRAPH_DESC` and
/// `IDMLDevice1::CompileGraph` only for `DML_TARGET_VERSION >= 0x2100`. Below it, a program must
/// be one operator, which the host compiles with `IDMLDevice::CompileOperator`.
pub(crate) const GRAPHS: FeatureLevel = FeatureLevel::L2_1;

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

/// The DirectML type that holds `dtype`'s bytes: bool is UINT8, bf16 UINT16 and complex64
/// UINT64 (slicing only moves bits, so the bit pattern is all that matters). complex128 has no
/// 16-byte type: `lower` refuses it before asking.
pub fn natural_type(dtype: DType) -> DataType {
    match dtype {
        DType::Bool | DType::U8 => DataType::Uint8,
        DType::I8 => DataType::Int8,
        DType::I16 => DataType::Int16,
        DType::I32 => DataType::Int32,
        DType::I64 => DataType::Int64,
        DType::U16 | DType::BF16 => DataType::Uint16,
        DType::U32 => DataType::Uint32,
        DType::U64 | DType::C64 | DType::C128 => DataType::Uint64,
        DType::F16 => DataType::Float16,
        DType::F32 => DataType::Float32,
        DType::F64 => DataType::Float64,
    }
}

/// The element type of a tensor an operator moves: `(type, pairs)`, where `pairs` means a
/// 64-bit type moved as two UINT32 (an extra trailing dimension of 2, strides doubled).
pub(crate) fn storage(op: Op, level: FeatureLevel, dtype: DType) -> Result<(DataType, bool), DmlError> {
    let t = natural_type(dtype);
    if op.supports(level, t) {
        Ok((t, false))
    } else if t.size() == 8 && op.supports(level, DataType::Uint32) {
        Ok((DataType::Uint32, true))
    } else {
        Err(DmlError::DataType { op: op.name(), dtype, level })
    }
}
