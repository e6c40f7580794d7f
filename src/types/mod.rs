//! The vocabulary every stage shares: tensor types and how shapes print, the out-of-range
//! policies of gathers, and C-order layout arithmetic. This module imports no other part of
//! slc, so that the front end, the plan and every back end can use it without depending on
//! each other (docs/architecture.md).

mod layout;
mod oob;
mod store;
pub mod sym;
mod tensor_type;

pub use layout::{Coords, checked_numel, row_major_strides};
pub use oob::{IndexOutOfRange, OobMode};
pub use store::{Accumulator, Combine, Reduction, literal_element};
pub use tensor_type::{ShapeDisplay, SymTensorType, TensorType};
