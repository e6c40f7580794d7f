//! The front ends of the [`Repl`] core: rustyline at a terminal (history, line editing, Tab
//! completion, multi-line entries while brackets are open), and a line reader for pipes and
//! scripts.

use super::complete::Completion;
use super::{FailureKind, Repl, is_complete};
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::error::ReadlineError;
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::history::FileHistory;
use rustyline::validate::{ValidationContext, ValidationResult, Validator};
use rustyline::{CompletionType, Config, Context, Editor, Helper};
use std::borrow::Cow;
use std::cell::RefCell;
use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::rc::Rc;

/// The prompt, and the one shown while an entry continues.
pub const PROMPT: &str = "slc> ";

/// Where history is kept: `$SLC_HISTORY` if set (empty: no history file), else
/// `slc/history` in the user's data directory (`~/.local/share` on Linux).
pub fn history_path() -> Option<PathBuf> {
    match std::env::var_os("SLC_HISTORY") {
        Some(p) if p.is_empty() => None,
        Some(p) => Some(PathBuf::from(p)),
        None => dirs::data_dir().map(|d| d.join("slc").join("history")),
    }
}

/// rustyline's view of the core: completion and the multi-line rule come from it.
struct ReplHelper {
    repl: Rc<RefCell<Repl>>,
    files: FilenameCompleter,
    color: bool,
}

impl Completer for ReplHelper {
    type Candidate = Pair;

    fn complete(&self, line: &str, pos: usize, _ctx: &Context<'_>) -> rustyline::Result<(usize, Vec<Pair>)> {
        // Completion runs while no entry is being evaluated, so the core is free to borrow.
        let Ok(repl) = self.repl.try_borrow() else { return Ok((pos, vec![])) };
        match repl.complete(line, pos) {
            Completion::Words { start, candidates } => Ok((
                start,
                candidates.into_iter().map(|c| Pair { display: c.clone(), replacement: c }).collect(),
            )),
            Completion::Path => self.files.complete_path(line, pos),
        }
    }
}

impl Validator for ReplHelper {
    fn validate(&self, ctx: &mut ValidationContext) -> rustyline::Result<ValidationResult> {
        Ok(if is_complete(ctx.input()) {
            ValidationResult::Valid(None)
        } else {
            ValidationResult::Incomplete
        })
    }
}

impl Hinter for ReplHelper {
    type Hint = String;
}

impl Highlighter for ReplHelper {
    fn highlight_prompt<'b, 's: 'b, 'p: 'b>(&'s self, prompt: &'p str, default: bool) -> Cow<'b, str> {
        if self.color && default {
            Cow::Owned(format!("\x1b[1;32m{}\x1b[0m ", prompt.trim_end()))
        } else {
            Cow::Borrowed(prompt)
        }
    }
}

impl Helper for ReplHelper {}

/// Runs the REPL at a terminal until `:quit` or Ctrl-D. `history` is loaded first and every
/// entry is appended to it as it is run, so a crash or a second session loses nothing.
pub fn interactive(repl: Repl, history: Option<PathBuf>) -> Result<(), ReadlineError> {
    let color = repl.color;
    let repl = Rc::new(RefCell::new(repl));
    let config = Config::builder()
        .auto_add_history(false)
        .history_ignore_dups(true)?
        .max_history_size(10_000)?
        .completion_type(CompletionType::List)
        .build();
    let mut rl: Editor<ReplHelper, FileHistory> = Editor::with_config(config)?;
    rl.set_helper(Some(ReplHelper { repl: repl.clone(), files: FilenameCompleter::new(), color }));
    let mut history_ok = true;
    if let Some(path) = &history {
        if let Some(dir) = path.parent() {
            let _ = std::fs::create_dir_all(dir);
        }
        match rl.load_history(path) {
            Ok(()) => {}
            Err(ReadlineError::Io(e)) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                eprintln!("warning: cannot read history '{}': {e}", path.display());
            }
        }
    }
    println!("slc {} - a slicing workbench. :help for help, Ctrl-D to quit.", env!("CARGO_PKG_VERSION"));
    loop {
        match rl.readline(PROMPT) {
            Ok(line) => {
                if line.trim().is_empty() {
                    continue;
                }
                let _ = rl.add_history_entry(line.as_str());
                if let (Some(path), true) = (&history, history_ok)
                    && let Err(e) = rl.append_history(path)
                {
                    eprintln!("warning: cannot write history '{}': {e} (not trying again)", path.display());
                    history_ok = false;
                }
                let reply = repl.borrow_mut().feed(&line);
                print_reply(&reply.out, &reply.err);
                if reply.quit {
                    break;
                }
            }
            // Ctrl-C: drop the line being edited, keep the session.
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => break,
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

fn print_reply(out: &str, err: &str) {
    let mut stdout = std::io::stdout().lock();
    let _ = stdout.write_all(out.as_bytes());
    let _ = stdout.flush();
    let mut stderr = std::io::stderr().lock();
    let _ = stderr.write_all(err.as_bytes());
    let _ = stderr.flush();
}

/// Groups lines into entries: an entry goes on while a bracket is open. Each entry comes with
/// blank lines in front standing for the lines before it, so its diagnostics carry its line
/// number in the script.
#[derive(Default)]
pub struct Entries {
    pending: String,
    /// Lines before the pending entry.
    first_line: usize,
    /// Lines taken so far.
    lines: usize,
}

impl Entries {
    /// Takes one line (without its newline); returns an entry once it is complete, as
    /// `(text, start)` for [`Repl::feed_at`].
    pub fn push(&mut self, line: &str) -> Option<(String, usize)> {
        if self.pending.is_empty() {
            self.first_line = self.lines;
        } else {
            self.pending.push('\n');
        }
        self.pending.push_str(line);
        self.lines += 1;
        if is_complete(&self.pending) { self.take() } else { None }
    }

    /// The last entry, even with brackets still open (the parser then reports them).
    pub fn finish(&mut self) -> Option<(String, usize)> {
        if self.pending.trim().is_empty() { None } else { self.take() }
    }

    fn take(&mut self) -> Option<(String, usize)> {
        let entry = std::mem::take(&mut self.pending);
        if entry.trim().is_empty() {
            return None;
        }
        let mut text = "\n".repeat(self.first_line);
        let start = text.len();
        text.push_str(&entry);
        Some((text, start))
    }
}

/// Runs entries read from `input` (a pipe or a script) without prompts, printing to `out` and
/// `err`. With `stop_on_error` the first failure ends the run (`slc run`); otherwise every
/// entry runs, as typed at a prompt. Returns the first failure, if any.
pub fn run_lines(
    repl: &mut Repl,
    input: impl BufRead,
    name: &str,
    stop_on_error: bool,
    out: &mut impl Write,
    err: &mut impl Write,
) -> Result<Option<FailureKind>, std::io::Error> {
    let mut entries = Entries::default();
    let mut first_failure = None;
    let mut lines = input.lines();
    loop {
        let entry = match lines.next() {
            Some(line) => match entries.push(line?.trim_end_matches('\r')) {
                Some(entry) => entry,
                None => continue,
            },
            None => match entries.finish() {
                Some(entry) => entry,
                None => break,
            },
        };
        let reply = repl.feed_at(&entry.0, entry.1, name);
        out.write_all(reply.out.as_bytes())?;
        out.flush()?;
        err.write_all(reply.err.as_bytes())?;
        err.flush()?;
        if let Some(kind) = reply.failure {
            first_failure.get_or_insert(kind);
            if stop_on_error {
                break;
            }
        }
        if reply.quit {
            break;
        }
    }
    Ok(first_failure)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(src: &str, stop: bool) -> (String, String, Option<FailureKind>) {
        let mut repl = Repl::new();
        repl.echo_lets = false;
        let (mut out, mut err) = (vec![], vec![]);
        let failure = run_lines(&mut repl, src.as_bytes(), "script.slc", stop, &mut out, &mut err).unwrap();
        (String::from_utf8(out).unwrap(), String::from_utf8(err).unwrap(), failure)
    }

    #[test]
    fn entries_span_lines_while_brackets_are_open() {
        let mut e = Entries::default();
        assert_eq!(e.push("let a = 1"), Some(("let a = 1".to_string(), 0)));
        assert_eq!(e.push(""), None);
        assert_eq!(e.push("a[0,"), None);
        assert_eq!(e.push("  1]"), Some(("\n\na[0,\n  1]".to_string(), 2)));
        assert_eq!(e.push("(("), None);
        assert_eq!(e.finish(), Some(("\n\n\n\n((".to_string(), 4)));
        assert_eq!(e.finish(), None);
    }

    #[test]
    fn a_script_runs_in_order_and_reports_its_line() {
        let src = "# a script\nlet a = arange(6, shape=[2, 3], dtype=i64)\na[::-1,\n  0]\nlet b = a[5]\na\n";
        let (out, err, failure) = run(src, true);
        assert_eq!(out, "[3 0]\ni64[2]\n");
        assert_eq!(failure, Some(FailureKind::Program));
        assert!(err.contains("script.slc:5:"), "{err}");
        assert!(err.contains("index 5 is out of bounds for axis 0 with size 2"), "{err}");
    }

    #[test]
    fn piped_input_goes_on_after_an_error() {
        let (out, err, failure) = run("let a = arange(4, dtype=i32)\nnope\na[::2]\n", false);
        assert_eq!(out, "[0 2]\ni32[2]\n");
        assert!(err.contains("`nope` is not bound") || err.contains("nope"), "{err}");
        assert_eq!(failure, Some(FailureKind::Program));
        let (_, _, failure) = run(":quit\nnope\n", false);
        assert_eq!(failure, None);
    }

    #[test]
    fn unclosed_bracket_at_the_end_is_reported() {
        let (_, err, failure) = run("let a = arange(3)\na[0", true);
        assert_eq!(failure, Some(FailureKind::Program));
        assert!(err.contains("script.slc:2"), "{err}");
    }
}
