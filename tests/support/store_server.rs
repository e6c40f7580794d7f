//! A tiny HTTP/1.1 server over a directory, for the remote-store tests (tests/zarr_http.rs):
//! on 127.0.0.1 only, `GET` and `HEAD` with single `Range: bytes=…` requests (a multi-range
//! request gets the whole file, as RFC 9110 allows), keep-alive, a `404` for a missing file.
//! It counts the `GET`s of each path and can be told to fail one path: a `500`, a body cut
//! short of its `Content-Length`, or no answer at all. It stops accepting when dropped.

#![allow(dead_code)] // each test file uses some of these

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// How one path is answered wrongly.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// `500 Internal Server Error`.
    ServerError,
    /// The headers promise the whole file; half of it is sent, then the connection closes.
    Truncated,
    /// Nothing is answered for [`STALL`], then the connection closes.
    Stall,
}

/// How long a stalled answer keeps the client waiting: longer than its timeout.
pub const STALL: Duration = Duration::from_secs(45);

#[derive(Default)]
struct State {
    gets: Mutex<BTreeMap<String, usize>>,
    faults: Mutex<BTreeMap<String, Fault>>,
}

pub struct StoreServer {
    addr: SocketAddr,
    state: Arc<State>,
    stop: Arc<AtomicBool>,
    accepting: Option<JoinHandle<()>>,
}

impl StoreServer {
    /// Serves the files under `root` at `http://127.0.0.1:PORT/`.
    pub fn start(root: &Path) -> StoreServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
        let addr = listener.local_addr().unwrap();
        let state = Arc::new(State::default());
        let stop = Arc::new(AtomicBool::new(false));
        let (root, served, stopping) = (root.to_path_buf(), state.clone(), stop.clone());
        let accepting = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if stopping.load(Ordering::SeqCst) {
                    break;
                }
                let Ok(conn) = conn else { continue };
                let (root, state) = (root.clone(), served.clone());
                std::thread::spawn(move || serve(conn, &root, &state));
            }
        });
        StoreServer { addr, state, stop, accepting: Some(accepting) }
    }

    /// The URL of `path` (relative to the root) on this server.
    pub fn url(&self, path: &str) -> String {
        format!("http://{}/{}", self.addr, path.trim_start_matches('/'))
    }

    /// The paths fetched with `GET` since the last call, each with how often.
    pub fn take_gets(&self) -> BTreeMap<String, usize> {
        std::mem::take(&mut *self.state.gets.lock().unwrap())
    }

    /// From now on, answers `path` (relative to the root) with `fault`.
    pub fn fail(&self, path: &str, fault: Fault) {
        self.state.faults.lock().unwrap().insert(path.trim_start_matches('/').to_string(), fault);
    }

    pub fn clear_faults(&self) {
        self.state.faults.lock().unwrap().clear();
    }
}

impl Drop for StoreServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accepting thread, which sees `stop` and ends.
        let _ = TcpStream::connect(self.addr);
        if let Some(t) = self.accepting.take() {
            let _ = t.join();
        }
    }
}

/// Answers the requests of one connection until the client closes it (or goes quiet).
fn serve(conn: TcpStream, root: &Path, state: &State) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let _ = conn.set_write_timeout(Some(Duration::from_secs(10)));
    let Ok(writer) = conn.try_clone() else { return };
    let mut reader = BufReader::new(conn);
    let mut writer = writer;
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request).unwrap_or(0) == 0 {
            return;
        }
        let mut range = None;
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            let line = line.trim_end();
            if line.is_empty() {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("range")
            {
                range = Some(value.trim().to_string());
            }
        }
        let mut parts = request.split_whitespace();
        let (method, target) = (parts.next().unwrap_or(""), parts.next().unwrap_or("/"));
        let path = target.trim_start_matches('/').to_string();
        if method == "GET" {
            *state.gets.lock().unwrap().entry(path.clone()).or_default() += 1;
        }
        let fault = state.faults.lock().unwrap().get(&path).copied();
        // Nothing above the root is served.
        let file = (!path.split('/').any(|p| p == "..")).then(|| root.join(&path));
        if !respond(&mut writer, method, file.as_deref(), range.as_deref(), fault) {
            return;
        }
    }
}

/// Writes the response to one request; whether the connection stays open.
fn respond(
    out: &mut TcpStream,
    method: &str,
    file: Option<&Path>,
    range: Option<&str>,
    fault: Option<Fault>,
) -> bool {
    let head = |status: &str, length: usize, extra: &str| {
        format!("HTTP/1.1 {status}\r\nContent-Length: {length}\r\nAccept-Ranges: bytes\r\n{extra}\r\n")
    };
    if !matches!(method, "GET" | "HEAD") {
        return out.write_all(head("405 Method Not Allowed", 0, "").as_bytes()).is_ok();
    }
    if let Some(Fault::Stall) = fault {
        std::thread::sleep(STALL);
        return false;
    }
    if let Some(Fault::ServerError) = fault {
        let body = "injected failure";
        return out
            .write_all(format!("{}{body}", head("500 Internal Server Error", body.len(), "")).as_bytes())
            .is_ok();
    }
    let Some(bytes) = file.filter(|f| f.is_file()).and_then(|f| std::fs::read(f).ok()) else {
        return out.write_all(head("404 Not Found", 0, "").as_bytes()).is_ok();
    };
    let size = bytes.len();
    let (status, body, extra) = match range.and_then(|r| single_range(r, size)) {
        Some((start, end)) => (
            "206 Partial Content",
            &bytes[start..end],
            format!("Content-Range: bytes {start}-{}/{size}\r\n", end - 1),
        ),
        None => ("200 OK", &bytes[..], String::new()),
    };
    let mut response = head(status, body.len(), &extra).into_bytes();
    if method == "GET" {
        match fault {
            Some(Fault::Truncated) => {
                response.extend_from_slice(&body[..body.len() / 2]);
                let _ = out.write_all(&response);
                return false;
            }
            _ => response.extend_from_slice(body),
        }
    }
    out.write_all(&response).is_ok()
}

/// The byte range of `bytes=START-END`, `bytes=START-` or `bytes=-SUFFIX` in a value of `size`
/// bytes; `None` for several ranges or one that does not fit (the whole value is sent).
fn single_range(header: &str, size: usize) -> Option<(usize, usize)> {
    let spec = header.strip_prefix("bytes=")?;
    if spec.contains(',') {
        return None;
    }
    let (start, end) = spec.split_once('-')?;
    let (start, end) = match (start.trim(), end.trim()) {
        ("", suffix) => (size.checked_sub(suffix.parse().ok()?)?, size),
        (start, "") => (start.parse().ok()?, size),
        (start, end) => (start.parse().ok()?, end.parse::<usize>().ok()?.checked_add(1)?.min(size)),
    };
    (start < end && end <= size).then_some((start, end))
}
