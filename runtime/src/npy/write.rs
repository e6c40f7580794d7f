//! Writing `.npy` files and streams, byte for byte what `np.save` writes.

use super::{MAGIC, NpyError};
use crate::Tensor;
use crate::output::write_output;
use std::io::Write;
use std::path::Path;

/// The bytes of a `.npy` file holding `t`, exactly as `np.save` writes them.
pub fn encode_npy(t: &Tensor) -> Result<Vec<u8>, NpyError> {
    let mut out = header(t)?;
    out.extend_from_slice(t.bytes());
    Ok(out)
}

/// The preamble and header of `t`'s `.npy` file.
fn header(t: &Tensor) -> Result<Vec<u8>, NpyError> {
    let descr = t.dtype().npy_descr().ok_or(NpyError::Bf16)?;
    let shape = match t.shape() {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        dims => format!("({})", dims.iter().map(|d| d.to_string()).collect::<Vec<_>>().join(", ")),
    };
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    // Pad with spaces and end with '\n' so that the data starts at a multiple of 64.
    let (version, preamble) = if header.len() + 1 + 10 <= 65535 { (1u8, 10) } else { (2u8, 12) };
    let total = (preamble + header.len() + 1).div_ceil(64) * 64;
    header.push_str(&" ".repeat(total - preamble - header.len() - 1));
    header.push('\n');
    let mut out = Vec::with_capacity(total);
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[version, 0]);
    let len = header.len();
    if version == 1 {
        out.extend_from_slice(&(len as u16).to_le_bytes());
    } else {
        out.extend_from_slice(&(len as u32).to_le_bytes());
    }
    out.extend_from_slice(header.as_bytes());
    Ok(out)
}

/// Writes `t` to `path` as [`write_output`] does: a regular file atomically (on any failure it
/// is untouched and no temporary file remains), through symbolic links, and into FIFOs and
/// devices in place. The data is written from the tensor itself, not copied.
pub fn write_npy(path: &Path, t: &Tensor) -> Result<(), NpyError> {
    let header = header(t)?;
    write_output(path, |w| {
        w.write_all(&header)?;
        w.write_all(t.bytes())
    })
    .map_err(|source| NpyError::Write { path: path.to_path_buf(), source })
}

/// Writes `t`'s `.npy` bytes to a stream (standard output).
pub fn write_npy_to(w: &mut dyn Write, t: &Tensor) -> Result<(), NpyError> {
    let header = header(t)?;
    w.write_all(&header)?;
    w.write_all(t.bytes())?;
    w.flush().map_err(NpyError::from)
}
