//! DeLong's placement of every row (DeLong, DeLong and Clarke-Pearson,
//! Biometrics 1988): a positive row's share of the negatives scored below it,
//! a negative row's share of the positives scored above it, ties counting
//! half. The paired test of two AUROCs needs them row by row (the covariance
//! of two models' placements over the same rows); one model's variance needs
//! only their squared sums, which the walk carries ([`super::BinaryRanking`]).

use super::binary::check_pair;
use super::keys::Score;
use crate::error::{MetricError, Result};
use crate::parallel::{big_vec, collect_chunked, Pool, CHECK_ROWS};
use crate::sort::{sort_high_bits_alone, sort_keys};
use rayon::prelude::*;
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
    let mut out = placements_buffer(score.len(), "the placements")?;
    let n_pos = count_positive(positive, pool);
    place(positive, score, n_pos, &mut out, false, pool)?;
    Ok(out)
}

/// One model's exact pair counts, from the walk that placed its rows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PairCounts {
    /// (positive, negative) pairs with the positive scored higher.
    pub ordered: u128,
    /// (positive, negative) pairs scored equal.
    pub tied: u128,
}

impl PairCounts {
    /// The AUROC `(ordered + tied / 2) / (n_pos n_neg)` (0 without pairs).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn auc(self, n_pos: u64, n_neg: u64) -> f64 {
        let pairs = u128::from(n_pos) * u128::from(n_neg);
        if pairs == 0 {
            return 0.0;
        }
        (2.0 * self.ordered as f64 + self.tied as f64) / (2.0 * pairs as f64)
    }
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

/// DeLong's paired summary of two models on the same rows: both models placed
/// side by side (one sort of each model's scores, each on its own thread),
/// then one pass over the rows for the covariance sums (in fixed chunks added
/// in order: the result does not depend on the thread count).
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
    for (name, n, finite) in [
        ("score_a", score_a.len(), first_non_finite(score_a)),
        ("score_b", score_b.len(), first_non_finite(score_b)),
    ] {
        check_pair(positive, n)?;
        if let Some((index, value)) = finite {
            return Err(MetricError::NonFinite {
                arg: name,
                index,
                value,
            });
        }
    }
    let n = positive.len();
    let n_pos = count_positive(positive, pool);
    let n_neg = n as u64 - n_pos;
    // Each model's buffer made (its pages faulted in) on the thread that places it.
    let (ra, rb) = pool.install(|| {
        rayon::join(
            || placed(positive, score_a, n_pos, "the placements of score_a", pool),
            || placed(positive, score_b, n_pos, "the placements of score_b", pool),
        )
    });
    let ((a, va), (b, vb)) = (ra?, rb?);
    let (auc_a, auc_b) = (a.auc(n_pos, n_neg), b.auc(n_pos, n_neg));
    let sums = |c: usize| {
        let lo = c * CHECK_ROWS;
        let hi = (lo + CHECK_ROWS).min(n);
        let mut s = [0.0f64; 6];
        for ((&p, &x), &y) in positive[lo..hi].iter().zip(&va[lo..hi]).zip(&vb[lo..hi]) {
            let (da, db) = (x - auc_a, y - auc_b);
            let at = if p { 0 } else { 3 };
            s[at] += da * da;
            s[at + 1] += db * db;
            s[at + 2] += da * db;
        }
        s
    };
    let chunks = n.div_ceil(CHECK_ROWS);
    let parts: Vec<[f64; 6]> = if pool.parallel_for(n) {
        pool.install(|| (0..chunks).into_par_iter().map(sums).collect())
    } else {
        (0..chunks).map(sums).collect()
    };
    pool.check()?;
    let mut total = [0.0f64; 6];
    for part in &parts {
        for (t, v) in total.iter_mut().zip(part) {
            *t += v;
        }
    }
    Ok(PairedPlacements {
        n_pos,
        n_neg,
        a,
        b,
        positive: [total[0], total[1], total[2]],
        negative: [total[3], total[4], total[5]],
    })
}

/// The pair counts and every row's placement of one model ([`place`] on the
/// calling thread, into a buffer of its own).
fn placed<X: Score>(
    positive: &[bool],
    score: &[X],
    n_pos: u64,
    what: &'static str,
    pool: &Pool,
) -> Result<(PairCounts, Vec<f64>)> {
    let mut out = placements_buffer(score.len(), what)?;
    let counts = place(positive, score, n_pos, &mut out, true, pool)?;
    Ok((counts, out))
}

/// `n` zeros, huge-page backed: the walk writes them in score order, all over
/// the buffer, where small pages would cost a TLB miss a row.
fn placements_buffer(n: usize, what: &'static str) -> Result<Vec<f64>> {
    let mut v = big_vec(n, what)?;
    v.resize(n, 0.0);
    Ok(v)
}

fn first_non_finite<X: Score>(score: &[X]) -> Option<(usize, f64)> {
    score
        .iter()
        .position(|s| !s.is_finite())
        .map(|i| (i, score[i].to_f64()))
}

fn count_positive(positive: &[bool], pool: &Pool) -> u64 {
    let count = |c: &[bool]| c.iter().filter(|&&p| p).count() as u64;
    if pool.parallel_for(positive.len()) {
        pool.install(|| positive.par_chunks(CHECK_ROWS).map(count).sum())
    } else {
        count(positive)
    }
}

/// Rows whose index fits a packed key ([`place`]); more take the `u128` sort.
const PACKED_ROWS: usize = 1 << 32;

/// Place every row of checked input into `out` (row order) and count the
/// pairs. Up to [`PACKED_ROWS`] rows, each row becomes one `u64`: the high
/// bits of its score's key, its class, its index; those sort as plain `u64`
/// (a radix sort, on the calling thread when `alone`), then a run of rows
/// whose high bits agree is put in the order of the full keys (a run of
/// equal scores, the usual case, is only checked). More rows sort as
/// `(key, row)` pairs.
fn place<X: Score>(
    positive: &[bool],
    score: &[X],
    n_pos: u64,
    out: &mut [f64],
    alone: bool,
    pool: &Pool,
) -> Result<PairCounts> {
    let n = score.len();
    #[allow(clippy::cast_precision_loss)]
    let mut walk = PlacementWalk {
        total_pos: n_pos as f64,
        per_pos: if n_pos > 0 { 1.0 / n_pos as f64 } else { 0.0 },
        per_neg: if (n as u64) > n_pos {
            1.0 / (n as u64 - n_pos) as f64
        } else {
            0.0
        },
        ..PlacementWalk::default()
    };
    let row_bits = usize::BITS - (n.max(2) - 1).leading_zeros();
    let low = row_bits + 1;
    if n > PACKED_ROWS || crowded(score, low) {
        let order = sorted_key_rows(score, pool)?;
        let (mut start, mut next_check) = (0, CHECK_ROWS);
        while start < n {
            if start >= next_check {
                pool.check()?;
                next_check = start + CHECK_ROWS;
            }
            let key = order[start].0;
            let end = start + order[start..].iter().take_while(|r| r.0 == key).count();
            walk.group(order[start..end].iter().map(|r| (positive[r.1], r.1)), out);
            start = end;
        }
        return Ok(walk.counts);
    }
    let mut packed: Vec<u64> = collect_chunked(
        n,
        |i| (score[i].key() >> low << low) | (u64::from(positive[i]) << row_bits) | i as u64,
        pool,
    )?;
    if alone {
        // Only the key's bits order the rows (the run fix-up below orders a
        // run by its full keys): the low bytes need no radix pass.
        sort_high_bits_alone(&mut packed, low, pool)?;
    } else {
        sort_keys(&mut packed, pool)?;
    }
    let row_mask = (1u64 << row_bits) - 1;
    let unpack = |p: u64| ((p >> row_bits) & 1 == 1, (p & row_mask) as usize);
    let mut run: Vec<(u64, u64)> = Vec::new();
    let mut start = 0;
    let mut next_check = CHECK_ROWS;
    while start < n {
        if start >= next_check {
            pool.check()?;
            next_check = start + CHECK_ROWS;
        }
        if let Some(&ahead) = packed.get(start + LOOK_AHEAD) {
            prefetch(out, (ahead & row_mask) as usize);
        }
        let first = packed[start];
        let high = first >> low;
        if packed.get(start + 1).is_none_or(|&p| p >> low != high) {
            let (p, row) = unpack(first);
            walk.single(p, row, out);
            start += 1;
            continue;
        }
        let end = start
            + packed[start..]
                .iter()
                .take_while(|&&p| p >> low == high)
                .count();
        {
            run.clear();
            run.extend(
                packed[start..end]
                    .iter()
                    .map(|&p| (score[(p & row_mask) as usize].key(), p)),
            );
            if run.windows(2).any(|w| w[0].0 > w[1].0) {
                run.sort_unstable();
            }
            let mut at = 0;
            while at < run.len() {
                let key = run[at].0;
                let stop = at + run[at..].iter().take_while(|r| r.0 == key).count();
                walk.group(run[at..stop].iter().map(|r| unpack(r.1)), out);
                at = stop;
            }
        }
        start = end;
    }
    Ok(walk.counts)
}

/// Whether a sample of the scores holds two that differ in their key's low
/// `low` bits only: scores crowding near one value (saturated probabilities),
/// whose packed keys would leave long runs to order by the full keys.
fn crowded<X: Score>(score: &[X], low: u32) -> bool {
    const SAMPLE: usize = 1023;
    let n = score.len();
    if n < 1 << 16 {
        return false;
    }
    let mut keys: Vec<u64> = (0..SAMPLE).map(|i| score[i * n / SAMPLE].key()).collect();
    keys.sort_unstable();
    keys.windows(2)
        .any(|w| w[0] != w[1] && (w[0] ^ w[1]) >> low == 0)
}

/// Rows ahead in score order whose placement slot is fetched into the cache
/// before the walk writes it (the slots lie all over the buffer).
const LOOK_AHEAD: usize = 64;

/// A hint that `out[row]` is written soon.
#[inline(always)]
fn prefetch(out: &[f64], row: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(slot) = out.get(row) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of every x86-64 target, and a prefetch of a
        // valid address (a slot of `out`) reads or writes nothing.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(slot).cast()) };
    }
}

/// The walk over tie groups in ascending score order that places their rows.
#[derive(Debug, Default)]
struct PlacementWalk {
    total_pos: f64,
    per_pos: f64,
    per_neg: f64,
    pos_below: u64,
    neg_below: u64,
    counts: PairCounts,
}

impl PlacementWalk {
    /// A tie group of one row (most rows of continuous scores).
    #[inline(always)]
    #[allow(clippy::cast_precision_loss)]
    fn single(&mut self, p: bool, row: usize, out: &mut [f64]) {
        let v10 = self.neg_below as f64 * self.per_neg;
        let v01 = (self.total_pos - self.pos_below as f64) * self.per_pos;
        if let Some(slot) = out.get_mut(row) {
            *slot = if p { v10 } else { v01 };
        }
        self.counts.ordered += u128::from(self.neg_below) * u128::from(p);
        self.pos_below += u64::from(p);
        self.neg_below += u64::from(!p);
    }

    /// One tie group's rows as `(positive, row)`; a group is small, so the
    /// rows are gone through twice (counted, then placed).
    #[allow(clippy::cast_precision_loss)]
    fn group<I: Iterator<Item = (bool, usize)> + Clone>(&mut self, rows: I, out: &mut [f64]) {
        let (mut gp, mut gn) = (0u64, 0u64);
        for (p, _) in rows.clone() {
            gp += u64::from(p);
            gn += u64::from(!p);
        }
        let v10 = (self.neg_below as f64 + 0.5 * gn as f64) * self.per_neg;
        let v01 = (self.total_pos - self.pos_below as f64 - 0.5 * gp as f64) * self.per_pos;
        for (p, row) in rows {
            if let Some(slot) = out.get_mut(row) {
                *slot = if p { v10 } else { v01 };
            }
        }
        self.counts.ordered += u128::from(gp) * u128::from(self.neg_below);
        self.counts.tied += u128::from(gp) * u128::from(gn);
        self.pos_below += gp;
        self.neg_below += gn;
    }
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

/// `(group key, row)` of every row in ascending score order, where the group
/// keys ascend with the scores and are equal exactly within a tie group (a row
/// alone among rows of other high bits gets the high bits of its key, the
/// rows of a run the full keys): each row's key, high bits only, and its index
/// packed in one `u64` and sorted, then each run of equal high bits put in
/// full-key order. Crowded scores ([`crowded`]) and more than
/// [`PACKED_ROWS`] rows take the sort of `(key, row)` pairs
/// ([`sorted_key_rows`]).
pub(crate) fn sorted_rows<X: Score>(score: &[X], pool: &Pool) -> Result<Vec<(u64, usize)>> {
    let n = score.len();
    let row_bits = usize::BITS - (n.max(2) - 1).leading_zeros();
    if n > PACKED_ROWS || crowded(score, row_bits) {
        return sorted_key_rows(score, pool);
    }
    let mut packed: Vec<u64> = collect_chunked(
        n,
        |i| (score[i].key() >> row_bits << row_bits) | i as u64,
        pool,
    )?;
    sort_keys(&mut packed, pool)?;
    let row_mask = (1u64 << row_bits) - 1;
    let mut out: Vec<(u64, usize)> = big_vec(n, "the sorted rows")?;
    let mut run: Vec<(u64, usize)> = Vec::new();
    let mut start = 0;
    let mut next_check = CHECK_ROWS;
    while start < n {
        if start >= next_check {
            pool.check()?;
            next_check = start + CHECK_ROWS;
        }
        let high = packed[start] >> row_bits;
        if packed.get(start + 1).is_none_or(|&p| p >> row_bits != high) {
            out.push((high << row_bits, (packed[start] & row_mask) as usize));
            start += 1;
            continue;
        }
        let end = start
            + packed[start..]
                .iter()
                .take_while(|&&p| p >> row_bits == high)
                .count();
        run.clear();
        run.extend(packed[start..end].iter().map(|&p| {
            let row = (p & row_mask) as usize;
            (score[row].key(), row)
        }));
        if run.windows(2).any(|w| w[0].0 > w[1].0) {
            run.sort_unstable();
        }
        out.extend_from_slice(&run);
        start = end;
    }
    Ok(out)
}

/// `(key, row)` of every row in ascending key order.
fn sorted_key_rows<X: Score>(score: &[X], pool: &Pool) -> Result<Vec<(u64, usize)>> {
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
