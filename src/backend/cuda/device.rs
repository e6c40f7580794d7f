//! Plans run on an NVIDIA GPU: the driver through `cudarc` (loaded at run time; its presence is
//! checked before any call, since a missing library would panic inside cudarc), kernels
//! compiled by NVRTC to a CUBIN for the device's compute capability and cached in memory and on
//! disk (`<cache dir>/slc/cuda/`, keyed by the source — which holds the plan — the architecture
//! and NVRTC's version). A run copies host inputs in, launches on the default stream, copies
//! the output and the error words back, and reports the error the interpreter would; the
//! context stays usable (no device assert). One device: ordinal 0.

use super::launch::{self, NO_ERROR};
use super::{CudaError, CudaSource, nvrtc};
use crate::backend::RuntimeError;
use crate::plan::VerifiedGenericPlan;
use cudarc::driver::{result, sys};
use slc_runtime::Tensor;
use std::collections::HashMap;
use std::ffi::{CString, c_void};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

/// Threads per block; the grid is capped at [`MAX_GRID`] blocks, each thread striding over the
/// rest (in the 32-bit kernel `linear + stride` stays below 2^31: at most 2^30 elements).
pub const BLOCK: u32 = 256;
pub const MAX_GRID: u64 = 1 << 16;

/// Why a run on the GPU failed.
#[derive(Debug, thiserror::Error)]
pub enum GpuError {
    /// What the CPU reports for the same inputs (an index out of range, a shape mismatch).
    #[error(transparent)]
    Run(#[from] RuntimeError),
    #[error(transparent)]
    Cuda(#[from] CudaError),
}

/// Where one run's time went.
#[derive(Debug, Clone, Copy, Default)]
pub struct GpuTimes {
    /// Generating and compiling the kernel (or finding it cached).
    pub compile: Duration,
    /// Where the kernel came from.
    pub cached: Cached,
    /// Measured with CUDA events on the stream.
    pub h2d: Duration,
    pub kernel: Duration,
    pub d2h: Duration,
}

#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Cached {
    #[default]
    Compiled,
    Memory,
    Disk,
}

/// The device slc runs on, its context current on the threads that use it.
pub struct Device {
    ctx: sys::CUcontext,
    /// Compute capability as NVRTC names it (90 for sm_90).
    pub arch: u32,
    pub name: String,
    modules: Mutex<HashMap<String, Module>>,
}

#[derive(Clone, Copy)]
pub(super) struct Module(pub(super) sys::CUmodule);

// SAFETY: driver handles may be used from any thread once the context is current there
// (`Device::enter`); the module map is behind a lock.
unsafe impl Send for Device {}
unsafe impl Sync for Device {}
unsafe impl Send for Module {}

pub(super) fn driver(e: result::DriverError) -> CudaError {
    CudaError::Driver(format!("{e:?}"))
}

/// The GPU, initialized once per process; [`CudaError::NoDriver`] where there is none.
pub fn device() -> Result<&'static Device, CudaError> {
    static DEVICE: OnceLock<Result<Device, CudaError>> = OnceLock::new();
    DEVICE.get_or_init(open).as_ref().map_err(Clone::clone)
}

/// Whether the driver library can be loaded (cudarc's own probe, which never panics).
pub fn driver_present() -> bool {
    // SAFETY: tries to load the library by cudarc's candidate names, nothing more.
    unsafe { sys::is_culib_present() }
}

fn open() -> Result<Device, CudaError> {
    if !driver_present() {
        return Err(CudaError::NoDriver("no CUDA driver: libcuda.so is not on this machine".into()));
    }
    // A driver older than the bindings may lack a symbol, which cudarc reports by panicking.
    std::panic::catch_unwind(|| -> Result<Device, CudaError> {
        result::init().map_err(|e| CudaError::NoDriver(format!("the CUDA driver does not start: {e:?}")))?;
        let count = result::device::get_count().map_err(driver)?;
        if count < 1 {
            return Err(CudaError::NoDriver("the CUDA driver sees no GPU".into()));
        }
        let dev = result::device::get(0).map_err(driver)?;
        let attribute = |a| {
            // SAFETY: a valid device and attribute.
            unsafe { result::device::get_attribute(dev, a) }.map_err(driver)
        };
        let major = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?;
        let minor = attribute(sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?;
        // SAFETY: retains the device's primary context (released never: it lives as the process).
        let ctx = unsafe { result::primary_ctx::retain(dev) }.map_err(driver)?;
        let name = result::device::get_name(dev).unwrap_or_default();
        // Outputs made for callers come from the stream-ordered pool (`cuMemAllocAsync`): keep
        // what it frees for the next call instead of giving it back at every synchronization.
        // SAFETY: the device's own pool; the attribute takes a u64. Failing costs speed only.
        unsafe {
            if let Ok(pool) = result::device::get_default_mem_pool(dev) {
                let mut keep = u64::MAX;
                let _ = result::mem_pool::set_attribute(
                    pool,
                    sys::CUmemPool_attribute::CU_MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    (&mut keep as *mut u64).cast(),
                );
            }
        }
        Ok(Device { ctx, arch: (major * 10 + minor) as u32, name, modules: Mutex::new(HashMap::new()) })
    })
    .unwrap_or_else(|_| Err(CudaError::NoDriver("the CUDA driver lacks an entry point slc uses".into())))
}

/// FNV-1a: a stable name for a cache file.
fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf29ce484222325, |h, &b| (h ^ b as u64).wrapping_mul(0x100000001b3))
}

impl Device {
    /// Makes the context current on this thread.
    pub(super) fn enter(&self) -> Result<(), CudaError> {
        // SAFETY: the primary context retained in `open`.
        unsafe { result::ctx::set_current(self.ctx) }.map_err(driver)
    }

    /// The module of `source`: from memory, the disk cache, or NVRTC.
    pub(super) fn module(&self, source: &CudaSource) -> Result<(Module, Cached), CudaError> {
        // The lock is not held while NVRTC compiles: threads compile different kernels at once.
        let loaded = |modules: &HashMap<String, Module>| modules.get(&source.text).copied();
        if let Some(m) = loaded(&self.modules.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok((m, Cached::Memory));
        }
        let nvrtc = nvrtc::get()?;
        let (major, minor) = nvrtc.version();
        let key = format!(
            "{:016x}",
            fnv(format!("{}\0sm_{}\0nvrtc {major}.{minor}", source.text, self.arch).as_bytes())
        );
        let file = dirs::cache_dir().map(|d| d.join("slc").join("cuda").join(format!("{key}.cubin")));
        let (cubin, cached) = match file.as_ref().and_then(|f| std::fs::read(f).ok()) {
            Some(cubin) => (cubin, Cached::Disk),
            None => {
                let cubin = nvrtc.cubin(&source.text, self.arch)?;
                if let Some(f) = &file {
                    // A cache: failing to write it costs a compile next time, nothing more.
                    let _ = f.parent().map(std::fs::create_dir_all);
                    let _ = std::fs::write(f, &cubin);
                }
                (cubin, Cached::Compiled)
            }
        };
        // SAFETY: a CUBIN image NVRTC made for this device's architecture.
        let module = unsafe { result::module::load_data(cubin.as_ptr().cast()) }.map_err(driver)?;
        let mut modules = self.modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(first) = loaded(&modules) {
            // Another thread loaded the same kernel meanwhile: keep one.
            // SAFETY: loaded just above, never used.
            let _ = unsafe { result::module::unload(module) };
            return Ok((first, Cached::Memory));
        }
        modules.insert(source.text.clone(), Module(module));
        Ok((Module(module), cached))
    }

    /// Runs `plan` on `inputs` (in plan order, on the host): copies in, launches, copies out.
    pub fn run(
        &self,
        plan: &VerifiedGenericPlan,
        inputs: &[&Tensor],
    ) -> Result<(Tensor, GpuTimes), GpuError> {
        self.run_repeated(plan, inputs, 1)
    }

    /// [`run`](Self::run), launching the kernel `launches` times (at least once) on the same
    /// buffers: the kernel time is the median launch (`slc eval --time --repeat N`).
    pub fn run_repeated(
        &self,
        plan: &VerifiedGenericPlan,
        inputs: &[&Tensor],
        launches: usize,
    ) -> Result<(Tensor, GpuTimes), GpuError> {
        self.enter()?;
        let started = Instant::now();
        let source = super::generate(plan, "slc_kernel")?;
        let bound = launch::bind(plan, &source.layout, inputs)?;
        let (module, cached) = self.module(&source)?;
        let kernels = functions(module, &source, bound.wide)?;
        let mut times = GpuTimes { compile: started.elapsed(), cached, ..GpuTimes::default() };
        let target = launch::store_target(plan);
        let (out, err) =
            self.launch(&kernels, &source, &bound, inputs, target, launches.max(1), &mut times)?;
        launch::decode_errors(&bound, &err, inputs)?;
        Ok((Tensor::from_bytes(plan.dtype, &bound.shape, &out).map_err(RuntimeError::from)?, times))
    }

    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        kernels: &[sys::CUfunction],
        source: &CudaSource,
        bound: &launch::Bound,
        inputs: &[&Tensor],
        target: Option<usize>,
        launches: usize,
        times: &mut GpuTimes,
    ) -> Result<(Vec<u8>, Vec<u64>), CudaError> {
        let mut memory = Allocations(vec![]);
        let stream = std::ptr::null_mut(); // the default stream
        let event = || result::event::create(sys::CUevent_flags::CU_EVENT_DEFAULT).map_err(driver);
        // Before the copies in, then one after each launch, then after the copies out.
        let mut events = Events(vec![]);
        for _ in 0..launches + 3 {
            events.0.push(event()?);
        }
        let events = &events.0;
        let mut words = bound.words.clone();
        let mut out = vec![0u8; bound.out_bytes];
        let mut err = vec![NO_ERROR; bound.err_words];
        // SAFETY: every device pointer below is an allocation of at least the bytes copied
        // into or out of it, freed only when `memory` drops (after the stream is synchronized, or
        // by cuMemFree's own synchronization on an early error);
        // the argument block holds the inputs bound and checked against the plan (verification
        // proved every address in bounds under that binding), the output's and the error words'
        // allocations.
        unsafe {
            result::event::record(events[0], stream).map_err(driver)?;
            let mut starts = Vec::with_capacity(inputs.len());
            for (i, t) in inputs.iter().enumerate() {
                let d = memory.alloc(t.nbytes())?;
                if t.nbytes() > 0 {
                    result::memcpy_htod_async(d, t.bytes(), stream).map_err(driver)?;
                }
                words[i] = d.wrapping_add(bound.input_offsets[i] as u64);
                starts.push(d);
            }
            let out_d = memory.alloc(bound.out_bytes)?;
            let err_d = memory.alloc(8 * bound.err_words)?;
            result::memset_d8_async(err_d, 0xff, 8 * bound.err_words, stream).map_err(driver)?;
            words[source.layout.out_word()] = out_d;
            words[source.layout.err_word()] = err_d;
            let owner_bytes = launch::owner_bytes(&source.layout, bound);
            let store = match target {
                Some(t) => Some(StoreRun {
                    // The target's first byte (a view's window's), not its element [0, ..., 0].
                    copy_from: Some(starts[t]),
                    out: out_d,
                    bytes: bound.out_bytes,
                    owner: match owner_bytes {
                        0 => None,
                        n => Some((memory.alloc(n)?, n)),
                    },
                }),
                None => None,
            };
            if let Some((owner, _)) = store.as_ref().and_then(|s| s.owner) {
                words[source.layout.owner_word()] = owner;
            }
            let steps = launch::steps(&source.layout, bound);
            result::event::record(events[1], stream).map_err(driver)?;
            // A store's launch is the whole store: the copy, the owner array zeroed, the kernels.
            for launch in 0..launches {
                queue(kernels, &steps, &mut words, store.as_ref(), stream)?;
                result::event::record(events[2 + launch], stream).map_err(driver)?;
            }
            let after = events[launches + 1];
            if !out.is_empty() {
                result::memcpy_dtoh_async(&mut out, out_d, stream).map_err(driver)?;
            }
            result::memcpy_dtoh_async(&mut err, err_d, stream).map_err(driver)?;
            result::event::record(events[launches + 2], stream).map_err(driver)?;
            result::stream::synchronize(stream).map_err(driver)?;
            let ms = |a, b| {
                result::event::elapsed(a, b).map(|t| Duration::from_secs_f64(t as f64 / 1e3)).map_err(driver)
            };
            times.h2d = ms(events[0], events[1])?;
            let mut kernel =
                (0..launches).map(|k| ms(events[1 + k], events[2 + k])).collect::<Result<Vec<_>, _>>()?;
            kernel.sort();
            times.kernel = kernel[launches / 2];
            times.d2h = ms(after, events[launches + 2])?;
        }
        Ok((out, err))
    }
}

/// The kernels of `source` for 64-bit (`wide`) or 32-bit arithmetic in `module`, in launch
/// order ([`CudaSource::entries`]).
pub(super) fn functions(
    module: Module,
    source: &CudaSource,
    wide: bool,
) -> Result<Vec<sys::CUfunction>, CudaError> {
    (source.entries(wide).into_iter())
        .map(|entry| {
            let entry = CString::new(entry).expect("an identifier");
            // SAFETY: a module loaded from the source that defines `entry`.
            unsafe { result::module::get_function(module.0, entry) }.map_err(driver)
        })
        .collect()
}

/// The device memory of a store's run besides its argument block: the output starts as a copy
/// of the target at `copy_from` (none: the output *is* the target, updated in place), of
/// `bytes` bytes; the owner array, zeroed before the kernels, where the store has one.
pub(super) struct StoreRun {
    pub copy_from: Option<u64>,
    pub out: u64,
    pub bytes: usize,
    pub owner: Option<(u64, usize)>,
}

/// Queues a bound call on `stream`: a store's copy and owner array ([`StoreRun`]), then
/// `kernels` (as [`functions`] gives them), each over its `steps` ([`launch::steps`]).
///
/// # Safety
/// As [`launch_grid`] for every kernel; a store's buffers are device memory of their bytes.
pub(super) unsafe fn queue(
    kernels: &[sys::CUfunction],
    steps: &[u64],
    words: &mut [u64],
    store: Option<&StoreRun>,
    stream: sys::CUstream,
) -> Result<(), CudaError> {
    // SAFETY: as the caller promises.
    unsafe {
        if let Some(s) = store {
            if let Some(from) = s.copy_from.filter(|_| s.bytes > 0) {
                result::memcpy_dtod_async(s.out, from, s.bytes, stream).map_err(driver)?;
            }
            if let Some((owner, bytes)) = s.owner {
                result::memset_d8_async(owner, 0, bytes, stream).map_err(driver)?;
            }
        }
        for (&function, &n) in kernels.iter().zip(steps) {
            launch_grid(function, words, n, stream)?;
        }
    }
    Ok(())
}

/// Queues `function` over `steps` grid-stride steps on `stream` (nothing for none), its argument
/// block `words`.
///
/// # Safety
/// `words` is the block of `function`'s kernel for a bound call: every address it lets the
/// kernel form lies in memory valid on `stream`.
pub(super) unsafe fn launch_grid(
    function: sys::CUfunction,
    words: &mut [u64],
    steps: u64,
    stream: sys::CUstream,
) -> Result<(), CudaError> {
    if steps == 0 {
        return Ok(());
    }
    let grid = steps.div_ceil(BLOCK as u64).min(MAX_GRID) as u32;
    let mut params = [words.as_mut_ptr().cast::<c_void>()];
    // SAFETY: as the caller promises; the driver copies the block at the launch.
    unsafe { result::launch_kernel(function, (grid, 1, 1), (BLOCK, 1, 1), 0, stream, &mut params) }
        .map_err(driver)
}

/// Device memory of one run, freed when dropped.
struct Allocations(Vec<sys::CUdeviceptr>);

impl Allocations {
    fn alloc(&mut self, bytes: usize) -> Result<sys::CUdeviceptr, CudaError> {
        // SAFETY: a plain allocation (at least a byte, so that every buffer has an address).
        let d = unsafe { result::malloc_sync(bytes.max(1)) }.map_err(driver)?;
        self.0.push(d);
        Ok(d)
    }
}

impl Drop for Allocations {
    fn drop(&mut self) {
        for &d in &self.0 {
            // SAFETY: allocated by `alloc`, and every use ended (the stream was synchronized,
            // or the run failed before anything was queued on them).
            let _ = unsafe { result::free_sync(d) };
        }
    }
}

struct Events(Vec<sys::CUevent>);

impl Drop for Events {
    fn drop(&mut self) {
        for &e in &self.0 {
            // SAFETY: events created for one run, no longer waited on.
            let _ = unsafe { result::event::destroy(e) };
        }
    }
}
