//! `.npy` round trips for every dtype, NumPy's exact bytes, and every kind of bad file.

#[path = "../../tests/support/scratch.rs"]
mod scratch_dir;
use scratch_dir::scratch;
use slc_runtime::{DType, NpyError, Tensor, encode_npy, parse_npy, read_npy, write_npy};

fn pattern(dtype: DType, shape: &[usize]) -> Tensor {
    let n = Tensor::byte_size(dtype, shape).unwrap();
    let mut bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
    if dtype == DType::Bool {
        bytes.iter_mut().for_each(|b| *b &= 1);
    }
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

/// A file with `header` (a Python dict literal) and `data`, as NumPy lays it out.
fn npy_file(version: u8, header: &str, data: &[u8]) -> Vec<u8> {
    let preamble = if version == 1 { 10 } else { 12 };
    let mut h = header.to_string();
    let total = (preamble + h.len() + 1).div_ceil(64) * 64;
    h.push_str(&" ".repeat(total - preamble - h.len() - 1));
    h.push('\n');
    let mut out = b"\x93NUMPY".to_vec();
    out.extend([version, 0]);
    if version == 1 {
        out.extend((h.len() as u16).to_le_bytes());
    } else {
        out.extend((h.len() as u32).to_le_bytes());
    }
    out.extend(h.as_bytes());
    out.extend(data);
    out
}

#[test]
fn every_dtype_round_trips() {
    let dir = scratch("npy", "roundtrip");
    for dtype in DType::ALL.into_iter().filter(|&d| d != DType::BF16) {
        for shape in [&[][..], &[0], &[5], &[2, 3], &[2, 0, 3], &[1, 2, 3, 2]] {
            let t = pattern(dtype, shape);
            assert_eq!(parse_npy(&encode_npy(&t).unwrap()).unwrap(), t, "{dtype} {shape:?}");
            let path = dir.join(format!("{dtype}.npy"));
            write_npy(&path, &t).unwrap();
            assert_eq!(read_npy(&path).unwrap(), t, "{dtype} {shape:?} via file");
        }
    }
}

#[test]
fn bf16_has_no_npy_form() {
    let t = pattern(DType::BF16, &[2]);
    assert!(matches!(encode_npy(&t), Err(NpyError::Bf16)));
    let dir = scratch("npy", "bf16");
    assert!(write_npy(&dir.join("x.npy"), &t).is_err());
    assert!(!dir.join("x.npy").exists());
}

/// The exact bytes `np.save(f, np.arange(6, dtype=np.float32).reshape(2, 3))` writes.
#[test]
fn header_is_byte_identical_to_numpy() {
    let t = pattern(DType::F32, &[2, 3]);
    let bytes = encode_npy(&t).unwrap();
    let expected_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    assert_eq!(&bytes[..10], b"\x93NUMPY\x01\x00\x76\x00");
    assert_eq!(&bytes[10..10 + expected_header.len()], expected_header.as_bytes());
    assert_eq!(bytes.len(), 128 + 24);
    assert_eq!(bytes[127], b'\n');
    let scalar = encode_npy(&Tensor::scalar_i64(3)).unwrap();
    assert!(String::from_utf8_lossy(&scalar).contains("'shape': (), }"));
    let vector = encode_npy(&pattern(DType::Bool, &[7])).unwrap();
    assert!(
        String::from_utf8_lossy(&vector)
            .contains("{'descr': '|b1', 'fortran_order': False, 'shape': (7,), }")
    );
}

#[test]
fn big_endian_and_later_versions_and_key_orders() {
    let be = npy_file(
        1,
        "{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }",
        &[0, 0, 0, 1, 0xff, 0xff, 0xff, 0xfe],
    );
    let t = parse_npy(&be).unwrap();
    assert_eq!((t.int_at(0), t.int_at(1)), (Some(1), Some(-2)));
    let v2 = npy_file(2, "{'shape': (1,), 'fortran_order': False, 'descr': '<u2'}", &[5, 1]);
    assert_eq!(parse_npy(&v2).unwrap().int_at(0), Some(261));
    let v3 = npy_file(
        3,
        "{\"descr\": \"<i8\", \"fortran_order\": False, \"shape\": ( 1 , ) }",
        &7i64.to_le_bytes(),
    );
    assert_eq!(parse_npy(&v3).unwrap().int_at(0), Some(7));
    // A Fortran-ordered array with at most one dimension above 1 has C layout too.
    let f1 = npy_file(1, "{'descr': '<i8', 'fortran_order': True, 'shape': (1, 1), }", &9i64.to_le_bytes());
    assert_eq!(parse_npy(&f1).unwrap().int_at(0), Some(9));
}

#[test]
fn bad_files_are_clear_errors() {
    let ok_header = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    let good = npy_file(1, ok_header, &[0; 24]);
    assert!(matches!(parse_npy(b"PK\x03\x04 not numpy at all"), Err(NpyError::NotNpy { .. })));
    assert!(matches!(parse_npy(&good[..8]), Err(NpyError::BadHeader { .. })));
    assert!(matches!(parse_npy(&good[..40]), Err(NpyError::BadHeader { .. })));
    assert!(matches!(
        parse_npy(&good[..good.len() - 1]),
        Err(NpyError::Truncated { expected: 24, actual: 23, .. })
    ));
    let mut long = good.clone();
    long.push(0);
    assert!(matches!(parse_npy(&long), Err(NpyError::TrailingData { extra: 1, .. })));
    let short_fortran = npy_file(1, "{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }", &[0; 20]);
    assert!(matches!(parse_npy(&short_fortran), Err(NpyError::Truncated { .. })));
    for descr in ["<c32", "|O", "<U3", "<M8[ns]"] {
        let f =
            npy_file(1, &format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (1,), }}"), &[0; 8]);
        assert!(matches!(parse_npy(&f), Err(NpyError::UnsupportedDtype { .. })), "{descr}");
    }
    let structured =
        npy_file(1, "{'descr': [('a', '<i4')], 'fortran_order': False, 'shape': (1,), }", &[0; 4]);
    assert!(matches!(parse_npy(&structured), Err(NpyError::UnsupportedDtype { .. })));
    let huge = npy_file(
        1,
        "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000000000, 1000000000000000000), }",
        &[],
    );
    assert!(matches!(parse_npy(&huge), Err(NpyError::TooLarge { .. })));
    let lying = npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", &[0; 8]);
    assert!(matches!(parse_npy(&lying), Err(NpyError::Truncated { .. })));
    let bad_bool = npy_file(1, "{'descr': '|b1', 'fortran_order': False, 'shape': (2,), }", &[1, 7]);
    assert!(matches!(parse_npy(&bad_bool), Err(NpyError::InvalidBool { .. })));
    for header in [
        "{'descr': '<f4', 'shape': (2, 3), }",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, -3), }",
        "not a dict",
        "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), 'extra': 1}",
    ] {
        let f = npy_file(1, header, &[0; 24]);
        assert!(matches!(parse_npy(&f), Err(NpyError::BadHeader { .. })), "{header}");
    }
}

#[test]
fn file_errors_name_the_file() {
    let dir = scratch("npy", "files");
    let missing = dir.join("missing.npy");
    let e = read_npy(&missing).unwrap_err();
    assert!(e.to_string().contains("missing.npy"), "{e}");
    let lying = dir.join("lying.npy");
    std::fs::write(
        &lying,
        npy_file(1, "{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }", &[0; 8]),
    )
    .unwrap();
    let e = read_npy(&lying).unwrap_err();
    assert!(matches!(e, NpyError::Truncated { .. }) && e.to_string().contains("lying.npy"), "{e}");
    let t = pattern(DType::I32, &[3]);
    let e = write_npy(&dir.join("no/such/dir/out.npy"), &t).unwrap_err();
    assert!(e.to_string().contains("out.npy"), "{e}");
    assert!(!dir.join("no").exists());
}

#[test]
fn failed_writes_leave_the_target_and_no_temporary() {
    let dir = scratch("npy", "atomic");
    let target = dir.join("out.npy");
    std::fs::write(&target, b"original").unwrap();
    // bf16 fails before anything is written.
    assert!(write_npy(&target, &pattern(DType::BF16, &[2])).is_err());
    assert_eq!(std::fs::read(&target).unwrap(), b"original");
    // A directory in the target's place makes the rename fail after the temporary is written.
    let blocked = dir.join("blocked.npy");
    std::fs::create_dir(&blocked).unwrap();
    std::fs::write(blocked.join("keep"), b"x").unwrap();
    assert!(write_npy(&blocked, &pattern(DType::U8, &[4])).is_err());
    let leftovers: Vec<_> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().file_name()).collect();
    assert_eq!(leftovers.len(), 2, "no temporary file is left: {leftovers:?}");
    // A successful write replaces the target whole.
    write_npy(&target, &pattern(DType::U8, &[4])).unwrap();
    assert_eq!(read_npy(&target).unwrap(), pattern(DType::U8, &[4]));
}

/// Fortran-ordered arrays (`np.save` of a transposed array) read into C order: the file's bytes
/// are the C-order bytes of the transpose. 2-D to 4-D, every width, big-endian too, bools, from
/// memory and from a file.
#[test]
fn fortran_order_reads_into_c_order() {
    let dir = scratch("npy", "fortran");
    for (dtype, shape) in [
        (DType::I32, vec![2, 3]),
        (DType::U8, vec![3, 1, 4]),
        (DType::F64, vec![2, 3, 4, 5]),
        (DType::Bool, vec![5, 7]),
        (DType::I16, vec![1, 6, 1, 2]),
    ] {
        let t = pattern(dtype, &shape);
        // The file's elements: t's, first axis fastest.
        let w = dtype.width();
        let mut data = vec![];
        let dims: Vec<usize> = shape.iter().rev().copied().collect();
        let count: usize = shape.iter().product();
        for k in 0..count {
            // k in C order over the reversed shape = Fortran order over `shape`.
            let mut rem = k;
            let mut coords = vec![0; shape.len()];
            for (d, &n) in dims.iter().enumerate().rev() {
                coords[shape.len() - 1 - d] = rem % n;
                rem /= n;
            }
            let linear = coords.iter().zip(&shape).fold(0, |acc, (&c, &n)| acc * n + c);
            data.extend(&t.bytes()[linear * w..(linear + 1) * w]);
        }
        let tuple = shape.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ");
        let descr = dtype.npy_descr().unwrap();
        let file = npy_file(
            1,
            &format!("{{'descr': '{descr}', 'fortran_order': True, 'shape': ({tuple}), }}"),
            &data,
        );
        assert_eq!(parse_npy(&file).unwrap(), t, "{dtype} {shape:?}");
        let path = dir.join(format!("{dtype}.npy"));
        std::fs::write(&path, &file).unwrap();
        assert_eq!(read_npy(&path).unwrap(), t, "{dtype} {shape:?} from a file");
        if w > 1 {
            let swapped: Vec<u8> = data.chunks(w).flat_map(|c| c.iter().rev().copied()).collect();
            let big = descr.replace('<', ">");
            let file = npy_file(
                2,
                &format!("{{'descr': '{big}', 'fortran_order': True, 'shape': ({tuple}), }}"),
                &swapped,
            );
            assert_eq!(parse_npy(&file).unwrap(), t, "{dtype} {shape:?} big-endian");
        }
    }
}

/// A big-endian complex swaps its real and imaginary parts each on its own (NumPy's `>c8` and
/// `>c16`), not the element as one number.
#[test]
fn big_endian_complexes_swap_each_part() {
    let mut data = vec![];
    for part in [1.5f32, -2.0] {
        data.extend(part.to_be_bytes());
    }
    let t =
        parse_npy(&npy_file(1, "{'descr': '>c8', 'fortran_order': False, 'shape': (), }", &data)).unwrap();
    assert_eq!(t.dtype(), DType::C64);
    let want: Vec<u8> = [1.5f32, -2.0].iter().flat_map(|p| p.to_le_bytes()).collect();
    assert_eq!(t.bytes(), &want[..]);
    let mut data = vec![];
    for part in [3.25f64, 0.5] {
        data.extend(part.to_be_bytes());
    }
    let t =
        parse_npy(&npy_file(1, "{'descr': '>c16', 'fortran_order': False, 'shape': (1,), }", &data)).unwrap();
    let want: Vec<u8> = [3.25f64, 0.5].iter().flat_map(|p| p.to_le_bytes()).collect();
    assert_eq!((t.dtype(), t.bytes()), (DType::C128, &want[..]));
}
