//! `slc plan` and `slc explain`: compile a program for given input types and show the result.

use super::args::{InputArg, check_bindings, concrete_types, parse_input, parse_shape};
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
    #[arg(long, value_name = "PASS|all", help = dump_after_help())]
    pub dump_after: Option<String>,
    /// Also print the JIT kernel's Cranelift IR.
    #[arg(long)]
    pub clif: bool,
}

/// `--dump-after`'s help, naming the passes from their one table.
fn dump_after_help() -> String {
    let names: Vec<&str> = loopnest::PASSES.iter().map(|p| p.name).collect();
    format!(
        "Print the loop nest after each scheduling pass that changes it (`all`), or after one named pass ({})",
        names.join(", ")
    )
}

/// Input types given by declaration or by example, as `plan`, `explain` and `compile` take them.
#[derive(clap::Args, Debug)]
pub struct TypeArgs {
    /// Declare an input by type: NAME=DTYPE[d0,d1,...], e.g. a=f32[2,3,4]. `plan`, `explain`
    /// and `compile --target cpu|cuda` also take symbolic dims (a=f32[N,M], `?` for an
    /// anonymous one) and 0-d integer inputs as run-time slice bounds (k=i64[]).
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
                values.insert(input.name.clone(), npy.read(&input.name)?);
            }
        }
        Ok((declared, values))
    }
}

impl TypeArgs {
    /// The declared inputs in the order given (`--shape`s first), their dims symbols or
    /// constants; of the examples only the headers are read.
    pub fn resolve_generic(&self) -> Result<Vec<(String, SymTensorType)>, Failure> {
        check_bindings(&self.inputs, &self.shapes)?;
        let mut declared = self.shapes.clone();
        for input in &self.inputs {
            let npy = input.open()?;
            declared.push((input.name.clone(), TensorType::of(npy.dtype(), npy.shape()).generic()));
        }
        Ok(declared)
    }

    /// The first input declared with a symbolic dim, if any.
    pub fn first_symbolic(&self) -> Option<&(String, SymTensorType)> {
        self.shapes.iter().find(|(_, ty)| !ty.is_concrete())
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
    if args.types.first_symbolic().is_some() {
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
        match crate::backend::jit::kernel_ir(&compiled.plan.lift()) {
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
/// symbols), the verified generic plan with its shape function's requirements, and the loop
/// nest and Cranelift IR of the one kernel that serves every shape.
fn run_generic(args: PlanArgs, every_stage: bool) -> Result<(), Failure> {
    let types: SymInputTypes = args.types.resolve_generic()?.into_iter().collect();
    let compiled =
        crate::pipeline::compile_generic(&args.expr, &types).map_err(|e| report(&e, &args.expr))?;
    let plan = crate::plan::verify_generic(compiled.plan).map_err(|e| report(&e.into(), &args.expr))?;
    let mut text = String::new();
    if every_stage {
        text += &format!("== ast\n{}\n== checked\n{}\n\n== plan\n", compiled.ast, compiled.checked);
    }
    text += &plan.to_string();
    let target = crate::backend::jit::host_target();
    if let Some(which) = &args.dump_after {
        loopnest::schedule_generic(&plan, target, |pass, nest| {
            if which == "all" || which == pass {
                text += &format!("== after {pass}\n{nest}");
            }
        });
    }
    if args.clif || every_stage {
        let isa = crate::backend::jit::host_isa().map_err(|e| {
            eprintln!("error: {e}");
            Failure::Runtime
        })?;
        let nest = loopnest::schedule_generic(&plan, crate::backend::clif::target(&*isa), |_, _| {});
        let ir = crate::backend::clif::kernel_ir(&*isa, &nest);
        text += &format!("== loop nest\n{nest}== clif\n{ir}");
    }
    print(&text)
}
