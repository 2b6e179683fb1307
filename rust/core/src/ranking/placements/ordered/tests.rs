//! The walk's lone rows against sums taken row by row.

use super::*;

/// Each row the walk hands over.
struct Seen(Vec<(bool, usize, u64)>);

impl Visit for Seen {
    fn ahead(&self, _: usize) {}
    fn row(&mut self, positive: bool, row: usize, numerator: u64) {
        self.0.push((positive, row, numerator));
    }
}

#[test]
fn lone_rows_sum_exactly_near_the_packed_limit() {
    // Counts near 2^32 (the most rows a packed key holds): each `m^2`
    // nearly fills 64 bits, so the 64-bit sums take one row at a time.
    let (row_bits, low) = (5, 6);
    let classes = [
        true, false, true, true, false, false, true, false, true, true,
    ];
    let keys: Vec<u64> = classes
        .iter()
        .enumerate()
        .map(|(i, &p)| ((i as u64 + 1) << low) | (u64::from(p) << row_bits) | (i as u64 * 3))
        .collect();
    for (n_pos, neg_below) in [(u64::from(u32::MAX), u64::from(u32::MAX) - 20), (40, 7)] {
        let mut tally = Tally {
            n_pos,
            pos_below: 3,
            neg_below,
            ..Tally::default()
        };
        let mut seen = Seen(Vec::new());
        let end = tally.singles(
            &keys,
            0..keys.len(),
            low,
            row_bits,
            &[0.0_f64; 0],
            &mut seen,
        );
        assert_eq!(end, keys.len());
        let (mut squares, mut ordered) = ([0u128; 2], 0u128);
        let (mut pos_below, mut neg_below) = (3, neg_below);
        for (i, &p) in classes.iter().enumerate() {
            let num = if p {
                2 * neg_below
            } else {
                2 * (n_pos - pos_below)
            };
            assert_eq!(seen.0[i], (p, i * 3, num));
            squares[usize::from(p)] += u128::from(num) * u128::from(num);
            ordered += if p { u128::from(neg_below) } else { 0 };
            (pos_below, neg_below) = (pos_below + u64::from(p), neg_below + u64::from(!p));
        }
        assert_eq!(tally.squares, squares);
        assert_eq!(tally.counts.ordered, ordered);
        assert_eq!((tally.pos_below, tally.neg_below), (pos_below, neg_below));
    }
}
