//! slc-runtime: what compiled kernels and embedders need at run time — dtypes, dense tensors
//! over aligned buffers, `.npy` reading and writing, and NumPy-style printing.

mod atomic;
mod buffer;
pub mod dtype;
pub mod format;
mod memory;
pub mod npy;
pub mod tensor;

pub use atomic::write_atomically;
pub use dtype::DType;

/// The most dimensions a tensor may have, as in NumPy (`NPY_MAXDIMS`).
pub const MAX_RANK: usize = 64;
pub use format::{PrintOptions, format_tensor};
pub use memory::available_memory;
pub use npy::{NpyError, encode_npy, parse_npy, read_npy, write_npy};
pub use tensor::{Tensor, TensorError};
