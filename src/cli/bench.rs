//! `slc bench`: time a program's kernel on generated inputs against memcpy of the same output
//! bytes, interleaved in one run so that both see the same machine state. With symbolic dims
//! (`--shape a=f32[N, M] --size N=4096 --size M=4096`) the kernel timed is the shape-generic
//! one, on inputs of the sizes given, so generic and specialized can be timed side by side.

use super::args::{concrete_types, parse_shape};
use super::{Failure, report};
use crate::backend::jit::JitKernel;
use crate::backend::{RuntimeError, jit};
use crate::exec::Runnable;
use crate::measure;
use crate::sema::{InputTypes, SymInputTypes};
use crate::types::sym::{Env, Sym};
use crate::types::{SymTensorType, TensorType};
use crate::{Compiled, Executor};
use slc_runtime::Tensor;
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The program, e.g. 'a[:, ::-1]'.
    pub expr: String,
    /// Declare an input: NAME=DTYPE[d0,d1,...]; it is filled with random data (index tensors
    /// with random in-range indices).
    #[arg(long = "shape", value_name = "NAME=DTYPE[DIMS]", value_parser = parse_shape, required = true)]
    pub shapes: Vec<(String, SymTensorType)>,
    /// The size of a symbolic dim of the shapes: NAME=SIZE (then the generic kernel is timed).
    #[arg(long = "size", value_name = "NAME=SIZE", value_parser = parse_size)]
    pub sizes: Vec<(String, i64)>,
    #[arg(long, value_name = "jit|interp|cuda", default_value = "jit", value_parser = super::parse_backend)]
    pub backend: Executor,
    /// Worker threads (default 1: single-thread numbers are the comparable ones).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: u16,
    /// Write into one preallocated output instead of a fresh one per call.
    #[arg(long)]
    pub into: bool,
    /// End with one line of JSON.
    #[arg(long)]
    pub json: bool,
    /// Seconds to spend measuring (at least 10 samples are taken).
    #[arg(long, default_value_t = 1.0)]
    pub seconds: f64,
}

/// Compiles timed for `compile_ns` (their median).
const COMPILES: usize = 5;

/// `NAME=SIZE`, a size of a symbolic dim.
fn parse_size(s: &str) -> Result<(String, i64), String> {
    let usage = || format!("`{s}` is not NAME=SIZE (e.g. N=4096)");
    let (name, size) = s.split_once('=').ok_or_else(usage)?;
    let size = size.trim().parse::<i64>().ok().filter(|&n| n >= 0).ok_or_else(usage)?;
    Ok((name.trim().to_string(), size))
}

/// A failure already explained on stderr.
fn runtime(e: impl std::fmt::Display) -> Failure {
    eprintln!("error: {e}");
    Failure::Runtime
}

/// The kernel a run times.
enum Timed<'k> {
    Specialized(&'k Runnable, &'k crate::plan::VerifiedPlan),
    Generic(&'k JitKernel),
}

pub fn run(args: BenchArgs) -> Result<(), Failure> {
    let generic = args.shapes.iter().any(|(_, t)| !t.is_concrete());
    if !generic && !args.sizes.is_empty() {
        eprintln!("error: --size binds symbolic dims, and every --shape is concrete");
        return Err(Failure::Usage);
    }
    let concrete: Vec<(String, TensorType)> = match generic {
        true => bound_types(&args)?,
        false => concrete_types(&args.shapes, "bench")?,
    };
    let types: InputTypes = concrete.into_iter().collect();
    // The specialized plan: the inputs are generated for it (in-range indices), and it says which
    // bytes move.
    let compiled: Compiled = crate::compile(&args.expr, &types).map_err(|e| report(&e, &args.expr))?;
    let generic_plan = match generic {
        true => {
            let sym: SymInputTypes = args.shapes.iter().cloned().collect();
            let compiled =
                crate::pipeline::compile_generic(&args.expr, &sym).map_err(|e| report(&e, &args.expr))?;
            Some(crate::plan::verify_generic(compiled.plan).map_err(|e| report(&e.into(), &args.expr))?)
        }
        false => None,
    };
    if generic && args.backend != Executor::Jit {
        eprintln!("error: generic kernels are timed on the JIT (--backend jit)");
        return Err(Failure::Usage);
    }
    if args.backend == Executor::Cuda
        && let Err(e) = Runnable::prepare_gpu()
    {
        eprintln!("error: --backend cuda: {e}");
        return Err(Failure::Usage);
    }
    let plan = &compiled.plan;
    // Before anything is allocated: the output, and memcpy's source and destination.
    let bytes = plan.output_bytes();
    crate::exec::check_output(bytes.saturating_mul(3), None, Some(compiled.checked.span))
        .map_err(|e| report(&e.into(), &args.expr))?;
    let inputs = measure::generated_inputs(plan).map_err(runtime)?;
    let refs: Vec<&Tensor> = inputs.iter().collect();
    // The generic kernel takes the inputs in its own plan's order.
    let generic_refs: Vec<&Tensor> = match &generic_plan {
        Some(g) => g
            .inputs
            .iter()
            .map(|decl| plan.inputs.iter().position(|d| d.name == decl.name).map(|i| refs[i]))
            .collect::<Option<_>>()
            .ok_or_else(|| runtime("the generic and the specialized plan read different inputs"))?,
        None => vec![],
    };
    let threads = args.threads as usize;
    // Cold compile: the median of a few compiles of this kernel, none from a cache; the host's
    // ISA, detected once per process, is not part of it.
    let timed = |f: &dyn Fn() -> Result<(), RuntimeError>| {
        let started = Instant::now();
        f().map(|()| started.elapsed().as_nanos())
    };
    jit::host_isa().map_err(runtime)?;
    let mut runnable = None;
    let mut kernel = None;
    let mut times = vec![];
    for _ in 0..COMPILES {
        let ns = match &generic_plan {
            Some(g) => timed(&|| jit::compile(g, &jit::plan_order(g)).map(drop).map_err(RuntimeError::from)),
            None => timed(&|| Runnable::prepare_in_plan_order(plan, args.backend, None).map(drop)),
        };
        times.push(ns.map_err(runtime)?);
    }
    match &generic_plan {
        Some(g) => kernel = Some(jit::compile(g, &jit::plan_order(g)).map_err(runtime)?),
        None => runnable = Some(Runnable::prepare_in_plan_order(plan, args.backend, None).map_err(runtime)?),
    }
    times.sort_unstable();
    // The interpreter compiles nothing.
    let compile_ns = if args.backend == Executor::Jit { times[COMPILES / 2] } else { 0 };
    let which = match (&kernel, &runnable) {
        (Some(k), _) => Timed::Generic(k),
        (None, Some(r)) => Timed::Specialized(r, plan),
        (None, None) => unreachable!("one of them was compiled above"),
    };
    let dims: Vec<usize> = plan.shape.iter().map(|&d| d as usize).collect();
    let mut out = Tensor::zeros(plan.dtype, &dims).map_err(runtime)?;
    let out_bytes = out.nbytes();
    let moved = measure::moved_bytes(plan, &refs, out_bytes);
    let once = || -> Result<(), RuntimeError> {
        match (&which, args.into) {
            (Timed::Specialized(r, plan), true) => r.run_into(plan, &refs, &mut out, threads),
            (Timed::Specialized(r, plan), false) => r.run(plan, &refs, threads).map(drop),
            (Timed::Generic(k), true) => k.run_into(&generic_refs, &mut out, threads),
            (Timed::Generic(k), false) => k.run(&generic_refs, threads).map(drop),
        }
    };
    let budget = Duration::from_secs_f64(args.seconds.max(0.0));
    let timing = measure::time_against_memcpy(once, out_bytes, moved, budget).map_err(runtime)?;
    let (k, c, ratio, gb_per_s) = (timing.kernel, timing.memcpy, timing.ratio(), timing.gb_per_s());
    let backend = args.backend.name();
    println!("{}", args.expr);
    println!(
        "  kernel {:>12.3} µs median of {} ({backend}{}, {threads} thread{}, {} output)",
        k.as_secs_f64() * 1e6,
        timing.samples,
        if generic { ", generic" } else { "" },
        if threads == 1 { "" } else { "s" },
        if args.into { "preallocated" } else { "fresh" }
    );
    println!("  memcpy {:>12.3} µs median ({out_bytes} bytes)", c.as_secs_f64() * 1e6);
    println!(
        "  ratio  {ratio:>12.3}    bandwidth {gb_per_s:.2} GB/s    compile {:.1} µs",
        compile_ns as f64 / 1e3
    );
    if args.json {
        println!(
            "{{\"expr\": {:?}, \"median_ns\": {}, \"memcpy_median_ns\": {}, \"ratio\": {ratio:.4}, \"gb_per_s\": {gb_per_s:.3}, \"out_bytes\": {out_bytes}, \"compile_ns\": {compile_ns}, \"threads\": {threads}, \"backend\": \"{backend}\", \"into\": {}, \"samples\": {}, \"generic\": {generic}}}",
            args.expr,
            k.as_nanos(),
            c.as_nanos(),
            args.into,
            timing.samples
        );
    }
    Ok(())
}

/// The declared shapes with `--size`s bound: every symbol needs one, and every `--size` names a
/// symbol.
fn bound_types(args: &BenchArgs) -> Result<Vec<(String, TensorType)>, Failure> {
    let mut env = Env::new();
    for (name, size) in &args.sizes {
        env.bind(Sym::Dim(name.as_str().into()), *size);
    }
    let mut used = vec![];
    let mut out = vec![];
    for (name, ty) in &args.shapes {
        let mut shape = vec![];
        for d in &ty.shape {
            used.extend(d.symbols());
            match d.eval(&env) {
                Some(n) if n >= 0 => shape.push(n),
                Some(n) => {
                    eprintln!("error: `{d}` of `{name}` is {n} with the sizes given");
                    return Err(Failure::Usage);
                }
                None => {
                    let missing: Vec<String> =
                        d.symbols().iter().filter(|s| env.get(s).is_none()).map(|s| s.to_string()).collect();
                    eprintln!(
                        "error: `{name}` is {ty}: give `--size {}=SIZE`",
                        missing.join("=SIZE --size ")
                    );
                    return Err(Failure::Usage);
                }
            }
        }
        out.push((name.clone(), TensorType { dtype: ty.dtype, shape }));
    }
    if let Some((name, _)) = args.sizes.iter().find(|(n, _)| !used.contains(&Sym::Dim(n.as_str().into()))) {
        eprintln!("error: --size {name}=...: no --shape has a dim named `{name}`");
        return Err(Failure::Usage);
    }
    Ok(out)
}
