//! The Cranelift JIT: a verified plan is scheduled into a loop nest, compiled to machine code
//! specialized to its shapes, strides and element width, cached by plan, and run on one or more
//! threads (each taking a slice of the outermost loop).

use super::clif::{self, STATUS_EMPTY_AXIS, STATUS_OK};
use super::interp::run_checks;
use super::loopnest::{self, LoopNest};
use super::{RuntimeError, check_inputs};
use crate::plan::{Plan, PlanInfo};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, default_libcall_names};
use slc_runtime::Tensor;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Outputs smaller than this are not worth a thread.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

type KernelFn = unsafe extern "C" fn(*const *const u8, *mut u8, i64, i64) -> i32;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum JitError {
    #[error("this machine is not supported by the JIT: {0}")]
    UnsupportedHost(String),
    #[error("code generation failed: {0}")]
    Codegen(String),
}

/// The host ISA for JIT code (native features), built once. Cranelift's own verifier is off:
/// `clif::define_kernel` runs `verify_function` on every kernel already.
pub fn host_isa() -> Result<OwnedTargetIsa, JitError> {
    static ISA: OnceLock<Result<OwnedTargetIsa, JitError>> = OnceLock::new();
    ISA.get_or_init(|| {
        let mut flags = settings::builder();
        let set = |f: &mut settings::Builder, k: &str, v: &str| {
            f.set(k, v).map_err(|e| JitError::UnsupportedHost(e.to_string()))
        };
        set(&mut flags, "opt_level", "speed")?;
        set(&mut flags, "use_colocated_libcalls", "false")?;
        set(&mut flags, "is_pic", "false")?;
        set(&mut flags, "enable_verifier", "false")?;
        let isa = cranelift_native::builder().map_err(|e| JitError::UnsupportedHost(e.to_string()))?;
        isa.finish(settings::Flags::new(flags)).map_err(|e| JitError::UnsupportedHost(e.to_string()))
    })
    .clone()
}

/// A compiled kernel. Owns its code; the memory is released when the kernel is dropped.
pub struct JitKernel {
    module: Option<JITModule>,
    entry: KernelFn,
    pub nest: LoopNest,
}

// SAFETY: the module is only touched again in Drop; the code it owns is immutable and
// position-independent of the calling thread.
unsafe impl Send for JitKernel {}
unsafe impl Sync for JitKernel {}

impl Drop for JitKernel {
    fn drop(&mut self) {
        if let Some(module) = self.module.take() {
            // SAFETY: `entry` is not reachable once the kernel is dropped.
            unsafe { module.free_memory() };
        }
    }
}

impl std::fmt::Debug for JitKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JitKernel({})", self.nest)
    }
}

/// Compiles a verified plan (`_proof` shows it was verified: the kernel does not check
/// addresses).
pub fn compile(plan: &Plan, _proof: &PlanInfo) -> Result<JitKernel, JitError> {
    let nest = loopnest::schedule(plan, |_, _| {});
    let mut module = JITModule::new(JITBuilder::with_isa(host_isa()?, default_libcall_names()));
    let id = clif::define_kernel(&mut module, "slc_kernel", Linkage::Local, &nest)
        .map_err(|e| JitError::Codegen(e.to_string()))?;
    module.finalize_definitions().map_err(|e| JitError::Codegen(e.to_string()))?;
    let code = module.get_finalized_function(id);
    // SAFETY: the function was defined with exactly this signature (clif::signature).
    let entry = unsafe { std::mem::transmute::<*const u8, KernelFn>(code) };
    Ok(JitKernel { module: Some(module), entry, nest })
}

/// Pointers handed to worker threads.
#[derive(Clone, Copy)]
struct Args {
    buffers: *const *const u8,
    out: *mut u8,
}
// SAFETY: workers write disjoint output ranges and only read the inputs.
unsafe impl Send for Args {}
unsafe impl Sync for Args {}

impl JitKernel {
    /// The kernel's Cranelift IR (`slc plan --clif`): built again on request, so that
    /// compiling does not pay for text nobody reads.
    pub fn clif(&self) -> String {
        host_isa().map_or_else(|e| e.to_string(), |isa| clif::kernel_ir(&*isa, &self.nest))
    }

    /// Runs the kernel into a fresh output tensor.
    pub fn run(&self, plan: &Plan, inputs: &[&Tensor], threads: usize) -> Result<Tensor, RuntimeError> {
        let dims: Vec<usize> = plan.shape.iter().map(|&d| d as usize).collect();
        let mut out = Tensor::for_overwrite(plan.dtype, &dims)?;
        self.run_into(plan, inputs, &mut out, threads)?;
        Ok(out)
    }

    /// Runs the kernel into the caller's output tensor, which must have the plan's dtype and
    /// shape.
    pub fn run_into(
        &self,
        plan: &Plan,
        inputs: &[&Tensor],
        out: &mut Tensor,
        threads: usize,
    ) -> Result<(), RuntimeError> {
        check_inputs(plan, inputs)?;
        let shape: Vec<i64> = out.shape().iter().map(|&d| d as i64).collect();
        if out.dtype() != plan.dtype || shape != plan.shape {
            return Err(RuntimeError::InputMismatch {
                name: "the output".into(),
                expected: format!("{}{}", plan.dtype, crate::sema::typed::ShapeDisplay(&plan.shape)),
                found: format!("{}{}", out.dtype(), crate::sema::typed::ShapeDisplay(&shape)),
            });
        }
        run_checks(plan, inputs)?;
        if self.nest.empty {
            return Ok(());
        }
        let buffers: Vec<*const u8> =
            inputs.iter().map(|t| t.as_ptr()).chain(plan.consts.iter().map(|c| c.tensor.as_ptr())).collect();
        let args = Args { buffers: buffers.as_ptr(), out: out.as_mut_ptr() };
        let outer = self.nest.outer_extent();
        let workers =
            if out.nbytes() >= PARALLEL_MIN_BYTES { threads.clamp(1, outer.max(1) as usize) } else { 1 };
        let call = |begin: i64, end: i64| -> i32 {
            let a = args;
            // SAFETY: the plan was verified, the buffers match its declarations (check_inputs),
            // and [begin, end) lies within the outer loop.
            unsafe { (self.entry)(a.buffers, a.out, begin, end) }
        };
        let status =
            if workers <= 1 { call(0, outer) } else { super::split_across_threads(outer, workers, &call) };
        match status {
            STATUS_OK => Ok(()),
            STATUS_EMPTY_AXIS => Err(RuntimeError::EmptyAxis),
            _ => Err(RuntimeError::GatherOutOfRange),
        }
    }
}

/// Compiled kernels by plan: the same expression on same-shaped inputs compiles once.
#[derive(Default)]
pub struct KernelCache {
    kernels: Mutex<HashMap<String, Arc<JitKernel>>>,
}

impl KernelCache {
    pub fn get_or_compile(&self, plan: &Plan, proof: &PlanInfo) -> Result<Arc<JitKernel>, JitError> {
        let key = plan.to_string();
        if let Some(k) = self.kernels.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
            return Ok(k.clone());
        }
        // Compile outside the lock: another thread may compile the same plan meanwhile; the
        // first to insert wins and both results are correct.
        let kernel = Arc::new(compile(plan, proof)?);
        let mut map = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        Ok(map.entry(key).or_insert(kernel).clone())
    }

    pub fn len(&self) -> usize {
        self.kernels.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}
