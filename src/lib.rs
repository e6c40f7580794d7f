//! slc: a slicing language and compiler.
//!
//! The pipeline, one module per stage (docs/architecture.md):
//! source text → [`syntax`] (tokens, spanned AST) → [`sema`] (checked program: dtypes and
//! shapes) → [`plan`] (the normalized plan IR, verified) → [`backend`] (the reference
//! interpreter, loop nests and Cranelift code for the JIT and AOT objects, DirectML). [`pipeline`]
//! runs the front half in one call, [`exec`] runs verified plans, [`embed`] and [`Session`] are
//! the embedding API, [`target`] is what `slc compile` emits; [`types`] is the vocabulary all
//! stages share. Errors from every stage become [`diag::Diagnostic`]s, rendered only at the edge.

pub mod backend;
pub mod cli;
pub mod diag;
pub mod embed;
mod error;
pub mod exec;
/// Entry points of the fuzz targets and their replay tests; the differential program generator.
pub mod fuzz;
pub mod limits;
pub mod measure;
pub mod pipeline;
pub mod plan;
pub mod repl;
pub mod sema;
mod session;
/// Pictures of what a program selects (`slc show`).
pub mod show;
pub mod source;
pub mod syntax;
pub mod target;
pub mod types;
pub mod zarr;

pub use embed::{Kernel, TensorView};
pub use error::Error;
pub use exec::{Executor, RunOptions};
pub use pipeline::{Compiled, compile, compile_with_values};
pub use session::{EvalTimes, Session};
pub use slc_runtime::{DType, Tensor};
pub use target::{Artifact, Target};
