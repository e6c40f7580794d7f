//! The `slc` command line (clap). Thin: parse arguments, call the library, render errors.
//!
//! Exit codes: 0 success; 1 an input/output or run-time error (unreadable file, index value out
//! of range in an index tensor, output not writable); 2 a usage error or an error in the
//! expression (parse or check), reported with a diagnostic.

mod access;
mod args;
mod bench;
mod compile;
mod eval;
mod eval_cuda;
mod output;
mod plan;
mod repl;
mod run;
mod show;

use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "slc", version, about = "A slicing language and compiler for tensors in .npy files")]
struct Cli {
    /// Without a command, at a terminal: the REPL.
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Evaluate a program on .npy inputs; print the result or write it with -o.
    Eval(eval::EvalArgs),
    /// Print the normalized plan of a program.
    Plan(plan::PlanArgs),
    /// Print every stage of a program: AST, checked program, plan, loop nest, Cranelift IR.
    Explain(plan::PlanArgs),
    /// Time a program's kernel on generated inputs against memcpy of the same bytes.
    Bench(bench::BenchArgs),
    /// Compile a program ahead of time: a CPU kernel (object file), CUDA C, or DirectML descriptors.
    Compile(compile::CompileArgs),
    /// The interactive workbench (also `slc` alone at a terminal); reads statements from a pipe.
    Repl(repl::ReplArgs),
    /// Run a file of statements as the REPL would; the first error stops it.
    Run(run::RunArgs),
    /// Draw what a program selects from its input: in the terminal, or as SVG with -o.
    Show(show::ShowArgs),
}

/// How a command failed; decides the exit code.
pub(crate) enum Failure {
    /// Bad arguments or a bad program: exit 2.
    Usage,
    /// Files, data, run time: exit 1.
    Runtime,
    /// Standard output was closed by its reader (`slc eval … | head`): stop quietly, exit 0.
    ClosedOutput,
}

pub fn main() -> ExitCode {
    let cli = Cli::parse();
    // Inputs are mapped: a file truncated while it is read is named, not a bare "Bus error".
    slc_runtime::report_truncated_inputs();
    let result = match cli.command {
        None if std::io::stdin().is_terminal() => repl::run(repl::ReplArgs::default()),
        None => {
            use clap::CommandFactory;
            eprint!("{}", Cli::command().render_help());
            Err(Failure::Usage)
        }
        Some(Command::Repl(args)) => repl::run(args),
        Some(Command::Run(args)) => run::run(args),
        Some(Command::Eval(args)) => eval::run(args),
        Some(Command::Plan(args)) => plan::run(args, false),
        Some(Command::Explain(args)) => plan::run(args, true),
        Some(Command::Bench(args)) => bench::run(args),
        Some(Command::Compile(args)) => compile::run(args),
        Some(Command::Show(args)) => show::run(args),
    };
    match result {
        Ok(()) | Err(Failure::ClosedOutput) => ExitCode::SUCCESS,
        Err(Failure::Usage) => ExitCode::from(2),
        Err(Failure::Runtime) => ExitCode::from(1),
    }
}

/// `--backend jit|interp|cuda`.
fn parse_backend(s: &str) -> Result<crate::Executor, String> {
    crate::Executor::from_name(s).ok_or_else(|| format!("`{s}` is not a back end; use jit, interp or cuda"))
}

/// Colour only on a terminal, and never with NO_COLOR set.
fn color_stderr() -> bool {
    std::env::var_os("NO_COLOR").is_none() && std::io::stderr().is_terminal()
}

/// Prints a library error as a diagnostic and classifies it.
fn report(err: &crate::Error, src: &str) -> Failure {
    eprint!("{}", crate::diag::render(&err.diagnostic(), "expr", src, color_stderr()));
    if err.is_program_error() { Failure::Usage } else { Failure::Runtime }
}
