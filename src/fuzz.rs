//! The shared entry points of the fuzz targets (`fuzz/fuzz_targets/*.rs`) and of their replay
//! test (`tests/fuzz_corpus.rs`), and the random program generator of the differential tests.
//!
//! Each target takes arbitrary bytes and panics only on a real bug: a mismatch between two
//! back ends, a round trip that does not return what went in, or a broken invariant. Errors of
//! the program or the data under test are expected results, not failures.
//!
//! | target | exercises |
//! |---|---|
//! | [`front_end`] | lex, parse, check, lower and verify arbitrary text; render its diagnostic |
//! | [`plan_text`] | the plan text parser; print/parse round trip; verify; run what verifies |
//! | [`npy`] | the `.npy` reader on arbitrary bytes, in memory and from a file; write/read round trip |
//! | [`differential`] | a random valid program on random tensors: JIT = interpreter = DirectML emulator |
//! | [`strided`] | the same on inputs laid out at random strides, read in place: = the interpreter on dense copies |
//!
//! The generator ([`Case::draw`]) takes its choices from a [`Draw`]: the fuzzer's bytes
//! ([`Bytes`]), or a seeded [`Rng`] for the reproducible suites in `tests/dml*.rs` and
//! `tests/backends.rs`.
//!
//! [`front_end`]: crate::fuzz::front_end
//! [`plan_text`]: crate::fuzz::plan_text
//! [`npy`]: crate::fuzz::npy
//! [`differential`]: crate::fuzz::differential
//! [`strided`]: fn@crate::fuzz::strided
//! [`Case::draw`]: crate::fuzz::Case::draw
//! [`Draw`]: crate::fuzz::Draw
//! [`Bytes`]: crate::fuzz::Bytes
//! [`Rng`]: crate::fuzz::Rng

use crate::backend::RuntimeError;
use crate::backend::dml::{self, DmlError, DmlGraph, DmlOptions, EmulateError, FeatureLevel};
use crate::backend::jit::KernelCache;
use crate::error::Error;
use crate::exec::{Executor, Runnable};
use crate::plan::{self, Plan, VerifiedPlan};
use crate::sema::{InputTypes, InputValues};
use crate::session::Session;
use crate::types::TensorType;
use slc_runtime::{DType, Tensor};
use std::sync::{Arc, Mutex, OnceLock};

// ---------------------------------------------------------------------------------------------
// Sources of choices

/// Where a generator's choices come from.
pub trait Draw {
    /// A value in `0..n` (`n > 0`).
    fn below(&mut self, n: u64) -> u64;
    /// 64 arbitrary bits.
    fn bits(&mut self) -> u64;

    /// A value in `lo..hi`.
    fn range(&mut self, lo: i64, hi: i64) -> i64 {
        lo + self.below((hi - lo) as u64) as i64
    }

    fn pick<'a, T>(&mut self, v: &'a [T]) -> &'a T {
        &v[self.below(v.len() as u64) as usize]
    }
}

/// xorshift64: a small deterministic generator, so that a suite's cases are reproducible from
/// its seed alone.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        // xorshift stays at 0 forever.
        Rng(seed.max(1))
    }
}

impl Draw for Rng {
    fn below(&mut self, n: u64) -> u64 {
        self.bits() % n
    }

    fn bits(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

/// The fuzzer's bytes, read front to back as the `arbitrary` crate does: a small choice takes
/// one byte, so that a mutated byte changes one decision; an exhausted input reads as zeros.
pub struct Bytes<'a>(&'a [u8]);

impl<'a> Bytes<'a> {
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes(data)
    }

    fn take(&mut self, n: usize) -> u64 {
        let (head, rest) = self.0.split_at(n.min(self.0.len()));
        self.0 = rest;
        head.iter().rev().fold(0, |acc, &b| acc << 8 | b as u64)
    }
}

impl Draw for Bytes<'_> {
    fn below(&mut self, n: u64) -> u64 {
        match n {
            0 | 1 => 0,
            2..=256 => self.take(1) % n,
            _ => self.take(8) % n,
        }
    }

    fn bits(&mut self) -> u64 {
        self.take(8)
    }
}

mod generic;
mod parsers;
mod store;
mod strided;
mod zarr_metadata;
pub use generic::{check_generic, generic};
pub use parsers::{front_end, npy, plan_text};
pub use store::store_program;
pub use strided::{StridedCopy, check_store_through, check_strided, strided};
pub use zarr_metadata::zarr_metadata;

// ---------------------------------------------------------------------------------------------
// The random program generator

/// A slice bound: omitted, or small and of either sign.
fn bound(r: &mut impl Draw) -> String {
    if r.below(3) == 0 { String::new() } else { r.range(-7, 7).to_string() }
}

fn item(r: &mut impl Draw) -> String {
    match r.below(10) {
        0..=3 => {
            let step = match r.below(3) {
                0 => String::new(),
                1 => format!(":{}", r.range(-3, 0)),
                _ => format!(":{}", r.range(1, 4)),
            };
            format!("{}:{}{step}", bound(r), bound(r))
        }
        4 | 5 => r.range(-2, 2).to_string(),
        6 => "...".into(),
        7 => "newaxis".into(),
        8 => match r.below(3) {
            0 => {
                let bits: Vec<&str> = (0..r.below(3)).map(|_| *r.pick(&["True", "False"])).collect();
                format!("[{}]", bits.join(", "))
            }
            _ => format!("{:?}", (0..r.below(4)).map(|_| r.range(-3, 3)).collect::<Vec<_>>()),
        },
        // Index arrays (several in one index broadcast together) and masks.
        _ => (*r.pick(&["idx", "idx", "idx2", "m", "True", "False"])).into(),
    }
}

fn index(r: &mut impl Draw) -> String {
    let n = 1 + r.below(3);
    format!("[{}]", (0..n).map(|_| item(r)).collect::<Vec<_>>().join(", "))
}

fn chain(r: &mut impl Draw, max: u64) -> String {
    (0..r.below(max + 1)).map(|_| index(r)).collect()
}

fn step(r: &mut impl Draw) -> i64 {
    *r.pick(&[-2, -1, 1, 1, 2, 3])
}

fn bits(r: &mut impl Draw, n: usize) -> Vec<u8> {
    (0..n).map(|_| (r.below(4) == 0) as u8).collect()
}

/// A program over `a` (of `shape`), the index vector `idx`, the batch indices `idx2` and the
/// mask `m` (over `a`'s leading axes):
/// NumPy indexing chains and every operator form. Most are valid; the generator does not track
/// ranks, so some are rejected by the checker.
pub fn program(r: &mut impl Draw, shape: &[usize]) -> String {
    match r.below(14) {
        0..=4 => format!("a{}{}", index(r), chain(r, 2)),
        5 => {
            let mode = r.pick(&["error", "error", "zero", "clamp", "wrap"]);
            let idx = if r.below(2) == 0 {
                "idx".to_string()
            } else {
                format!("{:?}", [r.range(-4, 4), r.range(-4, 4)])
            };
            format!("gather(a, {idx}, axis={}, mode={mode}){}", r.below(3), chain(r, 1))
        }
        6 => {
            let mode = r.pick(&["error", "error", "zero"]);
            format!("gather(a, idx2, axis={}, batch_dims=1, mode={mode}){}", 1 + r.below(2), chain(r, 1))
        }
        7 => format!("a[idx[::-1]][..., idx]{}", chain(r, 1)),
        12 => {
            // idx2 has a's leading dimension: a valid index for a 2-D `a` along either axis
            // (its width 2 bounds the other axis), for a 1-D `a` as `idx`; a literal fits any
            // rank.
            let mode = r.pick(&["error", "error", "zero", "clamp", "wrap"]);
            let rank = shape.len() as i64;
            let axis = if rank == 0 { 0 } else { r.range(-rank, rank) };
            let index = match r.below(6) {
                0..=2 => elements_literal(r, shape, axis.rem_euclid(rank.max(1)) as usize),
                n => ["idx2", "idx2[::-1, :1]", "idx"][n as usize - 3].to_string(),
            };
            format!("gather_elements(a, {index}, axis={axis}, mode={mode}){}", chain(r, 1))
        }
        13 => {
            // Tuples of one or two entries from idx2, or of a literal; batch_dims 0 or 1.
            let mode = r.pick(&["error", "error", "zero", "clamp", "wrap"]);
            let index = *r.pick(&[
                "idx2",
                "idx2[::-1, :1]",
                "idx2[:, ::-1]",
                "idx2[idx2[:, 0]]",
                "[[1, -1], [0, 2]]",
            ]);
            let source = *r.pick(&["a", "a[::-1]", "a[..., 1:]"]);
            format!("gather_nd({source}, {index}, batch_dims={}, mode={mode}){}", r.below(2), chain(r, 1))
        }
        8 => format!("a{}[idx]{}", index(r), chain(r, 1)),
        9 => {
            let n = 1 + r.below(2) as i64;
            let starts: Vec<i64> = (0..n).map(|_| r.range(-6, 6)).collect();
            let ends: Vec<i64> = (0..n).map(|_| r.range(-6, 6)).collect();
            let axes: Vec<i64> = (0..n).map(|i| if r.below(2) == 0 { i } else { i - n }).collect();
            let steps: Vec<i64> = (0..n).map(|_| step(r)).collect();
            format!("slice(a, {starts:?}, {ends:?}, axes={axes:?}, steps={steps:?}){}", chain(r, 1))
        }
        10 => {
            let n = 1 + r.below(3) as usize;
            let begin: Vec<i64> = (0..n).map(|_| r.range(-6, 6)).collect();
            let end: Vec<i64> = (0..n).map(|_| r.range(-6, 6)).collect();
            let stride: Vec<i64> = (0..n).map(|_| step(r)).collect();
            format!(
                "strided_slice(a, {begin:?}, {end:?}, {stride:?}, begin_mask={:?}, end_mask={:?}, \
                 new_axis_mask={:?}, shrink_axis_mask={:?}){}",
                bits(r, n),
                bits(r, n),
                bits(r, n),
                bits(r, n),
                chain(r, 1)
            )
        }
        _ => {
            let (mut offsets, mut sizes, mut strides) = (vec![], vec![], vec![]);
            for &n in shape {
                let n = n.max(1) as i64;
                let o = r.range(0, n);
                offsets.push(o);
                sizes.push(r.range(1, n - o + 1));
                strides.push(step(r));
            }
            format!("slice1(a, {offsets:?}, {sizes:?}, {strides:?}){}", chain(r, 1))
        }
    }
}

/// A list literal of `shape`'s rank that gather_elements accepts along `axis`: at most the data
/// off the axis (mostly 1, to stay small at high ranks), 1 to 3 along it; values mostly in range.
pub(crate) fn elements_literal(r: &mut impl Draw, shape: &[usize], axis: usize) -> String {
    fn nest(r: &mut impl Draw, dims: &[i64], n: i64) -> String {
        match dims.split_first() {
            None if r.below(8) == 0 => n.to_string(),
            None => r.range(-n, n.max(1)).to_string(),
            Some((&d, rest)) => {
                format!("[{}]", (0..d).map(|_| nest(r, rest, n)).collect::<Vec<_>>().join(", "))
            }
        }
    }
    let dims: Vec<i64> = (0..shape.len())
        .map(|k| match (k == axis, r.below(4)) {
            (true, _) => r.range(1, 4),
            (false, 0) => shape[k].min(2) as i64,
            (false, _) => shape[k].min(1) as i64,
        })
        .collect();
    nest(r, &dims, shape.get(axis).map_or(1, |&n| n as i64))
}

/// Pseudo-random bytes from `seed` (any bit pattern, NaNs included: comparisons are on bits).
pub fn fill(dtype: DType, shape: &[usize], seed: u64) -> Tensor {
    let n: usize = shape.iter().product::<usize>() * dtype.width();
    let mut state = seed | 1;
    let bytes: Vec<u8> = (0..n)
        .map(|_| {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let b = (state >> 33) as u8;
            if dtype == DType::Bool { b & 1 } else { b }
        })
        .collect();
    Tensor::from_bytes(dtype, shape, &bytes).expect("a small tensor")
}

/// One differential case: a program, its tensors `a`, `idx`, `idx2` and `m`, and the DirectML
/// feature level to lower it at.
pub struct Case {
    pub src: String,
    pub inputs: Vec<(&'static str, Tensor)>,
    pub level: FeatureLevel,
}

impl Case {
    /// Small tensors (ranks 0 to 10, of every dtype; index values mostly in range) and a
    /// program over them.
    pub fn draw(r: &mut impl Draw) -> Case {
        let rank = r.below(11) as usize;
        let max_dim = if rank > 5 { 3 } else { 6 };
        let shape: Vec<usize> = (0..rank).map(|_| r.below(max_dim) as usize).collect();
        // High ranks keep every dimension, so that merging them is what gets tested.
        let shape: Vec<usize> = if rank > 5 { shape.into_iter().map(|d| d.max(1)).collect() } else { shape };
        let dtype = *r.pick(&DType::ALL);
        let a = fill(dtype, &shape, r.bits());
        let idx_dtype = *r.pick(&[DType::I32, DType::I64, DType::U32, DType::U64, DType::I32, DType::I16]);
        let n = r.below(5) as usize;
        let vals: Vec<i64> =
            (0..n).map(|_| r.range(-6, 6)).map(|v| if idx_dtype.is_signed() { v } else { v.abs() }).collect();
        let idx = Tensor::from_i64s(idx_dtype, &[n], &vals).expect("values that fit");
        let b = shape.first().copied().unwrap_or(1);
        let idx2 =
            Tensor::from_i64s(DType::I32, &[b, 2], &(0..2 * b as i64).map(|v| v % 3 - 1).collect::<Vec<_>>())
                .expect("values that fit");
        let covered = (r.below(3) as usize).min(rank);
        let m = fill(DType::Bool, &shape[..covered], r.bits());
        let src = program(r, &shape);
        let levels = [FeatureLevel::L2_1, FeatureLevel::L3_0, FeatureLevel::L4_1, FeatureLevel::L5_0];
        let level = *r.pick(&levels);
        Case { src, inputs: vec![("a", a), ("idx", idx), ("idx2", idx2), ("m", m)], level }
    }

    /// A case whose program is a store ([`store_program`]), or an assignment of a bound value
    /// `v` (`a[...] = v`, `a[1:] += v`) whose dims are the target's trailing ones, some of them 1
    /// (NumPy's broadcast) and now and then one that does not fit.
    pub fn draw_store(r: &mut impl Draw) -> Case {
        let mut case = Case::draw(r);
        let a = &case.inputs[0].1;
        let shape = a.shape().to_vec();
        if r.below(3) > 0 {
            case.src = store_program(r, &shape);
            return case;
        }
        let keep = r.below(shape.len() as u64 + 1) as usize;
        let dims: Vec<usize> = (shape[shape.len() - keep..].iter())
            .map(|&d| match r.below(8) {
                0..=1 => 1,
                2 => d + 1,
                _ => d,
            })
            .collect();
        // Now and then of another dtype, cast per call: small integers, made that dtype (a
        // negative float into an unsigned target has no value there: E0211).
        let v = match r.below(4) {
            0 => {
                let dtype = *r.pick(&DType::ALL);
                slc_runtime::cast(&fill(DType::I8, &dims, r.bits()), dtype)
                    .expect("an i8 has a value of every dtype")
            }
            _ => fill(a.dtype(), &dims, r.bits()),
        };
        case.src = (*r.pick(&["a[...] = v", "a[...] += v", "a[1:] = v", "a[..., ::-1] *= v", "a[m] = v"]))
            .to_string();
        case.inputs.push(("v", v));
        case
    }

    pub fn types(&self) -> InputTypes {
        self.inputs.iter().map(|(n, t)| (n.to_string(), TensorType::of(t.dtype(), t.shape()))).collect()
    }

    /// Every dim a symbol (`_a0`, `_idx0`, ...), but the length of `idx2`'s index tuples: it sets
    /// the rank of `gather_nd`'s result, a value checking needs (E0129 names it).
    pub fn symbolic_types(&self) -> crate::sema::SymInputTypes {
        let mut types: crate::sema::SymInputTypes =
            self.types().into_iter().map(|(n, t)| (n.clone(), t.symbolic(&n))).collect();
        if let Some(last) = types.get_mut("idx2").and_then(|t| t.shape.last_mut()) {
            *last = crate::types::sym::SymExpr::constant(2);
        }
        types
    }

    /// Every input's value, as `slc eval` gives the checker those it may read (a mask's, here).
    pub fn values(&self) -> InputValues {
        self.inputs.iter().map(|(n, t)| (n.to_string(), t.clone())).collect()
    }
}

/// What [`check_case`] found (it panics on any disagreement).
pub enum Outcome {
    /// The checker rejected the program.
    Rejected,
    /// The JIT and the interpreter agree; the DirectML lowering refused the plan (E04xx).
    Refused(DmlError),
    /// The JIT, the interpreter and the emulator of the lowered graph agree; `error` when all
    /// three failed alike.
    Agreed { graph: Box<DmlGraph>, error: bool },
}

/// Compiles `case` and checks that its plan's text reads back, and that the JIT, the reference
/// interpreter and (where the DirectML lowering accepts the plan) the DirectML emulator give
/// the same result, bit for bit, or the same error.
pub fn check_case(case: &Case) -> Outcome {
    let src = &case.src;
    let Ok(compiled) = crate::compile_with_values(src, &case.types(), &case.values()) else {
        return Outcome::Rejected;
    };
    plan_round_trip(&compiled.plan);
    let args: Vec<&Tensor> = compiled
        .plan
        .inputs
        .iter()
        .map(|d| &case.inputs.iter().find(|(n, _)| *n == d.name).expect("a declared input").1)
        .collect();
    let want = jit_equals_interp(&compiled.plan, &args, src);
    session_agrees(case, &want);
    let opts = DmlOptions { feature_level: case.level };
    let graph = match dml::lower(&compiled.plan, &opts) {
        Ok(g) => g,
        Err(e) => {
            // A refusal must be one of the documented reasons, rendered as a diagnostic.
            let d = Error::from(e.clone()).diagnostic();
            assert!(d.code.starts_with("E04"), "{src}: {e}");
            assert!(!matches!(e, DmlError::Unsupported(_)), "{src} at {}: {e}", case.level);
            return Outcome::Refused(e);
        }
    };
    assert_eq!(DmlGraph::from_json(&graph.to_json()).ok().as_ref(), Some(&graph), "{src}");
    let got = dml::emulate(&graph, &args);
    let error = match (&want, &got) {
        (Ok(x), Ok(y)) => {
            assert!(x == y, "{src} at {}: interpreter {x:?}, emulator {y:?}", case.level);
            false
        }
        (Err(x), Err(EmulateError::Runtime(y))) => {
            assert_eq!(x, &y.clone().located(&compiled.plan), "{src} at {}", case.level);
            true
        }
        _ => panic!("{src} at {}: interpreter {want:?}, emulator {got:?}\n{}", case.level, graph.to_json()),
    };
    Outcome::Agreed { graph: Box::new(graph), error }
}

/// JIT kernels, shared by every case of a run: a fuzzer meets the same plan many times. Replaced
/// by an empty cache when it grows large, as each kernel holds its own code pages.
fn kernel_cache() -> Arc<KernelCache> {
    static CACHE: Mutex<Option<Arc<KernelCache>>> = Mutex::new(None);
    let mut cache = CACHE.lock().unwrap_or_else(|e| e.into_inner());
    match &*cache {
        Some(c) if c.len() < 512 => c.clone(),
        _ => cache.insert(Arc::default()).clone(),
    }
}

/// Runs a verified plan on the interpreter and the JIT; panics unless both give the same tensor
/// or the same error, and on an address outside a buffer (which verification rules out).
fn jit_equals_interp(plan: &VerifiedPlan, args: &[&Tensor], what: &str) -> Result<Tensor, RuntimeError> {
    let want = Runnable::Interpreter.run(plan, args, 1);
    assert!(!matches!(want, Err(RuntimeError::OutOfBuffer { .. })), "{what}: verified, yet {want:?}\n{plan}");
    let kernel = Runnable::prepare_in_plan_order(plan, Executor::Jit, Some(&kernel_cache()))
        .unwrap_or_else(|e| panic!("{what}: {e}\n{plan}"));
    let got = kernel.run(plan, args, 1);
    match (&want, &got) {
        (Ok(x), Ok(y)) => assert!(x == y, "{what}: interpreter {x:?}, JIT {y:?}\n{plan}"),
        (Err(x), Err(y)) => assert_eq!(x, y, "{what}\n{plan}"),
        _ => panic!("{what}: interpreter {want:?}, JIT {got:?}\n{plan}"),
    }
    want
}

/// `Session::eval` (the path of `slc eval`: a prepared entry with its checks, through the
/// session's caches) gives the interpreter's tensor, or an error of the same code. One session
/// serves every case of a run, rebound each time, so a kernel kept for other bindings would
/// show here.
fn session_agrees(case: &Case, want: &Result<Tensor, RuntimeError>) {
    static SESSION: OnceLock<Mutex<Session<'static>>> = OnceLock::new();
    let mut session = SESSION.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
    for (name, t) in &case.inputs {
        session.bind(name, t.clone());
    }
    let src = &case.src;
    match (want, session.eval(src)) {
        (Ok(x), Ok(y)) => assert!(*x == y, "{src}: interpreter {x:?}, session {y:?}"),
        (Err(x), Err(y)) => {
            assert_eq!(Error::from(x.clone()).diagnostic().code, y.diagnostic().code, "{src}: {x} / {y}")
        }
        (x, y) => panic!("{src}: interpreter {x:?}, session {y:?}"),
    }
}

/// A verified plan's text reads back to the same plan, which verifies again.
fn plan_round_trip(p: &Plan) {
    let text = p.to_string();
    let parsed = plan::parse::parse(&text).unwrap_or_else(|e| panic!("{e}\n{text}"));
    assert_eq!(&parsed, p, "{text}");
    assert!(plan::verify(parsed).is_ok(), "{text}");
}

// ---------------------------------------------------------------------------------------------
// The targets (the others: `parsers.rs`, `strided.rs`, `generic.rs`)

/// A random program on random tensors, decoded from the bytes ([`Case::draw`]), through
/// [`check_case`].
pub fn differential(data: &[u8]) {
    check_case(&Case::draw(&mut Bytes::new(data)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The programs the fuzzer draws call every operator form of the operator table (a form
    /// added to the table fails here until [`program`] or [`store_program`] draws it).
    #[test]
    fn programs_cover_every_operator_form() {
        let mut r = Rng::new(7);
        let mut called: Vec<String> = (0..2000).map(|_| program(&mut r, &[3, 4])).collect();
        called.extend((0..200).map(|_| store_program(&mut r, &[3, 4])));
        for op in crate::sema::OPERATORS {
            let call = format!("{}(", op.name);
            assert!(called.iter().any(|p| p.starts_with(&call)), "the fuzzer never calls {}", op.name);
        }
    }
}
