//! One snapshot per file in tests/cases: `ok/*.slc` snapshot the checked program and the plan,
//! `err/*.slc` the rendered diagnostic (no colour). Each file starts with
//! `# inputs: a=f32[3,4], i=i64[2]`. Review changes with `cargo insta review`.

use slc::sema::InputTypes;
use slc::types::TensorType;

fn inputs_of(src: &str) -> InputTypes {
    let header =
        src.lines().next().and_then(|l| l.strip_prefix("# inputs:")).expect("first line: # inputs: ...");
    let mut types = InputTypes::new();
    // Split at top-level commas only (a type's dims contain commas too).
    let (mut depth, mut start) = (0, 0);
    let bytes = header.as_bytes();
    for i in 0..=bytes.len() {
        let c = bytes.get(i).copied();
        match c {
            Some(b'[') => depth += 1,
            Some(b']') => depth -= 1,
            Some(b',') if depth > 0 => {}
            Some(b',') | None => {
                let decl = header[start..i].trim();
                if !decl.is_empty() {
                    let (name, ty) = decl.split_once('=').expect("NAME=TYPE");
                    let ty: TensorType = ty.parse().expect("a tensor type");
                    types.insert(name.trim().to_string(), ty);
                }
                start = i + 1;
            }
            _ => {}
        }
    }
    types
}

#[test]
fn ok_cases() {
    insta::glob!("cases/ok/*.slc", |path| {
        let src = std::fs::read_to_string(path).unwrap();
        let compiled = slc::compile(&src, &inputs_of(&src)).unwrap_or_else(|e| panic!("{}", e.render(&src)));
        let reparsed = slc::plan::parse::parse(&compiled.plan.to_string()).expect("printed plans parse");
        assert_eq!(&reparsed, compiled.plan.plan(), "plan text round trip");
        insta::assert_snapshot!(format!(
            "{src}\n== checked\n{}\n\n== plan\n{}",
            compiled.checked, compiled.plan
        ));
    });
}

#[test]
fn err_cases() {
    insta::glob!("cases/err/*.slc", |path| {
        let src = std::fs::read_to_string(path).unwrap();
        let err = match slc::compile(&src, &inputs_of(&src)) {
            Ok(c) => panic!("{} compiled, but must fail:\n{}", path.display(), c.plan),
            Err(e) => e,
        };
        insta::assert_snapshot!(format!("{src}\n{}", err.render(&src)));
    });
}
