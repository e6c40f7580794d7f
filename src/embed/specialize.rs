//! The specialization policy of a [`Kernel`](super::Kernel): concrete kernels compiled for one
//! call's *layout* — its inputs' dims, their strides where a view is not dense, and the values of
//! the inputs the front end read as operator parameters — beside the kernel's one shape-generic
//! plan. A layout is specialized when
//!
//! - an input is a strided view (NumPy's `x[::2]`, `x.T`): the program is lowered again with the
//!   view's strides in its accesses, so the kernel reads the caller's memory in place instead of
//!   packing a copy on every call;
//! - a dense call repeats the dims of the calls before it [`REPEATS`] times (a generic plan only):
//!   binding the shape into the compile saves the per-call binding and lets the scheduler see
//!   constant extents;
//! - the kernel runs on the interpreter, which runs concrete plans only.
//!
//! At most [`MAX_LAYOUTS`] layouts are kept per kernel; beyond them calls take the generic
//! kernel (strided views packed into dense copies).

use super::layout_entry::LayoutEntry;
use super::view::{AsView, TensorView};
use crate::backend::RuntimeError;
use crate::backend::jit::{self, JitKernel};
use crate::error::Error;
use crate::exec::{Executor, Runnable};
use crate::pipeline::{Compiled, compile_with_values};
use crate::plan::{self, InputStrides, VerifiedPlan};
use crate::sema::{InputTypes, InputValues, value_may_be_read};
use crate::types::TensorType;
use slc_runtime::Tensor;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

/// Layouts kept per kernel: a caller cycling through more shapes or strides than this is
/// better served by the generic kernel than by a compile per call.
pub(crate) const MAX_LAYOUTS: usize = 16;

/// Dense calls with the same dims, one after another, before those dims get a kernel of
/// their own.
pub(crate) const REPEATS: u64 = 4;

/// One input of a layout: its dims, and its element strides when it is not dense.
#[derive(Debug, Clone, PartialEq, Eq)]
struct InputLayout {
    dtype: slc_runtime::DType,
    dims: Vec<usize>,
    strides: Option<Vec<isize>>,
}

impl InputLayout {
    /// `view`'s layout; its strides only where they are compiled in (the JIT: the interpreter
    /// reads dense copies).
    fn of(view: &TensorView<'_>, strides: bool) -> InputLayout {
        let strides = if strides { view.layout().map(<[isize]>::to_vec) } else { None };
        InputLayout { dtype: view.dtype(), dims: view.shape().to_vec(), strides }
    }

    fn matches(&self, view: &TensorView<'_>, strides: bool) -> bool {
        self.dtype == view.dtype()
            && self.dims == view.shape()
            && (!strides || self.strides.as_deref() == view.layout())
    }
}

/// A concrete kernel for one layout: the front end's product for its types and values, the plan
/// lowered with its strides, and (on the JIT) that plan's machine code, taking inputs in the
/// kernel's call order.
pub(crate) struct Special {
    layout: Vec<InputLayout>,
    /// Inputs whose values the front end read, by call position, with those values.
    values: Vec<(usize, Tensor)>,
    pub compiled: Arc<Compiled>,
    pub plan: VerifiedPlan,
    /// The output's dims.
    pub out_dims: Vec<usize>,
    /// Takes the caller's inputs in call order (the plan may read fewer inputs than the generic
    /// one: parameters whose values it read are folded in).
    pub native: Option<JitKernel>,
    /// The layout `native` was compiled for, when no input's value was read: calls that fit it
    /// take the fastest path.
    pub entry: Option<LayoutEntry>,
    /// Where `native` is none (a store the generic JIT does not take, the interpreter): the
    /// front end's plan prepared once, on the first call, not again on every call.
    runnable: OnceLock<Runnable>,
    /// A `+=` whose updates may meet, through a view: its three buffered kernels, prepared at
    /// the first call (`None`: it has none).
    pub buffered: OnceLock<Option<super::buffered::Buffered>>,
}

impl Special {
    /// [`Special::compiled`]'s plan prepared for `executor` (the first call's; a kernel has one).
    pub fn runnable(&self, executor: Executor) -> Result<&Runnable, RuntimeError> {
        if let Some(r) = self.runnable.get() {
            return Ok(r);
        }
        let prepared = Runnable::prepare_in_plan_order(&self.compiled.plan, executor, None)?;
        Ok(self.runnable.get_or_init(|| prepared))
    }

    fn matches<V: AsView>(&self, inputs: &[V]) -> bool {
        let strides = self.native.is_some();
        self.layout.len() == inputs.len()
            && self.layout.iter().zip(inputs).all(|(l, v)| l.matches(&v.as_view(), strides))
            && self.values.iter().all(|(i, value)| holds(&inputs[*i].as_view(), value))
    }
}

/// Whether `view` holds exactly `value` (same dtype, shape and elements).
pub(crate) fn holds(view: &TensorView<'_>, value: &Tensor) -> bool {
    if view.dtype() != value.dtype() || view.shape() != value.shape() {
        return false;
    }
    if view.is_contiguous() {
        // SAFETY: a dense view's `nbytes` bytes are readable for its lifetime.
        let bytes = unsafe { std::slice::from_raw_parts(view.as_ptr(), view.nbytes()) };
        return bytes == value.bytes();
    }
    view.to_tensor().is_ok_and(|t| t.bytes() == value.bytes())
}

/// What a kernel needs to specialize: its text, call-order names, plan order, and the front
/// end's product for its declared types when they are all constants (no compile needed then).
pub(crate) struct Source<'k> {
    pub src: &'k str,
    pub names: &'k [String],
    pub fixed: Option<&'k Arc<Compiled>>,
    pub jit: bool,
    /// A store's strided target is stored through, in place (`plan::lower_through_view`):
    /// the kernel's output is the target's window, not the program's result.
    pub through_view: bool,
}

/// The specialized kernels of one prepared kernel, shared by its clones.
#[derive(Default)]
pub(crate) struct Specials {
    /// The first layout met, looked up without a lock: most kernels meet one.
    first: OnceLock<Arc<Special>>,
    others: Mutex<Vec<Arc<Special>>>,
    /// The dims of the last dense calls (a hash) and how many in a row had them.
    streak: AtomicU64,
}

impl Specials {
    /// The first layout's kernel, if one is kept.
    #[inline]
    pub fn first(&self) -> Option<&Special> {
        self.first.get().map(|k| &**k)
    }

    /// The kernel kept for the layout of `inputs`, if any.
    #[inline]
    pub fn find<V: AsView>(&self, inputs: &[V]) -> Option<Arc<Special>> {
        let first = self.first.get()?;
        if first.matches(inputs) {
            return Some(first.clone());
        }
        let others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        others.iter().find(|k| k.matches(inputs)).cloned()
    }

    /// Counts a dense call of a generic plan; true when its dims have now come [`REPEATS`]
    /// times in a row (and room is left), so that the caller specializes them.
    #[inline]
    pub fn note_dense<V: AsView>(&self, inputs: &[V]) -> bool {
        // A cheap mix of the dims (FNV-style): a collision only specializes a shape early.
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for v in inputs {
            for &d in v.as_view().shape() {
                h = (h ^ d as u64).wrapping_mul(0x0100_0000_01b3);
            }
            h = (h ^ 0xff).wrapping_mul(0x0100_0000_01b3);
        }
        // The high 56 bits identify the dims, the low 8 count the streak.
        let id = h & !0xff;
        let last = self.streak.load(Ordering::Relaxed);
        let count = if last & !0xff == id { (last & 0xff).saturating_add(1).min(0xff) } else { 1 };
        self.streak.store(id | count, Ordering::Relaxed);
        count == REPEATS && self.count() < MAX_LAYOUTS
    }

    /// The kernels kept.
    pub fn count(&self) -> usize {
        self.first.get().is_some() as usize + self.others.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// The kernel for the layout of `views` (call order), compiled on first use; `None` once
    /// [`MAX_LAYOUTS`] are kept. Errors are the front end's for these types and values, so a
    /// call the generic plan refuses is explained as a fixed-shape compile explains it.
    pub fn get_or_compile(
        &self,
        source: &Source<'_>,
        views: &[TensorView<'_>],
    ) -> Result<Option<Arc<Special>>, Error> {
        if let Some(k) = self.find(views) {
            return Ok(Some(k));
        }
        if self.count() >= MAX_LAYOUTS {
            return Ok(None);
        }
        // Compiled without the lock: calls with layouts already kept go on meanwhile.
        let special = Arc::new(compile(source, views)?);
        if self.first.set(special.clone()).is_ok() {
            return Ok(Some(special));
        }
        let mut others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        // Another thread may have compiled the same layout meanwhile: keep one.
        if let Some(k) = others.iter().chain(self.first.get()).find(|k| k.matches(views)) {
            return Ok(Some(k.clone()));
        }
        others.push(special.clone());
        Ok(Some(special))
    }

    /// The plans kept so far that declare strides, in the order they were met.
    pub fn strided_plans(&self) -> Vec<VerifiedPlan> {
        let others = self.others.lock().unwrap_or_else(|e| e.into_inner());
        let strided = |k: &&Arc<Special>| k.layout.iter().any(|l| l.strides.is_some());
        self.first.get().into_iter().chain(others.iter()).filter(strided).map(|k| k.plan.clone()).collect()
    }
}

/// The front end's product for the types of `views` and the values it may read (operator
/// parameters, masks), then the plan lowered again with the views' strides.
pub(crate) fn compile(source: &Source<'_>, views: &[TensorView<'_>]) -> Result<Special, Error> {
    let layout: Vec<InputLayout> = views.iter().map(|v| InputLayout::of(v, source.jit)).collect();
    let compiled = match source.fixed {
        Some(fixed) => fixed.clone(),
        None => {
            let types: InputTypes = (source.names.iter().zip(views))
                .map(|(n, v)| (n.clone(), TensorType::of(v.dtype(), v.shape())))
                .collect();
            let mut values = InputValues::new();
            for (n, v) in source.names.iter().zip(views) {
                if value_may_be_read(v.dtype(), v.numel()) {
                    values.insert(n.clone(), v.to_tensor().map_err(RuntimeError::from)?);
                }
            }
            Arc::new(compile_with_values(source.src, &types, &values)?)
        }
    };
    // Lowering, cloning and compiling recurse once per level of the program.
    crate::limits::with_stack_for(compiled.checked.depth, || specialize(source, views, layout, compiled))
}

/// [`compile`]'s steps after the front end.
fn specialize(
    source: &Source<'_>,
    views: &[TensorView<'_>],
    layout: Vec<InputLayout>,
    compiled: Arc<Compiled>,
) -> Result<Special, Error> {
    let values = (source.names.iter().enumerate())
        .filter(|(_, n)| compiled.read.values.contains(*n))
        .map(|(i, _)| Ok((i, views[i].to_tensor().map_err(RuntimeError::from)?)))
        .collect::<Result<Vec<_>, Error>>()?;
    let strides: InputStrides = (source.names.iter().zip(&layout))
        .filter_map(|(name, l)| Some((name.clone(), l.strides.as_ref()?.iter().map(|&s| s as i64).collect())))
        .collect();
    let plan = match strides.is_empty() {
        true => compiled.plan.clone(),
        false if source.through_view => plan::verify(plan::lower_through_view(&compiled.checked, &strides)?)?,
        false => plan::verify(plan::lower_with_strides(&compiled.checked, &strides)?)?,
    };
    let names: Vec<&str> = source.names.iter().map(String::as_str).collect();
    let order = crate::backend::aot::input_order(&plan, &names)
        .map_err(|e| super::view::ViewError::Signature(e.to_string()))?;
    // A store the JIT does not take (jit/store.rs) stays on the interpreter, as its generic
    // plan does.
    let takes = plan.store.is_none() || crate::backend::loopnest::takes_store(&plan);
    // Its native call passes the caller's pointers: a value cast per call is the interpreter's.
    let takes = takes && plan.inputs.iter().all(|d| d.cast_of().is_none());
    let native = match source.jit && takes {
        true => Some(jit::compile(&plan.lift(), &order).map_err(RuntimeError::from)?),
        false => None,
    };
    let out_dims: Vec<usize> = plan.shape.iter().map(|&d| d as usize).collect();
    let entry = match &native {
        Some(native) if !native.binds() && values.is_empty() => {
            let signature: Vec<_> =
                layout.iter().map(|l| (l.dtype, l.dims.clone(), l.strides.clone())).collect();
            LayoutEntry::new(&signature, plan.dtype, out_dims.clone())
        }
        _ => None,
    };
    Ok(Special {
        layout,
        values,
        compiled,
        plan,
        out_dims,
        native,
        entry,
        runnable: OnceLock::new(),
        buffered: OnceLock::new(),
    })
}
