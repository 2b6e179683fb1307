//! DeLong's placement of every row (DeLong, DeLong and Clarke-Pearson,
//! Biometrics 1988): a positive row's share of the negatives scored below it,
//! a negative row's share of the positives scored above it, ties counting
//! half. The paired test of two AUROCs needs them row by row (the covariance
//! of two models' placements over the same rows); one model's variance needs
//! only their squared sums, which the walk carries ([`super::BinaryRanking`]).

use super::binary::check_pair;
use super::keys::Score;
use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::{collect_chunked, Pool, CHECK_ROWS};
use crate::sort::sort_keys;
use rdst::{RadixKey, RadixSort};

/// A row's order key with its index beside it; sorted by the key alone.
#[derive(Debug, Clone, Copy, Default)]
struct Keyed {
    key: u64,
    row: u32,
}

impl RadixKey for Keyed {
    const LEVELS: usize = 8;
    #[inline]
    fn get_level(&self, level: usize) -> u8 {
        (self.key >> (level * 8)) as u8
    }
}

/// Rows sorted by the radix sort of [`Keyed`] items at most (uninterruptible,
/// about a fifth of a second per 2^25 rows); more go through
/// [`sort_keys`], which looks at the stop flag between blocks.
const RADIX_ROWS: usize = 1 << 25;

/// Each row's placement.
///
/// # Errors
/// Lengths that differ, no rows, a score that is not finite, or
/// [`MetricError::Interrupted`] (a side without rows gives the other side 0).
pub fn row_placements<X: Score>(positive: &[bool], score: &[X], pool: &Pool) -> Result<Vec<f64>> {
    check_scores(positive, score)?;
    let n = score.len();
    let n_pos = positive.iter().filter(|&&p| p).count();
    let order = sorted_rows(score, pool)?;
    let mut out = try_filled(n, 0.0f64, "the placements")?;
    #[allow(clippy::cast_precision_loss)]
    let (total_pos, per_pos, per_neg) = (
        n_pos as f64,
        if n_pos > 0 { 1.0 / n_pos as f64 } else { 0.0 },
        if n > n_pos {
            1.0 / (n - n_pos) as f64
        } else {
            0.0
        },
    );
    let (mut pos_below, mut neg_below) = (0.0f64, 0.0f64);
    let mut start = 0;
    let mut next_check = CHECK_ROWS;
    while start < n {
        if start >= next_check {
            pool.check()?;
            next_check = start + CHECK_ROWS;
        }
        let key = order[start].0;
        let mut end = start;
        let (mut gp, mut gn) = (0.0f64, 0.0f64);
        while end < n && order[end].0 == key {
            if positive[order[end].1] {
                gp += 1.0;
            } else {
                gn += 1.0;
            }
            end += 1;
        }
        let v10 = (neg_below + 0.5 * gn) * per_neg;
        let v01 = (total_pos - pos_below - 0.5 * gp) * per_pos;
        for &(_, row) in &order[start..end] {
            out[row] = if positive[row] { v10 } else { v01 };
        }
        pos_below += gp;
        neg_below += gn;
        start = end;
    }
    Ok(out)
}

/// The checks of a binary outcome and its scores done row by row: the same
/// lengths, some rows, every score finite (the sorting walks fuse the last
/// into their first pass instead).
///
/// # Errors
/// The first of those that fails.
pub(crate) fn check_scores<X: Score>(positive: &[bool], score: &[X]) -> Result<()> {
    let n = score.len();
    check_pair(positive, n)?;
    if let Some(index) = score.iter().position(|s| !s.is_finite()) {
        return Err(MetricError::NonFinite {
            arg: "y_score",
            index,
            value: score[index].to_f64(),
        });
    }
    Ok(())
}

/// `(key, row)` of every row in ascending key order.
pub(crate) fn sorted_rows<X: Score>(score: &[X], pool: &Pool) -> Result<Vec<(u64, usize)>> {
    let n = score.len();
    let key = |i: usize| score.get(i).map_or(0, |s| s.key());
    if n <= RADIX_ROWS {
        #[allow(clippy::cast_possible_truncation)]
        let mut rows: Vec<Keyed> = collect_chunked(
            n,
            |i| Keyed {
                key: key(i),
                row: i as u32,
            },
            pool,
        )?;
        pool.install(|| rows.radix_sort_unstable());
        pool.check()?;
        return Ok(rows.iter().map(|r| (r.key, r.row as usize)).collect());
    }
    let mut rows: Vec<u128> = collect_chunked(n, |i| (u128::from(key(i)) << 64) | i as u128, pool)?;
    sort_keys(&mut rows, pool)?;
    #[allow(clippy::cast_possible_truncation)]
    Ok(rows
        .iter()
        .map(|&r| ((r >> 64) as u64, r as u64 as usize))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placements_equal_pair_counting() {
        let score = [0.3, 0.1, 0.3, 0.9, 0.5, 0.1, 0.3];
        let positive = [true, false, false, true, false, true, true];
        let got = row_placements(&positive, &score, &Pool::sequential()).unwrap();
        for (i, &s) in score.iter().enumerate() {
            let others: Vec<f64> = (0..score.len())
                .filter(|&j| positive[j] != positive[i])
                .map(|j| {
                    let below = if positive[i] {
                        score[j] < s
                    } else {
                        score[j] > s
                    };
                    if score[j] == s {
                        0.5
                    } else {
                        f64::from(u8::from(below))
                    }
                })
                .collect();
            let want = others.iter().sum::<f64>() / others.len() as f64;
            assert!(
                (got[i] - want).abs() < 1e-15,
                "row {i}: {} against {want}",
                got[i]
            );
        }
    }
}
