//! `slc compile --target dml`: DirectML descriptors as JSON or C, on standard output or `-o`.

use super::{CompileArgs, FormatArg};
use crate::Compiled;
use crate::backend::dml::{DmlOptions, FeatureLevel};
use crate::cli::{Failure, report};
use crate::target::lower_program;

pub fn run(args: &CompileArgs, compiled: &Compiled) -> Result<(), Failure> {
    if args.header.is_some() {
        eprintln!("error: --header applies to --target cpu only");
        return Err(Failure::Usage);
    }
    let mut opts = DmlOptions::default();
    if let Some(level) = &args.feature_level {
        let Some(level) = FeatureLevel::parse(level) else {
            let known: Vec<String> = FeatureLevel::ALL.iter().map(|l| l.version()).collect();
            eprintln!("error: unknown DirectML feature level '{level}' (known: {})", known.join(", "));
            return Err(Failure::Usage);
        };
        opts.feature_level = level;
    }
    let graph = lower_program(compiled, &opts).map_err(|e| report(&e.into(), &args.expr))?;
    let mut text = match args.format {
        FormatArg::Json => graph.to_json(),
        FormatArg::C => graph.to_c_named(args.name.as_deref().unwrap_or("slc")),
    };
    if !text.ends_with('\n') {
        text.push('\n');
    }
    match &args.output {
        None => crate::cli::output::print(&text),
        Some(path) => crate::cli::output::write_file(path, text.as_bytes()),
    }
}
