//! `slc repl` (and `slc` alone at a terminal): the interactive workbench; statements piped in
//! run without prompts.

use super::args::{InputArg, Opened, check_bindings, input_error, parse_bytes, parse_input};
use super::{Failure, parse_backend};
use crate::Executor;
use crate::repl::{FailureKind, Repl, front};
use std::io::IsTerminal;

#[derive(clap::Args, Debug, Default)]
pub struct ReplArgs {
    #[command(flatten)]
    pub session: SessionArgs,
    /// Neither read nor write the history file.
    #[arg(long)]
    pub no_history: bool,
}

/// The options `slc repl` and `slc run` share: the inputs bound first and how statements run.
#[derive(clap::Args, Debug, Default)]
pub struct SessionArgs {
    /// Bind an input first: NAME=FILE.npy (or FILE.npy, bound to its stem), or NAME=DATA.zarr,
    /// a Zarr array read lazily (each evaluation reads the chunks it needs).
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

impl From<FailureKind> for Failure {
    fn from(kind: FailureKind) -> Failure {
        match kind {
            FailureKind::Program => Failure::Usage,
            FailureKind::Runtime => Failure::Runtime,
        }
    }
}

/// A core with the options and inputs of `slc repl` and `slc run` (`fixed`: inputs a script
/// may not rebind).
pub(super) fn configured(args: &SessionArgs, fixed: bool) -> Result<Repl, Failure> {
    let SessionArgs { inputs, backend, threads, max_output_bytes } = args;
    let mut repl = Repl::new();
    repl.color = super::color_stderr();
    if let Some(b) = *backend {
        // Without a GPU, `--backend cuda` is a usage error before any input is read.
        if b == Executor::Cuda
            && let Err(e) = crate::exec::Runnable::prepare_gpu()
        {
            eprintln!("error: --backend cuda: {e}");
            return Err(Failure::Usage);
        }
        repl.options_mut().executor = b;
    }
    if let Some(n) = *threads {
        repl.options_mut().threads = n as usize;
    }
    repl.options_mut().max_output_bytes = *max_output_bytes;
    check_bindings(inputs, &[])?;
    for input in inputs {
        let opened = input.open()?;
        if let Opened::Zarr(zarr) = opened {
            // Only its metadata is read: each evaluation reads the chunks it needs.
            let path = input.path().map(|p| p.display().to_string()).unwrap_or_default();
            let bound = match fixed {
                true => repl.fix_zarr_input(&input.name, *zarr, &path),
                false => repl.bind_zarr(&input.name, *zarr, &path).map(drop),
            };
            bound.map_err(|e| input_error(&input.name, e))?;
            continue;
        }
        let tensor = opened.read(&input.name)?;
        if fixed {
            repl.fix_input(&input.name, tensor);
        } else {
            repl.bind(&input.name, tensor);
        }
    }
    Ok(repl)
}

pub fn run(args: ReplArgs) -> Result<(), Failure> {
    let mut repl = configured(&args.session, false)?;
    if std::io::stdin().is_terminal() {
        let history = if args.no_history { None } else { front::history_path() };
        return front::interactive(repl, history).map_err(|e| {
            eprintln!("error: {e}");
            Failure::Runtime
        });
    }
    // Piped: every entry runs, as if typed; the exit code tells whether any failed.
    repl.echo_lets = false;
    let stdin = std::io::stdin().lock();
    let (mut out, mut err) = (std::io::stdout().lock(), std::io::stderr().lock());
    match front::run_lines(&mut repl, stdin, "stdin", false, &mut out, &mut err) {
        Ok(None) => Ok(()),
        Ok(Some(kind)) => Err(kind.into()),
        Err(e) => {
            eprintln!("error: {e}");
            Err(Failure::Runtime)
        }
    }
}
