//! Mapped `.npy` inputs: which files are mapped and which are read (and that both give the same
//! tensor), stored `.npz` members, data offsets that are not 64-byte aligned, errors before any
//! mapping is read, and that writing to a mapped tensor never reaches its file.
#![cfg(unix)]

#[path = "../../tests/support/scratch.rs"]
mod scratch_dir;
use scratch_dir::scratch;
use slc_runtime::{DType, NpyError, Tensor, open_npy, open_npz, read_npy};
use std::io::Write;
use std::path::Path;

/// A version 1.0 `.npy` file whose data starts at byte `offset` (padding the header to it).
fn npy_at(offset: usize, descr: &str, fortran: bool, shape: &str, data: &[u8]) -> Vec<u8> {
    let fortran = if fortran { "True" } else { "False" };
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': {fortran}, 'shape': {shape}, }}");
    assert!(offset > 10 + h.len(), "offset {offset} leaves no room for the header");
    h.push_str(&" ".repeat(offset - 10 - h.len() - 1));
    h.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend((h.len() as u16).to_le_bytes());
    out.extend(h.as_bytes());
    out.extend(data);
    out
}

fn le_f32(values: impl IntoIterator<Item = f32>) -> Vec<u8> {
    values.into_iter().flat_map(f32::to_le_bytes).collect()
}

/// Opens `path` twice: the tensor `read` gives (mapped or not, as `maps` says) and the one read
/// into memory must be equal.
fn both_ways(path: &Path) -> (bool, Tensor) {
    let maps = open_npy(path).unwrap().maps();
    let t = open_npy(path).unwrap().read().unwrap();
    assert_eq!(t.is_mapped(), maps, "{}", path.display());
    assert_eq!(t, open_npy(path).unwrap().read_into_memory().unwrap(), "{}", path.display());
    (maps, t)
}

#[test]
fn plain_files_are_mapped_at_any_element_aligned_offset() {
    let dir = scratch("npy-mapped", "offsets");
    let data = le_f32((0..12).map(|i| i as f32));
    let expected = Tensor::from_bytes(DType::F32, &[3, 4], &data).unwrap();
    // 128: what np.save writes; 76: element-aligned but not 64-byte aligned; 4100: past the
    // first page, so the mapping starts at a page boundary before the data.
    for offset in [128, 76, 4100] {
        let path = dir.join(format!("a{offset}.npy"));
        std::fs::write(&path, npy_at(offset, "<f4", false, "(3, 4)", &data)).unwrap();
        let (maps, t) = both_ways(&path);
        assert!(maps, "offset {offset}");
        assert_eq!(t, expected, "offset {offset}");
        assert_eq!(t.as_ptr() as usize % 4, 0);
        if offset % 64 == 0 {
            assert_eq!(t.as_ptr() as usize % 64, 0, "np.save's offsets keep 64-byte alignment");
        }
    }
    // Data not aligned to its elements is read (kernels and views take element-aligned data).
    let path = dir.join("odd.npy");
    std::fs::write(&path, npy_at(75, "<f4", false, "(3, 4)", &data)).unwrap();
    let (maps, t) = both_ways(&path);
    assert!(!maps);
    assert_eq!(t, expected);
    // One-byte elements are aligned anywhere.
    let path = dir.join("bytes.npy");
    std::fs::write(&path, npy_at(75, "|u1", false, "(2, 3)", &[1, 2, 3, 4, 5, 6])).unwrap();
    assert!(both_ways(&path).0);
}

#[test]
fn files_that_need_converting_are_read_and_converted() {
    let dir = scratch("npy-mapped", "convert");
    let c_order = Tensor::from_bytes(DType::F32, &[2, 3], &le_f32([0., 1., 2., 3., 4., 5.])).unwrap();
    let cases: [(&str, &str, bool, Vec<u8>, Tensor); 3] = [
        (
            "be.npy",
            ">f4",
            false,
            [0f32, 1., 2., 3., 4., 5.].iter().flat_map(|v| v.to_be_bytes()).collect(),
            c_order.clone(),
        ),
        ("fortran.npy", "<f4", true, le_f32([0., 3., 1., 4., 2., 5.]), c_order),
        (
            "bool.npy",
            "|b1",
            false,
            vec![0, 1, 1, 0, 1, 0],
            Tensor::from_bytes(DType::Bool, &[2, 3], &[0, 1, 1, 0, 1, 0]).unwrap(),
        ),
    ];
    for (name, descr, fortran, data, expected) in cases {
        let path = dir.join(name);
        std::fs::write(&path, npy_at(128, descr, fortran, "(2, 3)", &data)).unwrap();
        let (maps, t) = both_ways(&path);
        assert!(!maps, "{name}");
        assert_eq!(t, expected, "{name}");
    }
    // Checked bools are still checked.
    let path = dir.join("bad_bool.npy");
    std::fs::write(&path, npy_at(128, "|b1", false, "(2,)", &[0, 2])).unwrap();
    assert!(matches!(read_npy(&path), Err(NpyError::InvalidBool { .. })));
}

#[test]
fn stored_npz_members_are_mapped_where_aligned_compressed_ones_are_inflated() {
    use zip::write::SimpleFileOptions;
    let dir = scratch("npy-mapped", "npz");
    let data = le_f32((0..6).map(|i| i as f32 * 0.5));
    let expected = Tensor::from_bytes(DType::F32, &[2, 3], &data).unwrap();
    let member = npy_at(128, "<f4", false, "(2, 3)", &data);
    let path = dir.join("a.npz");
    let mut zip = zip::ZipWriter::new(std::fs::File::create(&path).unwrap());
    let stored = SimpleFileOptions::default().compression_method(zip::CompressionMethod::Stored);
    // np.savez aligns nothing: "plain" lands wherever its local header ends.
    for (name, options) in [
        ("aligned.npy", stored.with_alignment(64)),
        ("plain.npy", stored),
        ("deflated.npy", SimpleFileOptions::default().compression_method(zip::CompressionMethod::Deflated)),
    ] {
        zip.start_file(name, options).unwrap();
        zip.write_all(&member).unwrap();
    }
    zip.finish().unwrap();
    let open = |key| open_npz(&path, Some(key)).unwrap();
    assert!(open("aligned").maps());
    assert!(!open("deflated").maps());
    for key in ["aligned", "plain", "deflated"] {
        let t = open(key).read().unwrap();
        assert_eq!(t.is_mapped(), open(key).maps(), "{key}");
        assert_eq!(t, expected, "{key}");
    }
}

#[test]
fn a_truncated_file_is_an_error_naming_it_before_anything_is_mapped() {
    let dir = scratch("npy-mapped", "truncated");
    let path = dir.join("short.npy");
    let mut bytes = npy_at(128, "<f4", false, "(1000, 1000)", &[]);
    bytes.extend(vec![0u8; 4096]);
    std::fs::write(&path, bytes).unwrap();
    let e = open_npy(&path).unwrap_err();
    assert!(matches!(e, NpyError::Truncated { expected: 4_000_000, actual: 4096, .. }), "{e:?}");
    assert!(e.to_string().contains("short.npy"), "{e}");
}

#[test]
fn writing_to_a_mapped_tensor_never_reaches_its_file() {
    let dir = scratch("npy-mapped", "private");
    let path = dir.join("a.npy");
    let data = le_f32((0..1024).map(|i| i as f32));
    let file = npy_at(128, "<f4", false, "(1024,)", &data);
    std::fs::write(&path, &file).unwrap();
    let mut t = read_npy(&path).unwrap();
    assert!(t.is_mapped());
    t.bytes_mut()[..4].copy_from_slice(&7f32.to_le_bytes());
    assert_eq!(&t.bytes()[..4], &7f32.to_le_bytes());
    assert_eq!(&t.bytes()[4..], &data[4..]);
    drop(t);
    assert_eq!(std::fs::read(&path).unwrap(), file, "the file is unchanged");
}

#[test]
fn empty_arrays_map_nothing() {
    let dir = scratch("npy-mapped", "empty");
    let path = dir.join("e.npy");
    std::fs::write(&path, npy_at(128, "<f4", false, "(0, 5)", &[])).unwrap();
    let t = read_npy(&path).unwrap();
    assert_eq!((t.shape(), t.nbytes(), t.is_mapped()), (&[0usize, 5][..], 0, false));
}

#[test]
fn only_the_pages_touched_are_resident() {
    // A sparse file (its data a hole): nothing of it is in the page cache until read.
    let dir = scratch("npy-mapped", "resident");
    let path = dir.join("big.npy");
    let rows = 4096usize; // 4096 rows of one page each: 16 MiB
    let header = npy_at(4096, "<f4", false, &format!("({rows}, 1024)"), &[]);
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&header).unwrap();
    f.set_len(4096 + rows as u64 * 4096).unwrap();
    drop(f);
    let t = read_npy(&path).unwrap();
    t.advise(slc_runtime::Access::Sparse);
    let Some(before) = t.resident_pages() else { return };
    assert_eq!(before.len(), rows);
    let touched = [0usize, 17, 1000, 4095];
    for &r in &touched {
        assert_eq!(t.bytes()[r * 4096], 0, "a hole reads as zeros");
    }
    let after = t.resident_pages().unwrap();
    for (page, &resident) in after.iter().enumerate() {
        if touched.contains(&page) {
            assert!(resident, "page {page} was read");
        } else {
            assert!(!resident || before[page], "page {page} was never touched but is resident");
        }
    }
}

#[test]
fn a_file_too_large_to_read_into_memory_says_so() {
    // 64 GiB of big-endian data (sparse: no disk) must be converted, so read: more memory than
    // this machine has is an error saying why it is read, not "too large to address".
    let bytes = 64u64 << 30;
    if slc_runtime::available_memory().is_none_or(|free| free >= bytes) {
        return;
    }
    let dir = scratch("npy-mapped", "oom");
    let path = dir.join("be.npy");
    let mut f = std::fs::File::create(&path).unwrap();
    f.write_all(&npy_at(128, ">f4", false, "(16777216, 1024)", &[])).unwrap();
    if f.set_len(128 + bytes).is_err() {
        return;
    }
    let e = read_npy(&path).unwrap_err();
    assert!(matches!(e, NpyError::OutOfMemory { why: "big-endian elements are converted", .. }), "{e:?}");
    assert!(e.to_string().contains("be.npy") && e.to_string().contains("more than this machine has"), "{e}");
}
