//! Zarr arrays (v2 and v3, local directory stores) as inputs and outputs (docs/zarr.md):
//! metadata first, then only the chunks holding what a plan reads ([`touched`]), decoded in
//! parallel; results written as v3 arrays.

mod read;
pub mod touched;
mod write;

pub use read::{PendingZarr, data_type_of, is_zarr, open_zarr, split_store_path};
pub use touched::{Known, Touched, touched};
pub use write::{CHUNK_BYTES, check_destination, chunk_shape, write_zarr};
