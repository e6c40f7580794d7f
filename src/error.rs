//! The library's error: one variant per pipeline stage, each convertible to a [`Diagnostic`].

use crate::backend::RuntimeError;
use crate::diag::{Diagnostic, IntoDiagnostic, render};
use crate::embed::ViewError;
use crate::plan::PlanError;
use crate::sema::SemaError;
use crate::syntax::ParseError;

#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Parse(#[from] ParseError),
    #[error(transparent)]
    Sema(#[from] SemaError),
    #[error(transparent)]
    Plan(#[from] PlanError),
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// A tensor view or buffer handed to the embedding API does not fit (strides, bounds, size).
    #[error(transparent)]
    View(#[from] ViewError),
    /// The plan cannot be expressed as DirectML operators at the requested feature level.
    #[error(transparent)]
    Dml(#[from] crate::backend::dml::DmlError),
}

impl Error {
    pub fn diagnostic(&self) -> Diagnostic {
        match self.clone() {
            Error::Parse(e) => e.into_diagnostic(),
            Error::Sema(e) => e.into_diagnostic(),
            Error::Plan(e) => e.into_diagnostic(),
            Error::Runtime(e) => e.into_diagnostic(),
            Error::View(e) => e.into_diagnostic(),
            Error::Dml(e) => e.into_diagnostic(),
        }
    }

    /// The rendered report, without colour, against the program text it came from.
    pub fn render(&self, src: &str) -> String {
        render(&self.diagnostic(), "<expr>", src, false)
    }

    /// Errors in the program text (as opposed to the data it ran on).
    pub fn is_program_error(&self) -> bool {
        !matches!(self, Error::Runtime(_) | Error::View(_))
    }
}
