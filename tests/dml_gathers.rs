//! The ONNX gathers on the DirectML target: gather_elements is one DML_GATHER_ELEMENTS,
//! gather_nd one DML_GATHER_ND1; constant chains are one operator; refusals point at the call.

#[path = "support/dml.rs"]
mod dml_common;
use dml_common::{agree, arange, level, lower_src, ops, types};
use slc::backend::dml::desc::*;
use slc::backend::dml::{DmlError, DmlOptions, EmulateError, FeatureLevel, HostCheckKind, emulate};
use slc::{DType, Tensor};

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
