//! Generated CUDA C run on the host: the sources, with `host_emulation.h` in front and an
//! emulated launcher per kernel, compiled by the system C compiler (`$CC`, else `cc`) into one
//! shared object, loaded, and called with the argument block [`launch::bind`] makes. Many
//! kernels share one compile (a compiler start costs more than a kernel). This is how tests
//! hold the GPU's source against the interpreter on a machine without one.

use super::launch::{self, NO_ERROR};
use super::{CudaError, CudaSource, HOST_EMULATION_H};
use crate::backend::RuntimeError;
use crate::plan::VerifiedGenericPlan;
use slc_runtime::Tensor;
use std::ffi::{CString, c_void};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Threads per emulated block; the grid is at most [`MAX_BLOCKS`] blocks, so that larger
/// outputs take the grid-stride loop more than once, as on a GPU.
pub const BLOCK: u64 = 32;
pub const MAX_BLOCKS: u64 = 3;

type EmulateFn = unsafe extern "C" fn(*const u64, u32, u32);

/// A loaded shared object of emulated kernels.
pub struct Emulator {
    handle: *mut c_void,
    path: PathBuf,
    /// The kernels share the translation unit's built-in index variables.
    lock: Mutex<()>,
}

// SAFETY: calls into the object are serialized by `lock`; the handle is only closed in Drop.
unsafe impl Send for Emulator {}
unsafe impl Sync for Emulator {}

impl Drop for Emulator {
    fn drop(&mut self) {
        // SAFETY: nothing points into the object once the emulator is gone.
        unsafe { libc::dlclose(self.handle) };
        let _ = std::fs::remove_file(&self.path);
    }
}

/// The C translation unit of `sources` under host emulation.
pub fn translation_unit(sources: &[&CudaSource]) -> String {
    let mut text = String::from(HOST_EMULATION_H);
    for s in sources {
        text.push_str(&s.text);
        for wide in [false, true] {
            if (wide && s.layout.wide) || (!wide && s.layout.narrow) {
                for entry in s.entries(wide) {
                    text.push_str(&format!("SLC_EMULATE({entry}, {}_args)\n", s.name));
                }
            }
        }
    }
    text
}

/// Compiles `sources` (distinct names) into a shared object in `dir` and loads it.
pub fn build(sources: &[&CudaSource], dir: &Path) -> Result<Emulator, CudaError> {
    load(&translation_unit(sources), dir)
}

/// Compiles `text` (C: generated CUDA C after `host_emulation.h`) into a shared object in `dir`
/// and loads it.
pub fn load(text: &str, dir: &Path) -> Result<Emulator, CudaError> {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    let stem = format!("slc_emulated_{}_{}", std::process::id(), NEXT.fetch_add(1, Ordering::Relaxed));
    let c = dir.join(format!("{stem}.c"));
    let so = dir.join(format!("{stem}.so"));
    std::fs::write(&c, text).map_err(|e| CudaError::Compile(format!("{}: {e}", c.display())))?;
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
    let output = std::process::Command::new(&cc)
        .args(["-std=c99", "-O1", "-w", "-shared", "-fPIC", "-o"])
        .arg(&so)
        .arg(&c)
        .output()
        .map_err(|e| CudaError::Compile(format!("cannot run `{cc}`: {e}")))?;
    if !output.status.success() {
        return Err(CudaError::Compile(String::from_utf8_lossy(&output.stderr).into_owned()));
    }
    let _ = std::fs::remove_file(&c);
    let path =
        CString::new(so.to_string_lossy().as_bytes()).map_err(|e| CudaError::Compile(e.to_string()))?;
    // SAFETY: a path to the object just built; its initializers are the C compiler's own.
    let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
    if handle.is_null() {
        return Err(CudaError::Compile(format!("cannot load {}", so.display())));
    }
    Ok(Emulator { handle, path: so, lock: Mutex::new(()) })
}

impl Emulator {
    /// The address of `name` in the object, or null.
    pub fn symbol(&self, name: &str) -> *mut c_void {
        let Ok(name) = CString::new(name) else { return std::ptr::null_mut() };
        // SAFETY: a symbol lookup in a loaded object.
        unsafe { libc::dlsym(self.handle, name.as_ptr()) }
    }

    /// Runs `source`'s kernel (built into this object; generated from `plan`) on `inputs` (in
    /// plan order) as a launch on a GPU would: the same argument block, the same error words.
    pub fn run(
        &self,
        plan: &VerifiedGenericPlan,
        source: &CudaSource,
        inputs: &[&Tensor],
    ) -> Result<Tensor, RuntimeError> {
        self.run_as(plan, source, inputs, None)
    }

    /// [`run`](Self::run), with the 64-bit (`Some(true)`) or the 32-bit kernel where the source
    /// has it, instead of the one the call's numbers choose.
    pub fn run_as(
        &self,
        plan: &VerifiedGenericPlan,
        source: &CudaSource,
        inputs: &[&Tensor],
        wide: Option<bool>,
    ) -> Result<Tensor, RuntimeError> {
        self.run_placed(plan, source, inputs, wide, false)
    }

    /// [`run_as`](Self::run_as); `misaligned`: every input and the output start one element's
    /// natural alignment (its width, at most 8 bytes) past a 16-byte boundary, as a caller's
    /// device pointers may, instead of where their allocations put them.
    pub fn run_placed(
        &self,
        plan: &VerifiedGenericPlan,
        source: &CudaSource,
        inputs: &[&Tensor],
        wide: Option<bool>,
        misaligned: bool,
    ) -> Result<Tensor, RuntimeError> {
        let mut bound = launch::bind(plan, &source.layout, inputs)?;
        match wide {
            Some(true) if source.layout.wide => bound.wide = true,
            Some(false) if source.layout.narrow => bound.wide = false,
            _ => {}
        }
        let mut out = Tensor::zeros(plan.dtype, &bound.shape)?;
        let mut err = vec![NO_ERROR; bound.err_words];
        let mut words = bound.words.clone();
        let shift = |t: &Tensor| if misaligned { t.dtype().width().min(8) } else { 0 };
        let mut placed: Vec<Placed> = inputs.iter().map(|t| Placed::new(t.bytes(), shift(t))).collect();
        for (i, p) in placed.iter_mut().enumerate() {
            words[i] = (p.start() as u64).wrapping_add(bound.input_offsets[i] as u64);
        }
        // A store's output starts as its target's copy (the device-to-device copy on a GPU).
        if let Some(target) = launch::store_target(plan) {
            out.bytes_mut().copy_from_slice(inputs[target].bytes());
        }
        let mut out_placed = Placed::new(out.bytes(), shift(&out));
        let mut owner = vec![0u64; launch::owner_bytes(&source.layout, &bound).div_ceil(8)];
        words[source.layout.out_word()] = out_placed.start() as u64;
        words[source.layout.err_word()] = err.as_mut_ptr() as u64;
        let mut tell = vec![0u32; 1];
        words[source.layout.tell_word()] = tell.as_mut_ptr() as u64;
        if source.layout.store.as_ref().is_some_and(|s| s.array()) {
            words[source.layout.owner_word()] = owner.as_mut_ptr() as u64;
        }
        let failed = |e: CudaError| RuntimeError::Jit(crate::backend::jit::JitError::Codegen(e.to_string()));
        for (entry, steps) in launch::kernels(source, &bound) {
            // SAFETY: the argument block holds the inputs bound and checked against the plan,
            // under which verification proved every address in bounds, an output of the call's
            // bytes, the error words and the owner array; the words outlive the call.
            unsafe { self.call_entry(&entry, &words, steps) }.map_err(failed)?;
        }
        if !out_placed.guarded() {
            return Err(RuntimeError::Jit(crate::backend::jit::JitError::Codegen(
                "the emulated kernel wrote outside its output".into(),
            )));
        }
        // A launch on a GPU trusts the flag to say whether to read the error words back.
        if (tell[0] != 0) != err.iter().any(|&w| w != NO_ERROR) {
            return Err(RuntimeError::Jit(crate::backend::jit::JitError::Codegen(format!(
                "the emulated kernel's failure flag ({}) disagrees with its error words",
                tell[0]
            ))));
        }
        out.bytes_mut().copy_from_slice(out_placed.bytes());
        launch::decode_errors(&bound, &err, inputs)?;
        Ok(out)
    }

    /// Launches `source`'s 64-bit (`wide`) or 32-bit kernel, built into this object, with the
    /// argument block `words` over a grid for `steps` steps, as [`run`](Self::run) does after
    /// binding a call.
    ///
    /// # Safety
    /// `words` must be an argument block of the kernel whose pointers reach every byte it reads
    /// and writes.
    pub unsafe fn call(
        &self,
        source: &CudaSource,
        wide: bool,
        words: &[u64],
        steps: u64,
    ) -> Result<(), CudaError> {
        if words.len() < source.layout.words().max(1) {
            return Err(CudaError::Codegen(format!("too few words for `{}`", source.name)));
        }
        // SAFETY: as the caller promises.
        unsafe { self.call_entry(&source.entry(wide), words, steps) }
    }

    /// Launches the kernel `entry` built into this object (one of [`CudaSource::entries`]) over
    /// a grid for `steps` steps (nothing for none).
    ///
    /// # Safety
    /// As [`call`](Self::call); `words` holds at least the kernel's argument block.
    pub unsafe fn call_entry(&self, entry: &str, words: &[u64], steps: u64) -> Result<(), CudaError> {
        if steps == 0 {
            return Ok(());
        }
        let symbol = format!("{entry}_emulate");
        let f = self.symbol(&symbol);
        if f.is_null() {
            return Err(CudaError::Codegen(format!("no emulated kernel `{symbol}`")));
        }
        // SAFETY: SLC_EMULATE defines the launcher with this signature.
        let f: EmulateFn = unsafe { std::mem::transmute::<*mut c_void, EmulateFn>(f) };
        let grid = steps.div_ceil(BLOCK).clamp(1, MAX_BLOCKS);
        let _serial = self.lock.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the caller's promise; the launcher copies the words it declares.
        unsafe { f(words.as_ptr(), grid as u32, BLOCK as u32) };
        Ok(())
    }
}

/// A copy of a buffer's bytes `shift` bytes past a 16-byte boundary, between guard bytes (at
/// least 16 after it) that a kernel writing out of bounds would change.
struct Placed {
    words: Vec<u128>,
    shift: usize,
    len: usize,
}

const GUARD: u8 = 0xa5;

impl Placed {
    fn new(bytes: &[u8], shift: usize) -> Placed {
        let mut words = vec![u128::from_ne_bytes([GUARD; 16]); (shift + bytes.len() + 16).div_ceil(16)];
        // SAFETY: the words hold at least `shift + bytes.len()` bytes.
        let all =
            unsafe { std::slice::from_raw_parts_mut(words.as_mut_ptr().cast::<u8>(), words.len() * 16) };
        all[shift..shift + bytes.len()].copy_from_slice(bytes);
        Placed { words, shift, len: bytes.len() }
    }

    /// Whether the guard bytes are as `new` left them.
    fn guarded(&self) -> bool {
        // SAFETY: the words' bytes.
        let all =
            unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>(), self.words.len() * 16) };
        all[..self.shift].iter().chain(&all[self.shift + self.len..]).all(|&b| b == GUARD)
    }

    fn start(&mut self) -> *mut u8 {
        // SAFETY: within the words (`shift` < 16 and they hold at least one).
        unsafe { self.words.as_mut_ptr().cast::<u8>().add(self.shift) }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: `new` copied `len` bytes there.
        unsafe { std::slice::from_raw_parts(self.words.as_ptr().cast::<u8>().add(self.shift), self.len) }
    }
}
