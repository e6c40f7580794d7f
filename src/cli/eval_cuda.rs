//! `slc eval --backend cuda`: the program compiled for the inputs' types, its kernel run on the
//! GPU (host inputs copied in, the result copied out), the result printed or written as on the
//! CPU. Without a CUDA driver: a clear error before any input is read, exit 2.

use super::eval::{EvalArgs, print_result};
use super::output::write_result;
use super::{Failure, report};
use crate::Executor;
use crate::backend::cuda::device::{self, Cached, Device, GpuError};
use crate::sema::{InputTypes, InputValues};
use crate::types::TensorType;
use slc_runtime::Tensor;
use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// `--backend`: a CPU executor, or the GPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvalBackend {
    Cpu(Executor),
    Cuda,
}

pub fn parse_backend(s: &str) -> Result<EvalBackend, String> {
    match s {
        "cuda" => Ok(EvalBackend::Cuda),
        _ => Executor::from_name(s)
            .map(EvalBackend::Cpu)
            .ok_or_else(|| format!("`{s}` is not a back end; use jit, interp or cuda")),
    }
}

/// The GPU, or a usage error saying why there is none.
pub fn device() -> Result<&'static Device, Failure> {
    device::device().map_err(|e| {
        eprintln!("error: --backend cuda: {e}");
        Failure::Usage
    })
}

/// Runs the program on `tensors` (every input, read) on the GPU; `values` are those checking
/// may read, as the CPU path gives them.
pub fn run(
    args: &EvalArgs,
    values: &InputValues,
    tensors: &BTreeMap<String, Tensor>,
    read: Duration,
    read_bytes: u64,
) -> Result<(), Failure> {
    let gpu = device()?;
    let types: InputTypes =
        tensors.iter().map(|(n, t)| (n.clone(), TensorType::of(t.dtype(), t.shape()))).collect();
    let compiled =
        crate::compile_with_values(&args.expr, &types, values).map_err(|e| report(&e, &args.expr))?;
    compiled
        .check_output_size(&crate::RunOptions {
            max_output_bytes: args.max_output_bytes,
            ..Default::default()
        })
        .map_err(|e| report(&e.into(), &args.expr))?;
    let inputs =
        crate::plan::input_tensors(&compiled.plan.inputs, &|name| tensors.get(name)).map_err(|e| {
            eprintln!("error: {e}");
            Failure::Usage
        })?;
    let inputs: Vec<&Tensor> = inputs.iter().map(|t| t.as_ref()).collect();
    let (result, times) =
        gpu.run_repeated(&compiled.plan.lift(), &inputs, args.repeat as usize).map_err(|e| match e {
            GpuError::Run(e) => report(&e.located(&compiled.plan).into(), &args.expr),
            GpuError::Cuda(e) => {
                eprintln!("error: --backend cuda: {e}");
                Failure::Runtime
            }
        })?;
    let written = Instant::now();
    match &args.output {
        Some(out) => write_result(out, &result)?,
        None => print_result(&result)?,
    }
    if args.time {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let rate = |bytes: usize, d: Duration| bytes as f64 / d.as_secs_f64().max(1e-9) / 1e9;
        let in_bytes: usize = inputs.iter().map(|t| t.nbytes()).sum();
        let out_bytes = result.nbytes();
        let compile = match times.cached {
            Cached::Compiled => "NVRTC",
            Cached::Disk => "disk cache",
            Cached::Memory => "memory cache",
        };
        eprintln!("device  {} (sm_{})", gpu.name, gpu.arch);
        eprintln!("read    {:>10.3} ms  {read_bytes} bytes of input data", ms(read));
        eprintln!("compile {:>10.3} ms  {compile}", ms(times.compile));
        eprintln!(
            "h2d     {:>10.3} ms  {in_bytes} bytes, {:.2} GB/s",
            ms(times.h2d),
            rate(in_bytes, times.h2d)
        );
        let launches =
            if args.repeat > 1 { format!(", median of {} launches", args.repeat) } else { String::new() };
        eprintln!(
            "kernel  {:>10.3} ms  {} bytes moved (read and written), {:.2} GB/s{launches}",
            ms(times.kernel),
            2 * out_bytes,
            rate(2 * out_bytes, times.kernel)
        );
        eprintln!(
            "d2h     {:>10.3} ms  {out_bytes} bytes, {:.2} GB/s",
            ms(times.d2h),
            rate(out_bytes, times.d2h)
        );
        eprintln!("write   {:>10.3} ms", ms(written.elapsed()));
    }
    Ok(())
}
