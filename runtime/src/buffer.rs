//! A tensor's bytes: owned, 64-byte-aligned buffers, or a read-only mapping of a file's pages
//! ([`FileMap`], for `.npy` inputs: the kernel reads the file in place and only the pages it
//! touches are ever read).
//!
//! Small buffers come from the global allocator. Large ones (≥ [`LARGE`]) are mapped directly
//! and advised to use transparent huge pages: writing a fresh 64 MiB output then takes 32 page
//! faults instead of 16 384, and the faults, not the copying, dominate a freshly allocated
//! output. Dropped large buffers are kept in a small pool so that the next output of a similar
//! size (the common case: the same kernel run again) reuses pages that are already mapped. The
//! pool holds at most [`POOL_BUFFERS`] buffers and [`POOL_BYTES`] bytes.

use std::alloc::{Layout, alloc_zeroed, dealloc};
use std::ptr::NonNull;
use std::sync::Mutex;

/// Buffers are aligned to a cache line.
pub const ALIGN: usize = 64;
/// From this size on, buffers are mapped (with huge pages) and pooled.
pub const LARGE: usize = 1 << 21;
const POOL_BUFFERS: usize = 8;
const POOL_BYTES: usize = 1 << 30;

pub(crate) struct AlignedBuf {
    ptr: NonNull<u8>,
    len: usize,
    /// The mapped length for large buffers (a multiple of the page size), 0 for heap ones.
    mapped: usize,
    /// For heap buffers, how far `ptr` lies past the start of the allocation.
    offset: usize,
}

// SAFETY: the buffer is uniquely owned plain memory.
unsafe impl Send for AlignedBuf {}
unsafe impl Sync for AlignedBuf {}

/// Mapped regions not in use: (pointer as usize, mapped length).
static POOL: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

impl AlignedBuf {
    /// A zero-filled buffer.
    pub(crate) fn zeroed(len: usize) -> Option<AlignedBuf> {
        if len >= LARGE {
            // Fresh mappings are zero-filled by the kernel; pooled ones are not.
            return map::fresh(len, false);
        }
        AlignedBuf::heap(len)
    }

    /// A zero-filled buffer of which only a few pages will be written (the parts of a large
    /// input that a plan reads): mapped without reserving memory and without huge pages, so
    /// that it costs only the pages written, however large it is.
    pub(crate) fn sparse(len: usize) -> Option<AlignedBuf> {
        if len >= LARGE {
            return map::fresh(len, true);
        }
        AlignedBuf::heap(len)
    }

    /// A buffer whose contents are unspecified (but initialized: zeros or old data), for outputs
    /// that are about to be overwritten entirely.
    pub(crate) fn for_overwrite(len: usize) -> Option<AlignedBuf> {
        if len >= LARGE {
            return map::pooled(len).or_else(|| map::fresh(len, false));
        }
        AlignedBuf::heap(len)
    }

    fn heap(len: usize) -> Option<AlignedBuf> {
        if len == 0 {
            // No allocation: a dangling, aligned pointer is valid for zero-length slices.
            let ptr = NonNull::new(ALIGN as *mut u8)?;
            return Some(AlignedBuf { ptr, len, mapped: 0, offset: 0 });
        }
        // Over-allocate at malloc's own alignment and align by hand: an allocation aligned to
        // more than 16 bytes goes through memalign, which costs several times a plain malloc
        // and fragments the heap (it dominated a prepared kernel's fresh-output call).
        let layout = AlignedBuf::heap_layout(len)?;
        // SAFETY: the layout has a non-zero size.
        let base = unsafe { alloc_zeroed(layout) };
        NonNull::new(base)?;
        let offset = base.align_offset(ALIGN);
        // SAFETY: offset < ALIGN, and the allocation has ALIGN bytes to spare.
        let ptr = NonNull::new(unsafe { base.add(offset) })?;
        Some(AlignedBuf { ptr, len, mapped: 0, offset })
    }

    fn heap_layout(len: usize) -> Option<Layout> {
        Layout::from_size_align(len.checked_add(ALIGN)?, 16).ok()
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }

    #[inline]
    pub(crate) fn ptr(&self) -> *mut u8 {
        self.ptr.as_ptr()
    }

    pub(crate) fn as_slice(&self) -> &[u8] {
        // SAFETY: ptr is valid and initialized for len bytes (or dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }

    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        // SAFETY: as above, and we hold the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }
}

impl Drop for AlignedBuf {
    fn drop(&mut self) {
        if self.mapped > 0 {
            map::release(self.ptr.as_ptr(), self.mapped);
        } else if self.len > 0 {
            // SAFETY: allocated in `heap`, `offset` bytes before `ptr`, with this very layout.
            unsafe {
                let layout = AlignedBuf::heap_layout(self.len).unwrap_unchecked();
                dealloc(self.ptr.as_ptr().sub(self.offset), layout)
            }
        }
    }
}

/// The bytes behind a tensor.
pub(crate) enum Buffer {
    Owned(AlignedBuf),
    /// A file's pages, mapped read-only.
    Mapped(FileMap),
}

impl Buffer {
    pub(crate) fn len(&self) -> usize {
        match self {
            Buffer::Owned(b) => b.len(),
            Buffer::Mapped(m) => m.len,
        }
    }

    #[inline]
    pub(crate) fn ptr(&self) -> *const u8 {
        match self {
            Buffer::Owned(b) => b.ptr(),
            Buffer::Mapped(m) => m.ptr(),
        }
    }

    pub(crate) fn is_mapped(&self) -> bool {
        matches!(self, Buffer::Mapped(_))
    }

    #[inline]
    pub(crate) fn as_slice(&self) -> &[u8] {
        match self {
            Buffer::Owned(b) => b.as_slice(),
            // SAFETY: the mapping is readable for `len` bytes from `ptr` while it lives.
            Buffer::Mapped(m) => unsafe { std::slice::from_raw_parts(m.ptr(), m.len) },
        }
    }

    /// The bytes, writable. A mapped file's pages become private copy-on-write pages first:
    /// writes never reach the file (it was opened read-only and mapped private).
    pub(crate) fn as_mut_slice(&mut self) -> &mut [u8] {
        let ptr = self.mut_ptr();
        // SAFETY: `ptr` is valid and writable for `len` bytes, and we hold the only reference.
        unsafe { std::slice::from_raw_parts_mut(ptr, self.len()) }
    }

    #[inline]
    pub(crate) fn mut_ptr(&mut self) -> *mut u8 {
        match self {
            Buffer::Owned(b) => b.ptr(),
            Buffer::Mapped(m) if m.writable => m.ptr().cast_mut(),
            Buffer::Mapped(_) => self.mapped_mut_ptr(),
        }
    }

    /// [`mut_ptr`](Self::mut_ptr) of a mapping not yet writable.
    #[cold]
    fn mapped_mut_ptr(&mut self) -> *mut u8 {
        if let Buffer::Mapped(m) = self
            && !m.writable
            && !m.make_writable()
        {
            // The private writable mapping was refused (its size is charged against the
            // memory commit limit): copy, as `Clone` would.
            let mut own = AlignedBuf::for_overwrite(m.len).expect("memory for a copy of a mapped file");
            own.as_mut_slice().copy_from_slice(self.as_slice());
            *self = Buffer::Owned(own);
        }
        match self {
            Buffer::Owned(b) => b.ptr(),
            Buffer::Mapped(m) => m.ptr().cast_mut(),
        }
    }
}

/// `len` bytes of a file from some offset, mapped read-only and private: the pages are read
/// from the file when first touched, and only those. The mapping starts at the page boundary
/// at or before the offset; `ptr` points `lead` bytes into it.
pub(crate) struct FileMap {
    base: NonNull<u8>,
    /// The mapped length: `lead + len`.
    mapped: usize,
    lead: usize,
    len: usize,
    /// Whether the pages were made writable (private copy-on-write) by [`Buffer::mut_ptr`].
    writable: bool,
    /// Its slot in the table that names the file should reading it raise SIGBUS.
    sigbus_slot: Option<usize>,
}

// SAFETY: the mapping is owned by this value; shared access only reads.
unsafe impl Send for FileMap {}
unsafe impl Sync for FileMap {}

impl FileMap {
    #[inline]
    fn ptr(&self) -> *const u8 {
        // SAFETY: lead < page size <= mapped.
        unsafe { self.base.as_ptr().add(self.lead) }
    }

    pub(crate) fn advise(&self, access: crate::tensor::Access) {
        file_map::advise(self.base.as_ptr(), self.mapped, access);
    }

    /// Where the mapping's pages are resident, one flag per page from the page holding the
    /// first byte (`mincore`): which pages a run has read. `None` where unsupported.
    pub(crate) fn resident_pages(&self) -> Option<Vec<bool>> {
        file_map::resident(self.base.as_ptr(), self.mapped)
    }
}

impl Drop for FileMap {
    fn drop(&mut self) {
        if let Some(slot) = self.sigbus_slot {
            crate::sigbus::release(slot);
        }
        file_map::unmap(self.base.as_ptr(), self.mapped);
    }
}

#[cfg(unix)]
mod file_map {
    use super::FileMap;
    use std::fs::File;
    use std::os::fd::AsRawFd;
    use std::ptr::NonNull;

    pub(super) fn page_size() -> usize {
        // SAFETY: sysconf has no preconditions.
        let p = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
        if p > 0 { p as usize } else { 4096 }
    }

    impl FileMap {
        /// Maps `len` (> 0) bytes of `file` (called `name`) from byte `start`, read-only. The
        /// caller has checked that the file holds them; should it shrink later, touching the
        /// lost pages raises SIGBUS (as NumPy's memmap does; see `sigbus`).
        pub(crate) fn new(file: &File, start: u64, len: usize, name: &str) -> std::io::Result<FileMap> {
            let invalid = || std::io::Error::from(std::io::ErrorKind::InvalidInput);
            let page = page_size() as u64;
            let lead = (start % page) as usize;
            let mapped =
                len.checked_add(lead).filter(|&m| len > 0 && m <= isize::MAX as usize).ok_or_else(invalid)?;
            let aligned = libc::off_t::try_from(start - lead as u64).map_err(|_| invalid())?;
            // SAFETY: a new private read-only mapping of a file we hold open; no existing
            // memory is touched.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    mapped,
                    libc::PROT_READ,
                    libc::MAP_PRIVATE,
                    file.as_raw_fd(),
                    aligned,
                )
            };
            if p == libc::MAP_FAILED {
                return Err(std::io::Error::last_os_error());
            }
            let base = NonNull::new(p.cast()).ok_or_else(invalid)?;
            let sigbus_slot = crate::sigbus::register(p as usize, mapped, name);
            Ok(FileMap { base, mapped, lead, len, writable: false, sigbus_slot })
        }

        /// Makes the pages writable, as private copies: the file is never written.
        pub(super) fn make_writable(&mut self) -> bool {
            // SAFETY: our own mapping, whole.
            let ok = unsafe {
                libc::mprotect(self.base.as_ptr().cast(), self.mapped, libc::PROT_READ | libc::PROT_WRITE)
                    == 0
            };
            self.writable = ok;
            ok
        }
    }

    pub(super) fn advise(base: *mut u8, mapped: usize, access: crate::tensor::Access) {
        use crate::tensor::Access;
        let advice = match access {
            Access::Normal => libc::MADV_NORMAL,
            Access::Sparse => libc::MADV_RANDOM,
            Access::Sequential => libc::MADV_SEQUENTIAL,
        };
        // SAFETY: advice on our own mapping; failing only loses the hint.
        unsafe { libc::madvise(base.cast(), mapped, advice) };
    }

    pub(super) fn resident(base: *mut u8, mapped: usize) -> Option<Vec<bool>> {
        let pages = mapped.div_ceil(page_size());
        let mut flags = vec![0u8; pages];
        // SAFETY: `base` is a page-aligned mapping of `mapped` bytes; `flags` has a byte per page.
        let rc = unsafe { libc::mincore(base.cast(), mapped, flags.as_mut_ptr().cast()) };
        (rc == 0).then(|| flags.iter().map(|f| f & 1 == 1).collect())
    }

    pub(super) fn unmap(base: *mut u8, mapped: usize) {
        // SAFETY: the mapping was made by `FileMap::new` with this length and is no longer used.
        unsafe { libc::munmap(base.cast(), mapped) };
    }
}

#[cfg(not(unix))]
mod file_map {
    use super::FileMap;

    impl FileMap {
        /// No mapping without unix: callers read the file instead.
        pub(crate) fn new(
            _file: &std::fs::File,
            _start: u64,
            _len: usize,
            _name: &str,
        ) -> std::io::Result<FileMap> {
            Err(std::io::ErrorKind::Unsupported.into())
        }

        pub(super) fn make_writable(&mut self) -> bool {
            unreachable!("no mapped files without unix")
        }
    }

    pub(super) fn advise(_base: *mut u8, _mapped: usize, _access: crate::tensor::Access) {}

    pub(super) fn resident(_base: *mut u8, _mapped: usize) -> Option<Vec<bool>> {
        None
    }

    pub(super) fn unmap(_base: *mut u8, _mapped: usize) {
        unreachable!("no mapped files without unix")
    }
}

#[cfg(unix)]
mod map {
    use super::{AlignedBuf, POOL, POOL_BUFFERS, POOL_BYTES};
    use std::ptr::NonNull;

    /// Mappings from this size on are checked against the memory available.
    const CHECKED: usize = 64 << 20;

    fn page_round(len: usize) -> Option<usize> {
        // Huge-page granularity, so that whole huge pages back the buffer.
        const HUGE: usize = 1 << 21;
        len.checked_add(HUGE - 1).map(|l| l & !(HUGE - 1))
    }

    /// `sparse`: only a few pages will be touched (no memory check, no huge pages).
    pub(super) fn fresh(len: usize, sparse: bool) -> Option<AlignedBuf> {
        let mapped = page_round(len)?;
        // The mapping does not reserve memory, so a size the machine cannot back would succeed
        // here and get the process killed when touched: refuse it now. Small mappings skip the
        // check (it reads /proc), their worst case being an ordinary out-of-memory.
        if !sparse && len >= CHECKED && crate::available_memory().is_some_and(|free| len as u64 > free) {
            return None;
        }
        // SAFETY: an anonymous private mapping; no existing memory is touched.
        let p = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                mapped,
                libc::PROT_READ | libc::PROT_WRITE,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_NORESERVE,
                -1,
                0,
            )
        };
        if p == libc::MAP_FAILED {
            return None;
        }
        #[cfg(target_os = "linux")]
        if !sparse {
            // SAFETY: advice on our own mapping; failure only means no huge pages.
            unsafe { libc::madvise(p, mapped, libc::MADV_HUGEPAGE) };
        }
        Some(AlignedBuf { ptr: NonNull::new(p.cast())?, len, mapped, offset: 0 })
    }

    /// The smallest pooled mapping that holds `len` bytes without wasting more than half of it.
    pub(super) fn pooled(len: usize) -> Option<AlignedBuf> {
        let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
        let (i, &(p, mapped)) = pool
            .iter()
            .enumerate()
            .filter(|(_, (_, m))| *m >= len && *m / 2 <= len)
            .min_by_key(|(_, (_, m))| *m)?;
        pool.remove(i);
        Some(AlignedBuf { ptr: NonNull::new(p as *mut u8)?, len, mapped, offset: 0 })
    }

    /// Keeps a dropped mapping for reuse, evicting the oldest ones when the pool is full: the
    /// buffer dropped last is the likeliest to be wanted next (the same kernel, run again).
    pub(super) fn release(ptr: *mut u8, mapped: usize) {
        let mut unmap = vec![];
        {
            let mut pool = POOL.lock().unwrap_or_else(|e| e.into_inner());
            pool.push((ptr as usize, mapped));
            let mut held: usize = pool.iter().map(|(_, m)| m).sum();
            while pool.len() > POOL_BUFFERS || held > POOL_BYTES {
                let (p, m) = pool.remove(0);
                held -= m;
                unmap.push((p, m));
            }
        }
        for (p, m) in unmap {
            // SAFETY: the mapping was created by `fresh` with this length and is no longer used.
            unsafe { libc::munmap(p as *mut libc::c_void, m) };
        }
    }
}

#[cfg(not(unix))]
mod map {
    use super::AlignedBuf;

    pub(super) fn fresh(len: usize, _sparse: bool) -> Option<AlignedBuf> {
        AlignedBuf::heap(len)
    }

    pub(super) fn pooled(_len: usize) -> Option<AlignedBuf> {
        None
    }

    pub(super) fn release(_ptr: *mut u8, _mapped: usize) {
        unreachable!("no mapped buffers without unix")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_buffers_are_zeroed_aligned_and_reused() {
        let mut a = AlignedBuf::zeroed(3 * LARGE + 5).unwrap();
        assert_eq!(a.ptr() as usize % ALIGN, 0);
        assert!(a.as_slice().iter().all(|&b| b == 0));
        a.as_mut_slice().fill(7);
        let p = a.ptr();
        drop(a);
        // A zeroed buffer never comes from the pool; an overwrite buffer may.
        let z = AlignedBuf::zeroed(3 * LARGE + 5).unwrap();
        assert!(z.as_slice().iter().all(|&b| b == 0));
        let o = AlignedBuf::for_overwrite(3 * LARGE).unwrap();
        assert_eq!(o.len(), 3 * LARGE);
        if cfg!(unix) {
            assert_eq!(o.ptr(), p, "the dropped mapping is reused");
        }
        // A full pool makes room for the buffer dropped last (seen by its old contents: a
        // fresh mapping is zeroed).
        let many: Vec<AlignedBuf> =
            (0..=POOL_BUFFERS).map(|_| AlignedBuf::for_overwrite(4 * LARGE).unwrap()).collect();
        drop(many);
        let mut last = AlignedBuf::for_overwrite(LARGE).unwrap();
        last.as_mut_slice()[0] = 42;
        drop(last);
        let again = AlignedBuf::for_overwrite(LARGE).unwrap();
        if cfg!(unix) {
            assert_eq!(again.as_slice()[0], 42, "the last dropped mapping is kept");
        }
        for len in [1, 3, 100, 4096] {
            let small = AlignedBuf::for_overwrite(len).unwrap();
            assert_eq!(small.ptr() as usize % ALIGN, 0);
            assert!(small.as_slice().iter().all(|&b| b == 0));
        }
    }
}
