//! The worker threads parallel kernel calls share: started once, parked between calls. A call
//! cuts its outer range into pieces that the calling thread and the workers it wakes claim one
//! at a time, so a worker the scheduler has not run yet (a busy machine) delays nothing: the
//! caller claims its pieces, and waits only for pieces a worker has begun. (Before, each call
//! started its threads and split the range in equal parts: on two cores shared with a build,
//! `a[i] += v` through a NumPy view took 8.4 ms where one thread took 1.2, every part waiting for
//! its thread to be scheduled.)

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicI32, AtomicI64, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

/// A kernel over a range of outer iterations `[begin, end)`, returning its status.
pub(crate) type Part<'k> = &'k (dyn Fn(i64, i64) -> i32 + Sync);

/// Pieces per thread of a call: enough that a slow thread's last piece is a small delay.
const PIECES_PER_THREAD: i64 = 4;

/// The status of a job one of whose workers panicked (as a failed join was before: the call
/// fails; the kernels themselves do not unwind).
const PANICKED: i32 = crate::backend::clif::STATUS_INDEX_OUT_OF_RANGE;

/// One call's range and how far it is claimed.
struct Job<'k> {
    kernel: Part<'k>,
    outer: i64,
    piece: i64,
    next: AtomicI64,
    status: AtomicI32,
}

impl Job<'_> {
    /// Claims and runs pieces until none is left.
    fn work(&self) {
        loop {
            let begin = self.next.fetch_add(self.piece, Ordering::Relaxed);
            if begin >= self.outer {
                return;
            }
            let status = (self.kernel)(begin, (begin + self.piece).min(self.outer));
            self.status.fetch_max(status, Ordering::Relaxed);
        }
    }
}

/// The published job, its lifetime erased: valid while the caller waits (it withdraws the job,
/// then waits until no worker is inside it).
#[derive(Clone, Copy)]
struct Published(*const Job<'static>);

// SAFETY: a `Job` is shared by reference only, and all of it is `Sync`.
unsafe impl Send for Published {}

struct State {
    job: Option<Published>,
    /// Counts jobs published, so that a worker takes each at most once.
    epoch: u64,
    /// Workers the job may still take.
    wanted: usize,
    /// Workers inside the job.
    active: usize,
    /// Worker threads started.
    threads: usize,
}

struct Pool {
    /// The process the threads belong to: a child forked from it has none of them.
    pid: u32,
    state: Mutex<State>,
    /// Workers wait here for a job; a caller waits here for its job's workers to leave.
    wake: Condvar,
    left: Condvar,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(|| Pool {
        pid: std::process::id(),
        state: Mutex::new(State { job: None, epoch: 0, wanted: 0, active: 0, threads: 0 }),
        wake: Condvar::new(),
        left: Condvar::new(),
    })
}

impl Pool {
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A worker thread's life: wait for a job not taken yet, help with it, repeat.
    fn serve(&'static self) {
        let mut seen = 0;
        loop {
            let mut state = self.lock();
            let job = loop {
                match state.job {
                    Some(job) if state.epoch != seen && state.wanted > 0 => break job,
                    _ => state = self.wake.wait(state).unwrap_or_else(|e| e.into_inner()),
                }
            };
            seen = state.epoch;
            state.wanted -= 1;
            state.active += 1;
            drop(state);
            // SAFETY: the caller keeps the job alive until `active` is back to zero.
            let job = unsafe { &*job.0 };
            if catch_unwind(AssertUnwindSafe(|| job.work())).is_err() {
                job.status.store(PANICKED, Ordering::Relaxed);
            }
            let mut state = self.lock();
            state.active -= 1;
            if state.active == 0 {
                self.left.notify_all();
            }
        }
    }
}

/// Runs `kernel` over `[0, outer)` on the calling thread and up to `workers - 1` of the shared
/// worker threads (at most [`MAX_THREADS`](crate::limits::MAX_THREADS) in all), in pieces;
/// the worst status wins. Where no worker can help (another call holds them, the process
/// cannot start a thread, or it is a fork of the one that started them), the calling thread
/// runs it all.
pub(crate) fn split_across_threads(outer: i64, workers: usize, kernel: Part<'_>) -> i32 {
    split_in_pieces(outer, workers, None, kernel)
}

/// [`split_across_threads`] in pieces of one iteration each: for iterations as long as a
/// Zarr chunk's decoding, where a piece of two would leave one thread idle at the end.
#[cfg(feature = "zarr")]
pub(crate) fn split_one_by_one(outer: i64, workers: usize, kernel: Part<'_>) -> i32 {
    split_in_pieces(outer, workers, Some(1), kernel)
}

fn split_in_pieces(outer: i64, workers: usize, piece: Option<i64>, kernel: Part<'_>) -> i32 {
    let helpers = workers.clamp(1, crate::limits::MAX_THREADS) - 1;
    let pool = pool();
    if helpers == 0 || outer <= 1 || pool.pid != std::process::id() {
        return kernel(0, outer.max(0));
    }
    let threads = helpers.min(outer as usize - 1);
    let job = Job {
        kernel,
        outer,
        piece: piece.unwrap_or(
            (outer + (threads as i64 + 1) * PIECES_PER_THREAD - 1)
                / ((threads as i64 + 1) * PIECES_PER_THREAD),
        ),
        next: AtomicI64::new(0),
        status: AtomicI32::new(crate::backend::clif::STATUS_OK),
    };
    {
        let mut state = pool.lock();
        if state.job.is_some() {
            drop(state);
            return kernel(0, outer);
        }
        while state.threads < threads {
            let started =
                std::thread::Builder::new().name("slc-worker".into()).spawn(|| self::pool().serve());
            if started.is_err() {
                break;
            }
            state.threads += 1;
        }
        // SAFETY (of the erased lifetime): the job is withdrawn below, and this call returns
        // only once no worker is inside it.
        state.job = Some(Published((&job as *const Job<'_>).cast()));
        state.epoch += 1;
        state.wanted = threads.min(state.threads);
    }
    for _ in 0..threads {
        pool.wake.notify_one();
    }
    let worked = catch_unwind(AssertUnwindSafe(|| job.work()));
    let mut state = pool.lock();
    state.job = None;
    state.wanted = 0;
    while state.active > 0 {
        state = pool.left.wait(state).unwrap_or_else(|e| e.into_inner());
    }
    drop(state);
    // Only now may the job go, and with it a panic of the caller's own pieces.
    if let Err(panic) = worked {
        std::panic::resume_unwind(panic);
    }
    job.status.load(Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Every outer iteration runs exactly once, whatever the split, and the worst status wins.
    #[test]
    fn every_iteration_runs_once_and_the_worst_status_wins() {
        for (outer, workers) in [(0, 4), (1, 4), (2, 2), (7, 3), (1000, 2), (1000, 16), (5, 300)] {
            let seen: Vec<AtomicU64> = (0..outer).map(|_| AtomicU64::new(0)).collect();
            let status = split_across_threads(outer, workers, &|b, e| {
                for i in b..e {
                    seen[i as usize].fetch_add(1, Ordering::Relaxed);
                }
                if b <= 3 && 3 < e { 2 } else { 0 }
            });
            assert!(seen.iter().all(|s| s.load(Ordering::Relaxed) == 1), "{outer} on {workers}");
            assert_eq!(status, if outer > 3 { 2 } else { 0 }, "{outer} on {workers}");
        }
    }

    /// Calls from several threads at once each run whole (one holds the workers, the others run
    /// alone), and a call waits for the pieces its workers took.
    #[test]
    fn concurrent_calls_each_run_whole() {
        std::thread::scope(|s| {
            for t in 0..6u64 {
                s.spawn(move || {
                    for round in 0..50u64 {
                        let outer = 64 + (t * 7 + round) as i64 % 50;
                        let sum = AtomicU64::new(0);
                        split_across_threads(outer, 3, &|b, e| {
                            std::thread::yield_now();
                            sum.fetch_add((b..e).map(|i| i as u64).sum(), Ordering::Relaxed);
                            0
                        });
                        let n = outer as u64;
                        assert_eq!(sum.load(Ordering::Relaxed), n * (n - 1) / 2);
                    }
                });
            }
        });
    }
}
