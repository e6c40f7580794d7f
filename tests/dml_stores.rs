//! Store plans on the DirectML target: which lower to DML_SCATTER / DML_SCATTER_ND, their
//! descriptors, the refusals (each saying why), and a differential test — random store programs
//! (the fuzzer's, and run-time indices of our own) lowered, emulated from their descriptors and
//! compared bit for bit with the reference interpreter.

#[path = "support/scratch.rs"]
mod scratch_dir;
use scratch_dir::scratch;
use serde_json::Value;
use slc::backend::dml::desc::*;
use slc::backend::dml::{
    BindingSource, DmlError, DmlGraph, DmlOptions, EmulateError, FeatureLevel, emulate, lower,
};
use slc::backend::interp;
use slc::fuzz::{Draw, Rng, fill, store_program};
use slc::sema::{InputTypes, InputValues};
use slc::types::TensorType;
use slc::{DType, Error, Tensor};

fn level(s: &str) -> DmlOptions {
    DmlOptions { feature_level: FeatureLevel::parse(s).unwrap() }
}

fn ints(dtype: DType, shape: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_i64s(dtype, shape, values).unwrap()
}

/// What lowering `src` over `tensors` gave: the graph after its emulation matched the
/// interpreter (result or error), or the refusal.
fn try_agree(src: &str, tensors: &[(&str, Tensor)], opts: &DmlOptions) -> Result<DmlGraph, DmlError> {
    let decls: InputTypes = tensors
        .iter()
        .map(|(n, t)| {
            let shape = t.shape().iter().map(|&d| d as i64).collect();
            (n.to_string(), TensorType { dtype: t.dtype(), shape })
        })
        .collect();
    // Masks are known when the program is checked (their `nonzero()` is a constant), and a
    // store through one takes its positions, as `slc compile --target dml` compiles it.
    let values: InputValues = tensors
        .iter()
        .filter(|(_, t)| t.dtype() == DType::Bool)
        .map(|(n, t)| (n.to_string(), t.clone()))
        .collect();
    let compiled =
        slc::pipeline::compile_for_dml(src, &decls, &values).unwrap_or_else(|e| panic!("{src}: {e}"));
    let args: Vec<&Tensor> =
        compiled.plan.inputs.iter().map(|d| &tensors.iter().find(|(n, _)| *n == d.name).unwrap().1).collect();
    let g = lower(&compiled.plan, opts)?;
    match (interp::run(&compiled.plan, &args), emulate(&g, &args)) {
        (Ok(a), Ok(b)) => assert_eq!(a, b, "{src}\n{}", g.to_json()),
        (Err(a), Err(EmulateError::Runtime(b))) => assert_eq!(a, b.located(&compiled.plan), "{src}"),
        (a, b) => panic!("{src}: interpreter {a:?}, emulator {b:?}\n{}", g.to_json()),
    }
    Ok(g)
}

fn agree(src: &str, tensors: &[(&str, Tensor)], opts: &DmlOptions) -> DmlGraph {
    try_agree(src, tensors, opts).unwrap_or_else(|e| panic!("{src}: {e}"))
}

fn the_op(g: &DmlGraph) -> OperatorFields {
    let nodes = &g.graph().nodes;
    assert_eq!(nodes.len(), 1, "{}", g.to_json());
    nodes[0].desc.operator.desc.clone()
}

fn refusal(src: &str, tensors: &[(&str, Tensor)], opts: &DmlOptions) -> String {
    match try_agree(src, tensors, opts) {
        Ok(g) => panic!("{src} lowered:\n{}", g.to_json()),
        Err(e) => {
            let code = Error::from(e.clone()).diagnostic().code;
            format!("{code}: {e}")
        }
    }
}

#[test]
fn scatter_nd_with_distinct_constant_indices_is_one_scatter_nd() {
    let a = fill(DType::F32, &[4, 3], 1);
    let v = fill(DType::F32, &[2, 3], 2);
    let g = agree("scatter_nd(a, [[3], [-4]], v)", &[("a", a.clone()), ("v", v)], &level("5.0"));
    let OperatorFields::ScatterNd(d) = the_op(&g) else { panic!("{}", g.to_json()) };
    assert_eq!((d.input_dimension_count, d.indices_dimension_count), (2, 2));
    assert_eq!(d.indices_tensor.desc.sizes, [2, 1]);
    assert_eq!(d.updates_tensor.desc.sizes, [2, 3]);
    // Negative constants are normalized on the host.
    assert_eq!(g.constants[0].values, [3, 0]);
    // Index tuples over two axes, a constant value (its bits), at 2.1's four dimensions.
    let g = agree("scatter_nd(a, [[0, 1], [3, 2]], [1, -2])", &[("a", a)], &level("2.1"));
    let OperatorFields::ScatterNd(d) = the_op(&g) else { panic!("{}", g.to_json()) };
    assert_eq!(d.indices_tensor.desc.sizes, [1, 1, 2, 2]);
    assert_eq!(d.updates_tensor.desc.sizes, [1, 1, 1, 2]);
    assert_eq!(g.constants[1].values, [1f32.to_bits() as i64, (-2f32).to_bits() as i64]);
}

#[test]
fn a_row_assignment_is_scatter_nd_with_n_by_1_indices() {
    for dtype in [DType::F32, DType::I64, DType::BF16, DType::Bool] {
        let a = fill(dtype, &[5, 2, 3], 3);
        let v = fill(dtype, &[2, 3], 4);
        let g = agree("a[[4, 1]] = v", &[("a", a), ("v", v)], &level("4.1"));
        let OperatorFields::ScatterNd(d) = the_op(&g) else { panic!("{}", g.to_json()) };
        let pairs = usize::from(dtype == DType::I64);
        assert_eq!(d.input_dimension_count as usize, 3 + pairs, "{dtype}");
        assert_eq!(d.indices_tensor.desc.sizes[d.indices_tensor.desc.sizes.len() - 2..], [2, 1]);
        // The value broadcasts over the rows by stride 0: no copy.
        let strides = d.updates_tensor.desc.strides.clone().unwrap();
        assert_eq!(strides[strides.len() - 3 - pairs], 0, "{dtype}");
    }
}

#[test]
fn values_from_views_gathers_and_the_target_itself() {
    let a = || ("a", fill(DType::U16, &[4, 3], 11));
    let v = || ("v", fill(DType::U16, &[3, 3], 12));
    let l = level("5.0");
    // A negative step: a SLICE1 copies the value first (an UpdatesTensor has no negative stride).
    let g = agree("a[[0, 2]] = v[::-2]", &[a(), v()], &l);
    assert_eq!(g.graph().nodes.len(), 2, "{}", g.to_json());
    // The target read as the value, through a view and through a gather (read before any write).
    agree("a[[1, 2]] = a[0]", &[a()], &l);
    let g = agree("a[[0, 3]] = a[[3, 0]]", &[a()], &l);
    assert!(g.notes.iter().any(|n| n.contains("the stored value is gathered itself")), "{:?}", g.notes);
}

#[test]
fn scatter_elements_and_column_assignments_are_dml_scatter() {
    let a = fill(DType::I16, &[2, 4], 5);
    let g = agree(
        "scatter_elements(a, [[3, 0], [1, 2]], [[7, 8], [9, 10]], axis=1)",
        &[("a", a.clone())],
        &level("3.0"),
    );
    let OperatorFields::Scatter(d) = the_op(&g) else { panic!("{}", g.to_json()) };
    assert_eq!(d.axis, 1);
    assert_eq!(
        (d.indices_tensor.desc.sizes.clone(), d.updates_tensor.desc.sizes.clone()),
        (vec![2, 2], vec![2, 2])
    );
    let v = fill(DType::I16, &[2, 2], 6);
    let g = agree("a[:, [2, -1]] = v", &[("a", a), ("v", v)], &level("5.0"));
    let OperatorFields::Scatter(d) = the_op(&g) else { panic!("{}", g.to_json()) };
    assert_eq!(d.axis, 1);
    // The index list broadcasts over the rows by stride 0.
    assert_eq!(d.indices_tensor.desc.strides.clone().unwrap(), [0, 1]);
}

#[test]
fn run_time_indices_lower_when_every_collision_writes_one_value() {
    let a = fill(DType::F32, &[4, 3], 7);
    for values in [[1, 1, -1], [3, 0, -4], [0, 4, 1], [-5, 0, 0]] {
        let i = ints(DType::I64, &[3], &values);
        // Out-of-range values are the host's error before dispatch, as the interpreter's.
        agree("a[i] = 0", &[("a", a.clone()), ("i", i.clone())], &level("5.0"));
        let row = fill(DType::F32, &[3], 8);
        agree("a[i] = v", &[("a", a.clone()), ("i", i.clone()), ("v", row)], &level("3.0"));
        let col = fill(DType::F32, &[4, 1], 9);
        agree("a[:, i] = v", &[("a", a.clone()), ("i", i), ("v", col)], &level("3.0"));
    }
    // Below 3.0 run-time indices are UINT32 (never negative).
    let i = ints(DType::U32, &[2], &[3, 3]);
    agree("a[i] = 2", &[("a", a), ("i", i)], &level("2.1"));
}

#[test]
fn stores_no_scatter_expresses_are_refused_saying_why() {
    let a = || ("a", fill(DType::F32, &[4, 3], 1));
    let i = || ("i", ints(DType::I64, &[2], &[1, 2]));
    let v = || ("v", fill(DType::F32, &[2, 3], 2));
    let l = level("5.0");
    type Case<'a> = (&'a str, Vec<(&'a str, Tensor)>, &'a str);
    let cases: [Case; 8] = [
        ("a[i] = v", vec![a(), i(), v()], "destinations may repeat: the indices `i`"),
        ("a[[1, 2, 1]] = [[1], [2], [3]]", vec![a()], "more than once"),
        ("a[i] += v", vec![a(), i(), v()], "`+=`"),
        ("scatter_nd(a, [[1], [2]], v, reduction=add)", vec![a(), v()], "reduction=sum"),
        ("scatter_elements(a, [[1, 0, 2]], [[1, 2, 3]], reduction=max)", vec![a()], "reduction=max"),
        // Distinct in the first row, repeated in the second: every row is checked.
        (
            "scatter_elements(a, [[0, 1, 2], [2, 2, 1], [1, 0, 2], [0, 2, 1]], [[1, 2, 3], [4, 5, 6], [7, 8, 9], [1, 2, 3]], axis=1)",
            vec![a()],
            "more than once",
        ),
        ("a[1:3] = 0", vec![a()], "no index array"),
        ("a[[0, 1], 1:] = 5", vec![a()], "no DirectML scatter writes this destination"),
    ];
    for (src, tensors, why) in cases {
        let msg = refusal(src, &tensors, &l);
        assert!(msg.starts_with("E0407: ") && msg.contains(why), "{src}: {msg}");
    }
    // Below the scatters' feature levels: E0401, naming the operator.
    let msg = refusal("scatter_nd(a, [[0, 1]], [5])", &[a()], &level("2.0"));
    assert!(
        msg.starts_with("E0401") && msg.contains("DML_OPERATOR_SCATTER_ND needs DirectML feature level 2.1"),
        "{msg}"
    );
    let msg = refusal("a[[0]] = 1", &[a()], &level("1.0"));
    assert!(
        msg.starts_with("E0401") && msg.contains("DML_OPERATOR_SCATTER needs DirectML feature level 2.0"),
        "{msg}"
    );
    // At 2.0 SCATTER moves floats only.
    let msg = refusal("a[[0]] = 1", &[("a", fill(DType::I16, &[4, 3], 1))], &level("2.0"));
    assert!(msg.starts_with("E0403"), "{msg}");
    // A mask known when the program is checked is a constant index list, distinct by nature.
    let m = ("m", Tensor::from_bytes(DType::Bool, &[4], &[1, 0, 1, 0]).unwrap());
    let g = agree("a[m] = v", &[a(), m.clone(), v()], &l);
    assert!(matches!(the_op(&g), OperatorFields::ScatterNd(_)));
    // So is one value through it, which the CPU and CUDA back ends read the mask for in place
    // (`when`): a plan of that form has no scatter, and DirectML refuses it.
    let g = agree("a[m] = 0", &[a(), m.clone()], &l);
    assert!(matches!(the_op(&g), OperatorFields::ScatterNd(_)));
    let decls: InputTypes =
        [a(), m.clone()].iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
    let values: InputValues = [("m".to_string(), m.1.clone())].into_iter().collect();
    let in_place = slc::compile_with_values("a[m] = 0", &decls, &values).unwrap();
    let refused = lower(&in_place.plan, &l).expect_err("a mask read in place");
    assert!(refused.to_string().contains("no DirectML scatter expresses"), "{refused}");
    // A store that updates nothing is its target's copy.
    agree("a[[]] = 1", &[a()], &l);
}

#[test]
fn at_feature_level_2_0_a_row_assignment_is_one_scatter_without_a_graph() {
    // SCATTER_ND arrives at 2.1 and the graph API too: `a[i] = v` along axis 0 is then the
    // SCATTER whose indices broadcast over the rows.
    let a = fill(DType::F32, &[3, 4], 1);
    let v = fill(DType::F32, &[2, 4], 2);
    let g = agree("a[[2, -3]] = v", &[("a", a), ("v", v)], &level("2.0"));
    assert!(g.graph_desc.is_none(), "{}", g.to_json());
    let Some(OperatorDesc { desc: OperatorFields::Scatter(d), .. }) = &g.operator_desc else {
        panic!("{}", g.to_json())
    };
    assert_eq!((d.axis, d.input_tensor.desc.dimension_count), (2, 4));
    // Bound in the operator's input order: the target, the indices, the updates.
    let sources: Vec<_> = g.input_bindings.iter().map(|b| b.source.clone()).collect();
    assert_eq!(sources, [BindingSource::Input(0), BindingSource::Constant(0), BindingSource::Input(1)]);
    // Its C compiles against the header of its level (SCATTER is declared from 0x2000).
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = scratch("dml-stores", "header");
    let file = dir.join("scatter20.c");
    std::fs::write(&file, g.to_c()).unwrap();
    for (version, ok) in [("0x2000", true), ("0x5000", true), ("0x1000", false)] {
        let out = std::process::Command::new("gcc")
            .args(["-std=c99", "-Wall", "-Wextra", "-Werror", "-pedantic", "-c"])
            .arg(format!("-DDML_TARGET_VERSION={version}"))
            .arg("-I")
            .arg(root.join("tests/dml/include"))
            .arg(&file)
            .arg("-o")
            .arg(dir.join("scatter20.o"))
            .output()
            .expect("gcc runs");
        assert_eq!(out.status.success(), ok, "{version}: {}", String::from_utf8_lossy(&out.stderr));
    }
}

#[test]
fn scatter_json_mirrors_directml_h_and_round_trips() {
    let a = fill(DType::F32, &[3, 2], 1);
    for (src, op, fields) in [
        (
            "scatter_nd(a, [[2], [0]], [[1, 2], [3, 4]])",
            ("DML_OPERATOR_SCATTER_ND", 109),
            &[
                "InputTensor",
                "IndicesTensor",
                "UpdatesTensor",
                "OutputTensor",
                "InputDimensionCount",
                "IndicesDimensionCount",
            ][..],
        ),
        (
            "scatter_elements(a, [[1], [0], [1]], [[5], [6], [7]], axis=1)",
            ("DML_OPERATOR_SCATTER", 94),
            &["InputTensor", "IndicesTensor", "UpdatesTensor", "OutputTensor", "Axis"][..],
        ),
    ] {
        let g = agree(src, &[("a", a.clone())], &level("5.0"));
        let json = g.to_json();
        let v: Value = serde_json::from_str(&json).unwrap();
        let node = &v["GraphDesc"]["Nodes"][0]["Desc"]["Operator"];
        assert_eq!(node["Type"], serde_json::json!({"Name": op.0, "Value": op.1}));
        let mut keys: Vec<&str> = node["Desc"].as_object().unwrap().keys().map(|k| k.as_str()).collect();
        let mut want = fields.to_vec();
        keys.sort_unstable();
        want.sort_unstable();
        assert_eq!(keys, want, "{src}");
        // directml.h's field order: UpdatesTensor between IndicesTensor and OutputTensor.
        let at = |k: &str| json.find(&format!("\"{k}\"")).unwrap();
        assert!(at("IndicesTensor") < at("UpdatesTensor") && at("UpdatesTensor") < at("OutputTensor"));
        assert_eq!(DmlGraph::from_json(&json).unwrap(), g);
        // Three input edges: the target, the indices, the updates.
        assert_eq!(g.graph().input_edges.len(), 3);
    }
}

#[test]
fn emulator_rejects_colliding_writes_and_mismatched_scatters() {
    let a = fill(DType::F32, &[4, 3], 1);
    let mut g = agree("a[[0, 2]] = [[1], [2]]", &[("a", a.clone())], &level("5.0"));
    // Make the two rows one: DirectML does not say which write wins.
    g.constants[0].values = vec![2, 2];
    assert!(matches!(emulate(&g, &[&a]), Err(EmulateError::Undefined(_))), "{:?}", emulate(&g, &[&a]));
    let mut g = agree("a[[0, 2]] = 1", &[("a", a.clone())], &level("5.0"));
    g.constants[0].values = vec![2, 2];
    assert!(emulate(&g, &[&a]).is_ok(), "equal values may collide");
    let mut g = agree("scatter_elements(a, [[1, 0, 2]], [[1, 2, 3]])", &[("a", a.clone())], &level("5.0"));
    match &mut g.graph_desc.as_mut().unwrap().nodes[0].desc.operator.desc {
        OperatorFields::Scatter(d) => d.axis = 2,
        other => panic!("{other:?}"),
    }
    assert!(matches!(emulate(&g, &[&a]), Err(EmulateError::Invalid(_))));
}

/// A list literal of `shape` holding `values` (C order).
fn literal(shape: &[usize], values: &[i64]) -> String {
    match shape.split_first() {
        None => values[0].to_string(),
        Some((&n, rest)) => {
            let step = rest.iter().product::<usize>();
            let items: Vec<String> =
                (0..n).map(|k| literal(rest, &values[k * step..(k + 1) * step])).collect();
            format!("[{}]", items.join(", "))
        }
    }
}

/// `scatter_elements` whose indices span every other axis (DML_SCATTER's shape): along the axis,
/// each line's indices are distinct (some negative) half the time, random (repeats likely)
/// otherwise.
fn scatter_elements_program(r: &mut Rng, shape: &[usize]) -> String {
    let axis = r.below(shape.len() as u64) as usize;
    let len = shape[axis] as i64;
    let mut ishape = shape.to_vec();
    ishape[axis] = 1 + r.below(shape[axis] as u64) as usize;
    let distinct = r.below(2) == 0;
    let (count, seed) = (ishape.iter().product::<usize>(), r.below(1000) as i64);
    let inner: usize = ishape[axis + 1..].iter().product();
    let values: Vec<i64> = (0..count)
        .map(|e| {
            let (along, line) = ((e / inner) % ishape[axis], e / (inner * ishape[axis]) * inner + e % inner);
            let v = if distinct { (seed + 7 * line as i64 + along as i64) % len } else { r.range(0, len) };
            if r.below(3) == 0 { v - len } else { v }
        })
        .collect();
    let updates: Vec<i64> = (0..count).map(|_| r.range(-3, 9)).collect();
    format!("scatter_elements(a, {}, {}, axis={axis})", literal(&ishape, &values), literal(&ishape, &updates))
}

/// The fuzzer's store programs (constant indices), `scatter_elements` of DML_SCATTER's shape
/// and run-time index arrays of our own with values in and out of range, on five dtypes and
/// four shapes, at every level that has the scatters.
#[test]
fn random_store_programs_agree_with_the_interpreter_bit_for_bit() {
    let mut r = Rng::new(0x5ca7_7e12_d31e_0028);
    let (mut lowered, mut refused, mut invalid) = (0usize, 0usize, 0usize);
    let mut seen = std::collections::BTreeSet::new();
    let levels = ["2.0", "2.1", "3.0", "4.1", "5.0"];
    for case in 0..1500 {
        let shape: &[usize] = [&[3, 4][..], &[4][..], &[3, 2, 2][..], &[2, 3, 2, 2][..]][case % 4];
        let dtype = [DType::F32, DType::I16, DType::U8, DType::F64, DType::F16][case % 5];
        let opts = level(levels[r.below(5) as usize]);
        let a = fill(dtype, shape, case as u64);
        let (src, tensors) = if case % 3 == 1 {
            (scatter_elements_program(&mut r, shape), vec![("a", a)])
        } else if case % 3 == 2 {
            // `a[i] = c` / `a[:, i] = c` with run-time indices (duplicates, negatives, misses).
            let n = 1 + r.below(4) as usize;
            let axis = r.below(shape.len().min(2) as u64) as usize;
            let len = shape[axis] as i64;
            let values: Vec<i64> = (0..n).map(|_| r.range(-len - 1, len + 1)).collect();
            let idtype = if opts.feature_level < FeatureLevel::L3_0 { DType::U32 } else { DType::I32 };
            let values: Vec<i64> =
                values.iter().map(|&v| if idtype == DType::U32 { v.abs() } else { v }).collect();
            let sub = if axis == 0 { "i" } else { ":, i" };
            let value = r.range(-3, 9);
            (format!("a[{sub}] = {value}"), vec![("a", a), ("i", ints(idtype, &[n], &values))])
        } else {
            (store_program(&mut r, shape), vec![("a", a)])
        };
        let decls: InputTypes =
            tensors.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect();
        if slc::compile(&src, &decls).is_err() {
            invalid += 1;
            continue;
        }
        match try_agree(&src, &tensors, &opts) {
            Ok(g) => {
                lowered += 1;
                for node in &g.graph().nodes {
                    seen.insert(node.desc.operator.r#type.name());
                }
            }
            Err(e) => {
                let code = Error::from(e).diagnostic().code;
                assert!(
                    ["E0401", "E0402", "E0403", "E0404", "E0405", "E0407"].contains(&code),
                    "{src}: {code}"
                );
                refused += 1;
            }
        }
    }
    eprintln!(
        "1500 store programs: {lowered} lowered and equal, {refused} refused, {invalid} invalid; {seen:?}"
    );
    assert!(lowered >= 600, "only {lowered} lowered");
    assert!(refused >= 100, "only {refused} refused");
    assert!(seen.contains("DML_OPERATOR_SCATTER") && seen.contains("DML_OPERATOR_SCATTER_ND"), "{seen:?}");
}
