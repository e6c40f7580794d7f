//! From an entry to a value or a plan: evaluating an expression, planning statements or a
//! command's text (shape-generically too), and rewriting helper calls into temporary inputs
//! after the integer bindings.

use super::{Fail, Planned, Repl, Val, helpers, masked};
use crate::diag::Diagnostic;
use crate::error::Error;
use crate::sema::{InputTypes, TExprKind};
use crate::source::Span;
use crate::syntax::{self, ast};
use crate::types::TensorType;
use slc_runtime::DType;

impl Repl {
    /// Evaluates one expression: an integer, or a tensor computed by a plan.
    pub(crate) fn value(&mut self, e: &ast::Expr) -> Result<Val, Fail> {
        // A helper call on its own is data already: no plan, no copy.
        if let ast::ExprKind::Call { callee, args } = &e.kind
            && helpers::is_helper(&callee.name)
            && callee.name != "save"
        {
            return self.helper(callee, args, e.span).map(Val::Tensor);
        }
        self.with_temps(|repl, temps| {
            let planned =
                repl.plan_stmts(&[ast::Stmt { kind: ast::StmtKind::Expr(e.clone()), span: e.span }], temps)?;
            match &planned.checked.kind {
                TExprKind::Const(t) if t.rank() == 0 && t.dtype() == DType::I64 => {
                    // Integers (literals, arithmetic, `a.ndim`) reach the checker's result as a
                    // 0-d i64 constant; nothing else does (a list literal has a dimension).
                    let v = t.int_at(0).and_then(|v| i64::try_from(v).ok()).unwrap_or_default();
                    Ok(Val::Int(v))
                }
                TExprKind::Const(t) => Ok(Val::Tensor(t.clone())),
                TExprKind::Input(name) if repl.tensors.contains_key(name) => {
                    Ok(Val::Tensor(repl.tensors[name].clone()))
                }
                _ => repl.run(&planned).map(Val::Tensor),
            }
        })
    }

    /// Runs `f`; the temporaries it binds (helper results standing in an expression) are
    /// unbound afterwards, whatever it returns.
    pub(crate) fn with_temps<T>(
        &mut self,
        f: impl FnOnce(&mut Repl, &mut Vec<String>) -> Result<T, Fail>,
    ) -> Result<T, Fail> {
        let mut temps = vec![];
        let result = f(self, &mut temps);
        for name in temps {
            self.tensors.remove(&name);
        }
        result
    }

    /// Parses `text[start..]` and takes the whole program to a plan (its `let`s program-local
    /// and fused, as in `slc eval`): what `:plan`, `:clif`, `:dml` and `:time` show.
    pub(crate) fn plan_text(
        &mut self,
        text: &str,
        start: usize,
        temps: &mut Vec<String>,
    ) -> Result<Planned, Fail> {
        self.plan_text_with(text, start, temps, crate::pipeline::RUN_MASKS)
    }

    /// As [`plan_text`](Self::plan_text), masks treated as `policy` says (`:dml` plans as
    /// `slc compile --target dml` does).
    pub(crate) fn plan_text_with(
        &mut self,
        text: &str,
        start: usize,
        temps: &mut Vec<String>,
        policy: crate::sema::MaskPolicy,
    ) -> Result<Planned, Fail> {
        let program = syntax::parse_program(&masked(text, start)).map_err(Error::from)?;
        self.plan_stmts_with(&program.stmts, temps, policy)
    }

    /// Checks, lowers and verifies statements, after the integer bindings and with helper calls
    /// replaced by temporaries. A large mask's positions are derived per run (`plan_inputs`),
    /// not folded: folding puts every `True` through the front end, seconds for a 4096² mask.
    pub(crate) fn plan_stmts(
        &mut self,
        stmts: &[ast::Stmt],
        temps: &mut Vec<String>,
    ) -> Result<Planned, Fail> {
        self.plan_stmts_with(stmts, temps, crate::pipeline::RUN_MASKS)
    }

    fn plan_stmts_with(
        &mut self,
        stmts: &[ast::Stmt],
        temps: &mut Vec<String>,
        policy: crate::sema::MaskPolicy,
    ) -> Result<Planned, Fail> {
        let program = self.rewritten(stmts, temps)?;
        let types: InputTypes = self.bound_types().map(|(name, ty)| (name.to_string(), ty)).collect();
        let (checked, _, plan) = crate::pipeline::check_and_lower(&program, &types, &self.tensors, policy)?;
        Ok(Planned { checked, plan })
    }

    /// As [`plan_text`](Self::plan_text), shape-generically (`:plan -g`): over the bound
    /// tensors' dtypes and ranks, every dim a symbol named from its tensor and axis (`_a0`).
    pub(crate) fn generic_plan_text(
        &mut self,
        text: &str,
        start: usize,
        temps: &mut Vec<String>,
    ) -> Result<(crate::sema::TExpr, crate::plan::VerifiedGenericPlan), Fail> {
        let program = syntax::parse_program(&masked(text, start)).map_err(Error::from)?;
        let program = self.rewritten(&program.stmts, temps)?;
        let types: crate::sema::SymInputTypes =
            self.bound_types().map(|(name, ty)| (name.to_string(), ty.symbolic(name))).collect();
        let (checked, _, plan) =
            crate::pipeline::check_and_lower_generic(&program, &types, &Default::default())?;
        let plan = crate::plan::verify_generic(plan).map_err(Error::from)?;
        Ok((checked, plan))
    }

    /// The type of every bound tensor, lazy Zarr arrays among them.
    fn bound_types(&self) -> impl Iterator<Item = (&str, TensorType)> {
        let tensors =
            self.tensors.iter().map(|(name, t)| (name.as_str(), TensorType::of(t.dtype(), t.shape())));
        let zarrs = self
            .zarrs
            .iter()
            .map(|(name, z)| (name.as_str(), TensorType::of(z.zarr.dtype(), z.zarr.shape())));
        tensors.chain(zarrs)
    }

    /// The entry's statements after the integer bindings, with helper calls replaced by
    /// temporaries.
    fn rewritten(&mut self, stmts: &[ast::Stmt], temps: &mut Vec<String>) -> Result<ast::Program, Fail> {
        let mut program = ast::Program { stmts: self.prelude() };
        for stmt in stmts {
            let kind = match &stmt.kind {
                ast::StmtKind::Let { name, value } => {
                    ast::StmtKind::Let { name: name.clone(), value: self.rewrite(value, temps)? }
                }
                ast::StmtKind::Expr(e) => ast::StmtKind::Expr(self.rewrite(e, temps)?),
                ast::StmtKind::Assign { target, op, value } => ast::StmtKind::Assign {
                    target: self.rewrite(target, temps)?,
                    op: *op,
                    value: self.rewrite(value, temps)?,
                },
            };
            program.stmts.push(ast::Stmt { kind, span: stmt.span });
        }
        if stmts.is_empty() {
            return Err(Fail::program(Diagnostic::error("E0507", "expected an expression")));
        }
        Ok(program)
    }

    /// The integer bindings as `let` statements the checker sees before the entry's own: so
    /// they stay static integers (slice bounds, axes), as a program's own `let k = 2` would.
    fn prelude(&self) -> Vec<ast::Stmt> {
        let span = Span::default();
        self.ints
            .iter()
            .map(|(name, &v)| {
                let magnitude = ast::Expr::new(ast::ExprKind::Int(v.unsigned_abs()), span);
                let value = if v < 0 {
                    ast::Expr::new(ast::ExprKind::Neg(Box::new(magnitude)), span)
                } else {
                    magnitude
                };
                let name = ast::Ident { name: name.clone(), span };
                ast::Stmt { kind: ast::StmtKind::Let { name, value }, span }
            })
            .collect()
    }

    /// `e` with each helper call evaluated and replaced by a temporary input; unknown
    /// functions are reported here, where the helpers are known too.
    fn rewrite(&mut self, e: &ast::Expr, temps: &mut Vec<String>) -> Result<ast::Expr, Fail> {
        use ast::ExprKind as E;
        let span = e.span;
        let boxed =
            |repl: &mut Repl, e: &ast::Expr, temps: &mut Vec<String>| repl.rewrite(e, temps).map(Box::new);
        let kind = match &e.kind {
            E::Call { callee, .. } if callee.name == "save" => return Err(helpers::save_has_no_value(span)),
            E::Call { callee, args } if helpers::is_helper(&callee.name) => {
                let t = self.helper(callee, args, span)?;
                let name = self.temp_name(e);
                self.tensors.insert(name.clone(), t);
                temps.push(name.clone());
                E::Name(name)
            }
            E::Call { callee, args } => {
                helpers::check_function(callee)?;
                let args = args
                    .iter()
                    .map(|a| {
                        Ok(ast::Arg {
                            name: a.name.clone(),
                            value: self.rewrite(&a.value, temps)?,
                            span: a.span,
                        })
                    })
                    .collect::<Result<_, Fail>>()?;
                E::Call { callee: callee.clone(), args }
            }
            E::Name(_) | E::Int(_) | E::Bool(_) | E::Float(_) | E::Str(_) => e.kind.clone(),
            E::List(items) => {
                E::List(items.iter().map(|i| self.rewrite(i, temps)).collect::<Result<_, _>>()?)
            }
            E::Neg(inner) => E::Neg(boxed(self, inner, temps)?),
            E::Binary { op, lhs, rhs } => {
                E::Binary { op: *op, lhs: boxed(self, lhs, temps)?, rhs: boxed(self, rhs, temps)? }
            }
            E::Attr { base, name } => E::Attr { base: boxed(self, base, temps)?, name: name.clone() },
            E::Index { base, items } => {
                let base = boxed(self, base, temps)?;
                let mut out = Vec::with_capacity(items.len());
                for item in items {
                    let mut opt =
                        |e: &Option<ast::Expr>| e.as_ref().map(|e| self.rewrite(e, temps)).transpose();
                    let kind = match &item.kind {
                        ast::ItemKind::Expr(e) => ast::ItemKind::Expr(self.rewrite(e, temps)?),
                        ast::ItemKind::Slice { start, stop, step } => {
                            ast::ItemKind::Slice { start: opt(start)?, stop: opt(stop)?, step: opt(step)? }
                        }
                        other => other.clone(),
                    };
                    out.push(ast::Item { kind, span: item.span });
                }
                E::Index { base, items: out }
            }
        };
        Ok(ast::Expr::new(kind, span))
    }

    /// A name for a helper call's result inside a plan: its own text (it cannot clash with a
    /// binding, since it is no identifier), shortened when long.
    fn temp_name(&self, e: &ast::Expr) -> String {
        let mut base = e.to_string();
        if base.chars().count() > 28
            && let ast::ExprKind::Call { callee, .. } = &e.kind
        {
            base = format!("{}(…)", callee.name);
        }
        let mut name = base.clone();
        let mut k = 2;
        while self.tensors.contains_key(&name) {
            name = format!("{base}#{k}");
            k += 1;
        }
        name
    }
}
