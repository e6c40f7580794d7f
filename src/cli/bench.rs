//! `slc bench`: time a program's kernel on generated inputs against memcpy of the same output
//! bytes, interleaved in one run so that both see the same machine state.

use super::args::{concrete_types, parse_shape};
use super::{Failure, report};
use crate::backend::{RuntimeError, jit};
use crate::exec::Runnable;
use crate::measure;
use crate::sema::InputTypes;
use crate::types::SymTensorType;
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
    #[arg(long, value_name = "jit|interp", default_value = "jit", value_parser = super::parse_backend)]
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

pub fn run(args: BenchArgs) -> Result<(), Failure> {
    let types: InputTypes = concrete_types(&args.shapes, "bench")?.into_iter().collect();
    let compiled: Compiled = crate::compile(&args.expr, &types).map_err(|e| report(&e, &args.expr))?;
    let plan = &compiled.plan;
    // Before anything is allocated: the output, and memcpy's source and destination.
    let bytes = plan.output_bytes();
    crate::exec::check_output(bytes.saturating_mul(3), None, Some(compiled.checked.span))
        .map_err(|e| report(&e.into(), &args.expr))?;
    let inputs = measure::generated_inputs(plan).map_err(|e| {
        eprintln!("error: {e}");
        Failure::Runtime
    })?;
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let threads = args.threads as usize;
    // Cold compile: the median of a few compiles of this kernel, none from a cache; the host's
    // ISA, detected once per process, is not part of it.
    let compile = || {
        let started = Instant::now();
        let runnable = Runnable::prepare_in_plan_order(plan, args.backend, None)?;
        Ok::<_, RuntimeError>((runnable, started.elapsed().as_nanos()))
    };
    let compiles = jit::host_isa()
        .map_err(RuntimeError::from)
        .and_then(|_| (0..COMPILES).map(|_| compile()).collect::<Result<Vec<_>, _>>())
        .map_err(|e| {
            eprintln!("error: {e}");
            Failure::Runtime
        })?;
    let mut times: Vec<u128> = compiles.iter().map(|(_, ns)| *ns).collect();
    times.sort_unstable();
    // The interpreter compiles nothing.
    let compile_ns = if args.backend == Executor::Jit { times[COMPILES / 2] } else { 0 };
    let runnable = compiles.into_iter().next_back().map(|(r, _)| r).expect("COMPILES > 0");
    let dims: Vec<usize> = plan.shape.iter().map(|&d| d as usize).collect();
    let mut out = Tensor::zeros(plan.dtype, &dims).map_err(|e| {
        eprintln!("error: {e}");
        Failure::Runtime
    })?;
    let out_bytes = out.nbytes();
    let moved = measure::moved_bytes(plan, &refs, out_bytes);
    let once = || -> Result<(), RuntimeError> {
        if args.into {
            runnable.run_into(plan, &refs, &mut out, threads)
        } else {
            runnable.run(plan, &refs, threads).map(drop)
        }
    };
    let budget = Duration::from_secs_f64(args.seconds.max(0.0));
    let timing = measure::time_against_memcpy(once, out_bytes, moved, budget).map_err(|e| {
        eprintln!("error: {e}");
        Failure::Runtime
    })?;
    let (k, c, ratio, gb_per_s) = (timing.kernel, timing.memcpy, timing.ratio(), timing.gb_per_s());
    let backend = args.backend.name();
    println!("{}", args.expr);
    println!(
        "  kernel {:>12.3} µs median of {} ({backend}, {threads} thread{}, {} output)",
        k.as_secs_f64() * 1e6,
        timing.samples,
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
            "{{\"expr\": {:?}, \"median_ns\": {}, \"memcpy_median_ns\": {}, \"ratio\": {ratio:.4}, \"gb_per_s\": {gb_per_s:.3}, \"out_bytes\": {out_bytes}, \"compile_ns\": {compile_ns}, \"threads\": {threads}, \"backend\": \"{backend}\", \"into\": {}, \"samples\": {}}}",
            args.expr,
            k.as_nanos(),
            c.as_nanos(),
            args.into,
            timing.samples
        );
    }
    Ok(())
}
