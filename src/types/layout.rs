//! C-order (row-major) layout: element counts, strides and the walk over all coordinates.

/// Product of dimensions, `None` on i64 overflow.
pub fn checked_numel(shape: &[i64]) -> Option<i64> {
    shape.iter().try_fold(1i64, |acc, &d| acc.checked_mul(d))
}

/// The strides of a dense C-order tensor of `shape`, in units of `unit` (1 for elements, the
/// element width for bytes); `None` on i64 overflow.
pub fn row_major_strides(shape: &[i64], unit: i64) -> Option<Vec<i64>> {
    let mut strides = vec![0; shape.len()];
    let mut acc = unit;
    for (s, &d) in strides.iter_mut().zip(shape).rev() {
        *s = acc;
        acc = acc.checked_mul(d)?;
    }
    Some(strides)
}

/// All coordinates of a shape in C order: one empty coordinate for rank 0, none when a
/// dimension is 0.
pub struct Coords {
    shape: Vec<i64>,
    next: Option<Vec<i64>>,
}

impl Coords {
    pub fn new(shape: &[i64]) -> Coords {
        let next = (!shape.contains(&0)).then(|| vec![0; shape.len()]);
        Coords { shape: shape.to_vec(), next }
    }
}

impl Iterator for Coords {
    type Item = Vec<i64>;

    fn next(&mut self) -> Option<Vec<i64>> {
        let current = self.next.take()?;
        let mut succ = current.clone();
        for d in (0..succ.len()).rev() {
            succ[d] += 1;
            if succ[d] < self.shape[d] {
                self.next = Some(succ);
                break;
            }
            succ[d] = 0;
        }
        Some(current)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn walks_and_strides() {
        let all: Vec<Vec<i64>> = Coords::new(&[2, 3]).collect();
        assert_eq!(all, [[0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]]);
        assert_eq!(Coords::new(&[]).collect::<Vec<_>>(), [Vec::<i64>::new()]);
        assert_eq!(Coords::new(&[3, 0]).count(), 0);
        assert_eq!(row_major_strides(&[2, 3, 4], 4), Some(vec![48, 16, 4]));
        assert_eq!(row_major_strides(&[i64::MAX, 2, 2], 1), None);
        assert_eq!(checked_numel(&[]), Some(1));
        assert_eq!(checked_numel(&[i64::MAX, 2]), None);
    }
}
