//! NumPy `.npy` files, versions 1.0, 2.0 and 3.0, C order, any byte order on reading
//! (little-endian on writing, byte for byte what `np.save` writes). Sizes are checked against
//! the file before anything is allocated, so a header that lies cannot exhaust memory, and
//! writes go to a temporary file that is renamed into place: a failed write leaves nothing.

use crate::atomic::write_atomically;
use crate::{DType, MAX_RANK, Tensor};
use std::fs::File;
use std::io::{Read, Write};
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
    #[error("{} is not a .npy file (bad magic bytes)", show(path))]
    NotNpy { path: Option<PathBuf> },
    #[error("{} has a malformed header: {reason}", show(path))]
    BadHeader { path: Option<PathBuf>, reason: String },
    #[error("{} is Fortran-ordered; slc reads C-ordered arrays (save np.ascontiguousarray(x))", show(path))]
    FortranOrder { path: Option<PathBuf> },
    #[error(
        "{} has dtype '{descr}', which slc does not support (bool, int8..int64, uint8..uint64, float16/32/64)",
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
    #[error("{} has {rank} dimensions; at most {MAX_RANK} are supported", show(path))]
    TooManyDims { path: Option<PathBuf>, rank: usize },
    #[error("{} has a header of {len} bytes; at most {MAX_HEADER_BYTES} are read", show(path))]
    HeaderTooLarge { path: Option<PathBuf>, len: usize },
    #[error("{} holds bool values other than 0 and 1", show(path))]
    InvalidBool { path: Option<PathBuf> },
    #[error(".npy has no bfloat16 type; convert the tensor to f32 before saving it")]
    Bf16,
}

fn show(path: &Option<PathBuf>) -> String {
    match path {
        Some(p) => format!("'{}'", p.display()),
        None => "the data".to_string(),
    }
}

/// A parsed header: dtype, whether to byte-swap, shape, and where the data starts.
struct Header {
    dtype: DType,
    swap: bool,
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
    // A 1-element or empty array has the same layout in both orders; NumPy writes it as C order.
    let elements = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
    if fortran && shape.iter().filter(|&&d| d > 1).count() > 1 {
        return Err(NpyError::FortranOrder { path: path.clone() });
    }
    let too_large = || NpyError::TooLarge { path: path.clone(), shape: shape.clone() };
    let data_bytes = elements.and_then(|n| n.checked_mul(dtype.width() as u64)).ok_or_else(too_large)?;
    let dims =
        shape.iter().map(|&d| usize::try_from(d).map_err(|_| too_large())).collect::<Result<Vec<_>, _>>()?;
    if Tensor::byte_size(dtype, &dims).is_none() {
        return Err(too_large());
    }
    Ok(Ok(Header { dtype, swap, shape: dims, data_offset: end, data_bytes }))
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

/// Byte-swaps to little-endian where needed and validates bools.
fn finish(mut t: Tensor, swap: bool, path: &Option<PathBuf>) -> Result<Tensor, NpyError> {
    let w = t.dtype().width();
    if swap {
        t.bytes_mut().chunks_exact_mut(w).for_each(|c| c.reverse());
    }
    if t.dtype() == DType::Bool && t.bytes().iter().any(|&b| b > 1) {
        return Err(NpyError::InvalidBool { path: path.clone() });
    }
    Ok(t)
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
    finish(t, h.swap, &path)
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

/// Reads a `.npy` file. The data is read straight into the tensor's buffer, once its size has
/// been checked against the file's.
pub fn read_npy(path: &Path) -> Result<Tensor, NpyError> {
    let read_err = |source| NpyError::Read { path: path.to_path_buf(), source };
    let some_path = Some(path.to_path_buf());
    let mut file = File::open(path).map_err(read_err)?;
    let file_len = file.metadata().map_err(read_err)?.len();
    let mut head = vec![0u8; (file_len.min(4096)) as usize];
    file.read_exact(&mut head).map_err(read_err)?;
    let h = match parse_header(&head, &some_path)? {
        Ok(h) => h,
        Err(end) => {
            if end as u64 > file_len {
                return Err(NpyError::BadHeader {
                    path: some_path,
                    reason: "the file ends inside the header".into(),
                });
            }
            let mut rest = vec![0u8; end - head.len()];
            file.read_exact(&mut rest).map_err(read_err)?;
            head.extend(rest);
            parse_header(&head, &some_path)?.map_err(|_| NpyError::BadHeader {
                path: some_path.clone(),
                reason: "the header length is inconsistent".into(),
            })?
        }
    };
    check_length(h.data_bytes, file_len - h.data_offset as u64, &some_path)?;
    let mut t = Tensor::for_overwrite(h.dtype, &h.shape).map_err(|_| NpyError::TooLarge {
        path: some_path.clone(),
        shape: h.shape.iter().map(|&d| d as u64).collect(),
    })?;
    let already = head.len().saturating_sub(h.data_offset).min(t.nbytes());
    t.bytes_mut()[..already].copy_from_slice(&head[h.data_offset..h.data_offset + already]);
    file.read_exact(&mut t.bytes_mut()[already..]).map_err(read_err)?;
    finish(t, h.swap, &some_path)
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

/// Writes `t` to `path` atomically ([`write_atomically`]): on any failure `path` is untouched
/// and no temporary file remains. The data is written from the tensor itself, not copied.
pub fn write_npy(path: &Path, t: &Tensor) -> Result<(), NpyError> {
    let header = header(t)?;
    write_atomically(path, |f| {
        f.write_all(&header)?;
        f.write_all(t.bytes())
    })
    .map_err(|source| NpyError::Write { path: path.to_path_buf(), source })
}
