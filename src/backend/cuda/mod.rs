//! The CUDA target: CUDA C generated from a verified plan's loop nests ([`codegen`]), the host
//! side of a launch — binding a call's shapes into the kernel's argument block and decoding its
//! error words into the interpreter's [`RuntimeError`](crate::backend::RuntimeError) ([`launch`]) — and two ways to run the
//! source: on the host, compiled by the system C compiler under `host_emulation.h`, which runs
//! the grid as loops ([`emulate`], the tests' CPU run of the very source a GPU compiles), and on
//! an NVIDIA GPU through the driver and NVRTC, loaded at run time ([`device`]; slc needs no CUDA
//! to build or run), on slc's own copies of host arrays or on the caller's device memory and stream
//! ([`buffers`]). docs/cuda.md says what is supported.

pub mod aot;
pub mod aot_shape;
pub mod buffers;
pub mod codegen;
pub mod device;

pub mod emulate;
pub mod launch;
pub mod nvrtc;

pub use codegen::{ArgLayout, CudaSource, generate};
pub use launch::{Bound, bind, decode_errors};

/// The header that makes generated CUDA C a host C program: the grid runs as loops.
pub const HOST_EMULATION_H: &str = include_str!("host_emulation.h");

/// Failures of the CUDA target other than a plan's run-time errors.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CudaError {
    /// The plan has something the code generator does not handle.
    #[error("CUDA code generation failed: {0}")]
    Codegen(String),
    /// No usable CUDA driver (or NVRTC) on this machine.
    #[error("{0}")]
    NoDriver(String),
    /// The source did not compile (NVRTC's or the host compiler's log).
    #[error("compiling the CUDA source failed: {0}")]
    Compile(String),
    /// A driver call failed.
    #[error("CUDA driver: {0}")]
    Driver(String),
}
