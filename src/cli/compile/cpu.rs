//! `slc compile --target cpu`.

use super::CompileArgs;
use crate::Compiled;
use crate::cli::Failure;

pub fn run(_args: &CompileArgs, _compiled: &Compiled) -> Result<(), Failure> {
    eprintln!("error: --target cpu is not built yet");
    Err(Failure::Usage)
}
