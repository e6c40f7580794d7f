//! The call path of a kernel with symbols: its nests compiled with their parameter blocks, and
//! per call the binding (symbols from the inputs' dims and run-time scalars, requirements
//! checked, every nest's integers evaluated with `eval_i64`'s checked arithmetic), kept per
//! thread so that a call with the dims and scalars of one before costs a comparison. A store
//! plan's update nest is one of these nests: a call copies the target, as a concrete store's
//! does (`store.rs`), from the first destination this binding gives.

use super::store::{BoundStore, bound_store};
use super::{Calls, JitKernel, dims, with_table};
use crate::backend::clif;
use crate::backend::jit::{CallArgs, JitError, KernelFn, build, workers};
use crate::backend::loopnest::{self, LoopNest};
use crate::backend::{DenseInput, RuntimeError};
use crate::plan::{ShapeMismatch, VerifiedGenericPlan};
use crate::types::sym::{Env, Sym, SymExpr};
use cranelift_module::{Linkage, Module};
use std::cell::RefCell;
use std::sync::atomic::{AtomicU64, Ordering};

/// How many bindings (of any kernels) a thread keeps.
const REMEMBERED: usize = 4;

thread_local! {
    /// This thread's last bindings, newest first, by kernel id.
    static LAST: RefCell<Vec<(u64, Bound)>> = const { RefCell::new(Vec::new()) };
}

/// The id of the next kernel with symbols compiled (ids are never reused, so a binding kept for
/// a dropped kernel is never taken for another's).
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

/// A plan with symbols: its nests, bound per call.
pub(super) struct Parts {
    main: Part,
    checks: Vec<Part>,
    /// The run-time scalars the plan reads: the symbol, the input holding it, its element.
    scalars: Vec<(Sym, usize, usize)>,
    /// A store plan's copy and destination, around the main nest.
    pub(super) store: Option<BoundStore>,
    /// Its bindings' key in [`LAST`].
    id: u64,
}

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
pub(super) struct Bound {
    /// The inputs' dims, input by input, then the run-time scalars' values: what identifies the
    /// binding.
    key: Vec<i64>,
    pub(super) shape: Vec<usize>,
    /// `None` where a part has nothing to do.
    main: Option<PartCall>,
    checks: Vec<Option<PartCall>>,
    /// A store's first destination, in bytes from the output's start (0 without a store, or
    /// where its update is empty).
    base_bytes: isize,
    /// The bytes the main part writes, which size its workers: the output's, or a store's
    /// updates' (`a[5] = 0` on a large target is a small write).
    written: usize,
}

pub(super) fn compile_parts(plan: &VerifiedGenericPlan) -> Result<JitKernel, JitError> {
    let store = bound_store(plan)?;
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
        Ok::<_, clif::CodegenError>((main, checks))
    })?;
    let part = |(id, nest): (cranelift_module::FuncId, LoopNest)| Part {
        // SAFETY: `id` is the finalized kernel of `nest`.
        f: unsafe { KernelFn::of_kernel(code.function(id), &nest) },
        extents: nest.extents,
        params: nest.params,
    };
    let parts = Parts {
        main: part(main),
        checks: checks.into_iter().map(part).collect(),
        scalars,
        store,
        id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
    };
    Ok(JitKernel { plan: plan.clone(), calls: Calls::Bound(parts), _code: code })
}

impl Parts {
    /// The compiled check nests.
    pub(super) fn checks(&self) -> usize {
        self.checks.len()
    }
}

impl JitKernel {
    /// `f` of the binding of `inputs`: one this thread kept when their dims and scalars are the
    /// same, else a new one, kept.
    pub(super) fn with_bound<I: DenseInput, R>(
        &self,
        parts: &Parts,
        inputs: &[I],
        f: impl FnOnce(&Bound) -> Result<R, RuntimeError>,
    ) -> Result<R, RuntimeError> {
        self.check_ranks(inputs)?;
        LAST.with(|last| {
            // Taken only here, and `f` runs no kernel's `with_bound`; should one ever, it binds
            // without the cache.
            let Ok(mut last) = last.try_borrow_mut() else { return f(&self.bind(parts, inputs)?) };
            let kept = last.iter().position(|(id, b)| *id == parts.id && same_key(parts, &b.key, inputs));
            let at = match kept {
                Some(at) => at,
                None => {
                    let bound = self.bind(parts, inputs)?;
                    last.insert(0, (parts.id, bound));
                    last.truncate(REMEMBERED);
                    0
                }
            };
            f(&last[at].1)
        })
    }

    /// The number of inputs and their dtypes and ranks (the binding checks the dims).
    fn check_ranks<I: DenseInput>(&self, inputs: &[I]) -> Result<(), RuntimeError> {
        let decls = &self.plan.inputs;
        if decls.len() != inputs.len() {
            return Err(RuntimeError::InputCount { expected: decls.len(), found: inputs.len() });
        }
        for (decl, t) in decls.iter().zip(inputs) {
            if decl.dtype != t.dtype() || decl.shape.len() != t.shape().len() {
                let declared: Vec<String> = decl.shape.iter().map(SymExpr::to_string).collect();
                return Err(RuntimeError::InputMismatch {
                    name: decl.name.clone(),
                    expected: format!("{}[{}]", decl.dtype, declared.join(", ")),
                    found: format!("{}{}", t.dtype(), dims(t.shape())),
                });
            }
        }
        Ok(())
    }

    /// The symbols of a call: dims and scalar values, checked against the plan.
    pub(super) fn binding<I: DenseInput>(&self, parts: &Parts, inputs: &[I]) -> Result<Env, ShapeMismatch> {
        let dims: Vec<Vec<i64>> =
            inputs.iter().map(|t| t.shape().iter().map(|&d| d as i64).collect()).collect();
        let dims: Vec<&[i64]> = dims.iter().map(Vec::as_slice).collect();
        let scalar = |name: &str, index: Option<u32>| {
            let (_, i, e) = parts.scalars.iter().find(|(s, _, _)| match s {
                Sym::Scalar { name: n, index: k } => **n == *name && *k == index,
                Sym::Dim(_) => false,
            })?;
            scalar_value(&inputs[*i], *e)
        };
        self.plan.binding(&dims, &scalar)
    }

    /// Binds the symbols for `inputs`, checks the requirements and evaluates every part's
    /// integers (an overflow is [`ShapeMismatch::TooLarge`]).
    fn bind<I: DenseInput>(&self, parts: &Parts, inputs: &[I]) -> Result<Bound, ShapeMismatch> {
        let env = self.binding(parts, inputs)?;
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
        key.extend(parts.scalars.iter().map(|(s, _, _)| env.get(s).unwrap_or(i64::MIN)));
        let main = part(&parts.main)?;
        let base_bytes = match (&parts.store, &main) {
            (Some(store), Some(_)) => store
                .base_bytes(&env, self.plan.dtype.width())
                .ok_or_else(|| ShapeMismatch::TooLarge { what: "the store's first destination".into() })?,
            _ => 0,
        };
        let elements = |shape: &[i64]| shape.iter().fold(1usize, |n, &d| n.saturating_mul(d as usize));
        let written = match &plan.store {
            Some(store) => elements(&store.shape),
            None => elements(&plan.shape),
        };
        Ok(Bound {
            key,
            written: written.saturating_mul(self.plan.dtype.width()),
            shape: plan.shape.iter().map(|&d| d as usize).collect(),
            main,
            checks: parts.checks.iter().map(part).collect::<Result<_, _>>()?,
            base_bytes,
        })
    }

    /// Runs the checks, then the output, of a bound call; the first status other than OK. A
    /// store copies its target into `out` first, unless `out` is the target.
    ///
    /// # Safety
    /// `inputs` passed [`with_bound`](Self::with_bound) for `bound`; `out` has `nbytes` writable
    /// bytes, the output's, and overlaps no input but a store's target, which it may be
    /// exactly when the store may run in place.
    pub(super) unsafe fn run_bound<I: DenseInput>(
        &self,
        parts: &Parts,
        bound: &Bound,
        inputs: &[I],
        out: *mut u8,
        nbytes: usize,
        threads: usize,
    ) -> i32 {
        let consts = &self.plan.consts;
        let fill = |table: &mut [*const u8]| {
            let buffers = inputs.iter().map(|t| t.as_ptr()).chain(consts.iter().map(|c| c.tensor.as_ptr()));
            table.iter_mut().zip(buffers).for_each(|(slot, p)| *slot = p);
        };
        with_table(inputs.len() + consts.len(), fill, |table| {
            let mut scratch = [0u64; 2];
            let calls = parts.checks.iter().zip(&bound.checks).filter_map(|(p, c)| Some((p, c.as_ref()?)));
            for (part, call) in calls {
                let args = CallArgs {
                    table: table.as_ptr(),
                    out: scratch.as_mut_ptr().cast(),
                    params: call.params.as_ptr(),
                };
                // SAFETY: the binding checked the inputs' dtypes and dims against the plan and
                // its requirements, under which verification proved every address in bounds;
                // `params` is the check's parameter block for this binding; every value goes
                // to `scratch`.
                let status = unsafe { part.f.call(args, 0, call.outer) };
                if status != clif::STATUS_OK {
                    return status;
                }
            }
            let (mut first, mut serial) = (out, false);
            if let Some(store) = &parts.store {
                let target = inputs[store.target].as_ptr();
                if nbytes > 0 && !std::ptr::eq(target, out) {
                    // SAFETY: the target is dense, of the output's dtype and shape (the
                    // binding), and does not overlap `out` (the caller's word).
                    unsafe { std::ptr::copy_nonoverlapping(target, out, nbytes) };
                }
                first = out.wrapping_offset(bound.base_bytes);
                serial = store.serial;
            }
            let Some(call) = &bound.main else { return clif::STATUS_OK };
            let args = CallArgs { table: table.as_ptr(), out: first, params: call.params.as_ptr() };
            let workers = if serial { 1 } else { workers(call.outer, bound.written, threads) };
            // SAFETY: as for the checks; `out` holds the output of this binding's shape, and a
            // store's update nest writes it from its first destination, as verified.
            unsafe { parts.main.f.run_split(args, call.outer, workers) }
        })
    }
}

/// Whether `inputs` have the dims and scalar values `key` was made of.
fn same_key<I: DenseInput>(parts: &Parts, key: &[i64], inputs: &[I]) -> bool {
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
    let scalars = parts.scalars.iter().map(|(_, i, e)| scalar_value(&inputs[*i], *e).unwrap_or(i64::MIN));
    key.len() == at + parts.scalars.len() && scalars.eq(key[at..].iter().copied())
}

/// Element `element` of an integer tensor, as a run-time scalar.
fn scalar_value(t: &impl DenseInput, element: usize) -> Option<i64> {
    i64::try_from(t.int_at(element)?).ok()
}
