//! The Cranelift JIT: a verified plan's kernels compiled into a `JITModule`, cached by plan and
//! input order, and run on one or more threads (each a slice of the outermost loop). One kernel
//! type ([`JitKernel`], `kernel.rs`) serves every plan: one with nothing to bind (all integers
//! constants) runs its entry ([`clif::define_entry`]: the range and index checks, then the
//! kernel, specialized to the plan's shapes, strides and element width); one with symbols binds
//! them per call. Sessions, prepared kernels, the REPL and `slc bench` all run machine code
//! through here, so the Rust API, the C ABI and AOT objects share one code path.

use super::RuntimeError;
use super::clif::{self, STATUS_BAD_RANGE, STATUS_EMPTY_AXIS, STATUS_INDEX_OUT_OF_RANGE};
use super::loopnest::{self, LoopNest};
use crate::plan::{Plan, VerifiedGenericPlan};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::default_libcall_names;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

mod kernel;
mod symbols;

pub use kernel::{JitKernel, compile};

/// Outputs smaller than this run on the calling thread only.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

type EntryFn = unsafe extern "C" fn(*const *const u8, *mut u8, i64, i64) -> i32;
/// A nest's kernel with symbolic integers: [`EntryFn`] and the parameter block
/// (`clif::generic_signature`).
type GenericFn = unsafe extern "C" fn(*const *const u8, *mut u8, i64, i64, *const i64) -> i32;

/// Compiled code of either signature.
#[derive(Clone, Copy)]
enum KernelFn {
    Concrete(EntryFn),
    Generic(GenericFn),
}

impl KernelFn {
    /// The function at `code`, defined with the signature of `nest`'s kernel.
    ///
    /// # Safety
    /// `code` is the finalized code of `nest`'s kernel ([`clif::define_kernel`]).
    unsafe fn of_kernel(code: *const u8, nest: &LoopNest) -> KernelFn {
        // SAFETY: the caller's guarantee; define_kernel gives it clif::kernel_signature(nest).
        unsafe {
            if nest.takes_params() {
                KernelFn::Generic(std::mem::transmute::<*const u8, GenericFn>(code))
            } else {
                KernelFn::Concrete(std::mem::transmute::<*const u8, EntryFn>(code))
            }
        }
    }

    /// # Safety
    /// As for the kernel: `args` hold its buffer table, an output for its range, and (generic)
    /// its parameter block for the shapes of the call.
    unsafe fn call(self, args: CallArgs, begin: i64, end: i64) -> i32 {
        // SAFETY: the caller's guarantees.
        let status = unsafe {
            match self {
                KernelFn::Concrete(f) => f(args.table, args.out, begin, end),
                KernelFn::Generic(f) => f(args.table, args.out, begin, end, args.params),
            }
        };
        symbols::fence_streamed_stores();
        status
    }

    /// Runs `[0, outer)` on `workers` threads (each a contiguous part), or on the calling thread.
    ///
    /// # Safety
    /// As for [`KernelFn::call`] over `[0, outer)`.
    unsafe fn run_split(self, args: CallArgs, outer: i64, workers: usize) -> i32 {
        if workers <= 1 {
            // SAFETY: the caller's guarantees, over the whole range.
            return unsafe { self.call(args, 0, outer) };
        }
        // SAFETY: as for the single-threaded call, over [b, e) ⊆ [0, outer): workers only read
        // the inputs and write disjoint ranges of the output.
        let part = move |b: i64, e: i64| unsafe { self.call(args, b, e) };
        super::split_across_threads(outer, workers, &part)
    }
}

/// The pointers a kernel call takes, shareable with worker threads.
#[derive(Clone, Copy)]
struct CallArgs {
    table: *const *const u8,
    out: *mut u8,
    /// The parameter block of a generic kernel (null for a concrete one).
    params: *const i64,
}

// SAFETY: workers only read the inputs and the parameters and write disjoint ranges of the output.
unsafe impl Send for CallArgs {}
unsafe impl Sync for CallArgs {}

/// The threads a call with `threads` allowed splits an output of `out_nbytes` across, for an
/// outer range of `outer`: outputs under 1 MiB are not worth a thread.
pub(crate) fn workers(outer: i64, out_nbytes: usize, threads: usize) -> usize {
    if threads > 1 && out_nbytes >= PARALLEL_MIN_BYTES { threads.min(outer.max(1) as usize) } else { 1 }
}

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

/// What the JIT's code generator can do on this machine, for the scheduler (`slc plan
/// --dump-after`, `:plan -v` show the nests the JIT compiles); a machine the JIT does not
/// support gets the most conservative target.
pub fn host_target() -> loopnest::Target {
    host_isa().map(|isa| clif::target(&*isa)).unwrap_or_default()
}

/// The plan's loop nest and the Cranelift IR of its kernel (`slc plan --clif`, `:clif`).
pub fn kernel_ir(plan: &VerifiedGenericPlan) -> Result<(LoopNest, String), JitError> {
    let isa = host_isa()?;
    crate::limits::with_stack_for(plan.nesting(), || {
        let nest = loopnest::schedule_generic(plan, clif::target(&*isa), |_, _| {});
        let ir = clif::kernel_ir(&*isa, &nest);
        Ok((nest, ir))
    })
}

/// The finalized code of a module, released when dropped (with whatever points into it).
struct Code(Option<JITModule>);

// SAFETY: the module is only touched again in Drop; the code it owns is immutable.
unsafe impl Send for Code {}
unsafe impl Sync for Code {}

impl Drop for Code {
    fn drop(&mut self) {
        if let Some(module) = self.0.take() {
            // SAFETY: the kernels that own this are being dropped: nothing calls into it again.
            unsafe { module.free_memory() };
        }
    }
}

/// A fresh module for the host, `define`d and finalized; `define`'s result says what to call.
fn build<T, E: std::fmt::Display>(
    define: impl FnOnce(&mut JITModule) -> Result<T, E>,
) -> Result<(Code, T), JitError> {
    let codegen = |e: &dyn std::fmt::Display| JitError::Codegen(e.to_string());
    let mut builder = JITBuilder::with_isa(host_isa()?, default_libcall_names());
    symbols::provide(&mut builder);
    let mut module = JITModule::new(builder);
    let defined = define(&mut module).map_err(|e| codegen(&e));
    match defined.and_then(|d| module.finalize_definitions().map(|()| d).map_err(|e| codegen(&e))) {
        Ok(d) => Ok((Code(Some(module)), d)),
        Err(e) => {
            // SAFETY: nothing of the module is reachable.
            unsafe { module.free_memory() };
            Err(e)
        }
    }
}

impl Code {
    fn function(&self, id: cranelift_module::FuncId) -> *const u8 {
        self.0.as_ref().expect("code is owned until dropped").get_finalized_function(id)
    }
}

/// The input order of a caller that passes inputs as the plan declares them.
pub fn plan_order<D>(plan: &Plan<D>) -> Vec<usize> {
    (0..plan.inputs.len()).collect()
}

/// The error of a kernel status other than OK, where the interpreter (which says more) could
/// not tell.
pub fn status_error(status: i32) -> RuntimeError {
    match status {
        STATUS_EMPTY_AXIS => RuntimeError::EmptyAxis,
        STATUS_INDEX_OUT_OF_RANGE => RuntimeError::GatherOutOfRange,
        STATUS_BAD_RANGE => RuntimeError::OutOfBuffer { address: -1, len: 0 },
        _ => RuntimeError::GatherOutOfRange,
    }
}

/// Compiled kernels by plan and input order: the same expression on same-shaped inputs compiles
/// once, and programs that lower to the same plan share machine code (`a[::-1]`, `a[-1::-1]`).
/// A plan with symbols is symbolic text: one kernel serves every shape.
#[derive(Default)]
pub struct KernelCache {
    kernels: Mutex<HashMap<String, Arc<JitKernel>>>,
    compiles: AtomicUsize,
}

impl KernelCache {
    /// The kernel of `plan` for inputs in `order`, compiled on its first request. Compiled
    /// outside the lock, so that other plans need not wait; a race compiles twice and keeps the
    /// first.
    pub fn get_or_compile(
        &self,
        plan: &VerifiedGenericPlan,
        order: &[usize],
    ) -> Result<Arc<JitKernel>, JitError> {
        // Printing recurses once per nested index access.
        let key = crate::limits::with_stack_for(plan.nesting(), || format!("{}{order:?}", plan.plan()));
        if let Some(k) = self.lock().get(&key) {
            return Ok(k.clone());
        }
        let kernel = Arc::new(compile(plan, order)?);
        self.compiles.fetch_add(1, Ordering::Relaxed);
        Ok(self.lock().entry(key).or_insert(kernel).clone())
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<JitKernel>>> {
        self.kernels.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many kernels this cache has compiled.
    pub fn compiles(&self) -> usize {
        self.compiles.load(Ordering::Relaxed)
    }

    /// The kernels held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&self) {
        self.lock().clear();
    }
}
