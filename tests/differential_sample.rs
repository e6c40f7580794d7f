//! A sample of the differential suite small enough to run under valgrind memcheck
//! (`.ci/valgrind` runs this binary there with `SLC_SAMPLE_CASES` cases): random programs from
//! `slc::fuzz`'s generator, through the JIT on one thread and several, through prepared kernels
//! (the AOT entry, compiled in memory) over borrowed views, and the DirectML emulator, each equal
//! to the reference interpreter.

use slc::RunOptions;
use slc::embed::{Kernel, TensorView};
use slc::fuzz::{Case, Rng, check_case};
use slc::types::{SymTensorType, TensorType};

fn cases() -> u64 {
    std::env::var("SLC_SAMPLE_CASES").ok().and_then(|n| n.parse().ok()).unwrap_or(300)
}

#[test]
fn jit_kernels_and_emulator_equal_the_interpreter() {
    for seed in 0..cases() {
        let case = Case::draw(&mut Rng::new(seed));
        check_case(&case);
        let sigs: Vec<(&str, SymTensorType)> =
            case.inputs.iter().map(|(n, t)| (*n, TensorType::of(t.dtype(), t.shape()).generic())).collect();
        let views: Vec<TensorView> = case.inputs.iter().map(|(_, t)| TensorView::of(t)).collect();
        let want =
            Kernel::prepare_with(&case.src, &sigs, &RunOptions::interpreter()).and_then(|k| k.run(&views));
        let Ok(mut kernel) = Kernel::prepare(&case.src, &sigs) else { continue };
        for threads in [1, 3] {
            kernel.set_threads(threads);
            let got = kernel.run(&views);
            assert_eq!(
                got.as_ref().map_err(|e| e.to_string()),
                want.as_ref().map_err(|e| e.to_string()),
                "{} on {threads} threads",
                case.src
            );
        }
    }
}
