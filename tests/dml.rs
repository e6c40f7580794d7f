//! The DirectML target: lowering rules, the JSON and C forms, the seed 002 SLICE1 examples, and
//! a differential test — random programs lowered, emulated from their descriptors and compared
//! bit for bit with the reference interpreter.

#[path = "support/scratch.rs"]
mod scratch_dir;
use scratch_dir::scratch;
use serde_json::Value;
use slc::backend::dml::desc::*;
use slc::backend::dml::{
    BindingSource, DmlError, DmlGraph, DmlOptions, EmulateError, FeatureLevel, HostCheckKind, emulate, lower,
};
use slc::backend::{RuntimeError, interp};
use slc::fuzz::{Case, Draw, Outcome, Rng, check_case, fill};
use slc::sema::InputTypes;
use slc::types::{OobMode, TensorType};
use slc::{DType, Error, Tensor};
use std::path::Path;
use std::process::Command;

fn types(decls: &[(&str, DType, &[i64])]) -> InputTypes {
    decls.iter().map(|(n, d, s)| (n.to_string(), TensorType { dtype: *d, shape: s.to_vec() })).collect()
}

fn level(s: &str) -> DmlOptions {
    DmlOptions { feature_level: FeatureLevel::parse(s).unwrap() }
}

fn lower_src(src: &str, decls: &[(&str, DType, &[i64])], opts: &DmlOptions) -> Result<DmlGraph, DmlError> {
    let compiled = slc::compile(src, &types(decls)).unwrap_or_else(|e| panic!("{src}: {e}"));
    lower(&compiled.plan, opts)
}

/// The operators, in node order: the graph's nodes, or the one operator below 2.1.
fn ops(g: &DmlGraph) -> Vec<&OperatorFields> {
    match &g.operator_desc {
        Some(op) => vec![&op.desc],
        None => g.graph_desc.iter().flat_map(|gd| gd.nodes.iter().map(|n| &n.desc.operator.desc)).collect(),
    }
}

fn slice1(g: &DmlGraph, n: usize) -> &Slice1Desc {
    match ops(g)[n] {
        OperatorFields::Slice1(d) => d,
        other => panic!("node {n} is {:?}", other.operator_type()),
    }
}

/// 0, 1, 2, ... (mod 100) in any dtype.
fn arange(dtype: DType, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let values: Vec<i64> = (0..n as i64).map(|v| v % 100).collect();
    let bytes: Vec<u8> = match dtype {
        DType::F32 => values.iter().flat_map(|&v| (v as f32).to_le_bytes()).collect(),
        DType::F64 => values.iter().flat_map(|&v| (v as f64).to_le_bytes()).collect(),
        DType::F16 => values.iter().flat_map(|&v| half::f16::from_f32(v as f32).to_le_bytes()).collect(),
        DType::BF16 => values.iter().flat_map(|&v| half::bf16::from_f32(v as f32).to_le_bytes()).collect(),
        DType::Bool => values.iter().map(|&v| (v & 1) as u8).collect(),
        _ => return Tensor::from_i64s(dtype, shape, &values).unwrap(),
    };
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

/// Lowers, emulates and compares with the interpreter on the given tensors.
fn agree(src: &str, tensors: &[(&str, Tensor)], opts: &DmlOptions) -> DmlGraph {
    let decls: InputTypes =
        tensors.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
    let compiled = slc::compile(src, &decls).unwrap_or_else(|e| panic!("{src}: {e}"));
    let args: Vec<&Tensor> =
        compiled.plan.inputs.iter().map(|d| &tensors.iter().find(|(n, _)| *n == d.name).unwrap().1).collect();
    let want = interp::run(&compiled.plan, &args);
    let g = lower(&compiled.plan, opts).unwrap_or_else(|e| panic!("{src}: {e}"));
    let got = emulate(&g, &args);
    match (want, got) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{src}"),
        (Err(a), Err(EmulateError::Runtime(b))) => assert_eq!(a, b.located(&compiled.plan), "{src}"),
        (a, b) => panic!("{src}: interpreter {a:?}, emulator {b:?}\n{}", g.to_json()),
    }
    g
}

// ---------------------------------------------------------------------------------------------
// Lowering rules

#[test]
fn a_view_is_one_slice1_with_a_window_per_input_dimension() {
    let g = agree("a[1:, ::-1]", &[("a", arange(DType::F32, &[3, 4]))], &DmlOptions::default());
    assert_eq!(g.graph().node_count, 1);
    let d = slice1(&g, 0);
    assert_eq!(d.input_tensor.desc.sizes, [3, 4]);
    assert_eq!(d.input_window_offsets, [1, 0]);
    assert_eq!(d.input_window_sizes, [2, 4]);
    assert_eq!(d.input_window_strides, [1, -1]);
    assert_eq!(d.output_tensor.desc.sizes, [2, 4]);
    assert_eq!(g.input_bindings[0].offset, 0);
}

#[test]
fn negative_steps_start_at_the_window_end() {
    // a[::-2] on 5: elements 4, 2, 0 → window [0, 5) read from its end with stride -2.
    let g = agree("a[::-2]", &[("a", arange(DType::I32, &[5]))], &DmlOptions::default());
    let d = slice1(&g, 0);
    assert_eq!((d.input_window_offsets[0], d.input_window_sizes[0], d.input_window_strides[0]), (0, 5, -2));
    // a[3:0:-2]: elements 3, 1 → window [1, 4).
    let g = agree("a[3:0:-2]", &[("a", arange(DType::I32, &[5]))], &DmlOptions::default());
    let d = slice1(&g, 0);
    assert_eq!((d.input_window_offsets[0], d.input_window_sizes[0], d.input_window_strides[0]), (1, 3, -2));
}

#[test]
fn newaxis_and_shrink_are_output_sizes_not_operators() {
    let g = agree("a[1, newaxis, ::-2]", &[("a", arange(DType::U8, &[3, 4]))], &DmlOptions::default());
    assert_eq!(g.graph().node_count, 1);
    let d = slice1(&g, 0);
    assert_eq!(d.dimension_count, 2);
    assert_eq!(d.input_window_offsets, [1, 1]);
    assert_eq!(d.input_window_sizes, [1, 3]);
    assert_eq!(d.input_window_strides, [1, -2]);
    assert_eq!(d.output_tensor.desc.sizes, [1, 2]);
    assert_eq!(g.output.shape, [1, 2]);
    // A scalar result still has one dimension of size 1.
    let g = agree("a[2, 1]", &[("a", arange(DType::U8, &[3, 4]))], &DmlOptions::default());
    assert_eq!(slice1(&g, 0).input_window_offsets, [2, 1]);
    assert!(g.output.shape.is_empty());
}

#[test]
fn rank_above_8_merges_whole_dimensions() {
    let shape = [2, 2, 2, 2, 2, 2, 2, 2, 2, 6];
    let g = agree("a[..., 1::2]", &[("a", arange(DType::I16, &shape))], &DmlOptions::default());
    let d = slice1(&g, 0);
    assert!(d.dimension_count <= 8);
    // Whole dimensions coalesce (leftmost first) just until 8 remain; the strided one stays.
    assert_eq!(d.input_tensor.desc.sizes, [8, 2, 2, 2, 2, 2, 2, 6]);
    assert_eq!(d.input_window_strides, [1, 1, 1, 1, 1, 1, 1, 2]);
}

#[test]
fn rank_that_cannot_fit_is_refused_naming_the_dimensions() {
    let shape: Vec<i64> = vec![3; 9];
    let src = "a[::2, ::2, ::2, ::2, ::2, ::2, ::2, ::2, ::2]";
    let e = lower_src(src, &[("a", DType::F32, &shape)], &DmlOptions::default()).unwrap_err();
    assert!(matches!(e, DmlError::Rank { dims: 9, .. }), "{e:?}");
    let d = slc::diag::IntoDiagnostic::into_diagnostic(e);
    assert_eq!(d.code, "E0402");
    assert!(d.notes[0].contains("[0] [1] [2] [3] [4] [5] [6] [7] [8]"), "{:?}", d.notes);
    // The same program on one dimension less fits.
    lower_src(
        "a[::2, ::2, ::2, ::2, ::2, ::2, ::2, ::2]",
        &[("a", DType::F32, &shape[..8])],
        &DmlOptions::default(),
    )
    .unwrap();
}

#[test]
fn below_feature_level_3_slice1_has_4_or_5_dimensions() {
    let g = agree("a[1:]", &[("a", arange(DType::F32, &[5]))], &level("2.1"));
    let d = slice1(&g, 0);
    assert_eq!(d.dimension_count, 4);
    assert_eq!(d.input_tensor.desc.sizes, [1, 1, 1, 5]);
    let shape = [2, 3, 2, 3, 2, 3];
    let g = agree("a[:, :, ::2, :, :, ::-1]", &[("a", arange(DType::F32, &shape))], &level("2.1"));
    assert_eq!(slice1(&g, 0).dimension_count, 5);
    let e = lower_src("a[:, ::2, :, ::2, :, ::-1]", &[("a", DType::F32, &[2, 3, 2, 3, 2, 3])], &level("2.1"))
        .unwrap_err();
    assert!(matches!(e, DmlError::Rank { dims: 6, .. }), "{e:?}");
    let e = lower_src("a[1:]", &[("a", DType::F32, &[5])], &level("2.0")).unwrap_err();
    assert!(matches!(e, DmlError::FeatureLevel { needs: FeatureLevel::L2_1, .. }), "{e:?}");
}

#[test]
fn an_empty_result_dispatches_nothing() {
    let g = agree("a[2:2]", &[("a", arange(DType::F32, &[4, 3]))], &DmlOptions::default());
    assert!(!g.dispatch);
    assert_eq!(g.graph().node_count, 0);
    assert!(g.notes[0].contains("no operator is dispatched"));
    // Index checks still run: NumPy raises even when the result is empty.
    let idx = Tensor::from_i64s(DType::I64, &[2], &[0, 9]).unwrap();
    let g = agree("a[idx][0:0]", &[("a", arange(DType::F32, &[4, 3])), ("idx", idx)], &DmlOptions::default());
    assert_eq!(g.host_checks.len(), 1);
}

#[test]
fn a_gather_is_dml_gather() {
    let idx = Tensor::from_i64s(DType::I32, &[2, 2], &[0, -1, 2, 1]).unwrap();
    let g = agree("a[:, idx]", &[("a", arange(DType::F32, &[3, 4])), ("idx", idx)], &DmlOptions::default());
    let [OperatorFields::Gather(d)] = ops(&g)[..] else { panic!("{:?}", ops(&g)) };
    assert_eq!((d.axis, d.index_dimensions), (2, 2));
    assert_eq!(d.input_tensor.desc.sizes, [1, 3, 4]);
    assert_eq!(d.indices_tensor.desc.sizes, [1, 2, 2]);
    assert_eq!(d.output_tensor.desc.sizes, [3, 2, 2]);
    assert_eq!(d.indices_tensor.desc.data_type, DataType::Int32);
    // NumPy's index check runs on the host.
    assert!(matches!(
        g.host_checks[..],
        [slc::backend::dml::HostCheck { kind: HostCheckKind::PlanCheck(0), .. }]
    ));
    // ...and fails like the interpreter.
    let bad = Tensor::from_i64s(DType::I32, &[2, 2], &[0, -1, 7, 1]).unwrap();
    agree("a[:, idx]", &[("a", arange(DType::F32, &[3, 4])), ("idx", bad)], &DmlOptions::default());
}

#[test]
fn batch_dims_use_gather_nd1() {
    let idx = Tensor::from_i64s(DType::I64, &[2, 3], &[0, 2, 1, 1, 1, 0]).unwrap();
    let g = agree(
        "gather(a, idx, axis=1, batch_dims=1, mode=error)",
        &[("a", arange(DType::I8, &[2, 3, 4])), ("idx", idx.clone())],
        &DmlOptions::default(),
    );
    let [OperatorFields::GatherNd1(d)] = ops(&g)[..] else { panic!("{:?}", ops(&g)) };
    assert_eq!(d.batch_dimension_count, 1);
    assert_eq!((d.input_dimension_count, d.indices_dimension_count), (3, 3));
    assert_eq!(d.indices_tensor.desc.sizes, [2, 3, 1]);
    // axis > batch_dims: the dimension between is a batch dimension the indices broadcast over.
    let g = agree(
        "gather(a, idx, axis=2, batch_dims=1, mode=error)",
        &[("a", arange(DType::I8, &[2, 5, 3, 2])), ("idx", idx)],
        &DmlOptions::default(),
    );
    let [OperatorFields::GatherNd1(d)] = ops(&g)[..] else { panic!("{:?}", ops(&g)) };
    assert_eq!(d.batch_dimension_count, 2);
    assert_eq!(d.indices_tensor.desc.strides.as_ref().unwrap()[1], 0);
    // GATHER_ND1 starts at 3.0.
    let e = lower_src(
        "gather(a, idx, axis=1, batch_dims=1, mode=error)",
        &[("a", DType::I8, &[2, 3, 4]), ("idx", DType::U32, &[2, 3])],
        &level("2.1"),
    )
    .unwrap_err();
    assert!(matches!(e, DmlError::FeatureLevel { needs: FeatureLevel::L3_0, .. }), "{e:?}");
}

#[test]
fn a_view_feeding_a_gather_folds_or_becomes_a_slice1_node() {
    let idx = Tensor::from_i64s(DType::I64, &[3], &[1, 0, 2]).unwrap();
    let a = arange(DType::F32, &[4, 4]);
    // Row 1 starts at byte 16: the binding offset carries it, strides the step.
    let g = agree("a[1:, ::2][idx]", &[("a", a.clone()), ("idx", idx.clone())], &DmlOptions::default());
    assert_eq!(g.graph().node_count, 1);
    assert_eq!(g.input_bindings[0].offset, 16);
    let OperatorFields::Gather(d) = ops(&g)[0] else { panic!() };
    assert_eq!(d.input_tensor.desc.strides.as_deref(), Some(&[4, 2][..]));
    // A reversed view cannot be a description (strides are unsigned): SLICE1 + intermediate.
    let g = agree("a[::-1][idx]", &[("a", a.clone()), ("idx", idx.clone())], &DmlOptions::default());
    assert_eq!(g.graph().node_count, 2);
    assert_eq!(g.graph().intermediate_edge_count, 1);
    assert!(matches!(ops(&g)[..], [OperatorFields::Slice1(_), OperatorFields::Gather(_)]));
    // So does an offset that is not a multiple of 16 bytes.
    let g = agree("a[:, 1:][idx]", &[("a", a), ("idx", idx)], &DmlOptions::default());
    assert_eq!(g.graph().node_count, 2);
}

#[test]
fn several_gathered_axes_form_a_graph() {
    let idx = Tensor::from_i64s(DType::I64, &[2], &[2, -1]).unwrap();
    let g = agree(
        "a[idx][..., idx]",
        &[("a", arange(DType::U16, &[3, 4])), ("idx", idx.clone())],
        &DmlOptions::default(),
    );
    assert!(g.graph().node_count >= 2 && g.graph().intermediate_edge_count >= 1);
    // A gather of a gather: the inner one computes the indices.
    let g = agree("a[idx[idx]]", &[("a", arange(DType::U16, &[3, 4])), ("idx", idx)], &DmlOptions::default());
    assert!(g.graph().node_count >= 2);
}

#[test]
fn constant_chains_of_gathers_are_one_operator() {
    // a[[3, 1, 4]][[2, 0]] is a[[4, 3]]: the composite index is computed when slc compiles.
    let a = arange(DType::F32, &[20, 12]);
    for fl in ["1.0", "5.0"] {
        let g = agree("a[[3, 1, 4]][[2, 0]]", &[("a", a.clone())], &level(fl));
        let [OperatorFields::Gather(d)] = ops(&g)[..] else { panic!("{fl}: {:?}", ops(&g)) };
        assert_eq!(g.constants[0].values, [4, 3], "{fl}");
        assert_eq!(d.output_tensor.desc.sizes.iter().product::<u32>(), 24, "{fl}");
        assert!(g.notes.is_empty(), "{fl}: {:?}", g.notes);
        // Gathers along two axes: one GATHER of element offsets, whatever the level.
        let g = agree("a[[3, 1, 4]][:, [2, 0]]", &[("a", a.clone())], &level(fl));
        assert!(matches!(ops(&g)[..], [OperatorFields::Gather(_)]), "{fl}: {:?}", ops(&g));
        assert_eq!(g.constants[0].values, [38, 36, 14, 12, 50, 48], "{fl}");
        assert_eq!(g.graph().intermediate_edge_count, 0);
    }
    // A view no tensor description can express (reversed, unaligned) costs no SLICE1 either.
    for src in [
        "a[::-1][[0, 2]]",
        "a[:, 1:][[0, 2]]",
        "a[:, ::-1][[3, 1], 1:][:, [2, 0]]",
        "a[[1, 2]][[-1]][:, 3:5]",
    ] {
        let g = agree(src, &[("a", a.clone())], &DmlOptions::default());
        assert_eq!(g.graph().node_count, 1, "{src}: {:?}", ops(&g));
    }
    // Indices out of range are refused as before: zero fill has no DirectML form.
    let e = lower_src(
        "a[[3, 1]][gather([0, 1], [5], axis=0, mode=zero)]",
        &[("a", DType::F32, &[20, 12])],
        &level("5.0"),
    );
    assert!(matches!(e, Err(DmlError::OobPolicy { mode: OobMode::Zero, .. })), "{e:?}");
}

#[test]
fn random_constant_chains_are_one_operator_at_every_level() {
    // Chains of constant gathers and views over f32[d0, d1, d2]: lowered at 1.0, 3.0 and 5.0,
    // each is one operator (a view alone is a SLICE1, which 1.0 lacks), equal to the interpreter.
    let mut rng = Rng::new(0x5eed_c0de);
    let mut next = |n: u64| rng.below(n);
    let mut gathered = 0;
    for _ in 0..600 {
        let dims: Vec<usize> = (0..3).map(|_| 1 + next(4) as usize).collect();
        let mut src = "a".to_string();
        for _ in 0..1 + next(3) {
            let item = match next(5) {
                0 => "::-1".to_string(),
                1 => "1:".to_string(),
                2 => "::2".to_string(),
                _ => {
                    let values: Vec<String> =
                        (0..1 + next(3)).map(|_| (next(5) as i64 - 2).to_string()).collect();
                    format!("[{}]", values.join(", "))
                }
            };
            src += &if next(2) == 0 { format!("[{item}]") } else { format!("[:, {item}]") };
        }
        let a = arange(DType::F32, &dims);
        let shape: Vec<i64> = dims.iter().map(|&d| d as i64).collect();
        let Ok(compiled) = slc::compile(&src, &types(&[("a", DType::F32, &shape)])) else { continue };
        if compiled.plan.shape.iter().product::<i64>() == 0 {
            continue;
        }
        let gathers = !compiled.plan.output.terms.is_empty();
        gathered += usize::from(gathers);
        for fl in ["1.0", "3.0", "5.0"] {
            if fl == "1.0" && !gathers {
                continue; // SLICE1 starts at 2.1
            }
            let g = agree(&src, &[("a", a.clone())], &level(fl));
            assert_eq!(g.graph().node_count, 1, "{src} at {fl}: {:?}", ops(&g));
        }
    }
    assert!(gathered >= 150, "only {gathered} chains gather");
}

#[test]
fn run_time_chains_keep_a_small_graph_and_say_why() {
    let a = arange(DType::F32, &[20, 12]);
    let i = Tensor::from_i64s(DType::I64, &[20], &(0..20).map(|v| (v * 7) % 20).collect::<Vec<_>>()).unwrap();
    let j = Tensor::from_i64s(DType::I64, &[1], &[-3]).unwrap();
    // a[i][j] is a[i[j]]: i[j] first (one element), then one gather of a; no 240-element
    // intermediate keeps a's gathered axis whole.
    let g = agree("a[i][j]", &[("a", a.clone()), ("i", i.clone()), ("j", j.clone())], &level("5.0"));
    assert!(matches!(ops(&g)[..], [OperatorFields::Gather(_), OperatorFields::Gather(_)]), "{:?}", ops(&g));
    let OperatorFields::Gather(inner) = ops(&g)[0] else { panic!() };
    assert_eq!(inner.output_tensor.desc.sizes.iter().product::<u32>(), 1);
    assert_eq!(g.graph().intermediate_edge_count, 1);
    assert!(
        g.notes[0].contains("a graph of 2 operators: the indices of a gather are gathered themselves"),
        "{:?}",
        g.notes
    );
    // A bad index still fails as on the CPU.
    let bad = Tensor::from_i64s(DType::I64, &[1], &[20]).unwrap();
    agree("a[i][j]", &[("a", a.clone()), ("i", i.clone()), ("j", bad)], &level("5.0"));
    // Two gathered axes with run-time indices: one operator each.
    let k = Tensor::from_i64s(DType::I64, &[3], &[11, 0, -1]).unwrap();
    let g = agree("a[j][:, k]", &[("a", a.clone()), ("j", j), ("k", k)], &level("5.0"));
    assert_eq!(g.graph().node_count, 2);
    assert!(g.notes[0].contains("several axes"), "{:?}", g.notes);
    let g = agree("a[::-1][i]", &[("a", a), ("i", i)], &level("5.0"));
    assert!(g.notes[0].contains("a SLICE1 copies it first"), "{:?}", g.notes);
    // The command line's output says it too, in the JSON and in the C.
    let out = Command::new(env!("CARGO_BIN_EXE_slc"))
        .args([
            "compile",
            "a[i][j]",
            "--shape",
            "a=f32[20,12]",
            "--shape",
            "i=i64[20]",
            "--shape",
            "j=i64[1]",
        ])
        .args(["--target", "dml", "--format", "c"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let c = String::from_utf8_lossy(&out.stdout);
    assert!(c.contains("/* Note: a graph of 2 operators: the indices of a gather"), "{c}");
}

#[test]
fn below_feature_level_2_1_a_program_is_one_operator_without_a_graph() {
    // DirectML has no graph API before 2.1 (directml.h: DML_TARGET_VERSION >= 0x2100).
    let i = Tensor::from_i64s(DType::U32, &[3], &[19, 0, 7]).unwrap();
    let g = agree(
        "gather(a, i, axis=1, mode=error)",
        &[("a", arange(DType::F32, &[2, 20])), ("i", i)],
        &level("1.0"),
    );
    assert_eq!(g.graph().node_count, 1);
    // The JSON holds the one operator for IDMLDevice::CompileOperator, and no DML_GRAPH_DESC;
    // inputs bind in the operator's order (data, then indices).
    let v: Value = serde_json::from_str(&g.to_json()).unwrap();
    assert!(v.get("GraphDesc").is_none(), "{}", g.to_json());
    assert_eq!(v["OperatorDesc"]["Type"]["Name"], "DML_OPERATOR_GATHER");
    let sources: Vec<_> = g.input_bindings.iter().map(|b| b.source.clone()).collect();
    assert_eq!(sources, [BindingSource::Input(0), BindingSource::Input(1)]);
    assert_eq!(DmlGraph::from_json(&g.to_json()).unwrap(), g);
    assert!(!g.to_c().contains("DML_GRAPH_DESC"), "{}", g.to_c());
    // The emulator holds a graph below 2.1 invalid, as DirectML would have no way to compile it.
    let mut with_graph = g.clone();
    with_graph.graph_desc = Some(g.graph().into_owned());
    with_graph.operator_desc = None;
    let run = emulate(
        &with_graph,
        &[&arange(DType::F32, &[2, 20]), &Tensor::from_i64s(DType::U32, &[3], &[19, 0, 7]).unwrap()],
    );
    assert!(matches!(&run, Err(EmulateError::Invalid(m)) if m.contains("graph API")), "{run:?}");
    // Its C compiles against the header at the version of its level: no graph, no feature level.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("dml", "levels");
    let compile_c = |name: &str, c: &str, version: &str| {
        let file = dir.join(format!("{name}.c"));
        std::fs::write(&file, c).unwrap();
        Command::new("gcc")
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c"])
            .arg(format!("-DDML_TARGET_VERSION={version}"))
            .arg("-I")
            .arg(root.join("tests/dml/include"))
            .arg(&file)
            .arg("-o")
            .arg(dir.join(format!("{name}.o")))
            .output()
            .expect("gcc runs")
    };
    for version in ["0x1000", "0x2000", "0x2100", "0x5000"] {
        let out = compile_c("gather", &g.to_c(), version);
        assert!(out.status.success(), "{version}: {}\n{}", String::from_utf8_lossy(&out.stderr), g.to_c());
    }
    // The header's guards catch C that uses the graph below 0x2100.
    let out = compile_c("graph", "#include <DirectML.h>\nDML_GRAPH_DESC g;\n", "0x1000");
    assert!(!out.status.success());
    // A program that needs two operators is refused below 2.1, naming the level that has graphs.
    let decls = [("a", DType::F32, &[4, 5][..]), ("i", DType::U32, &[2][..]), ("j", DType::U32, &[3][..])];
    for fl in ["1.0", "2.0"] {
        let e = lower_src("a[i][:, j]", &decls, &level(fl)).unwrap_err();
        assert!(matches!(e, DmlError::Graph { nodes: 2, needs: FeatureLevel::L2_1, .. }), "{fl}: {e:?}");
        let d = slc::diag::IntoDiagnostic::into_diagnostic(e);
        assert_eq!(d.code, "E0401");
        assert!(d.message.contains("from feature level 2.1"), "{}", d.message);
        assert_eq!(d.help.as_deref(), Some("choose --feature-level 2.1 or higher"));
        assert!(d.notes[0].contains("several axes"), "{:?}", d.notes);
    }
    let g = lower_src("a[i][:, j]", &decls, &level("2.1")).unwrap();
    assert_eq!(g.graph().node_count, 2);
    // The graph of a 2.1 program is there from 0x2100 on, and left out below as directml.h leaves
    // out what it would need.
    assert!(g.to_c().contains("#if DML_TARGET_VERSION >= 0x2100"));
    for version in ["0x1000", "0x2100"] {
        let out = compile_c("graph21", &g.to_c(), version);
        assert!(out.status.success(), "{version}: {}", String::from_utf8_lossy(&out.stderr));
    }
    let out = Command::new(env!("CARGO_BIN_EXE_slc"))
        .args([
            "compile",
            "a[i][:, j]",
            "--shape",
            "a=f32[4,5]",
            "--shape",
            "i=u32[2]",
            "--shape",
            "j=u32[3]",
        ])
        .args(["--target", "dml", "--feature-level", "1.0"])
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("E0401") && stderr.contains("which DirectML has from feature level 2.1"),
        "{stderr}"
    );
    assert!(stderr.contains("Help: choose --feature-level 2.1 or higher"), "{stderr}");
    assert!(stderr.contains("Note: one operator is not enough: gathers along several axes"), "{stderr}");
}

#[test]
fn out_of_range_policies_are_honoured_or_refused() {
    let a = arange(DType::F32, &[3, 4]);
    // Constant indices are normalized on the host, whatever the mode.
    for mode in ["zero", "error", "clamp", "wrap"] {
        let src = format!("gather(a, [2, -1, 0], axis=1, mode={mode})");
        let g = agree(&src, &[("a", a.clone())], &DmlOptions::default());
        // clamp clips -1 to 0 (np.take's "clip"); the others wrap it once.
        let want = if mode == "clamp" { [2, 0, 0] } else { [2, 3, 0] };
        assert_eq!(g.constants[0].values, want, "{mode}");
        assert_eq!(g.constants[0].data_type, DataType::Uint32);
    }
    let g = agree("gather(a, [9, -7], axis=1, mode=clamp)", &[("a", a.clone())], &DmlOptions::default());
    assert_eq!(g.constants[0].values, [3, 0]);
    let g = agree("gather(a, [9, -7], axis=1, mode=wrap)", &[("a", a.clone())], &DmlOptions::default());
    assert_eq!(g.constants[0].values, [1, 1]);
    // A zero fill DirectML cannot produce.
    let e =
        lower_src("gather(a, [9], axis=1, mode=zero)", &[("a", DType::F32, &[3, 4])], &DmlOptions::default());
    assert!(matches!(e, Err(DmlError::OobPolicy { mode: OobMode::Zero, .. })), "{e:?}");
    // Dynamic indices: error mode is checked on the host; the others are refused.
    for mode in ["zero", "clamp", "wrap"] {
        let src = format!("gather(a, idx, axis=0, mode={mode})");
        let e =
            lower_src(&src, &[("a", DType::F32, &[3, 4]), ("idx", DType::I64, &[2])], &DmlOptions::default());
        let Err(e) = e else { panic!("{mode} accepted") };
        assert_eq!(slc::diag::IntoDiagnostic::into_diagnostic(e).code, "E0405");
    }
    // Without a plan check (gather's error mode checks only what it reads), a guard is added.
    let idx = Tensor::from_i64s(DType::I64, &[2], &[1, 5]).unwrap();
    let g =
        agree("gather(a, idx[:1], axis=0, mode=error)", &[("a", a), ("idx", idx)], &DmlOptions::default());
    assert!(!g.host_checks.is_empty());
}

#[test]
fn data_types_per_feature_level() {
    let d = |g: &DmlGraph| slice1(g, 0).input_tensor.desc.clone();
    // 64-bit: native from 4.1; below, pairs of UINT32 with a trailing dimension of 2.
    let g = agree("a[::-1]", &[("a", arange(DType::I64, &[3]))], &level("4.1"));
    assert_eq!(d(&g).data_type, DataType::Int64);
    let g = agree("a[::-1]", &[("a", arange(DType::I64, &[3]))], &level("3.0"));
    assert_eq!(d(&g).data_type, DataType::Uint32);
    assert_eq!(d(&g).sizes, [3, 2]);
    assert_eq!(d(&g).strides.as_deref(), Some(&[2, 1][..]));
    let g = agree("a[::-1]", &[("a", fill(DType::F64, &[3], 7))], &level("3.0"));
    assert_eq!(d(&g).data_type, DataType::Uint32);
    // bool moves as UINT8, bf16 as UINT16 (bits only).
    let g = agree("a[1:]", &[("a", fill(DType::Bool, &[3], 1))], &DmlOptions::default());
    assert_eq!(d(&g).data_type, DataType::Uint8);
    let g = agree("a[1:]", &[("a", fill(DType::BF16, &[3], 1))], &DmlOptions::default());
    assert_eq!(d(&g).data_type, DataType::Uint16);
    // GATHER_ND1 has no 64-bit types at any level: pairs. (The trailing data dimension keeps
    // this gather from being element-wise, which would be a GATHER_ELEMENTS.)
    let idx = Tensor::from_i64s(DType::I32, &[2, 1], &[1, 0]).unwrap();
    let g = agree(
        "gather(a, idx, axis=1, batch_dims=1, mode=error)",
        &[("a", fill(DType::F64, &[2, 3, 2], 3)), ("idx", idx)],
        &level("5.0"),
    );
    let OperatorFields::GatherNd1(n) = ops(&g)[0] else { panic!() };
    assert_eq!(n.input_tensor.desc.data_type, DataType::Uint32);
    // Index types: 32/64-bit only, and only UINT32 below 3.0.
    let e = lower_src("a[idx]", &[("a", DType::F32, &[3]), ("idx", DType::I8, &[2])], &DmlOptions::default());
    assert!(matches!(e, Err(DmlError::IndexType { dtype: DType::I8, .. })), "{e:?}");
    let e = lower_src("a[idx]", &[("a", DType::F32, &[3]), ("idx", DType::I32, &[2])], &level("2.1"));
    assert!(matches!(e, Err(DmlError::IndexType { .. })), "{e:?}");
    let idx = Tensor::from_i64s(DType::U32, &[2], &[2, 0]).unwrap();
    agree("a[idx]", &[("a", arange(DType::F32, &[3])), ("idx", idx)], &level("2.1"));
}

// ---------------------------------------------------------------------------------------------
// JSON and C

/// The object has exactly these fields.
fn assert_keys(o: &serde_json::Map<String, Value>, want: &[&str]) {
    let mut got: Vec<&str> = o.keys().map(|k| k.as_str()).collect();
    let mut want = want.to_vec();
    got.sort_unstable();
    want.sort_unstable();
    assert_eq!(got, want);
}

#[test]
fn json_mirrors_directml_h() {
    let idx = Tensor::from_i64s(DType::I64, &[2], &[0, 1]).unwrap();
    let g =
        agree("a[::-1][idx]", &[("a", arange(DType::F32, &[3, 4])), ("idx", idx)], &DmlOptions::default());
    let json = g.to_json();
    let v: Value = serde_json::from_str(&json).unwrap();
    assert_eq!(v["FeatureLevel"], serde_json::json!({"Name": "DML_FEATURE_LEVEL_5_0", "Value": 0x5000}));
    let gd = &v["GraphDesc"];
    for field in [
        "InputCount",
        "OutputCount",
        "NodeCount",
        "Nodes",
        "InputEdgeCount",
        "InputEdges",
        "OutputEdgeCount",
        "OutputEdges",
        "IntermediateEdgeCount",
        "IntermediateEdges",
    ] {
        assert!(gd.get(field).is_some(), "{field}");
    }
    let node = &gd["Nodes"][0];
    assert_eq!(node["Type"], serde_json::json!({"Name": "DML_GRAPH_NODE_TYPE_OPERATOR", "Value": 1}));
    let op = &node["Desc"]["Operator"];
    assert_eq!(op["Type"], serde_json::json!({"Name": "DML_OPERATOR_SLICE1", "Value": 111}));
    let desc = op["Desc"].as_object().unwrap();
    assert_keys(
        desc,
        &[
            "InputTensor",
            "OutputTensor",
            "DimensionCount",
            "InputWindowOffsets",
            "InputWindowSizes",
            "InputWindowStrides",
        ],
    );
    let t = &desc["InputTensor"];
    assert_eq!(t["Type"], serde_json::json!({"Name": "DML_TENSOR_TYPE_BUFFER", "Value": 1}));
    assert_keys(
        t["Desc"].as_object().unwrap(),
        &[
            "DataType",
            "Flags",
            "DimensionCount",
            "Sizes",
            "Strides",
            "TotalTensorSizeInBytes",
            "GuaranteedBaseOffsetAlignment",
        ],
    );
    assert_eq!(
        t["Desc"]["DataType"],
        serde_json::json!({"Name": "DML_TENSOR_DATA_TYPE_FLOAT32", "Value": 1})
    );
    let gather = &gd["Nodes"][1]["Desc"]["Operator"];
    assert_eq!(gather["Type"], serde_json::json!({"Name": "DML_OPERATOR_GATHER", "Value": 67}));
    assert_keys(
        gather["Desc"].as_object().unwrap(),
        &["InputTensor", "IndicesTensor", "OutputTensor", "Axis", "IndexDimensions"],
    );
    let edge = &gd["IntermediateEdges"][0];
    assert_eq!(edge["Type"], serde_json::json!({"Name": "DML_GRAPH_EDGE_TYPE_INTERMEDIATE", "Value": 3}));
    assert_keys(
        edge["Desc"].as_object().unwrap(),
        &["FromNodeIndex", "FromNodeOutputIndex", "ToNodeIndex", "ToNodeInputIndex", "Name"],
    );
    // The text keeps directml.h's field order.
    let at = |k: &str| json.find(&format!("\"{k}\"")).unwrap();
    assert!(at("InputTensor") < at("OutputTensor") && at("OutputTensor") < at("InputWindowOffsets"));
    assert!(at("DataType") < at("Flags") && at("Sizes") < at("TotalTensorSizeInBytes"));
    assert!(
        v["InputBindings"][0].get("Offset").is_some() && v["InputBindings"][0].get("SizeInBytes").is_some()
    );
    // Round trip, and a name that disagrees with its value is rejected.
    assert_eq!(DmlGraph::from_json(&json).unwrap(), g);
    let bad = json.replacen("\"Value\": 111", "\"Value\": 60", 1);
    assert!(DmlGraph::from_json(&bad).is_err());
}

#[test]
fn enum_values_match_directml_h() {
    let ops = [
        (OperatorType::Gather, 67),
        (OperatorType::GatherElements, 107),
        (OperatorType::Slice1, 111),
        (OperatorType::GatherNd1, 140),
        (OperatorType::Scatter, 94),
        (OperatorType::ScatterNd, 109),
    ];
    for (op, v) in ops {
        assert_eq!(op.value(), v, "{}", op.name());
    }
    let names = [
        "FLOAT32", "FLOAT16", "UINT32", "UINT16", "UINT8", "INT32", "INT16", "INT8", "FLOAT64", "UINT64",
        "INT64",
    ];
    for (i, n) in names.iter().enumerate() {
        let t = DataType::from_name(&format!("DML_TENSOR_DATA_TYPE_{n}")).unwrap();
        assert_eq!(t.value(), i as u32 + 1);
    }
    for (s, v) in [("1.0", 0x1000), ("2.1", 0x2100), ("3.0", 0x3000), ("4.1", 0x4100), ("5.0", 0x5000)] {
        assert_eq!(FeatureLevel::parse(s).unwrap().value(), v);
    }
    assert!(FeatureLevel::parse("4.2").is_none() && FeatureLevel::parse("x").is_none());
}

/// The line format `tests/dml/walk.c` prints, derived from the model.
fn walk_lines(g: &DmlGraph) -> String {
    let mut out = format!(
        "level {} nodes {} inputs {} outputs {}\n",
        g.feature_level.value(),
        g.graph().node_count,
        g.graph().input_count,
        g.graph().output_count
    );
    let list = |name: &str, v: Option<Vec<String>>| match v {
        Some(v) => format!(" {name} {}", v.join(" ")).trim_end().to_string(),
        None => format!(" {name} null"),
    };
    let tensor = |name: &str, t: &TensorDesc| {
        let d = &t.desc;
        format!(
            "  {name} type {} data {} flags {} dims {}{}{} total {} align {}\n",
            t.r#type.value(),
            d.data_type.value(),
            d.flags.value(),
            d.dimension_count,
            list("sizes", Some(d.sizes.iter().map(|v| v.to_string()).collect())),
            list("strides", d.strides.as_ref().map(|s| s.iter().map(|v| v.to_string()).collect())),
            d.total_tensor_size_in_bytes,
            d.guaranteed_base_offset_alignment
        )
    };
    let s = |v: &[u32]| v.iter().map(|x| x.to_string()).collect::<Vec<_>>();
    for (n, node) in g.graph().nodes.iter().enumerate() {
        let op = &node.desc.operator;
        out += &format!("node {n} op {}\n", op.r#type.value());
        match &op.desc {
            OperatorFields::Slice1(d) => {
                out += &tensor("InputTensor", &d.input_tensor);
                out += &tensor("OutputTensor", &d.output_tensor);
                out += &format!(
                    "  window dims {}{}{} strides {}\n",
                    d.dimension_count,
                    list("offsets", Some(s(&d.input_window_offsets))),
                    list("sizes", Some(s(&d.input_window_sizes))),
                    d.input_window_strides.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(" ")
                );
            }
            OperatorFields::Gather(d) => {
                out += &tensor("InputTensor", &d.input_tensor);
                out += &tensor("IndicesTensor", &d.indices_tensor);
                out += &tensor("OutputTensor", &d.output_tensor);
                out += &format!("  axis {} indexdims {}\n", d.axis, d.index_dimensions);
            }
            OperatorFields::GatherElements(d) => {
                out += &tensor("InputTensor", &d.input_tensor);
                out += &tensor("IndicesTensor", &d.indices_tensor);
                out += &tensor("OutputTensor", &d.output_tensor);
                out += &format!("  axis {}\n", d.axis);
            }
            OperatorFields::GatherNd1(d) => {
                out += &tensor("InputTensor", &d.input_tensor);
                out += &tensor("IndicesTensor", &d.indices_tensor);
                out += &tensor("OutputTensor", &d.output_tensor);
                out += &format!(
                    "  counts {} {} {}\n",
                    d.input_dimension_count, d.indices_dimension_count, d.batch_dimension_count
                );
            }
            OperatorFields::Scatter(d) => {
                out += &tensor("InputTensor", &d.input_tensor);
                out += &tensor("IndicesTensor", &d.indices_tensor);
                out += &tensor("UpdatesTensor", &d.updates_tensor);
                out += &tensor("OutputTensor", &d.output_tensor);
                out += &format!("  axis {}\n", d.axis);
            }
            OperatorFields::ScatterNd(d) => {
                out += &tensor("InputTensor", &d.input_tensor);
                out += &tensor("IndicesTensor", &d.indices_tensor);
                out += &tensor("UpdatesTensor", &d.updates_tensor);
                out += &tensor("OutputTensor", &d.output_tensor);
                out += &format!("  counts {} {}\n", d.input_dimension_count, d.indices_dimension_count);
            }
        }
    }
    for e in &g.graph().input_edges {
        let d = &e.desc;
        let b = &g.input_bindings[d.graph_input_index as usize];
        out += &format!(
            "input {} {} {} {} {} offset {} size {}\n",
            e.r#type.value(),
            d.graph_input_index,
            d.to_node_index,
            d.to_node_input_index,
            d.name,
            b.offset,
            b.size_in_bytes
        );
    }
    for e in &g.graph().intermediate_edges {
        let d = &e.desc;
        out += &format!(
            "intermediate {} {} {} {} {}\n",
            e.r#type.value(),
            d.from_node_index,
            d.from_node_output_index,
            d.to_node_index,
            d.to_node_input_index
        );
    }
    for e in &g.graph().output_edges {
        let d = &e.desc;
        out += &format!(
            "output {} {} {} {}\n",
            e.r#type.value(),
            d.from_node_index,
            d.from_node_output_index,
            d.graph_output_index
        );
    }
    out
}

#[test]
fn c_output_compiles_with_gcc_and_describes_the_json_graph() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let include = root.join("tests/dml/include");
    let dir = scratch("dml", "c");
    type Case<'a> = (&'a str, Vec<(&'a str, DType, &'a [i64])>, &'a str);
    let cases: Vec<Case> = vec![
        ("a[1:, ::-1]", vec![("a", DType::F32, &[3, 4])], "5.0"),
        ("a[1, newaxis, ::-2]", vec![("a", DType::I64, &[3, 4])], "3.0"),
        ("a[1:]", vec![("a", DType::F16, &[5])], "2.1"),
        ("a[::-1][idx]", vec![("a", DType::F32, &[3, 4]), ("idx", DType::I64, &[2])], "5.0"),
        (
            "gather(a, idx, axis=1, batch_dims=1, mode=error)",
            vec![("a", DType::U8, &[2, 3, 4]), ("idx", DType::I32, &[2, 5])],
            "4.1",
        ),
        ("gather(a, [2, 0], axis=1, mode=zero)", vec![("a", DType::BF16, &[2, 3])], "5.0"),
        ("a[2:2]", vec![("a", DType::F32, &[4])], "5.0"),
        (
            "gather_elements(a, idx, axis=1)",
            vec![("a", DType::F64, &[2, 3]), ("idx", DType::I64, &[2, 4])],
            "3.0",
        ),
        ("gather_nd(a, idx)", vec![("a", DType::I16, &[3, 4, 2]), ("idx", DType::I32, &[5, 2])], "4.1"),
        // Stores: a SCATTER_ND (64-bit data as UINT32 pairs, a constant value's bits) and a
        // SCATTER over run-time indices whose value every collision shares.
        ("scatter_nd(a, [[1, 0], [0, 2]], [3, -2])", vec![("a", DType::F64, &[2, 3])], "3.0"),
        (
            "a[:, i] = v",
            vec![("a", DType::F16, &[3, 4]), ("i", DType::I32, &[2]), ("v", DType::F16, &[3, 1])],
            "5.0",
        ),
    ];
    for (i, (src, decls, fl)) in cases.iter().enumerate() {
        let g = lower_src(src, decls, &level(fl)).unwrap();
        let c = dir.join(format!("g{i}.c"));
        std::fs::write(&c, g.to_c()).unwrap();
        let exe = dir.join(format!("g{i}"));
        let out = Command::new("gcc")
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
            .arg(&include)
            .arg(&c)
            .arg(root.join("tests/dml/walk.c"))
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("gcc runs");
        assert!(out.status.success(), "{src}: {}\n{}", String::from_utf8_lossy(&out.stderr), g.to_c());
        let run = Command::new(&exe).output().unwrap();
        assert!(run.status.success());
        assert_eq!(String::from_utf8_lossy(&run.stdout), walk_lines(&g), "{src}");
    }
}

/// What the host checks report, in the line format of the C driver below: the status of
/// `<prefix>_check_indices`, and for a failed plan check its number, the index, axis and length.
fn host_check_line(result: &Result<Tensor, EmulateError>) -> String {
    match result {
        Ok(_) => "0".into(),
        Err(EmulateError::Runtime(RuntimeError::IndexOutOfBounds { check, index, axis, len, .. })) => {
            format!("1 {check} {index} {axis} {len}")
        }
        Err(EmulateError::Runtime(RuntimeError::GatherOutOfRange)) => "2".into(),
        Err(EmulateError::Runtime(RuntimeError::EmptyAxis)) => "3".into(),
        Err(EmulateError::Runtime(RuntimeError::OutOfBuffer { .. })) => "4".into(),
        Err(e) => panic!("not a host check's result: {e}"),
    }
}

/// `values` in `dtype`, truncated to its width (two's complement), so any bit pattern (a UINT64
/// of 2^63 or more, a negative INT8) can be drawn.
fn int_tensor(dtype: DType, shape: &[usize], values: &[i64]) -> Tensor {
    let w = dtype.width();
    let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()[..w].to_vec()).collect();
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

/// A C array of 64-bit words holding `bytes` (little-endian, as slc's tensors and the hosts it
/// runs on), so that any element type read from it is aligned.
fn c_words(name: &str, bytes: &[u8]) -> String {
    let mut words: Vec<String> = bytes
        .chunks(8)
        .map(|c| {
            let mut w = [0u8; 8];
            w[..c.len()].copy_from_slice(c);
            format!("{}ULL", u64::from_le_bytes(w))
        })
        .collect();
    if words.is_empty() {
        words.push("0ULL".into());
    }
    format!("static const unsigned long long {name}[{}] = {{{}}};", words.len(), words.join(", "))
}

#[test]
fn c_host_checks_agree_with_the_emulator_and_the_interpreter() {
    type Case<'a> = (&'a str, Vec<(&'a str, DType, &'a [i64])>);
    let cases: Vec<Case> = vec![
        // Plan checks over an input, of the index types DirectML gathers take, and of a scalar.
        ("a[idx]", vec![("a", DType::F32, &[3, 4]), ("idx", DType::I64, &[2])]),
        ("a[idx]", vec![("a", DType::F32, &[3, 4]), ("idx", DType::U64, &[2, 2])]),
        ("a[1:, idx][:, ::-1]", vec![("a", DType::F16, &[3, 4]), ("idx", DType::U32, &[3])]),
        ("a[idx]", vec![("a", DType::U8, &[5]), ("idx", DType::I32, &[])]),
        // A guard: gather's error mode checks only the indices it reads.
        (
            "gather(a, idx[:1], axis=0, mode=error)",
            vec![("a", DType::F32, &[3, 4]), ("idx", DType::I64, &[2])],
        ),
        // Gathered indices: nested error-mode terms, and constant terms in wrap and clamp mode.
        (
            "a[idx[k]]",
            vec![("a", DType::F32, &[4, 5]), ("idx", DType::I32, &[5]), ("k", DType::U32, &[2, 3])],
        ),
        (
            "a[gather(idx, [0, 9, -1], axis=0, mode=wrap)]",
            vec![("a", DType::F32, &[6]), ("idx", DType::I32, &[4])],
        ),
        (
            "a[gather(idx, [0, 9, -9], axis=0, mode=clamp)]",
            vec![("a", DType::I64, &[6]), ("idx", DType::I64, &[4])],
        ),
        (
            "gather(a, idx, axis=1, batch_dims=1, mode=error)",
            vec![("a", DType::U8, &[2, 3, 4]), ("idx", DType::I32, &[2, 5])],
        ),
    ];
    const TRIALS: i64 = 12;
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("dml", "checks");
    let mut r = Rng::new(0xc0de_c4ec);
    let mut driver = String::from("#include <stdio.h>\n");
    let mut body = String::new();
    let mut want = String::new();
    // Each graph's label, by its number (the C prefix is `k<number>`).
    let mut labels: Vec<String> = vec![];
    for (src, decls) in &cases {
        let g = lower_src(src, decls, &DmlOptions::default()).unwrap();
        assert!(!g.host_checks.is_empty(), "{src}: no host checks");
        // Also the guards alone: plan checks fail first in a whole graph, and the C must agree
        // with the emulator on any HostChecks list.
        let mut guards = g.clone();
        guards.host_checks.retain(|c| c.kind == HostCheckKind::Guard);
        let mut variants = vec![(src.to_string(), g.clone())];
        if !guards.host_checks.is_empty() && guards.host_checks.len() < g.host_checks.len() {
            variants.push((format!("{src} (guards only)"), guards));
        }
        let first = labels.len();
        for (label, g) in &variants {
            let prefix = format!("k{}", labels.len());
            let c = g.to_c_named(&prefix);
            assert!(c.contains(&format!("int {prefix}_check_indices(")), "{label}");
            std::fs::write(dir.join(format!("{prefix}.c")), &c).unwrap();
            driver += &format!("#include \"{prefix}.c\"\n");
            labels.push(label.clone());
        }
        let compiled = slc::compile(src, &types(decls)).unwrap();
        for trial in 0..TRIALS {
            // Trial 0 in range everywhere, then ever wider values, then each type's extremes.
            let draw = |r: &mut Rng| match trial {
                0 => r.range(0, 3),
                t if t == TRIALS - 1 => *r.pick(&[i64::MIN, i64::MAX, -1]),
                t => r.range(-t, t + 1),
            };
            let tensors: Vec<Tensor> = compiled
                .plan
                .inputs
                .iter()
                .map(|d| {
                    let shape: Vec<usize> = d.shape.iter().map(|&n| n as usize).collect();
                    if d.dtype.is_integer() {
                        let n: usize = shape.iter().product();
                        int_tensor(d.dtype, &shape, &(0..n).map(|_| draw(&mut r)).collect::<Vec<_>>())
                    } else {
                        arange(d.dtype, &shape)
                    }
                })
                .collect();
            let args: Vec<&Tensor> = tensors.iter().collect();
            let want_interp = interp::run(&compiled.plan, &args);
            for (v, (_, g)) in variants.iter().enumerate() {
                let n = first + v;
                let emulated = emulate(g, &args);
                if v == 0 {
                    match (&want_interp, &emulated) {
                        (Ok(a), Ok(b)) => assert_eq!(a, b, "{src}"),
                        (Err(a), Err(EmulateError::Runtime(b))) => {
                            assert_eq!(a, &b.clone().located(&compiled.plan), "{src}")
                        }
                        (a, b) => panic!("{src}: interpreter {a:?}, emulator {b:?}"),
                    }
                }
                want += &format!("{n} {trial} {}\n", host_check_line(&emulated));
                body += "    {\n";
                let mut names = vec![];
                for (k, t) in tensors.iter().enumerate() {
                    body += &format!("        {}\n", c_words(&format!("in{k}"), t.bytes()));
                    names.push(format!("in{k}"));
                }
                body += &format!(
                    "        const void *inputs[] = {{{}}};\n        k{n}_check_failure f;\n        \
                     int s = k{n}_check_indices(inputs, &f);\n        report({n}, {trial}, s, f.plan_check, \
                     f.index, f.index_is_unsigned, f.axis, f.len);\n    }}\n",
                    names.join(", ")
                );
            }
        }
    }
    driver += "static void report(int c, int t, int s, int check, long long index, int is_unsigned, unsigned axis, long long len) {\n\
        \x20   printf(\"%d %d %d\", c, t, s);\n\
        \x20   if (s == 1) {\n\
        \x20       if (is_unsigned) printf(\" %d %llu\", check, (unsigned long long)index);\n\
        \x20       else printf(\" %d %lld\", check, index);\n\
        \x20       printf(\" %u %lld\", axis, len);\n\
        \x20   }\n\
        \x20   printf(\"\\n\");\n\
        }\n\nint main(void) {\n";
    driver += &body;
    driver += "    return 0;\n}\n";
    std::fs::write(dir.join("main.c"), &driver).unwrap();
    let out = Command::new("gcc")
        .current_dir(&dir)
        .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-I"])
        .arg(root.join("tests/dml/include"))
        .args(["main.c", "-o", "main"])
        .output()
        .expect("gcc runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let run = Command::new(dir.join("main")).output().unwrap();
    assert!(run.status.success());
    let got = String::from_utf8_lossy(&run.stdout);
    for (g, w) in got.lines().zip(want.lines()) {
        let n: usize = w.split(' ').next().unwrap().parse().unwrap();
        assert_eq!(g, w, "{}", labels[n]);
    }
    assert_eq!(got.lines().count(), want.lines().count());
    // Both outcomes, and both kinds of check, were exercised.
    let statuses: std::collections::BTreeSet<&str> =
        want.lines().map(|l| l.split(' ').nth(2).unwrap()).collect();
    assert!(["0", "1", "2"].iter().all(|s| statuses.contains(s)), "{statuses:?}");
    // A UINT64 index of 2^63 or more, which a C `long long` cannot hold, was reported.
    assert!(want.contains(&format!(" {} ", u64::MAX)) || want.contains(&format!(" {} ", 1u64 << 63)));
}

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

// ---------------------------------------------------------------------------------------------
// The ONNX gathers: gather_elements is one GATHER_ELEMENTS, gather_nd one GATHER_ND1

#[test]
fn gather_elements_is_dml_gather_elements() {
    let idx = Tensor::from_i64s(DType::I64, &[2, 3], &[0, 2, -1, 1, -3, 0]).unwrap();
    let a = arange(DType::F32, &[3, 3]);
    for axis in [0, 1, -1] {
        let src = format!("gather_elements(a, idx, axis={axis})");
        let g = agree(&src, &[("a", a.clone()), ("idx", idx.clone())], &DmlOptions::default());
        let [OperatorFields::GatherElements(d)] = ops(&g)[..] else { panic!("{src}: {:?}", ops(&g)) };
        assert_eq!(d.output_tensor.desc.sizes, [2, 3]);
        assert_eq!(d.indices_tensor.desc.sizes, [2, 3]);
        // The input's other dimension is the output's: a corner of the data, by its strides.
        let want_axis = if axis == 0 { 0 } else { 1 };
        assert_eq!(d.axis, want_axis, "{src}");
        assert_eq!(d.input_tensor.desc.strides.as_deref(), Some(&[3, 1][..]));
        assert!(matches!(
            g.host_checks[..],
            [slc::backend::dml::HostCheck { kind: HostCheckKind::PlanCheck(0), .. }]
        ));
    }
    // Out of range: the host check fails like the interpreter.
    let bad = Tensor::from_i64s(DType::I64, &[2, 3], &[0, 2, -1, 1, 3, 0]).unwrap();
    agree("gather_elements(a, idx, axis=0)", &[("a", a.clone()), ("idx", bad)], &DmlOptions::default());
    // Literal indices are normalized on the host, in any mode.
    let g = agree("gather_elements(a, [[5, -1, 0]], mode=wrap)", &[("a", a.clone())], &DmlOptions::default());
    assert!(matches!(ops(&g)[..], [OperatorFields::GatherElements(_)]));
    assert_eq!(g.constants[0].values, [2, 2, 0]);
    // Introduced at 2.1, where every tensor has 4 dimensions and indices are UINT32.
    let u = Tensor::from_i64s(DType::U32, &[2, 3], &[0, 2, 1, 1, 0, 0]).unwrap();
    let g = agree("gather_elements(a, u, axis=1)", &[("a", a.clone()), ("u", u)], &level("2.1"));
    let [OperatorFields::GatherElements(d)] = ops(&g)[..] else { panic!("{:?}", ops(&g)) };
    assert_eq!((d.input_tensor.desc.sizes.len(), d.axis), (4, 3));
    // 64-bit data below 4.1 moves as UINT32 pairs: a trailing dimension the index broadcasts over.
    let g = agree(
        "gather_elements(a, idx, axis=1)",
        &[("a", arange(DType::I64, &[3, 3])), ("idx", idx.clone())],
        &level("3.0"),
    );
    let [OperatorFields::GatherElements(d)] = ops(&g)[..] else { panic!("{:?}", ops(&g)) };
    assert_eq!(d.indices_tensor.desc.strides.as_deref(), Some(&[3, 1, 0][..]));
    // Fused with views on both sides.
    for src in [
        "gather_elements(a[::-1], idx, axis=1)[:, ::2]",
        "gather_elements(a, idx[::-1], axis=0)[..., newaxis]",
        "gather_elements(a[1:, :2], idx[:, 1:], axis=1)",
    ] {
        agree(src, &[("a", a.clone()), ("idx", idx.clone())], &DmlOptions::default());
    }
    // OpenVINO Gather-8 whose indices span the output is the same operator.
    let pairs = Tensor::from_i64s(DType::I64, &[3, 2], &[2, 0, 1, 1, 0, -1]).unwrap();
    let g = agree(
        "gather(a, pairs, axis=1, batch_dims=1, mode=error)",
        &[("a", a), ("pairs", pairs)],
        &level("3.0"),
    );
    assert!(matches!(ops(&g)[..], [OperatorFields::GatherElements(_)]), "{:?}", ops(&g));
}

#[test]
fn gather_nd_is_one_gather_nd1_over_the_index_tuples() {
    let a = arange(DType::F32, &[2, 3, 4]);
    let idx = Tensor::from_i64s(DType::I64, &[3, 2], &[1, -1, 0, 2, -2, 0]).unwrap();
    let g = agree("gather_nd(a, idx)", &[("a", a.clone()), ("idx", idx.clone())], &level("3.0"));
    let [OperatorFields::GatherNd1(d)] = ops(&g)[..] else { panic!("{:?}", ops(&g)) };
    assert_eq!(d.indices_tensor.desc.sizes, [1, 3, 2]);
    assert_eq!(d.indices_tensor.desc.strides.as_deref(), Some(&[0, 2, 1][..]));
    assert_eq!(d.output_tensor.desc.sizes, [1, 3, 4]);
    assert_eq!(d.batch_dimension_count, 0);
    // One plan check per tuple entry covers the operator: no extra guards.
    assert_eq!(g.host_checks.len(), 2);
    assert!(g.host_checks.iter().all(|c| matches!(c.kind, HostCheckKind::PlanCheck(_))));
    // Whole tuples into every axis, batch dimensions, and literals (normalized on the host).
    let t3 = Tensor::from_i64s(DType::I32, &[2, 3], &[1, 2, 3, 0, -1, -4]).unwrap();
    let g = agree("gather_nd(a, t3)", &[("a", a.clone()), ("t3", t3)], &level("3.0"));
    assert!(matches!(ops(&g)[..], [OperatorFields::GatherNd1(_)]));
    let b = Tensor::from_i64s(DType::I64, &[2, 2, 2], &[0, 1, 2, 3, 1, -1, -3, 0]).unwrap();
    let g = agree("gather_nd(a, b, batch_dims=1)", &[("a", a.clone()), ("b", b)], &level("3.0"));
    let [OperatorFields::GatherNd1(d)] = ops(&g)[..] else { panic!("{:?}", ops(&g)) };
    assert_eq!(d.batch_dimension_count, 1);
    let g = agree("gather_nd(a, [[1, -1], [0, 5]], mode=clamp)", &[("a", a.clone())], &level("3.0"));
    assert!(matches!(ops(&g)[..], [OperatorFields::GatherNd1(_)]));
    assert_eq!(g.constants[0].values, [1, 0, 0, 2]);
    // Chains, out-of-range values and index tensors that are themselves views.
    let bad = Tensor::from_i64s(DType::I64, &[3, 2], &[1, -1, 0, 3, -2, 0]).unwrap();
    for (src, i) in [
        ("gather_nd(a[::-1], idx)[1:]", &idx),
        ("gather_nd(a, idx[::-1])[..., ::2]", &idx),
        ("gather_nd(a, idx)[:, 1]", &bad),
        ("gather_nd(a[:, :, ::3], idx[1:])", &idx),
    ] {
        agree(src, &[("a", a.clone()), ("idx", i.clone())], &level("5.0"));
    }
    // Next to another gather: the tuple is still one operator, peeled first.
    let i = Tensor::from_i64s(DType::I64, &[2], &[3, -1]).unwrap();
    for src in [
        "gather(gather_nd(a, idx), i, axis=1, mode=error)",
        "gather_nd(gather(a, i, axis=2, mode=error), idx)",
    ] {
        let g = agree(src, &[("a", a.clone()), ("idx", idx.clone()), ("i", i.clone())], &level("5.0"));
        let kinds: Vec<OperatorType> = ops(&g).iter().map(|o| o.operator_type()).collect();
        assert_eq!(kinds.len(), 2, "{src}: {kinds:?}");
        assert!(kinds.contains(&OperatorType::GatherNd1), "{src}: {kinds:?}");
    }
    // GATHER_ND1 starts at 3.0.
    let e = lower_src(
        "gather_nd(a, idx)",
        &[("a", DType::F32, &[2, 3, 4]), ("idx", DType::U32, &[3, 2])],
        &level("2.1"),
    );
    assert!(matches!(e, Err(DmlError::FeatureLevel { needs: FeatureLevel::L3_0, .. })), "{e:?}");
}

#[test]
fn emulator_reads_gather_elements_as_documented() {
    // The example of DML_GATHER_ELEMENTS_OPERATOR_DESC (its data 1..9 here 0..8).
    let data = arange(DType::I32, &[3, 3]);
    let idx = Tensor::from_i64s(DType::U32, &[2, 3], &[1, 2, 0, 2, 0, 0]).unwrap();
    let g = agree(
        "gather_elements(data, idx, axis=0)",
        &[("data", data.clone()), ("idx", idx.clone())],
        &level("3.0"),
    );
    let out = emulate(&g, &[&data, &idx]).unwrap();
    assert_eq!(out, Tensor::from_i64s(DType::I32, &[2, 3], &[3, 7, 2, 6, 1, 2]).unwrap());
    // Index sizes that differ from the input's off the axis are invalid.
    let mut bad = g.clone();
    let OperatorFields::GatherElements(d) = &mut bad.graph_desc.as_mut().unwrap().nodes[0].desc.operator.desc
    else {
        panic!()
    };
    d.input_tensor.desc.sizes[1] = 2;
    assert!(matches!(emulate(&bad, &[&data, &idx]), Err(EmulateError::Invalid(_))));
}

#[test]
fn a_refused_onnx_gather_points_at_its_call() {
    let t = types(&[("a", DType::F32, &[2, 3, 4]), ("nd", DType::I64, &[3, 2])]);
    let target = slc::Target::DirectMl(DmlOptions::default());
    for (src, call) in [
        ("gather_nd(a, nd, mode=zero)[1:]", "gather_nd(a, nd, mode=zero)"),
        (
            "gather_elements(a[0], nd, axis=1, mode=clamp)[::-1]",
            "gather_elements(a[0], nd, axis=1, mode=clamp)",
        ),
        ("gather_elements(a, [[[9]]], mode=zero)", "gather_elements(a, [[[9]]], mode=zero)"),
    ] {
        let e = target.compile(slc::compile(src, &t).unwrap()).unwrap_err();
        let d = e.diagnostic();
        assert_eq!(d.code, "E0405", "{src}");
        let span = d.labels.first().map(|l| l.span).unwrap_or_else(|| panic!("{src}: no label"));
        let at = src.find(call).unwrap();
        assert_eq!((span.start, span.end), (at, at + call.len()), "{src}");
    }
}

#[test]
fn constant_onnx_gathers_are_one_operator_at_every_level_they_can_be() {
    // A constant tuple is one GATHER_ND1 where the level has it and the data view is
    // describable; otherwise it is folded on the host into one GATHER of element offsets.
    let a = arange(DType::F32, &[2, 3, 4]);
    let src = "gather_nd(a, [[1, -1], [0, 5]], mode=clamp)";
    for fl in ["1.0", "2.1"] {
        let g = agree(src, &[("a", a.clone())], &level(fl));
        let [OperatorFields::Gather(_)] = ops(&g)[..] else { panic!("{fl}: {:?}", ops(&g)) };
        assert!(g.notes.is_empty(), "{fl}: {:?}", g.notes);
    }
    for fl in ["3.0", "5.0"] {
        let g = agree(src, &[("a", a.clone())], &level(fl));
        assert!(matches!(ops(&g)[..], [OperatorFields::GatherNd1(_)]), "{fl}: {:?}", ops(&g));
    }
    for src in [
        "gather_nd(a[::-1], [[1, -1], [0, 2]])",
        "gather_nd(a[:, 1:], [[1, 1], [0, 0]])[:, ::-1]",
        "gather_nd(gather_nd(a, [[1], [0], [1]]), [[2, 1], [0, 2]])",
        "gather_elements(a[:, ::-1], [[[2, 0, 1, 2]]], axis=1)",
        "gather_elements(a, [[[0, 1, 2]], [[2, 2, 0]]], axis=1)[..., ::-1]",
    ] {
        for fl in ["2.1", "5.0"] {
            let g = agree(src, &[("a", a.clone())], &level(fl));
            assert_eq!(g.graph().node_count, 1, "{src} at {fl}: {:?}", ops(&g));
        }
    }
    // A run-time tuple next to another gather: a graph of two nodes whose note says why, from 3.0.
    let idx = Tensor::from_i64s(DType::I64, &[3, 2], &[1, -1, 0, 2, -2, 0]).unwrap();
    let i = Tensor::from_i64s(DType::I64, &[2], &[3, -1]).unwrap();
    let g = agree(
        "gather(gather_nd(a, idx), i, axis=1, mode=error)",
        &[("a", a.clone()), ("idx", idx.clone()), ("i", i.clone())],
        &level("3.0"),
    );
    assert_eq!(g.graph().node_count, 2, "{:?}", ops(&g));
    assert!(g.notes.iter().any(|n| n.contains("several axes")), "{:?}", g.notes);
    // A single GATHER_ELEMENTS needs no graph: 2.1 is enough, and below it the operator is missing.
    let u = Tensor::from_i64s(DType::U32, &[2, 3, 4], &[0; 24]).unwrap();
    let g = agree("gather_elements(a, u, axis=2)", &[("a", a.clone()), ("u", u)], &level("2.1"));
    assert!(matches!(ops(&g)[..], [OperatorFields::GatherElements(_)]), "{:?}", ops(&g));
    let e = lower_src(
        "gather_elements(a, u, axis=2)",
        &[("a", DType::F32, &[2, 3, 4]), ("u", DType::U32, &[2, 3, 4])],
        &level("2.0"),
    );
    assert!(matches!(e, Err(DmlError::FeatureLevel { needs: FeatureLevel::L2_1, .. })), "{e:?}");
}
