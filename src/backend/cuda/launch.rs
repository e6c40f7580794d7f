//! The host side of a launch: a call's inputs bound into the kernel's argument block (the
//! plan's symbols from the inputs' dims and run-time scalars, its requirements checked, every
//! nest's integers evaluated as the JIT evaluates them: `GenericPlan::binding`, `bind`,
//! `SymExpr::eval_i64`), and the error words a run leaves decoded into the error the
//! interpreter gives for the same inputs.

use super::CudaSource;
use super::codegen::{ArgLayout, KIND_EMPTY_AXIS, KIND_GATHER_OUT_OF_RANGE, KIND_INDEX_BOUNDS};
use super::codegen::{NARROW_ELEMENTS, NARROW_LIMIT};
use crate::backend::{DenseInput, RuntimeError, interp};
use crate::plan::{Plan, ShapeMismatch, VerifiedGenericPlan, verify};
use crate::types::ShapeDisplay;
use crate::types::sym::{Env, SymExpr};
use slc_runtime::Tensor;

/// What binding needs of an input: its type, its bytes' count, and the value of a run-time
/// scalar (an integer input the plan reads as a slice bound). Host tensors have it through
/// [`DenseInput`]; arrays in device memory read a scalar back from the device.
pub trait Input {
    fn dtype(&self) -> slc_runtime::DType;
    fn shape(&self) -> &[usize];
    fn nbytes(&self) -> usize;
    fn int_at(&self, linear: usize) -> Option<i128>;
}

impl<T: DenseInput> Input for T {
    fn dtype(&self) -> slc_runtime::DType {
        DenseInput::dtype(self)
    }
    fn shape(&self) -> &[usize] {
        DenseInput::shape(self)
    }
    fn nbytes(&self) -> usize {
        self.bytes().len()
    }
    fn int_at(&self, linear: usize) -> Option<i128> {
        DenseInput::int_at(self, linear)
    }
}

/// An error word no element wrote.
pub const NO_ERROR: u64 = u64::MAX;

/// One call's argument block, its input pointers, output and error words still to be filled
/// (`ArgLayout::{out_word, err_word}`; inputs at their index, each moved by
/// [`Bound::input_offsets`]).
#[derive(Debug, Clone)]
pub struct Bound {
    pub words: Vec<u64>,
    /// Whether the call runs the 64-bit kernel.
    pub wide: bool,
    /// Steps of every nest together (`NestInfo::steps`): the grid-stride loop's range.
    pub total: u64,
    /// The output's dims and bytes.
    pub shape: Vec<usize>,
    pub out_bytes: usize,
    /// Error words to allocate, each set to [`NO_ERROR`] before the launch.
    pub err_words: usize,
    /// Per input, the bytes from the start of its data to its element `[0, ..., 0]` (non-zero
    /// for a strided view with negative strides).
    pub input_offsets: Vec<i64>,
    /// The concrete plan of the call, for decoding errors.
    plan: Plan,
}

fn shape_of(t: &impl Input) -> String {
    let dims: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
    format!("{}{}", t.dtype(), ShapeDisplay(&dims))
}

/// Binds `inputs` (in plan order; a strided input's window) for a launch of the kernels `layout`
/// describes.
pub fn bind<I: Input>(
    plan: &VerifiedGenericPlan,
    layout: &ArgLayout,
    inputs: &[I],
) -> Result<Bound, RuntimeError> {
    if inputs.len() != plan.inputs.len() {
        return Err(RuntimeError::InputCount { expected: plan.inputs.len(), found: inputs.len() });
    }
    for (decl, t) in plan.inputs.iter().zip(inputs) {
        if decl.dtype != t.dtype() || (decl.strides.is_none() && decl.shape.len() != t.shape().len()) {
            let declared: Vec<String> = decl.shape.iter().map(SymExpr::to_string).collect();
            return Err(RuntimeError::InputMismatch {
                name: decl.name.clone(),
                expected: format!("{}[{}]", decl.dtype, declared.join(", ")),
                found: shape_of(t),
            });
        }
    }
    let (env, concrete) = if plan.binds_nothing() {
        let concrete = plan.concrete().ok_or_else(|| ShapeMismatch::TooLarge { what: "the plan".into() })?;
        let tensors: Vec<Vec<i64>> =
            inputs.iter().map(|t| t.shape().iter().map(|&d| d as i64).collect()).collect();
        for ((decl, t), dims) in concrete.inputs.iter().zip(inputs).zip(&tensors) {
            if decl.tensor_shape() != *dims {
                let strided = if decl.strides.is_some() { " (the window of a strided view)" } else { "" };
                return Err(RuntimeError::InputMismatch {
                    name: decl.name.clone(),
                    expected: format!("{}{}{strided}", decl.dtype, ShapeDisplay(&decl.tensor_shape())),
                    found: shape_of(t),
                });
            }
        }
        (Env::new(), concrete)
    } else {
        let dims: Vec<Vec<i64>> =
            inputs.iter().map(|t| t.shape().iter().map(|&d| d as i64).collect()).collect();
        let dims: Vec<&[i64]> = dims.iter().map(Vec::as_slice).collect();
        let scalar = |name: &str, index: Option<u32>| {
            let input = plan.inputs.iter().position(|d| d.name == name)?;
            i64::try_from(inputs[input].int_at(index.map_or(0, |i| i as usize))?).ok()
        };
        let env = plan.binding(&dims, &scalar)?;
        // Checks every requirement in order and that every integer of the plan fits.
        let concrete = crate::limits::with_stack_for(plan.nesting(), || plan.bind(&env))?;
        (env, concrete)
    };
    let eval = |e: &SymExpr| e.eval_i64(&env).ok_or_else(|| ShapeMismatch::TooLarge { what: e.to_string() });
    let mut words = vec![0u64; layout.words().max(1)];
    let mut total = 0u64;
    let mut elements = 0u64;
    let mut small = true;
    for (n, nest) in layout.nests.iter().enumerate() {
        let extents = nest.extents.iter().map(eval).collect::<Result<Vec<i64>, _>>()?;
        let count = extents.iter().try_fold(1u64, |c, &e| c.checked_mul(e.max(0) as u64));
        let count = count.ok_or_else(|| ShapeMismatch::TooLarge { what: "the element count".into() })?;
        elements = elements.saturating_add(count);
        // The kernel's range counts steps: vectors or groups of elements.
        let count = nest.steps(count);
        // A nest with no elements reads nothing: its integers need not fit.
        if count > 0 {
            for &p in &nest.params {
                let v = eval(&layout.params[p])?;
                small &= v.unsigned_abs() <= NARROW_LIMIT as u64;
                words[layout.param_word(p)] = v as u64;
            }
        }
        total = total
            .checked_add(count)
            .ok_or_else(|| ShapeMismatch::TooLarge { what: "the element count".into() })?;
        words[layout.end_word(n)] = total;
    }
    // How coarse a store's owner array is for these dims (`codegen::owner`).
    if let (Some((key, run)), Some(store)) = (layout.owner_rows_words(), layout.store.as_ref())
        && let Some(rows) = &store.rows
    {
        (words[key], words[run]) = rows.for_call(store.width, |e| eval(e).ok());
    }
    // Elements, not only steps: a grouped step's elements have linear positions up to `group`
    // times its own.
    small &= elements < NARROW_ELEMENTS;
    let shape: Vec<usize> = concrete.shape.iter().map(|&d| d as usize).collect();
    let out_bytes = Tensor::byte_size(concrete.dtype, &shape)
        .ok_or_else(|| ShapeMismatch::TooLarge { what: "the output's bytes".into() })?;
    let input_offsets: Vec<i64> = concrete
        .inputs
        .iter()
        .map(
            |d| if d.strides.is_some() { -d.window().map_or(0, |w| w.0) * d.dtype.width() as i64 } else { 0 },
        )
        .collect();
    small &= total < NARROW_ELEMENTS
        && (out_bytes as u64) <= NARROW_LIMIT as u64
        && inputs.iter().all(|t| (t.nbytes() as u64) <= NARROW_LIMIT as u64);
    let wide = !(layout.narrow && (small || !layout.wide));
    Ok(Bound {
        words,
        wide,
        total,
        shape,
        out_bytes,
        err_words: concrete.checks.len() + 1,
        input_offsets,
        plan: concrete,
    })
}

/// The kernels of a bound call of `source`, in launch order on one stream, each with the steps
/// its grid covers: a load's one kernel; a store's check kernel, then its update kernels
/// (`codegen::store`), which the host precedes with the target's copy into the output and,
/// where it has one, the owner array zeroed ([`owner_bytes`]).
pub fn kernels(source: &CudaSource, bound: &Bound) -> Vec<(String, u64)> {
    source.entries(bound.wide).into_iter().zip(steps(&source.layout, bound)).collect()
}

/// The steps of each kernel of a bound call ([`kernels`]).
pub fn steps(layout: &ArgLayout, bound: &Bound) -> Vec<u64> {
    let Some(store) = &layout.store else { return vec![bound.total] };
    let checks = match store.nest {
        0 => 0,
        n => bound.words[layout.end_word(n - 1)],
    };
    let updates = bound.total - checks;
    let passes = if store.mark { 2 } else { 1 };
    // A reduction's finishing pass walks the output, where an update touched it.
    let finish = match (store.reduces, updates) {
        (false, _) => None,
        (true, 0) => Some(0),
        (true, _) => Some((bound.out_bytes / store.width as usize) as u64),
    };
    std::iter::once(checks).chain(std::iter::repeat_n(updates, passes)).chain(finish).collect()
}

/// The bytes of a store's owner array for a bound call (0 for none).
pub fn owner_bytes(layout: &ArgLayout, bound: &Bound) -> usize {
    let key_bytes = layout.owner_rows_words().map_or(1, |(key, _)| bound.words[key]);
    layout.store.as_ref().map_or(0, |s| s.owner_bytes(bound.wide, bound.out_bytes, key_bytes))
}

/// The input a store plan's output starts as a copy of (its target), in plan order.
pub fn store_target(plan: &VerifiedGenericPlan) -> Option<usize> {
    match (&plan.store, plan.output.buffer) {
        (Some(_), crate::plan::BufferId::Input(i)) => Some(i),
        _ => None,
    }
}

/// The error the interpreter gives for the call whose kernels left `err` (one word per check,
/// then the output's; [`NO_ERROR`] where no element failed): the first failing check, at its
/// first failing element in C order, else the output's first failing element. An index value
/// out of range is read back from `inputs` (in plan order) at the element the kernel names.
pub fn decode_errors(bound: &Bound, err: &[u64], inputs: &[&Tensor]) -> Result<(), RuntimeError> {
    let Some((slot, &word)) = err.iter().enumerate().find(|(_, w)| **w != NO_ERROR) else { return Ok(()) };
    let (linear, kind) = (word >> 2, word & 3);
    match kind {
        KIND_EMPTY_AXIS => return Err(RuntimeError::EmptyAxis),
        KIND_GATHER_OUT_OF_RANGE => return Err(RuntimeError::GatherOutOfRange),
        KIND_INDEX_BOUNDS => {}
        _ => return Err(RuntimeError::GatherOutOfRange),
    }
    let plan = &bound.plan;
    let Some(check) = plan.checks.get(slot) else { return Err(RuntimeError::GatherOutOfRange) };
    let coords = coordinates(&check.shape, linear).ok_or(RuntimeError::GatherOutOfRange)?;
    let verified = crate::limits::with_stack_for(plan.nesting(), || verify(plan.clone()))
        .map_err(|_| RuntimeError::GatherOutOfRange)?;
    let index = interp::Machine::new(&verified, inputs).load(&check.index, &coords)?;
    Err(RuntimeError::IndexOutOfBounds {
        check: slot,
        index,
        axis: check.axis,
        len: check.len,
        span: check.origin.0,
    })
}

/// The coordinates of element `linear` of `shape` in C order, or `None` past its last element.
fn coordinates(shape: &[i64], linear: u64) -> Option<Vec<i64>> {
    let mut rest = linear;
    let mut coords = vec![0; shape.len()];
    for (c, &d) in coords.iter_mut().zip(shape).rev() {
        let d = u64::try_from(d).ok().filter(|&d| d > 0)?;
        *c = (rest % d) as i64;
        rest /= d;
    }
    (rest == 0).then_some(coords)
}
