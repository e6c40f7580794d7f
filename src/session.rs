//! The embeddable entry point: bind tensors by name, then compile or evaluate programs.

use crate::backend::{RuntimeError, interp};
use crate::error::Error;
use crate::plan::{self, Plan, PlanInfo};
use crate::sema::{self, InputTypes, InputValues, TExpr, TensorType};
use crate::source::Span;
use crate::syntax::{self, ast};
use slc_runtime::Tensor;
use std::collections::BTreeMap;

/// A program taken through every stage up to a verified plan.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub ast: ast::Program,
    pub checked: TExpr,
    pub plan: Plan,
    pub info: PlanInfo,
    /// For each plan check, the span of the index expression it guards.
    check_spans: Vec<Span>,
}

/// Parses, checks, lowers and verifies `src` for inputs of the given types.
pub fn compile(src: &str, inputs: &InputTypes) -> Result<Compiled, Error> {
    compile_with_values(src, inputs, &InputValues::new())
}

/// As [`compile`], where some inputs' values are known too: operator parameters (such as
/// `strided_slice`'s `begin`) may then come from those tensors.
pub fn compile_with_values(src: &str, inputs: &InputTypes, values: &InputValues) -> Result<Compiled, Error> {
    let ast = syntax::parse_program(src)?;
    let checked = sema::check_program(&ast, inputs, values)?;
    let plan::Lowered { plan, check_spans } = plan::lower(&checked)?;
    let info = plan::verify(&plan)?;
    Ok(Compiled { ast, checked, plan, info, check_spans })
}

impl Compiled {
    /// Runs the plan on the reference interpreter, taking inputs by name from `tensors`.
    pub fn run(&self, tensors: &BTreeMap<String, Tensor>) -> Result<Tensor, Error> {
        let mut args = Vec::with_capacity(self.plan.inputs.len());
        for decl in &self.plan.inputs {
            match tensors.get(&decl.name) {
                Some(t) => args.push(t),
                None => {
                    return Err(RuntimeError::InputCount {
                        expected: self.plan.inputs.len(),
                        found: args.len(),
                    }
                    .into());
                }
            }
        }
        interp::run(&self.plan, &self.info, &args).map_err(|e| match e {
            RuntimeError::IndexOutOfBounds { check, index, axis, len, .. } => {
                let span = self.check_spans.get(check).copied();
                RuntimeError::IndexOutOfBounds { check, index, axis, len, span }.into()
            }
            e => e.into(),
        })
    }
}

/// Named tensors and the programs evaluated over them.
///
/// ```
/// use slc::{DType, Session, Tensor};
/// let mut s = Session::new();
/// s.bind("a", Tensor::from_i64s(DType::I64, &[2, 3], &[0, 1, 2, 3, 4, 5]).unwrap());
/// let t = s.eval("a[::-1, 1]").unwrap();
/// assert_eq!(t.shape(), &[2]);
/// assert_eq!((t.int_at(0), t.int_at(1)), (Some(4), Some(1)));
/// ```
#[derive(Debug, Default)]
pub struct Session {
    tensors: BTreeMap<String, Tensor>,
}

impl Session {
    pub fn new() -> Session {
        Session::default()
    }

    /// Binds (or rebinds) `name` to a tensor.
    pub fn bind(&mut self, name: &str, tensor: Tensor) {
        self.tensors.insert(name.to_string(), tensor);
    }

    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.tensors.get(name)
    }

    /// The types of the bound tensors.
    pub fn input_types(&self) -> InputTypes {
        self.tensors
            .iter()
            .map(|(name, t)| {
                let shape = t.shape().iter().map(|&d| d as i64).collect();
                (name.clone(), TensorType { dtype: t.dtype(), shape })
            })
            .collect()
    }

    pub fn compile(&self, src: &str) -> Result<Compiled, Error> {
        compile_with_values(src, &self.input_types(), &self.tensors)
    }

    /// Evaluates a program; its last statement is the result.
    pub fn eval(&mut self, src: &str) -> Result<Tensor, Error> {
        self.compile(src)?.run(&self.tensors)
    }
}
