//! A generic plan's entry and shape function: the functions an AOT object exports for every
//! shape (docs/design/shape-generic.md §6).
//!
//! ```c
//! int32_t NAME_shape([const uint8_t *const *inputs,] const int64_t *const *in_dims,
//!                    int64_t *out_dims, int64_t *outer);
//! int32_t NAME(const uint8_t *const *inputs, const int64_t *const *in_dims, uint8_t *out,
//!              int64_t begin, int64_t end);
//! ```
//!
//! `in_dims[i]` points at the dims of the caller's input `i`; `NAME_shape` takes `inputs` too
//! when the plan reads run-time scalars ([`GenericEntry::shape_reads_inputs`]). Both run the
//! same shape function ([`SymEmitter`]): bind the symbols, check the requirements, in order;
//! any failure returns [`STATUS_SHAPE_MISMATCH`] before anything is written. `NAME_shape` then
//! writes the output's dims and the outermost extent. `NAME` evaluates the outer extent and the
//! parameter blocks of its kernels on its stack, checks `0 <= begin <= end <= outer`
//! ([`STATUS_BAD_RANGE`]), runs the index checks, then (unless the output is empty) the main
//! kernel over `[begin, end)`, as the concrete entry does.

use super::entry::{
    buffer_table, call_or_fail, check_range, check_scratch, const_refs, define_consts, func_ref,
    return_status,
};
use super::shape_fn::{ShapeFnError, SymEmitter};
use super::{CodegenError, NO_ARGS, STATUS_OK, STATUS_SHAPE_MISMATCH, define_kernel, target, verify};
use crate::backend::loopnest::{self, LoopNest};
use crate::plan::{InputDecl, VerifiedGenericPlan};
use crate::types::sym::{Sym, SymExpr};
use cranelift_codegen::ir::{
    AbiParam, Block, InstBuilder, MemFlagsData, Signature, StackSlotData, StackSlotKind, Type, Value, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module};
use std::collections::BTreeSet;

/// What [`define_generic_entry`] produced.
#[derive(Debug, Clone)]
pub struct GenericEntry {
    /// `NAME`.
    pub id: FuncId,
    /// `NAME_shape`.
    pub shape_id: FuncId,
    /// Whether `NAME_shape` takes the inputs (the plan reads run-time scalars).
    pub shape_reads_inputs: bool,
    /// The main kernel's schedule; its outer extent is the range callers split.
    pub nest: LoopNest,
    /// The schedules of the plan's checks.
    pub checks: Vec<LoopNest>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum GenericEntryError {
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    #[error(transparent)]
    ShapeFn(#[from] ShapeFnError),
}

impl From<cranelift_module::ModuleError> for GenericEntryError {
    fn from(e: cranelift_module::ModuleError) -> GenericEntryError {
        GenericEntryError::Codegen(e.into())
    }
}

/// Defines `name` (linkage `linkage`) and `name_shape` (exported alike) in `module` for `plan`
/// (see the module doc). `order[p]` is the caller's slot for plan input `p`; `declared` lists the
/// caller's inputs (run-time scalars are read from the one of their name, which the plan's
/// accesses need not read). Helper symbols are local, named as
/// [`define_entry`](super::define_entry) names them.
pub fn define_generic_entry<M: Module>(
    module: &mut M,
    name: &str,
    linkage: Linkage,
    plan: &VerifiedGenericPlan,
    order: &[usize],
    declared: &[InputDecl<SymExpr>],
) -> Result<GenericEntry, GenericEntryError> {
    let target = target(module.isa());
    let nest = loopnest::schedule_generic(plan, target, |_, _| {});
    let main_id = define_kernel(module, &format!("{name}.main"), Linkage::Local, &nest)?;
    let mut checks = vec![];
    let mut check_ids = vec![];
    for (k, c) in plan.checks.iter().enumerate() {
        if let Some(n) = loopnest::schedule_generic_check(plan, c, target) {
            check_ids.push(define_kernel(module, &format!("{name}.check{k}"), Linkage::Local, &n)?);
            checks.push(n);
        }
    }
    let const_ids = define_consts(module, name, &plan.consts)?;
    let scalars: BTreeSet<Sym> =
        plan.symbols().into_iter().filter(|s| matches!(s, Sym::Scalar { .. })).collect();
    let shape_reads_inputs = !scalars.is_empty();
    // The inputs the shape function reads: the plan's, then the other scalar inputs.
    let mut bound: Vec<(&InputDecl<SymExpr>, usize)> =
        plan.inputs.iter().zip(order.iter().copied()).collect();
    for s in &scalars {
        let Sym::Scalar { name, .. } = s else { continue };
        if let Some(slot) = declared.iter().position(|d| *d.name == **name)
            && !bound.iter().any(|(d, _)| *d.name == **name)
        {
            bound.push((&declared[slot], slot));
        }
    }
    let ptr = module.target_config().pointer_type();
    let call_conv = module.isa().default_call_conv();
    let func_sig = |params: usize| {
        let mut sig = Signature::new(call_conv);
        sig.params.extend(std::iter::repeat_n(AbiParam::new(ptr), params));
        sig
    };

    // NAME_shape.
    let mut sig = func_sig(3 + shape_reads_inputs as usize);
    sig.returns.push(AbiParam::new(types::I32));
    let shape_id = module.declare_function(&format!("{name}_shape"), linkage, &sig)?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let p = start(&mut b);
        let (inputs, p) = if shape_reads_inputs { (Some(p[0]), &p[1..]) } else { (None, &p[..]) };
        let (in_dims, out_dims, outer) = (p[0], p[1], p[2]);
        let (em, mismatch) = shape_function(&mut b, plan, &bound, in_dims, inputs, &scalars)?;
        // Everything is evaluated before anything is stored: a failure writes nothing.
        let dims = plan.shape.iter().map(|d| em.expr(&mut b, d)).collect::<Result<Vec<_>, _>>()?;
        let extent = em.expr(&mut b, &nest.outer_extent())?;
        for (j, v) in dims.into_iter().enumerate() {
            b.ins().store(MemFlagsData::trusted(), v, out_dims, j as i32 * 8);
        }
        b.ins().store(MemFlagsData::trusted(), extent, outer, 0);
        let ok = b.ins().iconst(types::I32, STATUS_OK as i64);
        b.ins().return_(&[ok]);
        finish(b, mismatch, None, module.target_config());
    }
    verify(&ctx.func, module.isa())?;
    module.define_function(shape_id, &mut ctx)?;
    module.clear_context(&mut ctx);

    // NAME.
    let mut sig = func_sig(3);
    sig.params.extend([AbiParam::new(types::I64), AbiParam::new(types::I64)]);
    sig.returns.push(AbiParam::new(types::I32));
    let id = module.declare_function(name, linkage, &sig)?;
    ctx.func.signature = sig;
    let main_ref = func_ref(module, main_id, &mut ctx.func);
    let check_refs: Vec<_> = check_ids.iter().map(|&id| func_ref(module, id, &mut ctx.func)).collect();
    let const_gvs = const_refs(module, &const_ids, &mut ctx.func);
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let p = start(&mut b);
        let (inputs, in_dims, out, begin, end) = (p[0], p[1], p[2], p[3], p[4]);
        let (em, mismatch) = shape_function(&mut b, plan, &bound, in_dims, Some(inputs), &scalars)?;
        let fail = b.create_block();
        b.append_block_param(fail, types::I32);
        let outer = em.expr(&mut b, &nest.outer_extent())?;
        check_range(&mut b, begin, end, outer, fail);
        let table = buffer_table(&mut b, ptr, inputs, order, &const_gvs);
        // A kernel over no elements is not called: its parameters (byte offsets) need not even
        // be defined, as when an empty tensor has a dim of MAX_DIM.
        if !check_refs.is_empty() {
            let scratch = check_scratch(&mut b, ptr);
            let zero = b.ins().iconst(types::I64, 0);
            for (&f, n) in check_refs.iter().zip(&checks) {
                let next = b.create_block();
                unless_empty(&mut b, &em, n, next)?;
                let extent = em.expr(&mut b, &n.outer_extent())?;
                let mut args = vec![table, scratch, zero, extent];
                args.extend(param_block(&mut b, ptr, &em, n)?);
                call_or_fail(&mut b, f, &args, fail);
                b.ins().jump(next, NO_ARGS);
                b.switch_to_block(next);
            }
        }
        let done = b.create_block();
        unless_empty(&mut b, &em, &nest, done)?;
        let mut args = vec![table, out, begin, end];
        args.extend(param_block(&mut b, ptr, &em, &nest)?);
        let call = b.ins().call(main_ref, &args);
        let status = b.inst_results(call)[0];
        b.ins().return_(&[status]);
        b.switch_to_block(done);
        let ok = b.ins().iconst(types::I32, STATUS_OK as i64);
        b.ins().return_(&[ok]);
        finish(b, mismatch, Some(fail), module.target_config());
    }
    verify(&ctx.func, module.isa())?;
    module.define_function(id, &mut ctx)?;
    module.clear_context(&mut ctx);
    Ok(GenericEntry { id, shape_id, shape_reads_inputs, nest, checks })
}

/// Continues where every symbolic extent of `nest` is non-zero; branches to `empty` otherwise.
fn unless_empty(
    b: &mut FunctionBuilder,
    em: &SymEmitter,
    nest: &LoopNest,
    empty: Block,
) -> Result<(), ShapeFnError> {
    for e in nest.extents.iter().filter(|e| e.as_const().is_none()) {
        let v = em.expr(b, e)?;
        let next = b.create_block();
        b.ins().brif(v, next, NO_ARGS, empty, NO_ARGS);
        b.switch_to_block(next);
    }
    Ok(())
}

/// Opens the function's entry block; its parameters.
fn start(b: &mut FunctionBuilder) -> Vec<Value> {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.block_params(entry).to_vec()
}

/// The shape function proper, shared by both functions: binds every symbol from the inputs,
/// then checks the plan's requirements in order. Returns the emitter (for the integers to
/// compute next) and the block every failure branched to.
fn shape_function(
    b: &mut FunctionBuilder,
    plan: &VerifiedGenericPlan,
    bound: &[(&InputDecl<SymExpr>, usize)],
    in_dims: Value,
    inputs: Option<Value>,
    scalars: &BTreeSet<Sym>,
) -> Result<(SymEmitter, Block), ShapeFnError> {
    let mismatch = b.create_block();
    let mut em = SymEmitter::new(mismatch);
    let ptr = b.func.dfg.value_type(in_dims);
    em.bind_inputs(b, ptr, bound, in_dims, inputs, scalars)?;
    for r in &plan.requires {
        em.require(b, &r.cond)?;
    }
    Ok((em, mismatch))
}

/// The parameter block of `nest`'s kernel (its symbolic integers, in slot order) on the stack:
/// the pointer to pass, or nothing for a kernel without parameters.
fn param_block(
    b: &mut FunctionBuilder,
    ptr: Type,
    em: &SymEmitter,
    nest: &LoopNest,
) -> Result<Option<Value>, ShapeFnError> {
    if !nest.takes_params() {
        return Ok(None);
    }
    let bytes = (nest.params.len() * 8) as u32;
    let slot = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, bytes, 3));
    for (k, e) in nest.params.iter().enumerate() {
        let v = em.expr(b, e)?;
        b.ins().stack_store(types::I64, v, slot, k as i32 * 8);
    }
    Ok(Some(b.ins().stack_addr(ptr, slot, 0)))
}

/// Fills the failure blocks (`mismatch` returns [`STATUS_SHAPE_MISMATCH`], `fail` its
/// parameter) and finalizes the function.
fn finish(
    mut b: FunctionBuilder,
    mismatch: Block,
    fail: Option<Block>,
    config: cranelift_codegen::isa::TargetFrontendConfig,
) {
    b.switch_to_block(mismatch);
    let s = b.ins().iconst(types::I32, STATUS_SHAPE_MISMATCH as i64);
    b.ins().return_(&[s]);
    if let Some(fail) = fail {
        return_status(&mut b, fail);
    }
    b.seal_all_blocks();
    b.finalize(config);
}

impl GenericEntry {
    /// The range callers split: `[0, outer)`, as a function of the shapes.
    pub fn outer(&self) -> SymExpr {
        self.nest.outer_extent()
    }
}
