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

pub use crate::npz::open_npz;
use crate::output::write_output;
use crate::{DType, MAX_RANK, Tensor};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
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

/// Parses the preamble and header dict from the first bytes of a file.
/// `Ok(None)` means more bytes are needed (at least the returned header end).
fn parse_header(bytes: &[u8], path: &Option<PathBuf>) -> Result<Result<Header, usize>, NpyError> {
    let bad = |reason: &str| NpyError::BadHeader { path: path.clone(), reason: reason.to_string() };
    if bytes.len() < 10 {
        return if MAGIC.starts_with(&bytes[..bytes.len().min(6)]) {
            Err(bad("the file ends inside the preamble"))
        } else {
            Err(NpyError::NotNpy { path: path.clone() })
        };
    }
    if &bytes[..6] != MAGIC {
        return Err(NpyError::NotNpy { path: path.clone() });
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(bad("the file ends inside the preamble"));
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        v => return Err(bad(&format!("unsupported format version {v}.{}", bytes[7]))),
    };
    if len > MAX_HEADER_BYTES {
        return Err(NpyError::HeaderTooLarge { path: path.clone(), len });
    }
    let end = start + len;
    if bytes.len() < end {
        return Ok(Err(end));
    }
    let text = match bytes[6] {
        3 => std::str::from_utf8(&bytes[start..end]).map_err(|_| bad("the header is not UTF-8"))?.to_string(),
        _ => bytes[start..end].iter().map(|&b| b as char).collect(), // latin-1
    };
    let dict = parse_dict(&text).map_err(|r| bad(&r))?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    for (key, value) in dict {
        match (key.as_str(), value) {
            ("descr", Value::Str(s)) => descr = Some(s),
            ("descr", _) => {
                return Err(NpyError::UnsupportedDtype {
                    path: path.clone(),
                    descr: "a structured dtype".into(),
                });
            }
            ("fortran_order", Value::Bool(b)) => fortran = Some(b),
            ("shape", Value::Tuple(t)) => shape = Some(t),
            (k, _) => return Err(bad(&format!("unexpected key or value for '{k}'"))),
        }
    }
    let (Some(descr), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return Err(bad("it needs the keys 'descr', 'fortran_order' and 'shape'"));
    };
    if shape.len() > MAX_RANK {
        return Err(NpyError::TooManyDims { path: path.clone(), rank: shape.len() });
    }
    let (dtype, swap) = DType::from_npy_descr(&descr)
        .ok_or_else(|| NpyError::UnsupportedDtype { path: path.clone(), descr: descr.clone() })?;
    let elements = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
    // A 1-element, empty or 1-D array has the same layout in both orders.
    let fortran = fortran && shape.iter().filter(|&&d| d > 1).count() > 1;
    let too_large = || NpyError::TooLarge { path: path.clone(), shape: shape.clone() };
    let data_bytes = elements.and_then(|n| n.checked_mul(dtype.width() as u64)).ok_or_else(too_large)?;
    let dims =
        shape.iter().map(|&d| usize::try_from(d).map_err(|_| too_large())).collect::<Result<Vec<_>, _>>()?;
    if Tensor::byte_size(dtype, &dims).is_none() {
        return Err(too_large());
    }
    Ok(Ok(Header { dtype, encoding: Encoding { swap, fortran }, shape: dims, data_offset: end, data_bytes }))
}

enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
    /// A list (a structured dtype's descr); its contents do not matter to slc.
    List,
}

/// The Python literal NumPy writes: `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
fn parse_dict(text: &str) -> Result<Vec<(String, Value)>, String> {
    let mut p = Lit { s: text.trim().as_bytes(), i: 0 };
    p.eat(b'{')?;
    let mut entries = vec![];
    loop {
        p.ws();
        if p.peek() == Some(b'}') {
            p.i += 1;
            break;
        }
        let key = p.string()?;
        p.ws();
        p.eat(b':')?;
        p.ws();
        let value = match p.peek() {
            Some(b'\'' | b'"') => Value::Str(p.string()?),
            Some(b'(') => Value::Tuple(p.tuple()?),
            Some(b'T') => p.word("True").map(|_| Value::Bool(true))?,
            Some(b'F') => p.word("False").map(|_| Value::Bool(false))?,
            Some(b'[') => p.skip_list().map(|_| Value::List)?,
            _ => return Err(format!("cannot read the value of '{key}'")),
        };
        entries.push((key, value));
        p.ws();
        match p.peek() {
            Some(b',') => p.i += 1,
            Some(b'}') => {}
            _ => return Err("expected ',' or '}'".into()),
        }
    }
    p.ws();
    if p.i != p.s.len() {
        return Err("text after the closing '}'".into());
    }
    Ok(entries)
}

struct Lit<'a> {
    s: &'a [u8],
    i: usize,
}

impl Lit<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}'", c as char))
        }
    }

    fn word(&mut self, w: &str) -> Result<(), String> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(())
        } else {
            Err(format!("expected {w}"))
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let quote = self.peek().filter(|&c| c == b'\'' || c == b'"').ok_or("expected a string")?;
        self.i += 1;
        let start = self.i;
        while self.peek().is_some_and(|c| c != quote) {
            self.i += 1;
        }
        let s = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.eat(quote)?;
        Ok(s)
    }

    fn skip_list(&mut self) -> Result<(), String> {
        let mut depth = 0;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'[' | b'(' => depth += 1,
                b']' | b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err("unterminated list".into())
    }

    fn tuple(&mut self) -> Result<Vec<u64>, String> {
        self.eat(b'(')?;
        let mut dims = vec![];
        loop {
            self.ws();
            match self.peek() {
                Some(b')') => {
                    self.i += 1;
                    return Ok(dims);
                }
                Some(c) if c.is_ascii_digit() => {
                    let start = self.i;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                    }
                    // Python ints are unbounded; anything above u64 is too large anyway.
                    let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                    dims.push(digits.parse().unwrap_or(u64::MAX));
                    // 'L' suffixes come from Python 2 writers.
                    if self.peek() == Some(b'L') {
                        self.i += 1;
                    }
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b')') => {}
                        _ => return Err("expected ',' or ')' in the shape".into()),
                    }
                }
                _ => return Err("the shape must be a tuple of non-negative integers".into()),
            }
        }
    }
}

/// Brings the elements read into C order and little-endian where needed, and validates bools.
fn finish(mut t: Tensor, encoding: Encoding, path: &Option<PathBuf>) -> Result<Tensor, NpyError> {
    let w = t.dtype().swap_width();
    if encoding.swap {
        t.bytes_mut().chunks_exact_mut(w).for_each(|c| c.reverse());
    }
    if t.dtype() == DType::Bool && t.bytes().iter().any(|&b| b > 1) {
        return Err(NpyError::InvalidBool { path: path.clone() });
    }
    if encoding.fortran {
        t = c_order(&t).map_err(|_| NpyError::OutOfMemory {
            path: path.clone(),
            bytes: 2 * t.nbytes() as u64,
            why: "Fortran order is converted to C order",
        })?;
    }
    Ok(t)
}

/// The C-order tensor of `t`'s shape whose elements `t` holds in Fortran order (the first axis
/// varying fastest).
fn c_order(t: &Tensor) -> Result<Tensor, crate::TensorError> {
    let (shape, w) = (t.shape(), t.dtype().width());
    let mut out = Tensor::for_overwrite(t.dtype(), shape)?;
    // Fortran strides in bytes; the output is walked in C order, an odometer over `coords`.
    let mut strides = vec![0usize; shape.len()];
    let mut acc = w;
    for (s, &d) in strides.iter_mut().zip(shape) {
        *s = acc;
        acc *= d;
    }
    let mut coords = vec![0usize; shape.len()];
    let mut from = 0usize;
    for chunk in out.bytes_mut().chunks_exact_mut(w) {
        chunk.copy_from_slice(&t.bytes()[from..from + w]);
        for d in (0..shape.len()).rev() {
            coords[d] += 1;
            from += strides[d];
            if coords[d] < shape[d] {
                break;
            }
            from -= strides[d] * shape[d];
            coords[d] = 0;
        }
    }
    Ok(out)
}

/// Reads a tensor from the bytes of a `.npy` file.
pub fn parse_npy(bytes: &[u8]) -> Result<Tensor, NpyError> {
    let path = None;
    let h = match parse_header(bytes, &path)? {
        Ok(h) => h,
        Err(_) => return Err(NpyError::BadHeader { path, reason: "the file ends inside the header".into() }),
    };
    let actual = (bytes.len() - h.data_offset) as u64;
    check_length(h.data_bytes, actual, &path)?;
    let t = Tensor::from_bytes(h.dtype, &h.shape, &bytes[h.data_offset..]).map_err(|_| {
        NpyError::TooLarge { path: path.clone(), shape: h.shape.iter().map(|&d| d as u64).collect() }
    })?;
    finish(t, h.encoding, &path)
}

fn check_length(expected: u64, actual: u64, path: &Option<PathBuf>) -> Result<(), NpyError> {
    if actual < expected {
        return Err(NpyError::Truncated { path: path.clone(), expected, actual });
    }
    if actual > expected {
        return Err(NpyError::TrailingData { path: path.clone(), extra: actual - expected });
    }
    Ok(())
}

/// Reads a `.npy` file, or the one array of a `.npz` archive. The data is read straight into
/// the tensor's buffer, once its size has been checked against the file's.
pub fn read_npy(path: &Path) -> Result<Tensor, NpyError> {
    open_npy(path)?.read()
}

/// A `.npy` array whose header has been read and checked (against the file's length, where
/// it is known), and whose data has not been read yet: a program can be checked against its
/// type before gigabytes are read.
pub struct PendingNpy {
    dtype: DType,
    shape: Vec<usize>,
    encoding: Encoding,
    data_bytes: u64,
    /// Names the source in errors: the file, `FILE.npz:KEY`, or `<stdin>`.
    label: Option<PathBuf>,
    /// Positioned at the first byte of the data.
    body: Box<dyn Read + Send>,
    /// Whether the body's length was checked when the header was read; otherwise it is checked
    /// while reading (a stream).
    length_checked: bool,
    /// The file holding the data as it is, uncompressed, and the data's offset in it: the data
    /// may be mapped instead of read. `None` for streams and compressed `.npz` members.
    pub(crate) mappable: Option<(File, u64)>,
}

impl std::fmt::Debug for PendingNpy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "PendingNpy({}, {:?}, {:?})", show(&self.label), self.dtype, self.shape)
    }
}

impl PendingNpy {
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The bytes of data that [`read`](Self::read) will read.
    pub fn data_bytes(&self) -> u64 {
        self.data_bytes
    }

    /// Whether [`read`](Self::read) maps the data rather than reading it.
    pub fn maps(&self) -> bool {
        self.mappable.as_ref().is_some_and(|(_, offset)| {
            cfg!(unix)
                && self.data_bytes > 0
                && !self.encoding.swap
                && !self.encoding.fortran
                && self.dtype != DType::Bool
                && offset % self.dtype.width() as u64 == 0
        })
    }

    /// The tensor: the file's pages mapped read-only where [`maps`](Self::maps) says so
    /// (nothing is read until a kernel touches it), the data read into memory otherwise.
    pub fn read(self) -> Result<Tensor, NpyError> {
        if self.maps()
            && let Some((file, offset)) = &self.mappable
            && let Ok(t) = Tensor::map_file(self.dtype, &self.shape, file, *offset, &show_name(&self.label))
        {
            return Ok(t);
        }
        self.read_into_memory()
    }

    /// A tensor holding only the bytes of the data in `parts` (byte ranges of the data) and
    /// zeros elsewhere, read with one `pread` each: for a plan that reads a few pages of many,
    /// which then cost only themselves (a mapping would map the page cache's whole large folios
    /// around each). The tensor is right only for a reader that stays within `parts`. Data that
    /// cannot be mapped (it needs converting, or it is a stream) is read whole instead.
    pub fn read_parts(self, parts: &[std::ops::Range<u64>]) -> Result<Tensor, NpyError> {
        let Some((file, offset)) = self.mappable.as_ref().filter(|_| self.maps()) else {
            return self.read();
        };
        let read_err = |source| NpyError::Read { path: self.label.clone().unwrap_or_default(), source };
        let mut t = Tensor::sparse_zeros(self.dtype, &self.shape).map_err(|_| NpyError::OutOfMemory {
            path: self.label.clone(),
            bytes: self.data_bytes,
            why: "its address space could not be reserved",
        })?;
        let data = t.bytes_mut();
        for part in parts {
            let (start, end) = (part.start.min(self.data_bytes), part.end.min(self.data_bytes));
            if start < end {
                read_at(file, &mut data[start as usize..end as usize], offset + start).map_err(read_err)?;
            }
        }
        Ok(t)
    }

    /// Why the data is read into memory rather than mapped, for errors.
    fn why_read(&self) -> &'static str {
        match &self.mappable {
            None => "a stream or a compressed .npz member",
            Some(_) if self.encoding.swap => "big-endian elements are converted",
            Some(_) if self.encoding.fortran => "Fortran order is converted to C order",
            Some(_) if self.dtype == DType::Bool => "bool values are checked",
            Some(_) => "its data is not aligned to its elements, or the system cannot map it",
        }
    }

    /// Reads the data into a new tensor in memory, never mapping it.
    pub fn read_into_memory(mut self) -> Result<Tensor, NpyError> {
        let label = self.label.clone();
        let read_err = |source| NpyError::Read { path: label.clone().unwrap_or_default(), source };
        let why = self.why_read();
        let mut t = Tensor::for_overwrite(self.dtype, &self.shape).map_err(|_| NpyError::OutOfMemory {
            path: label.clone(),
            bytes: self.data_bytes,
            why,
        })?;
        let mut filled = 0;
        let buf = t.bytes_mut();
        while filled < buf.len() {
            match self.body.read(&mut buf[filled..]) {
                Ok(0) => {
                    return Err(NpyError::Truncated {
                        path: label.clone(),
                        expected: self.data_bytes,
                        actual: filled as u64,
                    });
                }
                Ok(n) => filled += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(read_err(e)),
            }
        }
        if !self.length_checked {
            let extra = std::io::copy(&mut self.body, &mut std::io::sink()).map_err(read_err)?;
            check_length(self.data_bytes, self.data_bytes + extra, &label)?;
        }
        finish(t, self.encoding, &label)
    }
}

/// Fills `buf` from `file` at `offset`, leaving the file's position alone.
fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    return std::os::unix::fs::FileExt::read_exact_at(file, buf, offset);
    #[cfg(not(unix))]
    {
        let mut file = file;
        file.seek(SeekFrom::Start(offset))?;
        file.read_exact(buf)
    }
}

/// Opens a `.npy` file and reads its header; a `.npz` archive (recognized by its content, not
/// its name) stands for its only array.
pub fn open_npy(path: &Path) -> Result<PendingNpy, NpyError> {
    let read_err = |source| NpyError::Read { path: path.to_path_buf(), source };
    let mut file = File::open(path).map_err(read_err)?;
    let meta = file.metadata().map_err(read_err)?;
    let file_len = meta.len();
    let mut magic = [0u8; 4];
    if file_len >= 4 {
        file.read_exact(&mut magic).map_err(read_err)?;
        file.seek(SeekFrom::Start(0)).map_err(read_err)?;
    }
    if &magic == crate::npz::ZIP_MAGIC {
        return crate::npz::open_npz(path, None);
    }
    // Only a regular file's pages can be mapped (a FIFO or device is read).
    let mapped = if meta.is_file() { Some(file.try_clone().map_err(read_err)?) } else { None };
    let mut npy = open_body(Box::new(file), Some(path.to_path_buf()), Some(file_len))?;
    // The length check passed: the data is the file's last `data_bytes` bytes.
    npy.mappable = mapped.map(|f| (f, file_len - npy.data_bytes));
    Ok(npy)
}

/// Reads one `.npy` from a stream (standard input): the header now, the data when asked; its
/// length is checked as it is read.
pub fn open_npy_stream(stream: Box<dyn Read + Send>, label: &str) -> Result<PendingNpy, NpyError> {
    open_body(stream, Some(PathBuf::from(label)), None)
}

/// Reads and checks the header at the start of `body`, leaving it at the data. `len`: the
/// body's length, where known.
pub(crate) fn open_body(
    mut body: Box<dyn Read + Send>,
    label: Option<PathBuf>,
    len: Option<u64>,
) -> Result<PendingNpy, NpyError> {
    let read_err = |source| NpyError::Read { path: label.clone().unwrap_or_default(), source };
    let mut head = Vec::with_capacity(128);
    // The preamble (10 bytes, 12 from version 2.0), then the header its length field gives.
    let mut want = 10;
    let h = loop {
        let have = head.len();
        (&mut body).take((want - have) as u64).read_to_end(&mut head).map_err(read_err)?;
        if head.len() < want {
            return Err(match parse_header(&head, &label) {
                Err(e) => e,
                Ok(_) => {
                    NpyError::BadHeader { path: label, reason: "the file ends inside the header".into() }
                }
            });
        }
        match parse_header(&head, &label) {
            Ok(Ok(h)) => break h,
            Ok(Err(end)) if end > want => want = end,
            Ok(Err(_)) => {
                return Err(NpyError::BadHeader {
                    path: label,
                    reason: "the header length is inconsistent".into(),
                });
            }
            Err(NpyError::BadHeader { reason, .. }) if reason.contains("preamble") && want < 12 => want = 12,
            Err(e) => return Err(e),
        }
    };
    if let Some(len) = len {
        check_length(h.data_bytes, len.saturating_sub(h.data_offset as u64), &label)?;
    }
    Ok(PendingNpy {
        dtype: h.dtype,
        shape: h.shape,
        encoding: h.encoding,
        data_bytes: h.data_bytes,
        label,
        body,
        length_checked: len.is_some(),
        mappable: None,
    })
}

/// The bytes of a `.npy` file holding `t`, exactly as `np.save` writes them.
pub fn encode_npy(t: &Tensor) -> Result<Vec<u8>, NpyError> {
    let mut out = header(t)?;
    out.extend_from_slice(t.bytes());
    Ok(out)
}

/// The preamble and header of `t`'s `.npy` file.
fn header(t: &Tensor) -> Result<Vec<u8>, NpyError> {
    let descr = t.dtype().npy_descr().ok_or(NpyError::Bf16)?;
    let shape = match t.shape() {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        dims => format!("({})", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad with spaces and end with '\n' so that the data starts at a multiple of 64.
    let (version, preamble) = if header.len() + 1 + 10 <= 65535 { (1u8, 10) } else { (2u8, 12) };
    let total = (preamble + header.len() + 1).div_ceil(64) * 64;
    header.push_str(&" ".repeat(total - preamble - header.len() - 1));
    header.push('\n');
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    let len = header.len();
    if version == 1 {
        out.extend_from_slice(&(len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(len as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    Ok(out)
}

/// Writes `t` to `path` as [`write_output`] does: a regular file atomically (on any failure it
/// is untouched and no temporary file remains), through symbolic links, and into FIFOs and
/// devices in place. The data is written from the tensor itself, not copied.
pub fn write_npy(path: &Path, t: &Tensor) -> Result<(), NpyError> {
    let header = header(t)?;
    write_output(path, |w| {
        w.write_all(&header)?;
        w.write_all(t.bytes())
    })
    .map_err(|source| NpyError::Write { path: path.to_path_buf(), source })
}

/// Writes `t`'s `.npy` bytes to a stream (standard output).
pub fn write_npy_to(w: &mut dyn Write, t: &Tensor) -> Result<(), NpyError> {
    let header = header(t)?;
    w.write_all(&header)?;
    w.write_all(t.bytes())?;
    w.flush().map_err(NpyError::from)
}
