//! Building a [`LoopNest`] from a plan, before any pass: the output's (or a store's update,
//! or an index check's) loops in C order, each read as a byte stream over them, and the byte
//! window of every buffer whose shape is constant (for the passes that size reads).

use super::store::combining;
use super::{LoopNest, NestKind, Strategy, Stream, Term, is_const, takes_store};
use crate::plan::{Access, BufferId, Check, GenericPlan, InputDecl};
use crate::types::OobMode;
use crate::types::sym::SymExpr;
use slc_runtime::DType;

/// The read stream of `a` (elements of `w` bytes) in bytes, its buffers numbered as in the
/// kernel's table.
fn stream(plan: &GenericPlan, a: &Access<SymExpr>, w: i64) -> Stream {
    let buffer = match a.buffer {
        BufferId::Input(i) => i,
        BufferId::Const(i) => plan.inputs.len() + i,
    };
    let w = SymExpr::constant(w);
    let term = |t: &crate::plan::Indirect<SymExpr>| {
        let index_dtype = plan.buffer_dtype(t.index.buffer).unwrap_or(DType::I64);
        Term {
            index: stream(plan, &t.index, index_dtype.width() as i64),
            index_dtype,
            len: t.len.clone(),
            stride: t.stride.mul(&w),
            mode: t.mode,
        }
    };
    Stream {
        buffer,
        base: a.base.mul(&w),
        strides: a.strides.iter().map(|s| s.mul(&w)).collect(),
        terms: a.terms.iter().map(term).collect(),
    }
}

/// The bytes `[first, end)` a buffer holds around its table pointer (element `[0, ..., 0]`):
/// `first` is negative for a view with negative strides.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ByteWindow {
    pub first: i64,
    pub end: i64,
}

impl ByteWindow {
    pub fn bytes(self) -> i64 {
        self.end - self.first
    }
}

/// The byte window of every buffer of `plan`'s kernel table whose shape is constant
/// (verification proved them i64); `None` for the others.
fn buffer_windows(plan: &GenericPlan) -> Vec<Option<ByteWindow>> {
    let concrete_inputs: Vec<Option<InputDecl>> = plan
        .inputs
        .iter()
        .map(|d| {
            let shape = d.shape.iter().map(SymExpr::as_const).collect::<Option<Vec<i64>>>()?;
            Some(InputDecl { strides: d.strides.clone(), ..InputDecl::dense(String::new(), d.dtype, shape) })
        })
        .collect();
    let windows = concrete_inputs.iter().map(|d| d.as_ref().and_then(InputDecl::window)).chain(
        plan.consts.iter().map(|c| {
            let n = c.tensor.numel() as i64;
            (n > 0).then_some((0, n - 1))
        }),
    );
    let ids = (0..plan.inputs.len()).map(BufferId::Input).chain((0..plan.consts.len()).map(BufferId::Const));
    ids.zip(windows)
        .map(|(id, window)| {
            let width = plan.buffer_dtype(id).map_or(0, |d| d.width() as i64);
            window.map(|(lo, hi)| ByteWindow { first: lo * width, end: (hi + 1) * width })
        })
        .collect()
}

impl LoopNest {
    /// The loop nest that walks `plan`'s output in C order, before any pass. For a store plan
    /// the loop nest can write ([`takes_store`]) it is the *update nest*: over the update
    /// coordinates, reading the value and writing the destination's affine address; its caller
    /// has copied the target into the output and offsets the output pointer by the
    /// destination's base ([`store_base_bytes`](super::store_base_bytes)). Any other store plan is scheduled as its copy
    /// alone, which no back end compiles (`jit::compile` refuses it).
    pub fn from_plan(plan: &GenericPlan) -> LoopNest {
        if let Some(store) = plan.store.as_ref().filter(|_| takes_store(plan)) {
            let w = plan.dtype.width() as i64;
            let rank = store.shape.len();
            let dest = stream(plan, &store.dest, w);
            let (data, masked_value) = match &store.when {
                Some(mask) => (stream(plan, mask, 1), Some(stream(plan, &store.value, w))),
                None => (stream(plan, &store.value, w), None),
            };
            return LoopNest {
                kind: NestKind::Output,
                width: w as u8,
                extents: store.shape.clone(),
                out: dest.strides,
                out_terms: dest.terms,
                data,
                masked_value,
                strategies: vec![Strategy::Serial; rank],
                empty: store.shape.iter().any(|d| is_const(d, 0)),
                buffer_windows: buffer_windows(plan),
                params: vec![],
                combine: combining(plan, dest.base),
            };
        }
        let width = plan.dtype.width() as u8;
        let w = width as i64;
        let mut out = vec![SymExpr::constant(0); plan.shape.len()];
        let mut acc = SymExpr::constant(w);
        for (o, d) in out.iter_mut().zip(&plan.shape).rev() {
            *o = acc.clone();
            acc = acc.mul(d);
        }
        LoopNest {
            kind: NestKind::Output,
            width,
            extents: plan.shape.clone(),
            out,
            out_terms: vec![],
            data: stream(plan, &plan.output, w),
            strategies: vec![Strategy::Serial; plan.shape.len()],
            empty: plan.shape.iter().any(|d| is_const(d, 0)),
            buffer_windows: buffer_windows(plan),
            params: vec![],
            combine: None,
            masked_value: None,
        }
    }

    /// The loop nest of `check` of `plan`, before any pass: over the check's shape, it reads
    /// element 0 of the index buffer (which holds at least the values checked) plus 0 × the
    /// normalized index, so only the term's bound check matters.
    pub fn from_check(plan: &GenericPlan, check: &Check<SymExpr>) -> LoopNest {
        let dtype = plan.buffer_dtype(check.index.buffer).unwrap_or(DType::I64);
        let rank = check.shape.len();
        let checked = stream(plan, &check.index, dtype.width() as i64);
        let zero = SymExpr::constant(0);
        LoopNest {
            kind: NestKind::Check,
            width: dtype.width() as u8,
            extents: check.shape.clone(),
            out: vec![zero.clone(); rank],
            out_terms: vec![],
            data: Stream {
                buffer: checked.buffer,
                base: zero.clone(),
                strides: vec![zero.clone(); rank],
                terms: vec![Term {
                    index: checked,
                    index_dtype: dtype,
                    len: check.len.clone(),
                    stride: zero,
                    mode: OobMode::Error,
                }],
            },
            strategies: vec![Strategy::Serial; rank],
            empty: check.shape.iter().any(|d| is_const(d, 0)),
            buffer_windows: buffer_windows(plan),
            params: vec![],
            combine: None,
            masked_value: None,
        }
    }
}
