//! `slc show`: a picture of what a program selects from its input, for the terminal
//! ([`terminal`]) and as SVG ([`svg`]).
//!
//! The picture is computed from the plan, the same access the kernels run: [`selection`] asks
//! the reference interpreter where each output element reads, in output order, and keeps what
//! is worth drawing. The renderers only lay that out; the text both share (the notes on each
//! axis, the summary paragraph, the colour scale and the layout of panels and gaps) lives here.
//!
//! [`terminal`]: crate::show::terminal
//! [`svg`]: crate::show::svg
//! [`selection`]: crate::show::selection

pub mod selection;
pub mod stages;
pub mod svg;
pub mod terminal;

pub use selection::{AxisUse, Mark, SelectError, Selection};

use crate::types::ShapeDisplay;

/// Outputs up to this many elements have their cells numbered in output order.
pub const NUMBERED_OUTPUT: u64 = 1000;

/// The colour of output element `order` of `numel`, on a sequential scale (viridis: dark purple
/// for the first element, yellow for the last), as RGB.
pub fn order_colour(order: u64, numel: u64) -> [u8; 3] {
    const STOPS: [[f64; 3]; 5] = [
        [68.0, 1.0, 84.0],
        [59.0, 82.0, 139.0],
        [33.0, 145.0, 140.0],
        [94.0, 201.0, 98.0],
        [253.0, 231.0, 37.0],
    ];
    let t = if numel > 1 { order as f64 / (numel - 1) as f64 } else { 0.0 };
    let at = t.clamp(0.0, 1.0) * (STOPS.len() - 1) as f64;
    let i = (at.floor() as usize).min(STOPS.len() - 2);
    let f = at - i as f64;
    let mix = |c: usize| (STOPS[i][c] + (STOPS[i + 1][c] - STOPS[i][c]) * f).round() as u8;
    [mix(0), mix(1), mix(2)]
}

/// A place along a drawn axis: a shown index, or a gap standing for the indices skipped there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Slot {
    Index(i64),
    Gap,
}

/// The slots of an axis drawn at `shown` indices (ascending).
pub fn slots(shown: &[i64]) -> Vec<Slot> {
    let mut out = vec![];
    for (i, &s) in shown.iter().enumerate() {
        if i > 0 && shown[i - 1] + 1 != s {
            out.push(Slot::Gap);
        }
        out.push(Slot::Index(s));
    }
    out
}

/// At most this many panels (outer indices of a 3-D+ input) are drawn: the first and last half.
const MAX_PANELS: usize = 8;

/// The panels of a drawing: the outer coordinates (all but the last two axes) of each grid,
/// `None` where panels are skipped. A 1-D or 2-D input has one panel, with no outer coordinates;
/// a scalar none.
pub fn panels(sel: &Selection) -> Vec<Option<Vec<i64>>> {
    // A scalar has no grid: the summary says it all.
    if sel.rank() == 0 {
        return vec![];
    }
    let outer = sel.rank().saturating_sub(2);
    let mut all: Vec<Vec<i64>> = vec![vec![]];
    for shown in &sel.shown[..outer] {
        all = all.iter().flat_map(|p| shown.iter().map(move |&i| [p.as_slice(), &[i]].concat())).collect();
    }
    if all.len() > MAX_PANELS {
        let tail = all.split_off(all.len() - MAX_PANELS / 2);
        all.truncate(MAX_PANELS / 2);
        all.push(vec![-1]);
        all.extend(tail);
    }
    // Consecutive in C order, or a gap between.
    let linear = |p: &[i64]| p.iter().zip(&sel.input_shape).fold(0i64, |acc, (&i, &n)| acc * n + i);
    let mut out = vec![];
    for (i, p) in all.iter().enumerate() {
        let skipped = p == &[-1];
        let after_gap = i > 0 && !skipped && all[i - 1] != [-1] && linear(&all[i - 1]) + 1 != linear(p);
        if skipped || after_gap {
            out.push(None);
        }
        if !skipped {
            out.push(Some(p.clone()));
        }
    }
    out
}

/// The drawn axes' names: the last two are the grid's rows and columns.
pub fn axis_name(d: usize, rank: usize) -> String {
    match rank - d {
        1 if rank > 1 => format!("axis {d} (cols)"),
        2 => format!("axis {d} (rows)"),
        _ => format!("axis {d}"),
    }
}

/// One line per input axis (what it contributes) and per new output axis.
pub fn axis_notes(sel: &Selection) -> Vec<String> {
    let rank = sel.rank();
    let output = if sel.writes { "update" } else { "output" };
    let mut lines = vec![];
    for (d, usage) in sel.axes.iter().enumerate() {
        let len = sel.input_shape[d];
        let what = match usage {
            AxisUse::Range { first, last, step, count, out_axis } => {
                let all = if *count == len && step.abs() == 1 { "all " } else { "" };
                format!("{first} → {last}, step {step} ({all}{count} of {len}) → {output} axis {out_axis}")
            }
            AxisUse::Fixed(i) => format!("only index {i} of {len}; no {output} axis of its own"),
            AxisUse::Gathered { by, out_axes, chosen } => {
                let along = out_axes.iter().map(|k| k.to_string()).collect::<Vec<_>>().join(", ");
                let which = if chosen.is_empty() {
                    format!("values not given, so each index of {len} is drawn as possible")
                } else {
                    let pairs: Vec<String> = chosen
                        .iter()
                        .map(|(c, vals)| {
                            let vals: Vec<String> = vals.iter().map(|v| v.to_string()).collect();
                            format!("{c} ← {}", vals.join("|"))
                        })
                        .collect();
                    format!("index ← {by} value: {}", shorten(&pairs, 8))
                };
                let by = if by.starts_with('$') { format!("the index list {by}") } else { by.clone() };
                if out_axes.is_empty() {
                    format!("chosen by {by} (one value for the whole {output}): {which}")
                } else {
                    format!("chosen by {by} (along {output} axes [{along}]): {which}")
                }
            }
            AxisUse::Other if sel.writes => "written along several update axes at once".to_string(),
            AxisUse::Other => "read along several output axes at once".to_string(),
            AxisUse::Unread if sel.writes => "nothing written".to_string(),
            AxisUse::Unread => "nothing read".to_string(),
        };
        lines.push(format!("{}: {what}", axis_name(d, rank)));
    }
    for &k in &sel.new_axes {
        let len = sel.output_shape[k];
        let what = match (len, one_index_axes(sel)) {
            (1, false) => "a newaxis (length 1)".to_string(),
            (1, true) => "length 1, reads no input axis: a newaxis, or a kept axis of one index".to_string(),
            (n, _) => format!("length {n}, reads no input axis: broadcast"),
        };
        lines.push(format!("{output} axis {k}: {what}"));
    }
    lines
}

/// Whether some input axis is read at one index only. A length-1 output axis reads no input
/// axis in the plan (its stride is 0) whether it is a newaxis or such an axis kept, so then the
/// two cannot be told apart.
fn one_index_axes(sel: &Selection) -> bool {
    sel.axes.iter().any(|a| match a {
        AxisUse::Fixed(_) => true,
        AxisUse::Gathered { out_axes, .. } => out_axes.is_empty(),
        _ => false,
    })
}

/// `items` joined, the middle elided beyond `max`.
fn shorten(items: &[String], max: usize) -> String {
    if items.len() <= max {
        return items.join(", ");
    }
    let head = &items[..max / 2];
    let tail = &items[items.len() - max / 2..];
    format!("{}, …, {}", head.join(", "), tail.join(", "))
}

/// The paragraph under the picture: output type, axis map, bytes read, and the kind of copy;
/// for a store, the updates' shape, the axis map, the bytes written, and the kind of writes.
pub fn summary(sel: &Selection) -> String {
    let width = sel.input_dtype.width() as u64;
    // A store's words: the target is written at the update coordinates.
    let (input, an_input, output, reads, read, copy) = match sel.writes {
        false => ("input", "an input", "output", "reads", "read", "the copy is"),
        true => ("target", "a target", "update", "writes", "wrote", "the writes are"),
    };
    let input_numel: u64 = sel.input_shape.iter().map(|&d| d as u64).product();
    let mut map = vec![];
    for (d, usage) in sel.axes.iter().enumerate() {
        match usage {
            AxisUse::Range { out_axis, .. } => {
                map.push(format!("{input} axis {d} → {output} axis {out_axis}"))
            }
            AxisUse::Gathered { out_axes, .. } if !out_axes.is_empty() => {
                let axes: Vec<String> = out_axes.iter().map(|k| k.to_string()).collect();
                map.push(format!("{input} axis {d} → {output} axes [{}] (gathered)", axes.join(", ")))
            }
            AxisUse::Fixed(i) => map.push(format!("{input} axis {d} at index {i} only")),
            AxisUse::Gathered { .. } => map.push(format!("{input} axis {d} at one gathered index")),
            AxisUse::Other | AxisUse::Unread => {}
        }
    }
    for &k in &sel.new_axes {
        map.push(match sel.output_shape[k] == 1 && one_index_axes(sel) {
            true => format!("{output} axis {k} new or kept with length 1"),
            false => format!("{output} axis {k} new"),
        });
    }
    let map = if map.is_empty() { String::new() } else { format!(" Axes: {}.", map.join(", ")) };
    let fraction = |n: u64| if input_numel == 0 { 0.0 } else { 100.0 * n as f64 / input_numel as f64 };
    let touched = match sel.distinct {
        Some(n) => format!(
            "It {reads} {n} of the {input}'s {input_numel} elements ({:.1}% of its {} B)",
            fraction(n),
            input_numel * width
        ),
        None => format!(
            "It {reads} at most {} of the {input}'s {input_numel} elements (at most {:.1}% of its {} B; the index values decide)",
            sel.numel.min(input_numel),
            fraction(sel.numel.min(input_numel)),
            input_numel * width
        ),
    };
    let mut kinds = vec![];
    if sel.contiguous {
        kinds.push("contiguous");
    }
    if sel.reversed() {
        kinds.push("reversed");
    }
    if sel.strided() {
        kinds.push("strided");
    }
    if sel.gathered() {
        kinds.push("gathered");
    }
    if sel.numel == 0 {
        kinds.push("empty");
    }
    let kind = match kinds.as_slice() {
        [] => "a copy".to_string(),
        [one] => one.to_string(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    };
    let kind = if sel.contiguous || sel.numel == 0 { kind } else { format!("{kind}, not contiguous") };
    let repeats = match sel.distinct {
        Some(n) if n + sel.misses < sel.numel => {
            let again = if sel.writes { "rewrite" } else { "re-read" };
            let wins = if sel.writes { " (the last write wins)" } else { "" };
            format!(
                " {} {output} elements {again} {an_input} element that an earlier one {read}{wins}.",
                sel.numel - sel.misses - n
            )
        }
        _ => String::new(),
    };
    let misses = match sel.misses {
        0 => String::new(),
        n => format!(" {n} output elements read nothing (an index out of range in `zero` mode) and are 0."),
    };
    let named =
        |name: &str| if name.starts_with('$') { format!("the constant {name}") } else { name.to_string() };
    let value = match &sel.value {
        None => String::new(),
        Some((name, along)) if along.is_empty() => {
            format!(" The value ({}) has an element per update.", named(name))
        }
        Some((name, along)) if along.len() == sel.output_shape.iter().filter(|&&n| n > 1).count() => {
            format!(" The value ({}) is one element, written to every cell.", named(name))
        }
        Some((name, along)) => {
            let axes: Vec<String> = along.iter().map(|k| k.to_string()).collect();
            format!(" The value ({}) is broadcast along update axes [{}].", named(name), axes.join(", "))
        }
    };
    let head = if sel.writes { "Updates" } else { "Output" };
    let from = if sel.writes { "into" } else { "from" };
    format!(
        "{head} {}{} ({} elements, {} B) {from} {}: {}{}.{map} {touched}; {copy} {kind}.{repeats}{misses}{value}",
        sel.output_dtype,
        ShapeDisplay(&sel.output_shape),
        sel.numel,
        sel.numel * sel.output_dtype.width() as u64,
        sel.input,
        sel.input_dtype,
        ShapeDisplay(&sel.input_shape),
    )
}

/// `text` broken at spaces into lines of at most `width` characters.
pub fn wrap(text: &str, width: usize) -> Vec<String> {
    let mut lines: Vec<String> = vec![];
    for word in text.split(' ') {
        match lines.last_mut() {
            Some(line) if line.chars().count() + 1 + word.chars().count() <= width => {
                line.push(' ');
                line.push_str(word);
            }
            _ => lines.push(word.to_string()),
        }
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_scale_runs_from_purple_to_yellow() {
        assert_eq!(order_colour(0, 10), [68, 1, 84]);
        assert_eq!(order_colour(9, 10), [253, 231, 37]);
        assert_eq!(order_colour(0, 1), [68, 1, 84]);
        assert_eq!(
            slots(&[0, 1, 5, 9]),
            [Slot::Index(0), Slot::Index(1), Slot::Gap, Slot::Index(5), Slot::Gap, Slot::Index(9)]
        );
    }
}
