//! LoopNest → Cranelift IR, into any `cranelift_module::Module` (the JIT and, later, AOT
//! object files share this code generator).
//!
//! Every kernel has one signature:
//!
//! ```c
//! int32_t kernel(const uint8_t *const *buffers, uint8_t *out, int64_t begin, int64_t end);
//! ```
//!
//! `buffers` holds the plan's inputs then its constants; `[begin, end)` is the range of the
//! outermost loop to run, so callers can split the work across threads. The result is a status:
//! [`STATUS_OK`], or [`STATUS_INDEX_OUT_OF_RANGE`] when an `error`-mode index misses (the
//! plan's checks normally catch those first). Addresses are not checked here: the plan verifier
//! has proven them in range, and every gathered index is normalized into `[0, len)` before use.

use super::loopnest::{LoopNest, Stream, Term};
use crate::plan::OobMode;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, Block, BlockArg, Function, InstBuilder, MemFlagsData, Signature, StackSlotData, StackSlotKind,
    Type, Value, types,
};
use cranelift_codegen::isa::{TargetFrontendConfig, TargetIsa};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module, ModuleError};

pub const STATUS_OK: i32 = 0;
pub const STATUS_INDEX_OUT_OF_RANGE: i32 = 1;
/// Clamp or wrap on an axis with no elements.
pub const STATUS_EMPTY_AXIS: i32 = 2;

/// Runs of at most this many bytes are copied with inline loads and stores, longer ones by a
/// loop of vector moves ([`Gen::copy_loop`]) up to [`LOOP_COPY_BYTES`], then by memcpy.
const INLINE_COPY_BYTES: i64 = 64;
/// The longest run of a stream without gathers copied by an inline loop. Rows that follow each
/// other through memory stream in ahead of a loop of 16-byte moves, which copied `a[:, 1:-1]`
/// at 0.84-0.88x a memcpy of the whole output for rows of 1 KiB to 64 KiB, where a memcpy call
/// per row took 1.13-1.44x (measured on an AMD EPYC, whose libc copies rows over 8 KiB with
/// `rep movsb`). Gathered rows each start with cache misses, and libc's wider moves have more
/// of a row's lines in flight at once (`gather(a, idx, axis=0)` on rows of 1 KiB: 2.3x memcpy
/// by call, 2.5x by loop). Past this length the call costs nothing and libc picks its best
/// strategy for long copies (non-temporal stores).
const LOOP_COPY_BYTES: i64 = 1 << 18;

const NO_ARGS: &[BlockArg] = &[];

/// The most gathered contributions (8 bytes each, all pending terms together) a kernel
/// normalizes ahead of the rows that reuse them, in a table on its stack. The table must hold
/// every column: filled in chunks, it would walk every row once per chunk and lose the cache
/// locality of a row's random reads.
const TABLE_ENTRIES: i64 = 2048;
/// Gathers within rows of at least this many bytes (and at most [`TOUCH_MAX_BYTES`]) read the
/// next row ahead, a line or more per loop trip ([`Gen::row_ahead`]).
const TOUCH_MIN_BYTES: i64 = 1 << 10;
const TOUCH_MAX_BYTES: i64 = 1 << 18;
const CACHE_LINE: i64 = 64;
/// Iterations per trip of the unrolled loops ([`Gen::strided_loop`]).
const UNROLL: i64 = 4;
/// The most bytes a pointer of an unrolled loop may advance per trip.
const UNROLLED_STEP_MAX: u64 = 4096;

/// A table entry for a zero-mode miss; no real contribution (|index · stride| < buffer size)
/// can equal it.
const TABLE_MISS: i64 = i64::MIN;

pub fn signature(isa: &dyn TargetIsa) -> Signature {
    let ptr = isa.pointer_type();
    let mut sig = Signature::new(isa.default_call_conv());
    sig.params.extend([
        AbiParam::new(ptr),
        AbiParam::new(ptr),
        AbiParam::new(types::I64),
        AbiParam::new(types::I64),
    ]);
    sig.returns.push(AbiParam::new(types::I32));
    sig
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodegenError {
    #[error("the generated function is invalid:\n{0}")]
    Verifier(String),
    #[error("{0}")]
    Module(String),
}

/// Defines `name` in `module` as the kernel for `nest`, after `verify_function` accepts it;
/// returns its id and its Cranelift IR text.
pub fn define_kernel<M: Module>(
    module: &mut M,
    name: &str,
    linkage: Linkage,
    nest: &LoopNest,
) -> Result<FuncId, CodegenError> {
    let module_error = |e: ModuleError| CodegenError::Module(e.to_string());
    let id = module.declare_function(name, linkage, &signature(module.isa())).map_err(module_error)?;
    let mut ctx = module.make_context();
    build_function(module.isa(), &mut ctx.func, nest);
    cranelift_codegen::verify_function(&ctx.func, module.isa()).map_err(|e| {
        CodegenError::Verifier(cranelift_codegen::print_errors::pretty_verifier_error(&ctx.func, None, e))
    })?;
    module.define_function(id, &mut ctx).map_err(module_error)?;
    module.clear_context(&mut ctx);
    Ok(id)
}

/// The Cranelift IR [`define_kernel`] compiles for `nest` on `isa` (`slc plan --clif`).
pub fn kernel_ir(isa: &dyn TargetIsa, nest: &LoopNest) -> String {
    let mut func = Function::new();
    build_function(isa, &mut func, nest);
    func.display().to_string()
}

fn build_function(isa: &dyn TargetIsa, func: &mut Function, nest: &LoopNest) {
    func.signature = signature(isa);
    let mut fctx = FunctionBuilderContext::new();
    let b = FunctionBuilder::new(func, &mut fctx);
    Gen::new(b, nest, isa.frontend_config(), has_byte_shuffles(isa)).emit_function();
}

/// Whether the target shuffles bytes of a 128-bit vector by a constant mask in one instruction
/// (x86 SSSE3 `pshufb`, AArch64 `tbl`): the reversed and stride-2 inner loops use it.
fn has_byte_shuffles(isa: &dyn TargetIsa) -> bool {
    match isa.name() {
        "aarch64" => true,
        "x64" => isa.isa_flags().iter().any(|f| f.name == "has_ssse3" && f.as_bool() == Some(true)),
        _ => false,
    }
}

/// How an innermost loop with a constant source stride moves its elements.
#[derive(Clone, Copy, PartialEq, Eq)]
enum InnerKind {
    /// Source stride −width: 16 bytes loaded at once and reversed.
    Reverse,
    /// Source stride 2·width: 32 bytes loaded, every other element kept.
    Evens,
    /// Small tiles of `elems` elements, each reversed in place (`img[..., ::-1]` on RGB
    /// pixels): the tiles that fit in 16 bytes are loaded and shuffled at once.
    Tiles { elems: i64 },
    /// Anything else: one element at a time, unrolled.
    Scalar,
}

/// The state of one stream at the current loop depth: its byte offset so far, and for each
/// term, its index stream's state and (once evaluated) its contribution.
#[derive(Clone)]
struct StreamState {
    offset: Value,
    terms: Vec<TermState>,
}

#[derive(Clone)]
struct TermState {
    index: StreamState,
    /// (byte contribution, "zero-mode miss" flag) once evaluated.
    value: Option<(Value, Option<Value>)>,
}

/// A loop's reads of the next row ahead ([`Gen::row_ahead`]): a pointer from `next` advancing
/// `per_element` bytes per element.
struct RowAhead {
    next: Value,
    per_element: i64,
}

/// The body of a loop emitted by [`Gen::loop_over`].
trait Iteration<'a, 'n> {
    /// Emitted first in every unrolled trip of `trip` iterations at pointers `p`: a condition
    /// under which the trip's iterations run one per trip instead (their general form); the
    /// iterations of a trip whose guard passed are emitted `guarded` and may assume it did.
    fn guard(&mut self, _g: &mut Gen<'a, 'n>, _p: &[Value], _trip: i64) -> Option<Value> {
        None
    }

    /// Iteration `k` of a trip of `trip` iterations at pointers `p`.
    fn element(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], k: i64, trip: i64, guarded: bool);
}

/// A loop body with no guard: `body(g, pointers, k, trip)`.
struct Plain<F>(F);

impl<'a, 'n, F: FnMut(&mut Gen<'a, 'n>, &[Value], i64, i64)> Iteration<'a, 'n> for Plain<F> {
    fn element(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], k: i64, trip: i64, _guarded: bool) {
        (self.0)(g, p, k, trip)
    }
}

/// The elements of a gather whose indices change along the loop ([`Gen::emit_gather_inner`]).
/// Pointers: the output, the data (before the gathered contributions), one per index tensor
/// of `terms` (the pending terms of the data stream), then the next row's read-ahead if any.
/// Indices already in `[0, len)` mean the same under every mode, so an unrolled trip loads its
/// indices, tests them all at once, and when they are all inside (nearly always, in practice)
/// each element is a load and a store; a trip with an index outside, or under a missed row,
/// runs its elements one at a time with the mode's full normalization.
struct GatherRun {
    terms: Vec<usize>,
    strides: Vec<i64>,
    /// A zero-mode miss of the row the data stream points into.
    row_miss: Option<Value>,
    ahead: Option<RowAhead>,
    /// The current trip's widened index values, by term then iteration (from the guard).
    indices: Vec<Vec<Value>>,
}

impl GatherRun {
    /// The index of term `n` for iteration `k` at pointers `p`, as stored (its index dtype).
    fn load_index(&self, g: &mut Gen, p: &[Value], n: usize, k: i64) -> Value {
        let t = &g.nest.data.terms[self.terms[n]];
        let ty = Type::int_with_byte_size(t.index_dtype.width() as u16).expect("1, 2, 4 or 8 bytes");
        let (ptr, off) = g.split_offset(p[2 + n], k * self.strides[2 + n]);
        g.b.ins().load(ty, MemFlagsData::trusted(), ptr, off)
    }
}

impl<'a, 'n> Iteration<'a, 'n> for GatherRun {
    fn guard(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], trip: i64) -> Option<Value> {
        let nest = g.nest;
        self.indices.clear();
        let mut bail = self.row_miss;
        for (n, &j) in self.terms.iter().enumerate() {
            let t = &nest.data.terms[j];
            let values: Vec<Value> = (0..trip)
                .map(|k| {
                    let raw = self.load_index(g, p, n, k);
                    g.widen_index(t, raw)
                })
                .collect();
            // As unsigned numbers (negatives are huge), all values are below len exactly when
            // their maximum is; for a power-of-two len, exactly when their bitwise or is.
            let pow2 = t.len > 0 && t.len & (t.len - 1) == 0;
            let top = values
                .iter()
                .copied()
                .reduce(|a, b| if pow2 { g.b.ins().bor(a, b) } else { g.b.ins().umax(a, b) })
                .expect("a trip has iterations");
            let outside = g.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, top, t.len);
            bail = g.either(bail, Some(outside));
            self.indices.push(values);
        }
        bail
    }

    fn element(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], k: i64, trip: i64, guarded: bool) {
        let nest = g.nest;
        let ty = g.element_type();
        let mut addr = g.advanced(p[1], k * self.strides[1]);
        let value = if guarded {
            for (n, &j) in self.terms.iter().enumerate() {
                let c = g.b.ins().imul_imm_s(self.indices[n][k as usize], nest.data.terms[j].stride);
                addr = g.b.ins().iadd(addr, c);
            }
            g.b.ins().load(ty, MemFlagsData::trusted(), addr, 0)
        } else {
            let mut miss = self.row_miss;
            for (n, &j) in self.terms.iter().enumerate() {
                let raw = self.load_index(g, p, n, k);
                let (c, m) = g.contribution(&nest.data.terms[j], raw);
                addr = g.b.ins().iadd(addr, c);
                miss = g.either(miss, m);
            }
            g.load_unless(ty, addr, miss, nest.data.buffer)
        };
        let ahead = self.ahead.as_ref().map(|a| (a, p[2 + self.terms.len()]));
        g.store_element(value, p[0], k * self.strides[0], ahead, k, trip);
    }
}

/// The elements of a row gathered through a table of normalized contributions
/// ([`Gen::emit_with_index_table`]). Pointers: the output, the data row, the table, then the
/// next row's read-ahead if any. The table holds a column of `columns` entries per pending
/// term; trips run without testing for misses unless `missed` holds.
struct TableRun {
    strides: Vec<i64>,
    columns: i64,
    /// For each term's column, whether it may hold [`TABLE_MISS`] entries.
    may_miss: Vec<bool>,
    /// A zero-mode miss of the row the data stream points into.
    row_miss: Option<Value>,
    /// Whether any entry of the table, or the row, missed.
    missed: Option<Value>,
    ahead: Option<RowAhead>,
}

impl<'a, 'n> Iteration<'a, 'n> for TableRun {
    fn guard(&mut self, _g: &mut Gen<'a, 'n>, _p: &[Value], _trip: i64) -> Option<Value> {
        self.missed
    }

    fn element(&mut self, g: &mut Gen<'a, 'n>, p: &[Value], k: i64, trip: i64, guarded: bool) {
        let nest = g.nest;
        let ty = g.element_type();
        let mut addr = g.advanced(p[1], k * self.strides[1]);
        let mut miss = if guarded { None } else { self.row_miss };
        for (j, &may) in self.may_miss.iter().enumerate() {
            let (t, t_off) = g.split_offset(p[2], (j as i64 * self.columns + k) * 8);
            let c = g.b.ins().load(types::I64, MemFlagsData::trusted(), t, t_off);
            addr = g.b.ins().iadd(addr, c);
            if may && !guarded {
                let m = g.b.ins().icmp_imm_s(IntCC::Equal, c, TABLE_MISS);
                miss = g.either(miss, Some(m));
            }
        }
        let value = g.load_unless(ty, addr, miss, nest.data.buffer);
        let ahead = self.ahead.as_ref().map(|a| (a, p[3]));
        g.store_element(value, p[0], k * self.strides[0], ahead, k, trip);
    }
}

struct Gen<'a, 'n> {
    b: FunctionBuilder<'a>,
    nest: &'n LoopNest,
    config: TargetFrontendConfig,
    ptr: Type,
    buffers: Value,
    /// Base pointers of the buffers, loaded once at entry.
    bases: Vec<Option<Value>>,
    fail_index: cranelift_codegen::ir::Block,
    fail_empty: cranelift_codegen::ir::Block,
    simd: bool,
}

/// The loop depth from which a term's index no longer changes: one past the deepest loop its
/// index stream (or any nested one) moves along.
fn hoist_level(t: &Term) -> usize {
    fn deepest(s: &Stream) -> usize {
        let own = s.strides.iter().rposition(|&x| x != 0).map_or(0, |d| d + 1);
        s.terms.iter().map(hoist_level).fold(own, usize::max)
    }
    deepest(&t.index)
}

/// Whether loop `level` leaves a stream (and every index stream nested in it) where it is.
fn invariant_at(s: &Stream, level: usize) -> bool {
    s.strides[level] == 0 && s.terms.iter().all(|t| invariant_at(&t.index, level))
}

impl<'a, 'n> Gen<'a, 'n> {
    fn new(
        mut b: FunctionBuilder<'a>,
        nest: &'n LoopNest,
        config: TargetFrontendConfig,
        simd: bool,
    ) -> Gen<'a, 'n> {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let buffers = b.block_params(entry)[0];
        let fail_index = b.create_block();
        let fail_empty = b.create_block();
        let ptr = config.pointer_type();
        Gen { b, nest, config, ptr, buffers, bases: vec![], fail_index, fail_empty, simd }
    }

    fn emit_function(mut self) {
        let entry = self.b.current_block().expect("in the entry block");
        let params = self.b.block_params(entry).to_vec();
        let (out, begin, end) = (params[1], params[2], params[3]);
        if !self.nest.empty {
            let zero = self.b.ins().iconst(types::I64, 0);
            let data = self.initial_state(&self.nest.data.clone());
            if self.nest.extents.is_empty() {
                // One element: run it if the range is not empty.
                let run = self.b.create_block();
                let done = self.b.create_block();
                let c = self.b.ins().icmp(IntCC::SignedLessThan, begin, end);
                self.b.ins().brif(c, run, NO_ARGS, done, NO_ARGS);
                self.b.switch_to_block(run);
                self.emit(0, out, zero, data, Some((begin, end)));
                self.b.ins().jump(done, NO_ARGS);
                self.b.switch_to_block(done);
            } else {
                self.emit(0, out, zero, data, Some((begin, end)));
            }
        }
        let ok = self.b.ins().iconst(types::I32, STATUS_OK as i64);
        self.b.ins().return_(&[ok]);
        for (block, status) in
            [(self.fail_index, STATUS_INDEX_OUT_OF_RANGE), (self.fail_empty, STATUS_EMPTY_AXIS)]
        {
            self.b.switch_to_block(block);
            let s = self.b.ins().iconst(types::I32, status as i64);
            self.b.ins().return_(&[s]);
        }
        self.b.seal_all_blocks();
        let config = self.config;
        self.b.finalize(config);
    }

    fn base(&mut self, buffer: usize) -> Value {
        if self.bases.len() <= buffer {
            self.bases.resize(buffer + 1, None);
        }
        if let Some(v) = self.bases[buffer] {
            return v;
        }
        // Loaded where first needed; the entry block dominates everything, so load there.
        let v = self.b.ins().load(self.ptr, MemFlagsData::trusted(), self.buffers, (buffer * 8) as i32);
        self.bases[buffer] = Some(v);
        v
    }

    fn initial_state(&mut self, s: &Stream) -> StreamState {
        let offset = self.b.ins().iconst(types::I64, s.base);
        let terms =
            s.terms.iter().map(|t| TermState { index: self.initial_state(&t.index), value: None }).collect();
        // Load every base pointer now, in the entry block.
        self.base(s.buffer);
        StreamState { offset, terms }
    }

    /// Moves a stream (and its not yet evaluated index streams) to iteration `i` of loop `d`.
    fn advance(&mut self, s: &Stream, st: &StreamState, d: usize, i: Value) -> StreamState {
        let stride = s.strides[d];
        let offset = if stride == 0 {
            st.offset
        } else {
            let step = self.b.ins().imul_imm_s(i, stride);
            self.b.ins().iadd(st.offset, step)
        };
        let terms = s
            .terms
            .iter()
            .zip(&st.terms)
            .map(|(t, ts)| match ts.value {
                Some(_) => ts.clone(),
                None => TermState { index: self.advance(&t.index, &ts.index, d, i), value: None },
            })
            .collect();
        StreamState { offset, terms }
    }

    /// Evaluates the terms of `s` that no loop at depth >= `depth` moves.
    fn evaluate_terms(&mut self, s: &Stream, st: &mut StreamState, depth: usize) {
        for (t, ts) in s.terms.iter().zip(st.terms.iter_mut()) {
            if ts.value.is_none() && hoist_level(t) <= depth {
                ts.value = Some(self.evaluate_term(t, &mut ts.index, depth));
            }
        }
    }

    /// The address `base + offset + Σ contributions` of a stream whose terms are evaluated, and
    /// its combined zero-mode miss flag.
    fn address(&mut self, s: &Stream, st: &StreamState) -> (Value, Option<Value>) {
        let base = self.base(s.buffer);
        let mut addr = self.b.ins().iadd(base, st.offset);
        let mut miss: Option<Value> = None;
        for ts in &st.terms {
            let (contribution, m) = ts.value.expect("terms are evaluated before use");
            addr = self.b.ins().iadd(addr, contribution);
            miss = self.either(miss, m);
        }
        (addr, miss)
    }

    /// Loads an index value, normalizes it by the term's mode, and returns its byte contribution.
    fn evaluate_term(&mut self, t: &Term, index: &mut StreamState, depth: usize) -> (Value, Option<Value>) {
        self.evaluate_terms(&t.index, index, depth);
        let (addr, nested_miss) = self.address(&t.index, index);
        let dtype = t.index_dtype;
        let ty = Type::int_with_byte_size(dtype.width() as u16).expect("1, 2, 4 or 8 bytes");
        // A missed nested gather yields index value 0.
        let raw = self.load_unless(ty, addr, nested_miss, t.index.buffer);
        self.contribution(t, raw)
    }

    /// A loaded index value `raw` (of the term's index dtype) as an i64.
    fn widen_index(&mut self, t: &Term, raw: Value) -> Value {
        match (t.index_dtype.width(), t.index_dtype.is_signed()) {
            (8, _) => raw,
            (_, true) => self.b.ins().sextend(types::I64, raw),
            (_, false) => self.b.ins().uextend(types::I64, raw),
        }
    }

    /// The byte contribution of a loaded index value `raw` (of the term's index dtype),
    /// normalized by the term's mode, and its zero-mode miss flag.
    fn contribution(&mut self, t: &Term, raw: Value) -> (Value, Option<Value>) {
        let dtype = t.index_dtype;
        let j = self.widen_index(t, raw);
        let n = t.len;
        if n == 0 && matches!(t.mode, OobMode::Clamp | OobMode::Wrap) {
            let cont = self.b.create_block();
            self.b.ins().jump(self.fail_empty, NO_ARGS);
            self.b.switch_to_block(cont);
        }
        let signed = dtype.is_signed();
        // `wrapped` is j with negatives counted from the end (signed dtypes only).
        let wrapped = if signed {
            let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, j, 0);
            let plus_n = self.b.ins().iadd_imm_s(j, n);
            self.b.ins().select(neg, plus_n, j)
        } else {
            j
        };
        // One unsigned compare checks 0 <= wrapped < n.
        let (value, miss) = match t.mode {
            OobMode::Error => {
                let inside = self.b.ins().icmp_imm_s(IntCC::UnsignedLessThan, wrapped, n);
                let cont = self.b.create_block();
                self.b.ins().brif(inside, cont, NO_ARGS, self.fail_index, NO_ARGS);
                self.b.switch_to_block(cont);
                (wrapped, None)
            }
            // A miss's address is never dereferenced (loads select another one or branch
            // around), so the value need not be clamped.
            OobMode::Zero => {
                let miss = self.b.ins().icmp_imm_s(IntCC::UnsignedGreaterThanOrEqual, wrapped, n);
                (wrapped, Some(miss))
            }
            OobMode::Clamp if n > 0 => {
                let top = self.b.ins().iconst(types::I64, n - 1);
                let value = if signed {
                    let zero = self.b.ins().iconst(types::I64, 0);
                    let low = self.b.ins().smax(j, zero);
                    self.b.ins().smin(low, top)
                } else {
                    self.b.ins().umin(j, top)
                };
                (value, None)
            }
            OobMode::Wrap if n > 0 => {
                let nv = self.b.ins().iconst(types::I64, n);
                let value = if signed {
                    let r = self.b.ins().srem(j, nv);
                    let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, r, 0);
                    let r_plus = self.b.ins().iadd(r, nv);
                    self.b.ins().select(neg, r_plus, r)
                } else {
                    self.b.ins().urem(j, nv)
                };
                (value, None)
            }
            // Unreachable at run time (the jump to fail_empty above); keep the IR well formed.
            OobMode::Clamp | OobMode::Wrap => (self.b.ins().iconst(types::I64, 0), None),
        };
        // A nested miss only zeroes the index value (when loaded), not this element.
        let contribution = self.b.ins().imul_imm_s(value, t.stride);
        (contribution, miss)
    }

    /// Emits loop `depth` and everything inside it. `range` overrides the loop bounds
    /// (the caller's outer range).
    fn emit(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        mut data: StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        self.evaluate_terms(&nest.data, &mut data, depth);
        let rank = nest.extents.len();
        let w = nest.width as i64;
        if depth == rank {
            self.copy_element(out, out_off, &data);
            return;
        }
        if depth + 1 == rank && nest.block {
            // Under an outer loop, the block is the whole innermost run; alone (everything merged
            // into one loop), the caller's range selects elements of it.
            let (start, count) = match range {
                Some((begin, end)) => (begin, self.b.ins().isub(end, begin)),
                None => {
                    (self.b.ins().iconst(types::I64, 0), self.b.ins().iconst(types::I64, nest.extents[depth]))
                }
            };
            let skip = self.b.ins().imul_imm_s(start, w);
            let out_off = self.b.ins().iadd(out_off, skip);
            let data = self.advance(&nest.data, &data, depth, start);
            let bytes = self.b.ins().imul_imm_s(count, w);
            let static_bytes = if range.is_none() { Some(nest.extents[depth] * w) } else { None };
            self.copy_block(out, out_off, &data, bytes, static_bytes);
            return;
        }
        if depth + 2 == rank
            && nest.block
            && nest.extents[depth + 1] * w <= INLINE_COPY_BYTES
            && data.terms.iter().all(|t| matches!(t.value, Some((_, None))))
        {
            self.emit_block_rows(depth, out, out_off, &data, range);
            return;
        }
        if depth + 2 == rank && !nest.block && self.table_pays(depth, &data) {
            self.emit_with_index_table(depth, out, out_off, &data, range);
            return;
        }
        if depth + 2 == rank
            && data.terms.iter().all(|t| t.value.is_some())
            && let Some(elems) = self.reversed_tiles(depth)
        {
            self.emit_tiles(depth, elems, out, out_off, &data, range);
            return;
        }
        if depth + 1 == rank && data.terms.iter().all(|t| t.value.is_some()) {
            // Every gather is fixed for the whole innermost loop: it is an affine copy.
            self.emit_affine_inner(depth, out, out_off, &data, range);
            return;
        }
        if depth + 1 == rank && !nest.block && self.flat_gathers(&data) {
            self.emit_gather_inner(depth, out, out_off, &data, range);
            return;
        }
        let (lo, hi) = self.bounds(depth, range);
        let i_var = self.b.declare_var(types::I64);
        self.b.def_var(i_var, lo);
        let header = self.b.create_block();
        let body = self.b.create_block();
        let exit = self.b.create_block();
        self.b.ins().jump(header, NO_ARGS);
        self.b.switch_to_block(header);
        let i = self.b.use_var(i_var);
        let more = self.b.ins().icmp(IntCC::SignedLessThan, i, hi);
        self.b.ins().brif(more, body, NO_ARGS, exit, NO_ARGS);
        self.b.switch_to_block(body);
        let step = self.b.ins().imul_imm_s(i, nest.out[depth]);
        let inner_out = self.b.ins().iadd(out_off, step);
        let inner_data = self.advance(&nest.data, &data, depth, i);
        self.emit(depth + 1, out, inner_out, inner_data, None);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.def_var(i_var, next);
        self.b.ins().jump(header, NO_ARGS);
        self.b.switch_to_block(exit);
    }

    /// Whether every gather still pending at the innermost loop reads its indices straight
    /// from an index tensor (no gather of a gather): then pointers walk the index tensors.
    fn flat_gathers(&self, data: &StreamState) -> bool {
        let pending = self.nest.data.terms.iter().zip(&data.terms).filter(|(_, ts)| ts.value.is_none());
        pending.clone().next().is_some() && pending.into_iter().all(|(t, _)| t.index.terms.is_empty())
    }

    /// The innermost loop over gathered elements whose indices change with it (`a[idx]` with
    /// 2-D `idx`, batched gathers): pointers into the output, the data and each index tensor
    /// advance together, several elements per trip ([`GatherRun`]).
    fn emit_gather_inner(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let (lo, hi) = self.bounds(depth, range);
        let count = self.b.ins().isub(hi, lo);
        let mut st = self.advance(&nest.data, data, depth, lo);
        let pending: Vec<usize> = (0..st.terms.len()).filter(|&j| st.terms[j].value.is_none()).collect();
        let mut starts = vec![];
        let mut strides = vec![nest.out[depth], nest.data.strides[depth]];
        for &j in &pending {
            let index = &nest.data.terms[j].index;
            let base = self.base(index.buffer);
            starts.push(self.b.ins().iadd(base, st.terms[j].index.offset));
            strides.push(index.strides[depth]);
        }
        let zero = self.b.ins().iconst(types::I64, 0);
        for &j in &pending {
            st.terms[j].value = Some((zero, None));
        }
        let (src, row_miss) = self.address(&nest.data, &st);
        // Under a loop over rows (depth > 0, so no caller's range), this loop is a whole row.
        let ahead = depth.checked_sub(1).and_then(|row| self.row_ahead(src, row, nest.extents[depth]));
        if let Some(a) = &ahead {
            starts.push(a.next);
            strides.push(a.per_element);
        }
        let skip = self.b.ins().imul_imm_s(lo, nest.out[depth]);
        let dst = self.b.ins().iadd(out, out_off);
        let dst = self.b.ins().iadd(dst, skip);
        let starts: Vec<Value> = [dst, src].into_iter().chain(starts).collect();
        let run = GatherRun { terms: pending, strides: strides.clone(), row_miss, ahead, indices: vec![] };
        self.loop_over(&starts, &strides, count, run);
    }

    /// Whether the gathers still pending at the innermost loop stay put along loop `depth`
    /// (`a[:, idx]`: the same columns in every row), so that normalizing each index once for all
    /// rows pays.
    fn table_pays(&self, depth: usize, data: &StreamState) -> bool {
        let nest = self.nest;
        let mut pending =
            nest.data.terms.iter().zip(&data.terms).filter(|(_, ts)| ts.value.is_none()).peekable();
        let terms = pending.clone().count() as i64;
        nest.extents[depth] > 1
            && pending.peek().is_some()
            && terms * nest.extents[depth + 1] <= TABLE_ENTRIES
            && pending.all(|(t, _)| invariant_at(&t.index, depth))
    }

    /// Loops `depth` (rows) and `depth + 1` (columns) when the columns' gathers do not depend
    /// on the row: the gathered contributions are normalized once into a table on the stack,
    /// then every row copies through it.
    fn emit_with_index_table(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let inner = depth + 1;
        let columns = nest.extents[inner];
        let pending: Vec<usize> = (0..data.terms.len()).filter(|&j| data.terms[j].value.is_none()).collect();
        let slot = self.b.create_sized_stack_slot(StackSlotData::new(
            StackSlotKind::ExplicitSlot,
            (pending.len() as i64 * columns * 8) as u32,
            3,
        ));
        let table = self.b.ins().stack_addr(self.ptr, slot, 0);
        let (lo, hi) = self.bounds(depth, range);
        // No rows, no index reads: an empty range must not report an index error.
        let (fill, done) = (self.b.create_block(), self.b.create_block());
        let any = self.b.ins().icmp(IntCC::SignedLessThan, lo, hi);
        self.b.ins().brif(any, fill, NO_ARGS, done, NO_ARGS);
        self.b.switch_to_block(fill);

        // Fill: the contribution of every pending term for every column.
        let (zero, n) = (self.b.ins().iconst(types::I64, 0), self.b.ins().iconst(types::I64, columns));
        let mut may_miss = vec![false; pending.len()];
        // Whether any column missed: if none did, the rows need not test the table for misses.
        let missed = self.b.declare_var(types::I8);
        let no = self.b.ins().iconst(types::I8, 0);
        self.b.def_var(missed, no);
        self.counted_loop(zero, n, |g, k| {
            let mut st = g.advance(&nest.data, data, inner, k);
            g.evaluate_terms(&nest.data, &mut st, nest.extents.len());
            let entry = g.b.ins().imul_imm_s(k, 8);
            let entry = g.b.ins().iadd(table, entry);
            for (j, &t) in pending.iter().enumerate() {
                let (c, miss) = st.terms[t].value.expect("evaluated above");
                let c = match miss {
                    Some(m) => {
                        may_miss[j] = true;
                        let so_far = g.b.use_var(missed);
                        let so_far = g.b.ins().bor(so_far, m);
                        g.b.def_var(missed, so_far);
                        let sentinel = g.b.ins().iconst(types::I64, TABLE_MISS);
                        g.b.ins().select(m, sentinel, c)
                    }
                    None => c,
                };
                g.b.ins().store(MemFlagsData::trusted(), c, entry, (j as i64 * columns * 8) as i32);
            }
        });
        // Rows: each copies its columns through the table; while neither the table (tested
        // once) nor the row missed (the common case), without testing for misses.
        let any_missed = may_miss.contains(&true).then(|| self.b.use_var(missed));
        self.counted_loop(lo, hi, |g, row| {
            let step = g.b.ins().imul_imm_s(row, nest.out[depth]);
            let row_out = g.b.ins().iadd(out_off, step);
            let mut st = g.advance(&nest.data, data, depth, row);
            let zero = g.b.ins().iconst(types::I64, 0);
            for &t in &pending {
                st.terms[t].value = Some((zero, None));
            }
            let (src, row_miss) = g.address(&nest.data, &st);
            let ahead = g.row_ahead(src, depth, columns);
            let dst = g.b.ins().iadd(out, row_out);
            let mut starts = vec![dst, src, table];
            let mut strides = vec![nest.out[inner], nest.data.strides[inner], 8];
            if let Some(a) = &ahead {
                starts.push(a.next);
                strides.push(a.per_element);
            }
            let missed = g.either(any_missed, row_miss);
            let run = TableRun {
                strides: strides.clone(),
                columns,
                may_miss: may_miss.clone(),
                row_miss,
                missed,
                ahead,
            };
            let n = g.b.ins().iconst(types::I64, columns);
            g.loop_over(&starts, &strides, n, run);
        });
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// Random reads within a row wait on memory one cache line at a time; so, where the data's
    /// only gather reaches a span of a row that fits in cache, the loop over the row's
    /// `elements` also reads the same span of the next row (loop `row` one step on), a line every
    /// few elements, in order: the hardware streams it in while this row is gathered from cache,
    /// and the misses overlap the gathers instead of stalling ahead of them. `src`: this row's
    /// address of gathered index 0. The span is clamped into the buffer, so the last row touches
    /// itself; the pointer advances by the span's bytes per element rounded down, so the touches
    /// stay inside it without a test each ([`Gen::touch_ahead`]) and may leave its last few
    /// bytes (fewer than `elements`) unread.
    fn row_ahead(&mut self, src: Value, row: usize, elements: i64) -> Option<RowAhead> {
        let nest = self.nest;
        let [t] = nest.data.terms.as_slice() else { return None };
        let (reach, step) = ((t.len - 1).saturating_mul(t.stride), nest.data.strides[row]);
        let span = reach.saturating_abs().saturating_add(nest.width as i64);
        let bytes = nest.buffer_bytes[nest.data.buffer];
        if t.len < 1 || t.stride.abs() > CACHE_LINE || step == 0 || elements < 1 || span < elements {
            return None;
        }
        if !(TOUCH_MIN_BYTES..=TOUCH_MAX_BYTES).contains(&span) || span > bytes {
            return None;
        }
        let base = self.base(nest.data.buffer);
        let next = self.b.ins().iadd_imm_s(src, step + reach.min(0));
        let first = self.b.ins().iadd_imm_s(base, 0);
        let last = self.b.ins().iadd_imm_s(base, bytes - span);
        let next = self.b.ins().umax(next, first);
        let next = self.b.ins().umin(next, last);
        Some(RowAhead { next, per_element: span / elements })
    }

    /// Whether either flag holds (`None`: a flag known to be clear).
    fn either(&mut self, a: Option<Value>, b: Option<Value>) -> Option<Value> {
        match (a, b) {
            (Some(a), Some(b)) => Some(self.b.ins().bor(a, b)),
            (a, b) => a.or(b),
        }
    }

    /// `p + off`.
    fn advanced(&mut self, p: Value, off: i64) -> Value {
        match off {
            0 => p,
            off => self.b.ins().iadd_imm_s(p, off),
        }
    }

    /// The integer type of the nest's elements (moved as bits).
    fn element_type(&self) -> Type {
        Type::int_with_byte_size(self.nest.width as u16).expect("1, 2, 4 or 8 bytes")
    }

    /// Stores iteration `k`'s `value` at `out + off`, then reads ahead through `ahead` (the
    /// read-ahead and its loop pointer), if any.
    fn store_element(
        &mut self,
        value: Value,
        out: Value,
        off: i64,
        ahead: Option<(&RowAhead, Value)>,
        k: i64,
        trip: i64,
    ) {
        let (d, off) = self.split_offset(out, off);
        self.b.ins().store(MemFlagsData::trusted(), value, d, off);
        if let Some((a, at)) = ahead {
            self.touch_ahead(a, at, k, trip);
        }
    }

    /// Iteration `k` of a trip of `trip` iterations of a loop that reads the next row ahead:
    /// the trip's first iteration touches the lines its elements cover. `at`: the loop's pointer
    /// into the next row. The touches lie below `at + trip · per_element` (the last one is under
    /// a line past the one before), so, the whole loop advancing `at` by at most the span, inside
    /// the span.
    fn touch_ahead(&mut self, ahead: &RowAhead, at: Value, k: i64, trip: i64) {
        if k != 0 {
            return;
        }
        let lines = (trip * ahead.per_element + CACHE_LINE - 1) / CACHE_LINE;
        for line in 0..lines {
            self.b.ins().load(types::I8, MemFlagsData::trusted(), at, (line * CACHE_LINE) as i32);
        }
    }

    /// `count` iterations over pointers that advance by `strides` bytes each, [`UNROLL`]
    /// iterations per loop trip then one: `body(pointers, k, trip)` emits iteration `k` of a
    /// trip of `trip` iterations ([`Gen::loop_over`]).
    fn strided_loop(
        &mut self,
        starts: &[Value],
        strides: &[i64],
        count: Value,
        body: impl FnMut(&mut Self, &[Value], i64, i64),
    ) {
        self.loop_over(starts, strides, count, Plain(body));
    }

    /// `count` iterations over pointers that advance by `strides` bytes each: [`UNROLL`] per
    /// loop trip while that many remain, then one per trip. A trip whose [`Iteration::guard`]
    /// holds runs its iterations one per trip instead. Loops whose pointers leap more than
    /// [`UNROLLED_STEP_MAX`] bytes per unrolled trip run one iteration per trip: each load of
    /// an unrolled trip is its own instruction, and the hardware's per-instruction stride
    /// prefetcher stops following such strides (`a[:, 0]` on rows of 16 KiB ran 30 % slower
    /// unrolled). Both loops test at the bottom of their trips.
    fn loop_over(
        &mut self,
        starts: &[Value],
        strides: &[i64],
        count: Value,
        mut body: impl Iteration<'a, 'n>,
    ) {
        let pointers = starts.len();
        let unroll =
            strides.iter().all(|s| s.unsigned_abs().saturating_mul(UNROLL as u64) <= UNROLLED_STEP_MAX);
        // Each block takes the pointers and the iterations left; `single` also the count at
        // which to stop stepping one at a time (0, or where a guarded trip that bailed ends).
        let [unrolled, single, after] = [(); 3].map(|_| {
            let block = self.b.create_block();
            for _ in 0..pointers {
                self.b.append_block_param(block, self.ptr);
            }
            self.b.append_block_param(block, types::I64);
            block
        });
        self.b.append_block_param(single, types::I64);
        let (tail, exit) = (self.b.create_block(), self.b.create_block());
        let args = |values: &[Value], more: &[Value]| -> Vec<BlockArg> {
            values.iter().chain(more).map(|&v| BlockArg::Value(v)).collect()
        };
        let stepped = |g: &mut Self, p: &[Value], trip: i64| -> Vec<Value> {
            let mut next: Vec<Value> =
                (0..pointers).map(|i| g.b.ins().iadd_imm_s(p[i], trip.wrapping_mul(strides[i]))).collect();
            next.push(g.b.ins().iadd_imm_s(p[pointers], -trip));
            next
        };
        let mut at = starts.to_vec();
        at.push(count);
        self.b.ins().jump(after, &args(&at, &[]));

        // After a run of single steps (and at the start): unrolled trips while enough remain,
        // single steps to the end otherwise.
        self.b.switch_to_block(after);
        let p = self.b.block_params(after).to_vec();
        let n = p[pointers];
        if unroll {
            let more = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, n, UNROLL);
            self.b.ins().brif(more, unrolled, &args(&p, &[]), tail, NO_ARGS);
        } else {
            self.b.ins().jump(tail, NO_ARGS);
        }
        self.b.switch_to_block(tail);
        let (any, zero) =
            (self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, n, 0), self.b.ins().iconst(types::I64, 0));
        self.b.ins().brif(any, single, &args(&p, &[zero]), exit, NO_ARGS);

        if unroll {
            self.b.switch_to_block(unrolled);
            let p = self.b.block_params(unrolled).to_vec();
            if let Some(bail) = body.guard(self, &p[..pointers], UNROLL) {
                let (fast, stop) = (self.b.create_block(), self.b.ins().iadd_imm_s(p[pointers], -UNROLL));
                self.b.ins().brif(bail, single, &args(&p, &[stop]), fast, NO_ARGS);
                self.b.switch_to_block(fast);
            }
            for k in 0..UNROLL {
                body.element(self, &p[..pointers], k, UNROLL, true);
            }
            // The pointers may step past their buffers after the last trip (never used).
            let next = stepped(self, &p, UNROLL);
            let more = self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, next[pointers], UNROLL);
            self.b.ins().brif(more, unrolled, &args(&next, &[]), after, &args(&next, &[]));
        }

        self.b.switch_to_block(single);
        let p = self.b.block_params(single).to_vec();
        body.element(self, &p[..pointers], 0, 1, false);
        let next = stepped(self, &p[..=pointers], 1);
        let stop = p[pointers + 1];
        let more = self.b.ins().icmp(IntCC::SignedGreaterThan, next[pointers], stop);
        self.b.ins().brif(more, single, &args(&next, &[stop]), after, &args(&next, &[]));
        self.b.switch_to_block(exit);
    }

    /// `for (i = lo; i < hi; i++) body(i)`.
    fn counted_loop(&mut self, lo: Value, hi: Value, mut body: impl FnMut(&mut Self, Value)) {
        let (header, block, exit) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.append_block_param(header, types::I64);
        self.b.ins().jump(header, &[BlockArg::Value(lo)]);
        self.b.switch_to_block(header);
        let i = self.b.block_params(header)[0];
        let more = self.b.ins().icmp(IntCC::SignedLessThan, i, hi);
        self.b.ins().brif(more, block, NO_ARGS, exit, NO_ARGS);
        self.b.switch_to_block(block);
        body(self, i);
        let next = self.b.ins().iadd_imm_s(i, 1);
        self.b.ins().jump(header, &[BlockArg::Value(next)]);
        self.b.switch_to_block(exit);
    }

    /// Loads `ty` at `addr` of `buffer`, or yields 0 when `miss` is set: after a zero-mode miss
    /// the address is meaningless. A buffer that holds an element is read at its start instead
    /// (branch-free); an empty one is not touched at all.
    fn load_unless(&mut self, ty: Type, addr: Value, miss: Option<Value>, buffer: usize) -> Value {
        let Some(miss) = miss else {
            return self.b.ins().load(ty, MemFlagsData::trusted(), addr, 0);
        };
        if self.nest.buffer_bytes.get(buffer).is_some_and(|&n| n >= ty.bytes() as i64) {
            let base = self.base(buffer);
            let safe = self.b.ins().select(miss, base, addr);
            let v = self.b.ins().load(ty, MemFlagsData::trusted(), safe, 0);
            let zero = self.b.ins().iconst(ty, 0);
            return self.b.ins().select(miss, zero, v);
        }
        let result = self.b.declare_var(ty);
        let (load, skip, join) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
        self.b.ins().brif(miss, skip, NO_ARGS, load, NO_ARGS);
        self.b.switch_to_block(load);
        let v = self.b.ins().load(ty, MemFlagsData::trusted(), addr, 0);
        self.b.def_var(result, v);
        self.b.ins().jump(join, NO_ARGS);
        self.b.switch_to_block(skip);
        let zero = self.b.ins().iconst(ty, 0);
        self.b.def_var(result, zero);
        self.b.ins().jump(join, NO_ARGS);
        self.b.switch_to_block(join);
        self.b.use_var(result)
    }

    fn copy_element(&mut self, out: Value, out_off: Value, data: &StreamState) {
        let nest = self.nest;
        let ty = self.element_type();
        let (src, miss) = self.address(&nest.data, data);
        let value = self.load_unless(ty, src, miss, nest.data.buffer);
        let dst = self.b.ins().iadd(out, out_off);
        self.b.ins().store(MemFlagsData::trusted(), value, dst, 0);
    }

    fn copy_block(
        &mut self,
        out: Value,
        out_off: Value,
        data: &StreamState,
        bytes: Value,
        static_bytes: Option<i64>,
    ) {
        let nest = self.nest;
        let (src, miss) = self.address(&nest.data, data);
        let dst = self.b.ins().iadd(out, out_off);
        let (copy, done) = (self.b.create_block(), self.b.create_block());
        if let Some(m) = miss {
            let zero_fill = self.b.create_block();
            self.b.ins().brif(m, zero_fill, NO_ARGS, copy, NO_ARGS);
            self.b.switch_to_block(zero_fill);
            let zero = self.b.ins().iconst(types::I8, 0);
            self.b.call_memset(self.config, dst, zero, bytes);
            self.b.ins().jump(done, NO_ARGS);
        } else {
            self.b.ins().jump(copy, NO_ARGS);
        }
        self.b.switch_to_block(copy);
        match static_bytes {
            Some(n) if n <= INLINE_COPY_BYTES => self.copy_inline((dst, 0), (src, 0), n),
            Some(n) if n <= LOOP_COPY_BYTES && nest.data.terms.is_empty() => self.copy_loop(dst, src, n),
            _ => self.b.call_memcpy(self.config, dst, src, bytes),
        }
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }
}

/// Unaligned, non-trapping (proven in bounds) vector accesses.
fn vector_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}

impl Gen<'_, '_> {
    /// Copies `n` (≤ [`INLINE_COPY_BYTES`]) bytes from `src` to `dst` (each a pointer and a
    /// byte offset) with as few moves as possible: 16-byte vectors, the last one overlapping
    /// the one before, or for shorter runs two overlapping scalars.
    fn copy_inline(&mut self, dst: (Value, i64), src: (Value, i64), n: i64) {
        let mut moves: Vec<(Type, i64)> = vec![];
        let widest = [(16, types::I8X16), (8, types::I64), (4, types::I32), (2, types::I16), (1, types::I8)];
        if let Some(&(size, ty)) = widest.iter().find(|(size, _)| *size <= n) {
            let mut at = 0;
            while at + size <= n {
                moves.push((ty, at));
                at += size;
            }
            if at < n {
                moves.push((ty, n - size));
            }
        }
        // Load everything first: the moves may overlap each other, never the two buffers.
        let values: Vec<Value> = moves
            .iter()
            .map(|&(ty, at)| {
                let (p, off) = self.split_offset(src.0, src.1 + at);
                self.b.ins().load(ty, vector_flags(), p, off)
            })
            .collect();
        for (&(_, at), v) in moves.iter().zip(values) {
            let (p, off) = self.split_offset(dst.0, dst.1 + at);
            self.b.ins().store(vector_flags(), v, p, off);
        }
    }

    /// Copies `n` (> [`INLINE_COPY_BYTES`]) bytes from `src` to `dst`: 64 bytes per loop trip,
    /// then the last 64 bytes again, overlapping what the loop copied (the buffers never overlap
    /// each other), for the part the loop left. Its own loop rather than [`Gen::strided_loop`]:
    /// at least one trip is known to run, and unrolled trips (256 bytes each) made `a[:, 1:-1]`
    /// compile half again as long for no measurable gain.
    fn copy_loop(&mut self, dst: Value, src: Value, n: i64) {
        let chunk = INLINE_COPY_BYTES;
        let trip = self.b.create_block();
        for ty in [self.ptr, self.ptr, types::I64] {
            self.b.append_block_param(trip, ty);
        }
        let trips = self.b.ins().iconst(types::I64, n / chunk);
        self.b.ins().jump(trip, &[BlockArg::Value(dst), BlockArg::Value(src), BlockArg::Value(trips)]);
        self.b.switch_to_block(trip);
        let p = self.b.block_params(trip).to_vec();
        self.copy_inline((p[0], 0), (p[1], 0), chunk);
        let d = self.b.ins().iadd_imm_s(p[0], chunk);
        let s = self.b.ins().iadd_imm_s(p[1], chunk);
        let left = self.b.ins().iadd_imm_s(p[2], -1);
        let (more, done) =
            (self.b.ins().icmp_imm_s(IntCC::SignedGreaterThan, left, 0), self.b.create_block());
        self.b.ins().brif(
            more,
            trip,
            &[BlockArg::Value(d), BlockArg::Value(s), BlockArg::Value(left)],
            done,
            NO_ARGS,
        );
        self.b.switch_to_block(done);
        if n % chunk != 0 {
            self.copy_inline((dst, n - chunk), (src, n - chunk), chunk);
        }
    }

    /// Loops `depth` (rows) and `depth + 1` (a block short enough to copy inline) when every
    /// gather is fixed along the rows and none can miss (`a[2:, ..., :10]`: 40 bytes of every
    /// row of 256): pointers walk the rows, several per trip, so that more rows' reads are in
    /// flight at once (a row per trip left a third of the time on the table).
    fn emit_block_rows(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let (lo, hi) = self.bounds(depth, range);
        let count = self.b.ins().isub(hi, lo);
        let data = self.advance(&nest.data, data, depth, lo);
        let (src, _) = self.address(&nest.data, &data);
        let skip = self.b.ins().imul_imm_s(lo, nest.out[depth]);
        let dst = self.b.ins().iadd(out, out_off);
        let dst = self.b.ins().iadd(dst, skip);
        let (out_step, step) = (nest.out[depth], nest.data.strides[depth]);
        let bytes = nest.extents[depth + 1] * nest.width as i64;
        self.strided_loop(&[dst, src], &[out_step, step], count, |g, p, k, _| {
            g.copy_inline((p[0], k * out_step), (p[1], k * step), bytes);
        });
    }

    /// The innermost loop when every gathered term is fixed along it: `count` elements from
    /// `src` by a constant stride into the output. A zero-mode miss fills the run with zeros.
    fn emit_affine_inner(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let (w, stride, out_stride) = (nest.width as i64, nest.data.strides[depth], nest.out[depth]);
        let (lo, hi) = self.bounds(depth, range);
        let count = self.b.ins().isub(hi, lo);
        let data = self.advance(&nest.data, data, depth, lo);
        let (src, miss) = self.address(&nest.data, &data);
        let skip = self.b.ins().imul_imm_s(lo, out_stride);
        let out_off = self.b.ins().iadd(out_off, skip);
        let dst = self.b.ins().iadd(out, out_off);
        let done = self.b.create_block();
        // Only check nests write with strides other than w, and they have no zero-mode terms.
        debug_assert!(miss.is_none() || out_stride == w);
        self.zero_fill_on(miss, done, dst, count, w);
        let kind = match stride {
            _ if !self.simd || out_stride != w => InnerKind::Scalar,
            s if s == -w => InnerKind::Reverse,
            s if s == 2 * w => InnerKind::Evens,
            _ => InnerKind::Scalar,
        };
        let (dst, src, count) = self.vector_loop(kind, dst, src, count);
        self.scalar_loop(dst, src, count, stride, out_stride);
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// The bounds of loop `depth`: the caller's range, or the whole extent.
    fn bounds(&mut self, depth: usize, range: Option<(Value, Value)>) -> (Value, Value) {
        match range {
            Some(r) => r,
            None => (
                self.b.ins().iconst(types::I64, 0),
                self.b.ins().iconst(types::I64, self.nest.extents[depth]),
            ),
        }
    }

    /// On a zero-mode `miss`, fills `count` units of `unit` bytes at `dst` with zeros and jumps
    /// to `done`; code emitted after this call runs on a hit.
    fn zero_fill_on(&mut self, miss: Option<Value>, done: Block, dst: Value, count: Value, unit: i64) {
        let Some(m) = miss else { return };
        let (zero_fill, copy) = (self.b.create_block(), self.b.create_block());
        self.b.ins().brif(m, zero_fill, NO_ARGS, copy, NO_ARGS);
        self.b.switch_to_block(zero_fill);
        let zero = self.b.ins().iconst(types::I8, 0);
        let bytes = self.b.ins().imul_imm_s(count, unit);
        self.b.call_memset(self.config, dst, zero, bytes);
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(copy);
    }

    /// The tile length when loops `depth` and `depth + 1` walk dense tiles of at most 8 bytes
    /// whose elements are read in reverse (`img[..., ::-1]` on pixels): worth a shuffle.
    fn reversed_tiles(&self, depth: usize) -> Option<i64> {
        let nest = self.nest;
        let (w, elems) = (nest.width as i64, nest.extents[depth + 1]);
        let tile = elems * w;
        let dense = nest.out[depth + 1] == w && nest.out[depth] == tile && nest.data.strides[depth] == tile;
        (self.simd && !nest.block && elems >= 2 && tile <= 8 && dense && nest.data.strides[depth + 1] == -w)
            .then_some(elems)
    }

    /// Loops `depth` (tiles) and `depth + 1` (elements, reversed) of an affine copy: shuffled
    /// 16 bytes at a time, then tile by tile. A zero-mode miss fills the tiles with zeros.
    fn emit_tiles(
        &mut self,
        depth: usize,
        elems: i64,
        out: Value,
        out_off: Value,
        data: &StreamState,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        let (w, tile) = (nest.width as i64, elems * nest.width as i64);
        let (lo, hi) = self.bounds(depth, range);
        let count = self.b.ins().isub(hi, lo);
        let data = self.advance(&nest.data, data, depth, lo);
        // The stream points at each tile's last element (read first).
        let (last, miss) = self.address(&nest.data, &data);
        let src = self.b.ins().iadd_imm_s(last, -(elems - 1) * w);
        let skip = self.b.ins().imul_imm_s(lo, tile);
        let dst = self.b.ins().iadd(out, out_off);
        let dst = self.b.ins().iadd(dst, skip);
        let done = self.b.create_block();
        self.zero_fill_on(miss, done, dst, count, tile);
        let (dst, src, count) = self.vector_loop(InnerKind::Tiles { elems }, dst, src, count);
        let ty = Type::int_with_byte_size(w as u16).expect("1, 2, 4 or 8 bytes");
        self.strided_loop(&[dst, src], &[tile, tile], count, |g, p, k, _| {
            let (d, s) = (p[0], p[1]);
            for e in 0..elems {
                let v =
                    g.b.ins().load(ty, MemFlagsData::trusted(), s, (k * tile + (elems - 1 - e) * w) as i32);
                g.b.ins().store(MemFlagsData::trusted(), v, d, (k * tile + e * w) as i32);
            }
        });
        self.b.ins().jump(done, NO_ARGS);
        self.b.switch_to_block(done);
    }

    /// Moves 16 output bytes per iteration while the loads stay inside the elements the loop
    /// reads; returns where the scalar tail starts.
    fn vector_loop(
        &mut self,
        kind: InnerKind,
        dst: Value,
        src: Value,
        count: Value,
    ) -> (Value, Value, Value) {
        let w = self.nest.width as i64;
        let lanes = 16 / w;
        // `count` counts elements, or tiles for Tiles; each trip moves `per_trip` of them and
        // `dst_step` output bytes, and needs `need` of them left for its loads and its store.
        let (mask, need, per_trip, dst_step, src_step, load_at): (Vec<u8>, i64, i64, i64, i64, i64) =
            match kind {
                InnerKind::Scalar => return (dst, src, count),
                // Lane j of the result is element j of the run, which sits at src − j·w.
                InnerKind::Reverse => {
                    let mask = (0..lanes).flat_map(|j| (0..w).map(move |b| ((lanes - 1 - j) * w + b) as u8));
                    (mask.collect(), lanes, lanes, 16, -16, w - 16)
                }
                // Lane j of the result is element 2j of the 32 bytes loaded; the second load reads one
                // element past the last one used, so one more element must remain.
                InnerKind::Evens => {
                    let mask = (0..lanes).flat_map(|j| (0..w).map(move |b| (2 * j * w + b) as u8));
                    (mask.collect(), lanes + 1, lanes, 16, 32, 0)
                }
                // Byte j < tiles·E of the result is byte j of tile j/E with its elements reversed; the
                // bytes past the whole tiles are junk that the next trip (or the tail) overwrites, so
                // 16 bytes of tiles must remain for both the load and the store.
                InnerKind::Tiles { elems } => {
                    let tile = elems * w;
                    let tiles = 16 / tile;
                    let mask = (0..16).map(|j| match j < tiles * tile {
                        true => ((j / tile) * tile + (elems - 1 - (j % tile) / w) * w + j % w) as u8,
                        false => 0,
                    });
                    (mask.collect(), (16 + tile - 1) / tile, tiles, tiles * tile, tiles * tile, 0)
                }
            };
        let mask = self.b.func.dfg.immediates.push(mask.into());
        // Four vectors per trip while enough remain, then one at a time.
        let mut at = (dst, src, count);
        for vectors in [4, 1] {
            let (header, body, exit) = (self.b.create_block(), self.b.create_block(), self.b.create_block());
            for block in [header, exit] {
                self.b.append_block_param(block, self.ptr);
                self.b.append_block_param(block, self.ptr);
                self.b.append_block_param(block, types::I64);
            }
            let (d, s, n) = at;
            self.b.ins().jump(header, &[BlockArg::Value(d), BlockArg::Value(s), BlockArg::Value(n)]);
            self.b.switch_to_block(header);
            let p = self.b.block_params(header).to_vec();
            let (d, s, n) = (p[0], p[1], p[2]);
            let more =
                self.b.ins().icmp_imm_s(IntCC::SignedGreaterThanOrEqual, n, (vectors - 1) * per_trip + need);
            let args = [BlockArg::Value(d), BlockArg::Value(s), BlockArg::Value(n)];
            self.b.ins().brif(more, body, NO_ARGS, exit, &args);
            self.b.switch_to_block(body);
            for k in 0..vectors {
                let (from, to) = (k * src_step, k * dst_step);
                let v = self.b.ins().load(types::I8X16, vector_flags(), s, (from + load_at) as i32);
                let shuffled = match kind {
                    InnerKind::Evens => {
                        let hi = self.b.ins().load(types::I8X16, vector_flags(), s, (from + 16) as i32);
                        self.b.ins().shuffle(v, hi, mask)
                    }
                    _ => self.b.ins().shuffle(v, v, mask),
                };
                self.b.ins().store(vector_flags(), shuffled, d, to as i32);
            }
            let d2 = self.b.ins().iadd_imm_s(d, vectors * dst_step);
            let s2 = self.b.ins().iadd_imm_s(s, vectors * src_step);
            let n2 = self.b.ins().iadd_imm_s(n, -vectors * per_trip);
            self.b.ins().jump(header, &[BlockArg::Value(d2), BlockArg::Value(s2), BlockArg::Value(n2)]);
            self.b.switch_to_block(exit);
            let p = self.b.block_params(exit).to_vec();
            at = (p[0], p[1], p[2]);
        }
        at
    }

    /// `p + off` as a base and an immediate offset, adding first when `off` needs more than 32
    /// bits.
    fn split_offset(&mut self, p: Value, off: i64) -> (Value, i32) {
        match i32::try_from(off) {
            Ok(off) => (p, off),
            Err(_) => (self.b.ins().iadd_imm_s(p, off), 0),
        }
    }

    /// `count` elements one at a time by pointer increments, four per loop trip.
    fn scalar_loop(&mut self, dst: Value, src: Value, count: Value, stride: i64, out_stride: i64) {
        let ty = self.element_type();
        self.strided_loop(&[dst, src], &[out_stride, stride], count, |g, p, k, _| {
            let (d, s) = (p[0], p[1]);
            let (s, s_off) = g.split_offset(s, k * stride);
            let v = g.b.ins().load(ty, MemFlagsData::trusted(), s, s_off);
            let (d, d_off) = g.split_offset(d, k * out_stride);
            g.b.ins().store(MemFlagsData::trusted(), v, d, d_off);
        });
    }
}
