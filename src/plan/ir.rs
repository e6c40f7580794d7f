//! The normalized plan IR: the contract between every front end and every back end.
//!
//! A plan computes one dense, C-ordered output tensor. Each output element is read from one
//! place, given by an [`Access`]: an affine function of the output coordinates over one buffer,
//! plus zero or more *indirect* terms whose value is loaded from another buffer (an index
//! tensor) through an access of its own:
//!
//! ```text
//! address(o) = base + Σ_d o_d·strides[d] + Σ_t t.stride · norm_t(load(t.index, o))
//! out[o]     = buffer[address(o)]          (or 0 when a `zero`-mode index is out of range)
//! ```
//!
//! All surface forms (NumPy indexing, strided_slice, slice, the gathers, slice1) lower to
//! this one shape, and compose inside it: a slice of a slice is a new affine map, a slice of a
//! gather rewrites the strides of the gather's data *and* index accesses, a gather of a gather
//! nests an indirect term inside an index access. Nothing is ever materialized in between.
//!
//! Offsets and strides count elements of the buffer's own dtype (back ends multiply by the
//! width). Every quantity is i64; `verify` proves that no address leaves its buffer.
//!
//! Besides the output access, a plan carries [`Check`]s: NumPy raises on *any* out-of-range
//! value in an index array, even when a later slice drops the element that holds it
//! (`a[idx][1:]`), so `error`-mode gathers check their whole index tensor before the kernel runs.

use crate::source::Span;
use crate::types::OobMode;
use slc_runtime::{DType, Tensor};

/// A buffer the plan reads: an input bound by name, or a constant carried in the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BufferId {
    Input(usize),
    Const(usize),
}

/// A tensor argument of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct InputDecl {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<i64>,
    /// Element strides of a strided view (NumPy's `x[::2]`, `x.T`, negative steps), read in
    /// place: accesses address elements relative to element `[0, ..., 0]`, which need not be
    /// the lowest one. `None`: dense and C-ordered. Never the strides of a dense layout, and 0
    /// along unit axes, so that equal layouts make equal plans.
    pub strides: Option<Vec<i64>>,
}

impl InputDecl {
    /// A dense, C-ordered input.
    pub fn dense(name: impl Into<String>, dtype: DType, shape: Vec<i64>) -> InputDecl {
        InputDecl { name: name.into(), dtype, shape, strides: None }
    }

    /// The offsets of the lowest and the highest element relative to element `[0, ..., 0]`
    /// (in elements), or `None` when there is no element; `None` too when they overflow i64
    /// (verification rejects such a plan).
    pub fn window(&self) -> Option<(i64, i64)> {
        if self.shape.contains(&0) {
            return None;
        }
        let Some(strides) = &self.strides else {
            return crate::types::checked_numel(&self.shape).map(|n| (0, n - 1));
        };
        let (mut lo, mut hi) = (0i128, 0i128);
        for (&d, &s) in self.shape.iter().zip(strides) {
            let reach = (d as i128 - 1) * s as i128;
            if reach < 0 { lo += reach } else { hi += reach }
        }
        Some((i64::try_from(lo).ok()?, i64::try_from(hi).ok()?))
    }

    /// The shape of the tensor that carries this input to an executor: its own when dense; for
    /// a strided view, its window (every element from the lowest to the highest) as one axis.
    pub fn tensor_shape(&self) -> Vec<i64> {
        match (&self.strides, self.window()) {
            (None, _) => self.shape.clone(),
            (Some(_), Some((lo, hi))) => vec![hi - lo + 1],
            (Some(_), None) => vec![0],
        }
    }
}

/// A constant tensor (index list literals), stored in the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstDecl {
    pub tensor: Tensor,
}

/// An affine read of `buffer` over some coordinate space, plus indirect terms.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Access {
    pub buffer: BufferId,
    pub base: i64,
    /// One stride per coordinate dimension (signed; 0 for broadcast / newaxis / unit dims).
    pub strides: Vec<i64>,
    pub terms: Vec<Indirect>,
}

impl Access {
    /// The accesses of this tree: this one and every index access below it.
    pub fn accesses(&self) -> usize {
        1 + self.terms.iter().map(|t| t.index.accesses()).sum::<usize>()
    }

    /// Levels of index accesses nested in this one (0 without terms).
    pub fn nesting(&self) -> usize {
        self.terms.iter().map(|t| 1 + t.index.nesting()).max().unwrap_or(0)
    }
}

/// `stride · norm(load(index))`: one gathered coordinate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Indirect {
    /// Reads the index value; over the same coordinates as the access that holds this term.
    pub index: Box<Access>,
    /// The size of the gathered axis: the bound for `mode`.
    pub len: i64,
    pub stride: i64,
    pub mode: OobMode,
}

/// Every value of `index` over `shape` must satisfy `-len ≤ j < len`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Check {
    pub index: Access,
    pub shape: Vec<i64>,
    pub len: i64,
    /// The axis the index selects on, for the error message.
    pub axis: usize,
    /// The index expression in the program text, where a failed check points.
    pub origin: Origin,
}

/// Where a part of the plan came from in the program text. Not part of what the plan computes:
/// plans that differ only in their origins are equal, print alike and share compiled kernels.
#[derive(Debug, Clone, Copy, Default)]
pub struct Origin(pub Option<Span>);

impl PartialEq for Origin {
    fn eq(&self, _: &Origin) -> bool {
        true
    }
}

impl Eq for Origin {}

impl std::hash::Hash for Origin {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    pub inputs: Vec<InputDecl>,
    pub consts: Vec<ConstDecl>,
    pub checks: Vec<Check>,
    pub dtype: DType,
    pub shape: Vec<i64>,
    /// Over the output coordinates. For an empty output it is canonical: base 0, strides 0, no terms.
    pub output: Access,
}

impl Plan {
    pub fn buffer_dtype(&self, id: BufferId) -> Option<DType> {
        match id {
            BufferId::Input(i) => self.inputs.get(i).map(|d| d.dtype),
            BufferId::Const(i) => self.consts.get(i).map(|c| c.tensor.dtype()),
        }
    }

    /// The shape of the tensor behind a buffer (an input's [`InputDecl::tensor_shape`]).
    pub fn buffer_shape(&self, id: BufferId) -> Option<Vec<i64>> {
        match id {
            BufferId::Input(i) => self.inputs.get(i).map(InputDecl::tensor_shape),
            BufferId::Const(i) => {
                self.consts.get(i).map(|c| c.tensor.shape().iter().map(|&d| d as i64).collect())
            }
        }
    }

    /// The element offsets, relative to where accesses count from, that a buffer holds: its
    /// lowest and highest; `None` for an empty (or undeclared) buffer.
    pub fn buffer_window(&self, id: BufferId) -> Option<(i64, i64)> {
        match id {
            BufferId::Input(i) => self.inputs.get(i)?.window(),
            BufferId::Const(i) => {
                let n = self.consts.get(i)?.tensor.numel() as i64;
                (n > 0).then_some((0, n - 1))
            }
        }
    }

    /// The output's size in bytes (saturating; verification bounds it by i64).
    pub fn output_bytes(&self) -> u64 {
        let numel = self.shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d.max(0) as u64));
        numel.and_then(|n| n.checked_mul(self.dtype.width() as u64)).unwrap_or(u64::MAX)
    }

    /// Levels of index accesses nested in the output access or in any check: how deeply the
    /// stages over this plan recurse.
    pub fn nesting(&self) -> usize {
        let checks = self.checks.iter().map(|c| c.index.nesting());
        checks.fold(self.output.nesting(), usize::max)
    }

    pub fn buffer_name(&self, id: BufferId) -> String {
        match id {
            BufferId::Input(i) => self.inputs.get(i).map_or_else(|| format!("?{i}"), |d| d.name.clone()),
            BufferId::Const(i) => format!("${i}"),
        }
    }
}
