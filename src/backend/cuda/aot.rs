//! `slc compile --target cuda`: the generated kernels plus a host launcher in the same file,
//! which nvcc compiles as it is (NVRTC skips the launcher: `__CUDACC_RTC__`), and a header
//! declaring it. The launcher takes device pointers and a stream (docs/cuda.md has the ABI):
//!
//! - `int NAME_launch(const void* const* inputs, void* out, const long long* dims, cudaStream_t)`
//!   checks the inputs' dims (concatenated, in input order) against the compiled ones (-1
//!   when they differ), clears the error words and launches, asynchronously; else a
//!   `cudaError_t`.
//! - `int NAME_status(cudaStream_t, int* check, unsigned long long* element)` waits for the
//!   stream and says how the last launch went: 0 fine; 1 an index value out of range (the
//!   plan's `check` and the first failing `element` of it, in C order); 2 a clamp or wrap on an
//!   empty axis; 3 a gather out of range; or minus a `cudaError_t`.
//!
//! - `int NAME_output_dims(const long long* dims, long long* out_dims)` writes the output's
//!   dims for the inputs' (-1 where the launcher would refuse them).
//!
//! A plan with symbolic dims gets the same launcher: its shape function, in C
//! ([`aot_shape`](super::aot_shape)), binds the symbols from `dims` and checks the plan's
//! requirements before any launch, as the JIT's does.

use super::aot_shape::{CShape, HELPERS};
use super::codegen::{NARROW_ELEMENTS, NARROW_LIMIT};
use super::{CudaError, CudaSource};
use crate::plan::{InputDecl, VerifiedGenericPlan};
use crate::types::sym::{Cond, Sym, SymExpr};
use std::fmt::Write;

/// Threads per block of the launcher's grid, and the most blocks it launches (the kernels
/// stride over the rest).
pub const BLOCK: u64 = 256;
pub const MAX_GRID: u64 = 65535;

/// The return value of `NAME_launch` and `NAME_output_dims` for dims the kernel does not take.
pub const BAD_DIMS: i32 = -1;

/// The host launcher of `source` (generated from `plan`), to append to its text; it takes the
/// `declared` inputs in their order (the plan reads some of them), and binds their dims.
pub fn launcher(
    plan: &VerifiedGenericPlan,
    source: &CudaSource,
    declared: &[InputDecl<SymExpr>],
) -> Result<String, CudaError> {
    if plan.store.is_some() {
        // Its launcher would copy the target and run three kernels with an owner array.
        return Err(CudaError::Codegen(
            "a host launcher runs loads only: a store (`a[i] = v`) runs through `--backend cuda`".into(),
        ));
    }
    if let Some(d) = plan.inputs.iter().find(|d| d.strides.is_some() || d.derived.is_some()) {
        return Err(CudaError::Codegen(format!(
            "a host launcher takes dense inputs given by the caller: `{}` is a strided view or a mask's nonzero()",
            d.name
        )));
    }
    let l = &source.layout;
    let name = &source.name;
    let slots: Vec<usize> = (plan.inputs.iter())
        .map(|d| declared.iter().position(|x| x.name == d.name))
        .collect::<Option<_>>()
        .ok_or_else(|| CudaError::Codegen("the plan reads an input not declared".into()))?;
    let requires: Vec<&Cond> = plan.requires.iter().map(|r| &r.cond).collect();
    let scalars = plan.scalars();
    let (shape, bind) = CShape::bind(declared, &scalars, &requires, &BAD_DIMS.to_string())?;
    let dims = dims_parameters(&scalars);
    let err_words = plan.checks.len() + 1;
    let mut t = String::new();
    let _ = write!(
        t,
        "#if !defined(__CUDACC_RTC__)
#ifndef SLC_HOST_EMULATION
#include <cuda_runtime.h>
#define SLC_LAUNCH(kernel, grid, block, stream, args) kernel<<<(grid), (block), 0, (stream)>>>(args)
#endif
{HELPERS}__device__ unsigned long long {name}_err[{err_words}];
SLC_EXTERN int {name}_output_dims({dims}, long long* out_dims) {{
{bind}"
    );
    for (k, e) in plan.shape.iter().enumerate() {
        let _ = writeln!(
            t,
            "  out_dims[{k}] = {};
  if (bad) return {BAD_DIMS};",
            shape.expr(e)?
        );
    }
    let _ = write!(
        t,
        "  (void)dims; (void)out_dims;
  return 0;
}}
SLC_EXTERN int {name}_launch(const void* const* inputs, void* out, {dims}, cudaStream_t stream) {{
{bind}  {name}_args a;
  void* err = 0;
  int i, small = 1;
  unsigned long long count, total = 0, elements = 0, bytes;
  cudaError_t e;
  (void)inputs;
  for (i = 0; i < {}; i++) a.w[i] = 0;
",
        l.words().max(1),
    );
    // The dims consumed so far by each declared input, to size its bytes.
    let mut first = 0usize;
    for d in declared {
        let _ = writeln!(t, "  bytes = {}ULL;", d.dtype.width());
        for k in first..first + d.shape.len() {
            let _ = writeln!(
                t,
                "  if (__builtin_mul_overflow(bytes, (unsigned long long)dims[{k}], &bytes)) return {BAD_DIMS};"
            );
        }
        let _ = writeln!(t, "  small &= bytes <= {NARROW_LIMIT}ULL;");
        first += d.shape.len();
    }
    for (i, slot) in slots.iter().enumerate() {
        let _ = writeln!(t, "  a.w[{i}] = (unsigned long long)inputs[{slot}];");
    }
    let _ = writeln!(t, "  a.w[{}] = (unsigned long long)out;", l.out_word());
    let width = plan.dtype.width();
    let _ = writeln!(t, "  bytes = {width}ULL;");
    for e in &plan.shape {
        let _ = writeln!(
            t,
            "  if (__builtin_mul_overflow(bytes, (unsigned long long){}, &bytes) || bad) return {BAD_DIMS};",
            shape.expr(e)?
        );
    }
    let _ = writeln!(t, "  small &= bytes <= {NARROW_LIMIT}ULL;");
    for (n, nest) in l.nests.iter().enumerate() {
        // A nest's elements; its integers only where it has some (an empty tensor's dims may
        // make them overflow, as the JIT's launcher allows).
        let _ = writeln!(t, "  count = 1;");
        for e in &nest.extents {
            let _ = writeln!(
                t,
                "  {{ long long x = {}; if (bad) return {BAD_DIMS}; if (x < 0) x = 0;
    if (__builtin_mul_overflow(count, (unsigned long long)x, &count)) return {BAD_DIMS}; }}",
                shape.expr(e)?
            );
        }
        let _ = writeln!(t, "  elements = elements + count < elements ? ~0ULL : elements + count;");
        let _ =
            writeln!(t, "  count = (count / {}ULL + {}ULL - 1) / {}ULL;", nest.unit, nest.group, nest.group);
        if !nest.params.is_empty() {
            let _ = writeln!(t, "  if (count > 0) {{");
            for &p in &nest.params {
                let _ = writeln!(
                    t,
                    "    {{ long long v = {}; if (bad) return {BAD_DIMS};
      small &= v >= -{NARROW_LIMIT}LL && v <= {NARROW_LIMIT}LL; a.w[{}] = (unsigned long long)v; }}",
                    shape.expr(&l.params[p])?,
                    l.param_word(p)
                );
            }
            let _ = writeln!(t, "  }}");
        }
        let _ = writeln!(
            t,
            "  if (total + count < total) return {BAD_DIMS};
  total += count;
  a.w[{}] = total;",
            l.end_word(n)
        );
    }
    let _ = writeln!(t, "  small &= elements < {NARROW_ELEMENTS}ULL && total < {NARROW_ELEMENTS}ULL;");
    let _ = writeln!(
        t,
        "  e = cudaGetSymbolAddress(&err, {name}_err);\n  if (e != cudaSuccess) return (int)e;
  e = cudaMemsetAsync(err, 0xff, sizeof {name}_err, stream);\n  if (e != cudaSuccess) return (int)e;
  a.w[{}] = (unsigned long long)err;",
        l.err_word()
    );
    // The launcher's choice of kernel is the JIT runtime's (`launch::bind`).
    let launch = |wide: bool| format!("SLC_LAUNCH({}, grid, {BLOCK}u, stream, a)", source.entry(wide));
    let choose = match (l.narrow, l.wide) {
        (true, true) => format!("if (small) {}; else {};", launch(false), launch(true)),
        (true, false) => format!("{};", launch(false)),
        (false, _) => format!("{};", launch(true)),
    };
    let _ = write!(
        t,
        "  if (total > 0) {{
    unsigned int grid = (unsigned int)(total / {BLOCK}ULL + (total % {BLOCK}ULL != 0));
    if (grid > {MAX_GRID}u) grid = {MAX_GRID}u;
    {choose}
  }}
  (void)small;
  return (int)cudaGetLastError();
}}
SLC_EXTERN int {name}_status(cudaStream_t stream, int* check, unsigned long long* element) {{
  unsigned long long words[{err_words}];
  void* err = 0;
  cudaError_t e;
  int k;
  e = cudaGetSymbolAddress(&err, {name}_err);
  if (e != cudaSuccess) return -(int)e;
  e = cudaMemcpyAsync(words, err, sizeof words, cudaMemcpyDeviceToHost, stream);
  if (e != cudaSuccess) return -(int)e;
  e = cudaStreamSynchronize(stream);
  if (e != cudaSuccess) return -(int)e;
  for (k = 0; k < {err_words}; k++) {{
    if (words[k] != ~0ULL) {{
      *check = k;
      *element = words[k] >> 2;
      return (int)(words[k] & 3ULL) + 1;
    }}
  }}
  return 0;
}}
#endif
"
    );
    Ok(t)
}

/// The launcher's parameters that give the inputs' dims, and the values of the run-time
/// scalars where the plan reads some: host values, so that neither the output's dims nor a
/// launch reads device memory (a plan without them keeps the shorter signatures).
fn dims_parameters(scalars: &[Sym]) -> &'static str {
    match scalars.is_empty() {
        true => "const long long* dims",
        false => "const long long* dims, const long long* scalars",
    }
}

/// The C header declaring `source`'s launcher, which takes the `declared` inputs.
pub fn header(plan: &VerifiedGenericPlan, source: &CudaSource, declared: &[InputDecl<SymExpr>]) -> String {
    let name = &source.name;
    let guard = name.to_ascii_uppercase();
    let scalars = plan.scalars();
    let dims = dims_parameters(&scalars);
    let scalars: String = match scalars.is_empty() {
        true => String::new(),
        false => {
            let names: Vec<String> =
                scalars.iter().enumerate().map(|(j, s)| format!("scalars[{j}] = {s}")).collect();
            format!(
                " * Run-time scalars, given as host values in `scalars` (the kernel takes these values; it\n * reads no device memory for them): {}.\n",
                names.join(", ")
            )
        }
    };
    let inputs: Vec<String> = declared
        .iter()
        .map(|d| {
            let dims: Vec<String> = d.shape.iter().map(|e| e.to_string()).collect();
            format!(" *   {}: {}[{}]\n", d.name, d.dtype, dims.join(", "))
        })
        .collect();
    let shape: Vec<String> = plan.shape.iter().map(|e| e.to_string()).collect();
    format!(
        "/* {name}: a kernel generated by slc (docs/cuda.md). Inputs, in order (device pointers to
 * dense C-ordered data; `dims` their dims concatenated):
{} * Output: {}[{}], dense, C order.
{scalars} */
#ifndef {guard}_H
#define {guard}_H
#include <cuda_runtime.h>
#ifdef __cplusplus
extern \"C\" {{
#endif
/* The output's dims for the inputs' `dims` (concatenated, in input order): 0, or -1 for dims
 * the kernel does not take (a constant dim differs, two axes of one name differ, a requirement
 * of the program fails, a size overflows). */
int {name}_output_dims({dims}, long long* out_dims);
/* Launches on `stream`, asynchronously: 0, -1 for dims the kernel does not take (as
 * {name}_output_dims), or a cudaError_t. */
int {name}_launch(const void* const* inputs, void* out, {dims}, cudaStream_t stream);
/* Waits for `stream`: 0 fine; 1 an index value out of range (plan check `*check`, its element
 * `*element` in C order); 2 clamp or wrap on an empty axis; 3 a gather out of range; or minus a
 * cudaError_t. */
int {name}_status(cudaStream_t stream, int* check, unsigned long long* element);
#ifdef __cplusplus
}}
#endif
#endif
",
        inputs.concat(),
        plan.dtype,
        shape.join(", ")
    )
}
