//! Argument values shared by subcommands: `-i NAME=FILE.npy` and `--shape NAME=DTYPE[d,...]`,
//! the checks that bindings do not conflict, and opening the inputs they name.

use super::Failure;
use crate::types::{ShapeDisplay, SymTensorType, TensorType};
use crate::zarr::{PendingZarr, is_url, is_zarr, open_zarr, open_zarr_url};
use slc_runtime::{DType, PendingNpy, Tensor, open_npy, open_npy_stream, open_npz};
use std::path::PathBuf;

/// Where an input's array comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputSource {
    /// `-`: one `.npy` on standard input.
    Stdin,
    /// A `.npy` file, or a `.npz` archive holding one array.
    File(PathBuf),
    /// `FILE.npz:KEY`: one array of a `.npz` archive.
    NpzMember(PathBuf, String),
    /// `DATA.zarr` or `DATA.zarr/path/in/group`: a Zarr array in a local directory store.
    Zarr(PathBuf),
    /// `http(s)://HOST/DATA.zarr[/path/in/group]`: a Zarr array in a store over HTTP.
    ZarrUrl(String),
}

/// An input whose header (dtype, shape) has been read, its data not yet.
pub enum Opened {
    Npy(PendingNpy),
    // Boxed: the array's metadata and codec chain are large, and inputs are few.
    Zarr(Box<PendingZarr>),
}

impl Opened {
    pub fn dtype(&self) -> DType {
        match self {
            Opened::Npy(npy) => npy.dtype(),
            Opened::Zarr(zarr) => zarr.dtype(),
        }
    }

    pub fn shape(&self) -> &[usize] {
        match self {
            Opened::Npy(npy) => npy.shape(),
            Opened::Zarr(zarr) => zarr.shape(),
        }
    }

    /// Reads the whole input (input `name`, for errors).
    pub fn read(self, name: &str) -> Result<Tensor, Failure> {
        match self {
            Opened::Npy(npy) => npy.read().map_err(|e| input_error(name, e)),
            Opened::Zarr(zarr) => zarr.read_all().map_err(|e| input_error(name, e)),
        }
    }
}

/// `NAME=FILE.npy`, or just `FILE.npy` (bound to the file's stem).
#[derive(Debug, Clone)]
pub struct InputArg {
    pub name: String,
    pub source: InputSource,
}

impl InputArg {
    /// The file the input is read from, if it is one.
    pub fn path(&self) -> Option<&std::path::Path> {
        match &self.source {
            InputSource::Stdin | InputSource::ZarrUrl(_) => None,
            InputSource::File(p) | InputSource::NpzMember(p, _) | InputSource::Zarr(p) => Some(p),
        }
    }

    /// Reads the input's header (its dtype and shape; a Zarr array's metadata), not yet its data.
    pub fn open(&self) -> Result<Opened, Failure> {
        let opened = match &self.source {
            InputSource::Zarr(path) => return self.zarr(open_zarr(path)),
            InputSource::File(path) if path.is_dir() && is_zarr(path) => return self.zarr(open_zarr(path)),
            InputSource::ZarrUrl(url) => return self.zarr(open_zarr_url(url)),
            InputSource::Stdin => {
                if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
                    eprintln!(
                        "error: input `{}` is standard input, which is a terminal; pipe a .npy into it",
                        self.name
                    );
                    return Err(Failure::Usage);
                }
                open_npy_stream(Box::new(std::io::stdin()), "<stdin>")
            }
            InputSource::File(path) => open_npy(path),
            InputSource::NpzMember(path, key) => open_npz(path, Some(key)),
        };
        opened.map(Opened::Npy).map_err(|e| input_error(&self.name, e))
    }

    /// The input as the Zarr array `opened`, or its error.
    fn zarr(&self, opened: Result<PendingZarr, String>) -> Result<Opened, Failure> {
        opened.map(|z| Opened::Zarr(Box::new(z))).map_err(|e| input_error(&self.name, e))
    }
}

/// Reports an input that cannot be read.
pub fn input_error(name: &str, e: impl std::fmt::Display) -> Failure {
    eprintln!("error: input `{name}`: {e}");
    Failure::Runtime
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Checks that `name` can name an input: an identifier that is no keyword and no function.
fn check_name(name: &str) -> Result<(), String> {
    if !is_identifier(name) {
        return Err(format!("`{name}` is not a valid name; write NAME=FILE.npy"));
    }
    if crate::syntax::token::KEYWORDS.contains(&name) {
        return Err(format!("`{name}` is a keyword and cannot name an input"));
    }
    let functions = crate::sema::OPERATOR_FUNCTIONS.iter().chain(crate::repl::HELPERS);
    if functions.into_iter().any(|f| *f == name) {
        return Err(format!("`{name}` is a function and cannot name an input"));
    }
    Ok(())
}

pub fn parse_input(s: &str) -> Result<InputArg, String> {
    let (name, spec) = match s.split_once('=') {
        Some((name, spec)) => (name.to_string(), spec),
        None if s == "-" => return Err("standard input needs a name: -i NAME=-".into()),
        None => {
            let stem = std::path::Path::new(s).file_stem().and_then(|s| s.to_str()).unwrap_or_default();
            (stem.to_string(), s)
        }
    };
    check_name(&name)?;
    let source = match spec.rsplit_once(':') {
        _ if spec == "-" => InputSource::Stdin,
        // Over the network slc reads Zarr stores only: a file there is fetched whole anyway.
        _ if is_url(spec) && (spec.ends_with(".npy") || spec.contains(".npz")) => {
            return Err(format!(
                "`{spec}` is a .npy or .npz file at a URL: slc reads only Zarr stores over HTTP; download it first"
            ));
        }
        _ if is_url(spec) => InputSource::ZarrUrl(spec.to_string()),
        Some((path, key)) if path.ends_with(".npz") && !key.is_empty() => {
            InputSource::NpzMember(PathBuf::from(path), key.to_string())
        }
        // A regular file is a .npy/.npz wherever it lies (even inside a directory named *.zarr).
        _ if !std::path::Path::new(spec).is_file() && is_zarr(std::path::Path::new(spec)) => {
            InputSource::Zarr(PathBuf::from(spec))
        }
        _ => InputSource::File(PathBuf::from(spec)),
    };
    Ok(InputArg { name, source })
}

/// `NAME=DTYPE[d0,d1,...]`, e.g. `a=f32[2,3,4]` (`x=i64[]` is 0-d); a dim may be a symbol
/// (`a=f32[N, M]`) or `?` (named from the input and the axis: `_a0`).
pub fn parse_shape(s: &str) -> Result<(String, SymTensorType), String> {
    let (name, ty) =
        s.split_once('=').ok_or_else(|| format!("`{s}` is not NAME=DTYPE[d0,d1,...] (e.g. a=f32[2,3,4])"))?;
    check_name(name)?;
    Ok((name.to_string(), SymTensorType::parse_for(ty, name)?))
}

/// The declared types as concrete ones, for a subcommand that does not take symbolic dims yet:
/// an error naming the first symbolic one otherwise.
pub fn concrete_types(
    shapes: &[(String, SymTensorType)],
    command: &str,
) -> Result<Vec<(String, TensorType)>, Failure> {
    shapes
        .iter()
        .map(|(name, ty)| match ty.concrete() {
            Some(t) => Ok((name.clone(), t)),
            None => {
                eprintln!(
                    "error: `slc {command}` does not take symbolic dims yet: `{name}` is {ty}; give it concrete dims (e.g. --shape {name}={}{})",
                    ty.dtype,
                    ShapeDisplay(&vec![4; ty.shape.len()])
                );
                Err(Failure::Usage)
            }
        })
        .collect()
}

/// Each name is bound once: by one `-i` or one `--shape`, and at most one input is standard
/// input. Reports the first conflict.
pub fn check_bindings(inputs: &[InputArg], shapes: &[(String, SymTensorType)]) -> Result<(), Failure> {
    let mut seen: Vec<(&str, &str)> = vec![];
    let named = inputs
        .iter()
        .map(|i| (i.name.as_str(), "-i"))
        .chain(shapes.iter().map(|(n, _)| (n.as_str(), "--shape")));
    for (name, flag) in named {
        if let Some((_, first)) = seen.iter().find(|(n, _)| *n == name) {
            let how = if *first == flag {
                format!("twice with {flag}")
            } else {
                format!("with both {first} and {flag}")
            };
            eprintln!("error: input `{name}` is bound {how}; bind each name once");
            return Err(Failure::Usage);
        }
        seen.push((name, flag));
    }
    if inputs.iter().filter(|i| i.source == InputSource::Stdin).count() > 1 {
        eprintln!("error: only one input can be read from standard input (-i NAME=-)");
        return Err(Failure::Usage);
    }
    Ok(())
}

/// A byte count: digits with an optional binary suffix, `K`, `M`, `G` or `T` (`512M`, `4G`).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let (digits, shift) = match t.char_indices().last() {
        Some((i, 'K' | 'k')) => (&t[..i], 10),
        Some((i, 'M' | 'm')) => (&t[..i], 20),
        Some((i, 'G' | 'g')) => (&t[..i], 30),
        Some((i, 'T' | 't')) => (&t[..i], 40),
        _ => (t, 0),
    };
    let n: u64 = digits.parse().map_err(|_| format!("`{s}` is not a byte count (e.g. 1000000, 512M, 4G)"))?;
    n.checked_mul(1 << shift).ok_or_else(|| format!("`{s}` bytes is more than 2^64"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use slc_runtime::DType;

    #[test]
    fn shapes() {
        let (name, ty) = parse_shape("a=f32[2, 3,4]").unwrap();
        assert_eq!((name.as_str(), ty.dtype, ty.concrete_shape()), ("a", DType::F32, Some(vec![2, 3, 4])));
        assert_eq!(parse_shape("s=i64[]").unwrap().1.concrete_shape(), Some(vec![]));
        assert_eq!(parse_shape("a=f32[N, ?]").unwrap().1.to_string(), "f32[N, _a1]");
        assert!(parse_shape("a=f32[2,-1]").is_err());
        assert!(parse_shape("a=q8[2]").is_err());
        assert!(parse_shape("1a=f32[2]").is_err());
        assert!(parse_shape("a=f32").is_err());
    }

    #[test]
    fn byte_counts() {
        assert_eq!(parse_bytes("1000"), Ok(1000));
        assert_eq!(parse_bytes("512M"), Ok(512 << 20));
        assert_eq!(parse_bytes("4g"), Ok(4 << 30));
        assert!(parse_bytes("-1").is_err());
        assert!(parse_bytes("G").is_err());
        assert!(parse_bytes("99999999999T").is_err());
    }

    #[test]
    fn inputs() {
        let i = parse_input("x=data/in.npy").unwrap();
        assert_eq!((i.name.as_str(), i.source), ("x", InputSource::File(PathBuf::from("data/in.npy"))));
        assert_eq!(parse_input("dir/img.npy").unwrap().name, "img");
        assert!(parse_input("9=x.npy").is_err());
        assert_eq!(parse_input("a=-").unwrap().source, InputSource::Stdin);
        assert!(parse_input("-").is_err());
        let member = parse_input("w=m.npz:weights").unwrap().source;
        assert_eq!(member, InputSource::NpzMember(PathBuf::from("m.npz"), "weights".into()));
        // A colon elsewhere is part of the path.
        assert_eq!(parse_input("a=c:x.npy").unwrap().source, InputSource::File(PathBuf::from("c:x.npy")));
        for reserved in ["newaxis=x.npy", "None=x.npy", "let=x.npy", "gather=x.npy", "load=x.npy"] {
            assert!(parse_input(reserved).is_err(), "{reserved}");
        }
        assert!(parse_shape("slice=f32[2]").is_err());
        let zarr = |s| parse_input(s).unwrap().source;
        assert_eq!(zarr("a=d.zarr/g/x"), InputSource::Zarr(PathBuf::from("d.zarr/g/x")));
        assert_eq!(parse_input("d.zarr/g/x").unwrap().name, "x");
        assert_eq!(zarr("d.zarr"), InputSource::Zarr(PathBuf::from("d.zarr")));
    }
}
