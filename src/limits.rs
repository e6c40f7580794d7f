//! Resource limits. Every program, tensor and file slc accepts is bounded, and each bound is
//! checked before the work it guards: the text's length before lexing, nesting while parsing
//! (before a deep tree exists), ranks and program size while checking, plan size while lowering,
//! the output's size before code generation or allocation. `docs/robustness.md` lists them with
//! their error codes.

/// Program text, in bytes (`E0003`).
pub const MAX_SOURCE_BYTES: usize = 1 << 20;

/// How deeply expressions may nest (`E0004` in the text, `E0118` once `let`s are substituted):
/// every bracket, operator, call, index and attribute is a level. Python's parser stops at 200
/// nested brackets; no slicing program comes near this.
pub const MAX_NESTING: usize = 256;

/// Dimensions of any tensor: an input, a list literal, an intermediate or the result (`E0119`);
/// `.npy` files of more are refused too. NumPy's own maximum (`NPY_MAXDIMS`) is 64.
pub const MAX_RANK: usize = slc_runtime::MAX_RANK;

/// Checked-program nodes, counting every copy a `let` substitution makes (`E0127`): without a
/// bound, `let x = i[i]; let x = x[x]; ...` doubles the program with every line.
pub const MAX_PROGRAM_NODES: usize = 1 << 16;

/// Accesses (reads of a buffer, one per gathered index) built while lowering a program to its
/// plan, and so in the plan (`E0304`). Fusing a gather into a chain copies its index access into
/// each access that moves along the gathered axis, and checks copy whole index expressions.
pub const MAX_PLAN_ACCESSES: usize = 1 << 16;

/// Worker threads one run splits its output across, whatever `RunOptions::threads` asks:
/// beyond the cores they only cost, and tens of thousands exhaust the process's memory maps
/// (a thread that cannot set up its stack guard aborts the process).
pub const MAX_THREADS: usize = 256;

/// Stack any stage may take besides its recursion. Cranelift compiling one kernel is the
/// largest user: a few hundred KiB in an unoptimized build (far less when optimized).
const BASE_STACK_BYTES: usize = 1 << 20;

/// Stack one level of nesting may take in any recursive stage (checking, lowering,
/// verification, printing and parsing plans, interpreting, code generation), unoptimized
/// builds included.
const LEVEL_STACK_BYTES: usize = 32 << 10;

/// Runs `f`, a stage that recurses once per level of a program nested `depth` levels deep,
/// where the stack is deep enough for it: on the calling thread when enough of its stack is
/// left, otherwise on a fresh stack segment of the size needed (`stacker`: only the pages used
/// are committed). Whatever thread an embedder calls the library on, and whatever the build
/// profile, a program within the limits cannot overflow it.
pub(crate) fn with_stack_for<T>(depth: usize, f: impl FnOnce() -> T) -> T {
    let need = BASE_STACK_BYTES.saturating_add(depth.saturating_mul(LEVEL_STACK_BYTES));
    stacker::maybe_grow(need, need, f)
}

/// The default bound on an output's size: what this process can still allocate — the
/// system's available memory, or what its cgroup still allows if that is less. `None` where
/// neither can be read (not Linux): then only allocation failures bound outputs.
pub fn available_memory() -> Option<u64> {
    slc_runtime::available_memory()
}
