//! A mapped input whose file shrinks while it is mapped (another process truncates it) makes the
//! next read of a lost page raise SIGBUS — NumPy's memmap has the same hazard. Unhandled, the
//! process dies with "Bus error" and no word of which file. [`report_truncated_inputs`] installs
//! a handler that, for a fault inside a mapped file, names the file on standard error and exits
//! with status 1 (no output has been written then: outputs are written after the kernel runs);
//! any other SIGBUS gets the default action. It is opt-in: a library must not take over a
//! process's signals, so the command line installs it and embedders decide for themselves.
//!
//! The handler may only do async-signal-safe work: the mappings are kept in a fixed table of
//! atomics (a mapping beyond its capacity is simply not named), their names leaked C strings
//! that live as long as the mapping's slot.

use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicUsize, Ordering};

const SLOTS: usize = 64;

struct Slot {
    taken: AtomicBool,
    start: AtomicUsize,
    /// 0 while the slot is being filled or emptied: the handler skips it.
    end: AtomicUsize,
    name: AtomicPtr<u8>,
    name_len: AtomicUsize,
}

#[allow(clippy::declare_interior_mutable_const)] // the initializer of each slot of the table
const EMPTY: Slot = Slot {
    taken: AtomicBool::new(false),
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    name: AtomicPtr::new(std::ptr::null_mut()),
    name_len: AtomicUsize::new(0),
};

static TABLE: [Slot; SLOTS] = [EMPTY; SLOTS];
static INSTALLED: AtomicBool = AtomicBool::new(false);

/// Records the mapping `[start, start + len)` of the file `name`; the slot to release, if one
/// was free.
pub(crate) fn register(start: usize, len: usize, name: &str) -> Option<usize> {
    let i = TABLE
        .iter()
        .position(|s| s.taken.compare_exchange(false, true, Ordering::AcqRel, Ordering::Relaxed).is_ok())?;
    let slot = &TABLE[i];
    let bytes: Box<[u8]> = name.as_bytes().into();
    slot.name_len.store(bytes.len(), Ordering::Relaxed);
    slot.name.store(Box::into_raw(bytes).cast(), Ordering::Relaxed);
    slot.start.store(start, Ordering::Relaxed);
    slot.end.store(start + len, Ordering::Release);
    Some(i)
}

/// Forgets a mapping before it is unmapped.
pub(crate) fn release(i: usize) {
    let slot = &TABLE[i];
    slot.end.store(0, Ordering::Release);
    let name = slot.name.swap(std::ptr::null_mut(), Ordering::AcqRel);
    let len = slot.name_len.load(Ordering::Relaxed);
    if !name.is_null() {
        // SAFETY: made by `register` from a boxed slice of this length, and taken out of the
        // slot, so nothing else frees it.
        drop(unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(name, len)) });
    }
    slot.taken.store(false, Ordering::Release);
}

/// Installs the handler (once per process): a SIGBUS inside a mapped input's pages is reported
/// as "error: input file '…' changed while being read" and exits with status 1.
pub fn report_truncated_inputs() {
    #[cfg(unix)]
    if !INSTALLED.swap(true, Ordering::AcqRel) {
        // SAFETY: a handler that only reads atomics, writes to standard error and exits or
        // restores the default action; the sigaction structure is fully initialized.
        unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut());
        }
    }
}

#[cfg(unix)]
extern "C" fn on_sigbus(_signal: libc::c_int, info: *mut libc::siginfo_t, _context: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo to an SA_SIGINFO handler.
    let addr = unsafe { (*info).si_addr() } as usize;
    for slot in &TABLE {
        let end = slot.end.load(Ordering::Acquire);
        if end != 0 && (slot.start.load(Ordering::Relaxed)..end).contains(&addr) {
            let name = slot.name.load(Ordering::Acquire);
            let len = slot.name_len.load(Ordering::Relaxed);
            let write = |bytes: &[u8]| {
                // SAFETY: write(2) is async-signal-safe; the buffer is valid for its length.
                unsafe { libc::write(2, bytes.as_ptr().cast(), bytes.len()) };
            };
            write(b"error: input file '");
            if !name.is_null() {
                // SAFETY: the slot's name lives until the slot is released, after the mapping.
                write(unsafe { std::slice::from_raw_parts(name, len) });
            }
            write(b"' changed while being read: it is shorter than when it was opened (truncated by another process?); nothing was written\n");
            // SAFETY: _exit is async-signal-safe.
            unsafe { libc::_exit(1) };
        }
    }
    // Not an input's page: the default action, when the faulting access runs again.
    // SAFETY: resetting a signal's disposition is async-signal-safe.
    unsafe { libc::signal(libc::SIGBUS, libc::SIG_DFL) };
}
