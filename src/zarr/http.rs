//! Zarr stores read over HTTP(S) (`--features zarr-http`, docs/zarr.md "Remote stores"):
//! zarrs' synchronous adapter (`zarrs_http`, over reqwest's blocking client) fetches each key
//! with one `GET`; a `404` is an absent key (a chunk reads as the fill value, as the Zarr spec
//! says of stores). The reader is the local one ([`super::read`]): only the chunks holding what
//! the plan reads are fetched.
//!
//! Two things are this file's rather than the adapter's: every error names the URL it was
//! fetching, and a partial read fetches the whole value (once, for all the parts read of it) and
//! slices it. The adapter sends several byte ranges as one multi-range request and expects their
//! bytes back concatenated, which no server that answers `multipart/byteranges` (nginx, Apache)
//! does, and a server that ignores `Range` and sends a body shorter than `HEAD` said makes it
//! panic. zarrs reads a value in parts only for a chunk or shard that overhangs the array's
//! edge, or a shard of which some inner chunks are read: fetched whole, it costs what reading
//! the whole chunk costs, and a shard is still fetched only when the selection touches it.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use zarrs::storage::byte_range::{ByteRange, ByteRangeIterator};
use zarrs::storage::{
    Bytes, MaybeBytes, MaybeBytesIterator, ReadableStorage, ReadableStorageTraits, StorageError, StoreKey,
};
use zarrs_http::HTTPStore;

/// A store at an `http://` or `https://` URL.
struct HttpStore {
    inner: HTTPStore,
    /// The values fetched last for partial reads, newest last: zarrs reads a shard in parts
    /// (its index, then each inner chunk), and each part would fetch it whole again. One per
    /// decoding thread; dropped with the store, after the read.
    recent: Mutex<VecDeque<(StoreKey, Bytes)>>,
}

impl HttpStore {
    /// The whole value of `key` for a partial read: a recent one, or fetched and kept.
    fn whole(&self, key: &StoreKey) -> Result<MaybeBytes, StorageError> {
        let recent =
            |r: &VecDeque<(StoreKey, Bytes)>| r.iter().find(|(k, _)| k == key).map(|(_, b)| b.clone());
        if let Some(bytes) = recent(&self.recent.lock().unwrap_or_else(|e| e.into_inner())) {
            return Ok(Some(bytes));
        }
        let Some(bytes) = self.get(key)? else { return Ok(None) };
        let mut kept = self.recent.lock().unwrap_or_else(|e| e.into_inner());
        if kept.len() >= rayon::current_num_threads().max(1) {
            kept.pop_front();
        }
        kept.push_back((key.clone(), bytes.clone()));
        Ok(Some(bytes))
    }

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
        let Some(bytes) = self.whole(key)? else {
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
    Ok(Arc::new(HttpStore { inner, recent: Mutex::default() }))
}
