//! Reads the text form written by `plan/print.rs` back into a [`Plan`] (or a [`GenericPlan`]).
//! A small recursive descent parser over the tokens of `plan/token.rs`; each integer's text is
//! handed to `SymExpr::parse`. `verify` is the caller's next step.

use super::ir::*;
use super::token::Token;
use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::limits::MAX_NESTING;
use crate::source::Span;
use crate::types::sym::{Cond, SymExpr};
use crate::types::{Combine, OobMode};
use logos::Logos;
use slc_runtime::Tensor;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("plan text: {message}")]
pub struct PlanParseError {
    pub message: String,
    pub span: Span,
}

impl IntoDiagnostic for PlanParseError {
    fn into_diagnostic(self) -> Diagnostic {
        Diagnostic::error("E0303", self.to_string()).label(self.span, "here")
    }
}

/// Reads a concrete plan: one whose integers are all numbers.
pub fn parse(text: &str) -> Result<Plan> {
    let plan = parse_generic(text)?;
    plan.concrete().ok_or_else(|| PlanParseError {
        message: "the plan is generic (it has symbols or requirements): read it with `parse_generic`".into(),
        span: Span::new(0, text.len()),
    })
}

/// Reads a plan whose integers may be symbolic.
pub fn parse_generic(text: &str) -> Result<GenericPlan> {
    // The parser stops at MAX_NESTING levels: that is as deep as it can recurse.
    crate::limits::with_stack_for(crate::limits::MAX_NESTING, || parse_in_place(text))
}

/// A requirement's message runs from ` # ` to the end of its line, in any characters: the lexer
/// sees blanks there, and the parser takes the message from the text.
fn mask_messages(text: &str) -> (String, Vec<(usize, String)>) {
    let mut masked = text.as_bytes().to_vec();
    let mut messages = vec![];
    let mut start = 0;
    for line in text.split_inclusive('\n') {
        if line.trim_start().starts_with("require")
            && let Some(at) = line.find(" # ")
        {
            let message = line[at + 3..].trim_end_matches(['\n', '\r']);
            messages.push((start, message.to_string()));
            masked[start + at..start + at + 3 + message.len()].fill(b' ');
        }
        start += line.len();
    }
    (String::from_utf8(masked).expect("ASCII blanks replace whole lines' tails"), messages)
}

fn parse_in_place(text: &str) -> Result<GenericPlan> {
    let (masked, messages) = mask_messages(text);
    let mut tokens = Vec::new();
    for (t, at) in Token::lexer(&masked).spanned() {
        let span = Span::new(at.start, at.end);
        match t {
            Ok(tok) => tokens.push((tok, span)),
            Err(()) => return Err(PlanParseError { message: "unexpected character".into(), span }),
        }
    }
    let mut p = Parser { tokens, pos: 0, text: &masked, messages, inputs: vec![] };
    p.plan()
}

struct Parser<'s> {
    tokens: Vec<(Token<'s>, Span)>,
    pos: usize,
    text: &'s str,
    /// Requirements' messages by the offset of their line.
    messages: Vec<(usize, String)>,
    inputs: Vec<InputDecl<SymExpr>>,
}

type Result<T> = std::result::Result<T, PlanParseError>;

impl<'s> Parser<'s> {
    fn peek(&self) -> Option<Token<'s>> {
        self.tokens.get(self.pos).map(|t| t.0)
    }

    fn span(&self) -> Span {
        self.tokens.get(self.pos).map_or(Span::new(self.text.len(), self.text.len()), |t| t.1)
    }

    fn fail<T>(&self, what: &str) -> Result<T> {
        let found = self.peek().map_or("end of text".to_string(), |t| t.to_string());
        Err(PlanParseError { message: format!("expected {what}, found {found}"), span: self.span() })
    }

    fn eat(&mut self, tok: Token<'_>) -> bool {
        if self.peek() == Some(tok) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, tok: Token<'_>) -> Result<()> {
        if self.eat(tok) { Ok(()) } else { self.fail(&tok.to_string()) }
    }

    fn ident(&mut self) -> Result<&'s str> {
        match self.peek() {
            Some(Token::Ident(s)) => {
                self.pos += 1;
                Ok(s)
            }
            _ => self.fail("a name"),
        }
    }

    fn keyword(&mut self, word: &str) -> Result<()> {
        match self.peek() {
            Some(Token::Ident(s)) if s == word => {
                self.pos += 1;
                Ok(())
            }
            _ => self.fail(&format!("`{word}`")),
        }
    }

    fn uint(&mut self) -> Result<u64> {
        match self.peek() {
            Some(Token::Int(v)) => {
                self.pos += 1;
                Ok(v)
            }
            _ => self.fail("an integer"),
        }
    }

    fn int(&mut self) -> Result<i64> {
        let span = self.span();
        let negative = self.eat(Token::Minus);
        let magnitude = self.uint()? as i128;
        let v = if negative { -magnitude } else { magnitude };
        i64::try_from(v).map_err(|_| PlanParseError { message: "integer out of the i64 range".into(), span })
    }

    fn usize(&mut self) -> Result<usize> {
        let span = self.span();
        usize::try_from(self.uint()?).map_err(|_| PlanParseError { message: "number too large".into(), span })
    }

    /// `[i, j, ...]`
    fn int_list(&mut self) -> Result<Vec<i64>> {
        self.expect(Token::LBracket)?;
        let mut v = vec![];
        while !self.eat(Token::RBracket) {
            if !v.is_empty() {
                self.expect(Token::Comma)?;
            }
            v.push(self.int()?);
        }
        Ok(v)
    }

    /// An integer of a plan: a number or a symbolic expression, up to the next `,`, `;`, `}`,
    /// `)`, `]`, `>`, `axis` or line end outside parentheses and brackets.
    fn sym(&mut self) -> Result<SymExpr> {
        let start = self.pos;
        let mut depth = 0usize;
        while let Some(t) = self.peek() {
            match t {
                Token::LParen | Token::LBracket => depth += 1,
                Token::RParen | Token::RBracket if depth > 0 => depth -= 1,
                Token::Comma
                | Token::Semi
                | Token::RBrace
                | Token::RParen
                | Token::RBracket
                | Token::Gt
                | Token::Newline
                    if depth == 0 =>
                {
                    break;
                }
                Token::Ident("axis") if depth == 0 => break,
                _ => {}
            }
            self.pos += 1;
        }
        if self.pos == start {
            return self.fail("an integer");
        }
        let span = Span::new(self.tokens[start].1.start, self.tokens[self.pos - 1].1.end);
        SymExpr::parse(&self.text[span.start..span.end]).map_err(|e| PlanParseError {
            message: format!("`{}` is not an integer expression: {e}", &self.text[span.start..span.end]),
            span,
        })
    }

    /// A term's stride: a number, a name, or a parenthesized expression (before `*`).
    fn term_stride(&mut self) -> Result<SymExpr> {
        match self.peek() {
            Some(Token::Ident(name)) => {
                let span = self.span();
                self.pos += 1;
                SymExpr::try_dim(name).ok_or_else(|| PlanParseError {
                    message: format!("`{name}` is a keyword, not a dimension name"),
                    span,
                })
            }
            Some(Token::LParen) => {
                self.pos += 1;
                let e = self.sym()?;
                self.expect(Token::RParen)?;
                Ok(e)
            }
            _ => Ok(SymExpr::constant(self.int()?)),
        }
    }

    /// `[d0, d1, ...]` of symbolic integers.
    fn sym_list(&mut self) -> Result<Vec<SymExpr>> {
        self.expect(Token::LBracket)?;
        let mut v = vec![];
        while !self.eat(Token::RBracket) {
            if !v.is_empty() {
                self.expect(Token::Comma)?;
            }
            v.push(self.sym()?);
        }
        Ok(v)
    }

    /// `f32[2, 3]`, `f32[N, M]`.
    fn tensor_type(&mut self) -> Result<(slc_runtime::DType, Vec<SymExpr>)> {
        let span = self.span();
        let name = self.ident()?;
        let dtype = slc_runtime::DType::from_name(name)
            .ok_or_else(|| PlanParseError { message: format!("unknown dtype `{name}`"), span })?;
        let span = self.span();
        let shape = self.sym_list()?;
        if shape.iter().any(|d| d.as_const().is_some_and(|d| d < 0)) {
            return Err(PlanParseError { message: "a dimension is negative".into(), span });
        }
        Ok((dtype, shape))
    }

    /// `const $0: i64[2] = [...]`: a constant's type is concrete.
    fn concrete_type(&mut self) -> Result<(slc_runtime::DType, Vec<usize>)> {
        let span = self.span();
        let (dtype, shape) = self.tensor_type()?;
        let dims: Option<Vec<usize>> =
            shape.iter().map(|d| d.as_const().and_then(|d| usize::try_from(d).ok())).collect();
        let dims =
            dims.ok_or(PlanParseError { message: "a constant's shape must be numbers".into(), span })?;
        Ok((dtype, dims))
    }

    fn newlines(&mut self) {
        while self.eat(Token::Newline) {}
    }

    fn plan(&mut self) -> Result<GenericPlan> {
        self.newlines();
        self.keyword("plan")?;
        self.expect(Token::LParen)?;
        while !self.eat(Token::RParen) {
            if !self.inputs.is_empty() {
                self.expect(Token::Comma)?;
            }
            let name = self.ident()?.to_string();
            self.expect(Token::Colon)?;
            let (dtype, shape) = self.tensor_type()?;
            let strides = if self.eat(Token::Ident("strides")) { Some(self.int_list()?) } else { None };
            let derived = if self.eat(Token::Eq) {
                let cast = self.eat(Token::Ident("cast"));
                if !cast {
                    self.keyword("nonzero")?;
                }
                self.expect(Token::LParen)?;
                let from = self.ident()?.to_string();
                self.expect(Token::RParen)?;
                Some(match cast {
                    true => Derived::Cast { from },
                    false => Derived::Nonzero { mask: from },
                })
            } else {
                None
            };
            self.inputs.push(InputDecl { strides, derived, ..InputDecl::dense(name, dtype, shape) });
        }
        self.expect(Token::Arrow)?;
        let (out_dtype, out_shape) = self.tensor_type()?;
        let (mut consts, mut requires, mut checks) = (vec![], vec![], vec![]);
        loop {
            self.newlines();
            let span = self.span();
            match self.ident()? {
                "const" => {
                    self.expect(Token::Dollar)?;
                    if self.usize()? != consts.len() {
                        return Err(PlanParseError {
                            message: "constants must be numbered $0, $1, ... in order".into(),
                            span,
                        });
                    }
                    self.expect(Token::Colon)?;
                    let (dtype, dims) = self.concrete_type()?;
                    self.expect(Token::Eq)?;
                    let values = self.int_list()?;
                    let tensor = const_tensor(dtype, &dims, &values)
                        .map_err(|message| PlanParseError { message, span })?;
                    consts.push(ConstDecl { tensor });
                }
                "require" => requires.push(self.requirement(span)?),
                "check" => {
                    let index = self.access(consts.len(), MAX_NESTING + 1)?;
                    self.keyword("over")?;
                    let shape = self.sym_list()?;
                    self.keyword("len")?;
                    let len = self.sym()?;
                    self.keyword("axis")?;
                    let axis = self.usize()?;
                    checks.push(Check { index, shape, len, axis, origin: Origin(None) });
                }
                "out" => {
                    let output = self.access(consts.len(), MAX_NESTING + 1)?;
                    self.newlines();
                    let store = match self.peek() {
                        Some(Token::Ident("store")) => {
                            self.pos += 1;
                            Some(self.store(consts.len())?)
                        }
                        _ => None,
                    };
                    self.newlines();
                    if self.peek().is_some() {
                        return self.fail("the end of the plan");
                    }
                    let inputs = std::mem::take(&mut self.inputs);
                    return Ok(Plan {
                        inputs,
                        consts,
                        requires,
                        checks,
                        dtype: out_dtype,
                        shape: out_shape,
                        output,
                        store,
                    });
                }
                _ => {
                    self.pos -= 1;
                    return self.fail("`const`, `require`, `check` or `out`");
                }
            }
        }
    }

    /// `COMBINE over [SHAPE] at DEST value VALUE [when MASK]` after `store`.
    fn store(&mut self, const_count: usize) -> Result<Store<SymExpr>> {
        let span = self.span();
        let name = self.ident()?;
        let combine = Combine::from_name(name)
            .ok_or_else(|| PlanParseError { message: format!("unknown store combine `{name}`"), span })?;
        self.keyword("over")?;
        let shape = self.sym_list()?;
        self.keyword("at")?;
        let dest = self.access(const_count, MAX_NESTING + 1)?;
        self.keyword("value")?;
        let value = self.access(const_count, MAX_NESTING + 1)?;
        let when = match self.peek() {
            Some(Token::Ident("when")) => {
                self.keyword("when")?;
                Some(self.access(const_count, MAX_NESTING + 1)?)
            }
            _ => None,
        };
        Ok(Store { shape, dest, value, combine, when })
    }

    /// `require COND  # MESSAGE` (the message was masked out of the tokens).
    fn requirement(&mut self, at: Span) -> Result<Requirement> {
        let start = self.pos;
        while !matches!(self.peek(), None | Some(Token::Newline)) {
            self.pos += 1;
        }
        if self.pos == start {
            return self.fail("a condition");
        }
        let span = Span::new(self.tokens[start].1.start, self.tokens[self.pos - 1].1.end);
        let text = &self.text[span.start..span.end];
        let cond = Cond::parse(text)
            .map_err(|e| PlanParseError { message: format!("`{text}` is not a condition: {e}"), span })?;
        let line = self.text[..at.start].rfind('\n').map_or(0, |i| i + 1);
        let message =
            self.messages.iter().find(|(l, _)| *l == line).map(|(_, m)| m.clone()).unwrap_or_default();
        Ok(Requirement { cond, message, origin: Origin(None) })
    }

    /// `a{BASE; S0, S1} + STRIDE*MODE<LEN>(ACCESS) ...`, nested at most `levels` deep (the
    /// parser recurses once per level).
    fn access(&mut self, const_count: usize, levels: usize) -> Result<Access<SymExpr>> {
        let span = self.span();
        let Some(levels) = levels.checked_sub(1) else {
            let message = format!("index accesses nest more than {MAX_NESTING} levels deep");
            return Err(PlanParseError { message, span });
        };
        let buffer = if self.eat(Token::Dollar) {
            let i = self.usize()?;
            if i >= const_count {
                return Err(PlanParseError {
                    message: format!("no constant ${i} is declared before this"),
                    span,
                });
            }
            BufferId::Const(i)
        } else {
            let name = self.ident()?;
            match self.inputs.iter().position(|d| d.name == name) {
                Some(i) => BufferId::Input(i),
                None => {
                    return Err(PlanParseError {
                        message: format!("`{name}` is not an input of the plan"),
                        span,
                    });
                }
            }
        };
        self.expect(Token::LBrace)?;
        let base = self.sym()?;
        self.expect(Token::Semi)?;
        let mut strides = vec![];
        while !self.eat(Token::RBrace) {
            if !strides.is_empty() {
                self.expect(Token::Comma)?;
            }
            strides.push(self.sym()?);
        }
        let mut terms = vec![];
        while self.eat(Token::Plus) {
            let stride = self.term_stride()?;
            self.expect(Token::Star)?;
            let span = self.span();
            let mode = self.ident()?;
            let mode = OobMode::from_name(mode)
                .ok_or_else(|| PlanParseError { message: format!("unknown mode `{mode}`"), span })?;
            self.expect(Token::Lt)?;
            let len = self.sym()?;
            self.expect(Token::Gt)?;
            self.expect(Token::LParen)?;
            let index = self.access(const_count, levels)?;
            self.expect(Token::RParen)?;
            terms.push(Indirect { index: Box::new(index), len, stride, mode, origin: Origin(None) });
        }
        Ok(Access { buffer, base, strides, terms })
    }
}

/// A constant from the integers its line lists (`plan/print.rs`, `const_values`): an integer
/// dtype's values, checked to fit; otherwise each element's (each complex part's) bits.
fn const_tensor(
    dtype: slc_runtime::DType,
    dims: &[usize],
    values: &[i64],
) -> std::result::Result<Tensor, String> {
    if dtype.is_integer() {
        return Tensor::from_i64s(dtype, dims, values).map_err(|e| e.to_string());
    }
    let part = if dtype.is_complex() { dtype.width() / 2 } else { dtype.width() };
    let mut bytes = Vec::with_capacity(values.len() * part);
    for &v in values {
        let fits = part == 8 || (0..1i64 << (8 * part)).contains(&v);
        if !fits || (dtype == slc_runtime::DType::Bool && v > 1) {
            return Err(format!("{v} is not the bits of a {dtype} element"));
        }
        bytes.extend_from_slice(&v.to_le_bytes()[..part]);
    }
    Tensor::from_bytes(dtype, dims, &bytes).map_err(|e| e.to_string())
}
