//! Device memory does not leak, counted by the stand-in CUDA driver (`support/cuda_stand_in.c`):
//! a test binary of its own, since the count is the process's and other tests would move it.

#[path = "support/cuda_stand_in.rs"]
mod stand_in;

use slc::backend::cuda::device;

fn gpu() -> Option<&'static device::Device> {
    stand_in::device()
}

/// Device memory does not leak: every route of `Kernel::run_device` and `store_device` (dense,
/// strided views read in place, a store through a view in place, through a packed copy, the
/// buffered `+=`, a failing call), a few hundred calls, then the live device memory is what it
/// was after the first round (slc's pools and caches filled).
#[test]
fn device_memory_does_not_leak() {
    use slc::embed::{DeviceArray, Kernel, Stream};
    let Some(gpu) = gpu() else { return };
    // SAFETY: the stand-in's own function, `size_t (void)`.
    let live = || unsafe {
        let f = libc::dlsym(libc::RTLD_DEFAULT, c"slc_stand_in_live_bytes".as_ptr());
        assert!(!f.is_null(), "the stand-in is loaded");
        std::mem::transmute::<*mut libc::c_void, extern "C" fn() -> usize>(f)()
    };
    let stream = Stream(1);
    let ty = |s: &str| -> slc::types::SymTensorType { s.parse().unwrap() };
    let floats: Vec<u8> = (0..48).flat_map(|x| (x as f32).to_le_bytes()).collect();
    let read = Kernel::prepare("a[::-1, i]", &[("a", ty("f32[N, M]")), ("i", ty("i64[K]"))]).unwrap();
    let set = Kernel::prepare("a[i] = 7", &[("a", ty("f32[4, 6]")), ("i", ty("i64[2]"))]).unwrap();
    let add = Kernel::prepare("a[i] += 1", &[("a", ty("f32[4, 6]")), ("i", ty("i64[2]"))]).unwrap();
    let onto_itself = Kernel::prepare("a[::-1] = a", &[("a", ty("f32[4, 6]"))]).unwrap();
    let round = || {
        let base = gpu.upload(&floats, stream).unwrap();
        let good = gpu.upload(&[1i64, 1].map(i64::to_le_bytes).concat(), stream).unwrap();
        let bad = gpu.upload(&[0i64, 9].map(i64::to_le_bytes).concat(), stream).unwrap();
        let dense = DeviceArray { ptr: base.ptr, dtype: slc::DType::F32, shape: vec![4, 6], strides: None };
        // Every other column of an f32[4, 12], reversed: element [0, 0] is column 10 of row 0.
        let view = DeviceArray {
            ptr: base.ptr + 40,
            shape: vec![4, 6],
            strides: Some(vec![12, -2]),
            ..dense.clone()
        };
        let index = |m: &slc::embed::DeviceMemory| DeviceArray {
            ptr: m.ptr,
            dtype: slc::DType::I64,
            shape: vec![2],
            strides: None,
        };
        // SAFETY: every array lies in an upload alive in this round.
        unsafe {
            for a in [&dense, &view] {
                drop(read.run_device(&[a.clone(), index(&good)], stream).unwrap());
                assert!(read.run_device(&[a.clone(), index(&bad)], stream).is_err());
                set.store_device(&[a.clone(), index(&good)], stream).unwrap();
                add.store_device(&[a.clone(), index(&good)], stream).unwrap();
                drop(add.run_device(&[a.clone(), index(&good)], stream).unwrap());
                onto_itself.store_device(std::slice::from_ref(a), stream).unwrap();
            }
        }
    };
    round();
    let before = live();
    for _ in 0..200 {
        round();
    }
    assert_eq!(live(), before, "device bytes live after 200 more rounds");
}
