//! Generic kernels in the JIT: a verified generic plan compiled once, run on any inputs its
//! shape function accepts. Per call the kernel binds the plan's symbols from the inputs' dims
//! and run-time scalars, checks the plan's requirements, and evaluates each compiled nest's
//! parameter block (`LoopNest::params`) with `eval_i64`'s checked arithmetic. Each thread keeps
//! the last bindings of the kernels it ran (no lock, no reference count on the way to the
//! kernel), so a call with the dims and scalars of one before costs a comparison.

use super::{Code, JitError, KernelFn, build, workers};
use crate::backend::clif;
use crate::backend::loopnest::{self, LoopNest};
use crate::backend::{DenseInput, RuntimeError, interp};
use crate::plan::{ShapeMismatch, VerifiedGenericPlan, verify};
use crate::types::sym::{Env, Sym, SymExpr};
use cranelift_module::{Linkage, Module};
use slc_runtime::Tensor;
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// Buffer tables of up to this many pointers are built on the stack.
const FEW_BUFFERS: usize = 8;

/// How many bindings (of any kernels) a thread keeps.
const REMEMBERED: usize = 4;

thread_local! {
    /// This thread's last bindings, newest first, by kernel id.
    static LAST: RefCell<Vec<(u64, Bound)>> = const { RefCell::new(Vec::new()) };
}

/// The id of the next kernel compiled (ids are never reused, so a binding kept for a dropped
/// kernel is never taken for another's).
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// One compiled nest: its code and the integers a call evaluates for it.
struct Part {
    f: KernelFn,
    extents: Vec<SymExpr>,
    params: Vec<SymExpr>,
}

/// A part's integers for one binding where it runs (no extent is 0).
struct PartCall {
    params: Vec<i64>,
    outer: i64,
}

/// What one binding of the symbols gives: the output's dims and every part's integers.
struct Bound {
    /// The inputs' dims, input by input, then the run-time scalars' values: what identifies the
    /// binding.
    key: Vec<i64>,
    shape: Vec<usize>,
    /// `None` where a part has nothing to do.
    main: Option<PartCall>,
    checks: Vec<Option<PartCall>>,
}

/// A generic plan's compiled kernels (the output's and one per index check that may check
/// anything), run as a concrete plan's entry runs them: checks first, then the output over
/// `[0, outer)`, split across threads for large outputs.
pub struct GenericJitKernel {
    plan: VerifiedGenericPlan,
    main: Part,
    checks: Vec<Part>,
    /// The run-time scalars the plan reads: the symbol, the input holding it, its element.
    scalars: Vec<(Sym, usize, usize)>,
    /// Its bindings' key in [`LAST`].
    id: u64,
    /// Owns the code `main` and `checks` point into.
    _code: Code,
}

impl std::fmt::Debug for GenericJitKernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "GenericJitKernel({} checks)", self.checks.len())
    }
}

/// The key of a generic plan in a kernel cache: its text, symbolic, so one for every shape.
pub(super) fn cache_key(plan: &VerifiedGenericPlan) -> String {
    plan.plan().to_string()
}

impl GenericJitKernel {
    /// Compiles `plan`'s nests for inputs passed in plan order.
    pub fn compile(plan: &VerifiedGenericPlan) -> Result<GenericJitKernel, JitError> {
        let scalars = plan
            .symbols()
            .into_iter()
            .filter_map(|s| match &s {
                Sym::Scalar { name, index } => {
                    let input = plan.inputs.iter().position(|d| *d.name == **name)?;
                    let element = index.map_or(0, |i| i as usize);
                    Some((s, input, element))
                }
                Sym::Dim(_) => None,
            })
            .collect();
        crate::limits::with_stack_for(plan.nesting(), || {
            let (code, (main, checks)) = build(|module| {
                let target = clif::target(module.isa());
                let mut define = |name: &str, nest: LoopNest| {
                    clif::define_kernel(module, name, Linkage::Local, &nest).map(|id| (id, nest))
                };
                let main = define("slc_main", loopnest::schedule_generic(plan, target, |_, _| {}))?;
                let mut checks = vec![];
                for (k, c) in plan.checks.iter().enumerate() {
                    if let Some(nest) = loopnest::schedule_generic_check(plan, c, target) {
                        checks.push(define(&format!("slc_check{k}"), nest)?);
                    }
                }
                Ok((main, checks))
            })?;
            let part = |(id, nest): (cranelift_module::FuncId, LoopNest)| Part {
                // SAFETY: `id` is the finalized kernel of `nest`.
                f: unsafe { KernelFn::of_kernel(code.function(id), &nest) },
                extents: nest.extents,
                params: nest.params,
            };
            let main = part(main);
            let checks = checks.into_iter().map(part).collect();
            Ok(GenericJitKernel {
                plan: plan.clone(),
                main,
                checks,
                scalars,
                id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
                _code: code,
            })
        })
    }

    pub fn plan(&self) -> &VerifiedGenericPlan {
        &self.plan
    }

    /// The output's dims for `inputs`, or why the kernel does not apply to them.
    pub fn output_shape<I: DenseInput>(&self, inputs: &[I]) -> Result<Vec<usize>, RuntimeError> {
        self.with_bound(inputs, |bound| Ok(bound.shape.clone()))
    }

    /// `f` of the output's dims for `inputs` (no allocation when the binding is kept).
    pub fn with_output_shape<I: DenseInput, R>(
        &self,
        inputs: &[I],
        f: impl FnOnce(&[usize]) -> R,
    ) -> Result<R, RuntimeError> {
        self.with_bound(inputs, |bound| Ok(f(&bound.shape)))
    }

    /// Runs the kernel on `inputs` (in plan order) into a fresh output tensor, on up to
    /// `threads` workers for large outputs.
    pub fn run<I: DenseInput>(&self, inputs: &[I], threads: usize) -> Result<Tensor, RuntimeError> {
        self.with_bound(inputs, |bound| {
            let mut out = Tensor::for_overwrite(self.plan.dtype, &bound.shape)?;
            self.run_bound(bound, inputs, out.bytes_mut(), threads)?;
            Ok(out)
        })
    }

    /// Runs the kernel into the caller's output tensor, which must have the plan's dtype and
    /// the shape the inputs give.
    pub fn run_into<I: DenseInput>(
        &self,
        inputs: &[I],
        out: &mut Tensor,
        threads: usize,
    ) -> Result<(), RuntimeError> {
        self.with_bound(inputs, |bound| self.run_bound_into(bound, inputs, out, threads))
    }

    fn run_bound_into<I: DenseInput>(
        &self,
        bound: &Bound,
        inputs: &[I],
        out: &mut Tensor,
        threads: usize,
    ) -> Result<(), RuntimeError> {
        if out.dtype() != self.plan.dtype || out.shape() != bound.shape {
            let show = |d, s: &[usize]| {
                let dims: Vec<i64> = s.iter().map(|&d| d as i64).collect();
                format!("{d}{}", crate::types::ShapeDisplay(&dims))
            };
            return Err(RuntimeError::InputMismatch {
                name: "the output".into(),
                expected: show(self.plan.dtype, &bound.shape),
                found: show(out.dtype(), out.shape()),
            });
        }
        self.run_bound(bound, inputs, out.bytes_mut(), threads)
    }

    /// Runs the kernel into the caller's bytes, which must be exactly the output's for the
    /// shape the inputs give (dense, C order).
    pub fn run_into_bytes<I: DenseInput>(
        &self,
        inputs: &[I],
        out: &mut [u8],
        threads: usize,
    ) -> Result<(), RuntimeError> {
        self.with_bound(inputs, |bound| {
            let expected = Tensor::byte_size(self.plan.dtype, &bound.shape).unwrap_or(usize::MAX);
            if out.len() != expected {
                return Err(RuntimeError::InputMismatch {
                    name: "the output".into(),
                    expected: format!("{expected} bytes"),
                    found: format!("{} bytes", out.len()),
                });
            }
            self.run_bound(bound, inputs, out, threads)
        })
    }

    /// `f` of the binding of `inputs`: one this thread kept when their dims and scalars are the
    /// same, else a new one, kept.
    fn with_bound<I: DenseInput, R>(
        &self,
        inputs: &[I],
        f: impl FnOnce(&Bound) -> Result<R, RuntimeError>,
    ) -> Result<R, RuntimeError> {
        self.check_inputs(inputs)?;
        LAST.with(|last| {
            // Taken only here, and `f` runs no kernel's `with_bound`; should one ever, it binds
            // without the cache.
            let Ok(mut last) = last.try_borrow_mut() else { return f(&self.bind(inputs)?) };
            let kept = last.iter().position(|(id, b)| *id == self.id && self.same_key(&b.key, inputs));
            let at = match kept {
                Some(at) => at,
                None => {
                    let bound = self.bind(inputs)?;
                    last.insert(0, (self.id, bound));
                    last.truncate(REMEMBERED);
                    0
                }
            };
            f(&last[at].1)
        })
    }

    /// The number of inputs and their dtypes and ranks (the binding checks the dims).
    fn check_inputs<I: DenseInput>(&self, inputs: &[I]) -> Result<(), RuntimeError> {
        let decls = &self.plan.inputs;
        if decls.len() != inputs.len() {
            return Err(RuntimeError::InputCount { expected: decls.len(), found: inputs.len() });
        }
        for (decl, t) in decls.iter().zip(inputs) {
            if decl.dtype != t.dtype() || decl.shape.len() != t.shape().len() {
                let dims: Vec<String> = decl.shape.iter().map(SymExpr::to_string).collect();
                let found: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
                return Err(RuntimeError::InputMismatch {
                    name: decl.name.clone(),
                    expected: format!("{}[{}]", decl.dtype, dims.join(", ")),
                    found: format!("{}{}", t.dtype(), crate::types::ShapeDisplay(&found)),
                });
            }
        }
        Ok(())
    }

    /// Whether `inputs` have the dims and scalar values `key` was made of.
    fn same_key<I: DenseInput>(&self, key: &[i64], inputs: &[I]) -> bool {
        // Compared in place, dim by dim (a call with the dims before is the common case).
        let mut at = 0;
        for t in inputs {
            let shape = t.shape();
            let Some(kept) = key.get(at..at + shape.len()) else { return false };
            if shape.iter().zip(kept).any(|(&d, &k)| d as i64 != k) {
                return false;
            }
            at += shape.len();
        }
        let scalars = self.scalars.iter().map(|(_, i, e)| scalar_value(&inputs[*i], *e).unwrap_or(i64::MIN));
        key.len() == at + self.scalars.len() && scalars.eq(key[at..].iter().copied())
    }

    /// The symbols of a call: dims and scalar values, checked against the plan.
    fn binding<I: DenseInput>(&self, inputs: &[I]) -> Result<Env, ShapeMismatch> {
        let dims: Vec<Vec<i64>> =
            inputs.iter().map(|t| t.shape().iter().map(|&d| d as i64).collect()).collect();
        let dims: Vec<&[i64]> = dims.iter().map(Vec::as_slice).collect();
        let scalar = |name: &str, index: Option<u32>| {
            let (_, i, e) = self.scalars.iter().find(|(s, _, _)| match s {
                Sym::Scalar { name: n, index: k } => **n == *name && *k == index,
                Sym::Dim(_) => false,
            })?;
            scalar_value(&inputs[*i], *e)
        };
        self.plan.binding(&dims, &scalar)
    }

    /// Binds the symbols for `inputs`, checks the requirements and evaluates every part's
    /// integers (an overflow is [`ShapeMismatch::TooLarge`]).
    fn bind<I: DenseInput>(&self, inputs: &[I]) -> Result<Bound, ShapeMismatch> {
        let env = self.binding(inputs)?;
        // Checks every requirement in order and that every integer of the plan fits.
        let plan = self.plan.bind(&env)?;
        let eval =
            |e: &SymExpr| e.eval_i64(&env).ok_or_else(|| ShapeMismatch::TooLarge { what: e.to_string() });
        // A part with an extent of 0 reads nothing: its byte offsets need not fit (an empty
        // tensor may have a dim of MAX_DIM).
        let part = |p: &Part| -> Result<Option<PartCall>, ShapeMismatch> {
            let extents = p.extents.iter().map(eval).collect::<Result<Vec<i64>, _>>()?;
            if extents.contains(&0) {
                return Ok(None);
            }
            let params = p.params.iter().map(eval).collect::<Result<_, _>>()?;
            Ok(Some(PartCall { params, outer: extents.first().copied().unwrap_or(1) }))
        };
        let mut key: Vec<i64> = inputs.iter().flat_map(|t| t.shape().iter().map(|&d| d as i64)).collect();
        key.extend(self.scalars.iter().map(|(s, _, _)| env.get(s).unwrap_or(i64::MIN)));
        Ok(Bound {
            key,
            shape: plan.shape.iter().map(|&d| d as usize).collect(),
            main: part(&self.main)?,
            checks: self.checks.iter().map(part).collect::<Result<_, _>>()?,
        })
    }

    fn run_bound<I: DenseInput>(
        &self,
        bound: &Bound,
        inputs: &[I],
        out: &mut [u8],
        threads: usize,
    ) -> Result<(), RuntimeError> {
        // The buffer table: on the stack for the common few buffers (a call costs tens of ns).
        let buffers =
            inputs.iter().map(|t| t.as_ptr()).chain(self.plan.consts.iter().map(|c| c.tensor.as_ptr()));
        let mut few = [std::ptr::null::<u8>(); FEW_BUFFERS];
        let many: Vec<*const u8>;
        let n = inputs.len() + self.plan.consts.len();
        let table: &[*const u8] = if n <= FEW_BUFFERS {
            few.iter_mut().zip(buffers).for_each(|(slot, p)| *slot = p);
            &few[..n]
        } else {
            many = buffers.collect();
            &many
        };
        let mut scratch = [0u64; 2];
        let calls = self.checks.iter().zip(&bound.checks).filter_map(|(p, c)| Some((p, c.as_ref()?)));
        for (part, call) in calls {
            let args = super::CallArgs {
                table: table.as_ptr(),
                out: scratch.as_mut_ptr().cast(),
                params: call.params.as_ptr(),
            };
            // SAFETY: the binding checked the inputs' dtypes and dims against the plan and its
            // requirements, under which verification proved every address in bounds; `params`
            // is the check's parameter block for this binding; every value goes to `scratch`.
            let status = unsafe { part.f.call(args, 0, call.outer) };
            if status != clif::STATUS_OK {
                return Err(self.failure(inputs, status));
            }
        }
        let nbytes = out.len();
        let Some(call) = &bound.main else { return Ok(()) };
        let args =
            super::CallArgs { table: table.as_ptr(), out: out.as_mut_ptr(), params: call.params.as_ptr() };
        let workers = workers(call.outer, nbytes, threads);
        // SAFETY: as for the checks; `out` holds the output of this binding's shape.
        match unsafe { self.main.f.run_split(args, call.outer, workers) } {
            clif::STATUS_OK => Ok(()),
            status => Err(self.failure(inputs, status)),
        }
    }

    /// The error of a kernel status other than OK: the interpreter's on the bound plan (which
    /// names the offending value and its check), where it tells.
    fn failure<I: DenseInput>(&self, inputs: &[I], status: i32) -> RuntimeError {
        let told = self.binding(inputs).ok().and_then(|env| self.plan.bind(&env).ok());
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

/// Element `element` of an integer tensor, as a run-time scalar.
fn scalar_value(t: &impl DenseInput, element: usize) -> Option<i64> {
    i64::try_from(t.int_at(element)?).ok()
}
