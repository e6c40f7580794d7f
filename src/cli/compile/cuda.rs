//! `slc compile --target cuda`: CUDA C source (kernels and a host launcher, which nvcc
//! compiles as it is; NVRTC takes the kernels alone) and, with `--header`, its C header.

use super::{CompileArgs, usage};
use crate::backend::cuda::{self, aot};
use crate::cli::Failure;
use crate::cli::output::{print, write_file};
use crate::plan::{InputDecl, VerifiedGenericPlan};
use crate::types::sym::SymExpr;

/// The source of `plan` (a concrete program's plan lifted) for the `declared` inputs.
pub fn run(
    args: &CompileArgs,
    declared: &[InputDecl<SymExpr>],
    plan: &VerifiedGenericPlan,
) -> Result<(), Failure> {
    if args.format != super::FormatArg::Json || args.feature_level.is_some() {
        return Err(usage("--format and --feature-level apply to --target dml only"));
    }
    let name = args.name.as_deref().unwrap_or("slc_kernel");
    if !cuda::codegen::is_identifier(name) {
        return Err(usage(&format!("`{name}` is not a C identifier")));
    }
    let failed = |e: cuda::CudaError| {
        eprintln!("error: {e}");
        Failure::Runtime
    };
    let source = cuda::generate(plan, name).map_err(failed)?;
    let launcher = aot::launcher(plan, &source, declared).map_err(failed)?;
    let text = format!("{}{launcher}", source.text);
    match &args.output {
        Some(path) => write_file(path, text.as_bytes())?,
        None => print(&text)?,
    }
    if let Some(path) = &args.header {
        write_file(path, aot::header(plan, &source, declared).as_bytes())?;
    }
    Ok(())
}
