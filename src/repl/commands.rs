//! The `:` commands: inspection (`:vars`, `:plan`, `:show`, `:clif`, `:dml`, `:time`), settings
//! (`:backend`), files (`:load`, `:save`), `:help` and `:quit`.

use super::helpers::expand_home;
use super::{Fail, Planned, Repl, Reply, is_identifier, type_of, type_of_parts};
use crate::Executor;
use crate::backend::{RuntimeError, dml, jit, loopnest};
use crate::diag::suggest::closest;
use crate::diag::{Diagnostic, IntoDiagnostic};
use crate::measure;
use crate::show::{SelectError, Selection, terminal};
use crate::source::Span;
use slc_runtime::{Tensor, read_npy, write_npy};
use std::fmt::Write as _;
use std::time::Duration;

/// Every command, for completion and "did you mean".
pub const NAMES: &[&str] =
    &[":help", ":vars", ":plan", ":show", ":clif", ":dml", ":time", ":backend", ":load", ":save", ":quit"];

const HELP: &str = "\
Statements (one or more per line, separated by `;`):
  let NAME = EXPR        evaluate EXPR and bind the result (a tensor, or an integer)
  EXPR                   evaluate and print, NumPy-style, with dtype and shape
  save(EXPR, \"F.npy\")    write a result (atomically)
Helpers (they make data; dtype defaults to f32):
  load(\"F.npy\")  arange(n, shape=[...], dtype=f32)  zeros(shape, dtype=)  ones(shape, dtype=)
  random(shape, dtype=, seed=, high=)  (floats in [0, 1), integers in [0, high), high=10)
";

/// The rest of `:help`, after the operators (which come from the operator table).
const HELP_COMMANDS: &str = "\
Commands:
  :vars                  bound names with dtype, shape and bytes
  :plan [-v] [-g] EXPR   the normalized plan (-v: checked program and every scheduling pass;
                         -g: the shape-generic plan, every dim of the bindings a symbol)
  :show EXPR             a picture of what EXPR selects from its input, numbered in output order
  :clif EXPR             the JIT kernel's Cranelift IR
  :dml EXPR              the DirectML operator graph, as JSON
  :time EXPR             median kernel time, GB/s, and the ratio to memcpy of the same bytes
  :backend [NAME]        show or choose the executor: jit, interp, or cuda (an NVIDIA GPU)
  :load NAME=FILE.npy    bind a .npy file (`:load FILE.npy` binds it to the file's stem), or a
                         Zarr array (NAME=DATA.zarr[/group/array]), read lazily: each
                         evaluation decodes only the chunks it reads
  :save NAME FILE.npy    write a binding to a .npy file (atomically)
  :help  :quit
Keys: Tab completes, Up/Down recall history, Ctrl-C cancels the line, Ctrl-D quits.
An open bracket continues the entry on the next line.
";

/// `:help`: statements and helpers, every operator form (its signature, what it is, an example),
/// then the commands.
fn help() -> String {
    let mut text = HELP.to_string();
    text.push_str("Operators (docs/semantics.md says how each normalizes):\n");
    for op in crate::sema::OPERATORS {
        let _ = writeln!(text, "  {}\n      {}; e.g. {}", op.signature(), op.summary, op.example);
    }
    text + HELP_COMMANDS
}

/// A command's text split into its parts, each with its place in the entry.
struct Parsed<'t> {
    name: &'t str,
    name_span: Span,
    /// The arguments, trimmed, and where they start.
    rest: &'t str,
    rest_start: usize,
}

fn parse(text: &str, at: usize) -> Parsed<'_> {
    let line = &text[at..];
    let after = &line[1..];
    let name_len = after.find(char::is_whitespace).unwrap_or(after.len());
    let name = &after[..name_len];
    let tail = &after[name_len..];
    let rest = tail.trim();
    let rest_start = at + 1 + name_len + (tail.len() - tail.trim_start().len());
    Parsed { name, name_span: Span::new(at, at + 1 + name_len), rest, rest_start }
}

fn usage(message: impl Into<String>, span: Span, label: &str) -> Fail {
    Fail::program(Diagnostic::error("E0507", message).label(span, label))
}

/// `1.234 µs`, `12.0 ms`.
fn duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    match s {
        s if s < 1e-6 => format!("{:.1} ns", s * 1e9),
        s if s < 1e-3 => format!("{:.3} µs", s * 1e6),
        s if s < 1.0 => format!("{:.3} ms", s * 1e3),
        s => format!("{s:.3} s"),
    }
}

/// `96 B`, `4.0 KiB`, `1.5 MiB`.
fn bytes(n: usize) -> String {
    match n {
        n if n < 1 << 10 => format!("{n} B"),
        n if n < 1 << 20 => format!("{:.1} KiB", n as f64 / 1024.0),
        n if n < 1 << 30 => format!("{:.1} MiB", n as f64 / (1 << 20) as f64),
        n => format!("{:.2} GiB", n as f64 / (1 << 30) as f64),
    }
}

impl Repl {
    /// Runs the command at `text[at..]` (`text[at]` is the `:`).
    pub(super) fn command(&mut self, text: &str, at: usize, reply: &mut Reply) -> Result<(), Fail> {
        let cmd = parse(text, at);
        let needs_expr = |what: &str| {
            if cmd.rest.is_empty() {
                Err(usage(
                    format!("`:{}` needs an expression, e.g. `:{} a[::-1]`", cmd.name, cmd.name),
                    cmd.name_span,
                    what,
                ))
            } else {
                Ok(())
            }
        };
        match cmd.name {
            "help" | "h" | "?" => reply.out.push_str(&help()),
            "quit" | "q" | "exit" => reply.quit = true,
            "vars" => self.vars(reply),
            "plan" => {
                // Flags before the expression: -v (every stage), -g (generic: every dim a symbol).
                let (mut verbose, mut generic, mut start) = (false, false, cmd.rest_start);
                loop {
                    let rest = &text[start..];
                    let trimmed = rest.trim_start();
                    let flag = ["-v", "-g"].into_iter().find(|f| {
                        trimmed
                            .strip_prefix(f)
                            .is_some_and(|r| r.is_empty() || r.starts_with(char::is_whitespace))
                    });
                    let Some(flag) = flag else { break };
                    *if flag == "-v" { &mut verbose } else { &mut generic } = true;
                    start += rest.len() - trimmed.len() + 2;
                }
                start += text[start..].len() - text[start..].trim_start().len();
                if text[start..].trim().is_empty() {
                    return Err(usage(
                        "`:plan` needs an expression, e.g. `:plan -v a[::-1]`",
                        cmd.name_span,
                        "after this",
                    ));
                }
                self.with_temps(|repl, temps| {
                    if generic {
                        let (checked, plan) = repl.generic_plan_text(text, start, temps)?;
                        show_generic_plan(&checked, &plan, verbose, reply);
                    } else {
                        let planned = repl.plan_text(text, start, temps)?;
                        show_plan(&planned, verbose, reply);
                    }
                    Ok(())
                })?;
            }
            "show" => {
                needs_expr("after this")?;
                self.with_temps(|repl, temps| {
                    let planned = repl.plan_text(text, cmd.rest_start, temps)?;
                    let selection = Selection::of(&planned.plan, &repl.tensors).map_err(|e| match e {
                        SelectError::Runtime(e) => Fail::from(e),
                        other => {
                            let span = Span::new(cmd.rest_start, cmd.rest_start + cmd.rest.len());
                            usage(other.to_string(), span, "cannot be drawn")
                        }
                    })?;
                    reply.out.push_str(&terminal::render(&selection, cmd.rest, repl.color));
                    let span = Span::new(cmd.rest_start, cmd.rest_start + cmd.rest.len());
                    reply.out.push_str(&repl.chunk_summary(&planned.plan, span)?);
                    Ok(())
                })?;
            }
            "clif" => {
                needs_expr("after this")?;
                self.with_temps(|repl, temps| {
                    let planned = repl.plan_text(text, cmd.rest_start, temps)?;
                    let (nest, ir) = jit::kernel_ir(&planned.plan.lift()).map_err(RuntimeError::from)?;
                    let _ = write!(reply.out, "== loop nest\n{nest}== clif\n{ir}");
                    Ok(())
                })?;
            }
            "dml" => {
                needs_expr("after this")?;
                self.with_temps(|repl, temps| {
                    let planned =
                        repl.plan_text_with(text, cmd.rest_start, temps, crate::pipeline::DML_MASKS)?;
                    dml(&planned, reply)
                })?;
            }
            "time" => {
                needs_expr("after this")?;
                self.with_temps(|repl, temps| {
                    let planned = repl.plan_text(text, cmd.rest_start, temps)?;
                    repl.time(&planned, reply)
                })?;
            }
            "backend" => match cmd.rest {
                "" => {
                    let _ = writeln!(reply.out, "backend: {}", self.executor().name());
                }
                name => {
                    let span = Span::new(cmd.rest_start, cmd.rest_start + name.len());
                    match Executor::from_name(name) {
                        // The GPU is looked for now: without one, the back end stays as it was.
                        Some(Executor::Cuda) if let Err(e) = crate::exec::Runnable::prepare_gpu() => {
                            return Err(Fail::runtime(e.into_diagnostic().label(span, "no GPU for this")));
                        }
                        Some(b) => {
                            self.options_mut().executor = b;
                            let _ = writeln!(reply.out, "backend: {}", b.name());
                        }
                        None => {
                            return Err(usage(
                                format!("`{name}` is not a back end; use jit, interp or cuda"),
                                span,
                                "not a back end",
                            ));
                        }
                    }
                }
            },
            "load" => self.load_command(&cmd, reply)?,
            "save" => self.save_command(&cmd, reply)?,
            other => {
                let typed = format!(":{other}");
                let suggestion = closest(&typed, NAMES.iter().copied(), 2);
                let help = match suggestion {
                    Some(s) => format!("did you mean `{s}`?"),
                    None => format!("commands: {}", NAMES.join(" ")),
                };
                return Err(Fail::program(
                    Diagnostic::error("E0506", format!("unknown command `{typed}`"))
                        .label(cmd.name_span, "not a command")
                        .help(help),
                ));
            }
        }
        Ok(())
    }

    fn vars(&self, reply: &mut Reply) {
        if self.tensors.is_empty() && self.zarrs.is_empty() && self.ints.is_empty() {
            reply.out.push_str("no bindings yet; try `let a = arange(24, shape=[2, 3, 4])`\n");
            return;
        }
        let mut rows =
            vec![["name".to_string(), "dtype".into(), "shape".into(), "bytes".into(), String::new()]];
        let shape_of = |ty: String| ty.trim_start_matches(|c: char| c != '[').to_string();
        for (name, t) in &self.tensors {
            rows.push([
                name.clone(),
                t.dtype().to_string(),
                shape_of(type_of(t)),
                t.nbytes().to_string(),
                String::new(),
            ]);
        }
        for (name, lazy) in &self.zarrs {
            let (dtype, shape) = (lazy.zarr.dtype(), lazy.zarr.shape());
            let source = format!("Zarr '{}', read lazily", lazy.path);
            let bytes = lazy.zarr.data_bytes().to_string();
            rows.push([
                name.clone(),
                dtype.to_string(),
                shape_of(type_of_parts(dtype, shape)),
                bytes,
                source,
            ]);
        }
        for (name, v) in &self.ints {
            rows.push([name.clone(), "int".into(), format!("= {v}"), String::new(), String::new()]);
        }
        rows[1..].sort_by(|a, b| a[0].cmp(&b[0]));
        let widths: Vec<usize> =
            (0..4).map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0)).collect();
        for row in &rows {
            let line = format!(
                "{:<w0$}  {:<w1$}  {:<w2$}  {:>w3$}  {}",
                row[0],
                row[1],
                row[2],
                row[3],
                row[4],
                w0 = widths[0],
                w1 = widths[1],
                w2 = widths[2],
                w3 = widths[3]
            );
            let _ = writeln!(reply.out, "{}", line.trim_end());
        }
    }

    /// `:load NAME=FILE.npy` or `:load FILE.npy` (or a Zarr store: `:load a=data.zarr`).
    fn load_command(&mut self, cmd: &Parsed, reply: &mut Reply) -> Result<(), Fail> {
        if cmd.rest.is_empty() {
            return Err(usage("`:load` needs NAME=FILE.npy", cmd.name_span, "after this"));
        }
        let (name, path, name_span, path_span) = match cmd.rest.split_once('=') {
            Some((name, path)) => {
                let name = name.trim();
                let path_start = cmd.rest_start + cmd.rest.len() - path.trim_start().len();
                let name_span = Span::new(cmd.rest_start, cmd.rest_start + name.len());
                (
                    name.to_string(),
                    path.trim(),
                    name_span,
                    Span::new(path_start, cmd.rest_start + cmd.rest.len()),
                )
            }
            None => {
                let path = cmd.rest;
                let span = Span::new(cmd.rest_start, cmd.rest_start + path.len());
                let stem =
                    std::path::Path::new(path).file_stem().and_then(|s| s.to_str()).unwrap_or_default();
                (stem.to_string(), path, span, span)
            }
        };
        if !is_identifier(&name) {
            return Err(usage(
                format!("`{name}` is not a valid name; write :load NAME=FILE.npy"),
                name_span,
                "not a name",
            ));
        }
        self.check_rebind(&name, name_span)?;
        let file = expand_home(path);
        // Of a Zarr array, only the metadata is read: each evaluation reads the chunks it needs.
        if !file.is_file() && crate::zarr::is_zarr(&file) {
            let line = crate::zarr::open_zarr(&file)
                .and_then(|zarr| self.bind_zarr(&name, zarr, path))
                .map_err(|e| Fail::runtime(Diagnostic::error("E0503", e).label(path_span, "this store")))?;
            let _ = writeln!(reply.out, "{line}");
            return Ok(());
        }
        let tensor = read_npy(&file).map_err(|e| {
            Fail::runtime(Diagnostic::error("E0503", e.to_string()).label(path_span, "this file"))
        })?;
        let _ = writeln!(reply.out, "{name}: {} (from '{path}')", type_of(&tensor));
        self.bind(&name, tensor);
        Ok(())
    }

    /// `:save NAME FILE.npy`.
    fn save_command(&mut self, cmd: &Parsed, reply: &mut Reply) -> Result<(), Fail> {
        let Some((name, path)) = cmd.rest.split_once(char::is_whitespace) else {
            return Err(usage("`:save` needs NAME FILE.npy", cmd.name_span, "after this"));
        };
        let path = path.trim();
        let name_span = Span::new(cmd.rest_start, cmd.rest_start + name.len());
        let path_span =
            Span::new(cmd.rest_start + cmd.rest.len() - path.len(), cmd.rest_start + cmd.rest.len());
        let tensor = match (self.tensors.get(name), self.ints.get(name)) {
            (Some(t), _) => t.clone(),
            (None, Some(&v)) => Tensor::scalar_i64(v),
            // A lazy Zarr array is read whole.
            (None, None) if let Some(read) = self.read_whole(name, name_span) => read?,
            (None, None) => {
                let names = self.names().join(", ");
                let help = if names.is_empty() {
                    "nothing is bound yet".to_string()
                } else {
                    format!("bound names: {names}")
                };
                return Err(Fail::program(
                    Diagnostic::error("E0101", format!("`{name}` is not bound"))
                        .label(name_span, "not bound")
                        .help(help),
                ));
            }
        };
        write_npy(&expand_home(path), &tensor).map_err(|e| {
            Fail::runtime(Diagnostic::error("E0503", e.to_string()).label(path_span, "this file"))
        })?;
        let _ = writeln!(reply.out, "saved {} to '{path}'", type_of(&tensor));
        Ok(())
    }

    /// `:time`: the kernel against memcpy of its output's bytes, sampled alternately. The chunks
    /// of lazy Zarr arrays are read once, before: the kernel runs on the boxes read.
    fn time(&self, planned: &Planned, reply: &mut Reply) -> Result<(), Fail> {
        self.check_output(planned)?;
        let read = self.read_lazy(planned)?;
        // One ordinary run first: its errors get their spans, and the kernel gets compiled.
        let out = self.run_read(planned, &read)?;
        let plan = read.plan(planned);
        let args = self.plan_inputs(plan, &read)?;
        let args: Vec<&Tensor> = args.iter().map(|a| &**a).collect();
        let threads = self.options.threads;
        let runnable = self.runnable(plan)?;
        let once = || runnable.run(plan, &args, threads).map(drop);
        let out_bytes = out.nbytes();
        let moved = measure::moved_bytes(plan, &args, out_bytes);
        let t = measure::time_against_memcpy(once, out_bytes, moved, self.time_budget)?;
        let threads = match self.options.executor {
            Executor::Jit => format!(", {threads} thread{}", if threads == 1 { "" } else { "s" }),
            // The GPU's time includes the copies to and from the device.
            Executor::Interpreter => String::new(),
            Executor::Cuda => ", with its copies to and from the device".into(),
        };
        let _ = writeln!(
            reply.out,
            "kernel {:>12}  median of {} runs ({}{threads})\nmemcpy {:>12}  median, same {} output\nratio  {:>12.2}  bandwidth {:.2} GB/s ({} read and written)",
            duration(t.kernel),
            t.samples,
            self.options.executor.name(),
            duration(t.memcpy),
            bytes(t.out_bytes),
            t.ratio(),
            t.gb_per_s(),
            bytes(t.moved_bytes),
        );
        if !read.zarrs.chunks.is_empty() {
            let _ = writeln!(
                reply.out,
                "read   {:>12}  the Zarr chunks, once, before the runs:",
                duration(read.took)
            );
            for count in &read.zarrs.chunks {
                let _ = writeln!(reply.out, "{}", count.timing_line());
            }
        }
        Ok(())
    }
}

/// `:plan`: the plan; with `-v` also the checked program and the loop nest after every
/// scheduling pass (a pass that changes nothing says so).
fn show_plan(planned: &Planned, verbose: bool, reply: &mut Reply) {
    if !verbose {
        let _ = write!(reply.out, "{}", planned.plan);
        return;
    }
    let _ = write!(reply.out, "== checked\n{}\n== plan\n{}", planned.checked, planned.plan);
    let mut changed = vec![];
    loopnest::schedule(&planned.plan, jit::host_target(), |pass, nest| {
        changed.push(pass.to_string());
        let title =
            if pass == "initial" { "loop nest (initial)".to_string() } else { format!("after {pass}") };
        let _ = write!(reply.out, "== {title}\n{nest}");
    });
    for pass in loopnest::PASSES {
        if !changed.iter().any(|c| c == pass.name) {
            let _ = writeln!(reply.out, "== {}: no change", pass.name);
        }
    }
}

/// `:plan -g`: the generic plan (and with `-v` the checked program and the generic loop nest).
fn show_generic_plan(
    checked: &crate::sema::TExpr,
    plan: &crate::plan::VerifiedGenericPlan,
    verbose: bool,
    reply: &mut Reply,
) {
    if !verbose {
        let _ = write!(reply.out, "{}", **plan);
        return;
    }
    let _ = write!(reply.out, "== checked\n{checked}\n== plan\n{}", **plan);
    let nest = loopnest::schedule_generic(plan, jit::host_target(), |_, _| {});
    let _ = write!(reply.out, "== loop nest\n{nest}");
}

/// `:dml`: the DirectML operator graph the plan lowers to (at the default feature level), as
/// the JSON that `slc compile --target dml` writes.
fn dml(planned: &Planned, reply: &mut Reply) -> Result<(), Fail> {
    let graph = dml::lower(&planned.plan, &dml::DmlOptions::default())
        .map_err(|e| Fail::program(e.into_diagnostic()))?;
    let _ = writeln!(reply.out, "{}", graph.to_json().trim_end());
    Ok(())
}
