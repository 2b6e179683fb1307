//! DeLong's placement of every row (DeLong, DeLong and Clarke-Pearson,
//! Biometrics 1988): a positive row's share of the negatives scored below it,
//! a negative row's share of the positives scored above it, ties counting
//! half. The paired test of two AUROCs needs them row by row (the covariance
//! of two models' placements over the same rows); one model's variance needs
//! only their squared sums, which the walk carries ([`super::BinaryRanking`]).

mod coarse;
mod ordered;

use std::sync::atomic::{AtomicU32, AtomicU64, Ordering::Relaxed};

use super::binary::{check_finite_on, check_pair};
use super::keys::Score;
use crate::error::{MetricError, Result};
use crate::parallel::{collect_chunked, zeroed_slots, Pool, ZeroSlot, CHECK_ROWS};
pub(crate) use ordered::sorted_rows;
pub use ordered::PairCounts;
use ordered::{add_to_side, ordered, prefetch, walk_pieces, Tally, Visit};
use rayon::prelude::*;

/// Rows past which the exact sums of [`paired_placements`] could leave 128
/// bits (each numerator is below `2^(b + 1)` for `n < 2^b` rows, a sum of
/// `n` products of two below `2^(3b + 2)`).
const EXACT_ROWS: usize = 1 << 40;

/// Each row's placement.
///
/// # Errors
/// Lengths that differ, no rows, a score that is not finite, or
/// [`MetricError::Interrupted`] (a side without rows gives the other side 0).
pub fn row_placements<X: Score>(positive: &[bool], score: &[X], pool: &Pool) -> Result<Vec<f64>> {
    check_pair(positive, score.len())?;
    check_rows(score.len())?;
    let n = score.len();
    let n_pos = count_positive(positive, pool);
    let order = ordered(positive, score, false, "y_score", pool)?;
    let slots = zeroed_slots::<AtomicU64>(n, "the placements")?;
    walk_pieces(&order, score, positive, n_pos, || Writer(&slots), pool)?;
    drop(order);
    // A numerator over twice the other side's count (0 without that side).
    #[allow(clippy::cast_precision_loss)]
    let over = |side: u64| {
        if side > 0 {
            2.0 * side as f64
        } else {
            f64::INFINITY
        }
    };
    let (pos_over, neg_over) = (over(n as u64 - n_pos), over(n_pos));
    #[allow(clippy::cast_precision_loss)]
    collect_chunked(
        n,
        |i| slots[i].load(Relaxed) as f64 / if positive[i] { pos_over } else { neg_over },
        pool,
    )
}

/// What DeLong's paired test needs of two models scored on the same rows: each
/// model's pair counts and the centred cross products of the two models'
/// placements, summed over the positive rows and over the negative rows, each
/// as `[aa, bb, ab]` (a placement minus its model's AUROC, the mean placement
/// of either side).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PairedPlacements {
    /// Positive rows.
    pub n_pos: u64,
    /// Negative rows.
    pub n_neg: u64,
    /// Model a's pair counts.
    pub a: PairCounts,
    /// Model b's pair counts.
    pub b: PairCounts,
    /// `[sum da^2, sum db^2, sum da db]` over the positive rows.
    pub positive: [f64; 3],
    /// The same over the negative rows.
    pub negative: [f64; 3],
}

/// DeLong's paired summary of two models on the same rows. Both models' rows
/// are sorted side by side (one model on each thread); then model a's walk
/// writes each row's placement numerator, and model b's walk reads it beside
/// its own, each walk in pieces on all threads. Every sum is an exact integer
/// (the placements share a denominator per side), centred and divided once at
/// the end: the result does not depend on the thread count and is exact up to
/// a few roundings.
///
/// # Errors
/// Lengths that differ, no rows, a score that is not finite (named `score_a`
/// or `score_b`), or [`MetricError::Interrupted`].
pub fn paired_placements<X: Score, Y: Score>(
    positive: &[bool],
    score_a: &[X],
    score_b: &[Y],
    pool: &Pool,
) -> Result<PairedPlacements> {
    check_pair(positive, score_a.len())?;
    check_pair(positive, score_b.len())?;
    let n = positive.len();
    check_rows(n)?;
    let n_pos = count_positive(positive, pool);
    let n_neg = n as u64 - n_pos;
    // Each model's scores are tested for finiteness in the pass that keys
    // them; model a's failure is reported first.
    let (oa, ob) = pool.install(|| {
        rayon::join(
            || ordered(positive, score_a, true, "score_a", pool),
            || ordered(positive, score_b, true, "score_b", pool),
        )
    });
    let (oa, ob) = (oa?, ob?);
    let walks = Walks {
        positive,
        n_pos,
        pool,
    };
    // A numerator is below `2 n` (twice the other side's count): half-width
    // slots hold it for fewer than 2^31 rows, and their buffer, half the
    // size, takes the walks' scattered reads and writes in cache more often.
    let (a, b, cross) = if 2 * n as u64 <= <AtomicU32 as ZeroSlot>::MAX {
        walks.both::<AtomicU32, _, _>(oa, score_a, &ob, score_b)?
    } else {
        walks.both::<AtomicU64, _, _>(oa, score_a, &ob, score_b)?
    };
    let (sa, sb) = (a.counts.numerators(), b.counts.numerators());
    // Side 1 (positive rows): n_pos numerators over 2 n_neg; side 0 the reverse.
    let side = |s: usize, count: u64, other: u64| -> [f64; 3] {
        if count == 0 || other == 0 {
            return [0.0; 3];
        }
        #[allow(clippy::cast_precision_loss)]
        let scale = 4.0 * other as f64 * other as f64;
        [
            centred(a.squares[s], sa, sa, count) / scale,
            centred(b.squares[s], sb, sb, count) / scale,
            centred(cross[s], sa, sb, count) / scale,
        ]
    };
    Ok(PairedPlacements {
        n_pos,
        n_neg,
        a: a.counts,
        b: b.counts,
        positive: side(1, n_pos, n_neg),
        negative: side(0, n_neg, n_pos),
    })
}

/// What the two walks of [`paired_placements`] share: the rows' outcomes,
/// the positive rows' count and the pool.
struct Walks<'a> {
    positive: &'a [bool],
    n_pos: u64,
    pool: &'a Pool,
}

impl Walks<'_> {
    /// Model a's walk writing every row's numerator into a slot of type `S`,
    /// then model b's reading them: both tallies and the cross sums per side.
    fn both<S: ZeroSlot, X: Score, Y: Score>(
        &self,
        oa: ordered::Ordered,
        score_a: &[X],
        ob: &ordered::Ordered,
        score_b: &[Y],
    ) -> Result<(Tally, Tally, [u128; 2])> {
        let Self {
            positive,
            n_pos,
            pool,
        } = *self;
        let slots = zeroed_slots::<S>(positive.len(), "the placements of score_a")?;
        let mut a = Tally::default();
        for (t, _) in walk_pieces(&oa, score_a, positive, n_pos, || Writer(&slots), pool)? {
            a.add(&t);
        }
        drop(oa);
        let (mut b, mut cross) = (Tally::default(), [0u128; 2]);
        let reader = || Reader {
            slots: &slots,
            cross: [0; 2],
        };
        for (t, r) in walk_pieces(ob, score_b, positive, n_pos, reader, pool)? {
            b.add(&t);
            cross[0] += r.cross[0];
            cross[1] += r.cross[1];
        }
        Ok((a, b, cross))
    }
}

/// `sum xy - (sum x)(sum y) / count` from the exact sums, with one rounding
/// of its integer part and one of the fraction: the centred cross product.
/// The sums come from fewer than [`EXACT_ROWS`] rows, so no product here
/// leaves 128 bits.
#[allow(clippy::cast_precision_loss, clippy::cast_possible_wrap)]
fn centred(sum_xy: u128, sum_x: u128, sum_y: u128, count: u64) -> f64 {
    let c = u128::from(count);
    // (sum_x)(sum_y) / c = q sum_y + r sum_y / c, where sum_x = q c + r.
    let (q, r) = (sum_x / c, sum_x % c);
    let rest = r * sum_y;
    let whole = q * sum_y + rest / c;
    (sum_xy as i128 - whole as i128) as f64 - (rest % c) as f64 / count as f64
}

/// Model a's walk: each row's numerator written to its slot.
struct Writer<'a, S>(&'a [S]);

impl<S: ZeroSlot> Visit for Writer<'_, S> {
    #[inline(always)]
    fn ahead(&self, row: usize) {
        prefetch(self.0, row);
    }

    #[inline(always)]
    fn row(&mut self, _: bool, row: usize, numerator: u64) {
        if let Some(slot) = self.0.get(row) {
            slot.put(numerator);
        }
    }
}

/// Model b's walk: each row's numerator times model a's, summed per side.
struct Reader<'a, S> {
    slots: &'a [S],
    cross: [u128; 2],
}

impl<S: ZeroSlot> Visit for Reader<'_, S> {
    #[inline(always)]
    fn ahead(&self, row: usize) {
        prefetch(self.slots, row);
    }

    #[inline(always)]
    fn row(&mut self, positive: bool, row: usize, numerator: u64) {
        let a = self.slots.get(row).map_or(0, ZeroSlot::get);
        add_to_side(
            &mut self.cross,
            positive,
            u128::from(a) * u128::from(numerator),
        );
    }
}

/// Refuse more rows than the exact sums hold (far more than any memory).
fn check_rows(n: usize) -> Result<()> {
    if n >= EXACT_ROWS {
        return Err(MetricError::LimitExceeded {
            what: "the rows of a placement walk",
            needed: n as u128,
            limit: EXACT_ROWS as u128 - 1,
            hint: "score the rows in parts",
        });
    }
    Ok(())
}

fn count_positive(positive: &[bool], pool: &Pool) -> u64 {
    let count = |c: &[bool]| c.iter().filter(|&&p| p).count() as u64;
    if pool.parallel_for(positive.len()) {
        pool.install(|| positive.par_chunks(CHECK_ROWS).map(count).sum())
    } else {
        count(positive)
    }
}

/// The checks of a binary outcome and its scores before a walk that does not
/// fuse them into its first pass: the same lengths, some rows, every score
/// finite (searched on the pool's threads, [`check_finite_on`]).
///
/// # Errors
/// The first of those that fails.
pub(crate) fn check_scores<X: Score>(positive: &[bool], score: &[X], pool: &Pool) -> Result<()> {
    check_pair(positive, score.len())?;
    check_finite_on("y_score", score, pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paired_sums_equal_the_placements_of_each_model() {
        let a = [0.3, 0.1, 0.3, 0.9, 0.5, 0.1, 0.3, 0.7];
        let b = [2_i64, -5, 7, 7, i64::MIN, 3, i64::MAX, 2];
        let positive = [true, false, false, true, false, true, true, false];
        let pool = Pool::sequential();
        let got = paired_placements(&positive, &a, &b, &pool).unwrap();
        let (va, vb) = (
            row_placements(&positive, &a, &pool).unwrap(),
            row_placements(&positive, &b, &pool).unwrap(),
        );
        let (m, n) = (4.0, 4.0);
        let mean = |v: &[f64], side: bool, count: f64| {
            v.iter()
                .zip(&positive)
                .filter(|(_, &p)| p == side)
                .map(|(x, _)| x)
                .sum::<f64>()
                / count
        };
        let (auc_a, auc_b) = (mean(&va, true, m), mean(&vb, true, m));
        assert!((got.a.auc(4, 4) - auc_a).abs() < 1e-15);
        assert!((got.b.auc(4, 4) - auc_b).abs() < 1e-15);
        for (side, sums, count) in [(true, got.positive, m), (false, got.negative, n)] {
            // Either side's placements average to the AUROC.
            assert!((mean(&va, side, count) - auc_a).abs() < 1e-15);
            let mut want = [0.0; 3];
            for i in (0..8).filter(|&i| positive[i] == side) {
                let (da, db) = (va[i] - auc_a, vb[i] - auc_b);
                want[0] += da * da;
                want[1] += db * db;
                want[2] += da * db;
            }
            for (g, w) in sums.iter().zip(want) {
                assert!((g - w).abs() < 1e-14, "{g} against {w}");
            }
        }
        assert!(paired_placements(&positive, &a, &[0.0, 1.0], &pool).is_err());
        let bad = [0.1, f64::NAN, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7];
        assert!(matches!(
            paired_placements(&positive, &a, &bad, &pool),
            Err(MetricError::NonFinite {
                arg: "score_b",
                index: 1,
                ..
            })
        ));
    }

    /// Each row's placement from the other side's sorted scores (binary
    /// searches, no walk).
    fn searched(positive: &[bool], score: &[f64]) -> Vec<f64> {
        let side = |want: bool| {
            let mut v: Vec<f64> = (0..score.len())
                .filter(|&i| positive[i] == want)
                .map(|i| score[i])
                .collect();
            v.sort_by(f64::total_cmp);
            v
        };
        let (pos, neg) = (side(true), side(false));
        let count = |v: &[f64], s: f64| {
            let below = v.partition_point(|&x| x < s);
            (below, v.partition_point(|&x| x <= s) - below)
        };
        (0..score.len())
            .map(|i| {
                let s = score[i];
                if positive[i] {
                    let (below, tied) = count(&neg, s);
                    (below as f64 + 0.5 * tied as f64) / neg.len().max(1) as f64
                } else {
                    let (below, tied) = count(&pos, s);
                    let above = pos.len() - below - tied;
                    (above as f64 + 0.5 * tied as f64) / pos.len().max(1) as f64
                }
            })
            .collect()
    }

    #[test]
    fn pieces_on_any_thread_count_give_the_searched_sums() {
        let mut next = crate::random::xorshift(0x9e37_79b9_7f4a_7c15);
        let grid = |n: usize, next: &mut dyn FnMut() -> u64| -> Vec<(bool, f64, f64)> {
            (0..n)
                .map(|_| {
                    let h = next();
                    let a = (h % 37) as f64 / 37.0;
                    (
                        (h >> 40).is_multiple_of(3) || a > 0.8 && (h >> 50).is_multiple_of(2),
                        a,
                        a + ((h >> 20) % 500) as f64 / 400.0,
                    )
                })
                .collect()
        };
        let mut cases = vec![grid(3000, &mut next)];
        // Model a all tied; model b continuous.
        cases.push(
            (0..2000)
                .map(|i| {
                    let h = next();
                    (h.is_multiple_of(4), 0.5, (h >> 11) as f64 + f64::from(i))
                })
                .collect(),
        );
        // Scores crowded near 1 (the (key, row) order) beside a coarse grid.
        cases.push(
            (0..70_000)
                .map(|_| {
                    let h = next();
                    (
                        (h >> 33) % 5 < 2,
                        1.0 - (h % 1000) as f64 * 1e-13,
                        ((h >> 17) % 64) as f64,
                    )
                })
                .collect(),
        );
        // Continuous scores of both signs (a line through their range orders
        // the packed keys) with a few rows far beyond the sampled range (runs
        // at the line's ends), then with too many such rows (the full keys).
        for far in [150, 1500] {
            let n = 70_000;
            let sampled: Vec<usize> = (0..1023).map(|i| i * n / 1023).collect();
            let mut rows: Vec<(bool, f64, f64)> = (0..n)
                .map(|_| {
                    let h = next();
                    let a = (h >> 11) as f64 / (1u64 << 53) as f64 - 0.3;
                    (
                        h.is_multiple_of(3) || a > 0.5 && h % 5 < 3,
                        a,
                        (h % 10_007) as f64 - a,
                    )
                })
                .collect();
            let outside = [-1e300, -1e6, 1e6, 1e6 + 1.0, 1e300, 1e6];
            let unsampled = (5..n).step_by(31).filter(|i| !sampled.contains(i));
            for (k, i) in unsampled.take(far).enumerate() {
                rows[i].1 = outside[k % outside.len()];
            }
            let (positive, a): (Vec<bool>, Vec<f64>) = rows.iter().map(|r| (r.0, r.1)).unzip();
            let o = ordered::ordered(&positive, &a, true, "a", &Pool::sequential()).unwrap();
            assert_eq!(matches!(o, ordered::Ordered::Packed { .. }), far == 150);
            cases.push(rows);
        }
        for rows in cases {
            let positive: Vec<bool> = rows.iter().map(|r| r.0).collect();
            let a: Vec<f64> = rows.iter().map(|r| r.1).collect();
            let b: Vec<f64> = rows.iter().map(|r| r.2).collect();
            let (va, vb) = (searched(&positive, &a), searched(&positive, &b));
            let m = positive.iter().filter(|&&p| p).count();
            let mean = |v: &[f64], side: bool| {
                let (sum, k) = v
                    .iter()
                    .zip(&positive)
                    .filter(|(_, &p)| p == side)
                    .fold((0.0, 0), |(s, k), (x, _)| (s + x, k + 1));
                sum / f64::from(k)
            };
            let (auc_a, auc_b) = (mean(&va, true), mean(&vb, true));
            let mut first: Option<PairedPlacements> = None;
            for pool in [
                Pool::sequential(),
                Pool::new(2).with_min_parallel(0),
                Pool::new(3).with_min_parallel(0),
            ] {
                let got = paired_placements(&positive, &a, &b, &pool).unwrap();
                assert_eq!(got.n_pos, m as u64);
                // Exact integer sums: the same bits at every thread count.
                assert_eq!(*first.get_or_insert(got), got);
                assert!((got.a.auc(got.n_pos, got.n_neg) - auc_a).abs() < 1e-12);
                assert!((got.b.auc(got.n_pos, got.n_neg) - auc_b).abs() < 1e-12);
                for (side, sums) in [(true, got.positive), (false, got.negative)] {
                    let mut want = [0.0f64; 3];
                    let (ma, mb) = (mean(&va, side), mean(&vb, side));
                    for i in (0..a.len()).filter(|&i| positive[i] == side) {
                        let (da, db) = (va[i] - ma, vb[i] - mb);
                        want[0] += da * da;
                        want[1] += db * db;
                        want[2] += da * db;
                    }
                    for (g, w) in sums.iter().zip(want) {
                        assert!((g - w).abs() <= 1e-9 * w.abs().max(1e-3), "{g} against {w}");
                    }
                }
                for (score, want) in [(&a, &va), (&b, &vb)] {
                    let placed = row_placements(&positive, score, &pool).unwrap();
                    for (g, w) in placed.iter().zip(want.iter()) {
                        assert!((g - w).abs() < 1e-15, "{g} against {w}");
                    }
                }
            }
        }
    }

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

    #[test]
    fn half_and_full_width_slots_give_the_same_sums() {
        // The walks keep numerators in 32-bit slots below 2^31 rows and in
        // 64-bit ones above: both widths on the same rows, with ties and
        // runs (scores rounded to a few values) on one and two threads.
        let mut r = crate::random::lcg(11);
        let n = 5_000;
        let a: Vec<f64> = (0..n).map(|_| (r() % 97) as f64 / 97.0).collect();
        let b: Vec<f32> = (0..n).map(|_| (r() % 1_000) as f32 * 1e-3).collect();
        let positive: Vec<bool> = (0..n).map(|_| r().is_multiple_of(3)).collect();
        let n_pos = positive.iter().filter(|&&p| p).count() as u64;
        for threads in [1, 2] {
            let pool = Pool::new(threads);
            let walks = Walks {
                positive: &positive,
                n_pos,
                pool: &pool,
            };
            let run = |half: bool| {
                let oa = ordered(&positive, &a, true, "score_a", &pool).unwrap();
                let ob = ordered(&positive, &b, true, "score_b", &pool).unwrap();
                if half {
                    walks.both::<AtomicU32, _, _>(oa, &a, &ob, &b).unwrap()
                } else {
                    walks.both::<AtomicU64, _, _>(oa, &a, &ob, &b).unwrap()
                }
            };
            let (half, full) = (run(true), run(false));
            assert_eq!(half.0.counts, full.0.counts);
            assert_eq!(half.1.counts, full.1.counts);
            assert_eq!(half.0.squares, full.0.squares);
            assert_eq!(half.1.squares, full.1.squares);
            assert_eq!(half.2, full.2);
            assert!(full.2[0] > 0 && full.2[1] > 0);
        }
    }

    #[test]
    fn the_first_non_finite_score_is_found_across_chunks() {
        use crate::ranking::binary::first_non_finite;
        let n = 3 * CHECK_ROWS + 11;
        let mut a = vec![0.25_f64; n];
        let mut b = vec![0.5_f32; n];
        let positive: Vec<bool> = (0..n).map(|i| i % 2 == 0).collect();
        for threads in [1, 2] {
            let pool = Pool::new(threads);
            assert_eq!(first_non_finite(&a, &pool), None);
            assert!(paired_placements(&positive, &a, &b, &pool).is_ok());
        }
        a[2 * CHECK_ROWS + 1] = f64::NAN;
        a[CHECK_ROWS + 7] = f64::NEG_INFINITY;
        b[n - 1] = f32::INFINITY;
        for threads in [1, 2] {
            let pool = Pool::new(threads);
            assert_eq!(
                first_non_finite(&a, &pool),
                Some((CHECK_ROWS + 7, f64::NEG_INFINITY))
            );
            assert_eq!(first_non_finite(&b, &pool), Some((n - 1, f64::INFINITY)));
            assert!(matches!(
                paired_placements(&positive, &a, &b, &pool),
                Err(MetricError::NonFinite { arg: "score_a", index, .. }) if index == CHECK_ROWS + 7
            ));
            assert!(matches!(
                paired_placements(&positive, &b, &a, &pool),
                Err(MetricError::NonFinite { arg: "score_a", index, .. }) if index == n - 1
            ));
            assert!(matches!(
                paired_placements(&positive, &vec![0.5_f32; n], &a, &pool),
                Err(MetricError::NonFinite { arg: "score_b", index, .. }) if index == CHECK_ROWS + 7
            ));
            assert!(matches!(
                row_placements(&positive, &b, &pool),
                Err(MetricError::NonFinite { arg: "y_score", index, .. }) if index == n - 1
            ));
        }
        // Scores crowded near one value take the sort of (key, row) pairs,
        // which tests them too.
        #[allow(clippy::cast_precision_loss)]
        let mut crowded: Vec<f64> = (0..n).map(|i| 0.5 + i as f64 * 1e-16).collect();
        let low = usize::BITS - (n - 1).leading_zeros() + 1;
        assert!(coarse::crowded(&crowded, low));
        crowded[5] = f64::NAN;
        for threads in [1, 2] {
            let pool = Pool::new(threads);
            assert!(matches!(
                paired_placements(&positive[..n - 1], &b[..n - 1], &crowded[..n - 1], &pool),
                Err(MetricError::NonFinite {
                    arg: "score_b",
                    index: 5,
                    ..
                })
            ));
            assert!(matches!(
                row_placements(&positive, &crowded, &pool),
                Err(MetricError::NonFinite {
                    arg: "y_score",
                    index: 5,
                    ..
                })
            ));
        }
    }
}
