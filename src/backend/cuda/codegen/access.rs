//! Index terms: each index value read once per element, normalized by its term's out-of-range
//! policy exactly as the interpreter does (`OobMode::normalize`), and a failure recorded as the
//! first in C order of its nest (`atomicMin` of `linear << 2 | kind`), or as a folded check's
//! own ([`super::fold`]).

use super::{Body, Gen, KIND_EMPTY_AXIS, KIND_GATHER_OUT_OF_RANGE, KIND_INDEX_BOUNDS, TELL};
use crate::backend::cuda::CudaError;
use crate::backend::loopnest::Stream;
use crate::types::OobMode;
use slc_runtime::DType;
use std::fmt::Write;

impl Gen<'_> {
    /// The statement recording a failure of `kind` at `element` (a C expression: the element's
    /// linear position in its nest) of a nest with error word `slot`; `output`: the nest is the
    /// plan's output, whose failing term records a folded check's failures as the check's own.
    pub(super) fn record(&self, slot: usize, element: &str, kind: u64, output: bool) -> String {
        match self.folded {
            Some(f) if output && kind == KIND_GATHER_OUT_OF_RANGE => format!(
                "atomicMin(err + {}, ((unsigned long long)({element}) / {}ULL << 2) | {KIND_INDEX_BOUNDS}ULL); {TELL}",
                f.check, f.per
            ),
            _ => {
                format!("atomicMin(err + {slot}, ((unsigned long long)({element}) << 2) | {kind}ULL); {TELL}")
            }
        }
    }

    /// Emits the byte offset of `s` into a fresh variable and returns its name; a `zero`-mode
    /// miss jumps to `miss`; a failure runs `fail(kind)`. `check`: the stream is a check nest's,
    /// whose own (outermost) term failing is the check's `IndexOutOfBounds`.
    pub(super) fn access(
        &self,
        b: &mut Body,
        s: &Stream,
        fail: &dyn Fn(u64) -> String,
        miss: &str,
        check: bool,
    ) -> Result<String, CudaError> {
        let t = b.t;
        let o = b.label();
        let mut expr = self.int(&s.base, t);
        for (d, stride) in s.strides.iter().enumerate() {
            if stride.as_const() != Some(0) {
                expr = format!("{expr} + c{d} * ({})", self.int(stride, t));
            }
        }
        let _ = writeln!(b.text, "      {} {o} = {expr};", t.s);
        for term in &s.terms {
            let Some(ity) = index_type(term.index_dtype) else {
                return Err(CudaError::Codegen(format!("an index tensor of {}", term.index_dtype)));
            };
            let unsigned64 = term.index_dtype == DType::U64;
            let j = b.label();
            let jty = if unsigned64 { "unsigned long long" } else { "long long" };
            let inner_miss = b.label();
            let done = b.label();
            let _ = writeln!(b.text, "      {jty} {j};\n      {{");
            let io = self.access(b, &term.index, fail, &inner_miss, false)?;
            let _ = writeln!(
                b.text,
                "      {j} = ({jty})*(const {ity}*)(b{} + {io}); goto {done};\n      }}\n      {inner_miss}: {j} = 0;\n      {done}:;",
                term.index.buffer
            );
            let len = self.int(&term.len, t);
            let bound_kind = if check { KIND_INDEX_BOUNDS } else { KIND_GATHER_OUT_OF_RANGE };
            let empty = match term.len.as_const() {
                Some(n) if n > 0 => String::new(),
                _ => format!("      if ({len} == 0) {}\n", fail(KIND_EMPTY_AXIS)),
            };
            let text = match (term.mode, unsigned64) {
                (OobMode::Error | OobMode::Zero, _) => {
                    let out =
                        if term.mode == OobMode::Error { fail(bound_kind) } else { format!("goto {miss};") };
                    if unsigned64 {
                        format!("      if ({j} >= (unsigned long long)({len})) {out}\n")
                    } else {
                        format!(
                            "      if ({j} < 0) {j} += {len};\n      if ({j} < 0 || {j} >= (long long)({len})) {out}\n"
                        )
                    }
                }
                (OobMode::Clamp, true) => {
                    format!(
                        "{empty}      if ({j} >= (unsigned long long)({len})) {j} = (unsigned long long)({len}) - 1;\n"
                    )
                }
                (OobMode::Clamp, false) => format!(
                    "{empty}      if ({j} < 0) {j} = 0;\n      if ({j} >= (long long)({len})) {j} = (long long)({len}) - 1;\n"
                ),
                (OobMode::Wrap, true) => format!("{empty}      {j} %= (unsigned long long)({len});\n"),
                (OobMode::Wrap, false) => {
                    format!("{empty}      {j} %= (long long)({len});\n      if ({j} < 0) {j} += {len};\n")
                }
            };
            b.failed |= match term.mode {
                OobMode::Error => true,
                OobMode::Zero => false,
                OobMode::Clamp | OobMode::Wrap => !empty.is_empty(),
            };
            b.text.push_str(&text);
            if term.stride.as_const() != Some(0) {
                let _ = writeln!(b.text, "      {o} += ({}){j} * ({});", t.s, self.int(&term.stride, t));
            }
        }
        Ok(o)
    }
}

/// The C type an index value of `dtype` is read as; `None` for a non-integer dtype.
fn index_type(dtype: DType) -> Option<&'static str> {
    Some(match dtype {
        DType::I8 => "signed char",
        DType::I16 => "short",
        DType::I32 => "int",
        DType::I64 => "long long",
        DType::U8 => "unsigned char",
        DType::U16 => "unsigned short",
        DType::U32 => "unsigned int",
        DType::U64 => "unsigned long long",
        _ => return None,
    })
}
