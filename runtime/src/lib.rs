//! slc-runtime: what compiled kernels and embedders need at run time — dtypes, dense tensors
//! over aligned buffers, `.npy` reading and writing, and NumPy-style printing.

mod atomic;
mod buffer;
pub mod cast;
pub mod dtype;
pub mod format;
mod memory;
pub mod npy;
mod npz;
pub mod output;
mod sigbus;
pub mod tensor;

pub use atomic::write_atomically;
pub use cast::{CastError, cast, cast_bytes, casts_safely, combines_as_cast};
pub use dtype::{DType, bf16_of_f64, f16_of_f64};

/// The most dimensions a tensor may have, as in NumPy (`NPY_MAXDIMS`).
pub const MAX_RANK: usize = 64;
pub use format::{PrintOptions, format_tensor};
pub use memory::available_memory;
pub use npy::{
    NpyError, PendingNpy, encode_npy, open_npy, open_npy_stream, open_npz, parse_npy, read_npy, write_npy,
    write_npy_to,
};
pub use output::{Destination, destination, write_output};
pub use sigbus::report_truncated_inputs;
pub use tensor::{Access, Tensor, TensorError, count_nonzero};
