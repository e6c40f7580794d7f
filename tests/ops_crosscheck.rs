//! Each operator form against the NumPy indexing that means the same thing, both through the
//! reference interpreter. The generators stay where the two sources agree (docs/semantics.md,
//! strided_slice and slice: OpenVINO and ONNX clamp a reverse start below `-n` to 0, NumPy to
//! "before 0"); those differences have their own unit tests in src/sema/ops/.

use proptest::prelude::*;
use slc::{DType, Session, Tensor};

fn arange(shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    Tensor::from_i64s(DType::I32, shape, &(0..n as i64).collect::<Vec<_>>()).unwrap()
}

fn list(v: &[i64]) -> String {
    format!("{v:?}")
}

fn bits(v: &[bool]) -> String {
    list(&v.iter().map(|&b| b as i64).collect::<Vec<_>>())
}

/// Evaluates both programs on `a`; both must fail, or both succeed with equal results.
fn same(shape: &[usize], op: &str, numpy: &str) -> Result<(), TestCaseError> {
    let mut s = Session::new();
    s.bind("a", arange(shape));
    match (s.eval(op), s.eval(numpy)) {
        (Ok(x), Ok(y)) => prop_assert_eq!(x, y, "{} vs {}", op, numpy),
        (Err(_), Err(_)) => {}
        (x, y) => prop_assert!(
            false,
            "{op} -> {:?}, {numpy} -> {:?}",
            x.map(|t| t.shape().to_vec()),
            y.map(|t| t.shape().to_vec())
        ),
    }
    Ok(())
}

#[derive(Debug, Clone)]
struct Entry {
    begin: i64,
    end: i64,
    stride: i64,
    begin_mask: bool,
    end_mask: bool,
    new_axis: bool,
    shrink: bool,
}

fn entry() -> impl Strategy<Value = Entry> {
    (-8i64..8, -8i64..8, prop_oneof![-3i64..0, 1i64..4], any::<bool>(), any::<bool>(), 0u8..8).prop_map(
        |(begin, end, stride, begin_mask, end_mask, kind)| Entry {
            begin,
            end,
            stride,
            begin_mask,
            end_mask,
            new_axis: kind == 0,
            shrink: kind == 1,
        },
    )
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    #[test]
    fn strided_slice_is_numpy_indexing(
        shape in proptest::collection::vec(0usize..5, 0..5),
        mut entries in proptest::collection::vec(entry(), 0..5),
        ellipsis_at in proptest::option::of(0usize..5),
    ) {
        let ellipsis_at = ellipsis_at.filter(|&i| i < entries.len());
        let rank = shape.len();
        let mut items = vec![];
        let mut axis = 0;
        let real = entries.iter().enumerate().filter(|(i, e)| Some(*i) != ellipsis_at && !e.new_axis).count();
        for (i, e) in entries.iter_mut().enumerate() {
            if Some(i) == ellipsis_at {
                items.push("...".to_string());
                axis += rank.saturating_sub(real);
            } else if e.new_axis {
                items.push("newaxis".into());
            } else if e.shrink {
                // A shrink entry ignores its begin_mask bit: NumPy's integer index is its begin.
                items.push(e.begin.to_string());
                axis += 1;
            } else {
                let n = shape.get(axis).copied().unwrap_or(0) as i64;
                // Stay where OpenVINO and NumPy agree: a reverse begin below -n.
                if e.stride < 0 && !e.begin_mask && e.begin < -n {
                    e.begin = -n;
                }
                let start = if e.begin_mask { String::new() } else { e.begin.to_string() };
                let stop = if e.end_mask { String::new() } else { e.end.to_string() };
                items.push(format!("{start}:{stop}:{}", e.stride));
                axis += 1;
            }
        }
        let m = entries.len();
        let mask = |f: &dyn Fn(usize, &Entry) -> bool| bits(&entries.iter().enumerate().map(|(i, e)| f(i, e)).collect::<Vec<_>>());
        let op = format!(
            "strided_slice(a, {}, {}, {}, begin_mask={}, end_mask={}, new_axis_mask={}, shrink_axis_mask={}, ellipsis_mask={})",
            list(&entries.iter().map(|e| e.begin).collect::<Vec<_>>()),
            list(&entries.iter().map(|e| e.end).collect::<Vec<_>>()),
            list(&entries.iter().map(|e| e.stride).collect::<Vec<_>>()),
            mask(&|_, e| e.begin_mask),
            mask(&|_, e| e.end_mask),
            mask(&|i, e| Some(i) != ellipsis_at && e.new_axis),
            mask(&|i, e| Some(i) != ellipsis_at && !e.new_axis && e.shrink),
            mask(&|i, _| Some(i) == ellipsis_at),
        );
        let numpy = if m == 0 { "a".to_string() } else { format!("a[{}]", items.join(", ")) };
        same(&shape, &op, &numpy)?;
    }

    #[test]
    fn onnx_slice_is_numpy_indexing(
        shape in proptest::collection::vec(0usize..5, 1..5),
        specs in proptest::collection::vec((-8i64..8, -8i64..8, prop_oneof![-3i64..0, 1i64..4], 0usize..4), 0..4),
        negative_axes in any::<bool>(),
    ) {
        let rank = shape.len();
        let mut items = vec![":".to_string(); rank];
        let (mut starts, mut ends, mut axes, mut steps) = (vec![], vec![], vec![], vec![]);
        for (start, end, step, axis) in specs {
            let axis = axis % rank;
            if axes.iter().any(|&a: &i64| (a + rank as i64) as usize % rank == axis) {
                continue; // repeated axes are an error; tested elsewhere
            }
            let n = shape[axis] as i64;
            let start = if step < 0 && start < -n { -n } else { start };
            items[axis] = format!("{start}:{end}:{step}");
            starts.push(start);
            ends.push(end);
            steps.push(step);
            axes.push(if negative_axes { axis as i64 - rank as i64 } else { axis as i64 });
        }
        let op = format!("slice(a, {}, {}, axes={}, steps={})", list(&starts), list(&ends), list(&axes), list(&steps));
        same(&shape, &op, &format!("a[{}]", items.join(", ")))?;
    }

    #[test]
    fn gather_is_numpy_take(
        shape in proptest::collection::vec(1usize..5, 1..5),
        axis in 0usize..4,
        indices in proptest::collection::vec(-4i64..4, 0..5),
        two_d in any::<bool>(),
        mode in prop_oneof![Just("error"), Just("zero")],
    ) {
        let axis = axis % shape.len();
        let n = shape[axis] as i64;
        let indices: Vec<i64> = indices.into_iter().filter(|&j| -n <= j && j < n).collect();
        let literal = if two_d && indices.len().is_multiple_of(2) && !indices.is_empty() {
            let rows: Vec<String> = indices.chunks(2).map(list).collect();
            format!("[{}]", rows.join(", "))
        } else {
            list(&indices)
        };
        let op = format!("gather(a, {literal}, {axis}, mode={mode})");
        let mut items = vec![":".to_string(); axis];
        items.push(literal);
        same(&shape, &op, &format!("a[{}]", items.join(", ")))?;
    }

    #[test]
    fn slice1_is_numpy_indexing(
        dims in proptest::collection::vec((1usize..6, 0usize..6, 1usize..6, prop_oneof![-3i64..0, 1i64..4]), 1..4),
    ) {
        let shape: Vec<usize> = dims.iter().map(|d| d.0).collect();
        let (mut offsets, mut sizes, mut strides, mut items) = (vec![], vec![], vec![], vec![]);
        for &(n, o, w, t) in &dims {
            let o = o % n;
            let w = 1 + (w - 1) % (n - o);
            let (o, w) = (o as i64, w as i64);
            offsets.push(o);
            sizes.push(w);
            strides.push(t);
            items.push(if t > 0 {
                format!("{o}:{}:{t}", o + w)
            } else if o == 0 {
                format!("{}::{t}", o + w - 1)
            } else {
                format!("{}:{}:{t}", o + w - 1, o - 1)
            });
        }
        let op = format!("slice1(a, {}, {}, {})", list(&offsets), list(&sizes), list(&strides));
        same(&shape, &op, &format!("a[{}]", items.join(", ")))?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    /// One index tuple of `m >= 1` entries is NumPy indexing by `m` integers (a new axis in front
    /// for the tuple grid); `m = 0` is refused (tests/onnx_gathers.rs).
    #[test]
    fn gather_nd_of_one_tuple_is_numpy_indexing(
        shape in proptest::collection::vec(1usize..5, 1..5),
        tuple in proptest::collection::vec(-4i64..4, 1..5),
        mode in prop_oneof![Just("error"), Just("zero")],
    ) {
        let tuple: Vec<i64> =
            tuple.iter().zip(&shape).map(|(&j, &n)| j.rem_euclid(2 * n as i64) - n as i64).collect();
        let op = format!("gather_nd(a, [{}], mode={mode})", list(&tuple));
        let items: Vec<String> = tuple.iter().map(|j| j.to_string()).collect();
        same(&shape, &op, &format!("a[{}][newaxis]", items.join(", ")))?;
    }

    /// Along a 1-D tensor, gather_elements is NumPy's integer-array indexing.
    #[test]
    fn gather_elements_in_one_dimension_is_numpy_indexing(
        n in 1usize..6,
        indices in proptest::collection::vec(-6i64..6, 0..6),
    ) {
        let indices: Vec<i64> = indices.into_iter().filter(|&j| -(n as i64) <= j && j < n as i64).collect();
        same(&[n], &format!("gather_elements(a, {})", list(&indices)), &format!("a[{}]", list(&indices)))?;
    }
}
