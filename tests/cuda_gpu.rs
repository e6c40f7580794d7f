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
    // On every core at once: NVRTC dominates, and the device is shared by threads as a user's
    // program would share it.
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut failures = vec![];
                    for p in programs.iter().skip(t).step_by(threads) {
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
                    failures
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a worker thread")).collect()
    });
    eprintln!("{} programs on the GPU, {} differ", programs.len(), failures.len());
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

/// The GPU as an executor (`Executor::Cuda`): sessions, prepared kernels, `slc run` and the
/// REPL. With a GPU: slices, gathers, masks and chains through a session on the GPU equal the JIT's
/// results and errors (out-of-range indices included). Without one: each surface says so (E0209, or exit 2 from the command
/// line) and nothing runs elsewhere in its place.
#[test]
fn sessions_run_and_the_repl_on_the_gpu() {
    use slc::{Executor, Session};
    let Some(_) = device_or_skip() else {
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
        let mut repl = std::process::Command::new(env!("CARGO_BIN_EXE_slc"))
            .args(["repl"])
            .env("NO_COLOR", "1")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("slc runs");
        use std::io::Write;
        repl.stdin.take().unwrap().write_all(b":backend cuda\n:backend\n").unwrap();
        let out = repl.wait_with_output().unwrap();
        let (stdout, stderr) = (String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
        assert!(stderr.contains("E0209") && stderr.contains("no CUDA driver"), "{stderr}");
        assert!(stdout.contains("backend: jit"), "the back end stays: {stdout}");
        return;
    };
    let a = Tensor::from_i64s(slc::DType::F32, &[6, 5], &(0..30).collect::<Vec<_>>()).unwrap();
    let i = Tensor::from_i64s(slc::DType::I64, &[3], &[4, -1, 0]).unwrap();
    let bad = Tensor::from_i64s(slc::DType::I32, &[2], &[0, 9]).unwrap();
    let m = Tensor::from_bytes(slc::DType::Bool, &[6], &[1, 0, 1, 1, 0, 0]).unwrap();
    let sources = [
        "a[::-1, 1:]",
        "a[i]",
        "a[:, i]",
        "a[m]",
        "a[i, ::2]",
        "gather(a, bad, axis=1, mode=clamp)",
        "gather(a, bad, axis=0, mode=zero)",
        "a[bad]",
        "a[m][::-1, None, 2]",
    ];
    let mut failures = vec![];
    for src in sources {
        let mut results = vec![];
        for executor in [Executor::Jit, Executor::Cuda] {
            let mut s = Session::with_executor(executor);
            for (name, t) in [("a", &a), ("i", &i), ("bad", &bad), ("m", &m)] {
                s.bind(name, t.clone());
            }
            results.push(s.eval(src).map_err(|e| e.to_string()));
        }
        if results[0] != results[1] {
            failures.push(format!("{src}: JIT {:?}, GPU {:?}", results[0], results[1]));
        }
    }
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), sources.len(), failures.join("\n"));
}
