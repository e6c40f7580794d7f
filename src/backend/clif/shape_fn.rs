//! The shape function in machine code: symbolic integers ([`SymExpr`]) and conditions
//! ([`Cond`]) evaluated exactly as [`SymExpr::eval_i64`] does — the normal form's terms in
//! order, each its coefficient times its atoms left to right, then the constant; every
//! intermediate checked in i64; Python's floor division and modulo; only the chosen branch of a
//! `select` — and the binding of a generic plan's symbols from its inputs' dims and run-time
//! scalars. Whatever `eval_i64` leaves undefined (a zero divisor, an overflow, a dimension
//! outside `[0, MAX_DIM]`) and every failed condition branch to one *failure block* the caller
//! supplies, so the function never returns a wrong value. The branch is taken once per
//! expression: along it, where it is undefined is collected as a flag (a division by zero
//! divides by 1 instead of trapping, its result unused).

use super::index::widen;
use crate::plan::InputDecl;
use crate::types::sym::{Atom, CmpOp, Cond, MAX_DIM, RawOp, Sym, SymExpr};
use cranelift_codegen::ir::condcodes::IntCC;
use cranelift_codegen::ir::{Block, BlockArg, InstBuilder, MemFlagsData, Type, Value, types};
use cranelift_frontend::FunctionBuilder;
use std::collections::{BTreeMap, BTreeSet};

const NO_ARGS: &[BlockArg] = &[];

/// Why a shape function cannot be generated.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeFnError {
    #[error("symbol `{0}` is not bound by any input's dims or run-time scalar")]
    Unbound(Sym),
    #[error("run-time scalar `{0}` is not an input of the plan")]
    MissingScalarInput(Sym),
    #[error("run-time scalar `{0}` is read from the inputs, which this function does not take")]
    NoInputs(Sym),
    #[error("run-time scalar `{sym}` reads input `{input}` ({dtype}, rank {rank}): {why}")]
    BadScalarInput { sym: Sym, input: String, dtype: slc_runtime::DType, rank: usize, why: &'static str },
    /// The object's caller passes every input; a mask's `nonzero()` is derived by the JIT and
    /// the interpreter only.
    #[error(
        "input `{input}` is the nonzero() of the mask `{mask}`, which an AOT object does not derive: give `{mask}`'s value when compiling"
    )]
    DerivedInput { input: String, mask: String },
    /// Nor a store's value cast to the target's dtype.
    #[error(
        "input `{input}` is `{from}` cast to {dtype} for the store, which an AOT object does not cast: give `{from}` as {dtype}"
    )]
    CastInput { input: String, from: String, dtype: slc_runtime::DType },
}

/// Emits the evaluation of symbolic integers into a function being built: the values of the
/// bound symbols, and the block every failure branches to.
pub struct SymEmitter {
    values: BTreeMap<Sym, Value>,
    fail: Block,
}

impl SymEmitter {
    /// An emitter with no symbol bound, failing to `fail` (a block without parameters).
    pub fn new(fail: Block) -> SymEmitter {
        SymEmitter { values: BTreeMap::new(), fail }
    }

    /// Binds `sym` to `value` (an i64), as given: a dimension's range is [`SymEmitter::bind_dim`]'s
    /// business.
    pub fn bind(&mut self, sym: Sym, value: Value) {
        self.values.insert(sym, value);
    }

    /// Binds dimension `sym` to `value`, failing unless `0 <= value <= MAX_DIM` (what
    /// `eval_i64` requires of a dimension).
    pub fn bind_dim(&mut self, b: &mut FunctionBuilder, sym: Sym, value: Value) {
        self.require_dim_range(b, value);
        self.bind(sym, value);
    }

    /// Fails unless `0 <= value <= MAX_DIM` (one unsigned comparison).
    fn require_dim_range(&self, b: &mut FunctionBuilder, value: Value) {
        let outside = b.ins().icmp_imm_s(IntCC::UnsignedGreaterThan, value, MAX_DIM);
        self.fail_if(b, outside);
    }

    /// Continues in a new block when `flag` is clear; branches to the failure block otherwise.
    fn fail_if(&self, b: &mut FunctionBuilder, flag: Value) {
        let next = b.create_block();
        b.ins().brif(flag, self.fail, NO_ARGS, next, NO_ARGS);
        b.switch_to_block(next);
    }

    /// Fails unless `cond` holds (or when a side of it is undefined).
    pub fn require(&self, b: &mut FunctionBuilder, cond: &Cond) -> Result<(), ShapeFnError> {
        let holds = self.cond(b, cond)?;
        let next = b.create_block();
        b.ins().brif(holds, next, NO_ARGS, self.fail, NO_ARGS);
        b.switch_to_block(next);
        Ok(())
    }

    /// The truth of `cond` (an `i8`), both sides evaluated, the left first.
    pub fn cond(&self, b: &mut FunctionBuilder, cond: &Cond) -> Result<Value, ShapeFnError> {
        let mut undefined = Undefined(None);
        let holds = self.cond_value(b, cond, &mut undefined)?;
        self.fail_if_undefined(b, undefined);
        Ok(holds)
    }

    /// The value of `e` (an i64), in `eval_i64`'s order and with its checks.
    pub fn expr(&self, b: &mut FunctionBuilder, e: &SymExpr) -> Result<Value, ShapeFnError> {
        let mut undefined = Undefined(None);
        let v = self.value(b, e, &mut undefined)?;
        self.fail_if_undefined(b, undefined);
        Ok(v)
    }

    /// Branches to the failure block where an evaluation was undefined: once per expression
    /// rather than once per operation. (The requirements of a rank-32 input take a thousand
    /// checked operations; a block each made register allocation most of the compile.)
    fn fail_if_undefined(&self, b: &mut FunctionBuilder, undefined: Undefined) {
        if let Some(flag) = undefined.0 {
            self.fail_if(b, flag);
        }
    }

    /// [`SymEmitter::cond`] without the branch: `undefined` collects where it is undefined.
    fn cond_value(
        &self,
        b: &mut FunctionBuilder,
        cond: &Cond,
        undefined: &mut Undefined,
    ) -> Result<Value, ShapeFnError> {
        let lhs = self.value(b, cond.lhs(), undefined)?;
        let rhs = self.value(b, cond.rhs(), undefined)?;
        let cc = match cond.op() {
            CmpOp::Lt => IntCC::SignedLessThan,
            CmpOp::Le => IntCC::SignedLessThanOrEqual,
            CmpOp::Eq => IntCC::Equal,
        };
        Ok(b.ins().icmp(cc, lhs, rhs))
    }

    /// [`SymEmitter::expr`] without the branch: `undefined` collects where it is undefined,
    /// and the value is then meaningless (but computed without a trap).
    fn value(
        &self,
        b: &mut FunctionBuilder,
        e: &SymExpr,
        undefined: &mut Undefined,
    ) -> Result<Value, ShapeFnError> {
        let mut acc = None;
        for (coef, atoms) in e.terms() {
            // `1 * v` and `0 + v` cannot overflow: starting from the first atom and the first
            // term checks exactly what eval_i64 checks.
            let mut prod = (coef != 1).then(|| b.ins().iconst(types::I64, coef));
            for atom in atoms {
                let v = self.atom(b, atom, undefined)?;
                prod = Some(match prod {
                    None => v,
                    Some(p) => checked(b, RawOp::Mul, p, v, undefined),
                });
            }
            let prod = prod.unwrap_or_else(|| b.ins().iconst(types::I64, coef));
            acc = Some(match acc {
                None => prod,
                Some(a) => checked(b, RawOp::Add, a, prod, undefined),
            });
        }
        let constant = e.constant_term();
        Ok(match acc {
            None => b.ins().iconst(types::I64, constant),
            Some(a) if constant == 0 => a,
            Some(a) => {
                let k = b.ins().iconst(types::I64, constant);
                checked(b, RawOp::Add, a, k, undefined)
            }
        })
    }

    fn atom(
        &self,
        b: &mut FunctionBuilder,
        atom: &Atom,
        undefined: &mut Undefined,
    ) -> Result<Value, ShapeFnError> {
        Ok(match atom {
            Atom::Sym(s) => *self.values.get(s).ok_or_else(|| ShapeFnError::Unbound(s.clone()))?,
            Atom::FloorDiv(x, d) => {
                let (x, d) = (self.value(b, x, undefined)?, self.value(b, d, undefined)?);
                // A zero divisor and i64::MIN // -1 (the one quotient outside i64) are
                // undefined; sdiv, which would trap on them, divides by 1 instead.
                let zero = b.ins().icmp_imm_s(IntCC::Equal, d, 0);
                let min = b.ins().icmp_imm_s(IntCC::Equal, x, i64::MIN);
                let minus_one = b.ins().icmp_imm_s(IntCC::Equal, d, -1);
                let overflow = b.ins().band(min, minus_one);
                let bad = b.ins().bor(zero, overflow);
                undefined.add(b, bad);
                let one = b.ins().iconst(types::I64, 1);
                let d = b.ins().select(bad, one, d);
                let q = b.ins().sdiv(x, d);
                let qd = b.ins().imul(q, d);
                let r = b.ins().isub(x, qd);
                // Truncation rounded up when the remainder's sign differs from the divisor's.
                let round = rounds_toward_zero(b, r, d);
                let q1 = b.ins().iadd_imm_s(q, -1);
                b.ins().select(round, q1, q)
            }
            Atom::Mod(x, d) => {
                let (x, d) = (self.value(b, x, undefined)?, self.value(b, d, undefined)?);
                let zero = b.ins().icmp_imm_s(IntCC::Equal, d, 0);
                undefined.add(b, zero);
                // x % -1 is x % 1 (0), without srem's i64::MIN % -1 corner; a zero divisor
                // (undefined) divides by 1 rather than trap.
                let minus_one = b.ins().icmp_imm_s(IntCC::Equal, d, -1);
                let by_one = b.ins().bor(minus_one, zero);
                let one = b.ins().iconst(types::I64, 1);
                let divisor = b.ins().select(by_one, one, d);
                let r = b.ins().srem(x, divisor);
                // Python's result takes the divisor's sign.
                let wrap = rounds_toward_zero(b, r, d);
                let rd = b.ins().iadd(r, d);
                b.ins().select(wrap, rd, r)
            }
            Atom::Min(args) | Atom::Max(args) => {
                // Every argument is evaluated (and must be defined), as eval_i64 does.
                let is_min = matches!(atom, Atom::Min(_));
                let mut acc = self.value(b, &args[0], undefined)?;
                for a in &args[1..] {
                    let v = self.value(b, a, undefined)?;
                    acc = if is_min { b.ins().smin(acc, v) } else { b.ins().smax(acc, v) };
                }
                acc
            }
            Atom::Select(c, then, otherwise) => {
                // Only the chosen branch is evaluated, and only its undefinedness counts.
                let holds = self.cond_value(b, c, undefined)?;
                let (then_block, else_block, join) = (b.create_block(), b.create_block(), b.create_block());
                let result = b.append_block_param(join, types::I64);
                let chosen_undefined = b.append_block_param(join, types::I8);
                b.ins().brif(holds, then_block, NO_ARGS, else_block, NO_ARGS);
                for (block, branch) in [(then_block, then), (else_block, otherwise)] {
                    b.switch_to_block(block);
                    let mut inner = Undefined(None);
                    let v = self.value(b, branch, &mut inner)?;
                    let flag = inner.0.unwrap_or_else(|| b.ins().iconst(types::I8, 0));
                    b.ins().jump(join, &[BlockArg::Value(v), BlockArg::Value(flag)]);
                }
                b.switch_to_block(join);
                undefined.add(b, chosen_undefined);
                result
            }
            Atom::Raw(op, x, y) => {
                let (x, y) = (self.value(b, x, undefined)?, self.value(b, y, undefined)?);
                checked(b, *op, x, y, undefined)
            }
        })
    }

    /// Binds every symbol of a generic plan from the call's inputs, each `(declaration, the
    /// caller's slot)`: each dimension symbol from the first axis that declares it, every dim
    /// in `[0, MAX_DIM]`; then each run-time scalar in `scalars` from the input of its name
    /// (read as its integer dtype; a u64 above `i64::MAX` fails); then every other axis is
    /// required equal to its declared dim's value (a later axis declaring a bound symbol, a
    /// constant, any other expression).
    ///
    /// `in_dims` points at the caller's table of dims pointers and `data` (needed only when
    /// `scalars` is not empty) at its table of data pointers.
    pub fn bind_inputs(
        &mut self,
        b: &mut FunctionBuilder,
        ptr: Type,
        inputs: &[(&InputDecl<SymExpr>, usize)],
        in_dims: Value,
        data: Option<Value>,
        scalars: &BTreeSet<Sym>,
    ) -> Result<(), ShapeFnError> {
        if let Some((d, _)) = inputs.iter().find(|(d, _)| d.derived.is_some()) {
            let (input, from) = (d.name.clone(), d.given_name().to_string());
            return Err(match d.cast_of() {
                Some(_) => ShapeFnError::CastInput { input, from, dtype: d.dtype },
                None => ShapeFnError::DerivedInput { input, mask: from },
            });
        }
        let pw = ptr.bytes() as i32;
        let mut loaded = Vec::with_capacity(inputs.len());
        let mut computed = vec![];
        for &(decl, slot) in inputs {
            let dims_ptr = b.ins().load(ptr, MemFlagsData::trusted(), in_dims, slot as i32 * pw);
            let mut dims = Vec::with_capacity(decl.shape.len());
            for (j, declared) in decl.shape.iter().enumerate() {
                let dim = b.ins().load(types::I64, MemFlagsData::trusted(), dims_ptr, j as i32 * 8);
                self.require_dim_range(b, dim);
                match declared.as_sym() {
                    Some(s @ Sym::Dim(_)) if !self.values.contains_key(s) => self.bind(s.clone(), dim),
                    _ => computed.push((dim, declared)),
                }
                dims.push(dim);
            }
            loaded.push(dims);
        }
        for s in scalars {
            let Sym::Scalar { name, index } = s else { continue };
            let p = inputs
                .iter()
                .position(|(d, _)| *d.name == **name)
                .ok_or_else(|| ShapeFnError::MissingScalarInput(s.clone()))?;
            let (decl, slot) = inputs[p];
            let bad = |why| ShapeFnError::BadScalarInput {
                sym: s.clone(),
                input: decl.name.clone(),
                dtype: decl.dtype,
                rank: decl.shape.len(),
                why,
            };
            if !decl.dtype.is_integer() {
                return Err(bad("a run-time scalar is an integer"));
            }
            let offset = match (index, &loaded[p][..]) {
                (None, []) => 0,
                (Some(i), &[len]) => {
                    // Element i exists: i < len.
                    let missing = b.ins().icmp_imm_s(IntCC::SignedLessThanOrEqual, len, *i as i64);
                    self.fail_if(b, missing);
                    *i as i64 * decl.dtype.width() as i64
                }
                (None, _) => return Err(bad("`name[()]` reads a 0-d tensor")),
                (Some(_), _) => return Err(bad("`name[i]` reads a 1-d tensor")),
            };
            let table = data.ok_or_else(|| ShapeFnError::NoInputs(s.clone()))?;
            let base = b.ins().load(ptr, MemFlagsData::trusted(), table, slot as i32 * pw);
            let ty = Type::int_with_byte_size(decl.dtype.width() as u16).expect("1, 2, 4 or 8 bytes");
            let offset = i32::try_from(offset).map_err(|_| bad("the element is too far into the tensor"))?;
            let raw = b.ins().load(ty, MemFlagsData::trusted(), base, offset);
            let value = widen(b, decl.dtype, raw);
            if decl.dtype == slc_runtime::DType::U64 {
                let huge = b.ins().icmp_imm_s(IntCC::SignedLessThan, value, 0);
                self.fail_if(b, huge);
            }
            self.bind(s.clone(), value);
        }
        for (dim, declared) in computed {
            let value = self.expr(b, declared)?;
            let differs = b.ins().icmp(IntCC::NotEqual, dim, value);
            self.fail_if(b, differs);
        }
        Ok(())
    }
}

/// Where an evaluation so far is undefined (an `i8` flag; `None`: nowhere): collected along
/// an expression, and branched on once.
struct Undefined(Option<Value>);

impl Undefined {
    fn add(&mut self, b: &mut FunctionBuilder, flag: Value) {
        self.0 = Some(match self.0 {
            Some(f) => b.ins().bor(f, flag),
            None => flag,
        });
    }
}

/// `x op y`; undefined on overflow.
fn checked(b: &mut FunctionBuilder, op: RawOp, x: Value, y: Value, undefined: &mut Undefined) -> Value {
    let (v, overflow) = match op {
        RawOp::Add => b.ins().sadd_overflow(x, y),
        RawOp::Sub => b.ins().ssub_overflow(x, y),
        RawOp::Mul => b.ins().smul_overflow(x, y),
    };
    undefined.add(b, overflow);
    v
}

/// Whether truncating division left remainder `r` with the sign opposite to divisor `d`'s (and
/// non-zero): where Python's floor division is one less, and its modulo `r + d`.
fn rounds_toward_zero(b: &mut FunctionBuilder, r: Value, d: Value) -> Value {
    let nonzero = b.ins().icmp_imm_s(IntCC::NotEqual, r, 0);
    let signs = b.ins().bxor(r, d);
    let differ = b.ins().icmp_imm_s(IntCC::SignedLessThan, signs, 0);
    b.ins().band(nonzero, differ)
}

#[cfg(test)]
mod tests;
