//! The interactive slicing workbench behind `slc repl` and `slc run`.
//!
//! [`Repl`] is the core: one entry of text in (statements or a `:` command), a [`Reply`] out,
//! with no terminal or file-system access of its own except what an entry asks for (`load`,
//! `save`, `:load`, `:save`, and the chunks of a lazily bound Zarr array that an evaluation
//! reads: `lazy.rs`). [`front`] puts it behind rustyline (history, completion, multi-line
//! input) or reads it from a pipe or a script.
//!
//! Unlike a program given to `slc eval`, whose `let`s are inlined and fused into one plan, each
//! statement of an entry runs on its own: a tensor `let` evaluates and keeps the result, an
//! integer `let` keeps the integer (so `let k = 2` then `a[:k]` slices statically), and an
//! expression statement prints its value. Helper functions (`load`, `arange`, ...) make tensors
//! (data) before the checker sees the expression: each call is evaluated and stands in the
//! expression as a temporary input.

mod commands;
mod complete;
pub mod front;
mod helpers;
mod lazy;
mod planning;
mod store;
pub(crate) use helpers::HELPERS;

pub use complete::{Completion, is_complete};

use crate::backend::RuntimeError;
use crate::backend::jit::KernelCache;
use crate::diag::{Diagnostic, render};
use crate::error::Error;
use crate::exec::{Executor, RunOptions};
use crate::plan::VerifiedPlan;
use crate::sema::{self, TExpr};
use crate::source::Span;
use crate::syntax::{self, ast};
use slc_runtime::{DType, PrintOptions, Tensor, format_tensor};
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::time::Duration;

/// How an entry failed, for exit codes: like `slc eval`, an error in the text is 2, an error
/// from files or data is 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FailureKind {
    /// Parse, check, usage of a helper or command: exit 2.
    Program,
    /// Files, data, run time: exit 1.
    Runtime,
}

impl FailureKind {
    /// The process exit code for this failure.
    pub fn exit_code(self) -> u8 {
        match self {
            FailureKind::Program => 2,
            FailureKind::Runtime => 1,
        }
    }
}

/// What one entry produced.
#[derive(Debug, Default, Clone)]
pub struct Reply {
    /// For standard output: values, plans, tables.
    pub out: String,
    /// For standard error: rendered diagnostics.
    pub err: String,
    /// Set when the entry failed (the statements before the failing one have taken effect).
    pub failure: Option<FailureKind>,
    /// `:quit` was entered.
    pub quit: bool,
}

/// An error on its way to the user: a diagnostic against the entry's text, and its class.
#[derive(Debug, Clone)]
pub(crate) struct Fail {
    // Boxed: `Result<_, Fail>` is returned everywhere and should stay small.
    diag: Box<Diagnostic>,
    kind: FailureKind,
}

impl Fail {
    fn program(diag: Diagnostic) -> Fail {
        Fail { diag: Box::new(diag), kind: FailureKind::Program }
    }

    fn runtime(diag: Diagnostic) -> Fail {
        Fail { diag: Box::new(diag), kind: FailureKind::Runtime }
    }
}

impl From<Error> for Fail {
    fn from(e: Error) -> Fail {
        let mut diag = e.diagnostic();
        // The checker's hint names `slc eval`'s flag; here names are bound differently.
        if diag.code == "E0101" && diag.help.as_deref().is_some_and(|h| h.contains("-i NAME")) {
            diag.help =
                Some("bind a tensor with `let NAME = load(\"FILE.npy\")` or `:load NAME=FILE.npy`".into());
        }
        let kind = if e.is_program_error() { FailureKind::Program } else { FailureKind::Runtime };
        Fail { diag: Box::new(diag), kind }
    }
}

impl From<RuntimeError> for Fail {
    fn from(e: RuntimeError) -> Fail {
        Fail::from(Error::from(e))
    }
}

/// A value an expression statement or a `let` produced.
#[derive(Debug, Clone)]
pub(crate) enum Val {
    Int(i64),
    Tensor(Tensor),
}

/// A program taken to a verified plan.
pub(crate) struct Planned {
    pub checked: TExpr,
    pub plan: VerifiedPlan,
}

/// The REPL's state: bindings that persist from entry to entry, and how plans run.
pub struct Repl {
    tensors: crate::sema::InputValues,
    /// Zarr arrays bound lazily: each run reads the chunks it needs (docs/zarr.md).
    zarrs: BTreeMap<String, lazy::LazyZarr>,
    ints: BTreeMap<String, i64>,
    options: RunOptions,
    cache: KernelCache,
    /// ANSI colours in diagnostics.
    pub color: bool,
    /// Print `name: type` after a `let` (interactive use; scripts stay quiet).
    pub echo_lets: bool,
    /// How results are printed (NumPy's defaults).
    pub print: PrintOptions,
    /// Time `:time` spends sampling.
    pub time_budget: Duration,
    /// Makes `random(...)` without `seed=` differ from call to call.
    seed_counter: u64,
    /// Names a script may not rebind: the inputs `slc run -i` gave it ([`Repl::fix_input`]).
    fixed_inputs: std::collections::BTreeSet<String>,
}

impl Default for Repl {
    fn default() -> Repl {
        Repl::new()
    }
}

/// The name diagnostics give an entry typed at the prompt.
const INPUT_NAME: &str = "input";

impl Repl {
    /// An empty session on the JIT, without colours, echoing `let`s.
    pub fn new() -> Repl {
        Repl {
            tensors: crate::sema::InputValues::new(),
            zarrs: BTreeMap::new(),
            ints: BTreeMap::new(),
            options: RunOptions::default(),
            cache: KernelCache::default(),
            color: false,
            echo_lets: true,
            print: PrintOptions::default(),
            time_budget: Duration::from_millis(500),
            seed_counter: 0,
            fixed_inputs: Default::default(),
        }
    }

    /// Binds `name` to an input of the script (`slc run -i`): a `let` or `:load` of the same
    /// name is then an error (`E0508`), not a silent replacement of what the user passed.
    pub fn fix_input(&mut self, name: &str, tensor: Tensor) {
        self.bind(name, tensor);
        self.fixed_inputs.insert(name.to_string());
    }

    /// Fails when `name` is a fixed input.
    pub(super) fn check_rebind(&self, name: &str, span: Span) -> Result<(), Fail> {
        if !self.fixed_inputs.contains(name) {
            return Ok(());
        }
        let diag =
            Diagnostic::error("E0508", format!("`{name}` is an input given with -i and cannot be rebound"))
                .label(span, "rebinds the input")
                .help(format!("choose another name, or pass a different file with -i {name}=FILE.npy"));
        Err(Fail::program(diag))
    }

    /// Binds (or rebinds) `name` to a tensor.
    pub fn bind(&mut self, name: &str, tensor: Tensor) {
        self.ints.remove(name);
        self.zarrs.remove(name);
        self.tensors.insert(name.to_string(), tensor);
    }

    /// Binds (or rebinds) `name` to an integer.
    pub fn bind_int(&mut self, name: &str, value: i64) {
        self.tensors.remove(name);
        self.zarrs.remove(name);
        self.ints.insert(name.to_string(), value);
    }

    /// The tensor bound to `name`.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.tensors.get(name)
    }

    /// The integer bound to `name`.
    pub fn get_int(&self, name: &str) -> Option<i64> {
        self.ints.get(name).copied()
    }

    /// Every bound name, sorted.
    pub fn names(&self) -> Vec<&str> {
        let bound = self.tensors.keys().chain(self.zarrs.keys()).chain(self.ints.keys());
        let mut names: Vec<&str> = bound.map(String::as_str).collect();
        names.sort_unstable();
        names
    }

    pub fn executor(&self) -> Executor {
        self.options.executor
    }

    pub fn options_mut(&mut self) -> &mut RunOptions {
        &mut self.options
    }

    /// Runs one entry typed at the prompt (one or more statements, or a `:` command).
    pub fn feed(&mut self, entry: &str) -> Reply {
        self.feed_at(entry, 0, INPUT_NAME)
    }

    /// Runs the entry `text[start..]`; diagnostics are rendered against all of `text` under
    /// `name`, so that an entry of a script reports its line in the file.
    pub fn feed_at(&mut self, text: &str, start: usize, name: &str) -> Reply {
        let mut reply = Reply::default();
        let start = (0..=start.min(text.len())).rev().find(|&i| text.is_char_boundary(i)).unwrap_or(0);
        // A bug below must not end the session or lose its bindings: report it instead.
        let outcome =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| self.entry(text, start, &mut reply)));
        // Temporaries of helper calls are removed on every path; after a panic some may remain.
        self.tensors.retain(|name, _| is_identifier(name));
        let fail = match outcome {
            Ok(Ok(())) => None,
            Ok(Err(fail)) => Some(fail),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_default();
                Some(Fail::runtime(
                    Diagnostic::error("E0599", format!("internal error: {what}"))
                        .note("the session and its bindings are intact; please report this input"),
                ))
            }
        };
        if let Some(fail) = fail {
            reply.err.push_str(&render(&fail.diag, name, text, self.color));
            reply.failure = Some(fail.kind);
        }
        reply
    }

    fn entry(&mut self, text: &str, start: usize, reply: &mut Reply) -> Result<(), Fail> {
        let rest = &text[start..];
        let indent = rest.len() - rest.trim_start().len();
        if rest.trim_start().starts_with(':') {
            return self.command(text, start + indent, reply);
        }
        self.statements(text, start, reply)
    }

    /// Runs the statements of `text[start..]` in order; a failing one stops the entry.
    fn statements(&mut self, text: &str, start: usize, reply: &mut Reply) -> Result<(), Fail> {
        let program = syntax::parse_program(&masked(text, start)).map_err(Error::from)?;
        for stmt in &program.stmts {
            match &stmt.kind {
                ast::StmtKind::Let { name, value } => {
                    self.check_rebind(&name.name, name.span)?;
                    if let Some(span) = helpers::save_call(value) {
                        return Err(helpers::save_has_no_value(span));
                    }
                    match self.value(value)? {
                        Val::Int(v) => {
                            self.bind_int(&name.name, v);
                            if self.echo_lets {
                                let _ = writeln!(reply.out, "{} = {v}", name.name);
                            }
                        }
                        Val::Tensor(t) => {
                            if self.echo_lets {
                                let _ = writeln!(reply.out, "{}: {}", name.name, type_of(&t));
                            }
                            self.bind(&name.name, t);
                        }
                    }
                }
                ast::StmtKind::Assign { target, .. } => self.assign(stmt, target)?,
                ast::StmtKind::Expr(e) => match &e.kind {
                    ast::ExprKind::Call { callee, args } if callee.name == "save" => {
                        self.save(args, e.span, reply)?;
                    }
                    _ => {
                        let v = self.value(e)?;
                        self.show(&v, reply);
                    }
                },
            }
        }
        Ok(())
    }

    /// Prints a value NumPy-style, followed by its type (integers print bare, like Python's).
    fn show(&self, v: &Val, reply: &mut Reply) {
        match v {
            Val::Int(v) => {
                let _ = writeln!(reply.out, "{v}");
            }
            Val::Tensor(t) => {
                let _ = writeln!(reply.out, "{}\n{}", format_tensor(t, &self.print), type_of(t));
            }
        }
    }

    /// The completion for `line` at byte `pos`.
    pub fn complete(&self, line: &str, pos: usize) -> Completion {
        let dtypes: Vec<&str> = DType::ALL.iter().map(|d| d.name()).collect();
        let functions: Vec<&str> = helpers::HELPERS.iter().chain(sema::OPERATOR_FUNCTIONS).copied().collect();
        let vocab = complete::Vocabulary {
            names: self.names(),
            functions: &functions,
            commands: commands::NAMES,
            dtypes,
        };
        complete::complete(line, pos, &vocab)
    }
}

/// `f32[2, 3]`.
pub(crate) fn type_of(t: &Tensor) -> String {
    type_of_parts(t.dtype(), t.shape())
}

/// `f32[2, 3]`, of a dtype and a shape.
pub(crate) fn type_of_parts(dtype: DType, shape: &[usize]) -> String {
    let shape: Vec<i64> = shape.iter().map(|&d| d as i64).collect();
    format!("{dtype}{}", crate::types::ShapeDisplay(&shape))
}

pub(crate) fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// `text` with everything before `start` blanked (newlines kept, every other character
/// replaced by as many spaces as it has bytes): the parser then sees only the entry, while
/// every span still indexes `text`, so a diagnostic shows the right line and column of a
/// script, or of the expression after a `:` command.
pub(crate) fn masked(text: &str, start: usize) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text[..start].chars() {
        if c == '\n' {
            out.push('\n');
        } else {
            out.extend(std::iter::repeat_n(' ', c.len_utf8()));
        }
    }
    out.push_str(&text[start..]);
    out
}

#[cfg(test)]
mod tests;
