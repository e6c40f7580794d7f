//! Lowering: the checked program becomes one [`Plan`]. Each checked node is a substitution of
//! coordinates into the accesses built so far (docs/semantics.md, Chains and fusion): a view maps old coordinates
//! affinely onto new ones, a gather replaces one coordinate by a loaded index, NumPy's advanced
//! indexing replaces several coordinates by indices loaded at shared broadcast coordinates. So
//! chains fuse by construction: nothing is materialized.
//!
//! There is one lowering, over symbolic integers ([`lower_generic`]); a concrete program's
//! integers are constants, which fold, so [`lower`] is the generic plan with every integer a
//! constant. An operation on constants that does not fold overflowed i64, and is reported as
//! today, with its span. The concrete plan's canonical forms (a unit axis has stride 0, a range
//! of at most one element scale 0) apply where the size is a constant; where it is a symbol the
//! stride stays as it is (a coordinate that is always 0 never multiplies it), so that generic
//! strides stay the simple products the loop nest recognizes (contiguous runs, constant steps).
//! Only a step too large to multiply safely is zeroed for single elements by a `select`.

use super::ir::*;
use super::verify::PlanError;
use crate::limits::MAX_PLAN_ACCESSES;
use crate::sema::{IndexArray, ShapeCondition, TExpr, TExprKind, ViewDim, broadcast_is_empty, nonzero_input};
use crate::source::Span;
use crate::types::sym::{Cond, SymExpr};
use crate::types::{OobMode, row_major_strides};
use slc_runtime::DType;
use std::collections::HashMap;

/// Element strides of inputs that are strided views, by name (see [`InputDecl::strides`]).
pub type InputStrides = HashMap<String, Vec<i64>>;

/// Lowers a checked program over dense inputs.
pub fn lower(expr: &TExpr) -> Result<Plan, PlanError> {
    lower_with_strides(expr, &InputStrides::new())
}

/// Lowers a checked program whose inputs named in `strides` are views with those element
/// strides, read in place: a view's strides simply replace the row-major ones in every access
/// to it.
pub fn lower_with_strides(expr: &TExpr, strides: &InputStrides) -> Result<Plan, PlanError> {
    concrete(expr, build(expr, strides, &[], false)?)
}

/// As [`lower_with_strides`], but a store's target may be a strided view: the plan then stores
/// through the view, its output the target's *window* (its elements from the lowest to the
/// highest, one axis; [`Store`]). Such a plan runs in place on the caller's memory
/// (`Kernel::store`); its output is not the program's result.
pub fn lower_through_view(expr: &TExpr, strides: &InputStrides) -> Result<Plan, PlanError> {
    concrete(expr, build(expr, strides, &[], true)?)
}

/// `plan` with every integer a constant, or an error naming `expr`'s symbolic result.
fn concrete(expr: &TExpr, plan: GenericPlan) -> Result<Plan, PlanError> {
    plan.concrete().ok_or_else(|| {
        PlanError::Invalid(format!(
            "the program's result {} has symbolic dims: lower it generically",
            expr.ty
        ))
    })
}

/// Lowers a checked program whose dims may be symbolic into a generic plan, with `conditions`
/// (checking's undecided conditions, in program order) as its requirements. Inputs are dense.
pub fn lower_generic(expr: &TExpr, conditions: &[ShapeCondition]) -> Result<GenericPlan, PlanError> {
    build(expr, &InputStrides::new(), conditions, false)
}

fn build(
    expr: &TExpr,
    strides: &InputStrides,
    conditions: &[ShapeCondition],
    through_view: bool,
) -> Result<GenericPlan, PlanError> {
    let mut b = Builder {
        strides,
        through_view,
        inputs: vec![],
        input_ids: HashMap::new(),
        consts: vec![],
        checks: vec![],
        budget: Budget(MAX_PLAN_ACCESSES),
    };
    let (mut output, shape, store) = match &expr.kind {
        TExprKind::Store { target, selection, value, combine, when } => {
            let (store, output, shape) =
                b.store(target, selection, value, *combine, when.as_deref(), expr.span)?;
            (output, shape, Some(store))
        }
        _ => {
            let (output, shape) = b.expr(expr)?;
            (output, shape, None)
        }
    };
    if shape.iter().any(|d| d.as_const() == Some(0)) {
        // No element is ever read: the canonical empty access forms no address. (A symbolic
        // empty output is made canonical when the plan is bound.)
        let zero = SymExpr::constant(0);
        output = Access {
            buffer: output.buffer,
            base: zero.clone(),
            strides: vec![zero; shape.len()],
            terms: vec![],
        };
    }
    let requires = conditions
        .iter()
        .map(|c| Requirement {
            cond: c.cond.clone(),
            message: c.message.clone(),
            origin: Origin(Some(c.span)),
        })
        .collect();
    Ok(Plan {
        inputs: b.inputs,
        consts: b.consts,
        requires,
        checks: b.checks,
        dtype: expr.ty.dtype,
        shape,
        output,
        store,
    })
}

/// Where an old coordinate comes from, in terms of the new coordinates.
#[derive(Debug, Clone)]
pub(super) enum Coord {
    /// `old = offset + scale * new[dim]` (or just `offset` when `dim` is None).
    Affine { dim: Option<usize>, offset: SymExpr, scale: SymExpr },
    /// `old = norm(load(index))`; `index` is over the new coordinates; `origin` is the gather's
    /// place in the text.
    Gathered { index: Access<SymExpr>, len: SymExpr, mode: OobMode, origin: Origin },
}

impl Coord {
    /// `old = new[dim]`.
    fn same(dim: usize) -> Coord {
        Coord::Affine { dim: Some(dim), offset: SymExpr::constant(0), scale: SymExpr::constant(1) }
    }
}

fn overflow(span: Span) -> PlanError {
    PlanError::Overflow { span }
}

/// `r`, the result of an operation on `a` and `b`: an overflow where both are constants and
/// `r` is not (constants that do not fold left i64).
fn folded(r: SymExpr, a: &SymExpr, b: &SymExpr, span: Span) -> Result<SymExpr, PlanError> {
    match (r.as_const(), a.as_const(), b.as_const()) {
        (None, Some(_), Some(_)) => Err(overflow(span)),
        _ => Ok(r),
    }
}

fn add(a: &SymExpr, b: &SymExpr, span: Span) -> Result<SymExpr, PlanError> {
    folded(a + b, a, b, span)
}

fn mul(a: &SymExpr, b: &SymExpr, span: Span) -> Result<SymExpr, PlanError> {
    folded(a * b, a, b, span)
}

/// Steps up to this size scale a symbolic range as they are: its strides stay within i64 for
/// any tensor that fits in memory.
const PLAIN_STEP: i64 = 1 << 20;

/// The scale of a range of `n` elements by `step`: 0 when `n` is a constant of at most 1 (a
/// range of one element moves nowhere, and huge steps cannot overflow); for a symbolic `n`,
/// `step` itself, or a `select` on `n <= 1` for a step so large its products might overflow.
fn range_scale(n: &SymExpr, step: i64) -> SymExpr {
    let (zero, one) = (SymExpr::constant(0), SymExpr::constant(1));
    match n.as_const() {
        Some(_) => SymExpr::select(Cond::le(n, &one), &zero, &SymExpr::constant(step)),
        None if step.unsigned_abs() <= PLAIN_STEP as u64 => SymExpr::constant(step),
        None => SymExpr::select(Cond::le(n, &one), &zero, &SymExpr::constant(step)),
    }
}

/// What is left of [`MAX_PLAN_ACCESSES`] while a plan is built.
pub(super) struct Budget(usize);

impl Budget {
    fn take(&mut self, accesses: usize, span: Span) -> Result<(), PlanError> {
        self.0 = self.0.checked_sub(accesses).ok_or(PlanError::TooComplex { span })?;
        Ok(())
    }
}

/// Rewrites `access` (over the old coordinates) to read the same element at the new coordinates.
/// `top` marks the access that produces the output element: it keeps an indirect term even
/// where its stride is 0, because the term's range check decides whether the element is 0 or an
/// error; inner index accesses only need terms that move their address.
pub(super) fn substitute(
    access: &Access<SymExpr>,
    coords: &[Coord],
    rank: usize,
    top: bool,
    span: Span,
    budget: &mut Budget,
) -> Result<Access<SymExpr>, PlanError> {
    budget.take(1, span)?;
    let mut base = access.base.clone();
    let mut strides = vec![SymExpr::constant(0); rank];
    let mut terms = Vec::with_capacity(access.terms.len());
    for t in &access.terms {
        let index = substitute(&t.index, coords, rank, false, span, budget)?;
        terms.push(Indirect { index: Box::new(index), ..t.clone() });
    }
    for (stride, coord) in access.strides.iter().zip(coords) {
        match coord {
            Coord::Affine { dim, offset, scale } => {
                base = add(&base, &mul(stride, offset, span)?, span)?;
                if let Some(d) = dim {
                    let s = mul(stride, scale, span)?;
                    strides[*d] = add(&strides[*d], &s, span)?;
                }
            }
            Coord::Gathered { index, len, mode, origin } => {
                if stride.as_const() != Some(0) || top {
                    budget.take(index.accesses(), span)?;
                    let (index, len, stride) = (Box::new(index.clone()), len.clone(), stride.clone());
                    terms.push(Indirect { index, len, stride, mode: *mode, origin: *origin });
                }
            }
        }
    }
    Ok(Access { buffer: access.buffer, base, strides, terms })
}

/// Row-major element strides, with 0 along axes of a constant size 1 (the plan's canonical
/// form: a unit axis moves nowhere). The product of all dims must fit in i64, as for a concrete
/// shape.
fn row_major(shape: &[SymExpr], span: Span) -> Result<Vec<SymExpr>, PlanError> {
    let zero = SymExpr::constant(0);
    let mut strides = vec![zero.clone(); shape.len()];
    let mut acc = SymExpr::constant(1);
    for (s, d) in strides.iter_mut().zip(shape).rev() {
        *s = if d.as_const() == Some(1) { zero.clone() } else { acc.clone() };
        acc = mul(&acc, d, span)?;
    }
    Ok(strides)
}

/// The canonical layout of an input of `shape` with element `strides`: `None` when it is dense
/// (or empty), else the strides with 0 along unit axes.
fn canonical_strides(shape: &[SymExpr], strides: &[i64], span: Span) -> Result<Option<Vec<i64>>, PlanError> {
    let Some(shape) = shape.iter().map(SymExpr::as_const).collect::<Option<Vec<i64>>>() else {
        return Err(PlanError::Invalid("a strided input needs a concrete shape".into()));
    };
    let shape = &shape[..];
    if strides.len() != shape.len() {
        return Err(PlanError::Invalid(format!(
            "{} strides for an input of rank {}",
            strides.len(),
            shape.len()
        )));
    }
    let mut dense = row_major_strides(shape, 1).ok_or(overflow(span))?;
    for (s, &d) in dense.iter_mut().zip(shape) {
        if d == 1 {
            *s = 0;
        }
    }
    let canonical: Vec<i64> = strides.iter().zip(shape).map(|(&s, &d)| if d == 1 { 0 } else { s }).collect();
    Ok((!shape.contains(&0) && canonical != dense).then_some(canonical))
}

pub(super) struct Builder<'s> {
    pub(super) strides: &'s InputStrides,
    /// A store's target may be a strided view, stored through ([`lower_through_view`]).
    pub(super) through_view: bool,
    pub(super) inputs: Vec<InputDecl<SymExpr>>,
    input_ids: HashMap<String, usize>,
    consts: Vec<ConstDecl>,
    checks: Vec<Check<SymExpr>>,
    pub(super) budget: Budget,
}

impl Builder<'_> {
    pub(super) fn expr(&mut self, e: &TExpr) -> Result<(Access<SymExpr>, Vec<SymExpr>), PlanError> {
        let shape = e.ty.shape.clone();
        let access = match &e.kind {
            TExprKind::Input(name) => {
                let id = match self.input_ids.get(name) {
                    Some(&id) => id,
                    None => {
                        let strides = match self.strides.get(name) {
                            Some(s) => canonical_strides(&shape, s, e.span)?,
                            None => None,
                        };
                        self.inputs
                            .push(InputDecl { strides, ..InputDecl::dense(name, e.ty.dtype, shape.clone()) });
                        self.input_ids.insert(name.clone(), self.inputs.len() - 1);
                        self.inputs.len() - 1
                    }
                };
                let strides = match &self.inputs[id].strides {
                    Some(s) => s.iter().map(|&s| SymExpr::constant(s)).collect(),
                    None => row_major(&shape, e.span)?,
                };
                Access { buffer: BufferId::Input(id), base: SymExpr::constant(0), strides, terms: vec![] }
            }
            TExprKind::Const(t) => {
                self.consts.push(ConstDecl { tensor: t.clone() });
                let id = BufferId::Const(self.consts.len() - 1);
                let strides = row_major(&shape, e.span)?;
                Access { buffer: id, base: SymExpr::constant(0), strides, terms: vec![] }
            }
            TExprKind::View { base, dims } => {
                let (access, _) = self.expr(base)?;
                let mut coords = Vec::with_capacity(dims.len());
                let mut out = 0;
                for d in dims {
                    match d {
                        ViewDim::Range { start, step, len } => {
                            // A dimension of one element never moves: stride 0 keeps huge steps
                            // (`a[::2**62]`) from overflowing.
                            let scale = range_scale(len, *step);
                            coords.push(Coord::Affine { dim: Some(out), offset: start.clone(), scale });
                            out += 1;
                        }
                        ViewDim::Pick(i) => coords.push(Coord::Affine {
                            dim: None,
                            offset: i.clone(),
                            scale: SymExpr::constant(0),
                        }),
                        ViewDim::NewAxis => out += 1,
                    }
                }
                substitute(&access, &coords, out, true, e.span, &mut self.budget)?
            }
            TExprKind::Gather { data, indices, axis, batch_dims, mode } => {
                let (data_access, data_shape) = self.expr(data)?;
                let (index_access, index_shape) = self.expr(indices)?;
                let (axis, b, q) = (*axis, *batch_dims, index_shape.len());
                let len = data_shape[axis].clone();
                if *mode == OobMode::Error {
                    self.check(&index_access, &index_shape, &len, axis, indices.span, e.span)?;
                }
                let rank = shape.len();
                let index_coords: Vec<Coord> =
                    (0..q).map(|e| Coord::same(if e < b { e } else { axis + e - b })).collect();
                let index = substitute(&index_access, &index_coords, rank, false, e.span, &mut self.budget)?;
                let data_coords: Vec<Coord> = (0..data_shape.len())
                    .map(|d| match d.cmp(&axis) {
                        std::cmp::Ordering::Less => Coord::same(d),
                        std::cmp::Ordering::Equal => Coord::Gathered {
                            index: index.clone(),
                            len: len.clone(),
                            mode: *mode,
                            origin: Origin(Some(e.span)),
                        },
                        std::cmp::Ordering::Greater => Coord::same(d + q - b - 1),
                    })
                    .collect();
                substitute(&data_access, &data_coords, rank, true, e.span, &mut self.budget)?
            }
            TExprKind::GatherElements { data, indices, axis, mode } => {
                let (data_access, data_shape) = self.expr(data)?;
                let (index, _) = self.expr(indices)?;
                let (axis, len) = (*axis, data_shape[*axis].clone());
                if *mode == OobMode::Error {
                    self.check(&index, &shape, &len, axis, indices.span, e.span)?;
                }
                // The output has the indices' shape, so the index is read at the output
                // coordinates themselves; so are the data's other axes (a corner of them when
                // the indices are smaller: a unit output axis then moves nowhere).
                let data_coords: Vec<Coord> = (0..shape.len())
                    .map(|d| match d == axis {
                        true => Coord::Gathered {
                            index: index.clone(),
                            len: len.clone(),
                            mode: *mode,
                            origin: Origin(Some(e.span)),
                        },
                        false => Coord::Affine {
                            dim: Some(d),
                            offset: SymExpr::constant(0),
                            scale: range_scale(&shape[d], 1),
                        },
                    })
                    .collect();
                substitute(&data_access, &data_coords, shape.len(), true, e.span, &mut self.budget)?
            }
            TExprKind::GatherNd { data, indices, batch_dims, mode } => {
                let (data_access, data_shape) = self.expr(data)?;
                let (index_access, index_shape) = self.expr(indices)?;
                let (b, tuple, rank) = (*batch_dims, index_shape.len() - 1, shape.len());
                let Some(m) = index_shape[tuple].as_const() else {
                    return Err(PlanError::Invalid("gather_nd's index tuples need a constant length".into()));
                };
                let m = m as usize;
                // ONNX Runtime reads no index where the output is empty because a sliced dim is
                // 0 (`data: f32[4, 3, 0]`, `indices: i64[2, 1]` holding 7): nor does slc. Known
                // now, the check goes; known per call, it runs over a last axis of 0 or 1.
                let sliced_empty = broadcast_is_empty(&data_shape[b + m..]);
                let checked = match sliced_empty.decide(&Default::default()) {
                    Some(empty) => (!empty).then(|| (index_shape[..tuple].to_vec(), tuple)),
                    None => {
                        let mut shape = index_shape[..tuple].to_vec();
                        shape.push(SymExpr::select(
                            sliced_empty,
                            &SymExpr::constant(0),
                            &SymExpr::constant(1),
                        ));
                        Some((shape, tuple + 1))
                    }
                };
                let mut data_coords: Vec<Coord> = (0..b).map(Coord::same).collect();
                for j in 0..m {
                    // Entry j of each tuple: the index with its last coordinate fixed, read at
                    // the output's leading `tuple` coordinates.
                    let entry = |rank, budget: &mut Budget| {
                        let mut coords: Vec<Coord> = (0..tuple).map(Coord::same).collect();
                        let (offset, scale) = (SymExpr::constant(j as i64), SymExpr::constant(0));
                        coords.push(Coord::Affine { dim: None, offset, scale });
                        substitute(&index_access, &coords, rank, false, e.span, budget)
                    };
                    let (axis, len) = (b + j, data_shape[b + j].clone());
                    if *mode == OobMode::Error
                        && let Some((shape, rank)) = &checked
                    {
                        let whole = entry(*rank, &mut self.budget)?;
                        self.check(&whole, shape, &len, axis, indices.span, e.span)?;
                    }
                    data_coords.push(Coord::Gathered {
                        index: entry(rank, &mut self.budget)?,
                        len,
                        mode: *mode,
                        origin: Origin(Some(e.span)),
                    });
                }
                data_coords.extend((b + m..data_shape.len()).map(|d| Coord::same(d - b - m + tuple)));
                substitute(&data_access, &data_coords, rank, true, e.span, &mut self.budget)?
            }
            TExprKind::AdvancedIndex { data, arrays, at } => self.advanced_index(e, data, arrays, *at)?,
            TExprKind::Nonzero { mask } => self.nonzero(mask, &shape, e.span)?,
            TExprKind::Store { .. } => {
                return Err(PlanError::Invalid("a store is only ever a program's root".into()));
            }
        };
        Ok((access, shape))
    }

    /// The `nonzero()` of a mask input, an input of the plan its executors derive from the mask
    /// per call (`name_nonzero: i64[T, k] = nonzero(name)`); the mask is an input too.
    fn nonzero(&mut self, mask: &TExpr, shape: &[SymExpr], span: Span) -> Result<Access<SymExpr>, PlanError> {
        let TExprKind::Input(mask_name) = &mask.kind else {
            return Err(PlanError::Invalid(format!(
                "the mask of a run-time `nonzero` must be an input: {mask}"
            )));
        };
        self.expr(mask)?;
        let name = nonzero_input(mask_name);
        let id = match self.input_ids.get(&name) {
            Some(&id) if self.inputs[id].nonzero_of() == Some(mask_name) => id,
            Some(_) => {
                return Err(PlanError::Invalid(format!(
                    "an input named `{name}` leaves no name for the `True`s of the mask `{mask_name}`"
                )));
            }
            None => {
                let decl = InputDecl {
                    derived: Some(Derived::Nonzero { mask: mask_name.clone() }),
                    ..InputDecl::dense(name.clone(), DType::I64, shape.to_vec())
                };
                self.inputs.push(decl);
                self.input_ids.insert(name, self.inputs.len() - 1);
                self.inputs.len() - 1
            }
        };
        let strides = row_major(shape, span)?;
        Ok(Access { buffer: BufferId::Input(id), base: SymExpr::constant(0), strides, terms: vec![] })
    }

    /// The dtype of a buffer declared so far.
    pub(super) fn buffer_dtype(&self, id: BufferId) -> DType {
        match id {
            BufferId::Input(i) => self.inputs[i].dtype,
            BufferId::Const(c) => self.consts[c].tensor.dtype(),
        }
    }

    /// Constant `c` cast to `dtype` now, as [`Self::cast_input`] casts an input per call.
    pub(super) fn cast_const(&mut self, c: usize, dtype: DType, span: Span) -> Result<usize, PlanError> {
        let tensor = slc_runtime::cast(&self.consts[c].tensor, dtype).map_err(|e| {
            PlanError::Invalid(format!("the store's value at {}..{}: {e}", span.start, span.end))
        })?;
        self.consts.push(ConstDecl { tensor });
        Ok(self.consts.len() - 1)
    }

    /// The input that is input `from` cast to `dtype` per call (`name_as_dtype: ... =
    /// cast(name)`): a store's value of another dtype than its target's. Its shape and strides
    /// are `from`'s, so an access to `from` reads it unchanged.
    pub(super) fn cast_input(&mut self, from: usize, dtype: DType) -> usize {
        let source = self.inputs[from].clone();
        let mut name = format!("{}_as_{dtype}", source.name);
        loop {
            match self.input_ids.get(&name) {
                Some(&id)
                    if self.inputs[id].cast_of() == Some(&source.name) && self.inputs[id].dtype == dtype =>
                {
                    return id;
                }
                Some(_) => name.push('_'),
                None => break,
            }
        }
        let decl = InputDecl {
            dtype,
            derived: Some(Derived::Cast { from: source.name.clone() }),
            name: name.clone(),
            ..source
        };
        self.inputs.push(decl);
        self.input_ids.insert(name, self.inputs.len() - 1);
        self.inputs.len() - 1
    }

    /// An `error`-mode gather's index, checked as a whole over `shape` before the kernel runs
    /// (NumPy and ONNX raise on any value, also one a later slice drops).
    fn check(
        &mut self,
        index: &Access<SymExpr>,
        shape: &[SymExpr],
        len: &SymExpr,
        axis: usize,
        origin: Span,
        span: Span,
    ) -> Result<(), PlanError> {
        self.budget.take(index.accesses(), span)?;
        // A constant index (a literal, a mask's nonzero()) whose every value is in range is
        // proven now: its check would read every value again on every call.
        if let (BufferId::Const(c), Some(len), true) = (index.buffer, len.as_const(), index.terms.is_empty())
            && all_in_range(&self.consts[c].tensor, len)
        {
            return Ok(());
        }
        // So is a column of a mask's derived positions over an axis as long as the mask's dim
        // it counts: every value is in `[0, dim)` by construction.
        if counts_mask_dim(&self.inputs, index, len) {
            return Ok(());
        }
        let origin = Origin(Some(origin));
        let (shape, len) = (shape.to_vec(), len.clone());
        self.checks.push(Check { index: index.clone(), shape, len, axis, origin });
        Ok(())
    }

    /// `data` indexed by `arrays` broadcast together, their dimensions at output position `at`:
    /// one access whose indirect terms all load at the shared broadcast coordinates. An array
    /// aligns at the last broadcast dimension, and its dimensions of 1 stay at 0 (NumPy's
    /// broadcasting). Each array NumPy checks is checked whole, over its own shape.
    fn advanced_index(
        &mut self,
        e: &TExpr,
        data: &TExpr,
        arrays: &[IndexArray],
        at: usize,
    ) -> Result<Access<SymExpr>, PlanError> {
        let (data_access, data_shape) = self.expr(data)?;
        let rank = e.ty.shape.len();
        let broadcast_shape = e.kind.broadcast_shape(&e.ty);
        let broadcast = broadcast_shape.len();
        let empty = broadcast_is_empty(broadcast_shape);
        let mut data_coords: Vec<Option<Coord>> = vec![None; data_shape.len()];
        for a in arrays {
            let (index_access, index_shape) = self.expr(&a.indices)?;
            let len = data_shape[a.axis].clone();
            let skip = broadcast - index_shape.len();
            if a.checked {
                // Over nothing when the broadcast is empty (NumPy then checks no value), which
                // an array of another shape decides only per call — also one that is the
                // broadcast's trailing dims (`[1, -3]` beside an `i32[N, 2]`: nothing at N = 0).
                let mut check_shape = index_shape.clone();
                if let Some(first) = check_shape.first_mut()
                    && index_shape[..] != broadcast_shape[..]
                    && empty.decide(&Default::default()).is_none()
                {
                    *first = SymExpr::select(empty.clone(), &SymExpr::constant(0), first);
                }
                self.check(&index_access, &check_shape, &len, a.source_axis, a.indices.span, e.span)?;
            }
            let index_coords: Vec<Coord> = (index_shape.iter().zip(&broadcast_shape[skip..]).enumerate())
                .map(|(d, (n, b))| {
                    // A dimension of 1 stretched to the broadcast stays at 0; one that may be 1
                    // or not (a symbol other than the broadcast's) moves by `(0 if n == 1 else 1)`.
                    let (zero, one) = (SymExpr::constant(0), SymExpr::constant(1));
                    let is_one = Cond::eq(n, &one);
                    let (dim, scale) = match is_one.decide(&Default::default()) {
                        Some(true) => (None, zero),
                        None if n != b => (Some(at + skip + d), SymExpr::select(is_one, &zero, &one)),
                        _ => (Some(at + skip + d), one),
                    };
                    Coord::Affine { dim, offset: SymExpr::constant(0), scale }
                })
                .collect();
            let index = substitute(&index_access, &index_coords, rank, false, e.span, &mut self.budget)?;
            let origin = Origin(Some(a.indices.span));
            data_coords[a.axis] = Some(Coord::Gathered { index, len, mode: OobMode::Error, origin });
        }
        // The other axes of the data keep their order around the broadcast dimensions.
        let mut kept = (0..at).chain(at + broadcast..rank);
        let coords: Vec<Coord> = data_coords
            .into_iter()
            .map(|c| {
                c.unwrap_or_else(|| Coord::Affine {
                    dim: kept.next(),
                    offset: SymExpr::constant(0),
                    scale: SymExpr::constant(1),
                })
            })
            .collect();
        substitute(&data_access, &coords, rank, true, e.span, &mut self.budget)
    }
}
