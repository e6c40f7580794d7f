//! Argument values shared by subcommands: `-i NAME=FILE.npy` and `--shape NAME=DTYPE[d,...]`.

use crate::sema::TensorType;
use std::path::PathBuf;

/// `NAME=FILE.npy`, or just `FILE.npy` (bound to the file's stem).
#[derive(Debug, Clone)]
pub struct InputArg {
    pub name: String,
    pub path: PathBuf,
}

fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

pub fn parse_input(s: &str) -> Result<InputArg, String> {
    let (name, path) = match s.split_once('=') {
        Some((name, path)) => (name.to_string(), PathBuf::from(path)),
        None => {
            let path = PathBuf::from(s);
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
            (stem, path)
        }
    };
    if !is_identifier(&name) {
        return Err(format!("`{name}` is not a valid name; write NAME=FILE.npy"));
    }
    Ok(InputArg { name, path })
}

/// `NAME=DTYPE[d0,d1,...]`, e.g. `a=f32[2,3,4]` (`x=i64[]` is 0-d).
pub fn parse_shape(s: &str) -> Result<(String, TensorType), String> {
    let (name, ty) =
        s.split_once('=').ok_or_else(|| format!("`{s}` is not NAME=DTYPE[d0,d1,...] (e.g. a=f32[2,3,4])"))?;
    if !is_identifier(name) {
        return Err(format!("`{name}` is not a valid name"));
    }
    Ok((name.to_string(), ty.parse()?))
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
        assert_eq!((name.as_str(), ty.dtype, ty.shape), ("a", DType::F32, vec![2, 3, 4]));
        assert_eq!(parse_shape("s=i64[]").unwrap().1.shape, Vec::<i64>::new());
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
        assert_eq!((i.name.as_str(), i.path), ("x", PathBuf::from("data/in.npy")));
        assert_eq!(parse_input("dir/img.npy").unwrap().name, "img");
        assert!(parse_input("9=x.npy").is_err());
    }
}
