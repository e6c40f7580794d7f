//! Timing kernels against memcpy of the same bytes, interleaved in one run so that both see the
//! same machine state (`slc bench`, the REPL's `:time`, the benchmark suite).

use crate::backend::RuntimeError;
use crate::plan::{Access, BufferId, Plan};
use slc_runtime::{DType, Tensor, TensorError};
use std::time::{Duration, Instant};

/// A deterministic generator (splitmix64): benchmarks must not vary with the seed of the day.
pub struct SplitMix(pub u64);

impl SplitMix {
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

/// For each input used as an index, the smallest axis length it indexes.
pub fn index_bounds(plan: &Plan) -> Vec<Option<i64>> {
    fn note(bounds: &mut [Option<i64>], buffer: BufferId, len: i64) {
        if let BufferId::Input(i) = buffer {
            bounds[i] = Some(bounds[i].map_or(len, |b| b.min(len)));
        }
    }
    fn walk(a: &Access, bounds: &mut [Option<i64>]) {
        for t in &a.terms {
            note(bounds, t.index.buffer, t.len);
            walk(&t.index, bounds);
        }
    }
    let mut bounds = vec![None; plan.inputs.len()];
    walk(&plan.output, &mut bounds);
    for c in &plan.checks {
        note(&mut bounds, c.index.buffer, c.len);
        walk(&c.index, &mut bounds);
    }
    bounds
}

/// Deterministic inputs for `plan`: random bits for data, random in-range values for index
/// tensors.
pub fn generated_inputs(plan: &Plan) -> Result<Vec<Tensor>, TensorError> {
    let mut rng = SplitMix(0x5EED);
    let bounds = index_bounds(plan);
    plan.inputs
        .iter()
        .zip(bounds)
        .map(|(decl, bound)| {
            let dims: Vec<usize> = decl.shape.iter().map(|&d| d as usize).collect();
            let mut t = Tensor::zeros(decl.dtype, &dims)?;
            match bound {
                Some(n) if decl.dtype.is_integer() => {
                    let n = n.max(1) as u64;
                    let values: Vec<i64> = (0..t.numel()).map(|_| (rng.next_u64() % n) as i64).collect();
                    t = Tensor::from_i64s(decl.dtype, &dims, &values)?;
                }
                _ => {
                    for chunk in t.bytes_mut().chunks_mut(8) {
                        let r = rng.next_u64().to_le_bytes();
                        chunk.copy_from_slice(&r[..chunk.len()]);
                    }
                    if decl.dtype == DType::Bool {
                        t.bytes_mut().iter_mut().for_each(|b| *b &= 1);
                    }
                }
            }
            Ok(t)
        })
        .collect()
}

/// Bytes a run of `plan` moves: the output written, read once, and the index tensors read.
pub fn moved_bytes(plan: &Plan, inputs: &[&Tensor], out_bytes: usize) -> usize {
    let index_bytes: usize =
        index_bounds(plan).iter().zip(inputs).filter(|(b, _)| b.is_some()).map(|(_, t)| t.nbytes()).sum();
    out_bytes * 2 + index_bytes
}

/// Medians of a kernel and of a memcpy of its output's bytes, sampled alternately.
#[derive(Debug, Clone, Copy)]
pub struct Timing {
    pub kernel: Duration,
    pub memcpy: Duration,
    pub samples: usize,
    pub out_bytes: usize,
    pub moved_bytes: usize,
}

impl Timing {
    /// Kernel time ÷ memcpy time.
    pub fn ratio(&self) -> f64 {
        self.kernel.as_secs_f64() / self.memcpy.as_secs_f64().max(1e-12)
    }

    /// Effective bandwidth: bytes read and written per second, in GB/s.
    pub fn gb_per_s(&self) -> f64 {
        self.moved_bytes as f64 / self.kernel.as_secs_f64().max(1e-12) / 1e9
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// Runs `kernel` once to warm up (its error is returned), then alternately times it and a
/// memcpy of `out_bytes` for about `budget` (at least 10 samples each, at most 100 000).
pub fn time_against_memcpy(
    mut kernel: impl FnMut() -> Result<(), RuntimeError>,
    out_bytes: usize,
    moved_bytes: usize,
    budget: Duration,
) -> Result<Timing, RuntimeError> {
    kernel()?;
    // Both buffers are touched once before timing, as the kernel's inputs were.
    let mut src = Tensor::zeros(DType::U8, &[out_bytes.max(1)])?;
    src.bytes_mut().fill(1);
    let mut dst = Tensor::zeros(DType::U8, &[out_bytes.max(1)])?;
    let (mut kernel_times, mut copy_times) = (vec![], vec![]);
    let begin = Instant::now();
    while kernel_times.len() < 10 || (begin.elapsed() < budget && kernel_times.len() < 100_000) {
        let t = Instant::now();
        let _ = kernel();
        kernel_times.push(t.elapsed());
        let t = Instant::now();
        dst.bytes_mut().copy_from_slice(src.bytes());
        std::hint::black_box(&mut dst);
        copy_times.push(t.elapsed());
    }
    Ok(Timing {
        kernel: median(kernel_times.clone()),
        memcpy: median(copy_times),
        samples: kernel_times.len(),
        out_bytes,
        moved_bytes,
    })
}
