//! The kernels of a store plan (`a[i] = v`; docs/semantics.md, Stores). The host copies the
//! target into the output first (a device-to-device copy; nothing where the output *is* the
//! target), then launches, in order on one stream:
//!
//! 1. the plan's kernel: its index checks;
//! 2. `NAME_mark`, where an update can fail or two may write one element: every update's
//!    destination and value evaluated, a failure recorded in the update nest's error word as a
//!    load's (the first failing update in C order wins), and — where the destination is
//!    gathered (index arrays, masks) — `atomicMax(owner[element], ordinal + 1)`: each element
//!    learns the last update in C order that writes it;
//! 3. `NAME_store`: nothing at all if any error word is set (a failed call writes nothing, as
//!    the CPU promises), else every update writes its element — a gathered one only where its
//!    ordinal is the element's owner, so the last write in C order wins on any schedule.
//!
//! Each pass is a grid-stride loop over the updates whose result does not depend on the order
//! of its threads (an atomic maximum, then writes to distinct elements), so the host emulation's
//! sequential grid runs it as a GPU does. `+=` and `*=` are buffered: the old element is read
//! from the target, never from the output. A scatter's reduction folds its updates on one
//! thread, then `NAME_finish` writes them (`super::reduce`); complex numbers are not combined.

use super::owner::OwnerRows;
use super::{Body, CudaError, Gen, TELL, Types, move_type, reduce};
use crate::backend::loopnest::{LoopNest, Stream};
use crate::plan::{Access, GenericPlan, Store, VerifiedGenericPlan};
use crate::types::sym::SymExpr;
use crate::types::{Combine, OobMode};
use slc_runtime::DType;
use std::fmt::Write;

/// What the host needs to run a store's kernels.
#[derive(Debug, Clone, PartialEq)]
pub struct StoreInfo {
    /// The update nest's index in [`super::ArgLayout::nests`] (the last one).
    pub nest: usize,
    /// Whether destinations are gathered, so that two updates may write one element: the
    /// kernels then take an owner array of unsigned words (32-bit in the 32-bit kernels, 64-bit
    /// in the others), zeroed before `NAME_mark`: one per output element, or one per row of
    /// elements where the bound call's destination allows it ([`OwnerRows`]; the words after
    /// the array's say which).
    pub owner: bool,
    /// The destination's integers that decide the owner array's rows (`Some` with `owner`).
    pub rows: Option<OwnerRows>,
    /// Whether an update can fail (then `NAME_mark` records it).
    pub fails: bool,
    /// Whether `NAME_mark` exists (an owner array to fill, or an update that can fail).
    pub mark: bool,
    /// The output's element width in bytes.
    pub width: u8,
    /// A scatter's reduction: the store pass folds the updates serially into a scratch of 16
    /// bytes per output element (in the owner array's word), and `NAME_finish` writes them
    /// (`super::reduce`).
    pub reduces: bool,
}

impl StoreInfo {
    /// The bytes of the owner array for an output of `out_bytes` bytes, one owner word for
    /// every `key_bytes` of it ([`OwnerRows::choose`]).
    pub fn owner_bytes(&self, wide: bool, out_bytes: usize, key_bytes: u64) -> usize {
        let elements = out_bytes / self.width as usize;
        match (self.reduces, self.owner) {
            (true, _) => elements * 16,
            (false, true) => out_bytes.div_ceil(key_bytes.max(1) as usize) * if wide { 8 } else { 4 },
            (false, false) => 0,
        }
    }

    /// Whether the kernels take the owner array's word (an owner array or a scratch).
    pub fn array(&self) -> bool {
        self.owner || self.reduces
    }
}

/// Refuses what the store kernels cannot do: combining (`+=`, `*=`, a scatter's reductions)
/// complex numbers.
pub fn supported(combine: Combine, dtype: DType) -> Result<(), CudaError> {
    match combine {
        Combine::Set => Ok(()),
        Combine::Reduce { .. } if matches!(dtype, DType::C64 | DType::C128) => Err(CudaError::Codegen(
            format!("the CUDA target does not run a scatter's `{}` reduction on {dtype}", combine.name()),
        )),
        Combine::Reduce { .. } => Ok(()),
        Combine::Add | Combine::Mul if matches!(dtype, DType::C64 | DType::C128) => {
            Err(CudaError::Codegen(format!("the CUDA target does not run `{}` on {dtype}", combine.name())))
        }
        Combine::Add | Combine::Mul => Ok(()),
    }
}

/// The store's streams over its update coordinates, as loop nests before any pass (the same
/// loops for all): `dest` reads the destination's byte offset in the output, `value` the
/// value's, `when` a masked store's mask (bytes; an update applies where its byte is nonzero).
pub struct UpdateNests {
    pub dest: LoopNest,
    pub value: LoopNest,
    pub when: Option<LoopNest>,
    /// The bytes from the output's first to the target's element `[0, ..., 0]`, which the
    /// target's pointer addresses: 0, but for a store through a view (`Plan::stores_through_view`),
    /// whose output is the target's window, starting below element `[0, ..., 0]` by what
    /// negative steps reach.
    target_shift: i64,
    combine: Combine,
    dtype: DType,
    /// The error word of the updates: the output's.
    slot: usize,
}

/// Whether evaluating `s` can fail (an `error` term, or a clamped or wrapped one whose length
/// may be 0), as `Gen::access` emits it.
fn can_fail(s: &Stream) -> bool {
    s.terms.iter().any(|t| {
        let fails = match t.mode {
            OobMode::Error => true,
            OobMode::Zero => false,
            OobMode::Clamp | OobMode::Wrap => t.len.as_const().is_none_or(|n| n <= 0),
        };
        fails || can_fail(&t.index)
    })
}

impl UpdateNests {
    pub fn new(plan: &VerifiedGenericPlan, store: &Store<SymExpr>) -> Result<UpdateNests, CudaError> {
        let nest = |access: &Access<SymExpr>, dtype: DType| {
            let load = GenericPlan {
                checks: vec![],
                requires: vec![],
                shape: store.shape.clone(),
                output: access.clone(),
                store: None,
                dtype,
                ..plan.plan().clone()
            };
            LoopNest::from_plan(&load)
        };
        // `dest` addresses the target from its element `[0, ..., 0]`; the output starts at
        // `output.base` (a window's lowest element; 0 for a dense target).
        let w = plan.dtype.width() as i64;
        let Some(first) = plan.output.base.as_const() else {
            return Err(CudaError::Codegen("a store whose output starts at a symbolic element".into()));
        };
        let target_shift = -first * w;
        let mut dest = nest(&store.dest, plan.dtype);
        dest.data.base = dest.data.base.add_const(target_shift);
        Ok(UpdateNests {
            dest,
            target_shift,
            value: nest(&store.value, plan.dtype),
            when: store.when.as_ref().map(|mask| nest(mask, DType::Bool)),
            combine: store.combine,
            dtype: plan.dtype,
            slot: plan.checks.len(),
        })
    }

    /// The nests, with the error word they record into (for the 32-bit test).
    pub fn nests(&self) -> Vec<(usize, LoopNest)> {
        [&self.dest, &self.value].into_iter().chain(&self.when).map(|n| (self.slot, n.clone())).collect()
    }

    /// Adds the update nest to the layout (its integers to `params`) and describes the store.
    pub(super) fn info(
        &self,
        plan: &VerifiedGenericPlan,
        params: &mut Vec<SymExpr>,
        infos: &mut Vec<super::NestInfo>,
    ) -> StoreInfo {
        let mut numbers = self.dest.extents.clone();
        self.dest.data.push_numbers(&mut numbers);
        self.value.data.push_numbers(&mut numbers);
        if let Some(when) = &self.when {
            when.data.push_numbers(&mut numbers);
        }
        let mut own = vec![];
        for n in numbers.into_iter().filter(|n| n.as_const().is_none()) {
            let at = params.iter().position(|q| *q == n).unwrap_or_else(|| {
                params.push(n.clone());
                params.len() - 1
            });
            if !own.contains(&at) {
                own.push(at);
            }
        }
        // The finishing pass of a reduction walks the output's elements.
        let elements = output_elements(plan);
        if elements.as_const().is_none() {
            let at = params.iter().position(|q| *q == elements).unwrap_or_else(|| {
                params.push(elements.clone());
                params.len() - 1
            });
            if !own.contains(&at) {
                own.push(at);
            }
        }
        infos.push(super::NestInfo {
            extents: self.dest.extents.clone(),
            slot: self.slot,
            params: own,
            unit: 1,
            group: 1,
        });
        let reduces = self.combine.accumulates();
        let owner = !reduces && !self.dest.data.terms.is_empty();
        let fails = can_fail(&self.dest.data) || can_fail(&self.value.data);
        let width = plan.dtype.width() as u8;
        let rows = owner.then(|| OwnerRows::of(&self.dest));
        StoreInfo { nest: infos.len() - 1, owner, rows, fails, mark: owner || fails, width, reduces }
    }
}

/// The output's element count.
fn output_elements(plan: &VerifiedGenericPlan) -> SymExpr {
    plan.shape.iter().fold(SymExpr::constant(1), |n, d| n.mul(d))
}

/// Which pass a store kernel is.
#[derive(Clone, Copy, PartialEq)]
enum Pass {
    Mark,
    Store,
    /// A reduction's last pass, over the output's elements.
    Finish,
}

impl Gen<'_> {
    /// Appends `NAME_mark` (where the store has it) and `NAME_store`, with 64-bit (`wide`) or
    /// 32-bit arithmetic; `checks`: the check nests before the update nest.
    pub(super) fn store_kernels(
        &self,
        out: &mut String,
        u: &UpdateNests,
        checks: usize,
        wide: bool,
    ) -> Result<(), CudaError> {
        let info = self.layout.store.as_ref().expect("a store plan's layout describes its store");
        out.push_str(HALF_CONVERSIONS);
        let suffix = if wide { "_wide" } else { "" };
        let mut passes = vec![];
        if info.mark {
            passes.push(Pass::Mark);
        }
        passes.push(Pass::Store);
        if info.reduces {
            passes.push(Pass::Finish);
        }
        for pass in passes {
            let t = if wide {
                Types { u: "unsigned long long", s: "long long" }
            } else {
                Types { u: "unsigned int", s: "int" }
            };
            let kind = match pass {
                Pass::Mark => "mark",
                Pass::Store => "store",
                Pass::Finish => "finish",
            };
            self.prologue(out, &format!("{}_{kind}{suffix}", self.name), t, info.nest + 1);
            if info.owner {
                // The owner array, the bytes of output one word covers, and the updates that
                // share an ordinal (`owner.rs`).
                let w = self.layout.owner_word();
                let _ = writeln!(
                    out,
                    "  {u}* owner = ({u}*)a.w[{w}];\n  const {u} owner_key = ({u})a.w[{}];\n  const {u} owner_run = ({u})a.w[{}];",
                    w + 1,
                    w + 2,
                    u = t.u
                );
            }
            if info.reduces {
                let _ = writeln!(
                    out,
                    "  unsigned char* scratch = (unsigned char*)a.w[{}];",
                    self.layout.owner_word()
                );
            }
            if pass == Pass::Finish {
                self.finish_pass(out, u, t);
                continue;
            }
            // A failed call writes nothing: the checks and the marking pass ran before. (Only
            // where something can fail: a caller gives error words only then, `buffers.rs`.)
            if pass == Pass::Store && (checks > 0 || info.fails) {
                let words = self.plan.checks.len() + 1;
                let _ = writeln!(
                    out,
                    "  {{ int k; for (k = 0; k < {words}; k++) if (err[k] != 0xffffffffffffffffULL) return; }}"
                );
            }
            let n = info.nest;
            let start = if n == 0 { "0".to_string() } else { format!("e{}", n - 1) };
            // A reduction's store pass folds every update in C order: one thread.
            let serial = pass == Pass::Store && info.reduces;
            let (first, stride) = match serial {
                true => {
                    out.push_str("  if (blockIdx.x != 0 || threadIdx.x != 0) return;\n");
                    (start.clone(), "1")
                }
                false => (
                    format!("{start} + ({u})blockIdx.x * ({u})blockDim.x + ({u})threadIdx.x", u = t.u),
                    "step",
                ),
            };
            let _ = writeln!(
                out,
                "  for ({u} i = {first}; i < e{n}; i += {stride}) {{\n    const {u} lin = i - {start};",
                u = t.u
            );
            let mut b = Body { text: String::new(), labels: 0, t, failed: false };
            self.update(&mut b, u, info, pass)?;
            out.push_str(&b.text);
            out.push_str("  }\n}\n");
        }
        Ok(())
    }

    /// One update of `pass`: its coordinates, destination, then value; a `zero`-mode miss of
    /// the destination writes nothing (and reads no value), one of the value writes a 0.
    fn update(&self, b: &mut Body, u: &UpdateNests, info: &StoreInfo, pass: Pass) -> Result<(), CudaError> {
        let slot = u.slot;
        // Failures are recorded by the marking pass; the store pass runs only when none was.
        let fail = |kind: u64| match pass {
            Pass::Mark => format!(
                "{{ atomicMin(err + {slot}, ((unsigned long long)lin << 2) | {kind}ULL); {TELL} continue; }}"
            ),
            Pass::Store | Pass::Finish => "continue;".to_string(),
        };
        self.coordinates(b, &u.dest, "lin", 1, false);
        let dest_miss = b.label();
        let at = self.access(b, &u.dest.data, &fail, &dest_miss, false)?;
        let own = format!("owner + ({u})({at}) / owner_key", u = b.t.u);
        if let Some(when) = &u.when {
            // A masked store: no update where the mask's byte is 0 (the mask is read directly,
            // so this never fails or misses).
            let at = self.access(b, &when.data, &fail, &dest_miss, false)?;
            let _ = writeln!(
                b.text,
                "      if (*(const unsigned char*)(b{} + {at}) == 0) continue;",
                when.data.buffer
            );
        }
        b.text.push_str("      {\n");
        if pass == Pass::Store && info.owner {
            let _ = writeln!(b.text, "      if (*({own}) != lin / owner_run + 1) continue;");
        }
        let value_miss = b.label();
        let value = self.access(b, &u.value.data, &fail, &value_miss, false)?;
        let effect = |value: Option<&str>| match pass {
            Pass::Mark if info.owner => {
                let atomic = if b.t.u == "unsigned int" { "slc_atomic_max32" } else { "slc_atomic_max64" };
                // One mark per ordinal: its first update's.
                format!("if (lin % owner_run == 0) {atomic}({own}, lin / owner_run + 1);")
            }
            Pass::Mark => String::new(),
            Pass::Store | Pass::Finish => self.write(u, &at, value),
        };
        let read = format!("b{} + {value}", u.value.data.buffer);
        let (hit, miss) = (effect(Some(&read)), effect(None));
        let _ = writeln!(
            b.text,
            "      {{ {hit} }} continue;\n      {value_miss}: {{ {miss} }} continue;\n      }}"
        );
        let _ = writeln!(b.text, "      {dest_miss}: continue;");
        Ok(())
    }

    /// The statement that writes the update at byte offset `at` of the output: the value at
    /// `value` (a byte pointer expression; `None`: a zero-filled miss), combined with the
    /// target's element where the store combines.
    fn write(&self, u: &UpdateNests, at: &str, value: Option<&str>) -> String {
        let w = u.dtype.width();
        let target = match u.target_shift {
            0 => format!("b{} + {at}", u.dest.data.buffer),
            shift => format!("b{} + ({at} - {shift})", u.dest.data.buffer),
        };
        if let Combine::Reduce { op, init } = u.combine {
            let ty = reduce::wide_type(u.dtype, op);
            let start =
                if init { reduce::widen(u.dtype, op, &target) } else { reduce::identity(u.dtype, op) };
            let v = value.map_or_else(|| format!("({ty})0"), |p| reduce::widen(u.dtype, op, p));
            return format!(
                "unsigned char* s = scratch + (unsigned long long)({at} / {w}) * 16; {ty}* acc = ({ty}*)s; unsigned long long* cnt = (unsigned long long*)(s + 8);\n      if (*cnt == 0) {{ *acc = {start}; *cnt = {}; }}\n      {{ const {ty} v = {v}; {} }} *cnt += 1;",
                1 + u64::from(init),
                reduce::step(u.dtype, op, "*acc", "v")
            );
        }
        if u.combine == Combine::Set {
            if w == 16 {
                let half = |k: u8| match value {
                    Some(v) => format!(
                        "((unsigned long long*)(out + {at}))[{k}] = ((const unsigned long long*)({v}))[{k}];"
                    ),
                    None => format!("((unsigned long long*)(out + {at}))[{k}] = 0;"),
                };
                return format!("{} {}", half(0), half(1));
            }
            let ty = move_type(w as u8);
            return match value {
                Some(v) => format!("*({ty}*)(out + {at}) = *(const {ty}*)({v});"),
                None => format!("*({ty}*)(out + {at}) = 0;"),
            };
        }
        let (ty, arith) = arithmetic(u.dtype);
        let load = |p: &str| match u.dtype {
            DType::F16 => format!("slc_h2f(*(const unsigned short*)({p}))"),
            DType::BF16 => format!("slc_b2f(*(const unsigned short*)({p}))"),
            _ => format!("*(const {ty}*)({p})"),
        };
        let old = load(&target);
        let v = value.map_or_else(|| "0".to_string(), load);
        let mul = u.combine == Combine::Mul;
        let result = match u.dtype {
            DType::Bool if mul => format!("(unsigned char)(({old}) != 0 && ({v}) != 0)"),
            DType::Bool => format!("(unsigned char)(({old}) != 0 || ({v}) != 0)"),
            DType::F16 | DType::BF16 | DType::F32 | DType::F64 => {
                let r = if mul { format!("({old}) * ({v})") } else { format!("({old}) + ({v})") };
                match u.dtype {
                    DType::F16 => format!("slc_f2h({r})"),
                    DType::BF16 => format!("slc_f2b({r})"),
                    _ => r,
                }
            }
            // Integers wrap: computed as unsigned words of at least 32 bits (no promotion to a
            // signed `int` that could overflow), then truncated.
            _ => {
                let op = if mul { "*" } else { "+" };
                format!("({ty})(({arith})({old}) {op} ({arith})({v}))")
            }
        };
        let stored = if matches!(u.dtype, DType::F16 | DType::BF16) { "unsigned short" } else { ty };
        format!("*({stored}*)(out + {at}) = {result};")
    }
}

impl Gen<'_> {
    /// A reduction's `NAME_finish` loop (after its prologue): every touched element written.
    fn finish_pass(&self, out: &mut String, u: &UpdateNests, t: Types) {
        let Combine::Reduce { op, .. } = u.combine else { return };
        let elements = self.int(&output_elements(self.plan), t);
        let w = u.dtype.width();
        let ty = reduce::wide_type(u.dtype, op);
        let _ = writeln!(
            out,
            "  for ({u} i = ({u})blockIdx.x * ({u})blockDim.x + ({u})threadIdx.x; i < ({u})({elements}); i += step) {{",
            u = t.u
        );
        let _ = writeln!(
            out,
            "    const unsigned char* s = scratch + (unsigned long long)i * 16;\n    const unsigned long long cnt = *(const unsigned long long*)(s + 8);\n    if (cnt == 0) continue;\n    {{ const {ty} acc = *(const {ty}*)s; {} }}\n  }}\n}}",
            reduce::finish(u.dtype, op, "acc", "(cnt - 1)", &format!("out + (unsigned long long)i * {w}"))
        );
    }
}

/// The C type an element of `dtype` is combined as, and the unsigned type integer arithmetic
/// runs in (`float` for the half types: they are computed in f32).
fn arithmetic(dtype: DType) -> (&'static str, &'static str) {
    match dtype {
        DType::Bool => ("unsigned char", "unsigned int"),
        DType::I8 => ("signed char", "unsigned int"),
        DType::U8 => ("unsigned char", "unsigned int"),
        DType::I16 => ("short", "unsigned int"),
        DType::U16 => ("unsigned short", "unsigned int"),
        DType::I32 => ("int", "unsigned int"),
        DType::U32 => ("unsigned int", "unsigned int"),
        DType::I64 => ("long long", "unsigned long long"),
        DType::U64 => ("unsigned long long", "unsigned long long"),
        DType::F64 => ("double", "double"),
        _ => ("float", "float"),
    }
}

/// f16 and bf16 to f32 and back (round to nearest even; a NaN made quiet, its payload kept), as
/// the CPU's `half` conversions; plain C for both compilers. Once per file.
const HALF_CONVERSIONS: &str = "#ifndef SLC_HALF_CONVERSIONS
#define SLC_HALF_CONVERSIONS
static __device__ __forceinline__ float slc_bits_f(unsigned int u) { union { unsigned int u; float f; } c; c.u = u; return c.f; }
static __device__ __forceinline__ unsigned int slc_f_bits(float f) { union { unsigned int u; float f; } c; c.f = f; return c.u; }
static __device__ __forceinline__ double slc_bits_d(unsigned long long u) { union { unsigned long long u; double d; } c; c.u = u; return c.d; }
static __device__ __forceinline__ float slc_b2f(unsigned short h) {
  if ((h & 0x7fffu) > 0x7f80u) h |= 0x40u;
  return slc_bits_f((unsigned int)h << 16);
}
static __device__ __forceinline__ unsigned short slc_f2b(float f) {
  unsigned int x = slc_f_bits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return (unsigned short)((x >> 16) | 0x40u);
  if ((x & 0x8000u) != 0 && (x & 0x17fffu) != 0) return (unsigned short)((x >> 16) + 1);
  return (unsigned short)(x >> 16);
}
static __device__ __forceinline__ float slc_h2f(unsigned short h) {
  unsigned int s = (unsigned int)(h & 0x8000u) << 16, e = (h >> 10) & 0x1fu, m = h & 0x3ffu;
  if (e == 0x1f) return slc_bits_f(s | (m ? 0x7fc00000u : 0x7f800000u) | (m << 13));
  if (e != 0) return slc_bits_f(s | ((e + 112) << 23) | (m << 13));
  if (m == 0) return slc_bits_f(s);
  e = 113;
  while (!(m & 0x400u)) { m <<= 1; e--; }
  return slc_bits_f(s | (e << 23) | ((m & 0x3ffu) << 13));
}
static __device__ __forceinline__ unsigned short slc_f2h(float f) {
  unsigned int x = slc_f_bits(f), sign = (x & 0x80000000u) >> 16, exp = x & 0x7f800000u, man = x & 0x7fffffu;
  int e;
  unsigned int hm, round;
  if (exp == 0x7f800000u) return (unsigned short)(sign | 0x7c00u | (man ? 0x200u : 0u) | (man >> 13));
  e = (int)(exp >> 23) - 127 + 15;
  if (e >= 0x1f) return (unsigned short)(sign | 0x7c00u);
  if (e <= 0) {
    if (14 - e > 24) return (unsigned short)sign;
    man |= 0x800000u;
    hm = man >> (14 - e);
    round = 1u << (13 - e);
    if ((man & round) != 0 && (man & (3u * round - 1u)) != 0) hm++;
    return (unsigned short)(sign | hm);
  }
  hm = sign | ((unsigned int)e << 10) | (man >> 13);
  if ((man & 0x1000u) != 0 && (man & 0x2fffu) != 0) hm++;
  return (unsigned short)hm;
}
#endif
";
