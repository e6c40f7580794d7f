//! The box of a Zarr input that is decoded, and the plan rebased onto it (docs/zarr.md, "What
//! is read"): memory touched grows with the chunks read, not with the array.
//!
//! The chunks holding what a plan reads ([`super::touched()`]) span, along each axis, a range
//! of chunk rows; their product is a box of the array, chunk-aligned (clipped to the array).
//! Those chunks are decoded into a tensor of the box's shape, and the plan's accesses into the
//! input rebased onto it: an access whose steps split by axis addresses the multi-index
//! `m_d = b_d + Σ q·o + Σ q·v` (each `m_d` inside its axis, which `touched` checked), so
//! `Σ (m_d − start_d)·S'_d` over the box's strides `S'` is the same element, with base
//! `Σ (b_d − start_d)·S'_d` and each step `q·S_d` become `q·S'_d`. A gathered axis keeps its
//! whole extent: the verifier bounds a gather's index by its axis, not by the values read.
//! The rebased plan is verified again; if it does not verify, every box is the whole array.

use super::PendingZarr;
pub use super::region::Window;
use super::touched::{Known, Touched, split, touched};
use crate::backend::jit::KernelCache;
use crate::exec::{RunOptions, Runnable};
use crate::pipeline::Compiled;
use crate::plan::{Access, BufferId, Plan, VerifiedPlan, verify};
use crate::sema::InputValues;
use crate::{Error, EvalTimes};
use slc_runtime::Tensor;
use std::borrow::Borrow;
use std::time::Instant;

/// A Zarr input of a plan, with what the plan reads of it and the box that is decoded. `Z` is
/// the array, owned or borrowed (the REPL keeps its arrays open from evaluation to evaluation).
pub struct WindowedInput<Z = PendingZarr> {
    pub name: String,
    pub zarr: Z,
    pub touched: Option<Touched>,
    pub window: Window,
}

impl<Z: Borrow<PendingZarr>> WindowedInput<Z> {
    /// How many chunks reading this input decodes, of how many the array has.
    pub fn chunk_counts(&self) -> Result<(u64, u64), String> {
        self.zarr.borrow().chunk_counts(self.touched.as_deref())
    }

    /// The box's chunks that hold what the plan reads, decoded into a tensor of the box's shape.
    pub fn read(&self) -> Result<Tensor, String> {
        self.zarr.borrow().read(self.touched.as_deref(), &self.window)
    }
}

/// A plan's Zarr inputs and, when some box is smaller than its array, the plan rebased onto
/// the boxes (to run instead of the original, over the tensors [`WindowedInput::read`] gives).
pub struct Windows<Z = PendingZarr> {
    pub inputs: Vec<WindowedInput<Z>>,
    pub plan: Option<VerifiedPlan>,
}

/// The boxes of `zarrs` (inputs of `plan`, by name) that `plan` reads, and the plan rebased
/// onto them. `known` holds inputs already read (index arrays narrow a gather's chunks).
pub fn windows<Z: Borrow<PendingZarr>>(
    plan: &Plan,
    zarrs: Vec<(String, Z)>,
    known: &Known,
) -> Result<Windows<Z>, (String, String)> {
    let mut inputs = Vec::with_capacity(zarrs.len());
    for (name, zarr) in zarrs {
        let touched = touched(plan, &name, known);
        let window = zarr.borrow().window(touched.as_deref()).map_err(|e| (name.clone(), e))?;
        inputs.push(WindowedInput { name, zarr, touched, window });
    }
    let mut boxes: Vec<(String, Window)> =
        inputs.iter().map(|w| (w.name.clone(), w.window.clone())).collect();
    let rebased = rebase_onto(plan, &mut boxes);
    for (input, (_, window)) in inputs.iter_mut().zip(boxes) {
        input.window = window;
    }
    Ok(Windows { inputs, plan: rebased })
}

/// How many chunks of a Zarr input one run of a plan decodes, of how many its array has.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChunkCount {
    pub name: String,
    pub read: u64,
    pub all: u64,
    /// The size of the chunks read, decoded (the most inflated: a chunk may be in part only).
    pub bytes: u64,
}

impl ChunkCount {
    /// The chunks `plan` decodes of `zarr`, bound to `name` (`known`: as for [`windows`]).
    pub fn of(plan: &Plan, name: &str, zarr: &PendingZarr, known: &Known) -> Result<ChunkCount, String> {
        let (read, all) = zarr.chunk_counts(touched(plan, name, known).as_deref())?;
        Ok(ChunkCount::new(name, zarr, read, all))
    }

    fn new(name: &str, zarr: &PendingZarr, read: u64, all: u64) -> ChunkCount {
        let bytes = zarr.chunk_bytes().unwrap_or(u64::MAX).saturating_mul(read);
        ChunkCount { name: name.to_string(), read, all, bytes }
    }

    /// The line `slc show` and the REPL's `:show` end a picture's summary with.
    pub fn sentence(&self) -> String {
        format!("Zarr input `{}` reads {} of its {} chunks.", self.name, self.read, self.all)
    }

    /// The line `slc eval --time` and the REPL's `:time` print.
    pub fn timing_line(&self) -> String {
        format!(
            "zarr    input `{}`: reads {} of {} chunks ({} bytes, decoded)",
            self.name, self.read, self.all, self.bytes
        )
    }
}

/// A plan's Zarr inputs read for one run: each one's box decoded, and the plan rebased onto the
/// boxes when it can be (else each box is its whole array, only the touched chunks decoded).
pub struct ReadZarrs {
    /// Each input's box, decoded, by name.
    pub tensors: InputValues,
    /// Each input's chunks decoded, of all its array's, in the order given.
    pub chunks: Vec<ChunkCount>,
    /// The plan to run instead of the original over `tensors`, if one was rebased.
    pub plan: Option<VerifiedPlan>,
}

/// Reads of each of `zarrs` (inputs of `plan`, by name) the box `plan` reads ([`windows`],
/// then [`WindowedInput::read`]): what `slc eval` and the REPL run a plan on. `known` holds
/// the inputs already read; an error names the input it is about.
pub fn read_zarrs<Z: Borrow<PendingZarr>>(
    plan: &Plan,
    zarrs: Vec<(String, Z)>,
    known: &Known,
) -> Result<ReadZarrs, (String, String)> {
    let windows = windows(plan, zarrs, known)?;
    let mut read = ReadZarrs { tensors: InputValues::new(), chunks: vec![], plan: windows.plan };
    for input in &windows.inputs {
        let name = &input.name;
        let (n, all) = input.chunk_counts().map_err(|e| (name.clone(), e))?;
        read.chunks.push(ChunkCount::new(name, input.zarr.borrow(), n, all));
        read.tensors.insert(name.clone(), input.read().map_err(|e| (name.clone(), e))?);
    }
    Ok(read)
}

/// `plan` rebased onto `boxes` (inputs by name, each with the box of it to be decoded), each
/// box first widened to its array's whole extent along a gathered axis; `None`, with every box
/// the whole array, when no box is smaller than its array or the rebased plan does not verify.
pub fn rebase_onto(plan: &Plan, boxes: &mut [(String, Window)]) -> Option<VerifiedPlan> {
    let mut whole = vec![];
    for (name, window) in boxes.iter_mut() {
        let Some(k) = plan.inputs.iter().position(|i| &i.name == name) else {
            // Not read by the plan: nothing to rebase.
            whole.push(window.clone());
            continue;
        };
        let dims: Vec<usize> = plan.inputs[k].shape.iter().map(|&d| d as usize).collect();
        for d in gathered_axes(plan, k) {
            window.start[d] = 0;
            window.shape[d] = dims[d];
        }
        whole.push(Window::whole(&dims));
    }
    let smaller = boxes.iter().zip(&whole).any(|((_, w), whole)| w != whole);
    // Inputs derived per call (a mask's `nonzero()`) are bound by the session, not here.
    let rebased = if smaller && plan.inputs.iter().all(|i| i.derived.is_none()) {
        let read = boxes.iter().filter(|(name, _)| plan.inputs.iter().any(|i| &i.name == name));
        read.into_iter()
            .try_fold(plan.clone(), |p, (name, w)| rebase(&p, name, w))
            .and_then(|p| verify(p).ok())
    } else {
        None
    };
    if rebased.is_none() {
        for ((_, window), whole) in boxes.iter_mut().zip(whole) {
            *window = whole;
        }
    }
    rebased
}

/// Runs `plan` (a [`Windows`]'s rebased plan) in place of `compiled`'s on `tensors` (the
/// windows read, the other inputs whole), with kernels from `cache`.
pub fn run_windowed(
    compiled: Compiled,
    plan: VerifiedPlan,
    tensors: &InputValues,
    options: &RunOptions,
    cache: &KernelCache,
) -> Result<(Tensor, EvalTimes), Error> {
    let start = Instant::now();
    let compiled = Compiled { plan, ..compiled };
    compiled.check_output_size(options)?;
    let args = compiled.plan_inputs(tensors)?;
    let runnable = Runnable::prepare_in_plan_order(&compiled.plan, options.executor, Some(cache))?;
    let compile = start.elapsed();
    let args: Vec<&Tensor> = args.iter().map(|a| &**a).collect();
    let result = runnable.run(&compiled.plan, &args, options.threads)?;
    let run = start.elapsed() - compile;
    let threads = match runnable {
        Runnable::Jit(_) => {
            let outer = result.shape().first().map_or(1, |&d| d as i64);
            crate::backend::jit::workers(outer, result.nbytes(), options.threads)
        }
        _ => 1,
    };
    Ok((result, EvalTimes { compile, cache_hit: false, run, threads }))
}

/// The axes of input `k` that some access gathers along.
fn gathered_axes(plan: &Plan, k: usize) -> Vec<usize> {
    let dims = &plan.inputs[k].shape;
    let mut axes = vec![];
    for_each_access(plan, &mut |access, shape| {
        if access.buffer == BufferId::Input(k)
            && !shape.contains(&0)
            && let Some(split) = split(access, shape, dims)
        {
            axes.extend(split.terms.iter().flatten().map(|&(d, _)| d));
        }
    });
    axes.sort_unstable();
    axes.dedup();
    axes
}

/// Every access of `plan` (output, checks, and the index accesses inside them) with the
/// coordinate shape it runs over.
fn for_each_access(plan: &Plan, f: &mut impl FnMut(&Access, &[i64])) {
    fn walk(access: &Access, shape: &[i64], f: &mut impl FnMut(&Access, &[i64])) {
        f(access, shape);
        for term in &access.terms {
            walk(&term.index, shape, f);
        }
    }
    walk(&plan.output, &plan.shape, f);
    for check in &plan.checks {
        walk(&check.index, &check.shape, f);
    }
}

/// `plan` with input `name` replaced by its `window`: its declared shape, and every access into
/// it rebased. `None` for a plan this cannot rebase (a store, a strided input, an access whose
/// steps do not split by axis).
pub fn rebase(plan: &Plan, name: &str, window: &Window) -> Option<Plan> {
    let k = plan.inputs.iter().position(|i| i.name == name)?;
    if plan.store.is_some() || plan.inputs[k].strides.is_some() {
        return None;
    }
    let dims = plan.inputs[k].shape.clone();
    let start: Vec<i64> = window.start.iter().map(|&s| i64::try_from(s).ok()).collect::<Option<_>>()?;
    let boxed: Vec<i64> = window.shape.iter().map(|&s| i64::try_from(s).ok()).collect::<Option<_>>()?;
    if dims.len() != boxed.len() || dims.contains(&0) || boxed.contains(&0) {
        return None;
    }
    let mut box_strides = vec![1i64; boxed.len()];
    for d in (0..boxed.len().saturating_sub(1)).rev() {
        box_strides[d] = box_strides[d + 1].checked_mul(boxed[d + 1])?;
    }
    let into = Rebase { k, dims: &dims, start: &start, strides: &box_strides };
    let mut out = plan.clone();
    out.inputs[k].shape = boxed;
    let shape = out.shape.clone();
    into.access(&mut out.output, &shape)?;
    for check in &mut out.checks {
        let shape = check.shape.clone();
        into.access(&mut check.index, &shape)?;
    }
    Some(out)
}

/// Rebasing accesses into input `k` of `dims` onto the box at `start` with C-order `strides`.
struct Rebase<'a> {
    k: usize,
    dims: &'a [i64],
    start: &'a [i64],
    strides: &'a [i64],
}

impl Rebase<'_> {
    fn access(&self, access: &mut Access, shape: &[i64]) -> Option<()> {
        for term in &mut access.terms {
            self.access(&mut term.index, shape)?;
        }
        if access.buffer != BufferId::Input(self.k) || shape.contains(&0) {
            return Some(());
        }
        let split = split(access, shape, self.dims)?;
        let scaled = |at: Option<(usize, i64)>| at.map_or(Some(0), |(d, q)| q.checked_mul(self.strides[d]));
        access.base = (0..self.dims.len()).try_fold(0i64, |sum, d| {
            (split.base[d] - self.start[d]).checked_mul(self.strides[d])?.checked_add(sum)
        })?;
        for (stride, &at) in access.strides.iter_mut().zip(&split.steps) {
            *stride = scaled(at)?;
        }
        for (term, &at) in access.terms.iter_mut().zip(&split.terms) {
            term.stride = scaled(at)?;
        }
        Some(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::exec::{Executor, RunOptions};
    use crate::types::TensorType;
    use slc_runtime::DType;

    /// The box of chunks of `chunk` elements along each axis holding `touched`.
    fn box_of(touched: &Touched, dims: &[usize], chunk: usize) -> Window {
        let mut w = Window::whole(dims);
        for (d, set) in touched.iter().enumerate() {
            if let (Some(first), Some(last)) = (set.first(), set.last()) {
                let lo = first.start as usize / chunk * chunk;
                let hi = ((last.end as usize - 1) / chunk + 1) * chunk;
                w.start[d] = lo as u64;
                w.shape[d] = hi.min(dims[d]) - lo;
            }
        }
        w
    }

    /// The elements of `a` inside `w`.
    fn cut(a: &Tensor, w: &Window) -> Tensor {
        let width = a.dtype().width();
        let mut out = Tensor::zeros(a.dtype(), &w.shape).unwrap();
        for at in 0..out.numel() {
            let (mut rest, mut from) = (at, 0usize);
            let mut scale = 1usize;
            for d in (0..w.shape.len()).rev() {
                from += (rest % w.shape[d] + w.start[d] as usize) * scale;
                rest /= w.shape[d];
                scale *= a.shape()[d];
            }
            out.bytes_mut()[at * width..][..width].copy_from_slice(&a.bytes()[from * width..][..width]);
        }
        out
    }

    /// Each program, run rebased on the box of `a` it touches (chunks of 3), gives what it
    /// gives on the whole of `a`, on the interpreter and the JIT.
    #[test]
    fn a_rebased_plan_reads_its_box_as_the_plan_reads_the_array() {
        let values: Vec<f32> = (0..120).map(|v| v as f32).collect();
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        let a = Tensor::from_bytes(DType::F32, &[12, 10], &bytes).unwrap();
        let i = Tensor::from_i64s(DType::I64, &[3], &[7, -1, 2]).unwrap();
        let tensors: InputValues = [("a".to_string(), a.clone()), ("i".to_string(), i.clone())].into();
        let mut types = crate::sema::InputTypes::new();
        types.insert("a".into(), TensorType::of(DType::F32, &[12, 10]));
        types.insert("i".into(), TensorType::of(DType::I64, &[3]));
        // The programs, and whether their box is smaller than the array.
        let programs = [
            ("a[1:5, 2:9]", true),
            ("a[::-3, 7]", true),
            ("a[-4:, ::3]", true),
            ("a[3]", true),
            ("a[None, 3:9, 1]", true),
            ("let b = a[2:10]; b[1:3, ::-1]", true),
            ("a[..., 5:7][::2]", true),
            ("a[i, 2:4]", true),
            ("a[1:7:2, i]", true),
            ("a[[1, 5], 2:4]", true),
            ("a[i]", false),
            ("a[5:5]", false),
            ("a", false),
        ];
        for (src, smaller) in programs {
            let compiled = crate::compile(src, &types).unwrap();
            let touched = touched(&compiled.plan, "a", &[&tensors]).unwrap();
            let mut boxes = vec![("a".to_string(), box_of(&touched, &[12, 10], 3))];
            let rebased = rebase_onto(&compiled.plan, &mut boxes);
            assert_eq!(rebased.is_some(), smaller, "{src}: {:?}", boxes[0].1);
            let Some(rebased) = rebased else { continue };
            let mut windowed = tensors.clone();
            windowed.insert("a".into(), cut(&a, &boxes[0].1));
            for executor in [Executor::Interpreter, Executor::Jit] {
                let options = RunOptions { executor, ..RunOptions::default() };
                let want = compiled.run_with(&tensors, &options, &KernelCache::default()).unwrap();
                let (got, _) = run_windowed(
                    crate::compile(src, &types).unwrap(),
                    rebased.clone(),
                    &windowed,
                    &options,
                    &KernelCache::default(),
                )
                .unwrap();
                assert_eq!((got.shape(), got.bytes()), (want.shape(), want.bytes()), "{src} on {executor:?}");
            }
        }
    }

    #[test]
    fn stores_are_not_rebased() {
        let mut types = crate::sema::InputTypes::new();
        types.insert("a".into(), TensorType::of(DType::F32, &[12, 10]));
        let compiled = crate::compile("a[1] = 0", &types).unwrap();
        let window = Window { start: vec![0, 0], shape: vec![3, 10] };
        assert!(rebase(&compiled.plan, "a", &window).is_none());
    }
}
