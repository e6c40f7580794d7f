//! The tests that run kernels on a CUDA device, shared by `cuda_gpu.rs` (a real GPU, where the
//! machine has one) and `cuda_stand_in.rs` (the stand-in driver of `support/cuda_stand_in.c`,
//! wherever a C compiler is). The including file defines `gpu()` (the device, or `None` to skip)
//! and `GOLDEN_EVERY` (every how many golden-corpus programs run: the stand-in compiles a shared
//! object per kernel).

use super::programs;
use slc::Tensor;
use slc::backend::cuda::device::{self, GpuError};

pub fn check(gpu: &device::Device, programs: &[programs::Program]) {
    // On every core at once: NVRTC dominates, and the device is shared by threads as a user's
    // program would share it.
    let threads = std::thread::available_parallelism().map_or(4, |n| n.get());
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|t| {
                scope.spawn(move || {
                    let mut failures = vec![];
                    for p in programs.iter().skip(t).step_by(threads) {
                        let inputs: Vec<&Tensor> = p.inputs.iter().collect();
                        let got = gpu.run(&p.plan, &inputs).map(|(t, _)| t);
                        let same = programs::same_result(
                            &p.plan,
                            &p.want,
                            &got,
                            |x, y| matches!(y, GpuError::Run(y) if x == y),
                        );
                        if !same {
                            failures.push(format!("{}: CPU {:?}, GPU {got:?}", p.what, p.want));
                        }
                    }
                    failures
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a worker thread")).collect()
    });
    eprintln!("{} programs on the GPU, {} differ", programs.len(), failures.len());
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        programs.len(),
        failures[..failures.len().min(10)].join("\n")
    );
}

#[test]
fn golden_corpus_on_the_gpu() {
    let Some(gpu) = super::gpu() else { return };
    let every: Vec<programs::Program> = programs::golden().into_iter().step_by(super::GOLDEN_EVERY).collect();
    check(gpu, &every);
}

#[test]
fn fuzzer_programs_on_the_gpu_every_policy_included() {
    let Some(gpu) = super::gpu() else { return };
    check(gpu, &programs::fuzzed(1..=400));
}

/// Stores on the GPU (the target copied, the checks, the owner marks by `atomicMax`, the
/// writes): the fuzzer's store programs, duplicates and errors included, against the
/// interpreter.
#[test]
fn store_programs_on_the_gpu() {
    let Some(gpu) = super::gpu() else { return };
    check(gpu, &programs::stores(600));
}

/// The GPU as an executor (`Executor::Cuda`): sessions, prepared kernels, `slc run` and the
/// REPL. With a GPU: slices, gathers, masks and chains through a session on the GPU equal the JIT's
/// results and errors (out-of-range indices included). Without one: each surface says so (E0209, or exit 2 from the command
/// line) and nothing runs elsewhere in its place.
#[test]
fn sessions_run_and_the_repl_on_the_gpu() {
    use slc::{Executor, Session};
    let Some(_) = super::gpu() else { return };
    let floats: Vec<u8> = (0..30).flat_map(|x| (x as f32).to_le_bytes()).collect();
    let a = Tensor::from_bytes(slc::DType::F32, &[6, 5], &floats).unwrap();
    let i = Tensor::from_i64s(slc::DType::I64, &[3], &[4, -1, 0]).unwrap();
    let bad = Tensor::from_i64s(slc::DType::I32, &[2], &[0, 9]).unwrap();
    let m = Tensor::from_bytes(slc::DType::Bool, &[6], &[1, 0, 1, 1, 0, 0]).unwrap();
    let sources = [
        "a[::-1, 1:]",
        "a[i]",
        "a[:, i]",
        "a[m]",
        "a[i, ::2]",
        "gather(a, bad, axis=1, mode=clamp)",
        "gather(a, bad, axis=0, mode=zero)",
        "a[bad]",
        "a[m][::-1, None, 2]",
    ];
    let mut failures = vec![];
    for src in sources {
        let mut results = vec![];
        for executor in [Executor::Jit, Executor::Cuda] {
            let mut s = Session::with_executor(executor);
            for (name, t) in [("a", &a), ("i", &i), ("bad", &bad), ("m", &m)] {
                s.bind(name, t.clone());
            }
            results.push(s.eval(src).map_err(|e| e.to_string()));
        }
        if results[0] != results[1] {
            failures.push(format!("{src}: JIT {:?}, GPU {:?}", results[0], results[1]));
        }
    }
    assert!(failures.is_empty(), "{} of {} differ:\n{}", failures.len(), sources.len(), failures.join("\n"));
}

/// `Kernel::run_device` on arrays in device memory, against the same kernel on the host: dense
/// inputs of several shapes through one symbolic kernel, strided views read in place, masks,
/// Python-like scalar bounds, stores (`=` with duplicates, `+=`, masks, concrete and generic; a copy of the target, and
/// into the target itself: `Kernel::store_device`),
/// `run_device_into`, and errors (an index out of range, an output
/// that overlaps an input), the context usable after each. Without a GPU: E0209.
#[test]
fn kernels_on_device_memory() {
    use slc::embed::{DeviceArray, Kernel, Stream};
    let ty = |s: &str| -> slc::types::SymTensorType { s.parse().unwrap() };
    let Some(gpu) = super::gpu() else { return };
    let stream = Stream(1);
    let upload = |t: &Tensor| {
        let m = gpu.upload(t.bytes(), stream).unwrap();
        let a = DeviceArray { ptr: m.ptr, dtype: t.dtype(), shape: t.shape().to_vec(), strides: None };
        (m, a)
    };
    let data = Tensor::from_i64s(slc::DType::I64, &[6, 5], &(0..30).collect::<Vec<_>>()).unwrap();
    let idx = Tensor::from_i64s(slc::DType::I32, &[3], &[4, -1, 0]).unwrap();
    let bad = Tensor::from_i64s(slc::DType::I32, &[2], &[0, 9]).unwrap();
    let dup = Tensor::from_i64s(slc::DType::I32, &[4], &[4, -2, 0, 4]).unwrap();
    let mask = Tensor::from_bytes(slc::DType::Bool, &[6], &[1, 0, 1, 1, 0, 0]).unwrap();
    let k3 = Tensor::from_i64s(slc::DType::I64, &[], &[3]).unwrap();
    let halves: Vec<u8> = (0..30).flat_map(|x| (x as f64 * 1.5 - 10.0).to_le_bytes()).collect();
    let floats = Tensor::from_bytes(slc::DType::F64, &[6, 5], &halves).unwrap();
    let small =
        Tensor::from_i64s(slc::DType::I32, &[2, 5], &(0..10).map(|x| 7 - 3 * x).collect::<Vec<_>>()).unwrap();
    type Inputs<'t> = Vec<(&'t str, &'t str, &'t Tensor)>;
    let cases: Vec<(&str, Inputs<'_>)> = vec![
        ("a[::-1, 1:]", vec![("a", "i64[N, M]", &data)]),
        ("a[i]", vec![("a", "i64[N, M]", &data), ("i", "i32[K]", &idx)]),
        ("gather(a, i, axis=1)", vec![("a", "i64[6, 5]", &data), ("i", "i32[3]", &idx)]),
        ("a[m]", vec![("a", "i64[6, 5]", &data), ("m", "bool[6]", &mask)]),
        ("a[:k, ::2]", vec![("a", "i64[N, M]", &data), ("k", "i64[]", &k3)]),
        ("a[i]", vec![("a", "i64[N, M]", &data), ("i", "i32[K]", &bad)]),
        // Stores: into a new output, the target copied first (last write wins on duplicates).
        ("a[i] = b[0]", vec![("a", "i64[N, M]", &data), ("i", "i32[K]", &dup), ("b", "i64[N, M]", &data)]),
        ("a[:, ::2] = 5", vec![("a", "i64[N, M]", &data)]),
        ("a[m] = 0", vec![("a", "i64[6, 5]", &data), ("m", "bool[6]", &mask)]),
        ("a[i] += 1", vec![("a", "i64[N, M]", &data), ("i", "i32[K]", &dup)]),
        // Concrete `+=`/`*=` with duplicates into the target: three kernels in place
        // (`Kernel::stores_buffered_on_device`); a bad index fails the first, before any write.
        ("a[i] += b[0]", vec![("a", "i64[6, 5]", &data), ("i", "i32[4]", &dup), ("b", "i64[6, 5]", &data)]),
        ("a[i, 1:] *= 3", vec![("a", "i64[6, 5]", &data), ("i", "i32[4]", &dup)]),
        ("a[i] += 1", vec![("a", "i64[6, 5]", &data), ("i", "i32[2]", &bad)]),
        ("a[i] = 0", vec![("a", "i64[N, M]", &data), ("i", "i32[K]", &bad)]),
        // A mask whose value the program does not know.
        ("a[m]", vec![("a", "i64[N, M]", &data), ("m", "bool[N]", &mask)]),
        ("a[m] = 0", vec![("a", "i64[N, M]", &data), ("m", "bool[N]", &mask)]),
        ("a[m, 1:] += 1", vec![("a", "i64[N, M]", &data), ("m", "bool[N]", &mask)]),
        // A value of another dtype, cast on the host per call and copied in (a derived input).
        ("a[i] = f[0]", vec![("a", "i64[N, M]", &data), ("i", "i32[K]", &dup), ("f", "f64[N, M]", &floats)]),
        ("a[1:3] += s", vec![("a", "i64[6, 5]", &data), ("s", "i32[2, 5]", &small)]),
        ("a[::2] *= s[0]", vec![("a", "i64[N, M]", &data), ("s", "i32[2, M]", &small)]),
    ];
    let mut failures = vec![];
    for (src, inputs) in &cases {
        let signature: Vec<(&str, slc::types::SymTensorType)> =
            inputs.iter().map(|(n, t, _)| (*n, ty(t))).collect();
        // A concrete mask's value is part of the program (its count is the output's length).
        let mut values = slc::sema::InputValues::new();
        if inputs.iter().any(|(n, t, _)| *n == "m" && !t.contains('N')) {
            values.insert("m".to_string(), mask.clone());
        }
        let k = Kernel::prepare_with_values(src, &signature, &values, &Default::default()).unwrap();
        // A mask whose value the program does not know: a read gathers by its nonzero(), made
        // per call; a store reads it in place, element by element (`when`).
        if inputs.iter().any(|(n, t, _)| *n == "m" && t.contains('N')) {
            let plan = k.plan();
            let store_when = plan.store.as_ref().is_some_and(|s| s.when.is_some());
            let derived = plan.inputs.iter().any(|d| d.derived.is_some());
            assert!(if plan.store.is_some() { store_when } else { derived }, "{src}: how the mask is read");
        }
        let host: Vec<&Tensor> = inputs.iter().map(|(_, _, t)| *t).collect();
        let want = k.run(&host).map_err(|e| e.to_string());
        let (held, arrays): (Vec<_>, Vec<_>) = host.iter().map(|t| upload(t)).unzip();
        // SAFETY: the uploads live in `held` until the end of the iteration.
        let got = unsafe { k.run_device(&arrays, stream) }.map_err(|e| e.to_string()).map(|o| {
            let a = DeviceArray { ptr: o.memory.ptr, dtype: o.dtype, shape: o.shape.clone(), strides: None };
            a.to_host().unwrap()
        });
        if want != got {
            failures.push(format!("{src}: host {want:?}, device {got:?}"));
        }
        drop(held);
        // A store into its target (`a`, first): in place where it may be, else computed aside
        // and copied over; a failed store leaves the target as it was.
        if k.plan().store.is_some() {
            let (held, arrays): (Vec<_>, Vec<_>) = host.iter().map(|t| upload(t)).unzip();
            // SAFETY: the uploads live in `held` until the end of the iteration.
            let stored = unsafe { k.store_device(&arrays, stream) }.map_err(|e| e.to_string());
            let target = arrays[0].to_host().unwrap();
            match (&want, &stored) {
                (Ok(w), Ok(())) if *w == target => {}
                (Err(w), Err(e)) if w == e && target == *host[0] => {}
                _ => failures
                    .push(format!("{src} into its target: host {want:?}, device {stored:?}, {target:?}")),
            }
            drop(held);
        }
    }
    // A strided view in place: every other row of `data`, reversed (element strides).
    let (held, full) = upload(&data);
    let view = DeviceArray {
        ptr: full.ptr + 8 * 25,
        dtype: slc::DType::I64,
        shape: vec![3, 5],
        strides: Some(vec![-10, 1]),
    };
    let k = Kernel::prepare("a[:, ::-2]", &[("a", ty("i64[3, 5]"))]).unwrap();
    // SAFETY: the view lies inside the upload.
    let got = unsafe { k.run_device(&[view], stream) }.unwrap();
    let got = DeviceArray { ptr: got.memory.ptr, dtype: got.dtype, shape: got.shape.clone(), strides: None }
        .to_host()
        .unwrap();
    let mut s = slc::Session::new();
    s.bind("d", data.clone());
    assert_eq!(got, s.eval("d[::-2][:, ::-2]").unwrap(), "a strided view on the device");
    // Into a caller's output, and an output overlapping an input refused.
    let k = Kernel::prepare("a[1:]", &[("a", ty("i64[6, 5]"))]).unwrap();
    let (out_mem, _) = upload(&Tensor::zeros(slc::DType::I64, &[5, 5]).unwrap());
    let out = DeviceArray { ptr: out_mem.ptr, dtype: slc::DType::I64, shape: vec![5, 5], strides: None };
    // SAFETY: both are uploads alive here.
    unsafe { k.run_device_into(std::slice::from_ref(&full), &out, stream) }.unwrap();
    assert_eq!(out.to_host().unwrap(), s.eval("d[1:]").unwrap());
    let overlapping = DeviceArray { ptr: full.ptr, ..out.clone() };
    // SAFETY: as above; refused before any launch.
    let e = unsafe { k.run_device_into(std::slice::from_ref(&full), &overlapping, stream) }.unwrap_err();
    assert!(e.to_string().contains("overlaps"), "{e}");
    drop((held, out_mem));
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Stores into strided device views (PyTorch's `t[:, ::2]` and `t.T`, CuPy's negative steps)
/// by `Kernel::store_device`: the fuzzer's store programs into targets laid out at random
/// strides, written through the view in place (or through a packed copy), against the
/// interpreter on the dense target placed back at the strides, every byte outside the view as
/// it was; a failure by its code, nothing written. `run_device` gives the updated copy, dense.
/// Then the routes the fuzzer seldom takes, against `Kernel::store` on the same host layout:
/// another input overlapping the view's window, an update that reads the target, and a target
/// whose elements share memory, refused.
#[test]
fn stores_into_strided_device_views() {
    use slc::embed::{DeviceArray, Kernel, Stream, TensorView};
    use slc::fuzz::{Rng, StridedCopy, fill, store_program};
    use slc::types::{SymTensorType, TensorType};
    let Some(gpu) = super::gpu() else { return };
    let stream = Stream(1);
    let upload = |bytes: &[u8]| gpu.upload(bytes, stream).unwrap();
    let download = |ptr: u64, len: usize| {
        DeviceArray { ptr, dtype: slc::DType::U8, shape: vec![len], strides: None }.to_host().unwrap()
    };
    let code = |e: slc::Error| e.diagnostic().code.to_string();
    let mut r = Rng::new(2033);
    let mut failures = vec![];
    for case in 0..300 {
        let shapes: [&[usize]; 5] = [&[3, 4], &[4], &[3, 2, 2], &[5, 3], &[1, 4]];
        let shape = shapes[case % shapes.len()];
        let dtype = [slc::DType::F32, slc::DType::I16, slc::DType::U8, slc::DType::F64][case % 4];
        let src = store_program(&mut r, shape);
        let ints = |shape: &[usize], v: &[i64]| Tensor::from_i64s(slc::DType::I64, shape, v).unwrap();
        let all = [
            ("a", fill(dtype, shape, case as u64)),
            ("idx", ints(&[2], &[1, -1])),
            ("m", Tensor::from_bytes(slc::DType::Bool, &[shape[0]], &vec![1; shape[0]]).unwrap()),
        ];
        let inputs: Vec<&(&str, Tensor)> = all.iter().filter(|(n, _)| *n == "a" || src.contains(n)).collect();
        let types: Vec<(&str, SymTensorType)> =
            inputs.iter().map(|(n, t)| (*n, TensorType::of(t.dtype(), t.shape()).generic())).collect();
        let dense = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
        let Ok(k) = Kernel::prepare_with_values(&src, &types, &dense, &Default::default()) else { continue };
        let Some(fixed) = k.fixed() else { continue };
        let want = fixed.run(&dense).map_err(code);
        let copy = StridedCopy::draw(&inputs[0].1, &mut r);
        let mut expected = copy.clone();
        if let Ok(updated) = &want {
            expected.place(updated);
        }
        let (bytes, origin) = copy.buffer();
        let memory = upload(bytes);
        let view = DeviceArray {
            ptr: memory.ptr + origin as u64,
            dtype,
            shape: shape.to_vec(),
            strides: Some(copy.strides().to_vec()),
        };
        let others: Vec<_> = inputs[1..].iter().map(|(_, t)| upload(t.bytes())).collect();
        let arrays: Vec<DeviceArray> = [view]
            .into_iter()
            .chain(inputs[1..].iter().zip(&others).map(|((_, t), m)| DeviceArray {
                ptr: m.ptr,
                dtype: t.dtype(),
                shape: t.shape().to_vec(),
                strides: None,
            }))
            .collect();
        // SAFETY: the view lies in `memory`, the other inputs in `others`, all alive here.
        let copied = unsafe { k.run_device(&arrays, stream) }.map_err(code).map(|o| {
            let a = DeviceArray { ptr: o.memory.ptr, dtype: o.dtype, shape: o.shape.clone(), strides: None };
            a.to_host().unwrap()
        });
        // SAFETY: as above.
        let stored = unsafe { k.store_device(&arrays, stream) }.map_err(code);
        let after = download(memory.ptr, bytes.len());
        let wrote = match &want {
            Ok(_) => expected.buffer().0,
            Err(_) => bytes,
        };
        if want.clone().map(drop) != stored || after.bytes() != wrote || copied != want {
            failures
                .push(format!("`{src}` at strides {:?}: CPU {want:?}, device {stored:?}", copy.strides()));
        }
    }
    // The rarer routes, against the host's store on the same layout of f32[4, 6].
    let base: Vec<u8> = (0..24).flat_map(|x| (x as f32).to_le_bytes()).collect();
    let f32s = |s: &str| -> SymTensorType { s.parse().unwrap() };
    // (program, signature, each input's (offset, dims, element strides) in the buffer)
    type Layout = (usize, Vec<usize>, Vec<isize>);
    type Route<'s> = (&'s str, Vec<(&'s str, &'s str)>, Vec<Layout>);
    let cases: Vec<Route<'_>> = vec![
        // Another input in the view's window: the even columns from the odd ones.
        (
            "a[...] = b",
            vec![("a", "f32[4, 3]"), ("b", "f32[4, 3]")],
            vec![(0, vec![4, 3], vec![6, 2]), (1, vec![4, 3], vec![6, 2])],
        ),
        (
            "a[:, 1] += b[:, 0]",
            vec![("a", "f32[4, 3]"), ("b", "f32[4, 3]")],
            vec![(0, vec![4, 3], vec![6, 2]), (1, vec![4, 3], vec![6, 2])],
        ),
        // The update reads the target: a transpose reversed onto itself.
        ("a[::-1] = a", vec![("a", "f32[6, 4]")], vec![(0, vec![6, 4], vec![1, 6])]),
        ("a[1:] = a[:-1]", vec![("a", "f32[3, 4]")], vec![(23, vec![3, 4], vec![-2, -6])]),
    ];
    for (src, sig, layouts) in &cases {
        let sig: Vec<(&str, SymTensorType)> = sig.iter().map(|(n, t)| (*n, f32s(t))).collect();
        let Ok(k) = Kernel::prepare(src, &sig) else {
            failures.push(format!("`{src}` does not compile"));
            continue;
        };
        let mut host = base.clone();
        let at = host.as_mut_ptr();
        // SAFETY: every view lies in `host`, which only the store touches meanwhile.
        let views: Vec<TensorView<'_>> = (layouts.iter())
            .map(|(o, d, s)| unsafe {
                let bytes: Vec<isize> = s.iter().map(|x| x * 4).collect();
                TensorView::from_raw(slc::DType::F32, d, Some(&bytes), at.add(o * 4)).unwrap()
            })
            .collect();
        // SAFETY: as above.
        let want = unsafe { k.store(&views) }.map_err(code);
        drop(views);
        let memory = upload(&base);
        let arrays: Vec<DeviceArray> = (layouts.iter())
            .map(|(o, d, s)| DeviceArray {
                ptr: memory.ptr + 4 * *o as u64,
                dtype: slc::DType::F32,
                shape: d.clone(),
                strides: Some(s.clone()),
            })
            .collect();
        // SAFETY: every view lies in `memory`.
        let got = unsafe { k.store_device(&arrays, stream) }.map_err(code);
        let after = download(memory.ptr, base.len());
        if want != got || after.bytes() != host {
            failures.push(format!("`{src}`: host {want:?}, device {got:?}"));
        }
    }
    // A broadcast target (a zero stride): its elements share memory, refused, nothing written.
    let memory = upload(&base);
    let k = Kernel::prepare("a[0] = 1", &[("a", f32s("f32[4, 6]"))]).unwrap();
    let shared =
        DeviceArray { ptr: memory.ptr, dtype: slc::DType::F32, shape: vec![4, 6], strides: Some(vec![0, 1]) };
    // SAFETY: the view lies in `memory`.
    let e = unsafe { k.store_device(&[shared], stream) }.unwrap_err();
    assert!(e.to_string().contains("share memory"), "{e}");
    assert_eq!(download(memory.ptr, base.len()).bytes(), &base[..]);
    eprintln!(
        "300 fuzzer stores and {} routes into strided device views, {} differ",
        cases.len(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures[..failures.len().min(10)].join("\n"));
}

/// The differential fuzzer's programs through `Kernel::run_device` on their inputs laid out at
/// random strides in device memory (steps, transposes, negative steps), read in place, then on
/// dense device copies (the kernel's cached layouts), against the interpreter on dense host
/// inputs: bytes, or the error's code.
#[test]
fn fuzzer_programs_on_strided_device_views() {
    use slc::embed::{DeviceArray, Kernel, Stream};
    use slc::fuzz::{Case, Rng, StridedCopy};
    use slc::types::{SymTensorType, TensorType};
    let Some(gpu) = super::gpu() else { return };
    let stream = Stream(1);
    let code = |e: slc::Error| e.diagnostic().code.to_string();
    let mut r = Rng::new(4099);
    let (mut ran, mut failures) = (0, vec![]);
    for _ in 0..400 {
        let case = Case::draw(&mut r);
        let types: Vec<(&str, SymTensorType)> =
            (case.inputs.iter()).map(|(n, t)| (*n, TensorType::of(t.dtype(), t.shape()).generic())).collect();
        let Ok(k) = Kernel::prepare_with_values(&case.src, &types, &case.values(), &Default::default())
        else {
            continue;
        };
        let Some(fixed) = k.fixed() else { continue };
        let dense = case.inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
        let want = fixed.run(&dense).map_err(code);
        let copies: Vec<StridedCopy> =
            case.inputs.iter().map(|(_, t)| StridedCopy::draw(t, &mut r)).collect();
        let strided: Vec<_> = copies.iter().map(|c| gpu.upload(c.buffer().0, stream).unwrap()).collect();
        let packed: Vec<_> =
            case.inputs.iter().map(|(_, t)| gpu.upload(t.bytes(), stream).unwrap()).collect();
        let array = |(_, t): &(&str, Tensor), ptr: u64, strides: Option<Vec<isize>>| DeviceArray {
            ptr,
            dtype: t.dtype(),
            shape: t.shape().to_vec(),
            strides,
        };
        let views: Vec<DeviceArray> = (case.inputs.iter().zip(&copies).zip(&strided))
            .map(|((i, c), m)| array(i, m.ptr + c.buffer().1 as u64, Some(c.strides().to_vec())))
            .collect();
        let dense: Vec<DeviceArray> =
            case.inputs.iter().zip(&packed).map(|(i, m)| array(i, m.ptr, None)).collect();
        for (layout, arrays) in [("strided", &views), ("dense", &dense)] {
            // SAFETY: every array lies in its upload, alive here.
            let got = unsafe { k.run_device(arrays, stream) }.map_err(code).map(|o| {
                let a =
                    DeviceArray { ptr: o.memory.ptr, dtype: o.dtype, shape: o.shape.clone(), strides: None };
                a.to_host().unwrap()
            });
            if got != want {
                failures
                    .push(format!("`{}` on {layout} device arrays: CPU {want:?}, device {got:?}", case.src));
            }
        }
        ran += 1;
    }
    eprintln!("{ran} fuzzer programs on strided and dense device arrays, {} differ", failures.len());
    assert!(ran > 200, "only {ran} programs compiled");
    assert!(failures.is_empty(), "{}", failures[..failures.len().min(10)].join("\n"));
}

/// One shape-generic kernel called from several threads at once on device arrays of different
/// shapes (its layouts' cache shared), each result the host's.
#[test]
fn threads_share_device_kernels() {
    use slc::embed::{DeviceArray, Kernel, Stream};
    let Some(gpu) = super::gpu() else { return };
    let types = [("a", "f32[N, M]".parse().unwrap()), ("i", "i64[K]".parse().unwrap())];
    let k = Kernel::prepare("a[::-1, i][1:]", &types).unwrap();
    let failures: Vec<String> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..4u64)
            .map(|t| {
                let k = &k;
                scope.spawn(move || {
                    let mut failures = vec![];
                    for call in 0..12u64 {
                        let (n, m) = (2 + ((t + call) % 5) as usize, 1 + ((t * 3 + call) % 4) as usize);
                        let values: Vec<u8> =
                            (0..n * m).flat_map(|x| ((x as u64 * 7 + t) as f32).to_le_bytes()).collect();
                        let a = Tensor::from_bytes(slc::DType::F32, &[n, m], &values).unwrap();
                        let idx: Vec<i64> =
                            (0..call % 3 + 1).map(|j| (j as i64 * 5 + t as i64) % m as i64).collect();
                        let i = Tensor::from_i64s(slc::DType::I64, &[idx.len()], &idx).unwrap();
                        let want = k.run(&[&a, &i]).map_err(|e| e.to_string());
                        let stream = Stream(1);
                        let (ma, mi) =
                            (gpu.upload(a.bytes(), stream).unwrap(), gpu.upload(i.bytes(), stream).unwrap());
                        let arrays = [
                            DeviceArray {
                                ptr: ma.ptr,
                                dtype: a.dtype(),
                                shape: a.shape().to_vec(),
                                strides: None,
                            },
                            DeviceArray {
                                ptr: mi.ptr,
                                dtype: i.dtype(),
                                shape: i.shape().to_vec(),
                                strides: None,
                            },
                        ];
                        // SAFETY: both arrays are uploads alive here.
                        let got =
                            unsafe { k.run_device(&arrays, stream) }.map_err(|e| e.to_string()).map(|o| {
                                DeviceArray {
                                    ptr: o.memory.ptr,
                                    dtype: o.dtype,
                                    shape: o.shape.clone(),
                                    strides: None,
                                }
                                .to_host()
                                .unwrap()
                            });
                        if got != want {
                            failures.push(format!(
                                "thread {t}, f32[{n}, {m}], i {idx:?}: host {want:?}, device {got:?}"
                            ));
                        }
                    }
                    failures
                })
            })
            .collect();
        workers.into_iter().flat_map(|w| w.join().expect("a worker")).collect()
    });
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
