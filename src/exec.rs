//! The one way a verified plan runs. [`Runnable::prepare`] turns a plan into something to run
//! on an [`Executor`] — the reference interpreter, or a JIT kernel (its index checks compiled
//! in) — and [`Runnable::run`] runs it; a failed check points at its index expression through
//! the check's origin in the plan. Prepared kernels (`embed::Kernel`: sessions, the C ABI,
//! Python) hold the `Runnable` of their plan, the REPL, `slc bench` and the fuzz targets
//! prepare theirs here.

use crate::backend::RuntimeError;
use crate::backend::jit::{self, JitKernel, KernelCache};
use crate::backend::{cuda, interp, loopnest};
use crate::error::Error;
use crate::pipeline::Compiled;
use crate::plan::{Plan, VerifiedGenericPlan, VerifiedPlan};
use crate::source::Span;
use slc_runtime::Tensor;
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Which executor runs plans.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Executor {
    /// Cranelift-compiled kernels (the default).
    #[default]
    Jit,
    /// The reference interpreter: slow, obviously correct; the oracle.
    Interpreter,
    /// An NVIDIA GPU through the CUDA driver (`backend::cuda`): host inputs copied to the
    /// device, the plan's kernel run there, the result copied back.
    Cuda,
}

impl Executor {
    /// `jit`, `interp` or `cuda`, as the CLI and the REPL spell them.
    pub fn from_name(s: &str) -> Option<Executor> {
        match s {
            "jit" => Some(Executor::Jit),
            "interp" => Some(Executor::Interpreter),
            "cuda" => Some(Executor::Cuda),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Executor::Jit => "jit",
            Executor::Interpreter => "interp",
            Executor::Cuda => "cuda",
        }
    }
}

/// How to run a compiled program.
#[derive(Debug, Clone, Copy)]
pub struct RunOptions {
    pub executor: Executor,
    /// Worker threads for large outputs (the JIT splits the outermost loop).
    pub threads: usize,
    /// The largest output, in bytes, a run may produce (`E0207` beyond it, before any code is
    /// generated or memory allocated). `None`: the memory available
    /// ([`limits::available_memory`](crate::limits::available_memory)).
    pub max_output_bytes: Option<u64>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions { executor: Executor::Jit, threads: cores(), max_output_bytes: None }
    }
}

/// The cores this process may use, read once: std reads cgroup files on every call, which cost
/// a cold compile a tenth of its time.
fn cores() -> usize {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

impl RunOptions {
    /// The reference interpreter on the calling thread.
    pub fn interpreter() -> RunOptions {
        RunOptions { executor: Executor::Interpreter, threads: 1, max_output_bytes: None }
    }
}

/// Outputs below this size are not checked against the memory available (that reads `/proc`
/// on every run); failing to allocate one is still an error, never an abort.
const UNCHECKED_OUTPUT_BYTES: u64 = 64 << 20;

/// Fails when an output of `bytes` exceeds `max` (a [`RunOptions`] setting), or by default the
/// memory available. `span`: the result's expression.
pub fn check_output(bytes: u64, max: Option<u64>, span: Option<Span>) -> Result<(), RuntimeError> {
    let limit = match max {
        Some(max) => max,
        None if bytes < UNCHECKED_OUTPUT_BYTES => return Ok(()),
        None => match crate::limits::available_memory() {
            Some(available) => available,
            None => return Ok(()),
        },
    };
    if bytes > limit {
        return Err(RuntimeError::OutputTooLarge { bytes, limit, set: max.is_some(), span });
    }
    Ok(())
}

/// A verified plan made runnable on an executor.
#[derive(Clone)]
pub enum Runnable {
    Interpreter,
    /// The plan's entry, compiled for inputs in the order it was prepared for.
    Jit(Arc<JitKernel>),
    /// The GPU (found when prepared): kernels compiled per plan and kept by the device.
    Cuda(&'static cuda::device::Device),
}

impl Runnable {
    /// Prepares `plan` (a concrete plan is one with nothing to bind: [`VerifiedPlan::lift`])
    /// for `executor`; a JIT kernel takes its inputs in `order` (for each plan input, its
    /// position among the caller's) and comes from (and goes into) `cache` if given.
    pub fn prepare(
        plan: &VerifiedGenericPlan,
        order: &[usize],
        executor: Executor,
        cache: Option<&KernelCache>,
    ) -> Result<Runnable, RuntimeError> {
        Ok(match (executor, cache) {
            (Executor::Interpreter, _) => Runnable::Interpreter,
            // The JIT compiles a store's update nest where the loop nest can write it (a `set`,
            // a `+=` or `*=` in a type it computes; shapes constant or symbolic); other stores
            // run on the interpreter, the oracle (docs/semantics.md, Stores).
            (Executor::Jit, _) if plan.store.is_some() && !loopnest::takes_store(plan.plan()) => {
                Runnable::Interpreter
            }
            (Executor::Cuda, _) if !gpu_takes_store(plan) => return Err(store_on_gpu()),
            (Executor::Jit, Some(cache)) => Runnable::Jit(cache.get_or_compile(plan, order)?),
            (Executor::Jit, None) => Runnable::Jit(Arc::new(jit::compile(plan, order)?)),
            (Executor::Cuda, _) => Runnable::Cuda(gpu()?),
        })
    }

    /// The GPU's runnable, or why there is none (no driver, no NVRTC).
    pub fn prepare_gpu() -> Result<Runnable, RuntimeError> {
        gpu().map(Runnable::Cuda)
    }

    /// Prepares a concrete plan for inputs in plan order.
    pub fn prepare_in_plan_order(
        plan: &VerifiedPlan,
        executor: Executor,
        cache: Option<&KernelCache>,
    ) -> Result<Runnable, RuntimeError> {
        Runnable::prepare(&plan.lift(), &jit::plan_order(plan), executor, cache)
    }

    pub fn executor(&self) -> Executor {
        match self {
            Runnable::Interpreter => Executor::Interpreter,
            Runnable::Jit(_) => Executor::Jit,
            Runnable::Cuda(_) => Executor::Cuda,
        }
    }

    /// Runs on `inputs` (dense tensors in plan order) into a new tensor.
    pub fn run(
        &self,
        plan: &VerifiedPlan,
        inputs: &[&Tensor],
        threads: usize,
    ) -> Result<Tensor, RuntimeError> {
        match self {
            Runnable::Interpreter => interp::run(plan, inputs),
            Runnable::Jit(kernel) => kernel.run(inputs, threads).map_err(|e| e.located(plan)),
            Runnable::Cuda(gpu) => run_on_gpu(gpu, plan, inputs),
        }
    }

    /// Runs into `out`, which must have the plan's dtype and shape.
    pub fn run_into(
        &self,
        plan: &VerifiedPlan,
        inputs: &[&Tensor],
        out: &mut Tensor,
        threads: usize,
    ) -> Result<(), RuntimeError> {
        match self {
            Runnable::Interpreter => {
                let result = interp::run(plan, inputs)?;
                out.bytes_mut().copy_from_slice(result.bytes());
                Ok(())
            }
            Runnable::Jit(kernel) => kernel.run_into(inputs, out, threads).map_err(|e| e.located(plan)),
            Runnable::Cuda(gpu) => {
                let result = run_on_gpu(gpu, plan, inputs)?;
                out.bytes_mut().copy_from_slice(result.bytes());
                Ok(())
            }
        }
    }
}

/// Whether the CUDA target runs `plan` (every load, every store but those combining complex
/// numbers: `backend::cuda::codegen::store`).
fn gpu_takes_store(plan: &crate::plan::GenericPlan) -> bool {
    plan.store.as_ref().is_none_or(|s| cuda::codegen::store::supported(s.combine, plan.dtype).is_ok())
}

/// The GPU's refusal of a store plan it has no update kernels for.
fn store_on_gpu() -> RuntimeError {
    RuntimeError::Unsupported {
        executor: "cuda",
        what: "a store combining complex numbers (`+=`, `*=`, a scatter's reduction)",
    }
}

/// The GPU, or why there is none (checked before any driver call: never a panic).
fn gpu() -> Result<&'static cuda::device::Device, RuntimeError> {
    cuda::device::device().map_err(|e| RuntimeError::Cuda(e.to_string()))
}

/// `plan` on the GPU: a failed check is the error the CPU gives (located in `plan`), anything
/// else the CUDA back end's.
fn run_on_gpu(
    gpu: &cuda::device::Device,
    plan: &VerifiedPlan,
    inputs: &[&Tensor],
) -> Result<Tensor, RuntimeError> {
    if !gpu_takes_store(plan.lift().plan()) {
        return Err(store_on_gpu());
    }
    match gpu.run(&plan.lift(), inputs) {
        Ok((result, _)) => Ok(result),
        Err(cuda::device::GpuError::Run(e)) => Err(e.located(plan)),
        Err(cuda::device::GpuError::Cuda(e)) => Err(RuntimeError::Cuda(e.to_string())),
    }
}

impl Compiled {
    /// Fails when the output is larger than `options` allow, pointing at the result.
    pub fn check_output_size(&self, options: &RunOptions) -> Result<(), RuntimeError> {
        check_output(self.plan.output_bytes(), options.max_output_bytes, Some(self.checked.span))
    }

    /// The tensors of `tensors` the plan reads, in plan order.
    pub fn plan_inputs<'t>(
        &self,
        tensors: &'t BTreeMap<String, Tensor>,
    ) -> Result<Vec<Cow<'t, Tensor>>, RuntimeError> {
        plan_inputs(&self.plan, tensors)
    }

    /// Runs the plan on the reference interpreter, taking inputs by name from `tensors`.
    pub fn run(&self, tensors: &BTreeMap<String, Tensor>) -> Result<Tensor, Error> {
        self.run_with(tensors, &RunOptions::interpreter(), &KernelCache::default())
    }

    /// Runs the plan with the chosen executor; JIT kernels come from (and go into) `cache`.
    pub fn run_with(
        &self,
        tensors: &BTreeMap<String, Tensor>,
        options: &RunOptions,
        cache: &KernelCache,
    ) -> Result<Tensor, Error> {
        let args = self.plan_inputs(tensors)?;
        self.check_output_size(options)?;
        let runnable = Runnable::prepare_in_plan_order(&self.plan, options.executor, Some(cache))?;
        let args: Vec<&Tensor> = args.iter().map(|a| &**a).collect();
        Ok(runnable.run(&self.plan, &args, options.threads)?)
    }
}

/// The tensors a plan reads, by name from `tensors`, in plan order: the inputs it derives per
/// call made from theirs ([`crate::plan::input_tensors`]).
pub fn plan_inputs<'t>(
    plan: &Plan,
    tensors: &'t BTreeMap<String, Tensor>,
) -> Result<Vec<Cow<'t, Tensor>>, RuntimeError> {
    Ok(crate::plan::input_tensors(&plan.inputs, &|name| tensors.get(name))?)
}
