//! Dense tensors: a dtype, a shape, and a 64-byte-aligned owned buffer in C (row-major) order.
//! Alignment lets kernels use wide vector loads; allocation is fallible, so a shape too large
//! for memory is an error, never an abort.

use crate::DType;
use crate::buffer::AlignedBuf;
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

pub struct Tensor {
    dtype: DType,
    shape: Vec<usize>,
    buf: AlignedBuf,
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
        Ok(Tensor { dtype, shape: shape.to_vec(), buf })
    }

    /// A tensor whose contents are unspecified (zeros or old data, never uninitialized memory):
    /// for outputs a kernel overwrites entirely. Large ones reuse recently dropped buffers.
    pub fn for_overwrite(dtype: DType, shape: &[usize]) -> Result<Tensor, TensorError> {
        let too_large = |bytes| TensorError::TooLarge { shape: shape.to_vec(), dtype, bytes };
        let bytes = Tensor::byte_size(dtype, shape).ok_or(too_large(None))?;
        let buf = AlignedBuf::for_overwrite(bytes).ok_or(too_large(Some(bytes)))?;
        Ok(Tensor { dtype, shape: shape.to_vec(), buf })
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

    pub fn dtype(&self) -> DType {
        self.dtype
    }

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

    pub fn bytes(&self) -> &[u8] {
        self.buf.as_slice()
    }

    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.buf.as_mut_slice()
    }

    pub fn as_ptr(&self) -> *const u8 {
        self.buf.ptr()
    }

    pub fn as_mut_ptr(&mut self) -> *mut u8 {
        self.buf.ptr()
    }

    /// Element `linear` of an integer tensor, exactly; `None` for other dtypes or out of range.
    pub fn int_at(&self, linear: usize) -> Option<i128> {
        let w = self.dtype.width();
        self.dtype.int_from_le(self.bytes().get(linear.checked_mul(w)?..linear.checked_mul(w)? + w)?)
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
