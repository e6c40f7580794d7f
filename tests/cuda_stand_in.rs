//! The GPU-only tests (`support/gpu_suite.rs`) on the stand-in CUDA driver and NVRTC
//! (`support/cuda_stand_in.c`: host memory as device memory, kernels compiled by the system C
//! compiler under the host emulation, queued work run only when waited for), so that every
//! device route of slc — uploads, launches, the error words, stores through device views, the
//! sessions and the command line — runs on every machine with a C compiler, against the
//! interpreter. What only a GPU shows (timing, concurrency on the device, the CUBIN itself:
//! `cuda_nvrtc.rs` compiles those) stays with `cuda_gpu.rs`.

#[path = "support/cuda_programs.rs"]
mod programs;
#[path = "support/cuda_stand_in.rs"]
mod stand_in;
#[path = "support/gpu_suite.rs"]
mod suite;

use slc::backend::cuda::device;

/// A quarter of the golden corpus (≈800 kernels): a C compile each, ≈60 ms.
const GOLDEN_EVERY: usize = 4;

fn gpu() -> Option<&'static device::Device> {
    if let Err(e) = stand_in::install() {
        eprintln!("skipped: the stand-in CUDA driver is not available ({e})");
        return None;
    }
    Some(device::device().expect("the stand-in driver opens"))
}
