//! A scatter's reductions on the GPU (`reduction=sum|sub|prod|max|min|mean`, with or without
//! `use_init_val`): exactly the interpreter's [`Accumulator`](crate::types::Accumulator), so
//! every element's updates are folded in C order — a float sum depends on its order, and under
//! `max`/`min` the first NaN wins — by one thread (the store pass runs serially: a correct
//! fallback, not a fast one), into a scratch of 16 bytes per target element: the running value
//! in its accumulation type (f32 for f16 and bf16, a u64 count for a bool `mean`, else the
//! element's), then `1 + terms` (0: not touched). A parallel `NAME_finish` pass then writes every
//! touched element: the value (divided, for `mean`) rounded once into the element's type.

use crate::types::Reduction;
use slc_runtime::DType;

/// The C type the running value of `dtype` is kept in under `op`.
pub fn wide_type(dtype: DType, op: Reduction) -> &'static str {
    match (dtype, op) {
        (DType::F16 | DType::BF16 | DType::F32, _) => "float",
        (DType::F64, _) => "double",
        (DType::Bool, Reduction::Mean) => "unsigned long long",
        (DType::Bool | DType::U8, _) => "unsigned char",
        (DType::I8, _) => "signed char",
        (DType::I16, _) => "short",
        (DType::U16, _) => "unsigned short",
        (DType::I32, _) => "int",
        (DType::U32, _) => "unsigned int",
        (DType::I64, _) => "long long",
        _ => "unsigned long long",
    }
}

/// The element at byte pointer `at` as a running value.
pub fn widen(dtype: DType, op: Reduction, at: &str) -> String {
    match (dtype, op) {
        (DType::F16, _) => format!("slc_h2f(*(const unsigned short*)({at}))"),
        (DType::BF16, _) => format!("slc_b2f(*(const unsigned short*)({at}))"),
        (DType::Bool, Reduction::Mean) => format!("(unsigned long long)(*(const unsigned char*)({at}) != 0)"),
        _ => format!("*(const {}*)({at})", wide_type(dtype, op)),
    }
}

/// The identity `op` starts from without `use_init_val`.
pub fn identity(dtype: DType, op: Reduction) -> String {
    let ty = wide_type(dtype, op);
    let float = matches!(dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64);
    let top = op == Reduction::Min;
    match op {
        Reduction::Sum | Reduction::Sub | Reduction::Mean => format!("({ty})0"),
        Reduction::Prod => format!("({ty})1"),
        _ if float && dtype == DType::F64 => {
            format!("slc_bits_d({})", if top { "0x7ff0000000000000ULL" } else { "0xfff0000000000000ULL" })
        }
        _ if float => format!("slc_bits_f({})", if top { "0x7f800000u" } else { "0xff800000u" }),
        _ => {
            let (low, high) = match dtype {
                DType::Bool | DType::U8 | DType::U16 | DType::U32 | DType::U64 => ("0", "~0ULL"),
                DType::I8 => ("-128", "127"),
                DType::I16 => ("-32768", "32767"),
                DType::I32 => ("(-2147483647 - 1)", "2147483647"),
                _ => ("(-9223372036854775807LL - 1)", "9223372036854775807LL"),
            };
            // A bool's extremes are 0 and 1.
            let high = if dtype == DType::Bool { "1" } else { high };
            format!("({ty})({})", if top { high } else { low })
        }
    }
}

/// The statement that folds `v` into the running value `acc` (an lvalue).
pub fn step(dtype: DType, op: Reduction, acc: &str, v: &str) -> String {
    let ty = wide_type(dtype, op);
    let float = matches!(dtype, DType::F16 | DType::BF16 | DType::F32 | DType::F64);
    let bool_logic = dtype == DType::Bool && op != Reduction::Mean;
    match op {
        Reduction::Max | Reduction::Min => {
            let cmp = if op == Reduction::Max { ">" } else { "<" };
            match float {
                // A NaN already there stays; a NaN arriving replaces anything else.
                true => format!("if (!({acc} != {acc}) && ({v} != {v} || {v} {cmp} {acc})) {acc} = {v};"),
                false => format!("if ({v} {cmp} {acc}) {acc} = {v};"),
            }
        }
        _ if bool_logic => {
            let r = match op {
                Reduction::Sub => format!("(({acc}) != 0) != (({v}) != 0)"),
                Reduction::Prod => format!("({acc}) != 0 && ({v}) != 0"),
                _ => format!("({acc}) != 0 || ({v}) != 0"),
            };
            format!("{acc} = (unsigned char)({r});")
        }
        _ => {
            let o = match op {
                Reduction::Sub => "-",
                Reduction::Prod => "*",
                _ => "+",
            };
            match float {
                true => format!("{acc} = {acc} {o} {v};"),
                // Integers wrap: unsigned words of at least 32 bits, truncated.
                false => {
                    let wide = if matches!(ty, "long long" | "unsigned long long") {
                        "unsigned long long"
                    } else {
                        "unsigned int"
                    };
                    format!("{acc} = ({ty})(({wide})({acc}) {o} ({wide})({v}));")
                }
            }
        }
    }
}

/// The element's bits from the running value `acc` after `terms` terms (an unsigned long long
/// expression, at least 1): `mean` divided (integers rounded down), then rounded once into the
/// element's type; the statement stores it at byte pointer `at`.
pub fn finish(dtype: DType, op: Reduction, acc: &str, terms: &str, at: &str) -> String {
    let ty = wide_type(dtype, op);
    let value = match op {
        Reduction::Mean => match dtype {
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => format!("({acc} / ({ty})({terms}))"),
            DType::Bool | DType::U8 | DType::U16 | DType::U32 | DType::U64 => {
                format!("({ty})((unsigned long long)({acc}) / ({terms}))")
            }
            _ => format!(
                "({ty})(((long long)({acc}) / (long long)({terms})) - (((long long)({acc}) % (long long)({terms})) < 0))"
            ),
        },
        _ => acc.to_string(),
    };
    match dtype {
        DType::F16 => format!("*(unsigned short*)({at}) = slc_f2h({value});"),
        DType::BF16 => format!("*(unsigned short*)({at}) = slc_f2b({value});"),
        DType::Bool => format!("*(unsigned char*)({at}) = (unsigned char)({value} != 0);"),
        _ => format!("*({ty}*)({at}) = {value};"),
    }
}
