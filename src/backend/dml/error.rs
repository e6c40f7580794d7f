//! [`DmlError`]: why a plan has no DirectML form, and its diagnostic. A refused gather points at
//! its place in the text: the origin its plan term carries.

use super::desc::FeatureLevel;
use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::source::Span;
use crate::types::OobMode;
use slc_runtime::DType;

/// Why a plan cannot be expressed in DirectML at the requested feature level.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DmlError {
    /// The operator does not exist at this feature level.
    #[error("{op} needs DirectML feature level {needs}; the target is {level}")]
    FeatureLevel { op: &'static str, needs: FeatureLevel, level: FeatureLevel },
    /// Several operators joined by intermediate tensors need DirectML's graph API
    /// (`DML_GRAPH_DESC`, `IDMLDevice1::CompileGraph`), which levels below `needs` lack; `why`
    /// says what made one operator not enough.
    #[error(
        "this program needs a graph of {nodes} DirectML operators (DML_GRAPH_DESC), which DirectML has from feature level {needs}; the target is {level}"
    )]
    Graph { nodes: usize, why: String, needs: FeatureLevel, level: FeatureLevel },
    /// Too many dimensions after merging all that can be merged.
    #[error("{op} needs {dims} dimensions after merging; DirectML allows {allowed} at feature level {level}")]
    Rank { op: &'static str, dims: usize, allowed: String, level: FeatureLevel, detail: String },
    /// The element type has no DirectML form for this operator at this level.
    #[error("{op} does not support {dtype} data at DirectML feature level {level}")]
    DataType { op: &'static str, dtype: DType, level: FeatureLevel },
    /// Elements wider than any DirectML type (complex128's 16 bytes): no operator moves them.
    #[error("DirectML has no element type of {} bytes for {dtype} data ({name})", dtype.width())]
    ElementSize { dtype: DType, name: String },
    /// The index tensor's type is not one DirectML gathers accept.
    #[error("DirectML gathers cannot read {dtype} indices at feature level {level}")]
    IndexType { dtype: DType, level: FeatureLevel },
    /// The out-of-range policy of a gather cannot be honoured: DirectML leaves out-of-range
    /// indices undefined. `at` is the gather's span in the program (the plan term's origin;
    /// none for a plan parsed from text).
    #[error("mode={} cannot be honoured by DirectML for {refusal}", mode.name())]
    OobPolicy { mode: OobMode, refusal: OobRefusal, at: Option<Span> },
    /// A size, stride or offset does not fit the 32-bit fields of `directml.h`.
    #[error("{0} does not fit DirectML's 32-bit tensor fields")]
    TooLarge(String),
    /// A plan shape slc's DirectML lowering does not handle.
    #[error("unsupported by the DirectML target: {0}")]
    Unsupported(String),
}

/// What about a gather's indices keeps its mode from lowering.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OobRefusal {
    /// The values are known only at run time: read from the named tensor, or (`None`) computed
    /// by another gather.
    #[error("{}", match tensor {
        Some(name) => format!("the index tensor `{name}`, whose values are known only at run time"),
        None => "a computed index".to_string(),
    })]
    RuntimeIndex { tensor: Option<String> },
    /// A constant index out of range under `mode=zero`: DirectML gathers have no zero fill.
    #[error("the constant index {index} on an axis of {len}: DirectML gathers have no zero fill")]
    ZeroFill { index: i128, len: i64 },
    /// A gather from an axis of size 0 into a non-empty result: no index is valid, and
    /// DirectML tensors cannot describe the axis at all.
    #[error("an axis of size 0, where every index is out of range")]
    EmptyAxis,
}

impl IntoDiagnostic for DmlError {
    fn into_diagnostic(self) -> Diagnostic {
        let message = self.to_string();
        match self {
            DmlError::FeatureLevel { needs, .. } => Diagnostic::error("E0401", message)
                .help(format!("choose --feature-level {needs} or higher")),
            DmlError::Graph { why, needs, .. } => Diagnostic::error("E0401", message)
                .note(format!("one operator is not enough: {why}"))
                .help(format!("choose --feature-level {needs} or higher")),
            DmlError::Rank { detail, .. } => Diagnostic::error("E0402", message)
                .note(detail)
                .help("dimensions merge only where the window leaves them whole or they coalesce"),
            DmlError::DataType { .. } => Diagnostic::error("E0403", message)
                .help("64-bit types are native from feature level 4.1 (below, they move as pairs of UINT32)"),
            DmlError::ElementSize { .. } => Diagnostic::error("E0403", message)
                .help("DirectML's widest elements are 8 bytes (complex64 moves as UINT64)"),
            DmlError::IndexType { .. } => Diagnostic::error("E0404", message)
                .help("DirectML gathers take INT32/INT64/UINT32/UINT64 indices (UINT32 only below 3.0); cast the index tensor"),
            DmlError::OobPolicy { mode, refusal, at } => oob_policy(message, mode, &refusal, at),
            DmlError::TooLarge(_) => Diagnostic::error("E0406", message),
            DmlError::Unsupported(_) => Diagnostic::error("E0407", message),
        }
    }
}

/// E0405: the refused gather underlined, and the modes that do lower for its indices.
fn oob_policy(message: String, mode: OobMode, refusal: &OobRefusal, at: Option<Span>) -> Diagnostic {
    let mode = mode.name();
    let (label, help) = match refusal {
        OobRefusal::RuntimeIndex { .. } => (
            format!("mode={mode} on indices known only at run time"),
            "write mode=error: DirectML leaves out-of-range indices undefined, so run-time indices \
             lower only in mode=error, which the host checks before dispatch; mode=zero, clamp and \
             wrap lower only with constant indices, which slc normalizes when it compiles",
        ),
        OobRefusal::ZeroFill { index, .. } => (
            format!("mode=zero with the out-of-range constant index {index}"),
            "write mode=clamp or mode=wrap (slc normalizes constant indices when it compiles), or keep \
             the constant indices in range",
        ),
        OobRefusal::EmptyAxis => (
            "a gather from an axis of size 0".to_string(),
            "no mode lowers a gather from an empty axis into a non-empty result: DirectML tensors \
             have no size-0 dimensions",
        ),
    };
    let d = Diagnostic::error("E0405", message);
    let d = match at {
        Some(span) => d.label(span, label),
        None => d,
    };
    d.help(help)
}
