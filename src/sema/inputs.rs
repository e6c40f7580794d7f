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
/// A map of names to tensors (it derefs to one), and which of them stand for a Python `int`.
#[derive(Debug, Clone, Default)]
pub struct InputValues {
    tensors: BTreeMap<String, Tensor>,
    /// The names bound to a Python `int` (a 0-d int64 made of it), which NumPy converts by its
    /// value ("weak", NEP 50) where it casts a NumPy integer, array or scalar ("strong"): a
    /// store's value of another dtype (docs/semantics.md, Stores). Every other bound tensor is
    /// a NumPy value.
    python_ints: BTreeSet<String>,
}

impl InputValues {
    pub fn new() -> InputValues {
        InputValues::default()
    }

    /// Binds `name` to the Python `int` `value`: a 0-d int64 NumPy converts by its value.
    pub fn insert_python_int(&mut self, name: impl Into<String>, value: i64) {
        let name = name.into();
        self.tensors.insert(name.clone(), Tensor::scalar_i64(value));
        self.python_ints.insert(name);
    }

    /// Whether `name` stands for a Python `int`, its value bound here or given per call.
    pub fn is_python_int(&self, name: &str) -> bool {
        self.python_ints.contains(name)
    }

    /// The names that stand for Python `int`s.
    pub fn python_ints(&self) -> &BTreeSet<String> {
        &self.python_ints
    }

    /// Marks `names` as Python `int`s, whether their values are bound here or not (a
    /// generic program's, whose values come per call; a kernel's, carried into the values it
    /// reads again per call).
    pub fn mark_python_ints<'n>(&mut self, names: impl IntoIterator<Item = &'n String>) {
        self.python_ints.extend(names.into_iter().cloned());
    }

    /// No values, the same names marked as Python `int`s: what a generic check is given.
    pub fn python_ints_only(&self) -> InputValues {
        InputValues { tensors: BTreeMap::new(), python_ints: self.python_ints.clone() }
    }
}

impl std::ops::Deref for InputValues {
    type Target = BTreeMap<String, Tensor>;
    fn deref(&self) -> &BTreeMap<String, Tensor> {
        &self.tensors
    }
}

impl std::ops::DerefMut for InputValues {
    fn deref_mut(&mut self) -> &mut BTreeMap<String, Tensor> {
        &mut self.tensors
    }
}

impl FromIterator<(String, Tensor)> for InputValues {
    fn from_iter<I: IntoIterator<Item = (String, Tensor)>>(iter: I) -> InputValues {
        InputValues { tensors: iter.into_iter().collect(), python_ints: BTreeSet::new() }
    }
}

impl IntoIterator for InputValues {
    type Item = (String, Tensor);
    type IntoIter = std::collections::btree_map::IntoIter<String, Tensor>;
    fn into_iter(self) -> Self::IntoIter {
        self.tensors.into_iter()
    }
}

impl<'v> IntoIterator for &'v InputValues {
    type Item = (&'v String, &'v Tensor);
    type IntoIter = std::collections::btree_map::Iter<'v, String, Tensor>;
    fn into_iter(self) -> Self::IntoIter {
        self.tensors.iter()
    }
}

impl<const N: usize> From<[(String, Tensor); N]> for InputValues {
    fn from(pairs: [(String, Tensor); N]) -> InputValues {
        pairs.into_iter().collect()
    }
}

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
    /// Of `values`, those checked as Python `int`s ([`InputValues::is_python_int`]): checking
    /// again with the same values gives the same result where these are marked again.
    pub python_ints: BTreeSet<String>,
    /// The 0-d integer inputs a store assigns (`=`) through basic subscripts (integers,
    /// slices, `...`, `None`) into a signed integer target of another dtype, with that dtype.
    /// The plan casts them, as NumPy casts a 0-d array there; NumPy's setitem converts a NumPy
    /// integer *scalar* by its value instead, raising OverflowError where it does not fit
    /// (`i8[0] = np.int16(300)`), which the Python package checks per call.
    pub setitem_scalars: BTreeMap<String, DType>,
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
