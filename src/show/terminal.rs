//! The selection as text: the input drawn as a grid per panel, read cells numbered in output
//! order (or marked, for large outputs), the others dimmed. With `colour`, read cells take the
//! output-order colour of the SVG's scale (24-bit ANSI); without it the same characters stand
//! alone, so the picture reads in a log.

use super::{Mark, NUMBERED_OUTPUT, Selection, Slot, axis_notes, order_colour, panels, slots, summary, wrap};
use crate::types::ShapeDisplay;
use std::fmt::Write as _;

const UNREAD: &str = "·";
const READ: &str = "■";
const MAYBE: &str = "?";
const GAP: &str = "…";

/// The picture of `sel`, headed by `title` (the program), with the notes and the summary.
pub fn render(sel: &Selection, title: &str, colour: bool) -> String {
    let mut out =
        format!("{title}  on  {}: {}{}\n", sel.input, sel.input_dtype, ShapeDisplay(&sel.input_shape));
    let painter = Painter { sel, colour, numbered: sel.numel <= NUMBERED_OUTPUT };
    for panel in panels(sel) {
        match panel {
            Some(outer) => painter.panel(&outer, &mut out),
            None => out.push_str(&format!("{GAP}\n")),
        }
    }
    for note in axis_notes(sel) {
        let _ = writeln!(out, "{note}");
    }
    let _ = writeln!(out, "\n{}", wrap(&summary(sel), 100).join("\n"));
    out
}

struct Painter<'a> {
    sel: &'a Selection,
    colour: bool,
    numbered: bool,
}

impl Painter<'_> {
    /// One grid: the last two axes at the outer coordinates `outer`.
    fn panel(&self, outer: &[i64], out: &mut String) {
        let rank = self.sel.rank();
        if rank > 2 {
            let mut at: Vec<String> = outer.iter().map(|i| i.to_string()).collect();
            at.extend([":".to_string(), ":".to_string()]);
            let _ = writeln!(out, "{}[{}]", self.sel.input, at.join(", "));
        }
        let cols = if rank >= 1 { slots(&self.sel.shown[rank - 1]) } else { vec![] };
        let rows = if rank >= 2 { slots(&self.sel.shown[rank - 2]) } else { vec![Slot::Index(0)] };
        let label = |s: &Slot| match s {
            Slot::Index(i) => i.to_string(),
            Slot::Gap => GAP.to_string(),
        };
        let last_order = self.sel.numel.saturating_sub(1).to_string().len();
        let width = cols.iter().map(|s| label(s).chars().count()).max().unwrap_or(1).max(if self.numbered {
            last_order
        } else {
            1
        });
        let row_width =
            if rank >= 2 { rows.iter().map(|s| label(s).chars().count()).max().unwrap_or(1) } else { 0 };
        // Column header.
        let _ = write!(out, "{:row_width$} ", "");
        for c in &cols {
            let _ = write!(out, " {:>width$}", label(c));
        }
        out.push('\n');
        for r in &rows {
            let _ = write!(out, "{:>row_width$} ", if rank >= 2 { label(r) } else { String::new() });
            for c in &cols {
                let cell = match (r, c) {
                    (Slot::Index(r), Slot::Index(c)) => {
                        let mut coords = outer.to_vec();
                        if rank >= 2 {
                            coords.push(*r);
                        }
                        coords.push(*c);
                        self.cell(self.sel.cells.get(&coords).copied(), width)
                    }
                    _ => self.dim(&format!("{GAP:>width$}")),
                };
                let _ = write!(out, " {cell}");
            }
            out.push('\n');
        }
    }

    fn cell(&self, mark: Option<Mark>, width: usize) -> String {
        match mark {
            None => self.dim(&format!("{UNREAD:>width$}")),
            Some(Mark::Maybe) if self.colour => format!("\x1b[1;33m{MAYBE:>width$}\x1b[0m"),
            Some(Mark::Maybe) => format!("{MAYBE:>width$}"),
            Some(Mark::Read { first, .. }) => {
                let text = if self.numbered { first.to_string() } else { READ.to_string() };
                let text = format!("{text:>width$}");
                if self.colour {
                    let [r, g, b] = order_colour(first, self.sel.numel);
                    format!("\x1b[1;38;2;{r};{g};{b}m{text}\x1b[0m")
                } else {
                    text
                }
            }
        }
    }

    fn dim(&self, text: &str) -> String {
        if self.colour { format!("\x1b[2m{text}\x1b[0m") } else { text.to_string() }
    }
}
