//! `slc run FILE.slc`: the statements of a file, run as the REPL runs them; the first error
//! stops the run with its report.

use super::Failure;
use super::repl::{SessionArgs, configured};
use crate::repl::front;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct RunArgs {
    /// The script: statements and `:` commands, one entry per line (an open bracket continues
    /// it); each expression statement prints its value.
    pub file: PathBuf,
    #[command(flatten)]
    pub session: SessionArgs,
}

pub fn run(args: RunArgs) -> Result<(), Failure> {
    let mut repl = configured(&args.session, true)?;
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
