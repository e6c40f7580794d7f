//! Which strategy the passes choose, for one program per strategy.

use super::{LoopNest, Target, schedule, schedule_check};
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
            "gather(a, idx, axis=1, batch_dims=1)",
            &["a=f32[512,300]", "idx=i64[512,600]"],
            SHUFFLES,
            "run [serial, guarded-gather ahead 1200]",
        ),
        ("a[i[j]]", &["a=f32[6,5]", "i=i64[4]", "j=i16[3]"], SHUFFLES, "run [serial, block inline]"),
        // Gathers of gathers: in a table when fixed along the rows, else one element at a time.
        ("a[:, i[j]]", &["a=f32[6,5]", "i=i64[4]", "j=i16[3]"], SHUFFLES, "run [index-table, joined]"),
        ("a[i[j]]", &["a=f32[6]", "i=i64[4]", "j=i16[3,2]"], SHUFFLES, "run [serial]"),
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
