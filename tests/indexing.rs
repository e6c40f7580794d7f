//! NumPy's advanced indexing, readably: several index arrays broadcast together, integers among
//! them, boolean masks (read when the program is checked), NumPy's placement rule, the errors
//! and where they point, and that the whole subscript is one access of the plan. Expected shapes
//! and values are NumPy 2's (the golden corpus holds many more, generated).

use slc::sema::{InputTypes, InputValues};
use slc::types::TensorType;
use slc::{DType, Error, Executor, Session, Tensor};

fn ty(s: &str) -> TensorType {
    s.parse().unwrap()
}

fn ints(shape: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_i64s(DType::I64, shape, values).unwrap()
}

fn mask(shape: &[usize], bits: &[u8]) -> Tensor {
    Tensor::from_bytes(DType::Bool, shape, bits).unwrap()
}

/// `a: f32[2, 3, 4, 5]`, `i: i64[2, 1]`, `j: i64[3]` (types only), and the mask `m: bool[2, 3]`
/// with its value.
fn inputs() -> (InputTypes, InputValues) {
    let types = [("a", "f32[2, 3, 4, 5]"), ("i", "i64[2, 1]"), ("j", "i64[3]"), ("m", "bool[2, 3]")]
        .into_iter()
        .map(|(n, t)| (n.to_string(), ty(t)))
        .collect();
    let values = [("m".to_string(), mask(&[2, 3], &[1, 0, 1, 0, 1, 1]))].into_iter().collect();
    (types, values)
}

fn shape_of(src: &str) -> Vec<i64> {
    let (types, values) = inputs();
    match slc::compile_with_values(src, &types, &values) {
        Ok(c) => c.plan.shape.clone(),
        Err(e) => panic!("{}", e.render(src)),
    }
}

fn error_of(src: &str) -> Error {
    let (types, values) = inputs();
    slc::compile_with_values(src, &types, &values).err().unwrap_or_else(|| panic!("`{src}` compiles"))
}

/// The diagnostic's code and the text its first label points at.
fn code_and_target(src: &str) -> (&'static str, String) {
    let d = error_of(src).diagnostic();
    let span = d.labels[0].span;
    (d.code, src[span.start..span.end].to_string())
}

#[test]
fn adjacent_advanced_items_keep_their_place_and_separated_ones_go_first() {
    // `i` (2, 1) and `j` (3,) broadcast to (2, 3); an integer counts as a 0-d array.
    let cases: &[(&str, &[i64])] = &[
        ("a[i, j]", &[2, 3, 4, 5]),
        ("a[:, i, j]", &[2, 2, 3, 5]),
        ("a[..., i, j]", &[2, 3, 2, 3]),
        ("a[:, i, 0, j]", &[2, 2, 3]),
        // Separated by a slice, an ellipsis or a new axis: the broadcast dimensions go first.
        ("a[i, :, j]", &[2, 3, 3, 5]),
        ("a[0, :, j]", &[3, 3, 5]),
        ("a[i, ..., j]", &[2, 3, 3, 4]),
        ("a[i, None, j]", &[2, 3, 1, 4, 5]),
        ("a[None, i, j]", &[1, 2, 3, 4, 5]),
        // List literals are index arrays too.
        ("a[[0, 1], :, [[1], [2]]]", &[2, 2, 3, 5]),
    ];
    for (src, want) in cases {
        assert_eq!(shape_of(src), *want, "{src}");
    }
}

#[test]
fn masks_are_their_nonzero_arrays() {
    // `m` has 4 True elements; it covers a's first two axes.
    let cases: &[(&str, &[i64])] = &[
        ("a[m]", &[4, 4, 5]),
        ("a[m, 1:]", &[4, 3, 5]),
        ("a[m, 0]", &[4, 5]),
        ("a[m, :, [0, 1, 0, 1]]", &[4, 4]),
        ("a[:, [True, False, True]]", &[2, 2, 4, 5]),
        ("a[[[True, False, True], [False, False, True]]]", &[3, 4, 5]),
        // 0-d booleans add an axis of 1 (True) or 0 (False), as an advanced item.
        ("a[True]", &[1, 2, 3, 4, 5]),
        ("a[False]", &[0, 2, 3, 4, 5]),
        ("a[..., True]", &[2, 3, 4, 5, 1]),
        ("a[0, :, True]", &[1, 3, 4, 5]),
        // Chains fuse as every other subscript does.
        ("a[m][1:]", &[3, 4, 5]),
        ("gather(a[m], [3, 0], axis=0)", &[2, 4, 5]),
    ];
    for (src, want) in cases {
        assert_eq!(shape_of(src), *want, "{src}");
    }
}

#[test]
fn a_subscript_with_several_arrays_is_one_access_with_a_term_and_a_check_each() {
    let (types, values) = inputs();
    let compiled = slc::compile_with_values("a[i, :, j][::-1]", &types, &values).unwrap();
    let plan = &compiled.plan;
    assert_eq!(plan.output.terms.len(), 2, "{plan}");
    assert!(plan.output.terms.iter().all(|t| t.index.terms.is_empty()), "{plan}");
    assert_eq!(plan.checks.len(), 2, "{plan}");
    // The mask's value is read, so a cache must key on it.
    let compiled = slc::compile_with_values("a[m]", &types, &values).unwrap();
    assert!(compiled.read.values.contains("m"));
}

#[test]
fn errors_point_at_the_index_at_fault() {
    let cases = [
        ("a[[0, 1], [0, 1, 2]]", "E0108", "[0, 1, 2]"),
        ("a[j, :, [0, 1]]", "E0108", "[0, 1]"),
        ("a[[True, False, True]]", "E0107", "[True, False, True]"),
        ("a[:, m]", "E0107", "m"),
        ("a[i, [0, 7]]", "E0102", "[0, 7]"),
        ("a[m, 9]", "E0102", "9"),
        ("a[a > 3]", "E0002", ">"),
    ];
    for (src, code, target) in cases {
        assert_eq!(code_and_target(src), (code, target.to_string()), "{src}");
    }
    let e = error_of("a[[0, 1], [0, 1, 2]]");
    assert_eq!(
        e.diagnostic().message,
        "shape mismatch: indexing arrays could not be broadcast together with shapes (2,) (3,)"
    );
    let e = error_of("a[:, [True, False]]");
    assert_eq!(
        e.diagnostic().message,
        "boolean index did not match indexed array along axis 1; size of axis is 3 but size of corresponding boolean axis is 2"
    );
    assert!(error_of("a[a > 3]").diagnostic().help.unwrap().contains("-i m=mask.npy"));
}

#[test]
fn a_mask_known_only_by_its_type_is_refused() {
    let (types, _) = inputs();
    let e = slc::compile("a[::-1][m]", &types).err().unwrap();
    let d = e.diagnostic();
    assert_eq!(d.code, "E0126");
    assert_eq!(d.labels[0].span.start, 8);
    assert!(d.help.unwrap().contains("decide the result's shape"));
}

/// NumPy reads no index value when the arrays broadcast to an empty shape, and raises for none;
/// a 0-d array is an integer to NumPy, checked always. Otherwise every value of every array is
/// checked, also one a later slice drops.
#[test]
fn index_values_are_checked_where_numpy_checks_them() {
    for executor in [Executor::Interpreter, Executor::Jit] {
        let mut s = Session::with_executor(executor);
        s.bind("a", Tensor::from_bytes(DType::U8, &[3, 4], &(0..12).collect::<Vec<u8>>()).unwrap());
        s.bind("far", ints(&[1], &[7]));
        s.bind("far0", ints(&[], &[7]));
        s.bind("none", ints(&[0], &[]));
        s.bind("rows", ints(&[2, 1], &[2, -3]));
        assert_eq!(s.eval("a[far, none]").unwrap().shape(), &[0]);
        assert_eq!(s.eval("a[[], far0]").err().unwrap().diagnostic().code, "E0201");
        assert_eq!(s.eval("a[rows, far][:0]").err().unwrap().diagnostic().code, "E0201");
        // a[[[2], [-3]], [1, 3]]: rows 2 and 0, columns 1 and 3.
        assert_eq!(s.eval("a[rows, [1, 3]]").unwrap().bytes(), &[9, 11, 1, 3]);
        assert_eq!(s.eval("a[rows, [1, 3]][::-1, ::-1]").unwrap().bytes(), &[3, 1, 11, 9]);
        // The message names the axis as NumPy does: of `a`, whatever new axes and integers the
        // subscript has before the array.
        for src in ["a[:, far]", "a[None, :, far]", "a[1:, far]", "a[..., None, far]", "a[None, 0, far]"] {
            let message = s.eval(src).err().unwrap().render(src);
            assert!(message.contains("index 7 is out of bounds for axis 1 with size 4"), "{src}: {message}");
        }
    }
}

/// A session reads a bound mask's value when it checks a program: rebinding the mask gives a
/// result of the new mask's size, not the kernel built for the old one.
#[test]
fn a_session_keys_its_kernels_on_the_mask_value() {
    for executor in [Executor::Interpreter, Executor::Jit] {
        let mut s = Session::with_executor(executor);
        s.bind("a", Tensor::from_bytes(DType::U8, &[2, 3], &[10, 11, 12, 13, 14, 15]).unwrap());
        s.bind("m", mask(&[2, 3], &[1, 0, 1, 0, 1, 1]));
        assert_eq!(s.eval("a[m]").unwrap().bytes(), &[10, 12, 14, 15]);
        s.bind("m", mask(&[2, 3], &[0, 1, 0, 0, 0, 0]));
        assert_eq!(s.eval("a[m]").unwrap().bytes(), &[11]);
        assert_eq!(s.eval("a[0, m[0]]").unwrap().bytes(), &[11]);
        assert_eq!(s.eval("a[:, m[0]][::-1]").unwrap().bytes(), &[14, 11]);
    }
}
