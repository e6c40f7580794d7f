//! What a [`Session`](crate::Session) keeps between evals: for each program text, the kernels
//! built for it with what each depends on (the types and values of the inputs it read), so an
//! eval of a text seen before skips the front end and code generation; and the machine code by
//! plan, shared by texts that lower to the same plan.

use super::generic::Held;
use super::kernel::Kernel;
use super::view::TensorView;
use crate::backend::RuntimeError;
use crate::backend::jit::KernelCache;
use crate::error::Error;
use crate::exec::RunOptions;
use slc_runtime::{DType, Tensor};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Texts kept before the cache starts afresh: a bound on memory, far above the working set of
/// a REPL or an embedding.
const MAX_TEXTS: usize = 1024;

/// Kernels kept per text (one per distinct set of input types and parameter values); the
/// oldest goes first.
const MAX_VARIANTS: usize = 8;

/// A kernel built for one text, and the bindings it was built for.
pub(crate) struct Program {
    /// Each input whose type the checker read, with that type.
    types: Vec<(String, DType, Vec<usize>)>,
    /// Each input whose value the checker read (an operator parameter), with that value.
    values: Vec<(String, Tensor)>,
    kernel: Kernel,
}

impl Program {
    /// `types` and `values`: the inputs the checker read, as they were bound (`view_of`).
    pub(crate) fn new<'s>(
        kernel: Kernel,
        types: impl IntoIterator<Item = &'s String>,
        values: impl IntoIterator<Item = &'s String>,
        view_of: impl Fn(&str) -> Option<TensorView<'s>>,
    ) -> Result<Program, Error> {
        let bound = |name: &String| view_of(name).ok_or_else(|| RuntimeError::UnboundInput(name.clone()));
        let types = types
            .into_iter()
            .map(|name| bound(name).map(|v| (name.clone(), v.dtype(), v.shape().to_vec())))
            .collect::<Result<_, _>>()?;
        let values = values
            .into_iter()
            .map(|name| Ok((name.clone(), bound(name)?.to_tensor().map_err(RuntimeError::from)?)))
            .collect::<Result<_, RuntimeError>>()?;
        Ok(Program { types, values, kernel })
    }

    /// Whether the bindings (`view_of`) are those the program was built for.
    fn fits<'s>(&self, view_of: &impl Fn(&str) -> Option<TensorView<'s>>) -> bool {
        let typed = self.types.iter().all(|(name, dtype, shape)| {
            view_of(name).is_some_and(|v| v.dtype() == *dtype && v.shape() == shape.as_slice())
        });
        typed && self.values.iter().all(|(name, value)| view_of(name).is_some_and(|v| holds(&v, value)))
    }

    pub(crate) fn threads_used(&self) -> usize {
        self.kernel.threads_used()
    }

    /// Runs the kernel on the bound inputs.
    pub(crate) fn run<'s>(
        &self,
        view_of: impl Fn(&str) -> Option<TensorView<'s>>,
        options: &RunOptions,
    ) -> Result<Tensor, Error> {
        // The output's size is known, but the memory available may have shrunk since.
        self.kernel.compiled().check_output_size(options)?;
        let inputs = self
            .kernel
            .inputs()
            .map(|(name, _, _)| view_of(name).ok_or_else(|| RuntimeError::UnboundInput(name.into())))
            .collect::<Result<Vec<_>, _>>()?;
        self.kernel.run(&inputs)
    }
}

/// Whether `view` holds exactly `value` (same dtype, shape and elements).
fn holds(view: &TensorView<'_>, value: &Tensor) -> bool {
    if view.dtype() != value.dtype() || view.shape() != value.shape() {
        return false;
    }
    if view.is_contiguous() {
        // SAFETY: a dense view's `nbytes` bytes are readable for its lifetime.
        let bytes = unsafe { std::slice::from_raw_parts(view.as_ptr(), view.nbytes()) };
        return bytes == value.bytes();
    }
    view.to_tensor().is_ok_and(|t| t.bytes() == value.bytes())
}

/// Programs by text, and their machine code by plan.
#[derive(Default)]
pub(crate) struct ProgramCache {
    texts: Mutex<HashMap<String, Vec<Arc<Program>>>>,
    kernels: KernelCache,
}

impl ProgramCache {
    /// The program built for `src` that fits the bindings, if any.
    pub(crate) fn find<'s>(
        &self,
        src: &str,
        view_of: &impl Fn(&str) -> Option<TensorView<'s>>,
    ) -> Option<Arc<Program>> {
        let texts = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        texts.get(src)?.iter().find(|p| p.fits(view_of)).cloned()
    }

    /// Whether a program was built for `src` (over any bindings).
    pub(crate) fn has_text(&self, src: &str) -> bool {
        self.texts.lock().unwrap_or_else(|e| e.into_inner()).contains_key(src)
    }

    pub(crate) fn insert(&self, src: &str, program: Program) -> Arc<Program> {
        let program = Arc::new(program);
        let mut texts = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        if texts.len() >= MAX_TEXTS && !texts.contains_key(src) {
            texts.clear();
            self.kernels.clear();
        }
        let variants = texts.entry(src.to_string()).or_default();
        if variants.len() >= MAX_VARIANTS {
            variants.remove(0);
        }
        variants.push(program.clone());
        program
    }

    /// Where kernels built for this cache get their machine code.
    pub(crate) fn kernels(&self) -> &KernelCache {
        &self.kernels
    }

    /// Forgets every program (the run options they were built for changed); machine code,
    /// which does not depend on them, stays.
    pub(crate) fn forget_programs(&self) {
        self.texts.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}

/// A program's shape-generic kernel (a `Session` builds one when a text comes back with other
/// shapes), and the dtypes and dims of the inputs it reads, in plan order (`None`: a symbol).
pub(crate) struct GenericProgram {
    inputs: Vec<(String, DType, Vec<Option<usize>>)>,
    kernel: Arc<crate::backend::jit::JitKernel>,
}

impl GenericProgram {
    pub(crate) fn new(kernel: Arc<crate::backend::jit::JitKernel>) -> GenericProgram {
        let dims = |d: &crate::plan::InputDecl<crate::types::sym::SymExpr>| {
            d.shape.iter().map(|n| n.as_const().map(|n| n as usize)).collect()
        };
        let inputs = kernel.plan().inputs.iter().map(|d| (d.name.clone(), d.dtype, dims(d))).collect();
        GenericProgram { inputs, kernel }
    }

    /// Whether the bindings have the dtypes, ranks and constant dims the kernel takes.
    fn fits<'s>(&self, view_of: &impl Fn(&str) -> Option<TensorView<'s>>) -> bool {
        self.inputs.iter().all(|(name, dtype, dims)| {
            view_of(name).is_some_and(|v| {
                let same = |(&n, d): (&usize, &Option<usize>)| d.is_none_or(|d| d == n);
                v.dtype() == *dtype && v.shape().len() == dims.len() && v.shape().iter().zip(dims).all(same)
            })
        })
    }

    /// Runs the kernel on the bound inputs (dense ones read in place), after checking the
    /// output's size against `options`.
    pub(crate) fn run<'s>(
        &self,
        view_of: impl Fn(&str) -> Option<TensorView<'s>>,
        options: &RunOptions,
    ) -> Result<Tensor, Error> {
        let inputs = self
            .inputs
            .iter()
            .map(|(name, _, _)| {
                Held::of(view_of(name).ok_or_else(|| RuntimeError::UnboundInput(name.clone()))?)
            })
            .collect::<Result<Vec<Held<'_>>, Error>>()?;
        let shape = self.kernel.output_shape(&inputs)?;
        let bytes = Tensor::byte_size(self.kernel.plan().dtype, &shape).map_or(u64::MAX, |b| b as u64);
        crate::exec::check_output(bytes, options.max_output_bytes, None)?;
        Ok(self.kernel.run(&inputs, options.threads.max(1))?)
    }
}

/// The generic programs by text: `None` where the text has no generic kernel (a form the
/// generic pipeline does not take), so that it is not tried again.
#[derive(Default)]
pub(crate) struct GenericPrograms {
    texts: Mutex<HashMap<String, Vec<Option<Arc<GenericProgram>>>>>,
}

impl GenericPrograms {
    /// What is known of `src` over bindings of these dtypes and ranks: `Some(None)` when it
    /// has no generic kernel, `None` when it was never tried.
    pub(crate) fn find<'s>(
        &self,
        src: &str,
        view_of: &impl Fn(&str) -> Option<TensorView<'s>>,
    ) -> Option<Option<Arc<GenericProgram>>> {
        let texts = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        let variants = texts.get(src)?;
        if variants.iter().any(Option::is_none) {
            return Some(None);
        }
        variants.iter().flatten().find(|p| p.fits(view_of)).cloned().map(Some)
    }

    pub(crate) fn insert(&self, src: &str, program: Option<GenericProgram>) -> Option<Arc<GenericProgram>> {
        let program = program.map(Arc::new);
        let mut texts = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        if texts.len() >= MAX_TEXTS && !texts.contains_key(src) {
            texts.clear();
        }
        let variants = texts.entry(src.to_string()).or_default();
        if variants.len() >= MAX_VARIANTS {
            variants.remove(0);
        }
        variants.push(program.clone());
        program
    }

    pub(crate) fn clear(&self) {
        self.texts.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}
