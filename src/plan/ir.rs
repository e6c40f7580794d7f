//! The normalized plan IR: the contract between every front end and every back end.
//!
//! A plan computes one dense, C-ordered output tensor. Each output element is read from one
//! place, given by an [`Access`]: an affine function of the output coordinates over one buffer,
//! plus zero or more *indirect* terms whose value is loaded from another buffer (an index
//! tensor) through an access of its own:
//!
//! ```text
//! address(o) = base + Σ_d o_d·strides[d] + Σ_t t.stride · norm_t(load(t.index, o))
//! out[o]     = buffer[address(o)]          (or 0 when a `zero`-mode index is out of range)
//! ```
//!
//! All surface forms (NumPy indexing, strided_slice, slice, the gathers, slice1) lower to
//! this one shape, and compose inside it: a slice of a slice is a new affine map, a slice of a
//! gather rewrites the strides of the gather's data *and* index accesses, a gather of a gather
//! nests an indirect term inside an index access. Nothing is ever materialized in between.
//!
//! Offsets and strides count elements of the buffer's own dtype (back ends multiply by the
//! width). In a concrete plan (`Plan`, i.e. `Plan<i64>`) every quantity is an i64 and `verify`
//! proves that no address leaves its buffer. A *generic* plan (`Plan<SymExpr>`, over
//! `types::sym`) has symbolic integers: its inputs' dims are symbols (`a: f32[N, M]`) or
//! constants, run-time scalars appear as `k[()]`, and its [`Requirement`]s are the conditions
//! the compiler could not prove, checked once per call by the *shape function*. Binding the
//! symbols ([`Plan::bind`]) gives the concrete plan of one call.
//!
//! Besides the output access, a plan carries [`Check`]s: NumPy raises on *any* out-of-range
//! value in an index array, even when a later slice drops the element that holds it
//! (`a[idx][1:]`), so `error`-mode gathers check their whole index tensor before the kernel runs.

use crate::source::Span;
use crate::types::sym::{Cond, Env, MAX_DIM, Sym, SymExpr};
use crate::types::{Combine, OobMode};
use slc_runtime::{DType, Tensor};

/// A buffer the plan reads: an input bound by name, or a constant carried in the plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum BufferId {
    Input(usize),
    Const(usize),
}

/// A tensor argument of the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct InputDecl<D = i64> {
    pub name: String,
    pub dtype: DType,
    pub shape: Vec<D>,
    /// Element strides of a strided view (NumPy's `x[::2]`, `x.T`, negative steps), read in
    /// place: accesses address elements relative to element `[0, ..., 0]`, which need not be
    /// the lowest one. `None`: dense and C-ordered. Never the strides of a dense layout, and 0
    /// along unit axes, so that equal layouts make equal plans. Always `None` in a generic plan,
    /// except one lifted from a verified concrete plan (`VerifiedPlan::lift`: all constants).
    pub strides: Option<Vec<i64>>,
    /// `Some`: not given by the caller but derived per call from an input the caller gives
    /// ([`Derived`]).
    pub derived: Option<Derived>,
}

/// How an input is derived per call from another input of the plan, the one the caller gives.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Derived {
    /// The `nonzero()` of the bool input `mask` (an i64 `[count, max(1, rank)]`:
    /// [`nonzero`](super::derive::nonzero)).
    Nonzero { mask: String },
    /// The input `from` cast to this input's dtype as NumPy's `astype` casts it
    /// ([`slc_runtime::cast()`]): a store's value of another dtype. The same shape and strides
    /// (a strided input's window is cast element by element).
    Cast { from: String },
}

impl<D> InputDecl<D> {
    /// A dense, C-ordered input.
    pub fn dense(name: impl Into<String>, dtype: DType, shape: Vec<D>) -> InputDecl<D> {
        InputDecl { name: name.into(), dtype, shape, strides: None, derived: None }
    }

    /// The mask this input is the `nonzero()` of, if it is one.
    pub fn nonzero_of(&self) -> Option<&str> {
        match &self.derived {
            Some(Derived::Nonzero { mask }) => Some(mask),
            _ => None,
        }
    }

    /// The input this one is a cast of, if it is one.
    pub fn cast_of(&self) -> Option<&str> {
        match &self.derived {
            Some(Derived::Cast { from }) => Some(from),
            _ => None,
        }
    }

    /// The name of the input the caller gives for this one: its own, or the one it derives from.
    pub fn given_name(&self) -> &str {
        match &self.derived {
            None => &self.name,
            Some(Derived::Nonzero { mask: from } | Derived::Cast { from }) => from,
        }
    }
}

impl InputDecl {
    /// The offsets of the lowest and the highest element relative to element `[0, ..., 0]`
    /// (in elements), or `None` when there is no element; `None` too when they overflow i64
    /// (verification rejects such a plan).
    pub fn window(&self) -> Option<(i64, i64)> {
        if self.shape.contains(&0) {
            return None;
        }
        let Some(strides) = &self.strides else {
            return crate::types::checked_numel(&self.shape).map(|n| (0, n - 1));
        };
        let (mut lo, mut hi) = (0i128, 0i128);
        for (&d, &s) in self.shape.iter().zip(strides) {
            let reach = (d as i128 - 1) * s as i128;
            if reach < 0 { lo += reach } else { hi += reach }
        }
        Some((i64::try_from(lo).ok()?, i64::try_from(hi).ok()?))
    }

    /// The shape of the tensor that carries this input to an executor: its own when dense; for
    /// a strided view, its window (every element from the lowest to the highest) as one axis.
    pub fn tensor_shape(&self) -> Vec<i64> {
        match (&self.strides, self.window()) {
            (None, _) => self.shape.clone(),
            (Some(_), Some((lo, hi))) => vec![hi - lo + 1],
            (Some(_), None) => vec![0],
        }
    }
}

/// A constant tensor (index list literals), stored in the plan.
#[derive(Debug, Clone, PartialEq)]
pub struct ConstDecl {
    pub tensor: Tensor,
}

/// An affine read of `buffer` over some coordinate space, plus indirect terms.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Access<D = i64> {
    pub buffer: BufferId,
    pub base: D,
    /// One stride per coordinate dimension (signed; 0 for broadcast / newaxis / unit dims).
    pub strides: Vec<D>,
    pub terms: Vec<Indirect<D>>,
}

impl<D> Access<D> {
    /// The accesses of this tree: this one and every index access below it.
    pub fn accesses(&self) -> usize {
        1 + self.terms.iter().map(|t| t.index.accesses()).sum::<usize>()
    }

    /// Every buffer this access reads: its own, then its index accesses' (depth first).
    pub fn buffers(&self) -> Vec<BufferId> {
        let mut all = vec![self.buffer];
        for t in &self.terms {
            all.extend(t.index.buffers());
        }
        all
    }

    /// Levels of index accesses nested in this one (0 without terms).
    pub fn nesting(&self) -> usize {
        self.terms.iter().map(|t| 1 + t.index.nesting()).max().unwrap_or(0)
    }
}

/// Whether every value of `index` (an integer tensor) is an index in `[-len, len)`: a check
/// of a constant index that holds is proven once, when compiling.
pub fn all_in_range(index: &Tensor, len: i64) -> bool {
    let (dtype, len) = (index.dtype(), len as i128);
    index
        .bytes()
        .chunks_exact(dtype.width())
        .all(|b| dtype.int_from_le(b).is_some_and(|v| -len <= v && v < len))
}

/// Whether `index` reads only one column of a mask's derived `nonzero()` positions (an input
/// of `inputs` derived as [`Derived::Nonzero`]), and the mask's dim of that column is `len`: every value is
/// then in `[0, len)` by construction, a check proven as a constant index's is.
pub fn counts_mask_dim(inputs: &[InputDecl<SymExpr>], index: &Access<SymExpr>, len: &SymExpr) -> bool {
    let BufferId::Input(id) = index.buffer else { return false };
    let Some(mask) = inputs[id].nonzero_of() else { return false };
    let Some(mask) = inputs.iter().find(|d| d.name == *mask && d.derived.is_none()) else { return false };
    let columns = mask.shape.len() as i64;
    let (Some(base), true) = (index.base.as_const(), index.terms.is_empty() && columns > 0) else {
        return false;
    };
    let in_column = |s: &SymExpr| s.as_const().is_some_and(|s| s % columns == 0);
    index.strides.iter().all(in_column) && (0..columns).contains(&base) && mask.shape[base as usize] == *len
}

/// `stride · norm(load(index))`: one gathered coordinate.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Indirect<D = i64> {
    /// Reads the index value; over the same coordinates as the access that holds this term.
    pub index: Box<Access<D>>,
    /// The size of the gathered axis: the bound for `mode`.
    pub len: D,
    pub stride: D,
    pub mode: OobMode,
    /// The gather in the program text that this term reads for: its call, or the index array of
    /// a subscript. A back end that cannot honour the term points there.
    pub origin: Origin,
}

/// Every value of `index` over `shape` must satisfy `-len ≤ j < len`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Check<D = i64> {
    pub index: Access<D>,
    pub shape: Vec<D>,
    pub len: D,
    /// The axis the index selects on, for the error message.
    pub axis: usize,
    /// The index expression in the program text, where a failed check points.
    pub origin: Origin,
}

/// Where a part of the plan came from in the program text. Not part of what the plan computes:
/// plans that differ only in their origins are equal, print alike and share compiled kernels.
#[derive(Debug, Clone, Copy, Default)]
pub struct Origin(pub Option<Span>);

impl PartialEq for Origin {
    fn eq(&self, _: &Origin) -> bool {
        true
    }
}

impl Eq for Origin {}

impl std::hash::Hash for Origin {
    fn hash<H: std::hash::Hasher>(&self, _: &mut H) {}
}

/// A condition a generic plan's shape function checks once per call, before anything runs: one
/// the compiler could not decide for every shape (an integer index against a symbolic axis, two
/// dims that must agree, an address bound it could not prove). Concrete plans have none.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Requirement {
    pub cond: Cond,
    /// What failed, for the error a call reports (`index 5 is out of bounds for axis 0`).
    pub message: String,
    /// Where in the program text it comes from.
    pub origin: Origin,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Plan<D = i64> {
    pub inputs: Vec<InputDecl<D>>,
    pub consts: Vec<ConstDecl>,
    /// The shape function's conditions, in order; always empty in a concrete plan.
    pub requires: Vec<Requirement>,
    pub checks: Vec<Check<D>>,
    pub dtype: DType,
    pub shape: Vec<D>,
    /// Over the output coordinates. For an empty output it is canonical: base 0, strides 0, no terms.
    pub output: Access<D>,
    /// A store plan's updates, applied after the output is read (see [`Store`]).
    pub store: Option<Store<D>>,
}

/// The updates of a store plan (`a[idx] = v`; docs/semantics.md, Stores). Its `output` access is
/// a whole read of a dense input, the *target* (base 0, row-major strides, no terms), so the
/// output starts as the target's copy — or of a strided target's window, one axis
/// ([`Plan::stores_through_view`], `lower_through_view`: from the view's lowest element, the
/// output access's base, which a negative step puts below element `[0, ..., 0]`); then for
/// every coordinate `u` of `shape`, in C order,
///
/// ```text
/// out[dest(u) - output.base] = combine(target[dest(u)], value(u))
/// ```
///
/// `dest` addresses the target as loads address it (index terms and masks' `nonzero()`
/// included); less the output's base (0 for a dense target) it is the output's element.
/// `old` is read from
/// the target, never from the output being written: `+=` over duplicates adds once (NumPy's
/// buffered semantics), and with `set` the last write in C order wins — except for a scatter's
/// accumulating reductions ([`Combine::accumulates`]), whose `old` is the output's element as
/// updated so far.
#[derive(Debug, Clone, PartialEq)]
pub struct Store<D = i64> {
    /// The update coordinates: the selection's shape.
    pub shape: Vec<D>,
    /// Where each update writes, in the target's (= the output's) elements.
    pub dest: Access<D>,
    /// What it writes: a buffer of the output's dtype, read over the update coordinates
    /// (broadcast dims have stride 0).
    pub value: Access<D>,
    pub combine: Combine,
    /// A store through a mask whose value is the same for every update (`a[m] = 0`,
    /// `a[m, 1:] += 1`): the mask (a bool buffer) read over the update coordinates, which then
    /// walk the box the mask's axes span, not its `True` positions; an update applies where its
    /// byte is nonzero and leaves the element as it was elsewhere. `None`: every update applies.
    pub when: Option<Access<D>>,
}

impl<D> Store<D> {
    /// The same store with every integer mapped by `f`.
    pub fn try_map<E, X>(&self, f: &mut impl FnMut(&D) -> Result<E, X>) -> Result<Store<E>, X> {
        Ok(Store {
            shape: self.shape.iter().map(&mut *f).collect::<Result<Vec<E>, X>>()?,
            dest: self.dest.try_map(f)?,
            value: self.value.try_map(f)?,
            combine: self.combine,
            when: self.when.as_ref().map(|w| w.try_map(f)).transpose()?,
        })
    }

    /// The store's accesses: its destination, its value, and its mask where it has one.
    pub fn accesses(&self) -> impl Iterator<Item = &Access<D>> + Clone {
        [&self.dest, &self.value].into_iter().chain(&self.when)
    }
}

/// A plan whose integers are symbolic expressions (see the module documentation).
pub type GenericPlan = Plan<SymExpr>;

impl<D> Plan<D> {
    /// Levels of index accesses nested in the output access or in any check: how deeply the
    /// stages over this plan recurse.
    pub fn nesting(&self) -> usize {
        let checks = self.checks.iter().map(|c| c.index.nesting());
        let stores = self.store.iter().flat_map(|s| s.accesses()).map(Access::nesting);
        checks.chain(stores).fold(self.output.nesting(), usize::max)
    }

    /// Whether the plan stores through a view: its store's target is a strided input, and its
    /// output the target's window ([`Store`]). The interpreter, the JIT and the CUDA target run
    /// such a plan; AOT and DirectML refuse it.
    pub fn stores_through_view(&self) -> bool {
        match (&self.store, self.output.buffer) {
            (Some(_), BufferId::Input(t)) => self.inputs.get(t).is_some_and(|d| d.strides.is_some()),
            _ => false,
        }
    }

    /// Whether an access of the plan (its output, a check, a store's) reads input `i`'s
    /// elements; a mask declared only for its `nonzero()` (a derived input) is not read.
    pub fn reads_input(&self, i: usize) -> bool {
        let checks = self.checks.iter().map(|c| &c.index);
        let stores = self.store.iter().flat_map(|s| s.accesses());
        let mut accesses = checks.chain(stores).chain([&self.output]);
        accesses.any(|a| a.buffers().contains(&BufferId::Input(i)))
    }

    pub fn buffer_name(&self, id: BufferId) -> String {
        match id {
            BufferId::Input(i) => self.inputs.get(i).map_or_else(|| format!("?{i}"), |d| d.name.clone()),
            BufferId::Const(i) => format!("${i}"),
        }
    }

    pub fn buffer_dtype(&self, id: BufferId) -> Option<DType> {
        match id {
            BufferId::Input(i) => self.inputs.get(i).map(|d| d.dtype),
            BufferId::Const(i) => self.consts.get(i).map(|c| c.tensor.dtype()),
        }
    }

    /// The same plan with every integer mapped by `f` (which may fail).
    pub fn try_map<E, X>(&self, f: &mut impl FnMut(&D) -> Result<E, X>) -> Result<Plan<E>, X> {
        let dims = |v: &[D], f: &mut dyn FnMut(&D) -> Result<E, X>| {
            v.iter().map(&mut *f).collect::<Result<Vec<E>, X>>()
        };
        let mut inputs = Vec::with_capacity(self.inputs.len());
        for i in &self.inputs {
            inputs.push(InputDecl {
                name: i.name.clone(),
                dtype: i.dtype,
                shape: dims(&i.shape, f)?,
                strides: i.strides.clone(),
                derived: i.derived.clone(),
            });
        }
        let mut checks = Vec::with_capacity(self.checks.len());
        for c in &self.checks {
            checks.push(Check {
                index: c.index.try_map(f)?,
                shape: dims(&c.shape, f)?,
                len: f(&c.len)?,
                axis: c.axis,
                origin: c.origin,
            });
        }
        Ok(Plan {
            inputs,
            consts: self.consts.clone(),
            requires: self.requires.clone(),
            checks,
            dtype: self.dtype,
            shape: dims(&self.shape, f)?,
            output: self.output.try_map(f)?,
            store: self.store.as_ref().map(|s| s.try_map(f)).transpose()?,
        })
    }
}

impl<D> Access<D> {
    /// The same access with every integer mapped by `f`.
    pub fn try_map<E, X>(&self, f: &mut impl FnMut(&D) -> Result<E, X>) -> Result<Access<E>, X> {
        let mut terms = Vec::with_capacity(self.terms.len());
        for t in &self.terms {
            terms.push(Indirect {
                index: Box::new(t.index.try_map(f)?),
                len: f(&t.len)?,
                stride: f(&t.stride)?,
                mode: t.mode,
                origin: t.origin,
            });
        }
        let strides = self.strides.iter().map(&mut *f).collect::<Result<Vec<E>, X>>()?;
        Ok(Access { buffer: self.buffer, base: f(&self.base)?, strides, terms })
    }
}

/// The dimension symbols of one call: each input's dims (`dims[i]`) bound to the symbols its
/// declared shape names. A constant dim must match, a symbol named twice must get one value, a
/// dim declared as an expression of symbols other dims name must equal its value, and a dim may
/// not exceed [`MAX_DIM`].
pub fn bind_dims(inputs: &[InputDecl<SymExpr>], dims: &[&[i64]]) -> Result<Env, ShapeMismatch> {
    let failed = |message: String| ShapeMismatch::Failed { message, origin: Origin(None) };
    if dims.len() != inputs.len() {
        return Err(failed(format!("{} inputs for a plan of {}", dims.len(), inputs.len())));
    }
    let mut env = Env::new();
    // Where each symbol got its value, for the message when another axis disagrees.
    let mut first: Vec<(Sym, String)> = vec![];
    let mut derived = vec![];
    for (input, actual) in inputs.iter().zip(dims) {
        if actual.len() != input.shape.len() {
            return Err(failed(format!(
                "input `{}` has rank {}, not {}",
                input.name,
                actual.len(),
                input.shape.len()
            )));
        }
        for (axis, (declared, &n)) in input.shape.iter().zip(actual.iter()).enumerate() {
            let here = format!("axis {axis} of `{}`", input.name);
            if !(0..=MAX_DIM).contains(&n) {
                return Err(failed(format!("{here} has the size {n}, beyond {MAX_DIM}")));
            }
            match (declared.as_const(), declared.as_sym()) {
                (Some(c), _) if c != n => {
                    return Err(failed(format!("{here} has the size {n}, not {c}")));
                }
                (Some(_), _) => {}
                (None, Some(sym)) => match env.get(sym) {
                    Some(v) if v != n => {
                        let origin = first.iter().find(|(s, _)| s == sym).map_or("", |(_, w)| w);
                        return Err(failed(format!("`{sym}` is {v} ({origin}) but {n} ({here})")));
                    }
                    Some(_) => {}
                    None => {
                        env.bind(sym.clone(), n);
                        first.push((sym.clone(), here));
                    }
                },
                // An expression of the others (a buffered store's buffer: the update's dims):
                // checked once they are bound.
                (None, None) => derived.push((here, declared, n)),
            }
        }
    }
    for (here, declared, n) in derived {
        match declared.eval_i64(&env) {
            Some(v) if v == n => {}
            Some(v) => return Err(failed(format!("{here} has the size {n}, not `{declared}` = {v}"))),
            None => return Err(failed(format!("{here} is declared `{declared}`, not a name or a size"))),
        }
    }
    Ok(env)
}

/// Why a generic plan does not apply to one call's inputs.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ShapeMismatch {
    /// A requirement does not hold.
    #[error("{message}")]
    Failed { message: String, origin: Origin },
    /// An integer of the plan does not fit in i64 for these shapes, or a symbol is unbound.
    #[error("the shapes are too large: {what} does not fit in 64 bits")]
    TooLarge { what: String },
}

impl Plan {
    /// This concrete plan as a generic one whose integers are all constants.
    pub fn generic(&self) -> GenericPlan {
        self.try_map(&mut |&v| Ok::<_, std::convert::Infallible>(SymExpr::constant(v)))
            .unwrap_or_else(|e| match e {})
    }
}

impl GenericPlan {
    /// Whether every integer is a constant (a concrete plan in generic form).
    pub fn concrete(&self) -> Option<Plan> {
        if !self.requires.is_empty() {
            return None;
        }
        self.try_map(&mut |d: &SymExpr| d.as_const().ok_or(())).ok()
    }

    /// The symbols of one call: every input's dims (`dims[i]`, in plan order) bound to the
    /// symbols its declared shape names, and every run-time scalar the plan uses read with
    /// `scalar(name, index)` (`None` when the input has no such integer value). A constant dim
    /// must match, a symbol named twice must get one value, and a dim may not exceed
    /// [`MAX_DIM`].
    pub fn binding(
        &self,
        dims: &[&[i64]],
        scalar: &dyn Fn(&str, Option<u32>) -> Option<i64>,
    ) -> Result<Env, ShapeMismatch> {
        let failed = |message: String| ShapeMismatch::Failed { message, origin: Origin(None) };
        let mut env = bind_dims(&self.inputs, dims)?;
        for sym in self.symbols() {
            if let Sym::Scalar { name, index } = &sym {
                let v = scalar(name, *index)
                    .ok_or_else(|| failed(format!("the run-time integer `{sym}` has no value")))?;
                env.bind(sym.clone(), v);
            }
        }
        Ok(env)
    }

    /// Every symbol the plan uses, sorted.
    pub fn symbols(&self) -> Vec<Sym> {
        let mut out = vec![];
        for r in &self.requires {
            out.extend(r.cond.lhs().symbols());
            out.extend(r.cond.rhs().symbols());
        }
        let _ = self.try_map(&mut |d: &SymExpr| {
            out.extend(d.symbols());
            Ok::<_, ()>(())
        });
        out.sort();
        out.dedup();
        out
    }

    /// The run-time scalars the plan reads (`k[()]`), sorted: the values its callers pass
    /// beside the dims (a shape function reads them from the inputs, a CUDA launcher takes them
    /// from the host).
    pub fn scalars(&self) -> Vec<Sym> {
        self.symbols().into_iter().filter(|s| matches!(s, Sym::Scalar { .. })).collect()
    }

    /// The concrete plan of one call: checks every requirement in order and evaluates every
    /// integer under `env` (every symbol bound), as the shape function does. An empty output
    /// gets the canonical empty access, as the concrete lowering gives it.
    pub fn bind(&self, env: &Env) -> Result<Plan, ShapeMismatch> {
        for r in &self.requires {
            match r.cond.eval_i64(env) {
                Some(true) => {}
                Some(false) => {
                    return Err(ShapeMismatch::Failed { message: r.message.clone(), origin: r.origin });
                }
                None => return Err(ShapeMismatch::TooLarge { what: r.cond.to_string() }),
            }
        }
        let eval =
            &mut |d: &SymExpr| d.eval_i64(env).ok_or_else(|| ShapeMismatch::TooLarge { what: d.to_string() });
        let shape = self.shape.iter().map(&mut *eval).collect::<Result<Vec<i64>, _>>()?;
        // An empty output reads nothing: its access is the canonical one, not evaluated (its
        // offsets need not fit: an empty input may have a dim of MAX_DIM).
        let empty =
            Access { buffer: self.output.buffer, base: 0, strides: vec![0; shape.len()], terms: vec![] };
        let output = match shape.contains(&0) {
            true => empty,
            false => self.output.try_map(eval)?,
        };
        // So are a store's accesses when it updates nothing.
        let store = match &self.store {
            Some(s) => {
                let shape = s.shape.iter().map(&mut *eval).collect::<Result<Vec<i64>, _>>()?;
                let canonical = |a: &Access<SymExpr>| Access {
                    buffer: a.buffer,
                    base: 0,
                    strides: vec![0; shape.len()],
                    terms: vec![],
                };
                let (dest, value, when) = match shape.contains(&0) {
                    true => (canonical(&s.dest), canonical(&s.value), s.when.as_ref().map(canonical)),
                    false => (
                        s.dest.try_map(eval)?,
                        s.value.try_map(eval)?,
                        s.when.as_ref().map(|w| w.try_map(eval)).transpose()?,
                    ),
                };
                Some(Store { shape, dest, value, combine: s.combine, when })
            }
            None => None,
        };
        let without_output = Plan {
            output: Access {
                buffer: self.output.buffer,
                base: SymExpr::constant(0),
                strides: vec![],
                terms: vec![],
            },
            store: None,
            ..self.clone()
        };
        let plan = Plan { shape, output, store, ..without_output.try_map(eval)? };
        Ok(plan)
    }
}

impl Plan {
    /// The shape of the tensor behind a buffer (an input's [`InputDecl::tensor_shape`]).
    pub fn buffer_shape(&self, id: BufferId) -> Option<Vec<i64>> {
        match id {
            BufferId::Input(i) => self.inputs.get(i).map(InputDecl::tensor_shape),
            BufferId::Const(i) => {
                self.consts.get(i).map(|c| c.tensor.shape().iter().map(|&d| d as i64).collect())
            }
        }
    }

    /// The element offsets, relative to where accesses count from, that a buffer holds: its
    /// lowest and highest; `None` for an empty (or undeclared) buffer.
    pub fn buffer_window(&self, id: BufferId) -> Option<(i64, i64)> {
        match id {
            BufferId::Input(i) => self.inputs.get(i)?.window(),
            BufferId::Const(i) => {
                let n = self.consts.get(i)?.tensor.numel() as i64;
                (n > 0).then_some((0, n - 1))
            }
        }
    }

    /// The output's size in bytes (saturating; verification bounds it by i64).
    pub fn output_bytes(&self) -> u64 {
        let numel = self.shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d.max(0) as u64));
        numel.and_then(|n| n.checked_mul(self.dtype.width() as u64)).unwrap_or(u64::MAX)
    }
}
