//! Scratch directories for tests: unique, and removed when the test is done, so that test runs
//! do not fill the disk (a CI machine once ran out of it on left-over directories). A failing
//! test keeps its directory and names it, for a look at what it wrote.

#![allow(dead_code)] // each test file uses some of these

use std::path::{Path, PathBuf};

/// A fresh, empty directory, removed on drop unless the test is panicking.
pub struct Scratch(Option<tempfile::TempDir>);

/// A fresh directory for test `name` of the test file `suite`, named `slc-{suite}-{name}-…` (unique
/// per call, in the system's temp directory).
pub fn scratch(suite: &str, name: &str) -> Scratch {
    let prefix = format!("slc-{suite}-{name}-");
    let dir = tempfile::Builder::new().prefix(&prefix).tempdir().expect("a scratch directory");
    Scratch(Some(dir))
}

impl Scratch {
    pub fn path(&self) -> &Path {
        self.0.as_ref().expect("held until drop").path()
    }

    pub fn to_path_buf(&self) -> PathBuf {
        self.path().to_path_buf()
    }
}

impl std::ops::Deref for Scratch {
    type Target = Path;
    fn deref(&self) -> &Path {
        self.path()
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        self.path()
    }
}

impl AsRef<std::ffi::OsStr> for Scratch {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.path().as_os_str()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let dir = self.0.take().expect("dropped once");
        if std::thread::panicking() {
            eprintln!("kept the failing test's scratch directory {}", dir.keep().display());
        }
    }
}
