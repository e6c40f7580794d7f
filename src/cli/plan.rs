//! `slc plan` and `slc explain`: compile a program for given input types and show the result.

use super::args::{InputArg, check_bindings, concrete_types, input_error, parse_input, parse_shape};
use super::output::print;
use super::{Failure, report};
use crate::backend::loopnest;
use crate::sema::{InputTypes, InputValues, SymInputTypes, value_may_be_read};
use crate::types::{SymTensorType, TensorType};

#[derive(clap::Args, Debug)]
pub struct PlanArgs {
    /// The program, e.g. 'a[1:, ::-1]'.
    pub expr: String,
    #[command(flatten)]
    pub types: TypeArgs,
    /// Print the loop nest after each scheduling pass that changes it (`all`), or after one
    /// named pass (drop-unit-axes, merge-contiguous-axes, block-copy, block-rows, index-table,
    /// reversed-tiles, strided-copy, shuffle-vectors, guarded-gather).
    #[arg(long, value_name = "PASS|all")]
    pub dump_after: Option<String>,
    /// Also print the JIT kernel's Cranelift IR.
    #[arg(long)]
    pub clif: bool,
}

/// Input types given by declaration or by example, as `plan`, `explain` and `compile` take them.
#[derive(clap::Args, Debug)]
pub struct TypeArgs {
    /// Declare an input by type: NAME=DTYPE[d0,d1,...], e.g. a=f32[2,3,4]. `plan` and `explain`
    /// also take symbolic dims (a=f32[N,M], `?` for an anonymous one) and 0-d integer inputs as
    /// run-time slice bounds (k=i64[]).
    #[arg(long = "shape", value_name = "NAME=DTYPE[DIMS]", value_parser = parse_shape)]
    pub shapes: Vec<(String, SymTensorType)>,
    /// Declare an input by example: NAME=FILE.npy (its dtype and shape; its values too when it
    /// is a small integer tensor, which operator parameters may need, or a bool mask).
    #[arg(short = 'i', long = "input", value_name = "NAME=FILE.npy", value_parser = parse_input)]
    pub inputs: Vec<InputArg>,
}

impl TypeArgs {
    /// The declared inputs in the order given (`--shape`s first), with the values read from
    /// the examples checking may read (small integer tensors, masks). `command` does not take
    /// symbolic dims.
    pub fn resolve(&self, command: &str) -> Result<(Vec<(String, TensorType)>, InputValues), Failure> {
        check_bindings(&self.inputs, &self.shapes)?;
        let mut declared = concrete_types(&self.shapes, command)?;
        let mut values = InputValues::new();
        for input in &self.inputs {
            let npy = input.open()?;
            declared.push((input.name.clone(), TensorType::of(npy.dtype(), npy.shape())));
            // Of the others only the header is read.
            if value_may_be_read(npy.dtype(), npy.shape().iter().product()) {
                values.insert(input.name.clone(), npy.read().map_err(|e| input_error(&input.name, e))?);
            }
        }
        Ok((declared, values))
    }
}

pub fn run(args: PlanArgs, every_stage: bool) -> Result<(), Failure> {
    if let Some(which) = &args.dump_after {
        let known = loopnest::PASSES.iter().any(|p| p.name == which);
        if which != "all" && !known {
            let names: Vec<&str> = loopnest::PASSES.iter().map(|p| p.name).collect();
            eprintln!("error: no pass named `{which}`; the passes are {} (or `all`)", names.join(", "));
            return Err(Failure::Usage);
        }
    }
    if args.types.shapes.iter().any(|(_, ty)| !ty.is_concrete()) {
        return run_generic(args, every_stage);
    }
    let command = if every_stage { "explain" } else { "plan" };
    let (declared, values) = args.types.resolve(command)?;
    let types: InputTypes = declared.into_iter().collect();
    let compiled =
        crate::compile_with_values(&args.expr, &types, &values).map_err(|e| report(&e, &args.expr))?;
    let mut text = String::new();
    if every_stage {
        text += &format!("== ast\n{}\n== checked\n{}\n\n== plan\n", compiled.ast, compiled.checked);
    }
    text += &compiled.plan.to_string();
    if let Some(which) = &args.dump_after {
        loopnest::schedule(&compiled.plan, crate::backend::jit::host_target(), |pass, nest| {
            if which == "all" || which == pass {
                text += &format!("== after {pass}\n{nest}");
            }
        });
    }
    if args.clif || every_stage {
        match crate::backend::jit::kernel_ir(&compiled.plan) {
            Ok((nest, ir)) => text += &format!("== loop nest\n{nest}== clif\n{ir}"),
            Err(e) => {
                print(&text)?;
                eprintln!("error: {e}");
                return Err(Failure::Runtime);
            }
        }
    }
    print(&text)
}

/// `plan` and `explain` for symbolic input types: the checked program (its types in the
/// symbols) and the generic plan, not yet verified. The loop nest and the JIT need concrete
/// shapes.
fn run_generic(args: PlanArgs, every_stage: bool) -> Result<(), Failure> {
    if args.dump_after.is_some() || args.clif {
        eprintln!("error: --dump-after and --clif need concrete shapes (the loop nest is built per shape)");
        return Err(Failure::Usage);
    }
    check_bindings(&args.types.inputs, &args.types.shapes)?;
    let mut types: SymInputTypes = args.types.shapes.iter().cloned().collect();
    for input in &args.types.inputs {
        let npy = input.open()?;
        types.insert(input.name.clone(), TensorType::of(npy.dtype(), npy.shape()).generic());
    }
    let compiled =
        crate::pipeline::compile_generic(&args.expr, &types).map_err(|e| report(&e, &args.expr))?;
    let mut text = String::new();
    if every_stage {
        text += &format!("== ast\n{}\n== checked\n{}\n\n== plan\n", compiled.ast, compiled.checked);
    }
    // The plan printer does not print generic plans yet: the structure, for now.
    text += &format!("{:#?}\n", compiled.plan);
    print(&text)
}
