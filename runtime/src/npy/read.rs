//! Reading `.npy` data: from bytes, a file or a stream, through a [`PendingNpy`] whose header
//! is read first, into a C-order, little-endian tensor.

use super::header::parse_header;
use super::{Encoding, NpyError, show, show_name};
use crate::{DType, Tensor};
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

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

    /// The bytes [`read_parts`](Self::read_parts) reads for `parts`: theirs within the data,
    /// or the whole data where it is read whole.
    pub fn parts_bytes(&self, parts: &[std::ops::Range<u64>]) -> u64 {
        match self.maps() {
            true => parts.iter().map(|p| self.within_data(p)).map(|p| p.end - p.start).sum(),
            false => self.data_bytes,
        }
    }

    /// `part` clipped to the data (empty where it starts past the end).
    fn within_data(&self, part: &std::ops::Range<u64>) -> std::ops::Range<u64> {
        let start = part.start.min(self.data_bytes);
        start..part.end.clamp(start, self.data_bytes)
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
            let part = self.within_data(part);
            if !part.is_empty() {
                let (start, end) = (part.start as usize, part.end as usize);
                read_at(file, &mut data[start..end], offset + part.start).map_err(read_err)?;
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
