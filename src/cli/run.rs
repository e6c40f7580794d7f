//! `slc run FILE.slc`: the statements of a file, run as the REPL runs them; the first error
//! stops the run with its report.

use super::args::{InputArg, parse_bytes, parse_input};
use super::repl::configured;
use super::{Failure, parse_backend};
use crate::Executor;
use crate::repl::front;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The script: statements and `:` commands, one entry per line (an open bracket continues
    /// it); each expression statement prints its value.
    pub file: PathBuf,
    /// Bind an input before the script runs: NAME=FILE.npy (or FILE.npy, bound to its stem).
    #[arg(short = 'i', long = "input", value_name = "NAME=FILE.npy", value_parser = parse_input)]
    pub inputs: Vec<InputArg>,
    /// The executor: `jit` (Cranelift, default), `interp` (the reference interpreter) or `cuda`
    /// (the GPU: docs/cuda.md).
    #[arg(long, value_name = "jit|interp|cuda", value_parser = parse_backend)]
    pub backend: Option<Executor>,
    /// Worker threads for large outputs (default: the machine's cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Refuse results larger than this many bytes (suffixes K, M, G, T; default: the memory
    /// available).
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub max_output_bytes: Option<u64>,
}

pub fn run(args: RunArgs) -> Result<(), Failure> {
    let mut repl = configured(&args.inputs, true, args.backend, args.threads, args.max_output_bytes)?;
    repl.echo_lets = false;
    let text = std::fs::read_to_string(&args.file).map_err(|e| {
        eprintln!("error: cannot read '{}': {e}", args.file.display());
        Failure::Runtime
    })?;
    let name = args.file.display().to_string();
    let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
    match front::run_lines(&mut repl, text.as_bytes(), &name, true, &mut out, &mut err) {
        Ok(None) => Ok(()),
        Ok(Some(kind)) => Err(kind.into()),
        // Standard output closed (`slc run x.slc | head`): nothing more to say.
        Err(_) => Err(Failure::Runtime),
    }
}
