//! Ahead-of-time kernels: a plan's entry ([`clif::define_entry`], the function the JIT runs
//! too) written into a relocatable object file with a C header. The entry has the kernel's C
//! signature:
//!
//! ```c
//! int32_t NAME(const uint8_t *const *inputs, uint8_t *out, int64_t begin, int64_t end);
//! ```
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

use super::clif::{self, Entry, STATUS_BAD_RANGE, STATUS_EMPTY_AXIS, STATUS_INDEX_OUT_OF_RANGE, STATUS_OK};
use crate::plan::{Plan, VerifiedPlan};
use crate::types::{ShapeDisplay, TensorType};
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
    plan: &VerifiedPlan,
    src: &str,
    declared: &[(String, TensorType)],
    name: &str,
) -> Result<AotKernel, AotError> {
    if !valid_name(name) {
        return Err(AotError::BadName(name.to_string()));
    }
    if let Some(strided) = plan.inputs.iter().find(|d| d.strides.is_some()) {
        return Err(AotError::StridedInput(strided.name.clone()));
    }
    let names: Vec<&str> = declared.iter().map(|(n, _)| n.as_str()).collect();
    let order = input_order(plan, &names)?;
    let builder = ObjectBuilder::new(object_isa()?, format!("{name}.o"), default_libcall_names())
        .map_err(|e| AotError::Object(e.to_string()))?;
    let mut module = ObjectModule::new(builder);
    let entry = crate::limits::with_stack_for(plan.nesting(), || {
        clif::define_entry(&mut module, name, Linkage::Export, plan, &order)
    })
    .map_err(|e| AotError::Codegen(e.to_string()))?;
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
