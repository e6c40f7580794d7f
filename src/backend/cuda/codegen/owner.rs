//! How coarse a gathered store's owner array can be (docs/cuda.md, Stores). The owner array
//! keeps `=`'s last write in C order: each update marks its destination's word with its
//! ordinal, and writes only where the mark is its own. One word per target element works for
//! every store, but `a[idx] = v` on rows of 256 then zeroes and marks a word per element where
//! one per row would do.
//!
//! Split the update dims into a leading part `o` and the trailing dims `t` that no index term
//! reads. The destination's byte offset is then `A(o) + B(t)`, with `A` the base, the leading
//! strides and the gathered terms, and `B` the trailing strides. If every leading stride and
//! every term's stride is a multiple of `R`, and `base mod R + B(t)` stays inside `[0, R)` with
//! `B` injective, then `offset / R` is the same for every `t` of one `o` (the row's *key*), and
//! two updates write one element exactly when their keys and their `t` agree. So one owner
//! word per key, marked once per `o` with `o`'s ordinal (`lin / T`, `T` the trailing dims'
//! element count), keeps the last write in C order: updates that collide share `t`, and C
//! order among them is the order of their `o`. The facts are integers of the call, so the
//! host decides on the bound dims ([`OwnerRows::choose`]); `R` = the element width and
//! `T = 1` is the one-word-per-element array, the fallback.

use crate::backend::loopnest::{LoopNest, Stream};
use crate::types::sym::SymExpr;

/// The integers of a store's destination that decide its owner array's granularity.
#[derive(Debug, Clone, PartialEq)]
pub struct OwnerRows {
    pub base: SymExpr,
    /// The update dims an index term reads and those before them: (extent, byte stride).
    pub lead: Vec<(SymExpr, SymExpr)>,
    /// The trailing update dims no index term reads: (extent, byte stride), outermost first.
    pub trail: Vec<(SymExpr, SymExpr)>,
    /// Each gathered term's byte stride.
    pub terms: Vec<SymExpr>,
}

/// Whether `s` (an index stream, or one nested in it) moves along update dim `d`.
fn reads(s: &Stream, d: usize) -> bool {
    s.strides.get(d).is_some_and(|x| x.as_const() != Some(0)) || s.terms.iter().any(|t| reads(&t.index, d))
}

impl OwnerRows {
    /// The description of the destination nest `dest` (its loops as the plan's update dims).
    pub fn of(dest: &LoopNest) -> OwnerRows {
        let data = &dest.data;
        let dims = dest.extents.len();
        let read = |d: usize| data.terms.iter().any(|t| reads(&t.index, d));
        let first_trail = (0..dims).rev().take_while(|&d| !read(d)).last().unwrap_or(dims);
        let dim = |d: usize| (dest.extents[d].clone(), data.strides[d].clone());
        OwnerRows {
            base: data.base.clone(),
            lead: (0..first_trail).map(dim).collect(),
            trail: (first_trail..dims).map(dim).collect(),
            terms: data.terms.iter().map(|t| t.stride.clone()).collect(),
        }
    }

    /// `(R, T)` for a call, its integers given by `eval` ([`OwnerRows::choose`]); an integer
    /// that does not evaluate keeps a word per element.
    pub fn for_call(&self, width: u8, eval: impl Fn(&SymExpr) -> Option<i64>) -> (u64, u64) {
        let pairs = |dims: &[(SymExpr, SymExpr)]| {
            dims.iter().map(|(n, s)| Some((eval(n)?, eval(s)?))).collect::<Option<Vec<_>>>()
        };
        let terms = self.terms.iter().map(&eval).collect::<Option<Vec<_>>>();
        match (eval(&self.base), pairs(&self.lead), pairs(&self.trail), terms) {
            (Some(base), Some(lead), Some(trail), Some(terms)) => {
                OwnerRows::choose(base, &lead, &trail, &terms, i64::from(width))
            }
            _ => (u64::from(width), 1),
        }
    }

    /// `(R, T)` for the bound values (in the order of the fields; `width`: the element's
    /// bytes): the bytes one owner word covers and the updates per ordinal. The most trailing
    /// dims that qualify; `(width, 1)` where none do.
    pub fn choose(
        base: i64,
        lead: &[(i64, i64)],
        trail: &[(i64, i64)],
        terms: &[i64],
        width: i64,
    ) -> (u64, u64) {
        let fallback = (width as u64, 1);
        if trail.iter().chain(lead).any(|&(n, _)| n <= 0) {
            return fallback;
        }
        for k in (1..=trail.len()).rev() {
            let (outer, inner) = trail.split_at(trail.len() - k);
            // Dims of one element contribute nothing, whatever their stride.
            let moving =
                |dims: &[(i64, i64)]| dims.iter().filter(|d| d.0 > 1).map(|d| d.1).collect::<Vec<_>>();
            let others = moving(lead).into_iter().chain(moving(outer)).chain(terms.iter().copied());
            let r = others.fold(0u64, |g, s| gcd(g, s.unsigned_abs()));
            if r == 0 || r > i64::MAX as u64 {
                continue;
            }
            let r = r as i128;
            let (mut lo, mut hi) = (0i128, 0i128);
            for &(n, s) in inner {
                let span = i128::from(s) * i128::from(n - 1);
                lo += span.min(0);
                hi += span.max(0);
            }
            let r0 = i128::from(base).rem_euclid(r);
            if r0 + lo < 0 || r0 + hi + i128::from(width) > r || !injective(inner, width) {
                continue;
            }
            let run = inner.iter().map(|d| d.0 as u64).product::<u64>();
            return (r as u64, run);
        }
        fallback
    }
}

/// Whether distinct coordinates of `dims` (extent, byte stride) give distinct offsets: sorted
/// by stride, each stride at least the span of the ones below it.
fn injective(dims: &[(i64, i64)], width: i64) -> bool {
    let mut moving: Vec<(u64, u64)> =
        dims.iter().filter(|d| d.0 > 1).map(|&(n, s)| (n as u64, s.unsigned_abs())).collect();
    moving.sort_by_key(|d| d.1);
    let mut reach = width.unsigned_abs();
    for (n, s) in moving {
        if s < reach {
            return false;
        }
        let Some(r) = s.checked_mul(n) else { return false };
        reach = r;
    }
    true
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 { a } else { gcd(b, a % b) }
}

#[cfg(test)]
mod tests {
    use super::OwnerRows;

    #[test]
    fn rows_of_a_gathered_store_share_one_word() {
        // a[idx] = v on f32[_, 256]: a word per row of 1024 bytes, 256 updates per ordinal.
        assert_eq!(OwnerRows::choose(0, &[(5, 0)], &[(256, 4)], &[1024], 4), (1024, 256));
        // a[idx, ::-1] = v: the row read backwards from its last element.
        assert_eq!(OwnerRows::choose(1020, &[(5, 0)], &[(256, -4)], &[1024], 4), (1024, 256));
        // a[idx, 1:3] = v on f32[_, 4]: columns 1 and 2 of rows of 16 bytes.
        assert_eq!(OwnerRows::choose(4, &[(5, 0)], &[(2, 4)], &[16], 4), (16, 2));
        // b[:, idx] = w on f32[n, m, 8]: the leading dim's stride is a multiple of the row.
        assert_eq!(OwnerRows::choose(0, &[(3, 32 * 6), (5, 0)], &[(8, 4)], &[32], 4), (32, 8));
        // A trailing dim whose span passes the row: only the dims inside it qualify.
        assert_eq!(OwnerRows::choose(0, &[(5, 0)], &[(2, 64), (8, 4)], &[32], 4), (32, 8));
    }

    #[test]
    fn what_does_not_qualify_keeps_a_word_per_element() {
        // No trailing dims (every dim gathered).
        assert_eq!(OwnerRows::choose(0, &[(5, 0)], &[], &[4], 4), (4, 1));
        // A trailing dim past the row (`a[1:3, idx]`-like: the row is one element).
        assert_eq!(OwnerRows::choose(0, &[(5, 0)], &[(2, 400)], &[4], 4), (4, 1));
        // A broadcast trailing dim: two updates of one ordinal would write one element.
        assert_eq!(OwnerRows::choose(0, &[(5, 0)], &[(3, 0)], &[16], 4), (4, 1));
        // Overlapping trailing strides.
        assert_eq!(OwnerRows::choose(0, &[(5, 0)], &[(4, 8), (4, 4)], &[64], 4), (4, 1));
        // No updates.
        assert_eq!(OwnerRows::choose(0, &[(0, 0)], &[(4, 4)], &[16], 4), (4, 1));
    }
}
