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
    fn inputs() {
        let i = parse_input("x=data/in.npy").unwrap();
        assert_eq!((i.name.as_str(), i.path), ("x", PathBuf::from("data/in.npy")));
        assert_eq!(parse_input("dir/img.npy").unwrap().name, "img");
        assert!(parse_input("9=x.npy").is_err());
    }
}
