//! The DirectML target: a verified [`Plan`](crate::plan::Plan) becomes a `DML_GRAPH_DESC` of DirectML operators
//! ([`lower`]), written as JSON mirroring `directml.h` ([`DmlGraph::to_json`]) or as C source
//! ([`DmlGraph::to_c`]), and executed on the CPU by an emulator of DirectML's documented
//! semantics ([`emulate`]), which is how it is tested: DirectML itself runs only on Windows.
//!
//! Lowering (README.md, "DirectML target"; the plan IR is plan/ir.rs):
//! * an access without gathered terms (a view) is one `DML_OPERATOR_SLICE1`: each output
//!   dimension is matched to the input dimension it walks, giving per input dimension a window
//!   offset, size and signed stride; shrunk dimensions get a size-1 window and newaxis costs
//!   nothing (the output buffer is packed either way);
//! * one gathered term is a `DML_OPERATOR_GATHER` (no batch dimensions) or a
//!   `DML_OPERATOR_GATHER_ND1` whose index tensor is broadcast by stride 0 over the data-only
//!   leading dimensions (batch dimensions); the data view is folded into the input tensor
//!   description (strides, binding offset) when it can be, else materialized by a SLICE1 into an
//!   intermediate;
//! * one gathered term whose index walks every output dimension (ONNX GatherElements' shape)
//!   is a `DML_OPERATOR_GATHER_ELEMENTS`;
//! * terms that read consecutive entries of one index dimension (ONNX GatherND's tuples) are one
//!   `DML_OPERATOR_GATHER_ND1` whose indices have that dimension last (constant ones too, where
//!   the feature level has GATHER_ND1 and a tensor description can express the data view);
//! * with constant indices, other sets of terms, a gather of a gather, or a data view no tensor
//!   description can express become one `DML_OPERATOR_GATHER` of element offsets computed on the
//!   host (`lower/fold.rs`), and a term of stride 0 is only validated;
//! * otherwise several terms, or a gather of a gather, become a graph of such operators joined
//!   by intermediate edges (a leading index tuple peeled as one GATHER_ND1), each holding only
//!   the dimensions it varies along; the graph's note says why. Below feature level 2.1, which
//!   has no graph API, such a program is refused; a single GATHER_ELEMENTS or GATHER_ND1 needs
//!   no graph and only its own feature level.
//!
//! * a store plan (`a[i] = v`, the scatters) is one `DML_OPERATOR_SCATTER_ND` or
//!   `DML_OPERATOR_SCATTER` when one expresses its destination exactly and no two updates can
//!   write different values to one element (DirectML's order for those is undefined); anything
//!   else is refused (`lower/scatter.rs`).
//!
//! Out-of-range indices are undefined in DirectML, so the lowering never relies on them:
//! constant indices are normalized on the host (per mode), `error`-mode dynamic indices are
//! validated by the host before dispatch ([`DmlGraph::host_checks`]; in the C form,
//! `<prefix>_check_indices`), and the other modes on dynamic indices are refused with a
//! diagnostic that points at the gather (the origin its plan term carries).
//!
//! Files: `caps` (what each feature level offers), `window` (views as SLICE1 windows), `lower`
//! (the rules above), `graph` and [`desc`] (the output model), [`c`] (its C form), `emulate`
//! (the CPU emulator) and `error` (refusals).

pub mod c;
mod caps;
pub mod desc;
mod emulate;
mod error;
mod graph;
mod lower;
mod window;

pub use caps::natural_type;
pub use desc::{DataType, FeatureLevel, OperatorType};
pub use emulate::{EmulateError, emulate};
pub use error::{DmlError, OobRefusal};
pub use graph::*;
pub use lower::lower;

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
