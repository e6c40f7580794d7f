//! The CUDA C slc generates, compiled by the host C compiler under `host_emulation.h` (the grid
//! run as loops) and run on the CPU, against the CPU back ends: every golden-corpus program and
//! a few hundred differential-fuzzer programs (concrete and shape-generic, every dtype, index
//! dtype and out-of-range policy they draw), bytes and errors alike. Many kernels share one
//! compile. Generic kernels run both their 32-bit and their 64-bit variant; kernels that move
//! contiguous runs as 2- to 16-byte vectors are among them.

#[path = "support/cuda_programs.rs"]
mod programs;

use programs::Program;
use slc::Tensor;
use slc::backend::cuda::{self, CudaSource, emulate};
use std::collections::HashMap;

/// Kernels per shared object: two compiles run at once.
const BATCH: usize = 500;

/// Fuzzer seeds: 400, or `SLC_CUDA_FUZZ_CASES`.
fn fuzz_seeds() -> u64 {
    std::env::var("SLC_CUDA_FUZZ_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400)
}

/// One kernel per distinct plan text, named by its position.
fn sources(programs: &[Program]) -> (Vec<CudaSource>, Vec<usize>) {
    let mut by_text: HashMap<String, usize> = HashMap::new();
    let mut sources = vec![];
    let mut which = vec![];
    for p in programs {
        let text = p.plan.plan().to_string();
        let at = *by_text.entry(text).or_insert_with(|| {
            let source = cuda::generate(&p.plan, &format!("k{}", sources.len()))
                .unwrap_or_else(|e| panic!("{}: {e}\n{}", p.what, p.plan.plan()));
            sources.push(source);
            sources.len() - 1
        });
        which.push(at);
    }
    (sources, which)
}

/// Builds every source into emulators of [`BATCH`] kernels, two compiles at a time.
fn build(sources: &[CudaSource]) -> Vec<emulate::Emulator> {
    let dir = std::env::temp_dir();
    let batches: Vec<Vec<&CudaSource>> = sources.chunks(BATCH).map(|c| c.iter().collect()).collect();
    let mut built: Vec<Option<emulate::Emulator>> = (0..batches.len()).map(|_| None).collect();
    for (pair, slots) in batches.chunks(2).zip(built.chunks_mut(2)) {
        std::thread::scope(|s| {
            let handles: Vec<_> = pair.iter().map(|b| s.spawn(|| emulate::build(b, &dir))).collect();
            for (h, slot) in handles.into_iter().zip(slots.iter_mut()) {
                *slot = Some(h.join().expect("a compile thread").unwrap_or_else(|e| panic!("{e}")));
            }
        });
    }
    built.into_iter().map(|e| e.expect("built")).collect()
}

/// Runs every program's kernel (each variant it has) and compares with what the CPU gives.
fn check(programs: &[Program]) -> usize {
    let (sources, which) = sources(programs);
    let emulators = build(&sources);
    let mut failures = vec![];
    let mut runs = 0;
    for (p, &k) in programs.iter().zip(&which) {
        let source = &sources[k];
        let emulator = &emulators[k / BATCH];
        let inputs: Vec<&Tensor> = p.inputs.iter().collect();
        for wide in [None, Some(true)] {
            if wide.is_some() && !(source.layout.wide && source.layout.narrow) {
                continue;
            }
            runs += 1;
            let got = emulator.run_as(&p.plan, source, &inputs, wide);
            let same = match (&p.want, &got) {
                (Ok(x), Ok(y)) => x == y,
                (Err(x), Err(y)) => x == y,
                _ => false,
            };
            if !same {
                failures.push(format!(
                    "{} (wide {wide:?}): CPU {:?}, emulated CUDA {:?}\n{}\n{}",
                    p.what,
                    p.want,
                    got,
                    p.plan.plan(),
                    source.text
                ));
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {runs} runs differ:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
    let vectors = sources.iter().filter(|s| s.layout.nests.iter().any(|n| n.unit > 1)).count();
    eprintln!(
        "{runs} emulated runs of {} kernels ({vectors} moving vectors) agree with the CPU",
        sources.len()
    );
    assert!(vectors > 0, "some kernels move contiguous runs as vectors");
    runs
}

#[test]
fn golden_corpus_kernels_equal_the_interpreter() {
    let programs = programs::golden();
    assert!(programs.len() >= 1000, "{} golden programs compile", programs.len());
    let errors = programs.iter().filter(|p| p.want.is_err()).count();
    assert!(errors > 0, "some golden programs fail at run time");
    check(&programs);
}

#[test]
fn fuzzer_kernels_equal_the_cpu_every_policy_included() {
    let programs = programs::fuzzed(1..=fuzz_seeds());
    let generic = programs.iter().filter(|p| !p.plan.binds_nothing()).count();
    let errors = programs.iter().filter(|p| p.want.is_err()).count();
    eprintln!("{} fuzzer programs ({generic} generic, {errors} failing at run time)", programs.len());
    assert!(generic > 100 && errors > 0);
    check(&programs);
}
