//! A plan's *entry*: the function JIT kernels and AOT objects export, and, for a plan with
//! something to bind, its *shape function* (docs/design/shape-generic.md §6). One code path
//! builds both ABIs: a plan without symbols is a generic plan with nothing left to bind, and gets
//! the concrete ABI
//!
//! ```c
//! int32_t NAME(const uint8_t *const *inputs, uint8_t *out, int64_t begin, int64_t end);
//! ```
//!
//! while a plan with symbolic dims or run-time scalars (or a caller declaring a symbolic dim)
//! gets the generic ABI:
//!
//! ```c
//! int32_t NAME_shape([const uint8_t *const *inputs,] const int64_t *const *in_dims,
//!                    int64_t *out_dims, int64_t *outer);
//! int32_t NAME(const uint8_t *const *inputs, const int64_t *const *in_dims, uint8_t *out,
//!              int64_t begin, int64_t end);
//! ```
//!
//! - `inputs` holds one pointer per input of the caller, in its order (`order` maps them to the
//!   plan's); the constants are data objects of the module. `in_dims[i]` points at the dims of
//!   the caller's input `i`; `NAME_shape` takes `inputs` too when the plan reads run-time scalars
//!   ([`Entry::shape_reads_inputs`]).
//! - With the generic ABI both functions first run the shape function ([`SymEmitter`]): bind
//!   the symbols, check the requirements, in order; any failure returns
//!   [`STATUS_SHAPE_MISMATCH`] before anything is written. `NAME_shape` then writes the output's
//!   dims and the outermost extent. With nothing to bind there is no shape function, and every
//!   integer below is an immediate.
//! - `NAME` evaluates the outer extent and the parameter blocks of its kernels, checks
//!   `0 <= begin <= end <= OUTER` ([`STATUS_BAD_RANGE`]: nothing is touched), runs the plan's
//!   index checks (each a check nest compiled as a kernel of its own), then (unless the output is
//!   empty) the main kernel over `[begin, end)` of the outermost loop.

use super::shape_fn::{ShapeFnError, SymEmitter};
use super::{
    CodegenError, NO_ARGS, STATUS_BAD_RANGE, STATUS_OK, STATUS_SHAPE_MISMATCH, STATUS_STORE_READS_TARGET,
    define_kernel, target, verify,
};
use crate::backend::loopnest::{self, LoopNest};
use crate::plan::{BufferId, ConstDecl, InputDecl, VerifiedGenericPlan};
use crate::types::sym::{Sym, SymExpr};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, FuncRef, Function, GlobalValue, GlobalValueData, InstBuilder, MemFlagsData,
    Signature, StackSlotData, StackSlotKind, Type, Value, types,
};
use cranelift_codegen::isa::TargetFrontendConfig;
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{DataDescription, DataId, FuncId, Linkage, Module};
use std::collections::BTreeSet;

/// What [`define_entry`] produced.
#[derive(Debug, Clone)]
pub struct Entry {
    /// `NAME`.
    pub id: FuncId,
    /// `NAME_shape`: present exactly when the entry has the generic ABI.
    pub shape_id: Option<FuncId>,
    /// Whether `NAME_shape` takes the inputs (the plan reads run-time scalars).
    pub shape_reads_inputs: bool,
    /// The main kernel's schedule; its outer extent is the range callers split.
    pub nest: LoopNest,
    /// The schedules of the plan's checks (empty index tensors have none).
    pub checks: Vec<LoopNest>,
}

impl Entry {
    /// Whether the entry has the generic ABI (takes the dims; `NAME_shape` exists).
    pub fn binds(&self) -> bool {
        self.shape_id.is_some()
    }

    /// The range callers split: `[0, outer)`, as a function of the shapes (a constant for the
    /// concrete ABI).
    pub fn outer(&self) -> SymExpr {
        self.nest.outer_extent()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EntryError {
    #[error(transparent)]
    Codegen(#[from] CodegenError),
    #[error(transparent)]
    ShapeFn(#[from] ShapeFnError),
}

impl From<cranelift_module::ModuleError> for EntryError {
    fn from(e: cranelift_module::ModuleError) -> EntryError {
        EntryError::Codegen(e.into())
    }
}

/// Whether an entry of `plan` for callers declaring `declared` has the generic ABI: the plan has
/// symbols or requirements, or a declared input has a dim that is not a constant. Otherwise the
/// concrete ABI (nothing to bind).
pub fn binds(plan: &VerifiedGenericPlan, declared: &[InputDecl<SymExpr>]) -> bool {
    !plan.requires.is_empty()
        || !plan.symbols().is_empty()
        || declared.iter().flat_map(|d| &d.shape).any(|n| n.as_const().is_none())
}

/// Defines `name` (linkage `linkage`) in `module` for `plan`, and with the generic ABI
/// ([`binds`]) `name_shape` (exported alike): see the module doc. `order[p]` is the caller's
/// slot for plan input `p`; `declared` lists the caller's inputs (run-time scalars are read from
/// the one of their name, which the plan's accesses need not read). Helper symbols are local,
/// named `NAME.main`, `NAME.checkK`, `NAME.constK` (dots keep them apart from C identifiers).
#[allow(clippy::too_many_arguments)]
pub fn define_entry<M: Module>(
    module: &mut M,
    name: &str,
    linkage: Linkage,
    plan: &VerifiedGenericPlan,
    order: &[usize],
    declared: &[InputDecl<SymExpr>],
    stores: StoreEntry,
) -> Result<Entry, EntryError> {
    let target = target(module.isa());
    let whole_store = match (&plan.store, stores) {
        (Some(_), StoreEntry::Whole) => Some(WholeStore::of(plan)?),
        _ => None,
    };
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
    let binding = binds(plan, declared).then(|| Binding::of(plan, order, declared));
    let ptr = module.target_config().pointer_type();
    let call_conv = module.isa().default_call_conv();
    let func_sig = |params: usize| {
        let mut sig = Signature::new(call_conv);
        sig.params.extend(std::iter::repeat_n(AbiParam::new(ptr), params));
        sig
    };
    let mut ctx = module.make_context();
    let mut fctx = FunctionBuilderContext::new();

    // NAME_shape.
    let shape_id = match &binding {
        None => None,
        Some(binding) => {
            let reads = binding.reads_inputs();
            let mut sig = func_sig(3 + reads as usize);
            sig.returns.push(AbiParam::new(types::I32));
            let shape_id = module.declare_function(&format!("{name}_shape"), linkage, &sig)?;
            ctx.func.signature = sig;
            {
                let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
                let p = start(&mut b);
                let (inputs, p) = if reads { (Some(p[0]), &p[1..]) } else { (None, &p[..]) };
                let (in_dims, out_dims, outer) = (p[0], p[1], p[2]);
                let (em, mismatch) = binding.shape_function(&mut b, plan, in_dims, inputs)?;
                // Everything is evaluated before anything is stored: a failure writes nothing.
                let dims = plan.shape.iter().map(|d| em.expr(&mut b, d)).collect::<Result<Vec<_>, _>>()?;
                let extent = em.expr(&mut b, &nest.outer_extent())?;
                for (j, v) in dims.into_iter().enumerate() {
                    b.ins().store(MemFlagsData::trusted(), v, out_dims, j as i32 * 8);
                }
                b.ins().store(MemFlagsData::trusted(), extent, outer, 0);
                let ok = b.ins().iconst(types::I32, STATUS_OK as i64);
                b.ins().return_(&[ok]);
                finish(b, Some(mismatch), None, module.target_config());
            }
            verify(&ctx.func, module.isa())?;
            module.define_function(shape_id, &mut ctx)?;
            module.clear_context(&mut ctx);
            Some(shape_id)
        }
    };

    // NAME.
    let mut sig = func_sig(2 + binding.is_some() as usize);
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
        let (inputs, out, begin, end) = (p[0], p[p.len() - 3], p[p.len() - 2], p[p.len() - 1]);
        // With nothing to bind, the emitter has no symbol and never branches to `mismatch`.
        let (em, mismatch) = match &binding {
            Some(binding) => binding.shape_function(&mut b, plan, p[1], Some(inputs))?,
            None => {
                let mismatch = b.create_block();
                (SymEmitter::new(mismatch), mismatch)
            }
        };
        let fail = b.create_block();
        b.append_block_param(fail, types::I32);
        let outer = em.expr(&mut b, &nest.outer_extent())?;
        check_range(&mut b, begin, end, outer, fail);
        if whole_store.is_some() {
            check_whole(&mut b, begin, end, outer, fail);
        }
        let table = buffer_table(&mut b, ptr, inputs, order, &const_gvs);
        // A kernel over no elements is not called: its parameters (byte offsets) need not even
        // be defined, as when an empty tensor has a dim of MAX_DIM.
        if !check_refs.is_empty() {
            let scratch = check_scratch(&mut b, ptr);
            let zero = b.ins().iconst(types::I64, 0);
            for (&f, n) in check_refs.iter().zip(&checks) {
                let skip = unless_empty(&mut b, &em, n)?;
                let extent = em.expr(&mut b, &n.outer_extent())?;
                let mut args = vec![table, scratch, zero, extent];
                args.extend(param_block(&mut b, ptr, &em, n)?);
                call_or_fail(&mut b, f, &args, fail);
                rejoin(&mut b, skip);
            }
        }
        let out = match &whole_store {
            Some(store) => store.copy_target(&mut b, &em, table, out, fail, module.target_config())?,
            None => out,
        };
        let skip = unless_empty(&mut b, &em, &nest)?;
        let mut args = vec![table, out, begin, end];
        args.extend(param_block(&mut b, ptr, &em, &nest)?);
        let call = b.ins().call(main_ref, &args);
        let status = b.inst_results(call)[0];
        b.ins().return_(&[status]);
        if let Some(empty) = skip {
            b.switch_to_block(empty);
            let ok = b.ins().iconst(types::I32, STATUS_OK as i64);
            b.ins().return_(&[ok]);
        }
        finish(b, binding.is_some().then_some(mismatch), Some(fail), module.target_config());
    }
    verify(&ctx.func, module.isa())?;
    module.define_function(id, &mut ctx)?;
    module.clear_context(&mut ctx);
    let shape_reads_inputs = binding.as_ref().is_some_and(Binding::reads_inputs);
    Ok(Entry { id, shape_id, shape_reads_inputs, nest, checks })
}

/// Who copies a store plan's target into the output before its update nest runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoreEntry {
    /// The caller (the JIT's `StoreCall`), which passes the output at the first destination and
    /// may split the update across workers.
    Prepared,
    /// The entry itself (AOT objects): it runs the whole range only, copies the target into the
    /// output unless the output is the target, then runs the update from the first destination.
    Whole,
}

/// A store plan's entry that copies its target ([`StoreEntry::Whole`]).
struct WholeStore {
    /// The target's slot in the kernel's buffer table (plan order).
    target: usize,
    /// The output's bytes.
    bytes: SymExpr,
    /// The first destination's byte offset in the output.
    base_bytes: i64,
    /// Whether the output may be the target itself ([`loopnest::store_may_run_in_place`]).
    in_place: bool,
}

impl WholeStore {
    fn of(plan: &VerifiedGenericPlan) -> Result<WholeStore, CodegenError> {
        let refused = |why: &str| CodegenError::Module(format!("this store plan is not compiled: {why}"));
        if !loopnest::takes_store(plan.plan()) {
            return Err(refused(
                "a scatter's reductions, and `+=` or `*=` on f16, bf16 or complex numbers, run on the interpreter",
            ));
        }
        let BufferId::Input(target) = plan.output.buffer else {
            return Err(refused("its target is not an input"));
        };
        let base_bytes = loopnest::store_base_bytes(plan.plan()).ok_or_else(|| refused("a symbolic base"))?;
        let bytes = plan.shape.iter().fold(SymExpr::constant(plan.dtype.width() as i64), |n, d| n.mul(d));
        Ok(WholeStore { target, bytes, base_bytes, in_place: loopnest::store_may_run_in_place(plan.plan()) })
    }

    /// Copies the target into `out` unless `out` is the target (then, where the update reads
    /// the target, fails with [`STATUS_STORE_READS_TARGET`] before writing anything), and
    /// returns the pointer the update nest writes from.
    fn copy_target(
        &self,
        b: &mut FunctionBuilder,
        em: &SymEmitter,
        table: Value,
        out: Value,
        fail: Block,
        config: TargetFrontendConfig,
    ) -> Result<Value, EntryError> {
        let ptr = config.pointer_type();
        let target =
            b.ins().load(ptr, MemFlagsData::trusted(), table, (self.target * ptr.bytes() as usize) as i32);
        let (copy, update) = (b.create_block(), b.create_block());
        let same = b.ins().icmp(IntCC::Equal, out, target);
        match self.in_place {
            true => b.ins().brif(same, update, NO_ARGS, copy, NO_ARGS),
            false => {
                let refused = b.ins().iconst(types::I32, STATUS_STORE_READS_TARGET as i64);
                b.ins().brif(same, fail, &[BlockArg::Value(refused)], copy, NO_ARGS)
            }
        };
        b.switch_to_block(copy);
        let bytes = em.expr(b, &self.bytes)?;
        b.call_memcpy(config, out, target, bytes);
        b.ins().jump(update, NO_ARGS);
        b.switch_to_block(update);
        Ok(b.ins().iadd_imm_s(out, self.base_bytes))
    }
}

/// A store entry's range must be the whole of `[0, outer)`: the target is copied once, before
/// any update ([`STATUS_BAD_RANGE`] otherwise: nothing is touched).
fn check_whole(b: &mut FunctionBuilder, begin: Value, end: Value, outer: Value, fail: Block) {
    let run = b.create_block();
    let late = b.ins().icmp_imm_s(IntCC::NotEqual, begin, 0);
    let short = b.ins().icmp(IntCC::NotEqual, end, outer);
    let part = b.ins().bor(late, short);
    let bad_range = b.ins().iconst(types::I32, STATUS_BAD_RANGE as i64);
    b.ins().brif(part, fail, &[BlockArg::Value(bad_range)], run, NO_ARGS);
    b.switch_to_block(run);
}

/// What the shape function binds: the inputs it reads (the plan's, then the other scalar
/// inputs, each with the caller's slot) and the run-time scalars.
struct Binding<'p> {
    bound: Vec<(&'p InputDecl<SymExpr>, usize)>,
    scalars: BTreeSet<Sym>,
}

impl<'p> Binding<'p> {
    fn of(plan: &'p VerifiedGenericPlan, order: &[usize], declared: &'p [InputDecl<SymExpr>]) -> Binding<'p> {
        let scalars: BTreeSet<Sym> = plan.scalars().into_iter().collect();
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
        Binding { bound, scalars }
    }

    fn reads_inputs(&self) -> bool {
        !self.scalars.is_empty()
    }

    /// The shape function proper, shared by both functions: binds every symbol from the
    /// inputs, then checks the plan's requirements in order. Returns the emitter (for the
    /// integers to compute next) and the block every failure branched to.
    fn shape_function(
        &self,
        b: &mut FunctionBuilder,
        plan: &VerifiedGenericPlan,
        in_dims: Value,
        inputs: Option<Value>,
    ) -> Result<(SymEmitter, Block), ShapeFnError> {
        let mismatch = b.create_block();
        let mut em = SymEmitter::new(mismatch);
        let ptr = b.func.dfg.value_type(in_dims);
        em.bind_inputs(b, ptr, &self.bound, in_dims, inputs, &self.scalars)?;
        for r in &plan.requires {
            em.require(b, &r.cond)?;
        }
        Ok((em, mismatch))
    }
}

/// Continues where every symbolic extent of `nest` is non-zero; returns the block the code
/// branches to otherwise (`None` when every extent is a constant: nothing to test).
fn unless_empty(
    b: &mut FunctionBuilder,
    em: &SymEmitter,
    nest: &LoopNest,
) -> Result<Option<Block>, ShapeFnError> {
    let mut empty = None;
    for e in nest.extents.iter().filter(|e| e.as_const().is_none()) {
        let v = em.expr(b, e)?;
        let next = b.create_block();
        let to = *empty.get_or_insert_with(|| b.create_block());
        b.ins().brif(v, next, NO_ARGS, to, NO_ARGS);
        b.switch_to_block(next);
    }
    Ok(empty)
}

/// Joins the skipped path of [`unless_empty`] (if any) after a part.
fn rejoin(b: &mut FunctionBuilder, skip: Option<Block>) {
    if let Some(skip) = skip {
        b.ins().jump(skip, NO_ARGS);
        b.switch_to_block(skip);
    }
}

/// Opens the function's entry block; its parameters.
fn start(b: &mut FunctionBuilder) -> Vec<Value> {
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    b.block_params(entry).to_vec()
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
    mismatch: Option<Block>,
    fail: Option<Block>,
    config: cranelift_codegen::isa::TargetFrontendConfig,
) {
    if let Some(mismatch) = mismatch {
        b.switch_to_block(mismatch);
        let s = b.ins().iconst(types::I32, STATUS_SHAPE_MISMATCH as i64);
        b.ins().return_(&[s]);
    }
    if let Some(fail) = fail {
        return_status(&mut b, fail);
    }
    b.seal_all_blocks();
    b.finalize(config);
}

/// Defines the plan's constants as local data objects `NAME.constK`.
fn define_consts<M: Module>(
    module: &mut M,
    name: &str,
    consts: &[ConstDecl],
) -> Result<Vec<DataId>, CodegenError> {
    let mut const_ids = vec![];
    for (k, c) in consts.iter().enumerate() {
        let id = module.declare_data(&format!("{name}.const{k}"), Linkage::Local, false, false)?;
        let mut data = DataDescription::new();
        // Never empty (an empty object has no address to take), aligned for any element.
        let mut bytes = c.tensor.bytes().to_vec();
        bytes.resize(bytes.len().max(8), 0);
        data.define(bytes.into_boxed_slice());
        data.set_align(16);
        module.define_data(id, &data)?;
        const_ids.push(id);
    }
    Ok(const_ids)
}

/// A JIT (code that is not position-independent) places functions and data in mappings that
/// may lie more than 2 GiB apart, out of reach of PC-relative addressing: there, refer to them
/// by absolute address. Object files keep the linker's near references.
fn far<M: Module>(module: &M) -> bool {
    !module.isa().flags().is_pic()
}

/// A reference to function `id` of the module from `func`.
fn func_ref<M: Module>(module: &mut M, id: FuncId, func: &mut Function) -> FuncRef {
    let far = far(&*module);
    let f = module.declare_func_in_func(id, func);
    func.dfg.ext_funcs[f].colocated &= !far;
    f
}

/// References to the constants' data objects from `func`.
fn const_refs<M: Module>(module: &mut M, ids: &[DataId], func: &mut Function) -> Vec<GlobalValue> {
    let far = far(&*module);
    ids.iter()
        .map(|&id| {
            let gv = module.declare_data_in_func(id, func);
            if let GlobalValueData::Symbol { colocated, .. } = &mut func.global_values[gv] {
                *colocated &= !far;
            }
            gv
        })
        .collect()
}

/// Branches to `fail` with [`STATUS_BAD_RANGE`] unless `0 <= begin <= end <= outer`.
fn check_range(b: &mut FunctionBuilder, begin: Value, end: Value, outer: Value, fail: Block) {
    let run = b.create_block();
    let below = b.ins().icmp_imm_s(IntCC::SignedLessThan, begin, 0);
    let crossed = b.ins().icmp(IntCC::SignedGreaterThan, begin, end);
    let beyond = b.ins().icmp(IntCC::SignedGreaterThan, end, outer);
    let bad = b.ins().bor(below, crossed);
    let bad = b.ins().bor(bad, beyond);
    let bad_range = b.ins().iconst(types::I32, STATUS_BAD_RANGE as i64);
    b.ins().brif(bad, fail, &[BlockArg::Value(bad_range)], run, NO_ARGS);
    b.switch_to_block(run);
}

/// The kernel's buffer table: the caller's table as is when it already is the kernel's (plan
/// order, no constants); otherwise built on the stack.
fn buffer_table(
    b: &mut FunctionBuilder,
    ptr: Type,
    inputs: Value,
    order: &[usize],
    const_gvs: &[GlobalValue],
) -> Value {
    let identity = order.iter().enumerate().all(|(p, &o)| p == o);
    if identity && const_gvs.is_empty() {
        return inputs;
    }
    let pw = ptr.bytes() as i32;
    let slots = (order.len() + const_gvs.len()).max(1) as u32;
    let ss = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, slots * pw as u32, 4));
    for (p, &o) in order.iter().enumerate() {
        let v = b.ins().load(ptr, MemFlagsData::trusted(), inputs, o as i32 * pw);
        b.ins().stack_store(ptr, v, ss, p as i32 * pw);
    }
    for (k, &gv) in const_gvs.iter().enumerate() {
        let v = b.ins().symbol_value(ptr, gv);
        b.ins().stack_store(ptr, v, ss, (order.len() + k) as i32 * pw);
    }
    b.ins().stack_addr(ptr, ss, 0)
}

/// The output check kernels write to (they write nothing).
fn check_scratch(b: &mut FunctionBuilder, ptr: Type) -> Value {
    let scratch = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4));
    b.ins().stack_addr(ptr, scratch, 0)
}

/// Calls `f` and branches to `fail` with its status unless it is OK.
fn call_or_fail(b: &mut FunctionBuilder, f: FuncRef, args: &[Value], fail: Block) {
    let call = b.ins().call(f, args);
    let status = b.inst_results(call)[0];
    let next = b.create_block();
    b.ins().brif(status, fail, &[BlockArg::Value(status)], next, NO_ARGS);
    b.switch_to_block(next);
}

/// Fills `fail` (one i32 parameter): it returns its status.
fn return_status(b: &mut FunctionBuilder, fail: Block) {
    b.switch_to_block(fail);
    let s = b.block_params(fail)[0];
    b.ins().return_(&[s]);
}
