//! Which strategy the passes choose, for one program per strategy.

use super::{LoopNest, MAX_VERSIONS, Target, fit_budget, schedule, schedule_check, schedule_generic};
use crate::sema::InputTypes;

const SHUFFLES: Target = Target { byte_shuffles: true };
const NO_SHUFFLES: Target = Target { byte_shuffles: false };

fn plan(src: &str, inputs: &[&str]) -> crate::plan::VerifiedPlan {
    let types: InputTypes = inputs
        .iter()
        .map(|d| {
            let (name, ty) = d.split_once('=').expect("NAME=TYPE");
            (name.to_string(), ty.parse().expect("a tensor type"))
        })
        .collect();
    crate::compile(src, &types).unwrap_or_else(|e| panic!("{src}: {e}")).plan
}

/// The `run [...]` line of a nest.
fn strategies(nest: &LoopNest) -> String {
    nest.to_string().lines().nth(1).expect("a nest with loops").trim().to_string()
}

#[test]
fn each_strategy_has_its_program() {
    let cases: &[(&str, &[&str], Target, &str)] = &[
        ("a[1:]", &["a=f32[1024,1024]"], SHUFFLES, "run [block memcpy]"),
        ("a[:, 1:-1]", &["a=f32[4096,4096]"], SHUFFLES, "run [serial, block loop]"),
        ("a[[3, 1]][:, 1:-1]", &["a=f32[64,64]"], SHUFFLES, "run [serial, block memcpy]"),
        ("a[2:, ..., None, :10]", &["a=f32[64,64,64,64]"], SHUFFLES, "run [block-rows, joined]"),
        ("a[::-1]", &["a=f32[1000]"], SHUFFLES, "run [strided reverse]"),
        ("a[::-1]", &["a=f32[1000]"], NO_SHUFFLES, "run [strided]"),
        ("a[:, :31:2]", &["a=f32[64,64]"], SHUFFLES, "run [serial, strided evens]"),
        ("a[:, :31:3]", &["a=f32[64,64]"], SHUFFLES, "run [serial, strided]"),
        ("img[..., ::-1]", &["img=u8[10,10,3]"], SHUFFLES, "run [reversed-tiles, joined]"),
        ("img[..., ::-1]", &["img=u8[10,10,3]"], NO_SHUFFLES, "run [serial, strided]"),
        ("a[:, idx]", &["a=f32[512,300]", "idx=i64[600]"], SHUFFLES, "run [index-table ahead 1200, joined]"),
        ("a[:, idx]", &["a=f32[4,300]", "idx=i64[3000]"], SHUFFLES, "run [serial, guarded-gather]"),
        (
            "a[i] = v",
            &["a=f32[100000,256]", "i=i64[600]", "v=f32[600,256]"],
            SHUFFLES,
            "run [serial, block streaming]",
        ),
        (
            "a[i] = v",
            &["a=f32[900,256]", "i=i64[600]", "v=f32[600,256]"],
            SHUFFLES,
            "run [serial, block loop]",
        ),
        ("a[i] = v", &["a=f32[900,64]", "i=i64[600]", "v=f32[600,64]"], SHUFFLES, "run [serial, block loop]"),
        ("a[i, ::2] = 0", &["a=f32[900,512]", "i=i64[600]"], SHUFFLES, "run [serial, strided]"),
        ("a[:, ::2] = b", &["a=f32[64,64]", "b=f32[64,32]"], SHUFFLES, "run [strided spread]"),
        // Past the caches, by a call that prefetches ahead: with byte shuffles or without;
        // not where the runs are short (the prefetches would mostly miss them).
        ("a[:, ::2] = b", &["a=f32[4096,4096]", "b=f32[4096,2048]"], SHUFFLES, "run [spread ahead]"),
        ("a[:, ::2] = b", &["a=f32[4096,4096]", "b=f32[4096,2048]"], NO_SHUFFLES, "run [spread ahead]"),
        (
            "a[::2, ::2] = b",
            &["a=f32[4096,4096]", "b=f32[2048,2048]"],
            SHUFFLES,
            "run [serial, spread ahead]",
        ),
        (
            "a[:, :99:2] = b",
            &["a=f32[40000,1000]", "b=f32[40000,50]"],
            SHUFFLES,
            "run [serial, strided spread]",
        ),
        ("a[:, ::2] += b", &["a=f32[4096,4096]", "b=f32[4096,2048]"], SHUFFLES, "run [strided]"),
        (
            "gather(a, idx, axis=1, batch_dims=1)",
            &["a=f32[512,300]", "idx=i64[512,600]"],
            SHUFFLES,
            "run [serial, guarded-gather ahead 1200]",
        ),
        ("a[i[j]]", &["a=f32[6,5]", "i=i64[4]", "j=i16[3]"], SHUFFLES, "run [serial, block inline]"),
        // Gathers of gathers: in a table when fixed along the rows, else one element at a time.
        ("a[:, i[j]]", &["a=f32[6,5]", "i=i64[4]", "j=i16[3]"], SHUFFLES, "run [index-table, joined]"),
        ("a[i[j]]", &["a=f32[6]", "i=i64[4]", "j=i16[3,2]"], SHUFFLES, "run [serial]"),
        // A store of one value through a mask: the mask's bytes widened into lanes where the
        // elements and the bytes are consecutive; bytes of one per element need no shuffle.
        ("a[m] = 0", &["a=f32[64,64]", "m=bool[64,64]"], SHUFFLES, "run [masked-run]"),
        ("a[m] += 1", &["a=f64[9,7]", "m=bool[9,7]"], SHUFFLES, "run [masked-run]"),
        ("a[m] = 0", &["a=u8[64,64]", "m=bool[64,64]"], NO_SHUFFLES, "run [masked-run]"),
        ("a[m] = 0", &["a=f32[64,64]", "m=bool[64,64]"], NO_SHUFFLES, "run [serial]"),
        // A mask over rows: each row skipped or filled whole.
        ("a[m, 1:] = 0", &["a=f32[64,64]", "m=bool[64]"], SHUFFLES, "run [serial, masked-row]"),
        ("a[m] *= 2", &["a=i16[64,64]", "m=bool[64]"], NO_SHUFFLES, "run [serial, masked-row]"),
        ("img[m] = 0", &["img=u8[10,10,3]", "m=bool[10,10]"], SHUFFLES, "run [serial, masked-row]"),
        // Rows of a box larger than the caches are filled with non-temporal stores.
        ("a[r] = 0", &["a=f32[4096,4096]", "r=bool[4096]"], SHUFFLES, "run [serial, masked-row streaming]"),
        ("a[r] += 1", &["a=f32[4096,4096]", "r=bool[4096]"], SHUFFLES, "run [serial, masked-row]"),
        ("a[r, ::2] = 0", &["a=f32[4096,4096]", "r=bool[4096]"], SHUFFLES, "run [serial, masked-row]"),
        ("a[:, ::2][m] = 0", &["a=f32[64,64]", "m=bool[64,32]"], SHUFFLES, "run [serial]"),
        ("a[m] = 0", &["a=c128[64]", "m=bool[64]"], SHUFFLES, "run [serial]"),
    ];
    for &(src, inputs, target, expected) in cases {
        let nest = schedule(&plan(src, inputs), target, |_, _| {});
        assert_eq!(strategies(&nest), expected, "{src} on {inputs:?}:\n{nest}");
    }
}

#[test]
fn checks_are_nests_of_their_own() {
    let plan = plan("a[idx]", &["a=f32[8,4]", "idx=i32[5,2]"]);
    let nest = schedule_check(&plan, &plan.checks[0], SHUFFLES).expect("values to check");
    assert_eq!(nest.to_string().lines().next(), Some("checknest w4 loops [10]"), "{nest}");
    assert_eq!(strategies(&nest), "run [guarded-gather]", "{nest}");
    // Every value goes to the same scratch slot.
    assert_eq!(nest.out, [crate::types::sym::SymExpr::constant(0)]);
    let empty = crate::plan::Check { shape: vec![0], ..plan.checks[0].clone() };
    assert!(schedule_check(&plan, &empty, SHUFFLES).is_none());
}

/// The nest of `src` over inputs whose dims may be symbols.
fn generic_nest(src: &str, inputs: &[&str], target: Target) -> LoopNest {
    let types: crate::sema::SymInputTypes = inputs
        .iter()
        .map(|d| {
            let (name, ty) = d.split_once('=').expect("NAME=TYPE");
            (name.to_string(), ty.parse().expect("a tensor type"))
        })
        .collect();
    let compiled = crate::pipeline::compile_generic(src, &types).unwrap_or_else(|e| panic!("{src}: {e}"));
    let plan = crate::plan::verify_generic(compiled.plan).expect("a verified plan");
    schedule_generic(&plan, target, |_, _| {})
}

#[test]
fn versions_count_every_per_call_decision() {
    let cases: &[(&str, &[&str], Target, &str, usize)] = &[
        // Concrete nests decide nothing per call.
        ("a[:, 1:-1]", &["a=f32[64,64]"], SHUFFLES, "run [serial, block loop]", 1),
        ("a[1:]", &["a=f32[N,M]"], SHUFFLES, "run [block memcpy]", 1),
        // Six size classes, each unrolled or not by the rows' symbolic stride; else the rows one
        // by one, each block by its size (six classes, the loop, memcpy).
        (
            "a[:, 1:-1]",
            &["a=f32[N,M]"],
            SHUFFLES,
            "run [(block-rows if <= 64 B, else serial), block (inline if <= 64 B, loop if <= 256 KiB, else memcpy)]",
            6 * 2 + 8,
        ),
        ("a[::-1]", &["a=f32[N]"], SHUFFLES, "run [strided reverse]", 1),
        // The rows' stride is symbolic: unrolled or not.
        ("a[:, ::2]", &["a=f32[N,M]"], SHUFFLES, "run [serial, strided evens]", 1),
        ("a[::2, 0]", &["a=f32[N,M]"], SHUFFLES, "run [strided]", 2),
        // Tiles of 2 to 8 one-byte elements, else a strided reverse per tile.
        (
            "img[..., ::-1]",
            &["img=u8[H,W,C]"],
            SHUFFLES,
            "run [(reversed-tiles if tiles of 2-8 B, else strided reverse), joined]",
            7 + 1,
        ),
    ];
    for &(src, inputs, target, run, versions) in cases {
        let nest = generic_nest(src, inputs, target);
        assert_eq!(
            (strategies(&nest).as_str(), nest.versions()),
            (run, versions),
            "{src} on {inputs:?}:\n{nest}"
        );
        assert!(nest.versions() <= MAX_VERSIONS);
    }
}

#[test]
fn the_budget_takes_decisions_back_outermost_first() {
    let mut nest = generic_nest("a[:, 1:-1]", &["a=f32[N,M]"], SHUFFLES);
    assert!(!fit_budget(&mut nest, 20), "within the budget: unchanged");
    // The rows one by one, each block still copied by its size; then memcpy.
    assert!(fit_budget(&mut nest, 19));
    let by_size = "block (inline if <= 64 B, loop if <= 256 KiB, else memcpy)";
    assert_eq!((strategies(&nest), nest.versions()), (format!("run [serial, {by_size}]"), 8));
    assert!(fit_budget(&mut nest, 1));
    assert_eq!((strategies(&nest), nest.versions()), ("run [serial, block memcpy]".to_string(), 1));
    // Reversed tiles of a symbolic size: a strided reverse per tile, as for tiles too long.
    let mut tiles = generic_nest("img[..., ::-1]", &["img=u8[H,W,C]"], SHUFFLES);
    assert!(fit_budget(&mut tiles, 4));
    assert_eq!((strategies(&tiles), tiles.versions()), ("run [serial, strided reverse]".to_string(), 1));
    // What cannot be taken back (a loop unrolled or not by the call) stays.
    let mut strided = generic_nest("a[::2, 0]", &["a=f32[N,M]"], SHUFFLES);
    assert!(!fit_budget(&mut strided, 1));
    assert_eq!(strided.versions(), 2);
}

/// A transposed layout is read in tiles where its inner loop steps across lines and its rows
/// within them; not where the inner loop reads within a line, nor through a gather.
#[test]
fn transposed_layouts_take_tiles() {
    let cases: &[(&str, &str, &[i64], &str)] = &[
        // Strides in elements.
        ("a[1:]", "a=f32[300,200]", &[1, 300], "run [transpose-tiles, joined]"),
        ("a[::-1, ::2]", "a=f64[300,200]", &[1, 300], "run [transpose-tiles, joined]"),
        ("a[:, 1:]", "a=u8[3,40,50]", &[2000, 1, 40], "run [serial, serial, strided]"),
        ("a[:, 1:]", "a=u8[3,80,50]", &[4000, 1, 80], "run [serial, transpose-tiles, joined]"),
        ("a[1:, i]", "a=f32[300,200]", &[1, 300], "run [index-table, joined]"),
    ];
    for &(src, input, strides, expected) in cases {
        let (name, ty) = input.split_once('=').unwrap();
        let mut types = InputTypes::new();
        types.insert(name.to_string(), ty.parse().unwrap());
        types.insert("i".to_string(), "i64[7]".parse().unwrap());
        let compiled = crate::compile(src, &types).unwrap_or_else(|e| panic!("{src}: {e}"));
        let strides = crate::plan::InputStrides::from([(name.to_string(), strides.to_vec())]);
        let plan = crate::plan::lower_with_strides(&compiled.checked, &strides).unwrap();
        let plan = crate::plan::verify(plan).unwrap();
        let nest = schedule(&plan, SHUFFLES, |_, _| {});
        assert_eq!(strategies(&nest), expected, "{src} on {input} strides {strides:?}:\n{nest}");
    }
}
