//! The one JIT kernel type: a verified generic plan compiled once, for the caller's input order.
//!
//! - A plan with nothing to bind (every integer a constant: a concrete plan lifted, or a generic
//!   one without symbols) compiles its entry (`clif::define_entry`, the concrete ABI: the index
//!   checks, then the main kernel, every integer an immediate). A call compares the inputs'
//!   dtypes and dims with the plan's, fills the pointer table on the stack and calls: no
//!   binding, no parameter block.
//! - A plan with symbols compiles its nests (the output's and one per index check that may check
//!   anything) and binds per call: the plan's symbols from the inputs' dims and run-time
//!   scalars, its requirements checked, each nest's parameter block (`LoopNest::params`)
//!   evaluated with `eval_i64`'s checked arithmetic. Each thread keeps the last bindings of the
//!   kernels it ran (no lock, no reference count on the way to the kernel), so a call with the
//!   dims and scalars of one before costs a comparison.
//!
//! Either way the checks run first, then the output over `[0, outer)`, split across threads for
//! large outputs; a failed status is reported as the interpreter reports it.

mod bound;
mod store;

use super::{CallArgs, Code, EntryFn, JitError, KernelFn, build, workers};
use crate::backend::clif;
use crate::backend::loopnest;
use crate::backend::{DenseInput, RuntimeError, interp};
use crate::plan::{BufferId, VerifiedGenericPlan, VerifiedPlan, verify};
use crate::types::ShapeDisplay;
use crate::types::sym::Env;
use bound::{Bound, Parts, compile_parts};
use cranelift_module::{Linkage, Module};
use slc_runtime::{DType, Tensor};
use store::StoreCall;

/// Buffer tables of up to this many pointers are built on the stack.
const FEW_BUFFERS: usize = 8;

/// A verified plan's compiled code (see the module doc). Owns its code; the memory is released
/// when the kernel is dropped.
pub struct JitKernel {
    plan: VerifiedGenericPlan,
    calls: Calls,
    /// Owns the code `calls` points into.
    _code: Code,
}

impl std::fmt::Debug for JitKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.calls {
            Calls::Fixed(fixed) => write!(f, "JitKernel(outer {})", fixed.outer),
            Calls::Bound(parts) => write!(f, "JitKernel(symbolic, {} checks)", parts.checks()),
        }
    }
}

/// How a call runs the code.
enum Calls {
    Fixed(Fixed),
    Bound(Parts),
}

/// A plan with nothing to bind: its entry, and what a call checks the inputs against.
struct Fixed {
    entry: EntryFn,
    /// The entry's range: `[0, outer)`.
    outer: i64,
    shape: Vec<usize>,
    /// Per plan input, the tensor that carries it.
    inputs: Vec<FixedInput>,
    /// The table slot of each plan input (the order the entry was compiled for); `None` when it
    /// is the plan's own.
    order: Option<Vec<usize>>,
    /// A store plan's copy and destination, around each call of the entry.
    store: Option<StoreCall>,
}

impl Fixed {
    /// The workers a call on up to `threads` takes: sized by the bytes it writes, the output's
    /// (`out_nbytes`) or a store's updates'.
    fn workers(&self, out_nbytes: usize, threads: usize) -> usize {
        workers(self.outer, self.store.as_ref().map_or(out_nbytes, |s| s.update_bytes), threads)
    }
}

struct FixedInput {
    dtype: DType,
    /// A dense input's dims; a strided view's window, as one axis.
    dims: Vec<usize>,
    /// The bytes from the tensor's first element to element `[0, ..., 0]`, which accesses count
    /// from (negative for a view with negative strides).
    first: isize,
}

/// One call, its inputs checked: what it runs.
#[derive(Clone, Copy)]
enum Call<'a> {
    Fixed(&'a Fixed),
    Bound(&'a Parts, &'a Bound),
}

impl Call<'_> {
    /// The output's dims.
    fn shape(&self) -> &[usize] {
        match self {
            Call::Fixed(fixed) => &fixed.shape,
            Call::Bound(_, bound) => &bound.shape,
        }
    }
}

/// Compiles a verified plan (kernels do not check addresses: verification proved them) for a
/// caller whose inputs are in `order` (for each plan input, its position among the caller's;
/// it orders the table of [`JitKernel::call`]; the other calls take inputs in plan order).
pub fn compile(plan: &VerifiedGenericPlan, order: &[usize]) -> Result<JitKernel, JitError> {
    // Cranelift's passes take a deep stack in unoptimized builds; code generation recurses once
    // per nested index access.
    crate::limits::with_stack_for(plan.nesting(), || {
        // A plan without symbols is verified as the concrete plan it is (a lifted plan again):
        // that bounds every byte offset the entry holds as an immediate.
        let concrete = plan.binds_nothing().then(|| plan.concrete().map(verify)).flatten();
        match concrete {
            Some(Ok(concrete)) => compile_fixed(plan, &concrete, order),
            _ => compile_parts(plan),
        }
    })
}

fn compile_fixed(
    plan: &VerifiedGenericPlan,
    concrete: &VerifiedPlan,
    order: &[usize],
) -> Result<JitKernel, JitError> {
    let identity = order.iter().enumerate().all(|(p, &o)| p == o);
    let store = store::store_call(plan, concrete, (!identity).then_some(order))?;
    let pass_through = plan.checks.is_empty() && plan.consts.is_empty() && identity;
    let not_const =
        || JitError::Codegen("the outer extent of a plan without symbols is not a constant".into());
    let (code, (id, outer)) = build(|module| -> Result<_, String> {
        let (id, nest) = if pass_through {
            // The entry would only check the range, which `call` always passes valid: the kernel
            // itself is the entry (a function less to compile, a third of a cold compile).
            let nest = loopnest::schedule_generic(plan, clif::target(module.isa()), |_, _| {});
            let id =
                clif::define_kernel(module, "slc_entry", Linkage::Local, &nest).map_err(|e| e.to_string())?;
            (id, nest)
        } else {
            let entry = clif::define_entry(
                module,
                "slc_entry",
                Linkage::Local,
                plan,
                order,
                &plan.inputs,
                clif::StoreEntry::Prepared,
            )
            .map_err(|e| e.to_string())?;
            (entry.id, entry.nest)
        };
        Ok((id, nest.outer_extent().as_const()))
    })?;
    let outer = outer.ok_or_else(not_const)?;
    // SAFETY: the entry (or the kernel standing for it) has exactly this signature: a plan
    // without symbols has no parameter block (clif::signature).
    let entry = unsafe { std::mem::transmute::<*const u8, EntryFn>(code.function(id)) };
    let inputs = concrete
        .inputs
        .iter()
        .map(|decl| {
            let first = if decl.strides.is_some() { decl.window().map_or(0, |w| w.0) } else { 0 };
            FixedInput {
                dtype: decl.dtype,
                dims: decl.tensor_shape().iter().map(|&d| d as usize).collect(),
                first: (-first * decl.dtype.width() as i64) as isize,
            }
        })
        .collect();
    let fixed = Fixed {
        entry,
        outer,
        shape: concrete.shape.iter().map(|&d| d as usize).collect(),
        inputs,
        order: (!identity).then(|| order.to_vec()),
        store,
    };
    Ok(JitKernel { plan: plan.clone(), calls: Calls::Fixed(fixed), _code: code })
}

/// `f` of a buffer table of `n` pointers, `fill`ed: on the stack for the common few buffers
/// (a call costs tens of ns).
#[inline]
fn with_table<R>(n: usize, fill: impl FnOnce(&mut [*const u8]), f: impl FnOnce(&[*const u8]) -> R) -> R {
    let mut few = [std::ptr::null::<u8>(); FEW_BUFFERS];
    let mut many: Vec<*const u8>;
    let table: &mut [*const u8] = if n <= FEW_BUFFERS {
        &mut few[..n]
    } else {
        many = vec![std::ptr::null(); n];
        &mut many
    };
    fill(table);
    f(table)
}

impl JitKernel {
    pub fn plan(&self) -> &VerifiedGenericPlan {
        &self.plan
    }

    /// Whether a call binds symbols (the plan has some); otherwise it runs the entry as compiled.
    pub fn binds(&self) -> bool {
        matches!(self.calls, Calls::Bound(..))
    }

    /// The threads a call with `threads` allowed splits an output of `out_nbytes` across (a
    /// store's, its updates): outputs under 1 MiB are not worth a thread (with symbols, the
    /// outer extent is a call's).
    pub fn workers(&self, out_nbytes: usize, threads: usize) -> usize {
        match &self.calls {
            Calls::Fixed(fixed) => fixed.workers(out_nbytes, threads),
            Calls::Bound(..) => workers(i64::MAX, out_nbytes, threads),
        }
    }

    /// Runs the entry of a kernel without symbols over its whole range into `out` (`out_nbytes`
    /// bytes), on up to `threads` workers for large outputs, and returns its status; a kernel
    /// with symbols (it needs the dims) returns `STATUS_SHAPE_MISMATCH` and runs nothing.
    ///
    /// # Safety
    /// `table` holds, per input of the caller in the order the kernel was compiled for, a
    /// pointer to element `[0, ..., 0]` of a readable input of the declared dtype, shape and
    /// strides (every element of its window readable); `out` has `out_nbytes` writable bytes,
    /// the plan's output size.
    #[inline]
    pub unsafe fn call(&self, table: &[*const u8], out: *mut u8, out_nbytes: usize, threads: usize) -> i32 {
        let Calls::Fixed(fixed) = &self.calls else { return clif::STATUS_SHAPE_MISMATCH };
        // SAFETY: the caller's guarantees.
        unsafe { call_fixed(fixed, table, out, out_nbytes, threads) }
    }

    /// The output's dims for `inputs` (in plan order), or why the kernel does not take them.
    pub fn output_shape<I: DenseInput>(&self, inputs: &[I]) -> Result<Vec<usize>, RuntimeError> {
        self.with_call(inputs, |call| Ok(call.shape().to_vec()))
    }

    /// Runs the kernel on `inputs` (in plan order; a strided input's window) into a fresh
    /// output tensor, on up to `threads` workers for large outputs.
    pub fn run<I: DenseInput>(&self, inputs: &[I], threads: usize) -> Result<Tensor, RuntimeError> {
        self.with_call(inputs, |call| {
            let mut out = Tensor::for_overwrite(self.plan.dtype, call.shape())?;
            self.execute(call, inputs, out.bytes_mut(), threads)?;
            Ok(out)
        })
    }

    /// Runs the kernel into the caller's output tensor, which must have the plan's dtype and
    /// the shape the inputs give.
    #[inline]
    pub fn run_into<I: DenseInput>(
        &self,
        inputs: &[I],
        out: &mut Tensor,
        threads: usize,
    ) -> Result<(), RuntimeError> {
        self.with_call(inputs, |call| {
            if out.dtype() != self.plan.dtype || out.shape() != call.shape() {
                return Err(
                    self.output_mismatch(call.shape(), &format!("{}{}", out.dtype(), dims(out.shape())))
                );
            }
            self.execute(call, inputs, out.bytes_mut(), threads)
        })
    }

    /// Runs the kernel into the caller's bytes, which must be exactly the output's for the
    /// shape the inputs give (dense, C order).
    pub fn run_into_bytes<I: DenseInput>(
        &self,
        inputs: &[I],
        out: &mut [u8],
        threads: usize,
    ) -> Result<(), RuntimeError> {
        self.with_call(inputs, |call| {
            let expected = Tensor::byte_size(self.plan.dtype, call.shape()).unwrap_or(usize::MAX);
            if out.len() != expected {
                return Err(RuntimeError::InputMismatch {
                    name: "the output".into(),
                    expected: format!("{expected} bytes"),
                    found: format!("{} bytes", out.len()),
                });
            }
            self.execute(call, inputs, out, threads)
        })
    }

    /// The one output check's error: the output is not of the dtype and `shape` a call gives.
    #[cold]
    fn output_mismatch(&self, shape: &[usize], found: &str) -> RuntimeError {
        RuntimeError::InputMismatch {
            name: "the output".into(),
            expected: format!("{}{}", self.plan.dtype, dims(shape)),
            found: found.to_string(),
        }
    }

    /// `f` of the call `inputs` make, checked: against the plan's dims, or bound.
    #[inline]
    fn with_call<I: DenseInput, R>(
        &self,
        inputs: &[I],
        f: impl FnOnce(Call<'_>) -> Result<R, RuntimeError>,
    ) -> Result<R, RuntimeError> {
        match &self.calls {
            Calls::Fixed(fixed) => {
                let fits = inputs.len() == fixed.inputs.len()
                    && inputs
                        .iter()
                        .zip(&fixed.inputs)
                        .all(|(t, i)| t.dtype() == i.dtype && t.shape() == i.dims);
                if !fits {
                    return Err(self.fixed_mismatch(fixed, inputs));
                }
                f(Call::Fixed(fixed))
            }
            Calls::Bound(parts) => self.with_bound(parts, inputs, |bound| f(Call::Bound(parts, bound))),
        }
    }

    /// Why `inputs` do not fit a kernel without symbols.
    #[cold]
    fn fixed_mismatch<I: DenseInput>(&self, fixed: &Fixed, inputs: &[I]) -> RuntimeError {
        if inputs.len() != fixed.inputs.len() {
            return RuntimeError::InputCount { expected: fixed.inputs.len(), found: inputs.len() };
        }
        let p =
            inputs.iter().zip(&fixed.inputs).position(|(t, i)| t.dtype() != i.dtype || t.shape() != i.dims);
        let Some(p) = p else {
            return RuntimeError::InputCount { expected: fixed.inputs.len(), found: inputs.len() };
        };
        let decl = &self.plan.inputs[p];
        let strided = if decl.strides.is_some() { " (the window of a strided view)" } else { "" };
        RuntimeError::InputMismatch {
            name: decl.name.clone(),
            expected: format!("{}{}{strided}", decl.dtype, dims(&fixed.inputs[p].dims)),
            found: format!("{}{}", inputs[p].dtype(), dims(inputs[p].shape())),
        }
    }

    /// Runs the kernel into the caller's bytes once `check` accepts the output's dims for
    /// `inputs` (it must check that `out` holds exactly that output): one binding for both.
    #[inline]
    pub fn run_into_checked<I: DenseInput, E>(
        &self,
        inputs: &[I],
        out: &mut [u8],
        threads: usize,
        check: impl FnOnce(&[usize]) -> Result<(), E>,
    ) -> Result<Result<(), E>, RuntimeError> {
        self.with_call(inputs, |call| match check(call.shape()) {
            Err(e) => Ok(Err(e)),
            Ok(()) => self.execute(call, inputs, out, threads).map(Ok),
        })
    }

    /// Runs `call` on `inputs` into `out` (checked: the output's bytes for the call).
    fn execute<I: DenseInput>(
        &self,
        call: Call<'_>,
        inputs: &[I],
        out: &mut [u8],
        threads: usize,
    ) -> Result<(), RuntimeError> {
        let status = match call {
            // SAFETY: the inputs match the plan's declarations (`with_call`); `out` holds the
            // output and, a safe borrow, overlaps no input.
            Call::Fixed(fixed) => unsafe { run_fixed(fixed, inputs, out.as_mut_ptr(), out.len(), threads) },
            // SAFETY: as above.
            Call::Bound(parts, bound) => unsafe {
                self.run_bound(parts, bound, inputs, out.as_mut_ptr(), out.len(), threads)
            },
        };
        match status {
            clif::STATUS_OK => Ok(()),
            status => Err(self.failure(inputs, status)),
        }
    }

    /// Runs a store plan in place: the update nest writes the target input's own bytes, which
    /// are not copied first (NumPy's `x[i] = v`). `None` when this kernel cannot: it has no
    /// store, its value or indices read the target, or another input overlaps the target; the
    /// caller then runs it into a separate output.
    ///
    /// # Safety
    /// `inputs` as for [`JitKernel::run`]; the target input's bytes are writable, and nothing
    /// else reads or writes them during the call.
    pub unsafe fn store_in_place<I: DenseInput>(
        &self,
        inputs: &[I],
        threads: usize,
    ) -> Option<Result<(), RuntimeError>> {
        let BufferId::Input(target) = self.plan.output.buffer else { return None };
        let span = |t: &I| (t.as_ptr() as usize, t.as_ptr() as usize + t.bytes().len());
        let written = span(inputs.get(target)?);
        let overlaps = (inputs.iter().enumerate())
            .any(|(i, t)| i != target && span(t).0 < written.1 && written.0 < span(t).1);
        if !self.stores_in_place() || overlaps {
            return None;
        }
        Some(self.with_call(inputs, |call| {
            let out = inputs[target].as_ptr().cast_mut();
            let nbytes = written.1 - written.0;
            // SAFETY: the inputs match the plan's declarations (`with_call`: the target has the
            // output's dtype and shape); the output is the dense target, writable (the caller's
            // word), and the update nest reads no byte of it (`in_place`).
            let status = unsafe {
                match call {
                    Call::Fixed(fixed) => run_fixed(fixed, inputs, out, nbytes, threads),
                    Call::Bound(parts, bound) => self.run_bound(parts, bound, inputs, out, nbytes, threads),
                }
            };
            match status {
                clif::STATUS_OK => Ok(()),
                status => Err(self.failure(inputs, status)),
            }
        }))
    }

    /// Whether this kernel has a store that may write its target in place: its update reads no
    /// byte of the target (`loopnest::store_may_run_in_place`). The output is the target's
    /// bytes: a dense target's, or a strided one's window (`Plan::stores_through_view`). Another
    /// input that overlaps the target is the caller's to rule out.
    pub fn stores_in_place(&self) -> bool {
        match &self.calls {
            Calls::Fixed(fixed) => fixed.store.as_ref().is_some_and(|s| s.in_place()),
            Calls::Bound(parts) => parts.store.as_ref().is_some_and(|s| s.in_place),
        }
    }

    /// The error of a kernel status other than OK: the interpreter's on the concrete plan of
    /// the call (which names the offending value and its check), where it tells.
    #[cold]
    fn failure<I: DenseInput>(&self, inputs: &[I], status: i32) -> RuntimeError {
        let env = match &self.calls {
            Calls::Fixed(_) => Some(Env::new()),
            Calls::Bound(parts) => self.binding(parts, inputs).ok(),
        };
        // Binding recurses once per nested index access, as the interpreter does.
        let told = env
            .and_then(|env| crate::limits::with_stack_for(self.plan.nesting(), || self.plan.bind(&env).ok()));
        // The interpreter reads tensors: copies of the inputs, on this cold path only.
        let tensors: Option<Vec<Tensor>> =
            inputs.iter().map(|t| Tensor::from_bytes(t.dtype(), t.shape(), t.bytes()).ok()).collect();
        let told = told.zip(tensors).and_then(|(plan, tensors)| {
            let refs: Vec<&Tensor> = tensors.iter().collect();
            verify(plan).ok().and_then(|plan| interp::run(&plan, &refs).err())
        });
        told.unwrap_or_else(|| super::status_error(status))
    }
}

/// Runs a fixed kernel's entry on `inputs` (in plan order) over its whole range.
///
/// # Safety
/// The inputs match the plan's declarations: dense tensors, or the windows of strided inputs;
/// `out` has `out_nbytes` writable bytes, the output's.
unsafe fn run_fixed<I: DenseInput>(
    fixed: &Fixed,
    inputs: &[I],
    out: *mut u8,
    out_nbytes: usize,
    threads: usize,
) -> i32 {
    let slots = fixed.order.as_ref().map_or(inputs.len(), |o| o.iter().max().map_or(0, |m| m + 1));
    let fill = |table: &mut [*const u8]| {
        // Kernels address a strided input from its element [0, ..., 0], inside its window.
        let ptrs = inputs.iter().zip(&fixed.inputs).map(|(t, i)| t.as_ptr().wrapping_offset(i.first));
        match &fixed.order {
            None => table.iter_mut().zip(ptrs).for_each(|(slot, p)| *slot = p),
            Some(order) => order.iter().zip(ptrs).for_each(|(&o, p)| table[o] = p),
        }
    };
    // SAFETY: the caller's guarantees, each input in its slot.
    with_table(slots, fill, |table| unsafe { call_fixed(fixed, table, out, out_nbytes, threads) })
}

/// Runs a fixed kernel's entry over its whole range.
///
/// # Safety
/// As for [`JitKernel::call`].
#[inline]
unsafe fn call_fixed(
    fixed: &Fixed,
    table: &[*const u8],
    out: *mut u8,
    out_nbytes: usize,
    threads: usize,
) -> i32 {
    let workers = fixed.workers(out_nbytes, threads);
    let (out, workers) = match &fixed.store {
        // SAFETY: the caller's guarantees (a store plan's target is a dense input or a view
        // whose window is the output).
        Some(store) => unsafe { store.prepare(table, out, out_nbytes, workers) },
        None => (out, workers),
    };
    let args = CallArgs { table: table.as_ptr(), out, params: std::ptr::null() };
    // SAFETY: the caller's guarantees, over the entry's full range.
    unsafe { KernelFn::Concrete(fixed.entry).run_split(args, fixed.outer, workers) }
}

/// `[4, 5]`: dims as the messages show them.
fn dims(shape: &[usize]) -> String {
    let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    ShapeDisplay(&shape).to_string()
}
