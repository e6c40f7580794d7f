//! Where an output file goes, NumPy's and coreutils' way: a symbolic link is followed and its
//! target replaced (the link stays a link); a path that is not a regular file — a FIFO, a
//! character device, `/dev/stdout` — is written directly, in one stream, never replaced; a
//! regular file (or a new one) is replaced atomically ([`write_atomically`]) in the directory
//! of the file itself, keeping the permissions of the file it replaces.

use crate::atomic::write_atomically;
use std::fs::{File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

/// How a path is written.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Destination {
    /// A regular file, existing or not: written under a temporary name beside it, then renamed.
    Replace(PathBuf),
    /// Anything else that can be opened for writing: written in place.
    Stream(PathBuf),
}

/// Symbolic links followed before giving up, as the kernel's `MAXSYMLINKS`.
const MAX_LINKS: usize = 40;

/// Resolves `path` to where its bytes will go, and checks that they can go there: the
/// directory exists and is writable, the path is not a directory. Cheap (no data is written),
/// so callers can refuse an output before computing it.
pub fn destination(path: &Path) -> io::Result<Destination> {
    let mut target = path.to_path_buf();
    for _ in 0..MAX_LINKS {
        let meta = match std::fs::symlink_metadata(&target) {
            Ok(m) => m,
            // A new file (or a dangling link's target): created in its directory.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                writable_dir(&target)?;
                return Ok(Destination::Replace(target));
            }
            Err(e) => return Err(e),
        };
        let kind = meta.file_type();
        if kind.is_symlink() {
            let link = std::fs::read_link(&target)?;
            // /proc/self/fd/N (what /dev/stdout points to) names an open file, not a path to
            // replace: write through it as a stream, as the shell's redirection intends.
            if link.starts_with("/proc/") || link.starts_with("/dev/fd/") {
                return writable_stream(path);
            }
            target = match target.parent() {
                Some(dir) if link.is_relative() => dir.join(link),
                _ => link,
            };
            continue;
        }
        if kind.is_dir() {
            return Err(io::Error::new(io::ErrorKind::IsADirectory, "it is a directory"));
        }
        if !kind.is_file() {
            return writable_stream(&target);
        }
        // Like `np.save`, which opens the file for writing: a read-only file is not replaced.
        if meta.permissions().readonly() {
            return Err(io::Error::new(io::ErrorKind::PermissionDenied, "the file is read-only"));
        }
        writable_dir(&target)?;
        return Ok(Destination::Replace(target));
    }
    Err(io::Error::other(format!("more than {MAX_LINKS} symbolic links")))
}

fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    }
}

/// The directory a file is created in must exist and let this process create files.
fn writable_dir(file: &Path) -> io::Result<()> {
    let dir = parent_dir(file);
    match std::fs::metadata(dir) {
        Ok(m) if m.is_dir() => access_writable(dir),
        Ok(_) => Err(io::Error::new(
            io::ErrorKind::NotADirectory,
            format!("'{}' is not a directory", dir.display()),
        )),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Err(io::Error::new(
            io::ErrorKind::NotFound,
            format!("the directory '{}' does not exist", dir.display()),
        )),
        Err(e) => Err(e),
    }
}

fn writable_stream(path: &Path) -> io::Result<Destination> {
    access_writable(path)?;
    Ok(Destination::Stream(path.to_path_buf()))
}

#[cfg(unix)]
fn access_writable(path: &Path) -> io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).map_err(io::Error::other)?;
    // SAFETY: a NUL-terminated path that outlives the call.
    if unsafe { libc::access(c.as_ptr(), libc::W_OK) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(not(unix))]
fn access_writable(_path: &Path) -> io::Result<()> {
    Ok(())
}

/// Writes the output at `path` through `write` ([`destination`] says how). A replaced file is
/// changed only when `write` succeeds; a stream receives what `write` writes.
pub fn write_output(path: &Path, write: impl FnOnce(&mut dyn io::Write) -> io::Result<()>) -> io::Result<()> {
    match destination(path)? {
        Destination::Replace(target) => {
            let permissions = std::fs::metadata(&target).ok().map(|m| m.permissions());
            write_atomically(&target, |file: &mut File| {
                if let Some(p) = permissions {
                    file.set_permissions(p)?;
                }
                write(file)
            })
        }
        Destination::Stream(target) => {
            let mut file = OpenOptions::new().write(true).truncate(true).open(&target)?;
            write(&mut file)?;
            io::Write::flush(&mut file)
        }
    }
}
