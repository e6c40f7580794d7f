//! The fuzzer's store programs: assignments and scatters over the inputs of
//! [`program`](super::program) (docs/semantics.md, Stores, Scatters).

use super::{Draw, chain, elements_literal, index};

/// A store over [`program`](super::program)'s inputs: an assignment (`=`, `+=`, `*=`) through a subscript of
/// `program`'s kinds, or a scatter (docs/semantics.md, Stores, Scatters). Not drawn by
/// [`program`](super::program): a store is only ever a program's result, and the back ends that refuse store
/// plans (AOT objects) take `program`'s programs. Most are valid.
pub fn store_program(r: &mut impl Draw, shape: &[usize]) -> String {
    let dims = |lead: &[usize], rest: &[usize]| -> Vec<usize> { lead.iter().chain(rest).copied().collect() };
    let tail = shape.get(1..).unwrap_or(&[]);
    let rows = shape.first().map_or(1, |&n| n.max(1) as i64);
    match r.below(6) {
        0..=2 => {
            let op = *r.pick(&["=", "=", "+=", "*="]);
            // Integers, or a bool: the one value `+=` and `*=` take into bool targets too
            // (NumPy computes a bool array plus an integer in int64, and refuses to cast back).
            let value = match r.below(4) {
                0 => int_literal(r, &[]),
                1 => int_literal(r, &[1]),
                2 => r.range(-3, 9).to_string(),
                _ => r.pick(&["True", "False"]).to_string(),
            };
            // Basic subscripts, then any: NumPy stores through views, not through copies.
            let chain = chain(r, 1);
            let basic = ["idx", "m", "True", "False", "[["].iter().all(|s| !chain.contains(s));
            let chain = if basic { chain } else { String::new() };
            format!("a{chain}{} {op} {value}", index(r))
        }
        3 => {
            let count = 1 + r.below(3) as usize;
            let tuples: Vec<String> = (0..count).map(|_| format!("[{}]", r.range(-rows, rows))).collect();
            let updates = int_literal(r, &dims(&[count], tail));
            match r.below(2) {
                0 => {
                    let reduction = *r.pick(&["none", "add", "mul", "max", "min"]);
                    format!("scatter_nd(a, [{}], {updates}, reduction={reduction})", tuples.join(", "))
                }
                _ => {
                    let reduction = *r.pick(&["none", "sum", "sub", "prod", "min", "max"]);
                    format!("scatter_nd_update(a, [{}], {updates}, reduction={reduction})", tuples.join(", "))
                }
            }
        }
        4 => {
            let rank = shape.len().max(1) as i64;
            let axis = r.range(0, rank) as usize;
            let indices = elements_literal(r, shape, axis);
            // The updates take the indices' shape: count it from the literal's brackets.
            let depth = indices.chars().take_while(|&c| c == '[').count();
            let mut d = vec![];
            let mut text = indices.as_str();
            for _ in 0..depth {
                let inner = &text[1..];
                let mut level = 0;
                let mut items = 1;
                for c in inner.chars() {
                    match c {
                        '[' => level += 1,
                        ']' if level == 0 => break,
                        ']' => level -= 1,
                        ',' if level == 0 => items += 1,
                        _ => {}
                    }
                }
                d.push(items);
                text = inner;
            }
            let updates = int_literal(r, &d);
            match r.below(2) {
                0 => {
                    let reduction = *r.pick(&["none", "add", "max"]);
                    format!("scatter_elements(a, {indices}, {updates}, axis={axis}, reduction={reduction})")
                }
                _ => {
                    let reduction = *r.pick(&["none", "sum", "prod", "min", "max", "mean"]);
                    let init = *r.pick(&["true", "false"]);
                    format!(
                        "scatter_elements_update(a, {indices}, {updates}, {axis}, reduction={reduction}, use_init_val={init})"
                    )
                }
            }
        }
        _ => {
            let (i, j) = (r.range(-rows, rows), r.range(-rows, rows));
            let updates = int_literal(r, &dims(&[2], tail));
            format!("scatter_update(a, [{i}, {j}], {updates}, 0)")
        }
    }
}

/// A list literal of small integers of shape `dims` (an integer for no dims).
fn int_literal(r: &mut impl Draw, dims: &[usize]) -> String {
    match dims.split_first() {
        None => r.range(-3, 9).to_string(),
        Some((&n, rest)) => {
            format!("[{}]", (0..n).map(|_| int_literal(r, rest)).collect::<Vec<_>>().join(", "))
        }
    }
}
