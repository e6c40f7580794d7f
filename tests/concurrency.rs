//! Sixteen threads at once on one session, one kernel cache and shared prepared kernels, each
//! evaluating programs that other threads evaluate too (the same kernel compiled and cached
//! concurrently) and programs of its own: every result equals the interpreter's, and the whole
//! run finishes in bounded time (a deadlock fails the test instead of hanging it).

use slc::embed::{Kernel, TensorView};
use slc::types::{SymTensorType, TensorType};
use slc::{DType, Executor, RunOptions, Session, Tensor};
use std::sync::{Arc, Barrier, mpsc};
use std::time::Duration;

const THREADS: usize = 16;
const ROUNDS: usize = 12;

fn tensor(dtype: DType, shape: &[usize], seed: usize) -> Tensor {
    let n = Tensor::byte_size(dtype, shape).unwrap();
    let bytes: Vec<u8> = (0..n).map(|i| (i * 31 + seed * 7 + 3) as u8).collect();
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

/// Programs over `a: f32[64, 48]`, `b: u8[700, 1500]` (outputs above the threads threshold),
/// `i: i64[5]`: the first few are shared by all threads, the rest are each thread's own.
fn programs(thread: usize) -> Vec<String> {
    let mut p: Vec<String> = [
        "a[::-1, 1:]",
        "a[i][:, ::-2]",
        "gather(a, i, 1, mode=wrap)[::-1]",
        "b[::-1, ::-1]",
        "b[:, i][::2]",
        "strided_slice(a, [0, -1], [64, 0], [3, -1])",
    ]
    .map(String::from)
    .to_vec();
    let k = thread as i64;
    p.push(format!("a[{k}:, {k}::{}]", thread % 3 + 1));
    p.push(format!("gather(a, [{k}, {}, -1], 0, mode=clamp)", -k - 1));
    p.push(format!("b[{}::-{}, {k}]", 600 + k, thread % 4 + 1));
    p
}

fn inputs() -> Vec<(&'static str, Tensor)> {
    vec![
        ("a", tensor(DType::F32, &[64, 48], 1)),
        ("b", tensor(DType::U8, &[700, 1500], 2)),
        ("i", Tensor::from_i64s(DType::I64, &[5], &[0, -1, 47, 3, -48]).unwrap()),
    ]
}

/// Runs `work` on `THREADS` threads released together; fails if they take longer than a minute.
fn race(work: impl Fn(usize) + Send + Sync + 'static) {
    let work = Arc::new(work);
    let start = Arc::new(Barrier::new(THREADS));
    let (done, finished) = mpsc::channel();
    for t in 0..THREADS {
        let (work, start, done) = (work.clone(), start.clone(), done.clone());
        std::thread::spawn(move || {
            start.wait();
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| work(t)));
            let _ = done.send(outcome.map_err(|p| {
                p.downcast_ref::<String>()
                    .cloned()
                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            }));
        });
    }
    for _ in 0..THREADS {
        match finished.recv_timeout(Duration::from_secs(60)) {
            Ok(Ok(())) => {}
            Ok(Err(panic)) => panic!("a thread failed: {panic:?}"),
            Err(_) => panic!("threads still running after a minute: a deadlock"),
        }
    }
}

#[test]
fn one_session_shared_by_sixteen_threads() {
    let mut session = Session::new();
    let mut oracle = Session::with_executor(Executor::Interpreter);
    for (name, t) in inputs() {
        session.bind(name, t.clone());
        oracle.bind(name, t);
    }
    session.options_mut().threads = 2;
    let expected: Vec<Vec<Tensor>> =
        (0..THREADS).map(|t| programs(t).iter().map(|p| oracle.eval(p).unwrap()).collect()).collect();
    let session = Arc::new(session);
    let expected = Arc::new(expected);
    let shared = session.clone();
    race(move |t| {
        for round in 0..ROUNDS {
            for (p, want) in programs(t).iter().zip(&expected[t]) {
                let got = shared.eval(p).unwrap_or_else(|e| panic!("{p}: {e}"));
                assert!(got == *want, "{p} on thread {t}, round {round}");
            }
        }
    });
    // Each distinct program compiled once into the shared cache (a race may compile one twice,
    // but only one copy is kept).
    let distinct: std::collections::BTreeSet<String> = (0..THREADS).flat_map(programs).collect();
    assert!(session.cached_kernels() <= distinct.len(), "{} kernels", session.cached_kernels());
}

#[test]
fn prepared_kernels_and_sessions_over_views_at_once() {
    let inputs = Arc::new(inputs());
    let oracle = {
        let mut s = Session::with_executor(Executor::Interpreter);
        for (name, t) in inputs.iter() {
            s.bind(name, t.clone());
        }
        s
    };
    let sigs: Vec<(&str, SymTensorType)> =
        inputs.iter().map(|(n, t)| (*n, TensorType::of(t.dtype(), t.shape()).generic())).collect();
    // One kernel per shared program, prepared once and run by every thread.
    let kernels: Vec<(String, Kernel, Tensor)> = programs(0)[..6]
        .iter()
        .map(|p| {
            let options = RunOptions { threads: 3, ..RunOptions::default() };
            (p.clone(), Kernel::prepare_with(p, &sigs, &options).unwrap(), oracle.eval(p).unwrap())
        })
        .collect();
    let kernels = Arc::new(kernels);
    let own: Vec<Vec<(String, Tensor)>> = (0..THREADS)
        .map(|t| programs(t).into_iter().map(|p| (p.clone(), oracle.eval(&p).unwrap())).collect())
        .collect();
    let own = Arc::new(own);
    race(move |t| {
        let views: Vec<TensorView> = inputs.iter().map(|(_, t)| TensorView::of(t)).collect();
        // Each thread's own session, over borrowed views, compiling while others run kernels.
        let mut session = Session::new();
        for ((name, _), v) in inputs.iter().zip(&views) {
            session.bind_view(name, v.clone());
        }
        for round in 0..ROUNDS {
            for (p, kernel, want) in kernels.iter() {
                let got = kernel.run(&views).unwrap_or_else(|e| panic!("{p}: {e}"));
                assert!(got == *want, "kernel {p} on thread {t}, round {round}");
                let mut out = kernel.output_tensor().unwrap();
                kernel.run_into(&views, &mut out).unwrap();
                assert!(out == *want, "kernel {p} into an output on thread {t}");
            }
            for (p, want) in &own[t] {
                let got = session.eval(p).unwrap_or_else(|e| panic!("{p}: {e}"));
                assert!(got == *want, "{p} over views on thread {t}, round {round}");
            }
        }
    });
}

#[test]
fn errors_under_contention_are_the_same_errors() {
    let mut session = Session::new();
    session.bind("a", tensor(DType::I16, &[10], 3));
    session.bind("bad", Tensor::from_i64s(DType::I64, &[3], &[0, 10, 1]).unwrap());
    let session = Arc::new(session);
    race(move |t| {
        for _ in 0..ROUNDS {
            let index = session.eval("a[bad]").unwrap_err();
            assert!(index.to_string().contains("index 10 is out of bounds"), "{index} on thread {t}");
            let check = session.eval("a[10]").unwrap_err();
            assert_eq!(check.diagnostic().code, "E0102");
            let deep = session.eval(&format!("a[{}0]", "-".repeat(300))).unwrap_err();
            assert_eq!(deep.diagnostic().code, "E0004");
        }
    });
}

#[test]
fn absurd_thread_counts_are_capped_not_fatal() {
    // Tens of thousands of threads would exhaust the process's memory maps and abort it.
    let b = tensor(DType::U8, &[200_000, 8], 4);
    let mut session = Session::new();
    session.bind("b", b.clone());
    session.options_mut().threads = 65_535;
    let oracle = {
        let mut s = Session::with_executor(Executor::Interpreter);
        s.bind("b", b.clone());
        s
    };
    assert!(session.eval("b[::-1]").unwrap() == oracle.eval("b[::-1]").unwrap());
    let mut kernel = Kernel::prepare("b[::-1, ::-1]", &[("b", "u8[200000, 8]".parse().unwrap())]).unwrap();
    kernel.set_threads(usize::MAX);
    assert!(kernel.run(&[&b]).unwrap() == oracle.eval("b[::-1, ::-1]").unwrap());
}
