//! Back ends execute verified plans. The reference interpreter is the oracle every faster back
//! end is tested against.

pub mod aot;
pub mod clif;
pub mod cuda;
pub mod dml;
pub mod interp;
pub mod jit;
pub mod loopnest;
mod workers;

use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::source::Span;
use slc_runtime::{DType, TensorError};

/// Errors while running a plan on concrete tensors.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RuntimeError {
    /// A value of an index tensor is out of range (NumPy's IndexError). `check` is the plan
    /// check that failed; `span` the index expression, when known.
    #[error("index {index} is out of bounds for axis {axis} with size {len}")]
    IndexOutOfBounds { check: usize, index: i128, axis: usize, len: i64, span: Option<Span> },
    /// Clamp or wrap on an axis of size 0, which has no valid index.
    #[error("cannot gather from an empty axis")]
    EmptyAxis,
    /// A kernel met an `error`-mode index out of range that no check covered.
    #[error("an index value is out of range")]
    GatherOutOfRange,
    /// Compiling the kernel failed.
    #[error(transparent)]
    Jit(#[from] jit::JitError),
    /// A tensor does not match the type the plan was compiled for.
    #[error("input `{name}` is {found}, but the plan was compiled for {expected}")]
    InputMismatch { name: String, expected: String, found: String },
    /// The plan names more or fewer inputs than were given.
    #[error("the plan takes {expected} inputs, {found} were given")]
    InputCount { expected: usize, found: usize },
    /// The plan reads an input no tensor is bound to.
    #[error("no tensor is bound to `{0}`")]
    UnboundInput(String),
    #[error(transparent)]
    Alloc(#[from] TensorError),
    /// An input derived per call (a mask's `nonzero()`, a store's value cast) could not be.
    #[error(transparent)]
    Derive(#[from] crate::plan::DeriveError),
    /// The output would be larger than the bound (`set`: by the caller, else the memory
    /// available); checked before any code is generated or memory allocated.
    #[error(
        "the result needs {bytes} bytes, more than the {limit} {}",
        if *set { "allowed" } else { "bytes of memory available" }
    )]
    OutputTooLarge { bytes: u64, limit: u64, set: bool, span: Option<Span> },
    /// An address outside a buffer: verification makes this unreachable; reported, not a crash.
    #[error("internal error: address {address} outside a buffer of {len} elements")]
    OutOfBuffer { address: i128, len: usize },
    /// Inputs a generic kernel cannot take: a condition of its shape function fails (an index
    /// outside a symbolic axis, two dims that must agree, sizes whose arithmetic overflows).
    #[error("{0}")]
    Shape(#[from] crate::plan::ShapeMismatch),
    /// The executor cannot run this kind of plan (a store plan on the GPU: docs/semantics.md,
    /// Stores).
    #[error("the {executor} executor cannot run {what}")]
    Unsupported { executor: &'static str, what: &'static str },
    /// The CUDA back end could not run: no driver, a kernel NVRTC refused, a driver call failed.
    #[error("{0}")]
    Cuda(String),
}

impl RuntimeError {
    /// A failed check of `plan` points at the check's index expression in `plan`'s text: where
    /// the error names its check but not its place (the DirectML emulator sees only the graph),
    /// and where a kernel shared by plans that differ only in their origins (the cache keys them
    /// by text) names another program's place.
    pub fn located<D>(self, plan: &crate::plan::Plan<D>) -> RuntimeError {
        match self {
            RuntimeError::IndexOutOfBounds { check, index, axis, len, span } => {
                let span = plan.checks.get(check).and_then(|c| c.origin.0).or(span);
                RuntimeError::IndexOutOfBounds { check, index, axis, len, span }
            }
            e => e,
        }
    }
}

impl IntoDiagnostic for RuntimeError {
    fn into_diagnostic(self) -> Diagnostic {
        let message = self.to_string();
        match self {
            RuntimeError::IndexOutOfBounds { axis, len, span, .. } => {
                let d = Diagnostic::error("E0201", message).help(format!(
                    "index values for axis {axis} must lie in {}..={}",
                    -len,
                    len - 1
                ));
                match span {
                    Some(span) => d.label(span, "this index tensor holds the value"),
                    None => d,
                }
            }
            RuntimeError::EmptyAxis | RuntimeError::GatherOutOfRange => Diagnostic::error("E0202", message),
            RuntimeError::Jit(_) => Diagnostic::error("E0205", message),
            RuntimeError::InputMismatch { .. }
            | RuntimeError::InputCount { .. }
            | RuntimeError::UnboundInput(_) => Diagnostic::error("E0203", message),
            RuntimeError::Derive(crate::plan::DeriveError::Cast { .. }) => {
                Diagnostic::error("E0211", message)
                    .help("give the value in the target's dtype, cast as you mean it (rounded, clipped)")
            }
            RuntimeError::Alloc(_) | RuntimeError::Derive(crate::plan::DeriveError::Alloc(_)) => {
                Diagnostic::error("E0204", message)
            }
            RuntimeError::Derive(_) => Diagnostic::error("E0203", message),
            RuntimeError::Cuda(_) => Diagnostic::error("E0209", message).help(
                "the CUDA back end needs an NVIDIA driver (libcuda) and NVRTC (libnvrtc; SLC_NVRTC names it)",
            ),
            RuntimeError::OutOfBuffer { .. } => Diagnostic::error("E0299", message),
            RuntimeError::Unsupported { .. } => Diagnostic::error("E0210", message)
                .help("run it on the CPU: the default executor (`--executor jit`) or `--executor interp`"),
            RuntimeError::Shape(mismatch) => {
                let d = Diagnostic::error("E0208", message);
                match mismatch {
                    crate::plan::ShapeMismatch::Failed {
                        origin: crate::plan::Origin(Some(span)), ..
                    } => d.label(span, "this needs it"),
                    _ => d,
                }
            }
            RuntimeError::OutputTooLarge { span, .. } => {
                let d = Diagnostic::error("E0207", message)
                    .help("slice less, or raise the bound: --max-output-bytes, RunOptions::max_output_bytes");
                match span {
                    Some(span) => d.label(span, "this result"),
                    None => d,
                }
            }
        }
    }
}

/// A dense, C-ordered input a generic kernel reads in place: a [`Tensor`](slc_runtime::Tensor),
/// or a view of the caller's memory (`embed`'s dense views).
///
/// # Safety
/// [`as_ptr`](Self::as_ptr) points to `Tensor::byte_size(dtype, shape)` readable bytes, the
/// elements in C order, for as long as the value lives.
pub unsafe trait DenseInput {
    fn dtype(&self) -> DType;
    fn shape(&self) -> &[usize];
    fn as_ptr(&self) -> *const u8;

    /// The elements' bytes.
    fn bytes(&self) -> &[u8] {
        let n = slc_runtime::Tensor::byte_size(self.dtype(), self.shape()).unwrap_or(0);
        if n == 0 {
            return &[];
        }
        // SAFETY: the trait's contract.
        unsafe { std::slice::from_raw_parts(self.as_ptr(), n) }
    }

    /// Element `linear` of an integer input, exactly (a run-time scalar's value).
    fn int_at(&self, linear: usize) -> Option<i128> {
        let w = self.dtype().width();
        self.dtype().int_from_le(self.bytes().get(linear.checked_mul(w)?..linear.checked_mul(w)? + w)?)
    }
}

// SAFETY: a tensor owns its dense, C-ordered bytes.
unsafe impl DenseInput for slc_runtime::Tensor {
    fn dtype(&self) -> DType {
        slc_runtime::Tensor::dtype(self)
    }
    fn shape(&self) -> &[usize] {
        slc_runtime::Tensor::shape(self)
    }
    fn as_ptr(&self) -> *const u8 {
        slc_runtime::Tensor::as_ptr(self)
    }
}

// SAFETY: as the referenced input.
unsafe impl<T: DenseInput + ?Sized> DenseInput for &T {
    fn dtype(&self) -> DType {
        (**self).dtype()
    }
    fn shape(&self) -> &[usize] {
        (**self).shape()
    }
    fn as_ptr(&self) -> *const u8 {
        (**self).as_ptr()
    }
}

pub(crate) use workers::split_across_threads;
#[cfg(feature = "zarr")]
pub(crate) use workers::split_one_by_one;

/// Checks that `tensors` match the inputs a plan was compiled for: each input's own shape, or
/// for a strided view its window ([`InputDecl::tensor_shape`](crate::plan::InputDecl::tensor_shape)).
pub fn check_inputs(plan: &crate::plan::Plan, tensors: &[&slc_runtime::Tensor]) -> Result<(), RuntimeError> {
    if plan.inputs.len() != tensors.len() {
        return Err(RuntimeError::InputCount { expected: plan.inputs.len(), found: tensors.len() });
    }
    for (decl, t) in plan.inputs.iter().zip(tensors) {
        let shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
        let expected = decl.tensor_shape();
        if decl.dtype != t.dtype() || expected != shape {
            let show = |d: DType, s: &[i64]| format!("{d}{}", crate::types::ShapeDisplay(s));
            let strided = if decl.strides.is_some() { " (the window of a strided view)" } else { "" };
            return Err(RuntimeError::InputMismatch {
                name: decl.name.clone(),
                expected: format!("{}{strided}", show(decl.dtype, &expected)),
                found: show(t.dtype(), &shape),
            });
        }
    }
    Ok(())
}
