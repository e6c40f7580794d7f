//! Shape-generic kernels: a program compiled once for input types whose dims may be symbols
//! (`f32[N, M]`, `i64[]` run-time scalars), run on inputs of any shapes its shape function
//! accepts.

use super::view::{AsView, TensorView, ViewError};
use crate::backend::jit::{self, JitKernel};
use crate::backend::{DenseInput, RuntimeError};
use crate::error::Error;
use crate::exec::{Executor, RunOptions};
use crate::pipeline::{CompiledGeneric, compile_generic};
use crate::plan::VerifiedGenericPlan;
use crate::sema::SymInputTypes;
use crate::types::{SymTensorType, TensorType};
use slc_runtime::{DType, Tensor};
use std::sync::Arc;

/// Inputs up to this many are gathered on the stack for a call.
const FEW_INPUTS: usize = 8;

/// A program compiled once for symbolic input types; run it on inputs of any conforming shapes.
///
/// Inputs are passed by position, in the order of the signatures given to
/// [`prepare`](Self::prepare). Each call binds the symbols from the inputs' dims (and run-time
/// scalars from their values), checks what the program needs of them (equal names equal,
/// indices inside their axes, ...: [`crate::plan::Requirement`]), and runs the one compiled
/// kernel; a call with the dims of the call before skips the binding.
///
/// ```
/// use slc::{DType, Tensor, embed::GenericKernel};
/// let k = GenericKernel::prepare("a[1:, ::-1]", &[("a", "f32[N, M]".parse()?)])?;
/// assert_eq!(k.output_type().to_string(), "f32[max(0, N-1), M]");
/// for (n, m) in [(4, 5), (3, 1), (100, 7)] {
///     let a = Tensor::zeros(DType::F32, &[n, m])?;
///     assert_eq!(k.run(&[&a])?.shape(), &[n - 1, m]);
/// }
/// // Equal names must be equal sizes.
/// let k = GenericKernel::prepare("b", &[("a", "f32[N]".parse()?), ("b", "f32[N]".parse()?)])?;
/// let (a, b) = (Tensor::zeros(DType::F32, &[3])?, Tensor::zeros(DType::F32, &[4])?);
/// assert_eq!(k.run(&[&a, &b]).unwrap_err().diagnostic().code, "E0208");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct GenericKernel {
    compiled: Arc<CompiledGeneric>,
    plan: Arc<VerifiedGenericPlan>,
    src: String,
    inputs: Vec<(String, SymTensorType)>,
    /// For each plan input, its position among the caller's inputs.
    order: Vec<usize>,
    /// The declared inputs, when the plan reads only some of them: their dtypes and dims are
    /// checked per call (the kernel checks those it reads).
    unread: Option<Vec<crate::plan::InputDecl<crate::types::sym::SymExpr>>>,
    /// Whether the plan reads every input, in the order given (the call's fast path).
    in_order: bool,
    threads: usize,
    kernel: Arc<JitKernel>,
}

impl std::fmt::Debug for GenericKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GenericKernel({:?}: {})", self.src, self.plan.to_string().trim_end())
    }
}

impl GenericKernel {
    /// Compiles `src` for inputs of the given names and types (in the order [`run`](Self::run)
    /// takes them), on the JIT, one thread per core for large outputs.
    pub fn prepare(src: &str, inputs: &[(&str, SymTensorType)]) -> Result<GenericKernel, Error> {
        GenericKernel::prepare_with(src, inputs, &RunOptions::default())
    }

    /// As [`prepare`](Self::prepare), with the threads of `options` (generic kernels run on the
    /// JIT: the interpreter runs a concrete plan per call, through [`Session`](crate::Session)).
    pub fn prepare_with(
        src: &str,
        inputs: &[(&str, SymTensorType)],
        options: &RunOptions,
    ) -> Result<GenericKernel, Error> {
        if options.executor != Executor::Jit {
            return Err(ViewError::Signature("generic kernels run on the JIT".into()).into());
        }
        let types: SymInputTypes = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
        let compiled = compile_generic(src, &types)?;
        let plan = crate::plan::verify_generic(compiled.plan.clone())?;
        let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
        let order = crate::backend::aot::input_order(&plan, &names).map_err(|e| match e {
            crate::backend::aot::AotError::DuplicateInput(name) => ViewError::DuplicateInput(name),
            other => ViewError::Signature(other.to_string()),
        })?;
        let kernel = Arc::new(jit::compile(&plan, &jit::plan_order(&plan)).map_err(RuntimeError::from)?);
        let declared =
            inputs.iter().map(|(n, t)| crate::plan::InputDecl::dense(*n, t.dtype, t.shape.clone())).collect();
        let unread = (plan.inputs.len() < inputs.len()).then_some(declared);
        Ok(GenericKernel {
            compiled: Arc::new(compiled),
            plan: Arc::new(plan),
            src: src.to_string(),
            inputs: inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect(),
            in_order: unread.is_none() && order.iter().enumerate().all(|(i, &o)| i == o),
            order,
            unread,
            threads: options.threads.max(1),
            kernel,
        })
    }

    /// The program text (to render errors against).
    pub fn source(&self) -> &str {
        &self.src
    }

    /// The verified generic plan, with its shape function's requirements.
    pub fn plan(&self) -> &VerifiedGenericPlan {
        &self.plan
    }

    /// The checked program (its types are expressions in the symbols).
    pub fn compiled(&self) -> &CompiledGeneric {
        &self.compiled
    }

    /// The input names and types, in call order.
    pub fn inputs(&self) -> impl Iterator<Item = (&str, &SymTensorType)> {
        self.inputs.iter().map(|(n, t)| (n.as_str(), t))
    }

    /// The output's type, its dims expressions in the symbols (`f32[max(0, N-1), M]`).
    pub fn output_type(&self) -> SymTensorType {
        crate::types::TensorType { dtype: self.plan.dtype, shape: self.plan.shape.clone() }
    }

    pub fn output_dtype(&self) -> DType {
        self.plan.dtype
    }

    /// Sets the worker threads for large outputs (1: always the calling thread).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The output's shape for these inputs, or why the kernel does not take them.
    pub fn output_shape<V: AsView>(&self, inputs: &[V]) -> Result<Vec<usize>, Error> {
        self.with_inputs(inputs, |held| Ok(self.kernel.output_shape(held)?))
    }

    /// Runs the kernel into a new tensor.
    pub fn run<V: AsView>(&self, inputs: &[V]) -> Result<Tensor, Error> {
        self.with_inputs(inputs, |held| Ok(self.kernel.run(held, self.threads)?))
    }

    /// Runs the kernel into `out`, which must have the output's dtype and the shape these
    /// inputs give. For dense inputs, a call with the dims of the call before allocates nothing.
    pub fn run_into<V: AsView>(&self, inputs: &[V], out: &mut Tensor) -> Result<(), Error> {
        self.with_inputs(inputs, |held| Ok(self.kernel.run_into(held, out, self.threads)?))
    }

    /// Runs the kernel into a byte buffer of exactly the output's size for these inputs (dense,
    /// C order, little-endian elements).
    pub fn run_into_bytes<V: AsView>(&self, inputs: &[V], out: &mut [u8]) -> Result<(), Error> {
        self.with_inputs(inputs, |held| Ok(self.kernel.run_into_bytes(held, out, self.threads)?))
    }

    /// `f` of the inputs in plan order, as the kernel reads them. The common call — a few dense
    /// inputs, each read by the plan in the order given — builds nothing on the heap.
    fn with_inputs<V: AsView, R>(
        &self,
        inputs: &[V],
        f: impl FnOnce(&[&Held<'_>]) -> Result<R, Error>,
    ) -> Result<R, Error> {
        let n = inputs.len();
        if n == self.inputs.len() && self.in_order {
            if n == 1 {
                let view = inputs[0].as_view();
                if view.is_contiguous() {
                    return f(&[&Held::InPlace(view)]);
                }
            } else if (2..=FEW_INPUTS).contains(&n) {
                let held: [Held<'_>; FEW_INPUTS] =
                    std::array::from_fn(|i| Held::InPlace(inputs[i.min(n - 1)].as_view()));
                if held[..n].iter().all(|h| matches!(h, Held::InPlace(v) if v.is_contiguous())) {
                    let refs: [&Held<'_>; FEW_INPUTS] = std::array::from_fn(|i| &held[i]);
                    return f(&refs[..n]);
                }
            }
        }
        let held = self.hold(inputs)?;
        let ordered: Vec<&Held<'_>> = self.order.iter().map(|&i| &held[i]).collect();
        f(&ordered)
    }

    /// The inputs as the kernel reads them: dense views in place, others packed into dense
    /// copies; checked for count, and those the plan does not read against their declarations.
    fn hold<'v, V: AsView>(&self, inputs: &'v [V]) -> Result<Vec<Held<'v>>, Error> {
        if inputs.len() != self.inputs.len() {
            return Err(RuntimeError::InputCount { expected: self.inputs.len(), found: inputs.len() }.into());
        }
        let views: Vec<TensorView<'v>> = inputs.iter().map(|i| i.as_view()).collect();
        if let Some(declared) = &self.unread {
            if let Some((d, v)) = declared.iter().zip(&views).find(|(d, v)| d.dtype != v.dtype()) {
                let found = TensorType::of(v.dtype(), v.shape()).to_string();
                let expected = TensorType { dtype: d.dtype, shape: d.shape.clone() }.to_string();
                return Err(RuntimeError::InputMismatch { name: d.name.clone(), expected, found }.into());
            }
            let dims: Vec<Vec<i64>> =
                views.iter().map(|v| v.shape().iter().map(|&d| d as i64).collect()).collect();
            let dims: Vec<&[i64]> = dims.iter().map(Vec::as_slice).collect();
            crate::plan::bind_dims(declared, &dims).map_err(RuntimeError::from)?;
        }
        views.into_iter().map(Held::of).collect()
    }
}

/// An input as a generic kernel reads it: a dense view of the caller's memory, or a dense copy
/// of a strided one.
pub(crate) enum Held<'v> {
    InPlace(TensorView<'v>),
    Packed(Tensor),
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
// view's own invariant), in C order; a tensor owns its dense bytes.
unsafe impl DenseInput for Held<'_> {
    fn dtype(&self) -> DType {
        match self {
            Held::InPlace(v) => v.dtype(),
            Held::Packed(t) => t.dtype(),
        }
    }

    fn shape(&self) -> &[usize] {
        match self {
            Held::InPlace(v) => v.shape(),
            Held::Packed(t) => t.shape(),
        }
    }

    fn as_ptr(&self) -> *const u8 {
        match self {
            Held::InPlace(v) => v.as_ptr(),
            Held::Packed(t) => t.as_ptr(),
        }
    }
}
