//! The scheduling passes, in order: the first two reshape the loops, the others each choose a
//! [`Strategy`] for the loops whose shape suits it, and the last keeps the per-call versions
//! within their budget. A strategy is chosen once: a pass leaves a
//! loop alone that an earlier pass has given a strategy, so the order of [`PASSES`] is the order
//! of preference; `shuffle-vectors`, `spread-ahead` and `read-ahead` only refine a strategy chosen
//! before them.

use super::versions::{MAX_VERSIONS, fit_budget};
use super::{ByteWindow, Copy, GatherAhead, LoopNest, ReadAhead, Shuffle, Strategy, Target, is_const};
use crate::types::OobMode;
use crate::types::sym::SymExpr;

/// Runs of at most this many bytes are copied with inline loads and stores ([`Copy::Inline`]),
/// longer ones by a loop of vector moves up to [`LOOP_COPY_BYTES`], then by memcpy.
pub const INLINE_COPY_BYTES: i64 = 64;
/// The longest run of a stream without gathers copied by an inline loop. Rows that follow each
/// other through memory stream in ahead of a loop of 16-byte moves, which copied `a[:, 1:-1]`
/// at 0.84-0.88x a memcpy of the whole output for rows of 1 KiB to 64 KiB, where a memcpy call
/// per row took 1.13-1.44x (measured on an AMD EPYC, whose libc copies rows over 8 KiB with
/// `rep movsb`). Gathered rows each start with cache misses, and libc's wider moves have more
/// of a row's lines in flight at once (`gather(a, idx, axis=0)` on rows of 1 KiB: 2.3x memcpy
/// by call, 2.5x by loop). Past this length the call costs nothing and libc picks its best
/// strategy for long copies (non-temporal stores).
pub const LOOP_COPY_BYTES: i64 = 1 << 18;
/// The most gathered contributions (8 bytes each, all pending terms together) a kernel
/// normalizes ahead of the rows that reuse them, in a table on its stack. The table must hold
/// every column: filled in chunks, it would walk every row once per chunk and lose the cache
/// locality of a row's random reads.
const TABLE_ENTRIES: i64 = 2048;
/// Gathers within rows of at least this many bytes (and at most [`TOUCH_MAX_BYTES`]) read the
/// next row ahead (`read_ahead`).
pub const TOUCH_MIN_BYTES: i64 = 1 << 10;
pub const TOUCH_MAX_BYTES: i64 = 1 << 18;
pub const CACHE_LINE: i64 = 64;
/// The shortest row [`stream_rows`] writes around the caches: a few whole lines (a shorter row
/// is mostly the partial lines at its ends, which gain little from skipping the cache).
const STREAM_ROW_MIN_BYTES: i64 = 4 * CACHE_LINE;
/// The least span of a scattered destination [`stream_rows`] writes around the caches: one a
/// last-level cache cannot hold, whose lines would be evicted before they were read again.
const STREAM_MIN_BYTES: i64 = 16 << 20;

/// The shortest run (in output bytes) [`spread_ahead`] stores by a prefetching call: its
/// prefetches reach 4 KiB past its end.
const SPREAD_AHEAD_MIN_RUN_BYTES: i64 = 16 << 10;

/// A named rewrite of the loop nest; `run` says whether it changed anything.
pub struct Pass {
    pub name: &'static str,
    pub run: fn(&mut LoopNest, Target) -> bool,
}

/// The passes, in order.
pub const PASSES: &[Pass] = &[
    Pass { name: "drop-unit-axes", run: drop_unit_axes },
    Pass { name: "merge-contiguous-axes", run: merge_contiguous_axes },
    Pass { name: "masked-run", run: masked_run },
    Pass { name: "fill-runs", run: fill_runs },
    Pass { name: "block-copy", run: block_copy },
    Pass { name: "block-rows", run: block_rows },
    Pass { name: "index-table", run: index_table },
    Pass { name: "reversed-tiles", run: reversed_tiles },
    Pass { name: "transpose-tiles", run: transpose_tiles },
    Pass { name: "strided-copy", run: strided_copy },
    Pass { name: "shuffle-vectors", run: shuffle_vectors },
    Pass { name: "spread-ahead", run: spread_ahead },
    Pass { name: "guarded-gather", run: guarded_gather },
    Pass { name: "stream-rows", run: stream_rows },
    Pass { name: "read-ahead", run: read_ahead },
    Pass { name: "version-budget", run: version_budget },
];

/// Runs every pass on `nest`; `dump` sees it first and after each pass that changed it.
pub(super) fn run(mut nest: LoopNest, target: Target, mut dump: impl FnMut(&str, &LoopNest)) -> LoopNest {
    dump("initial", &nest);
    if nest.empty {
        return nest;
    }
    for pass in PASSES {
        if (pass.run)(&mut nest, target) {
            dump(pass.name, &nest);
        }
    }
    nest.params = nest.collect_params();
    nest
}

/// At most [`MAX_VERSIONS`] versions of the loops per kernel ([`fit_budget`]).
fn version_budget(nest: &mut LoopNest, _: Target) -> bool {
    fit_budget(nest, MAX_VERSIONS)
}

/// A loop of one iteration only moves no pointer: remove it.
fn drop_unit_axes(nest: &mut LoopNest, _: Target) -> bool {
    let keep: Vec<bool> = nest.extents.iter().map(|e| !is_const(e, 1)).collect();
    if keep.iter().all(|&k| k) {
        return false;
    }
    let retain = |i: &mut usize| {
        *i += 1;
        keep[*i - 1]
    };
    nest.for_each_strides(&mut |s| {
        let mut i = 0;
        s.retain(|_| retain(&mut i))
    });
    let mut i = 0;
    nest.strategies.retain(|_| retain(&mut i));
    nest.extents.retain(|e| !is_const(e, 1));
    true
}

/// Loops d and d+1 are one loop when every stream steps over d exactly as a full run of d+1
/// (for symbolic strides: when the normal forms say so, as they do for dense inputs).
fn merge_contiguous_axes(nest: &mut LoopNest, _: Target) -> bool {
    let mut changed = false;
    let mut d = nest.extents.len();
    while d >= 2 {
        d -= 1;
        let inner = nest.extents[d].clone();
        let mergeable = nest.all_strides().iter().all(|s| s[d - 1] == s[d].mul(&inner));
        if mergeable {
            nest.extents[d - 1] = nest.extents[d - 1].mul(&inner);
            nest.extents.remove(d);
            nest.strategies.remove(d);
            nest.for_each_strides(&mut |s| {
                s.remove(d - 1);
            });
            changed = true;
        }
    }
    changed
}

/// The innermost loop and, for the strategies of two loops, the one outside it, when the nest
/// has that many loops, neither has a strategy yet, and no gathered destination moves along
/// them (a store's scattered writes leave them serial), in a nest that copies (a combining
/// store computes each element: only [`strided_copy`] schedules its loops).
fn unscheduled(nest: &LoopNest, loops: usize) -> Option<usize> {
    unscheduled_loops(nest, loops).filter(|_| nest.combine.is_none())
}

/// [`unscheduled`], combining stores included; never a masked store's loops (each element is
/// written with its value or itself, as its mask byte says: only [`masked_run`] schedules
/// them).
fn unscheduled_loops(nest: &LoopNest, loops: usize) -> Option<usize> {
    if nest.masked_value.is_some() {
        return None;
    }
    let first = nest.extents.len().checked_sub(loops)?;
    let free = nest.strategies[first..].iter().all(|&s| s == Strategy::Serial) && nest.out_fixed_from(first);
    free.then_some(first)
}

/// A masked store's innermost loop over consecutive output elements and consecutive mask bytes
/// (`a[m] = 0` on a dense target): 16 mask bytes at a time, widened by a byte shuffle into the
/// lanes of the elements they select, which take the value where set and keep their bytes
/// elsewhere (B15 moved one element at a time before, 2.6-3.4x a memcpy of the target). Along
/// which the mask does not move (`a[r] = 0`, `r` over rows): a row its byte skips or fills
/// (one element at a time with a select, it took 3-6x NumPy's time on 4096² f32).
fn masked_run(nest: &mut LoopNest, target: Target) -> bool {
    let Some(last) = nest.extents.len().checked_sub(1) else { return false };
    let w = nest.width as i64;
    let fits = nest.masked_value.is_some()
        && nest.strategies[last] == Strategy::Serial
        && nest.data.terms.is_empty()
        && nest.out_fixed_from(last);
    if !fits {
        return false;
    }
    if is_const(&nest.data.strides[last], 0) {
        let streaming = fills_past_the_caches(nest, last);
        return set(nest, last, Strategy::MaskedRow { streaming });
    }
    let dense = is_const(&nest.out[last], w) && is_const(&nest.data.strides[last], 1);
    let widens = w == 1 || (w <= 8 && target.byte_shuffles);
    dense && widens && set(nest, last, Strategy::MaskedRun)
}

/// An innermost loop that writes one value over consecutive elements, the data fixed along it
/// (`a[1:] = 0`, `a[:, 1:] = c[:, None]`): the value loaded once per run and stored 16 bytes at
/// a time, past the caches with non-temporal stores. As a strided copy from a stride of 0 it
/// moved one element at a time (`a[1:] = 0` on 4096² f32: 8.5-10 ms against NumPy's 7.5-8.5).
fn fill_runs(nest: &mut LoopNest, _: Target) -> bool {
    let Some(last) = unscheduled(nest, 1) else { return false };
    let w = nest.width as i64;
    let fits = w <= 8
        && is_const(&nest.out[last], w)
        && is_const(&nest.data.strides[last], 0)
        && nest.pending_terms(last).next().is_none();
    if !fits {
        return false;
    }
    let streaming = fills_past_the_caches(nest, last);
    set(nest, last, Strategy::Fill { streaming })
}

/// Whether a fill (a `set` of one value per row, rows of consecutive elements: a masked row, a
/// fill run) writes rows of at least [`STREAM_ROW_MIN_BYTES`] over a box of at least
/// [`STREAM_MIN_BYTES`], which the caches cannot hold: then non-temporal stores, which do not
/// read a line before writing it, fill the rows in half the time
/// (`benches/masked_row_floor.c`: 2.0-2.2 against 3.7-4.0 ms for B15r's rows).
fn fills_past_the_caches(nest: &LoopNest, last: usize) -> bool {
    let w = nest.width as i64;
    let row = nest.extents[last].as_const().and_then(|n| n.checked_mul(w));
    let bytes = nest.extents.iter().try_fold(w, |acc, e| acc.checked_mul(e.as_const()?));
    nest.combine.is_none()
        && is_const(&nest.out[last], w)
        && w <= 8
        && row.is_some_and(|r| r >= STREAM_ROW_MIN_BYTES)
        && bytes.is_some_and(|b| b >= STREAM_MIN_BYTES)
}

/// Gives loops `first..` the strategy of the first: the loop inside it is `Joined`.
fn set(nest: &mut LoopNest, first: usize, strategy: Strategy) -> bool {
    nest.strategies[first] = strategy;
    nest.strategies[first + 1..].fill(Strategy::Joined);
    true
}

/// An innermost loop that reads one contiguous run (and gathers nothing that varies along it)
/// is a block copy; of a length chosen per call when its length is symbolic.
fn block_copy(nest: &mut LoopNest, _: Target) -> bool {
    let Some(last) = unscheduled(nest, 1) else { return false };
    let w = nest.width as i64;
    let contiguous = is_const(&nest.out[last], w)
        && is_const(&nest.data.strides[last], w)
        && nest.data.terms.iter().all(|t| t.index.invariant_at(last));
    if !contiguous {
        return false;
    }
    let copy = match nest.extents[last].as_const().map(|e| e.saturating_mul(w)) {
        // The caller's range sets how much of the outermost loop's run to copy.
        _ if last == 0 => Copy::Memcpy,
        Some(n) if n <= INLINE_COPY_BYTES => Copy::Inline,
        Some(n) if n <= LOOP_COPY_BYTES && nest.data.terms.is_empty() => Copy::Loop,
        None => Copy::BySize { loop_copy: nest.data.terms.is_empty() },
        _ => Copy::Memcpy,
    };
    set(nest, last, Strategy::Block(copy))
}

/// Rows of a block short enough to copy inline, when every gather is fixed along the rows and
/// none can miss (`a[2:, ..., :10]`: 40 bytes of every row of 256): pointers walk the rows,
/// several per trip, so that more rows' reads are in flight at once (a row per trip left a third
/// of the time on the table). A block of a symbolic length gets the strategy too, its size class
/// decided once per run of rows rather than once per row; the inner loop keeps its block copy for
/// the rows too long to copy inline.
fn block_rows(nest: &mut LoopNest, _: Target) -> bool {
    let Some(rows) = nest.extents.len().checked_sub(2) else { return false };
    let by_size = match nest.strategies[rows..] {
        [Strategy::Serial, Strategy::Block(Copy::Inline)] => false,
        [Strategy::Serial, Strategy::Block(Copy::BySize { .. })] => true,
        _ => return false,
    };
    let fixed = nest.pending_terms(rows).next().is_none() && nest.out_fixed_from(rows);
    let no_miss = nest.data.terms.iter().all(|t| t.mode != OobMode::Zero);
    if !(fixed && no_miss) {
        return false;
    }
    if by_size {
        nest.strategies[rows] = Strategy::BlockRows { by_size };
        return true;
    }
    set(nest, rows, Strategy::BlockRows { by_size })
}

/// Rows whose columns' gathers stay put along the rows (`a[:, idx]`: the same columns in every
/// row), few enough to fit the table (a constant number of columns): normalizing each index once
/// for all rows pays, unless there is only one row.
fn index_table(nest: &mut LoopNest, _: Target) -> bool {
    let Some(rows) = unscheduled(nest, 2) else { return false };
    let Some(columns) = nest.extents[rows + 1].as_const() else { return false };
    let pending: Vec<_> = nest.pending_terms(rows).collect();
    let pays = nest.extents[rows].as_const().is_none_or(|r| r > 1)
        && !pending.is_empty()
        && (pending.len() as i64).saturating_mul(columns) <= TABLE_ENTRIES
        && pending.iter().all(|t| t.index.invariant_at(rows));
    pays && set(nest, rows, Strategy::IndexTable(None))
}

/// Dense tiles of at most 8 bytes whose elements are read in reverse (`img[..., ::-1]` on
/// pixels), every gather fixed along them: worth a shuffle where the target has one. A tile of a
/// symbolic number of elements (the channels of `img: u8[H, W, C]`) gets the strategy too, its
/// size decided per run of tiles (a version per size that fits, strided otherwise).
fn reversed_tiles(nest: &mut LoopNest, target: Target) -> bool {
    let Some(tiles) = unscheduled(nest, 2) else { return false };
    let w = nest.width as i64;
    let elems = &nest.extents[tiles + 1];
    let tile = elems.mul(&SymExpr::constant(w));
    let dense =
        is_const(&nest.out[tiles + 1], w) && nest.out[tiles] == tile && nest.data.strides[tiles] == tile;
    let reversed = is_const(&nest.data.strides[tiles + 1], -w);
    let fixed = nest.pending_terms(tiles).next().is_none();
    let fits = match elems.as_const() {
        Some(elems) => elems >= 2 && elems.saturating_mul(w) <= 8,
        // Some size of at least 2 elements must fit.
        None => 2 * w <= 8,
    };
    let by_size = elems.as_const().is_none();
    target.byte_shuffles
        && fits
        && dense
        && reversed
        && fixed
        && set(nest, tiles, Strategy::ReversedTiles { by_size })
}

/// Two innermost loops that read a transposed layout (`x.T[1:]`, `x.T[::2, ::-1]`): the inner
/// one writes consecutive elements and reads each from another line (a data stride of at least
/// a line), the outer one moves the data by less than a line. Row by row, each inner loop
/// touched a line per element and used one element of it, the next row coming back for the
/// next element long after the line had left the cache: a transposed 4096² f32 copy took
/// 110–119 ms on one thread, NumPy's copy 131–135 ms (48 ms in tiles; docs/benchmarks.md). In tiles ([`Strategy::TransposeTiles`]) each line is
/// used whole while it is cached. Gathers, stores with a gathered destination and combining
/// or masked stores keep their strategies.
fn transpose_tiles(nest: &mut LoopNest, _: Target) -> bool {
    let Some(rows) = unscheduled_loops(nest, 2) else { return false };
    let cols = rows + 1;
    let w = nest.width as i64;
    let across = nest.data.strides[cols].as_const().is_some_and(|s| s.abs() >= CACHE_LINE);
    let within = nest.data.strides[rows].as_const().is_some_and(|s| s != 0 && s.abs() < CACHE_LINE);
    let plain = nest.data.terms.is_empty()
        && nest.out_terms.is_empty()
        && nest.combine.is_none()
        && nest.masked_value.is_none();
    plain && across && within && is_const(&nest.out[cols], w) && set(nest, rows, Strategy::TransposeTiles)
}

/// An innermost loop along which every gather is fixed is an affine copy by a fixed stride;
/// in a combining store, computed along the stride (16 bytes at a time where contiguous: the
/// one strategy such a nest takes), where no value can miss (a zero-mode miss combines with 0).
fn strided_copy(nest: &mut LoopNest, _: Target) -> bool {
    let Some(last) = unscheduled_loops(nest, 1) else { return false };
    let no_miss = nest.combine.is_none() || nest.data.terms.iter().all(|t| t.mode != OobMode::Zero);
    no_miss && nest.pending_terms(last).next().is_none() && set(nest, last, Strategy::Strided(None))
}

/// A strided copy into consecutive output elements that reads its run backwards or every other
/// element, or a contiguous run written into every other output element (a store's
/// `a[:, ::2] = b`: B14 went from scalar stores to a shuffle with the elements between, a third
/// fewer stores): 16 bytes at a time, shuffled, where the target has byte shuffles.
fn shuffle_vectors(nest: &mut LoopNest, target: Target) -> bool {
    let Some(last) = nest.extents.len().checked_sub(1) else { return false };
    let w = nest.width as i64;
    // A 16-byte element fills the vector alone: there is nothing to shuffle.
    if !target.byte_shuffles
        || w > 8
        || nest.strategies[last] != Strategy::Strided(None)
        || nest.combine.is_some()
    {
        return false;
    }
    let shuffle = match (nest.out[last].as_const(), nest.data.strides[last].as_const()) {
        (Some(o), Some(s)) if o == w && s == -w => Shuffle::Reverse,
        (Some(o), Some(s)) if o == w && s == 2 * w => Shuffle::Evens,
        (Some(o), Some(s)) if o == 2 * w && s == w => Shuffle::Spread,
        _ => return false,
    };
    set(nest, last, Strategy::Strided(Some(shuffle)))
}

/// A run stored into every other element (`a[:, ::2] = b`) over a box the caches cannot hold
/// ([`STREAM_MIN_BYTES`]) is stored by a call that prefetches both streams 4 KiB ahead
/// ([`Strategy::SpreadAhead`]):
/// B14 one thread 11.6 ms against NumPy's 10.4-10.8 before, in C 9.1 against 11.8 ms
/// (`benches/strided_store_floor.c`). The prefetches run on past a run's end, so a run must
/// span at least [`SPREAD_AHEAD_MIN_RUN_BYTES`] for them to be mostly its own lines (B14's
/// rows merge into one run).
fn spread_ahead(nest: &mut LoopNest, _: Target) -> bool {
    let Some(last) = nest.extents.len().checked_sub(1) else { return false };
    let w = nest.width as i64;
    let run = nest.extents[last].as_const().and_then(|n| n.checked_mul(2 * w));
    let bytes = nest.extents.iter().try_fold(2 * w, |acc, e| acc.checked_mul(e.as_const()?));
    // A spread run, or one a target without byte shuffles copies element by element.
    let spread = matches!(nest.strategies[last], Strategy::Strided(None | Some(Shuffle::Spread)))
        && is_const(&nest.out[last], 2 * w)
        && is_const(&nest.data.strides[last], w);
    spread
        && w <= 8
        && nest.combine.is_none()
        && nest.data.terms.is_empty()
        && run.is_some_and(|r| r >= SPREAD_AHEAD_MIN_RUN_BYTES)
        && bytes.is_some_and(|b| b >= STREAM_MIN_BYTES)
        && set(nest, last, Strategy::SpreadAhead)
}

/// An innermost loop whose gathers move along it and read their indices straight from index
/// tensors (no gather of a gather, `a[idx]` with 2-D `idx`, batched gathers): pointers walk the
/// index tensors, and in-range indices are tested a trip at a time.
fn guarded_gather(nest: &mut LoopNest, _: Target) -> bool {
    let Some(last) = unscheduled(nest, 1) else { return false };
    let flat = {
        let mut pending = nest.pending_terms(last).peekable();
        pending.peek().is_some() && pending.all(|t| t.index.terms.is_empty())
    };
    flat && set(nest, last, Strategy::GuardedGather(None))
}

/// Rows written through a gathered destination (`a[i] = v` on rows of 1 KiB, each row to a
/// random place in a destination larger than the caches) are copied with non-temporal stores
/// ([`Copy::Streaming`]), where the destination moves along the row loop only and reads its
/// indices straight from index tensors, the row holds [`STREAM_ROW_MIN_BYTES`] to
/// [`LOOP_COPY_BYTES`] (longer ones libc's memcpy already streams), and the gathered axes span
/// at least [`STREAM_MIN_BYTES`]. An ordinary store first reads the line it writes, so a
/// scattered row costs a third more memory traffic than a copy of it. (`benches/stores.py` B13,
/// one thread: see docs/benchmarks.md.)
fn stream_rows(nest: &mut LoopNest, _: Target) -> bool {
    let Some(rows) = nest.extents.len().checked_sub(2) else { return false };
    let row_bytes = nest.extents[rows + 1].as_const().map(|e| e.saturating_mul(nest.width as i64));
    if !row_bytes.is_some_and(|b| (STREAM_ROW_MIN_BYTES..=LOOP_COPY_BYTES).contains(&b)) {
        return false;
    }
    let scattered = !nest.out_terms.is_empty()
        && nest.out_terms.iter().all(|t| {
            t.hoist_level() == rows + 1 && t.index.terms.is_empty() && t.len.as_const().is_some_and(|n| n > 0)
        });
    let span = nest.out_terms.iter().try_fold(0i64, |span, t| {
        let reach = t.len.as_const()?.checked_mul(t.stride.as_const()?.checked_abs()?)?;
        span.checked_add(reach)
    });
    let shape =
        nest.strategies[rows] == Strategy::Serial && matches!(nest.strategies[rows + 1], Strategy::Block(_));
    if !(scattered && shape && span.is_some_and(|s| s >= STREAM_MIN_BYTES)) {
        return false;
    }
    nest.strategies[rows + 1] = Strategy::Block(Copy::Streaming);
    true
}

/// Random reads within a row wait on memory one cache line at a time; so, where the data's
/// only gather reaches a span of a row that fits in cache, the loop over the row's elements
/// also reads the same span of the next row (the row loop one step on), a line every few
/// elements, in order: the hardware streams it in while this row is gathered from cache, and
/// the misses overlap the gathers instead of stalling ahead of them. The span must hold a byte
/// per element (the reads advance by its bytes per element, rounded down) and fit the buffer.
/// Where those numbers are symbolic, a guarded gather under the outermost loop, by a constant
/// stride of at most a line, reads ahead by the call ([`GatherAhead::ByCall`]): the kernel tests
/// the same limits on the call's numbers, and clamps the next row's span between the first and
/// the last row's instead of into the buffer.
fn read_ahead(nest: &mut LoopNest, _: Target) -> bool {
    let Some(last) = nest.extents.len().checked_sub(1) else { return false };
    // The row loop, and the loop over a row's elements.
    let (row, elements) = match nest.strategies[last] {
        Strategy::GuardedGather(None) if last > 0 => (last - 1, last),
        Strategy::Joined if last > 0 && nest.strategies[last - 1] == Strategy::IndexTable(None) => {
            (last - 1, last)
        }
        _ => return false,
    };
    let [t] = nest.data.terms.as_slice() else { return false };
    let numbers = (t.len.as_const(), t.stride.as_const(), nest.data.strides[row].as_const());
    let (Some(len), Some(stride), Some(step), Some(elements)) =
        (numbers.0, numbers.1, numbers.2, nest.extents[elements].as_const())
    else {
        let by_call = row == 0
            && nest.strategies[last] == Strategy::GuardedGather(None)
            && t.stride.as_const().is_some_and(|s| s != 0 && s.abs() <= CACHE_LINE);
        if by_call {
            nest.strategies[last] = Strategy::GuardedGather(Some(GatherAhead::ByCall));
        }
        return by_call;
    };
    let reach = (len - 1).saturating_mul(stride);
    let span = reach.saturating_abs().saturating_add(nest.width as i64);
    let bytes = nest.buffer_windows[nest.data.buffer].map_or(0, ByteWindow::bytes);
    if len < 1 || stride.abs() > CACHE_LINE || step == 0 || elements < 1 || span < elements {
        return false;
    }
    if !(TOUCH_MIN_BYTES..=TOUCH_MAX_BYTES).contains(&span) || span > bytes {
        return false;
    }
    let ahead = ReadAhead { step, reach, span };
    match &mut nest.strategies[row] {
        Strategy::IndexTable(a) => *a = Some(ahead),
        _ => nest.strategies[last] = Strategy::GuardedGather(Some(GatherAhead::Known(ahead))),
    }
    true
}
