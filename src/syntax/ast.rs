//! The untyped syntax tree. Every node carries the byte span it was parsed from; `Display`
//! prints source-like text (fully parenthesised arithmetic), so a tree can be read at a glance.

use crate::source::Span;
use std::fmt;

#[derive(Debug, Clone, PartialEq)]
pub struct Program {
    pub stmts: Vec<Stmt>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Stmt {
    pub kind: StmtKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum StmtKind {
    /// `let NAME = EXPR`
    Let { name: Ident, value: Expr },
    /// An expression; the last statement of a program is its result.
    Expr(Expr),
    /// `TARGET = VALUE`, `TARGET += VALUE`, `TARGET *= VALUE`: a store through a subscript
    /// (docs/semantics.md, Stores). The parser takes any postfix expression as the target;
    /// checking requires `NAME[ITEMS]...`.
    Assign { target: Expr, op: AssignOp, value: Expr },
}

/// The operator of an assignment statement.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AssignOp {
    /// `=`: the value replaces the selected elements.
    Set,
    /// `+=`: NumPy's buffered `a[i] = a[i] + v` (a duplicate destination adds once).
    Add,
    /// `*=`: NumPy's buffered `a[i] = a[i] * v`.
    Mul,
}

impl fmt::Display for AssignOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            AssignOp::Set => "=",
            AssignOp::Add => "+=",
            AssignOp::Mul => "*=",
        })
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Ident {
    pub name: String,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Expr {
    pub kind: ExprKind,
    pub span: Span,
    /// Levels of nesting, this node included (a leaf is 1, a parenthesized expression one more
    /// than its content): the parser bounds it by [`MAX_NESTING`](crate::limits::MAX_NESTING),
    /// so that no stage recursing over the tree can run out of stack.
    pub depth: usize,
}

impl Expr {
    /// A node over already built children; its depth is one more than its deepest child's.
    pub fn new(kind: ExprKind, span: Span) -> Expr {
        let depth = 1 + kind.children().map(|c| c.depth).max().unwrap_or(0);
        Expr { kind, span, depth }
    }
}

impl Program {
    /// The depth of the most deeply nested statement.
    pub fn depth(&self) -> usize {
        let value = |s: &Stmt| match &s.kind {
            StmtKind::Let { value, .. } | StmtKind::Expr(value) => value.depth,
            StmtKind::Assign { target, value, .. } => target.depth.max(value.depth),
        };
        self.stmts.iter().map(value).max().unwrap_or(0)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    /// `//`: floor division, as in Python.
    FloorDiv,
    /// `%`: the remainder of floor division (sign of the divisor), as in Python.
    Mod,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ExprKind {
    Name(String),
    /// An integer literal's magnitude; a leading `-` is a separate [`ExprKind::Neg`].
    Int(u64),
    /// `True` or `False`: a 0-d boolean mask, or an element of a boolean list.
    Bool(bool),
    /// Kept only to report it: slc has no floating-point values.
    Float(String),
    Str(String),
    /// `[e0, e1, ...]`: an integer (or boolean) list, nested for higher ranks.
    List(Vec<Expr>),
    Neg(Box<Expr>),
    Binary {
        op: BinOp,
        lhs: Box<Expr>,
        rhs: Box<Expr>,
    },
    /// `base[items]`
    Index {
        base: Box<Expr>,
        items: Vec<Item>,
    },
    /// `base.name`, e.g. `a.shape`
    Attr {
        base: Box<Expr>,
        name: Ident,
    },
    /// `callee(args)`, e.g. `gather(a, idx, axis=1)`
    Call {
        callee: Ident,
        args: Vec<Arg>,
    },
}

impl ExprKind {
    /// The expressions directly below this node.
    pub fn children(&self) -> impl Iterator<Item = &Expr> {
        let (one, many): (Vec<&Expr>, &[Expr]) = match self {
            ExprKind::Name(_)
            | ExprKind::Int(_)
            | ExprKind::Bool(_)
            | ExprKind::Float(_)
            | ExprKind::Str(_) => (vec![], &[]),
            ExprKind::List(items) => (vec![], items),
            ExprKind::Neg(e) | ExprKind::Attr { base: e, .. } => (vec![e], &[]),
            ExprKind::Binary { lhs, rhs, .. } => (vec![lhs, rhs], &[]),
            ExprKind::Index { base, items } => {
                let mut v = vec![&**base];
                for item in items {
                    match &item.kind {
                        ItemKind::Expr(e) => v.push(e),
                        ItemKind::Slice { start, stop, step } => {
                            v.extend([start, stop, step].into_iter().flatten())
                        }
                        ItemKind::Ellipsis | ItemKind::NewAxis => {}
                    }
                }
                (v, &[])
            }
            ExprKind::Call { args, .. } => (args.iter().map(|a| &a.value).collect(), &[]),
        };
        one.into_iter().chain(many)
    }
}

#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub kind: ItemKind,
    pub span: Span,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ItemKind {
    /// An integer, or an index tensor.
    Expr(Expr),
    /// `start:stop:step`, each part optional.
    Slice {
        start: Option<Expr>,
        stop: Option<Expr>,
        step: Option<Expr>,
    },
    Ellipsis,
    /// `newaxis` or `None`.
    NewAxis,
}

/// A call argument, positional or `name=value`.
#[derive(Debug, Clone, PartialEq)]
pub struct Arg {
    pub name: Option<Ident>,
    pub value: Expr,
    pub span: Span,
}

impl fmt::Display for Program {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for stmt in &self.stmts {
            match &stmt.kind {
                StmtKind::Let { name, value } => writeln!(f, "let {} = {value}", name.name)?,
                StmtKind::Expr(e) => writeln!(f, "{e}")?,
                StmtKind::Assign { target, op, value } => writeln!(f, "{target} {op} {value}")?,
            }
        }
        Ok(())
    }
}

fn comma_list<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            write!(f, ", ")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ExprKind::Name(n) => write!(f, "{n}"),
            ExprKind::Int(v) => write!(f, "{v}"),
            ExprKind::Bool(b) => write!(f, "{}", if *b { "True" } else { "False" }),
            ExprKind::Float(s) => write!(f, "{s}"),
            ExprKind::Str(s) => write!(f, "{s:?}"),
            ExprKind::List(items) => {
                write!(f, "[")?;
                comma_list(f, items)?;
                write!(f, "]")
            }
            ExprKind::Neg(e) => write!(f, "(-{e})"),
            ExprKind::Binary { op, lhs, rhs } => write!(f, "({lhs} {op} {rhs})"),
            ExprKind::Index { base, items } if items.is_empty() => write!(f, "{base}[()]"),
            ExprKind::Index { base, items } => {
                write!(f, "{base}[")?;
                comma_list(f, items)?;
                write!(f, "]")
            }
            ExprKind::Attr { base, name } => write!(f, "{base}.{}", name.name),
            ExprKind::Call { callee, args } => {
                write!(f, "{}(", callee.name)?;
                comma_list(f, args)?;
                write!(f, ")")
            }
        }
    }
}

impl fmt::Display for BinOp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::FloorDiv => "//",
            BinOp::Mod => "%",
        })
    }
}

impl fmt::Display for Item {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            ItemKind::Expr(e) => write!(f, "{e}"),
            ItemKind::Slice { start, stop, step } => {
                if let Some(e) = start {
                    write!(f, "{e}")?;
                }
                write!(f, ":")?;
                if let Some(e) = stop {
                    write!(f, "{e}")?;
                }
                if let Some(e) = step {
                    write!(f, ":{e}")?;
                }
                Ok(())
            }
            ItemKind::Ellipsis => write!(f, "..."),
            ItemKind::NewAxis => write!(f, "newaxis"),
        }
    }
}

impl fmt::Display for Arg {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(name) = &self.name {
            write!(f, "{}=", name.name)?;
        }
        write!(f, "{}", self.value)
    }
}
