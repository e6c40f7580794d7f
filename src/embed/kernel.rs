//! Prepared kernels: a program compiled once for input signatures, run many times — on inputs of
//! exactly those types, or, where a signature's dims are symbols (`f32[N, M]`), on inputs of any
//! conforming shapes. One type for both: a fixed shape is a signature with nothing to bind.

use super::held::{FEW_INPUTS, Held};
use super::layout_entry::{Expect, LayoutEntry};
use super::specialize::{Source, Special, Specials};
use super::view::{AsView, TensorView, ViewError};
use crate::backend::RuntimeError;
use crate::backend::clif::STATUS_OK;
use crate::backend::jit::{self, JitKernel};
use crate::error::Error;
use crate::exec::{Executor, RunOptions, Runnable};
use crate::pipeline::{Compiled, CompiledGeneric, compile_generic_with, compile_with_values};
use crate::plan::{BufferId, InputDecl, VerifiedGenericPlan};
use crate::sema::{InputTypes, InputValues, SymInputTypes};
use crate::types::sym::SymExpr;
use crate::types::{ShapeDisplay, SymTensorType, TensorType};
use slc_runtime::{DType, Tensor};
use std::collections::BTreeMap;
use std::sync::Arc;

mod buffered;
mod build;
mod checks;
pub mod device;
mod special;
mod store;

/// A program compiled for input signatures; run it as often as needed.
///
/// Inputs are passed by position, in the order of the signatures given to
/// [`Kernel::prepare`]. A signature's dims may be constants (`f32[4, 5]`) or symbols
/// (`f32[N, M]`, `?` for a name of its own): equal names must be equal sizes, and the one
/// compiled kernel serves every shape its shape function accepts. Calls validate inputs with a
/// few comparisons, never allocate for dense inputs, and are safe to make from many threads at
/// once.
///
/// **Specialization is a policy inside the kernel**: a strided view is read in place by a kernel
/// compiled for its layout, and a shape that comes back call after call gets a kernel with its
/// dims bound into the code (see `embed/specialize.rs`); both are kept, a bounded number.
/// Errors read as a fixed-shape compile reports them (same codes, same spans).
///
/// ```
/// use slc::{DType, Tensor, embed::{Kernel, TensorView}};
/// let k = Kernel::prepare("a[1:3, ::-1]", &[("a", "f32[4,5]".parse()?)])?;
/// assert_eq!((k.output_dtype(), k.output_shape()), (DType::F32, Some(&[2usize, 5][..])));
/// let data: Vec<f32> = (0..20).map(|x| x as f32).collect();
/// let a = TensorView::from_slice(&[4, 5], &data)?;
/// let mut out = k.output_tensor()?;
/// k.run_into(&[&a], &mut out)?;
/// assert_eq!(out.bytes()[..4], 9.0f32.to_le_bytes());
///
/// // Symbolic dims: one kernel for every shape.
/// let k = Kernel::prepare("a[1:, ::-1]", &[("a", "f32[N, M]".parse()?)])?;
/// assert_eq!(k.output_type().to_string(), "f32[max(0, N-1), M]");
/// for (n, m) in [(4, 5), (3, 1), (100, 7)] {
///     let a = Tensor::zeros(DType::F32, &[n, m])?;
///     assert_eq!(k.run(&[&a])?.shape(), &[n - 1, m]);
/// }
/// // Equal names must be equal sizes.
/// let k = Kernel::prepare("b", &[("a", "f32[N]".parse()?), ("b", "f32[N]".parse()?)])?;
/// let (a, b) = (Tensor::zeros(DType::F32, &[3])?, Tensor::zeros(DType::F32, &[4])?);
/// assert_eq!(k.run(&[&a, &b]).unwrap_err().diagnostic().code, "E0208");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Kernel {
    shared: Arc<Shared>,
    threads: usize,
}

/// What the clones of a kernel share.
struct Shared {
    src: String,
    names: Vec<String>,
    types: Vec<SymTensorType>,
    executor: Executor,
    max_output_bytes: Option<u64>,
    /// The checked program and its plan over the declared types.
    program: CompiledGeneric,
    plan: VerifiedGenericPlan,
    /// The front end's product for the declared types when every dim is a constant.
    fixed: Option<Arc<Compiled>>,
    /// The output's dims and bytes when they do not depend on the inputs.
    out_fixed: Option<(Vec<usize>, usize)>,
    /// The compiled entry's signature when every input is fixed and the entry takes them as
    /// they come (the call's fastest path).
    fixed_entry: Option<LayoutEntry>,
    /// For each plan input, its position among the caller's inputs (for an input the plan
    /// derives from a mask, the mask's).
    order: Vec<usize>,
    /// Whether each plan input is derived per call (a mask's `nonzero()`).
    derived: Vec<bool>,
    /// Whether the plan reads every input, in the order given (the call's fast path).
    in_order: bool,
    /// Whether the plan has symbols to bind (dense calls may then be specialized).
    symbolic: bool,
    /// The plan on its executor: the one compiled kernel, or the interpreter (which runs the
    /// concrete plan of each call's layout, a specialization).
    runnable: Runnable,
    specials: Specials,
    /// A store's kernels for strided targets written through in place (`Kernel::store`), by
    /// layout: their output is the target's window, so they run no other call.
    through_view: Specials,
    /// The generic plan's kernels on the GPU, for calls on device memory.
    device: device::DeviceCache,
    /// The positions of the masks a generic plan derives them from (`nonzero()`), with a copy
    /// of each mask: the last ones met, one per derived input (`Kernel::positions`).
    positions: std::sync::Mutex<Vec<MaskPositions>>,
    /// A `+=`/`*=` store's three in-place kernels (`buffered`), made at its first use.
    buffered: std::sync::OnceLock<Option<crate::embed::buffered::Buffered>>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let s = &self.shared;
        write!(f, "Kernel({:?} on {:?}: {})", s.src, s.executor, s.plan.to_string().trim_end())
    }
}

impl Kernel {
    /// The program text (to render errors against).
    pub fn source(&self) -> &str {
        &self.shared.src
    }

    /// The checked program and its plan over the declared types (their dims expressions in the
    /// symbols, or constants).
    pub fn program(&self) -> &CompiledGeneric {
        &self.shared.program
    }

    /// The verified plan over the declared types: the shape-generic plan, with its shape
    /// function's requirements; a fixed-shape kernel's has only constants.
    pub fn plan(&self) -> &VerifiedGenericPlan {
        &self.shared.plan
    }

    /// The front end's product for the declared types, when every dim is a constant.
    pub fn fixed(&self) -> Option<&Compiled> {
        self.shared.fixed.as_deref()
    }

    /// The executor that runs the kernel.
    pub fn executor(&self) -> Executor {
        self.shared.executor
    }

    /// The input names and types, in call order.
    ///
    /// ```
    /// let k = slc::embed::Kernel::prepare("b", &[("a", "u8[1]".parse()?), ("b", "i8[N]".parse()?)])?;
    /// let names: Vec<String> = k.inputs().map(|(n, t)| format!("{n}: {t}")).collect();
    /// assert_eq!(names, ["a: u8[1]", "b: i8[N]"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn inputs(&self) -> impl Iterator<Item = (&str, &SymTensorType)> {
        self.shared.names.iter().map(String::as_str).zip(&self.shared.types)
    }

    /// The output's type: dims in the symbols (`f32[max(0, N-1), M]`), or constants.
    pub fn output_type(&self) -> SymTensorType {
        TensorType { dtype: self.shared.plan.dtype, shape: self.shared.plan.shape.clone() }
    }

    /// The output's dtype.
    pub fn output_dtype(&self) -> DType {
        self.shared.plan.dtype
    }

    /// The output's shape, when it does not depend on the inputs (every declared dim a
    /// constant); else [`output_shape_for`](Self::output_shape_for) tells it per call.
    pub fn output_shape(&self) -> Option<&[usize]> {
        self.shared.out_fixed.as_ref().map(|(dims, _)| dims.as_slice())
    }

    /// The output's size in bytes (dense, C order), when it does not depend on the inputs.
    pub fn output_nbytes(&self) -> Option<usize> {
        self.shared.out_fixed.as_ref().map(|&(_, n)| n)
    }

    /// The output's shape for these inputs, or why the kernel does not take them.
    pub fn output_shape_for<V: AsView>(&self, inputs: &[V]) -> Result<Vec<usize>, Error> {
        if let Some(dims) = self.output_shape() {
            self.check_signature(inputs)?;
            return Ok(dims.to_vec());
        }
        match self.route_general(inputs)? {
            Route::Dense(jit, held) => jit.output_shape(&held).map_err(|e| self.explain(e, inputs)),
            Route::Special(special) => Ok(special.out_dims.clone()),
        }
    }

    /// A zeroed tensor of the output's type, to [`run_into`](Self::run_into) repeatedly; the
    /// output's shape must not depend on the inputs.
    pub fn output_tensor(&self) -> Result<Tensor, Error> {
        let Some(dims) = self.output_shape() else {
            let why = format!("the output's shape {} depends on the inputs", self.output_type());
            return Err(ViewError::Signature(why).into());
        };
        Ok(Tensor::zeros(self.output_dtype(), dims).map_err(RuntimeError::from)?)
    }

    /// Sets the worker threads for large outputs (1: always the calling thread).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
    }

    /// The threads a run with an output of `dims` splits it across (1 on the interpreter and for
    /// small outputs).
    pub fn threads_used(&self, dims: &[usize]) -> usize {
        if self.shared.runnable.executor() != Executor::Jit {
            return 1;
        }
        let nbytes = Tensor::byte_size(self.output_dtype(), dims).unwrap_or(0);
        jit::workers(dims.first().map_or(1, |&d| d as i64), nbytes, self.threads)
    }

    /// The plans compiled for strided views so far ([`Kernel::run`] on a view that is not dense
    /// reads it in place through a plan that declares its strides; [`Kernel::store`] into a
    /// strided target writes through one whose output is the target's window).
    ///
    /// ```
    /// use slc::{DType, embed::{Kernel, TensorView}};
    /// let k = Kernel::prepare("a[1:]", &[("a", "u8[3]".parse()?)])?;
    /// let bytes = [1u8, 2, 3, 4, 5, 6];
    /// // Every other byte: 1, 3, 5, read where they are.
    /// let v = TensorView::strided(DType::U8, &[3], &[2], &bytes, 0)?;
    /// assert_eq!(k.run(&[v])?.bytes(), &[3, 5]);
    /// assert!(k.strided_plans()[0].to_string().starts_with("plan(a: u8[3] strides [2])"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn strided_plans(&self) -> Vec<crate::plan::VerifiedPlan> {
        let s = &*self.shared;
        let mut plans = s.specials.strided_plans();
        plans.extend(s.through_view.strided_plans());
        plans
    }

    /// The concrete kernels the specialization policy compiled so far (strided layouts and
    /// repeated shapes).
    pub fn specializations(&self) -> usize {
        self.shared.specials.count()
    }

    /// Runs the kernel into a new tensor.
    ///
    /// ```
    /// use slc::{DType, Tensor, embed::Kernel};
    /// let k = Kernel::prepare("x[i]", &[("x", "i64[3]".parse()?), ("i", "i64[2]".parse()?)])?;
    /// let x = Tensor::from_i64s(DType::I64, &[3], &[10, 20, 30])?;
    /// let i = Tensor::from_i64s(DType::I64, &[2], &[-1, 0])?;
    /// let y = k.run(&[&x, &i])?;
    /// assert_eq!((y.int_at(0), y.int_at(1)), (Some(30), Some(10)));
    /// // Index values are checked, as NumPy does.
    /// let bad = Tensor::from_i64s(DType::I64, &[2], &[3, 0])?;
    /// assert!(k.run(&[&x, &bad]).unwrap_err().render(k.source()).contains("index 3 is out of bounds"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run<V: AsView>(&self, inputs: &[V]) -> Result<Tensor, Error> {
        let dims = match self.output_shape() {
            Some(dims) => std::borrow::Cow::Borrowed(dims),
            None => std::borrow::Cow::Owned(self.output_shape_for(inputs)?),
        };
        if self.output_shape().is_none() {
            let bytes = Tensor::byte_size(self.output_dtype(), &dims).map_or(u64::MAX, |b| b as u64);
            crate::exec::check_output(bytes, self.shared.max_output_bytes, None)?;
        }
        // Every back end writes every output element, so the buffer need not be zeroed first.
        let mut out = Tensor::for_overwrite(self.output_dtype(), &dims).map_err(RuntimeError::from)?;
        self.run_into(inputs, &mut out)?;
        Ok(out)
    }

    /// Runs the kernel into `out`, which must have the output's dtype and the shape these
    /// inputs give. For dense inputs this allocates nothing.
    ///
    /// ```
    /// use slc::{DType, Tensor, embed::{Kernel, TensorView}};
    /// let k = Kernel::prepare("a[::-1]", &[("a", "i32[3]".parse()?)])?;
    /// let mut out = Tensor::zeros(DType::I32, &[3])?;
    /// k.run_into(&[TensorView::from_slice(&[3], &[1i32, 2, 3])?], &mut out)?;
    /// assert_eq!(out.int_at(0), Some(3));
    /// // A wrong output is an error, not a crash.
    /// assert!(k.run_into(&[TensorView::from_slice(&[3], &[1i32, 2, 3])?], &mut Tensor::zeros(DType::I32, &[2])?).is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    #[inline]
    pub fn run_into<V: AsView>(&self, inputs: &[V], out: &mut Tensor) -> Result<(), Error> {
        let (ptr, len) = (out.as_mut_ptr(), out.bytes().len());
        // SAFETY: `out` has `len` writable bytes, not otherwise borrowed while the kernel runs
        // (its dims are only read before).
        if unsafe { self.try_entry(inputs, &Expect::Shape(out.dtype(), out.shape()), ptr, len) } {
            return Ok(());
        }
        self.run_into_checked(inputs, out)
    }

    /// [`run_into`](Self::run_into) past the fastest path: every check, and the error explained.
    #[inline(never)]
    fn run_into_checked<V: AsView>(&self, inputs: &[V], out: &mut Tensor) -> Result<(), Error> {
        // The output's dims, copied aside (on the stack for the usual ranks) while its bytes are
        // lent to the kernel.
        let (dtype, rank) = (out.dtype(), out.shape().len());
        let mut few = [0usize; 16];
        let many: Vec<usize>;
        let dims: &[usize] = if rank <= few.len() {
            few[..rank].copy_from_slice(out.shape());
            &few[..rank]
        } else {
            many = out.shape().to_vec();
            &many
        };
        self.run_raw(inputs, out.bytes_mut(), Expect::Shape(dtype, dims))
    }

    /// Runs the kernel into a byte buffer of exactly the output's size for these inputs (dense,
    /// C order, little-endian elements).
    ///
    /// ```
    /// use slc::{DType, Tensor, embed::Kernel};
    /// let k = Kernel::prepare("a[1:]", &[("a", "u8[3]".parse()?)])?;
    /// let mut out = [0u8; 2];
    /// k.run_into_bytes(&[Tensor::from_bytes(DType::U8, &[3], &[7, 8, 9])?], &mut out)?;
    /// assert_eq!(out, [8, 9]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn run_into_bytes<V: AsView>(&self, inputs: &[V], out: &mut [u8]) -> Result<(), Error> {
        // SAFETY: `out` is the caller's writable bytes.
        if unsafe { self.try_entry(inputs, &Expect::Bytes, out.as_mut_ptr(), out.len()) } {
            return Ok(());
        }
        self.run_raw(inputs, out, Expect::Bytes)
    }

    /// The fastest path: the fixed signature's entry, or the entry of the first layout
    /// specialized (a strided view's, a symbolic kernel's repeated shape). False when neither
    /// fits or the entry failed.
    ///
    /// # Safety
    /// `out` points to `len` writable bytes that nothing else reads or writes during the call.
    #[inline]
    unsafe fn try_entry<V: AsView>(
        &self,
        inputs: &[V],
        expect: &Expect<'_>,
        out: *mut u8,
        len: usize,
    ) -> bool {
        let s = &*self.shared;
        // SAFETY: each entry was compiled for its layout, in call order, binding nothing; `out`
        // is as the caller says.
        unsafe {
            if let (Some(entry), Runnable::Jit(jit)) = (&s.fixed_entry, &s.runnable)
                && entry.try_call(jit, inputs, expect, out, len, self.threads)
            {
                return true;
            }
            match s.specials.first() {
                Some(Special { entry: Some(entry), native: Some(native), .. }) => {
                    entry.try_call(native, inputs, expect, out, len, self.threads)
                }
                _ => false,
            }
        }
    }

    /// Checks `out` against the output of `dims`, runs, and explains a failure.
    #[inline]
    fn run_raw<V: AsView>(&self, inputs: &[V], out: &mut [u8], expect: Expect<'_>) -> Result<(), Error> {
        let s = &*self.shared;
        let few = s.in_order && (1..=FEW_INPUTS).contains(&inputs.len()) && inputs.len() == s.names.len();
        if let Some((dims, nbytes)) = &s.out_fixed {
            self.check_out(&expect, out.len(), dims, *nbytes)?;
        }
        // Safe Rust cannot lend an output that overlaps an input, but views made from raw
        // pointers (C, Python) can.
        let span = (out.as_ptr() as usize, out.as_ptr() as usize + out.len());
        if let Some(i) = input_reaching(inputs, None, span) {
            let name = s.names.get(i).cloned().unwrap_or_else(|| format!("{i}"));
            return Err(ViewError::Overlap(name).into());
        }
        if few
            && s.fixed_entry.is_none()
            && let Runnable::Jit(jit) = &s.runnable
            && inputs.iter().all(|v| v.as_view().is_contiguous())
        {
            if s.symbolic
                && let Some(special) = self.specialize_dense(inputs)
            {
                return self.run_special_checked(&special, inputs, out, &expect);
            }
            let n = inputs.len();
            let held: [Held<'_>; FEW_INPUTS] =
                std::array::from_fn(|i| Held::InPlace(inputs[i.min(n - 1)].as_view()));
            return self.run_dense(jit, &held[..n], inputs, out, &expect);
        }
        // A layout met before (a strided view, a repeated shape): its kernel, found without a
        // lock for the first one.
        if let Some(special) = s.specials.find(inputs) {
            return self.run_special_checked(&special, inputs, out, &expect);
        }
        match self.route_general(inputs)? {
            Route::Dense(jit, held) => self.run_dense(jit, &held, inputs, out, &expect),
            Route::Special(special) => self.run_special_checked(&special, inputs, out, &expect),
        }
    }

    /// The generic kernel on dense inputs in plan order.
    #[inline]
    fn run_dense<V: AsView>(
        &self,
        jit: &JitKernel,
        held: &[Held<'_>],
        inputs: &[V],
        out: &mut [u8],
        expect: &Expect<'_>,
    ) -> Result<(), Error> {
        if self.shared.out_fixed.is_some() {
            return jit.run_into_bytes(held, out, self.threads).map_err(|e| self.explain(e, inputs));
        }
        let len = out.len();
        let ran = jit.run_into_checked(held, out, self.threads, |dims| {
            let nbytes = Tensor::byte_size(self.output_dtype(), dims).unwrap_or(usize::MAX);
            self.check_out(expect, len, dims, nbytes)
        });
        ran.map_err(|e| self.explain(e, inputs))?
    }

    /// Any number of inputs, strided views, inputs out of plan order, the interpreter, and every
    /// signature error.
    #[cold]
    fn route_general<'v, V: AsView>(&'v self, inputs: &'v [V]) -> Result<Route<'v>, Error> {
        let s = &*self.shared;
        self.check_signature(inputs)?;
        let views: Vec<TensorView<'v>> = inputs.iter().map(|v| v.as_view()).collect();
        if let Some(special) = s.specials.find(inputs) {
            return Ok(Route::Special(special));
        }
        // A strided view the generic kernel reads needs a kernel of its layout; a mask read
        // only through its positions does not (they are derived from a packed copy, and a
        // layout's kernel would fold the mask's values in, a compile per mask).
        let plan = self.plan();
        let read = |c: usize| {
            (s.order.iter().enumerate()).any(|(i, &at)| at == c && !s.derived[i] && plan.reads_input(i))
        };
        let strided = views.iter().enumerate().any(|(c, v)| !v.is_contiguous() && read(c));
        // The interpreter and the GPU run the concrete plan of each layout.
        let per_layout = s.runnable.executor() != Executor::Jit;
        if (strided || per_layout)
            && let Some(special) = s.specials.get_or_compile(&self.specializing(), &views)?
        {
            return Ok(Route::Special(special));
        }
        let Runnable::Jit(jit) = &s.runnable else {
            // The interpreter or the GPU past the layouts kept: compiled for this call alone.
            return Ok(Route::Special(Arc::new(super::specialize::compile(&self.specializing(), &views)?)));
        };
        drop(views);
        // Each mask's positions once per call; a strided mask's dense copy stands in for it as
        // the plan input it declares and never reads (only its dims bind).
        let mut masks: Vec<(usize, MaskPositions)> = vec![];
        let mut mask = |c: usize| -> Result<MaskPositions, Error> {
            if let Some((_, m)) = masks.iter().find(|(at, _)| *at == c) {
                return Ok(m.clone());
            }
            let m = self.positions(inputs[c].as_view())?;
            masks.push((c, m.clone()));
            Ok(m)
        };
        let ordered = (s.order.iter().zip(&s.derived).enumerate())
            .map(|(i, (&c, &derived))| {
                let view = inputs[c].as_view();
                let masked = (s.order.iter().zip(&s.derived)).any(|(&at, &d)| d && at == c);
                let decl = &plan.inputs[i];
                match derived {
                    // A store's value cast to the target's dtype, per call (read in place
                    // when dense, else from a packed copy).
                    true if decl.cast_of().is_some() => {
                        let packed = match view.is_contiguous() {
                            true => None,
                            false => Some(view.to_tensor().map_err(RuntimeError::from)?),
                        };
                        let bytes = packed
                            .as_ref()
                            .map_or_else(|| view.dense_bytes().unwrap_or_default(), |t| t.bytes());
                        let how = decl.derived.as_ref().expect("a cast is derived");
                        let cast = crate::plan::derive(how, decl.dtype, view.dtype(), bytes, view.shape());
                        Ok(Held::Kept(Arc::new(cast.map_err(RuntimeError::from)?)))
                    }
                    true => Ok(Held::Kept(mask(c)?.positions)),
                    false if masked && !view.is_contiguous() && !plan.reads_input(i) => {
                        Ok(Held::Kept(mask(c)?.mask))
                    }
                    false => Held::of(view),
                }
            })
            .collect::<Result<Vec<_>, Error>>()?;
        Ok(Route::Dense(jit, ordered))
    }

    /// A mask's `nonzero()` for this call: the positions kept from a call with the same mask,
    /// or derived now (and kept in their place). A mask that comes back costs a comparison of
    /// its bytes, not the derivation (which writes 16 bytes per `True` of a 2-d mask). A strided
    /// mask is packed once, for both.
    fn positions(&self, mask: TensorView<'_>) -> Result<MaskPositions, Error> {
        let kept = &self.shared.positions;
        let packed = match mask.is_contiguous() {
            true => None,
            false => Some(mask.to_tensor().map_err(RuntimeError::from)?),
        };
        let dense = packed.as_ref().map_or_else(|| mask.reborrow(), TensorView::of);
        let same = |k: &&MaskPositions| super::specialize::holds(&dense, &k.mask);
        if let Some(k) = kept.lock().unwrap_or_else(|e| e.into_inner()).iter().find(same) {
            return Ok(k.clone());
        }
        // The mask's copy, kept to compare with the next calls'.
        let copy = match packed {
            Some(p) => p,
            None => mask.to_tensor().map_err(RuntimeError::from)?,
        };
        let positions = crate::plan::nonzero_of_bytes(copy.bytes(), mask.shape(), mask.dtype().width())
            .map_err(RuntimeError::from)?;
        let found = MaskPositions { mask: Arc::new(copy), positions: Arc::new(positions) };
        let mut kept = kept.lock().unwrap_or_else(|e| e.into_inner());
        // One kept per derived input: the newest replaces the oldest.
        if kept.len() >= self.shared.derived.iter().filter(|&&d| d).count() {
            kept.remove(0);
        }
        kept.push(found.clone());
        Ok(found)
    }
}

/// The first input, other than `skip`, that reaches a byte of `[first, end)`.
fn input_reaching<V: AsView>(
    inputs: &[V],
    skip: Option<usize>,
    (first, end): (usize, usize),
) -> Option<usize> {
    (inputs.iter().enumerate()).position(|(i, v)| {
        let (lo, hi) = v.as_view().byte_span();
        Some(i) != skip && lo < end && first < hi
    })
}

/// A mask met by a call (a dense copy) and its `nonzero()`, kept for the calls after it.
#[derive(Clone)]
struct MaskPositions {
    mask: Arc<Tensor>,
    positions: Arc<Tensor>,
}

/// The way one call runs.
enum Route<'v> {
    /// The generic kernel, on the inputs in plan order.
    Dense(&'v JitKernel, Vec<Held<'v>>),
    /// A kernel specialized for the call's layout, on the inputs in call order.
    Special(Arc<Special>),
}
