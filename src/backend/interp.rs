//! The reference interpreter: for every output element, evaluate the access formula of
//! `plan/ir.rs` literally, in i128, with every buffer read bounds-checked. Slow and obviously
//! correct; it is the oracle for the JIT, AOT and DirectML back ends.

use super::{RuntimeError, check_inputs};
use crate::plan::{Access, BufferId, Plan, Store, VerifiedPlan};
use crate::types::{Accumulator, Combine, Coords, IndexOutOfRange, OobMode};
use slc_runtime::Tensor;
use std::collections::HashMap;

/// Runs a verified plan on `inputs` (in the order of `plan.inputs`).
pub fn run(plan: &VerifiedPlan, inputs: &[&Tensor]) -> Result<Tensor, RuntimeError> {
    crate::limits::with_stack_for(plan.nesting(), || run_elementwise(plan, inputs))
}

fn run_elementwise(plan: &VerifiedPlan, inputs: &[&Tensor]) -> Result<Tensor, RuntimeError> {
    check_inputs(plan, inputs)?;
    run_checks(plan, inputs)?;
    let machine = Machine::new(plan, inputs);
    let dims: Vec<usize> = plan.shape.iter().map(|&d| d as usize).collect();
    let mut out = Tensor::zeros(plan.dtype, &dims)?;
    let width = plan.dtype.width();
    for (linear, coords) in Coords::new(&plan.shape).enumerate() {
        if let Some(address) = machine.address(&plan.output, &coords)? {
            let src = machine.element(plan.output.buffer, address)?;
            out.bytes_mut()[linear * width..(linear + 1) * width].copy_from_slice(src);
        }
    }
    if let Some(store) = &plan.store {
        apply_store(&machine, store, plan.output.base, &mut out)?;
    }
    Ok(out)
}

/// A store plan's updates, applied to the output (the target's copy) in C order of the update
/// coordinates, so that with `set` the last write to an element wins; the old element is read
/// from the target, never from the output (NumPy's buffered `+=`). A scatter's reduction
/// instead gathers every update of an element into one [`Accumulator`], which starts from the
/// target's element and rounds once when all are in. A destination address less `first` (the
/// output's base: 0 for a dense target, a view's lowest element for its window) is the output
/// element's position. A `zero`-mode miss reads a 0 value, and writes nothing where it is the
/// destination's. A masked store applies the updates whose mask byte is nonzero.
fn apply_store(machine: &Machine, store: &Store, first: i64, out: &mut Tensor) -> Result<(), RuntimeError> {
    let (dtype, width) = (out.dtype(), out.dtype().width());
    let zero = vec![0u8; width];
    let len = out.numel();
    // The reductions under way, by element, in the order their first update came.
    let mut reductions: Vec<(usize, Accumulator)> = vec![];
    let mut reduction_of: HashMap<usize, usize> = HashMap::new();
    let mut combined = vec![0u8; width];
    for coords in Coords::new(&store.shape) {
        if let Some(when) = &store.when {
            // A mask is read directly (verified: no index terms), so it never misses.
            let selected = match machine.address(when, &coords)? {
                Some(at) => machine.element(when.buffer, at)? != [0],
                None => false,
            };
            if !selected {
                continue;
            }
        }
        let Some(dest) = machine.address(&store.dest, &coords)? else { continue };
        let value = match machine.address(&store.value, &coords)? {
            Some(address) => machine.element(store.value.buffer, address)?,
            None => &zero[..],
        };
        let at = usize::try_from(dest - first as i128)
            .ok()
            .filter(|&d| d < len)
            .ok_or(RuntimeError::OutOfBuffer { address: dest, len })?;
        let element = machine.element(store.dest.buffer, dest)?;
        if let Combine::Reduce { op, init } = store.combine {
            let k = *reduction_of.entry(at).or_insert_with(|| {
                reductions.push((at, Accumulator::new(op, init, dtype, element)));
                reductions.len() - 1
            });
            reductions[k].1.add(value);
            continue;
        }
        store.combine.apply(dtype, element, value, &mut combined);
        out.bytes_mut()[at * width..(at + 1) * width].copy_from_slice(&combined);
    }
    for (at, reduction) in reductions {
        reduction.finish(&mut out.bytes_mut()[at * width..(at + 1) * width]);
    }
    Ok(())
}

/// Evaluates the plan's index checks (every back end runs these before its kernel). Inputs must
/// already match the plan.
fn run_checks(plan: &VerifiedPlan, inputs: &[&Tensor]) -> Result<(), RuntimeError> {
    let machine = Machine::new(plan, inputs);
    for (i, check) in plan.checks.iter().enumerate() {
        let fail = |j: i128| RuntimeError::IndexOutOfBounds {
            check: i,
            index: j,
            axis: check.axis,
            len: check.len,
            span: check.origin.0,
        };
        if check.index.terms.is_empty() {
            // The common case, a plain view of an index tensor: walk it without per-element
            // allocation (this runs before every kernel, on the whole index tensor).
            for at in Offsets::new(&check.shape, check.index.base, &check.index.strides) {
                let j = machine.int_at(check.index.buffer, at as i128)?;
                if OobMode::Error.normalize(j, check.len).is_err() {
                    return Err(fail(j));
                }
            }
        } else {
            for coords in Coords::new(&check.shape) {
                let j = machine.load(&check.index, &coords)?;
                if OobMode::Error.normalize(j, check.len).is_err() {
                    return Err(fail(j));
                }
            }
        }
    }
    Ok(())
}

/// The element offsets `base + Σ o_d·strides_d` over all coordinates of `shape`, in C order.
struct Offsets {
    shape: Vec<i64>,
    strides: Vec<i64>,
    coords: Vec<i64>,
    next: Option<i64>,
}

impl Offsets {
    fn new(shape: &[i64], base: i64, strides: &[i64]) -> Offsets {
        let next = (!shape.contains(&0)).then_some(base);
        Offsets { shape: shape.to_vec(), strides: strides.to_vec(), coords: vec![0; shape.len()], next }
    }
}

impl Iterator for Offsets {
    type Item = i64;

    fn next(&mut self) -> Option<i64> {
        let current = self.next?;
        self.next = None;
        let mut at = current;
        for d in (0..self.shape.len()).rev() {
            self.coords[d] += 1;
            // Wrapping: past the last coordinate of an axis the offset may leave i64 (a huge
            // stride along a unit axis); it is taken back at once, exactly, modulo 2^64.
            at = at.wrapping_add(self.strides[d]);
            if self.coords[d] < self.shape[d] {
                self.next = Some(at);
                break;
            }
            at = at.wrapping_sub(self.strides[d].wrapping_mul(self.coords[d]));
            self.coords[d] = 0;
        }
        Some(current)
    }
}

/// Evaluates the accesses of a plan one coordinate at a time. Public so that tools which must
/// know where each output element is read from (`slc show`) ask the oracle rather than
/// re-deriving the semantics.
pub struct Machine<'a> {
    plan: &'a Plan,
    inputs: &'a [&'a Tensor],
    /// The plan address of each input tensor's first element (its window's lowest element;
    /// 0 for a dense input), worked out once rather than at every read.
    input_first: Vec<i64>,
}

impl<'a> Machine<'a> {
    /// `inputs` in the order of `plan.inputs`; only buffers that index accesses read are
    /// touched, so the others may be placeholders.
    pub fn new(plan: &'a VerifiedPlan, inputs: &'a [&'a Tensor]) -> Machine<'a> {
        let plan = plan.plan();
        let input_first = (0..plan.inputs.len())
            .map(|i| plan.buffer_window(BufferId::Input(i)).map_or(0, |w| w.0))
            .collect();
        Machine { plan, inputs, input_first }
    }

    fn buffer(&self, id: BufferId) -> &Tensor {
        match id {
            BufferId::Input(i) => self.inputs[i],
            BufferId::Const(i) => &self.plan.consts[i].tensor,
        }
    }

    /// The position in buffer `id`'s tensor of the element at plan address `address`: the
    /// tensor of a strided input holds its window, which starts at the lowest element.
    fn slot(&self, id: BufferId, address: i128) -> Result<usize, RuntimeError> {
        let t = self.buffer(id);
        let first = match id {
            BufferId::Input(i) => self.input_first[i],
            BufferId::Const(_) => 0,
        };
        usize::try_from(address - first as i128)
            .ok()
            .filter(|&a| a < t.numel())
            .ok_or_else(|| RuntimeError::OutOfBuffer { address, len: t.numel() })
    }

    /// The bytes of element `address` of buffer `id`.
    pub fn element(&self, id: BufferId, address: i128) -> Result<&[u8], RuntimeError> {
        let (t, slot) = (self.buffer(id), self.slot(id, address)?);
        let w = t.dtype().width();
        Ok(&t.bytes()[slot * w..(slot + 1) * w])
    }

    /// The integer at plan address `address` of buffer `id`.
    fn int_at(&self, id: BufferId, address: i128) -> Result<i128, RuntimeError> {
        Ok(self.buffer(id).int_at(self.slot(id, address)?).unwrap_or_default())
    }

    /// The element address `access` reads at `coords`, or `None` where a `zero`-mode index
    /// misses (the element is 0).
    pub fn address(&self, access: &Access, coords: &[i64]) -> Result<Option<i128>, RuntimeError> {
        let mut address = access.base as i128;
        for (&o, &s) in coords.iter().zip(&access.strides) {
            address += o as i128 * s as i128;
        }
        for t in &access.terms {
            let j = self.load(&t.index, coords)?;
            match t.mode.normalize(j, t.len) {
                Ok(Some(j)) => address += j as i128 * t.stride as i128,
                Ok(None) => return Ok(None),
                // Checks run first, so this is reached only by plans built without them; the
                // kernels report it alike.
                Err(IndexOutOfRange) if t.mode == OobMode::Error => {
                    return Err(RuntimeError::GatherOutOfRange);
                }
                Err(IndexOutOfRange) => return Err(RuntimeError::EmptyAxis),
            }
        }
        Ok(Some(address))
    }

    /// The integer value `access` reads at `coords` (0 where a `zero`-mode index misses).
    pub fn load(&self, access: &Access, coords: &[i64]) -> Result<i128, RuntimeError> {
        match self.address(access, coords)? {
            None => Ok(0),
            Some(address) => self.int_at(access.buffer, address),
        }
    }
}
