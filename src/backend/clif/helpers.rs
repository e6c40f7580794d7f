//! The functions a kernel calls by symbol where Cranelift has no instruction for the work
//! (non-temporal stores, prefetches), as an object file defines them for itself: plain loops
//! of [`streaming_signature`]. The JIT provides faster ones (`jit/symbols.rs`).

use super::{CodegenError, NO_ARGS, vector_flags, verify};
use crate::backend::loopnest;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{AbiParam, BlockArg, InstBuilder, MemFlagsData, Signature, Type, Value, types};
use cranelift_codegen::isa::{TargetFrontendConfig, TargetIsa};
use cranelift_frontend::{FunctionBuilder, FunctionBuilderContext};
use cranelift_module::{Linkage, Module};

/// The signature of [`loopnest::COPY_STREAMING`], [`loopnest::FILL_STREAMING`] and
/// [`loopnest::spread_ahead_symbol`]'s: `(dst, src or pattern, bytes or elements)`, nothing
/// returned.
pub(super) fn streaming_signature(isa: &dyn TargetIsa) -> Signature {
    let mut sig = Signature::new(isa.default_call_conv());
    let ptr = AbiParam::new(isa.pointer_type());
    sig.params.extend([ptr, ptr, AbiParam::new(types::I64)]);
    sig
}

/// Defines [`loopnest::COPY_STREAMING`] in `module` as a plain copy (memcpy), local to it: an
/// object file has no JIT to provide it, and Cranelift has no non-temporal store.
pub fn define_copy_streaming<M: Module>(module: &mut M) -> Result<(), CodegenError> {
    define_streaming_helper(module, loopnest::COPY_STREAMING, |b, config, [dst, src, bytes]| {
        b.call_memcpy(config, dst, src, bytes);
        b.ins().return_(&[]);
    })
}

/// Defines `name`, a local function of [`streaming_signature`], in `module`: `body` emits it
/// from its entry block, given its three parameters, returns included.
fn define_streaming_helper<M: Module>(
    module: &mut M,
    name: &str,
    body: impl FnOnce(&mut FunctionBuilder, TargetFrontendConfig, [Value; 3]),
) -> Result<(), CodegenError> {
    let sig = streaming_signature(module.isa());
    let id = module.declare_function(name, Linkage::Local, &sig)?;
    let mut ctx = module.make_context();
    ctx.func.signature = sig;
    let mut fctx = FunctionBuilderContext::new();
    let mut b = FunctionBuilder::new(&mut ctx.func, &mut fctx);
    let entry = b.create_block();
    b.append_block_params_for_function_params(entry);
    b.switch_to_block(entry);
    let p = b.block_params(entry).to_vec();
    body(&mut b, module.target_config(), [p[0], p[1], p[2]]);
    b.seal_all_blocks();
    b.finalize(module.target_config());
    verify(&ctx.func, module.isa())?;
    module.define_function(id, &mut ctx)?;
    module.clear_context(&mut ctx);
    Ok(())
}

/// Defines [`loopnest::FILL_STREAMING`] in `module` as a plain fill (16-byte stores, then the
/// last bytes one at a time), local to it: an object file has no JIT to provide it, and
/// Cranelift has no non-temporal store.
pub fn define_fill_streaming<M: Module>(module: &mut M) -> Result<(), CodegenError> {
    define_streaming_helper(module, loopnest::FILL_STREAMING, |b, _, [dst, pattern, bytes]| {
        let flags = MemFlagsData::trusted();
        let v = b.ins().load(types::I8X16, vector_flags(), pattern, 0);
        let (vectors, vector, bytewise, byte, done) =
            (b.create_block(), b.create_block(), b.create_block(), b.create_block(), b.create_block());
        b.append_block_param(vectors, types::I64);
        b.append_block_param(bytewise, types::I64);
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().jump(vectors, &[BlockArg::Value(zero)]);
        // Offsets `at` by 16 while 16 bytes remain, then by 1 (the pattern's byte `at % 16`).
        b.switch_to_block(vectors);
        let at = b.block_params(vectors)[0];
        let end = b.ins().iadd_imm_s(at, 16);
        let fits = b.ins().icmp(IntCC::SignedLessThanOrEqual, end, bytes);
        b.ins().brif(fits, vector, NO_ARGS, bytewise, &[BlockArg::Value(at)]);
        b.switch_to_block(vector);
        let d = b.ins().iadd(dst, at);
        b.ins().store(vector_flags(), v, d, 0);
        b.ins().jump(vectors, &[BlockArg::Value(end)]);
        b.switch_to_block(bytewise);
        let at = b.block_params(bytewise)[0];
        let more = b.ins().icmp(IntCC::SignedLessThan, at, bytes);
        b.ins().brif(more, byte, NO_ARGS, done, NO_ARGS);
        b.switch_to_block(byte);
        let k = b.ins().band_imm_s(at, 15);
        let from = b.ins().iadd(pattern, k);
        let x = b.ins().load(types::I8, flags, from, 0);
        let d = b.ins().iadd(dst, at);
        b.ins().store(flags, x, d, 0);
        let next = b.ins().iadd_imm_s(at, 1);
        b.ins().jump(bytewise, &[BlockArg::Value(next)]);
        b.switch_to_block(done);
        b.ins().return_(&[]);
    })
}

/// Defines the `width`-byte elements' [`loopnest::spread_ahead_symbol`] in `module` as a plain
/// loop, one element a trip, local to it: an object file has no JIT to provide it, and
/// Cranelift has no prefetch.
pub fn define_spread_ahead<M: Module>(module: &mut M, width: u8) -> Result<(), CodegenError> {
    let name = loopnest::spread_ahead_symbol(width);
    define_streaming_helper(module, name, |b, _, [dst, src, count]| {
        let flags = MemFlagsData::trusted();
        let ty = Type::int(u16::from(width) * 8).expect("an element of 1, 2, 4 or 8 bytes");
        let (header, body, done) = (b.create_block(), b.create_block(), b.create_block());
        b.append_block_param(header, types::I64);
        let zero = b.ins().iconst(types::I64, 0);
        b.ins().jump(header, &[BlockArg::Value(zero)]);
        // Element `k` of `src` into element `2k` of `dst`.
        b.switch_to_block(header);
        let k = b.block_params(header)[0];
        let more = b.ins().icmp(IntCC::SignedLessThan, k, count);
        b.ins().brif(more, body, NO_ARGS, done, NO_ARGS);
        b.switch_to_block(body);
        let from = b.ins().imul_imm_s(k, i64::from(width));
        let from = b.ins().iadd(src, from);
        let x = b.ins().load(ty, flags, from, 0);
        let to = b.ins().imul_imm_s(k, 2 * i64::from(width));
        let to = b.ins().iadd(dst, to);
        b.ins().store(flags, x, to, 0);
        let next = b.ins().iadd_imm_s(k, 1);
        b.ins().jump(header, &[BlockArg::Value(next)]);
        b.switch_to_block(done);
        b.ins().return_(&[]);
    })
}
