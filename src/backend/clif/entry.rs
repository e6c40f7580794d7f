//! A plan's *entry*: the function JIT kernels and AOT objects export. It has the kernel
//! signature and wraps the plan's kernel, which takes the plan's inputs *and its constants* in
//! one buffer table and leaves the plan's index checks to its caller:
//!
//! - `buffers` holds one pointer per input of the caller, in its order (`order` maps them to
//!   the plan's); the constants are data objects of the module;
//! - every call first runs the plan's checks, each a check nest compiled as a kernel of its own,
//!   then the kernel over `[begin, end)` of the outermost loop;
//! - a range outside `0 <= begin <= end <= OUTER` returns [`STATUS_BAD_RANGE`] and touches
//!   nothing.
//!
//! The generic entry (`generic_entry.rs`) is built from the same parts.

use super::{CodegenError, NO_ARGS, STATUS_BAD_RANGE, define_kernel, signature, target, verify};
use crate::backend::loopnest::{self, LoopNest};
use crate::plan::{ConstDecl, VerifiedPlan};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    Block, BlockArg, FuncRef, Function, GlobalValue, GlobalValueData, InstBuilder, MemFlagsData,
    StackSlotData, StackSlotKind, Type, Value, types,
};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{DataDescription, DataId, FuncId, Linkage, Module};

/// What [`define_entry`] produced.
#[derive(Debug, Clone)]
pub struct Entry {
    pub id: FuncId,
    /// The main kernel's schedule.
    pub nest: LoopNest,
    /// The range callers split: `[0, outer)`.
    pub outer: i64,
    /// The schedules of the plan's checks (empty index tensors have none).
    pub checks: Vec<LoopNest>,
}

/// Defines `name` in `module`: the entry of `plan` described in the module doc. `order[p]` is
/// the caller's slot for plan input `p`. Helper symbols are local, named `NAME.main`,
/// `NAME.checkK`, `NAME.constK` (dots keep them apart from C identifiers).
pub fn define_entry<M: Module>(
    module: &mut M,
    name: &str,
    linkage: Linkage,
    plan: &VerifiedPlan,
    order: &[usize],
) -> Result<Entry, CodegenError> {
    let target = target(module.isa());
    let nest = loopnest::schedule(plan, target, |_, _| {});
    let outer = concrete_outer(&nest);
    let main_id = define_kernel(module, &format!("{name}.main"), Linkage::Local, &nest)?;
    let mut checks = vec![];
    let mut check_ids = vec![];
    for (k, c) in plan.checks.iter().enumerate() {
        if let Some(n) = loopnest::schedule_check(plan, c, target) {
            let id = define_kernel(module, &format!("{name}.check{k}"), Linkage::Local, &n)?;
            check_ids.push((id, concrete_outer(&n)));
            checks.push(n);
        }
    }
    let const_ids = define_consts(module, name, &plan.consts)?;

    let sig = signature(module.isa());
    let id = module.declare_function(name, linkage, &sig)?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    let main_ref = func_ref(module, main_id, &mut ctx.func);
    let check_refs: Vec<_> =
        check_ids.iter().map(|&(id, n)| (func_ref(module, id, &mut ctx.func), n)).collect();
    let const_gvs = const_refs(module, &const_ids, &mut ctx.func);
    let config = module.target_config();
    let ptr = config.pointer_type();
    let mut fctx = FunctionBuilderContext::new();
    {
        let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let p = b.block_params(entry).to_vec();
        let (inputs, out, begin, end) = (p[0], p[1], p[2], p[3]);
        let fail = b.create_block();
        b.append_block_param(fail, types::I32);
        let outer = b.ins().iconst(types::I64, outer);
        check_range(&mut b, begin, end, outer, fail);
        let table = buffer_table(&mut b, ptr, inputs, order, &const_gvs);
        if !check_refs.is_empty() {
            let scratch = check_scratch(&mut b, ptr);
            let zero = b.ins().iconst(types::I64, 0);
            for &(f, n) in &check_refs {
                let n = b.ins().iconst(types::I64, n);
                call_or_fail(&mut b, f, &[table, scratch, zero, n], fail);
            }
        }
        let call = b.ins().call(main_ref, &[table, out, begin, end]);
        let status = b.inst_results(call)[0];
        b.ins().return_(&[status]);
        return_status(&mut b, fail);
        b.seal_all_blocks();
        b.finalize(config);
    }
    verify(&ctx.func, module.isa())?;
    module.define_function(id, &mut ctx)?;
    module.clear_context(&mut ctx);
    Ok(Entry { id, nest, outer, checks })
}

/// The outermost extent of a concrete plan's nest.
fn concrete_outer(nest: &LoopNest) -> i64 {
    nest.outer_extent().as_const().expect("a concrete plan's nest has constant extents")
}

/// Defines the plan's constants as local data objects `NAME.constK`.
pub(super) fn define_consts<M: Module>(
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
pub(super) fn func_ref<M: Module>(module: &mut M, id: FuncId, func: &mut Function) -> FuncRef {
    let far = far(&*module);
    let f = module.declare_func_in_func(id, func);
    func.dfg.ext_funcs[f].colocated &= !far;
    f
}

/// References to the constants' data objects from `func`.
pub(super) fn const_refs<M: Module>(module: &mut M, ids: &[DataId], func: &mut Function) -> Vec<GlobalValue> {
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
pub(super) fn check_range(b: &mut FunctionBuilder, begin: Value, end: Value, outer: Value, fail: Block) {
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
pub(super) fn buffer_table(
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
pub(super) fn check_scratch(b: &mut FunctionBuilder, ptr: Type) -> Value {
    let scratch = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4));
    b.ins().stack_addr(ptr, scratch, 0)
}

/// Calls `f` and branches to `fail` with its status unless it is OK.
pub(super) fn call_or_fail(b: &mut FunctionBuilder, f: FuncRef, args: &[Value], fail: Block) {
    let call = b.ins().call(f, args);
    let status = b.inst_results(call)[0];
    let next = b.create_block();
    b.ins().brif(status, fail, &[BlockArg::Value(status)], next, NO_ARGS);
    b.switch_to_block(next);
}

/// Fills `fail` (one i32 parameter): it returns its status.
pub(super) fn return_status(b: &mut FunctionBuilder, fail: Block) {
    b.switch_to_block(fail);
    let s = b.block_params(fail)[0];
    b.ins().return_(&[s]);
}
