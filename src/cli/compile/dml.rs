//! `slc compile --target dml`.

use super::CompileArgs;
use crate::Compiled;
use crate::cli::Failure;

pub fn run(_args: &CompileArgs, _compiled: &Compiled) -> Result<(), Failure> {
    eprintln!("error: --target dml is not built yet");
    Err(Failure::Usage)
}
