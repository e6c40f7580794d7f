//! The DirectML emulator: the seed 002 SLICE1 examples from their descriptors, invalid
//! descriptors rejected, a differential test — random programs lowered, emulated from their
//! descriptors and compared bit for bit with the reference interpreter — and refusals as library
//! errors and CLI diagnostics that point at the refused call.

#[path = "support/dml.rs"]
mod dml_common;
#[path = "support/scratch.rs"]
mod scratch_dir;
use dml_common::{agree, arange, level, lower_src, types};
use scratch_dir::scratch;
use serde_json::Value;
use slc::backend::dml::desc::*;
use slc::backend::dml::{DmlError, DmlGraph, DmlOptions, EmulateError, FeatureLevel, emulate};
use slc::fuzz::{Case, Outcome, Rng, check_case};
use slc::{DType, Error, Tensor};
use std::path::Path;
use std::process::Command;

// ---------------------------------------------------------------------------------------------
// Seed 002: the DML_SLICE1 examples, from their descriptors

#[test]
fn seed_002_slice1_examples_reproduce() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let seed: Value =
        serde_json::from_str(&std::fs::read_to_string(root.join("tests/dml/seed002_slice1.json")).unwrap())
            .unwrap();
    let values: Vec<f32> =
        seed["input"]["values"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
    let a = Tensor::from_bytes(DType::F32, &[1, 1, 4, 4], &bytes).unwrap();
    let nums =
        |v: &Value| -> Vec<i64> { v.as_array().unwrap().iter().map(|x| x.as_i64().unwrap()).collect() };
    let examples = seed["examples"].as_array().unwrap();
    assert_eq!(examples.len(), 2);
    for ex in examples {
        let want: Vec<f32> =
            ex["output"].as_array().unwrap().iter().map(|v| v.as_f64().unwrap() as f32).collect();
        let want: Vec<u8> = want.iter().flat_map(|v| v.to_le_bytes()).collect();
        let out_sizes: Vec<u32> = nums(&ex["output_sizes"]).iter().map(|&v| v as u32).collect();
        // The seed's own descriptor, as a one-node graph.
        let fields = Slice1Desc {
            input_tensor: TensorDesc::buffer(
                BufferTensorDesc::new(DataType::Float32, vec![1, 1, 4, 4], None).unwrap(),
            ),
            output_tensor: TensorDesc::buffer(
                BufferTensorDesc::new(DataType::Float32, out_sizes, None).unwrap(),
            ),
            dimension_count: 4,
            input_window_offsets: nums(&ex["InputWindowOffsets"]).iter().map(|&v| v as u32).collect(),
            input_window_sizes: nums(&ex["InputWindowSizes"]).iter().map(|&v| v as u32).collect(),
            input_window_strides: nums(&ex["InputWindowStrides"]).iter().map(|&v| v as i32).collect(),
        };
        let mut g = lower_src("a[...]", &[("a", DType::F32, &[1, 1, 4, 4])], &DmlOptions::default()).unwrap();
        g.graph_desc.as_mut().unwrap().nodes[0].desc.operator =
            OperatorDesc::new(OperatorFields::Slice1(fields));
        g.output.shape = nums(&ex["output_sizes"]);
        let got = emulate(&g, &[&a]).unwrap_or_else(|e| panic!("{}: {e}", ex["name"]));
        assert_eq!(got.bytes(), &want[..], "{}", ex["name"]);
        // The same slice written in slc compiles to descriptors that compute the same.
        let src = ex["slc"].as_str().unwrap();
        let g = agree(src, &[("a", a.clone())], &DmlOptions::default());
        assert_eq!(emulate(&g, &[&a]).unwrap().bytes(), &want[..], "{src}");
    }
}

#[test]
fn emulator_rejects_invalid_descriptors() {
    let a = arange(DType::F32, &[4]);
    let base = lower_src("a[1:]", &[("a", DType::F32, &[4])], &DmlOptions::default()).unwrap();
    let with = |f: &dyn Fn(&mut Slice1Desc)| {
        let mut g = base.clone();
        let OperatorFields::Slice1(d) = &mut g.graph_desc.as_mut().unwrap().nodes[0].desc.operator.desc
        else {
            panic!()
        };
        f(d);
        emulate(&g, &[&a])
    };
    assert!(with(&|_| ()).is_ok());
    // A window that leaves the input, an empty window, a zero stride.
    assert!(matches!(with(&|d| d.input_window_sizes[0] = 4), Err(EmulateError::Invalid(_))));
    assert!(matches!(with(&|d| d.input_window_sizes[0] = 0), Err(EmulateError::Invalid(_))));
    assert!(matches!(with(&|d| d.input_window_strides[0] = 0), Err(EmulateError::Invalid(_))));
    // More output than the window holds: MaxCopiedElements uses |stride| (seed erratum).
    assert!(matches!(with(&|d| d.input_window_strides[0] = -2), Err(EmulateError::Invalid(_))));
    // A size-0 tensor dimension and an understated TotalTensorSizeInBytes.
    assert!(matches!(with(&|d| d.output_tensor.desc.sizes[0] = 0), Err(EmulateError::Invalid(_))));
    assert!(matches!(
        with(&|d| d.input_tensor.desc.total_tensor_size_in_bytes = 8),
        Err(EmulateError::Invalid(_))
    ));
    // 64-bit data below 4.1.
    let mut g = lower_src("a[1:]", &[("a", DType::I64, &[4])], &level("4.1")).unwrap();
    g.feature_level = FeatureLevel::L4_0;
    assert!(matches!(emulate(&g, &[&arange(DType::I64, &[4])]), Err(EmulateError::Invalid(_))));
}

// ---------------------------------------------------------------------------------------------
// The differential test

#[test]
fn random_programs_agree_with_the_interpreter_bit_for_bit() {
    const CASES: usize = 10000;
    // The cases are drawn from one stream, as always; checking them is what takes the time, so
    // it is shared among the cores (case k on thread k mod n: the same cases on any machine).
    let mut r = Rng::new(0x5eed_d1ec_7a11_0002);
    let cases: Vec<Case> = (0..CASES).map(|_| Case::draw(&mut r)).collect();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).min(8);
    #[derive(Default)]
    struct Tally {
        compared: usize,
        refused: usize,
        invalid_program: usize,
        errors_matched: usize,
        ops_seen: std::collections::BTreeSet<&'static str>,
    }
    let tallies: Vec<Tally> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let cases = &cases;
                s.spawn(move || {
                    let mut tally = Tally::default();
                    // Also checks the JIT against the interpreter, and the plan's text round trip.
                    for case in cases.iter().skip(t).step_by(threads) {
                        match check_case(case) {
                            Outcome::Rejected => tally.invalid_program += 1,
                            Outcome::Refused(_) => tally.refused += 1,
                            Outcome::Agreed { graph, error } => {
                                for node in &graph.graph().nodes {
                                    tally.ops_seen.insert(node.desc.operator.r#type.name());
                                }
                                tally.errors_matched += error as usize;
                                tally.compared += 1;
                            }
                        }
                    }
                    tally
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().expect("a checking thread")).collect()
    });
    let (mut compared, mut refused, mut invalid_program) = (0usize, 0usize, 0usize);
    let mut ops_seen = std::collections::BTreeSet::new();
    let mut errors_matched = 0usize;
    for t in tallies {
        compared += t.compared;
        refused += t.refused;
        invalid_program += t.invalid_program;
        errors_matched += t.errors_matched;
        ops_seen.extend(t.ops_seen);
    }
    eprintln!(
        "{CASES} programs: {compared} emulated and equal ({errors_matched} equal errors), {refused} refused, {invalid_program} rejected by the checker; operators {ops_seen:?}"
    );
    // Random text is often not a valid program (too many indices for a low rank); of the rest,
    // most must be lowered and compared.
    assert!(compared >= 4000, "only {compared} of {CASES} were compared");
    assert!(compared >= 4 * refused, "{refused} refused, {compared} compared");
    assert!(errors_matched > 0 && refused > 0);
    assert_eq!(ops_seen.len(), 4, "{ops_seen:?}");
}

#[test]
fn a_refusal_is_a_library_error_and_a_cli_diagnostic() {
    let t = types(&[("a", DType::F32, &[3, 4]), ("idx", DType::I64, &[2])]);
    let target = slc::Target::DirectMl(DmlOptions::default());
    let compiled = |src: &str| slc::compile(src, &t).unwrap();
    let e = target.compile(compiled("gather(a, idx, axis=0)")).unwrap_err();
    assert!(matches!(e, Error::Dml(DmlError::OobPolicy { .. })));
    assert!(e.render("gather(a, idx, axis=0)").contains("E0405"));
    assert!(matches!(target.compile(compiled("a[1:]")).unwrap(), slc::Artifact::DirectMl(_)));
    assert!(matches!(slc::Target::Cpu.compile(compiled("a[1:]")).unwrap(), slc::Artifact::Cpu(_)));
    let exe = env!("CARGO_BIN_EXE_slc");
    let out = Command::new(exe)
        .args([
            "compile",
            "gather(a, idx, axis=0)",
            "--shape",
            "a=f32[3,4]",
            "--shape",
            "idx=i64[2]",
            "--target",
            "dml",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("E0405"));
    assert!(out.stdout.is_empty());
    let out = Command::new(exe)
        .args([
            "compile",
            "a[1:, ::-1]",
            "--shape",
            "a=f32[3,4]",
            "--target",
            "dml",
            "--feature-level",
            "3.0",
        ])
        .output()
        .unwrap();
    assert!(out.status.success());
    let g = DmlGraph::from_json(&String::from_utf8_lossy(&out.stdout)).unwrap();
    assert_eq!(g.feature_level, FeatureLevel::L3_0);
    let dir = scratch("dml", "cli");
    let file = dir.join("g.c");
    let out = Command::new(exe)
        .args(["compile", "a[1:]", "--shape", "a=f32[3]", "--target", "dml", "--format", "c", "-o"])
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(std::fs::read_to_string(&file).unwrap().contains("DML_OPERATOR_SLICE1"));
    // The C form carries the host's index checks (tested against the emulator above).
    let out = Command::new(exe)
        .args(["compile", "a[idx]", "--shape", "a=f32[3,4]", "--shape", "idx=i64[2]"])
        .args(["--target", "dml", "--format", "c", "--name", "pick"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let c = String::from_utf8_lossy(&out.stdout);
    assert!(
        c.contains("int pick_check_indices(const void *const *inputs, pick_check_failure *failure)"),
        "{c}"
    );
    assert!(c.contains("HostChecks[0]: plan check 0 (axis 0), shape [2], values in [-3, 3)."), "{c}");
    let out = Command::new(exe)
        .args(["compile", "a[1:]", "--shape", "a=f32[3]", "--target", "dml", "--feature-level", "9.9"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_refused_gather_points_at_its_call_and_names_the_modes_that_lower() {
    let t = types(&[
        ("a", DType::F32, &[4, 5]),
        ("e", DType::F32, &[4, 0]),
        ("i", DType::I64, &[3]),
        ("k", DType::I64, &[2]),
    ]);
    let target = slc::Target::DirectMl(DmlOptions::default());
    let lowered = |src: &str| target.compile(slc::compile(src, &t).unwrap());
    let refused = |src: &str| lowered(src).unwrap_err().render(src);
    // The outer subscript is error-mode (checked on the host); the inner gather is refused.
    let runtime = "a[::-1][gather(i, k, axis=0)]";
    let report = [runtime, "a[:, gather(i, [7], axis=0, mode=zero)]", "gather(e, k, axis=1)[::-1]"]
        .map(refused)
        .join("\n");
    insta::assert_snapshot!("refused_gathers", report);
    // The mode the help names lowers.
    assert!(lowered("a[::-1][gather(i, k, axis=0, mode=error)]").is_ok());
    // The command line renders the same report.
    let out = Command::new(env!("CARGO_BIN_EXE_slc"))
        .args(["compile", runtime, "--shape", "a=f32[4,5]", "--shape", "i=i64[3]", "--shape", "k=i64[2]"])
        .args(["--target", "dml"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("mode=zero on indices known only at run time"), "{stderr}");
    assert!(stderr.contains("Help: write mode=error"), "{stderr}");
    assert!(stderr.contains("1 │ a[::-1][gather(i, k, axis=0)]"), "{stderr}");
}

/// With two gathers of the same mode over axes of the same size, the refusal points at the one
/// the lowering refused, carried by its plan term, not at the first that could fit.
#[test]
fn a_refusal_among_two_gathers_points_at_the_refused_one() {
    let t = types(&[("a", DType::F32, &[3, 3]), ("i", DType::I64, &[2]), ("j", DType::I64, &[2])]);
    let target = slc::Target::DirectMl(DmlOptions::default());
    let at = |src: &str| -> String {
        let e = target.compile(slc::compile(src, &t).unwrap()).unwrap_err();
        let d = e.diagnostic();
        assert_eq!(d.code, "E0405", "{}", e.render(src));
        let span = d.labels.first().unwrap_or_else(|| panic!("{src}: no label")).span;
        src[span.start..span.end].to_string()
    };
    // The outer gather holds the out-of-range constant: it, not the inner one, is refused.
    let outer = "gather(gather(a, [0, 1], axis=0, mode=zero), [1, 7], axis=1, mode=zero)";
    assert_eq!(at(outer), outer);
    let inner = "gather(gather(a, [0, 7], axis=0, mode=zero), [1, 0], axis=1, mode=zero)";
    assert_eq!(at(inner), "gather(a, [0, 7], axis=0, mode=zero)");
    // Run-time indices under clamp: only the gather by `j` is refused (the one by `i` is
    // error-mode, which the host checks).
    let src = "gather(gather(a, i, axis=0, mode=error), j, axis=1, mode=clamp)";
    assert_eq!(at(src), src);
    let src = "gather(gather(a, j, axis=0, mode=clamp), i, axis=1, mode=error)";
    assert_eq!(at(src), "gather(a, j, axis=0, mode=clamp)");
}
