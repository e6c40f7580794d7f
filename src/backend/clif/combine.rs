//! A combining store's element (`+=`, `*=`): `old ∘ value`, computed where a `set` would copy
//! the value. `old` comes from the target's buffer at the element's offset, never from the
//! output being written, so duplicates in an index array combine with the element as it was
//! (NumPy's buffered semantics). The arithmetic is `Combine::apply`'s, the interpreter's, for
//! the element types [`Arithmetic::of`] admits.

use super::Gen;
use crate::backend::loopnest::{Arithmetic, Combining};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Value, types};

impl Gen<'_, '_> {
    /// The target's first destination: where `old` is read from, at each element's output
    /// offset. Loaded at entry, once.
    pub(super) fn old_base(&mut self, combine: &Combining) -> Value {
        let base = self.base(combine.target);
        let offset = self.int(&combine.base);
        self.b.ins().iadd(base, offset)
    }

    /// `value` combined with the target's element at `out_off` from `old_base`.
    pub(super) fn combined(
        &mut self,
        combine: &Combining,
        old_base: Value,
        out_off: Value,
        value: Value,
    ) -> Value {
        let ty = self.element_type();
        let at = self.b.ins().iadd(old_base, out_off);
        let old = self.b.ins().load(ty, MemFlagsData::trusted(), at, 0);
        match combine.arithmetic {
            // Cranelift's integer arithmetic wraps, as NumPy's does.
            Arithmetic::Int if combine.multiply => self.b.ins().imul(old, value),
            Arithmetic::Int => self.b.ins().iadd(old, value),
            Arithmetic::F32 | Arithmetic::F64 => {
                let float = if combine.arithmetic == Arithmetic::F32 { types::F32 } else { types::F64 };
                let a = self.b.ins().bitcast(float, MemFlagsData::new(), old);
                let b = self.b.ins().bitcast(float, MemFlagsData::new(), value);
                let r = if combine.multiply { self.b.ins().fmul(a, b) } else { self.b.ins().fadd(a, b) };
                self.b.ins().bitcast(ty, MemFlagsData::new(), r)
            }
            // Any nonzero byte is true; the result is 0 or 1.
            Arithmetic::Bool => {
                let a = self.b.ins().icmp_imm_u(IntCC::NotEqual, old, 0);
                let b = self.b.ins().icmp_imm_u(IntCC::NotEqual, value, 0);
                if combine.multiply { self.b.ins().band(a, b) } else { self.b.ins().bor(a, b) }
            }
        }
    }
}
