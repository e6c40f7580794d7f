//! Which paths name Zarr stores, and where the store ends in `data.zarr/group/array`: known
//! without reading a store, so that the command line recognizes one in any build.

use std::path::{Path, PathBuf};

/// Splits `data.zarr/group/array` into the store's directory and the array's path inside it:
/// the store is the last component named `*.zarr`, or the whole path when none is.
pub fn split_store_path(path: &Path) -> (PathBuf, String) {
    let parts: Vec<_> = path.components().collect();
    let store_end = parts
        .iter()
        .rposition(|c| c.as_os_str().to_string_lossy().ends_with(".zarr"))
        .map_or(parts.len(), |i| i + 1);
    let store: PathBuf = parts[..store_end].iter().collect();
    let inner: Vec<String> =
        parts[store_end..].iter().map(|c| c.as_os_str().to_string_lossy().into_owned()).collect();
    (store, format!("/{}", inner.join("/")))
}

/// Whether `path` names a Zarr array or group: a `*.zarr` component, or a directory holding
/// Zarr metadata.
pub fn is_zarr(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str().to_string_lossy().ends_with(".zarr"))
        || ["zarr.json", ".zarray"].iter().any(|m| path.join(m).is_file())
}

/// Whether `path` holds Zarr metadata at its top: an array or a group.
pub fn holds_zarr(path: &Path) -> bool {
    ["zarr.json", ".zarray", ".zgroup"].iter().any(|m| path.join(m).is_file())
}
