//! Where a command's results go: printed text that stops quietly when the reader goes away
//! (`slc eval … | head`), and `-o` outputs — a `.npy` file written as `slc_runtime::write_npy`
//! does (through symbolic links, into FIFOs and devices in place, regular files atomically), or
//! `-o -` for standard output — checked before anything is computed.

use super::Failure;
use super::args::InputArg;
use slc_runtime::{Destination, Tensor, destination, write_npy, write_npy_to};
use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

/// Writes `text` to standard output. A closed pipe ends the command quietly and successfully,
/// as `cat` and `ls` do; any other failure is an error.
pub fn print(text: &str) -> Result<(), Failure> {
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(Failure::ClosedOutput),
        Err(e) => {
            drop(out);
            eprintln!("error: cannot write to standard output: {e}");
            Err(Failure::Runtime)
        }
    }
}

/// The value of `-o`: a file, a Zarr store (`OUT.zarr`), or `-` for standard output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OutputArg {
    Stdout,
    File(PathBuf),
    Zarr(PathBuf),
}

pub fn parse_output(s: &str) -> Result<OutputArg, String> {
    match s {
        "" => Err("the output path is empty".into()),
        "-" => Ok(OutputArg::Stdout),
        // Inputs may be remote stores; outputs are written here, never to a server.
        _ if crate::zarr::is_url(s) => {
            Err(format!("`{s}` is a URL: slc writes outputs to local files only; give a path"))
        }
        _ if s.trim_end_matches('/').ends_with(".zarr") => {
            Ok(OutputArg::Zarr(PathBuf::from(s.trim_end_matches('/'))))
        }
        _ => Ok(OutputArg::File(PathBuf::from(s))),
    }
}

/// Checks, before anything is computed, that the output can be written: standard output is not
/// a terminal (binary `.npy` bytes would garble it), the file's directory exists and is
/// writable, and the file is none of the inputs.
pub fn check_output(out: &OutputArg, inputs: &[InputArg]) -> Result<(), Failure> {
    let path = match out {
        OutputArg::Stdout if std::io::stdout().is_terminal() => {
            eprintln!(
                "error: -o - writes .npy bytes to standard output, which is a terminal; redirect it or pipe it"
            );
            return Err(Failure::Usage);
        }
        OutputArg::Stdout => return Ok(()),
        OutputArg::Zarr(path) => {
            if let Err(e) = crate::zarr::check_destination(path) {
                eprintln!("error: cannot write '{}': {e}", path.display());
                return Err(Failure::Runtime);
            }
            return refuse_overwriting_an_input(path, path, inputs);
        }
        OutputArg::File(path) => path,
    };
    let target = match destination(path) {
        Ok(Destination::Replace(target)) => target,
        Ok(Destination::Stream(_)) => return Ok(()),
        Err(e) => {
            eprintln!("error: cannot write '{}': {e}", path.display());
            return Err(Failure::Runtime);
        }
    };
    refuse_overwriting_an_input(path, &target, inputs)
}

/// Writing over an input while it is still being read would be wrong with a memory-mapped
/// reader and is surprising anyway; refuse before evaluating.
fn refuse_overwriting_an_input(out: &Path, target: &Path, inputs: &[InputArg]) -> Result<(), Failure> {
    let Ok(target) = target.canonicalize() else {
        return Ok(()); // does not exist yet
    };
    for input in inputs {
        // `starts_with`: an array inside a Zarr store that the output would replace.
        if input.path().and_then(|p| p.canonicalize().ok()).is_some_and(|p| p.starts_with(&target)) {
            eprintln!(
                "error: output '{}' is also input `{}`; write to another file",
                out.display(),
                input.name
            );
            return Err(Failure::Usage);
        }
    }
    Ok(())
}

/// Writes the result where `-o` says.
pub fn write_result(out: &OutputArg, result: &Tensor) -> Result<(), Failure> {
    let written = match out {
        OutputArg::Stdout => write_npy_to(&mut std::io::stdout().lock(), result),
        OutputArg::File(path) => write_npy(path, result),
        OutputArg::Zarr(path) => {
            return crate::zarr::write_zarr(path, result).map_err(|e| {
                eprintln!("error: {e}");
                Failure::Runtime
            });
        }
    };
    match written {
        Ok(()) => Ok(()),
        Err(slc_runtime::NpyError::Stream(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            Err(Failure::ClosedOutput)
        }
        Err(e) => {
            eprintln!("error: {e}");
            Err(Failure::Runtime)
        }
    }
}

/// Writes a whole file or nothing, through symbolic links ([`slc_runtime::write_output`]).
pub fn write_file(path: &Path, bytes: &[u8]) -> Result<(), Failure> {
    slc_runtime::write_output(path, |f| f.write_all(bytes)).map_err(|e| {
        eprintln!("error: cannot write '{}': {e}", path.display());
        Failure::Runtime
    })
}
