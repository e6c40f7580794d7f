//! `slc compile --target cpu`: an object file exporting one kernel, and its C header (for
//! symbolic dims, the generic ABI: the kernel and its shape function).

use super::{CompileArgs, usage};
use crate::backend::aot::{self, AotError};
use crate::cli::Failure;
use crate::cli::output::write_file;
use crate::plan::{InputDecl, VerifiedGenericPlan};
use crate::types::sym::SymExpr;
use std::path::Path;

/// The kernel of `plan` for the `declared` inputs (a concrete program's plan lifted, its dims
/// constants).
pub fn run(
    args: &CompileArgs,
    declared: &[InputDecl<SymExpr>],
    plan: &VerifiedGenericPlan,
) -> Result<(), Failure> {
    let (object, name) = check_args(args)?;
    let kernel = aot::compile(plan, &args.expr, declared, name).map_err(failure)?;
    write(args, object, &kernel.object, &kernel.header)
}

/// The options `--target cpu` takes: the object file to write and the kernel's name.
fn check_args(args: &CompileArgs) -> Result<(&Path, &str), Failure> {
    let Some(object) = &args.output else {
        return Err(usage("--target cpu needs -o FILE.o (the object file to write)"));
    };
    if args.format != super::FormatArg::Json || args.feature_level.is_some() {
        return Err(usage("--format and --feature-level apply to --target dml only"));
    }
    Ok((object, args.name.as_deref().unwrap_or("slc_kernel")))
}

fn failure(e: AotError) -> Failure {
    match e {
        AotError::BadName(_) | AotError::DuplicateInput(_) | AotError::UndeclaredInput(_) => {
            usage(&e.to_string())
        }
        e => {
            eprintln!("error: {e}");
            Failure::Runtime
        }
    }
}

fn write(args: &CompileArgs, path: &Path, object: &[u8], header: &str) -> Result<(), Failure> {
    write_file(path, object)?;
    if let Some(path) = &args.header {
        write_file(path, header.as_bytes())?;
    }
    Ok(())
}
