//! The Cranelift JIT: a verified plan's entry ([`clif::define_entry`]: the range and index
//! checks, then the kernel, specialized to the plan's shapes, strides and element width) compiled
//! into a `JITModule`, cached by plan and input order, and run on one or more threads (each a
//! slice of the outermost loop). Sessions, prepared kernels, the REPL and `slc bench` all run
//! machine code through here, so the Rust API, the C ABI and AOT objects share one code path.

use super::clif::{self, STATUS_BAD_RANGE, STATUS_EMPTY_AXIS, STATUS_INDEX_OUT_OF_RANGE, STATUS_OK};
use super::loopnest::{self, LoopNest};
use super::{RuntimeError, check_inputs, interp};
use crate::plan::{Plan, VerifiedGenericPlan, VerifiedPlan};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_jit::{JITBuilder, JITModule};
use cranelift_module::{Linkage, Module, default_libcall_names};
use slc_runtime::Tensor;
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

mod generic;

pub use generic::GenericJitKernel;

/// Outputs smaller than this run on the calling thread only.
const PARALLEL_MIN_BYTES: usize = 1 << 20;

type EntryFn = unsafe extern "C" fn(*const *const u8, *mut u8, i64, i64) -> i32;
/// A generic nest's kernel: [`EntryFn`] and the parameter block (`clif::generic_signature`).
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
        unsafe {
            match self {
                KernelFn::Concrete(f) => f(args.table, args.out, begin, end),
                KernelFn::Generic(f) => f(args.table, args.out, begin, end, args.params),
            }
        }
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
pub fn kernel_ir(plan: &VerifiedPlan) -> Result<(LoopNest, String), JitError> {
    let isa = host_isa()?;
    crate::limits::with_stack_for(plan.nesting(), || {
        let nest = loopnest::schedule(plan, clif::target(&*isa), |_, _| {});
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
fn build<T>(
    define: impl FnOnce(&mut JITModule) -> Result<T, clif::CodegenError>,
) -> Result<(Code, T), JitError> {
    let codegen = |e: &dyn std::fmt::Display| JitError::Codegen(e.to_string());
    let mut module = JITModule::new(JITBuilder::with_isa(host_isa()?, default_libcall_names()));
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

/// A plan's compiled entry. Owns its code; the memory is released when the kernel is dropped.
pub struct JitKernel {
    /// Points into `code`.
    entry: EntryFn,
    /// The entry's range: `[0, outer)`.
    outer: i64,
    _code: Code,
}

impl std::fmt::Debug for JitKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "JitKernel(outer {})", self.outer)
    }
}

/// The input order of a caller that passes inputs as the plan declares them.
pub fn plan_order(plan: &Plan) -> Vec<usize> {
    (0..plan.inputs.len()).collect()
}

/// Compiles a verified plan (kernels do not check addresses: verification proved them) for inputs
/// passed in `order` (for each plan input, its position among the caller's).
pub fn compile(plan: &VerifiedPlan, order: &[usize]) -> Result<JitKernel, JitError> {
    // Cranelift's passes take a deep stack in unoptimized builds; code generation recurses once
    // per nested index access.
    crate::limits::with_stack_for(plan.nesting(), || compile_in_place(plan, order))
}

fn compile_in_place(plan: &VerifiedPlan, order: &[usize]) -> Result<JitKernel, JitError> {
    let pass_through =
        plan.checks.is_empty() && plan.consts.is_empty() && order.iter().enumerate().all(|(p, &o)| p == o);
    let (code, (id, outer)) = build(|module| {
        if pass_through {
            // The entry would only check the range, which `call` always passes valid: the kernel
            // itself is the entry (a function less to compile, a third of a cold compile).
            let nest = loopnest::schedule(plan, clif::target(module.isa()), |_, _| {});
            let outer = nest.outer_extent().as_const().expect("a concrete plan's nest is concrete");
            clif::define_kernel(module, "slc_entry", Linkage::Local, &nest).map(|id| (id, outer))
        } else {
            clif::define_entry(module, "slc_entry", Linkage::Local, plan, order).map(|e| (e.id, e.outer))
        }
    })?;
    // SAFETY: the entry was defined with exactly this signature (clif::signature).
    let entry = unsafe { std::mem::transmute::<*const u8, EntryFn>(code.function(id)) };
    Ok(JitKernel { entry, outer, _code: code })
}

impl JitKernel {
    /// The threads a call with `threads` allowed splits an output of `out_nbytes` across:
    /// outputs under 1 MiB are not worth a thread.
    pub fn workers(&self, out_nbytes: usize, threads: usize) -> usize {
        workers(self.outer, out_nbytes, threads)
    }

    /// Runs the entry over its whole range into `out` (`out_nbytes` bytes), on up to `threads`
    /// workers for large outputs, and returns its status.
    ///
    /// # Safety
    /// `table` holds, per plan input in the order the kernel was compiled for, a pointer to
    /// element `[0, ..., 0]` of a readable input of the declared dtype, shape and strides (every
    /// element of its window readable); `out` has `out_nbytes` writable bytes, the
    /// plan's output size.
    #[inline]
    pub unsafe fn call(&self, table: &[*const u8], out: *mut u8, out_nbytes: usize, threads: usize) -> i32 {
        let args = CallArgs { table: table.as_ptr(), out, params: std::ptr::null() };
        let workers = self.workers(out_nbytes, threads);
        // SAFETY: the caller's guarantees, over the entry's full range.
        unsafe { KernelFn::Concrete(self.entry).run_split(args, self.outer, workers) }
    }

    /// Runs the kernel (compiled for [`plan_order`]) into a fresh output tensor.
    pub fn run(
        &self,
        plan: &VerifiedPlan,
        inputs: &[&Tensor],
        threads: usize,
    ) -> Result<Tensor, RuntimeError> {
        let dims: Vec<usize> = plan.shape.iter().map(|&d| d as usize).collect();
        let mut out = Tensor::for_overwrite(plan.dtype, &dims)?;
        self.run_into(plan, inputs, &mut out, threads)?;
        Ok(out)
    }

    /// Runs the kernel (compiled for [`plan_order`]) into the caller's output tensor, which
    /// must have the plan's dtype and shape.
    pub fn run_into(
        &self,
        plan: &VerifiedPlan,
        inputs: &[&Tensor],
        out: &mut Tensor,
        threads: usize,
    ) -> Result<(), RuntimeError> {
        check_inputs(plan, inputs)?;
        let shape: Vec<i64> = out.shape().iter().map(|&d| d as i64).collect();
        if out.dtype() != plan.dtype || shape != plan.shape {
            return Err(RuntimeError::InputMismatch {
                name: "the output".into(),
                expected: format!("{}{}", plan.dtype, crate::types::ShapeDisplay(&plan.shape)),
                found: format!("{}{}", out.dtype(), crate::types::ShapeDisplay(&shape)),
            });
        }
        // Kernels address a strided input from its element [0, ..., 0], inside its window.
        let table: Vec<*const u8> = (plan.inputs.iter().zip(inputs))
            .map(|(decl, t)| {
                let first = if decl.strides.is_some() { decl.window().map_or(0, |w| w.0) } else { 0 };
                t.as_ptr().wrapping_offset((-first * decl.dtype.width() as i64) as isize)
            })
            .collect();
        let nbytes = out.nbytes();
        // SAFETY: the inputs match the plan's declarations (check_inputs): dense tensors, or the
        // windows of strided inputs, in plan order; `out` is a tensor of the plan's output type.
        match unsafe { self.call(&table, out.as_mut_ptr(), nbytes, threads) } {
            STATUS_OK => Ok(()),
            // The interpreter names the offending value and its check.
            status => Err(interp::run(plan, inputs).err().unwrap_or_else(|| status_error(status))),
        }
    }
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
/// Generic kernels are keyed by their plan alone, which is symbolic: one serves every shape.
#[derive(Default)]
pub struct KernelCache {
    kernels: Mutex<HashMap<String, Arc<JitKernel>>>,
    generic: Mutex<HashMap<String, Arc<GenericJitKernel>>>,
    compiles: AtomicUsize,
}

/// The kernel under `key` in `map`, compiled by `compile` on a miss (counted in `compiles`).
/// Compiled outside the lock, so that other plans need not wait; a race compiles twice and
/// keeps the first.
fn cached<K>(
    map: &Mutex<HashMap<String, Arc<K>>>,
    compiles: &AtomicUsize,
    key: String,
    compile: impl FnOnce() -> Result<K, JitError>,
) -> Result<Arc<K>, JitError> {
    if let Some(k) = map.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(k.clone());
    }
    let kernel = Arc::new(compile()?);
    compiles.fetch_add(1, Ordering::Relaxed);
    Ok(map.lock().unwrap_or_else(|e| e.into_inner()).entry(key).or_insert(kernel).clone())
}

impl KernelCache {
    pub fn get_or_compile(&self, plan: &VerifiedPlan, order: &[usize]) -> Result<Arc<JitKernel>, JitError> {
        cached(&self.kernels, &self.compiles, format!("{plan}{order:?}"), || compile(plan, order))
    }

    /// The generic kernel of `plan`, compiled on its first request.
    pub fn get_or_compile_generic(
        &self,
        plan: &VerifiedGenericPlan,
    ) -> Result<Arc<GenericJitKernel>, JitError> {
        cached(&self.generic, &self.compiles, generic::cache_key(plan), || GenericJitKernel::compile(plan))
    }

    /// How many kernels this cache has compiled, concrete and generic.
    pub fn compiles(&self) -> usize {
        self.compiles.load(Ordering::Relaxed)
    }

    /// The kernels held, concrete and generic.
    pub fn len(&self) -> usize {
        self.kernels.lock().unwrap_or_else(|e| e.into_inner()).len()
            + self.generic.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn clear(&self) {
        self.kernels.lock().unwrap_or_else(|e| e.into_inner()).clear();
        self.generic.lock().unwrap_or_else(|e| e.into_inner()).clear();
    }
}
