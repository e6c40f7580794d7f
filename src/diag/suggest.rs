//! "Did you mean": the one edit distance every unknown-name diagnostic suggests with (names,
//! functions, parameters, REPL commands).

/// Levenshtein distance between `a` and `b`, in characters.
pub fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let cur = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb)).min(row[j] + 1).min(cur + 1);
            prev = cur;
        }
    }
    row[b.len()]
}

/// The candidate nearest to `name`, if at most `max` edits away and not a rewrite of every
/// character (ties go to the first in sort order).
pub fn closest<'c>(name: &str, candidates: impl IntoIterator<Item = &'c str>, max: usize) -> Option<&'c str> {
    candidates
        .into_iter()
        .map(|c| (edit_distance(c, name), c))
        .filter(|(d, c)| *d <= max && *d < c.chars().count().max(name.chars().count()))
        .min()
        .map(|(_, c)| c)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distances_and_suggestions() {
        assert_eq!(edit_distance("gather", "gahter"), 2);
        assert_eq!(edit_distance("", "abc"), 3);
        assert_eq!(edit_distance("slice", "slice1"), 1);
        assert_eq!(closest("gahter", ["gather", "gather_nd"], 2), Some("gather"));
        assert_eq!(closest("x", ["y", "z"], 2), None, "a rewrite of every character is no suggestion");
        assert_eq!(closest("strided", ["gather"], 2), None);
    }
}
