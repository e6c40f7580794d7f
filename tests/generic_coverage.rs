//! How much of the differential fuzzer's language compiles shape-generically: over thousands of
//! `fuzz::Case::draw` programs valid on the concrete pipeline (with the inputs' values, as
//! `slc eval` checks them), the fraction that also compiles and verifies with every dim a
//! symbol (`Case::symbolic_types`: but the tuple length of `gather_nd`'s indices, which sets
//! a rank) and no value known. Every form is generic, so the fraction is 100 %; a refusal fails
//! the test, naming the program and its diagnostic.

use slc::fuzz::{Case, Rng};
use std::collections::BTreeMap;

/// Cases drawn: 3000, or `SLC_COVERAGE_CASES`.
fn cases() -> u64 {
    std::env::var("SLC_COVERAGE_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(3000)
}

#[test]
fn every_valid_fuzzer_program_compiles_generically() {
    let (mut valid, mut generic) = (0usize, 0usize);
    let mut refused: BTreeMap<String, (usize, String)> = BTreeMap::new();
    for seed in 1..=cases() {
        let case = Case::draw(&mut Rng::new(seed));
        if slc::pipeline::compile_with_values(&case.src, &case.types(), &case.values()).is_err() {
            continue;
        }
        valid += 1;
        let types = case.symbolic_types();
        let outcome = slc::pipeline::compile_generic(&case.src, &types)
            .and_then(|c| slc::plan::verify_generic(c.plan).map_err(Into::into));
        match outcome {
            Ok(_) => generic += 1,
            Err(e) => {
                let d = e.diagnostic();
                let entry =
                    refused.entry(format!("{} {}", d.code, d.message)).or_insert((0, case.src.clone()));
                entry.0 += 1;
            }
        }
    }
    let fraction = generic as f64 / valid as f64;
    eprintln!("generic coverage: {generic} of {valid} valid programs ({:.1} %)", 100.0 * fraction);
    for (reason, (count, example)) in &refused {
        eprintln!("  {count:5}  {reason}   e.g. {example}");
    }
    assert!(valid > cases() as usize / 2, "most drawn programs are valid: {valid}");
    assert!(refused.is_empty(), "programs refused generically: {refused:#?}");
}
