//! Dense tensors: a dtype, a shape, and their bytes in C (row-major) order — a 64-byte-aligned
//! owned buffer, or a read-only mapping of a file (a `.npy` input, read in place; aligned to its
//! elements, and to 64 bytes where the file's data is, as `np.save` writes it). Allocation is
//! fallible, so a shape too large for memory is an error, never an abort.

use crate::DType;
use crate::buffer::{AlignedBuf, Buffer, FileMap};
use std::fmt;

pub use crate::buffer::ALIGN;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TensorError {
    #[error("a {dtype} tensor of shape {shape:?} needs {} — more than this machine can allocate", bytes.map_or("more bytes than fit in memory".to_string(), |b| format!("{b} bytes")))]
    TooLarge { shape: Vec<usize>, dtype: DType, bytes: Option<usize> },
    #[error("expected {expected} bytes of data, got {actual}")]
    LengthMismatch { expected: usize, actual: usize },
    #[error("value {value} does not fit in {dtype}")]
    ValueOutOfRange { value: i64, dtype: DType },
    #[error("{0} is not an integer dtype")]
    NotAnIntegerType(DType),
}

/// How a kernel will read a mapped tensor: the read-ahead its file's pages get.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// The system's default: pages around each one touched are read too.
    Normal,
    /// A few pages of many (a strided slice, a gather of rows): only the pages touched are
    /// read, one by one.
    Sparse,
    /// Front to back: read far ahead.
    Sequential,
}

/// How many elements of `width` bytes in `bytes` have a nonzero byte: a mask's `True`s.
pub fn count_nonzero(bytes: &[u8], width: usize) -> usize {
    match width {
        // Counted per block in a `u32`, which the compiler vectorizes (a `usize` per byte it
        // does not).
        1 => bytes.chunks(1 << 16).map(|c| c.iter().map(|&b| u32::from(b != 0)).sum::<u32>() as usize).sum(),
        0 => 0,
        _ => bytes.chunks_exact(width).filter(|e| e.iter().any(|&b| b != 0)).count(),
    }
}

pub struct Tensor {
    dtype: DType,
    shape: Vec<usize>,
    buf: Buffer,
}

impl Tensor {
    /// The byte size of a tensor, if it is addressable (fits in isize).
    pub fn byte_size(dtype: DType, shape: &[usize]) -> Option<usize> {
        let n = shape.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
        n.checked_mul(dtype.width()).filter(|&b| b <= isize::MAX as usize)
    }

    /// A zero-filled tensor. Fails (instead of aborting) when the size overflows or the memory
    /// cannot be had.
    pub fn zeros(dtype: DType, shape: &[usize]) -> Result<Tensor, TensorError> {
        let too_large = |bytes| TensorError::TooLarge { shape: shape.to_vec(), dtype, bytes };
        let bytes = Tensor::byte_size(dtype, shape).ok_or(too_large(None))?;
        let buf = AlignedBuf::zeroed(bytes).ok_or(too_large(Some(bytes)))?;
        Ok(Tensor { dtype, shape: shape.to_vec(), buf: Buffer::Owned(buf) })
    }

    /// A tensor whose contents are unspecified (zeros or old data, never uninitialized memory):
    /// for outputs a kernel overwrites entirely. Large ones reuse recently dropped buffers.
    pub fn for_overwrite(dtype: DType, shape: &[usize]) -> Result<Tensor, TensorError> {
        let too_large = |bytes| TensorError::TooLarge { shape: shape.to_vec(), dtype, bytes };
        let bytes = Tensor::byte_size(dtype, shape).ok_or(too_large(None))?;
        let buf = AlignedBuf::for_overwrite(bytes).ok_or(too_large(Some(bytes)))?;
        Ok(Tensor { dtype, shape: shape.to_vec(), buf: Buffer::Owned(buf) })
    }

    /// A zero-filled tensor that costs only the pages later written, however large: for the
    /// parts of an input a plan reads (`PendingNpy::read_parts`, the chunks of a Zarr input). Not
    /// checked against the memory available.
    pub fn sparse_zeros(dtype: DType, shape: &[usize]) -> Result<Tensor, TensorError> {
        let too_large = |bytes| TensorError::TooLarge { shape: shape.to_vec(), dtype, bytes };
        let bytes = Tensor::byte_size(dtype, shape).ok_or(too_large(None))?;
        let buf = AlignedBuf::sparse(bytes).ok_or(too_large(Some(bytes)))?;
        Ok(Tensor { dtype, shape: shape.to_vec(), buf: Buffer::Owned(buf) })
    }

    /// A tensor over the bytes of `file` (called `name` in errors) from byte `offset` (little-endian elements, C order),
    /// mapped read-only: nothing is read until touched, and then only the pages touched. The
    /// caller has checked that the file holds the tensor's bytes and that `offset` is a multiple
    /// of the element width; a shape of no bytes maps nothing. Fails where the system cannot
    /// map the file (then read it).
    pub(crate) fn map_file(
        dtype: DType,
        shape: &[usize],
        file: &std::fs::File,
        offset: u64,
        name: &str,
    ) -> std::io::Result<Tensor> {
        let bytes = Tensor::byte_size(dtype, shape).ok_or(std::io::ErrorKind::InvalidInput)?;
        if bytes == 0 {
            return Tensor::zeros(dtype, shape).map_err(std::io::Error::other);
        }
        let buf = Buffer::Mapped(FileMap::new(file, offset, bytes, name)?);
        Ok(Tensor { dtype, shape: shape.to_vec(), buf })
    }

    /// Whether the tensor's bytes are a file's pages, mapped (see [`crate::open_npy`]).
    pub fn is_mapped(&self) -> bool {
        self.buf.is_mapped()
    }

    /// Tells the system how a mapped tensor's pages will be read (nothing for owned tensors).
    pub fn advise(&self, access: Access) {
        if let Buffer::Mapped(m) = &self.buf {
            m.advise(access);
        }
    }

    /// For a mapped tensor, which of its pages are resident (in the page cache), one flag per
    /// page from the page holding its first byte: what a run has read of the file. `None` for
    /// owned tensors, or where the system cannot tell.
    pub fn resident_pages(&self) -> Option<Vec<bool>> {
        match &self.buf {
            Buffer::Mapped(m) => m.resident_pages(),
            Buffer::Owned(_) => None,
        }
    }

    /// A tensor holding a copy of `bytes` (little-endian elements, C order).
    pub fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<Tensor, TensorError> {
        let mut t = Tensor::for_overwrite(dtype, shape)?;
        if t.nbytes() != bytes.len() {
            return Err(TensorError::LengthMismatch { expected: t.nbytes(), actual: bytes.len() });
        }
        t.bytes_mut().copy_from_slice(bytes);
        Ok(t)
    }

    /// An integer tensor from values, each checked to fit the dtype.
    pub fn from_i64s(dtype: DType, shape: &[usize], values: &[i64]) -> Result<Tensor, TensorError> {
        if !dtype.is_integer() {
            return Err(TensorError::NotAnIntegerType(dtype));
        }
        let mut t = Tensor::zeros(dtype, shape)?;
        if t.numel() != values.len() {
            return Err(TensorError::LengthMismatch {
                expected: t.nbytes(),
                actual: values.len() * dtype.width(),
            });
        }
        let w = dtype.width();
        let bits = 8 * w as u32;
        for (chunk, &v) in t.bytes_mut().chunks_exact_mut(w).zip(values) {
            let fits = match (dtype.is_signed(), bits) {
                (_, 64) if dtype.is_signed() => true,
                (false, 64) => v >= 0,
                (true, b) => v >= -(1i64 << (b - 1)) && v < (1i64 << (b - 1)),
                (false, b) => v >= 0 && v < (1i64 << b),
            };
            if !fits {
                return Err(TensorError::ValueOutOfRange { value: v, dtype });
            }
            chunk.copy_from_slice(&v.to_le_bytes()[..w]);
        }
        Ok(t)
    }

    /// A 0-d i64 tensor.
    pub fn scalar_i64(value: i64) -> Tensor {
        let mut t = Tensor::zeros(DType::I64, &[]).expect("8 bytes");
        t.bytes_mut().copy_from_slice(&value.to_le_bytes());
        t
    }

    /// A 0-d f64 tensor.
    pub fn scalar_f64(value: f64) -> Tensor {
        let mut t = Tensor::zeros(DType::F64, &[]).expect("8 bytes");
        t.bytes_mut().copy_from_slice(&value.to_le_bytes());
        t
    }

    #[inline]
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    #[inline]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn rank(&self) -> usize {
        self.shape.len()
    }

    /// The number of elements (1 for a 0-d tensor).
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn nbytes(&self) -> usize {
        self.buf.len()
    }

    /// C-order element strides.
    pub fn strides(&self) -> Vec<usize> {
        let mut strides = vec![0; self.shape.len()];
        let mut acc = 1;
        for (s, &d) in strides.iter_mut().zip(&self.shape).rev() {
            *s = acc;
            acc *= d;
        }
        strides
    }

    #[inline]
    pub fn bytes(&self) -> &[u8] {
        self.buf.as_slice()
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }

    #[inline]
    pub fn as_ptr(&self) -> *const u8 {
        self.buf.ptr()
    }

    #[inline]
    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buf.mut_ptr()
    }

    /// Element `linear` of an integer tensor, exactly; `None` for other dtypes or out of range.
    pub fn int_at(&self, linear: usize) -> Option<i128> {
        let w = self.dtype.width();
        self.dtype.int_from_le(self.bytes().get(linear.checked_mul(w)?..linear.checked_mul(w)? + w)?)
    }

    /// Element `linear` of a float tensor (f16, bf16, f32, f64), exactly as an f64; `None` for
    /// other dtypes or out of range.
    pub fn float_at(&self, linear: usize) -> Option<f64> {
        let w = self.dtype.width();
        let b = self.bytes().get(linear.checked_mul(w)?..linear.checked_mul(w)? + w)?;
        match self.dtype {
            DType::F16 => Some(half::f16::from_le_bytes([b[0], b[1]]).to_f64()),
            DType::BF16 => Some(half::bf16::from_le_bytes([b[0], b[1]]).to_f64()),
            DType::F32 => Some(f32::from_le_bytes(b.try_into().ok()?) as f64),
            DType::F64 => Some(f64::from_le_bytes(b.try_into().ok()?)),
            _ => None,
        }
    }
}

impl Clone for Tensor {
    fn clone(&self) -> Tensor {
        // Cloning a tensor that exists allocates the same size again; failing here means the
        // machine is out of memory, where Vec::clone would abort too.
        Tensor::from_bytes(self.dtype, &self.shape, self.bytes()).expect("memory for a clone")
    }
}

impl PartialEq for Tensor {
    fn eq(&self, other: &Tensor) -> bool {
        self.dtype == other.dtype && self.shape == other.shape && self.bytes() == other.bytes()
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Tensor({}{:?}, {} bytes)", self.dtype, self.shape, self.nbytes())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_and_zeroed() {
        let t = Tensor::zeros(DType::F32, &[3, 5]).unwrap();
        assert_eq!(t.as_ptr() as usize % ALIGN, 0);
        assert_eq!(t.nbytes(), 60);
        assert!(t.bytes().iter().all(|&b| b == 0));
        assert_eq!(t.strides(), vec![5, 1]);
        let e = Tensor::zeros(DType::F64, &[0, 7]).unwrap();
        assert_eq!((e.numel(), e.nbytes(), e.bytes().len()), (0, 0, 0));
        assert_eq!(Tensor::zeros(DType::I8, &[]).unwrap().numel(), 1);
    }

    #[test]
    fn huge_shapes_are_errors() {
        assert!(matches!(
            Tensor::zeros(DType::F32, &[1 << 40, 1 << 40]),
            Err(TensorError::TooLarge { bytes: None, .. })
        ));
        assert!(matches!(Tensor::zeros(DType::U8, &[1 << 62]), Err(TensorError::TooLarge { .. })));
    }

    #[test]
    fn integers_round_trip() {
        let t = Tensor::from_i64s(DType::I16, &[3], &[-32768, -1, 32767]).unwrap();
        assert_eq!((0..3).map(|i| t.int_at(i).unwrap()).collect::<Vec<_>>(), vec![-32768, -1, 32767]);
        let u = Tensor::from_i64s(DType::U64, &[1], &[i64::MAX]).unwrap();
        assert_eq!(u.int_at(0), Some(i64::MAX as i128));
        let big = Tensor::from_bytes(DType::U64, &[1], &[0xff; 8]).unwrap();
        assert_eq!(big.int_at(0), Some(u64::MAX as i128));
        assert!(Tensor::from_i64s(DType::U8, &[1], &[256]).is_err());
        assert!(Tensor::from_i64s(DType::I8, &[1], &[-129]).is_err());
        assert!(Tensor::from_i64s(DType::F32, &[1], &[0]).is_err());
        assert_eq!(t.int_at(3), None);
        assert_eq!(Tensor::scalar_i64(-5).int_at(0), Some(-5));
    }

    #[test]
    fn equality_is_dtype_shape_and_bytes() {
        let a = Tensor::from_bytes(DType::U8, &[2], &[1, 2]).unwrap();
        assert_eq!(a.clone(), a);
        assert_ne!(Tensor::from_bytes(DType::I8, &[2], &[1, 2]).unwrap(), a);
        assert_ne!(Tensor::from_bytes(DType::U8, &[2, 1], &[1, 2]).unwrap(), a);
        assert!(Tensor::from_bytes(DType::U8, &[3], &[1, 2]).is_err());
    }
}
