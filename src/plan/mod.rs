//! The plan IR and everything that works on it: lowering from the checked program, the text
//! form, and the verifier that back ends require.

pub mod buffered;
pub mod derive;
pub mod ir;
pub mod lower;
pub mod parse;
pub mod print;
mod store;
mod token;
pub mod verify;
pub mod verify_generic;

pub use derive::{DeriveError, derive, input_tensors, nonzero, nonzero_of_bytes};
pub use ir::*;
pub use lower::{InputStrides, lower, lower_generic, lower_through_view, lower_with_strides};
pub use verify::{PlanError, VerifiedPlan, verify};
pub use verify_generic::{VerifiedGenericPlan, verify_generic};
