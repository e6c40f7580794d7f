//! The pipeline's layering, enforced (docs/architecture.md draws it): each stage imports only
//! the stages before it, and no two source files import each other, directly or around a
//! circle.
//!
//! Imports are read from the text of `src/`: every `crate::…`, `super::…` and `self::…` path,
//! in `use` trees and inline, resolved to the file that defines it (through a module's
//! `pub use` re-exports to the file behind them). Unit tests (`tests.rs`, and the
//! `#[cfg(test)]` module that ends a file) may drive the whole pipeline and are not read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The stages, lowest first: their top-level modules, and the modules they may import besides
/// their own. A stage imports only stages before it, and skips none it need not reach: the back
/// ends see the plan, never the checked program it came from.
const STAGES: &[(&str, &[&str], &[&str])] = &[
    ("shared vocabulary", &["types", "source", "limits"], &[]),
    ("diagnostics", &["diag"], VOCABULARY),
    ("source → tokens → AST", &["syntax"], &["types", "source", "limits", "diag"]),
    ("AST → checked program", &["sema"], &["types", "source", "limits", "diag", "syntax"]),
    ("checked program → plan IR → verify", &["plan"], &["types", "source", "limits", "diag", "sema"]),
    (
        "loop nest, code generation, interpreter, DirectML",
        &["backend"],
        &["types", "source", "limits", "diag", "plan"],
    ),
    (
        "compile, execute, embed, emit",
        UPPER,
        &["types", "source", "limits", "diag", "syntax", "sema", "plan", "backend"],
    ),
    (
        "REPL, fuzzing",
        &["repl", "fuzz"],
        &[
            "types", "source", "limits", "diag", "syntax", "sema", "plan", "backend", "pipeline", "error",
            "exec", "embed", "session", "measure", "target", "show", "zarr",
        ],
    ),
    (
        "command line",
        &["cli"],
        &[
            "types", "source", "limits", "diag", "syntax", "sema", "plan", "backend", "pipeline", "error",
            "exec", "embed", "session", "measure", "target", "show", "zarr", "repl",
        ],
    ),
];

const VOCABULARY: &[&str] = &["types", "source", "limits"];
const UPPER: &[&str] =
    &["pipeline", "error", "exec", "embed", "session", "measure", "target", "show", "zarr"];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, relative to `src/`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(src()).unwrap().to_path_buf());
        }
    }
}

/// The module path of a file: `sema/ops/mod.rs` → `[sema, ops]`, `plan/ir.rs` → `[plan, ir]`.
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file.iter().map(|p| p.to_string_lossy().into_owned()).collect();
    let last = parts.pop().unwrap();
    let stem = last.trim_end_matches(".rs");
    if !matches!(stem, "mod" | "lib" | "main") {
        parts.push(stem.to_string());
    }
    parts
}

/// The file that defines module `path`, if it is one.
fn file_of(path: &[String]) -> Option<PathBuf> {
    if path.is_empty() {
        return Some(PathBuf::from("lib.rs"));
    }
    let joined: PathBuf = path.iter().collect();
    [joined.with_extension("rs"), joined.join("mod.rs")].into_iter().find(|f| src().join(f).exists())
}

/// Text without comments and string literals (which may mention paths).
fn code_only(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                let mut escaped = false;
                for c in chars.by_ref() {
                    if escaped {
                        escaped = false;
                    } else if c == '\\' {
                        escaped = true;
                    } else if c == '"' {
                        break;
                    }
                }
                out.push_str("\"\"");
            }
            _ => out.push(c),
        }
    }
    out
}

/// Flattens a `use` tree (`a::{b, c::{d, e}}`) into paths.
fn flatten(tree: &str, prefix: &str, out: &mut Vec<String>) {
    let tree = tree.trim();
    match tree.find('{') {
        None => {
            let path = tree.split(" as ").next().unwrap().trim();
            if !path.is_empty() {
                out.push(format!("{prefix}{path}"));
            }
        }
        Some(open) => {
            let head = &tree[..open];
            let body = &tree[open + 1..tree.rfind('}').unwrap()];
            let mut depth = 0;
            let mut start = 0;
            for (i, c) in body.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        flatten(&body[start..i], &format!("{prefix}{head}"), out);
                        start = i + 1;
                    }
                    _ => {}
                }
            }
            flatten(&body[start..], &format!("{prefix}{head}"), out);
        }
    }
}

/// The paths a file names: `use` trees flattened, and inline `crate::`/`super::` paths.
/// `reexports`: whether the file's `pub use` lines count (a module's re-exports are aliases,
/// resolved through, not dependencies of its own).
fn paths_in(code: &str, reexports: bool) -> Vec<String> {
    let mut out = vec![];
    let mut rest = code;
    while let Some(at) = rest.find("use ") {
        let before = &rest[..at];
        let line_start = before.rfind('\n').map_or(0, |i| i + 1);
        let lead = before[line_start..].trim();
        let end = rest[at..].find(';').map_or(rest.len(), |e| at + e);
        if matches!(lead, "" | "pub" | "pub(crate)" | "pub(super)") && (reexports || !lead.starts_with("pub"))
        {
            flatten(&rest[at + 4..end], "", &mut out);
        }
        rest = &rest[end.min(rest.len())..];
        if rest.is_empty() {
            break;
        }
        rest = &rest[1..];
    }
    for root in ["crate::", "super::"] {
        for (at, _) in code.match_indices(root) {
            let ok_before =
                at == 0 || !code[..at].ends_with(|c: char| c.is_alphanumeric() || c == '_' || c == ':');
            if ok_before {
                let path: String = code[at..]
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                    .collect();
                out.push(path.trim_end_matches(':').to_string());
            }
        }
    }
    out
}

struct Crate {
    /// For each module file, its re-exports: item name → the path it stands for.
    reexports: BTreeMap<PathBuf, BTreeMap<String, Vec<String>>>,
}

impl Crate {
    /// Absolute module path of `path` as written in the file of module `here`.
    fn absolute(here: &[String], path: &str) -> Option<Vec<String>> {
        let mut segments: Vec<&str> = path.split("::").filter(|s| !s.is_empty()).collect();
        let mut base: Vec<String> = match *segments.first()? {
            "crate" => vec![],
            "self" => here.to_vec(),
            "super" => {
                // In `a/b.rs` or `a/b/mod.rs` (module a::b), `super` is `a`.
                let mut m = here.to_vec();
                m.pop()?;
                m
            }
            _ => return None, // an external crate, std, or a name in scope
        };
        segments.remove(0);
        while segments.first() == Some(&"super") {
            base.pop()?;
            segments.remove(0);
        }
        base.extend(segments.iter().map(|s| s.to_string()));
        Some(base)
    }

    /// The file that defines what `path` names, following re-exports.
    fn resolve(&self, path: &[String], hops: usize) -> Option<PathBuf> {
        // The longest prefix that is a module file.
        let (k, file) = (0..=path.len()).rev().find_map(|k| file_of(&path[..k]).map(|f| (k, f)))?;
        if k < path.len()
            && hops < 8
            && let Some(target) = self.reexports.get(&file).and_then(|r| r.get(&path[k]))
        {
            let mut target = target.clone();
            target.extend_from_slice(&path[k + 1..]);
            return self.resolve(&target, hops + 1).or(Some(file));
        }
        Some(file)
    }
}

fn read(file: &Path) -> String {
    if file.ends_with("tests.rs") {
        return String::new();
    }
    let text = std::fs::read_to_string(src().join(file)).unwrap();
    let text = text.split("#[cfg(test)]").next().unwrap();
    code_only(text)
}

/// The `pub use` and `pub(crate) use` statements of `code`, each on one line (rustfmt breaks a
/// long one over several).
fn reexports(code: &str) -> Vec<String> {
    let mut statements = vec![];
    let mut lines = code.lines().map(str::trim);
    while let Some(line) = lines.next() {
        if line.starts_with("pub use ") || line.starts_with("pub(crate) use ") {
            let mut statement = line.to_string();
            while !statement.ends_with(';') {
                let Some(next) = lines.next() else { break };
                statement.push(' ');
                statement.push_str(next);
            }
            statements.push(statement);
        }
    }
    statements
}

/// Each file's imports, as the files they resolve to.
fn import_graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut all = vec![];
    files(&src(), &mut all);
    let mut krate = Crate { reexports: BTreeMap::new() };
    for file in &all {
        let here = module_of(file);
        let code = read(file);
        let mut map = BTreeMap::new();
        for line in &reexports(&code) {
            let tree = line.split_once("use ").unwrap().1.trim_end_matches(';');
            let mut paths = vec![];
            flatten(tree, "", &mut paths);
            for p in paths {
                let name = tree_alias(line, &p);
                let p = if p.starts_with("crate::") || p.starts_with("super::") || p.starts_with("self::") {
                    p
                } else {
                    format!("self::{p}")
                };
                if let Some(abs) = Crate::absolute(&here, &p) {
                    map.insert(name, abs);
                }
            }
        }
        krate.reexports.insert(file.clone(), map);
    }
    let mut graph = BTreeMap::new();
    for file in &all {
        let here = module_of(file);
        let mut deps = BTreeSet::new();
        for p in paths_in(&read(file), false) {
            if let Some(abs) = Crate::absolute(&here, &p)
                && let Some(target) = krate.resolve(&abs, 0)
                && &target != file
            {
                deps.insert(target);
            }
        }
        graph.insert(file.clone(), deps);
    }
    graph
}

/// The name a flattened `pub use` path binds: its last segment, or its `as` alias.
fn tree_alias(line: &str, path: &str) -> String {
    let last = path.rsplit("::").next().unwrap().to_string();
    let needle = format!("{last} as ");
    match line.find(&needle) {
        Some(at) => {
            line[at + needle.len()..].chars().take_while(|c| c.is_alphanumeric() || *c == '_').collect()
        }
        None => last,
    }
}

fn top_module(file: &Path) -> Option<String> {
    module_of(file).first().cloned()
}

fn stage_of(file: &Path) -> Option<usize> {
    let top = top_module(file)?;
    STAGES.iter().position(|(_, modules, _)| modules.contains(&top.as_str()))
}

#[test]
fn every_top_level_module_has_a_stage() {
    for entry in std::fs::read_dir(src()).unwrap() {
        let name = entry.unwrap().file_name().to_string_lossy().trim_end_matches(".rs").to_string();
        if !matches!(name.as_str(), "lib" | "main") {
            assert!(
                STAGES.iter().any(|(_, m, _)| m.contains(&name.as_str())),
                "src/{name}: no stage in STAGES"
            );
        }
    }
}

#[test]
fn stages_import_only_what_they_may() {
    let mut wrong = vec![];
    for (file, deps) in import_graph() {
        let Some(stage) = stage_of(&file) else { continue };
        let (name, own, may) = STAGES[stage];
        for dep in deps {
            let Some(top) = top_module(&dep) else { continue }; // lib.rs
            if !own.contains(&top.as_str()) && !may.contains(&top.as_str()) {
                wrong.push(format!("{} ({name}) imports {}", file.display(), dep.display()));
            }
        }
    }
    assert!(wrong.is_empty(), "imports against the layering:\n{}", wrong.join("\n"));
}

#[test]
fn no_source_files_import_each_other_around_a_circle() {
    let graph = import_graph();
    // Depth-first search; a back edge closes a circle.
    fn visit(
        f: &PathBuf,
        graph: &BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        state: &mut BTreeMap<PathBuf, bool>,
        stack: &mut Vec<PathBuf>,
        circles: &mut Vec<String>,
    ) {
        match state.get(f) {
            Some(true) => return,
            Some(false) => {
                let at = stack.iter().position(|s| s == f).unwrap();
                let names: Vec<String> =
                    stack[at..].iter().chain([f]).map(|p| p.display().to_string()).collect();
                circles.push(names.join(" → "));
                return;
            }
            None => {}
        }
        state.insert(f.clone(), false);
        stack.push(f.clone());
        for dep in graph.get(f).into_iter().flatten() {
            visit(dep, graph, state, stack, circles);
        }
        stack.pop();
        state.insert(f.clone(), true);
    }
    let (mut state, mut circles) = (BTreeMap::new(), vec![]);
    for f in graph.keys() {
        visit(f, &graph, &mut state, &mut vec![], &mut circles);
    }
    assert!(circles.is_empty(), "import circles:\n{}", circles.join("\n"));
}

#[test]
fn the_reader_finds_imports() {
    let mut paths = vec![];
    flatten("crate::a::{b, c::{d, e as f}}", "", &mut paths);
    assert_eq!(paths, ["crate::a::b", "crate::a::c::d", "crate::a::c::e"]);
    let graph = import_graph();
    let session = &graph[Path::new("session.rs")];
    assert!(session.contains(Path::new("embed/kernel.rs")), "{session:?}");
    let lower = &graph[Path::new("plan/lower.rs")];
    assert!(lower.contains(Path::new("sema/typed.rs")), "{lower:?}");
}
