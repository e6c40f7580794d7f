//! `slc show`: draw what a program selects from its input, in the terminal or as SVG (`-o`).

use super::args::{InputArg, Opened};
use super::output::{OutputArg, check_output, print, write_file};
use super::plan::TypeArgs;
use super::{Failure, report};
use crate::plan::Plan;
use crate::sema::{InputTypes, InputValues};
use crate::show::{SelectError, Selection, stages, svg, terminal};
use std::io::IsTerminal;
use std::path::PathBuf;

#[derive(clap::Args, Debug)]
pub struct ShowArgs {
    /// The program, e.g. 'a[1:, ::-1]'.
    pub expr: String,
    #[command(flatten)]
    pub types: TypeArgs,
    /// Write the picture as SVG to this file instead of drawing it in the terminal (a chain
    /// of indexings and operators is drawn stage by stage).
    #[arg(short = 'o', long = "output", value_name = "FILE.svg")]
    pub output: Option<PathBuf>,
}

pub fn run(args: ShowArgs) -> Result<(), Failure> {
    if let Some(path) = &args.output {
        check_output(&OutputArg::File(path.clone()), &args.types.inputs)?;
    }
    let (declared, values) = args.types.resolve("show")?;
    let types: InputTypes = declared.into_iter().collect();
    let compiled =
        crate::compile_with_values(&args.expr, &types, &values).map_err(|e| report(&e, &args.expr))?;
    let selection = Selection::of(&compiled.plan, &values).map_err(|e| {
        eprintln!("error: {e}");
        // Reading the index values can fail at run time; the rest is about the program asked.
        if matches!(e, SelectError::Runtime(_)) { Failure::Runtime } else { Failure::Usage }
    })?;
    match &args.output {
        None => {
            let colour = std::env::var_os("NO_COLOR").is_none() && std::io::stdout().is_terminal();
            let chunks = chunk_summary(&args.types.inputs, &compiled.plan, &values)?;
            print(&(terminal::render(&selection, &args.expr, colour) + &chunks))
        }
        Some(path) => {
            // A chain is drawn stage by stage, each stage on the same input.
            let stages = stages::chain_selections(&args.expr, selection, &types, &values);
            write_file(path, svg::render_stages(&stages).as_bytes())
        }
    }
}

/// For each Zarr input, how many of its chunks the selection decodes (docs/zarr.md).
fn chunk_summary(inputs: &[InputArg], plan: &Plan, values: &InputValues) -> Result<String, Failure> {
    let mut lines = String::new();
    for input in inputs {
        if let Opened::Zarr(zarr) = input.open()? {
            let count = crate::zarr::ChunkCount::of(plan, &input.name, &zarr, &[values])
                .map_err(|e| super::args::input_error(&input.name, e))?;
            lines.push_str(&count.sentence());
            lines.push('\n');
        }
    }
    Ok(lines)
}
