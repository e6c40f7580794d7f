//! The CUDA C slc generates, compiled by the host C compiler under `host_emulation.h` (the grid
//! run as loops) and run on the CPU, against the CPU back ends: every golden-corpus program and
//! a few hundred differential-fuzzer programs (concrete and shape-generic, every dtype, index
//! dtype and out-of-range policy they draw), bytes and errors alike. Many kernels share one
//! compile. Generic kernels run both their 32-bit and their 64-bit variant; kernels that move
//! contiguous runs as 2- to 16-byte vectors are among them, and kernels that store 16-byte
//! groups of elements (element counts that leave a partial group included). Every kernel runs
//! once more on buffers that start off a 16-byte boundary, as a caller's device pointers may:
//! the vectors' and the groups' fallbacks.

#[path = "support/cuda_programs.rs"]
mod programs;

use programs::Program;
use slc::backend::cuda::{self, CudaSource, emulate};
use slc::plan::VerifiedGenericPlan;
use slc::sema::{InputTypes, SymInputTypes};
use slc::types::TensorType;
use slc::{DType, Tensor};
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

/// Runs every program's kernel (each variant it has) and compares with what the CPU gives;
/// returns the kernels.
fn check(programs: &[Program]) -> Vec<CudaSource> {
    let (sources, which) = sources(programs);
    let emulators = build(&sources);
    let mut failures = vec![];
    let mut runs = 0;
    for (p, &k) in programs.iter().zip(&which) {
        let source = &sources[k];
        let emulator = &emulators[k / BATCH];
        let inputs: Vec<&Tensor> = p.inputs.iter().collect();
        // The variant the call's numbers pick, the 64-bit one of a generic kernel, and the
        // former with every buffer misaligned (as a caller's pointers may be).
        for (wide, misaligned) in [(None, false), (Some(true), false), (None, true)] {
            if wide.is_some() && !(source.layout.wide && source.layout.narrow) {
                continue;
            }
            runs += 1;
            let got = emulator.run_placed(&p.plan, source, &inputs, wide, misaligned);
            let same = programs::same_result(&p.plan, &p.want, &got, |x, y| x == y);
            if !same {
                failures.push(format!(
                    "{} (wide {wide:?}, misaligned {misaligned}): CPU {:?}, emulated CUDA {:?}\n{}\n{}",
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
    eprintln!("{runs} emulated runs of {} kernels agree with the CPU", sources.len());
    sources
}

/// Some of the load kernels move vectors, some store groups of elements.
fn assert_moves(sources: &[CudaSource]) {
    let vectors = sources.iter().filter(|s| s.layout.nests.iter().any(|n| n.unit > 1)).count();
    let grouped = sources.iter().filter(|s| s.layout.nests.iter().any(|n| n.group > 1)).count();
    eprintln!("{vectors} kernels move vectors, {grouped} group elements");
    assert!(vectors > 0, "some kernels move contiguous runs as vectors");
    assert!(grouped > 0, "some kernels store groups of elements");
}

#[test]
fn golden_corpus_kernels_equal_the_interpreter() {
    let programs = programs::golden();
    assert!(programs.len() >= 1000, "{} golden programs compile", programs.len());
    let errors = programs.iter().filter(|p| p.want.is_err()).count();
    assert!(errors > 0, "some golden programs fail at run time");
    assert_moves(&check(&programs));
}

#[test]
fn fuzzer_kernels_equal_the_cpu_every_policy_included() {
    let programs = programs::fuzzed(1..=fuzz_seeds());
    let generic = programs.iter().filter(|p| !p.plan.binds_nothing()).count();
    let errors = programs.iter().filter(|p| p.want.is_err()).count();
    eprintln!("{} fuzzer programs ({generic} generic, {errors} failing at run time)", programs.len());
    assert!(generic > 100 && errors > 0);
    assert_moves(&check(&programs));
}

/// The kernel of `src` on concrete inputs, built alone, with the interpreter's result.
fn concrete(
    src: &str,
    given: &[(&str, &Tensor)],
) -> (VerifiedGenericPlan, CudaSource, emulate::Emulator, Tensor) {
    let types: InputTypes =
        given.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
    let compiled = slc::compile(src, &types).unwrap_or_else(|e| panic!("{src}: {e}"));
    let inputs: Vec<&Tensor> = given.iter().map(|(_, t)| *t).collect();
    let want = slc::backend::interp::run(&compiled.plan, &inputs).unwrap();
    let plan = compiled.plan.lift();
    let source = cuda::generate(&plan, "k").unwrap();
    let emulator = emulate::build(&[&source], &std::env::temp_dir()).unwrap_or_else(|e| panic!("{e}"));
    (plan, source, emulator, want)
}

#[test]
fn grouped_steps_store_partial_groups_and_misaligned_outputs_element_by_element() {
    for dtype in [DType::U8, DType::F16, DType::F32, DType::F64] {
        // 5 * 7 elements: no multiple of any group; a 7-element run is misaligned for vectors.
        let a = slc::fuzz::fill(dtype, &[5, 9], 3);
        for src in ["a[:, 1:-1]", "a[..., ::-1][:, 2:]", "a[::-1, 1:-1:3]"] {
            let (plan, source, emulator, want) = concrete(src, &[("a", &a)]);
            let group = 16 / dtype.width() as u64;
            assert_eq!(source.layout.nests.iter().map(|n| n.group).collect::<Vec<_>>(), [group], "{src}");
            for misaligned in [false, true] {
                let got = emulator.run_placed(&plan, &source, &[&a], None, misaligned);
                assert_eq!(got.as_ref(), Ok(&want), "{src} on {dtype}, misaligned {misaligned}");
            }
        }
    }
}

#[test]
fn an_index_check_the_output_gather_makes_itself_names_the_first_bad_index() {
    // The check's nest is left out where the output's one term reads the checked index at the
    // same elements (`codegen::fold`): the output element `e` then reads check element
    // `e / per`, `per` the output's trailing elements. Two bad values, the first one moving
    // along the index: the error must name it, as the interpreter does. `a[i][1:]` keeps its
    // check (the slice drops output rows whose index is still checked).
    let a = slc::fuzz::fill(DType::F32, &[5, 4], 2);
    let d = slc::fuzz::fill(DType::U8, &[3, 6], 4);
    let cases: [(&str, &Tensor, &[usize], i64, usize); 5] = [
        ("gather_elements(a, i, axis=1)", &a, &[5, 3], 4, 1),
        ("a[i]", &a, &[4], 5, 1),
        ("a[i, 1:3]", &a, &[2, 3], 5, 1),
        ("gather(a, i, axis=0, mode=error)[:, :, None]", &d, &[2, 2], 3, 1),
        ("a[i][1:]", &a, &[4], 5, 2),
    ];
    for (src, data, shape, len, nests) in cases {
        let n: usize = shape.iter().product();
        let index = |values: &[i64]| Tensor::from_i64s(DType::I64, shape, values).unwrap();
        let valid: Vec<i64> = (0..n as i64).map(|k| k % len).collect();
        let types: InputTypes = [("a", data), ("i", &index(&valid))]
            .iter()
            .map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape())))
            .collect();
        let compiled = slc::compile(src, &types).unwrap_or_else(|e| panic!("{src}: {e}"));
        let plan = compiled.plan.lift();
        let source = cuda::generate(&plan, "f").unwrap();
        assert_eq!(source.layout.nests.len(), nests, "{src}: its nests");
        let emulator = emulate::build(&[&source], &std::env::temp_dir()).unwrap_or_else(|e| panic!("{e}"));
        for first in 0..n {
            for bad in [len, -len - 1] {
                let mut values = valid.clone();
                values[first] = bad;
                if first < n - 1 {
                    values[n - 1] = len + 7;
                }
                let i = index(&values);
                let inputs = [data, &i];
                let want = slc::backend::interp::run(&compiled.plan, &inputs);
                assert!(want.is_err(), "{src} with {values:?} fails");
                let got = emulator.run_placed(&plan, &source, &inputs, None, false);
                assert_eq!(got, want, "{src} with {values:?}");
            }
        }
    }
}

/// The kernel of `src` with symbolic dims, built alone.
fn generic(src: &str, given: &[(&str, &Tensor)]) -> (VerifiedGenericPlan, CudaSource, emulate::Emulator) {
    let types: SymInputTypes = given
        .iter()
        .map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()).symbolic(n)))
        .collect();
    let compiled = slc::pipeline::compile_generic(src, &types).unwrap_or_else(|e| panic!("{src}: {e}"));
    let plan = slc::plan::verify_generic(compiled.plan).unwrap_or_else(|e| panic!("{src}: {e}"));
    let source = cuda::generate(&plan, "g").unwrap();
    let emulator = emulate::build(&[&source], &std::env::temp_dir()).unwrap_or_else(|e| panic!("{e}"));
    (plan, source, emulator)
}

#[test]
fn a_failure_inside_a_group_records_its_own_element_and_stores_nothing_of_its_group() {
    // out[i, k] = a[idx[i] (zero fill past 5 rows), idx[k] (clamped into a's columns)]: rows 0
    // and 1 are zeros; row 2 clamps into a's axis 1, whose length the kernel reads as 0 (the
    // host refuses an empty axis before launching; the words below skip it): an empty-axis
    // failure at element 6, the third of the second group of four.
    let a = slc::fuzz::fill(DType::F32, &[5, 1], 1);
    let idx = Tensor::from_i64s(DType::I64, &[3], &[9, 9, 1]).unwrap();
    let src = "gather(gather(a, idx, axis=0, mode=zero), idx, axis=1, mode=clamp)";
    let (plan, source, emulator) = generic(src, &[("a", &a), ("idx", &idx)]);
    let layout = &source.layout;
    assert_eq!(layout.nests.last().map(|n| n.group), Some(4));
    let bound = cuda::bind(&plan, layout, &[&a, &idx]).unwrap();
    let mut words = bound.words.clone();
    let columns = layout.params.iter().position(|p| p.to_string() == "_a1").expect("a's axis 1 is read");
    words[layout.param_word(columns)] = 0;
    let mut out = vec![0xabu8; 9 * 4];
    let mut err = vec![cuda::launch::NO_ERROR; bound.err_words];
    words[0] = a.as_ptr() as u64;
    words[1] = idx.as_ptr() as u64;
    words[layout.out_word()] = out.as_mut_ptr() as u64;
    words[layout.err_word()] = err.as_mut_ptr() as u64;
    for wide in [false, true] {
        err.fill(cuda::launch::NO_ERROR);
        // SAFETY: the words of a bound call but for a length of 0, which only makes the
        // kernel fail where it would read; out and err have the call's bytes.
        unsafe { emulator.call(&source, wide, &words, bound.total) }.unwrap();
        assert_eq!(err.last(), Some(&(6 << 2 | cuda::codegen::KIND_EMPTY_AXIS)), "wide {wide}");
        // The first group is all zero fill; the failing group stored nothing.
        assert_eq!(&out[..16], &[0; 16]);
        assert_eq!(&out[16..32], &[0xab; 16]);
    }
}

/// The fuzzer's store programs (`=`, `+=`, `*=` through every kind of subscript, duplicates
/// included; the scatters without reductions): the copy, the checks, the marking pass and the
/// store pass, against the interpreter, concrete and generic, errors included.
#[test]
fn fuzzer_store_kernels_equal_the_interpreter() {
    let programs = programs::stores(600);
    let generic = programs.iter().filter(|p| !p.plan.binds_nothing()).count();
    let errors = programs.iter().filter(|p| p.want.is_err()).count();
    eprintln!("{} store programs ({generic} generic, {errors} failing at run time)", programs.len());
    assert!(programs.len() > 400 && generic > 100 && errors > 0);
    let sources = check(&programs);
    let owned = sources.iter().filter(|s| s.layout.store.as_ref().is_some_and(|s| s.owner)).count();
    let marked =
        sources.iter().filter(|s| s.layout.store.as_ref().is_some_and(|s| s.mark && !s.owner)).count();
    let direct = sources.iter().filter(|s| s.layout.store.as_ref().is_some_and(|s| !s.mark)).count();
    let quiet =
        sources.iter().filter(|s| s.layout.store.as_ref().is_some_and(|s| s.owner && !s.fails)).count();
    eprintln!(
        "{owned} with gathered destinations ({quiet} of them unable to fail), {marked} validated first, {direct} written directly"
    );
    assert!(owned > 20 && direct > 20, "both kinds of store kernels run");
    // One value through a mask: the mask read over its box, no positions.
    let masked =
        programs.iter().filter(|p| p.plan.plan().store.as_ref().is_some_and(|s| s.when.is_some())).count();
    eprintln!("{masked} stores through a mask read in place");
    assert!(masked > 10, "masked stores run");
    // A caller passes error words only to kernels that record into them (`buffers.rs` reads
    // the source): the store pass reads them only then.
    for s in &sources {
        assert!(!s.text.contains("err[k]") || s.text.contains("atomicMin("), "{}", s.text);
    }
}

/// The fuzzer's `+=` and `*=` stores whose updates may meet, as `Kernel::store_device` runs
/// them in place (`loopnest::buffered_in_place`): the old elements gathered, combined in that
/// buffer, and stored back with `set`, three kernels one after the other on the emulated grid,
/// against the interpreter on the single plan, errors included (the gather fails first).
#[test]
fn buffered_stores_as_three_kernels_equal_the_interpreter() {
    use slc::backend::loopnest::buffered_in_place;
    let mut stages: Vec<(&Program, [VerifiedGenericPlan; 3])> = vec![];
    // The fuzzer's few, and index arrays and masks with duplicates and a miss, on several dtypes.
    let mut programs = programs::stores(600);
    let sources = [
        "a[idx] += 1",
        "a[idx] *= 3",
        "a[idx, 1:] += 2",
        "a[:, idx] -= 5",
        "a[m] *= 2",
        "a[idx[::-1]] += a[0]",
    ];
    for (case, src) in sources.iter().enumerate() {
        for (d, dtype) in
            [DType::F32, DType::I16, DType::U8, DType::F64, DType::Bool, DType::I64].into_iter().enumerate()
        {
            for at in [&[1i64, -1, 1, 0, -3][..], &[2, 3], &[]] {
                let mut given = std::collections::BTreeMap::new();
                given.insert("a".to_string(), slc::fuzz::fill(dtype, &[3, 4], (7 * case + d) as u64));
                given.insert("idx".to_string(), Tensor::from_i64s(DType::I64, &[at.len()], at).unwrap());
                given.insert("m".to_string(), Tensor::from_bytes(DType::Bool, &[3], &[1, 0, 1]).unwrap());
                programs.extend(programs::concrete(format!("`{src}` on {dtype}, idx {at:?}"), src, &given));
            }
        }
    }
    for p in &programs {
        let Some(parts) = buffered_in_place(p.plan.plan()) else { continue };
        let verify = |q| slc::plan::verify_generic(q).expect("a buffered store's plans verify");
        stages.push((p, [verify(parts.gather), verify(parts.combine), verify(parts.scatter)]));
    }
    let errors = stages.iter().filter(|(p, _)| p.want.is_err()).count();
    eprintln!("{} buffered stores ({errors} failing at run time)", stages.len());
    assert!(stages.len() > 30 && errors > 0, "{} buffered, {errors} failing", stages.len());
    let sources: Vec<CudaSource> = (stages.iter().enumerate())
        .flat_map(|(i, (_, plans))| {
            plans.iter().enumerate().map(move |(k, plan)| {
                cuda::generate(plan, &format!("b{i}_{k}")).unwrap_or_else(|e| panic!("{e}\n{}", plan.plan()))
            })
        })
        .collect();
    let emulators = build(&sources);
    let mut failures = vec![];
    for (i, (p, [gather, combine, scatter])) in stages.iter().enumerate() {
        let run = |k: usize, plan: &VerifiedGenericPlan, inputs: &[&Tensor]| {
            let at = 3 * i + k;
            emulators[at / BATCH].run(plan, &sources[at], inputs)
        };
        let inputs: Vec<&Tensor> = p.inputs.iter().collect();
        fn with<'t>(inputs: &[&'t Tensor], buffer: &'t Tensor) -> Vec<&'t Tensor> {
            inputs.iter().copied().chain([buffer]).collect()
        }
        let got = run(0, gather, &inputs).and_then(|old| {
            let combined = run(1, combine, &with(&inputs, &old))?;
            run(2, scatter, &with(&inputs, &combined))
        });
        if !programs::same_result(&p.plan, &p.want, &got, |x, y| x == y) {
            failures.push(format!("{}: CPU {:?}, three emulated kernels {got:?}", p.what, p.want));
        }
    }
    assert!(
        failures.is_empty(),
        "{} differ:\n{}",
        failures.len(),
        failures[..failures.len().min(5)].join("\n")
    );
}

/// `=` through index arrays and masks with many duplicate destinations spread over the whole
/// emulated grid (blocks and threads run backwards): the last write in C order wins, as NumPy's;
/// `+=` adds once (buffered). Each kernel also runs misaligned and, where generic, 64-bit. The
/// stores that write whole rows (or whole runs of a row) keep one owner word per row
/// (`codegen/owner.rs`): checked on the bound call, concrete and generic.
#[test]
fn duplicate_destinations_keep_the_last_write_in_c_order() {
    let rows = 7usize;
    let a = slc::fuzz::fill(DType::F32, &[rows, 3], 5);
    let at: Vec<i64> = (0..500i64).map(|k| (k * 37 + k / 11) % rows as i64 - 3).collect();
    let idx = Tensor::from_i64s(DType::I64, &[at.len()], &at).unwrap();
    let v = slc::fuzz::fill(DType::F32, &[at.len(), 3], 9);
    let cols = Tensor::from_i64s(DType::I64, &[4], &[2, 0, 2, -1]).unwrap();
    let b = slc::fuzz::fill(DType::I16, &[3, rows, 4], 2);
    let w = slc::fuzz::fill(DType::I16, &[3, at.len(), 4], 7);
    let t3 = slc::fuzz::fill(DType::I16, &[rows, 3, 4], 3);
    // (program, the bytes one owner word covers: a row's, or an element's)
    let programs = [
        ("a[idx] = v", Some(12)),
        ("a[idx, ::-1] = v", Some(12)),
        ("a[idx, 1:] = v[:, 1:]", Some(12)),
        ("a[idx] = 2", Some(12)),
        ("b[:, idx] = w", Some(8)),
        ("b[:, idx, ::2] = w[:, :, 1::2]", Some(8)),
        ("b[1:, idx, ::-1] = w[1:]", Some(8)),
        ("a[idx] += v", Some(12)),
        // One word per element: no trailing dim the indices leave alone, or one that leaves
        // the row (the index arrays' dims first, then b's axis 1 across rows).
        ("a[idx, 1] = v[:, 0]", Some(4)),
        ("a[idx[:, None], cols] = v[:, 0, None]", Some(4)),
        ("t3[idx[:, None], :, cols] = 3", Some(2)),
    ];
    for (src, key) in programs {
        let given = [("a", &a), ("idx", &idx), ("v", &v), ("cols", &cols), ("b", &b), ("w", &w), ("t3", &t3)];
        // In the plan's order: as the names first occur.
        let mut used: Vec<(&str, &Tensor)> = given.iter().filter(|(n, _)| src.contains(n)).copied().collect();
        used.sort_by_key(|(n, _)| src.find(n));
        let inputs: Vec<&Tensor> = used.iter().map(|(_, t)| *t).collect();
        let (plan, source, emulator, want) = concrete(src, &used);
        assert!(source.layout.store.as_ref().is_some_and(|s| s.owner), "{src}: gathered destinations");
        let (generic_plan, generic_source, generic_emulator) = generic(src, &used);
        for (plan, source, emulator) in
            [(&plan, &source, &emulator), (&generic_plan, &generic_source, &generic_emulator)]
        {
            if let (Some(key), Some((word, _))) = (key, source.layout.owner_rows_words()) {
                let bound = cuda::bind(plan, &source.layout, &inputs).unwrap();
                assert_eq!(bound.words[word], key, "{src}: one owner word per row");
            }
            for (wide, misaligned) in [(None, false), (None, true), (Some(true), false)] {
                let got = emulator.run_placed(plan, source, &inputs, wide, misaligned);
                assert_eq!(got.as_ref(), Ok(&want), "{src}, misaligned {misaligned}, wide {wide:?}");
            }
        }
    }
}

/// Stores whose values gather under every out-of-range policy (a zero-filled miss writes 0),
/// through slices, index arrays and masks, generic: on a value axis that is empty at run time
/// the clamped and wrapped gathers fail in the update kernels (validated by the marking pass
/// before anything is written), as the interpreter's `EmptyAxis`.
#[test]
fn store_values_gather_under_every_policy_and_fail_before_writing() {
    let a = slc::fuzz::fill(DType::F32, &[6], 1);
    let j = Tensor::from_i64s(DType::I64, &[6], &[-5, 3, 9, -1, 4, 0]).unwrap();
    let k = Tensor::from_i64s(DType::I64, &[6], &[5, 0, 5, 2, 2, 0]).unwrap();
    let m = Tensor::from_bytes(DType::Bool, &[6], &[1, 0, 1, 1, 0, 1]).unwrap();
    let mut marked_only = 0;
    for mode in ["zero", "clamp", "wrap", "error"] {
        // Each with its inputs in plan order (as they first occur).
        let programs = [
            (format!("a[::-1] = gather(b, j, axis=0, mode={mode})"), "abj"),
            (format!("a[k] = gather(b, j, axis=0, mode={mode})"), "akbj"),
            (format!("a[m] = gather(b, j, axis=0, mode={mode})[m]"), "ambj"),
            (format!("a[1:] += gather(b, j, axis=0, mode={mode})[1:]"), "abj"),
        ];
        for (src, names) in &programs {
            for len in [4usize, 0] {
                let b = slc::fuzz::fill(DType::F32, &[len], 2);
                let given = [("a", &a), ("b", &b), ("j", &j), ("k", &k), ("m", &m)];
                let used: Vec<(&str, &Tensor)> = (names.chars())
                    .map(|c| *given.iter().find(|(n, _)| n.starts_with(c)).expect("an input"))
                    .collect();
                let (plan, source, emulator) = generic(src, &used);
                // Plan order, a mask's derived `nonzero()` included.
                let by_name: HashMap<&str, &Tensor> = used.iter().copied().collect();
                let inputs: Vec<Tensor> =
                    slc::plan::input_tensors(&plan.inputs, &|n| by_name.get(n).copied())
                        .unwrap()
                        .into_iter()
                        .map(|t| t.into_owned())
                        .collect();
                let refs: Vec<&Tensor> = inputs.iter().collect();
                let want = programs::interpret_generic(&plan, &inputs);
                let store = source.layout.store.as_ref().expect("a store");
                marked_only += usize::from(store.mark && !store.owner);
                for wide in [Some(false), Some(true)] {
                    let got = emulator.run_as(&plan, &source, &refs, wide);
                    assert_eq!(got, want, "{src} with b of {len}, wide {wide:?}");
                }
                if len == 0 && mode != "zero" {
                    assert!(want.is_err(), "{src} on an empty b fails");
                }
            }
        }
    }
    assert!(marked_only > 0, "some stores are validated before their writes without owners");
}

/// A failed store writes nothing: the store pass reads the error words the checks and the
/// marking pass left, and returns at once (so a target updated in place stays as it was).
#[test]
fn a_failed_store_leaves_its_output_as_the_target_was() {
    let a = slc::fuzz::fill(DType::F32, &[6], 1);
    let idx = Tensor::from_i64s(DType::I64, &[3], &[0, 1, 9]).unwrap();
    let v = slc::fuzz::fill(DType::F32, &[3], 4);
    let (plan, source, emulator) = generic("a[idx] = v", &[("a", &a), ("idx", &idx), ("v", &v)]);
    let bound = cuda::bind(&plan, &source.layout, &[&a, &idx, &v]).unwrap();
    let layout = &source.layout;
    let mut words = bound.words.clone();
    let mut out = a.bytes().to_vec();
    let mut err = vec![cuda::launch::NO_ERROR; bound.err_words];
    let mut owner = vec![0u64; cuda::launch::owner_bytes(layout, &bound).div_ceil(8)];
    words[0] = a.as_ptr() as u64;
    words[1] = idx.as_ptr() as u64;
    words[2] = v.as_ptr() as u64;
    words[layout.out_word()] = out.as_mut_ptr() as u64;
    words[layout.err_word()] = err.as_mut_ptr() as u64;
    words[layout.owner_word()] = owner.as_mut_ptr() as u64;
    let kernels = cuda::launch::kernels(&source, &bound);
    assert_eq!(kernels.len(), 3, "checks, mark, store");
    for (entry, steps) in &kernels {
        // SAFETY: the words of the bound call; out, err and owner have its bytes.
        unsafe { emulator.call_entry(entry, &words, *steps) }.unwrap();
    }
    assert!(err.iter().any(|&w| w != cuda::launch::NO_ERROR), "index 9 is out of range");
    assert_eq!(out, a.bytes(), "nothing written");
    // The same call with the last index in range writes.
    let idx = Tensor::from_i64s(DType::I64, &[3], &[0, 1, 5]).unwrap();
    words[1] = idx.as_ptr() as u64;
    err.fill(cuda::launch::NO_ERROR);
    for (entry, steps) in &kernels {
        // SAFETY: as above.
        unsafe { emulator.call_entry(entry, &words, *steps) }.unwrap();
    }
    assert_ne!(out, a.bytes());
}

/// A scatter's reductions (every OpenVINO one, with and without `use_init_val`, and ONNX's):
/// 500 updates onto 7 elements, folded in C order by the serial store pass and rounded once
/// (f16 and bf16 sums in f32: rounding each step would differ), integer means rounded down,
/// bools, NaNs (any payload) — against the interpreter, 32- and 64-bit kernels (both are
/// generated where the numbers fit 32 bits: `run_as` falls back to the one there is).
#[test]
fn scatter_reductions_fold_in_c_order_and_round_once() {
    let n = 500usize;
    let at: Vec<i64> = (0..n as i64).map(|k| (k * 5 + k / 7) % 7 - 3).collect();
    let idx = Tensor::from_i64s(DType::I64, &[n], &at).unwrap();
    // scatter_nd_update's indices: one coordinate per row.
    let rows = Tensor::from_i64s(DType::I64, &[n, 1], &at).unwrap();
    let mut programs = vec!["scatter_nd_update(a, idx, v, reduction=sub)".to_string()];
    for r in ["sum", "prod", "min", "max", "mean"] {
        for init in ["true", "false"] {
            programs
                .push(format!("scatter_elements_update(a, idx, v, 0, reduction={r}, use_init_val={init})"));
        }
    }
    for r in ["add", "mul", "max", "min"] {
        programs.push(format!("scatter_elements(a, idx, v, axis=0, reduction={r})"));
    }
    for dtype in [DType::F16, DType::BF16, DType::F32, DType::F64, DType::I8, DType::U16, DType::Bool] {
        let a = slc::fuzz::fill(dtype, &[7], 3);
        let v = slc::fuzz::fill(dtype, &[n], 4);
        for src in &programs {
            if dtype == DType::Bool && src.contains("mean") {
                continue; // not defined on bools (sema refuses it)
            }
            let idx = if src.starts_with("scatter_nd") { &rows } else { &idx };
            let (plan, source, emulator, want) = concrete(src, &[("a", &a), ("idx", idx), ("v", &v)]);
            assert!(source.layout.store.as_ref().is_some_and(|s| s.reduces), "{src}");
            let want = Ok(want);
            for wide in [Some(false), Some(true)] {
                let got = emulator.run_as(&plan, &source, &[&a, idx, &v], wide);
                assert!(
                    programs::same_result(&plan, &want, &got, |x, y| x == y),
                    "{src} on {dtype}, wide {wide:?}: {got:?} vs {want:?}"
                );
            }
        }
    }
}

/// `slc eval --backend cuda` compiles for one run (`pipeline::compile_for_run`): a mask of more
/// than 4096 elements is a derived input of the plan, its positions made on the host and copied
/// in, not thousands of constants. Its kernels, on the positions `plan::input_tensors` derives,
/// against the interpreter on the plan that folds them.
#[test]
fn a_large_mask_is_a_derived_input_of_the_gpu_run_not_folded() {
    let a = slc::fuzz::fill(DType::F32, &[80, 90], 5);
    let bits: Vec<u8> =
        (0..80 * 90).map(|k: u32| u8::from(k.wrapping_mul(2_654_435_761) >> 31 == 1)).collect();
    let m = Tensor::from_bytes(DType::Bool, &[80, 90], &bits).unwrap();
    let given = [("a", &a), ("m", &m)];
    let types: InputTypes =
        given.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
    let values: slc::sema::InputValues = [("m".to_string(), m.clone())].into_iter().collect();
    for src in ["a[m]", "a[m][::-3]", "a[m] = 7", "a[m] += 1", "a[m] = a[m][::-1]"] {
        let compiled =
            slc::pipeline::compile_for_run(src, &types, &values).unwrap_or_else(|e| panic!("{src}: {e}"));
        let derived: Vec<_> = compiled.plan.plan().inputs.iter().filter_map(|d| d.nonzero_of()).collect();
        // One value stored through the mask reads the mask itself, no positions.
        let masked = compiled.plan.plan().store.as_ref().is_some_and(|s| s.when.is_some());
        let want_derived: &[&str] = if masked { &[] } else { &["m"] };
        assert_eq!(derived, want_derived, "{src}: the positions are derived\n{}", compiled.plan.plan());
        assert_eq!(masked, src.ends_with("= 7") || src.ends_with("+= 1"), "{src}");
        assert!(compiled.plan.plan().consts.iter().all(|c| c.tensor.numel() < 1000), "{src}: nothing folded");
        let lookup = |name: &str| given.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
        let folded = slc::compile_with_values(src, &types, &values).unwrap();
        let inputs = slc::plan::input_tensors(&folded.plan.plan().inputs, &lookup).unwrap();
        let inputs: Vec<&Tensor> = inputs.iter().map(|t| t.as_ref()).collect();
        let want = slc::backend::interp::run(&folded.plan, &inputs).unwrap();
        let run_inputs = slc::plan::input_tensors(&compiled.plan.plan().inputs, &lookup).unwrap();
        let run_inputs: Vec<&Tensor> = run_inputs.iter().map(|t| t.as_ref()).collect();
        let plan = compiled.plan.lift();
        let source = cuda::generate(&plan, "k").unwrap();
        let emulator = emulate::build(&[&source], &std::env::temp_dir()).unwrap_or_else(|e| panic!("{e}"));
        let got = emulator.run_placed(&plan, &source, &run_inputs, None, false);
        assert_eq!(got.as_ref(), Ok(&want), "{src}");
    }
}

/// A stored value of another dtype is a derived input of the GPU run as of the CPU's: the
/// kernels read `plan::input_tensors`' cast of it, and store what the interpreter stores.
#[test]
fn a_value_of_another_dtype_is_cast_before_the_kernels_read_it() {
    let a = Tensor::from_i64s(DType::I16, &[5, 4], &(0..20).map(|x| x * 3 - 20).collect::<Vec<_>>()).unwrap();
    let v: Vec<u8> = [1.5f64, -2.7, 300.9, 7.0].iter().flat_map(|x| x.to_le_bytes()).collect();
    let v = Tensor::from_bytes(DType::F64, &[4], &v).unwrap();
    let w =
        Tensor::from_i64s(DType::I8, &[3, 4], &(0..12).map(|x| 100 - 17 * x).collect::<Vec<_>>()).unwrap();
    let idx = Tensor::from_i64s(DType::I64, &[3], &[4, 0, -2]).unwrap();
    let given = [("a", &a), ("v", &v), ("w", &w), ("idx", &idx)];
    let types: InputTypes =
        given.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
    let lookup = |name: &str| given.iter().find(|(n, _)| *n == name).map(|(_, t)| *t);
    for src in ["a[0] = v", "a[::-2, 1:] = v[:3]", "a[idx] = w", "a[idx, ::-1] *= w", "a[1:4] += w"] {
        let compiled = slc::compile_with_values(src, &types, &Default::default())
            .unwrap_or_else(|e| panic!("{}", e.render(src)));
        let plan = compiled.plan.plan();
        assert!(plan.inputs.iter().any(|d| d.cast_of().is_some()), "{src}: a cast input\n{plan}");
        let inputs = slc::plan::input_tensors(&plan.inputs, &lookup).unwrap();
        let inputs: Vec<&Tensor> = inputs.iter().map(|t| t.as_ref()).collect();
        let want = slc::backend::interp::run(&compiled.plan, &inputs).unwrap();
        let lifted = compiled.plan.lift();
        let source = cuda::generate(&lifted, "k").unwrap();
        let emulator = emulate::build(&[&source], &std::env::temp_dir()).unwrap_or_else(|e| panic!("{e}"));
        let got = emulator.run_placed(&lifted, &source, &inputs, None, false);
        assert_eq!(got.as_ref(), Ok(&want), "{src}");
    }
}
