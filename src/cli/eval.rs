//! `slc eval`: evaluate a program on .npy inputs.
//!
//! Cheap checks come first: the program is parsed, the output location checked and the
//! program type-checked against the inputs' headers before any input's data is read (a typo
//! next to a 1 GB input answers at once).

use super::access;
use super::args::{InputArg, Opened, check_bindings, input_error, parse_bytes, parse_input};
use super::eval_cuda::EvalBackend;
use super::output::{OutputArg, check_output, parse_output, print, write_result};
use super::{Failure, report};
use crate::Session;
use crate::sema::{InputTypes, InputValues, value_may_be_read};
use crate::types::{ShapeDisplay, TensorType};
use crate::zarr;
use slc_runtime::{PrintOptions, Tensor, format_tensor};
use std::time::{Duration, Instant};

#[derive(clap::Args, Debug)]
pub struct EvalArgs {
    /// The program, e.g. 'a[1:, ::-1]' or 'let b = a[::2]; b[..., 0]'.
    pub expr: String,
    /// Bind an input: NAME=FILE.npy (or FILE.npy, bound to its stem), NAME=FILE.npz[:KEY] for an
    /// array of a .npz archive, NAME=- for a .npy on standard input.
    #[arg(short = 'i', long = "input", value_name = "NAME=FILE.npy", value_parser = parse_input)]
    pub inputs: Vec<InputArg>,
    /// Write the result to this .npy file instead of printing it (a regular file atomically; a
    /// symbolic link's target; a FIFO or device in place), or `-` for standard output.
    #[arg(short = 'o', long = "output", value_name = "OUT.npy", value_parser = parse_output)]
    pub output: Option<OutputArg>,
    /// The executor: `jit` (Cranelift, default), `interp` (the reference interpreter) or `cuda`
    /// (an NVIDIA GPU: host inputs copied in, the result copied out; docs/cuda.md).
    #[arg(long, value_name = "jit|interp|cuda", default_value = "jit", value_parser = super::eval_cuda::parse_backend)]
    pub backend: EvalBackend,
    /// Worker threads for large outputs (default: the machine's cores).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// Refuse results larger than this many bytes (suffixes K, M, G, T; default: the memory
    /// available).
    #[arg(long, value_name = "BYTES", value_parser = parse_bytes)]
    pub max_output_bytes: Option<u64>,
    /// Print to standard error where the time went: reading, compiling (or the cache),
    /// running, writing; bytes moved, bandwidth, threads.
    #[arg(long, short = 'v', alias = "verbose")]
    pub time: bool,
    /// With `--backend cuda`: launch the kernel N times on the same device buffers; `--time`
    /// shows the median launch.
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=10000))]
    pub repeat: u32,
}

pub fn run(args: EvalArgs) -> Result<(), Failure> {
    check_bindings(&args.inputs, &[])?;
    if args.backend == EvalBackend::Cuda {
        // No driver: a usage error before any input is read.
        super::eval_cuda::device()?;
    } else if args.repeat != 1 {
        eprintln!("error: --repeat applies to --backend cuda only");
        return Err(Failure::Usage);
    }
    if let Some(out) = &args.output {
        check_output(out, &args.inputs)?;
    }
    let started = Instant::now();
    crate::syntax::parse_program(&args.expr).map_err(|e| report(&e.into(), &args.expr))?;

    // Headers, and the values checking may read (operator parameters, masks).
    let mut types = InputTypes::new();
    let mut values = InputValues::new();
    let mut pending: Vec<(String, Opened)> = vec![];
    let mut read_bytes = 0u64;
    let mut mapped_bytes = 0u64;
    for input in &args.inputs {
        let npy = input.open()?;
        types.insert(input.name.clone(), TensorType::of(npy.dtype(), npy.shape()));
        // Values checking may read (operator parameters, masks) are read with their headers;
        // the others once the program has checked.
        if value_may_be_read(npy.dtype(), npy.shape().iter().product()) {
            let tensor = npy.read(&input.name)?;
            count_read(&tensor, tensor.nbytes() as u64, &mut read_bytes, &mut mapped_bytes);
            values.insert(input.name.clone(), tensor);
        } else {
            pending.push((input.name.clone(), npy));
        }
    }
    // Type-check before reading data; the session compiles again over the bound tensors (the
    // front end costs microseconds, and the kernel is built once, there). A large mask's
    // positions are derived as the kernel runs (the session's generic kernel): checked
    // generically, without folding them, its plan tells nothing of sparse reads.
    let has_zarr = pending.iter().any(|(_, opened)| matches!(opened, Opened::Zarr(_)));
    let run_time_mask = !has_zarr
        && crate::sema::holds_large_mask(&values)
        && crate::pipeline::compile_generic(
            &args.expr,
            &types.iter().map(|(n, t)| (n.clone(), t.generic())).collect(),
        )
        .is_ok();
    let compiled = match run_time_mask {
        true => None,
        false => Some(
            crate::compile_with_values(&args.expr, &types, &values).map_err(|e| report(&e, &args.expr))?,
        ),
    };
    let sparse = compiled.as_ref().map(|c| access::sparse_inputs(&c.plan)).unwrap_or_default();
    let parts = compiled.as_ref().map(|c| access::sparse_parts(&c.plan, &sparse)).unwrap_or_default();

    let executor = match args.backend {
        EvalBackend::Cpu(executor) => executor,
        EvalBackend::Cuda => {
            // The values checking may read are small: a copy of them stays apart for checking.
            let mut tensors = values.clone();
            for (name, npy) in pending {
                let tensor = npy.read(&name)?;
                tensors.insert(name, tensor);
            }
            let read = started.elapsed();
            // Every input's bytes go to the device, however they were read.
            let read_bytes = tensors.values().map(|t| t.nbytes() as u64).sum();
            let (result, report) =
                super::eval_cuda::run(&args.expr, &values, &tensors, args.max_output_bytes, args.repeat)?;
            let written = Instant::now();
            emit(&args.output, &result)?;
            if args.time {
                report.print(read, read_bytes, &result, written.elapsed());
            }
            return Ok(());
        }
    };
    let mut session = Session::with_executor(executor);
    if let Some(n) = args.threads {
        session.options_mut().threads = n as usize;
    }
    session.options_mut().max_output_bytes = args.max_output_bytes;
    let session_values = values;
    // Files are mapped, not read, where they can be: then only the pages the kernel touches
    // are read, as it runs. Of an input the plan reads in a few known places, only those are
    // read (the session evaluates this same program, so it reads nothing else). Zarr arrays
    // come last: the index arrays read before them narrow the chunks a gather decodes.
    let mut read_inputs = InputValues::new();
    let mut zarrs = vec![];
    for (name, opened) in pending {
        let npy = match opened {
            Opened::Npy(npy) => npy,
            Opened::Zarr(zarr) => {
                zarrs.push((name, *zarr));
                continue;
            }
        };
        let (bytes, tensor) = match parts.get(&name) {
            Some(parts) => (npy.parts_bytes(parts), npy.read_parts(parts)),
            None => (npy.data_bytes(), npy.read()),
        };
        let tensor = tensor.map_err(|e| input_error(&name, e))?;
        access::advise(&name, &tensor, &sparse);
        count_read(&tensor, bytes, &mut read_bytes, &mut mapped_bytes);
        read_inputs.insert(name, tensor);
    }
    // Of each Zarr array, the box holding the chunks the plan reads is decoded, and the plan
    // rebased onto it runs instead of the program (docs/zarr.md).
    let zarrs = match &compiled {
        Some(compiled) => zarr::read_zarrs(&compiled.plan, zarrs, &[&session_values, &read_inputs])
            .map_err(|(name, e)| input_error(&name, e))?,
        None => zarr::ReadZarrs { tensors: InputValues::new(), chunks: vec![], plan: None },
    };
    for count in &zarrs.chunks {
        read_bytes = read_bytes.saturating_add(count.bytes);
        if args.time {
            eprintln!("{}", count.timing_line());
        }
    }
    read_inputs.extend(zarrs.tensors);
    let read = started.elapsed();
    let (result, times) = match (zarrs.plan, compiled) {
        (Some(plan), Some(compiled)) => {
            let tensors: InputValues = session_values.into_iter().chain(read_inputs).collect();
            zarr::run_windowed(compiled, plan, &tensors, session.options_mut(), &Default::default())
                .map_err(|e| report(&e, &args.expr))?
        }
        _ => {
            for (name, tensor) in session_values.into_iter().chain(read_inputs) {
                session.bind(&name, tensor);
            }
            session.eval_timed(&args.expr).map_err(|e| report(&e, &args.expr))?
        }
    };
    let written = Instant::now();
    emit(&args.output, &result)?;
    if args.time {
        report_times(read, read_bytes, mapped_bytes, &times, written.elapsed(), &result);
    }
    Ok(())
}

/// The result written to `-o`, or printed.
fn emit(output: &Option<OutputArg>, result: &Tensor) -> Result<(), Failure> {
    match output {
        Some(out) => write_result(out, result),
        None => print_result(result),
    }
}

/// NumPy's printing, then the type (`f32[2, 3]`).
fn print_result(result: &Tensor) -> Result<(), Failure> {
    let shape: Vec<i64> = result.shape().iter().map(|&d| d as i64).collect();
    let text = format_tensor(result, &PrintOptions::default());
    print(&format!("{text}\n{}{}\n", result.dtype(), ShapeDisplay(&shape)))
}

/// Counts an input's `tensor` as read (`bytes` of it, read into memory as it was made) or
/// mapped (its pages read later, as the kernel touches them), for `--time`.
fn count_read(tensor: &Tensor, bytes: u64, read_bytes: &mut u64, mapped_bytes: &mut u64) {
    match tensor.is_mapped() {
        true => *mapped_bytes += tensor.nbytes() as u64,
        false => *read_bytes += bytes,
    }
}

/// `--time`: one line per phase on standard error (what was read: the bytes read into memory,
/// a Zarr input's chunks decoded, and apart from them the bytes mapped).
fn report_times(
    read: Duration,
    read_bytes: u64,
    mapped_bytes: u64,
    times: &crate::EvalTimes,
    write: Duration,
    out: &Tensor,
) {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    let rate = |bytes: u64, d: Duration| bytes as f64 / d.as_secs_f64().max(1e-9) / 1e9;
    let out_bytes = out.nbytes() as u64;
    let threads =
        if times.threads == 1 { "1 thread".to_string() } else { format!("{} threads", times.threads) };
    let mut line = format!("read    {:>10.3} ms  {read_bytes} bytes read", ms(read));
    if read_bytes > 0 {
        line += &format!(", {:.2} GB/s", rate(read_bytes, read));
    }
    if mapped_bytes > 0 {
        line += &format!("; {mapped_bytes} mapped: read as the kernel touches them");
    }
    eprintln!("{line}");
    let compile = if times.cache_hit { "cache hit" } else { "front end and code generation" };
    eprintln!("compile {:>10.3} ms  {compile}", ms(times.compile));
    eprintln!(
        "run     {:>10.3} ms  {} bytes moved (read and written), {:.2} GB/s, {threads}",
        ms(times.run),
        2 * out_bytes,
        rate(2 * out_bytes, times.run)
    );
    eprintln!("write   {:>10.3} ms  {out_bytes} bytes, {:.2} GB/s", ms(write), rate(out_bytes, write));
}
