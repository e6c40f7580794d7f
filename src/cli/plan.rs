//! `slc plan` and `slc explain`: compile a program for given input types and show the result.

use super::args::{InputArg, parse_input, parse_shape};
use super::{Failure, report};
use crate::sema::{InputTypes, InputValues, TensorType};
use slc_runtime::read_npy;

#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// The program, e.g. 'a[1:, ::-1]'.
    pub expr: String,
    /// Declare an input by type: NAME=DTYPE[d0,d1,...], e.g. a=f32[2,3,4].
    #[arg(long = "shape", value_name = "NAME=DTYPE[DIMS]", value_parser = parse_shape)]
    pub shapes: Vec<(String, TensorType)>,
    /// Declare an input by example: NAME=FILE.npy (only its dtype and shape are used).
    #[arg(short = 'i', long = "input", value_name = "NAME=FILE.npy", value_parser = parse_input)]
    pub inputs: Vec<InputArg>,
    /// Print the loop nest after each scheduling pass that changes it (`all`), or after one
    /// named pass (drop-unit-axes, merge-contiguous-axes, block-copy).
    #[arg(long, value_name = "PASS|all")]
    pub dump_after: Option<String>,
    /// Also print the JIT kernel's Cranelift IR.
    #[arg(long)]
    pub clif: bool,
}

pub fn run(args: PlanArgs, every_stage: bool) -> Result<(), Failure> {
    let mut types: InputTypes = args.shapes.into_iter().collect();
    let mut values = InputValues::new();
    for input in &args.inputs {
        match read_npy(&input.path) {
            Ok(t) => {
                let shape = t.shape().iter().map(|&d| d as i64).collect();
                types.insert(input.name.clone(), TensorType { dtype: t.dtype(), shape });
                values.insert(input.name.clone(), t);
            }
            Err(e) => {
                eprintln!("error: input `{}`: {e}", input.name);
                return Err(Failure::Runtime);
            }
        }
    }
    let compiled =
        crate::compile_with_values(&args.expr, &types, &values).map_err(|e| report(&e, &args.expr))?;
    if every_stage {
        println!("== ast\n{}", compiled.ast);
        println!("== checked\n{}\n", compiled.checked);
        println!("== plan");
    }
    print!("{}", compiled.plan);
    if let Some(which) = &args.dump_after {
        let known = crate::backend::loopnest::PASSES.iter().any(|p| p.name == which);
        if which != "all" && !known {
            eprintln!("error: no pass named `{which}`");
            return Err(Failure::Usage);
        }
        crate::backend::loopnest::schedule(&compiled.plan, |pass, nest| {
            if which == "all" || which == pass {
                print!("== after {pass}\n{nest}");
            }
        });
    }
    if args.clif || every_stage {
        match crate::backend::jit::kernel_ir(&compiled.plan) {
            Ok((nest, ir)) => print!("== loop nest\n{nest}== clif\n{ir}"),
            Err(e) => {
                eprintln!("error: {e}");
                return Err(Failure::Runtime);
            }
        }
    }
    Ok(())
}
