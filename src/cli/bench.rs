//! `slc bench`: time a program's kernel on generated inputs against memcpy of the same output
//! bytes, interleaved in one run so that both see the same machine state.

use super::args::parse_shape;
use super::{Failure, report};
use crate::backend::{interp, jit};
use crate::plan::{Access, BufferId, Plan};
use crate::sema::{InputTypes, TensorType};
use crate::{Backend, Compiled};
use slc_runtime::{DType, Tensor};
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct BenchArgs {
    /// The program, e.g. 'a[:, ::-1]'.
    pub expr: String,
    /// Declare an input: NAME=DTYPE[d0,d1,...]; it is filled with random data (index tensors
    /// with random in-range indices).
    #[arg(long = "shape", value_name = "NAME=DTYPE[DIMS]", value_parser = parse_shape, required = true)]
    pub shapes: Vec<(String, TensorType)>,
    #[arg(long, value_name = "jit|interp", default_value = "jit", value_parser = |s: &str| Backend::from_name(s).ok_or(format!("`{s}` is not jit or interp")))]
    pub backend: Backend,
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

/// A deterministic generator (splitmix64): benchmarks must not vary with the seed of the day.
struct SplitMix(u64);

impl SplitMix {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// For each input used as an index, the smallest axis length it indexes.
fn index_bounds(plan: &Plan) -> Vec<Option<i64>> {
    fn walk(a: &Access, bounds: &mut [Option<i64>]) {
        for t in &a.terms {
            if let BufferId::Input(i) = t.index.buffer {
                bounds[i] = Some(bounds[i].map_or(t.len, |b| b.min(t.len)));
            }
            walk(&t.index, bounds);
        }
    }
    let mut bounds = vec![None; plan.inputs.len()];
    walk(&plan.output, &mut bounds);
    for c in &plan.checks {
        if let BufferId::Input(i) = c.index.buffer {
            bounds[i] = Some(bounds[i].map_or(c.len, |b| b.min(c.len)));
        }
        walk(&c.index, &mut bounds);
    }
    bounds
}

fn make_inputs(plan: &Plan) -> Result<Vec<Tensor>, String> {
    let mut rng = SplitMix(0x5EED);
    let bounds = index_bounds(plan);
    plan.inputs
        .iter()
        .zip(bounds)
        .map(|(decl, bound)| {
            let dims: Vec<usize> = decl.shape.iter().map(|&d| d as usize).collect();
            let mut t =
                Tensor::zeros(decl.dtype, &dims).map_err(|e| format!("input `{}`: {e}", decl.name))?;
            match bound {
                Some(n) if decl.dtype.is_integer() => {
                    let n = n.max(1) as u64;
                    let values: Vec<i64> = (0..t.numel()).map(|_| (rng.next() % n) as i64).collect();
                    t = Tensor::from_i64s(decl.dtype, &dims, &values).map_err(|e| e.to_string())?;
                }
                _ => {
                    for chunk in t.bytes_mut().chunks_mut(8) {
                        let r = rng.next().to_le_bytes();
                        chunk.copy_from_slice(&r[..chunk.len()]);
                    }
                    if decl.dtype == DType::Bool {
                        t.bytes_mut().iter_mut().for_each(|b| *b &= 1);
                    }
                }
            }
            Ok(t)
        })
        .collect()
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

pub fn run(args: BenchArgs) -> Result<(), Failure> {
    let types: InputTypes = args.shapes.into_iter().collect();
    let compiled: Compiled = crate::compile(&args.expr, &types).map_err(|e| report(&e, &args.expr))?;
    let plan = &compiled.plan;
    let inputs = make_inputs(plan).map_err(|e| {
        eprintln!("error: {e}");
        Failure::Runtime
    })?;
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let threads = args.threads as usize;
    let started = Instant::now();
    let kernel = match args.backend {
        Backend::Jit => Some(jit::compile(plan, &compiled.info).map_err(|e| {
            eprintln!("error: {e}");
            Failure::Runtime
        })?),
        Backend::Interp => None,
    };
    let compile_ns = started.elapsed().as_nanos();
    let dims: Vec<usize> = plan.shape.iter().map(|&d| d as usize).collect();
    let mut out = Tensor::zeros(plan.dtype, &dims).map_err(|e| {
        eprintln!("error: {e}");
        Failure::Runtime
    })?;
    let out_bytes = out.nbytes();
    let index_bytes: usize =
        index_bounds(plan).iter().zip(&inputs).filter(|(b, _)| b.is_some()).map(|(_, t)| t.nbytes()).sum();
    let mut once = || -> Result<(), crate::backend::RuntimeError> {
        match (&kernel, args.into) {
            (Some(k), true) => k.run_into(plan, &refs, &mut out, threads),
            (Some(k), false) => k.run(plan, &refs, threads).map(drop),
            (None, _) => interp::run(plan, &compiled.info, &refs).map(drop),
        }
    };
    if let Err(e) = once() {
        eprintln!("error: {e}");
        return Err(Failure::Runtime);
    }
    // memcpy of the same byte count, between buffers touched once before timing.
    let src = vec![1u8; out_bytes.max(1)];
    let mut dst = vec![0u8; out_bytes.max(1)];
    let (mut kernel_times, mut copy_times) = (vec![], vec![]);
    let budget = Duration::from_secs_f64(args.seconds.max(0.0));
    let begin = Instant::now();
    while kernel_times.len() < 10 || (begin.elapsed() < budget && kernel_times.len() < 100_000) {
        let t = Instant::now();
        let _ = once();
        kernel_times.push(t.elapsed());
        let t = Instant::now();
        dst.copy_from_slice(&src);
        std::hint::black_box(&mut dst);
        copy_times.push(t.elapsed());
    }
    let (k, c) = (median(kernel_times.clone()), median(copy_times));
    let ratio = k.as_secs_f64() / c.as_secs_f64().max(1e-12);
    let moved = (out_bytes * 2 + index_bytes) as f64;
    let gb_per_s = moved / k.as_secs_f64().max(1e-12) / 1e9;
    let backend = match args.backend {
        Backend::Jit => "jit",
        Backend::Interp => "interp",
    };
    println!("{}", args.expr);
    println!(
        "  kernel {:>12.3} µs median of {} ({backend}, {threads} thread{}, {} output)",
        k.as_secs_f64() * 1e6,
        kernel_times.len(),
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
            kernel_times.len()
        );
    }
    Ok(())
}
