//! The front half as one call: source text → tokens → AST → checked program → plan → verified
//! plan ([`Compiled`]). Every entry point (the CLI, the REPL, sessions, kernels, the C ABI)
//! compiles through here; what runs a compiled plan is [`exec`](crate::exec).

use crate::error::Error;
use crate::limits;
use crate::plan::{self, GenericPlan, VerifiedPlan};
use crate::sema::{self, InputTypes, InputValues, InputsRead, MaskPolicy, SymInputTypes, TExpr};
use crate::syntax::{self, ast};
use crate::types::sym::Sym;

/// A program taken through every stage up to a verified plan.
#[derive(Debug, Clone)]
pub struct Compiled {
    pub ast: ast::Program,
    pub checked: TExpr,
    pub plan: VerifiedPlan,
    /// The inputs whose types and values checking read: what the plan depends on.
    pub read: InputsRead,
}

/// Parses, checks, lowers and verifies `src` for inputs of the given types.
pub fn compile(src: &str, inputs: &InputTypes) -> Result<Compiled, Error> {
    compile_with_values(src, inputs, &InputValues::new())
}

/// As [`compile`], where some inputs' values are known too: operator parameters (such as
/// `strided_slice`'s `begin`) may then come from those tensors.
pub fn compile_with_values(src: &str, inputs: &InputTypes, values: &InputValues) -> Result<Compiled, Error> {
    compile_checking(src, inputs, values, MaskPolicy::default())
}

/// As [`compile_with_values`], for one run whose every input is at hand: a mask of more than
/// 4096 elements is not folded into the plan's constants but declared as a derived input of the
/// count it has now (`m_nonzero: i64[COUNT, 2] = nonzero(m)`), which
/// [`plan::input_tensors`] makes for the run (docs/semantics.md, Masks). What the REPL and
/// `slc eval --backend cuda` compile: folding 8 million positions costs seconds.
pub fn compile_for_run(src: &str, inputs: &InputTypes, values: &InputValues) -> Result<Compiled, Error> {
    compile_checking(src, inputs, values, RUN_MASKS)
}

/// The masks of [`compile_for_run`] (and the REPL's runs): large ones derived per run.
pub const RUN_MASKS: MaskPolicy = MaskPolicy { derive_large_masks: true, stores_read_masks: true };

/// The masks of [`compile_for_dml`] (and the REPL's `:dml`): every mask folded into positions,
/// stores through masks included, as DirectML's operators take them.
pub const DML_MASKS: MaskPolicy = MaskPolicy { derive_large_masks: false, stores_read_masks: false };

/// As [`compile_with_values`], for the DirectML target: a store of one value through a mask
/// takes the mask's positions (folded, as every mask of a DirectML graph is), which DirectML's
/// scatters write, rather than reading the mask in place.
pub fn compile_for_dml(src: &str, inputs: &InputTypes, values: &InputValues) -> Result<Compiled, Error> {
    compile_checking(src, inputs, values, DML_MASKS)
}

fn compile_checking(
    src: &str,
    inputs: &InputTypes,
    values: &InputValues,
    policy: MaskPolicy,
) -> Result<Compiled, Error> {
    let ast = syntax::parse_program(src)?;
    let (checked, read, plan) = check_and_lower(&ast, inputs, values, policy)?;
    Ok(Compiled { ast, checked, plan, read })
}

/// A program over inputs whose dims may be symbols, taken up to its generic plan (not yet
/// verified).
#[derive(Debug, Clone)]
pub struct CompiledGeneric {
    pub ast: ast::Program,
    /// The checked program: its types are expressions in the symbols (`f32[max(0, N-1), M]`).
    pub checked: TExpr,
    /// Requirements: the conditions checking could not decide, in program order.
    pub plan: GenericPlan,
    pub read: InputsRead,
}

/// Parses, checks and lowers `src` for inputs whose dims may be symbols (`f32[N, M]`), with
/// run-time scalars: a 0-d integer input used as an integer (`a[:k]`) and a 1-d integer input
/// given as `begin`/`end` of `strided_slice` or `starts`/`ends` of `slice` stand for their
/// values at run time. With concrete types and no run-time scalars the plan is
/// [`compile`]'s, with constant integers.
pub fn compile_generic(src: &str, inputs: &SymInputTypes) -> Result<CompiledGeneric, Error> {
    compile_generic_with(src, inputs, &InputValues::new())
}

/// As [`compile_generic`], where the inputs `python_ints` marks stand for Python `int`s
/// ([`InputValues::is_python_int`]; its values are not read: a generic program takes them per
/// call).
pub fn compile_generic_with(
    src: &str,
    inputs: &SymInputTypes,
    python_ints: &InputValues,
) -> Result<CompiledGeneric, Error> {
    let ast = syntax::parse_program(src)?;
    let (checked, read, plan) = check_and_lower_generic(&ast, inputs, python_ints)?;
    Ok(CompiledGeneric { ast, checked, plan, read })
}

/// The stages of [`compile_generic`] after parsing (the plan not yet verified).
pub(crate) fn check_and_lower_generic(
    ast: &ast::Program,
    inputs: &SymInputTypes,
    python_ints: &InputValues,
) -> Result<(TExpr, InputsRead, GenericPlan), Error> {
    let values = python_ints.python_ints_only();
    let (checked, read, conditions) =
        limits::with_stack_for(ast.depth(), || sema::check_program_generic(ast, inputs, &values))?;
    let mut plan = limits::with_stack_for(checked.depth, || plan::lower_generic(&checked, &conditions))?;
    declare_scalar_inputs(&mut plan, inputs);
    Ok((checked, read, plan))
}

/// Every input a run-time scalar comes from is an input of the plan (after those it reads
/// elements of), so that every executor is handed its value.
fn declare_scalar_inputs(plan: &mut plan::GenericPlan, inputs: &SymInputTypes) {
    for sym in plan.symbols() {
        if let Sym::Scalar { name, .. } = sym
            && !plan.inputs.iter().any(|d| *d.name == *name)
            && let Some(ty) = inputs.get(&*name)
        {
            plan.inputs.push(plan::InputDecl::dense(name.to_string(), ty.dtype, ty.shape.clone()));
        }
    }
}

/// The recursive stages after parsing: checking, lowering, verification. Each recurses once per
/// level of nesting (of the text, then of the checked tree, whose `let`s are substituted), so
/// each runs where the stack is deep enough for its input ([`limits::with_stack_for`]).
/// `policy`: see [`sema::check_program_with`].
pub(crate) fn check_and_lower(
    ast: &ast::Program,
    inputs: &InputTypes,
    values: &InputValues,
    policy: MaskPolicy,
) -> Result<(TExpr, InputsRead, VerifiedPlan), Error> {
    let (checked, read) =
        limits::with_stack_for(ast.depth(), || sema::check_program_with(ast, inputs, values, policy))?;
    let plan = limits::with_stack_for(checked.depth, || -> Result<_, Error> {
        Ok(plan::verify(plan::lower(&checked)?)?)
    })?;
    Ok((checked, read, plan))
}
