//! Kernels for strided views. A kernel prepared for dense inputs may meet NumPy's `x[::2]`,
//! `x.T` or a negative step. Rather than packing such a view into a dense copy on every call,
//! the program is lowered again with the view's strides in its accesses (a strided input is just
//! another affine access), verified and compiled once per layout, and then reads the caller's
//! memory in place.

use super::view::{AsView, TensorView};
use crate::backend::RuntimeError;
use crate::backend::jit::{self, JitKernel};
use crate::error::Error;
use crate::pipeline::Compiled;
use crate::plan::{self, InputStrides, VerifiedPlan};
use std::sync::{Arc, Mutex, OnceLock};

/// Layouts kept per kernel; further layouts are packed (a caller cycling through more strides
/// than this is better served by copies than by a compile per call).
const MAX_LAYOUTS: usize = 16;

/// Element strides per input, in the kernel's call order; `None` where the input is dense.
type Layout = Vec<Option<Vec<i64>>>;

/// The layout of `views`.
fn layout_of(views: &[TensorView<'_>]) -> Layout {
    let strides = |v: &TensorView<'_>| v.layout().map(|s| s.iter().map(|&x| x as i64).collect());
    views.iter().map(strides).collect()
}

/// Whether `inputs` have `layout`, compared in place (the per-call lookup allocates nothing).
fn has_layout<V: AsView>(layout: &Layout, inputs: &[V]) -> bool {
    layout.iter().zip(inputs).all(|(l, v)| match (l, v.as_view().layout()) {
        (None, None) => true,
        (Some(l), Some(s)) => l.len() == s.len() && l.iter().zip(s).all(|(&a, &b)| a == b as i64),
        _ => false,
    })
}

/// The kernel for one layout: its plan (with the strides declared) and machine code.
pub(crate) struct StridedKernel {
    pub plan: VerifiedPlan,
    pub native: JitKernel,
}

/// The strided kernels of one prepared kernel, shared by its clones.
#[derive(Default)]
pub(crate) struct StridedKernels {
    /// The first layout met, looked up without a lock: most kernels meet one.
    first: OnceLock<(Layout, Arc<StridedKernel>)>,
    others: Mutex<Vec<(Layout, Arc<StridedKernel>)>>,
}

impl StridedKernels {
    /// The kernel compiled for the layout of `views`, if any.
    #[inline]
    pub fn find<V: AsView>(&self, views: &[V]) -> Option<Arc<StridedKernel>> {
        match self.first.get() {
            Some((l, k)) if has_layout(l, views) => Some(k.clone()),
            Some(_) => {
                let others = self.others.lock().unwrap_or_else(|e| e.into_inner());
                others.iter().find(|(l, _)| has_layout(l, views)).map(|(_, k)| k.clone())
            }
            None => None,
        }
    }

    /// The kernel for the layout of `views`, compiled on first use; `None` once [`MAX_LAYOUTS`]
    /// others are kept. `names` and `order` are the prepared kernel's (call order, plan order).
    pub fn get_or_compile(
        &self,
        compiled: &Compiled,
        names: &[String],
        order: &[usize],
        views: &[TensorView<'_>],
    ) -> Result<Option<Arc<StridedKernel>>, Error> {
        if let Some(k) = self.find(views) {
            return Ok(Some(k));
        }
        if self.others.lock().unwrap_or_else(|e| e.into_inner()).len() + 1 >= MAX_LAYOUTS {
            return Ok(None);
        }
        // Compiled without the lock: calls with layouts already kept go on meanwhile.
        let layout = layout_of(views);
        let strides: InputStrides =
            names.iter().zip(&layout).filter_map(|(name, s)| Some((name.clone(), s.clone()?))).collect();
        let plan = plan::verify(plan::lower_with_strides(&compiled.checked, &strides)?)?;
        let native = jit::compile(&plan.lift(), order).map_err(RuntimeError::from)?;
        let kernel = Arc::new(StridedKernel { plan, native });
        if self.first.set((layout.clone(), kernel.clone())).is_ok() {
            return Ok(Some(kernel));
        }
        let mut others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        // Another thread may have compiled the same layout meanwhile: keep one.
        if let Some((_, k)) = others.iter().find(|(l, _)| *l == layout) {
            return Ok(Some(k.clone()));
        }
        if self.first.get().is_some_and(|(l, _)| *l == layout) {
            return Ok(self.first.get().map(|(_, k)| k.clone()));
        }
        others.push((layout, kernel.clone()));
        Ok(Some(kernel))
    }

    /// The plans of the layouts compiled so far, in the order they were met.
    pub fn plans(&self) -> Vec<VerifiedPlan> {
        let others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        self.first.get().into_iter().chain(others.iter()).map(|(_, k)| k.plan.clone()).collect()
    }
}
