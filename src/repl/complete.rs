//! Pure text functions the line editor needs: whether an entry is complete (brackets closed),
//! and what a Tab at the cursor could complete to.

pub use crate::syntax::token::KEYWORDS;

/// Attributes after a `.`.
pub const ATTRIBUTES: &[&str] = &["shape", "ndim", "size"];

/// Whether `text` can be run as it is: every `(`, `[` and `{` opened outside strings and
/// comments is closed. An extra closing bracket counts as complete, so that the parser reports it.
pub fn is_complete(text: &str) -> bool {
    bracket_depth(text) <= 0
}

/// Open brackets minus closed ones, ignoring `#` comments and string literals (which, as in the
/// lexer, end at their quote or at the end of the line).
fn bracket_depth(text: &str) -> i64 {
    let mut depth = 0i64;
    let mut quote: Option<char> = None;
    let mut comment = false;
    for c in text.chars() {
        if c == '\n' {
            quote = None;
            comment = false;
            continue;
        }
        if comment {
            continue;
        }
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None => match c {
                '"' | '\'' => quote = Some(c),
                '#' => comment = true,
                '(' | '[' | '{' => depth += 1,
                ')' | ']' | '}' => depth -= 1,
                _ => {}
            },
        }
    }
    depth
}

/// The quote character of a string literal still open at the end of `text`, if any.
pub fn open_string(text: &str) -> bool {
    let line = text.rsplit('\n').next().unwrap_or(text);
    let mut quote: Option<char> = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '#' => return false,
            None if c == '"' || c == '\'' => quote = Some(c),
            None => {}
        }
    }
    quote.is_some()
}

/// What Tab completes at the cursor.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Completion {
    /// Replace `line[start..pos]` with one of the candidates.
    Words { start: usize, candidates: Vec<String> },
    /// A file path is being typed (inside a string, or a `:load`/`:save` file argument): the
    /// front end completes it from the file system.
    Path,
}

/// Everything completion may offer besides the fixed lists.
pub struct Vocabulary<'a> {
    /// Bound names (tensors and integers).
    pub names: Vec<&'a str>,
    /// Functions: the REPL's helpers and the language's operator forms.
    pub functions: &'a [&'a str],
    /// `:` commands, colon included.
    pub commands: &'a [&'a str],
    /// Dtype names, for `dtype=`.
    pub dtypes: Vec<&'a str>,
}

fn is_word(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// The completion for `line` with the cursor at byte `pos`.
pub fn complete(line: &str, pos: usize, vocab: &Vocabulary) -> Completion {
    let pos = pos.min(line.len());
    let pos = (0..=pos).rev().find(|&p| line.is_char_boundary(p)).unwrap_or(0);
    let head = &line[..pos];
    let start = head
        .rfind(|c: char| !is_word(c))
        .map_or(0, |i| i + head[i..].chars().next().map_or(1, char::len_utf8));
    let word = &head[start..];
    let words = |candidates: Vec<String>| {
        let mut c: Vec<String> = candidates.into_iter().filter(|c| c.starts_with(word)).collect();
        c.sort();
        c.dedup();
        Completion::Words { start, candidates: c }
    };

    let trimmed = head.trim_start();
    if let Some(command_line) = trimmed.strip_prefix(':') {
        let indent = head.len() - trimmed.len();
        match command_line.split_once(char::is_whitespace) {
            // Still typing the command's name.
            None => {
                let typed = &head[indent..];
                let mut c: Vec<String> =
                    vocab.commands.iter().filter(|c| c.starts_with(typed)).map(|c| c.to_string()).collect();
                c.sort();
                return Completion::Words { start: indent, candidates: c };
            }
            Some((name, rest)) => match name {
                "backend" => return words(vec!["jit".into(), "interp".into(), "cuda".into()]),
                "load" if !rest.contains('=') => return words(names(vocab)),
                "load" => return Completion::Path,
                "save" if rest.trim_start().contains(char::is_whitespace) => return Completion::Path,
                "save" => return words(names(vocab)),
                "plan" | "clif" | "dml" | "time" => {} // an expression follows
                _ => return Completion::Words { start: pos, candidates: vec![] },
            },
        }
    }
    if open_string(head) {
        return Completion::Path;
    }
    let before = head[..start].trim_end();
    if head[..start].ends_with('.') {
        return words(ATTRIBUTES.iter().map(|s| s.to_string()).collect());
    }
    if before.ends_with('=') && before[..before.len() - 1].trim_end().ends_with("dtype") {
        return words(vocab.dtypes.iter().map(|s| s.to_string()).collect());
    }
    let mut all = names(vocab);
    all.extend(vocab.functions.iter().map(|f| format!("{f}(")));
    all.extend(KEYWORDS.iter().map(|k| k.to_string()));
    words(all)
}

fn names(vocab: &Vocabulary) -> Vec<String> {
    vocab.names.iter().map(|s| s.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vocab() -> Vocabulary<'static> {
        Vocabulary {
            names: vec!["alpha", "beta", "k"],
            functions: &["arange", "gather", "load"],
            commands: &[":backend", ":help", ":load", ":plan", ":quit", ":save", ":time"],
            dtypes: vec!["f32", "f64", "i64"],
        }
    }

    fn words(line: &str) -> (usize, Vec<String>) {
        match complete(line, line.len(), &vocab()) {
            Completion::Words { start, candidates } => (start, candidates),
            Completion::Path => panic!("path completion for {line:?}"),
        }
    }

    #[test]
    fn completeness_follows_brackets_outside_strings_and_comments() {
        assert!(is_complete("a[1:, ::-1]"));
        assert!(!is_complete("a[1:,"));
        assert!(!is_complete("gather(a, [0,\n 1]"));
        assert!(is_complete("gather(a, [0,\n 1], axis=0)"));
        assert!(is_complete("load(\"x[.npy\")"));
        assert!(is_complete("a # [ not a bracket"));
        assert!(!is_complete("a[  # comment ]\n"));
        assert!(is_complete("a]]"));
        assert!(is_complete(""));
        assert!(!is_complete(":plan a[0,"));
    }

    #[test]
    fn names_functions_and_keywords() {
        assert_eq!(words("al"), (0, vec!["alpha".to_string()]));
        assert_eq!(words("a[0] + al").1, vec!["alpha"]);
        assert_eq!(words("ar").1, vec!["arange("]);
        assert_eq!(words("le").1, vec!["let"]);
        assert_eq!(words("a[ne").1, vec!["newaxis"]);
        let (start, c) = words("let b = alpha[::2, g");
        assert_eq!((start, c), (19, vec!["gather(".to_string()]));
        assert!(words("").1.contains(&"beta".to_string()));
    }

    #[test]
    fn attributes_and_dtypes() {
        assert_eq!(words("alpha.sh").1, vec!["shape"]);
        assert_eq!(words("alpha.").1, vec!["ndim", "shape", "size"]);
        assert_eq!(words("arange(6, dtype=f").1, vec!["f32", "f64"]);
        assert_eq!(words("zeros(3, dtype = i").1, vec!["i64"]);
    }

    #[test]
    fn commands() {
        assert_eq!(words(":p"), (0, vec![":plan".to_string()]));
        assert_eq!(words("  :qu"), (2, vec![":quit".to_string()]));
        assert_eq!(words(":").1.len(), 7);
        assert_eq!(words(":backend i").1, vec!["interp"]);
        assert_eq!(words(":plan alpha[b").1, vec!["beta"]);
        assert_eq!(words(":save al").1, vec!["alpha"]);
        assert_eq!(words(":load k").1, vec!["k"]);
        assert_eq!(words(":vars x").1, Vec::<String>::new());
    }

    #[test]
    fn paths() {
        let v = vocab();
        assert_eq!(complete("load(\"da", 8, &v), Completion::Path);
        assert_eq!(complete(":load a=da", 10, &v), Completion::Path);
        assert_eq!(complete(":save alpha out", 15, &v), Completion::Path);
        assert!(matches!(complete("load(\"x.npy\")[", 14, &v), Completion::Words { .. }));
    }

    #[test]
    fn odd_cursor_positions_do_not_panic() {
        let v = vocab();
        for line in ["", "é", "aé[", ":", "::", "\"", "a.", "dtype="] {
            for pos in 0..=line.len() + 2 {
                let _ = complete(line, pos, &v);
            }
        }
    }
}
