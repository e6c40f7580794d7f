//! Kernels for strided views. A kernel prepared for dense inputs may meet NumPy's `x[::2]`,
//! `x.T` or a negative step. Rather than packing such a view into a dense copy on every call,
//! the program is lowered again with the view's strides in its accesses (a strided input is just
//! another affine access), verified and compiled once per layout, and then reads the caller's
//! memory in place.

use crate::backend::jit::{self, JitKernel};
use crate::error::Error;
use crate::pipeline::Compiled;
use crate::plan::{self, InputStrides, VerifiedPlan};
use std::sync::{Arc, Mutex};

/// Layouts kept per kernel; further layouts are packed (a caller cycling through more strides
/// than this is better served by copies than by a compile per call).
const MAX_LAYOUTS: usize = 16;

/// Element strides per input, in the kernel's call order; `None` where the input is dense.
pub(crate) type Layout = Vec<Option<Vec<i64>>>;

/// The kernel for one layout: its plan (with the strides declared) and machine code.
pub(crate) struct StridedKernel {
    pub plan: VerifiedPlan,
    pub native: Arc<JitKernel>,
}

/// The strided kernels of one prepared kernel, shared by its clones.
#[derive(Default)]
pub(crate) struct StridedKernels {
    kernels: Mutex<Vec<(Layout, Arc<StridedKernel>)>>,
}

impl StridedKernels {
    /// The kernel for `layout`, compiled on first use; `None` once [`MAX_LAYOUTS`] others are
    /// kept. `names` and `order` are the prepared kernel's (call order, plan order).
    pub fn get_or_compile(
        &self,
        compiled: &Compiled,
        names: &[String],
        order: &[usize],
        layout: &Layout,
    ) -> Result<Option<Arc<StridedKernel>>, Error> {
        let found = |kernels: &[(Layout, Arc<StridedKernel>)]| {
            kernels.iter().find(|(l, _)| l == layout).map(|(_, k)| k.clone())
        };
        {
            let kernels = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(k) = found(&kernels) {
                return Ok(Some(k));
            }
            if kernels.len() >= MAX_LAYOUTS {
                return Ok(None);
            }
        }
        // Compiled without the lock: calls with layouts already kept go on meanwhile.
        let strides: InputStrides =
            (names.iter().zip(layout)).filter_map(|(name, s)| Some((name.clone(), s.clone()?))).collect();
        let plan = plan::verify(plan::lower_with_strides(&compiled.checked, &strides)?)?;
        let native = Arc::new(jit::compile(&plan, order).map_err(crate::backend::RuntimeError::from)?);
        let mut kernels = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = found(&kernels) {
            return Ok(Some(k));
        }
        let kernel = Arc::new(StridedKernel { plan, native });
        kernels.push((layout.clone(), kernel.clone()));
        Ok(Some(kernel))
    }

    /// The plans of the layouts compiled so far.
    pub fn plans(&self) -> Vec<VerifiedPlan> {
        let kernels = self.kernels.lock().unwrap_or_else(|e| e.into_inner());
        kernels.iter().map(|(_, k)| k.plan.clone()).collect()
    }
}
