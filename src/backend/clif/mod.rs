//! LoopNest → Cranelift IR, into any `cranelift_module::Module`: the JIT and AOT object files
//! share this code generator, down to the entry function ([`define_entry`]).
//!
//! A concrete nest's kernel has this signature:
//!
//! ```c
//! int32_t kernel(const uint8_t *const *buffers, uint8_t *out, int64_t begin, int64_t end);
//! ```
//!
//! and a generic nest's (one with symbolic integers: [`LoopNest::takes_params`]) one more
//! argument, its parameter block ([`generic_signature`]):
//!
//! ```c
//! int32_t kernel(const uint8_t *const *buffers, uint8_t *out, int64_t begin, int64_t end,
//!                const int64_t *params);
//! ```
//!
//! `params[i]` is the value of `nest.params[i]` for the call's shapes; the code loads a slot
//! wherever a concrete kernel has an immediate (once, at entry). A generic kernel runs nothing
//! (and returns OK) when one of its extents is 0, since the verifier's proofs assume a non-empty
//! output.
//!
//! `buffers` holds the plan's inputs then its constants; `[begin, end)` is the range of the
//! outermost loop to run, so callers can split the work across threads. The result is a status:
//! [`STATUS_OK`], or [`STATUS_INDEX_OUT_OF_RANGE`] when an `error`-mode index misses (the
//! plan's checks normally catch those first). Addresses are not checked here: the plan verifier
//! has proven them in range, and every gathered index is normalized into `[0, len)` before use.
//!
//! The loop nest has chosen a [`Strategy`] for every loop; `Gen::emit` translates each, one
//! file per concern: index arithmetic (`index.rs`), copies (`copy.rs`), a combining store's
//! arithmetic (`combine.rs`), vector shuffles (`vector.rs`), transposed reads in tiles
//! (`transpose.rs`), gathers (`gather.rs`), the loops they share (`loops.rs`), and the
//! functions an object defines for the symbols kernels call (`helpers.rs`).

mod combine;
mod copy;
mod entry;
mod fill;
mod gather;
mod helpers;
mod index;
mod loops;
mod masked;
pub mod shape_fn;
mod transpose;
mod vector;

pub use entry::{Entry, EntryError, StoreEntry, binds, define_entry};
use helpers::streaming_signature;
pub use helpers::{define_copy_streaming, define_fill_streaming, define_spread_ahead};

use super::loopnest::{self, LoopNest, Strategy};
use crate::types::sym::SymExpr;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{
    AbiParam, BlockArg, ExtFuncData, ExternalName, FuncRef, Function, InstBuilder, MemFlagsData, Signature,
    Type, Value, types,
};
use cranelift_codegen::isa::{TargetFrontendConfig, TargetIsa};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{FuncId, Linkage, Module, ModuleError};
use index::{StreamState, TermState};
use std::collections::HashMap;

pub const STATUS_OK: i32 = 0;
pub const STATUS_INDEX_OUT_OF_RANGE: i32 = 1;
/// Clamp or wrap on an axis with no elements.
pub const STATUS_EMPTY_AXIS: i32 = 2;
/// An entry's `begin`/`end` outside `0 <= begin <= end <= OUTER`: nothing ran.
pub const STATUS_BAD_RANGE: i32 = 3;
/// An entry's shape function (generic ABI) failed for the call's dims or run-time scalars (two axes
/// with one name differ, a constant dim differs, a requirement fails, an integer overflows):
/// nothing ran.
pub const STATUS_SHAPE_MISMATCH: i32 = 4;
/// A store entry that copies its target ([`StoreEntry::Whole`]) was given the target itself
/// as the output, and its update reads the target (`a[1:] = a[:-1]`) or may fail after its
/// first write: nothing ran.
pub const STATUS_STORE_READS_TARGET: i32 = 5;

const NO_ARGS: &[BlockArg] = &[];

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

/// The signature of a generic nest's kernel: [`signature`] and a pointer to the parameter block.
pub fn generic_signature(isa: &dyn TargetIsa) -> Signature {
    let mut sig = signature(isa);
    sig.params.push(AbiParam::new(isa.pointer_type()));
    sig
}

/// The signature of `nest`'s kernel.
pub fn kernel_signature(isa: &dyn TargetIsa, nest: &LoopNest) -> Signature {
    if nest.takes_params() { generic_signature(isa) } else { signature(isa) }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodegenError {
    #[error("the generated function is invalid:\n{0}")]
    Verifier(String),
    #[error("{0}")]
    Module(String),
}

impl From<ModuleError> for CodegenError {
    fn from(e: ModuleError) -> CodegenError {
        CodegenError::Module(e.to_string())
    }
}

/// What the code generator can do on `isa`, for the scheduler: whether it shuffles bytes of a
/// 128-bit vector by a constant mask in one instruction (x86 SSSE3 `pshufb`, AArch64 `tbl`).
pub fn target(isa: &dyn TargetIsa) -> loopnest::Target {
    let byte_shuffles = match isa.name() {
        "aarch64" => true,
        "x64" => isa.isa_flags().iter().any(|f| f.name == "has_ssse3" && f.as_bool() == Some(true)),
        _ => false,
    };
    loopnest::Target { byte_shuffles }
}

/// Defines `name` in `module` as the kernel for `nest` (with [`kernel_signature`]), after
/// `verify_function` accepts it.
pub fn define_kernel<M: Module>(
    module: &mut M,
    name: &str,
    linkage: Linkage,
    nest: &LoopNest,
) -> Result<FuncId, CodegenError> {
    let id = module.declare_function(name, linkage, &kernel_signature(module.isa(), nest))?;
    let mut ctx = module.make_context();
    let mut import = |name: &str, wanted: bool| -> Result<Option<FuncRef>, CodegenError> {
        if !wanted {
            return Ok(None);
        }
        let sig = streaming_signature(module.isa());
        let f = module.declare_function(name, Linkage::Import, &sig)?;
        Ok(Some(module.declare_func_in_func(f, &mut ctx.func)))
    };
    let imports = Imports {
        copy_streaming: import(loopnest::COPY_STREAMING, nest.streams())?,
        fill_streaming: import(loopnest::FILL_STREAMING, nest.fills_streaming())?,
        spread_ahead: import(loopnest::spread_ahead_symbol(nest.width), nest.spreads_ahead())?,
    };
    build_function(module.isa(), &mut ctx.func, nest, imports);
    verify(&ctx.func, module.isa())?;
    module.define_function(id, &mut ctx)?;
    module.clear_context(&mut ctx);
    Ok(id)
}

/// Cranelift's verifier on a generated function, its errors printed with the function.
fn verify(func: &Function, isa: &dyn TargetIsa) -> Result<(), CodegenError> {
    cranelift_codegen::verify_function(func, isa).map_err(|e| {
        CodegenError::Verifier(cranelift_codegen::print_errors::pretty_verifier_error(func, None, e))
    })
}

/// The Cranelift IR [`define_kernel`] compiles for `nest` on `isa` (`slc plan --clif`).
pub fn kernel_ir(isa: &dyn TargetIsa, nest: &LoopNest) -> String {
    let mut func = Function::new();
    let mut import = |name: &str, wanted: bool| {
        wanted.then(|| {
            let signature = func.import_signature(streaming_signature(isa));
            let name = ExternalName::testcase(name);
            func.import_function(ExtFuncData { name, signature, colocated: false, patchable: false })
        })
    };
    let imports = Imports {
        copy_streaming: import(loopnest::COPY_STREAMING, nest.streams()),
        fill_streaming: import(loopnest::FILL_STREAMING, nest.fills_streaming()),
        spread_ahead: import(loopnest::spread_ahead_symbol(nest.width), nest.spreads_ahead()),
    };
    build_function(isa, &mut func, nest, imports);
    func.display().to_string()
}

/// The functions a kernel calls that the JIT provides (an AOT object defines its own).
struct Imports {
    copy_streaming: Option<FuncRef>,
    fill_streaming: Option<FuncRef>,
    spread_ahead: Option<FuncRef>,
}

fn build_function(isa: &dyn TargetIsa, func: &mut Function, nest: &LoopNest, imports: Imports) {
    func.signature = kernel_signature(isa, nest);
    let mut fctx = FunctionBuilderContext::new();
    let b = FunctionBuilder::new(func, &mut fctx);
    let mut g = Gen::new(b, nest, isa.frontend_config());
    g.copy_streaming = imports.copy_streaming;
    g.fill_streaming = imports.fill_streaming;
    g.spread_ahead = imports.spread_ahead;
    g.emit_function();
}

/// The translator of one loop nest into one function.
struct Gen<'a, 'n> {
    b: FunctionBuilder<'a>,
    nest: &'n LoopNest,
    config: TargetFrontendConfig,
    ptr: Type,
    buffers: Value,
    /// Base pointers of the buffers, loaded once at entry.
    bases: Vec<Option<Value>>,
    /// The value of each symbolic integer of the nest, loaded from the parameter block at entry.
    params: HashMap<SymExpr, Value>,
    fail_index: cranelift_codegen::ir::Block,
    fail_empty: cranelift_codegen::ir::Block,
    /// [`loopnest::COPY_STREAMING`], imported where the nest calls it.
    copy_streaming: Option<FuncRef>,
    /// [`loopnest::FILL_STREAMING`], imported where the nest calls it.
    fill_streaming: Option<FuncRef>,
    /// The nest's [`loopnest::spread_ahead_symbol`], imported where the nest calls it.
    spread_ahead: Option<FuncRef>,
    /// A combining store's target at its first destination ([`Gen::old_base`]).
    old_base: Option<Value>,
    /// A masked store's value ([`LoopNest::masked_value`]), loaded once, and its address (a
    /// row of a `MaskedRow` combines with it there: nothing the kernel writes).
    masked_value: Option<(Value, Value)>,
}

impl<'a, 'n> Gen<'a, 'n> {
    fn new(mut b: FunctionBuilder<'a>, nest: &'n LoopNest, config: TargetFrontendConfig) -> Gen<'a, 'n> {
        let entry = b.create_block();
        b.append_block_params_for_function_params(entry);
        b.switch_to_block(entry);
        let buffers = b.block_params(entry)[0];
        let fail_index = b.create_block();
        let fail_empty = b.create_block();
        let ptr = config.pointer_type();
        let mut params = HashMap::new();
        if nest.takes_params() {
            let block = b.block_params(entry)[4];
            for (slot, p) in nest.params.iter().enumerate() {
                let v = b.ins().load(types::I64, MemFlagsData::trusted(), block, (slot * 8) as i32);
                params.insert(p.clone(), v);
            }
        }
        Gen {
            b,
            nest,
            config,
            ptr,
            buffers,
            bases: vec![],
            params,
            fail_index,
            fail_empty,
            copy_streaming: None,
            fill_streaming: None,
            spread_ahead: None,
            old_base: None,
            masked_value: None,
        }
    }

    fn emit_function(mut self) {
        let entry = self.b.current_block().expect("in the entry block");
        let params = self.b.block_params(entry).to_vec();
        let (out, begin, end) = (params[1], params[2], params[3]);
        if let Some(combine) = &self.nest.combine {
            // A reduction reads the element it writes: `old` is at the output's own offset.
            self.old_base = Some(if combine.accumulate { out } else { self.old_base(combine) });
        }
        // A concrete kernel has no early exit (its code stays as it was).
        let nothing = self.nest.takes_params().then(|| self.b.create_block());
        if let Some(nothing) = nothing {
            // The proofs that every address is in bounds hold for non-empty outputs only.
            let nest = self.nest;
            for e in &nest.extents {
                if e.as_const().is_none() {
                    let v = self.int(e);
                    let next = self.b.create_block();
                    self.b.ins().brif(v, next, NO_ARGS, nothing, NO_ARGS);
                    self.b.switch_to_block(next);
                }
            }
        }
        if !self.nest.empty {
            if let Some(value) = &self.nest.masked_value {
                // Read before any element is written (an out-of-place store reads the target,
                // never the output; an in-place one reads no byte of the target).
                let state = self.initial_state(value);
                let (at, _) = self.address(value, &state);
                let ty = self.element_type();
                self.masked_value = Some((self.b.ins().load(ty, MemFlagsData::trusted(), at, 0), at));
            }
            let zero = self.b.ins().iconst(types::I64, 0);
            let data = self.initial_state(&self.nest.data.clone());
            let dest = self.initial_terms(&self.nest.out_terms.clone());
            if self.nest.extents.is_empty() {
                // One element: run it if the range is not empty.
                let run = self.b.create_block();
                let done = self.b.create_block();
                let c = self.b.ins().icmp(IntCC::SignedLessThan, begin, end);
                self.b.ins().brif(c, run, NO_ARGS, done, NO_ARGS);
                self.b.switch_to_block(run);
                self.emit(0, out, zero, data, dest, Some((begin, end)));
                self.b.ins().jump(done, NO_ARGS);
                self.b.switch_to_block(done);
            } else {
                self.emit(0, out, zero, data, dest, Some((begin, end)));
            }
        }
        let ok = self.b.ins().iconst(types::I32, STATUS_OK as i64);
        self.b.ins().return_(&[ok]);
        let exits = [(self.fail_index, STATUS_INDEX_OUT_OF_RANGE), (self.fail_empty, STATUS_EMPTY_AXIS)];
        for (block, status) in nothing.map(|b| (b, STATUS_OK)).into_iter().chain(exits) {
            self.b.switch_to_block(block);
            let s = self.b.ins().iconst(types::I32, status as i64);
            self.b.ins().return_(&[s]);
        }
        self.b.seal_all_blocks();
        let config = self.config;
        self.b.finalize(config);
    }

    /// Emits loop `depth` and everything inside it, as its strategy says. `range` overrides the
    /// loop bounds (the caller's outer range). Past the last loop: one element. `dest` holds
    /// the state of the nest's gathered destination terms; each is added to `out_off` at the
    /// depth it stops moving, which the passes keep outside every loop but serial ones.
    fn emit(
        &mut self,
        depth: usize,
        out: Value,
        mut out_off: Value,
        mut data: StreamState,
        mut dest: Vec<TermState>,
        range: Option<(Value, Value)>,
    ) {
        let nest = self.nest;
        self.evaluate_terms(&nest.data, &mut data, depth);
        for (t, ts) in nest.out_terms.iter().zip(&mut dest) {
            if ts.value.is_none() && t.hoist_level() <= depth {
                // `takes_store` admits no zero-mode destination: nothing can miss.
                let (contribution, _) = self.evaluate_term(t, &mut ts.index, depth);
                ts.value = Some((contribution, None));
                out_off = self.b.ins().iadd(out_off, contribution);
            }
        }
        let Some(&strategy) = nest.strategies.get(depth) else {
            return self.copy_element(out, out_off, &data);
        };
        match strategy {
            Strategy::Serial => self.emit_serial(depth, out, out_off, data, dest, range),
            Strategy::Block(copy) => self.emit_block(depth, copy, out, out_off, &data, range),
            Strategy::Strided(shuffle) => self.emit_strided(depth, shuffle, out, out_off, &data, range),
            Strategy::SpreadAhead => self.emit_spread_ahead(depth, out, out_off, &data, range),
            Strategy::TransposeTiles => self.emit_transpose_tiles(depth, out, out_off, &data, range),
            Strategy::GuardedGather(ahead) => {
                self.emit_guarded_gather(depth, ahead, out, out_off, &data, range)
            }
            Strategy::BlockRows { by_size } => {
                self.emit_block_rows(depth, by_size, out, out_off, &data, range)
            }
            Strategy::IndexTable(ahead) => self.emit_index_table(depth, ahead, out, out_off, &data, range),
            Strategy::ReversedTiles { .. } => self.emit_reversed_tiles(depth, out, out_off, &data, range),
            Strategy::MaskedRun => self.emit_masked_run(depth, out, out_off, &data, range),
            Strategy::MaskedRow { streaming } => {
                self.emit_masked_row(depth, streaming, out, out_off, &data, range)
            }
            Strategy::Fill { streaming } => self.emit_fill(depth, streaming, out, out_off, &data, range),
            Strategy::Joined => unreachable!("the loop outside loop {depth} emits it"),
        }
    }

    /// A counted loop over `depth`, the loops inside emitted in its body.
    fn emit_serial(
        &mut self,
        depth: usize,
        out: Value,
        out_off: Value,
        data: StreamState,
        dest: Vec<TermState>,
        range: Option<(Value, Value)>,
    ) {
        let (lo, hi) = self.bounds(depth, range);
        self.counted_loop(lo, hi, |g, i| {
            let nest = g.nest;
            let step = g.mul_int(i, &nest.out[depth]);
            let inner_out = g.b.ins().iadd(out_off, step);
            let inner_data = g.advance(&nest.data, &data, depth, i);
            let inner_dest = g.advance_terms(&nest.out_terms, &dest, depth, i);
            g.emit(depth + 1, out, inner_out, inner_data, inner_dest, None);
        });
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

    /// The bounds of loop `depth`: the caller's range, or the whole extent.
    fn bounds(&mut self, depth: usize, range: Option<(Value, Value)>) -> (Value, Value) {
        match range {
            Some(r) => r,
            None => (self.b.ins().iconst(types::I64, 0), self.int(&self.nest.extents[depth])),
        }
    }

    /// The value of an integer of the nest: an immediate for a constant, else its parameter.
    fn int(&mut self, e: &SymExpr) -> Value {
        match e.as_const() {
            Some(c) => self.b.ins().iconst(types::I64, c),
            None => self.param(e),
        }
    }

    /// The parameter of a symbolic integer of the nest (every one has a slot:
    /// `LoopNest::params` lists them all).
    fn param(&self, e: &SymExpr) -> Value {
        *self.params.get(e).unwrap_or_else(|| panic!("`{e}` has no parameter slot"))
    }

    /// `v * e`.
    fn mul_int(&mut self, v: Value, e: &SymExpr) -> Value {
        match e.as_const() {
            Some(c) => self.b.ins().imul_imm_s(v, c),
            None => {
                let p = self.param(e);
                self.b.ins().imul(v, p)
            }
        }
    }

    /// `v + e`.
    fn add_int(&mut self, v: Value, e: &SymExpr) -> Value {
        match e.as_const() {
            Some(c) => self.b.ins().iadd_imm_s(v, c),
            None => {
                let p = self.param(e);
                self.b.ins().iadd(v, p)
            }
        }
    }

    /// `v cc e`.
    fn cmp_int(&mut self, cc: IntCC, v: Value, e: &SymExpr) -> Value {
        match e.as_const() {
            Some(c) => self.b.ins().icmp_imm_s(cc, v, c),
            None => {
                let p = self.param(e);
                self.b.ins().icmp(cc, v, p)
            }
        }
    }

    /// A constant the nest's strategy guarantees (passes choose the strategies that size code
    /// by an integer only when it is a constant).
    fn known(&self, e: &SymExpr) -> i64 {
        e.as_const().unwrap_or_else(|| panic!("the strategy needs a constant, not `{e}`"))
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

    /// `p + off` as a base and an immediate offset, adding first when `off` needs more than 32
    /// bits.
    fn split_offset(&mut self, p: Value, off: i64) -> (Value, i32) {
        match i32::try_from(off) {
            Ok(off) => (p, off),
            Err(_) => (self.b.ins().iadd_imm_s(p, off), 0),
        }
    }

    /// The integer type of the nest's elements (moved as bits).
    fn element_type(&self) -> Type {
        Type::int_with_byte_size(self.nest.width as u16).expect("1, 2, 4 or 8 bytes")
    }
}

/// Unaligned, non-trapping (proven in bounds) vector accesses.
fn vector_flags() -> MemFlagsData {
    MemFlagsData::new().with_notrap()
}
