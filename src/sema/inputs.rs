//! What checking is given and gives back about the bound inputs: their types and values, the
//! policy on masks, and which inputs a checked program read. Callers (sessions, kernels, the
//! REPL) use these without the checker itself.

use crate::types::{SymTensorType, TensorType};
use slc_runtime::{DType, Tensor};
use std::collections::{BTreeMap, BTreeSet};

/// The tensors a program may name, by type.
pub type InputTypes = BTreeMap<String, TensorType>;

/// The tensors a generic program may name, by type (dims may be symbols).
pub type SymInputTypes = BTreeMap<String, SymTensorType>;

/// The values of bound tensors, where known: operator parameters such as `strided_slice`'s
/// `begin` may come from a bound tensor, and must then be known when the program is checked.
pub type InputValues = BTreeMap<String, Tensor>;

/// Whether checking a program may read the value of an input of this dtype and size: a small
/// integer tensor may be an operator parameter (parameters are short lists), a bool tensor of
/// any size a boolean mask, whose value decides the result's shape, and a one-element float
/// (a Python `float` passed by name) the value of a store into another dtype, converted as
/// NumPy converts it. Callers that read inputs lazily read these with their headers.
pub fn value_may_be_read(dtype: DType, numel: usize) -> bool {
    dtype == DType::Bool || (dtype.is_integer() && numel <= 1 << 12) || (dtype.is_float() && numel == 1)
}

/// The most elements a mask may have for a fixed plan to hold its `nonzero()` positions as
/// constants. A larger mask's positions are derived per call instead, where the shape-generic
/// pipeline takes the program: folding costs the front end time per `True` (seconds for a
/// 4096² mask) and a compile for every new mask, where deriving costs one pass over the mask.
pub const MASK_FOLD_MAX: usize = 1 << 12;

/// Whether a tensor of this dtype and size is a mask too large to fold into a fixed plan
/// ([`MASK_FOLD_MAX`]).
pub fn is_large_mask(dtype: DType, numel: usize) -> bool {
    dtype == DType::Bool && numel > MASK_FOLD_MAX
}

/// Whether `values` hold a mask too large to fold into a fixed plan.
pub fn holds_large_mask(values: &InputValues) -> bool {
    values.values().any(|t| is_large_mask(t.dtype(), t.numel()))
}

/// The bound names a checked program depends on: the inputs whose types it read, and those
/// whose values it read (operator parameters). Checking again with these unchanged gives the
/// same result, whatever else is bound.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct InputsRead {
    pub types: BTreeSet<String>,
    pub values: BTreeSet<String>,
}

/// How checking treats masks whose value it has, where callers differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MaskPolicy {
    /// A large mask's positions stay out of the plan ([`is_large_mask`]): the plan declares
    /// them as an input its executors derive per run (`m_nonzero: i64[count, k] =
    /// nonzero(m)`), of the count the mask's value has now. For callers that run the plan at
    /// once on the same values and derive such inputs (the REPL): folding puts every `True`
    /// through the front end.
    pub derive_large_masks: bool,
    /// A store of one value through a mask reads the mask in place over its box (`when`), not
    /// through its positions (docs/semantics.md, Stores). Off for the DirectML target, whose
    /// scatters take positions.
    pub stores_read_masks: bool,
}

impl Default for MaskPolicy {
    fn default() -> MaskPolicy {
        MaskPolicy { derive_large_masks: false, stores_read_masks: true }
    }
}
