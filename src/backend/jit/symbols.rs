//! The functions the JIT's kernels call by symbol ([`provide`]): copies and fills around the
//! caches with non-temporal stores, and a spread store that prefetches ahead. Cranelift has
//! neither instruction; an AOT object defines each symbol as a plain loop (`clif`).

use crate::backend::loopnest::{self, COPY_STREAMING, FILL_STREAMING};
use cranelift_jit::JITBuilder;

/// Registers every symbol a kernel may import with the module `builder` makes.
pub(super) fn provide(builder: &mut JITBuilder) {
    builder.symbol(COPY_STREAMING, copy_streaming as *const u8);
    builder.symbol(FILL_STREAMING, fill_streaming as *const u8);
    builder.symbol(loopnest::spread_ahead_symbol(1), spread_ahead::<u8> as *const u8);
    builder.symbol(loopnest::spread_ahead_symbol(2), spread_ahead::<u16> as *const u8);
    builder.symbol(loopnest::spread_ahead_symbol(4), spread_ahead::<u32> as *const u8);
    builder.symbol(loopnest::spread_ahead_symbol(8), spread_ahead::<u64> as *const u8);
}

/// [`loopnest::COPY_STREAMING`](crate::backend::loopnest::COPY_STREAMING): copies `bytes`
/// bytes from `src` to `dst`, every aligned 16 bytes of the destination with a non-temporal
/// store (never read first), the few bytes before the first and after the last by
/// [`stream_bytes`]. The partial lines at a row's ends are streamed too: storing them as usual
/// read each one first, and made rows that start off a line (NumPy's arrays start 16 bytes past
/// one) twice as slow (`benches/scatter_floor.c`). The stores are weakly ordered: [`KernelFn::call`] fences them
/// before the kernel's caller sees the output.
///
/// # Safety
/// `src` and `dst` hold `bytes` bytes each and do not overlap.
unsafe extern "C" fn copy_streaming(dst: *mut u8, src: *const u8, bytes: i64) {
    let bytes = bytes.max(0) as usize;
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = dst.align_offset(16).min(bytes);
        let vectors = (bytes - head) / 16;
        // SAFETY: the caller's guarantees; every access lies in [0, bytes), and the streamed
        // stores go to 16-byte-aligned addresses of `dst`.
        unsafe {
            let byte = |k: usize| *src.add(k);
            stream_bytes(dst, 0, head, byte);
            let (d, s) = (dst.add(head).cast::<__m128i>(), src.add(head).cast::<__m128i>());
            for k in 0..vectors {
                _mm_stream_si128(d.add(k), _mm_loadu_si128(s.add(k)));
            }
            stream_bytes(dst, head + 16 * vectors, bytes, byte);
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    // SAFETY: the caller's guarantees.
    unsafe {
        std::ptr::copy_nonoverlapping(src, dst, bytes)
    };
}

/// [`loopnest::FILL_STREAMING`](crate::backend::loopnest::FILL_STREAMING): fills `bytes` bytes
/// from `dst` with the 16 bytes at `pattern` repeated (byte `k` of the fill is `pattern[k %
/// 16]`), every aligned 16 bytes with a non-temporal store (never read first), the few bytes
/// before the first and after the last by [`stream_bytes`]. Fenced as [`copy_streaming`]'s
/// stores are.
///
/// # Safety
/// `dst` holds `bytes` bytes; `pattern` holds 16.
unsafe extern "C" fn fill_streaming(dst: *mut u8, pattern: *const u8, bytes: i64) {
    let bytes = bytes.max(0) as usize;
    // SAFETY: the caller's guarantees.
    let pattern: [u8; 16] = unsafe { std::ptr::read_unaligned(pattern.cast::<[u8; 16]>()) };
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        let head = dst.align_offset(16).min(bytes);
        let vectors = (bytes - head) / 16;
        // SAFETY: [0, head) lies in `dst`.
        unsafe { stream_bytes(dst, 0, head, |k| pattern[k % 16]) };
        // The vectors start `head` bytes into the pattern.
        let turned: [u8; 16] = std::array::from_fn(|k| pattern[(head + k) % 16]);
        // SAFETY: `turned` holds 16 bytes; the streamed stores go to 16-byte-aligned addresses
        // inside [head, head + 16 * vectors) of `dst`.
        unsafe {
            let v = _mm_loadu_si128(turned.as_ptr().cast::<__m128i>());
            let d = dst.add(head).cast::<__m128i>();
            for k in 0..vectors {
                _mm_stream_si128(d.add(k), v);
            }
        }
        // SAFETY: [head + 16 * vectors, bytes) lies in `dst`.
        unsafe { stream_bytes(dst, head + 16 * vectors, bytes, |k| pattern[k % 16]) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    for k in 0..bytes {
        // SAFETY: k < bytes.
        unsafe { *dst.add(k) = pattern[k % 16] };
    }
}

/// Stores bytes `from..to` of `dst` (byte `k` is `byte(k)`), fewer than 16 at a row's end,
/// non-temporally where 8 or 4 aligned bytes fit (`movnti`), the rest as usual. A plain store
/// into a line that non-temporal stores have just written waits for that line to leave the
/// write-combining buffer and reads it back from memory: stored so, the 12 bytes before the
/// first aligned vector of each row made `a[:, 1:] = 0` on 4096² f32 (rows 4 bytes past 16)
/// 1.6x slower than `a[:, 4:] = 0`.
///
/// # Safety
/// `dst` holds at least `to` bytes.
#[cfg(target_arch = "x86_64")]
unsafe fn stream_bytes(dst: *mut u8, from: usize, to: usize, byte: impl Fn(usize) -> u8) {
    use std::arch::x86_64::{_mm_stream_si32, _mm_stream_si64};
    let word = |k: usize, n: usize| (0..n).fold(0u64, |w, j| w | u64::from(byte(k + j)) << (8 * j));
    let mut k = from;
    while k < to {
        // SAFETY: every store lies in [from, to) of `dst`, aligned to its width.
        unsafe {
            let at = dst.add(k);
            match at as usize {
                a if a % 8 == 0 && k + 8 <= to => {
                    _mm_stream_si64(at.cast::<i64>(), word(k, 8) as i64);
                    k += 8;
                }
                a if a % 4 == 0 && k + 4 <= to => {
                    _mm_stream_si32(at.cast::<i32>(), word(k, 4) as i32);
                    k += 4;
                }
                _ => {
                    *at = byte(k);
                    k += 1;
                }
            }
        }
    }
}

/// Orders the non-temporal stores of [`copy_streaming`] before every later store of this
/// thread (the worker's hand-back to the caller among them); nearly free where none is pending.
pub(super) fn fence_streamed_stores() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// How far ahead of its stores [`spread_ahead`] prefetches, in output bytes (the value's
/// stream half as far): past the 4 KiB page the hardware's prefetchers stop at, and as far
/// as `benches/strided_store_floor.c` found best (1 KiB ahead 1.43-1.55x a memcpy, 4 KiB
/// 1.36-1.47x, none 1.77-1.90x on B14).
const SPREAD_AHEAD_BYTES: usize = 4096;

/// [`loopnest::spread_ahead_symbol`]: stores element `k` of the `count` elements at `src` into
/// element `2k` from `dst`, one at a time (the elements between are never touched), a line of
/// the output at a time with a prefetch of the line [`SPREAD_AHEAD_BYTES`] on and of the
/// value's line half as far. A prefetch never faults: past the run it fetches lines nobody
/// reads, which the `spread-ahead` pass keeps to a small part of a long run.
///
/// # Safety
/// `src` holds `count` elements and `dst` `2 * count - 1`; they do not overlap.
unsafe extern "C" fn spread_ahead<T: Copy>(dst: *mut T, src: *const T, count: i64) {
    let count = count.max(0) as usize;
    let per_line = (64 / (2 * size_of::<T>())).max(1);
    let mut k = 0;
    while k < count {
        prefetch(dst.wrapping_add(2 * k).cast::<u8>().wrapping_add(SPREAD_AHEAD_BYTES));
        prefetch(src.wrapping_add(k).cast::<u8>().wrapping_add(SPREAD_AHEAD_BYTES / 2));
        let end = count.min(k + per_line);
        for j in k..end {
            // SAFETY: j < count: element j of `src`, element 2j < 2 * count - 1 of `dst`.
            unsafe { dst.add(2 * j).write_unaligned(src.add(j).read_unaligned()) };
        }
        k = end;
    }
}

/// Asks for the line at `at` to be brought into the caches; nothing on other machines.
fn prefetch(at: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch has no effect but on the caches, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(at.cast())
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = at;
}
