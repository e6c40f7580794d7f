//! Index arithmetic: where each stream points at the current loop depth, and the normalized
//! byte contributions of its gathered terms.

use super::{Gen, NO_ARGS};
use crate::backend::loopnest::{Stream, Term, is_const};
use crate::types::OobMode;
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{InstBuilder, MemFlagsData, Type, Value, types};
use cranelift_frontend::FunctionBuilder;
use slc_runtime::DType;

/// The state of one stream at the current loop depth: its byte offset so far, and for each
/// term, its index stream's state and (once evaluated) its contribution.
#[derive(Clone)]
pub(super) struct StreamState {
    pub(super) offset: Value,
    pub(super) terms: Vec<TermState>,
}

#[derive(Clone)]
pub(super) struct TermState {
    pub(super) index: StreamState,
    /// (byte contribution, "zero-mode miss" flag) once evaluated.
    pub(super) value: Option<(Value, Option<Value>)>,
}

impl Gen<'_, '_> {
    pub(super) fn initial_state(&mut self, s: &Stream) -> StreamState {
        let offset = self.int(&s.base);
        let terms = self.initial_terms(&s.terms);
        // Load every base pointer now, in the entry block.
        self.base(s.buffer);
        StreamState { offset, terms }
    }

    /// The states of `terms` before any loop, none evaluated.
    pub(super) fn initial_terms(&mut self, terms: &[Term]) -> Vec<TermState> {
        terms.iter().map(|t| TermState { index: self.initial_state(&t.index), value: None }).collect()
    }

    /// Moves a stream (and its not yet evaluated index streams) to iteration `i` of loop `d`.
    pub(super) fn advance(&mut self, s: &Stream, st: &StreamState, d: usize, i: Value) -> StreamState {
        let stride = &s.strides[d];
        let offset = if is_const(stride, 0) {
            st.offset
        } else {
            let step = self.mul_int(i, stride);
            self.b.ins().iadd(st.offset, step)
        };
        let terms = self.advance_terms(&s.terms, &st.terms, d, i);
        StreamState { offset, terms }
    }

    /// Moves the not yet evaluated `terms` (in states `states`) to iteration `i` of loop `d`.
    pub(super) fn advance_terms(
        &mut self,
        terms: &[Term],
        states: &[TermState],
        d: usize,
        i: Value,
    ) -> Vec<TermState> {
        (terms.iter().zip(states))
            .map(|(t, ts)| match ts.value {
                Some(_) => ts.clone(),
                None => TermState { index: self.advance(&t.index, &ts.index, d, i), value: None },
            })
            .collect()
    }

    /// Evaluates the terms of `s` that no loop at depth >= `depth` moves.
    pub(super) fn evaluate_terms(&mut self, s: &Stream, st: &mut StreamState, depth: usize) {
        for (t, ts) in s.terms.iter().zip(st.terms.iter_mut()) {
            if ts.value.is_none() && t.hoist_level() <= depth {
                ts.value = Some(self.evaluate_term(t, &mut ts.index, depth));
            }
        }
    }

    /// The address `base + offset + Σ contributions` of a stream whose terms are evaluated, and
    /// its combined zero-mode miss flag.
    pub(super) fn address(&mut self, s: &Stream, st: &StreamState) -> (Value, Option<Value>) {
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
    pub(super) fn evaluate_term(
        &mut self,
        t: &Term,
        index: &mut StreamState,
        depth: usize,
    ) -> (Value, Option<Value>) {
        self.evaluate_terms(&t.index, index, depth);
        let (addr, nested_miss) = self.address(&t.index, index);
        let dtype = t.index_dtype;
        let ty = Type::int_with_byte_size(dtype.width() as u16).expect("1, 2, 4 or 8 bytes");
        // A missed nested gather yields index value 0.
        let raw = self.load_unless(ty, addr, nested_miss, t.index.buffer);
        self.contribution(t, raw)
    }

    /// A loaded index value `raw` (of the term's index dtype) as an i64.
    pub(super) fn widen_index(&mut self, t: &Term, raw: Value) -> Value {
        widen(&mut self.b, t.index_dtype, raw)
    }

    /// The byte contribution of a loaded index value `raw` (of the term's index dtype),
    /// normalized by the term's mode, and its zero-mode miss flag.
    pub(super) fn contribution(&mut self, t: &Term, raw: Value) -> (Value, Option<Value>) {
        let dtype = t.index_dtype;
        let j = self.widen_index(t, raw);
        let n = &t.len;
        // Whether the axis may have elements, and whether it may have none.
        let (some, none) = match n.as_const() {
            Some(n) => (n > 0, n == 0),
            None => (true, true),
        };
        if none && matches!(t.mode, OobMode::Clamp | OobMode::Wrap) {
            let cont = self.b.create_block();
            match n.as_const() {
                Some(_) => {
                    self.b.ins().jump(self.fail_empty, NO_ARGS);
                }
                None => {
                    let len = self.param(n);
                    self.b.ins().brif(len, cont, NO_ARGS, self.fail_empty, NO_ARGS);
                }
            }
            self.b.switch_to_block(cont);
        }
        let signed = dtype.is_signed();
        // `wrapped` is j with negatives counted from the end (signed dtypes only).
        let wrapped = if signed {
            let neg = self.b.ins().icmp_imm_s(IntCC::SignedLessThan, j, 0);
            let plus_n = self.add_int(j, n);
            self.b.ins().select(neg, plus_n, j)
        } else {
            j
        };
        // One unsigned compare checks 0 <= wrapped < n.
        let (value, miss) = match t.mode {
            OobMode::Error => {
                let inside = self.cmp_int(IntCC::UnsignedLessThan, wrapped, n);
                let cont = self.b.create_block();
                self.b.ins().brif(inside, cont, NO_ARGS, self.fail_index, NO_ARGS);
                self.b.switch_to_block(cont);
                (wrapped, None)
            }
            // A miss's address is never dereferenced (loads select another one or branch
            // around), so the value need not be clamped.
            OobMode::Zero => {
                let miss = self.cmp_int(IntCC::UnsignedGreaterThanOrEqual, wrapped, n);
                (wrapped, Some(miss))
            }
            OobMode::Clamp if some => {
                let top = match n.as_const() {
                    Some(n) => self.b.ins().iconst(types::I64, n - 1),
                    None => {
                        let len = self.param(n);
                        self.b.ins().iadd_imm_s(len, -1)
                    }
                };
                let value = if signed {
                    let zero = self.b.ins().iconst(types::I64, 0);
                    let low = self.b.ins().smax(j, zero);
                    self.b.ins().smin(low, top)
                } else {
                    self.b.ins().umin(j, top)
                };
                (value, None)
            }
            OobMode::Wrap if some => {
                let nv = self.int(n);
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
        let contribution = self.mul_int(value, &t.stride);
        (contribution, miss)
    }

    /// Loads `ty` at `addr` of `buffer`, or yields 0 when `miss` is set: after a zero-mode miss
    /// the address is meaningless. A buffer that holds an element is read at element `[0, ..., 0]` instead
    /// (branch-free); an empty one is not touched at all.
    /// The zero of an element type (`iconst` takes at most 64 bits: a 16-byte element is the
    /// widened 64-bit zero).
    fn zero(&mut self, ty: Type) -> Value {
        match ty == types::I128 {
            true => {
                let zero = self.b.ins().iconst(types::I64, 0);
                self.b.ins().uextend(types::I128, zero)
            }
            false => self.b.ins().iconst(ty, 0),
        }
    }

    pub(super) fn load_unless(&mut self, ty: Type, addr: Value, miss: Option<Value>, buffer: usize) -> Value {
        let Some(miss) = miss else {
            return self.b.ins().load(ty, MemFlagsData::trusted(), addr, 0);
        };
        if self.nest.buffer_windows.get(buffer).is_some_and(Option::is_some) {
            let base = self.base(buffer);
            let safe = self.b.ins().select(miss, base, addr);
            let v = self.b.ins().load(ty, MemFlagsData::trusted(), safe, 0);
            let zero = self.zero(ty);
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
        let zero = self.zero(ty);
        self.b.def_var(result, zero);
        self.b.ins().jump(join, NO_ARGS);
        self.b.switch_to_block(join);
        self.b.use_var(result)
    }
}

/// A loaded integer `raw` of `dtype` as an i64: sign-extended for signed dtypes, zero-extended
/// otherwise (a u64 keeps its bits).
pub(super) fn widen(b: &mut FunctionBuilder, dtype: DType, raw: Value) -> Value {
    match (dtype.width(), dtype.is_signed()) {
        (8, _) => raw,
        (_, true) => b.ins().sextend(types::I64, raw),
        (_, false) => b.ins().uextend(types::I64, raw),
    }
}
