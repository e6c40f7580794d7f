//! Window algebra: how a strided view of a packed buffer becomes the per-dimension windows of a
//! `DML_OPERATOR_SLICE1` (offset, size, signed stride), and how neighbouring windows merge to fit
//! the operator's dimension limits. Also the two tensor walks the module shares: packed
//! (row-major) strides and the C-order coordinate walk.

use crate::types::Coords;

/// One dimension of a SLICE1: the input tensor description's size and (unsigned) stride, and
/// the walk along it: `count` elements from `start` by `step`.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Win {
    pub(super) size: i64,
    pub(super) stride: i64,
    pub(super) start: i64,
    pub(super) count: i64,
    pub(super) step: i64,
    /// The input dimensions this one stands for (for diagnostics).
    pub(super) label: String,
}

impl Win {
    pub(super) fn offset(&self) -> i64 {
        if self.step > 0 { self.start } else { self.start + (self.count - 1) * self.step }
    }

    pub(super) fn window(&self) -> i64 {
        (self.count - 1) * self.step.abs() + 1
    }
}

/// Row-major strides of a shape, in elements. Unlike `types::row_major_strides`, an empty
/// dimension counts as 1 and the product saturates: DirectML describes even an empty tensor's
/// buffer, and its 32-bit fields refuse what does not fit, with a diagnostic.
pub(super) fn packed_strides(shape: &[i64]) -> Vec<i64> {
    let mut out = vec![0; shape.len()];
    let mut acc = 1i64;
    for d in (0..shape.len()).rev() {
        out[d] = acc;
        acc = acc.saturating_mul(shape[d].max(1));
    }
    out
}

/// Matches each output dimension `(count, stride)` of a view at `base` over a packed buffer of
/// `shape` to the buffer dimension it walks (plan/ir.rs): one window per
/// buffer dimension, plus a stride-0 dimension for a broadcast. Windows come in output order, so
/// the SLICE1's packed output is the view's. `None` when the view is not a product of
/// per-dimension slices.
pub(super) fn map_view(shape: &[i64], base: i64, dims: &[(i64, i64)]) -> Option<Vec<Win>> {
    let shape: Vec<i64> = if shape.is_empty() { vec![1] } else { shape.to_vec() };
    let sigma = packed_strides(&shape);
    let numel: i64 = shape.iter().product();
    if base < 0 || base >= numel {
        return None;
    }
    let first: Vec<i64> = (0..shape.len()).map(|b| (base / sigma[b]) % shape[b]).collect();
    let mut assigned: Vec<Option<(i64, i64, usize)>> = vec![None; shape.len()];
    let mut broadcast = vec![];
    for (pos, &(count, stride)) in dims.iter().enumerate() {
        if count == 1 {
            continue;
        }
        if stride == 0 {
            broadcast.push((pos, count));
            continue;
        }
        let b = (0..shape.len()).find(|&b| {
            let k = stride / sigma[b];
            shape[b] >= 2
                && assigned[b].is_none()
                && stride % sigma[b] == 0
                && (0..shape[b]).contains(&(first[b] + (count - 1) * k))
                && k.abs() < shape[b]
        })?;
        assigned[b] = Some((stride / sigma[b], count, pos));
    }
    // Sort key: an assigned dimension sits at its output position; an unassigned one (a
    // shrunk or size-1 dimension) just before the next assigned one, keeping buffer order.
    let mut keyed = vec![];
    for b in 0..shape.len() {
        let key = match assigned[b] {
            Some((_, _, pos)) => (pos, 1),
            None => ((b..shape.len()).find_map(|c| assigned[c].map(|a| a.2)).unwrap_or(dims.len()), 0),
        };
        let (step, count) = assigned[b].map_or((1, 1), |(k, c, _)| (k, c));
        let win =
            Win { size: shape[b], stride: sigma[b], start: first[b], count, step, label: b.to_string() };
        keyed.push((key, win));
    }
    for (pos, count) in broadcast {
        let win = Win { size: count, stride: 0, start: 0, count, step: 1, label: "broadcast".into() };
        keyed.push(((pos, 1), win));
    }
    keyed.sort_by_key(|(key, _)| *key);
    Some(keyed.into_iter().map(|(_, w)| w).collect())
}

/// Any affine view as a SLICE1 input: a leading stride-1 dimension carries the base offset, each
/// output dimension gets its own (unsigned) stride. Used when [`map_view`] finds no per-dimension
/// structure (a view of an intermediate laid out otherwise).
pub(super) fn generic_view(base: i64, dims: &[(i64, i64)]) -> Vec<Win> {
    let low: i64 = base + dims.iter().filter(|d| d.1 < 0 && d.0 > 1).map(|&(c, s)| (c - 1) * s).sum::<i64>();
    let mut wins =
        vec![Win { size: low + 1, stride: 1, start: low, count: 1, step: 1, label: "offset".into() }];
    for (pos, &(count, stride)) in dims.iter().enumerate() {
        if count > 1 {
            let (start, step) = if stride < 0 { (count - 1, -1) } else { (0, 1) };
            wins.push(Win {
                size: count,
                stride: stride.abs(),
                start,
                count,
                step,
                label: format!("out{pos}"),
            });
        }
    }
    wins
}

/// Merges adjacent windows `a` (outer), `b` when they address one progression of a coalesced
/// dimension.
pub(super) fn merge(a: &Win, b: &Win) -> Option<Win> {
    let layout = a.stride == b.stride.checked_mul(b.size)?;
    let walk = a.count == 1 || b.count == 1 || a.step * b.size == b.step * b.count;
    if !(layout && walk) {
        return None;
    }
    let step = if b.count >= 2 {
        b.step
    } else if a.count >= 2 {
        a.step * b.size
    } else {
        1
    };
    Some(Win {
        size: a.size.checked_mul(b.size)?,
        stride: b.stride,
        start: a.start * b.size + b.start,
        count: a.count * b.count,
        step,
        label: format!("{}+{}", a.label, b.label),
    })
}

/// Brings a window list into `[min, max]` dimensions: drops unit windows at offset 0, merges
/// coalescing neighbours, pads with leading unit dimensions.
pub(super) fn fit(mut wins: Vec<Win>, min: usize, max: usize) -> Result<Vec<Win>, (usize, String)> {
    if wins.len() > max {
        let keep: Vec<Win> = wins.iter().filter(|w| !(w.count == 1 && w.start == 0)).cloned().collect();
        wins = if keep.is_empty() { wins[..1].to_vec() } else { keep };
    }
    while wins.len() > max {
        let Some(i) = (0..wins.len() - 1).find(|&i| merge(&wins[i], &wins[i + 1]).is_some()) else {
            let parts: Vec<String> = wins.iter().map(|w| format!("[{}]", w.label)).collect();
            return Err((
                wins.len(),
                format!(
                    "input dimensions {} each stay separate: the window cuts them (a partial range or a step) \
                     so no two neighbours coalesce",
                    parts.join(" ")
                ),
            ));
        };
        let merged = merge(&wins[i], &wins[i + 1]).ok_or((wins.len(), String::new()))?;
        wins.splice(i..i + 2, [merged]);
    }
    while wins.len() < min {
        wins.insert(0, Win { size: 1, stride: 0, start: 0, count: 1, step: 1, label: "pad".into() });
    }
    Ok(wins)
}

/// Calls `f` with every coordinate of `shape` in C order (the last dimension fastest) until it
/// fails: never when a dimension is empty, once (with no coordinates) for a scalar. The lowering,
/// the host checks and the emulator all walk tensors this way.
pub(super) fn each_coord<E>(shape: &[i64], mut f: impl FnMut(&[i64]) -> Result<(), E>) -> Result<(), E> {
    Coords::new(shape).try_for_each(|c: Vec<i64>| f(&c))
}
