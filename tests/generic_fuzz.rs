//! The differential fuzzer's random programs (every form, ranks 0 to 10, every dtype), and its
//! store programs, compiled shape-generically with every dim a symbol: the generic JIT kernel
//! gives the concrete pipeline's interpreter result on the case's tensors, or fails where that
//! fails (`slc::fuzz::check_generic`, also the fuzz target `generic`).

use proptest::prelude::*;
use slc::fuzz::{Case, Rng, check_generic};

/// Cases of the random comparison: 1500, or `SLC_GENERIC_CASES` (.ci/valgrind runs fewer).
fn cases() -> u32 {
    std::env::var("SLC_GENERIC_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(1500)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]
    #[test]
    fn generic_kernels_agree_with_the_concrete_pipeline(seed in any::<u64>()) {
        // Panics on a disagreement, naming the program.
        check_generic(&Case::draw(&mut Rng::new(seed)));
    }

    /// Assignments through every kind of subscript, scatters, and bound values broadcast from
    /// dims of 1 that are symbols (stretched or not per call).
    #[test]
    fn generic_store_kernels_agree_with_the_concrete_pipeline(seed in any::<u64>()) {
        check_generic(&Case::draw_store(&mut Rng::new(seed)));
    }
}
