//! The DirectML target's lowering rules: views as DML_SLICE1, gathers as DML_GATHER /
//! GATHER_ND1 and their chains, ranks and feature levels, out-of-range policies and data types.
//! The JSON and C forms are in dml_forms.rs, the emulator and the differential test in
//! dml_emulator.rs, the ONNX gathers in dml_gathers.rs, stores in dml_stores.rs.

#[path = "support/dml.rs"]
mod dml_common;
#[path = "support/scratch.rs"]
mod scratch_dir;
use dml_common::{agree, arange, level, lower_src, ops, slice1, types};
use scratch_dir::scratch;
use serde_json::Value;
use slc::backend::dml::desc::*;
use slc::backend::dml::{
    BindingSource, DmlError, DmlGraph, DmlOptions, EmulateError, FeatureLevel, HostCheckKind, emulate,
};
use slc::fuzz::{Draw, Rng, fill};
use slc::types::OobMode;
use slc::{DType, Tensor};
use std::path::Path;
use std::process::Command;

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
