//! Zarr stores over HTTP (`--features zarr-http`, docs/zarr.md "Remote stores"), against a
//! server on 127.0.0.1 that this test runs (tests/support/store_server.rs): a URL input gives
//! what the same store read locally gives, for a few dozen random selections over several
//! codecs; only the chunks a slice touches are fetched (the server counts them); a `404` chunk
//! is the fill value; a `500`, a truncated body or no answer inside the selection, an
//! unreachable host and missing metadata are clear errors naming the URL, exit 1, and leave no
//! output.

use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

#[path = "support/scratch.rs"]
mod scratch;
#[path = "support/store_server.rs"]
mod store_server;
#[path = "support/zarr_stores.rs"]
mod zarr_stores;

use scratch::scratch;
use store_server::{Fault, STALL, StoreServer};
use zarr_stores::{SHAPE, data, s, store_array, variant};

/// No request may take longer than this: a refused connection is answered at once.
const PROMPT: Duration = Duration::from_secs(20);

/// `slc ARGS`, reaching the loopback server directly whatever proxy the environment names.
fn slc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_slc"))
        .args(args)
        .env("NO_COLOR", "1")
        .env("NO_PROXY", "127.0.0.1")
        .env("no_proxy", "127.0.0.1")
        .output()
        .expect("slc runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `slc eval EXPR -i a=A -o OUT`: the result's bytes, or the failure's exit code and message.
fn eval(expr: &str, a: &str, out: &Path) -> Result<Vec<u8>, (Option<i32>, String)> {
    let _ = std::fs::remove_file(out);
    let o = slc(&["eval", expr, "-i", &format!("a={a}"), "-o", s(out)]);
    match o.status.success() {
        true => Ok(std::fs::read(out).unwrap()),
        false => Err((o.status.code(), stderr(&o))),
    }
}

/// The stores served: raw (its edge chunks are read in part), zstd with a checksum, sharded,
/// and v2 with blosc, each in `dir/NAME.zarr`.
fn served_stores(dir: &Path) -> Vec<String> {
    ["v3-raw", "v3-zstd-crc32c", "v3-sharded", "v2-blosc"]
        .into_iter()
        .map(|k| {
            let (name, meta_name, meta) = variant(k);
            store_array(&dir.join(format!("{name}.zarr")), "/", meta_name, meta, &data());
            format!("{name}.zarr")
        })
        .collect()
}

/// A small deterministic generator (xorshift), for selections.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: u64) -> i64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n) as i64
    }

    /// A slice of an axis of length `len`: bounds anywhere in (and a little past) it, either
    /// sign; steps of either sign.
    fn slice(&mut self, len: u64) -> String {
        let len = len as i64;
        let bound = |r: &mut Rng| match r.below(4) {
            0 => String::new(),
            _ => (r.below(2 * len as u64 + 6) - len - 3).to_string(),
        };
        let (start, stop) = (bound(self), bound(self));
        let step = [1, 1, 2, 3, 7, -1, -2][self.below(7) as usize];
        format!("{start}:{stop}:{step}")
    }

    /// One selection of `a`, `f32[37, 23]`: boxes, strides, an integer index, a gather.
    fn selection(&mut self) -> String {
        let (rows, cols) = (SHAPE[0], SHAPE[1]);
        match self.below(4) {
            0 | 1 => format!("a[{}, {}]", self.slice(rows), self.slice(cols)),
            2 => format!("a[{}, {}]", self.below(rows) - self.below(2) * rows as i64, self.slice(cols)),
            _ => {
                let picked: Vec<String> =
                    (0..1 + self.below(4)).map(|_| self.below(rows).to_string()).collect();
                format!("a[[{}], {}]", picked.join(", "), self.slice(cols))
            }
        }
    }
}

#[test]
fn url_inputs_give_what_the_local_store_gives() {
    let dir = scratch("zarr_http", "differential");
    let stores = served_stores(&dir);
    let server = StoreServer::start(&dir);
    let out = dir.join("out.npy");
    let mut rng = Rng(0x5eed_2929);
    let mut compared = 0;
    for n in 0..40 {
        let store = &stores[n % stores.len()];
        let expr = rng.selection();
        let local = eval(&expr, s(&dir.join(store)), &out);
        let remote = eval(&expr, &server.url(store), &out);
        match (local, remote) {
            (Ok(want), Ok(got)) => {
                assert!(got == want, "{store}: {expr}: the URL's result differs");
                compared += 1;
            }
            // A selection slc refuses (an out-of-bounds index) is refused the same way.
            (Err((lc, _)), Err((rc, _))) => assert_eq!(lc, rc, "{store}: {expr}"),
            (l, r) => panic!("{store}: {expr}: local {l:?}, remote {r:?}"),
        }
    }
    // Most selections are in bounds: the comparison is not of errors alone.
    assert!(compared >= 30, "only {compared} of 40 selections ran");
    // An array inside a group, by its path after the store.
    let (_, meta_name, meta) = variant("v3-zstd-crc32c");
    store_array(&dir.join("g.zarr"), "/g/arr", meta_name, meta, &data());
    let want = eval("a[3:30:4, ::-3]", &format!("{}/g/arr", s(&dir.join("g.zarr"))), &out).unwrap();
    assert_eq!(eval("a[3:30:4, ::-3]", &server.url("g.zarr/g/arr"), &out).unwrap(), want);
}

/// The chunk keys of the `GET`s the server saw, each with how often (metadata left out).
fn chunk_gets(server: &StoreServer, store: &str) -> Vec<(String, usize)> {
    let prefix = format!("{store}/");
    let gets = server
        .take_gets()
        .into_iter()
        .filter_map(|(path, n)| Some((path.strip_prefix(&prefix)?.to_string(), n)));
    gets.filter(|(key, _)| !key.rsplit('/').next().is_some_and(|f| f.starts_with('.') || f == "zarr.json"))
        .collect()
}

#[test]
fn only_the_chunks_a_slice_touches_are_fetched() {
    let dir = scratch("zarr_http", "touched");
    let stores = served_stores(&dir);
    let server = StoreServer::start(&dir);
    let out = dir.join("out.npy");
    // Rows 8, 11, 14 and columns 10..15 lie in chunk (1, 2); rows 3 and 30 of the gather in
    // chunk rows 0 and 3, its columns in chunk column 0.
    let cases: [(&str, &[&str], &[&str]); 2] = [
        ("a[8:16:3, 10:15]", &["c/1/2"], &["1.2"]),
        ("a[[30, 3], :5]", &["c/0/0", "c/3/0"], &["0.0", "3.0"]),
    ];
    for store in [&stores[1], &stores[3]] {
        for (expr, v3_keys, v2_keys) in cases {
            server.take_gets();
            let got = eval(expr, &server.url(store), &out).unwrap();
            let keys = if store.starts_with("v3") { v3_keys } else { v2_keys };
            let want: Vec<(String, usize)> = keys.iter().map(|k| (k.to_string(), 1)).collect();
            assert_eq!(chunk_gets(&server, store), want, "{store}: {expr}");
            assert_eq!(got, eval(expr, s(&dir.join(store)), &out).unwrap(), "{store}: {expr}");
        }
    }
    // A shard at the array's edge (rows 32..37 of 32..40, columns 20..23 of 20..25) is read in
    // parts, its index and its inner chunks, and fetched once for all of them.
    for expr in ["a[33:, 21:]", "a[-1, -1]"] {
        server.take_gets();
        let got = eval(expr, &server.url(&stores[2]), &out).unwrap();
        assert_eq!(chunk_gets(&server, &stores[2]), vec![("c/4/4".to_string(), 1)], "{expr}");
        assert_eq!(got, eval(expr, s(&dir.join(&stores[2])), &out).unwrap(), "{expr}");
    }
    // `slc show` reads the metadata only, and counts the chunks.
    let o = slc(&["show", "a[8:16:3, 10:15]", "-i", &format!("a={}", server.url(&stores[1]))]);
    assert!(o.status.success(), "{}", stderr(&o));
    let shown = String::from_utf8_lossy(&o.stdout);
    assert!(shown.contains("Zarr input `a` reads 1 of its 25 chunks."), "{shown}");
    assert_eq!(chunk_gets(&server, &stores[1]), vec![]);
}

#[test]
fn a_chunk_the_server_does_not_have_reads_as_the_fill_value() {
    let dir = scratch("zarr_http", "absent");
    let stores = served_stores(&dir);
    let server = StoreServer::start(&dir);
    let out = dir.join("out.npy");
    std::fs::remove_file(dir.join(&stores[1]).join("c/2/0")).unwrap();
    let (expr, store) = ("a[14:20, 3]", &stores[1]);
    let got = eval(expr, &server.url(store), &out).unwrap();
    assert_eq!(got, eval(expr, s(&dir.join(store)), &out).unwrap());
    // Rows 16..20 read the fill value, 0.
    assert_eq!(got[got.len() - 16..], [0u8; 16]);
}

#[test]
fn a_failed_chunk_inside_the_selection_is_an_error_naming_it_and_leaves_no_output() {
    let dir = scratch("zarr_http", "faults");
    let stores = served_stores(&dir);
    let server = StoreServer::start(&dir);
    for store in [&stores[1], &stores[2]] {
        let key = "c/1/2";
        let want = eval("a[8:16, 10:15]", s(&dir.join(store)), &dir.join("out.npy")).unwrap();
        for fault in [Fault::ServerError, Fault::Truncated] {
            server.fail(&format!("{store}/{key}"), fault);
            for out in [dir.join("out.npy"), dir.join("out.zarr")] {
                let (code, err) = eval("a[8:16, 10:15]", &server.url(store), &out).unwrap_err();
                assert_eq!(code, Some(1), "{store}: {fault:?}: {err}");
                assert!(err.contains(&format!("chunk '{key}'")), "{store}: {fault:?}: {err}");
                assert!(err.contains(&server.url(&format!("{store}/{key}"))), "{store}: {fault:?}: {err}");
                if let Fault::ServerError = fault {
                    assert!(err.contains("500"), "{err}");
                }
                assert!(!out.exists(), "{store}: {fault:?}: {} was written", out.display());
            }
            // A failing chunk outside the selection is never fetched.
            assert_eq!(
                eval("a[:8, :5]", &server.url(store), &dir.join("out.npy")).map(|r| r.len()),
                Ok(128 + 160)
            );
            server.clear_faults();
        }
        assert_eq!(eval("a[8:16, 10:15]", &server.url(store), &dir.join("out.npy")).unwrap(), want);
    }
}

/// A server that stops answering is an error once the client's request times out (30 s), not
/// a hang.
#[test]
fn a_server_that_does_not_answer_is_an_error_not_a_hang() {
    let dir = scratch("zarr_http", "stall");
    let stores = served_stores(&dir);
    let server = StoreServer::start(&dir);
    let out = dir.join("out.npy");
    server.fail(&format!("{}/c/1/2", stores[1]), Fault::Stall);
    let started = Instant::now();
    let (code, err) = eval("a[8:16, 10:15]", &server.url(&stores[1]), &out).unwrap_err();
    assert!(started.elapsed() < STALL, "took {:?}", started.elapsed());
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("chunk 'c/1/2'") && err.contains(&server.url(&format!("{}/c/1/2", stores[1]))),
        "{err}"
    );
    assert!(!out.exists());
}

#[test]
fn unreachable_hosts_and_missing_stores_are_clear_errors() {
    let dir = scratch("zarr_http", "unreachable");
    let stores = served_stores(&dir);
    let server = StoreServer::start(&dir);
    let out = dir.join("out.npy");
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap();
    let nowhere = format!("http://{closed}/data.zarr");
    server.fail(&format!("{}/zarr.json", stores[1]), Fault::ServerError);
    let cases = [
        (nowhere.clone(), nowhere.clone()),
        (server.url("none.zarr"), server.url("none.zarr")),
        (server.url(&stores[1]), server.url(&format!("{}/zarr.json", stores[1]))),
    ];
    for (url, named) in cases {
        let started = Instant::now();
        let (code, err) = eval("a[0]", &url, &out).unwrap_err();
        assert!(started.elapsed() < PROMPT, "{url}: took {:?}", started.elapsed());
        assert_eq!(code, Some(1), "{url}: {err}");
        assert!(err.contains("input `a`") && err.contains(&named), "{url}: {err}");
        assert!(!out.exists());
    }
}

#[test]
fn outputs_go_to_local_files_only() {
    for out in ["http://127.0.0.1:9/out.zarr", "https://example.invalid/out.npy"] {
        let o = slc(&["eval", "a[0]", "-i", "a=http://127.0.0.1:9/a.zarr", "-o", out]);
        assert_eq!(o.status.code(), Some(2), "{out}");
        assert!(stderr(&o).contains("local files only"), "{out}: {}", stderr(&o));
    }
    // A .npy at a URL is not fetched: stores only.
    let o = slc(&["eval", "a[0]", "-i", "a=http://127.0.0.1:9/a.npy"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("only Zarr stores over HTTP"), "{}", stderr(&o));
}
