//! The DirectML target's JSON and C forms: the JSON mirrors DirectML.h, the C compiles with gcc
//! and describes the JSON's graph, and its host checks agree with the emulator and the
//! interpreter.

#[path = "support/dml.rs"]
mod dml_common;
#[path = "support/scratch.rs"]
mod scratch_dir;
use dml_common::{agree, arange, level, lower_src, types};
use scratch_dir::scratch;
use serde_json::Value;
use slc::backend::dml::desc::*;
use slc::backend::dml::{DmlGraph, DmlOptions, EmulateError, FeatureLevel, HostCheckKind, emulate};
use slc::backend::{RuntimeError, interp};
use slc::fuzz::{Draw, Rng};
use slc::{DType, Tensor};
use std::path::Path;
use std::process::Command;

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
