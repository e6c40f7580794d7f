//! How the REPL runs a plan, and the Zarr arrays it binds lazily (`:load a=data.zarr`, `slc repl
//! -i a=data.zarr`; docs/zarr.md, "The REPL").
//!
//! Binding a Zarr array reads its metadata only: checking, `:plan` and completion know its dtype
//! and shape. Each run of a plan that reads it decodes the box holding the chunks that plan
//! reads, and runs the plan rebased onto the box, as `slc eval` does ([`zarr::read_zarrs`]):
//! the programs to come are not known when the array is bound, so no run reads more than its
//! own plan touches. Nothing decoded is kept: a binding stays lazy until something rebinds it
//! (a store `a[i] = v` reads the array whole, and `a` becomes the stored tensor).

use super::{Fail, Planned, Repl};
use crate::diag::Diagnostic;
use crate::exec::{self, Runnable};
use crate::plan::{Plan, VerifiedPlan};
use crate::sema::value_may_be_read;
use crate::source::Span;
use crate::zarr::{self, ChunkCount, PendingZarr, ReadZarrs};
use slc_runtime::Tensor;
use std::borrow::Cow;
use std::time::{Duration, Instant};

/// A Zarr array bound to a name: open, its data not read.
pub(crate) struct LazyZarr {
    pub zarr: PendingZarr,
    /// The path it was bound from, as given.
    pub path: String,
}

/// What one run of a plan reads of the lazy Zarr arrays: the boxes decoded (and the plan
/// rebased onto them), how many chunks of each, and how long it took.
pub(crate) struct Read {
    pub zarrs: ReadZarrs,
    pub took: Duration,
}

impl Read {
    /// The plan to run: the rebased one, if there is one.
    pub fn plan<'p>(&'p self, planned: &'p Planned) -> &'p VerifiedPlan {
        self.zarrs.plan.as_ref().unwrap_or(&planned.plan)
    }
}

impl Repl {
    /// Binds `name` to the Zarr array `zarr`, read from `path`; what `:load` prints of it. Arrays
    /// whose values checking may read (masks, small integer arrays: operator parameters) are
    /// read whole now, as `slc eval` reads them before checking; the others lazily.
    pub fn bind_zarr(&mut self, name: &str, zarr: PendingZarr, path: &str) -> Result<String, String> {
        let numel = zarr.shape().iter().product();
        let ty = super::type_of_parts(zarr.dtype(), zarr.shape());
        if value_may_be_read(zarr.dtype(), numel) {
            // A mask as large as memory is refused as a result that large would be.
            exec::check_output(zarr.data_bytes(), self.options.max_output_bytes, None)
                .map_err(|e| e.to_string())?;
            let tensor = zarr.read_all()?;
            self.bind(name, tensor);
            return Ok(format!("{name}: {ty} (from '{path}')"));
        }
        self.tensors.remove(name);
        self.ints.remove(name);
        self.zarrs.insert(name.to_string(), LazyZarr { zarr, path: path.to_string() });
        Ok(format!("{name}: {ty} (from '{path}', a Zarr array: each evaluation reads the chunks it needs)"))
    }

    /// [`bind_zarr`](Self::bind_zarr) for an input of a script (`slc run -i`), which the
    /// script may not rebind ([`Repl::fix_input`]).
    pub fn fix_zarr_input(&mut self, name: &str, zarr: PendingZarr, path: &str) -> Result<(), String> {
        self.bind_zarr(name, zarr, path)?;
        self.fixed_inputs.insert(name.to_string());
        Ok(())
    }

    /// Reads, of the lazy Zarr arrays `planned` reads, the boxes it reads.
    pub(crate) fn read_lazy(&self, planned: &Planned) -> Result<Read, Fail> {
        let started = Instant::now();
        let lazy: Vec<(String, &PendingZarr)> = planned
            .plan
            .inputs
            .iter()
            .filter_map(|i| self.zarrs.get(&i.name).map(|z| (i.name.clone(), &z.zarr)))
            .collect();
        let zarrs = if lazy.is_empty() {
            ReadZarrs { tensors: Default::default(), chunks: vec![], plan: None }
        } else {
            // The bound tensors are known: index arrays among them narrow a gather's chunks.
            zarr::read_zarrs(&planned.plan, lazy, &[&self.tensors])
                .map_err(|(name, e)| self.read_error(&name, e, planned.checked.span))?
        };
        Ok(Read { zarrs, took: started.elapsed() })
    }

    /// Runs a plan on the chosen executor, over the bound tensors and the boxes of the lazy
    /// Zarr arrays it reads; a failed index check points at its expression.
    pub(crate) fn run(&self, planned: &Planned) -> Result<Tensor, Fail> {
        self.check_output(planned)?;
        let read = self.read_lazy(planned)?;
        self.run_read(planned, &read)
    }

    /// Refuses a result larger than a run may make: before any chunk is read.
    pub(crate) fn check_output(&self, planned: &Planned) -> Result<(), Fail> {
        let bytes = planned.plan.output_bytes();
        Ok(exec::check_output(bytes, self.options.max_output_bytes, Some(planned.checked.span))?)
    }

    /// Runs `planned` (its output's size checked) over what [`read_lazy`](Self::read_lazy)
    /// read for it.
    pub(crate) fn run_read(&self, planned: &Planned, read: &Read) -> Result<Tensor, Fail> {
        let plan = read.plan(planned);
        let args = self.plan_inputs(plan, read)?;
        let args: Vec<&Tensor> = args.iter().map(|a| &**a).collect();
        Ok(self.runnable(plan)?.run(plan, &args, self.options.threads)?)
    }

    /// The tensors a plan reads, in its input order: the boxes read for it, the bound tensors,
    /// and the positions of a large mask derived from it ([`crate::plan::input_tensors`]).
    pub(crate) fn plan_inputs<'t>(
        &'t self,
        plan: &Plan,
        read: &'t Read,
    ) -> Result<Vec<Cow<'t, Tensor>>, Fail> {
        let boxes = &read.zarrs.tensors;
        let given = |name: &str| boxes.get(name).or_else(|| self.tensors.get(name));
        crate::plan::input_tensors(&plan.inputs, &given)
            .map_err(|e| crate::backend::RuntimeError::from(e).into())
    }

    /// The plan made runnable on the chosen executor (its kernel from the REPL's cache).
    pub(crate) fn runnable(&self, plan: &VerifiedPlan) -> Result<Runnable, Fail> {
        Ok(Runnable::prepare_in_plan_order(plan, self.options.executor, Some(&self.cache))?)
    }

    /// The lazy Zarr array bound to `name` read whole (`:save`), within the size a result may
    /// have; `None` if `name` is no lazy array.
    pub(crate) fn read_whole(&self, name: &str, span: Span) -> Option<Result<Tensor, Fail>> {
        let lazy = self.zarrs.get(name)?;
        let read = exec::check_output(lazy.zarr.data_bytes(), self.options.max_output_bytes, Some(span))
            .map_err(Fail::from)
            .and_then(|()| lazy.zarr.read_all().map_err(|e| self.read_error(name, e, span)));
        Some(read)
    }

    /// For each lazy Zarr array `plan` reads, how many of its chunks a run decodes: the lines
    /// `:show` ends with, as `slc show` does.
    pub(crate) fn chunk_summary(&self, plan: &Plan, span: Span) -> Result<String, Fail> {
        let mut lines = String::new();
        for input in &plan.inputs {
            if let Some(lazy) = self.zarrs.get(&input.name) {
                let count = ChunkCount::of(plan, &input.name, &lazy.zarr, &[&self.tensors])
                    .map_err(|e| self.read_error(&input.name, e, span))?;
                lines.push_str(&count.sentence());
                lines.push('\n');
            }
        }
        Ok(lines)
    }

    /// An error reading the lazy array `name`: the store and, for a chunk, its key.
    fn read_error(&self, name: &str, e: String, span: Span) -> Fail {
        Fail::runtime(Diagnostic::error("E0503", format!("`{name}`: {e}")).label(span, "reads this"))
    }
}
