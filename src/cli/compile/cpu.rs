//! `slc compile --target cpu`: an object file exporting one kernel, and its C header (for
//! symbolic dims, a generic kernel and its shape function).

use super::CompileArgs;
use crate::Compiled;
use crate::backend::aot::{self, AotError};
use crate::cli::Failure;
use crate::cli::output::write_file;
use crate::plan::{InputDecl, VerifiedGenericPlan};
use crate::types::TensorType;
use crate::types::sym::SymExpr;
use std::path::Path;

fn usage(msg: &str) -> Failure {
    eprintln!("error: {msg}");
    Failure::Usage
}

pub fn run(
    args: &CompileArgs,
    declared: &[(String, TensorType)],
    compiled: &Compiled,
) -> Result<(), Failure> {
    let (object, name) = check_args(args)?;
    let kernel = aot::compile(&compiled.plan, &args.expr, declared, name).map_err(failure)?;
    write(args, object, &kernel.object, &kernel.header)
}

/// For symbolic dims: the generic kernel of `plan`.
pub fn run_generic(
    args: &CompileArgs,
    declared: &[InputDecl<SymExpr>],
    plan: &VerifiedGenericPlan,
) -> Result<(), Failure> {
    let (object, name) = check_args(args)?;
    let kernel = aot::compile_generic(plan, &args.expr, declared, name).map_err(failure)?;
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
