//! Ahead-of-time kernels: a plan's entry ([`clif::define_entry`], the function the JIT runs
//! too) written into a relocatable object file with a C header. One [`compile`] and one
//! [`header`] serve every plan; the ABI follows from what there is to bind
//! ([`clif::binds`], docs/design/shape-generic.md §6):
//!
//! - A plan without symbols, for inputs of constant dims, gets the *concrete ABI*:
//!
//!   ```c
//!   int32_t NAME(const uint8_t *const *inputs, uint8_t *out, int64_t begin, int64_t end);
//!   ```
//!
//!   and its header gives the shapes as macros (`NAME_OUTER`, `NAME_OUT_SHAPE`, ...).
//! - A plan with symbolic dims or run-time scalars gets the *generic ABI*: one object for every
//!   shape, exporting `NAME_shape`, which checks the call's dims (and run-time scalars) and
//!   computes the output's dims and the outer extent, and `NAME`, which takes the dims too
//!   (`in_dims`) and runs the same shape function before the kernel; a shape that does not fit
//!   returns `SHAPE_MISMATCH` and writes nothing.
//!
//! Either way:
//!
//! - `inputs` holds one pointer per *declared* input, in declaration order (inputs the program
//!   does not use are never read and may be NULL); the constants are data objects of the object;
//! - every call first checks every value of the index tensors (NumPy raises even for values a
//!   later slice drops), then runs the kernel over `[begin, end)` of the outermost loop;
//! - a range outside `0 <= begin <= end <= OUTER` returns [`STATUS_BAD_RANGE`] and touches
//!   nothing.
//!
//! Objects are built for the architecture's baseline features, so their loop nests may choose
//! other strategies than the JIT's for the same plan (no byte shuffles on x86-64 without SSSE3).

use super::clif::{
    self, Entry, STATUS_BAD_RANGE, STATUS_EMPTY_AXIS, STATUS_INDEX_OUT_OF_RANGE, STATUS_OK,
    STATUS_SHAPE_MISMATCH, STATUS_STORE_READS_TARGET,
};
use crate::plan::{BufferId, InputDecl, Plan, VerifiedGenericPlan};
use crate::types::ShapeDisplay;
use crate::types::sym::{Sym, SymExpr};
use cranelift_codegen::isa::OwnedTargetIsa;
use cranelift_codegen::settings::{self, Configurable};
use cranelift_module::{Linkage, default_libcall_names};
use cranelift_object::{ObjectBuilder, ObjectModule};
use std::fmt::Write as _;

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

/// The status only store kernels return, besides [`STATUSES`].
pub const STATUS_STORE_READS_TARGET_DOC: (&str, i32, &str) = (
    "STORE_READS_TARGET",
    STATUS_STORE_READS_TARGET,
    "`out` is the target, but this store reads its target or may fail after its first write: pass another \
     output; nothing was written",
);

/// The status only kernels with the generic ABI return, besides [`STATUSES`].
pub const STATUS_SHAPE_MISMATCH_DOC: (&str, i32, &str) = (
    "SHAPE_MISMATCH",
    STATUS_SHAPE_MISMATCH,
    "the dims or run-time scalars do not fit the kernel (axes with one name differ, a constant dim differs, a \
     condition of the program fails, a size overflows); nothing was written",
);

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
    /// AOT kernels take dense inputs (their header says so); strided views are a JIT feature.
    #[error("input `{0}` is a strided view; ahead-of-time kernels read dense, C-ordered inputs")]
    StridedInput(String),
    /// A store's value of another dtype is cast per call by the library's run path, which an
    /// object's caller does not have.
    #[error(
        "the store casts `{input}` to {dtype} per call, which ahead-of-time kernels do not: give `{input}` as {dtype}"
    )]
    CastInput { input: String, dtype: slc_runtime::DType },
}

/// For each plan input, its position among `declared` (by name; for an input the plan derives
/// from a mask per call, the mask's).
pub fn input_order<D>(plan: &Plan<D>, declared: &[&str]) -> Result<Vec<usize>, AotError> {
    for (i, name) in declared.iter().enumerate() {
        if declared[..i].contains(name) {
            return Err(AotError::DuplicateInput(name.to_string()));
        }
    }
    plan.inputs
        .iter()
        .map(|d| {
            let name = d.given_name();
            declared
                .iter()
                .position(|n| *n == name)
                .ok_or_else(|| AotError::UndeclaredInput(name.to_string()))
        })
        .collect()
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

/// Compiles `plan` (the program `src` checked for the `declared` inputs, in this order, their
/// dims constants or symbols) into an object file exporting `name` (and, with the generic ABI,
/// `name_shape`), and writes its header.
pub fn compile(
    plan: &VerifiedGenericPlan,
    src: &str,
    declared: &[InputDecl<SymExpr>],
    name: &str,
) -> Result<AotKernel, AotError> {
    if !valid_name(name) {
        return Err(AotError::BadName(name.to_string()));
    }
    if let Some(strided) = plan.inputs.iter().find(|d| d.strides.is_some()) {
        return Err(AotError::StridedInput(strided.name.clone()));
    }
    if let Some(cast) = plan.inputs.iter().find(|d| d.cast_of().is_some()) {
        return Err(AotError::CastInput { input: cast.given_name().into(), dtype: cast.dtype });
    }
    let names: Vec<&str> = declared.iter().map(|d| d.name.as_str()).collect();
    let order = input_order(plan, &names)?;
    let (object, entry) = object(name, plan.nesting(), |module| {
        let entry = clif::define_entry(
            module,
            name,
            Linkage::Export,
            plan,
            &order,
            declared,
            clif::StoreEntry::Whole,
        )
        .map_err(|e| e.to_string())?;
        if entry.nest.streams() {
            clif::define_copy_streaming(module).map_err(|e| e.to_string())?;
        }
        if entry.nest.fills_streaming() {
            clif::define_fill_streaming(module).map_err(|e| e.to_string())?;
        }
        if entry.nest.spreads_ahead() {
            clif::define_spread_ahead(module, entry.nest.width).map_err(|e| e.to_string())?;
        }
        Ok(entry)
    })?;
    let header = header(plan, src, declared, name, &entry);
    Ok(AotKernel { object, header, entry })
}

/// An object file named `name.o` with what `define` puts in it (on a stack deep enough for
/// `nesting` levels of index accesses).
fn object<T>(
    name: &str,
    nesting: usize,
    define: impl FnOnce(&mut ObjectModule) -> Result<T, String>,
) -> Result<(Vec<u8>, T), AotError> {
    let builder = ObjectBuilder::new(object_isa()?, format!("{name}.o"), default_libcall_names())
        .map_err(|e| AotError::Object(e.to_string()))?;
    let mut module = ObjectModule::new(builder);
    let defined =
        crate::limits::with_stack_for(nesting, || define(&mut module)).map_err(AotError::Codegen)?;
    let object = module.finish().emit().map_err(|e| AotError::Object(e.to_string()))?;
    Ok((object, defined))
}

/// `/* ... */` safe: a `*/` in the source must not end the comment.
fn comment_safe(s: &str) -> String {
    s.replace("*/", "* /")
}

/// The C header of an AOT kernel: the ABI its entry has ([`Entry::binds`]).
pub fn header(
    plan: &VerifiedGenericPlan,
    src: &str,
    declared: &[InputDecl<SymExpr>],
    name: &str,
    entry: &Entry,
) -> String {
    let up = name.to_ascii_uppercase();
    let guard = format!("SLC_KERNEL_{up}_H");
    let binds = entry.binds();
    let mut h = String::new();
    let w = &mut h;
    source_comment(w, src, &plan.to_string());
    let outer = comment_safe(&entry.outer().to_string());
    let split = match (plan.store.is_some(), binds) {
        (true, true) => "once with (0, OUTER)\n * (a store runs whole)".to_string(),
        (true, false) => format!("call it once with (0,\n * {up}_OUTER) (a store runs whole)"),
        (false, true) => "once with (0, OUTER), or split\n * the range across threads (disjoint ranges write disjoint bytes)".to_string(),
        (false, false) => format!(
            "call it once with\n * (0, {up}_OUTER), or split the range across threads (disjoint ranges write disjoint bytes)"
        ),
    };
    let usage = if binds {
        format!(
            " *
 * A generic kernel: one object for every shape. `in_dims[i]` points to the dims of input i
 * ({up}_INi_RANK int64_t values); `inputs[i]` to its elements (dense, C order, the element
 * type given). Inputs the program does not read are never touched and may be NULL, in both
 * tables. Call {name}_shape first: it checks the dims (the same name must have the same size;
 * constant dims must match; every dim must lie in [0, 2^62]) and the program's conditions,
 * then writes the output's {up}_OUT_RANK dims and the outermost extent OUTER ({outer}).
 * Allocate the output (dense, C order, {up}_OUT_ELEM_SIZE bytes per element), then call
 * {name} with the same dims over [begin, end) of [0, OUTER): {split}. {name} checks the shapes
 * again, then every value of the index tensors (NumPy raises even for values a later slice
 * drops). Results are {up}_STATUS_* codes; on SHAPE_MISMATCH nothing was written. The
 * object needs only libc (memcpy, memset).
 */"
        )
    } else {
        format!(
            " *
 * Usage: `inputs[i]` points to the i-th input below (dense, C order, the element type given);
 * inputs the program does not read are never touched and may be NULL. Constants of the program
 * (index lists) are inside the object. `out` receives {up}_OUT_NBYTES bytes, dense, C order.
 * A call computes the outermost-loop range [begin, end) of [0, {up}_OUTER): {split}.
 * Each call first checks every value of the index tensors (NumPy raises even for values a later
 * slice drops). The result is one of the {up}_STATUS_* codes. The object needs only libc
 * (memcpy, memset).
 */"
        )
    };
    let _ = writeln!(w, "{usage}");
    open_header(w, &guard);
    let mut statuses = STATUSES.to_vec();
    if binds {
        statuses.push(STATUS_SHAPE_MISMATCH_DOC);
    }
    if plan.store.is_some() {
        statuses.push(STATUS_STORE_READS_TARGET_DOC);
        store_usage(w, &up, plan, declared, entry);
    }
    status_macros(w, &up, &statuses);
    if binds {
        let _ = writeln!(w, "\n/* Inputs, in the order of `inputs` and `in_dims`. */");
    } else {
        let _ = writeln!(w, "\n/* The outermost-loop extent: call with 0 <= begin <= end <= {up}_OUTER. */");
        let _ = writeln!(w, "#define {up}_OUTER INT64_C({outer})\n");
        let _ = writeln!(w, "/* Inputs, in the order of `inputs`. */");
    }
    let _ = writeln!(w, "#define {up}_NUM_INPUTS {}", declared.len());
    let scalars: Vec<String> = plan
        .scalars()
        .into_iter()
        .filter_map(|s| match s {
            Sym::Scalar { name, .. } => Some(name.to_string()),
            Sym::Dim(_) => None,
        })
        .collect();
    for (i, d) in declared.iter().enumerate() {
        let used = plan.inputs.iter().any(|p| p.name == d.name) || scalars.contains(&d.name);
        let note = if used { "" } else { " (not read by the program)" };
        let ty = comment_safe(&format!("{}{}", d.dtype, ShapeDisplay(&d.shape)));
        let _ = writeln!(w, "/* inputs[{i}]: {}: {ty}{note} */", d.name);
        let _ = writeln!(w, "#define {up}_IN_{} {i}", d.name);
        tensor_macros(w, &format!("{up}_IN{i}"), d.dtype, &d.shape, binds);
    }
    let out = comment_safe(&format!("{}{}", plan.dtype, ShapeDisplay(&plan.shape)));
    let _ = writeln!(w, "\n/* The output: {out}. */");
    tensor_macros(w, &format!("{up}_OUT"), plan.dtype, &plan.shape, binds);
    if binds {
        functions_generic(w, &up, name, entry.shape_reads_inputs);
    } else {
        let _ = writeln!(
            w,
            "\n/* Runs the kernel over [begin, end) of [0, {up}_OUTER); returns a {up}_STATUS_* code. */"
        );
        let _ = writeln!(
            w,
            "int32_t {name}(const uint8_t *const *inputs, uint8_t *out, int64_t begin, int64_t end);\n"
        );
    }
    close_header(w, &guard);
    h
}

/// What a store kernel's header adds to the usage: the target, the whole range, in place.
fn store_usage(
    w: &mut String,
    up: &str,
    plan: &VerifiedGenericPlan,
    declared: &[InputDecl<SymExpr>],
    entry: &Entry,
) {
    let BufferId::Input(target) = plan.output.buffer else { return };
    let Some(slot) = declared.iter().position(|d| d.name == plan.inputs[target].name) else { return };
    let in_place = match crate::backend::loopnest::store_may_run_in_place(plan.plan()) {
        true => "`out` may be the target itself (a store in place: no copy)",
        false => "`out` must not be the target (this store reads it, or may fail after its first write)",
    };
    let _ = writeln!(
        w,
        "/* A store: the output is input {slot} ({name}) with the program's updates. A call copies that\n \
         * input into `out`, then writes the updates; {in_place}.\n \
         * It runs the whole range only: begin = 0, end = OUTER ({outer}). */\n#define {up}_STORE_TARGET {slot}\n",
        name = comment_safe(&plan.inputs[target].name),
        outer = comment_safe(&entry.outer().to_string()),
    );
}

/// The declarations of the generic ABI's functions.
fn functions_generic(w: &mut String, up: &str, name: &str, reads: bool) {
    let inputs = if reads {
        let _ = writeln!(
            w,
            "\n/* The output's dims depend on the values of run-time scalar inputs: {name}_shape reads\n \
             * them from `inputs`. */\n#define {up}_SHAPE_READS_INPUTS 1"
        );
        "const uint8_t *const *inputs, "
    } else {
        let _ = writeln!(w, "\n#define {up}_SHAPE_READS_INPUTS 0");
        ""
    };
    let _ = writeln!(
        w,
        "\n/* Computes the output dims ({up}_OUT_RANK values) and the outermost extent for inputs with the\n \
         * given dims (in_dims[i] points to input i's {up}_INi_RANK dims); returns {up}_STATUS_OK or\n \
         * {up}_STATUS_SHAPE_MISMATCH. */"
    );
    let _ = writeln!(
        w,
        "int32_t {name}_shape({inputs}const int64_t *const *in_dims, int64_t *out_dims, int64_t *outer);\n"
    );
    let _ = writeln!(
        w,
        "/* Runs [begin, end) of [0, outer) as {name}_shape gives it; in_dims as above. Returns a\n \
         * {up}_STATUS_* code. */"
    );
    let open = format!("int32_t {name}(");
    let _ = writeln!(
        w,
        "{open}const uint8_t *const *inputs, const int64_t *const *in_dims, uint8_t *out,\n{:w$}int64_t \
         begin, int64_t end);\n",
        "",
        w = open.len()
    );
}

/// The header's opening comment up to the plan's text.
fn source_comment(w: &mut String, src: &str, plan: &str) {
    let _ = writeln!(w, "/* Generated by `slc compile --target cpu`. Do not edit.");
    let _ = writeln!(w, " *");
    let _ = writeln!(w, " * Source expression:");
    for line in src.lines() {
        let _ = writeln!(w, " *     {}", comment_safe(line));
    }
    let _ = writeln!(w, " *");
    let _ = writeln!(w, " * Plan:");
    for line in plan.lines() {
        let _ = writeln!(w, " *     {}", comment_safe(line));
    }
}

fn open_header(w: &mut String, guard: &str) {
    let _ = writeln!(w, "#ifndef {guard}\n#define {guard}\n\n#include <stdint.h>\n");
    let _ = writeln!(w, "#ifdef __cplusplus\nextern \"C\" {{\n#endif\n");
}

fn close_header(w: &mut String, guard: &str) {
    let _ = writeln!(w, "#ifdef __cplusplus\n}}\n#endif\n\n#endif /* {guard} */");
}

fn status_macros(w: &mut String, up: &str, statuses: &[(&str, i32, &str)]) {
    let _ = writeln!(w, "/* Status codes. */");
    for (s, v, what) in statuses {
        let _ = writeln!(w, "#define {up}_STATUS_{s} {v} /* {what} */");
    }
}

/// A tensor's dtype, element size and rank.
fn type_macros(w: &mut String, p: &str, dtype: slc_runtime::DType, rank: usize) {
    let _ = writeln!(w, "#define {p}_DTYPE \"{dtype}\"");
    let _ = writeln!(w, "#define {p}_ELEM_SIZE {}", dtype.width());
    let _ = writeln!(w, "#define {p}_RANK {rank}");
}

/// A tensor's type macros; with the concrete ABI (`binds` false: every dim a constant) its
/// shape, element count and bytes too.
fn tensor_macros(w: &mut String, p: &str, dtype: slc_runtime::DType, shape: &[SymExpr], binds: bool) {
    type_macros(w, p, dtype, shape.len());
    let dims: Option<Vec<i64>> = shape.iter().map(SymExpr::as_const).collect();
    let Some(dims) = dims.filter(|_| !binds) else { return };
    let numel: i64 = dims.iter().product();
    let width = dtype.width() as i64;
    if dims.is_empty() {
        let _ = writeln!(w, "/* 0-d: no {p}_SHAPE */");
    } else {
        let list: Vec<String> = dims.iter().map(|d| format!("INT64_C({d})")).collect();
        let _ = writeln!(w, "#define {p}_SHAPE {{{}}} /* {} */", list.join(", "), ShapeDisplay(&dims));
    }
    let _ = writeln!(w, "#define {p}_NUMEL INT64_C({numel})");
    let _ = writeln!(w, "#define {p}_NBYTES INT64_C({})", numel.saturating_mul(width));
}
