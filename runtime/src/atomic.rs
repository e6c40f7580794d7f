//! Atomic file replacement: a file is written whole under a temporary name in its own directory
//! and renamed over its path, so that a reader sees the old file or the new one, never a part.
//!
//! On Linux the file starts unnamed (`O_TMPFILE`): a process killed while writing it leaves
//! nothing behind, not even a temporary file; it gets a name only once written and synced, for
//! the instant before the rename. Elsewhere (or where the file system has no `O_TMPFILE`) it is
//! written under a hidden temporary name, removed on any failure.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Writes the file at `path` through `write`, atomically: on any error (from `write` or the
/// file system) `path` is left as it was and no temporary file remains.
pub fn write_atomically(path: &Path, write: impl FnOnce(&mut File) -> io::Result<()>) -> io::Result<()> {
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let name = path.file_name().ok_or_else(|| io::Error::other("the path names no file"))?;
    // Unique to the call: threads of one process may write the same path at once.
    static CALLS: AtomicU64 = AtomicU64::new(0);
    let call = CALLS.fetch_add(1, Ordering::Relaxed);
    let tmp = dir.join(format!(".{}.{}.{call}.tmp", name.to_string_lossy(), std::process::id()));
    let (mut file, named) = match unnamed(&dir) {
        Some(file) => (file, false),
        None => (File::create_new(&tmp)?, true),
    };
    let mut linked = named;
    let result = (|| {
        write(&mut file)?;
        file.flush()?;
        file.sync_all()?;
        if !named {
            link(&file, &tmp)?;
            linked = true;
        }
        std::fs::rename(&tmp, path)
    })();
    if result.is_err() && linked {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// An unnamed file in `dir`, where the system offers them.
#[cfg(target_os = "linux")]
fn unnamed(dir: &Path) -> Option<File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new().write(true).mode(0o666).custom_flags(libc::O_TMPFILE).open(dir).ok()
}

#[cfg(not(target_os = "linux"))]
fn unnamed(_dir: &Path) -> Option<File> {
    None
}

/// Gives an unnamed file the name `to`: a link to its /proc entry, followed (which, unlike
/// `AT_EMPTY_PATH`, needs no privilege).
#[cfg(target_os = "linux")]
fn link(file: &File, to: &Path) -> io::Result<()> {
    use std::ffi::CString;
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::io::AsRawFd;
    let from = CString::new(format!("/proc/self/fd/{}", file.as_raw_fd())).map_err(io::Error::other)?;
    let to = CString::new(to.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: both are NUL-terminated paths that outlive the call.
    let done = unsafe {
        libc::linkat(libc::AT_FDCWD, from.as_ptr(), libc::AT_FDCWD, to.as_ptr(), libc::AT_SYMLINK_FOLLOW)
    };
    if done == 0 { Ok(()) } else { Err(io::Error::last_os_error()) }
}

#[cfg(not(target_os = "linux"))]
fn link(_file: &File, _to: &Path) -> io::Result<()> {
    unreachable!("files are unnamed only on Linux")
}
