//! Prepared kernels: a program compiled once for fixed input signatures, run many times.

use super::strided::StridedKernels;
use super::view::{AsView, TensorView, ViewError};
use crate::backend::RuntimeError;
use crate::backend::aot;
use crate::backend::clif::STATUS_OK;
use crate::backend::jit::{self, JitKernel, KernelCache};
use crate::error::Error;
use crate::exec::{Executor, RunOptions, Runnable};
use crate::pipeline::Compiled;
use crate::sema::{InputTypes, InputValues};
use crate::types::{ShapeDisplay, TensorType};
use slc_runtime::{DType, Tensor};
use std::collections::BTreeMap;
use std::sync::Arc;

/// Input tables up to this long live on the stack.
const INLINE_INPUTS: usize = 8;

/// A program compiled for fixed input signatures; run it as often as needed.
///
/// Inputs are passed by position, in the order of the signatures given to
/// [`Kernel::prepare`]. Calls validate inputs with a few comparisons (dtype and shape), never
/// allocate for dense inputs, and are safe to make from many threads at once.
///
/// ```
/// use slc::{DType, Tensor, embed::{Kernel, TensorView}};
/// let k = Kernel::prepare("a[1:3, ::-1]", &[("a", "f32[4,5]".parse()?)])?;
/// assert_eq!((k.output_dtype(), k.output_shape()), (DType::F32, &[2usize, 5][..]));
/// let data: Vec<f32> = (0..20).map(|x| x as f32).collect();
/// let a = TensorView::from_slice(&[4, 5], &data)?;
/// let mut out = k.output_tensor()?;
/// k.run_into(&[&a], &mut out)?;
/// assert_eq!(out.bytes()[..4], 9.0f32.to_le_bytes());
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct Kernel {
    compiled: Compiled,
    src: String,
    names: Vec<String>,
    dtypes: Vec<DType>,
    shapes: Vec<Vec<usize>>,
    /// For each plan input, its position among the caller's inputs.
    order: Vec<usize>,
    out_shape: Vec<usize>,
    out_nbytes: usize,
    threads: usize,
    runnable: Runnable,
    /// Kernels compiled for strided views (JIT only), by layout.
    strided: Arc<StridedKernels>,
}

impl std::fmt::Debug for Kernel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Kernel({:?} on {:?}: {})",
            self.src,
            self.runnable.executor(),
            self.compiled.plan.to_string().trim_end()
        )
    }
}

fn dims(shape: &[i64]) -> Vec<usize> {
    shape.iter().map(|&d| d as usize).collect()
}

impl Kernel {
    /// Compiles `src` for inputs of the given names and types (in the order [`run`](Self::run)
    /// takes them) with the default options: the JIT, one thread per core for large outputs.
    ///
    /// Errors are the program's diagnostics ([`Error::render`] shows them against `src`).
    ///
    /// ```
    /// use slc::embed::Kernel;
    /// let err = Kernel::prepare("a[5]", &[("a", "f32[4]".parse()?)]).unwrap_err();
    /// assert_eq!(err.diagnostic().code, "E0102");
    /// assert!(err.render("a[5]").contains("out of bounds"));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn prepare(src: &str, inputs: &[(&str, TensorType)]) -> Result<Kernel, Error> {
        Kernel::prepare_with(src, inputs, &RunOptions::default())
    }

    /// As [`prepare`](Self::prepare), on the executor and with the threads of `options`.
    ///
    /// ```
    /// use slc::{Executor, RunOptions, embed::Kernel};
    /// let options = RunOptions { executor: Executor::Interpreter, ..RunOptions::default() };
    /// let k = Kernel::prepare_with("a[::-1]", &[("a", "u8[3]".parse()?)], &options)?;
    /// assert_eq!(k.executor(), Executor::Interpreter);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn prepare_with(
        src: &str,
        inputs: &[(&str, TensorType)],
        options: &RunOptions,
    ) -> Result<Kernel, Error> {
        Kernel::prepare_with_values(src, inputs, &InputValues::new(), options)
    }

    /// As [`prepare_with`](Self::prepare_with), where some inputs' values are known too
    /// (operator parameters such as `slice`'s starts, which shape the output). The kernel is
    /// only valid for those values: [`Compiled::read`] names the inputs whose values it read.
    pub fn prepare_with_values(
        src: &str,
        inputs: &[(&str, TensorType)],
        values: &InputValues,
        options: &RunOptions,
    ) -> Result<Kernel, Error> {
        let types: InputTypes = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
        let compiled = crate::compile_with_values(src, &types, values)?;
        let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
        let order = aot::input_order(&compiled.plan, &names).map_err(|e| match e {
            aot::AotError::DuplicateInput(name) => ViewError::DuplicateInput(name),
            other => ViewError::Signature(other.to_string()),
        })?;
        let signatures = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
        Kernel::from_compiled(compiled, src, signatures, order, options, None)
    }

    /// A kernel for `compiled` over `inputs` (names and types, in call order); its machine code
    /// comes from (and goes into) `cache` if given.
    pub(crate) fn from_compiled(
        compiled: Compiled,
        src: &str,
        inputs: Vec<(String, TensorType)>,
        order: Vec<usize>,
        options: &RunOptions,
        cache: Option<&KernelCache>,
    ) -> Result<Kernel, Error> {
        compiled.check_output_size(options)?;
        let out_shape = dims(&compiled.plan.shape);
        let out_nbytes = Tensor::byte_size(compiled.plan.dtype, &out_shape).ok_or_else(|| {
            RuntimeError::Alloc(slc_runtime::TensorError::TooLarge {
                shape: out_shape.clone(),
                dtype: compiled.plan.dtype,
                bytes: None,
            })
        })?;
        let plan = &compiled.plan;
        let runnable = Runnable::prepare(plan, &order, options.executor, cache)?;
        Ok(Kernel {
            src: src.to_string(),
            dtypes: inputs.iter().map(|(_, t)| t.dtype).collect(),
            shapes: inputs.iter().map(|(_, t)| dims(&t.shape)).collect(),
            names: inputs.into_iter().map(|(n, _)| n).collect(),
            order,
            out_shape,
            out_nbytes,
            threads: options.threads.max(1),
            runnable,
            strided: Arc::default(),
            compiled,
        })
    }

    /// The program text (to render errors against).
    pub fn source(&self) -> &str {
        &self.src
    }

    /// The compiled program: AST, checked tree, plan.
    pub fn compiled(&self) -> &Compiled {
        &self.compiled
    }

    /// The executor that runs the kernel.
    pub fn executor(&self) -> Executor {
        self.runnable.executor()
    }

    /// The input names and types, in call order.
    ///
    /// ```
    /// let k = slc::embed::Kernel::prepare("b", &[("a", "u8[1]".parse()?), ("b", "i8[2]".parse()?)])?;
    /// assert_eq!(k.inputs().map(|(n, _, _)| n).collect::<Vec<_>>(), ["a", "b"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn inputs(&self) -> impl Iterator<Item = (&str, DType, &[usize])> {
        self.names
            .iter()
            .zip(&self.dtypes)
            .zip(&self.shapes)
            .map(|((n, &d), s)| (n.as_str(), d, s.as_slice()))
    }

    /// The output's dtype.
    pub fn output_dtype(&self) -> DType {
        self.compiled.plan.dtype
    }

    /// The output's shape.
    pub fn output_shape(&self) -> &[usize] {
        &self.out_shape
    }

    /// The output's size in bytes (dense, C order).
    pub fn output_nbytes(&self) -> usize {
        self.out_nbytes
    }

    /// A zeroed tensor of the output's type, to [`run_into`](Self::run_into) repeatedly.
    pub fn output_tensor(&self) -> Result<Tensor, Error> {
        Ok(Tensor::zeros(self.output_dtype(), &self.out_shape).map_err(RuntimeError::from)?)
    }

    /// Sets the worker threads for large outputs (1: always the calling thread).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads.max(1);
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
        // Every back end writes every output element, so the buffer need not be zeroed first.
        let mut out =
            Tensor::for_overwrite(self.output_dtype(), &self.out_shape).map_err(RuntimeError::from)?;
        self.run_into(inputs, &mut out)?;
        Ok(out)
    }

    /// The threads a run splits its output across (1 on the interpreter and for small outputs).
    pub fn threads_used(&self) -> usize {
        match &self.runnable {
            Runnable::Jit(k) => k.workers(self.out_nbytes, self.threads),
            Runnable::Interpreter => 1,
        }
    }

    /// Runs the kernel into `out`, which must have the output's dtype and shape. For dense
    /// inputs this allocates nothing.
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
        if out.dtype() != self.compiled.plan.dtype || out.shape() != self.out_shape.as_slice() {
            return Err(self.output_mismatch(out.dtype(), out.shape()));
        }
        self.run_raw(inputs, out.as_mut_ptr())
    }

    /// Runs the kernel into a byte buffer of exactly [`output_nbytes`](Self::output_nbytes)
    /// bytes (dense, C order, little-endian elements).
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
        if out.len() != self.out_nbytes {
            return Err(ViewError::OutputLength { expected: self.out_nbytes, len: out.len() }.into());
        }
        self.run_raw(inputs, out.as_mut_ptr())
    }

    /// The fast path: compare dtypes and shapes, fill a pointer table on the stack, call.
    #[inline]
    fn run_raw<V: AsView>(&self, inputs: &[V], out: *mut u8) -> Result<(), Error> {
        let Runnable::Jit(native) = &self.runnable else {
            return self.run_interp(inputs, out);
        };
        let n = self.dtypes.len();
        if inputs.len() != n || n > INLINE_INPUTS {
            return self.run_general(native, inputs, out);
        }
        let mut table = [std::ptr::null::<u8>(); INLINE_INPUTS];
        let mut strided = false;
        for (i, input) in inputs.iter().enumerate() {
            let v = input.as_view();
            if v.dtype() != self.dtypes[i] || v.shape() != self.shapes[i].as_slice() {
                return self.run_general(native, inputs, out);
            }
            strided |= !v.is_contiguous();
            table[i] = v.as_ptr();
        }
        if strided {
            return match self.strided.find(inputs) {
                Some(kernel) => self.call(&kernel.native, &table[..n], out, inputs),
                None => self.run_general(native, inputs, out),
            };
        }
        self.call(native, &table[..n], out, inputs)
    }

    /// Any number of inputs, strided views, and every input error. A strided view is read in
    /// place by a kernel compiled for its layout ([`StridedKernels`]), or packed into a dense
    /// copy when the kernel keeps too many layouts already.
    #[cold]
    fn run_general<V: AsView>(&self, native: &JitKernel, inputs: &[V], out: *mut u8) -> Result<(), Error> {
        let views = self.check_inputs(inputs)?;
        if views.iter().any(|v| !v.is_contiguous())
            && let Some(strided) =
                self.strided.get_or_compile(&self.compiled, &self.names, &self.order, &views)?
        {
            let table: Vec<*const u8> = views.iter().map(|v| v.as_ptr()).collect();
            return self.call(&strided.native, &table, out, &views);
        }
        let packed = pack(&views)?;
        let table: Vec<*const u8> =
            views.iter().zip(&packed).map(|(v, p)| p.as_ref().map_or(v.as_ptr(), |t| t.as_ptr())).collect();
        self.call(native, &table, out, &views)
    }

    /// The plans compiled for strided views so far ([`Kernel::run`] on a view that is not dense
    /// reads it in place through a plan that declares its strides).
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
        self.strided.plans()
    }

    fn check_inputs<'v, V: AsView>(&self, inputs: &'v [V]) -> Result<Vec<TensorView<'v>>, Error> {
        if inputs.len() != self.dtypes.len() {
            return Err(RuntimeError::InputCount { expected: self.dtypes.len(), found: inputs.len() }.into());
        }
        let views: Vec<TensorView<'v>> = inputs.iter().map(|i| i.as_view()).collect();
        for (i, v) in views.iter().enumerate() {
            if v.dtype() != self.dtypes[i] || v.shape() != self.shapes[i].as_slice() {
                let show = |d: DType, s: &[usize]| {
                    let s: Vec<i64> = s.iter().map(|&x| x as i64).collect();
                    format!("{d}{}", ShapeDisplay(&s))
                };
                return Err(RuntimeError::InputMismatch {
                    name: self.names[i].clone(),
                    expected: show(self.dtypes[i], &self.shapes[i]),
                    found: show(v.dtype(), v.shape()),
                }
                .into());
            }
        }
        Ok(views)
    }

    /// Calls `native` (this kernel's, or the one compiled for the inputs' layout) on `table`,
    /// which holds element `[0, ..., 0]` of each of `inputs`.
    #[inline]
    fn call<V: AsView>(
        &self,
        native: &JitKernel,
        table: &[*const u8],
        out: *mut u8,
        inputs: &[V],
    ) -> Result<(), Error> {
        // SAFETY: the table holds one readable input of the declared dtype, shape and layout per
        // slot (checked by the callers; a view reaches only readable elements), and `out` has
        // `out_nbytes` writable bytes.
        match unsafe { native.call(table, out, self.out_nbytes, self.threads) } {
            STATUS_OK => Ok(()),
            s => Err(self.failure(s, inputs)),
        }
    }

    /// A kernel status other than OK, as the error the interpreter reports for the same inputs
    /// (it names the offending value and points at the index expression).
    #[cold]
    fn failure<V: AsView>(&self, status: i32, inputs: &[V]) -> Error {
        let fallback = jit::status_error(status);
        let mut tensors = BTreeMap::new();
        for (name, input) in self.names.iter().zip(inputs) {
            match input.as_view().to_tensor() {
                Ok(t) => tensors.insert(name.clone(), t),
                Err(_) => return fallback.into(),
            };
        }
        match self.compiled.run_with(&tensors, &RunOptions::interpreter(), &Default::default()) {
            Err(e) => e,
            Ok(_) => fallback.into(),
        }
    }

    /// The interpreter: inputs are copied into tensors, the result out of one.
    fn run_interp<V: AsView>(&self, inputs: &[V], out: *mut u8) -> Result<(), Error> {
        let views = self.check_inputs(inputs)?;
        let mut tensors = BTreeMap::new();
        for &i in &self.order {
            let t = views[i].to_tensor().map_err(RuntimeError::from)?;
            tensors.insert(self.names[i].clone(), t);
        }
        let result = self.compiled.run_with(&tensors, &RunOptions::interpreter(), &Default::default())?;
        // SAFETY: `out` has `out_nbytes` writable bytes, the result's size.
        unsafe { std::ptr::copy_nonoverlapping(result.as_ptr(), out, self.out_nbytes) };
        Ok(())
    }

    #[cold]
    fn output_mismatch(&self, dtype: DType, shape: &[usize]) -> Error {
        let s: Vec<i64> = shape.iter().map(|&x| x as i64).collect();
        RuntimeError::InputMismatch {
            name: "the output".into(),
            expected: format!("{}{}", self.compiled.plan.dtype, ShapeDisplay(&self.compiled.plan.shape)),
            found: format!("{dtype}{}", ShapeDisplay(&s)),
        }
        .into()
    }
}

/// Dense copies of the views that are not dense.
fn pack(views: &[TensorView<'_>]) -> Result<Vec<Option<Tensor>>, Error> {
    views
        .iter()
        .map(|v| if v.is_contiguous() { Ok(None) } else { v.to_tensor().map(Some) })
        .collect::<Result<_, _>>()
        .map_err(|e| RuntimeError::from(e).into())
}
