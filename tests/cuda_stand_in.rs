//! The GPU-only tests (`support/gpu_suite.rs`) on the stand-in CUDA driver and NVRTC
//! (`support/cuda_stand_in.c`: host memory as device memory, kernels compiled by the system C
//! compiler under the host emulation, queued work run only when waited for), so that every
//! device route of slc — uploads, launches, the error words, stores through device views, the
//! sessions and the command line — runs on every machine with a C compiler, against the
//! interpreter. What only a GPU shows (timing, concurrency on the device, the CUBIN itself:
//! `cuda_nvrtc.rs` compiles those) stays with `cuda_gpu.rs`.

#[path = "support/command.rs"]
mod command;
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
    stand_in::device()
}

/// `slc` with `--backend cuda` on the stand-in, against the same command on the JIT: `eval`
/// (values, a written `.npy`, an out-of-range index's diagnostic and exit code), `run` on the
/// example scripts, the REPL's `:backend cuda`, `bench`; `--time` shows the device's phases.
#[test]
fn the_command_line_on_the_device() {
    if stand_in::install().is_err() {
        eprintln!("skipped: the stand-in CUDA driver is not available");
        return;
    }
    let dir = command::scratch("cuda_stand_in", "command_line");
    let slc = |args: &[&str], stdin: &str| {
        let out = command::slc_with(args, stdin, stand_in::environment());
        (out.status.code(), command::stdout(&out), command::stderr(&out))
    };
    let a = "a=examples/data/a.npy";
    let mut failures = vec![];
    for expr in [
        "a[1:, ::-1]",
        "a[[0, 2, -1]]",
        "a[[True, False, True, True], ::2]",
        "a[:, None, ::2][..., 0]",
        "a[[0, 7]]",
        "a[[1, 1]] = 0",
    ] {
        let jit = slc(&["eval", expr, "-i", a], "");
        let cuda = slc(&["eval", expr, "-i", a, "--backend", "cuda"], "");
        // Each runs, but for the out-of-range index, which fails alike.
        if jit != cuda || (jit.0 == Some(0)) == expr.contains('7') {
            failures.push(format!("eval {expr}: JIT {jit:?}, cuda {cuda:?}"));
        }
    }
    let out = dir.path().join("out.npy");
    let out = out.to_str().unwrap();
    let (code, _, stderr) = slc(&["eval", "a[::-1]", "-i", a, "-o", out, "--backend", "cuda", "--time"], "");
    assert_eq!(code, Some(0), "{stderr}");
    for phase in ["h2d", "kernel", "d2h"] {
        assert!(stderr.lines().any(|l| l.starts_with(phase)), "--time shows {phase}: {stderr}");
    }
    let written = slc(&["eval", "o", "-i", &format!("o={out}")], "");
    assert_eq!(written, slc(&["eval", "a[::-1]", "-i", a], ""), "the .npy written from the device");
    for script in ["crop_and_flip", "embedding_lookup", "onnx_slice_chain"] {
        let file = format!("examples/{script}.slc");
        let (jit, cuda) = (slc(&["run", &file], ""), slc(&["run", "--backend", "cuda", &file], ""));
        if jit != cuda || jit.0 != Some(0) {
            failures.push(format!("run {file}: JIT {jit:?}, cuda {cuda:?}"));
        }
    }
    // The same lines on each back end, chosen by the first.
    let session = |backend: &str| {
        format!(
            ":backend {backend}\n:load a=examples/data/a.npy\na[::-2, 1:]\na[[5]]\na[[True, False, True, True]]\n"
        )
    };
    let (jit, cuda) = (slc(&["repl"], &session("jit")), slc(&["repl"], &session("cuda")));
    let jit = (jit.0, jit.1.replace("backend: jit", "backend: cuda"), jit.2);
    if jit != cuda || !jit.1.contains("[16. 17. 18. 19.]") {
        failures.push(format!("repl: JIT {jit:?}, cuda {cuda:?}"));
    }
    let (code, stdout, stderr) = slc(&["bench", "a[::-1]", "--shape", "a=f32[9]", "--backend", "cuda"], "");
    assert!(code == Some(0) && stdout.contains("cuda"), "{stdout}{stderr}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The stand-in is as strict as `cuda_stand_in.c` says: queued work runs only when waited for
/// (a copy into pinned memory is not there before the stream is synchronized; an event's time
/// is not ready before), and only what the wait covers (another stream's work only once ordered
/// before it by an event, or by the legacy stream, which orders no non-blocking stream); fresh memory is not zeros, and a copy past
/// an allocation's end, or from memory freed, is refused.
#[test]
fn the_stand_in_defers_work_and_refuses_stray_copies() {
    use cudarc::driver::{result, sys};
    let Some(_) = gpu() else { return };
    let stream: sys::CUstream = std::ptr::null_mut();
    // SAFETY: the driver's API on memory allocated here, of the sizes given.
    unsafe {
        let d = result::malloc_sync(64).unwrap();
        let mut fresh = [0u8; 64];
        result::memcpy_dtoh_sync(&mut fresh, d).unwrap();
        assert!(fresh.iter().all(|&b| b == 0xA5), "fresh memory is filled: {fresh:?}");
        let pinned = result::malloc_host(64, 0).unwrap().cast::<u8>();
        let host = std::slice::from_raw_parts_mut(pinned, 64);
        host.fill(0);
        let (start, end) = (result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).unwrap(), {
            result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).unwrap()
        });
        result::event::record(start, stream).unwrap();
        result::memset_d8_async(d, 7, 64, stream).unwrap();
        result::memcpy_dtoh_async(host, d, stream).unwrap();
        result::event::record(end, stream).unwrap();
        assert!(host.iter().all(|&b| b == 0), "nothing runs before a wait");
        assert!(result::event::elapsed(start, end).is_err(), "no time before the events are reached");
        result::stream::synchronize(stream).unwrap();
        assert!(host.iter().all(|&b| b == 7), "the copy after the wait");
        assert!(result::event::elapsed(start, end).is_ok());
        // Another stream's work runs when that stream is waited for, or what it was ordered
        // before; a legacy-stream wait covers every stream.
        let (a, b) = (result::stream::create(result::stream::StreamKind::Default).unwrap(), {
            result::stream::create(result::stream::StreamKind::Default).unwrap()
        });
        host.fill(0);
        result::memset_d8_async(d, 1, 64, a).unwrap();
        result::memcpy_dtoh_async(host, d, b).unwrap();
        result::stream::synchronize(b).unwrap();
        assert!(host.iter().all(|&x| x == 7), "b did not wait for a: {host:?}");
        result::memset_d8_async(d, 2, 64, a).unwrap();
        let marker = result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).unwrap();
        result::event::record(marker, a).unwrap();
        result::stream::wait_event(b, marker, sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT).unwrap();
        result::memcpy_dtoh_async(host, d, b).unwrap();
        result::stream::synchronize(b).unwrap();
        assert!(host.iter().all(|&x| x == 2), "b waited for a's event");
        result::memset_d8_async(d, 3, 64, a).unwrap();
        result::memcpy_dtoh_async(host, d, stream).unwrap();
        result::stream::synchronize(stream).unwrap();
        assert!(host.iter().all(|&x| x == 3), "the legacy stream follows every blocking stream");
        // A non-blocking stream (as PyTorch's are) is ordered with no other: neither after the
        // legacy stream's work nor before it.
        let free = result::stream::create(result::stream::StreamKind::NonBlocking).unwrap();
        result::memset_d8_async(d, 4, 64, stream).unwrap();
        result::memcpy_dtoh_async(host, d, free).unwrap();
        result::stream::synchronize(free).unwrap();
        assert!(host.iter().all(|&x| x == 3), "the non-blocking stream waited for the legacy one: {host:?}");
        result::memset_d8_async(d, 5, 64, free).unwrap();
        result::memcpy_dtoh_async(host, d, stream).unwrap();
        result::stream::synchronize(stream).unwrap();
        assert!(host.iter().all(|&x| x == 4), "the legacy stream waited for a non-blocking one: {host:?}");
        result::stream::synchronize(free).unwrap();
        let mut over = [0u8; 65];
        assert!(result::memcpy_dtoh_sync(&mut over, d).is_err(), "a copy past the allocation's end");
        assert!(result::memset_d8_async(d + 60, 0, 8, stream).is_err(), "a fill past the end");
        result::free_sync(d).unwrap();
        assert!(result::memcpy_dtoh_sync(&mut fresh, d).is_err(), "a copy from freed memory");
        result::free_host(pinned.cast()).unwrap();
    }
}
