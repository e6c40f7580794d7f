//! The selection as an SVG document: the picture of [`terminal`](super::terminal) for
//! documentation. Read cells are filled with their output-order colour (a legend shows the
//! scale) and, for small outputs, numbered; arrows run along each selected grid axis in the
//! direction it is read; gathered coordinates carry the index values that chose them; the notes
//! and the summary follow as text.
//!
//! Cells carry `data-coords` (input coordinates) and read ones `data-order` (the first output
//! element that reads them), so that tests and tools can check the drawing against the plan.

use super::{
    AxisUse, Mark, NUMBERED_OUTPUT, Selection, Slot, axis_notes, order_colour, panels, slots, summary, wrap,
};
use crate::types::ShapeDisplay;
use std::fmt::Write as _;

const CELL: f64 = 30.0;
const GAP: f64 = 18.0;
const MARGIN: f64 = 20.0;
const LINE: f64 = 18.0;
/// Left of the grid: an arrow lane and the row labels.
const ROW_LABELS: f64 = 96.0;
/// Right of the grid: room for the index values of a gathered row axis.
const ROW_CHOSEN: f64 = 120.0;
const UNREAD_FILL: &str = "#ececec";
const MAYBE_FILL: &str = "#fff1a8";

/// The SVG of `sel`, titled `title` (the program).
pub fn render(sel: &Selection, title: &str) -> String {
    document(&[drawing(sel, title)])
}

/// The SVG of a chain: one drawing per stage, in a row, each titled with its program.
pub fn render_stages(stages: &[(String, Selection)]) -> String {
    let n = stages.len();
    let drawings: Vec<Drawing> = stages
        .iter()
        .enumerate()
        .map(|(k, (title, sel))| {
            let title = if n > 1 { format!("stage {} of {n}: {title}", k + 1) } else { title.clone() };
            drawing(sel, &title)
        })
        .collect();
    document(&drawings)
}

/// One selection drawn: SVG elements from the origin, and their extent.
struct Drawing {
    body: String,
    width: f64,
    height: f64,
}

/// The drawings side by side, in one document with the definitions they share.
fn document(drawings: &[Drawing]) -> String {
    let width: f64 = drawings.iter().map(|d| d.width).sum();
    let height = drawings.iter().map(|d| d.height).fold(0.0, f64::max);
    let mut svg = format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" viewBox=\"0 0 {width} {height}\" font-family=\"DejaVu Sans Mono, Menlo, Consolas, monospace\" font-size=\"12\">\n"
    );
    svg += "<defs>\n<marker id=\"head\" markerWidth=\"8\" markerHeight=\"8\" refX=\"7\" refY=\"4\" orient=\"auto\"><path d=\"M0,0 L8,4 L0,8 z\" fill=\"#333\"/></marker>\n";
    svg += "<linearGradient id=\"order-scale\">";
    for i in 0..5u64 {
        let [r, g, b] = order_colour(i, 5);
        let _ = write!(svg, "<stop offset=\"{}\" stop-color=\"rgb({r},{g},{b})\"/>", i as f64 / 4.0);
    }
    svg += "</linearGradient>\n</defs>\n";
    let _ = writeln!(svg, "<rect width=\"{width}\" height=\"{height}\" fill=\"white\"/>");
    let mut x = 0.0;
    for (k, d) in drawings.iter().enumerate() {
        let _ = writeln!(svg, "<g class=\"stage\" data-stage=\"{k}\" transform=\"translate({x} 0)\">");
        svg += &d.body;
        svg += "</g>\n";
        x += d.width;
    }
    svg += "</svg>\n";
    svg
}

fn drawing(sel: &Selection, title: &str) -> Drawing {
    let rank = sel.rank();
    let notes = axis_notes(sel);
    let cols = if rank >= 1 { slots(&sel.shown[rank - 1]) } else { vec![] };
    let rows = if rank >= 2 { slots(&sel.shown[rank - 2]) } else { vec![Slot::Index(0)] };
    let xs = positions(&cols, MARGIN + ROW_LABELS);
    let ys = positions(&rows, 0.0);
    let grid_w = xs.last().map_or(0.0, |(_, x, w)| x + w) - (MARGIN + ROW_LABELS);
    let grid_h = ys.last().map_or(0.0, |(_, y, h)| y + h);
    let mut body = String::new();
    let mut y = MARGIN + LINE;
    text(
        &mut body,
        MARGIN,
        y,
        "title",
        &format!("{title}  on  {}: {}{}", sel.input, sel.input_dtype, ShapeDisplay(&sel.input_shape)),
    );
    y += LINE;
    for panel in panels(sel) {
        let Some(outer) = panel else {
            text(&mut body, MARGIN, y + LINE, "skipped", "…");
            y += LINE * 1.5;
            continue;
        };
        if rank > 2 {
            let mut at: Vec<String> = outer.iter().map(|i| i.to_string()).collect();
            at.extend([":".to_string(), ":".to_string()]);
            y += LINE;
            text(&mut body, MARGIN, y, "panel", &format!("{}[{}]", sel.input, at.join(", ")));
        }
        // Arrow lane, then column labels, then the grid.
        y += LINE * 1.5;
        if rank >= 1 {
            arrow_for(&mut body, &sel.axes[rank - 1], &xs, |a, b| (a, y - 6.0, b, y - 6.0));
        }
        y += LINE;
        for (slot, x, w) in &xs {
            let label = match slot {
                Slot::Index(i) => i.to_string(),
                Slot::Gap => "…".to_string(),
            };
            text_at(&mut body, (x + w / 2.0, y - 5.0), "middle", "col-label", &label);
        }
        let top = y;
        if rank >= 2 {
            let lane = MARGIN + 6.0;
            arrow_for(&mut body, &sel.axes[rank - 2], &ys, |a, b| (lane, top + a, lane, top + b));
        }
        for (r, ry, h) in &ys {
            if rank >= 2 {
                let label = match r {
                    Slot::Index(i) => i.to_string(),
                    Slot::Gap => "…".to_string(),
                };
                text_at(
                    &mut body,
                    (MARGIN + ROW_LABELS - 6.0, top + ry + h / 2.0 + 4.0),
                    "end",
                    "row-label",
                    &label,
                );
            }
            for (c, cx, w) in &xs {
                let (Slot::Index(r), Slot::Index(c)) = (r, c) else {
                    text_at(&mut body, (cx + w / 2.0, top + ry + h / 2.0 + 4.0), "middle", "skipped", "…");
                    continue;
                };
                let mut coords = outer.clone();
                if rank >= 2 {
                    coords.push(*r);
                }
                coords.push(*c);
                cell(&mut body, sel, &coords, (*cx, top + ry, *w, *h));
            }
        }
        if rank >= 2 {
            chosen_labels(&mut body, &sel.axes[rank - 2], &ys, |at| {
                (MARGIN + ROW_LABELS + grid_w + 6.0, top + at + 4.0, 0.0)
            });
        }
        y = top + grid_h;
        // Column labels run downwards, so that neighbours do not overlap.
        if rank >= 1 && chosen_labels(&mut body, &sel.axes[rank - 1], &xs, |at| (at - 4.0, y + 6.0, 90.0)) {
            y += LINE * 4.0;
        }
    }
    y += LINE;
    for note in &notes {
        y += LINE;
        text(&mut body, MARGIN, y, "note", note);
    }
    y += LINE;
    legend(&mut body, sel, y);
    y += LINE * 2.5;
    for line in wrap(&summary(sel), 110) {
        y += LINE;
        text(&mut body, MARGIN, y, "summary", &line);
    }
    // Wide enough for the grid and for the longest line of text (monospace, 12px: about 7.3px
    // a character).
    let longest = notes.iter().chain([&title.to_string()]).map(|l| l.chars().count()).max().unwrap_or(0);
    let width =
        (MARGIN * 2.0 + ROW_LABELS + grid_w + ROW_CHOSEN).max(longest as f64 * 7.3 + 2.0 * MARGIN).max(860.0);
    Drawing { body, width, height: y + MARGIN }
}

/// Each slot's offset and extent along an axis, from `start`.
fn positions(slots: &[Slot], start: f64) -> Vec<(Slot, f64, f64)> {
    let mut at = start;
    slots
        .iter()
        .map(|&s| {
            let size = if s == Slot::Gap { GAP } else { CELL };
            let out = (s, at, size);
            at += size;
            out
        })
        .collect()
}

/// The centre of index `i` among `positions`, if it is drawn.
fn centre(positions: &[(Slot, f64, f64)], i: i64) -> Option<f64> {
    positions.iter().find(|(s, ..)| *s == Slot::Index(i)).map(|(_, at, size)| at + size / 2.0)
}

fn cell(body: &mut String, sel: &Selection, coords: &[i64], (x, y, w, h): (f64, f64, f64, f64)) {
    let at: Vec<String> = coords.iter().map(|c| c.to_string()).collect();
    let at = at.join(",");
    let (cx, cy) = (x + w / 2.0, y + h / 2.0 + 4.0);
    match sel.cells.get(coords) {
        None => {
            let _ = writeln!(
                body,
                "<rect class=\"cell\" data-coords=\"{at}\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{UNREAD_FILL}\" stroke=\"white\"/>"
            );
        }
        Some(Mark::Maybe) => {
            let _ = writeln!(
                body,
                "<rect class=\"cell maybe\" data-coords=\"{at}\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"{MAYBE_FILL}\" stroke=\"white\"/>"
            );
            text_at(body, (cx, cy), "middle", "maybe", "?");
        }
        Some(Mark::Read { first, count }) => {
            let [r, g, b] = order_colour(*first, sel.numel);
            let _ = writeln!(
                body,
                "<rect class=\"cell read\" data-coords=\"{at}\" data-order=\"{first}\" data-reads=\"{count}\" x=\"{x}\" y=\"{y}\" width=\"{w}\" height=\"{h}\" fill=\"rgb({r},{g},{b})\" stroke=\"white\"/>"
            );
            if sel.numel <= NUMBERED_OUTPUT {
                // Light text on the dark half of the scale.
                let luma = 0.299 * r as f64 + 0.587 * g as f64 + 0.114 * b as f64;
                let ink = if luma < 140.0 { "white" } else { "black" };
                let _ = writeln!(
                    body,
                    "<text class=\"order\" x=\"{cx}\" y=\"{cy}\" text-anchor=\"middle\" fill=\"{ink}\">{first}</text>"
                );
            }
        }
    }
}

/// An arrow from the first to the last selected index of a ranged axis, pointing the way the
/// output walks it; `line` maps the two centres to the arrow's end points.
fn arrow_for(
    body: &mut String,
    usage: &AxisUse,
    positions: &[(Slot, f64, f64)],
    line: impl Fn(f64, f64) -> (f64, f64, f64, f64),
) {
    let AxisUse::Range { first, last, step, count, .. } = usage else { return };
    let (Some(a), Some(b)) = (centre(positions, *first), centre(positions, *last)) else { return };
    if *count < 2 {
        return;
    }
    let (x1, y1, x2, y2) = line(a, b);
    let _ = writeln!(
        body,
        "<line class=\"arrow\" data-step=\"{step}\" x1=\"{x1}\" y1=\"{y1}\" x2=\"{x2}\" y2=\"{y2}\" stroke=\"#333\" stroke-width=\"1.5\" marker-end=\"url(#head)\"/>"
    );
    // Above a horizontal arrow, clear of its head; beside a vertical one.
    let (lx, ly) = if y1 == y2 { (x1.min(x2), y1 - 7.0) } else { (x1 + 4.0, (y1 + y2) / 2.0 + 4.0) };
    text(body, lx, ly, "step", &format!("step {step}"));
}

/// Labels each gathered coordinate of `usage` with the index values that chose it; `place`
/// maps a coordinate's position to the label's, and its rotation in degrees. Whether any label
/// was drawn.
fn chosen_labels(
    body: &mut String,
    usage: &AxisUse,
    positions: &[(Slot, f64, f64)],
    place: impl Fn(f64) -> (f64, f64, f64),
) -> bool {
    let AxisUse::Gathered { by, chosen, .. } = usage else { return false };
    let mut any = false;
    for (c, values) in chosen {
        let Some(at) = centre(positions, *c) else { continue };
        let values: Vec<String> = values.iter().map(|v| v.to_string()).collect();
        let (x, y, angle) = place(at);
        let _ = writeln!(
            body,
            "<text class=\"chosen-by\" data-coord=\"{c}\" x=\"{x}\" y=\"{y}\" transform=\"rotate({angle} {x} {y})\" fill=\"#444\">{}={}</text>",
            escape(by),
            values.join("|")
        );
        any = true;
    }
    any
}

fn legend(body: &mut String, sel: &Selection, y: f64) {
    let (order, untouched) =
        if sel.writes { ("update order:", "not written") } else { ("output order:", "not read") };
    text(body, MARGIN, y + 11.0, "legend", order);
    let x = MARGIN + 110.0;
    let _ = writeln!(
        body,
        "<rect class=\"legend-scale\" x=\"{x}\" y=\"{y}\" width=\"200\" height=\"14\" fill=\"url(#order-scale)\"/>"
    );
    text(body, x, y + 28.0, "legend", "0");
    text_at(body, (x + 200.0, y + 28.0), "end", "legend", &sel.numel.saturating_sub(1).to_string());
    let _ = writeln!(
        body,
        "<rect x=\"{}\" y=\"{y}\" width=\"14\" height=\"14\" fill=\"{UNREAD_FILL}\"/>",
        x + 220.0
    );
    text(body, x + 240.0, y + 11.0, "legend", untouched);
}

/// A `<text>` at (x, y), anchored `start`, `middle` or `end`.
fn text_at(body: &mut String, (x, y): (f64, f64), anchor: &str, class: &str, s: &str) {
    let _ = writeln!(
        body,
        "<text class=\"{class}\" x=\"{x}\" y=\"{y}\" text-anchor=\"{anchor}\">{}</text>",
        escape(s)
    );
}

fn text(body: &mut String, x: f64, y: f64, class: &str, s: &str) {
    text_at(body, (x, y), "start", class, s);
}

fn escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}
