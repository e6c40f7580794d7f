//! The tokens of the plan's text form (`plan/print.rs` writes it, `plan/parse.rs` reads it):
//! names, unsigned integers and a little punctuation. Its own lexer, so that the IR's text does
//! not depend on the surface language's.

use logos::Logos;
use std::fmt;

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(skip r"[ \t\r\f]+")]
pub enum Token<'s> {
    #[regex("[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Ident(&'s str),
    /// An integer that fits u64 (a sign is its own token).
    #[regex("[0-9]+", |lex| lex.slice().parse::<u64>().ok())]
    Int(u64),
    #[token("\n")]
    Newline,
    #[token("[")]
    LBracket,
    #[token("]")]
    RBracket,
    #[token("(")]
    LParen,
    #[token(")")]
    RParen,
    #[token("{")]
    LBrace,
    #[token("}")]
    RBrace,
    #[token(",")]
    Comma,
    #[token(":")]
    Colon,
    #[token(";")]
    Semi,
    #[token("=")]
    Eq,
    #[token("+")]
    Plus,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("<")]
    Lt,
    #[token("->")]
    Arrow,
    #[token(">")]
    Gt,
    #[token("$")]
    Dollar,
    /// In symbolic integers: `//`, `%` (and `<`, `=` inside a parenthesized `select`).
    #[token("/")]
    Slash,
    #[token("%")]
    Percent,
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let punct = match self {
            Token::Ident(s) => return write!(f, "name `{s}`"),
            Token::Int(v) => return write!(f, "integer `{v}`"),
            Token::Newline => return write!(f, "end of line"),
            Token::LBracket => "[",
            Token::RBracket => "]",
            Token::LParen => "(",
            Token::RParen => ")",
            Token::LBrace => "{",
            Token::RBrace => "}",
            Token::Comma => ",",
            Token::Colon => ":",
            Token::Semi => ";",
            Token::Eq => "=",
            Token::Plus => "+",
            Token::Minus => "-",
            Token::Star => "*",
            Token::Lt => "<",
            Token::Arrow => "->",
            Token::Gt => ">",
            Token::Dollar => "$",
            Token::Slash => "/",
            Token::Percent => "%",
        };
        write!(f, "`{punct}`")
    }
}
