//! What `slc compile` emits, chosen by [`Target`]: the verified plan for slc's CPU back ends, or
//! DirectML descriptors. A DirectML refusal points into the program's text through the origin
//! each gathered plan term carries.

use crate::backend::dml::{DmlError, DmlGraph, DmlOptions, lower};
use crate::error::Error;
use crate::pipeline::Compiled;

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

/// Lowers a compiled program to DirectML; a refused gather points at its call in the text (the
/// origin its plan term carries).
pub fn lower_program(compiled: &Compiled, opts: &DmlOptions) -> Result<DmlGraph, DmlError> {
    lower(&compiled.plan, opts)
}
