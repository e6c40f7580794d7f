//! ndarray interop (cargo feature `ndarray`): array views in, owned arrays out.

use super::kernel::Kernel;
use super::view::{AsView, Element, TensorView};
use crate::backend::RuntimeError;
use crate::error::Error;
use ndarray::{ArrayBase, ArrayD, ArrayViewD, Data, Dimension, IxDyn};
use slc_runtime::Tensor;
use std::borrow::Cow;

impl<'a> TensorView<'a> {
    /// A view of an ndarray array or array view, in place: any layout (strides are kept; a
    /// non-standard layout is packed by kernels before they run).
    ///
    /// ```
    /// use ndarray::{Array2, s};
    /// use slc::embed::TensorView;
    /// let a = Array2::from_shape_fn((4, 5), |(i, j)| (i * 5 + j) as f32);
    /// let v = TensorView::from_ndarray(&a);
    /// assert!(v.is_contiguous());
    /// let t = a.t();
    /// assert!(!TensorView::from_ndarray(&t).is_contiguous());
    /// let r = a.slice(s![.., ..;-2]);
    /// assert_eq!(TensorView::from_ndarray(&r).shape(), &[4, 3]);
    /// ```
    pub fn from_ndarray<T: Element, S: Data<Elem = T>, D: Dimension>(
        a: &'a ArrayBase<S, D>,
    ) -> TensorView<'a> {
        let strides: Vec<isize> = a.strides().to_vec();
        // ndarray guarantees every element of `a` is readable for its lifetime, and `as_ptr`
        // is element [0, ..., 0].
        TensorView::with_element_strides(T::DTYPE, Cow::Borrowed(a.shape()), strides, a.as_ptr().cast())
    }
}

/// The tensor's elements as an owned ndarray array (a copy), if `T` is its element type.
///
/// ```
/// use slc::{DType, Tensor, embed::to_ndarray};
/// let t = Tensor::from_i64s(DType::I32, &[2, 2], &[1, 2, 3, 4]).unwrap();
/// let a = to_ndarray::<i32>(&t).unwrap();
/// assert_eq!(a[[1, 0]], 3);
/// assert!(to_ndarray::<f32>(&t).is_err());
/// ```
pub fn to_ndarray<T: Element>(t: &Tensor) -> Result<ArrayD<T>, Error> {
    check_dtype::<T>(t)?;
    let n = t.numel();
    // A bool tensor may hold any byte (it came from caller memory): only 0 and 1 are bools.
    let normalized: Option<Vec<u8>> =
        (T::DTYPE == slc_runtime::DType::Bool).then(|| t.bytes().iter().map(|&b| (b != 0) as u8).collect());
    let src = normalized.as_deref().unwrap_or(t.bytes());
    let mut values: Vec<T> = Vec::with_capacity(n);
    // SAFETY: `values` has room for n elements of T; `src` holds n elements of T's dtype
    // (checked above) whose bytes are valid T values (every bit pattern for the numbers, 0 or
    // 1 for bool).
    unsafe {
        std::ptr::copy_nonoverlapping(src.as_ptr(), values.as_mut_ptr().cast::<u8>(), src.len());
        values.set_len(n);
    }
    ArrayD::from_shape_vec(IxDyn(t.shape()), values).map_err(|e| shape_error(t, e))
}

/// The tensor's elements as an ndarray view, in place (no copy), if `T` is its element type
/// and not `bool` (a bool tensor may hold bytes other than 0 and 1: use [`to_ndarray`]).
///
/// ```
/// use slc::{DType, Tensor, embed::ndarray_view};
/// let t = Tensor::from_i64s(DType::I64, &[2, 3], &[1, 2, 3, 4, 5, 6]).unwrap();
/// let a = ndarray_view::<i64>(&t).unwrap();
/// assert_eq!(a[[1, 0]], 4);
/// assert_eq!(a.as_ptr().cast::<u8>(), t.as_ptr());
/// assert!(ndarray_view::<f64>(&t).is_err());
/// assert!(ndarray_view::<bool>(&Tensor::zeros(DType::Bool, &[2]).unwrap()).is_err());
/// ```
pub fn ndarray_view<T: Element>(t: &Tensor) -> Result<ArrayViewD<'_, T>, Error> {
    check_dtype::<T>(t)?;
    if T::DTYPE == slc_runtime::DType::Bool {
        return Err(RuntimeError::InputMismatch {
            name: "the array".into(),
            expected: "a numeric dtype (bool tensors are copied by to_ndarray)".into(),
            found: "bool".into(),
        }
        .into());
    }
    let n = t.numel();
    // SAFETY: the tensor holds n elements of T's dtype, C-ordered, at an address aligned for
    // every dtype (tensor buffers are 64-byte aligned, or dangling-but-aligned when empty);
    // every bit pattern is a valid number; the view borrows `t`, so the memory outlives it.
    let values = unsafe { std::slice::from_raw_parts(t.as_ptr().cast::<T>(), n) };
    ArrayViewD::from_shape(IxDyn(t.shape()), values).map_err(|e| shape_error(t, e))
}

fn check_dtype<T: Element>(t: &Tensor) -> Result<(), Error> {
    if t.dtype() == T::DTYPE {
        return Ok(());
    }
    Err(RuntimeError::InputMismatch {
        name: "the array".into(),
        expected: T::DTYPE.to_string(),
        found: t.dtype().to_string(),
    }
    .into())
}

fn shape_error(t: &Tensor, e: ndarray::ShapeError) -> Error {
    RuntimeError::InputMismatch {
        name: "the array".into(),
        expected: t.dtype().to_string(),
        found: e.to_string(),
    }
    .into()
}

impl Kernel {
    /// Runs the kernel and returns the result as an ndarray array of element type `T`.
    ///
    /// ```
    /// use ndarray::Array2;
    /// use slc::embed::{Kernel, TensorView};
    /// let k = Kernel::prepare("a[1:3, ::-1]", &[("a", "f32[4,5]".parse()?)])?;
    /// let a = Array2::from_shape_fn((4, 5), |(i, j)| (i * 5 + j) as f32);
    /// let out = k.run_array::<f32, _>(&[TensorView::from_ndarray(&a)])?;
    /// assert_eq!(out.shape(), &[2, 5]);
    /// assert_eq!(out[[0, 0]], 9.0);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_array<T: Element, V: AsView>(&self, inputs: &[V]) -> Result<ArrayD<T>, Error> {
        to_ndarray(&self.run(inputs)?)
    }
}
