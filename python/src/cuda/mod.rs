//! Arrays on an NVIDIA GPU: any DLPack producer on a CUDA device (PyTorch, CuPy, JAX) is read
//! in place — no copy — and results are `slc.DeviceArray`s, DLPack producers themselves
//! (`torch.from_dlpack(r)`, `cupy.from_dlpack(r)`), or are written into a device `out=`.
//!
//! Streams follow DLPack: slc works on one stream per call (`stream=`: a handle, or an object
//! with `cuda_stream`, `ptr` or `__cuda_stream__`; default the legacy default stream, PyTorch's
//! and CuPy's default) and asks each producer to order its pending work before it
//! (`__dlpack__(stream=...)`); a consumer of a result passes its stream, which is then made to
//! wait for slc's work, and the memory is freed in that stream's order.
//!
//! The DLPack structs are written here by hand (a dozen lines) rather than through `dlpark`:
//! slc needs only the legacy `dltensor` capsule in both directions, and no other dependency.

mod array;
mod import;
mod run;
mod torch;

pub use array::PyDeviceArray;
pub use import::{import, is_cuda, stream_of};
pub use run::{clear_cache, eval_on_device, run_on_device};

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use slc::DType;
use slc::embed::{DeviceArray, Stream};
use std::ffi::{CStr, c_void};

/// DLPack's device type for CUDA device memory.
pub const DL_CUDA: i64 = 2;

#[repr(C)]
struct DLDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DLDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DLTensor {
    data: *mut c_void,
    device: DLDevice,
    ndim: i32,
    dtype: DLDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DLManagedTensor {
    dl_tensor: DLTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DLManagedTensor)>,
}

const DLTENSOR: &CStr = c"dltensor";
const USED_DLTENSOR: &CStr = c"used_dltensor";

fn dtype_of_dl(t: &DLDataType) -> Option<DType> {
    if t.lanes != 1 {
        return None;
    }
    Some(match (t.code, t.bits) {
        (0, 8) => DType::I8,
        (0, 16) => DType::I16,
        (0, 32) => DType::I32,
        (0, 64) => DType::I64,
        (1, 8) => DType::U8,
        (1, 16) => DType::U16,
        (1, 32) => DType::U32,
        (1, 64) => DType::U64,
        (2, 16) => DType::F16,
        (2, 32) => DType::F32,
        (2, 64) => DType::F64,
        (4, 16) => DType::BF16,
        (5, 64) => DType::C64,
        (5, 128) => DType::C128,
        (6, 8) => DType::Bool,
        _ => return None,
    })
}

fn dl_of_dtype(d: DType) -> DLDataType {
    let code = match d {
        DType::I8 | DType::I16 | DType::I32 | DType::I64 => 0,
        DType::U8 | DType::U16 | DType::U32 | DType::U64 => 1,
        DType::F16 | DType::F32 | DType::F64 => 2,
        DType::BF16 => 4,
        DType::C64 | DType::C128 => 5,
        DType::Bool => 6,
    };
    DLDataType { code, bits: (d.width() * 8) as u8, lanes: 1 }
}

fn cuda_error(e: impl std::fmt::Display) -> PyErr {
    PyValueError::new_err(format!("CUDA: {e}"))
}
