//! Generated code on the edges of its buffers: every input (data and index tensors) and the output
//! are placed against a `PROT_NONE` guard page — ending exactly where it begins, or starting
//! exactly where it ends — so that a kernel reading or writing one byte outside a buffer (a wide
//! vector load past the end of a reversed row, an index table read one element too far, a
//! zero-mode miss that loads anyway) faults the test instead of reading a neighbour. Results
//! must equal the reference interpreter's, byte for byte, on one thread and on several.

use slc::embed::TensorView;
use slc::types::{SymTensorType, TensorType};
use slc::{DType, Kernel, RunOptions, Tensor};

/// Memory whose bytes `[data, data + len)` touch a guard page: on the right (`End`) or on the
/// left (`Start`).
struct Guarded {
    map: *mut u8,
    map_len: usize,
    data: *mut u8,
    len: usize,
}

#[derive(Clone, Copy, Debug)]
enum Edge {
    Start,
    End,
}

fn page() -> usize {
    // SAFETY: sysconf has no preconditions.
    unsafe { libc::sysconf(libc::_SC_PAGESIZE) as usize }
}

impl Guarded {
    fn new(bytes: &[u8], edge: Edge) -> Guarded {
        let page = page();
        let pages = bytes.len().div_ceil(page).max(1);
        let map_len = (pages + 2) * page;
        // SAFETY: a fresh anonymous mapping, then protections on its own first and last page.
        let map = unsafe {
            let p = libc::mmap(
                std::ptr::null_mut(),
                map_len,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
                -1,
                0,
            );
            assert_ne!(p, libc::MAP_FAILED);
            assert_eq!(libc::mprotect(p, page, libc::PROT_NONE), 0);
            assert_eq!(libc::mprotect(p.cast::<u8>().add(map_len - page).cast(), page, libc::PROT_NONE), 0);
            p.cast::<u8>()
        };
        let offset = match edge {
            Edge::Start => page,
            Edge::End => map_len - page - bytes.len(),
        };
        // SAFETY: [offset, offset + len) lies in the readable middle of the mapping.
        let data = unsafe { map.add(offset) };
        unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), data, bytes.len()) };
        Guarded { map, map_len, data, len: bytes.len() }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: the readable bytes placed by `new`.
        unsafe { std::slice::from_raw_parts(self.data, self.len) }
    }

    fn bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.data, self.len) }
    }
}

impl Drop for Guarded {
    fn drop(&mut self) {
        // SAFETY: the mapping made by `new`.
        unsafe { libc::munmap(self.map.cast(), self.map_len) };
    }
}

/// Bytes that differ from element to element (bools stay 0/1).
fn data(dtype: DType, shape: &[usize]) -> Tensor {
    let n = Tensor::byte_size(dtype, shape).unwrap();
    let bytes: Vec<u8> = (0..n).map(|i| (i * 37 + 11) as u8).collect();
    Tensor::from_bytes(dtype, shape, &bytes).unwrap()
}

fn ints(dtype: DType, values: &[i64]) -> Tensor {
    Tensor::from_i64s(dtype, &[values.len()], values).unwrap()
}

/// Runs `src` on guarded copies of `inputs` into a guarded output, against both edges, on one
/// thread and on four; compares with the interpreter.
fn check(src: &str, inputs: &[(&str, &Tensor)]) {
    let sigs: Vec<(&str, SymTensorType)> =
        inputs.iter().map(|(n, t)| (*n, TensorType::of(t.dtype(), t.shape()).generic())).collect();
    let tensors: Vec<&Tensor> = inputs.iter().map(|(_, t)| *t).collect();
    let expected = Kernel::prepare_with(src, &sigs, &RunOptions::interpreter())
        .and_then(|k| k.run(&tensors))
        .map(|t| t.bytes().to_vec())
        .map_err(|e| e.to_string());
    let mut kernel = Kernel::prepare(src, &sigs).unwrap_or_else(|e| panic!("{src}: {e}"));
    for edge in [Edge::Start, Edge::End] {
        let copies: Vec<Guarded> = tensors.iter().map(|t| Guarded::new(t.bytes(), edge)).collect();
        let views: Vec<TensorView> = copies
            .iter()
            .zip(&tensors)
            .map(|(g, t)| TensorView::new(t.dtype(), t.shape(), g.bytes()).unwrap())
            .collect();
        for threads in [1, 4] {
            kernel.set_threads(threads);
            let mut out = Guarded::new(&vec![0xAB; kernel.output_nbytes().unwrap()], edge);
            let got = kernel.run_into_bytes(&views, out.bytes_mut()).map(|()| out.bytes().to_vec());
            assert_eq!(
                got.map_err(|e| e.to_string()),
                expected,
                "{src} {:?} {edge:?} {threads} threads",
                sigs
            );
            if kernel.plan().store.is_some() {
                store_in_place(&kernel, &tensors, edge, &expected, src);
            }
        }
    }
}

/// A store kernel writing its target (input 0, against guard pages) in place: the target ends
/// as the expected output, or, where the kernel declines or fails, as it was.
fn store_in_place(
    kernel: &Kernel,
    tensors: &[&Tensor],
    edge: Edge,
    expected: &Result<Vec<u8>, String>,
    src: &str,
) {
    let others: Vec<Guarded> = tensors[1..].iter().map(|t| Guarded::new(t.bytes(), edge)).collect();
    let mut target = Guarded::new(tensors[0].bytes(), edge);
    let ptr = target.bytes_mut().as_mut_ptr();
    // SAFETY: the guarded copy holds the target's bytes; only the kernel touches it meanwhile.
    let view = unsafe { TensorView::from_raw(tensors[0].dtype(), tensors[0].shape(), None, ptr) }.unwrap();
    let views: Vec<TensorView> = std::iter::once(view)
        .chain(
            others
                .iter()
                .zip(&tensors[1..])
                .map(|(g, t)| TensorView::new(t.dtype(), t.shape(), g.bytes()).unwrap()),
        )
        .collect();
    // SAFETY: as above.
    let ran = unsafe { kernel.store_in_place(&views) };
    drop(views);
    match (ran, expected) {
        (Ok(true), Ok(want)) => assert_eq!(target.bytes(), &want[..], "{src} in place {edge:?}"),
        (Ok(false) | Err(_), _) => {
            assert_eq!(target.bytes(), tensors[0].bytes(), "{src}: declined, yet written")
        }
        (Ok(true), Err(e)) => panic!("{src} in place ran where the interpreter fails: {e}"),
    }
}

const WIDTHS: [DType; 4] = [DType::U8, DType::I16, DType::F32, DType::F64];

/// Lengths around every vector width the code generator uses (16- and 32-byte loads).
const LENGTHS: [usize; 12] = [1, 2, 3, 7, 8, 15, 16, 17, 31, 32, 33, 65];

#[test]
fn views_touching_the_first_and_last_byte() {
    for dtype in WIDTHS {
        for n in LENGTHS {
            let a = data(dtype, &[n]);
            for src in [
                "a[-1]",
                "a[0]",
                "a[::-1]",
                "a[-1:]",
                "a[:1]",
                "a[::-2]",
                "a[-2::-2]",
                "a[1::2]",
                "a[::2]",
                "a[1:]",
                "a[:-1]",
            ] {
                check(src, &[("a", &a)]);
            }
            let m = data(dtype, &[3, n]);
            for src in [
                "a[..., -1:]",
                "a[..., -1]",
                "a[:, ::-1]",
                "a[::-1, ::-1]",
                "a[-1, ::-2]",
                "a[:, 1::2]",
                "a[::-1]",
                "a[:, None, ::-1]",
                "a[::2, -1::-1]",
                "a[-1:, -1:]",
            ] {
                check(src, &[("a", &m)]);
            }
            // Short rows copied inline, several rows per trip and then one at a time.
            let rows = data(dtype, &[9, n]);
            for src in ["a[:, 1:]", "a[::-1, :-1]", "a[1:, ::1]", "a[::-2, -3:]"] {
                check(src, &[("a", &rows)]);
            }
        }
    }
}

#[test]
fn gathers_of_the_first_and_last_index() {
    for dtype in WIDTHS {
        for n in [1usize, 2, 16, 17, 33] {
            let n_ = n as i64;
            let a = data(dtype, &[n]);
            let m = data(dtype, &[n, 5]);
            let inside = [n_ - 1, -n_, 0, -1];
            let outside = [n_ - 1, -n_, n_, -n_ - 1, 3 * n_, i64::MAX, i64::MIN];
            for idx_dtype in [DType::I64, DType::I16, DType::I8] {
                let i = ints(idx_dtype, &inside);
                check("a[i]", &[("a", &a), ("i", &i)]);
                check("a[i][::-1]", &[("a", &a), ("i", &i)]);
                check("m[i]", &[("m", &m), ("i", &i)]);
                check("m[:, ::-1][i, -1]", &[("m", &m), ("i", &i)]);
            }
            let u = ints(DType::U8, &[n_ - 1, 0, n_ - 1]);
            check("a[u]", &[("a", &a), ("u", &u)]);
            let j = ints(DType::I64, &outside);
            for mode in ["zero", "clamp", "wrap", "error"] {
                check(&format!("gather(a, j, 0, mode={mode})"), &[("a", &a), ("j", &j)]);
                check(&format!("gather(m, j, 0, mode={mode})[::-1]"), &[("m", &m), ("j", &j)]);
                check(&format!("gather(m, j, 1, mode={mode})"), &[("m", &m), ("j", &j)]);
                check(&format!("gather(m[::-1, ::-1], j[::-1], 0, mode={mode})"), &[("m", &m), ("j", &j)]);
            }
            // Constant index lists at both ends.
            check(&format!("gather(a, [{}, {}], 0)", n_ - 1, -n_), &[("a", &a)]);
            check(&format!("m[[{}, {}], ::-1]", -n_, n_ - 1), &[("m", &m)]);
        }
    }
}

/// Gathers along rows of 1 KiB and more read the next row ahead of time, a few lines per trip
/// of the row's loop, clamped into the buffer: rows at both ends of a guarded buffer, reversed
/// rows and columns, every width, few columns (many lines per trip) and many (less than a
/// line per element, the pointer's step rounded down so that the last trip stays in the span).
#[test]
fn gathers_along_long_rows_at_the_edge() {
    for (dtype, columns) in [(DType::U8, 1500), (DType::F32, 300), (DType::F64, 4100)] {
        let m = data(dtype, &[3, columns]);
        let n = columns as i64;
        let cols = ints(DType::I64, &[n - 1, 0, -1, 7, -n]);
        let rows = Tensor::from_i64s(DType::I32, &[3, 2], &[0, n - 1, -1, 1, 2, -n]).unwrap();
        let many: Vec<i64> = (0..3 * n).map(|k| (k * 7919 % (2 * n)) - n).collect();
        let wide = ints(DType::I64, &many);
        let wide_rows = Tensor::from_i64s(DType::I64, &[3, n as usize], &many).unwrap();
        for src in [
            "m[:, c]",
            "gather(m, c, 1)",
            "gather(m[::-1], c[::-1], 1, mode=zero)",
            "m[::-1, c]",
            "m[:, ::-1][:, c]",
            "m[::-1, ::-1][:, c]",
            "gather(m, r, 1, batch_dims=1)",
            "gather(m[::-1, ::-1], r, 1, batch_dims=1)",
            "gather(m, r[::-1], 1, batch_dims=1, mode=wrap)",
            "m[:, w]",
            "m[::-1, ::-1][:, w]",
            "gather(m, wr, 1, batch_dims=1)",
            "gather(m[::-1, ::-1], wr[:, ::-1], 1, batch_dims=1, mode=clamp)",
        ] {
            let inputs = [("m", &m), ("c", &cols), ("r", &rows), ("w", &wide), ("wr", &wide_rows)];
            check(src, &inputs);
        }
    }
}

#[test]
fn gathers_of_gathers_and_index_tables_at_the_edge() {
    let a = data(DType::I16, &[17]);
    let i = ints(DType::I64, &[16, -17, 0, 3]);
    let k = ints(DType::I8, &[3, -4, 0]);
    check("a[i[k]]", &[("a", &a), ("i", &i), ("k", &k)]);
    check("a[i][k]", &[("a", &a), ("i", &i), ("k", &k)]);
    check("gather(a, gather(i, k, 0, mode=wrap), 0, mode=zero)", &[("a", &a), ("i", &i), ("k", &k)]);
    let b = ints(DType::I32, &[4, 1, 0, 2]);
    let batch = Tensor::from_i64s(DType::I32, &[4, 2], &[3, 0, -1, 2, 1, 1, 0, -4]).unwrap();
    let rows = data(DType::F64, &[4, 4]);
    check("gather(r, t, 1, batch_dims=1)", &[("r", &rows), ("t", &batch)]);
    check("gather(r, t, 1, batch_dims=1, mode=clamp)[::-1]", &[("r", &rows), ("t", &batch)]);
    check("r[b][:, ::-1]", &[("r", &rows), ("b", &b)]);
}

#[test]
fn large_outputs_split_across_threads_stay_inside() {
    // Above the 1 MiB threshold for worker threads; rows that are not a multiple of 16 bytes.
    let a = data(DType::F64, &[300, 511]);
    check("a[::-1, ::-1]", &[("a", &a)]);
    check("a[:, 1::2]", &[("a", &a)]);
    let b = data(DType::U8, &[1100, 1001]);
    check("b[::-1, ::-1]", &[("b", &b)]);
    let i = ints(DType::I64, &[1000, -1001, 0]);
    check("b[:, i][::-1]", &[("b", &b), ("i", &i)]);
}

/// Generic kernels (every dim a symbol) of gathers along rows that read the next row ahead by
/// the call: the pointer into the next row is clamped between the first and the last row, so
/// against either guard page nothing outside the buffer is touched; rows whose span qualifies
/// (1 KiB and more, at most 16 bytes of it per gathered element) read ahead, the others (few or
/// too many columns, short rows) gather without. Results equal the interpreter's.
#[test]
fn generic_gathers_reading_ahead_at_the_edge() {
    for (dtype, columns) in [(DType::U8, 1500), (DType::F32, 300), (DType::F32, 100), (DType::F64, 4100)] {
        let m = data(dtype, &[3, columns]);
        let n = columns as i64;
        // Gathered columns per row: few (a long pace), about the span / 8, more than the span.
        for k in [5, (columns / 2).max(1) as i64, 3 * n] {
            let many: Vec<i64> = (0..3 * k).map(|j| (j * 7919 % (2 * n)) - n).collect();
            let cols = ints(DType::I64, &many[..k as usize]);
            let rows = Tensor::from_i64s(DType::I64, &[3, k as usize], &many).unwrap();
            for (src, index) in [
                ("gather(m, c, 1)", &cols),
                ("gather(m, c, 1, mode=clamp)", &cols),
                ("gather(m, c, 1, batch_dims=1)", &rows),
                ("gather(m, c, 1, batch_dims=1, mode=wrap)", &rows),
            ] {
                let tensors = [&m, index];
                let concrete: Vec<(&str, TensorType)> = [("m", &m), ("c", index)]
                    .map(|(name, t)| (name, TensorType::of(t.dtype(), t.shape())))
                    .into();
                let fixed: Vec<(&str, SymTensorType)> =
                    concrete.iter().map(|(name, t)| (*name, t.generic())).collect();
                let expected = Kernel::prepare_with(src, &fixed, &RunOptions::interpreter())
                    .and_then(|k| k.run(&tensors))
                    .map(|t| t.bytes().to_vec())
                    .map_err(|e| e.to_string());
                let symbolic: Vec<(&str, SymTensorType)> =
                    concrete.iter().map(|(name, t)| (*name, t.symbolic(name))).collect();
                let kernel = Kernel::prepare(src, &symbolic).unwrap_or_else(|e| panic!("{src}: {e}"));
                for edge in [Edge::Start, Edge::End] {
                    let copies: Vec<Guarded> =
                        tensors.iter().map(|t| Guarded::new(t.bytes(), edge)).collect();
                    let views: Vec<TensorView> = copies
                        .iter()
                        .zip(tensors)
                        .map(|(g, t)| TensorView::new(t.dtype(), t.shape(), g.bytes()).unwrap())
                        .collect();
                    let got = kernel.run(&views).map(|t| t.bytes().to_vec()).map_err(|e| e.to_string());
                    assert_eq!(got, expected, "{src} on {dtype}[3, {columns}], {k} columns, {edge:?}");
                }
            }
        }
    }
}

/// Stores the JIT compiles (a `set` through slices and integers): the target's copy and the
/// update nest's writes — reversed, strided, row by row, split across threads for large
/// targets — stay inside the output, and the value's reads inside its buffer.
#[test]
fn store_update_nests_write_only_inside_the_output() {
    for dtype in WIDTHS {
        for n in [1, 7, 16, 33] {
            let a = data(dtype, &[3, n]);
            let v = data(dtype, &[n]);
            check("a[0] = v", &[("a", &a), ("v", &v)]);
            check("a[-1, ::-1] = v", &[("a", &a), ("v", &v)]);
            check("a[1:, ::2] = a[:-1, ::2]", &[("a", &a)]);
            check("a[..., -1] = 7", &[("a", &a)]);
        }
    }
    let big = data(DType::F32, &[700, 513]);
    let row = data(DType::F32, &[256]);
    check("a[::-1, 1::2] = v", &[("a", &big), ("v", &row)]);
    check("a[1:, :-1] = a[:-1, 1:]", &[("a", &big)]);
    // Gathered destinations: index arrays (duplicates, negative values, one out of range) and
    // masks, writing rows as block copies or element by element, and masks read in place.
    for dtype in WIDTHS {
        for n in [1, 7, 16, 33] {
            let a = data(dtype, &[3, n]);
            let w = data(dtype, &[4, n]);
            for i in [[2, -1, 0, 2], [0, 1, 3, 1]] {
                let i = ints(DType::I64, &i);
                check("a[i] = w", &[("a", &a), ("i", &i), ("w", &w)]);
                check("a[i, ::-1] = 7", &[("a", &a), ("i", &i)]);
            }
            check("a[[True, False, True], -1] = 5", &[("a", &a)]);
            check("a[:, [0, -1, 0]] = a[0, 0]", &[("a", &a)]);
            // One value through a mask read in place: 16 mask bytes per vector trip, or one
            // per row, the mask a guarded buffer of its own.
            let bits: Vec<u8> = (0..3 * n).map(|k| u8::from(k % 3 != 1)).collect();
            let m = Tensor::from_bytes(DType::Bool, &[3, n], &bits).unwrap();
            let r = Tensor::from_bytes(DType::Bool, &[3], &bits[..3]).unwrap();
            check("a[m] = 7", &[("a", &a), ("m", &m)]);
            check("a[m] += 7", &[("a", &a), ("m", &m)]);
            check("a[1:][m[1:]] = 5", &[("a", &a), ("m", &m)]);
            check("a[r] = 7", &[("a", &a), ("r", &r)]);
            check("a[r, ::-1] *= 3", &[("a", &a), ("r", &r)]);
        }
    }
    // Masked rows of a box larger than the caches: filled with non-temporal stores.
    let wide = data(DType::F32, &[4001, 1101]);
    let r = Tensor::from_bytes(
        DType::Bool,
        &[4001],
        &(0..4001).map(|i| u8::from(i % 3 != 1)).collect::<Vec<_>>(),
    )
    .unwrap();
    check("a[r, 1:] = 7", &[("a", &wide), ("r", &r)]);
    let rows = ints(DType::I32, &(0..300).map(|r| (r * 7919) % 700 - 350).collect::<Vec<_>>());
    let values = data(DType::F32, &[300, 513]);
    check("a[i] = w", &[("a", &big), ("i", &rows), ("w", &values)]);
}

/// Transposed views (`x.T`, read in tiles by `transpose-tiles`) of a buffer against a guard
/// page, and written into one: the tiles cut at the loops' ends touch nothing outside, forward
/// and reversed, on one thread and on four.
#[test]
fn transposed_views_read_in_tiles_stay_inside() {
    let (rows, cols) = (70usize, 45usize);
    let shape = [rows, cols];
    for dtype in [DType::U8, DType::F32, DType::F64] {
        let w = dtype.width() as isize;
        // The view is [rows, cols] over a base of [cols, rows]; the reversed one starts at its
        // first row's last element.
        let base = data(dtype, &[cols, rows]);
        let layouts = [([w, rows as isize * w], 0), ([-w, rows as isize * w], (rows - 1) * dtype.width())];
        for edge in [Edge::Start, Edge::End] {
            let guarded = Guarded::new(base.bytes(), edge);
            for (strides, origin) in layouts {
                let view = TensorView::strided(dtype, &shape, &strides, guarded.bytes(), origin).unwrap();
                let dense = view.to_tensor().unwrap();
                for src in ["a[1:]", "a[::-1, 2:]", "a[:, ::-1]", "a[3:-2:2, 1:]"] {
                    let sig = [("a", TensorType::of(dtype, &[rows, cols]).generic())];
                    let mut k = Kernel::prepare(src, &sig).unwrap();
                    let want = k.run(&[&dense]).unwrap();
                    for threads in [1, 4] {
                        k.set_threads(threads);
                        let mut out = Guarded::new(&vec![0xAB; k.output_nbytes().unwrap()], edge);
                        k.run_into_bytes(&[view.reborrow()], out.bytes_mut()).unwrap();
                        assert!(
                            out.bytes() == want.bytes(),
                            "{src} on {dtype} {strides:?} {edge:?} {threads} threads"
                        );
                    }
                }
            }
        }
    }
}
