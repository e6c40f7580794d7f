//! A global allocator that counts the bytes each thread allocates, for tests that show a call
//! copies nothing (`allocated()` before and after). Tensors of 2 MiB and up come from the
//! runtime's mapped pool, which this count does not see: such tests use smaller inputs.

use std::cell::Cell;

thread_local! {
    static ALLOCATED: Cell<usize> = const { Cell::new(0) };
}

/// The bytes this thread has allocated so far.
pub fn allocated() -> usize {
    ALLOCATED.with(Cell::get)
}

/// Counts the bytes this thread allocates.
pub struct Counting;

// SAFETY: forwards to the system allocator; the count is a thread-local `Cell` (no allocation).
unsafe impl std::alloc::GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        ALLOCATED.with(|a| a.set(a.get() + layout.size()));
        unsafe { std::alloc::System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        unsafe { std::alloc::System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;
