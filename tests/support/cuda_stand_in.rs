//! The stand-in CUDA driver and NVRTC (`cuda_stand_in.c`), built with the system C compiler and
//! put where slc's CUDA runtime finds them: loaded into this process under the driver's name
//! (`libcuda.so`, which the loader then answers by its soname), named by `SLC_NVRTC`, with the
//! kernel cache in a directory of its own. Child processes get the same through
//! [`environment`] (`LD_PRELOAD`).

#![allow(dead_code)]

use std::ffi::CString;
use std::path::PathBuf;
use std::sync::OnceLock;

const SOURCE: &str = include_str!("cuda_stand_in.c");
const HEADER: &str = include_str!("../../src/backend/cuda/host_emulation.h");

struct StandIn {
    library: PathBuf,
    cache: PathBuf,
}

fn fnv(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ b as u64).wrapping_mul(0x100_0000_01b3))
}

fn build() -> Result<StandIn, String> {
    let key = fnv(format!("{SOURCE}\0{HEADER}").as_bytes());
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    let library = dir.join(format!("libcuda-stand-in-{key:016x}.so"));
    if !library.exists() {
        // Built under names of this process's own, then renamed: test binaries build it at once.
        let own = |what: &str| dir.join(format!("cuda-stand-in-{key:016x}.{}.{what}", std::process::id()));
        let (source, partial) = (own("c"), own("so"));
        // Every compile of a kernel includes the header: it stays, renamed into place whole.
        let header = dir.join(format!("cuda-stand-in-{key:016x}.h"));
        std::fs::write(own("h"), HEADER).map_err(|e| e.to_string())?;
        std::fs::rename(own("h"), &header).map_err(|e| e.to_string())?;
        std::fs::write(&source, SOURCE).map_err(|e| e.to_string())?;
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".into());
        let out = std::process::Command::new(&cc)
            .args(["-std=c11", "-O1", "-Wall", "-Werror", "-shared", "-fPIC", "-Wl,-soname,libcuda.so"])
            .arg(format!("-DSLC_EMULATION_HEADER=\"{}\"", header.display()))
            .arg("-o")
            .arg(&partial)
            .arg(&source)
            .args(["-ldl", "-lpthread"])
            .output()
            .map_err(|e| format!("cannot run `{cc}`: {e}"))?;
        let _ = std::fs::remove_file(&source);
        if !out.status.success() {
            return Err(format!("the stand-in does not build:\n{}", String::from_utf8_lossy(&out.stderr)));
        }
        std::fs::rename(&partial, &library).map_err(|e| e.to_string())?;
    }
    let cache = dir.join(format!("cuda-stand-in-cache-{key:016x}"));
    Ok(StandIn { library, cache })
}

/// Builds the stand-in and installs it in this process, once; before any CUDA call of slc.
/// `Err`: no C compiler, or the library does not load.
pub fn install() -> Result<(), String> {
    static INSTALLED: OnceLock<Result<(), String>> = OnceLock::new();
    INSTALLED
        .get_or_init(|| {
            let s = build()?;
            let path = CString::new(s.library.to_string_lossy().as_bytes()).map_err(|e| e.to_string())?;
            // SAFETY: loading the library just built; it has no initializers.
            let handle = unsafe { libc::dlopen(path.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
            if handle.is_null() {
                return Err(format!("{} does not load", s.library.display()));
            }
            // SAFETY: every test of a binary using the stand-in installs it first, under this
            // lock, so no thread of this process reads the environment meanwhile.
            unsafe {
                std::env::set_var("SLC_NVRTC", &s.library);
                std::env::set_var("XDG_CACHE_HOME", &s.cache);
            }
            Ok(())
        })
        .clone()
}

/// slc's device on the stand-in, installed first; `None`, saying why, where it cannot be.
pub fn device() -> Option<&'static slc::backend::cuda::device::Device> {
    if let Err(e) = install() {
        eprintln!("skipped: the stand-in CUDA driver is not available ({e})");
        return None;
    }
    Some(slc::backend::cuda::device::device().expect("the stand-in driver opens"))
}

/// Whether the stand-in builds here (for tests that only start child processes on it).
pub fn available() -> Result<(), String> {
    build().map(drop)
}

/// The environment a child process (`slc`, Python) needs to run on the stand-in.
pub fn environment() -> Vec<(String, String)> {
    let s = build().expect("the stand-in builds");
    let library = s.library.to_string_lossy().into_owned();
    vec![
        ("LD_PRELOAD".into(), library.clone()),
        ("SLC_NVRTC".into(), library),
        ("XDG_CACHE_HOME".into(), s.cache.to_string_lossy().into_owned()),
    ]
}
