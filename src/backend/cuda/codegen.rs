//! CUDA C from the loop nests of a verified plan: one kernel per plan, a grid-stride loop over
//! the steps of every nest (the index checks first, then the output), each step's coordinates
//! taken from its linear position over the nest's merged loops. A step of the output moves a
//! contiguous run as one vector (`vector_bytes`), or else a 16-byte group of consecutive
//! elements stored at once (`group`); wider moves than an element's natural alignment fall back
//! to element moves where a caller's pointers are not aligned for them. Elements are moved
//! as unsigned integers of their width (f16/bf16 are 2-byte moves); index values are read once
//! per element and normalized by their term's out-of-range policy exactly as the interpreter
//! does (`OobMode::normalize`). A failure is recorded, never asserted: `atomicMin` of
//! `linear << 2 | kind` into the error word of its nest, so the first failing element in C order
//! wins whatever the schedule (see [`super::launch`] for the decoding).
//!
//! The code is the common subset of C and CUDA C++ (no templates, no references), so that the
//! same text compiles with NVRTC, nvcc, and a host C compiler under `host_emulation.h`.
//!
//! Every symbolic integer of a nest is a word of the kernel's argument block, evaluated per call
//! by the host ([`super::launch`]); constants are literals. A plan whose numbers all fit gets a
//! kernel with 32-bit index arithmetic; a generic plan gets both a 32-bit and a 64-bit kernel,
//! and each call picks the narrow one when its numbers allow ([`NARROW_LIMIT`]).

mod access;
mod fold;
mod group;
pub mod owner;
mod reduce;
pub mod store;

use super::CudaError;
use crate::backend::loopnest::{self, LoopNest, NestKind};
use crate::plan::VerifiedGenericPlan;
use crate::types::sym::SymExpr;
use std::fmt::Write;

/// A call takes the 32-bit kernel when it has fewer than [`NARROW_ELEMENTS`] elements (not
/// steps: a grouped step computes its elements' linear positions, `lin * group + k`, all below
/// its nest's element count) and every
/// integer it evaluates, and every buffer's bytes, are at most [`NARROW_LIMIT`] (1 GiB buffers
/// included): each partial sum of an address is itself an address in a buffer (the other
/// coordinates 0), below 2^30 in magnitude, and each product of a coordinate and a stride is a
/// difference of two such addresses, so every intermediate stays below 2^31; `step + grid
/// stride` stays below 2^31 too (grids of at most 2^24 threads, no more steps than elements).
pub const NARROW_LIMIT: i64 = 1 << 30;
pub const NARROW_ELEMENTS: u64 = 1 << 30;

/// The statement after every failure's `atomicMin`: the call's flag in host memory set
/// (`ArgLayout::tell_word`; a plain store, every failing thread writing the same 1).
pub const TELL: &str = "if (tell) *tell = 1u;";

/// Error kinds, the low two bits of an error word.
pub const KIND_INDEX_BOUNDS: u64 = 0;
pub const KIND_EMPTY_AXIS: u64 = 1;
pub const KIND_GATHER_OUT_OF_RANGE: u64 = 2;

/// What the host needs to know about the argument block of the generated kernels: one array of
/// 64-bit words, `[inputs..., out, err, ends..., params...]`.
#[derive(Debug, Clone, PartialEq)]
pub struct ArgLayout {
    /// Input pointers (device addresses of element `[0, ..., 0]`), in plan order.
    pub inputs: usize,
    /// The nests, in the order the kernel walks them: the index checks, then the output.
    pub nests: Vec<NestInfo>,
    /// The symbolic integers the kernels read, each once.
    pub params: Vec<SymExpr>,
    /// Which kernels the source defines.
    pub narrow: bool,
    pub wide: bool,
    /// A store plan's update kernels ([`store`]); `None` for a load.
    pub store: Option<store::StoreInfo>,
}

/// One nest of the kernel.
#[derive(Debug, Clone, PartialEq)]
pub struct NestInfo {
    /// Its loops' extents (merged), outermost first.
    pub extents: Vec<SymExpr>,
    /// The error word it records into: the plan's check index, or the number of checks for the
    /// output.
    pub slot: usize,
    /// Indices into [`ArgLayout::params`] of the integers it reads.
    pub params: Vec<usize>,
    /// Elements per step of a thread: more than one where the nest moves contiguous runs as
    /// vectors (`vector_bytes`); the kernel's range counts steps.
    pub unit: u64,
    /// Consecutive elements (in C order) per step of an output nest that moves no vectors:
    /// gathered one by one, stored as one 16-byte vector (`group_of`); 1 for the others.
    /// The last step of the nest takes the elements left over.
    pub group: u64,
}

impl NestInfo {
    /// The steps of the kernel's range that cover the nest's `count` elements.
    pub fn steps(&self, count: u64) -> u64 {
        (count / self.unit).div_ceil(self.group)
    }
}

impl ArgLayout {
    pub fn out_word(&self) -> usize {
        self.inputs
    }
    pub fn err_word(&self) -> usize {
        self.inputs + 1
    }
    /// The word holding the cumulative element count up to and including nest `n`.
    pub fn end_word(&self, n: usize) -> usize {
        self.inputs + 2 + n
    }
    pub fn param_word(&self, p: usize) -> usize {
        self.inputs + 2 + self.nests.len() + p
    }
    /// The word holding a store's owner array ([`store::StoreInfo::owner`]).
    pub fn owner_word(&self) -> usize {
        self.param_word(self.params.len())
    }
    /// The two words after a store's owner array: the output bytes one owner word covers and
    /// the updates that share an ordinal ([`owner::OwnerRows::choose`]).
    pub fn owner_rows_words(&self) -> Option<(usize, usize)> {
        let w = self.owner_word();
        self.store.as_ref().is_some_and(|s| s.owner).then_some((w + 1, w + 2))
    }
    /// The last word: where a failing element also sets a flag (a 32-bit word in page-locked
    /// host memory, mapped for the device), so that a call whose elements all passed learns it
    /// without copying the error words back; 0 for none. The error words stay the record.
    pub fn tell_word(&self) -> usize {
        let store = self.store.as_ref();
        self.owner_word()
            + usize::from(store.is_some_and(|s| s.array()))
            + 2 * usize::from(store.is_some_and(|s| s.owner))
    }
    /// Words in the argument block.
    pub fn words(&self) -> usize {
        self.tell_word() + 1
    }
    /// Error words: one per plan check, then the output's.
    pub fn err_words(&self, checks: usize) -> usize {
        checks + 1
    }
}

/// Generated source and the layout of its argument block.
#[derive(Debug, Clone)]
pub struct CudaSource {
    /// The kernels' name stem: `NAME` (32-bit) and `NAME_wide` (64-bit).
    pub name: String,
    pub text: String,
    pub layout: ArgLayout,
}

impl CudaSource {
    /// The entry name of the kernel with 64-bit (`wide`) or 32-bit arithmetic.
    pub fn entry(&self, wide: bool) -> String {
        if wide { format!("{}_wide", self.name) } else { self.name.clone() }
    }

    /// Every kernel the source defines for 64-bit (`wide`) or 32-bit arithmetic, in launch
    /// order: the plan's kernel, then a store's `_mark` (where it has one) and `_store`.
    pub fn entries(&self, wide: bool) -> Vec<String> {
        let suffix = if wide { "_wide" } else { "" };
        let mut all = vec![self.entry(wide)];
        if let Some(s) = &self.layout.store {
            if s.mark {
                all.push(format!("{}_mark{suffix}", self.name));
            }
            all.push(format!("{}_store{suffix}", self.name));
            if s.reduces {
                all.push(format!("{}_finish{suffix}", self.name));
            }
        }
        all
    }
}

/// The guard every generated file starts with: the types and the linkage macro.
const PRELUDE: &str = "#ifndef SLC_CUDA_PRELUDE
#define SLC_CUDA_PRELUDE
#ifdef __cplusplus
#define SLC_EXTERN extern \"C\"
#else
#define SLC_EXTERN
#endif
#ifndef SLC_HOST_EMULATION
#define SLC_ALIGN(n) __align__(n)
#define slc_atomic_max32(at, value) atomicMax((at), (value))
#define slc_atomic_max64(at, value) atomicMax((at), (value))
#endif
#endif
";

/// The 16-byte vector type (a struct, so that C compiles it too), once per file.
const VECTOR_TYPE: &str = "#ifndef SLC_V16
#define SLC_V16
struct SLC_ALIGN(16) slc_v16 { unsigned long long lo, hi; };
typedef struct slc_v16 slc_v16;
union slc_g16 { slc_v16 v; unsigned char b[16]; unsigned short h[8]; unsigned int w[4]; unsigned long long d[2]; };
typedef union slc_g16 slc_g16;
#endif
";

/// The bytes an output nest moves per step where its innermost loop is a contiguous run in
/// both output and data (its gathers fixed along it: the scheduler's block copy) and every
/// address of a run's start is a multiple of them: the widest of 16, 8, 4 and 2 bytes above the
/// element width that divides the run's bytes, the data's base, its outer strides and gathered
/// strides (buffers are aligned: device allocations to 256 bytes, constants to 16; a strided
/// view's pointer is not, so its runs move element by element). `None`: one element per step.
/// The numbers must be constants.
fn vector_bytes(plan: &VerifiedGenericPlan, nest: &LoopNest) -> Option<u64> {
    let last = nest.extents.len().checked_sub(1)?;
    if nest.kind != NestKind::Output || !matches!(nest.strategies[last], loopnest::Strategy::Block(_)) {
        return None;
    }
    let dense_buffer = plan.inputs.get(nest.data.buffer).is_none_or(|d| d.strides.is_none());
    let run = nest.extents[last].as_const()? * nest.width as i64;
    let mut numbers = vec![run, nest.data.base.as_const()?];
    for s in &nest.data.strides[..last] {
        numbers.push(s.as_const()?);
    }
    for t in &nest.data.terms {
        numbers.push(t.stride.as_const()?);
    }
    let fits = |v: i64| numbers.iter().all(|n| n % v == 0);
    let v = [16i64, 8, 4, 2].into_iter().find(|&v| v > nest.width as i64 && fits(v))?;
    dense_buffer.then_some(v as u64)
}

/// The elements per step of `nest`, moving `unit` elements per step ([`vector_bytes`]): an
/// output nest of narrower elements that moves no vectors gathers a 16-byte group of
/// consecutive ones, so that a warp stores whole lines with one instruction per thread.
fn group_of(nest: &LoopNest, unit: u64) -> u64 {
    let width = nest.width as u64;
    let grouped = nest.kind == NestKind::Output && unit == 1 && !nest.extents.is_empty();
    if grouped && width < 16 && 16 % width == 0 { 16 / width } else { 1 }
}

/// Generates the CUDA C of `plan`'s kernels, named `name` (a C identifier).
pub fn generate(plan: &VerifiedGenericPlan, name: &str) -> Result<CudaSource, CudaError> {
    if !is_identifier(name) {
        return Err(CudaError::Codegen(format!("`{name}` is not a C identifier")));
    }
    if let Some(s) = &plan.store {
        store::supported(s.combine, plan.dtype)?;
    }
    crate::limits::with_stack_for(plan.nesting(), || generate_nested(plan, name))
}

fn generate_nested(plan: &VerifiedGenericPlan, name: &str) -> Result<CudaSource, CudaError> {
    let target = loopnest::Target::default();
    let folded = fold::folded_check(plan);
    let mut nests: Vec<(usize, LoopNest)> = vec![];
    for (k, check) in plan.checks.iter().enumerate() {
        if folded.is_some_and(|f| f.check == k) {
            continue;
        }
        if let Some(nest) = loopnest::schedule_generic_check(plan, check, target) {
            nests.push((k, nest));
        }
    }
    // A store's output is the target's copy, which the host makes (a device-to-device copy):
    // its kernels are the checks, then the update kernels over the store's own nests.
    let updates = plan.store.as_ref().map(|s| store::UpdateNests::new(plan, s)).transpose()?;
    if updates.is_none() {
        let main = loopnest::schedule_generic(plan, target, |_, _| {});
        if !main.empty {
            nests.push((plan.checks.len(), main));
        }
    }
    let mut params: Vec<SymExpr> = vec![];
    let mut infos = vec![];
    for (slot, nest) in &nests {
        let mut own = vec![];
        for p in &nest.params {
            let at = params.iter().position(|q| q == p).unwrap_or_else(|| {
                params.push(p.clone());
                params.len() - 1
            });
            own.push(at);
        }
        let unit = vector_bytes(plan, nest).map_or(1, |v| v / nest.width as u64);
        let group = group_of(nest, unit);
        infos.push(NestInfo { extents: nest.extents.clone(), slot: *slot, params: own, unit, group });
    }
    let checked = nests.len();
    let store = updates.as_ref().map(|u| u.info(plan, &mut params, &mut infos));
    let all: Vec<(usize, LoopNest)> =
        nests.iter().cloned().chain(updates.iter().flat_map(|u| u.nests())).collect();
    let symbolic =
        !params.is_empty() || all.iter().any(|(_, n)| n.extents.iter().any(|e| e.as_const().is_none()));
    let narrow = symbolic || fits_narrow(plan, &all);
    let layout = ArgLayout {
        inputs: plan.inputs.len(),
        nests: infos,
        params,
        narrow,
        wide: symbolic || !narrow,
        store,
    };
    let mut text = String::new();
    let _ = writeln!(text, "/* Generated by slc {}: {} */", env!("CARGO_PKG_VERSION"), summary(plan));
    text.push_str(PRELUDE);
    let _ =
        writeln!(text, "typedef struct {{ unsigned long long w[{}]; }} {name}_args;", layout.words().max(1));
    for (i, c) in plan.consts.iter().enumerate() {
        let bytes = c.tensor.bytes();
        let _ = write!(
            text,
            "__device__ SLC_ALIGN(16) const unsigned char {name}_c{i}[{}] = {{",
            bytes.len().max(1)
        );
        for (j, b) in bytes.iter().enumerate() {
            if j % 24 == 0 {
                text.push_str("\n ");
            }
            let _ = write!(text, "{b},");
        }
        if bytes.is_empty() {
            text.push('0');
        }
        text.push_str("\n};\n");
    }
    text.push_str(VECTOR_TYPE);
    let generator = Gen { plan, name, layout: &layout, folded };
    for wide in [false, true] {
        if (wide && layout.wide) || (!wide && layout.narrow) {
            generator.kernel(&mut text, &nests, wide)?;
            if let Some(u) = &updates {
                generator.store_kernels(&mut text, u, checked, wide)?;
            }
        }
    }
    Ok(CudaSource { name: name.to_string(), text, layout })
}

/// The plan's output type, for the file's first line.
fn summary(plan: &VerifiedGenericPlan) -> String {
    let shape: Vec<String> = plan.shape.iter().map(SymExpr::to_string).collect();
    format!(
        "{}[{}] from {} input(s), {} check(s)",
        plan.dtype,
        shape.join(", "),
        plan.inputs.len(),
        plan.checks.len()
    )
}

pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Whether a concrete plan's kernel may use 32-bit arithmetic (see [`NARROW_LIMIT`]).
fn fits_narrow(plan: &VerifiedGenericPlan, nests: &[(usize, LoopNest)]) -> bool {
    let small = |e: &SymExpr| e.as_const().is_some_and(|v| v.unsigned_abs() <= NARROW_LIMIT as u64);
    let elements = nests.iter().try_fold(0u64, |acc, (_, n)| {
        let count = n.extents.iter().try_fold(1u64, |c, e| c.checked_mul(e.as_const()?.max(0) as u64))?;
        acc.checked_add(count)
    });
    let buffers = n_buffers_small(plan);
    let out_bytes = plan
        .shape
        .iter()
        .try_fold(plan.dtype.width() as u64, |c, e| c.checked_mul(e.as_const()?.max(0) as u64));
    let numbers = nests.iter().all(|(_, n)| {
        let mut all = vec![];
        n.data.push_numbers(&mut all);
        n.extents.iter().chain(&all).all(small)
    });
    elements.is_some_and(|e| e < NARROW_ELEMENTS)
        && out_bytes.is_some_and(|b| b <= NARROW_LIMIT as u64)
        && buffers
        && numbers
}

/// Whether every buffer's bytes are at most [`NARROW_LIMIT`] (for a strided view: its window).
fn n_buffers_small(plan: &VerifiedGenericPlan) -> bool {
    let inputs = plan.inputs.iter().all(|d| {
        let shape: Option<Vec<i64>> = d.shape.iter().map(SymExpr::as_const).collect();
        let Some(shape) = shape else { return false };
        let decl = crate::plan::InputDecl {
            strides: d.strides.clone(),
            ..crate::plan::InputDecl::dense("", d.dtype, shape)
        };
        let elements = decl.tensor_shape().iter().try_fold(1i64, |c, &e| c.checked_mul(e));
        elements.and_then(|e| e.checked_mul(d.dtype.width() as i64)).is_some_and(|b| b <= NARROW_LIMIT)
    });
    inputs && plan.consts.iter().all(|c| (c.tensor.nbytes() as i64) <= NARROW_LIMIT)
}

/// The C type of an element of `width` bytes, moved as bits.
fn move_type(width: u8) -> &'static str {
    match width {
        1 => "unsigned char",
        2 => "unsigned short",
        4 => "unsigned int",
        _ => "unsigned long long",
    }
}

/// One kernel's code generation state.
struct Gen<'a> {
    plan: &'a VerifiedGenericPlan,
    name: &'a str,
    layout: &'a ArgLayout,
    /// The check the output nest makes itself ([`fold`]).
    folded: Option<fold::FoldedCheck>,
}

/// The integer types of one kernel: `u` for positions and coordinates, `s` for byte offsets.
#[derive(Clone, Copy)]
struct Types {
    u: &'static str,
    s: &'static str,
}

/// Per-kernel counters for unique names.
struct Body {
    text: String,
    labels: usize,
    t: Types,
    /// Whether the code has a failing path (it records into an error word).
    failed: bool,
}

impl Gen<'_> {
    fn kernel(&self, out: &mut String, nests: &[(usize, LoopNest)], wide: bool) -> Result<(), CudaError> {
        let t = if wide {
            Types { u: "unsigned long long", s: "long long" }
        } else {
            Types { u: "unsigned int", s: "int" }
        };
        let name = if wide { format!("{}_wide", self.name) } else { self.name.to_string() };
        let l = self.layout;
        let mut b = Body { text: String::new(), labels: 0, t, failed: false };
        self.prologue(out, &name, t, nests.len());
        if l.nests.iter().any(|n| n.group > 1) {
            // Uniform: whether the output takes 16-byte stores (a caller's pointer need not).
            let _ = writeln!(out, "  const int out16 = ((unsigned long long)out & 15) == 0;");
        }
        let last = nests.len().saturating_sub(1);
        if !nests.is_empty() {
            let _ = writeln!(
                out,
                "  for ({u} i = ({u})blockIdx.x * ({u})blockDim.x + ({u})threadIdx.x; i < e{last}; i += step) {{",
                u = t.u
            );
            for (n, (slot, nest)) in nests.iter().enumerate() {
                let start = if n == 0 { "0".to_string() } else { format!("e{}", n - 1) };
                b.text.push_str(&format!("    if (i < e{n}) {{\n      const {} lin = i - {start};\n", t.u));
                self.nest(&mut b, nest, *slot, &l.nests[n])?;
                b.text.push_str("    }\n");
            }
            out.push_str(&b.text);
            out.push_str("  }\n");
        }
        out.push_str("}\n");
        Ok(())
    }

    /// The opening of kernel `name` up to its grid-stride loop: the argument block unpacked
    /// (buffers, output, error words, integers, the end words of its first `ends` nests).
    fn prologue(&self, out: &mut String, name: &str, t: Types, ends: usize) {
        let l = self.layout;
        let _ = writeln!(out, "SLC_EXTERN __global__ void {name}({}_args a) {{", self.name);
        for i in 0..self.plan.inputs.len() {
            let _ = writeln!(out, "  const unsigned char* b{i} = (const unsigned char*)a.w[{i}];");
        }
        for i in 0..self.plan.consts.len() {
            let _ =
                writeln!(out, "  const unsigned char* b{} = {}_c{i};", self.plan.inputs.len() + i, self.name);
        }
        let _ = writeln!(out, "  unsigned char* out = (unsigned char*)a.w[{}];", l.out_word());
        let _ = writeln!(out, "  unsigned long long* err = (unsigned long long*)a.w[{}];", l.err_word());
        let _ =
            writeln!(out, "  volatile unsigned int* tell = (volatile unsigned int*)a.w[{}];", l.tell_word());
        for p in 0..l.params.len() {
            let _ = writeln!(out, "  const {} p{p} = ({})(long long)a.w[{}];", t.s, t.s, l.param_word(p));
        }
        for n in 0..ends {
            let _ = writeln!(out, "  const {} e{n} = ({})a.w[{}];", t.u, t.u, l.end_word(n));
        }
        let _ = writeln!(out, "  const {u} step = ({u})gridDim.x * ({u})blockDim.x;", u = t.u);
        let _ = writeln!(out, "  (void)out; (void)err; (void)tell; (void)step;");
    }

    /// A C expression for the integer `e` (a literal, or its parameter word).
    fn int(&self, e: &SymExpr, t: Types) -> String {
        match e.as_const() {
            Some(c) if t.s == "int" => format!("{c}"),
            Some(c) => format!("{c}LL"),
            None => {
                let p = self
                    .layout
                    .params
                    .iter()
                    .position(|q| q == e)
                    .expect("every symbolic integer is a parameter");
                format!("p{p}")
            }
        }
    }

    /// The body of one step of `nest` (`lin` counts steps): coordinates, then the nest's work.
    fn nest(&self, b: &mut Body, nest: &LoopNest, slot: usize, info: &NestInfo) -> Result<(), CudaError> {
        if info.group > 1 {
            return self.group_step(b, nest, slot, info.group);
        }
        let t = b.t;
        let unit = info.unit;
        self.coordinates(b, nest, "lin", unit, false);
        // A vector's elements share their gathers (fixed along the run): the first fails first.
        let output = nest.kind == NestKind::Output;
        let element = format!("lin * {unit}");
        let fail = |kind: u64| format!("{{ {} continue; }}", self.record(slot, &element, kind, output));
        let zero = b.label();
        if nest.kind == NestKind::Check {
            let offset = self.access(b, &nest.data, &fail, &zero, true)?;
            let _ = writeln!(b.text, "      (void){offset}; continue;\n      {zero}: continue;");
            return Ok(());
        }
        let w = unit * nest.width as u64;
        let ty = if w == 16 { "slc_v16" } else { move_type(w as u8) };
        let at = format!("out + ({})lin * {w}", t.s);
        // Elements are naturally aligned (to their width, at most 8 bytes); a wider move needs
        // its pointers aligned to it, which a caller's pointer need not be: then it moves the
        // same bytes in naturally aligned pieces.
        let piece = nest.width.min(8);
        let guarded = w > piece as u64;
        if guarded {
            let _ = writeln!(
                b.text,
                "      const int al = (((unsigned long long)out | (unsigned long long)b{}) & {}) == 0;",
                nest.data.buffer,
                w - 1
            );
        }
        let offset = self.access(b, &nest.data, &fail, &zero, false)?;
        let data = format!("b{} + {offset}", nest.data.buffer);
        if guarded {
            let (pty, pieces) = (move_type(piece), w / piece as u64);
            let each = |value: &str| {
                format!(
                    "{{ {u} j; for (j = 0; j < {pieces}; j++) *({pty}*)({at} + ({s})j * {piece}) = {value}; }}",
                    u = t.u,
                    s = t.s
                )
            };
            let moved = each(&format!("*(const {pty}*)({data} + ({})j * {piece})", t.s));
            let _ = writeln!(
                b.text,
                "      if (al) *({ty}*)({at}) = *(const {ty}*)({data});\n      else {moved}\n      continue;"
            );
            // In a block of its own: a jump to the label may not pass an initialization.
            let _ = writeln!(
                b.text,
                "      {zero}: if (al) {{ const {ty} z = {}; *({ty}*)({at}) = z; }} else {} continue;",
                if w == 16 { "{0ULL, 0ULL}" } else { "0" },
                each("0")
            );
        } else {
            let _ = writeln!(b.text, "      *({ty}*)({at}) = *(const {ty}*)({data}); continue;");
            let _ = writeln!(b.text, "      {zero}: {{ const {ty} z = 0; *({ty}*)({at}) = z; }} continue;");
        }
        Ok(())
    }

    /// Emits the coordinates `c0, c1, ...` of the element at linear position `from` (an
    /// unsigned C expression) over `nest`'s loops, its innermost loop counting runs of `unit`
    /// elements; `mutable`: they advance over a group ([`Self::group_step`]).
    fn coordinates(&self, b: &mut Body, nest: &LoopNest, from: &str, unit: u64, mutable: bool) {
        let t = b.t;
        let rank = nest.extents.len();
        let constant = if mutable { "" } else { "const " };
        if rank > 0 {
            let _ = writeln!(b.text, "      {} r = {from};", t.u);
        }
        for d in (0..rank).rev() {
            let mut e = self.int(&nest.extents[d], t);
            // The innermost loop counts vectors: its coordinate is the vector's first element.
            let scale = if d == rank - 1 && unit > 1 {
                e = format!("{}", nest.extents[d].as_const().unwrap_or(0) / unit as i64);
                format!(" * {unit}")
            } else {
                String::new()
            };
            if d == 0 {
                let _ = writeln!(b.text, "      {constant}{} c0 = ({})r{scale};", t.s, t.s);
            } else {
                let _ = writeln!(
                    b.text,
                    "      {constant}{} c{d} = ({})(r % ({})({e})){scale}; r /= ({})({e});",
                    t.s, t.s, t.u, t.u
                );
            }
        }
    }
}

impl Body {
    fn label(&mut self) -> String {
        self.labels += 1;
        format!("v{}", self.labels)
    }
}
