//! What `slc compile` emits, chosen by [`Target`]: the verified plan for slc's CPU back ends, or
//! DirectML descriptors. A DirectML refusal points into the program's text: the back end sees
//! only the plan, so the refused gather is found again in the checked program here.

use crate::backend::dml::{DmlError, DmlGraph, DmlOptions, OobRefusal, lower};
use crate::error::Error;
use crate::pipeline::Compiled;
use crate::plan::VerifiedPlan;
use crate::sema::{TExpr, TExprKind};
use crate::source::Span;
use crate::types::OobMode;
use crate::types::sym::SymExpr;

/// Where a compiled program runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Target {
    /// slc's own CPU back ends (interpreter, JIT, ahead-of-time kernels): the verified plan.
    #[default]
    Cpu,
    /// DirectML operator descriptors at the given options' feature level.
    DirectMl(DmlOptions),
}

/// What [`Target::compile`] produces.
#[derive(Debug, Clone)]
pub enum Artifact {
    /// The verified plan, for the CPU back ends.
    Cpu(Box<Compiled>),
    /// The DirectML graph (see [`DmlGraph::to_json`], [`DmlGraph::to_c`]).
    DirectMl(Box<DmlGraph>),
}

impl Target {
    /// Takes a program [`crate::compile`] parsed, checked, lowered and verified to this target.
    /// A DirectML refusal points into the program's text.
    ///
    /// ```
    /// use slc::{sema::InputTypes, types::TensorType};
    /// use slc::{Artifact, DType, Target};
    /// let mut types = InputTypes::new();
    /// types.insert("a".into(), TensorType { dtype: DType::F32, shape: vec![3, 4] });
    /// let compiled = slc::compile("a[1:, ::-1]", &types).unwrap();
    /// let Artifact::DirectMl(graph) = Target::DirectMl(Default::default()).compile(compiled).unwrap()
    /// else { unreachable!() };
    /// assert!(graph.to_json().contains("DML_OPERATOR_SLICE1"));
    /// ```
    pub fn compile(&self, compiled: Compiled) -> Result<Artifact, Error> {
        match self {
            Target::Cpu => Ok(Artifact::Cpu(Box::new(compiled))),
            Target::DirectMl(opts) => Ok(Artifact::DirectMl(Box::new(lower_program(&compiled, opts)?))),
        }
    }
}

/// Lowers a compiled program to DirectML; a refused gather points at its call in the text.
pub fn lower_program(compiled: &Compiled, opts: &DmlOptions) -> Result<DmlGraph, DmlError> {
    lower_located(&compiled.plan, &compiled.checked, opts)
}

/// Lowers `plan`, lowered from `checked`, to DirectML; a refused gather points at its call.
pub fn lower_located(plan: &VerifiedPlan, checked: &TExpr, opts: &DmlOptions) -> Result<DmlGraph, DmlError> {
    lower(plan, opts).map_err(|e| locate(e, checked))
}

/// Points a refused gather at its place in `checked`, the program the plan was lowered from:
/// the first gather, in evaluation order, with the refused mode and the refused kind of
/// indices. Other errors are returned unchanged.
fn locate(e: DmlError, checked: &TExpr) -> DmlError {
    match e {
        DmlError::OobPolicy { mode, refusal, at: None } => {
            // The walk recurses once per level, like the stages that built `checked`.
            let at = crate::limits::with_stack_for(checked.depth, || {
                find_gather(checked, &|data, indices, axis, m| {
                    m == mode && fits(&refusal, data, indices, axis)
                })
                .or_else(|| find_gather(checked, &|_, _, _, m| m == mode))
            });
            DmlError::OobPolicy { mode, refusal, at }
        }
        e => e,
    }
}

/// Whether a gather of `data` by `indices` along `axis` is one `refusal` describes.
fn fits(refusal: &OobRefusal, data: &TExpr, indices: &TExpr, axis: usize) -> bool {
    match refusal {
        OobRefusal::RuntimeIndex { tensor } => reads_input(indices, tensor.as_ref()),
        OobRefusal::ZeroFill { len, .. } => data.ty.shape.get(axis).and_then(SymExpr::as_const) == Some(*len),
        OobRefusal::EmptyAxis => data.ty.shape.get(axis).and_then(SymExpr::as_const) == Some(0),
    }
}

/// Whether `e`'s values depend on an input (the one named `name`, when given) or on a gather.
fn reads_input(e: &TExpr, name: Option<&String>) -> bool {
    match (&e.kind, name) {
        (TExprKind::Input(n), Some(name)) => n == name,
        (
            TExprKind::Input(_)
            | TExprKind::Gather { .. }
            | TExprKind::GatherElements { .. }
            | TExprKind::GatherNd { .. }
            | TExprKind::AdvancedIndex { .. },
            None,
        ) => true,
        _ => e.kind.children().any(|c| reads_input(c, name)),
    }
}

type GatherTest<'a> = dyn Fn(&TExpr, &TExpr, usize, OobMode) -> bool + 'a;

/// The first gather under `e` (operands before the gather itself) that `test` accepts: the
/// call, or the index array of a subscript (NumPy's indexing gathers in `error` mode).
fn find_gather(e: &TExpr, test: &GatherTest) -> Option<Span> {
    if let Some(span) = e.kind.children().find_map(|c| find_gather(c, test)) {
        return Some(span);
    }
    let found = match &e.kind {
        TExprKind::Gather { data, indices, axis, mode, .. }
        | TExprKind::GatherElements { data, indices, axis, mode } => test(data, indices, *axis, *mode),
        // Entry j of each index tuple gathers along axis batch_dims + j.
        TExprKind::GatherNd { data, indices, batch_dims, mode } => {
            let entries = indices.ty.shape.last().and_then(SymExpr::as_const).unwrap_or(0) as usize;
            (0..entries).any(|j| test(data, indices, batch_dims + j, *mode))
        }
        TExprKind::AdvancedIndex { data, arrays, .. } => {
            let found = arrays.iter().find(|a| test(data, &a.indices, a.axis, OobMode::Error));
            return found.map(|a| a.indices.span);
        }
        _ => false,
    };
    found.then_some(e.span)
}
