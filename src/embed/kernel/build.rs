//! Making a kernel: the front end for the declared signatures (fixed, symbolic, or a run-time
//! slice bound that makes a fixed signature generic), the plan verified, and its runnable.

use super::*;

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
    pub fn prepare(src: &str, inputs: &[(&str, SymTensorType)]) -> Result<Kernel, Error> {
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
        inputs: &[(&str, SymTensorType)],
        options: &RunOptions,
    ) -> Result<Kernel, Error> {
        Kernel::prepare_with_values(src, inputs, &InputValues::new(), options)
    }

    /// As [`prepare_with`](Self::prepare_with), where some inputs' values are known too
    /// (operator parameters such as `slice`'s starts, boolean masks). With fixed shapes the
    /// kernel is only valid for those values ([`Compiled::read`] names the inputs whose values
    /// it read); with symbolic dims, parameters are read per call instead.
    pub fn prepare_with_values(
        src: &str,
        inputs: &[(&str, SymTensorType)],
        values: &InputValues,
        options: &RunOptions,
    ) -> Result<Kernel, Error> {
        let concrete: Option<InputTypes> =
            inputs.iter().map(|(n, t)| Some((n.to_string(), t.concrete()?))).collect();
        let generic = || {
            let types: SymInputTypes = inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect();
            compile_generic_with(src, &types, values)
        };
        // A large mask's positions are derived per call by a generic kernel over these fixed
        // types (the same kernel then serves every mask); the fixed pipeline folds them.
        let run_time_mask = || match concrete.is_some() && crate::sema::holds_large_mask(values) {
            true => generic().ok(),
            false => None,
        };
        let (program, fixed) = match concrete {
            _ if let Some(program) = run_time_mask() => (program, None),
            Some(types) => match compile_with_values(src, &types, values) {
                Ok(compiled) => {
                    compiled.check_output_size(options)?;
                    (Kernel::lifted(&compiled), Some(Arc::new(compiled)))
                }
                // A 0-d integer input without a value may be a run-time slice bound (`a[:k]`,
                // taken per call), which only the generic check admits; its errors are the
                // fixed check's otherwise.
                Err(e) => {
                    let scalar = |(n, t): &&(&str, SymTensorType)| {
                        t.shape.is_empty() && t.dtype.is_integer() && !values.contains_key(*n)
                    };
                    match inputs.iter().any(|i| scalar(&i)).then(generic) {
                        Some(Ok(program)) => (program, None),
                        _ => return Err(e),
                    }
                }
            },
            None => (generic()?, None),
        };
        Kernel::from_program(src, inputs, program, fixed, options, None)
    }

    /// A concrete product as a generic one whose integers are constants.
    pub(crate) fn lifted(compiled: &Compiled) -> CompiledGeneric {
        // Cloning and lifting recurse once per level of the program.
        crate::limits::with_stack_for(compiled.checked.depth, || CompiledGeneric {
            ast: compiled.ast.clone(),
            checked: compiled.checked.clone(),
            plan: compiled.plan.generic(),
            read: compiled.read.clone(),
        })
    }

    /// A kernel for the front end's product `program` over `inputs` (call order); `fixed` is
    /// the concrete product when every declared dim is a constant. Machine code comes from (and
    /// goes into) `cache` if given.
    pub(crate) fn from_program(
        src: &str,
        inputs: &[(&str, SymTensorType)],
        program: CompiledGeneric,
        fixed: Option<Arc<Compiled>>,
        options: &RunOptions,
        cache: Option<&jit::KernelCache>,
    ) -> Result<Kernel, Error> {
        // Verification, scheduling and code generation recurse once per level of the program.
        crate::limits::with_stack_for(program.checked.depth, move || {
            let plan = match &fixed {
                // Verified already: its addresses are proven for these constants.
                Some(compiled) => compiled.plan.lift(),
                None => crate::plan::verify_generic(program.plan.clone())?,
            };
            let names: Vec<&str> = inputs.iter().map(|(n, _)| *n).collect();
            let order = crate::backend::aot::input_order(&plan, &names).map_err(|e| match e {
                crate::backend::aot::AotError::DuplicateInput(name) => ViewError::DuplicateInput(name),
                other => ViewError::Signature(other.to_string()),
            })?;
            let derived: Vec<bool> = plan.inputs.iter().map(|d| d.derived.is_some()).collect();
            let out_fixed = match &fixed {
                Some(c) => {
                    let dims: Vec<usize> = c.plan.shape.iter().map(|&d| d as usize).collect();
                    let nbytes = Tensor::byte_size(c.plan.dtype, &dims).ok_or_else(|| {
                        RuntimeError::Alloc(slc_runtime::TensorError::TooLarge {
                            shape: dims.clone(),
                            dtype: c.plan.dtype,
                            bytes: None,
                        })
                    })?;
                    Some((dims, nbytes))
                }
                None => None,
            };
            // Compiled for inputs in plan order: calls hand it the inputs it reads, in that order.
            let runnable = Runnable::prepare(&plan, &jit::plan_order(&plan), options.executor, cache)?;
            let in_order = order.len() == inputs.len()
                && !derived.contains(&true)
                && order.iter().enumerate().all(|(i, &o)| i == o);
            let symbolic = !plan.symbols().is_empty();
            let binds = matches!(&runnable, Runnable::Jit(jit) if jit.binds());
            let fixed_entry = match (&fixed, &out_fixed) {
                (Some(c), Some((out_dims, _)))
                    if in_order && !binds && !plan.inputs.iter().any(|d| d.strides.is_some()) =>
                {
                    let dims = |t: &SymTensorType| -> Option<Vec<usize>> {
                        t.concrete_shape()?.iter().map(|&d| usize::try_from(d).ok()).collect()
                    };
                    let signature: Option<Vec<_>> =
                        inputs.iter().map(|(_, t)| Some((t.dtype, dims(t)?, None))).collect();
                    signature.and_then(|sig| LayoutEntry::new(&sig, c.plan.dtype, out_dims.clone()))
                }
                _ => None,
            };
            let shared = Shared {
                src: src.to_string(),
                names: names.iter().map(|n| n.to_string()).collect(),
                types: inputs.iter().map(|(_, t)| t.clone()).collect(),
                executor: options.executor,
                max_output_bytes: options.max_output_bytes,
                program,
                plan,
                fixed,
                out_fixed,
                fixed_entry,
                order,
                derived,
                in_order,
                symbolic,
                runnable,
                specials: Specials::default(),
                through_view: Specials::default(),
                device: Default::default(),
                positions: Default::default(),
                buffered: Default::default(),
            };
            Ok(Kernel { shared: Arc::new(shared), threads: options.threads.max(1) })
        })
    }
}
