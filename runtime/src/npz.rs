//! `.npz` archives (`np.savez`, `np.savez_compressed`): zip files of `.npy` members. A member is
//! opened as a `.npy` is, through its own reader; one stored without compression, at an offset
//! aligned to its elements, may be mapped where it lies in the archive.

use crate::npy::{NpyError, PendingNpy, open_body};
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The first bytes of a zip archive, which is what a `.npz` file is.
pub(crate) const ZIP_MAGIC: &[u8; 4] = b"PK\x03\x04";

/// Opens the `.npy` array `KEY.npy` of the `.npz` archive at `path` (`np.savez`, compressed or
/// not); without a key, the archive must hold exactly one array.
pub fn open_npz(path: &Path, key: Option<&str>) -> Result<PendingNpy, NpyError> {
    let read_err = |source| NpyError::Read { path: path.to_path_buf(), source };
    let bad_zip =
        |e: zip::result::ZipError| NpyError::BadArchive { path: path.to_path_buf(), reason: e.to_string() };
    let file = File::open(path).map_err(read_err)?;
    let mut archive = zip::ZipArchive::new(file).map_err(bad_zip)?;
    let keys: Vec<String> =
        archive.file_names().flatten().filter_map(|n| n.strip_suffix(".npy").map(str::to_string)).collect();
    let key = match key {
        Some(k) => k.to_string(),
        None if keys.len() == 1 => keys[0].clone(),
        None => {
            return Err(NpyError::NpzKey { path: path.to_path_buf(), key: None, keys: sorted(keys) });
        }
    };
    let Some(index) = archive.index_for_name(&format!("{key}.npy")) else {
        return Err(NpyError::NpzKey { path: path.to_path_buf(), key: Some(key), keys: sorted(keys) });
    };
    let label = PathBuf::from(format!("{}:{key}", path.display()));
    let (size, stored_at) = {
        let member = archive.by_index(index).map_err(bad_zip)?;
        let stored = member.compression() == zip::CompressionMethod::Stored && !member.encrypted();
        // A stored member's bytes lie in the archive as they are, from its data start on.
        let stored_at = member.data_start().filter(|_| stored && member.compressed_size() == member.size());
        (member.size(), stored_at)
    };
    let mapped = match stored_at {
        Some(start) => Some((File::open(path).map_err(read_err)?, start)),
        None => None,
    };
    // The member's reader borrows the archive: hand out a reader that owns both.
    let body = NpzMember::new(archive, index).map_err(bad_zip)?;
    let mut npy = open_body(Box::new(body), Some(label), Some(size))?;
    npy.mappable = mapped.map(|(file, start)| (file, start + size - npy.data_bytes()));
    Ok(npy)
}

fn sorted(mut keys: Vec<String>) -> Vec<String> {
    keys.sort();
    keys
}

/// Reads one member of a zip archive it owns.
struct NpzMember {
    archive: zip::ZipArchive<File>,
    index: usize,
    /// Bytes of the member consumed so far (a fresh member reader is skipped forward to here).
    consumed: u64,
}

impl NpzMember {
    fn new(mut archive: zip::ZipArchive<File>, index: usize) -> zip::result::ZipResult<NpzMember> {
        archive.by_index(index)?;
        Ok(NpzMember { archive, index, consumed: 0 })
    }
}

impl Read for NpzMember {
    /// Each call opens the member afresh and skips what was read: a compressed member cannot be
    /// sought. Callers read the header in a few small reads and then the data in one.
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let mut member = self.archive.by_index(self.index).map_err(std::io::Error::other)?;
        std::io::copy(&mut (&mut member).take(self.consumed), &mut std::io::sink())?;
        let mut total = 0;
        while total < buf.len() {
            match member.read(&mut buf[total..])? {
                0 => break,
                n => total += n,
            }
        }
        self.consumed += total as u64;
        Ok(total)
    }
}
