//! Plans run on the caller's device memory and stream — Python's DLPack producers (PyTorch,
//! CuPy, JAX), the C ABI's device pointers, Rust's [`DeviceArray`]s — with nothing copied in or
//! out: the kernel reads the caller's arrays where they are (a strided view through a plan
//! lowered with its strides) and writes the caller's output.
//!
//! A launch is asynchronous on the caller's stream unless the kernel can fail: a plan with
//! index checks or `error`-mode gathers records failures in error words, which are read back
//! (a synchronization of that stream) to report the interpreter's error with its span. Which
//! kernels can fail is read off their source: only a failing path writes an error word.

use super::device::{Device, GpuError, driver};
use super::launch::{self, Bound, Input, NO_ERROR};
use super::{CudaError, CudaSource};
use crate::backend::RuntimeError;
use crate::plan::VerifiedGenericPlan;
use cudarc::driver::{result, sys};
use slc_runtime::{DType, Tensor};

/// A CUDA stream as the driver names it: `0` the default stream, `1` the legacy default stream
/// (`CU_STREAM_LEGACY`), `2` the per-thread default stream, any other value a `CUstream` —
/// DLPack's numbering for CUDA.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Stream(pub usize);

impl Stream {
    fn raw(self) -> sys::CUstream {
        self.0 as sys::CUstream
    }
}

/// An array in device memory, lent by the caller: the device address of its element
/// `[0, ..., 0]`, and element strides where it is not dense in C order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeviceArray {
    pub ptr: u64,
    pub dtype: DType,
    pub shape: Vec<usize>,
    pub strides: Option<Vec<isize>>,
}

impl DeviceArray {
    /// Its strides, unless they are C order's (or it has no elements).
    pub fn layout(&self) -> Option<&[isize]> {
        let strides = self.strides.as_deref()?;
        let mut want = 1isize;
        let dense = self.shape.contains(&0)
            || self.shape.iter().zip(strides).rev().all(|(&d, &s)| {
                let ok = d == 1 || s == want;
                want = want.saturating_mul(d as isize);
                ok
            });
        (!dense).then_some(strides)
    }

    /// The byte range its elements occupy, `(lo, hi)` relative to `ptr`; `(0, 0)` when empty.
    pub fn reach(&self) -> (i128, i128) {
        if self.shape.contains(&0) {
            return (0, 0);
        }
        let w = self.dtype.width() as i128;
        match self.layout() {
            None => (0, self.shape.iter().map(|&d| d as i128).product::<i128>() * w),
            Some(strides) => {
                let (mut lo, mut hi) = (0i128, 0i128);
                for (&d, &s) in self.shape.iter().zip(strides) {
                    let r = (d as i128 - 1) * s as i128;
                    if r < 0 { lo += r } else { hi += r }
                }
                (lo * w, (hi + 1) * w)
            }
        }
    }

    /// The array as the plan's input sees it: itself when dense, else its window (the bytes
    /// from its lowest element to its highest, as one dimension), moved to the window's start.
    pub fn window(&self) -> DeviceArray {
        if self.layout().is_none() {
            return DeviceArray { strides: None, ..self.clone() };
        }
        let (lo, hi) = self.reach();
        let w = self.dtype.width() as i128;
        DeviceArray {
            ptr: (self.ptr as i128 + lo) as u64,
            dtype: self.dtype,
            shape: vec![((hi - lo) / w) as usize],
            strides: None,
        }
    }

    /// Its elements copied to the host as a dense tensor of its dims (a window: as one
    /// dimension); synchronous.
    pub fn to_host(&self) -> Result<Tensor, CudaError> {
        let mut t = Tensor::for_overwrite(self.dtype, &self.shape)
            .map_err(|e| CudaError::Driver(format!("a host copy for an error: {e}")))?;
        if t.nbytes() > 0 {
            // SAFETY: the caller lent `nbytes` readable device bytes at `ptr`.
            unsafe { result::memcpy_dtoh_sync(t.bytes_mut(), self.ptr) }.map_err(driver)?;
        }
        Ok(t)
    }
}

impl Input for DeviceArray {
    fn dtype(&self) -> DType {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn nbytes(&self) -> usize {
        Tensor::byte_size(self.dtype, &self.shape).unwrap_or(usize::MAX)
    }
    /// Read back from the device (a run-time scalar: a few bytes, synchronously).
    fn int_at(&self, linear: usize) -> Option<i128> {
        let w = self.dtype.width();
        if linear >= self.shape.iter().product() {
            return None;
        }
        let mut bytes = vec![0u8; w];
        // SAFETY: element `linear` of the caller's dense array is readable device memory.
        unsafe { result::memcpy_dtoh_sync(&mut bytes, self.ptr + (linear * w) as u64) }.ok()?;
        self.dtype.int_from_le(&bytes)
    }
}

/// A plan's kernels loaded on the device, ready for launches on caller memory.
pub struct Loaded {
    source: CudaSource,
    /// The 32-bit and the 64-bit kernels (a store's several, in launch order), where the source
    /// has them.
    narrow: Option<Vec<sys::CUfunction>>,
    wide: Option<Vec<sys::CUfunction>>,
    /// A store's target, in plan order.
    target: Option<usize>,
    /// Whether an element can fail (the kernel then has error words to read back).
    can_fail: bool,
}

// SAFETY: function handles are valid in every thread where the context is current.
unsafe impl Send for Loaded {}
unsafe impl Sync for Loaded {}

impl std::fmt::Debug for Loaded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Loaded({}, can fail: {})", self.source.name, self.can_fail)
    }
}

/// Device memory slc allocated on a stream (an output for a caller), freed on that stream when
/// dropped unless [`DeviceMemory::into_raw`] handed it on.
#[derive(Debug)]
pub struct DeviceMemory {
    pub ptr: u64,
    pub bytes: usize,
    stream: Stream,
    /// Error words known to hold `NO_ERROR` each (kept apart when freed).
    clean: bool,
}

impl DeviceMemory {
    /// Frees it in the order of `stream` instead (the stream that uses it last: a consumer's).
    pub fn free_on(&mut self, stream: Stream) {
        self.stream = stream;
    }

    /// Gives up ownership: the caller frees it with [`free`] (on the stream that uses it last).
    pub fn into_raw(self) -> (u64, usize) {
        let me = std::mem::ManuallyDrop::new(self);
        (me.ptr, me.bytes)
    }
}

impl Drop for DeviceMemory {
    fn drop(&mut self) {
        // The context must be current on the thread that drops it (Python's, say).
        if let Ok(gpu) = super::device::device() {
            let _ = gpu.enter();
        }
        if !kept::keep(self.ptr, self.bytes, self.stream, self.clean) {
            // SAFETY: allocated by `Device::alloc` on `stream`; later uses were queued on it.
            let _ = unsafe { free(self.ptr, self.stream) };
        }
    }
}

/// Blocks freed on a stream, kept for the next allocation of the same size on that stream: a
/// caller running a kernel in a loop gets its output block back at the cost of a lock, whatever
/// the driver's pool does (measured on the H100: a 1 GiB `cuMemAllocAsync` that misses costs
/// tens of microseconds). Reuse on the stream that freed a block is ordered after every use
/// queued there. A few blocks at most, the oldest given back first, on the default streams only;
/// all given back when an allocation fails. Error words whose last run left them clean
/// (every word `NO_ERROR`) are kept apart and reused without being set again.
/// `SLC_CUDA_KEEP_BLOCKS=0` turns it off.
mod kept {
    use super::{Stream, free};
    use std::sync::{Mutex, OnceLock};

    const BLOCKS: usize = 8;
    const BYTES: usize = 8 << 30;

    /// (stream, bytes, clean error words, pointer), oldest first.
    static KEPT: Mutex<Vec<(Stream, usize, bool, u64)>> = Mutex::new(Vec::new());

    fn enabled() -> bool {
        static ON: OnceLock<bool> = OnceLock::new();
        *ON.get_or_init(|| std::env::var("SLC_CUDA_KEEP_BLOCKS").map_or(true, |v| v != "0"))
    }

    pub fn take(bytes: usize, stream: Stream, clean: bool) -> Option<u64> {
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        let at = kept.iter().rposition(|&(s, b, c, _)| s == stream && b == bytes && c == clean)?;
        Some(kept.remove(at).3)
    }

    /// Whether the block was kept (else the caller frees it).
    pub fn keep(ptr: u64, bytes: usize, stream: Stream, clean: bool) -> bool {
        // Only the default streams: a caller's stream may be destroyed, and its handle reused by
        // a new one while its work still runs.
        if !enabled() || stream.0 > 2 || bytes > BYTES {
            return false;
        }
        let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
        while kept.len() >= BLOCKS || kept.iter().map(|k| k.1).sum::<usize>() + bytes > BYTES {
            let (s, _, _, old) = kept.remove(0);
            // SAFETY: a kept block is slc's allocation, freed in the order of its stream.
            let _ = unsafe { free(old, s) };
        }
        kept.push((stream, bytes, clean, ptr));
        true
    }

    pub fn flush() {
        let blocks = std::mem::take(&mut *KEPT.lock().unwrap_or_else(|e| e.into_inner()));
        for (stream, _, _, ptr) in blocks {
            // SAFETY: as in `keep`.
            let _ = unsafe { free(ptr, stream) };
        }
    }
}

/// Frees memory from [`Device::alloc`] in the order of `stream`.
///
/// # Safety
/// `ptr` came from [`DeviceMemory::into_raw`], and no work queued after this on another stream
/// uses it.
pub unsafe fn free(ptr: u64, stream: Stream) -> Result<(), CudaError> {
    // SAFETY: as the caller promises.
    unsafe { result::free_async(ptr, stream.raw()) }.map_err(driver)
}

impl Device {
    /// Loads `plan`'s kernels (compiled by NVRTC, or from the caches).
    pub fn load(&self, plan: &VerifiedGenericPlan) -> Result<Loaded, CudaError> {
        self.enter()?;
        let source = super::generate(plan, "slc_kernel")?;
        let (module, _) = self.module(&source)?;
        let functions = |wide: bool, present: bool| -> Result<Option<Vec<sys::CUfunction>>, CudaError> {
            present.then(|| super::device::functions(module, &source, wide)).transpose()
        };
        let narrow = functions(false, source.layout.narrow)?;
        let wide = functions(true, source.layout.wide)?;
        let can_fail = source.text.contains("atomicMin(");
        Ok(Loaded { target: super::launch::store_target(plan), source, narrow, wide, can_fail })
    }

    /// Binds a call of `plan` on `inputs` (in plan order): the output's dims and bytes, the
    /// kernel's arguments; every requirement checked, nothing launched.
    pub fn bind(
        &self,
        plan: &VerifiedGenericPlan,
        loaded: &Loaded,
        inputs: &[DeviceArray],
    ) -> Result<Bound, GpuError> {
        let windows: Vec<DeviceArray> = inputs.iter().map(DeviceArray::window).collect();
        Ok(launch::bind(plan, &loaded.source.layout, &windows)?)
    }

    /// Device memory for `bytes` (at least one), ordered on `stream`.
    pub fn alloc(&self, bytes: usize, stream: Stream) -> Result<DeviceMemory, CudaError> {
        self.enter()?;
        if let Some(ptr) = kept::take(bytes, stream, false) {
            return Ok(DeviceMemory { ptr, bytes, stream, clean: false });
        }
        // SAFETY: a stream-ordered allocation on the caller's stream.
        let ptr = match unsafe { result::malloc_async(stream.raw(), bytes.max(1)) } {
            Ok(ptr) => ptr,
            Err(_) => {
                // Out of memory, perhaps for blocks slc keeps: give them back and try again.
                kept::flush();
                // SAFETY: as above.
                unsafe { result::malloc_async(stream.raw(), bytes.max(1)) }.map_err(driver)?
            }
        };
        Ok(DeviceMemory { ptr, bytes, stream, clean: false })
    }

    /// A copy of `bytes` in device memory, ordered on `stream` (a host array or a Python `int`
    /// beside device inputs); waits for the copy.
    pub fn upload(&self, bytes: &[u8], stream: Stream) -> Result<DeviceMemory, CudaError> {
        let memory = self.alloc(bytes.len(), stream)?;
        // SAFETY: `memory` has `bytes.len()` bytes; the copy ends before `bytes` may go.
        unsafe {
            if !bytes.is_empty() {
                result::memcpy_htod_async(memory.ptr, bytes, stream.raw()).map_err(driver)?;
            }
            result::stream::synchronize(stream.raw()).map_err(driver)?;
        }
        Ok(memory)
    }

    /// Queues a copy of `bytes` bytes from device address `from` to `to` on `stream`.
    ///
    /// # Safety
    /// Both hold `bytes` bytes of device memory valid on `stream`, and do not overlap.
    pub unsafe fn copy(&self, to: u64, from: u64, bytes: usize, stream: Stream) -> Result<(), CudaError> {
        self.enter()?;
        if bytes == 0 {
            return Ok(());
        }
        // SAFETY: as the caller promises.
        unsafe { result::memcpy_dtod_async(to, from, bytes, stream.raw()) }.map_err(driver)
    }

    /// Makes the work queued on `waiter` from now on wait for the work queued on `producer` so
    /// far (DLPack's stream handshake); nothing when they are the same stream.
    pub fn order_after(&self, waiter: Stream, producer: Stream) -> Result<(), CudaError> {
        if waiter == producer {
            return Ok(());
        }
        self.enter()?;
        let event = result::event::create(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING).map_err(driver)?;
        // SAFETY: a fresh event recorded on one valid stream and waited on by another, then
        // destroyed (the driver keeps it alive until the wait is resolved).
        unsafe {
            let done = result::event::record(event, producer.raw()).and_then(|()| {
                result::stream::wait_event(
                    waiter.raw(),
                    event,
                    sys::CUevent_wait_flags::CU_EVENT_WAIT_DEFAULT,
                )
            });
            let _ = result::event::destroy(event);
            done.map_err(driver)
        }
    }

    /// Launches a bound call on `stream`: `inputs` as bound, `out` at least `bound.out_bytes`
    /// bytes. Returns when the launch is queued, or — where the kernel can fail — when it ran,
    /// with the interpreter's error for a failed element.
    ///
    /// # Safety
    /// Every input's device memory holds its described elements and stays valid until the
    /// stream has run the kernel; `out` is writable device memory of `bound.out_bytes` bytes
    /// that no input overlaps; `stream` is a valid stream of this context.
    pub unsafe fn launch_on(
        &self,
        loaded: &Loaded,
        bound: &Bound,
        inputs: &[DeviceArray],
        out: u64,
        stream: Stream,
    ) -> Result<(), GpuError> {
        self.enter()?;
        let Some(kernels) = (if bound.wide { &loaded.wide } else { &loaded.narrow }) else {
            return Err(CudaError::Driver("no kernel for this call's integer width".into()).into());
        };
        let layout = &loaded.source.layout;
        let mut words = bound.words.clone();
        for (i, a) in inputs.iter().enumerate() {
            words[i] = a.window().ptr.wrapping_add(bound.input_offsets[i] as u64);
        }
        words[layout.out_word()] = out;
        // Error words: clean ones kept from an earlier call, or new ones set to `NO_ERROR`.
        let err = match loaded.can_fail {
            true => Some(match kept::take(8 * bound.err_words, stream, true) {
                Some(ptr) => (DeviceMemory { ptr, bytes: 8 * bound.err_words, stream, clean: false }, true),
                None => (self.alloc(8 * bound.err_words, stream)?, false),
            }),
            false => None,
        };
        // SAFETY: the words hold the caller's arrays as bound against the verified plan (every
        // address in bounds under that binding), `out`'s bytes and the error words (when the
        // kernel can write them); all on `stream`.
        unsafe {
            if let Some((err, clean)) = &err {
                if !clean {
                    result::memset_d8_async(err.ptr, 0xff, err.bytes, stream.raw()).map_err(driver)?;
                }
                words[layout.err_word()] = err.ptr;
                words[layout.tell_word()] = pinned::arm()?;
            }
            // A store's output starts as its target's copy (a view's: its window), unless it is
            // the target itself (a store in place, `Kernel::store_device`); the owner array zeroed.
            let owner = match super::launch::owner_bytes(layout, bound) {
                0 => None,
                n => Some(self.alloc(n, stream)?),
            };
            if let Some(o) = &owner {
                words[layout.owner_word()] = o.ptr;
            }
            let store = loaded.target.map(|t| super::device::StoreRun {
                copy_from: Some(inputs[t].window().ptr).filter(|&from| from != out),
                out,
                bytes: bound.out_bytes,
                owner: owner.as_ref().map(|o| (o.ptr, o.bytes)),
            });
            let steps = super::launch::steps(layout, bound);
            super::device::queue(kernels, &steps, &mut words, store.as_ref(), stream.raw())?;
            let Some((mut err, _)) = err else { return Ok(()) };
            // A flag left set by an earlier call that failed to launch only costs the read-back.
            let words = match pinned::told(stream)? {
                true => pinned::read_back(err.ptr, bound.err_words, stream)?,
                false => vec![],
            };
            if words.iter().all(|&w| w == NO_ERROR) {
                err.clean = true;
                return Ok(());
            }
            // An element failed: the index that did is read back with the inputs (only now).
            let host = inputs.iter().map(|a| a.window().to_host()).collect::<Result<Vec<_>, _>>()?;
            let host: Vec<&Tensor> = host.iter().collect();
            launch::decode_errors(bound, &words, &host)?;
            Err(RuntimeError::GatherOutOfRange.into())
        }
    }
}

/// Page-locked host memory, one buffer per thread, mapped for the device: its first word is the
/// flag a failing element sets (`ArgLayout::tell_word`), the rest receives error words read back
/// (a copy into it is a plain DMA, where a copy into pageable memory goes through the driver's
/// staging buffer). A call that can fail clears the flag, launches and synchronizes; only a set
/// flag costs the copy of the error words, so a call whose elements all passed adds nothing to
/// the stream after its kernels.
mod pinned {
    use super::{CudaError, Stream, driver};
    use cudarc::driver::{result, sys};
    use std::cell::RefCell;

    /// Host address, device address, words after the flag.
    struct Buffer(*mut u64, u64, usize);

    impl Drop for Buffer {
        fn drop(&mut self) {
            // SAFETY: allocated by `malloc_host` below, no copy or kernel pending (each call that
            // armed it synchronized before returning, or failed to launch).
            let _ = unsafe { result::free_host(self.0.cast()) };
        }
    }

    thread_local! {
        static BUFFER: RefCell<Option<Buffer>> = const { RefCell::new(None) };
    }

    /// This thread's buffer with room for `words` error words after the flag.
    fn with<T>(words: usize, f: impl FnOnce(&Buffer) -> Result<T, CudaError>) -> Result<T, CudaError> {
        BUFFER.with(|cell| {
            let mut cell = cell.borrow_mut();
            if cell.as_ref().is_none_or(|b| b.2 < words) {
                *cell = None;
                let words = words.max(8);
                let flags = sys::CU_MEMHOSTALLOC_DEVICEMAP;
                // SAFETY: a plain page-locked allocation, mapped for the device.
                let host = unsafe { result::malloc_host(8 * (words + 1), flags) }.map_err(driver)?;
                let mut device = 0;
                // SAFETY: `host` is such an allocation, of this context.
                let mapped = unsafe { sys::cuMemHostGetDevicePointer_v2(&mut device, host, 0) }.result();
                if let Err(e) = mapped {
                    // SAFETY: just allocated, never used.
                    let _ = unsafe { result::free_host(host) };
                    return Err(driver(e));
                }
                *cell = Some(Buffer(host.cast(), device, words));
            }
            f(cell.as_ref().expect("allocated above"))
        })
    }

    /// Clears this thread's flag; its device address, for the argument block of a launch
    /// that the caller synchronizes before arming it again.
    pub fn arm() -> Result<u64, CudaError> {
        // SAFETY: the flag word is this thread's; no kernel that can write it is running.
        with(0, |b| unsafe {
            b.0.write_volatile(0);
            Ok(b.1)
        })
    }

    /// Whether an element of the call armed last set the flag, once `stream` has run to here.
    pub fn told(stream: Stream) -> Result<bool, CudaError> {
        // SAFETY: the stream's work done, the kernel's writes to mapped memory are visible.
        unsafe { result::stream::synchronize(stream.raw()) }.map_err(driver)?;
        with(0, |b| Ok(unsafe { b.0.read_volatile() } != 0))
    }

    /// `words` error words at device address `from`, once `stream` has run to here.
    pub fn read_back(from: u64, words: usize, stream: Stream) -> Result<Vec<u64>, CudaError> {
        with(words, |buffer| {
            // SAFETY: the buffer holds `words` u64s after the flag; the copy ends before the
            // stream's synchronization returns, and only this thread uses the buffer.
            unsafe {
                let host = std::slice::from_raw_parts_mut(buffer.0.add(1), words);
                result::memcpy_dtoh_async(host, from, stream.raw()).map_err(driver)?;
                result::stream::synchronize(stream.raw()).map_err(driver)?;
                Ok(host.to_vec())
            }
        })
    }
}
