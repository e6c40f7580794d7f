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

/// Parses a whole program (statements separated by newlines or `;`).
pub fn parse_program(src: &str) -> Result<ast::Program, ParseError> {
    grammar::slice::ProgramParser::new()
        .parse(lexer::Lexer::new(src))
        .map_err(|e| ParseError::from_lalrpop(e, src.len()))
}
