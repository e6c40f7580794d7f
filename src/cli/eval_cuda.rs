//! `slc eval --backend cuda`: the program compiled for the inputs' types, its kernel run on the
//! GPU (host inputs copied in, the result copied out), the result printed or written as on the
//! CPU. Without a CUDA driver: a clear error before any input is read, exit 2.

use super::{Failure, report};
use crate::Executor;
use crate::backend::cuda::device::{self, Cached, Device, GpuError, GpuTimes};
use crate::sema::{InputTypes, InputValues};
use crate::types::TensorType;
use slc_runtime::Tensor;
use std::collections::BTreeMap;
use std::time::Duration;

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

/// Runs the program `expr` on `tensors` (every input, read) on the GPU, launching its kernel
/// `launches` times; `values` are those checking may read, as the CPU path gives them. The
/// result, and what `--time` prints.
pub fn run(
    expr: &str,
    values: &InputValues,
    tensors: &BTreeMap<String, Tensor>,
    max_output_bytes: Option<u64>,
    launches: u32,
) -> Result<(Tensor, GpuReport), Failure> {
    let gpu = device()?;
    let types: InputTypes =
        tensors.iter().map(|(n, t)| (n.clone(), TensorType::of(t.dtype(), t.shape()))).collect();
    // A large mask's positions are made for the run and copied in, not folded into the plan
    // (folding 8 million of them costs seconds).
    let compiled = crate::pipeline::compile_for_run(expr, &types, values).map_err(|e| report(&e, expr))?;
    if let Some(store) = &compiled.plan.store
        && crate::backend::cuda::codegen::store::supported(store.combine, compiled.plan.dtype).is_err()
    {
        // No update kernels combine complex numbers (docs/cuda.md, Stores).
        let refusal = crate::backend::RuntimeError::Unsupported {
            executor: "cuda",
            what: "a store combining complex numbers (`+=`, `*=`, a scatter's reduction)",
        };
        return Err(report(&refusal.into(), expr));
    }
    compiled
        .check_output_size(&crate::RunOptions { max_output_bytes, ..Default::default() })
        .map_err(|e| report(&e.into(), expr))?;
    let inputs =
        crate::plan::input_tensors(&compiled.plan.inputs, &|name| tensors.get(name)).map_err(|e| {
            eprintln!("error: {e}");
            Failure::Usage
        })?;
    let inputs: Vec<&Tensor> = inputs.iter().map(|t| t.as_ref()).collect();
    let (result, times) =
        gpu.run_repeated(&compiled.plan.lift(), &inputs, launches as usize).map_err(|e| match e {
            GpuError::Run(e) => report(&e.located(&compiled.plan).into(), expr),
            GpuError::Cuda(e) => {
                eprintln!("error: --backend cuda: {e}");
                Failure::Runtime
            }
        })?;
    let in_bytes = inputs.iter().map(|t| t.nbytes()).sum();
    Ok((result, GpuReport { gpu, times, in_bytes, launches }))
}

/// Where a run's time went on the GPU, for `--time`.
pub struct GpuReport {
    gpu: &'static Device,
    times: GpuTimes,
    in_bytes: usize,
    launches: u32,
}

impl GpuReport {
    /// One line per phase on standard error: `read` the inputs, then the GPU's phases, then
    /// `write` the result `out`.
    pub fn print(&self, read: Duration, read_bytes: u64, out: &Tensor, write: Duration) {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let rate = |bytes: usize, d: Duration| bytes as f64 / d.as_secs_f64().max(1e-9) / 1e9;
        let (times, in_bytes, out_bytes) = (&self.times, self.in_bytes, out.nbytes());
        let compile = match times.cached {
            Cached::Compiled => "NVRTC",
            Cached::Disk => "disk cache",
            Cached::Memory => "memory cache",
        };
        eprintln!("device  {} (sm_{})", self.gpu.name, self.gpu.arch);
        eprintln!("read    {:>10.3} ms  {read_bytes} bytes of input data", ms(read));
        eprintln!("compile {:>10.3} ms  {compile}", ms(times.compile));
        eprintln!(
            "h2d     {:>10.3} ms  {in_bytes} bytes, {:.2} GB/s",
            ms(times.h2d),
            rate(in_bytes, times.h2d)
        );
        let launches =
            if self.launches > 1 { format!(", median of {} launches", self.launches) } else { String::new() };
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
        eprintln!("write   {:>10.3} ms", ms(write));
    }
}
