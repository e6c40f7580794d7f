//! The only user of ariadne: turns [`Diagnostic`]s into text.

use super::{Diagnostic, Severity};
use ariadne::{Color, Config, IndexType, Label, Report, ReportKind, Source};

/// Renders `diag` against `src` (named `name` in the header). Spans are byte offsets.
/// `color` adds ANSI colours; tests and pipes use plain text.
pub fn render(diag: &Diagnostic, name: &str, src: &str, color: bool) -> String {
    let kind = match diag.severity {
        Severity::Error => ReportKind::Error,
        Severity::Warning => ReportKind::Warning,
    };
    // A span past the end (an error at end of input) would be dropped by ariadne; clamp it.
    let clamp =
        |r: std::ops::Range<usize>| r.start.min(src.len())..r.end.min(src.len()).max(r.start.min(src.len()));
    let primary = diag.span().map(|s| clamp(s.range())).unwrap_or(0..0);
    let mut report = Report::build(kind, (name, primary))
        .with_config(Config::default().with_index_type(IndexType::Byte).with_color(color))
        .with_code(diag.code)
        .with_message(&diag.message);
    for (i, label) in diag.labels.iter().enumerate() {
        let mut l = Label::new((name, clamp(label.span.range()))).with_message(&label.message);
        if color {
            l = l.with_color(if i == 0 { Color::Red } else { Color::Blue });
        }
        report = report.with_label(l);
    }
    if let Some(help) = &diag.help {
        report = report.with_help(help);
    }
    for note in &diag.notes {
        report = report.with_note(note);
    }
    let mut out = Vec::new();
    // Writing into a Vec cannot fail; fall back to the bare message if ariadne ever does.
    if report.finish().write((name, Source::from(src)), &mut out).is_err() {
        return format!("error[{}]: {}\n", diag.code, diag.message);
    }
    let mut text = String::from_utf8_lossy(&out).into_owned();
    if diag.labels.is_empty() {
        // ariadne prints help and notes only under a source snippet, which a diagnostic without
        // labels (a DirectML refusal, say) does not get: write them after the header instead.
        for line in diag
            .help
            .iter()
            .map(|h| format!("Help: {h}"))
            .chain(diag.notes.iter().map(|n| format!("Note: {n}")))
        {
            text.push_str(&line);
            text.push('\n');
        }
    }
    text
}
