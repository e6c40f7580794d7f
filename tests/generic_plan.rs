//! Generic plans (`Plan<SymExpr>`): their text round-trips, `verify_generic` proves or requires
//! every address bound, and a plan bound to one call's shapes is a concrete plan that `verify`
//! accepts and that computes what the concrete pipeline computes for those shapes.

use proptest::prelude::*;
use slc::backend::interp;
use slc::plan::{self, GenericPlan, ShapeMismatch, parse::parse_generic};
use slc::types::TensorType;
use slc::{DType, Tensor};

/// `a[1:, ::-1]` over `i32[N, M]`, written by hand: row `1+i`, column `M-1-j`.
const CROP_FLIP: &str = "plan(a: i32[N, M]) -> i32[max(0, N-1), M]\n  out a{2*M-1; M, -1}\n";

fn generic(text: &str) -> GenericPlan {
    parse_generic(text).unwrap_or_else(|e| panic!("{e}\n{text}"))
}

fn ramp(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let values: Vec<i64> = (0..n as i64).collect();
    Tensor::from_i64s(DType::I32, shape, &values).unwrap()
}

/// The generic plan on `a` of `shape` (bound, verified, interpreted) and the concrete pipeline
/// for `src` on that shape.
fn both(
    plan: &plan::VerifiedGenericPlan,
    src: &str,
    shape: &[usize],
) -> (Result<Tensor, ShapeMismatch>, Tensor) {
    let a = ramp(shape);
    let dims: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    let bound = plan.binding(&[&dims], &|_, _| None).and_then(|env| plan.bind(&env));
    let generic = bound.map(|p| {
        let p = plan::verify(p).expect("a plan bound after its requirements held verifies");
        interp::run(&p, &[&a]).expect("the interpreter runs a verified plan")
    });
    let ty = TensorType::of(DType::I32, shape);
    let concrete = slc::compile(src, &[("a".to_string(), ty)].into()).expect("compiles");
    let expected = interp::run(&concrete.plan, &[&a]).unwrap();
    (generic, expected)
}

#[test]
fn text_round_trips() {
    let text = "plan(a: i32[N, M], k: i64[]) -> i32[max(0, N-1), M]\n  \
                require 1 <= N  # index 1 is out of bounds for axis 0 with size N\n  \
                out a{2*M-1; M, -1} + (M*2)*clamp<N>(k{0;})\n";
    let plan = generic(text);
    assert_eq!(plan.requires.len(), 1);
    assert_eq!(plan.requires[0].message, "index 1 is out of bounds for axis 0 with size N");
    assert_eq!(generic(&plan.to_string()), plan, "{plan}");
    // A concrete plan in generic form reads back as the same concrete plan.
    let concrete = slc::plan::parse::parse("plan(a: i32[4, 5]) -> i32[3, 5]\n  out a{9; 5, -1}\n").unwrap();
    assert_eq!(concrete.generic().concrete().as_ref(), Some(&concrete));
    // A generic plan is not a concrete one.
    assert!(slc::plan::parse::parse(CROP_FLIP).is_err());
}

proptest! {
    #[test]
    fn a_bound_plan_computes_what_the_concrete_pipeline_does(n in 0usize..6, m in 0usize..6) {
        let plan = plan::verify_generic(generic(CROP_FLIP)).unwrap();
        let (generic, expected) = both(&plan, "a[1:, ::-1]", &[n, m]);
        prop_assert_eq!(generic.unwrap(), expected);
    }

    /// One element too far: the base of a plan that reads past the end for every non-empty
    /// output. Verification cannot reject it for all shapes (it is fine where nothing is read),
    /// so it requires the bound, and every shape that would read refuses to bind.
    #[test]
    fn an_address_past_the_end_is_required_away(n in 0usize..6, m in 0usize..6) {
        let plan = plan::verify_generic(generic(&CROP_FLIP.replace("2*M-1", "2*M"))).unwrap();
        let (generic, _) = both(&plan, "a[1:, ::-1]", &[n, m]);
        let reads = n >= 2 && m >= 1;
        prop_assert_eq!(generic.is_err(), reads);
    }
}

#[test]
fn bindings_check_the_declared_dims() {
    let plan = generic("plan(a: i32[N, 3], b: i32[N]) -> i32[N]\n  out b{0; 1}\n");
    let bind =
        |a: &[i64], b: &[i64]| plan.binding(&[a, b], &|_, _| None).map(|_| ()).map_err(|e| e.to_string());
    assert_eq!(bind(&[4, 3], &[4]), Ok(()));
    assert_eq!(bind(&[4, 2], &[4]).unwrap_err(), "axis 1 of `a` has the size 2, not 3");
    assert_eq!(bind(&[4, 3], &[5]).unwrap_err(), "`N` is 4 (axis 0 of `a`) but 5 (axis 0 of `b`)");
    assert_eq!(bind(&[4, 3, 1], &[4]).unwrap_err(), "input `a` has rank 3, not 2");
    assert!(bind(&[1 << 62 | 1, 3], &[1 << 62 | 1]).unwrap_err().contains("beyond"));
    let scalar = generic("plan(a: i32[N], k: i64[]) -> i32[k[()]]\n  out a{0; 1}\n");
    let env =
        scalar.binding(&[&[8], &[]], &|name, index| (name == "k" && index.is_none()).then_some(3)).unwrap();
    assert_eq!(scalar.bind(&env).unwrap().shape, vec![3]);
    assert!(scalar.binding(&[&[8], &[]], &|_, _| None).unwrap_err().to_string().contains("`k[()]`"));
}

/// The crop's bounds hold for every shape (under "the output is not empty"): proven, so its
/// shape function checks nothing; the plan reading one element further cannot be proven.
#[test]
fn bounds_of_a_dense_crop_are_proven() {
    assert_eq!(plan::verify_generic(generic(CROP_FLIP)).unwrap().requires, vec![]);
    let past = plan::verify_generic(generic(&CROP_FLIP.replace("2*M-1", "2*M"))).unwrap();
    assert_eq!(past.requires.len(), 1, "{}", *past);
    assert!(past.requires[0].message.contains("past the end of `a`"));
}
