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
//! Shapes are fixed at compile time here: a generic plan's integers would need its shape
//! function in C, which this target does not generate yet.

use super::codegen::NestInfo;
use super::{CudaError, CudaSource};
use crate::plan::{InputDecl, VerifiedGenericPlan};
use crate::types::sym::SymExpr;
use std::fmt::Write;

/// Threads per block of the launcher's grid, and the most blocks it launches (the kernels
/// stride over the rest).
pub const BLOCK: u64 = 256;
pub const MAX_GRID: u64 = 65535;

/// The return value of `NAME_launch` for dims other than the compiled ones.
pub const BAD_DIMS: i32 = -1;

fn constant_count(nest: &NestInfo) -> Option<u64> {
    let elements = nest.extents.iter().try_fold(1u64, |c, e| c.checked_mul(e.as_const()?.max(0) as u64))?;
    Some(nest.steps(elements))
}

/// The host launcher of `source` (generated from the concrete `plan`), to append to its text;
/// it takes the `declared` inputs in their order (the plan reads some of them).
pub fn launcher(
    plan: &VerifiedGenericPlan,
    source: &CudaSource,
    declared: &[InputDecl<SymExpr>],
) -> Result<String, CudaError> {
    let concrete = plan
        .concrete()
        .filter(|p| p.inputs.iter().all(|d| d.strides.is_none() && d.nonzero_of.is_none()))
        .ok_or_else(|| {
            CudaError::Codegen(
                "a host launcher needs concrete shapes and dense inputs given by the caller".into(),
            )
        })?;
    let l = &source.layout;
    let name = &source.name;
    let dims: Vec<i64> = declared
        .iter()
        .flat_map(|d| d.shape.iter().map(SymExpr::as_const))
        .collect::<Option<_>>()
        .ok_or_else(|| CudaError::Codegen("a symbolic dim".into()))?;
    let slots: Vec<usize> = concrete
        .inputs
        .iter()
        .map(|d| declared.iter().position(|x| x.name == d.name))
        .collect::<Option<_>>()
        .ok_or_else(|| CudaError::Codegen("the plan reads an input not declared".into()))?;
    let mut ends = vec![];
    let mut total = 0u64;
    for nest in &l.nests {
        total += constant_count(nest).ok_or_else(|| CudaError::Codegen("a symbolic extent".into()))?;
        ends.push(total);
    }
    let err_words = plan.checks.len() + 1;
    let grid = total.div_ceil(BLOCK).clamp(1, MAX_GRID);
    let list = |v: &[i64]| {
        if v.is_empty() {
            "0".to_string()
        } else {
            v.iter().map(|d| format!("{d}LL")).collect::<Vec<_>>().join(", ")
        }
    };
    let mut t = String::new();
    let _ = write!(
        t,
        "#if !defined(__CUDACC_RTC__)
#ifndef SLC_HOST_EMULATION
#include <cuda_runtime.h>
#define SLC_LAUNCH(kernel, grid, block, stream, args) kernel<<<(grid), (block), 0, (stream)>>>(args)
#endif
__device__ unsigned long long {name}_err[{err_words}];
static const long long {name}_dims[{}] = {{{}}};
SLC_EXTERN int {name}_launch(const void* const* inputs, void* out, const long long* dims, cudaStream_t stream) {{
  {name}_args a;
  void* err = 0;
  int i;
  cudaError_t e;
  (void)inputs;
  for (i = 0; i < {}; i++) if (dims[i] != {name}_dims[i]) return {BAD_DIMS};
  for (i = 0; i < {}; i++) a.w[i] = 0;
",
        dims.len().max(1),
        list(&dims),
        dims.len(),
        l.words().max(1),
    );
    for (i, slot) in slots.iter().enumerate() {
        let _ = writeln!(t, "  a.w[{i}] = (unsigned long long)inputs[{slot}];");
    }
    let _ = writeln!(t, "  a.w[{}] = (unsigned long long)out;", l.out_word());
    let _ = writeln!(
        t,
        "  e = cudaGetSymbolAddress(&err, {name}_err);\n  if (e != cudaSuccess) return (int)e;
  e = cudaMemsetAsync(err, 0xff, sizeof {name}_err, stream);\n  if (e != cudaSuccess) return (int)e;
  a.w[{}] = (unsigned long long)err;",
        l.err_word()
    );
    for (n, end) in ends.iter().enumerate() {
        let _ = writeln!(t, "  a.w[{}] = {end}ULL;", l.end_word(n));
    }
    if total > 0 {
        let _ = writeln!(t, "  SLC_LAUNCH({}, {grid}u, {BLOCK}u, stream, a);", source.entry(l.wide));
    }
    let _ = write!(
        t,
        "  return (int)cudaGetLastError();
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

/// The C header declaring `source`'s launcher, which takes the `declared` inputs.
pub fn header(plan: &VerifiedGenericPlan, source: &CudaSource, declared: &[InputDecl<SymExpr>]) -> String {
    let name = &source.name;
    let guard = name.to_ascii_uppercase();
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
{} * Output: {}[{}], dense, C order. */
#ifndef {guard}_H
#define {guard}_H
#include <cuda_runtime.h>
#ifdef __cplusplus
extern \"C\" {{
#endif
/* Launches on `stream`, asynchronously: 0, -1 for dims other than the compiled ones, or a
 * cudaError_t. */
int {name}_launch(const void* const* inputs, void* out, const long long* dims, cudaStream_t stream);
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
