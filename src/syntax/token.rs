//! The tokens of the slicing language, recognised by logos.
//!
//! One token set serves the language and the plan text (`plan/parse.rs`); a token the language
//! grammar does not use (`$`, `>`) is simply a parse error there.
//!
//! IMPORTANT: the variants the language uses are listed as terminals in `grammar/slice.lalrpop`
//! (its `extern` block); keep the two in sync.

use logos::Logos;
use std::fmt;

/// Why a piece of text is not a token. The span is attached by [`super::lexer::Lexer`].
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum LexErrorKind {
    /// A character that starts no token.
    #[default]
    UnexpectedChar,
    /// An integer literal above `u64::MAX` (a value is checked against i64 only after negation,
    /// so that `-9223372036854775808` is accepted).
    IntTooLarge,
    /// A string literal without its closing quote (recognised by the lexer wrapper).
    UnterminatedString,
    /// Not lexical: a grammar action's way to stop the parse at an expression nested deeper
    /// than [`MAX_NESTING`](crate::limits::MAX_NESTING) (it becomes [`ParseError::TooDeep`](super::ParseError::TooDeep)).
    TooDeep,
}

fn parse_int<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> Result<u64, LexErrorKind> {
    let digits: String = lex.slice().chars().filter(|c| *c != '_').collect();
    digits.parse().map_err(|_| LexErrorKind::IntTooLarge)
}

fn string_body<'s>(lex: &mut logos::Lexer<'s, Token<'s>>) -> &'s str {
    let s = lex.slice();
    &s[1..s.len() - 1]
}

/// The words the lexer reserves (IMPORTANT: keep in sync with the `#[token]`s below): they
/// cannot name a tensor.
pub const KEYWORDS: &[&str] = &["let", "newaxis", "None", "True", "False"];

#[derive(Logos, Debug, Clone, Copy, PartialEq, Eq)]
#[logos(error = LexErrorKind)]
#[logos(skip r"[ \t\r\f]+")]
#[logos(skip(r"#[^\n]*", allow_greedy = true))]
pub enum Token<'s> {
    #[token("let")]
    Let,
    #[token("newaxis")]
    NewAxis,
    #[token("None")]
    None,
    #[token("True")]
    True,
    #[token("False")]
    False,
    #[regex("[A-Za-z_][A-Za-z0-9_]*", |lex| lex.slice())]
    Ident(&'s str),
    #[regex("[0-9][0-9_]*", parse_int)]
    Int(u64),
    /// A float literal is never valid in slc, but lexing it lets the checker say why
    /// ("indices must be integers") instead of a confusing parse error.
    #[regex(r"[0-9][0-9_]*\.[0-9_]*([eE][+-]?[0-9]+)?", |lex| lex.slice())]
    #[regex(r"[0-9][0-9_]*[eE][+-]?[0-9]+", |lex| lex.slice())]
    Float(&'s str),
    #[regex(r#""[^"\n]*""#, string_body)]
    #[regex(r#"'[^'\n]*'"#, string_body)]
    Str(&'s str),
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
    #[token("+=")]
    PlusEq,
    #[token("*=")]
    StarEq,
    #[token("-")]
    Minus,
    #[token("*")]
    Star,
    #[token("//")]
    SlashSlash,
    #[token("%")]
    Percent,
    #[token(".")]
    Dot,
    #[token("...")]
    Ellipsis,
    #[token("<")]
    Lt,
    #[token("->")]
    Arrow,
    #[token(">")]
    Gt,
    #[token("$")]
    Dollar,
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Let => write!(f, "`let`"),
            Token::NewAxis => write!(f, "`newaxis`"),
            Token::None => write!(f, "`None`"),
            Token::True => write!(f, "`True`"),
            Token::False => write!(f, "`False`"),
            Token::Ident(s) => write!(f, "name `{s}`"),
            Token::Int(v) => write!(f, "integer `{v}`"),
            Token::Float(s) => write!(f, "float `{s}`"),
            Token::Str(s) => write!(f, "string \"{s}\""),
            Token::Newline => write!(f, "end of line"),
            other => write!(f, "`{}`", other.punct()),
        }
    }
}

impl Token<'_> {
    /// The text of a punctuation token.
    fn punct(&self) -> &'static str {
        match self {
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
            Token::PlusEq => "+=",
            Token::StarEq => "*=",
            Token::Minus => "-",
            Token::Star => "*",
            Token::SlashSlash => "//",
            Token::Percent => "%",
            Token::Dot => ".",
            Token::Ellipsis => "...",
            Token::Lt => "<",
            Token::Arrow => "->",
            Token::Gt => ">",
            Token::Dollar => "$",
            _ => "?",
        }
    }
}
