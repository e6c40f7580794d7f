//! Errors found while checking a program: each points at the span at fault.

use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::limits::{MAX_NESTING, MAX_PROGRAM_NODES, MAX_RANK};
use crate::source::Span;
use crate::types::sym::SymExpr;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{kind}")]
pub struct SemaError {
    pub kind: SemaErrorKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SemaErrorKind {
    #[error("unknown name `{name}`")]
    UnknownName { name: String, suggestion: Option<String>, known: Vec<String> },
    #[error("index {index} is out of bounds for axis {axis} with size {size}")]
    IndexOutOfRange { index: SymExpr, axis: usize, size: SymExpr },
    #[error("too many indices: the tensor is {rank}-dimensional, but {count} were indexed")]
    TooManyIndices { rank: usize, count: usize },
    #[error("an index can only have a single ellipsis (`...`)")]
    TwoEllipses { first: Span },
    #[error("slice step cannot be zero")]
    ZeroStep,
    #[error("{what} must be an integer, found {found}")]
    NotAnInteger { what: &'static str, found: String },
    #[error("index tensors must have an integer dtype, found {dtype}")]
    NonIntegerIndexTensor { dtype: String },
    #[error(
        "boolean index did not match indexed array along axis {axis}; size of axis is {size} but size of corresponding boolean axis is {mask_size}"
    )]
    MaskMismatch { axis: usize, size: SymExpr, mask_size: SymExpr },
    #[error("shape mismatch: indexing arrays could not be broadcast together with shapes {shapes}")]
    BroadcastMismatch { shapes: String, first: Span },
    #[error("a boolean mask needs the value of `{name}` when the program is checked")]
    MaskValueUnknown { name: String },
    #[error("integer overflow in `{expr}`")]
    Overflow { expr: String },
    #[error("floating-point numbers are not supported: `{text}`")]
    Float { text: String },
    #[error("division by zero")]
    DivisionByZero,
    #[error("integer literal {value} is out of the i64 range")]
    LiteralOutOfRange { value: u64 },
    #[error("a list literal must be rectangular: expected {expected}, found {found}")]
    RaggedList { expected: String, found: String },
    #[error("`{name}` is not an attribute of a tensor")]
    UnknownAttribute { name: String },
    #[error("unknown function `{name}`")]
    UnknownFunction { name: String, suggestion: Option<String>, known: Vec<String> },
    #[error("a positional argument cannot follow a keyword argument")]
    PositionalAfterKeyword,
    #[error("`{function}` takes at most {max} arguments")]
    TooManyArguments { function: String, max: usize },
    #[error("`{function}` has no parameter `{name}`")]
    UnknownKeyword { function: String, name: String, suggestion: Option<String>, known: Vec<String> },
    #[error("argument `{name}` is given twice")]
    DuplicateArgument { name: String },
    #[error("`{function}` needs the argument `{name}`")]
    MissingArgument { function: String, name: String },
    #[error("{message}")]
    InvalidArgument { message: String, label: String },
    #[error("the value of `{name}` must be known when the program is checked")]
    ValueUnknown { name: String },
    #[error("cannot index {what}")]
    NotIndexable { what: String },
    #[error("the program has no result")]
    NoResult,
    #[error("the result has too many elements ({shape})")]
    TooLarge { shape: String },
    #[error("{what} cannot be a result")]
    NotATensor { what: String },
    #[error("the program nests more than {MAX_NESTING} levels deep once its `let`s are substituted")]
    NestingTooDeep,
    #[error("a tensor of {rank} dimensions; at most {MAX_RANK} are supported")]
    TooManyDims { rank: usize },
    #[error("the program grows beyond {MAX_PROGRAM_NODES} nodes once its `let`s are substituted")]
    ProgramTooLarge,
    #[error("input `{name}` cannot be used: {reason}")]
    BadInput { name: String, reason: String },
    /// A value the program needs when it is checked (a rank, an operator parameter) depends on
    /// a symbolic dim; `what` names what to make concrete.
    #[error(
        "{form} must be known when the program is checked, but depends on symbolic dims: give {what} a constant size"
    )]
    SymbolicUnsupported { form: &'static str, what: String },
    #[error("{what} must be known when the program is checked, but `{name}` is a run-time scalar")]
    NotCompileTime { what: &'static str, name: String },
    #[error("cannot assign here: {reason}")]
    StoreTarget { reason: String },
    #[error("an assignment must be the program's last statement")]
    StoreNotLast,
    #[error("could not broadcast the value from shape {value} into the selection's shape {selection}")]
    StoreBroadcast { value: String, selection: String },
    #[error(
        "cannot set one element of {target} from a value of shape {value}: every axis is given an integer, so NumPy sets the element from a scalar and refuses a sequence"
    )]
    StoreSequence { value: String, target: String },
    #[error(
        "cannot store a list nested {depth} deep into a selection of rank {rank}: NumPy makes the list an array of at most the selection's rank"
    )]
    StoreListDepth { depth: usize, rank: usize },
    #[error(
        "cannot store a value of rank {rank} through one mask over every axis: NumPy's boolean assignment takes a value of at most one dimension (a TypeError)"
    )]
    StoreMaskValueRank { rank: usize },
    #[error("cannot {op} a tensor of {value} into a tensor of {target}: {why}")]
    StoreDtype { op: &'static str, value: String, target: String, why: &'static str },
    #[error("the integer {value} is out of bounds for {target}")]
    StoreLiteralRange { value: String, target: String },
    #[error(
        "cannot combine a list into {target}: NumPy computes it in int64, which it does not cast back to {target}"
    )]
    StoreListArithmetic { target: String },
    #[error("{reason}")]
    StoreLiteral { reason: String },
    /// A float literal (or a float bound by name) whose integer part the target does not hold,
    /// or an infinity: NumPy's OverflowError, as [`SemaErrorKind::StoreLiteralRange`].
    #[error("{reason}")]
    StoreFloatRange { reason: String },
}

impl SemaError {
    pub fn new(kind: SemaErrorKind, span: Span) -> SemaError {
        SemaError { kind, span }
    }
}

impl IntoDiagnostic for SemaError {
    fn into_diagnostic(self) -> Diagnostic {
        use SemaErrorKind as K;
        let message = self.kind.to_string();
        let span = self.span;
        let (code, label, help): (&str, String, Option<String>) = match self.kind {
            K::UnknownName { suggestion, known, .. } => (
                "E0101",
                "not bound".into(),
                match (suggestion, known.is_empty()) {
                    (Some(s), _) => Some(format!("did you mean `{s}`?")),
                    (None, true) => Some("bind inputs with `-i NAME=FILE.npy` or `let NAME = ...`".into()),
                    (None, false) => Some(format!("bound names: {}", known.join(", "))),
                },
            ),
            K::IndexOutOfRange { axis, size, .. } => (
                "E0102",
                format!("out of range for axis {axis}"),
                Some(if size.as_const() == Some(0) {
                    format!("axis {axis} is empty: no integer index is valid")
                } else {
                    format!("valid indices for axis {axis} are {}..={}", -&size, size.add_const(-1))
                }),
            ),
            K::TooManyIndices { rank, .. } => (
                "E0103",
                "this index has no axis left to consume".into(),
                Some(format!(
                    "the tensor has {rank} ax{}; `newaxis` and `...` consume none",
                    if rank == 1 { "is" } else { "es" }
                )),
            ),
            K::TwoEllipses { first } => {
                let d = Diagnostic::error("E0104", message)
                    .label(span, "second ellipsis")
                    .label(first, "first ellipsis");
                return d;
            }
            K::ZeroStep => ("E0105", "step is 0".into(), Some("use a positive or negative step".into())),
            K::NotAnInteger { .. } => ("E0106", "not an integer".into(), None),
            K::NonIntegerIndexTensor { .. } => (
                "E0106",
                "not an integer tensor".into(),
                Some("index tensors may be i8, i16, i32, i64, u8, u16, u32 or u64".into()),
            ),
            K::MaskMismatch { axis, .. } => (
                "E0107",
                format!("does not match axis {axis}"),
                Some("a mask of k dimensions covers the next k axes and must have their shape".into()),
            ),
            K::BroadcastMismatch { first, .. } => {
                return Diagnostic::error("E0108", message)
                    .label(span, "does not broadcast with the arrays before it")
                    .label(first, "the first index array")
                    .help("index arrays broadcast together as in NumPy: aligned at their last dimension, each pair of sizes equal or one of them 1");
            }
            K::MaskValueUnknown { .. } => (
                "E0126",
                "value not known".into(),
                Some("the mask's `nonzero()` positions decide the result's shape, so slc reads its value when it checks the program: bind it with its data (`-i NAME=FILE.npy`), not only its type (`--shape`)".into()),
            ),
            K::Overflow { .. } => ("E0109", "overflows i64".into(), None),
            K::Float { .. } => {
                ("E0106", "not an integer".into(), Some("indices, bounds and steps are integers".into()))
            }
            K::DivisionByZero => ("E0110", "divisor is 0".into(), None),
            K::LiteralOutOfRange { .. } => (
                "E0109",
                "too large".into(),
                Some("integers lie in -9223372036854775808..=9223372036854775807".into()),
            ),
            K::RaggedList { .. } => ("E0111", "this element has a different shape".into(), None),
            K::UnknownAttribute { .. } => {
                ("E0112", "unknown attribute".into(), Some("tensors have `shape`, `ndim` and `size`".into()))
            }
            K::UnknownFunction { suggestion, known, .. } => (
                "E0113",
                "unknown function".into(),
                Some(match suggestion {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("functions: {}", known.join(", ")),
                }),
            ),
            K::PositionalAfterKeyword => ("E0120", "positional argument".into(), None),
            K::TooManyArguments { .. } => ("E0121", "one argument too many".into(), None),
            K::UnknownKeyword { suggestion, known, .. } => (
                "E0122",
                "unknown parameter".into(),
                Some(match suggestion {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("parameters: {}", known.join(", ")),
                }),
            ),
            K::DuplicateArgument { .. } => ("E0123", "given again here".into(), None),
            K::MissingArgument { .. } => ("E0124", "in this call".into(), None),
            K::InvalidArgument { label, .. } => ("E0125", label, None),
            K::ValueUnknown { .. } => (
                "E0126",
                "value not known".into(),
                Some(
                    "bind the tensor with its data (`-i NAME=FILE.npy`), not only its type (`--shape`)"
                        .into(),
                ),
            ),
            K::NotIndexable { .. } => ("E0114", "cannot be indexed".into(), None),
            K::NoResult => (
                "E0115",
                "the last statement binds a name".into(),
                Some("end the program with an expression, e.g. the name you bound".into()),
            ),
            K::TooLarge { .. } => ("E0116", "too large".into(), None),
            K::NotATensor { .. } => ("E0117", "not a tensor".into(), None),
            K::NestingTooDeep => (
                "E0118",
                format!("level {} starts here", MAX_NESTING + 1),
                Some("a name bound with `let` stands for its whole expression, so depths add up".into()),
            ),
            K::TooManyDims { .. } => ("E0119", "too many dimensions".into(), None),
            K::ProgramTooLarge => (
                "E0127",
                "the limit is reached here".into(),
                Some("every use of a name bound with `let` copies its expression".into()),
            ),
            K::BadInput { .. } => ("E0128", "this input".into(), None),
            K::SymbolicUnsupported { .. } => ("E0129", "depends on a symbolic dim".into(), None),
            K::StoreTarget { .. } => (
                "E0131",
                "not a store target".into(),
                Some("a store writes through subscripts of a bound input: `a[1:, idx] = v`".into()),
            ),
            K::StoreNotLast => (
                "E0132",
                "a statement after the assignment".into(),
                Some("the program's value is the stored array; end the program with the assignment".into()),
            ),
            K::StoreBroadcast { .. } => (
                "E0133",
                "this value".into(),
                Some("the value broadcasts to the selection as in NumPy: aligned at the last dimension, each size equal or 1".into()),
            ),
            K::StoreListDepth { .. } => (
                "E0133",
                "nested too deep".into(),
                Some("a list broadcasts as NumPy broadcasts it, but is never deeper than the selection (a bound tensor may be, by dims of 1)".into()),
            ),
            K::StoreMaskValueRank { .. } => (
                "E0133",
                "more than one dimension".into(),
                Some("give a value of one dimension, or 0-d".into()),
            ),
            K::StoreSequence { .. } => (
                "E0133",
                "not a scalar".into(),
                Some("give a 0-d value, or select with a slice or `...` (`a[1, 2:3]`, `a[1, 2, ...]`), where NumPy broadcasts".into()),
            ),
            K::StoreDtype { .. } => (
                "E0134",
                "of another dtype".into(),
                Some("give the value in the target's dtype (`astype` in NumPy)".into()),
            ),
            K::StoreLiteralRange { .. } | K::StoreFloatRange { .. } => (
                "E0135",
                "out of bounds".into(),
                Some("NumPy converts a Python `int` or `float` by its value and raises OverflowError where the target's dtype does not hold it (a NumPy float it casts there with no defined result, which slc refuses too); bind a NumPy integer or integer array to cast it".into()),
            ),
            K::StoreLiteral { .. } => (
                "E0134",
                "a float".into(),
                Some("a float (a literal, or a 0-d float bound by name) converts as NumPy converts it; bind a tensor of the target's dtype otherwise".into()),
            ),
            K::StoreListArithmetic { .. } => (
                "E0134",
                "an int64 list".into(),
                Some("bind the value as a tensor of the target's dtype, or use a scalar literal".into()),
            ),
            K::NotCompileTime { .. } => (
                "E0130",
                "known only at run time".into(),
                Some("run-time scalars may be slice bounds (`start`, `stop`, `begin`, `end`, `starts`, `ends`); steps, axes, masks and indices of operator forms are compile-time".into()),
            ),
        };
        let d = Diagnostic::error(code, message).label(span, label);
        match help {
            Some(h) => d.help(h),
            None => d,
        }
    }
}
