//! `slc compile`: turn a program, for declared input types, into something that runs without
//! slc's front end — DirectML operator descriptors (`--target dml`), an object file and C
//! header (`--target cpu`), or CUDA C source and a header (`--target cuda`).

mod cpu;
mod cuda;
mod dml;

use super::plan::TypeArgs;
use super::{Failure, report};
use crate::plan::InputDecl;
use crate::sema::{InputTypes, SymInputTypes};
use crate::types::sym::SymExpr;
use std::path::PathBuf;

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum TargetArg {
    /// An ahead-of-time CPU kernel: a relocatable object file and a C header.
    Cpu,
    /// DirectML operator descriptors (DML_OPERATOR_SLICE1, DML_OPERATOR_GATHER, ...).
    Dml,
    /// CUDA C: the kernels and a host launcher (nvcc compiles it as it is), and a C header.
    Cuda,
}

#[derive(clap::ValueEnum, Debug, Clone, Copy, PartialEq, Eq)]
pub enum FormatArg {
    /// JSON mirroring directml.h's structures.
    Json,
    /// C source that builds the same descriptors against directml.h.
    C,
}

#[derive(clap::Args, Debug)]
pub struct CompileArgs {
    /// The program, e.g. 'a[1:, ::-1]'.
    pub expr: String,
    /// The kernel's inputs, in the order it takes them (`--shape`s first, then `-i`s).
    #[command(flatten)]
    pub types: TypeArgs,
    #[arg(long, value_enum)]
    pub target: TargetArg,
    /// DirectML output format.
    #[arg(long, value_enum, default_value = "json")]
    pub format: FormatArg,
    /// The DirectML feature level the descriptors must run on, e.g. 3.0, 4.1, 5.0.
    #[arg(long, value_name = "MAJOR.MINOR")]
    pub feature_level: Option<String>,
    /// Where to write the result: the object file for `--target cpu`; for `--target cuda` the
    /// `.cu` file, and for `--target dml` the JSON or C file (default: standard output).
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// The C header to write beside the object file (`--target cpu`) or the `.cu` file
    /// (`--target cuda`).
    #[arg(long, value_name = "FILE.h")]
    pub header: Option<PathBuf>,
    /// The kernel's symbol name (`--target cpu` and `cuda`, default `slc_kernel`; the C
    /// function of `--format c`, default `slc`).
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
}

/// A usage error of a target's options, printed; exit 2.
fn usage(msg: &str) -> Failure {
    eprintln!("error: {msg}");
    Failure::Usage
}

pub fn run(args: CompileArgs) -> Result<(), Failure> {
    if let Some((name, ty)) = args.types.first_symbolic() {
        if args.target == TargetArg::Dml {
            eprintln!(
                "error: --target dml needs concrete shapes (DirectML operators have fixed sizes): `{name}` is {ty}"
            );
            return Err(Failure::Usage);
        }
        return run_generic(&args);
    }
    let (declared, values) = args.types.resolve("compile")?;
    let types: InputTypes = declared.iter().cloned().collect();
    // DirectML's scatters take positions: a store through a mask folds them (docs/semantics.md).
    let compiled = match args.target {
        TargetArg::Dml => crate::pipeline::compile_for_dml(&args.expr, &types, &values),
        _ => crate::compile_with_values(&args.expr, &types, &values),
    }
    .map_err(|e| report(&e, &args.expr))?;
    let declared: Vec<InputDecl<SymExpr>> =
        declared.iter().map(|(name, ty)| InputDecl::dense(name, ty.dtype, ty.generic().shape)).collect();
    if compiled.plan.store.is_some() && args.target == TargetArg::Cuda {
        return Err(store_on_cuda(&args));
    }
    match args.target {
        TargetArg::Cpu => cpu::run(&args, &declared, &compiled.plan.lift()),
        TargetArg::Cuda => cuda::run(&args, &declared, &compiled.plan.lift()),
        TargetArg::Dml => dml::run(&args, &compiled),
    }
}

/// The CUDA back end has no update kernels (docs/semantics.md, Stores).
fn store_on_cuda(args: &CompileArgs) -> Failure {
    let refusal =
        crate::backend::RuntimeError::Unsupported { executor: "cuda", what: "a store plan (`a[i] = v`)" };
    report(&refusal.into(), &args.expr)
}

/// `--target cpu` or `cuda` with symbolic dims: one object (one source) for every shape.
fn run_generic(args: &CompileArgs) -> Result<(), Failure> {
    let declared = args.types.resolve_generic()?;
    let types: SymInputTypes = declared.iter().cloned().collect();
    let compiled =
        crate::pipeline::compile_generic(&args.expr, &types).map_err(|e| report(&e, &args.expr))?;
    let plan = crate::plan::verify_generic(compiled.plan).map_err(|e| report(&e.into(), &args.expr))?;
    let declared: Vec<InputDecl<SymExpr>> =
        declared.into_iter().map(|(name, ty)| InputDecl::dense(name, ty.dtype, ty.shape)).collect();
    match args.target {
        TargetArg::Cuda if plan.store.is_some() => Err(store_on_cuda(args)),
        TargetArg::Cuda => cuda::run(args, &declared, &plan),
        _ => cpu::run(args, &declared, &plan),
    }
}
