//! slc built without the `zarr` feature: stores are recognized (`-i data.zarr`), and opening or
//! writing one is an error that says how to build slc with them (docs/zarr.md).

use super::region::Window;
use slc_runtime::{DType, Tensor};
use std::ops::Range;
use std::path::Path;

const WITHOUT: &str =
    "this slc was built without Zarr support; build it with `--features zarr` (docs/zarr.md)";

/// No array is ever opened: the type has no values.
pub enum PendingZarr {}

pub fn open_zarr(path: &Path) -> Result<PendingZarr, String> {
    Err(format!("'{}' is a Zarr store, and {WITHOUT}", path.display()))
}

pub fn check_destination(_: &Path) -> Result<(), String> {
    Err(WITHOUT.to_string())
}

pub fn write_zarr(path: &Path, _: &Tensor) -> Result<(), String> {
    check_destination(path)
}

impl PendingZarr {
    pub fn dtype(&self) -> DType {
        match *self {}
    }

    pub fn shape(&self) -> &[usize] {
        match *self {}
    }

    pub fn data_bytes(&self) -> u64 {
        match *self {}
    }

    pub fn chunk_bytes(&self) -> Option<u64> {
        match *self {}
    }

    pub fn chunk_counts(&self, _: Option<&[Vec<Range<u64>>]>) -> Result<(u64, u64), String> {
        match *self {}
    }

    pub fn window(&self, _: Option<&[Vec<Range<u64>>]>) -> Result<Window, String> {
        match *self {}
    }

    pub fn read_all(&self) -> Result<Tensor, String> {
        match *self {}
    }

    pub fn read(&self, _: Option<&[Vec<Range<u64>>]>, _: &Window) -> Result<Tensor, String> {
        match *self {}
    }
}
