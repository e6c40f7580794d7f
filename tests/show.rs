//! `slc show`: the terminal picture snapshotted with and without colour for every kind of index;
//! the SVG parsed as XML and checked against the reference interpreter (each read cell is marked
//! once and labelled with the first output element that reads it); the SVG rendered to pixels
//! (resvg) to check the colours a reader sees; the command line end to end.

#[path = "support/scratch.rs"]
mod scratch_dir;
use scratch_dir::scratch;
use slc::backend::interp;
use slc::sema::{InputTypes, InputValues};
use slc::show::{Selection, order_colour, stages, svg, terminal};
use slc::types::TensorType;
use slc::{DType, Tensor};
use std::collections::BTreeMap;
use std::path::Path;

/// Index values the cases bind: `i` picks rows 2, 0 and the last.
fn index_values() -> InputValues {
    let i = Tensor::from_i64s(DType::I64, &[3], &[2, 0, -1]).unwrap();
    [("i".to_string(), i)].into()
}

/// The cases: name, program, and the inputs' types. `a` is small enough to number every cell.
const CASES: &[(&str, &str, &str)] = &[
    ("slice", "a[1:3, 2:]", "f32[4, 6]"),
    ("reversed", "a[::-1, 1]", "f32[4, 6]"),
    ("strided", "a[::2, 1::3]", "f32[4, 6]"),
    ("newaxis", "a[None, 1:3]", "f32[4, 6]"),
    ("ellipsis", "a[..., ::-2]", "f32[2, 3, 4]"),
    ("integer", "a[1, :, 2]", "f32[2, 3, 4]"),
    ("gather", "a[i]", "f32[4, 6]"),
    ("gather_axis1", "gather(a, i, axis=1)", "f32[4, 6]"),
    ("chain", "a[1:][::-1, ::2][i]", "f32[4, 6]"),
    ("long_axis", "a[899:99:-1]", "u8[1080]"),
    ("long_empty", "a[100:900:-1]", "u8[1080]"),
    ("long_rows", "a[899:99:-1, 3]", "u8[1080, 8]"),
];

fn types(input: &str) -> InputTypes {
    let mut t = InputTypes::new();
    t.insert("a".into(), input.parse::<TensorType>().unwrap());
    t.insert("i".into(), "i64[3]".parse::<TensorType>().unwrap());
    t
}

fn selection(expr: &str, input: &str, values: &InputValues) -> (slc::Compiled, Selection) {
    let compiled = slc::compile_with_values(expr, &types(input), values).unwrap();
    let sel = Selection::of(&compiled.plan, values).unwrap();
    (compiled, sel)
}

#[test]
fn terminal_pictures() {
    for &(name, expr, input) in CASES {
        let (_, sel) = selection(expr, input, &index_values());
        insta::assert_snapshot!(format!("{name}_plain"), terminal::render(&sel, expr, false));
        insta::assert_snapshot!(format!("{name}_colour"), terminal::render(&sel, expr, true));
    }
    // Without index values, the gathered axis is drawn as chosen by `i`.
    let (_, sel) = selection("a[i]", "f32[4, 6]", &InputValues::new());
    insta::assert_snapshot!("gather_unknown_plain", terminal::render(&sel, "a[i]", false));
}

#[test]
fn plain_pictures_have_no_escapes_and_colour_ones_colour_each_read_cell() {
    let (_, sel) = selection("a[::-1, 1]", "f32[4, 6]", &index_values());
    assert!(!terminal::render(&sel, "", false).contains('\x1b'));
    let colour = terminal::render(&sel, "", true);
    for order in 0..sel.numel {
        let [r, g, b] = order_colour(order, sel.numel);
        assert!(colour.contains(&format!("38;2;{r};{g};{b}m{order}")), "output element {order}:\n{colour}");
    }
}

#[test]
fn a_scalar_is_summarized_without_a_grid() {
    let (_, sel) = selection("a", "f32[]", &InputValues::new());
    let text = terminal::render(&sel, "a", false);
    assert!(text.starts_with("a  on  a: f32[]\n\nOutput f32[] (1 elements"), "{text}");
    let doc = svg::render(&sel, "a");
    assert!(
        roxmltree::Document::parse(&doc).unwrap().descendants().all(|n| n.attribute("class") != Some("cell"))
    );
}

/// The output of the program on `a = arange` (each element its own linear index): which input
/// element each output element reads, as the interpreter computes it.
fn interpreted_reads(compiled: &slc::Compiled, values: &InputValues) -> Vec<i64> {
    let plan = &compiled.plan;
    let inputs: Vec<Tensor> = plan
        .inputs
        .iter()
        .map(|decl| {
            values.get(&decl.name).cloned().unwrap_or_else(|| {
                let dims: Vec<usize> = decl.shape.iter().map(|&d| d as usize).collect();
                let n: usize = dims.iter().product();
                let linear: Vec<i64> = (0..n as i64).collect();
                Tensor::from_i64s(DType::I64, &dims, &linear).unwrap()
            })
        })
        .collect();
    let refs: Vec<&Tensor> = inputs.iter().collect();
    let mut plan = plan.plan().clone();
    // Read element numbers, whatever the declared dtype.
    for decl in plan.inputs.iter_mut().filter(|d| d.name == "a") {
        decl.dtype = DType::I64;
    }
    plan.dtype = DType::I64;
    let plan = slc::plan::verify(plan).unwrap();
    let out = interp::run(&plan, &refs).unwrap();
    (0..out.numel()).map(|k| out.int_at(k).unwrap() as i64).collect()
}

fn unravel(mut linear: i64, shape: &[i64]) -> String {
    let mut coords = vec![0; shape.len()];
    for d in (0..shape.len()).rev() {
        coords[d] = linear % shape[d];
        linear /= shape[d];
    }
    coords.iter().map(|c| c.to_string()).collect::<Vec<_>>().join(",")
}

#[test]
fn svg_marks_each_read_cell_once_with_the_interpreters_output_order() {
    // The long cases draw a summary, not every cell.
    for &(name, expr, input) in CASES.iter().filter(|c| !c.0.starts_with("long")) {
        let values = index_values();
        let (compiled, sel) = selection(expr, input, &values);
        let text = svg::render(&sel, expr);
        let doc = roxmltree::Document::parse(&text).unwrap_or_else(|e| panic!("{name}: {e}"));
        // The first output element that reads each input element, from the interpreter.
        let mut first: BTreeMap<String, usize> = BTreeMap::new();
        for (order, &linear) in interpreted_reads(&compiled, &values).iter().enumerate() {
            first.entry(unravel(linear, &sel.input_shape)).or_insert(order);
        }
        let read: BTreeMap<String, usize> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("cell read"))
            .map(|n| {
                (
                    n.attribute("data-coords").unwrap().to_string(),
                    n.attribute("data-order").unwrap().parse().unwrap(),
                )
            })
            .collect();
        let marked = doc.descendants().filter(|n| n.attribute("class") == Some("cell read")).count();
        assert_eq!(marked, read.len(), "{name}: a cell marked twice");
        assert_eq!(read, first, "{name}: the marked cells and their order");
        let labels: Vec<usize> = doc
            .descendants()
            .filter(|n| n.attribute("class") == Some("order"))
            .map(|n| n.text().unwrap().parse().unwrap())
            .collect();
        let mut orders: Vec<usize> = first.values().copied().collect();
        let mut sorted = labels.clone();
        sorted.sort();
        orders.sort();
        assert_eq!(sorted, orders, "{name}: the order labels");
        let cells =
            doc.descendants().filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("cell"))).count();
        let input_numel: i64 = sel.input_shape.iter().product();
        assert_eq!(cells as i64, input_numel, "{name}: every input cell drawn");
    }
}

#[test]
fn svg_arrows_follow_the_steps_and_gathered_rows_name_their_index_values() {
    let (_, sel) = selection("a[::-1, ::2]", "f32[4, 6]", &index_values());
    let text = svg::render(&sel, "a[::-1, ::2]");
    let doc = roxmltree::Document::parse(&text).unwrap();
    let mut steps: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("arrow"))
        .map(|n| n.attribute("data-step").unwrap())
        .collect();
    steps.sort();
    assert_eq!(steps, ["-1", "2"]);
    let (_, sel) = selection("a[i]", "f32[4, 6]", &index_values());
    let text = svg::render(&sel, "a[i]");
    let doc = roxmltree::Document::parse(&text).unwrap();
    let labels: Vec<(&str, &str)> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("chosen-by"))
        .map(|n| (n.attribute("data-coord").unwrap(), n.text().unwrap()))
        .collect();
    assert_eq!(labels, [("0", "i=0"), ("2", "i=2"), ("3", "i=-1")]);
    let notes: Vec<&str> =
        doc.descendants().filter(|n| n.attribute("class") == Some("note")).filter_map(|n| n.text()).collect();
    let (_, sel) = selection("a[None, 1]", "f32[4, 6]", &index_values());
    let newaxis = svg::render(&sel, "a[None, 1]");
    assert!(notes.iter().any(|n| n.contains("chosen by i")), "{notes:?}");
    assert!(
        newaxis.contains("output axis 0: length 1") && newaxis.contains("only index 1 of 4"),
        "{newaxis}"
    );
}

#[test]
fn a_chain_is_drawn_stage_by_stage_ending_with_the_whole() {
    let values = index_values();
    let expr = "a[1:][::-1, ::2][i]";
    let (compiled, whole) = selection(expr, "f32[4, 6]", &values);
    let stages = stages::chain_selections(expr, whole.clone(), &types("f32[4, 6]"), &values);
    let titles: Vec<&str> = stages.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(titles.len(), 3, "{titles:?}");
    assert_eq!(titles[2], expr);
    // Each stage reads fewer cells of `a` than the one before: 18, then 9, then 6 distinct.
    let read: Vec<Option<u64>> = stages.iter().map(|(_, s)| s.distinct).collect();
    assert_eq!(read, [Some(18), Some(9), Some(6)]);
    let text = svg::render_stages(&stages);
    let doc = roxmltree::Document::parse(&text).unwrap();
    let groups: Vec<_> = doc.descendants().filter(|n| n.attribute("class") == Some("stage")).collect();
    assert_eq!(groups.len(), 3);
    // The last stage is the program's own drawing: the interpreter's order, cell by cell.
    let last: BTreeMap<String, usize> = groups[2]
        .descendants()
        .filter(|n| n.attribute("class") == Some("cell read"))
        .map(|n| {
            (
                n.attribute("data-coords").unwrap().to_string(),
                n.attribute("data-order").unwrap().parse().unwrap(),
            )
        })
        .collect();
    let mut first = BTreeMap::new();
    for (order, &linear) in interpreted_reads(&compiled, &values).iter().enumerate() {
        first.entry(unravel(linear, &whole.input_shape)).or_insert(order);
    }
    assert_eq!(last, first);
    // Not a chain: one stage.
    let (_, sel) = selection("a[1:]", "f32[4, 6]", &values);
    assert_eq!(stages::chain_selections("a[1:]", sel, &types("f32[4, 6]"), &values).len(), 1);
}

#[test]
fn rendered_svg_shows_read_cells_in_their_order_colour_and_others_grey() {
    use resvg::{tiny_skia, usvg};
    let (_, sel) = selection("a[::-1, 1:3]", "f32[4, 6]", &index_values());
    let text = svg::render(&sel, "a[::-1, 1:3]");
    let tree = usvg::Tree::from_str(&text, &usvg::Options::default()).unwrap();
    let size = tree.size().to_int_size();
    let mut pixmap = tiny_skia::Pixmap::new(size.width(), size.height()).unwrap();
    resvg::render(&tree, tiny_skia::Transform::default(), &mut pixmap.as_mut());
    let doc = roxmltree::Document::parse(&text).unwrap();
    let (mut read, mut unread) = (0, 0);
    for rect in doc.descendants().filter(|n| n.attribute("class").is_some_and(|c| c.starts_with("cell"))) {
        let num = |a: &str| rect.attribute(a).unwrap().parse::<f64>().unwrap();
        // A corner of the cell, clear of its number.
        let (x, y) = ((num("x") + 4.0) as u32, (num("y") + 4.0) as u32);
        let p = pixmap.pixel(x, y).unwrap();
        let seen = [p.red(), p.green(), p.blue()];
        match rect.attribute("data-order") {
            Some(order) => {
                assert_eq!(
                    seen,
                    order_colour(order.parse().unwrap(), sel.numel),
                    "cell {:?}",
                    rect.attribute("data-coords")
                );
                read += 1;
            }
            None => {
                assert_eq!(seen, [0xec, 0xec, 0xec], "cell {:?}", rect.attribute("data-coords"));
                unread += 1;
            }
        }
    }
    assert_eq!((read, unread), (8, 16));
}

#[test]
fn the_command_draws_plain_text_through_a_pipe_and_writes_svg() {
    let bin = env!("CARGO_BIN_EXE_slc");
    let out = std::process::Command::new(bin)
        .args(["show", "a[1:3, ::-2]", "--shape", "a=f32[4,6]"])
        .env_remove("NO_COLOR")
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(!text.contains('\x1b') && text.contains("5 → 1, step -2"), "{text}");
    let dir = scratch("show", "gather");
    let file = dir.join("gather.svg");
    let data = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data");
    let out = std::process::Command::new(bin)
        .args(["show", "a[i]", "-i"])
        .arg(format!("a={}", data.join("a.npy").display()))
        .arg("-i")
        .arg(format!("i={}", data.join("idx.npy").display()))
        .arg("-o")
        .arg(&file)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let svg = std::fs::read_to_string(&file).unwrap();
    let doc = roxmltree::Document::parse(&svg).unwrap();
    assert!(doc.descendants().any(|n| n.attribute("class") == Some("chosen-by")));
    // A program that reads no input has nothing to draw: a usage error.
    let out = std::process::Command::new(bin).args(["show", "[1, 2][::-1]"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("reads no input tensor"));
    // A program that does not compile is a usage error, reported as a diagnostic.
    let out = std::process::Command::new(bin).args(["show", "a[1:", "--shape", "a=f32[4]"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
}

/// A store's picture marks the cells its updates write, as the interpreter writes them (a
/// target of `arange` stored with -1 changes exactly those), and says so in its summary.
#[test]
fn stores_show_the_cells_they_write() {
    for (expr, written, summary) in [
        ("a[1:3, ::2] = -1", 6, "the writes are strided"),
        ("a[i, ::-1] = -1", 18, "The value (the constant $0) is one element"),
        ("a[[0, 0, 3], 1] = [-1, -2, -3]", 2, "1 update elements rewrite a target element"),
        ("a[:, 2] = v", 4, "The value (v) has an element per update"),
    ] {
        let mut t = types("i64[4, 6]");
        t.insert("v".into(), "i64[4]".parse::<TensorType>().unwrap());
        let values = index_values();
        let compiled = slc::compile_with_values(expr, &t, &values).unwrap();
        let sel = Selection::of(&compiled.plan, &values).unwrap();
        let a = Tensor::from_i64s(DType::I64, &[4, 6], &(0..24).collect::<Vec<_>>()).unwrap();
        let v = Tensor::from_i64s(DType::I64, &[4], &[-1; 4]).unwrap();
        let inputs: Vec<&Tensor> = (compiled.plan.inputs.iter())
            .map(|d| match d.name.as_str() {
                "a" => &a,
                "v" => &v,
                _ => &values["i"],
            })
            .collect();
        let out = interp::run(&compiled.plan, &inputs).unwrap();
        let changed: Vec<Vec<i64>> = (0..24)
            .filter(|&k| out.int_at(k as usize) != Some(k as i128))
            .map(|k| vec![k / 6, k % 6])
            .collect();
        let mut marked: Vec<Vec<i64>> = sel.cells.keys().cloned().collect();
        marked.sort();
        assert_eq!(marked, changed, "{expr}");
        assert_eq!(changed.len(), written, "{expr}");
        let text = terminal::render(&sel, expr, false).split_whitespace().collect::<Vec<_>>().join(" ");
        assert!(text.contains(&format!("It writes {written} of the target's 24 elements")), "{text}");
        assert!(text.contains("Updates i64[") && text.contains(summary), "{text}");
    }
}
