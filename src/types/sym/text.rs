//! Text: the printed form (`Display`) and [`SymExpr::parse`], which reads it back.

use std::fmt;

use super::poly::print_order;
use super::{Atom, Cond, SymExpr, fits, is_name};

/// How deeply [`SymExpr::parse`] nests (parentheses, calls, unary minus).
const MAX_PARSE_DEPTH: usize = 200;

impl SymExpr {
    /// Whether the printed form is one self-delimiting primary (a name, a non-negative constant,
    /// a call, a parenthesized form).
    fn is_primary(&self) -> bool {
        match self.as_const() {
            Some(c) => c >= 0,
            None => matches!(
                self.single_atom(),
                Some(Atom::Sym(_) | Atom::Min(_) | Atom::Max(_) | Atom::Select(..) | Atom::Raw(..))
            ),
        }
    }

    fn fmt_primary(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.is_primary() { write!(f, "{self}") } else { write!(f, "({self})") }
    }
}

fn fmt_atom(a: &Atom, f: &mut fmt::Formatter<'_>, alone: bool) -> fmt::Result {
    match a {
        Atom::Sym(s) => write!(f, "{s}"),
        Atom::FloorDiv(x, d) | Atom::Mod(x, d) => {
            if !alone {
                write!(f, "(")?;
            }
            x.fmt_primary(f)?;
            write!(f, "{}", if matches!(a, Atom::FloorDiv(..)) { "//" } else { "%" })?;
            d.fmt_primary(f)?;
            if !alone {
                write!(f, ")")?;
            }
            Ok(())
        }
        Atom::Min(v) | Atom::Max(v) => {
            write!(f, "{}(", if matches!(a, Atom::Min(_)) { "min" } else { "max" })?;
            // Constants first: `max(0, N-1)`.
            let order = v
                .iter()
                .filter(|x| x.as_const().is_some())
                .chain(v.iter().filter(|x| x.as_const().is_none()));
            for (i, x) in order.enumerate() {
                if i > 0 {
                    write!(f, ", ")?;
                }
                write!(f, "{x}")?;
            }
            write!(f, ")")
        }
        Atom::Select(c, t, e) => write!(f, "({t} if {} {} {} else {e})", c.lhs, c.op.text(), c.rhs),
        Atom::Raw(op, x, y) => {
            write!(f, "(")?;
            x.fmt_primary(f)?;
            write!(f, "{}", ["+", "-", "*"][*op as usize])?;
            // Always parenthesized: the parser reads `x-(5)` as a subtraction, `x-5` as x + -5.
            if y.as_sym().is_some() {
                write!(f, "{y}")?
            } else {
                write!(f, "({y})")?
            }
            write!(f, ")")
        }
    }
}

impl fmt::Display for SymExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let p = &self.0;
        let order = print_order(p);
        if order.is_empty() {
            return write!(f, "{}", p.constant);
        }
        for (n, &i) in order.iter().enumerate() {
            let (m, c) = &p.terms[i];
            let mag = (*c as i128).abs();
            if *c < 0 {
                write!(f, "-")?;
            } else if n > 0 {
                write!(f, "+")?;
            }
            // A lone atom with coefficient 1 prints bare (`M+N//2`); `-(N//2)` and `2*(N//2)` need parentheses.
            let alone = mag == 1 && m.len() == 1 && *c > 0;
            if mag != 1 {
                write!(f, "{mag}*")?;
            }
            for (j, a) in m.iter().enumerate() {
                if j > 0 {
                    write!(f, "*")?;
                }
                fmt_atom(a, f, alone)?;
            }
        }
        match p.constant {
            0 => Ok(()),
            c if c > 0 => write!(f, "+{c}"),
            c => write!(f, "-{}", (c as i128).abs()),
        }
    }
}

impl fmt::Debug for SymExpr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SymExpr({self})")
    }
}

impl fmt::Display for Cond {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} {}", self.lhs, self.op.text(), self.rhs)
    }
}

// ---------------------------------------------------------------------------------------------
// Parsing

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i128),
    Name(String),
    P(&'static str),
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = vec![];
    while i < b.len() {
        let c = b[i] as char;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let j = (i..b.len()).find(|&j| !b[j].is_ascii_digit()).unwrap_or(b.len());
            let v: i128 = s[i..j].parse().ok().filter(|&v: &i128| v <= 1 << 63).ok_or("integer too large")?;
            out.push(Tok::Int(v));
            i = j;
        } else if c.is_ascii_alphabetic() || c == '_' {
            let j =
                (i..b.len()).find(|&j| !(b[j].is_ascii_alphanumeric() || b[j] == b'_')).unwrap_or(b.len());
            out.push(Tok::Name(s[i..j].to_string()));
            i = j;
        } else {
            let two = ["//", "<=", "==", ">="].into_iter().find(|p| s[i..].starts_with(p));
            let one = ["+", "-", "*", "%", "(", ")", "[", "]", ",", "<", ">"]
                .into_iter()
                .find(|p| s[i..].starts_with(p));
            match two.or(one) {
                Some(p) => {
                    out.push(Tok::P(p));
                    i += p.len();
                }
                None => return Err(format!("unexpected `{c}`")),
            }
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
    depth: usize,
}

/// A factor of a product: a literal (which a minus in front may negate to i64::MIN) or an
/// expression.
enum Factor {
    Lit(i128),
    Expr(SymExpr),
}

impl Factor {
    fn expr(self) -> Result<SymExpr, String> {
        match self {
            Factor::Lit(v) => {
                fits(v).map(SymExpr::constant).ok_or_else(|| format!("{v} does not fit in i64"))
            }
            Factor::Expr(e) => Ok(e),
        }
    }
}

impl Parser {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Tok::P(q)) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) { Ok(()) } else { Err(format!("expected `{p}` at token {}", self.pos)) }
    }

    fn sum(&mut self) -> Result<SymExpr, String> {
        self.depth += 1;
        if self.depth > MAX_PARSE_DEPTH {
            return Err("expression nested too deeply".into());
        }
        let negate = self.eat("-");
        let mut acc = match self.term(negate)? {
            (t, true) => SymExpr::constant(0).sub(&t),
            (t, false) => t,
        };
        loop {
            let negate = if self.eat("+") {
                false
            } else if self.eat("-") {
                true
            } else {
                break;
            };
            acc = match self.term(negate)? {
                (t, true) => acc.sub(&t),
                (t, false) => acc.add(&t),
            };
        }
        self.depth -= 1;
        Ok(acc)
    }

    /// A product, negated when `negate`: a leading literal of a pure product takes the sign
    /// (so that `-9223372036854775808` and `N-9223372036854775808*M` read). Returns the product
    /// and whether it is still to be subtracted.
    fn term(&mut self, negate: bool) -> Result<(SymExpr, bool), String> {
        let mut items = vec![("*", self.factor()?)];
        loop {
            let op = ["*", "//", "%"].into_iter().find(|p| matches!(self.peek(), Some(Tok::P(q)) if q == p));
            let Some(op) = op else { break };
            self.pos += 1;
            items.push((op, self.factor()?));
        }
        let pure = items.iter().all(|(op, _)| *op == "*");
        let mut negate = negate;
        if negate
            && pure
            && let Factor::Lit(v) = &mut items[0].1
        {
            *v = -*v;
            negate = false;
        }
        let mut it = items.into_iter();
        let mut acc = it.next().expect("one").1.expr()?;
        for (op, x) in it {
            let x = x.expr()?;
            acc = match op {
                "*" => acc.mul(&x),
                "//" => acc.floor_div(&x),
                _ => acc.modulo(&x),
            };
        }
        Ok((acc, negate))
    }

    fn factor(&mut self) -> Result<Factor, String> {
        match self.peek().cloned() {
            Some(Tok::Int(v)) => {
                self.pos += 1;
                Ok(Factor::Lit(v))
            }
            Some(Tok::P("-")) => {
                self.pos += 1;
                self.depth += 1;
                if self.depth > MAX_PARSE_DEPTH {
                    return Err("expression nested too deeply".into());
                }
                let f = self.factor()?;
                self.depth -= 1;
                Ok(match f {
                    Factor::Lit(v) => Factor::Lit(-v),
                    Factor::Expr(e) => Factor::Expr(e.neg()),
                })
            }
            Some(Tok::P("(")) => {
                self.pos += 1;
                let e = self.sum()?;
                if matches!(self.peek(), Some(Tok::Name(n)) if n == "if") {
                    self.pos += 1;
                    let c = self.cond()?;
                    match self.peek() {
                        Some(Tok::Name(n)) if n == "else" => self.pos += 1,
                        _ => return Err("expected `else`".into()),
                    }
                    let otherwise = self.sum()?;
                    self.expect(")")?;
                    return Ok(Factor::Expr(SymExpr::select(c, &e, &otherwise)));
                }
                self.expect(")")?;
                Ok(Factor::Expr(e))
            }
            Some(Tok::Name(n)) if (n == "min" || n == "max") => {
                self.pos += 1;
                self.expect("(")?;
                let mut args = vec![self.sum()?];
                while self.eat(",") {
                    args.push(self.sum()?);
                }
                self.expect(")")?;
                Ok(Factor::Expr(if n == "min" { SymExpr::min(&args) } else { SymExpr::max(&args) }))
            }
            Some(Tok::Name(n)) if is_name(&n) => {
                self.pos += 1;
                if self.eat("[") {
                    let e = if self.eat("(") {
                        self.expect(")")?;
                        SymExpr::scalar(&n)
                    } else {
                        match self.peek().cloned() {
                            Some(Tok::Int(i)) if i <= u32::MAX as i128 => {
                                self.pos += 1;
                                SymExpr::scalar_elem(&n, i as u32)
                            }
                            _ => return Err("expected `()` or an index after `[`".into()),
                        }
                    };
                    self.expect("]")?;
                    Ok(Factor::Expr(e))
                } else {
                    Ok(Factor::Expr(SymExpr::dim(&n)))
                }
            }
            other => Err(format!("unexpected {other:?}")),
        }
    }

    fn cond(&mut self) -> Result<Cond, String> {
        let a = self.sum()?;
        let op = match self.peek() {
            Some(Tok::P(p)) => *p,
            _ => return Err("expected a comparison".into()),
        };
        self.pos += 1;
        let b = self.sum()?;
        Ok(match op {
            "<" => Cond::lt(&a, &b),
            "<=" => Cond::le(&a, &b),
            "==" => Cond::eq(&a, &b),
            ">" => Cond::lt(&b, &a),
            ">=" => Cond::le(&b, &a),
            _ => return Err(format!("expected a comparison, found `{op}`")),
        })
    }
}

impl SymExpr {
    /// Reads the printed form (and Python-like input: `>`/`>=` too). The result is normalized.
    pub fn parse(s: &str) -> Result<SymExpr, String> {
        let mut p = Parser { toks: lex(s)?, pos: 0, depth: 0 };
        let e = p.sum()?;
        if p.pos != p.toks.len() {
            return Err(format!("unexpected {:?} after the expression", p.toks[p.pos]));
        }
        Ok(e)
    }
}

impl Cond {
    /// Reads a printed condition (`N <= 5`, `-N <= k[()]`; `>` and `>=` too). Normalized.
    pub fn parse(s: &str) -> Result<Cond, String> {
        let mut p = Parser { toks: lex(s)?, pos: 0, depth: 0 };
        let c = p.cond()?;
        if p.pos != p.toks.len() {
            return Err(format!("unexpected {:?} after the condition", p.toks[p.pos]));
        }
        Ok(c)
    }
}

impl std::str::FromStr for SymExpr {
    type Err = String;
    fn from_str(s: &str) -> Result<SymExpr, String> {
        SymExpr::parse(s)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::*;
    use super::super::*;
    use proptest::prelude::*;

    #[test]
    fn readable_forms() {
        assert_eq!((n() - 1).to_string(), "N-1");
        assert_eq!((m() * n()).to_string(), "M*N");
        assert_eq!((n() * 2 + m() - 3).to_string(), "M+2*N-3");
        assert_eq!((m() - n() * 2).to_string(), "M-2*N");
        assert_eq!((SymExpr::constant(0) - n() - 1).to_string(), "-N-1");
        assert_eq!(
            SymExpr::max(&[SymExpr::constant(0), (n() - 3).floor_div(&2.into())]).to_string(),
            "max(0, (N+1)//2-2)"
        );
        assert_eq!((m() + n().floor_div(&2.into())).to_string(), "M+N//2");
        assert_eq!((m() - n().floor_div(&2.into())).to_string(), "M-(N//2)");
        assert_eq!((n().floor_div(&2.into()) * 2).to_string(), "2*(N//2)");
        assert_eq!(SymExpr::scalar("k").to_string(), "k[()]");
        assert_eq!(SymExpr::scalar_elem("k", 2).to_string(), "k[2]");
        let s = SymExpr::select(Cond::le(&n(), &m()), &SymExpr::constant(0), &SymExpr::constant(1));
        assert_eq!(s.to_string(), "(0 if N <= M else 1)");
        assert_eq!(SymExpr::constant(i64::MIN).to_string(), "-9223372036854775808");
    }

    #[test]
    fn parse_errors() {
        for bad in ["", "N +", "min()", "(1 if N else 2)", "k[x]", "9223372036854775808", "N $ 2", "if"] {
            assert!(SymExpr::parse(bad).is_err(), "{bad}");
        }
        assert_eq!(p("-9223372036854775808").as_const(), Some(i64::MIN));
        // Deep input is refused, never a stack overflow; a product of big sums is kept as written
        // past MAX_TERMS terms instead of distributed.
        assert!(SymExpr::parse(&format!("{}N", "-".repeat(100_000))).is_err());
        assert!(SymExpr::parse(&format!("{}N{}", "(".repeat(100_000), ")".repeat(100_000))).is_err());
        assert!(SymExpr::parse(&format!("{}N{}", "min(".repeat(100_000), ")".repeat(100_000))).is_err());
        let big = format!("({})", (0..20).map(|i| format!("A{i}")).collect::<Vec<_>>().join("+"));
        let e = p(&[big.as_str(); 8].join("*"));
        assert_eq!(p(&e.to_string()), e);
        let env = (0..20).fold(Env::new(), |env, i| env.dim(&format!("A{i}"), 1));
        assert_eq!(e.eval(&env), Some(20i64.pow(8)));
        assert_eq!(p("N-9223372036854775808*M").to_string(), "N-9223372036854775808*M");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]
        /// The printed form reads back to the same expression.
        #[test]
        fn print_parse_round_trip(t in tree()) {
            let e = t.build();
            let text = e.to_string();
            let back = SymExpr::parse(&text);
            prop_assert_eq!(back.as_ref(), Ok(&e), "{}", text);
        }
    }
}
