//! NumPy `.npy` files, versions 1.0, 2.0 and 3.0, C or Fortran order and any byte order on
//! reading (into C order, little-endian), C order and little-endian on writing (byte for byte what
//! `np.save` writes). Sizes are checked against
//! the file before anything is allocated, so a header that lies cannot exhaust memory, and
//! writes go to a temporary file that is renamed into place: a failed write leaves nothing.
//!
//! A file (or a `.npz` member stored uncompressed) whose data is already a tensor's bytes —
//! little-endian, C order, not bool (whose bytes are checked), at an offset that is a multiple
//! of the element width — is mapped read-only rather than read: a kernel then reads only the
//! pages it touches, and an input may be larger than memory. docs/inputs.md says when, and what
//! happens if the file changes while mapped.

mod header;
mod read;
mod write;

pub(crate) use read::open_body;
pub use read::{PendingNpy, open_npy, open_npy_stream, parse_npy, read_npy};
pub use write::{encode_npy, write_npy, write_npy_to};

pub use crate::npz::open_npz;
use crate::{DType, MAX_RANK};
use std::path::{Path, PathBuf};

const MAGIC: &[u8; 6] = b"\x93NUMPY";

/// The longest header read (NumPy's own reader stops at 10 000 bytes unless told otherwise):
/// a header's length field cannot make the reader allocate more.
pub const MAX_HEADER_BYTES: usize = 1 << 20;

#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    #[error("cannot read '{}': {source}", path.display())]
    Read { path: PathBuf, source: std::io::Error },
    #[error("cannot write '{}': {source}", path.display())]
    Write { path: PathBuf, source: std::io::Error },
    #[error("cannot write the .npy stream: {0}")]
    Stream(#[from] std::io::Error),
    #[error("{} is not a .npy file (bad magic bytes)", show(path))]
    NotNpy { path: Option<PathBuf> },
    #[error("'{}' is not a readable .npz archive: {reason}", path.display())]
    BadArchive { path: PathBuf, reason: String },
    #[error("{}", npz_key_message(path, key, keys))]
    NpzKey { path: PathBuf, key: Option<String>, keys: Vec<String> },
    #[error("{} has a malformed header: {reason}", show(path))]
    BadHeader { path: Option<PathBuf>, reason: String },
    #[error(
        "{} has dtype '{descr}', which slc does not support (bool, int8..int64, uint8..uint64, float16/32/64, complex64/128)",
        show(path)
    )]
    UnsupportedDtype { path: Option<PathBuf>, descr: String },
    #[error(
        "{} is truncated: its header promises {expected} bytes of data, the file has {actual}",
        show(path)
    )]
    Truncated { path: Option<PathBuf>, expected: u64, actual: u64 },
    #[error("{} has {extra} bytes after the data its header describes", show(path))]
    TrailingData { path: Option<PathBuf>, extra: u64 },
    #[error("{} declares shape {shape:?}, too large to address", show(path))]
    TooLarge { path: Option<PathBuf>, shape: Vec<u64> },
    #[error(
        "{} needs {bytes} bytes of memory to be read ({why}), more than this machine has available",
        show(path)
    )]
    OutOfMemory { path: Option<PathBuf>, bytes: u64, why: &'static str },
    #[error("{} has {rank} dimensions; at most {MAX_RANK} are supported", show(path))]
    TooManyDims { path: Option<PathBuf>, rank: usize },
    #[error("{} has a header of {len} bytes; at most {MAX_HEADER_BYTES} are read", show(path))]
    HeaderTooLarge { path: Option<PathBuf>, len: usize },
    #[error("{} holds bool values other than 0 and 1", show(path))]
    InvalidBool { path: Option<PathBuf> },
    #[error(".npy has no bfloat16 type; convert the tensor to f32 before saving it")]
    Bf16,
}

fn npz_key_message(path: &Path, key: &Option<String>, keys: &[String]) -> String {
    let listed = if keys.is_empty() { "none".to_string() } else { keys.join(", ") };
    match key {
        Some(k) => format!("'{}' has no array '{k}' (its arrays: {listed})", path.display()),
        None => format!(
            "'{}' holds {} arrays ({listed}); name one: NAME={}:KEY",
            path.display(),
            keys.len(),
            path.display()
        ),
    }
}

/// The source's name, unquoted.
fn show_name(path: &Option<PathBuf>) -> String {
    path.as_ref().map_or_else(|| "the data".to_string(), |p| p.display().to_string())
}

fn show(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => format!("'{}'", p.display()),
        None => "the data".to_string(),
    }
}

/// How a file's elements differ from a tensor's (C order, little-endian).
#[derive(Debug, Clone, Copy)]
struct Encoding {
    /// Big-endian elements.
    swap: bool,
    /// Fortran order (`np.save` of a transposed array) with more than one axis longer than 1.
    fortran: bool,
}

/// A parsed header: dtype, encoding, shape, and where the data starts.
struct Header {
    dtype: DType,
    encoding: Encoding,
    shape: Vec<usize>,
    data_offset: usize,
    data_bytes: u64,
}
