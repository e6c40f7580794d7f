//! What a [`Session`](crate::Session) keeps between evals: for each program text, the kernels
//! built for it with the bindings each fits (the dtypes and dims of the inputs it reads — a dim
//! it takes any size of is a symbol — and the values of the inputs whose values the front end
//! read), so an eval of a text seen before skips the front end and code generation; and the
//! machine code by plan, shared by texts that lower to the same plan.

use super::kernel::Kernel;
use super::specialize::holds;
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

/// Kernels kept per text (one per distinct set of input types and parameter values, or one
/// shape-generic kernel); the oldest goes first.
const MAX_VARIANTS: usize = 8;

/// One input a program depends on: its dtype and dims (`None`: any size).
type InputFit = (String, DType, Vec<Option<usize>>);

/// A kernel built for one text, and the bindings it fits.
pub(crate) struct Program {
    types: Vec<InputFit>,
    /// Each input whose value the front end read (an operator parameter), with that value.
    values: Vec<(String, Tensor)>,
    kernel: Kernel,
}

impl Program {
    /// A program for `kernel`, fitting bindings where the inputs named in `types` (the kernel's
    /// inputs if `None`) have the kernel's types, and those in `values` the values they have now
    /// (`view_of`).
    pub(crate) fn new<'s>(
        kernel: Kernel,
        types: Option<&std::collections::BTreeSet<String>>,
        values: impl IntoIterator<Item = &'s String>,
        view_of: impl Fn(&str) -> Option<TensorView<'s>>,
    ) -> Result<Program, Error> {
        let types = kernel
            .inputs()
            .filter(|(name, _)| types.is_none_or(|read| read.contains(*name)))
            .map(|(name, ty)| {
                let dims = ty.shape.iter().map(|d| d.as_const().map(|d| d as usize)).collect();
                (name.to_string(), ty.dtype, dims)
            })
            .collect();
        let bound = |name: &String| view_of(name).ok_or_else(|| RuntimeError::UnboundInput(name.clone()));
        let values = values
            .into_iter()
            .map(|name| Ok((name.clone(), bound(name)?.to_tensor().map_err(RuntimeError::from)?)))
            .collect::<Result<_, RuntimeError>>()?;
        Ok(Program { types, values, kernel })
    }

    /// Whether the bindings (`view_of`) are those the program was built for.
    fn fits<'s>(&self, view_of: &impl Fn(&str) -> Option<TensorView<'s>>) -> bool {
        let typed = self.types.iter().all(|(name, dtype, dims)| {
            view_of(name).is_some_and(|v| {
                let same = |(&n, d): (&usize, &Option<usize>)| d.is_none_or(|d| d == n);
                v.dtype() == *dtype && v.shape().len() == dims.len() && v.shape().iter().zip(dims).all(same)
            })
        });
        typed && self.values.iter().all(|(name, value)| view_of(name).is_some_and(|v| holds(&v, value)))
    }

    /// Runs the kernel on the bound inputs, after checking the output's size against `options`
    /// (the memory available may have shrunk since the kernel was built).
    pub(crate) fn run<'s>(
        &self,
        view_of: impl Fn(&str) -> Option<TensorView<'s>>,
        options: &RunOptions,
    ) -> Result<Tensor, Error> {
        if let Some(fixed) = self.kernel.fixed() {
            fixed.check_output_size(options)?;
        }
        let inputs = self
            .kernel
            .inputs()
            .map(|(name, _)| view_of(name).ok_or_else(|| RuntimeError::UnboundInput(name.into())))
            .collect::<Result<Vec<_>, _>>()?;
        self.kernel.run(&inputs)
    }

    pub(crate) fn kernel(&self) -> &Kernel {
        &self.kernel
    }
}

/// What is known of a text: its programs, and whether the shape-generic pipeline refused it
/// (then it is not tried again).
#[derive(Default)]
struct Text {
    programs: Vec<Arc<Program>>,
    generic_refused: bool,
}

/// Programs by text, and their machine code by plan.
#[derive(Default)]
pub(crate) struct ProgramCache {
    texts: Mutex<HashMap<String, Text>>,
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
        texts.get(src)?.programs.iter().find(|p| p.fits(view_of)).cloned()
    }

    /// Whether a program was built for `src` (over any bindings) and the generic pipeline was
    /// not found to refuse it: the case for building a shape-generic kernel.
    pub(crate) fn may_generalize(&self, src: &str) -> bool {
        let texts = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        texts.get(src).is_some_and(|t| !t.programs.is_empty() && !t.generic_refused)
    }

    /// Whether the generic pipeline was found to refuse `src`.
    pub(crate) fn refuses_generic(&self, src: &str) -> bool {
        let texts = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        texts.get(src).is_some_and(|t| t.generic_refused)
    }

    /// Remembers that the generic pipeline refuses `src`.
    pub(crate) fn refuse_generic(&self, src: &str) {
        let mut texts = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        texts.entry(src.to_string()).or_default().generic_refused = true;
    }

    pub(crate) fn insert(&self, src: &str, program: Program) -> Arc<Program> {
        let program = Arc::new(program);
        let mut texts = self.texts.lock().unwrap_or_else(|e| e.into_inner());
        if texts.len() >= MAX_TEXTS && !texts.contains_key(src) {
            texts.clear();
            self.kernels.clear();
        }
        let variants = &mut texts.entry(src.to_string()).or_default().programs;
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
