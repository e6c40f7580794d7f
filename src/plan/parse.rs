//! Reads the text form written by `plan/print.rs` back into a [`Plan`]. A small recursive
//! descent parser over the tokens of `plan/token.rs`; `verify` is the caller's next step.

use super::ir::*;
use super::token::Token;
use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::limits::MAX_NESTING;
use crate::source::Span;
use crate::types::OobMode;
use crate::types::TensorType;
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

pub fn parse(text: &str) -> Result<Plan> {
    // The parser stops at MAX_NESTING levels: that is as deep as it can recurse.
    crate::limits::with_stack_for(crate::limits::MAX_NESTING, || parse_in_place(text))
}

fn parse_in_place(text: &str) -> Result<Plan> {
    let mut tokens = Vec::new();
    for (t, at) in Token::lexer(text).spanned() {
        let span = Span::new(at.start, at.end);
        match t {
            Ok(tok) => tokens.push((tok, span)),
            Err(()) => return Err(PlanParseError { message: "unexpected character".into(), span }),
        }
    }
    let mut p = Parser { tokens, pos: 0, end: text.len(), inputs: vec![] };
    p.plan()
}

struct Parser<'s> {
    tokens: Vec<(Token<'s>, Span)>,
    pos: usize,
    end: usize,
    inputs: Vec<InputDecl>,
}

type Result<T> = std::result::Result<T, PlanParseError>;

impl<'s> Parser<'s> {
    fn peek(&self) -> Option<Token<'s>> {
        self.tokens.get(self.pos).map(|t| t.0)
    }

    fn span(&self) -> Span {
        self.tokens.get(self.pos).map_or(Span::new(self.end, self.end), |t| t.1)
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

    /// `f32[2, 3]`
    fn tensor_type(&mut self) -> Result<TensorType> {
        let span = self.span();
        let dtype = self.ident()?;
        let shape = self.int_list()?;
        format!("{dtype}{}", crate::types::ShapeDisplay(&shape))
            .parse()
            .map_err(|message| PlanParseError { message, span })
    }

    fn newlines(&mut self) {
        while self.eat(Token::Newline) {}
    }

    fn plan(&mut self) -> Result<Plan> {
        self.newlines();
        self.keyword("plan")?;
        self.expect(Token::LParen)?;
        while !self.eat(Token::RParen) {
            if !self.inputs.is_empty() {
                self.expect(Token::Comma)?;
            }
            let name = self.ident()?.to_string();
            self.expect(Token::Colon)?;
            let ty = self.tensor_type()?;
            let strides = if self.eat(Token::Ident("strides")) { Some(self.int_list()?) } else { None };
            self.inputs.push(InputDecl { strides, ..InputDecl::dense(name, ty.dtype, ty.shape) });
        }
        self.expect(Token::Arrow)?;
        let out_ty = self.tensor_type()?;
        let (mut consts, mut checks) = (vec![], vec![]);
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
                    let ty = self.tensor_type()?;
                    self.expect(Token::Eq)?;
                    let values = self.int_list()?;
                    let dims: Vec<usize> = ty.shape.iter().map(|&d| d as usize).collect();
                    let tensor = Tensor::from_i64s(ty.dtype, &dims, &values)
                        .map_err(|e| PlanParseError { message: e.to_string(), span })?;
                    consts.push(ConstDecl { tensor });
                }
                "check" => {
                    let index = self.access(consts.len(), MAX_NESTING + 1)?;
                    self.keyword("over")?;
                    let shape = self.int_list()?;
                    self.keyword("len")?;
                    let len = self.int()?;
                    self.keyword("axis")?;
                    let axis = self.usize()?;
                    checks.push(Check { index, shape, len, axis, origin: Origin(None) });
                }
                "out" => {
                    let output = self.access(consts.len(), MAX_NESTING + 1)?;
                    self.newlines();
                    if self.peek().is_some() {
                        return self.fail("the end of the plan");
                    }
                    let inputs = std::mem::take(&mut self.inputs);
                    return Ok(Plan {
                        inputs,
                        consts,
                        requires: vec![],
                        checks,
                        dtype: out_ty.dtype,
                        shape: out_ty.shape,
                        output,
                    });
                }
                _ => {
                    self.pos -= 1;
                    return self.fail("`const`, `check` or `out`");
                }
            }
        }
    }

    /// `a{BASE; S0, S1} + STRIDE*MODE<LEN>(ACCESS) ...`, nested at most `levels` deep (the
    /// parser recurses once per level).
    fn access(&mut self, const_count: usize, levels: usize) -> Result<Access> {
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
        let base = self.int()?;
        self.expect(Token::Semi)?;
        let mut strides = vec![];
        while !self.eat(Token::RBrace) {
            if !strides.is_empty() {
                self.expect(Token::Comma)?;
            }
            strides.push(self.int()?);
        }
        let mut terms = vec![];
        while self.eat(Token::Plus) {
            let stride = self.int()?;
            self.expect(Token::Star)?;
            let span = self.span();
            let mode = self.ident()?;
            let mode = OobMode::from_name(mode)
                .ok_or_else(|| PlanParseError { message: format!("unknown mode `{mode}`"), span })?;
            self.expect(Token::Lt)?;
            let len = self.int()?;
            self.expect(Token::Gt)?;
            self.expect(Token::LParen)?;
            let index = self.access(const_count, levels)?;
            self.expect(Token::RParen)?;
            terms.push(Indirect { index: Box::new(index), len, stride, mode });
        }
        Ok(Access { buffer, base, strides, terms })
    }
}
