//! Assignment statements (`a[items] = value`, `+=`, `*=`; docs/semantics.md, Stores): the
//! target must be a bound input subscripted one or more times, the selection is checked as the
//! same subscripts load, and the value is made the target's dtype (literals as NumPy converts a
//! Python `int`) and checked to broadcast to the selection's shape by NumPy's rule. One value
//! through a mask (`a[m] = 0`) selects the mask's box instead, read where the mask is set.

use super::check::{Checker, bool_tensor, const_tensor, err, node, view};
use super::error::{SemaError, SemaErrorKind as K};
use super::typed::{TExpr, TExprKind, ViewDim};
use crate::source::Span;
use crate::syntax::ast::{self, AssignOp, ExprKind};
use crate::types::sym::{Cond, SymExpr};
use crate::types::{Combine, ShapeDisplay, literal_element};
use slc_runtime::{DType, Tensor};

impl Checker<'_> {
    /// The checked store `target op value`: a [`TExprKind::Store`] with the target's type.
    pub(super) fn assignment(
        &mut self,
        target: &ast::Expr,
        op: AssignOp,
        value: &ast::Expr,
        span: Span,
    ) -> Result<TExpr, SemaError> {
        // Peel the subscripts down to the name they index.
        let mut subscripts = vec![];
        let mut leaf = target;
        while let ExprKind::Index { base, items } = &leaf.kind {
            subscripts.push((items, leaf.span));
            leaf = base;
        }
        let refuse = |reason: String, at: Span| err(K::StoreTarget { reason }, at);
        let ExprKind::Name(name) = &leaf.kind else {
            return refuse(format!("`{leaf}` is not a name"), leaf.span);
        };
        if subscripts.is_empty() {
            return refuse(format!("`{name}` is not subscripted: bind a new name with `let`"), target.span);
        }
        if self.is_local(name) {
            return refuse(format!("`{name}` is a `let` name, not a bound input"), leaf.span);
        }
        let base = self.tensor_name(name, leaf.span)?;
        let mut selection = base.clone();
        let (last_items, last_at) = subscripts[0];
        for (level, (items, at)) in subscripts.iter().rev().enumerate() {
            if level > 0 && copies(&selection) {
                return refuse(
                    "index arrays and masks select a copy: NumPy stores into that copy, not the array; \
                     put them in the last subscript"
                        .into(),
                    *at,
                );
            }
            if level + 1 < subscripts.len() {
                selection = self.index(selection, items, *at)?;
            }
        }
        let combine = match op {
            AssignOp::Set => Combine::Set,
            AssignOp::Add => Combine::Add,
            AssignOp::Mul => Combine::Mul,
        };
        // A store through a mask: its box, before the value (the subscript is checked first).
        let boxed = match self.masks.stores_read_masks {
            true => self.mask_box(selection.clone(), last_items, last_at)?,
            false => None,
        };
        let value_value = self.value_expr(value)?;
        // Every axis given an integer (no `...`): NumPy's scalar path sets the one element from
        // a scalar, not by broadcasting.
        let one_element = self.integers_alone(&selection, last_items);
        let bool_element = one_element && base.ty.dtype == DType::Bool;
        let list = matches!(value.kind, ExprKind::List(_));
        let (combine, value_value) = match (bool_element, &value.kind) {
            (true, ExprKind::List(items)) => {
                bool_from_list(combine, items.is_empty(), value_value, value.span)?
            }
            _ => (combine, value_value),
        };
        let (combine, value_value) = match bool_element && combine != Combine::Set {
            true => self.bool_scalar_update(combine, value_value, value.span)?,
            false => (combine, value_value),
        };
        self.note_setitem_scalar(&value_value, &base, combine, last_items);
        let value =
            self.store_value(value_value, &base, ValueOf::Store { combine, one_element }, value.span)?;
        // One value for every update (a scalar, or one element, which broadcasts to any
        // selection): through a mask, the box the mask spans is written where the mask is
        // `True`, and none of its positions is needed.
        let one_value = value.ty.shape.len() <= 1 && value.ty.shape.iter().all(|d| d.as_const() == Some(1));
        let (selection, when) = match boxed.filter(|_| one_value) {
            Some((boxed, mask, at)) => {
                let rank = boxed.ty.shape.len();
                let dims = (0..at)
                    .map(|_| ViewDim::NewAxis)
                    .chain(mask.ty.shape.iter().map(ViewDim::whole))
                    .chain((at + mask.ty.shape.len()..rank).map(|_| ViewDim::NewAxis))
                    .collect();
                let span = mask.span;
                (boxed, Some(Box::new(view(mask, dims, span)?)))
            }
            None => {
                let whole_mask = combine == Combine::Set && self.one_whole_mask(&selection, last_items);
                let selection = self.index(selection, last_items, last_at)?;
                let (depth, rank) = (value.ty.shape.len(), selection.ty.shape.len());
                match one_element && depth > 0 {
                    true => self.element_from_sequence(&value, &base)?,
                    false if depth > 1 && whole_mask => {
                        return err(K::StoreMaskValueRank { rank: depth }, value.span);
                    }
                    // A view's `=` makes a list an array of at most the view's rank (index
                    // arrays and masks broadcast it as any array).
                    false if list && depth > rank && combine == Combine::Set && !copies(&selection) => {
                        return err(K::StoreListDepth { depth, rank }, value.span);
                    }
                    false => self.broadcast_to_selection(&value, &selection, combine)?,
                }
                (selection, None)
            }
        };
        let kind = TExprKind::Store {
            target: Box::new(base.clone()),
            selection: Box::new(selection),
            value: Box::new(value),
            combine,
            when,
        };
        node(kind, base.ty.clone(), span)
    }

    /// NumPy's scalar path for `x[i, j] += v` or `*= v` on a bool array, where every axis is
    /// given an integer (no `...`): `x[i, j]` is a NumPy bool scalar, which an integer `v`
    /// makes an integer (int64 for a Python int, else `v`'s dtype), and the setitem stores that
    /// integer's truth. So `+= 0` keeps the element, `+=` of any other integer makes it `True`
    /// but one of all ones (`-1`, a `uint8` 255), which flips it (`True + -1` is 0); `*= 0`
    /// makes it `False` and any other keeps it. Returned as the store of a bool that does the
    /// same; anything else is returned as it is (a tensor, which [`Checker::store_value`] and
    /// [`Checker::element_from_sequence`] judge).
    fn bool_scalar_update(
        &mut self,
        combine: Combine,
        value: super::check::Value,
        span: Span,
    ) -> Result<(Combine, super::check::Value), SemaError> {
        use super::check::Value;
        let integer = match &value {
            Value::Int(v) => Some((i128::from(*v), DType::I64)),
            Value::Tensor(t) if self.bound_scalar(t) => Some((self.value_of(t)?[0], t.ty.dtype)),
            _ => None,
        };
        let Some((v, dtype)) = integer else { return Ok((combine, value)) };
        // A Python `int` past i64 (bound as a u64): NumPy computes it with the bool in int64,
        // which does not hold it (OverflowError).
        let python_int = matches!(&value, Value::Tensor(t)
            if matches!(&t.kind, TExprKind::Input(name) if self.values.is_python_int(name)));
        if python_int && i64::try_from(v).is_err() {
            let target = DType::I64.name().into();
            return err(K::StoreLiteralRange { value: v.to_string(), target }, span);
        }
        let all_ones = v == -1 || (!dtype.is_signed() && v == (1i128 << (8 * dtype.width())) - 1);
        let (combine, stored) = match (combine, v) {
            (Combine::Mul, 0) => (Combine::Set, false),
            (Combine::Mul, _) => (Combine::Mul, true),
            (_, 0) => (Combine::Add, false),
            _ if all_ones => {
                let reason = format!(
                    "NumPy adds {v} to a bool scalar as an integer and stores the sum's truth, which flips \
                     the element: slc's stores have no negation"
                );
                return err(K::StoreLiteral { reason }, span);
            }
            _ => (Combine::Set, true),
        };
        Ok((combine, Value::Tensor(const_tensor(bool_tensor(&[], &[stored]), span))))
    }

    /// A stored value (or a scatter's updates) as an expression: a literal may hold floats
    /// (`a[m] = 0.5`, `a[:2] = [1, 2.5]`), which no other expression may.
    pub(in crate::sema) fn value_expr(&mut self, e: &ast::Expr) -> Result<super::check::Value, SemaError> {
        let literal = matches!(e.kind, ExprKind::Float(_) | ExprKind::Neg(_) | ExprKind::List(_));
        let outer = std::mem::replace(&mut self.float_literals, literal);
        let value = self.expr(e);
        self.float_literals = outer;
        value
    }

    /// The value as a tensor of the target's dtype: a literal (an integer, `True`/`False`, a
    /// list) converted as NumPy converts a Python `int` (refused where an integer type cannot
    /// hold it), a float literal as it converts a Python `float`, and a list with a float as
    /// it casts a float64 array ([`float_element`]); any other tensor must already have the
    /// target's dtype. `in_arithmetic`: the value of `+=`/`*=`. Of those, an integer list
    /// literal is one NumPy makes an int64 array and combines in int64 before casting back
    /// `same_kind` — wrapping into a signed target, refused by an unsigned one.
    pub(in crate::sema) fn store_value(
        &mut self,
        v: super::check::Value,
        target: &TExpr,
        of: ValueOf,
        span: Span,
    ) -> Result<TExpr, SemaError> {
        let in_arithmetic = matches!(of, ValueOf::Store { combine, .. } if combine != Combine::Set);
        let v = self.to_tensor_value(v, span)?;
        let dtype = target.ty.dtype;
        // A Python `int` passed by name (a 0-d i64 bound with its value, or a u64 from 2^63 up)
        // is the literal it holds, as NumPy takes `x[i] = k` ("weak", NEP 50); its value is
        // recorded as read. Any other 0-d integer is a NumPy array or scalar, strongly typed: a
        // tensor, cast as one.
        let python_int = matches!(&v.kind, TExprKind::Input(name) if self.values.is_python_int(name))
            && matches!(v.ty.dtype, DType::I64 | DType::U64)
            && v.ty.shape.is_empty();
        if python_int && v.ty.dtype != dtype && !self.bound_scalar(&v) {
            let why = "a Python int is converted by its value, which a kernel compiled for any value does not know: give it when compiling, or pass the value in the target's dtype";
            return err(
                K::StoreDtype {
                    op: "store",
                    value: v.ty.dtype.name().into(),
                    target: dtype.name().into(),
                    why,
                },
                span,
            );
        }
        let v = match v.ty.dtype != dtype && python_int {
            true => {
                let value = self.value_of(&v)?[0];
                if let TExprKind::Input(name) = &v.kind {
                    self.read.python_ints.insert(name.to_string());
                }
                let scalar = match (i64::try_from(value), u64::try_from(value)) {
                    (Ok(value), _) => Tensor::scalar_i64(value),
                    (_, Ok(value)) => Tensor::from_bytes(DType::U64, &[], &value.to_le_bytes())
                        .expect("eight bytes are one u64"),
                    _ => {
                        return err(
                            K::StoreLiteralRange { value: value.to_string(), target: dtype.name().into() },
                            span,
                        );
                    }
                };
                const_tensor(scalar, v.span)
            }
            false => v,
        };
        // A 0-d float bound with its value (a Python `float`, or a NumPy float scalar, passed by
        // name) is stored as NumPy stores it (a literal's conversion). In `+=`/`*=` it may be a
        // strong NumPy scalar, which NumPy combines in its own precision and rounds once: as
        // for a list's elements, only a value of the target's dtype is sure to give the same.
        let bound_float = v.ty.dtype != dtype && self.bound_float(&v);
        let v = match bound_float {
            true => const_tensor(Tensor::scalar_f64(self.float_value_of(&v)), v.span),
            false => v,
        };
        if v.ty.dtype == dtype {
            return Ok(v);
        }
        let TExprKind::Const(t) = &v.kind else {
            return tensor_of_another_dtype(v, dtype, of, span);
        };
        let mut bytes = Vec::with_capacity(t.numel() * dtype.width());
        if t.dtype() == DType::F64 {
            let scalar = t.shape().is_empty() && !bound_float;
            for v in t.bytes().chunks_exact(8) {
                let v = f64::from_le_bytes(v.try_into().expect("chunks of eight"));
                let element = float_element(dtype, v, in_arithmetic, scalar);
                bytes.extend(element.map_err(|kind| SemaError::new(kind, span))?);
            }
            let converted = Tensor::from_bytes(dtype, t.shape(), &bytes).expect("one element per value");
            return Ok(const_tensor(converted, span));
        }
        // NumPy adds or multiplies a bool array only by bools: an integer makes it int64,
        // which it does not cast back (a single element is NumPy's scalar path, taken before:
        // `bool_scalar_update`).
        if in_arithmetic && dtype == DType::Bool && t.dtype() != DType::Bool {
            let reason = "cannot combine integers into bool: NumPy computes them in int64, which it does not cast back to bool";
            return err(K::StoreLiteral { reason: reason.into() }, span);
        }
        // A scalar (a literal, or a Python `int` by name) is "weak": converted, then combined.
        let in_arithmetic = in_arithmetic && !t.shape().is_empty();
        for i in 0..t.numel() {
            let bit = || (t.dtype() == DType::Bool).then(|| i128::from(t.bytes()[i]));
            let x = t.int_at(i).or_else(bit);
            let wrapped = |x: i128| match in_arithmetic && t.dtype() == DType::I64 {
                // (a + v) in int64, cast back: v's low bits are what is added.
                true if dtype.is_signed() => Some(x.to_le_bytes()[..dtype.width()].to_vec()),
                true if dtype.is_integer() => None,
                _ => literal_element(dtype, x),
            };
            if in_arithmetic && t.dtype() == DType::I64 && dtype.is_integer() && !dtype.is_signed() {
                return err(K::StoreListArithmetic { target: dtype.name().into() }, span);
            }
            // Into a float target NumPy combines the int64 list in float64, as a float list:
            // the same rule, each element a value of the target's dtype.
            if let Some(x) = x.filter(|_| in_arithmetic && !dtype.is_integer() && dtype != DType::Bool) {
                let exact = (x as f64) as i128 == x;
                let element = match exact {
                    true => float_element(dtype, x as f64, true, false),
                    false => Err(K::StoreLiteral {
                        reason: format!(
                            "cannot combine {x} into {} exactly: NumPy combines it in float64",
                            dtype.name()
                        ),
                    }),
                };
                bytes.extend(element.map_err(|kind| SemaError::new(kind, span))?);
                continue;
            }
            let Some(element) = x.and_then(wrapped) else {
                let shown = x.map_or_else(|| "?".into(), |x| x.to_string());
                return err(K::StoreLiteralRange { value: shown, target: dtype.name().into() }, span);
            };
            bytes.extend(element);
        }
        let converted = Tensor::from_bytes(dtype, t.shape(), &bytes)
            .map_err(|_| SemaError::new(K::TooLarge { shape: format!("{:?}", t.shape()) }, span))?;
        Ok(const_tensor(converted, span))
    }

    /// Records a 0-d integer input that `=` casts into a signed integer target through basic
    /// subscripts ([`super::InputsRead::setitem_scalars`]): where the caller gives a NumPy
    /// integer scalar there, NumPy converts it by its value, and the Python package checks it.
    fn note_setitem_scalar(
        &mut self,
        value: &super::check::Value,
        target: &TExpr,
        combine: Combine,
        items: &[ast::Item],
    ) {
        let super::check::Value::Tensor(v) = value else { return };
        let TExprKind::Input(name) = &v.kind else { return };
        let dtype = target.ty.dtype;
        if combine == Combine::Set
            && dtype.is_signed()
            && v.ty.shape.is_empty()
            && v.ty.dtype.is_integer()
            && v.ty.dtype != dtype
            && !self.values.is_python_int(name)
            && items.iter().all(|item| self.basic_item(item))
        {
            self.read.setitem_scalars.insert(name.to_string(), dtype);
        }
    }

    /// Whether `items` name one element of `selection` by integers alone: one per axis, each an
    /// integer or a 0-d integer tensor (no slice, `...`, `None`, index array or mask).
    fn integers_alone(&mut self, selection: &TExpr, items: &[ast::Item]) -> bool {
        items.len() == selection.ty.shape.len() && items.iter().all(|item| self.integer_item(item))
    }

    /// Whether `item` is one of NumPy's basic subscripts: a slice, `...`, `None`, or an
    /// integer ([`Self::integer_item`]); not an index array or a mask.
    fn basic_item(&mut self, item: &ast::Item) -> bool {
        !matches!(item.kind, ast::ItemKind::Expr(_)) || self.integer_item(item)
    }

    /// Whether `item` is an integer, or a 0-d integer tensor, which NumPy indexes with as with
    /// an integer. Its value is not read; an item that fails to check is left to the
    /// subscript's own check.
    fn integer_item(&mut self, item: &ast::Item) -> bool {
        use super::check::Value;
        match &item.kind {
            ast::ItemKind::Expr(e) => match self.expr(e) {
                Ok(Value::Int(_) | Value::Sym(_)) => true,
                Ok(Value::Tensor(t)) => t.ty.shape.is_empty() && t.ty.dtype.is_integer(),
                _ => false,
            },
            _ => false,
        }
    }

    /// Whether `items` are one mask (or list of bools) over every axis of `before`, the
    /// selection they subscript: NumPy's boolean assignment, which takes a value of at most one
    /// dimension. Values are not read, as in [`Self::integers_alone`].
    fn one_whole_mask(&mut self, before: &TExpr, items: &[ast::Item]) -> bool {
        use super::check::Value;
        let [item] = items else { return false };
        let ast::ItemKind::Expr(e) = &item.kind else { return false };
        matches!(self.expr(e), Ok(Value::Tensor(t)) if t.ty.dtype == DType::Bool && t.ty.shape.len() == before.ty.shape.len())
    }

    /// A value of rank 1 or more for one element named by integers alone, which NumPy's
    /// scalar path refuses as a sequence (ValueError) — but for a bool element, which takes
    /// the truth of a one-element array.
    fn element_from_sequence(&mut self, value: &TExpr, target: &TExpr) -> Result<(), SemaError> {
        let refusal = || {
            let shape = format!("{}", ShapeDisplay(&value.ty.shape));
            SemaError::new(
                K::StoreSequence { value: shape, target: target.ty.dtype.name().into() },
                value.span,
            )
        };
        if target.ty.dtype != DType::Bool {
            return Err(refusal());
        }
        let one = SymExpr::constant(1);
        for d in &value.ty.shape {
            self.require(Cond::eq(d, &one), refusal)?;
        }
        Ok(())
    }

    /// NumPy's rule for a stored value: aligned at the last dimension, each of its dims equal
    /// to the selection's or 1 (a symbol either, per call), and any dims beyond the selection's
    /// rank 1 — none for `+=` and `*=`, whose in-place operation cannot grow the selection
    /// ("non-broadcastable output").
    fn broadcast_to_selection(
        &mut self,
        value: &TExpr,
        selection: &TExpr,
        combine: Combine,
    ) -> Result<(), SemaError> {
        let (v, s) = (&value.ty.shape, &selection.ty.shape);
        if combine != Combine::Set && v.len() > s.len() {
            return Err(broadcast_refusal(value, selection));
        }
        let one = SymExpr::constant(1);
        let extra = v.len().saturating_sub(s.len());
        for d in &v[..extra] {
            self.require(Cond::eq(d, &one), || broadcast_refusal(value, selection))?;
        }
        for (d, n) in v[extra..].iter().zip(&s[s.len() - (v.len() - extra)..]) {
            match d.as_const() {
                Some(1) => {}
                // A size that is not 1 must be the selection's.
                Some(_) => self.require(Cond::eq(d, n), || broadcast_refusal(value, selection))?,
                // A symbol may be 1 (stretched: the lowering reads it at 0 then) or the
                // selection's size, decided per call.
                None => {
                    let stretched = SymExpr::select(Cond::eq(d, &one), n, d);
                    self.require(Cond::eq(&stretched, n), || broadcast_refusal(value, selection))?;
                }
            }
        }
        Ok(())
    }
}

/// The float `v` of a store's literal value as an element of `dtype`, as NumPy stores it: a
/// scalar is a Python `float` (into an integer, `int(v)`, which must fit; NaN and infinities
/// have none), a list's element one of a float64 array (cast the same way, where NumPy's cast
/// of a value out of range is undefined: refused). A bool is `v != 0`; a float the nearest
/// value (f16 and bf16 directly, as NumPy and ml_dtypes round); a complex number `v + 0j`.
///
/// In `+=` and `*=` NumPy computes in float64, which it does not cast back to an integer or
/// bool (refused); into a float target a scalar is converted first (a Python float is "weak")
/// while a list's float64 array is combined in float64 and rounded once (and ml_dtypes
/// combines a bf16 with a scalar in float32). slc combines in the target's dtype, which gives
/// the same result exactly when every element is one of that dtype: a list element (or a bf16
/// scalar) that is not is refused (`0.1` into f32), not rounded twice.
pub fn float_element(dtype: DType, v: f64, in_arithmetic: bool, scalar: bool) -> Result<Vec<u8>, K> {
    let target = dtype.name();
    if in_arithmetic && (dtype.is_integer() || dtype == DType::Bool) {
        return Err(K::StoreLiteral {
            reason: format!(
                "cannot combine the float {v} into {target}: NumPy computes it in float64, which it does not cast back to {target}"
            ),
        });
    }
    let element = match dtype {
        DType::Bool => vec![u8::from(v != 0.0)],
        d if d.is_integer() => {
            // NaN is NumPy's ValueError, an infinity its OverflowError.
            if !v.is_finite() {
                let reason = format!("cannot store the float {v} into {target}: it has no integer value");
                return Err(match v.is_nan() {
                    true => K::StoreLiteral { reason },
                    false => K::StoreFloatRange { reason },
                });
            }
            // NumPy converts through a Python int (`int(v)`), which must fit the target:
            // OverflowError otherwise. (Past i128 `as` saturates, which no dtype holds either.)
            let element = literal_element(dtype, v.trunc() as i128);
            element.ok_or_else(|| K::StoreFloatRange {
                reason: format!("the float {v} is out of bounds for {target}"),
            })?
        }
        DType::F16 => slc_runtime::f16_of_f64(v).to_le_bytes().to_vec(),
        DType::BF16 => slc_runtime::bf16_of_f64(v).to_le_bytes().to_vec(),
        DType::F32 => (v as f32).to_le_bytes().to_vec(),
        DType::F64 => v.to_le_bytes().to_vec(),
        DType::C64 => [(v as f32).to_le_bytes(), 0f32.to_le_bytes()].concat(),
        DType::C128 => [v.to_le_bytes(), 0f64.to_le_bytes()].concat(),
        _ => unreachable!("every dtype is covered above"),
    };
    // (ml_dtypes computes a bfloat16 with a Python float in float32, the float unrounded.)
    if in_arithmetic && (!scalar || dtype == DType::BF16) {
        let back = match dtype {
            DType::F16 => half::f16::from_le_bytes([element[0], element[1]]).to_f64(),
            DType::BF16 => half::bf16::from_le_bytes([element[0], element[1]]).to_f64(),
            DType::F32 | DType::C64 => {
                f32::from_le_bytes(element[..4].try_into().expect("four bytes")) as f64
            }
            _ => v,
        };
        if back != v && !(v.is_nan() && back.is_nan()) {
            return Err(K::StoreLiteral {
                reason: format!(
                    "cannot combine {v} into {target} exactly: NumPy combines it in a wider type, and {v} is not a {target} value"
                ),
            });
        }
    }
    Ok(element)
}

/// A list literal stored into one bool element named by integers alone, as NumPy's scalar
/// path takes it: `=` stores the list's truth (`x[0, 1] = [0]` is `True`: the list is not
/// empty), `+=` adds its one element as the integer or bool it is, and `*=` is refused (NumPy
/// multiplies the list as a Python sequence, a TypeError).
fn bool_from_list(
    combine: Combine,
    empty: bool,
    value: super::check::Value,
    span: Span,
) -> Result<(Combine, super::check::Value), SemaError> {
    use super::check::Value;
    match (combine, &value) {
        (Combine::Set, _) => {
            Ok((Combine::Set, Value::Tensor(const_tensor(bool_tensor(&[], &[!empty]), span))))
        }
        (Combine::Add, Value::Tensor(t)) => match &t.kind {
            TExprKind::Const(list) if list.numel() == 1 && list.dtype().is_integer() => {
                let element = list.int_at(0).and_then(|v| i64::try_from(v).ok());
                Ok((combine, element.map_or(value, Value::Int)))
            }
            _ => Ok((combine, value)),
        },
        _ => {
            let reason =
                "NumPy multiplies a list by a bool scalar as a Python sequence (a TypeError): give a scalar";
            err(K::StoreLiteral { reason: reason.into() }, span)
        }
    }
}

/// What a value is stored by: an assignment (`=`, `+=`, `*=`; into one element named by
/// integers alone or not), or a scatter operator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(in crate::sema) enum ValueOf {
    Store { combine: Combine, one_element: bool },
    Scatter,
}

/// A tensor value of another dtype than the target's: a store casts it per call, as NumPy
/// casts it (`=`: `unsafe`, its lowering's [`Derived::Cast`](crate::plan::Derived)), where
/// that gives NumPy's values ([`slc_runtime::combines_as_cast`]); ONNX's scatters refuse it.
fn tensor_of_another_dtype(v: TExpr, dtype: DType, of: ValueOf, span: Span) -> Result<TExpr, SemaError> {
    let (value, target) = (v.ty.dtype, dtype);
    let why = match of {
        ValueOf::Scatter => "a scatter's updates have its data's dtype, as ONNX requires",
        ValueOf::Store { combine: Combine::Set, .. } => return Ok(v),
        _ if slc_runtime::casts_safely(value, target) => return Ok(v),
        // NumPy's scalar path computes one element in the promoted type and stores the NumPy
        // scalar it makes: into an unsigned element it wraps, as casting first does (a signed
        // value too, but into u64, with which a signed one promotes to float64); into a
        // signed one it raises OverflowError where the result is outside the target's range,
        // which is known only when it runs.
        ValueOf::Store { one_element: true, .. } if target.is_integer() && value.is_integer() => {
            match (target.is_signed(), target == DType::U64 && value.is_signed()) {
                (false, false) => return Ok(v),
                (false, true) => {
                    "NumPy computes u64 with a signed integer in float64, which it does not cast back exactly"
                }
                (true, _) => {
                    "NumPy computes one element in a wider integer and raises where the result is outside the target's range, which slc cannot know before it runs"
                }
            }
        }
        _ if slc_runtime::combines_as_cast(target, value) => return Ok(v),
        _ if target == DType::Bool => {
            "NumPy computes bools with other numbers in another dtype, which it does not cast back to bool"
        }
        _ if target.is_integer() && !value.is_integer() => {
            "NumPy computes it in a float dtype, which it does not cast back to an integer"
        }
        _ if target.is_integer() => {
            "NumPy computes it in a signed (or float) dtype, which it does not cast back to an unsigned one"
        }
        _ if value.is_complex() && !target.is_complex() => {
            "NumPy computes it in complex numbers, which it does not cast back to real ones"
        }
        _ => "NumPy computes it in a wider dtype and rounds once; casting first would round twice",
    };
    let op = match of {
        ValueOf::Scatter => "scatter",
        ValueOf::Store { combine: Combine::Mul, .. } => "multiply",
        ValueOf::Store { .. } => "add",
    };
    err(K::StoreDtype { op, value: value.name().into(), target: target.name().into(), why }, span)
}

fn broadcast_refusal(value: &TExpr, selection: &TExpr) -> SemaError {
    let shape = |t: &TExpr| format!("{}", ShapeDisplay(&t.ty.shape));
    SemaError::new(K::StoreBroadcast { value: shape(value), selection: shape(selection) }, value.span)
}

/// Whether the selection so far is a copy in NumPy: an advanced index on its data path.
fn copies(t: &TExpr) -> bool {
    match &t.kind {
        TExprKind::View { base, .. } => copies(base),
        TExprKind::Input(_) => false,
        _ => true,
    }
}
