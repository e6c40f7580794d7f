//! Zarr arrays (v2 and v3, local directory stores) as inputs and outputs (docs/zarr.md):
//! metadata first, then only the chunks holding what a plan reads ([`touched()`]), decoded in
//! parallel; results written as v3 arrays. Reading and writing stores takes the `zarr` cargo
//! feature (the zarrs crate and its codecs' C sources); reading stores at `http(s)://` URLs, the
//! `zarr-http` feature. Without them a store is recognized and refused with a message saying so.

mod path;
mod region;
pub mod touched;
mod url;
mod window;

#[cfg(not(feature = "zarr"))]
mod absent;
#[cfg(feature = "zarr")]
mod chunk;
#[cfg(feature = "zarr-http")]
mod http;
#[cfg(feature = "zarr")]
mod read;
#[cfg(feature = "zarr")]
mod write;

#[cfg(not(feature = "zarr"))]
pub use absent::{PendingZarr, check_destination, open_zarr, write_zarr};
pub use path::{holds_zarr, is_zarr, split_store_path};
#[cfg(feature = "zarr")]
pub use read::{PendingZarr, data_type_of, open_zarr};
pub use touched::{Known, Touched, touched};
pub use url::{is_url, open_zarr_url, split_store_url};
pub use window::{ChunkCount, ReadZarrs, read_zarrs};
pub use window::{Window, WindowedInput, Windows, rebase, run_windowed, windows};
#[cfg(feature = "zarr")]
pub use write::{CHUNK_BYTES, check_destination, chunk_shape, write_zarr};
