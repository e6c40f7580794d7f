//! The embeddable entry point: bind tensors by name, then compile or evaluate programs.

use crate::backend::RuntimeError;
use crate::backend::jit::KernelCache;
use crate::embed::programs::{Program, ProgramCache};
use crate::embed::{Kernel, TensorView};
use crate::error::Error;
use crate::exec::{Executor, RunOptions};
use crate::limits::MAX_RANK;
use crate::pipeline::{Compiled, compile_with_values};
use crate::sema::{InputTypes, is_large_mask, value_may_be_read};
use crate::types::{SymTensorType, TensorType};
use slc_runtime::Tensor;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where an [`eval`](Session::eval_timed) spent its time.
#[derive(Debug, Clone, Copy)]
pub struct EvalTimes {
    /// Front end and code generation, or finding the program kept from an earlier eval.
    pub compile: std::time::Duration,
    /// Whether the program was kept from an earlier eval.
    pub cache_hit: bool,
    /// The kernel, index checks included.
    pub run: std::time::Duration,
    /// The threads the run split its output across.
    pub threads: usize,
}

/// Named tensors and the programs evaluated over them.
///
/// Tensors are bound owned ([`bind`](Self::bind)) or as views borrowing the caller's memory for
/// `'a` ([`bind_view`](Self::bind_view): no copy). [`eval`](Self::eval) keeps what it compiles:
/// evaluating a text again, with its inputs of the same types (and its operator parameters of the
/// same values), runs the kernel built the first time without parsing; texts that lower to the
/// same plan share machine code. [`prepare`](Self::prepare) compiles a program once for given
/// input signatures, into a [`Kernel`] to run many times.
///
/// **Shapes that change.** The first eval of a text compiles a kernel specialized to the
/// bound shapes (the fastest code, and a program evaluated once pays nothing for generality).
/// When the text comes back with other shapes (same dtypes and ranks), the JIT compiles one
/// *shape-generic* kernel for it, which then serves every shape: a program evaluated over a
/// thousand shapes compiles twice ([`compiles`](Self::compiles)). Its operator parameters read
/// from bound tensors become run-time values. Both are the one [`Kernel`] type (its errors read
/// as a fixed-shape compile reports them); a text the generic pipeline does not take keeps a
/// kernel per set of shapes.
///
/// ```
/// use slc::{DType, Session, Tensor};
/// let mut s = Session::new();
/// for n in 1..100 {
///     s.bind("a", Tensor::zeros(DType::F32, &[n, 3]).unwrap());
///     assert_eq!(s.eval("a[1:, ::-1]").unwrap().shape(), &[n - 1, 3]);
/// }
/// assert_eq!(s.compiles(), 2);
/// ```
///
/// ```
/// use slc::{DType, Session, Tensor};
/// let mut s = Session::new();
/// s.bind("a", Tensor::from_i64s(DType::I64, &[2, 3], &[0, 1, 2, 3, 4, 5]).unwrap());
/// let t = s.eval("a[::-1, 1]").unwrap();
/// assert_eq!(t.shape(), &[2]);
/// assert_eq!((t.int_at(0), t.int_at(1)), (Some(4), Some(1)));
/// ```
#[derive(Default)]
pub struct Session<'a> {
    tensors: crate::sema::InputValues,
    /// Borrowed bindings; a name is bound in `tensors` or here, never both.
    views: BTreeMap<String, TensorView<'a>>,
    options: RunOptions,
    programs: ProgramCache,
}

impl<'a> Session<'a> {
    pub fn new() -> Session<'a> {
        Session::default()
    }

    /// A session that runs plans on `executor`.
    pub fn with_executor(executor: Executor) -> Session<'a> {
        let mut s = Session::default();
        s.options.executor = executor;
        s
    }

    /// The run options; kernels built for the old ones are dropped.
    pub fn options_mut(&mut self) -> &mut RunOptions {
        self.programs.forget_programs();
        &mut self.options
    }

    /// Kernels this session has compiled, specialized and generic (machine code found in its
    /// cache is not compiled again).
    pub fn compiles(&self) -> usize {
        self.programs.kernels().compiles()
    }

    /// Machine code kept for the programs evaluated so far (one per distinct plan).
    pub fn cached_kernels(&self) -> usize {
        self.programs.kernels().len()
    }

    /// Binds (or rebinds) `name` to a tensor.
    pub fn bind(&mut self, name: &str, tensor: Tensor) {
        self.views.remove(name);
        self.tensors.insert(name.to_string(), tensor);
    }

    /// Binds (or rebinds) `name` to a view of the caller's memory, without copying it.
    ///
    /// ```
    /// use slc::{Session, embed::TensorView};
    /// let pixels = vec![0u8; 4 * 6 * 3];
    /// let mut s = Session::new();
    /// s.bind_view("img", TensorView::from_slice(&[4, 6, 3], &pixels)?);
    /// assert_eq!(s.eval("img[::2, ::-1, 0]")?.shape(), &[2, 6]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn bind_view(&mut self, name: &str, view: TensorView<'a>) {
        self.tensors.remove(name);
        self.views.insert(name.to_string(), view);
    }

    /// The view bound to `name` (tensors bound with [`bind`](Self::bind) included).
    pub fn get_view(&self, name: &str) -> Option<TensorView<'_>> {
        match self.tensors.get(name) {
            Some(t) => Some(TensorView::of(t)),
            None => self.views.get(name).map(TensorView::reborrow),
        }
    }

    /// Compiles `src` for inputs of the given names and types (in the order the kernel takes
    /// them), for this session's executor and threads. Bound tensors play no part. Dims may be
    /// symbols (`f32[N, M]`): one kernel for inputs of any conforming shapes.
    ///
    /// ```
    /// use slc::{Session, Tensor, DType};
    /// let k = Session::new().prepare("a[1:3, ::-1]", &[("a", "f32[4,5]".parse()?)])?;
    /// let a = Tensor::zeros(DType::F32, &[4, 5])?;
    /// assert_eq!(k.run(&[&a])?.shape(), &[2, 5]);
    /// let k = Session::new().prepare("a[1:3, ::-1]", &[("a", "f32[N, M]".parse()?)])?;
    /// let a = Tensor::zeros(DType::F32, &[6, 2])?;
    /// assert_eq!(k.run(&[&a])?.shape(), &[2, 2]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn prepare(&self, src: &str, inputs: &[(&str, SymTensorType)]) -> Result<Kernel, Error> {
        Kernel::prepare_with(src, inputs, &self.options)
    }

    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.tensors.get(name)
    }

    /// The types of the bound tensors.
    pub fn input_types(&self) -> InputTypes {
        let views = self.views.iter().map(|(name, v)| (name, v.dtype(), v.shape()));
        self.tensors
            .iter()
            .map(|(name, t)| (name, t.dtype(), t.shape()))
            .chain(views)
            .map(|(name, dtype, shape)| (name.clone(), TensorType::of(dtype, shape)))
            .collect()
    }

    pub fn compile(&self, src: &str) -> Result<Compiled, Error> {
        if self.views.is_empty() {
            return compile_with_values(src, &self.input_types(), &self.tensors);
        }
        // Operator parameters and masks may come from bound tensors, views included: copy the
        // ones the checker may read into its values.
        let mut values = crate::sema::InputValues::new();
        for (name, t) in &self.tensors {
            if value_may_be_read(t.dtype(), t.numel()) {
                values.insert(name.clone(), t.clone());
            }
        }
        for (name, v) in &self.views {
            if value_may_be_read(v.dtype(), v.numel()) {
                values.insert(name.clone(), v.to_tensor().map_err(RuntimeError::from)?);
            }
        }
        compile_with_values(src, &self.input_types(), &values)
    }

    /// Evaluates a program; its last statement is the result. Takes `&self`: threads sharing a
    /// session evaluate at once, and share its compiled kernels.
    pub fn eval(&self, src: &str) -> Result<Tensor, Error> {
        self.eval_timed(src).map(|(t, _)| t)
    }

    /// As [`eval`](Self::eval), and says where the time went (`slc eval --time`).
    pub fn eval_timed(&self, src: &str) -> Result<(Tensor, EvalTimes), Error> {
        let start = std::time::Instant::now();
        let (program, cache_hit) = self.program(src)?;
        let compiled = start.elapsed();
        let result = program.run(|name| self.get_view(name), &self.options)?;
        let run = start.elapsed() - compiled;
        let threads = program.kernel().threads_used(result.shape());
        Ok((result, EvalTimes { compile: compiled, cache_hit, run, threads }))
    }

    /// The program for `src` over the current bindings, and whether it was kept from an earlier
    /// eval. The first eval of a text builds a kernel for the bound shapes; when the text comes
    /// back with others, one shape-generic kernel (where the generic pipeline takes the text).
    fn program(&self, src: &str) -> Result<(Arc<Program>, bool), Error> {
        let view_of = |name: &str| self.get_view(name);
        if let Some(program) = self.programs.find(src, &view_of) {
            return Ok((program, true));
        }
        // A large mask's positions are derived per call by the generic kernel, which then
        // serves every mask; the fixed pipeline would fold them into the plan.
        let generalize = self.programs.may_generalize(src)
            || (self.binds_large_mask() && !self.programs.refuses_generic(src));
        if self.options.executor == Executor::Jit && generalize {
            match self.build_generic(src) {
                Some(program) => return Ok((self.programs.insert(src, program?), false)),
                None => self.programs.refuse_generic(src),
            }
        }
        Ok((self.programs.insert(src, self.build(src)?), false))
    }

    /// Whether a bound mask is too large to fold into a fixed plan ([`crate::sema::MASK_FOLD_MAX`]).
    fn binds_large_mask(&self) -> bool {
        self.tensors.values().any(|t| is_large_mask(t.dtype(), t.numel()))
            || self.views.values().any(|v| is_large_mask(v.dtype(), v.numel()))
    }

    /// A kernel for `src` over the bound inputs' dtypes and ranks, every dim a symbol — or,
    /// when that fails, with the lengths of small 1-d integer tensors kept (operator parameters
    /// such as `slice`'s starts must have a known length; their values stay run-time). `None`
    /// when the generic pipeline takes it neither way.
    fn build_generic(&self, src: &str) -> Option<Result<Program, Error>> {
        let attempt = |keep_parameter_lengths: bool| {
            let types: crate::sema::SymInputTypes = self
                .input_types()
                .into_iter()
                .map(|(name, ty)| {
                    let parameter =
                        ty.dtype.is_integer() && ty.shape.len() == 1 && ty.shape[0] <= MAX_RANK as i64;
                    let ty = match keep_parameter_lengths && parameter {
                        true => ty.generic(),
                        false => ty.symbolic(&name),
                    };
                    (name, ty)
                })
                .collect();
            let compiled = crate::pipeline::compile_generic(src, &types).ok()?;
            crate::plan::verify_generic(compiled.plan.clone()).ok()?;
            Some((compiled, types))
        };
        let (compiled, types) = attempt(false).or_else(|| attempt(true))?;
        // The kernel takes the inputs the plan reads, in plan order; for an input the plan
        // derives (a mask's `nonzero()`, a cast value), the one it derives from.
        let mut inputs: Vec<(String, SymTensorType)> = vec![];
        for d in &compiled.plan.inputs {
            let name = d.given_name();
            if !inputs.iter().any(|(n, _)| n == name) {
                inputs.push((name.to_string(), types.get(name)?.clone()));
            }
        }
        let inputs: Vec<(&str, SymTensorType)> =
            inputs.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
        let kernel =
            Kernel::from_program(src, &inputs, compiled, None, &self.options, Some(self.programs.kernels()));
        Some(kernel.and_then(|k| Program::new(k, None, [], |name| self.get_view(name))))
    }

    /// Compiles `src` into a kernel for the bound inputs it reads (in plan order), specialized
    /// to their shapes and to the values of the parameters it read.
    fn build(&self, src: &str) -> Result<Program, Error> {
        let compiled = self.compile(src)?;
        compiled.check_output_size(&self.options)?;
        let read = compiled.read.clone();
        // The inputs the caller gives: a derived one (a cast value) is made from its source's.
        let inputs: Vec<(String, SymTensorType)> = (compiled.plan.inputs.iter())
            .filter(|d| d.derived.is_none())
            .map(|d| (d.name.clone(), TensorType { dtype: d.dtype, shape: d.shape.clone() }.generic()))
            .collect();
        let inputs: Vec<(&str, SymTensorType)> =
            inputs.iter().map(|(n, t)| (n.as_str(), t.clone())).collect();
        let program = Kernel::lifted(&compiled);
        let kernel = Kernel::from_program(
            src,
            &inputs,
            program,
            Some(Arc::new(compiled)),
            &self.options,
            Some(self.programs.kernels()),
        )?;
        Program::new(kernel, Some(&read.types), &read.values, |name| self.get_view(name))
    }
}

// Sessions, kernels, their cache and errors are shared across threads: keep them so.
const _: () = {
    const fn shared<T: Send + Sync>() {}
    shared::<Session<'static>>();
    shared::<Compiled>();
    shared::<KernelCache>();
    shared::<crate::Kernel>();
    shared::<crate::TensorView<'static>>();
    shared::<Tensor>();
    shared::<Error>();
};
