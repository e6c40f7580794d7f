//! Parsing a `.npy` preamble and header dict: the Python literal NumPy writes, into a dtype,
//! encoding, shape and data offset.

use super::{Encoding, Header, MAGIC, MAX_HEADER_BYTES, NpyError};
use crate::{DType, MAX_RANK, Tensor};
use std::path::PathBuf;

/// Parses the preamble and header dict from the first bytes of a file.
/// `Ok(None)` means more bytes are needed (at least the returned header end).
pub(super) fn parse_header(bytes: &[u8], path: &Option<PathBuf>) -> Result<Result<Header, usize>, NpyError> {
    let bad = |reason: &str| NpyError::BadHeader { path: path.clone(), reason: reason.to_string() };
    if bytes.len() < 10 {
        return if MAGIC.starts_with(&bytes[..bytes.len().min(6)]) {
            Err(bad("the file ends inside the preamble"))
        } else {
            Err(NpyError::NotNpy { path: path.clone() })
        };
    }
    if &bytes[..6] != MAGIC {
        return Err(NpyError::NotNpy { path: path.clone() });
    }
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(bad("the file ends inside the preamble"));
            }
            (u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize, 12)
        }
        v => return Err(bad(&format!("unsupported format version {v}.{}", bytes[7]))),
    };
    if len > MAX_HEADER_BYTES {
        return Err(NpyError::HeaderTooLarge { path: path.clone(), len });
    }
    let end = start + len;
    if bytes.len() < end {
        return Ok(Err(end));
    }
    let text = match bytes[6] {
        3 => std::str::from_utf8(&bytes[start..end]).map_err(|_| bad("the header is not UTF-8"))?.to_string(),
        _ => bytes[start..end].iter().map(|&b| b as char).collect(), // latin-1
    };
    let dict = parse_dict(&text).map_err(|r| bad(&r))?;
    let mut descr = None;
    let mut fortran = None;
    let mut shape = None;
    for (key, value) in dict {
        match (key.as_str(), value) {
            ("descr", Value::Str(s)) => descr = Some(s),
            ("descr", _) => {
                return Err(NpyError::UnsupportedDtype {
                    path: path.clone(),
                    descr: "a structured dtype".into(),
                });
            }
            ("fortran_order", Value::Bool(b)) => fortran = Some(b),
            ("shape", Value::Tuple(t)) => shape = Some(t),
            (k, _) => return Err(bad(&format!("unexpected key or value for '{k}'"))),
        }
    }
    let (Some(descr), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return Err(bad("it needs the keys 'descr', 'fortran_order' and 'shape'"));
    };
    if shape.len() > MAX_RANK {
        return Err(NpyError::TooManyDims { path: path.clone(), rank: shape.len() });
    }
    let (dtype, swap) = DType::from_npy_descr(&descr)
        .ok_or_else(|| NpyError::UnsupportedDtype { path: path.clone(), descr: descr.clone() })?;
    let elements = shape.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d));
    // A 1-element, empty or 1-D array has the same layout in both orders.
    let fortran = fortran && shape.iter().filter(|&&d| d > 1).count() > 1;
    let too_large = || NpyError::TooLarge { path: path.clone(), shape: shape.clone() };
    let data_bytes = elements.and_then(|n| n.checked_mul(dtype.width() as u64)).ok_or_else(too_large)?;
    let dims =
        shape.iter().map(|&d| usize::try_from(d).map_err(|_| too_large())).collect::<Result<Vec<_>, _>>()?;
    if Tensor::byte_size(dtype, &dims).is_none() {
        return Err(too_large());
    }
    Ok(Ok(Header { dtype, encoding: Encoding { swap, fortran }, shape: dims, data_offset: end, data_bytes }))
}

enum Value {
    Str(String),
    Bool(bool),
    Tuple(Vec<u64>),
    /// A list (a structured dtype's descr); its contents do not matter to slc.
    List,
}

/// The Python literal NumPy writes: `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`.
fn parse_dict(text: &str) -> Result<Vec<(String, Value)>, String> {
    let mut p = Lit { s: text.trim().as_bytes(), i: 0 };
    p.eat(b'{')?;
    let mut entries = vec![];
    loop {
        p.ws();
        if p.peek() == Some(b'}') {
            p.i += 1;
            break;
        }
        let key = p.string()?;
        p.ws();
        p.eat(b':')?;
        p.ws();
        let value = match p.peek() {
            Some(b'\'' | b'"') => Value::Str(p.string()?),
            Some(b'(') => Value::Tuple(p.tuple()?),
            Some(b'T') => p.word("True").map(|_| Value::Bool(true))?,
            Some(b'F') => p.word("False").map(|_| Value::Bool(false))?,
            Some(b'[') => p.skip_list().map(|_| Value::List)?,
            _ => return Err(format!("cannot read the value of '{key}'")),
        };
        entries.push((key, value));
        p.ws();
        match p.peek() {
            Some(b',') => p.i += 1,
            Some(b'}') => {}
            _ => return Err("expected ',' or '}'".into()),
        }
    }
    p.ws();
    if p.i != p.s.len() {
        return Err("text after the closing '}'".into());
    }
    Ok(entries)
}

struct Lit<'a> {
    s: &'a [u8],
    i: usize,
}

impl Lit<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn ws(&mut self) {
        while self.peek().is_some_and(|c| c.is_ascii_whitespace()) {
            self.i += 1;
        }
    }

    fn eat(&mut self, c: u8) -> Result<(), String> {
        if self.peek() == Some(c) {
            self.i += 1;
            Ok(())
        } else {
            Err(format!("expected '{}'", c as char))
        }
    }

    fn word(&mut self, w: &str) -> Result<(), String> {
        if self.s[self.i..].starts_with(w.as_bytes()) {
            self.i += w.len();
            Ok(())
        } else {
            Err(format!("expected {w}"))
        }
    }

    fn string(&mut self) -> Result<String, String> {
        let quote = self.peek().filter(|&c| c == b'\'' || c == b'"').ok_or("expected a string")?;
        self.i += 1;
        let start = self.i;
        while self.peek().is_some_and(|c| c != quote) {
            self.i += 1;
        }
        let s = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
        self.eat(quote)?;
        Ok(s)
    }

    fn skip_list(&mut self) -> Result<(), String> {
        let mut depth = 0;
        while let Some(c) = self.peek() {
            self.i += 1;
            match c {
                b'[' | b'(' => depth += 1,
                b']' | b')' => {
                    depth -= 1;
                    if depth == 0 {
                        return Ok(());
                    }
                }
                _ => {}
            }
        }
        Err("unterminated list".into())
    }

    fn tuple(&mut self) -> Result<Vec<u64>, String> {
        self.eat(b'(')?;
        let mut dims = vec![];
        loop {
            self.ws();
            match self.peek() {
                Some(b')') => {
                    self.i += 1;
                    return Ok(dims);
                }
                Some(c) if c.is_ascii_digit() => {
                    let start = self.i;
                    while self.peek().is_some_and(|c| c.is_ascii_digit()) {
                        self.i += 1;
                    }
                    // Python ints are unbounded; anything above u64 is too large anyway.
                    let digits = std::str::from_utf8(&self.s[start..self.i]).unwrap_or("");
                    dims.push(digits.parse().unwrap_or(u64::MAX));
                    // 'L' suffixes come from Python 2 writers.
                    if self.peek() == Some(b'L') {
                        self.i += 1;
                    }
                    self.ws();
                    match self.peek() {
                        Some(b',') => self.i += 1,
                        Some(b')') => {}
                        _ => return Err("expected ',' or ')' in the shape".into()),
                    }
                }
                _ => return Err("the shape must be a tuple of non-negative integers".into()),
            }
        }
    }
}
