//! `slc compile --target cpu`: an object file exporting one kernel, and its C header.

use super::CompileArgs;
use crate::Compiled;
use crate::backend::aot::{self, AotError};
use crate::cli::Failure;
use std::path::Path;

pub fn run(args: &CompileArgs, compiled: &Compiled) -> Result<(), Failure> {
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
    let kernel = aot::compile(&compiled.plan, &args.expr, &args.shapes, name).map_err(|e| match e {
        AotError::BadName(_) | AotError::DuplicateInput(_) | AotError::UndeclaredInput(_) => {
            usage(&e.to_string())
        }
        e => {
            eprintln!("error: {e}");
            Failure::Runtime
        }
    })?;
    write_atomically(object, &kernel.object)?;
    if let Some(header) = &args.header {
        write_atomically(header, kernel.header.as_bytes())?;
    }
    Ok(())
}

/// Writes through a temporary file in the same directory, renamed on success: a failed run
/// leaves no partial file behind.
fn write_atomically(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    let fail = |e: std::io::Error| {
        eprintln!("error: cannot write '{}': {e}", path.display());
        Failure::Runtime
    };
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let file = path.file_name().ok_or_else(|| fail(std::io::Error::other("not a file name")))?;
    let tmp = dir.join(format!(".{}.{}.tmp", file.to_string_lossy(), std::process::id()));
    std::fs::write(&tmp, bytes).map_err(fail)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        fail(e)
    })
}
