//! Diagnostics as plain data. Every stage's error type converts into [`Diagnostic`]s through
//! [`IntoDiagnostic`]; only [`render`] knows about ariadne, so the library hands out values and
//! the edges (CLI, REPL, C ABI) decide how to show them.

pub mod codes;
mod render;
pub mod suggest;

pub use render::render;

use crate::source::Span;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
}

/// A message pointing into the source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Label {
    pub span: Span,
    pub message: String,
}

/// One report: a stable code (`E0103`), a message, labelled spans (the first is the primary one),
/// and trailing help/notes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    pub code: &'static str,
    pub severity: Severity,
    pub message: String,
    pub labels: Vec<Label>,
    pub help: Option<String>,
    pub notes: Vec<String>,
}

impl Diagnostic {
    /// An error with a code from [`codes::CODES`].
    pub fn error(code: &'static str, message: impl Into<String>) -> Diagnostic {
        debug_assert!(codes::meaning(code).is_some(), "{code} is not in the registry of codes");
        Diagnostic {
            code,
            severity: Severity::Error,
            message: message.into(),
            labels: vec![],
            help: None,
            notes: vec![],
        }
    }

    pub fn label(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.labels.push(Label { span, message: message.into() });
        self
    }

    pub fn help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    /// The primary span, if the diagnostic points into the source at all.
    pub fn span(&self) -> Option<Span> {
        self.labels.first().map(|l| l.span)
    }
}

/// Implemented by every stage's error type.
pub trait IntoDiagnostic {
    fn into_diagnostic(self) -> Diagnostic;
}
