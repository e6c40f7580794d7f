//! Embedding slc: evaluate programs over caller memory, and prepare kernels once to run them
//! many times.
//!
//! - [`Session`](crate::Session) binds owned [`Tensor`](crate::Tensor)s
//!   ([`bind`](crate::Session::bind)) or borrowed [`TensorView`]s
//!   ([`bind_view`](crate::Session::bind_view)) and evaluates program text;
//! - [`Kernel::prepare`] compiles a program for input signatures, fixed (`f32[4, 5]`) or
//!   symbolic (`f32[N, M]`: one kernel for inputs of any conforming shapes); [`Kernel::run`] and
//!   [`Kernel::run_into`] run it on tensors or views, read in place (strided ones through a
//!   kernel compiled for their strides);
//! - errors are [`Error`](crate::Error) values: structured ([`Error::diagnostic`](crate::Error::diagnostic),
//!   the enum's variants) and renderable ([`Error::render`](crate::Error::render));
//! - with the cargo feature `ndarray`, [`TensorView::from_ndarray`] and [`Kernel::run_array`]
//!   take views in and give arrays out.
//!
//! The executor is chosen per session or kernel ([`RunOptions::executor`](crate::RunOptions)):
//! the Cranelift JIT (default) or the reference interpreter.
//!
//! ```
//! use slc::{Session, embed::TensorView};
//! let data: Vec<f32> = (0..20).map(|x| x as f32).collect();
//! let mut s = Session::new();
//! s.bind_view("a", TensorView::from_slice(&[4, 5], &data)?);
//! let t = s.eval("a[1:3, ::-1]")?;
//! assert_eq!(t.shape(), &[2, 5]);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod buffered;
mod held;
mod kernel;
mod layout_entry;
#[cfg(feature = "ndarray")]
mod ndarray;
pub(crate) mod programs;
mod specialize;
mod view;

pub use kernel::Kernel;
pub use kernel::device::{DeviceArray, DeviceMemory, DeviceOutput, Stream, elements_to_host};
#[cfg(feature = "ndarray")]
pub use ndarray::{ndarray_view, to_ndarray};
pub use view::{AsView, Element, TensorView, ViewError};
