//! A kernel's buffered store (`embed/buffered.rs`), prepared at its first use.

use super::Kernel;
use crate::embed::buffered::Buffered;

impl Kernel {
    /// The kernel's buffered store ([`Buffered`]), prepared at its first use.
    pub(super) fn buffered(&self) -> Option<&Buffered> {
        self.shared.buffered.get_or_init(|| Buffered::prepare(&self.shared.plan)).as_ref()
    }

    /// Whether [`Kernel::store`] runs this kernel's `+=` or `*=` as three in-place kernels
    /// (where none declines at run time) rather than through a copy of the whole target.
    pub fn stores_buffered(&self) -> bool {
        self.buffered().is_some()
    }
}
