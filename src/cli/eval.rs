//! `slc eval`: evaluate a program on .npy inputs.

use super::args::{InputArg, parse_bytes, parse_input};
use super::{Failure, report};
use crate::{Backend, Session};
use slc_runtime::{PrintOptions, format_tensor, read_npy, write_npy};
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// The program, e.g. 'a[1:, ::-1]' or 'let b = a[::2]; b[..., 0]'.
    pub expr: String,
    /// Bind an input: NAME=FILE.npy (or FILE.npy, bound to its stem).
    #[arg(short = 'i', long = "input", value_name = "NAME=FILE.npy", value_parser = parse_input)]
    pub inputs: Vec<InputArg>,
    /// Write the result to this .npy file (atomically) instead of printing it.
    #[arg(short = 'o', long = "output", value_name = "OUT.npy")]
    pub output: Option<PathBuf>,
    /// The executor: `jit` (Cranelift, default) or `interp` (the reference interpreter).
    #[arg(long, value_name = "jit|interp", default_value = "jit", value_parser = parse_backend)]
    pub backend: Backend,
    /// Worker threads for large outputs (default: the machine's cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Refuse results larger than this many bytes (suffixes K, M, G, T; default: the memory
    /// available).
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub max_output_bytes: Option<u64>,
}

fn parse_backend(s: &str) -> Result<Backend, String> {
    Backend::from_name(s).ok_or_else(|| format!("`{s}` is not a back end; use jit or interp"))
}

pub fn run(args: EvalArgs) -> Result<(), Failure> {
    let mut session = Session::with_backend(args.backend);
    if let Some(n) = args.threads {
        session.options_mut().threads = n as usize;
    }
    session.options_mut().max_output_bytes = args.max_output_bytes;
    for input in &args.inputs {
        match read_npy(&input.path) {
            Ok(t) => session.bind(&input.name, t),
            Err(e) => {
                eprintln!("error: input `{}`: {e}", input.name);
                return Err(Failure::Runtime);
            }
        }
    }
    if let Some(out) = &args.output {
        refuse_overwriting_an_input(out, &args.inputs)?;
    }
    let result = session.eval(&args.expr).map_err(|e| report(&e, &args.expr))?;
    match &args.output {
        Some(path) => write_npy(path, &result).map_err(|e| {
            eprintln!("error: {e}");
            Failure::Runtime
        }),
        None => {
            let shape: Vec<i64> = result.shape().iter().map(|&d| d as i64).collect();
            println!("{}", format_tensor(&result, &PrintOptions::default()));
            println!("{}{}", result.dtype(), crate::sema::typed::ShapeDisplay(&shape));
            Ok(())
        }
    }
}

/// Writing over an input while it is still being read would be wrong with a memory-mapped
/// reader and is surprising anyway; refuse before evaluating.
fn refuse_overwriting_an_input(out: &std::path::Path, inputs: &[InputArg]) -> Result<(), Failure> {
    let Ok(out_canon) = out.canonicalize() else {
        return Ok(());
    }; // does not exist yet
    for input in inputs {
        if input.path.canonicalize().is_ok_and(|p| p == out_canon) {
            eprintln!(
                "error: output '{}' is also input `{}`; write to another file",
                out.display(),
                input.name
            );
            return Err(Failure::Usage);
        }
    }
    Ok(())
}
