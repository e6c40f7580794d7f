//! A box of an array: the part of a Zarr input that is decoded (docs/zarr.md, "What is read").

/// A box of an array: `start` and `shape` per axis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Window {
    pub start: Vec<u64>,
    pub shape: Vec<usize>,
}

impl Window {
    /// The whole of an array of `shape`.
    pub fn whole(shape: &[usize]) -> Window {
        Window { start: vec![0; shape.len()], shape: shape.to_vec() }
    }
}
