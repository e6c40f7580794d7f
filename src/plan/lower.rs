//! Lowering: the checked program becomes one [`Plan`]. Each checked node is a substitution of
//! coordinates into the accesses built so far (docs/semantics.md, Chains and fusion): a view maps old coordinates
//! affinely onto new ones, a gather replaces one coordinate by a loaded index, NumPy's advanced
//! indexing replaces several coordinates by indices loaded at shared broadcast coordinates. So
//! chains fuse by construction: nothing is materialized.

use super::ir::*;
use super::verify::PlanError;
use crate::limits::MAX_PLAN_ACCESSES;
use crate::sema::{IndexArray, TExpr, TExprKind, ViewDim};
use crate::source::Span;
use crate::types::{OobMode, row_major_strides};
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
    let mut b = Builder {
        strides,
        inputs: vec![],
        input_ids: HashMap::new(),
        consts: vec![],
        checks: vec![],
        budget: Budget(MAX_PLAN_ACCESSES),
    };
    let (mut output, shape) = b.expr(expr)?;
    if shape.contains(&0) {
        // No element is ever read: the canonical empty access forms no address.
        output = Access { buffer: output.buffer, base: 0, strides: vec![0; shape.len()], terms: vec![] };
    }
    Ok(Plan {
        inputs: b.inputs,
        consts: b.consts,
        requires: vec![],
        checks: b.checks,
        dtype: expr.ty.dtype,
        shape,
        output,
    })
}

/// Where an old coordinate comes from, in terms of the new coordinates.
#[derive(Debug, Clone)]
enum Coord {
    /// `old = offset + scale * new[dim]` (or just `offset` when `dim` is None).
    Affine { dim: Option<usize>, offset: i64, scale: i64 },
    /// `old = norm(load(index))`; `index` is over the new coordinates.
    Gathered { index: Access, len: i64, mode: OobMode },
}

fn overflow(span: Span) -> PlanError {
    PlanError::Overflow { span }
}

/// What is left of [`MAX_PLAN_ACCESSES`] while a plan is built.
struct Budget(usize);

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
fn substitute(
    access: &Access,
    coords: &[Coord],
    rank: usize,
    top: bool,
    span: Span,
    budget: &mut Budget,
) -> Result<Access, PlanError> {
    budget.take(1, span)?;
    let mut base = access.base;
    let mut strides = vec![0i64; rank];
    let mut terms = Vec::with_capacity(access.terms.len());
    for t in &access.terms {
        let index = substitute(&t.index, coords, rank, false, span, budget)?;
        terms.push(Indirect { index: Box::new(index), ..t.clone() });
    }
    for (&stride, coord) in access.strides.iter().zip(coords) {
        match coord {
            Coord::Affine { dim, offset, scale } => {
                base = stride.checked_mul(*offset).and_then(|d| base.checked_add(d)).ok_or(overflow(span))?;
                if let Some(d) = dim {
                    let s = stride.checked_mul(*scale).ok_or(overflow(span))?;
                    strides[*d] = strides[*d].checked_add(s).ok_or(overflow(span))?;
                }
            }
            Coord::Gathered { index, len, mode } => {
                if stride != 0 || top {
                    budget.take(index.accesses(), span)?;
                    terms.push(Indirect { index: Box::new(index.clone()), len: *len, stride, mode: *mode });
                }
            }
        }
    }
    Ok(Access { buffer: access.buffer, base, strides, terms })
}

/// Row-major element strides, with 0 along unit axes (the plan's canonical form: a unit axis
/// moves nowhere).
fn row_major(shape: &[i64], span: Span) -> Result<Vec<i64>, PlanError> {
    let mut strides = row_major_strides(shape, 1).ok_or(overflow(span))?;
    for (s, &d) in strides.iter_mut().zip(shape) {
        if d == 1 {
            *s = 0;
        }
    }
    Ok(strides)
}

/// The canonical layout of an input of `shape` with element `strides`: `None` when it is dense
/// (or empty), else the strides with 0 along unit axes.
fn canonical_strides(shape: &[i64], strides: &[i64], span: Span) -> Result<Option<Vec<i64>>, PlanError> {
    if strides.len() != shape.len() {
        return Err(PlanError::Invalid(format!(
            "{} strides for an input of rank {}",
            strides.len(),
            shape.len()
        )));
    }
    let dense = row_major(shape, span)?;
    let canonical: Vec<i64> = strides.iter().zip(shape).map(|(&s, &d)| if d == 1 { 0 } else { s }).collect();
    Ok((!shape.contains(&0) && canonical != dense).then_some(canonical))
}

struct Builder<'s> {
    strides: &'s InputStrides,
    inputs: Vec<InputDecl>,
    input_ids: HashMap<String, usize>,
    consts: Vec<ConstDecl>,
    checks: Vec<Check>,
    budget: Budget,
}

impl Builder<'_> {
    fn expr(&mut self, e: &TExpr) -> Result<(Access, Vec<i64>), PlanError> {
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
                    Some(s) => s.clone(),
                    None => row_major(&shape, e.span)?,
                };
                Access { buffer: BufferId::Input(id), base: 0, strides, terms: vec![] }
            }
            TExprKind::Const(t) => {
                self.consts.push(ConstDecl { tensor: t.clone() });
                let id = BufferId::Const(self.consts.len() - 1);
                Access { buffer: id, base: 0, strides: row_major(&shape, e.span)?, terms: vec![] }
            }
            TExprKind::View { base, dims } => {
                let (access, _) = self.expr(base)?;
                let mut coords = Vec::with_capacity(dims.len());
                let mut out = 0;
                for d in dims {
                    match *d {
                        ViewDim::Range { start, step, len } => {
                            // A dimension of one element never moves: stride 0 keeps huge steps
                            // (`a[::2**62]`) from overflowing.
                            let scale = if len <= 1 { 0 } else { step };
                            coords.push(Coord::Affine { dim: Some(out), offset: start, scale });
                            out += 1;
                        }
                        ViewDim::Pick(i) => coords.push(Coord::Affine { dim: None, offset: i, scale: 0 }),
                        ViewDim::NewAxis => out += 1,
                    }
                }
                substitute(&access, &coords, out, true, e.span, &mut self.budget)?
            }
            TExprKind::Gather { data, indices, axis, batch_dims, mode } => {
                let (data_access, data_shape) = self.expr(data)?;
                let (index_access, index_shape) = self.expr(indices)?;
                let (axis, b, q) = (*axis, *batch_dims, index_shape.len());
                let len = data_shape[axis];
                if *mode == OobMode::Error {
                    self.check(&index_access, &index_shape, len, axis, indices.span, e.span)?;
                }
                let rank = shape.len();
                let index_coords: Vec<Coord> = (0..q)
                    .map(|e| {
                        let dim = if e < b { e } else { axis + e - b };
                        Coord::Affine { dim: Some(dim), offset: 0, scale: 1 }
                    })
                    .collect();
                let index = substitute(&index_access, &index_coords, rank, false, e.span, &mut self.budget)?;
                let data_coords: Vec<Coord> = (0..data_shape.len())
                    .map(|d| match d.cmp(&axis) {
                        std::cmp::Ordering::Less => Coord::Affine { dim: Some(d), offset: 0, scale: 1 },
                        std::cmp::Ordering::Equal => {
                            Coord::Gathered { index: index.clone(), len, mode: *mode }
                        }
                        std::cmp::Ordering::Greater => {
                            Coord::Affine { dim: Some(d + q - b - 1), offset: 0, scale: 1 }
                        }
                    })
                    .collect();
                substitute(&data_access, &data_coords, rank, true, e.span, &mut self.budget)?
            }
            TExprKind::GatherElements { data, indices, axis, mode } => {
                let (data_access, data_shape) = self.expr(data)?;
                let (index, _) = self.expr(indices)?;
                let (axis, len) = (*axis, data_shape[*axis]);
                if *mode == OobMode::Error {
                    self.check(&index, &shape, len, axis, indices.span, e.span)?;
                }
                // The output has the indices' shape, so the index is read at the output
                // coordinates themselves; so are the data's other axes (a corner of them when
                // the indices are smaller: a unit output axis then moves nowhere).
                let data_coords: Vec<Coord> = (0..shape.len())
                    .map(|d| match d == axis {
                        true => Coord::Gathered { index: index.clone(), len, mode: *mode },
                        false => Coord::Affine { dim: Some(d), offset: 0, scale: i64::from(shape[d] > 1) },
                    })
                    .collect();
                substitute(&data_access, &data_coords, shape.len(), true, e.span, &mut self.budget)?
            }
            TExprKind::GatherNd { data, indices, batch_dims, mode } => {
                let (data_access, data_shape) = self.expr(data)?;
                let (index_access, index_shape) = self.expr(indices)?;
                let (b, tuple, rank) = (*batch_dims, index_shape.len() - 1, shape.len());
                let m = index_shape[tuple] as usize;
                let mut data_coords: Vec<Coord> =
                    (0..b).map(|d| Coord::Affine { dim: Some(d), offset: 0, scale: 1 }).collect();
                for j in 0..m {
                    // Entry j of each tuple: the index with its last coordinate fixed, read at
                    // the output's leading `tuple` coordinates.
                    let entry = |rank, budget: &mut Budget| {
                        let mut coords: Vec<Coord> =
                            (0..tuple).map(|k| Coord::Affine { dim: Some(k), offset: 0, scale: 1 }).collect();
                        coords.push(Coord::Affine { dim: None, offset: j as i64, scale: 0 });
                        substitute(&index_access, &coords, rank, false, e.span, budget)
                    };
                    let (axis, len) = (b + j, data_shape[b + j]);
                    if *mode == OobMode::Error {
                        let whole = entry(tuple, &mut self.budget)?;
                        self.check(&whole, &index_shape[..tuple], len, axis, indices.span, e.span)?;
                    }
                    data_coords.push(Coord::Gathered {
                        index: entry(rank, &mut self.budget)?,
                        len,
                        mode: *mode,
                    });
                }
                data_coords.extend((b + m..data_shape.len()).map(|d| Coord::Affine {
                    dim: Some(d - b - m + tuple),
                    offset: 0,
                    scale: 1,
                }));
                substitute(&data_access, &data_coords, rank, true, e.span, &mut self.budget)?
            }
            TExprKind::AdvancedIndex { data, arrays, at } => self.advanced_index(e, data, arrays, *at)?,
        };
        Ok((access, shape))
    }

    /// An `error`-mode gather's index, checked as a whole over `shape` before the kernel runs
    /// (NumPy and ONNX raise on any value, also one a later slice drops).
    fn check(
        &mut self,
        index: &Access,
        shape: &[i64],
        len: i64,
        axis: usize,
        origin: Span,
        span: Span,
    ) -> Result<(), PlanError> {
        self.budget.take(index.accesses(), span)?;
        let origin = Origin(Some(origin));
        self.checks.push(Check { index: index.clone(), shape: shape.to_vec(), len, axis, origin });
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
    ) -> Result<Access, PlanError> {
        let (data_access, data_shape) = self.expr(data)?;
        let rank = e.ty.shape.len();
        let broadcast = e.kind.broadcast_shape(&e.ty).len();
        let mut data_coords: Vec<Option<Coord>> = vec![None; data_shape.len()];
        for a in arrays {
            let (index_access, index_shape) = self.expr(&a.indices)?;
            let len = data_shape[a.axis];
            if a.checked {
                self.check(&index_access, &index_shape, len, a.source_axis, a.indices.span, e.span)?;
            }
            let skip = broadcast - index_shape.len();
            let index_coords: Vec<Coord> = index_shape
                .iter()
                .enumerate()
                .map(|(d, &n)| {
                    let dim = (n != 1).then_some(at + skip + d);
                    Coord::Affine { dim, offset: 0, scale: 1 }
                })
                .collect();
            let index = substitute(&index_access, &index_coords, rank, false, e.span, &mut self.budget)?;
            data_coords[a.axis] = Some(Coord::Gathered { index, len, mode: OobMode::Error });
        }
        // The other axes of the data keep their order around the broadcast dimensions.
        let mut kept = (0..at).chain(at + broadcast..rank);
        let coords: Vec<Coord> = data_coords
            .into_iter()
            .map(|c| c.unwrap_or_else(|| Coord::Affine { dim: kept.next(), offset: 0, scale: 1 }))
            .collect();
        substitute(&data_access, &coords, rank, true, e.span, &mut self.budget)
    }
}
