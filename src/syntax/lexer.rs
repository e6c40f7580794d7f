//! Adapts logos to lalrpop's external-lexer protocol: an iterator of
//! `Result<(start, Token, end), LexError>` over byte offsets.
//!
//! Newlines separate statements, but like Python the lexer drops them while a bracket is open,
//! so an index list or a call may span several lines.

use super::token::{LexErrorKind, Token};
use crate::source::Span;
use logos::Logos;

/// A lexical error with the span of the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LexError {
    pub kind: LexErrorKind,
    pub span: Span,
}

pub type Spanned<'s> = (usize, Token<'s>, usize);

pub struct Lexer<'s> {
    inner: logos::SpannedIter<'s, Token<'s>>,
    /// Open `(`, `[` and `{` not yet closed; newlines inside them are not separators.
    depth: usize,
}

impl<'s> Lexer<'s> {
    pub fn new(src: &'s str) -> Lexer<'s> {
        Lexer { inner: Token::lexer(src).spanned(), depth: 0 }
    }
}

impl<'s> Iterator for Lexer<'s> {
    type Item = Result<Spanned<'s>, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            let (token, range) = self.inner.next()?;
            let token = match token {
                Ok(token) => token,
                Err(kind) => {
                    // A lone quote starts no token; saying why reads better than "unexpected".
                    let quote = matches!(self.inner.slice().chars().next(), Some('"' | '\''));
                    let kind = if quote { LexErrorKind::UnterminatedString } else { kind };
                    return Some(Err(LexError { kind, span: range.into() }));
                }
            };
            match token {
                Token::LParen | Token::LBracket | Token::LBrace => self.depth += 1,
                Token::RParen | Token::RBracket | Token::RBrace => self.depth = self.depth.saturating_sub(1),
                Token::Newline if self.depth > 0 => continue,
                _ => {}
            }
            return Some(Ok((range.start, token, range.end)));
        }
    }
}
