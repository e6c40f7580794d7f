//! A combining store's element (`+=`, `*=`, a scatter's reduction): `old ∘ value`, computed
//! where a `set` would copy the value. For `+=` and `*=`, `old` comes from the target's buffer
//! at the element's offset, never from the output being written, so duplicates in an index
//! array combine with the element as it was (NumPy's buffered semantics); a reduction's `old`
//! is the output's element as updated so far. The arithmetic is `Combine::apply`'s, the
//! interpreter's, for the element types [`Arithmetic::of`] admits. An innermost run (the
//! `Strided` strategy) is combined 16 bytes at a time where output and value are contiguous (or
//! the value is one element for the whole run), then element by element; `max` and `min`
//! element by element.

use super::{Gen, vector_flags};
use crate::backend::loopnest::{Arithmetic, CombineOp, Combining, is_const};
use crate::types::sym::SymExpr;
use cranelift_codegen::ir::condcodes::{FloatCC, IntCC};
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types};

impl Gen<'_, '_> {
    /// The target's first destination: where `old` is read from, at each element's output
    /// offset. Loaded at entry, once.
    pub(super) fn old_base(&mut self, combine: &Combining) -> Value {
        let base = self.base(combine.target);
        let offset = self.int(&combine.base);
        self.b.ins().iadd(base, offset)
    }

    /// `value` (an element's bits) combined with the target's element at `at + offset`.
    pub(super) fn combined(&mut self, combine: &Combining, at: Value, offset: i32, value: Value) -> Value {
        let ty = self.element_type();
        let old = self.b.ins().load(ty, MemFlagsData::trusted(), at, offset);
        self.combine_values(combine, old, value)
    }

    /// `old ∘ value`: two elements' bits (the nest's integer type; floats are reinterpreted
    /// and back), or two vectors of the element type ([`Gen::combine_vector_type`]).
    pub(super) fn combine_values(&mut self, combine: &Combining, old: Value, value: Value) -> Value {
        let ty = self.b.func.dfg.value_type(old);
        let op = combine.op;
        if matches!(op, CombineOp::Max | CombineOp::Min) {
            return self.extreme(combine, old, value);
        }
        let multiply = op == CombineOp::Mul;
        match combine.arithmetic {
            // Cranelift's integer arithmetic wraps, as NumPy's does.
            Arithmetic::Int => match op {
                CombineOp::Mul => self.b.ins().imul(old, value),
                CombineOp::Sub => self.b.ins().isub(old, value),
                _ => self.b.ins().iadd(old, value),
            },
            Arithmetic::F32 | Arithmetic::F64 if ty.is_int() => {
                let float = if combine.arithmetic == Arithmetic::F32 { types::F32 } else { types::F64 };
                let a = self.b.ins().bitcast(float, MemFlagsData::new(), old);
                let b = self.b.ins().bitcast(float, MemFlagsData::new(), value);
                let r = self.float_op(op, a, b);
                self.b.ins().bitcast(ty, MemFlagsData::new(), r)
            }
            Arithmetic::F32 | Arithmetic::F64 => self.float_op(op, old, value),
            // Any nonzero byte is true; the result is 0 or 1.
            Arithmetic::Bool if ty.is_vector() => {
                let zero = self.b.ins().iconst(types::I8, 0);
                let zero = self.b.ins().splat(ty, zero);
                let a = self.b.ins().icmp(IntCC::NotEqual, old, zero);
                let b = self.b.ins().icmp(IntCC::NotEqual, value, zero);
                let r = if multiply { self.b.ins().band(a, b) } else { self.b.ins().bor(a, b) };
                let one = self.b.ins().iconst(types::I8, 1);
                let one = self.b.ins().splat(ty, one);
                self.b.ins().band(r, one)
            }
            Arithmetic::Bool => {
                let a = self.b.ins().icmp_imm_u(IntCC::NotEqual, old, 0);
                let b = self.b.ins().icmp_imm_u(IntCC::NotEqual, value, 0);
                if multiply { self.b.ins().band(a, b) } else { self.b.ins().bor(a, b) }
            }
        }
    }

    fn float_op(&mut self, op: CombineOp, a: Value, b: Value) -> Value {
        match op {
            CombineOp::Mul => self.b.ins().fmul(a, b),
            CombineOp::Sub => self.b.ins().fsub(a, b),
            _ => self.b.ins().fadd(a, b),
        }
    }

    /// `max` or `min` of two scalar elements' bits, as the interpreter's `extreme` decides:
    /// the value where it is larger (smaller), or a NaN where the element is not; else the
    /// element, its bits unchanged (ties, a NaN already there).
    fn extreme(&mut self, combine: &Combining, old: Value, value: Value) -> Value {
        let ty = self.b.func.dfg.value_type(old);
        let max = combine.op == CombineOp::Max;
        let pick = match combine.arithmetic {
            Arithmetic::Int => {
                let cc = match (max, combine.signed) {
                    (true, true) => IntCC::SignedGreaterThan,
                    (true, false) => IntCC::UnsignedGreaterThan,
                    (false, true) => IntCC::SignedLessThan,
                    (false, false) => IntCC::UnsignedLessThan,
                };
                self.b.ins().icmp(cc, value, old)
            }
            Arithmetic::Bool => {
                let a = self.b.ins().icmp_imm_u(IntCC::NotEqual, old, 0);
                let b = self.b.ins().icmp_imm_u(IntCC::NotEqual, value, 0);
                let cc = if max { IntCC::UnsignedGreaterThan } else { IntCC::UnsignedLessThan };
                self.b.ins().icmp(cc, b, a)
            }
            Arithmetic::F32 | Arithmetic::F64 => {
                let float = if combine.arithmetic == Arithmetic::F32 { types::F32 } else { types::F64 };
                let a = self.b.ins().bitcast(float, MemFlagsData::new(), old);
                let b = self.b.ins().bitcast(float, MemFlagsData::new(), value);
                let old_number = self.b.ins().fcmp(FloatCC::Ordered, a, a);
                let value_nan = self.b.ins().fcmp(FloatCC::Unordered, b, b);
                let cc = if max { FloatCC::GreaterThan } else { FloatCC::LessThan };
                let beyond = self.b.ins().fcmp(cc, b, a);
                let replaces = self.b.ins().bor(value_nan, beyond);
                self.b.ins().band(old_number, replaces)
            }
        };
        debug_assert!(ty.is_int(), "max and min move elements as bits");
        self.b.ins().select(pick, value, old)
    }

    /// The 16-byte vector type `combine` computes in, where every target has the instruction:
    /// `*=` on 8-bit lanes has none on x86, and on 32- and 64-bit integer lanes needs more
    /// than SSE2 (an AOT object's baseline), so those multiply element by element.
    pub(super) fn combine_vector_type(&self, combine: &Combining) -> Option<Type> {
        let w = self.nest.width as u32;
        let lane = match combine.arithmetic {
            // `max` and `min` pick between elements one at a time.
            _ if matches!(combine.op, CombineOp::Max | CombineOp::Min) => return None,
            Arithmetic::Int if combine.op == CombineOp::Mul && w != 2 => return None,
            Arithmetic::Int | Arithmetic::Bool => self.element_type(),
            Arithmetic::F32 => types::F32,
            Arithmetic::F64 => types::F64,
        };
        lane.by(16 / w)
    }

    /// `count` elements of a run combined: at `dst` (output) and `old` (target), by
    /// `out_stride` bytes, with the values at `src` by `stride` bytes. 16 bytes at a time where
    /// both strides allow it, then one element at a time.
    pub(super) fn combine_run(
        &mut self,
        combine: &Combining,
        (dst, src, old): (Value, Value, Value),
        count: Value,
        stride: &SymExpr,
        out_stride: &SymExpr,
    ) {
        let w = self.nest.width as i64;
        let (mut dst, mut src, mut old, mut count) = (dst, src, old, count);
        let contiguous = is_const(out_stride, w) && (is_const(stride, w) || is_const(stride, 0));
        if let Some(vector) = self.combine_vector_type(combine).filter(|_| contiguous) {
            let lanes = (16 / w).trailing_zeros() as i64;
            let trips = self.b.ins().sshr_imm_u(count, lanes);
            let broadcast = is_const(stride, 0);
            let value_step = SymExpr::constant(if broadcast { 0 } else { 16 });
            let sixteen = SymExpr::constant(16);
            let steps = [sixteen.clone(), value_step, sixteen];
            self.strided_loop(&[dst, src, old], &steps, trips, |g, p, k, _| {
                let value = match broadcast {
                    true => {
                        let one = g.b.ins().load(vector.lane_type(), MemFlagsData::trusted(), p[1], 0);
                        g.b.ins().splat(vector, one)
                    }
                    false => g.b.ins().load(vector, vector_flags(), p[1], (k * 16) as i32),
                };
                let before = g.b.ins().load(vector, vector_flags(), p[2], (k * 16) as i32);
                let r = g.combine_values(combine, before, value);
                g.b.ins().store(vector_flags(), r, p[0], (k * 16) as i32);
            });
            let done = self.b.ins().ishl_imm_u(trips, lanes);
            let bytes = self.b.ins().imul_imm_s(done, w);
            dst = self.b.ins().iadd(dst, bytes);
            old = self.b.ins().iadd(old, bytes);
            if !broadcast {
                src = self.b.ins().iadd(src, bytes);
            }
            count = self.b.ins().isub(count, done);
        }
        let ty = self.element_type();
        let strides = [out_stride.clone(), stride.clone(), out_stride.clone()];
        self.strided_loop(&[dst, src, old], &strides, count, |g, p, k, _| {
            let (s, s_off) = g.at(p[1], k, stride);
            let (s, s_off) = g.split_offset(s, s_off);
            let value = g.b.ins().load(ty, MemFlagsData::trusted(), s, s_off);
            let (o, o_off) = g.at(p[2], k, out_stride);
            let (o, o_off) = g.split_offset(o, o_off);
            let r = g.combined(combine, o, o_off, value);
            let (d, d_off) = g.at(p[0], k, out_stride);
            let (d, d_off) = g.split_offset(d, d_off);
            g.b.ins().store(MemFlagsData::trusted(), r, d, d_off);
        });
    }
}
