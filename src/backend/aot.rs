//! Ahead-of-time kernels: the same loop nests and the same Cranelift code generator as the JIT
//! ([`clif::define_kernel`]), written into a relocatable object file with a C header.
//!
//! A plan's raw kernel takes the plan's inputs *and its constants* (index list literals) in one
//! buffer table, and leaves the plan's index checks to its caller. [`define_entry`] wraps it
//! into a self-contained *entry* function with the same C signature:
//!
//! ```c
//! int32_t NAME(const uint8_t *const *inputs, uint8_t *out, int64_t begin, int64_t end);
//! ```
//!
//! - `inputs` holds one pointer per *declared* input, in declaration order (inputs the program
//!   does not use are never read and may be NULL); the constants are data objects of the module;
//! - every call first runs the plan's checks (each compiled as a kernel of its own that loads
//!   every value of an index tensor and fails on one out of range, as NumPy does even for values
//!   a later slice drops), then the kernel over `[begin, end)` of the outermost loop;
//! - a range outside `0 <= begin <= end <= OUTER` returns [`STATUS_BAD_RANGE`] and touches
//!   nothing.
//!
//! The embedding API's JIT kernels are this very entry compiled into a `JITModule`, so the Rust
//! API, the C ABI and AOT objects run one code path.

use super::clif::{self, STATUS_EMPTY_AXIS, STATUS_INDEX_OUT_OF_RANGE, STATUS_OK};
use super::loopnest::{self, LoopNest};
use crate::plan::{Access, Indirect, OobMode, Plan};
use crate::sema::TensorType;
use crate::sema::typed::ShapeDisplay;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    BlockArg, GlobalValueData, InstBuilder, MemFlagsData, StackSlotData, StackSlotKind, types,
};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{DataDescription, FuncId, Linkage, Module, ModuleError, default_libcall_names};
use cranelift_object::{ObjectBuilder, ObjectModule};
use std::fmt::Write as _;

const NO_ARGS: &[BlockArg] = &[];

/// `begin`/`end` outside `0 <= begin <= end <= OUTER`: nothing ran.
pub const STATUS_BAD_RANGE: i32 = 3;

/// Every status an entry returns, with its meaning (for headers and documentation).
pub const STATUSES: [(&str, i32, &str); 4] = [
    ("OK", STATUS_OK, "success"),
    (
        "INDEX_OUT_OF_RANGE",
        STATUS_INDEX_OUT_OF_RANGE,
        "a value of an index tensor is out of range (NumPy's IndexError); the output is unspecified",
    ),
    ("EMPTY_AXIS", STATUS_EMPTY_AXIS, "clamp or wrap gather on an axis of size 0; the output is unspecified"),
    ("BAD_RANGE", STATUS_BAD_RANGE, "begin/end outside 0 <= begin <= end <= OUTER; nothing was written"),
];

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AotError {
    #[error("this machine is not supported by the code generator: {0}")]
    UnsupportedHost(String),
    #[error("code generation failed: {0}")]
    Codegen(String),
    #[error("writing the object file failed: {0}")]
    Object(String),
    #[error("`{0}` is not a valid kernel name: use a C identifier ([A-Za-z_][A-Za-z0-9_]*)")]
    BadName(String),
    #[error("input `{0}` is declared twice")]
    DuplicateInput(String),
    #[error("the plan reads `{0}`, which is not a declared input")]
    UndeclaredInput(String),
}

fn module_error(e: ModuleError) -> AotError {
    AotError::Codegen(e.to_string())
}

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

/// For each plan input, its position among `declared` (by name).
pub fn input_order(plan: &Plan, declared: &[&str]) -> Result<Vec<usize>, AotError> {
    for (i, name) in declared.iter().enumerate() {
        if declared[..i].contains(name) {
            return Err(AotError::DuplicateInput(name.to_string()));
        }
    }
    plan.inputs
        .iter()
        .map(|d| {
            declared
                .iter()
                .position(|n| *n == d.name)
                .ok_or_else(|| AotError::UndeclaredInput(d.name.clone()))
        })
        .collect()
}

/// The loop nest of check `index` over `shape`: every index value is loaded through an
/// `error`-mode term, so the kernel returns STATUS_INDEX_OUT_OF_RANGE at the first value outside
/// `[-len, len)`. Every element is written to the same 8-byte scratch slot (output strides 0).
fn check_nest(plan: &Plan, index: &Access, shape: &[i64], len: i64) -> Option<LoopNest> {
    let dtype = plan.buffer_dtype(index.buffer)?;
    let synthetic = Plan {
        inputs: plan.inputs.clone(),
        consts: plan.consts.clone(),
        checks: vec![],
        dtype,
        shape: shape.to_vec(),
        // Reads element 0 of the index buffer (which holds at least the values checked) plus
        // 0 × the normalized index: only the term's bound check matters.
        output: Access {
            buffer: index.buffer,
            base: 0,
            strides: vec![0; shape.len()],
            terms: vec![Indirect { index: Box::new(index.clone()), len, stride: 0, mode: OobMode::Error }],
        },
    };
    let mut nest = loopnest::schedule(&synthetic, |_, _| {});
    if nest.empty {
        return None;
    }
    // One element at a time into the scratch slot: never a block copy, never a moving output.
    nest.block = false;
    nest.out.iter_mut().for_each(|s| *s = 0);
    Some(nest)
}

/// Defines `name` in `module`: the self-contained entry of `plan` described in the module doc.
/// `order[p]` is the caller's slot for plan input `p`. Helper symbols are local, named
/// `NAME.main`, `NAME.checkK`, `NAME.constK` (dots keep them apart from C identifiers).
pub fn define_entry<M: Module>(
    module: &mut M,
    name: &str,
    linkage: Linkage,
    plan: &Plan,
    order: &[usize],
) -> Result<Entry, AotError> {
    let nest = loopnest::schedule(plan, |_, _| {});
    let outer = nest.outer_extent();
    let codegen = |e: clif::CodegenError| AotError::Codegen(e.to_string());
    let main_id =
        clif::define_kernel(module, &format!("{name}.main"), Linkage::Local, &nest).map_err(codegen)?;
    let mut checks = vec![];
    let mut check_ids = vec![];
    for (k, c) in plan.checks.iter().enumerate() {
        if let Some(n) = check_nest(plan, &c.index, &c.shape, c.len) {
            let id = clif::define_kernel(module, &format!("{name}.check{k}"), Linkage::Local, &n)
                .map_err(codegen)?;
            check_ids.push((id, n.outer_extent()));
            checks.push(n);
        }
    }
    let mut const_ids = vec![];
    for (k, c) in plan.consts.iter().enumerate() {
        let id = module
            .declare_data(&format!("{name}.const{k}"), Linkage::Local, false, false)
            .map_err(module_error)?;
        let mut data = DataDescription::new();
        // Never empty (an empty object has no address to take), aligned for any element.
        let mut bytes = c.tensor.bytes().to_vec();
        bytes.resize(bytes.len().max(8), 0);
        data.define(bytes.into_boxed_slice());
        data.set_align(16);
        module.define_data(id, &data).map_err(module_error)?;
        const_ids.push(id);
    }

    let sig = clif::signature(module.isa());
    let id = module.declare_function(name, linkage, &sig).map_err(module_error)?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    // A JIT (code that is not position-independent) places functions and data in mappings that
    // may lie more than 2 GiB apart, out of reach of PC-relative addressing: there, refer to
    // them by absolute address. Object files keep the linker's near references.
    let far = !module.isa().flags().is_pic();
    let mut func_ref = |id: FuncId, func: &mut cranelift_codegen::ir::Function| {
        let f = module.declare_func_in_func(id, func);
        func.dfg.ext_funcs[f].colocated &= !far;
        f
    };
    let main_ref = func_ref(main_id, &mut ctx.func);
    let check_refs: Vec<_> = check_ids.iter().map(|&(id, n)| (func_ref(id, &mut ctx.func), n)).collect();
    let const_gvs: Vec<_> = const_ids
        .iter()
        .map(|&id| {
            let gv = module.declare_data_in_func(id, &mut ctx.func);
            if let GlobalValueData::Symbol { colocated, .. } = &mut ctx.func.global_values[gv] {
                *colocated &= !far;
            }
            gv
        })
        .collect();
    let config = module.target_config();
    let ptr = config.pointer_type();
    let pw = ptr.bytes() as i32;
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
        let run = b.create_block();
        let below = b.ins().icmp_imm_s(IntCC::SignedLessThan, begin, 0);
        let crossed = b.ins().icmp(IntCC::SignedGreaterThan, begin, end);
        let beyond = b.ins().icmp_imm_s(IntCC::SignedGreaterThan, end, outer);
        let bad = b.ins().bor(below, crossed);
        let bad = b.ins().bor(bad, beyond);
        let bad_range = b.ins().iconst(types::I32, STATUS_BAD_RANGE as i64);
        b.ins().brif(bad, fail, &[BlockArg::Value(bad_range)], run, NO_ARGS);
        b.switch_to_block(run);
        // The caller's table serves as is when it already is the kernel's (plan order, no
        // constants); otherwise build the kernel's table on the stack.
        let identity = order.iter().enumerate().all(|(p, &o)| p == o);
        let table = if identity && const_gvs.is_empty() {
            inputs
        } else {
            let slots = (order.len() + const_gvs.len()).max(1) as u32;
            let ss = b.create_sized_stack_slot(StackSlotData::new(
                StackSlotKind::ExplicitSlot,
                slots * pw as u32,
                4,
            ));
            for (p, &o) in order.iter().enumerate() {
                let v = b.ins().load(ptr, MemFlagsData::trusted(), inputs, o as i32 * pw);
                b.ins().stack_store(ptr, v, ss, p as i32 * pw);
            }
            for (k, &gv) in const_gvs.iter().enumerate() {
                let v = b.ins().symbol_value(ptr, gv);
                b.ins().stack_store(ptr, v, ss, (order.len() + k) as i32 * pw);
            }
            b.ins().stack_addr(ptr, ss, 0)
        };
        if !check_refs.is_empty() {
            let scratch = b.create_sized_stack_slot(StackSlotData::new(StackSlotKind::ExplicitSlot, 16, 4));
            let scratch = b.ins().stack_addr(ptr, scratch, 0);
            let zero = b.ins().iconst(types::I64, 0);
            for &(f, n) in &check_refs {
                let n = b.ins().iconst(types::I64, n);
                let call = b.ins().call(f, &[table, scratch, zero, n]);
                let status = b.inst_results(call)[0];
                let next = b.create_block();
                b.ins().brif(status, fail, &[BlockArg::Value(status)], next, NO_ARGS);
                b.switch_to_block(next);
            }
        }
        let call = b.ins().call(main_ref, &[table, out, begin, end]);
        let status = b.inst_results(call)[0];
        b.ins().return_(&[status]);
        b.switch_to_block(fail);
        let s = b.block_params(fail)[0];
        b.ins().return_(&[s]);
        b.seal_all_blocks();
        b.finalize(config);
    }
    cranelift_codegen::verify_function(&ctx.func, module.isa()).map_err(|e| {
        AotError::Codegen(cranelift_codegen::print_errors::pretty_verifier_error(&ctx.func, None, e))
    })?;
    module.define_function(id, &mut ctx).map_err(module_error)?;
    module.clear_context(&mut ctx);
    Ok(Entry { id, nest, outer, checks })
}

/// The ISA for object files: the host's architecture with its *baseline* features (an object
/// built here runs on any machine of the same architecture), position-independent so it links
/// into PIE executables and shared libraries.
pub fn object_isa() -> Result<OwnedTargetIsa, AotError> {
    let host = |e: &dyn std::fmt::Display| AotError::UnsupportedHost(e.to_string());
    let mut flags = settings::builder();
    for (k, v) in [("opt_level", "speed"), ("is_pic", "true"), ("use_colocated_libcalls", "false")] {
        flags.set(k, v).map_err(|e| host(&e))?;
    }
    let isa = cranelift_native::builder_with_options(false).map_err(|e| host(&e))?;
    isa.finish(settings::Flags::new(flags)).map_err(|e| host(&e))
}

/// An AOT kernel: the object file's bytes and its C header.
#[derive(Debug, Clone)]
pub struct AotKernel {
    pub object: Vec<u8>,
    pub header: String,
    pub entry: Entry,
}

/// Is `name` usable as the exported C symbol?
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && name.len() <= 200
}

/// Compiles `plan` (the program `src` checked for `declared` inputs, in this order) into an
/// object file exporting exactly `name`, and writes its header.
pub fn compile(
    plan: &Plan,
    src: &str,
    declared: &[(String, TensorType)],
    name: &str,
) -> Result<AotKernel, AotError> {
    if !valid_name(name) {
        return Err(AotError::BadName(name.to_string()));
    }
    let names: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
    let order = input_order(plan, &names)?;
    let builder = ObjectBuilder::new(object_isa()?, format!("{name}.o"), default_libcall_names())
        .map_err(|e| AotError::Object(e.to_string()))?;
    let mut module = ObjectModule::new(builder);
    let entry = crate::limits::with_stack_for(plan.nesting(), || {
        define_entry(&mut module, name, Linkage::Export, plan, &order)
    })?;
    let object = module.finish().emit().map_err(|e| AotError::Object(e.to_string()))?;
    let header = header(plan, src, declared, name, entry.outer);
    Ok(AotKernel { object, header, entry })
}

/// `/* ... */` safe: a `*/` in the source must not end the comment.
fn comment_safe(s: &str) -> String {
    s.replace("*/", "* /")
}

/// The C header of an AOT kernel.
pub fn header(plan: &Plan, src: &str, declared: &[(String, TensorType)], name: &str, outer: i64) -> String {
    let up = name.to_ascii_uppercase();
    let guard = format!("SLC_KERNEL_{up}_H");
    let mut h = String::new();
    let w = &mut h;
    let _ = writeln!(w, "/* Generated by `slc compile --target cpu`. Do not edit.");
    let _ = writeln!(w, " *");
    let _ = writeln!(w, " * Source expression:");
    for line in src.lines() {
        let _ = writeln!(w, " *     {}", comment_safe(line));
    }
    let _ = writeln!(w, " *");
    let _ = writeln!(w, " * Plan:");
    for line in plan.to_string().lines() {
        let _ = writeln!(w, " *     {}", comment_safe(line));
    }
    let _ = writeln!(
        w,
        " *
 * Usage: `inputs[i]` points to the i-th input below (dense, C order, the element type given);
 * inputs the program does not read are never touched and may be NULL. Constants of the program
 * (index lists) are inside the object. `out` receives {up}_OUT_NBYTES bytes, dense, C order.
 * A call computes the outermost-loop range [begin, end) of [0, {up}_OUTER): call it once with
 * (0, {up}_OUTER), or split the range across threads (disjoint ranges write disjoint bytes).
 * Each call first checks every value of the index tensors (NumPy raises even for values a later
 * slice drops). The result is one of the {up}_STATUS_* codes. The object needs only libc
 * (memcpy, memset).
 */"
    );
    let _ = writeln!(w, "#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n");
    let _ = writeln!(w, "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n");
    let _ = writeln!(w, "/* Status codes. */");
    for (s, v, what) in STATUSES {
        let _ = writeln!(w, "#define {up}_STATUS_{s} {v} /* {what} */");
    }
    let _ = writeln!(w, "\n/* The outermost-loop extent: call with 0 <= begin <= end <= {up}_OUTER. */");
    let _ = writeln!(w, "#define {up}_OUTER INT64_C({outer})\n");
    let _ = writeln!(w, "/* Inputs, in the order of `inputs`. */");
    let _ = writeln!(w, "#define {up}_NUM_INPUTS {}", declared.len());
    let used: Vec<&str> = plan.inputs.iter().map(|d| d.name.as_str()).collect();
    for (i, (n, ty)) in declared.iter().enumerate() {
        let note = if used.contains(&n.as_str()) { "" } else { " (not read by the program)" };
        let _ = writeln!(w, "/* inputs[{i}]: {n}: {ty}{note} */");
        let _ = writeln!(w, "#define {up}_IN_{n} {i}");
        shape_macros(w, &format!("{up}_IN{i}"), ty);
    }
    let out = TensorType { dtype: plan.dtype, shape: plan.shape.clone() };
    let _ = writeln!(w, "\n/* The output: {out}. */");
    shape_macros(w, &format!("{up}_OUT"), &out);
    let _ = writeln!(
        w,
        "\n/* Runs the kernel over [begin, end) of [0, {up}_OUTER); returns a {up}_STATUS_* code. */"
    );
    let _ = writeln!(
        w,
        "int32_t {name}(const uint8_t *const *inputs, uint8_t *out, int64_t begin, int64_t end);\n"
    );
    let _ = writeln!(w, "#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {guard} */");
    h
}

fn shape_macros(w: &mut String, p: &str, ty: &TensorType) {
    let numel: i64 = ty.shape.iter().product();
    let width = ty.dtype.width() as i64;
    let _ = writeln!(w, "#define {p}_DTYPE \"{}\"", ty.dtype);
    let _ = writeln!(w, "#define {p}_ELEM_SIZE {width}");
    let _ = writeln!(w, "#define {p}_RANK {}", ty.shape.len());
    if ty.shape.is_empty() {
        let _ = writeln!(w, "/* 0-d: no {p}_SHAPE */");
    } else {
        let dims: Vec<String> = ty.shape.iter().map(|d| format!("INT64_C({d})")).collect();
        let _ = writeln!(w, "#define {p}_SHAPE {{{}}} /* {} */", dims.join(", "), ShapeDisplay(&ty.shape));
    }
    let _ = writeln!(w, "#define {p}_NUMEL INT64_C({numel})");
    let _ = writeln!(w, "#define {p}_NBYTES INT64_C({})", numel.saturating_mul(width));
}
