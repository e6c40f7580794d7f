//! Zarr stores named by `http://` or `https://` URLs (docs/zarr.md, "Remote stores"): known
//! without any network, so that every build recognizes one, and split where the store ends as
//! local paths are (`http://host/data.zarr/group/array`). Reading one takes the `zarr-http`
//! cargo feature (src/zarr/http.rs).

use super::PendingZarr;

/// The schemes of the stores slc reads remotely.
const SCHEMES: [&str; 2] = ["http://", "https://"];

/// Whether `location` is a URL (`scheme://…`) rather than a local path.
pub fn is_url(location: &str) -> bool {
    location.split_once("://").is_some_and(|(scheme, _)| {
        !scheme.is_empty() && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// Splits `http://host/data.zarr/group/array` into the store's URL and the array's path inside
/// it: the store ends at the last path segment named `*.zarr`, or is the whole URL when none is.
/// Other schemes, and URLs with a query or a fragment (which the store's keys cannot extend),
/// are refused.
pub fn split_store_url(url: &str) -> Result<(String, String), String> {
    let Some(scheme) = SCHEMES.iter().find(|s| url.get(..s.len()).is_some_and(|p| p.eq_ignore_ascii_case(s)))
    else {
        return Err(format!("'{url}' is not a store slc reads: only http:// and https:// URLs are"));
    };
    if url.contains(['?', '#']) {
        return Err(format!("the store URL '{url}' has a query or a fragment, which slc cannot read from"));
    }
    let rest = &url[scheme.len()..];
    let (host, path) = rest.split_once('/').unwrap_or((rest, ""));
    if host.is_empty() {
        return Err(format!("the store URL '{url}' names no host"));
    }
    let parts: Vec<&str> = path.split('/').filter(|p| !p.is_empty()).collect();
    let store_end = parts.iter().rposition(|p| p.ends_with(".zarr")).map_or(parts.len(), |i| i + 1);
    let mut store = format!("{}{host}", &url[..scheme.len()]);
    for part in &parts[..store_end] {
        store = format!("{store}/{part}");
    }
    Ok((store, format!("/{}", parts[store_end..].join("/"))))
}

/// Opens the array at `url` (a store, or an array inside one) and reads its metadata, as
/// [`super::open_zarr`] does a local one's.
pub fn open_zarr_url(url: &str) -> Result<PendingZarr, String> {
    let (store, inner) = split_store_url(url)?;
    #[cfg(feature = "zarr-http")]
    {
        super::read::open_array(super::http::store(&store)?, &store, &inner, url.to_string())
    }
    #[cfg(not(feature = "zarr-http"))]
    {
        let _ = (store, inner);
        Err(format!(
            "'{url}' is a Zarr store over HTTP, and this slc was built without HTTP stores; build it with `--features zarr-http` (docs/zarr.md)"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_paths() {
        for url in ["http://h/a.zarr", "HTTPS://h:8080/x", "s3://bucket/a.zarr", "file:///tmp/a.zarr"] {
            assert!(is_url(url), "{url}");
        }
        for path in ["a.zarr", "/tmp/a.zarr", "dir/x://y", "://x", "./a:b"] {
            assert!(!is_url(path), "{path}");
        }
    }

    #[test]
    fn the_store_ends_at_the_last_zarr_segment() {
        let split = |u| split_store_url(u).unwrap();
        assert_eq!(split("http://h:1/data.zarr"), ("http://h:1/data.zarr".into(), "/".into()));
        assert_eq!(split("http://h:1/data.zarr/"), ("http://h:1/data.zarr".into(), "/".into()));
        assert_eq!(split("https://h/x/data.zarr/g/arr"), ("https://h/x/data.zarr".into(), "/g/arr".into()));
        assert_eq!(split("http://h/a.zarr/b.zarr/c"), ("http://h/a.zarr/b.zarr".into(), "/c".into()));
        assert_eq!(split("http://h/store"), ("http://h/store".into(), "/".into()));
        assert_eq!(split("http://h"), ("http://h".into(), "/".into()));
    }

    #[test]
    fn unreadable_urls_are_refused() {
        for url in ["s3://b/a.zarr", "http://h/a.zarr?sig=1", "http://h/a.zarr#x", "http:///a.zarr"] {
            assert!(split_store_url(url).is_err(), "{url}");
        }
    }

    #[cfg(not(feature = "zarr-http"))]
    #[test]
    fn without_the_feature_a_url_is_refused_saying_how_to_build_it() {
        // `.err()`: without the `zarr` feature the Ok type has no values, and a `let Err` is
        // irrefutable (a warning).
        let e = open_zarr_url("http://127.0.0.1:9/a.zarr").err().expect("refused");
        assert!(e.contains("built without HTTP stores") && e.contains("--features zarr-http"), "{e}");
    }
}
