//! NVRTC, loaded at run time (dlopen; never linked, so slc builds and runs without CUDA):
//! generated source compiled to a CUBIN for one architecture (`sm_XY`). A CUBIN, not PTX: a PTX
//! from an NVRTC newer than the driver does not load, a CUBIN of the same major version does.
//! The library is `$SLC_NVRTC` when set (CI installs NVIDIA's wheel and names its library so),
//! else the first of the usual names the loader finds.

use super::CudaError;
use std::ffi::{CStr, CString, c_char, c_int, c_void};
use std::sync::OnceLock;

/// The environment variable naming the NVRTC library to load.
pub const ENV: &str = "SLC_NVRTC";

const NAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

type Program = *mut c_void;
type VersionFn = unsafe extern "C" fn(*mut c_int, *mut c_int) -> c_int;
type CreateFn = unsafe extern "C" fn(
    *mut Program,
    *const c_char,
    *const c_char,
    c_int,
    *const *const c_char,
    *const *const c_char,
) -> c_int;
type CompileFn = unsafe extern "C" fn(Program, c_int, *const *const c_char) -> c_int;
type SizeFn = unsafe extern "C" fn(Program, *mut usize) -> c_int;
type GetFn = unsafe extern "C" fn(Program, *mut c_char) -> c_int;
type DestroyFn = unsafe extern "C" fn(*mut Program) -> c_int;

/// The entry points slc calls.
pub struct Nvrtc {
    version: (i32, i32),
    create: CreateFn,
    compile: CompileFn,
    log_size: SizeFn,
    log: GetFn,
    cubin_size: SizeFn,
    cubin: GetFn,
    destroy: DestroyFn,
}

/// NVRTC, loaded once per process; the error says what was tried.
pub fn get() -> Result<&'static Nvrtc, CudaError> {
    static NVRTC: OnceLock<Result<Nvrtc, CudaError>> = OnceLock::new();
    NVRTC.get_or_init(load).as_ref().map_err(Clone::clone)
}

fn load() -> Result<Nvrtc, CudaError> {
    let names: Vec<String> = match std::env::var(ENV) {
        Ok(path) if !path.is_empty() => {
            preload_builtins(std::path::Path::new(&path));
            vec![path]
        }
        _ => NAMES.iter().map(|s| s.to_string()).collect(),
    };
    let handle = names.iter().find_map(|n| {
        let c = CString::new(n.as_str()).ok()?;
        // SAFETY: loading a shared library by name; NVRTC's initializers are its own.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
        (!h.is_null()).then_some(h)
    });
    let Some(handle) = handle else {
        return Err(CudaError::NoDriver(format!(
            "NVRTC not found (tried {}; set {ENV} to its path)",
            names.join(", ")
        )));
    };
    let symbol = |name: &str| -> Result<*mut c_void, CudaError> {
        let c = CString::new(name).expect("a symbol name");
        // SAFETY: a lookup in the library just loaded (never closed).
        let f = unsafe { libc::dlsym(handle, c.as_ptr()) };
        if f.is_null() { Err(CudaError::NoDriver(format!("NVRTC lacks {name}"))) } else { Ok(f) }
    };
    // SAFETY: each symbol is NVRTC's function of the documented signature.
    unsafe {
        let version: VersionFn = std::mem::transmute(symbol("nvrtcVersion")?);
        let (mut major, mut minor) = (0, 0);
        version(&mut major, &mut minor);
        Ok(Nvrtc {
            version: (major, minor),
            create: std::mem::transmute::<*mut c_void, CreateFn>(symbol("nvrtcCreateProgram")?),
            compile: std::mem::transmute::<*mut c_void, CompileFn>(symbol("nvrtcCompileProgram")?),
            log_size: std::mem::transmute::<*mut c_void, SizeFn>(symbol("nvrtcGetProgramLogSize")?),
            log: std::mem::transmute::<*mut c_void, GetFn>(symbol("nvrtcGetProgramLog")?),
            cubin_size: std::mem::transmute::<*mut c_void, SizeFn>(symbol("nvrtcGetCUBINSize")?),
            cubin: std::mem::transmute::<*mut c_void, GetFn>(symbol("nvrtcGetCUBIN")?),
            destroy: std::mem::transmute::<*mut c_void, DestroyFn>(symbol("nvrtcDestroyProgram")?),
        })
    }
}

/// NVRTC opens its builtins library by name when it compiles; beside a library named by path
/// (NVIDIA's wheel: no loader looks there, and NVRTC 13.0 has no RPATH), it would not find it.
/// Loaded first, globally, it is found by its soname.
fn preload_builtins(nvrtc: &std::path::Path) {
    let Some(Ok(entries)) = nvrtc.parent().map(std::fs::read_dir) else { return };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        let path = CString::new(entry.path().to_string_lossy().as_bytes());
        if let (true, Ok(path)) = (name.starts_with("libnvrtc-builtins.so"), path) {
            // SAFETY: loading NVRTC's own builtins library, which has no initializers of note.
            unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        }
    }
}

impl Nvrtc {
    /// NVRTC's (major, minor) version.
    pub fn version(&self) -> (i32, i32) {
        self.version
    }

    /// `source` compiled to a CUBIN for `sm_{arch}` (e.g. 90); the log on failure.
    pub fn cubin(&self, source: &str, arch: u32) -> Result<Vec<u8>, CudaError> {
        let src = CString::new(source).map_err(|e| CudaError::Compile(e.to_string()))?;
        let name = CString::new("slc.cu").expect("no NUL");
        let options = [format!("--gpu-architecture=sm_{arch}"), "--std=c++17".to_string(), "-w".to_string()];
        let options: Vec<CString> =
            options.iter().map(|o| CString::new(o.as_str()).expect("no NUL")).collect();
        let pointers: Vec<*const c_char> = options.iter().map(|o| o.as_ptr()).collect();
        let mut program: Program = std::ptr::null_mut();
        let fail =
            |what: &str, code: c_int| CudaError::Compile(format!("{what} failed (NVRTC error {code})"));
        // SAFETY: NVRTC's API as documented; every pointer outlives the calls that take it, and
        // the program is destroyed on every path once created.
        unsafe {
            let code = (self.create)(
                &mut program,
                src.as_ptr(),
                name.as_ptr(),
                0,
                std::ptr::null(),
                std::ptr::null(),
            );
            if code != 0 {
                return Err(fail("nvrtcCreateProgram", code));
            }
            let compiled = (self.compile)(program, pointers.len() as c_int, pointers.as_ptr());
            let result = if compiled != 0 {
                let mut size = 0usize;
                (self.log_size)(program, &mut size);
                let mut log = vec![0u8; size.max(1)];
                (self.log)(program, log.as_mut_ptr().cast());
                let log = CStr::from_bytes_until_nul(&log)
                    .map(|c| c.to_string_lossy().into_owned())
                    .unwrap_or_default();
                Err(CudaError::Compile(log))
            } else {
                let mut size = 0usize;
                let code = (self.cubin_size)(program, &mut size);
                let mut cubin = vec![0u8; size];
                if code != 0 {
                    Err(fail("nvrtcGetCUBINSize", code))
                } else {
                    match (self.cubin)(program, cubin.as_mut_ptr().cast()) {
                        0 => Ok(cubin),
                        code => Err(fail("nvrtcGetCUBIN", code)),
                    }
                }
            };
            (self.destroy)(&mut program);
            result
        }
    }
}
