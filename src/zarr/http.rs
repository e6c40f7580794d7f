//! Zarr stores read over HTTP(S) (`--features zarr-http`, docs/zarr.md "Remote stores"):
//! zarrs' synchronous adapter (`zarrs_http`, over reqwest's blocking client) fetches each key
//! with one `GET`; a `404` is an absent key (a chunk reads as the fill value, as the Zarr spec
//! says of stores). The reader is the local one ([`super::read`]): only the chunks holding what
//! the plan reads are fetched.
//!
//! Two things are this file's rather than the adapter's: every error names the URL it was
//! fetching, and a partial read fetches the whole value and slices it. The adapter sends several
//! byte ranges as one multi-range request and expects their bytes back concatenated, which no
//! server that answers `multipart/byteranges` (nginx, Apache) does. slc decodes whole chunks,
//! so a partial read happens only at the array's edge (a chunk that overhangs it) or in a shard's
//! index, and fetching that one value whole costs what the chunk costs.

use std::sync::Arc;
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator};
use zarrs::storage::{
    MaybeBytes, MaybeBytesIterator, ReadableStorage, ReadableStorageTraits, StorageError, StoreKey,
};
use zarrs_http::HTTPStore;

/// A store at an `http://` or `https://` URL.
struct HttpStore {
    inner: HTTPStore,
}

impl HttpStore {
    /// The error `e` fetching `key`, naming its URL.
    fn error(&self, key: &StoreKey, e: impl std::fmt::Display) -> StorageError {
        match self.inner.key_to_url(key) {
            Ok(url) => StorageError::Other(format!("fetching {url}: {e}")),
            Err(_) => StorageError::Other(format!("fetching key '{key}': {e}")),
        }
    }
}

impl ReadableStorageTraits for HttpStore {
    fn get(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        self.inner.get(key).map_err(|e| self.error(key, e))
    }

    fn get_partial_many<'a>(
        &'a self,
        key: &StoreKey,
        byte_ranges: ByteRangeIterator<'a>,
    ) -> Result<MaybeBytesIterator<'a>, StorageError> {
        let Some(bytes) = self.get(key)? else {
            return Ok(None);
        };
        let size = bytes.len() as u64;
        let parts = byte_ranges
            .map(|range| {
                let (start, end) = match range {
                    ByteRange::FromStart(start, None) => (start, size),
                    ByteRange::FromStart(start, Some(length)) => (start, start.saturating_add(length)),
                    ByteRange::Suffix(length) => (size.checked_sub(length).unwrap_or(u64::MAX), size),
                };
                if start > end || end > size {
                    return Err(self.error(key, format!("{size} bytes hold no byte range {range}")));
                }
                Ok(bytes.slice(start as usize..end as usize))
            })
            .collect::<Vec<_>>();
        Ok(Some(Box::new(parts.into_iter())))
    }

    fn size_key(&self, key: &StoreKey) -> Result<Option<u64>, StorageError> {
        self.inner.size_key(key).map_err(|e| self.error(key, e))
    }

    fn supports_get_partial(&self) -> bool {
        // Partial reads fetch the whole value (above).
        false
    }
}

/// The store at `url` (`http://` or `https://`; no request is sent yet).
pub fn store(url: &str) -> Result<ReadableStorage, String> {
    let inner = HTTPStore::new(url).map_err(|e| format!("Zarr store '{url}': {e}"))?;
    Ok(Arc::new(HttpStore { inner }))
}
