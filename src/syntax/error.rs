//! Parse errors: the one place where lalrpop's error type becomes ours.

use super::ast::Expr;
use super::lexer::LexError;
use super::token::{LexErrorKind, Token};
use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::limits::{MAX_NESTING, MAX_SOURCE_BYTES};
use crate::source::Span;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParseError {
    /// Text that is not a token.
    #[error("{}", lex_message(&.0.kind))]
    Lex(LexError),
    /// A token where the grammar allows none of it.
    #[error("unexpected {found}")]
    Unexpected { found: String, span: Span, expected: Vec<String> },
    /// `<` or `>` where an expression goes on: a comparison, as in `a[a > 3]`.
    #[error("slc has no comparisons")]
    Comparison { span: Span },
    /// The text ended in the middle of a statement.
    #[error("unexpected end of input")]
    Eof { span: Span, expected: Vec<String> },
    /// The program text is longer than [`MAX_SOURCE_BYTES`].
    #[error("the program is {len} bytes long; at most {MAX_SOURCE_BYTES} are accepted")]
    TooLong { len: usize },
    /// An expression nests deeper than [`MAX_NESTING`] (`span`: the node that went too deep).
    #[error("the expression nests more than {MAX_NESTING} levels deep")]
    TooDeep { span: Span },
}

/// `e`, or the error that stops the parse when it nests deeper than [`MAX_NESTING`].
pub(crate) fn within_nesting<'s>(e: Expr) -> Result<Expr, LalrpopError<'s>> {
    if e.depth <= MAX_NESTING {
        return Ok(e);
    }
    Err(lalrpop_util::ParseError::User { error: LexError { kind: LexErrorKind::TooDeep, span: e.span } })
}

fn lex_message(kind: &LexErrorKind) -> &'static str {
    match kind {
        LexErrorKind::UnexpectedChar => "unexpected character",
        LexErrorKind::IntTooLarge => "integer literal too large",
        LexErrorKind::UnterminatedString => "unterminated string literal",
        LexErrorKind::TooDeep => "expression nested too deeply",
    }
}

type LalrpopError<'s> = lalrpop_util::ParseError<usize, Token<'s>, LexError>;

impl ParseError {
    pub fn from_lalrpop(err: LalrpopError<'_>, src_len: usize) -> ParseError {
        use lalrpop_util::ParseError as E;
        match err {
            E::User { error } if error.kind == LexErrorKind::TooDeep => {
                ParseError::TooDeep { span: error.span }
            }
            E::User { error } => ParseError::Lex(error),
            E::InvalidToken { location } => ParseError::Lex(LexError {
                kind: LexErrorKind::UnexpectedChar,
                span: Span::new(location, location + 1),
            }),
            E::UnrecognizedEof { location, expected } => ParseError::Eof {
                span: Span::new(location.min(src_len), src_len),
                expected: tidy_expected(expected),
            },
            E::UnrecognizedToken { token: (l, Token::Lt | Token::Gt, r), .. } => {
                ParseError::Comparison { span: Span::new(l, r) }
            }
            E::UnrecognizedToken { token: (l, tok, r), expected } => ParseError::Unexpected {
                found: tok.to_string(),
                span: Span::new(l, r),
                expected: tidy_expected(expected),
            },
            E::ExtraToken { token: (l, tok, r) } => {
                ParseError::Unexpected { found: tok.to_string(), span: Span::new(l, r), expected: vec![] }
            }
        }
    }

    pub fn span(&self) -> Span {
        match self {
            ParseError::Lex(e) => e.span,
            ParseError::Unexpected { span, .. }
            | ParseError::Eof { span, .. }
            | ParseError::Comparison { span }
            | ParseError::TooDeep { span } => *span,
            // The first byte past the limit.
            ParseError::TooLong { .. } => Span::new(MAX_SOURCE_BYTES, MAX_SOURCE_BYTES + 1),
        }
    }
}

/// lalrpop names terminals as written in the grammar (`"["`, `Ident`); make them readable.
fn tidy_expected(expected: Vec<String>) -> Vec<String> {
    let mut out: Vec<String> = expected
        .into_iter()
        .map(|t| match t.as_str() {
            "Ident" => "a name".to_string(),
            "Int" => "an integer".to_string(),
            "Float" => "a number".to_string(),
            "Str" => "a string".to_string(),
            "Newline" => "end of line".to_string(),
            quoted => format!("`{}`", quoted.trim_matches('"')),
        })
        .collect();
    out.dedup();
    out
}

fn expected_note(expected: &[String]) -> Option<String> {
    match expected {
        [] => None,
        [one] => Some(format!("expected {one}")),
        many => Some(format!("expected one of {}", many.join(", "))),
    }
}

impl IntoDiagnostic for ParseError {
    fn into_diagnostic(self) -> Diagnostic {
        match &self {
            ParseError::Lex(e) => {
                let d = Diagnostic::error("E0001", self.to_string()).label(e.span, "here");
                match e.kind {
                    LexErrorKind::IntTooLarge => d.help(
                        "integers must lie in the i64 range -9223372036854775808..=9223372036854775807",
                    ),
                    _ => d,
                }
            }
            ParseError::Unexpected { span, expected, .. } => {
                let d = Diagnostic::error("E0002", self.to_string()).label(*span, "not expected here");
                match expected_note(expected) {
                    Some(note) => d.help(note),
                    None => d,
                }
            }
            // NumPy's `a[a > 3]` builds its mask from data; slc takes the mask bound instead.
            ParseError::Comparison { span } => Diagnostic::error("E0002", self.to_string())
                .label(*span, "a comparison")
                .help("compute the mask outside and bind it, `-i m=mask.npy`, then index with `a[m]`"),
            // No label: it would print a megabyte of text.
            ParseError::TooLong { .. } => Diagnostic::error("E0003", self.to_string())
                .help("split the work into several programs, or bind large index lists as tensors"),
            ParseError::TooDeep { span } => Diagnostic::error("E0004", self.to_string())
                .label(*span, format!("level {} starts here", MAX_NESTING + 1))
                .help("every bracket, operator, index and call is a level"),
            ParseError::Eof { span, expected } => {
                let d = Diagnostic::error("E0002", self.to_string()).label(*span, "the input ends here");
                match expected_note(expected) {
                    Some(note) => d.help(note),
                    None => d,
                }
            }
        }
    }
}
