//! The front end: text → tokens → spanned AST.

pub mod ast;
pub mod error;
pub mod lexer;
pub mod token;

mod grammar {
    #![allow(clippy::all, unused_parens)]
    lalrpop_util::lalrpop_mod!(pub slice, "/slice.rs");
}

pub use error::ParseError;

use crate::limits::MAX_SOURCE_BYTES;

/// Parses a whole program (statements separated by newlines or `;`). Text longer than
/// [`MAX_SOURCE_BYTES`] and expressions nested deeper than
/// [`MAX_NESTING`](crate::limits::MAX_NESTING) are errors.
pub fn parse_program(src: &str) -> Result<ast::Program, ParseError> {
    if src.len() > MAX_SOURCE_BYTES {
        return Err(ParseError::TooLong { len: src.len() });
    }
    grammar::slice::ProgramParser::new()
        .parse(lexer::Lexer::new(src))
        .map_err(|e| ParseError::from_lalrpop(e, src.len()))
}
