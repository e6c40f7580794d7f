//! Values of integer tensor expressions while the program is checked: operator parameters such
//! as `strided_slice(a, b[1:], ...)` whose inputs are bound with values. The checked program is
//! a tree of a few core operations over normalized coordinates, so its value is read element by
//! element, straight from the definitions in `typed.rs` — no plan, no back end. Parameters are
//! short lists, so speed does not matter here; `tests/consteval.rs` holds this against the
//! reference interpreter of the plan.

use super::typed::{TExpr, TExprKind, ViewDim};
use crate::types::sym::SymExpr;
use crate::types::{Coords, IndexOutOfRange, OobMode};
use slc_runtime::{DType, Tensor};

/// Why an expression has no value now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConstEvalError {
    /// The expression reads an input bound without a value (`--shape`, not `-i`).
    Unknown(String),
    /// A gathered index is out of range.
    IndexOutOfRange { index: i128, axis: usize, len: i64 },
    /// Not integer data.
    NotInteger,
    /// A shape or an index that depends on symbols.
    Symbolic,
}

/// The value of a constant dim or index.
fn known(e: &SymExpr) -> Result<i64, ConstEvalError> {
    e.as_const().ok_or(ConstEvalError::Symbolic)
}

/// The dims of a node, when all are constants.
fn dims(t: &TExpr) -> Result<Vec<i64>, ConstEvalError> {
    t.ty.concrete_shape().ok_or(ConstEvalError::Symbolic)
}

/// The elements of `t` in C order, as integers (a bool as 0 or 1: boolean masks are read so).
/// `value_of` gives the tensors bound with values.
pub fn evaluate<'v>(
    t: &TExpr,
    value_of: &dyn Fn(&str) -> Option<&'v Tensor>,
) -> Result<Vec<i128>, ConstEvalError> {
    if !t.ty.dtype.is_integer() && t.ty.dtype != DType::Bool {
        return Err(ConstEvalError::NotInteger);
    }
    check_indices(t, value_of)?;
    Coords::new(&dims(t)?).map(|c| element(t, &c, value_of)).collect()
}

/// NumPy raises on any out-of-range value of an index array, also one whose element a later
/// slice drops: every `error`-mode gather's whole index operand is checked first.
fn check_indices<'v>(t: &TExpr, value_of: &dyn Fn(&str) -> Option<&'v Tensor>) -> Result<(), ConstEvalError> {
    for child in t.kind.children() {
        check_indices(child, value_of)?;
    }
    match &t.kind {
        TExprKind::Gather { data, indices, axis, mode: OobMode::Error, .. }
        | TExprKind::GatherElements { data, indices, axis, mode: OobMode::Error } => {
            let len = known(&data.ty.shape[*axis])?;
            check_all(indices, |_| (len, *axis), value_of)
        }
        // An index tuple's entry `j` (its last coordinate) selects on axis `batch_dims + j`.
        TExprKind::GatherNd { data, indices, batch_dims, mode: OobMode::Error } => {
            let data_shape = dims(data)?;
            // An output empty for a sliced dim of 0 reads no index (docs/semantics.md, gather_nd).
            let m = known(&indices.ty.shape[indices.ty.shape.len() - 1])? as usize;
            if data_shape[batch_dims + m..].contains(&0) {
                return Ok(());
            }
            check_all(
                indices,
                |c| {
                    let axis = batch_dims + c[c.len() - 1] as usize;
                    (data_shape[axis], axis)
                },
                value_of,
            )
        }
        TExprKind::AdvancedIndex { data, arrays, .. } => {
            let data_shape = dims(data)?;
            (arrays.iter().filter(|a| a.checked))
                .try_for_each(|a| check_all(&a.indices, |_| (data_shape[a.axis], a.source_axis), value_of))
        }
        _ => Ok(()),
    }
}

/// Every value of `indices` must be an index into the axis `bound_of` gives for its coordinate:
/// that axis's length, and its number as messages name it.
fn check_all<'v>(
    indices: &TExpr,
    bound_of: impl Fn(&[i64]) -> (i64, usize),
    value_of: &dyn Fn(&str) -> Option<&'v Tensor>,
) -> Result<(), ConstEvalError> {
    for c in Coords::new(&dims(indices)?) {
        let index = element(indices, &c, value_of)?;
        let (len, axis) = bound_of(&c);
        if OobMode::Error.normalize(index, len).is_err() {
            return Err(ConstEvalError::IndexOutOfRange { index, axis, len });
        }
    }
    Ok(())
}

/// The element of `t` at output coordinate `c`.
fn element<'v>(
    t: &TExpr,
    c: &[i64],
    value_of: &dyn Fn(&str) -> Option<&'v Tensor>,
) -> Result<i128, ConstEvalError> {
    match &t.kind {
        TExprKind::Input(name) => {
            let tensor = value_of(name).ok_or_else(|| ConstEvalError::Unknown(name.clone()))?;
            stored(tensor, c)
        }
        // Its length is a symbol: never evaluated now.
        TExprKind::Nonzero { .. } => Err(ConstEvalError::Symbolic),
        // Only ever a program's root, never an operator parameter: not a value to evaluate.
        TExprKind::Store { .. } => Err(ConstEvalError::NotInteger),
        TExprKind::Const(tensor) => stored(tensor, c),
        TExprKind::View { base, dims } => {
            let mut out = c.iter();
            let mut at = Vec::with_capacity(base.ty.shape.len());
            for dim in dims {
                match dim {
                    ViewDim::Range { start, step, .. } => {
                        at.push(known(start)? + out.next().copied().unwrap_or(0) * step)
                    }
                    ViewDim::Pick(i) => at.push(known(i)?),
                    ViewDim::NewAxis => {
                        out.next();
                    }
                }
            }
            element(base, &at, value_of)
        }
        TExprKind::Gather { data, indices, axis, batch_dims, mode } => {
            // out = data[:axis] + indices[batch_dims:] + data[axis+1:]; the batch coordinates
            // lead both the data's and the indices'.
            let (axis, batch) = (*axis, *batch_dims);
            let taken = indices.ty.shape.len() - batch;
            let index_at: Vec<i64> = c[..batch].iter().chain(&c[axis..axis + taken]).copied().collect();
            let Some(j) = gathered(data, indices, &index_at, axis, *mode, value_of)? else { return Ok(0) };
            let mut at = c[..axis].to_vec();
            at.push(j);
            at.extend_from_slice(&c[axis + taken..]);
            element(data, &at, value_of)
        }
        TExprKind::GatherElements { data, indices, axis, mode } => {
            let mut at = c.to_vec();
            let Some(j) = gathered(data, indices, c, *axis, *mode, value_of)? else { return Ok(0) };
            at[*axis] = j;
            element(data, &at, value_of)
        }
        TExprKind::GatherNd { data, indices, batch_dims, mode } => {
            // out = indices.shape[:-1] + data.shape[batch_dims+m:]; the tuple's entries replace
            // data axes batch_dims..batch_dims+m.
            let tuple = indices.ty.shape.len() - 1;
            let m = known(&indices.ty.shape[tuple])? as usize;
            let mut index_at = c[..tuple].to_vec();
            index_at.push(0);
            let mut at = c[..*batch_dims].to_vec();
            for j in 0..m {
                index_at[tuple] = j as i64;
                let Some(v) = gathered(data, indices, &index_at, batch_dims + j, *mode, value_of)? else {
                    return Ok(0);
                };
                at.push(v);
            }
            at.extend_from_slice(&c[tuple..]);
            element(data, &at, value_of)
        }
        TExprKind::AdvancedIndex { data, arrays, at } => {
            // The broadcast coordinates sit at `at`; the data's other axes keep their order
            // around them.
            let broadcast = &c[*at..*at + t.kind.broadcast_shape(&t.ty).len()];
            let mut kept = c[..*at].iter().chain(&c[*at + broadcast.len()..]);
            let mut data_at = vec![0; data.ty.shape.len()];
            for (axis, slot) in data_at.iter_mut().enumerate() {
                *slot = match arrays.iter().find(|a| a.axis == axis) {
                    Some(a) => {
                        let index_at = broadcast_coords(&dims(&a.indices)?, broadcast);
                        // `error` mode never misses: a value out of range is an error.
                        gathered(data, &a.indices, &index_at, axis, OobMode::Error, value_of)?.unwrap_or(0)
                    }
                    None => kept.next().copied().unwrap_or(0),
                };
            }
            element(data, &data_at, value_of)
        }
    }
}

/// The index `indices[index_at]` normalized against data axis `axis`: `None` for a `zero`-mode
/// miss.
fn gathered<'v>(
    data: &TExpr,
    indices: &TExpr,
    index_at: &[i64],
    axis: usize,
    mode: OobMode,
    value_of: &dyn Fn(&str) -> Option<&'v Tensor>,
) -> Result<Option<i64>, ConstEvalError> {
    let j = element(indices, index_at, value_of)?;
    let len = known(&data.ty.shape[axis])?;
    mode.normalize(j, len).map_err(|IndexOutOfRange| ConstEvalError::IndexOutOfRange { index: j, axis, len })
}

/// The coordinates in an array of `shape` that broadcasting reads at the broadcast coordinates
/// `at`: NumPy aligns shapes at their last dimension, and a dimension of 1 repeats its one
/// element.
fn broadcast_coords(shape: &[i64], at: &[i64]) -> Vec<i64> {
    let skip = at.len() - shape.len();
    shape.iter().zip(&at[skip..]).map(|(&n, &i)| if n == 1 { 0 } else { i }).collect()
}

/// The element of a stored tensor at coordinate `c`.
fn stored(t: &Tensor, c: &[i64]) -> Result<i128, ConstEvalError> {
    let linear = c.iter().zip(t.shape()).fold(0usize, |acc, (&i, &d)| acc * d + i as usize);
    if t.dtype() == DType::Bool {
        return t.bytes().get(linear).map(|&b| i128::from(b != 0)).ok_or(ConstEvalError::NotInteger);
    }
    t.int_at(linear).ok_or(ConstEvalError::NotInteger)
}
