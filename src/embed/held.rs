//! Inputs as the shape-generic kernel reads them: dense views of the caller's memory in place,
//! dense copies of strided views past the layouts a kernel keeps, or a mask's positions the
//! kernel keeps between calls.

use super::view::TensorView;
use crate::backend::{DenseInput, RuntimeError};
use crate::error::Error;
use slc_runtime::{DType, Tensor};

/// Inputs up to this many are gathered on the stack for a call.
pub(crate) const FEW_INPUTS: usize = 8;

/// An input as a generic kernel reads it.
pub(crate) enum Held<'v> {
    InPlace(TensorView<'v>),
    Packed(Tensor),
    Kept(std::sync::Arc<Tensor>),
}

impl<'v> Held<'v> {
    /// `view` in place when it is dense, else packed.
    pub(crate) fn of(view: TensorView<'v>) -> Result<Held<'v>, Error> {
        match view.is_contiguous() {
            true => Ok(Held::InPlace(view)),
            false => view.to_tensor().map(Held::Packed).map_err(|e| RuntimeError::from(e).into()),
        }
    }
}

// SAFETY: a contiguous view's `nbytes` bytes from `as_ptr` are readable for its lifetime (the
// view's own invariant), in C order; a tensor owns its dense bytes. Only dense views are handed
// to kernels as `DenseInput`s (`Held::of`, and the callers' contiguity checks).
unsafe impl DenseInput for Held<'_> {
    fn dtype(&self) -> DType {
        match self {
            Held::InPlace(v) => v.dtype(),
            Held::Packed(t) => t.dtype(),
            Held::Kept(t) => t.dtype(),
        }
    }

    fn shape(&self) -> &[usize] {
        match self {
            Held::InPlace(v) => v.shape(),
            Held::Packed(t) => t.shape(),
            Held::Kept(t) => t.shape(),
        }
    }

    fn as_ptr(&self) -> *const u8 {
        match self {
            Held::InPlace(v) => v.as_ptr(),
            Held::Packed(t) => t.as_ptr(),
            Held::Kept(t) => t.as_ptr(),
        }
    }
}
