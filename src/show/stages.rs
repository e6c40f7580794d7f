//! A chain, stage by stage: `a[1:][::-1, ::2][i]` read as `a[1:]`, then `a[1:][::-1, ::2]`,
//! then the whole. Each stage is a program of its own, compiled and drawn like any other, so
//! the reader sees what each step adds to the one access the chain fuses into.

use super::Selection;
use crate::sema::{InputTypes, InputValues, OPERATOR_FUNCTIONS};
use crate::syntax::{self, ast};

/// The texts of the stages of `src`, innermost first, ending with the whole expression: each
/// indexing and each operator call whose data is itself a stage. A program that is not one
/// expression, or is no chain, is one stage.
pub fn chain_texts(src: &str) -> Vec<String> {
    let Ok(program) = syntax::parse_program(src) else { return vec![src.to_string()] };
    let [ast::Stmt { kind: ast::StmtKind::Expr(top), .. }] = program.stmts.as_slice() else {
        return vec![src.to_string()];
    };
    let mut stages = vec![];
    let mut at = top;
    loop {
        let data = match &at.kind {
            ast::ExprKind::Index { base, .. } => base.as_ref(),
            ast::ExprKind::Call { callee, args } if OPERATOR_FUNCTIONS.contains(&callee.name.as_str()) => {
                // `data` by name, or else the first positional argument.
                let named = args.iter().find(|a| a.name.as_ref().is_some_and(|n| n.name == "data"));
                match named.or_else(|| args.iter().find(|a| a.name.is_none())) {
                    Some(arg) => &arg.value,
                    None => break,
                }
            }
            _ => break,
        };
        // The stage as written: its span of the source.
        stages.push(src.get(at.span.start..at.span.end).unwrap_or(src).to_string());
        at = data;
    }
    stages.reverse();
    if stages.len() < 2 {
        return vec![src.to_string()];
    }
    stages
}

/// The selection of each stage of `src` on the same input, with the stage's text; just the
/// whole program when a stage cannot be drawn alone (it fails to compile, or reads another
/// tensor).
pub fn chain_selections(
    src: &str,
    whole: Selection,
    types: &InputTypes,
    values: &InputValues,
) -> Vec<(String, Selection)> {
    let texts = chain_texts(src);
    let (last, inner) = texts.split_last().expect("one stage or more");
    let mut stages = vec![];
    for text in inner {
        let stage = crate::compile_with_values(text, types, values)
            .ok()
            .and_then(|c| Selection::of(&c.plan, values).ok());
        match stage {
            Some(sel) if sel.input == whole.input => stages.push((text.clone(), sel)),
            _ => return vec![(src.to_string(), whole)],
        }
    }
    stages.push((last.clone(), whole));
    stages
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_splits_at_each_indexing_and_operator() {
        assert_eq!(chain_texts("a[1:][::-1, ::2][i]"), ["a[1:]", "a[1:][::-1, ::2]", "a[1:][::-1, ::2][i]"]);
        assert_eq!(chain_texts("gather(a[::2], i, axis=1)"), ["a[::2]", "gather(a[::2], i, axis=1)"]);
        assert_eq!(chain_texts("a[1:]"), ["a[1:]"]);
        assert_eq!(chain_texts("let b = a[1:]; b[0]"), ["let b = a[1:]; b[0]"]);
    }
}
