//! Borrowed tensors: a dtype, a shape and strides over memory the caller owns.

use crate::diag::{Diagnostic, IntoDiagnostic};
use slc_runtime::{DType, Tensor};
use std::borrow::Cow;
use std::marker::PhantomData;

mod pack;
pub(crate) use pack::elements_distinct;

/// A Rust element type with an slc dtype: `bool`, the fixed-width integers, `f32`, `f64`.
pub trait Element: Copy + Send + Sync + 'static + sealed::Sealed {
    /// The dtype of this element type.
    const DTYPE: DType;
}

mod sealed {
    pub trait Sealed {}
}

macro_rules! elements {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
        }
    )*};
}
elements!(bool => Bool, i8 => I8, i16 => I16, i32 => I32, i64 => I64, u8 => U8, u16 => U16,
    u32 => U32, u64 => U64, f32 => F32, f64 => F64);

/// Why a view cannot be made, or does not fit where it is used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    #[error("a view of rank {rank} needs {rank} strides, {found} were given")]
    StrideCount { rank: usize, found: usize },
    #[error(
        "the byte stride {stride} of axis {axis} is not a multiple of the element size {width} of {dtype}"
    )]
    UnalignedStride { axis: usize, stride: i64, width: usize, dtype: DType },
    #[error("the view reaches bytes {first}..{end}, outside its buffer of {len} bytes")]
    OutOfBounds { first: i128, end: i128, len: usize },
    #[error("a dense {dtype} view of shape {shape:?} needs {expected} bytes, the buffer has {len}")]
    Length { dtype: DType, shape: Vec<usize>, expected: usize, len: usize },
    #[error("a view of shape {0:?} has more bytes than memory can hold")]
    TooLarge(Vec<usize>),
    #[error("the data pointer of a non-empty view is null")]
    Null,
    #[error("input `{0}` is declared twice")]
    DuplicateInput(String),
    #[error("{0}")]
    Signature(String),
    #[error("the output buffer overlaps input `{0}`: a kernel writes its output while it reads")]
    Overlap(String),
    #[error("the output buffer has {len} bytes, the kernel writes {expected}")]
    OutputLength { expected: usize, len: usize },
}

impl IntoDiagnostic for ViewError {
    fn into_diagnostic(self) -> Diagnostic {
        let d = Diagnostic::error("E0206", self.to_string());
        match self {
            ViewError::UnalignedStride { .. } => {
                d.help("slc addresses elements, not bytes: pack the data first (e.g. copy it into a Tensor)")
            }
            _ => d,
        }
    }
}

/// A read-only tensor over borrowed memory: no copy is made when it is created or bound.
///
/// Kernels read views in place: one whose layout is dense and C-ordered (the common case: a
/// `Tensor`, a slice, a standard ndarray) directly, any other layout (transposed, reversed,
/// sliced with a step, broadcast) through a JIT kernel compiled once for its strides
/// ([`Kernel::strided_plans`](super::Kernel::strided_plans)). The interpreter packs such a view
/// into a dense copy first.
///
/// ```
/// use slc::embed::TensorView;
/// let data: Vec<f32> = (0..12).map(|x| x as f32).collect();
/// // Dense: 3 rows of 4.
/// let v = TensorView::from_slice(&[3, 4], &data).unwrap();
/// assert!(v.is_contiguous());
/// // The transpose of the same memory: byte strides, as in NumPy.
/// let bytes: &[u8] = bytemuck_free(&data);
/// let t = TensorView::strided(slc::DType::F32, &[4, 3], &[4, 16], bytes, 0).unwrap();
/// assert!(!t.is_contiguous());
/// assert_eq!(t.to_tensor().unwrap().bytes()[4..8], 4.0f32.to_le_bytes());
/// # fn bytemuck_free(d: &[f32]) -> &[u8] {
/// #     unsafe { std::slice::from_raw_parts(d.as_ptr().cast(), d.len() * 4) }
/// # }
/// ```
#[derive(Clone)]
pub struct TensorView<'a> {
    dtype: DType,
    shape: Cow<'a, [usize]>,
    /// Element strides; `None` for a dense C-ordered view.
    strides: Option<Cow<'a, [isize]>>,
    /// Element `[0, ..., 0]`.
    ptr: *const u8,
    life: PhantomData<&'a [u8]>,
}

// SAFETY: a view is a shared borrow of plain bytes, like `&'a [u8]`.
unsafe impl Send for TensorView<'_> {}
unsafe impl Sync for TensorView<'_> {}

impl std::fmt::Debug for TensorView<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TensorView({}{:?}", self.dtype, self.shape)?;
        match &self.strides {
            Some(s) => write!(f, ", element strides {s:?})"),
            None => write!(f, ", dense)"),
        }
    }
}

/// C-order element strides of `shape`.
fn dense_strides(shape: &[usize]) -> Vec<isize> {
    let mut strides = vec![0; shape.len()];
    let mut acc = 1isize;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.wrapping_mul(d as isize);
    }
    strides
}

/// Is a layout with these element strides dense and C-ordered? Axes of size 1 may have any
/// stride; an empty view is dense.
fn is_dense(shape: &[usize], strides: &[isize]) -> bool {
    if shape.contains(&0) {
        return true;
    }
    let mut expect = 1isize;
    for (&d, &s) in shape.iter().zip(strides).rev() {
        if d != 1 && s != expect {
            return false;
        }
        expect = expect.wrapping_mul(d as isize);
    }
    true
}

fn byte_size(dtype: DType, shape: &[usize]) -> Result<usize, ViewError> {
    Tensor::byte_size(dtype, shape).ok_or_else(|| ViewError::TooLarge(shape.to_vec()))
}

/// Byte range `[first, end)` that a view with these element strides reaches from element 0;
/// `None` when it reaches nothing (no elements).
pub(crate) fn reach(shape: &[usize], strides: &[isize], width: usize) -> Option<(i128, i128)> {
    if shape.contains(&0) {
        return None;
    }
    let (mut lo, mut hi) = (0i128, 0i128);
    for (&d, &s) in shape.iter().zip(strides) {
        let span = (d as i128 - 1) * s as i128;
        if span < 0 { lo += span } else { hi += span }
    }
    Some((lo * width as i128, (hi + 1) * width as i128))
}

impl<'a> TensorView<'a> {
    /// A dense, C-ordered view of `data`, which must hold exactly the view's bytes
    /// (little-endian elements).
    ///
    /// ```
    /// use slc::{DType, embed::TensorView};
    /// let bytes = [0u8; 24];
    /// let v = TensorView::new(DType::I16, &[3, 4], &bytes).unwrap();
    /// assert_eq!((v.numel(), v.nbytes()), (12, 24));
    /// assert!(TensorView::new(DType::I32, &[3, 4], &bytes).is_err());
    /// ```
    pub fn new(dtype: DType, shape: &'a [usize], data: &'a [u8]) -> Result<TensorView<'a>, ViewError> {
        let expected = byte_size(dtype, shape)?;
        if data.len() != expected {
            return Err(ViewError::Length { dtype, shape: shape.to_vec(), expected, len: data.len() });
        }
        Ok(TensorView {
            dtype,
            shape: Cow::Borrowed(shape),
            strides: None,
            ptr: data.as_ptr(),
            life: PhantomData,
        })
    }

    /// A dense, C-ordered view of a slice of elements.
    ///
    /// ```
    /// use slc::embed::TensorView;
    /// let v = TensorView::from_slice(&[2, 3], &[1i64, 2, 3, 4, 5, 6]).unwrap();
    /// assert_eq!((v.dtype(), v.shape()), (slc::DType::I64, &[2usize, 3][..]));
    /// ```
    pub fn from_slice<T: Element>(shape: &'a [usize], data: &'a [T]) -> Result<TensorView<'a>, ViewError> {
        let expected = byte_size(T::DTYPE, shape)?;
        let len = std::mem::size_of_val(data);
        if len != expected {
            return Err(ViewError::Length { dtype: T::DTYPE, shape: shape.to_vec(), expected, len });
        }
        let ptr = data.as_ptr().cast();
        Ok(TensorView { dtype: T::DTYPE, shape: Cow::Borrowed(shape), strides: None, ptr, life: PhantomData })
    }

    /// A view with NumPy-style *byte* strides, element `[0, ..., 0]` at byte `offset` of `data`.
    /// Strides may be negative or zero (broadcast); each must be a multiple of the element size
    /// (slc addresses whole elements), and every element must lie inside `data`.
    ///
    /// ```
    /// use slc::{DType, embed::TensorView};
    /// let bytes: Vec<u8> = (0..10).collect();
    /// // Every other byte, backwards from the last: [9, 7, 5, 3, 1].
    /// let v = TensorView::strided(DType::U8, &[5], &[-2], &bytes, 9).unwrap();
    /// assert_eq!(v.to_tensor().unwrap().bytes(), &[9, 7, 5, 3, 1]);
    /// // An i32 view cannot step by 2 bytes.
    /// assert!(TensorView::strided(DType::I32, &[2], &[2], &bytes, 0).is_err());
    /// ```
    pub fn strided(
        dtype: DType,
        shape: &'a [usize],
        byte_strides: &[isize],
        data: &'a [u8],
        offset: usize,
    ) -> Result<TensorView<'a>, ViewError> {
        let strides = element_strides(dtype, shape, byte_strides)?;
        byte_size(dtype, shape)?;
        if let Some((first, end)) = reach(shape, &strides, dtype.width()) {
            let (first, end) = (first + offset as i128, end + offset as i128);
            if first < 0 || end > data.len() as i128 {
                return Err(ViewError::OutOfBounds { first, end, len: data.len() });
            }
        }
        // In bounds (checked above) or reaching nothing: the pointer is never read then.
        let ptr = data.as_ptr().wrapping_add(offset);
        Ok(TensorView::with_element_strides(dtype, Cow::Borrowed(shape), strides, ptr))
    }

    /// A view over raw memory, with optional byte strides (`None`: dense, C-ordered).
    ///
    /// # Safety
    /// Every element the shape and strides reach from `ptr` must be readable for `'a`, and
    /// not written while the view is alive.
    ///
    /// ```
    /// use slc::{DType, embed::TensorView};
    /// let data = [1.0f64, 2.0, 3.0];
    /// let shape = [3usize];
    /// // SAFETY: `data` holds the 3 elements and outlives the view.
    /// let v = unsafe { TensorView::from_raw(DType::F64, &shape, None, data.as_ptr().cast()) }.unwrap();
    /// assert_eq!(v.nbytes(), 24);
    /// ```
    pub unsafe fn from_raw(
        dtype: DType,
        shape: &'a [usize],
        byte_strides: Option<&[isize]>,
        ptr: *const u8,
    ) -> Result<TensorView<'a>, ViewError> {
        byte_size(dtype, shape)?;
        if ptr.is_null() && !shape.contains(&0) {
            return Err(ViewError::Null);
        }
        let strides = match byte_strides {
            Some(b) => element_strides(dtype, shape, b)?,
            None => dense_strides(shape),
        };
        Ok(TensorView::with_element_strides(dtype, Cow::Borrowed(shape), strides, ptr))
    }

    /// From element strides (already validated against memory by the caller).
    pub(crate) fn with_element_strides(
        dtype: DType,
        shape: Cow<'a, [usize]>,
        strides: Vec<isize>,
        ptr: *const u8,
    ) -> TensorView<'a> {
        // A unit axis never moves: its stride is 0, so that views differing only there (NumPy
        // leaves any stride on them) share a layout and its kernel.
        let strides: Vec<isize> =
            strides.iter().zip(shape.iter()).map(|(&s, &d)| if d == 1 { 0 } else { s }).collect();
        let strides = (!is_dense(&shape, &strides)).then_some(Cow::Owned(strides));
        TensorView { dtype, shape, strides, ptr, life: PhantomData }
    }

    /// A view of a whole tensor (dense).
    ///
    /// ```
    /// use slc::{DType, Tensor, embed::TensorView};
    /// let t = Tensor::zeros(DType::U8, &[2, 2]).unwrap();
    /// assert_eq!(TensorView::of(&t).shape(), t.shape());
    /// ```
    #[inline]
    pub fn of(t: &'a Tensor) -> TensorView<'a> {
        TensorView {
            dtype: t.dtype(),
            shape: Cow::Borrowed(t.shape()),
            strides: None,
            ptr: t.as_ptr(),
            life: PhantomData,
        }
    }

    /// A view of this view, borrowing rather than cloning its shape and strides.
    #[inline]
    pub fn reborrow(&self) -> TensorView<'_> {
        TensorView {
            dtype: self.dtype,
            shape: Cow::Borrowed(&self.shape),
            strides: self.strides.as_deref().map(Cow::Borrowed),
            ptr: self.ptr,
            life: PhantomData,
        }
    }

    /// The element type.
    #[inline]
    pub fn dtype(&self) -> DType {
        self.dtype
    }

    /// The dimensions.
    #[inline]
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// The number of elements (1 for a 0-d view).
    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// The byte size of the view's elements once dense.
    pub fn nbytes(&self) -> usize {
        self.numel() * self.dtype.width()
    }

    /// Whether the elements lie dense and in C order (then kernels read them in place).
    #[inline]
    pub fn is_contiguous(&self) -> bool {
        self.strides.is_none()
    }

    /// Element strides (C-order strides for a dense view).
    pub fn strides(&self) -> Vec<isize> {
        match &self.strides {
            Some(s) => s.to_vec(),
            None => dense_strides(&self.shape),
        }
    }

    /// Element strides when the view is not dense (without allocating, unlike
    /// [`strides`](Self::strides)).
    #[inline]
    pub(crate) fn layout(&self) -> Option<&[isize]> {
        self.strides.as_deref()
    }

    /// The addresses `[first, end)` of the bytes the view reaches; empty for a view with no
    /// elements.
    pub(crate) fn byte_span(&self) -> (usize, usize) {
        let base = self.ptr as usize as i128;
        let reached = match &self.strides {
            None => (self.numel() > 0).then(|| (0, self.nbytes() as i128)),
            Some(s) => reach(&self.shape, s, self.dtype.width()),
        };
        reached.map_or((0, 0), |(lo, hi)| ((base + lo) as usize, (base + hi) as usize))
    }

    /// Element `[0, ..., 0]`, for kernels (which address every element from it).
    #[inline]
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.ptr
    }

    /// The view's elements copied into a dense tensor.
    ///
    /// ```
    /// use slc::embed::TensorView;
    /// let v = TensorView::from_slice(&[2], &[7u16, 9]).unwrap();
    /// assert_eq!(v.to_tensor().unwrap().int_at(1), Some(9));
    /// ```
    pub fn to_tensor(&self) -> Result<Tensor, slc_runtime::TensorError> {
        // `pack_into` writes every byte: no zeroing first.
        let mut t = Tensor::for_overwrite(self.dtype, &self.shape)?;
        self.pack_into(t.bytes_mut());
        Ok(t)
    }
}

/// Byte strides → element strides (axes of size 0 or 1 may have any stride).
fn element_strides(dtype: DType, shape: &[usize], byte_strides: &[isize]) -> Result<Vec<isize>, ViewError> {
    if byte_strides.len() != shape.len() {
        return Err(ViewError::StrideCount { rank: shape.len(), found: byte_strides.len() });
    }
    let w = dtype.width() as isize;
    // An empty view reads nothing, so its strides are never used: accept any.
    let empty = shape.contains(&0);
    shape
        .iter()
        .zip(byte_strides)
        .enumerate()
        .map(|(axis, (&d, &s))| match (d <= 1 || empty, s % w) {
            (true, _) => Ok(0),
            (false, 0) => Ok(s / w),
            _ => Err(ViewError::UnalignedStride { axis, stride: s as i64, width: w as usize, dtype }),
        })
        .collect()
}

/// Anything a kernel or session takes as an input: a [`Tensor`] or a [`TensorView`] (or a
/// reference to either).
pub trait AsView {
    /// A view of the value, borrowing it.
    fn as_view(&self) -> TensorView<'_>;
}

impl AsView for Tensor {
    #[inline]
    fn as_view(&self) -> TensorView<'_> {
        TensorView::of(self)
    }
}

impl AsView for TensorView<'_> {
    #[inline]
    fn as_view(&self) -> TensorView<'_> {
        self.reborrow()
    }
}

impl<T: AsView + ?Sized> AsView for &T {
    #[inline]
    fn as_view(&self) -> TensorView<'_> {
        (**self).as_view()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_and_strides_are_checked() {
        let bytes = [0u8; 16];
        assert!(matches!(
            TensorView::strided(DType::F32, &[2, 2], &[8, 4], &bytes, 4),
            Err(ViewError::OutOfBounds { .. })
        ));
        assert!(TensorView::strided(DType::F32, &[2, 2], &[8, 4], &bytes, 0).unwrap().is_contiguous());
        assert!(matches!(
            TensorView::strided(DType::F32, &[2, 2], &[8, 3], &bytes, 0),
            Err(ViewError::UnalignedStride { axis: 1, .. })
        ));
        // Negative strides reach below the offset.
        assert!(TensorView::strided(DType::F32, &[4], &[-4], &bytes, 8).is_err());
        assert!(TensorView::strided(DType::F32, &[4], &[-4], &bytes, 12).is_ok());
        // Empty views reach nothing, anywhere; unit axes take any stride.
        assert!(TensorView::strided(DType::F64, &[0, 3], &[1, 1], &[], 100).is_ok());
        assert!(TensorView::strided(DType::F32, &[1, 4], &[3, 4], &bytes, 0).unwrap().is_contiguous());
        assert!(matches!(
            TensorView::strided(DType::F32, &[4], &[4, 4], &bytes, 0),
            Err(ViewError::StrideCount { rank: 1, found: 2 })
        ));
        assert!(matches!(TensorView::new(DType::U8, &[usize::MAX, 2], &bytes), Err(ViewError::TooLarge(_))));
    }
}
