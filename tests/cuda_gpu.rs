//! The GPU-only tests (`support/gpu_suite.rs`) on this machine's GPU: kernels run on the device
//! by `slc`'s CUDA runtime (NVRTC → CUBIN for the device, launched through the driver) against
//! the CPU, golden corpus and fuzzer programs, errors included, the context usable after each.
//! Where the machine has no CUDA driver they pass saying "skipped: no CUDA driver" (the same
//! suite runs on the stand-in driver in `cuda_stand_in.rs`), and the tests here that need no GPU
//! check that every surface then says so.

#[path = "support/command.rs"]
mod command;
#[path = "support/cuda_programs.rs"]
mod programs;
#[path = "support/gpu_suite.rs"]
mod suite;

use slc::Tensor;
use slc::backend::cuda::device;

const GOLDEN_EVERY: usize = 1;

fn gpu() -> Option<&'static device::Device> {
    match device::device() {
        Ok(d) => Some(d),
        Err(e) => {
            eprintln!("skipped: no CUDA driver ({e})");
            None
        }
    }
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

/// Without a driver, the GPU as an executor (`Executor::Cuda`) through sessions, prepared
/// kernels, `slc run`, `slc bench`, the REPL and `Kernel::run_device` says so (E0209, or exit 2
/// from the command line), and nothing runs elsewhere in its place.
#[test]
fn without_a_driver_every_surface_says_so() {
    use slc::embed::{DeviceArray, Kernel, Stream};
    use slc::{Executor, Session};
    if device::driver_present() {
        eprintln!("skipped: this machine has a CUDA driver");
        return;
    }
    let mut s = Session::with_executor(Executor::Cuda);
    s.bind("a", Tensor::zeros(slc::DType::F32, &[4, 5]).unwrap());
    let e = s.eval("a[::-1]").unwrap_err();
    assert_eq!(e.diagnostic().code, "E0209", "{e}");
    assert!(e.to_string().contains("no CUDA driver"), "{e}");
    let options = slc::RunOptions { executor: Executor::Cuda, ..Default::default() };
    let k = slc::Kernel::prepare_with("a[1:]", &[("a", "u8[3]".parse().unwrap())], &options);
    assert_eq!(k.unwrap_err().diagnostic().code, "E0209");
    for args in [
        &["run", "--backend", "cuda", "/dev/null"][..],
        &["bench", "a[::-1]", "--shape", "a=f32[9]", "--backend", "cuda"],
    ] {
        let out =
            std::process::Command::new(env!("CARGO_BIN_EXE_slc")).args(args).output().expect("slc runs");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains("error: --backend cuda: no CUDA driver"), "{args:?}: {stderr}");
    }
    let out = command::slc_with(&["repl"], ":backend cuda\n:backend\n", vec![]);
    let (stdout, stderr) = (command::stdout(&out), command::stderr(&out));
    assert!(stderr.contains("E0209") && stderr.contains("no CUDA driver"), "{stderr}");
    assert!(stdout.contains("backend: jit"), "the back end stays: {stdout}");
    let ty = |s: &str| -> slc::types::SymTensorType { s.parse().unwrap() };
    let k = Kernel::prepare("a[::-1]", &[("a", ty("f32[N]"))]).unwrap();
    let a = DeviceArray { ptr: 0, dtype: slc::DType::F32, shape: vec![0], strides: None };
    // SAFETY: never dereferenced: there is no device.
    let e = unsafe { k.run_device(&[a], Stream(1)) }.unwrap_err();
    assert_eq!(e.diagnostic().code, "E0209", "{e}");
}
