//! Fusion is invisible: a chain `a[X][Y][Z]` compiled into one plan gives exactly what
//! evaluating each indexing separately (materializing every intermediate) gives, errors included.
//! Both sides run on the reference interpreter, so this tests lowering and composition.

use proptest::prelude::*;
use slc::{DType, Session, Tensor};

#[derive(Debug, Clone)]
enum Item {
    Int(i64),
    Slice(Option<i64>, Option<i64>, Option<i64>),
    Ellipsis,
    NewAxis,
    List(Vec<i64>),
    Bound,
}

fn render(items: &[Item]) -> String {
    let parts: Vec<String> = items
        .iter()
        .map(|item| match item {
            Item::Int(i) => i.to_string(),
            Item::Slice(a, b, c) => {
                let show = |v: &Option<i64>| v.map(|v| v.to_string()).unwrap_or_default();
                match c {
                    Some(_) => format!("{}:{}:{}", show(a), show(b), show(c)),
                    None => format!("{}:{}", show(a), show(b)),
                }
            }
            Item::Ellipsis => "...".into(),
            Item::NewAxis => "newaxis".into(),
            Item::List(v) => format!("{v:?}"),
            Item::Bound => "idx".into(),
        })
        .collect();
    format!("[{}]", parts.join(", "))
}

fn item() -> impl Strategy<Value = Item> {
    let bound = proptest::option::of(-7i64..7);
    let step = proptest::option::of(prop_oneof![-3i64..0, 1i64..4]);
    prop_oneof![
        3 => (bound.clone(), bound, step).prop_map(|(a, b, c)| Item::Slice(a, b, c)),
        2 => (-2i64..2).prop_map(Item::Int),
        1 => Just(Item::Ellipsis),
        1 => Just(Item::NewAxis),
        1 => proptest::collection::vec(-4i64..4, 0..4).prop_map(Item::List),
        1 => Just(Item::Bound),
    ]
}

fn arange(dtype: DType, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_i64s(dtype, shape, &(0..n as i64).collect::<Vec<_>>()).unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(3000))]
    #[test]
    fn chains_fuse_exactly(
        shape in proptest::collection::vec(0usize..5, 1..5),
        steps in proptest::collection::vec(proptest::collection::vec(item(), 1..4), 1..4),
        idx in proptest::collection::vec(-5i64..5, 0..4),
    ) {
        let mut session = Session::new();
        session.bind("a", arange(DType::I32, &shape));
        session.bind("idx", Tensor::from_i64s(DType::I16, &[idx.len()], &idx).unwrap());
        let fused_src = format!("a{}", steps.iter().map(|s| render(s)).collect::<String>());
        let fused = session.eval(&fused_src);

        let mut stepwise = Ok(());
        let mut current = "a".to_string();
        for (k, step) in steps.iter().enumerate() {
            match session.eval(&format!("{current}{}", render(step))) {
                Ok(t) => {
                    current = format!("t{k}");
                    session.bind(&current, t);
                }
                Err(e) => {
                    stepwise = Err(e);
                    break;
                }
            }
        }
        match (fused, stepwise) {
            (Ok(f), Ok(())) => prop_assert_eq!(&f, session.get(&current).unwrap(), "{}", fused_src),
            (Err(_), Err(_)) => {}
            (f, s) => prop_assert!(false, "{}: fused {:?} but stepwise {:?}", fused_src, f.map(|t| t.shape().to_vec()), s.err()),
        }
    }
}
