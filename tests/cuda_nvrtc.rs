//! Every golden-corpus kernel and a few hundred differential-fuzzer kernels (concrete and
//! shape-generic), the fuzzer's store programs' kernels, compiled by NVRTC to a CUBIN for sm_90, as `slc eval --backend cuda` compiles
//! them on an H100; and a `slc compile --target cuda` file, whose host launcher NVRTC skips.
//! NVRTC needs no GPU: .ci/run installs NVIDIA's wheel and names the library in `SLC_NVRTC`.
//! Without it (and without `SLC_NVRTC` set) the tests pass saying "skipped: no NVRTC".

#[path = "support/cuda_programs.rs"]
mod programs;

use slc::backend::cuda::{self, CudaSource, nvrtc};
use std::collections::HashSet;

/// Kernels per NVRTC program: one program per kernel would spend the time starting NVRTC.
const BATCH: usize = 400;
const ARCH: u32 = 90;

/// NVRTC, or `None` (the test is skipped) where none is installed; where `SLC_NVRTC` names one
/// (CI), failing to load it fails the test.
fn nvrtc_or_skip() -> Option<&'static nvrtc::Nvrtc> {
    match nvrtc::get() {
        Ok(n) => Some(n),
        Err(e) if std::env::var_os(nvrtc::ENV).is_some() => panic!("{} is set: {e}", nvrtc::ENV),
        Err(e) => {
            eprintln!("skipped: no NVRTC ({e})");
            None
        }
    }
}

/// One kernel per distinct plan.
fn sources(programs: &[programs::Program]) -> Vec<CudaSource> {
    let mut seen = HashSet::new();
    programs
        .iter()
        .filter(|p| seen.insert(p.plan.plan().to_string()))
        .enumerate()
        .map(|(i, p)| cuda::generate(&p.plan, &format!("k{i}")).unwrap_or_else(|e| panic!("{}: {e}", p.what)))
        .collect()
}

/// Compiles the sources in batches, two at a time; each CUBIN must hold every kernel's name.
fn compile_all(nvrtc: &nvrtc::Nvrtc, sources: &[CudaSource]) {
    let batches: Vec<&[CudaSource]> = sources.chunks(BATCH).collect();
    for pair in batches.chunks(2) {
        std::thread::scope(|s| {
            let handles: Vec<_> = pair
                .iter()
                .map(|batch| {
                    s.spawn(move || {
                        let text: String = batch.iter().map(|k| k.text.as_str()).collect();
                        let cubin = nvrtc.cubin(&text, ARCH).unwrap_or_else(|e| panic!("{e}"));
                        for k in batch.iter() {
                            for wide in [false, true] {
                                if (wide && k.layout.wide) || (!wide && k.layout.narrow) {
                                    for name in k.entries(wide) {
                                        assert!(
                                            cubin
                                                .windows(name.len() + 1)
                                                .any(|w| w[..name.len()] == *name.as_bytes()
                                                    && w[name.len()] == 0),
                                            "{name} is not in the CUBIN"
                                        );
                                    }
                                }
                            }
                        }
                    })
                })
                .collect();
            handles.into_iter().for_each(|h| h.join().expect("an NVRTC thread"));
        });
    }
    eprintln!("NVRTC {:?} compiled {} kernels for sm_{ARCH}", nvrtc.version(), sources.len());
}

#[test]
fn golden_corpus_kernels_compile_with_nvrtc() {
    let Some(nvrtc) = nvrtc_or_skip() else { return };
    compile_all(nvrtc, &sources(&programs::golden()));
}

#[test]
fn fuzzer_kernels_compile_with_nvrtc() {
    let Some(nvrtc) = nvrtc_or_skip() else { return };
    compile_all(nvrtc, &sources(&programs::fuzzed(1..=300)));
}

/// The store programs' kernels: checks, the owner-marking pass (`atomicMax` on 32- and 64-bit
/// words) and the store pass, `+=`/`*=` with the half types' conversions.
#[test]
fn store_kernels_compile_with_nvrtc() {
    let Some(nvrtc) = nvrtc_or_skip() else { return };
    let sources = sources(&programs::stores(400));
    assert!(sources.iter().filter(|s| s.layout.store.as_ref().is_some_and(|s| s.owner)).count() > 20);
    compile_all(nvrtc, &sources);
}

#[test]
fn a_compiled_file_with_its_launcher_compiles_with_nvrtc() {
    let Some(nvrtc) = nvrtc_or_skip() else { return };
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_slc"))
        .args([
            "compile",
            "a[idx, ::-1]",
            "--shape",
            "a=f16[6,5]",
            "--shape",
            "idx=u64[4]",
            "--target",
            "cuda",
        ])
        .output()
        .expect("slc runs");
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(text.contains("slc_kernel_launch"));
    nvrtc.cubin(&text, ARCH).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_compile_error_returns_the_log() {
    let Some(nvrtc) = nvrtc_or_skip() else { return };
    let err = nvrtc.cubin("__global__ void k() { undeclared = 1; }", ARCH).unwrap_err();
    assert!(err.to_string().contains("undeclared"), "{err}");
}
