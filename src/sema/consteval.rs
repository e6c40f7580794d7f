//! Values of integer tensor expressions while the program is checked: operator parameters such
//! as `strided_slice(a, b[1:], ...)` whose inputs are bound with values. The checked program is
//! a tree of a few core operations over normalized coordinates, so its value is read element by
//! element, straight from the definitions in `typed.rs` — no plan, no back end. Parameters are
//! short lists, so speed does not matter here; `tests/consteval.rs` holds this against the
//! reference interpreter of the plan.

use super::typed::{TExpr, TExprKind, ViewDim};
use crate::types::{Coords, IndexOutOfRange, OobMode};
use slc_runtime::Tensor;

/// Why an expression has no value now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConstEvalError {
    /// The expression reads an input bound without a value (`--shape`, not `-i`).
    Unknown(String),
    /// A gathered index is out of range.
    IndexOutOfRange { index: i128, axis: usize, len: i64 },
    /// Not integer data.
    NotInteger,
}

/// The elements of `t` in C order, as integers. `value_of` gives the tensors bound with values.
pub fn evaluate<'v>(
    t: &TExpr,
    value_of: &dyn Fn(&str) -> Option<&'v Tensor>,
) -> Result<Vec<i128>, ConstEvalError> {
    if !t.ty.dtype.is_integer() {
        return Err(ConstEvalError::NotInteger);
    }
    check_indices(t, value_of)?;
    Coords::new(&t.ty.shape).map(|c| element(t, &c, value_of)).collect()
}

/// NumPy raises on any out-of-range value of an index array, also one whose element a later
/// slice drops: every `error`-mode gather's whole index operand is checked first.
fn check_indices<'v>(t: &TExpr, value_of: &dyn Fn(&str) -> Option<&'v Tensor>) -> Result<(), ConstEvalError> {
    for child in t.kind.children() {
        check_indices(child, value_of)?;
    }
    // The data axis an index element selects on: `axis`, or for an index tuple's entry `j`
    // (its last coordinate), `axis + j`.
    let (data, indices, axis, tuples) = match &t.kind {
        TExprKind::Gather { data, indices, axis, mode: OobMode::Error, .. }
        | TExprKind::GatherElements { data, indices, axis, mode: OobMode::Error } => {
            (data, indices, *axis, false)
        }
        TExprKind::GatherNd { data, indices, batch_dims, mode: OobMode::Error } => {
            (data, indices, *batch_dims, true)
        }
        _ => return Ok(()),
    };
    for c in Coords::new(&indices.ty.shape) {
        let index = element(indices, &c, value_of)?;
        let axis = axis + if tuples { c[c.len() - 1] as usize } else { 0 };
        let len = data.ty.shape[axis];
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
        TExprKind::Const(tensor) => stored(tensor, c),
        TExprKind::View { base, dims } => {
            let mut out = c.iter();
            let mut at = Vec::with_capacity(base.ty.shape.len());
            for dim in dims {
                match *dim {
                    ViewDim::Range { start, step, .. } => {
                        at.push(start + out.next().copied().unwrap_or(0) * step)
                    }
                    ViewDim::Pick(i) => at.push(i),
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
            let m = indices.ty.shape[tuple] as usize;
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
        TExprKind::Transpose { base, perm } => {
            let mut at = vec![0; perm.len()];
            for (i, &p) in perm.iter().enumerate() {
                at[p] = c[i];
            }
            element(base, &at, value_of)
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
    let len = data.ty.shape[axis];
    mode.normalize(j, len).map_err(|IndexOutOfRange| ConstEvalError::IndexOutOfRange { index: j, axis, len })
}

/// The element of a stored tensor at coordinate `c`.
fn stored(t: &Tensor, c: &[i64]) -> Result<i128, ConstEvalError> {
    let linear = c.iter().zip(t.shape()).fold(0usize, |acc, (&i, &d)| acc * d + i as usize);
    t.int_at(linear).ok_or(ConstEvalError::NotInteger)
}
