//! The REPL's helper functions: `load(path)`, `save(expr, path)`, `arange(n, shape=, dtype=)`,
//! `random(shape, dtype=, seed=, high=)`, `zeros(shape, dtype=)`, `ones(shape, dtype=)`.
//!
//! They make or write data, so they run before the checker: each call becomes a tensor that
//! stands in the expression as a temporary input. Their arguments are bound like the operator
//! forms' (positional, then keyword) and misuse is reported with the checker's own error kinds,
//! pointing at the argument at fault.

use super::{Fail, Repl, Reply, Val, type_of};
use crate::diag::suggest::closest;
use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::error::Error;
use crate::measure::SplitMix;
use crate::sema::{self, SemaError, SemaErrorKind as K};
use crate::source::Span;
use crate::syntax::ast::{self, ExprKind};
use slc_runtime::{DType, Tensor, read_npy, write_npy};
use std::fmt::Write as _;
use std::path::PathBuf;

/// The helper functions, for completion and `:help`.
pub const HELPERS: &[&str] = &["load", "save", "arange", "random", "zeros", "ones"];

pub fn is_helper(name: &str) -> bool {
    HELPERS.contains(&name)
}

/// A helper's parameters: those a call must give, then those it may.
struct Params(&'static [&'static str], &'static [&'static str]);

const LOAD: Params = Params(&["path"], &[]);
const SAVE: Params = Params(&["value", "path"], &[]);
const ARANGE: Params = Params(&[], &["n", "shape", "dtype"]);
const RANDOM: Params = Params(&["shape"], &["dtype", "seed", "high"]);
const FILLED: Params = Params(&["shape"], &["dtype"]);

/// The default dtype of the helpers that make data, as in the issue's `arange(n, dtype=f32)`.
const DEFAULT_DTYPE: DType = DType::F32;

/// `save(...)` used where a value is needed: its span.
pub fn save_call(e: &ast::Expr) -> Option<Span> {
    match &e.kind {
        ExprKind::Call { callee, .. } if callee.name == "save" => Some(e.span),
        _ => None,
    }
}

pub fn save_has_no_value(span: Span) -> Fail {
    Fail::program(
        Diagnostic::error("E0504", "`save(...)` writes a file and has no value")
            .label(span, "used as a value here")
            .help("write it as a statement of its own: `save(EXPR, \"FILE.npy\")`"),
    )
}

fn sema(kind: K, span: Span) -> Fail {
    Fail::from(Error::from(SemaError::new(kind, span)))
}

fn invalid(message: impl Into<String>, label: impl Into<String>, span: Span) -> Fail {
    sema(K::InvalidArgument { message: message.into(), label: label.into() }, span)
}

/// Reports a call of a function that is neither a helper nor an operator form, suggesting from
/// both (the checker knows only the operator forms).
pub fn check_function(callee: &ast::Ident) -> Result<(), Fail> {
    let known = || HELPERS.iter().chain(sema::OPERATOR_FUNCTIONS);
    if known().any(|f| *f == callee.name) {
        return Ok(());
    }
    let suggestion = closest(&callee.name, known().copied(), 2).map(str::to_string);
    let known = known().map(|f| f.to_string()).collect();
    let kind = K::UnknownFunction { name: callee.name.clone(), suggestion, known };
    Err(Fail::program(SemaError::new(kind, callee.span).into_diagnostic()))
}

/// Matches arguments to a helper's parameters, as the operator forms bind theirs.
fn bind<'a>(
    function: &str,
    params: &Params,
    args: &'a [ast::Arg],
    call: Span,
) -> Result<Vec<Option<&'a ast::Arg>>, Fail> {
    sema::bind_args(function, params.0, params.1, args, call).map_err(|e| Fail::from(Error::from(e)))
}

/// One number to store into an element.
#[derive(Clone, Copy)]
enum Num {
    Int(u64),
    Float(f64),
}

/// A tensor of `dtype` and `shape` whose element `i` is `value(i)`, no larger than `max` bytes
/// (a [`RunOptions`](crate::RunOptions) bound); a value that does not fit the dtype is an error.
fn filled(
    dtype: DType,
    shape: &[usize],
    span: Span,
    max: Option<u64>,
    mut value: impl FnMut(usize) -> Num,
) -> Result<Tensor, Fail> {
    let bytes = Tensor::byte_size(dtype, shape).map_or(u64::MAX, |b| b as u64);
    crate::exec::check_output(bytes, max, Some(span)).map_err(Fail::from)?;
    let mut t = Tensor::zeros(dtype, shape).map_err(|e| {
        Fail::runtime(
            Diagnostic::error("E0505", format!("cannot make the tensor: {e}")).label(span, "in this call"),
        )
    })?;
    let w = dtype.width();
    for (i, chunk) in t.bytes_mut().chunks_exact_mut(w).enumerate() {
        let v = value(i);
        let as_f64 = |v: Num| match v {
            Num::Int(v) => v as f64,
            Num::Float(v) => v,
        };
        let bytes: [u8; 16] = match (dtype, v) {
            // A complex's real part; its imaginary part is 0.
            (DType::C64, v) => widen((as_f64(v) as f32).to_le_bytes()),
            (DType::C128, v) => widen(as_f64(v).to_le_bytes()),
            (DType::F16, Num::Int(v)) => widen(slc_runtime::f16_of_f64(v as f64).to_le_bytes()),
            (DType::F16, Num::Float(v)) => widen(slc_runtime::f16_of_f64(v).to_le_bytes()),
            (DType::BF16, Num::Int(v)) => widen(slc_runtime::bf16_of_f64(v as f64).to_le_bytes()),
            (DType::BF16, Num::Float(v)) => widen(slc_runtime::bf16_of_f64(v).to_le_bytes()),
            (DType::F32, Num::Int(v)) => widen((v as f32).to_le_bytes()),
            (DType::F32, Num::Float(v)) => widen((v as f32).to_le_bytes()),
            (DType::F64, Num::Int(v)) => widen((v as f64).to_le_bytes()),
            (DType::F64, Num::Float(v)) => widen(v.to_le_bytes()),
            (_, Num::Int(v)) => {
                // Every integer helper value is non-negative: it fits if it is below 2^(bits-1)
                // (signed), 2^bits (unsigned) or 2 (bool).
                let bits = 8 * w as u32 - u32::from(dtype.is_signed());
                let fits = if dtype == DType::Bool { v <= 1 } else { bits >= 64 || v < 1u64 << bits };
                if !fits {
                    return Err(invalid(
                        format!("the value {v} does not fit in {dtype}"),
                        format!("makes values up to {v}"),
                        span,
                    ));
                }
                widen(v.to_le_bytes())
            }
            // Floats are only made for float dtypes; truncate rather than fail if that changes.
            (_, Num::Float(v)) => widen((v as u64).to_le_bytes()),
        };
        chunk.copy_from_slice(&bytes[..w]);
    }
    Ok(t)
}

fn widen<const N: usize>(b: [u8; N]) -> [u8; 16] {
    let mut out = [0u8; 16];
    out[..N].copy_from_slice(&b);
    out
}

/// A path argument: a string literal; `~/` is the home directory.
fn path_arg(arg: &ast::Arg) -> Result<PathBuf, Fail> {
    match &arg.value.kind {
        ExprKind::Str(s) => Ok(expand_home(s)),
        _ => Err(invalid("a path must be a string, e.g. \"data/a.npy\"", "not a string", arg.value.span)),
    }
}

/// `~/x` → `$HOME/x`, as a shell would.
pub fn expand_home(s: &str) -> PathBuf {
    match (s.strip_prefix("~/"), dirs::home_dir()) {
        (Some(rest), Some(home)) => home.join(rest),
        _ => PathBuf::from(s),
    }
}

/// A dtype argument: a dtype name, bare (`dtype=f32`) or quoted (`dtype="float32"`).
fn dtype_arg(arg: Option<&ast::Arg>) -> Result<DType, Fail> {
    let Some(arg) = arg else { return Ok(DEFAULT_DTYPE) };
    let name = match &arg.value.kind {
        ExprKind::Name(n) | ExprKind::Str(n) => n.as_str(),
        _ => "",
    };
    DType::from_name(name).ok_or_else(|| {
        let names: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
        invalid(
            format!("`{}` is not a dtype; use one of {}", arg.value, names.join(", ")),
            "not a dtype",
            arg.value.span,
        )
    })
}

impl Repl {
    /// An integer argument.
    fn int_arg(&mut self, arg: &ast::Arg, what: &str) -> Result<i64, Fail> {
        match self.value(&arg.value)? {
            Val::Int(v) => Ok(v),
            Val::Tensor(t) => Err(invalid(
                format!("{what} must be an integer, found a tensor {}", type_of(&t)),
                "not an integer",
                arg.value.span,
            )),
        }
    }

    /// A shape argument: an integer list (`[2, 3]`, `a.shape`, a bound 1-d integer tensor) or one
    /// integer (a 1-d shape).
    fn shape_arg(&mut self, arg: &ast::Arg) -> Result<Vec<usize>, Fail> {
        let span = arg.value.span;
        let values: Vec<i128> = match self.value(&arg.value)? {
            Val::Int(v) => vec![v as i128],
            Val::Tensor(t) if t.dtype().is_integer() && t.rank() <= 1 => {
                (0..t.numel()).map(|i| t.int_at(i).unwrap_or_default()).collect()
            }
            Val::Tensor(t) => {
                return Err(invalid(
                    format!("a shape is a list of integers, found a tensor {}", type_of(&t)),
                    "not a shape",
                    span,
                ));
            }
        };
        let dims: Vec<usize> = values
            .iter()
            .map(|&d| {
                usize::try_from(d)
                    .map_err(|_| invalid(format!("dimension {d} is negative"), "negative dimension", span))
            })
            .collect::<Result<_, _>>()?;
        if Tensor::byte_size(DType::U8, &dims).is_none() {
            return Err(invalid(format!("the shape {values:?} has too many elements"), "too large", span));
        }
        Ok(dims)
    }

    /// Evaluates a helper call (other than `save`) to its tensor.
    pub(crate) fn helper(
        &mut self,
        callee: &ast::Ident,
        args: &[ast::Arg],
        span: Span,
    ) -> Result<Tensor, Fail> {
        match callee.name.as_str() {
            "load" => {
                let [path] = bind("load", &LOAD, args, span)?[..] else { unreachable!("one parameter") };
                let arg = path.expect("required");
                let path = path_arg(arg)?;
                read_npy(&path).map_err(|e| {
                    Fail::runtime(
                        Diagnostic::error("E0503", e.to_string()).label(arg.value.span, "this file"),
                    )
                })
            }
            "arange" => {
                let [n, shape, dtype] = bind("arange", &ARANGE, args, span)?[..] else {
                    unreachable!("three parameters")
                };
                let dtype = dtype_arg(dtype)?;
                let n = match n {
                    Some(arg) => {
                        let v = self.int_arg(arg, "n")?;
                        let n = usize::try_from(v).map_err(|_| {
                            invalid(format!("n must not be negative, found {v}"), "negative", arg.value.span)
                        })?;
                        Some((n, arg.value.span))
                    }
                    None => None,
                };
                let dims = match shape {
                    Some(arg) => {
                        let dims = self.shape_arg(arg)?;
                        let count: usize = dims.iter().product();
                        if let Some((n, n_span)) = n
                            && n != count
                        {
                            return Err(invalid(
                                format!(
                                    "arange({n}) cannot have shape {dims:?}, which holds {count} elements"
                                ),
                                format!("{count} elements"),
                                arg.value.span,
                            )
                            .with_label(n_span, format!("{n} values")));
                        }
                        dims
                    }
                    None => match n {
                        Some((n, _)) => vec![n],
                        None => {
                            return Err(sema(
                                K::MissingArgument { function: "arange".into(), name: "n".into() },
                                span,
                            ));
                        }
                    },
                };
                filled(dtype, &dims, span, self.options.max_output_bytes, |i| Num::Int(i as u64))
            }
            "random" => {
                let [shape, dtype, seed, high] = bind("random", &RANDOM, args, span)?[..] else {
                    unreachable!("four")
                };
                let dims = self.shape_arg(shape.expect("required"))?;
                let dtype = dtype_arg(dtype)?;
                let seed = match seed {
                    Some(arg) => self.int_arg(arg, "seed")? as u64,
                    None => {
                        // Different numbers each call, as NumPy without a seed.
                        self.seed_counter += 1;
                        let now = std::time::SystemTime::now()
                            .duration_since(std::time::UNIX_EPOCH)
                            .map_or(0, |d| d.as_nanos() as u64);
                        now ^ self.seed_counter.wrapping_mul(0x9E37_79B9_7F4A_7C15)
                    }
                };
                let high = match high {
                    Some(arg) => {
                        let v = self.int_arg(arg, "high")?;
                        if v <= 0 {
                            return Err(invalid(
                                format!("high must be positive, found {v}"),
                                "not positive",
                                arg.value.span,
                            ));
                        }
                        Some(v as u64)
                    }
                    None => None,
                };
                let mut rng = SplitMix(seed);
                filled(dtype, &dims, span, self.options.max_output_bytes, |_| {
                    let r = rng.next_u64();
                    match dtype {
                        // Uniform in [0, 1) (or [0, high)), from the top 53 bits.
                        d if d.is_float() || d.is_complex() => {
                            Num::Float((r >> 11) as f64 / (1u64 << 53) as f64 * high.unwrap_or(1) as f64)
                        }
                        DType::Bool => Num::Int(r >> 63),
                        // Uniform in [0, high), high 10 unless given; `filled` checks the range.
                        _ => Num::Int(r % high.unwrap_or(10)),
                    }
                })
            }
            "zeros" | "ones" => {
                let [shape, dtype] = bind(&callee.name, &FILLED, args, span)?[..] else {
                    unreachable!("two")
                };
                let dims = self.shape_arg(shape.expect("required"))?;
                let dtype = dtype_arg(dtype)?;
                let one = u64::from(callee.name == "ones");
                filled(dtype, &dims, span, self.options.max_output_bytes, |_| Num::Int(one))
            }
            other => unreachable!("`{other}` is not a helper that makes a tensor"),
        }
    }

    /// `save(expr, path)`: evaluates `expr` and writes it atomically (a temporary file renamed
    /// into place, so a failed write leaves no partial file).
    pub(crate) fn save(&mut self, args: &[ast::Arg], span: Span, reply: &mut Reply) -> Result<(), Fail> {
        let [value, path] = bind("save", &SAVE, args, span)?[..] else { unreachable!("two parameters") };
        let (value, path_arg_) = (value.expect("required"), path.expect("required"));
        let path = path_arg(path_arg_)?;
        let tensor = match self.value(&value.value)? {
            Val::Int(v) => Tensor::scalar_i64(v),
            Val::Tensor(t) => t,
        };
        write_npy(&path, &tensor).map_err(|e| {
            Fail::runtime(Diagnostic::error("E0503", e.to_string()).label(path_arg_.value.span, "this file"))
        })?;
        let _ = writeln!(reply.out, "saved {} to '{}'", type_of(&tensor), path.display());
        Ok(())
    }
}

impl Fail {
    fn with_label(mut self, span: Span, message: impl Into<String>) -> Fail {
        self.diag.labels.push(crate::diag::Label { span, message: message.into() });
        self
    }
}
