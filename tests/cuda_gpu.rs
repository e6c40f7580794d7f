//! The GPU-only tests, all in this file: kernels run on the device by `slc`'s CUDA runtime
//! (NVRTC → CUBIN for the device, launched through the driver) against the CPU, golden corpus
//! and fuzzer programs, errors included, the context usable after each. Where the machine has no
//! CUDA driver they pass saying "skipped: no CUDA driver", and the one test that needs no GPU
//! checks that `slc eval --backend cuda` is then a clear usage error (exit 2).

#[path = "support/cuda_programs.rs"]
mod programs;

use slc::Tensor;
use slc::backend::cuda::device::{self, GpuError};

fn device_or_skip() -> Option<&'static device::Device> {
    match device::device() {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("skipped: no CUDA driver ({e})");
            None
        }
    }
}

fn check(gpu: &device::Device, programs: &[programs::Program]) {
    let mut failures = vec![];
    for p in programs {
        let inputs: Vec<&Tensor> = p.inputs.iter().collect();
        let got = gpu.run(&p.plan, &inputs).map(|(t, _)| t);
        let same = match (&p.want, &got) {
            (Ok(x), Ok(y)) => x == y,
            (Err(x), Err(GpuError::Run(y))) => x == y,
            _ => false,
        };
        if !same {
            failures.push(format!("{}: CPU {:?}, GPU {got:?}", p.what, p.want));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        programs.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

#[test]
fn golden_corpus_on_the_gpu() {
    let Some(gpu) = device_or_skip() else { return };
    check(gpu, &programs::golden());
}

#[test]
fn fuzzer_programs_on_the_gpu_every_policy_included() {
    let Some(gpu) = device_or_skip() else { return };
    check(gpu, &programs::fuzzed(1..=400));
}

#[test]
fn without_a_driver_backend_cuda_is_a_usage_error() {
    if device::driver_present() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_slc"))
        .args(["eval", "a[::-1]", "-i", "a=examples/data/a.npy", "--backend", "cuda"])
        .env("NO_COLOR", "1")
        .output()
        .expect("slc runs");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("error: --backend cuda: no CUDA driver"), "{stderr}");
    assert!(out.stdout.is_empty());
    // The library says the same, as an error value.
    assert!(matches!(device::device(), Err(slc::backend::cuda::CudaError::NoDriver(_))));
}
