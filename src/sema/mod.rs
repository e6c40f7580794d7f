//! Semantic checking: the spanned AST becomes the checked program (dtypes and static shapes
//! known, surface forms resolved), or a [`SemaError`] pointing at the span at fault.

mod advanced;
mod check;
mod conditions;
pub mod consteval;
pub mod error;
mod index;
mod inputs;
mod literal;
mod ops;
pub mod shape;
mod store;
pub mod typed;

pub use check::{CheckedGeneric, SymInputTypes, check_program_generic};
pub use check::{
    InputTypes, InputValues, InputsRead, MASK_FOLD_MAX, MaskPolicy, check_program, check_program_with,
    holds_large_mask, is_large_mask, value_may_be_read,
};
pub use error::{SemaError, SemaErrorKind};
/// The operator forms a call may name (`gather`, ...), for completion and suggestions.
pub use ops::{FUNCTIONS as OPERATOR_FUNCTIONS, OPERATORS, Operator, bind_args, operator};
pub use typed::{IndexArray, ShapeCondition, TExpr, TExprKind, ViewDim};
pub use typed::{broadcast_is_empty, nonzero_input, trues_symbol};
