//! `slc compile --target cpu`: an object file exporting one kernel, and its C header.

use super::CompileArgs;
use crate::Compiled;
use crate::backend::aot::{self, AotError};
use crate::cli::Failure;
use crate::cli::output::write_file;
use crate::types::TensorType;

pub fn run(
    args: &CompileArgs,
    declared: &[(String, TensorType)],
    compiled: &Compiled,
) -> Result<(), Failure> {
    let usage = |msg: &str| {
        eprintln!("error: {msg}");
        Failure::Usage
    };
    let Some(object) = &args.output else {
        return Err(usage("--target cpu needs -o FILE.o (the object file to write)"));
    };
    if args.format != super::FormatArg::Json || args.feature_level.is_some() {
        return Err(usage("--format and --feature-level apply to --target dml only"));
    }
    let name = args.name.as_deref().unwrap_or("slc_kernel");
    let kernel = aot::compile(&compiled.plan, &args.expr, declared, name).map_err(|e| match e {
        AotError::BadName(_) | AotError::DuplicateInput(_) | AotError::UndeclaredInput(_) => {
            usage(&e.to_string())
        }
        e => {
            eprintln!("error: {e}");
            Failure::Runtime
        }
    })?;
    write_file(object, &kernel.object)?;
    if let Some(header) = &args.header {
        write_file(header, kernel.header.as_bytes())?;
    }
    Ok(())
}
