//! Tie groups of unweighted rows with few distinct scores, counted in hash
//! tables instead of sorting every row: scores rounded to a few decimals,
//! small integers, a model that outputs a few hundred calibrated values.
//!
//! A sample of the scores estimates the distinct count and decides whether
//! to try; the tables start at the estimate's size and double as they fill,
//! and one that outgrows the caller's limit gives up (the caller sorts). Counts
//! are integers, so the tables of the threads add up to the same groups on
//! any thread count, and the groups equal those the sort gives.

use ndarray::{s, ArrayView1, ArrayView2};
use rayon::prelude::*;
use std::ops::Range;

use super::keys::{starts_as_f32, starts_as_signed_f32, Score};
use crate::error::Result;
use crate::parallel::Pool;
use crate::row_rule::row_sum_fits;

/// Rows below which sorting is cheap enough not to try.
const MIN_ROWS: usize = 1 << 16;
/// Scores sampled (evenly spaced) to estimate the distinct count.
const SAMPLE: usize = 4096;
/// The most distinct scores a table holds before giving up where the
/// caller's other way is the binary ranking's own sort of float32 scores
/// (or float64 copies of them), which beats the tables past about 5 x 10^4
/// scores: 10^7 rows, two threads, 10^5 scores 63-67 ms sorted against
/// 77-90 ms counted, 2 x 10^5 73-78 against 127-150 ms (Intel).
pub(super) const RANKING_GROUPS: usize = 1 << 15;
/// The same where the caller's other way is the sort that collects the tie
/// groups ([`super::score_groups`], [`super::binary_proba_groups`]); the
/// tables then reach 2^19 slots (12 MiB). 10^7 rows, two threads, scores
/// uniform on 3 x 10^4 to 2 x 10^5 values: the sort 187-284 ms, the tables
/// 49-121 ms (Intel); at 3 x 10^5 values and more the sample declines (the
/// sort, 226-247 ms, as before).
pub(super) const TIE_GROUPS: usize = 1 << 18;
/// Rows one task of the parallel count reads.
const CHUNK: usize = 1 << 16;
/// Rows a chunk passes (`rows_pass`) and counts at a time.
const PIECE: usize = 1 << 10;
/// Rows whose slots the count asks for before counting them.
const BLOCK: usize = 16;

/// The limit of the binary ranking's tables: [`RANKING_GROUPS`] for scores
/// that start as float32 values of either sign (the float32 sorts), else
/// [`TIE_GROUPS`], where the general sort is the slower (10^7 float64 scores,
/// two threads: 3 x 10^4 values 110-120 -> 46-48 ms, 10^5 112-128 -> 68-94
/// ms, 2 x 10^5 113-131 -> 81 ms; Intel).
pub(super) fn ranking_limit<X: Score>(score: &[X]) -> usize {
    let f32s = starts_as_f32(score.iter().copied()) || starts_as_signed_f32(score.iter().copied());
    if f32s {
        RANKING_GROUPS
    } else {
        TIE_GROUPS
    }
}

/// Whether a sample of the scores suggests at most three quarters of
/// `limit` distinct scores: Chao's estimate of the distinct count
/// from the sample's distinct values `d`, its values seen once `f1` and twice
/// `f2` (A. Chao, "Nonparametric estimation of the number of classes in a
/// population", Scand. J. Statist. 11, 1984; the bias-corrected form
/// `d + f1 (f1 - 1) / (2 (f2 + 1))`). Continuous scores (nearly every sampled
/// value once) estimate far more; a wrong guess costs one table filled past
/// the limit, then the sort.
fn few_distinct<X: Score>(score: ArrayView1<'_, X>, limit: usize) -> Option<usize> {
    let step = (score.len() / SAMPLE).max(1);
    let mut keys: Vec<u64> = (0..score.len())
        .step_by(step)
        .take(SAMPLE)
        .map(|i| score[i].key())
        .collect();
    keys.sort_unstable();
    let (mut d, mut f1, mut f2) = (0usize, 0usize, 0usize);
    for run in keys.chunk_by(|a, b| a == b) {
        d += 1;
        f1 += usize::from(run.len() == 1);
        f2 += usize::from(run.len() == 2);
    }
    let estimate = d + f1 * f1.saturating_sub(1) / (2 * (f2 + 1));
    (4 * estimate <= 3 * limit).then_some(estimate)
}

/// Open addressing on the score keys: a slot is free while both its counts
/// are 0. The table starts at the size the sample suggests and doubles while
/// it is half full, up to `2 limit` slots.
#[derive(Clone)]
struct Table {
    slots: Vec<(u64, u64, u64)>,
    used: usize,
    /// The most keys it holds before giving up.
    limit: usize,
    /// `64 - log2(slots)`: the shift that takes a hash to a slot.
    shift: u32,
}

impl Table {
    /// A table with room for about `groups` keys, giving up past `limit`.
    fn with_groups(groups: usize, limit: usize) -> Self {
        let len = (2 * groups).next_power_of_two().clamp(1 << 10, 2 * limit);
        Self {
            slots: vec![(0, 0, 0); len],
            used: 0,
            limit,
            shift: 64 - len.trailing_zeros(),
        }
    }

    /// Count `pos` positive and `neg` negative rows at `key` (not both 0);
    /// false once the table would hold more than its limit of keys.
    #[inline(always)]
    fn add(&mut self, key: u64, pos: u64, neg: u64) -> bool {
        if self.place(key, pos, neg) {
            self.used += 1;
            if 2 * self.used > self.slots.len() {
                return self.grow();
            }
        }
        true
    }

    /// The slot where the search for `key` starts.
    #[inline(always)]
    fn slot_of(&self, key: u64) -> usize {
        #[allow(clippy::cast_possible_truncation)]
        let i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        i
    }

    /// Count the rows at `key`'s slot: whether the key took a free slot.
    #[inline(always)]
    fn place(&mut self, key: u64, pos: u64, neg: u64) -> bool {
        let mask = self.slots.len() - 1;
        let mut i = self.slot_of(key);
        // A table is at most half full, so a free slot or the key turns up.
        // The key is compared first: nearly every row finds it at once, a
        // branch the predictor learns, where a first test of the positive
        // count would be taken or not by the score (a score that only
        // negatives reach has none): 10^7 rows with scores that follow the
        // outcome, one thread, 100-108 -> 45-55 ms (Intel).
        while let Some(slot) = self.slots.get_mut(i) {
            let free = (slot.1 | slot.2) == 0;
            if slot.0 == key && !free {
                slot.1 += pos;
                slot.2 += neg;
                return false;
            }
            if free {
                *slot = (key, pos, neg);
                return true;
            }
            i = (i + 1) & mask;
        }
        false
    }

    /// Twice the slots, every key placed again; false past the largest table.
    #[cold]
    fn grow(&mut self) -> bool {
        if self.slots.len() >= 2 * self.limit {
            return false;
        }
        let len = 2 * self.slots.len();
        let old = std::mem::replace(&mut self.slots, vec![(0, 0, 0); len]);
        self.shift -= 1;
        for (k, p, n) in old {
            if p > 0 || n > 0 {
                self.place(k, p, n);
            }
        }
        true
    }

    /// The rows of one chunk counted in (`score(i)`: row `i`'s score); false
    /// on a non-finite score (the sort path reports it) or a full table.
    ///
    /// A block's keys and slots first, each slot asked for (tables of a few
    /// thousand keys outgrow the second-level cache), then each row counted
    /// where its key already is; a key elsewhere (a new one, a collision, a
    /// slot moved by a growth) takes the general search. A non-finite score
    /// is never placed, so it never finds its key: the search rejects it.
    fn count<X: Score>(&mut self, positive: &[bool], score: impl Fn(usize) -> X) -> bool {
        let mut keys = [0_u64; BLOCK];
        let mut at = [0_usize; BLOCK];
        for (b, flags) in positive.chunks(BLOCK).enumerate() {
            let first = b * BLOCK;
            for (j, (k, a)) in keys.iter_mut().zip(&mut at).enumerate().take(flags.len()) {
                *k = score(first + j).key();
                *a = self.slot_of(*k);
                #[cfg(target_arch = "x86_64")]
                crate::simd::prefetch(self.slots.as_ptr().wrapping_add(*a));
            }
            for (j, &p) in flags.iter().enumerate() {
                let k = keys[j];
                match self.slots.get_mut(at[j]) {
                    // A free slot holds key 0 with no rows.
                    Some(slot) if slot.0 == k && (k != 0 || (slot.1 | slot.2) != 0) => {
                        slot.1 += u64::from(p);
                        slot.2 += u64::from(!p);
                    }
                    _ => {
                        if !score(first + j).is_finite()
                            || !self.add(k, u64::from(p), u64::from(!p))
                        {
                            return false;
                        }
                    }
                }
            }
        }
        true
    }

    fn absorb(mut self, other: &Self) -> Option<Self> {
        for &(k, p, n) in &other.slots {
            if (p > 0 || n > 0) && !self.add(k, p, n) {
                return None;
            }
        }
        Some(self)
    }
}

/// The tables of every chunk of [`CHUNK`] rows, added up (on the pool's
/// threads when it has them); `None` when a table gave up or on a stop.
/// `scores(i)` gives row `i`'s score.
fn count_chunks<X: Score>(
    positive: &[bool],
    (estimate, limit): (usize, usize),
    pool: &Pool,
    scores: impl Fn(usize) -> X + Sync,
    rows_pass: impl Fn(Range<usize>) -> bool + Sync,
) -> Option<Table> {
    let n = positive.len();
    // Room for twice the estimate from the start: few tables grow.
    let new = || Table::with_groups(2 * estimate, limit);
    let chunk = |mut t: Table, c: usize| {
        if pool.stopped() {
            return None;
        }
        let rows = c * CHUNK..n.min((c + 1) * CHUNK);
        // A piece's rows passed, then counted while they are still in the
        // first-level cache.
        rows.clone()
            .step_by(PIECE)
            .all(|first| {
                let piece = first..rows.end.min(first + PIECE);
                rows_pass(piece.clone()) && t.count(&positive[piece], |i| scores(first + i))
            })
            .then_some(t)
    };
    let chunks = n.div_ceil(CHUNK);
    if pool.parallel_for(n) {
        pool.install(|| {
            // At most two pieces a thread, so few tables are made (zeroed
            // and faulted in) and absorbed.
            (0..chunks)
                .into_par_iter()
                .with_min_len(chunks.div_ceil(2 * pool.threads()))
                .try_fold(new, chunk)
                .try_reduce(new, |a, b| {
                    if a.used >= b.used {
                        a.absorb(&b)
                    } else {
                        b.absorb(&a)
                    }
                })
        })
    } else {
        (0..chunks).try_fold(new(), chunk)
    }
}

/// The tie groups of unweighted `(positive, score)` rows counted by hashing,
/// as `(key, positive rows, negative rows)` in increasing key order, or `None`
/// when the scores are not few (then the caller sorts them): more than
/// `limit` ([`RANKING_GROUPS`] or [`TIE_GROUPS`]). The scores may be strided
/// (a column of a row-major matrix, read where it lies). The lengths are
/// checked by the caller.
///
/// # Errors
/// [`crate::error::MetricError::Interrupted`].
pub(super) fn hashed_groups<X: Score>(
    positive: &[bool],
    score: ArrayView1<'_, X>,
    limit: usize,
    pool: &Pool,
) -> Result<Option<Vec<(u64, u64, u64)>>> {
    hashed_checked_groups(positive, score, limit, pool, |_| true)
}

/// [`hashed_groups`] of the second column of binary probabilities, each
/// chunk's rows checked before they are counted ([`binary_rows_pass`]; the
/// two entries of a row share a cache line, so the check costs no second
/// read of the matrix). `None` as [`hashed_groups`] past [`TIE_GROUPS`]
/// scores, and on the first chunk holding a row that fails the check. The
/// shape is checked by the caller.
///
/// # Errors
/// [`crate::error::MetricError::Interrupted`].
pub(super) fn hashed_binary_proba_groups<X: Score>(
    positive: &[bool],
    proba: ArrayView2<'_, X>,
    atol: f64,
    pool: &Pool,
) -> Result<Option<Vec<(u64, u64, u64)>>> {
    hashed_checked_groups(positive, proba.column(1), TIE_GROUPS, pool, |rows| {
        binary_rows_pass(proba, rows, atol)
    })
}

/// Whether the rows `rows` of binary probabilities pass the probability
/// pass's row check: both entries in [0, 1] (NaN fails) and their sum within
/// `atol` of 1 ([`row_sum_fits`]). Every row's faults are or-ed in, no early exit: loops
/// without branches.
pub(super) fn binary_rows_pass<X: Score>(
    proba: ArrayView2<'_, X>,
    rows: Range<usize>,
    atol: f64,
) -> bool {
    let faults = move |a: X, b: X| {
        let (a, b) = (a.to_f64(), b.to_f64());
        let fine = (0.0..=1.0).contains(&a) & (0.0..=1.0).contains(&b) & row_sum_fits(a + b, atol);
        u8::from(!fine)
    };
    let part = proba.slice(s![rows, ..]);
    let bad = match part.as_slice() {
        // Row-major: the pairs in one run.
        Some(flat) => flat
            .chunks_exact(2)
            .fold(0, |bad, r| bad | faults(r[0], r[1])),
        None => part
            .column(0)
            .iter()
            .zip(part.column(1))
            .fold(0, |bad, (&a, &b)| bad | faults(a, b)),
    };
    bad == 0
}

/// [`binary_rows_pass`] of every row, in chunks on the pool's threads.
///
/// # Errors
/// [`crate::error::MetricError::Interrupted`].
pub(super) fn all_binary_rows_pass<X: Score>(
    proba: ArrayView2<'_, X>,
    atol: f64,
    pool: &Pool,
) -> Result<bool> {
    let n = proba.nrows();
    let chunk = |c: usize| {
        !pool.stopped() && binary_rows_pass(proba, c * CHUNK..n.min((c + 1) * CHUNK), atol)
    };
    let chunks = n.div_ceil(CHUNK);
    let all = if pool.parallel_for(n) {
        pool.install(|| (0..chunks).into_par_iter().all(chunk))
    } else {
        (0..chunks).all(chunk)
    };
    pool.check()?;
    Ok(all)
}

/// [`hashed_groups`], each chunk's rows first passed by `rows_pass` (`None`
/// when one fails).
fn hashed_checked_groups<X: Score>(
    positive: &[bool],
    score: ArrayView1<'_, X>,
    limit: usize,
    pool: &Pool,
    rows_pass: impl Fn(Range<usize>) -> bool + Sync,
) -> Result<Option<Vec<(u64, u64, u64)>>> {
    let n = score.len();
    if n < MIN_ROWS {
        return Ok(None);
    }
    let Some(estimate) = few_distinct(score, limit) else {
        return Ok(None);
    };
    // One loop per layout, each its own copy of the count: a slice's
    // index where the scores are contiguous, the view's (a stride a step)
    // where they are not.
    let table = match score.as_slice() {
        Some(all) => count_chunks(positive, (estimate, limit), pool, |i| all[i], rows_pass),
        None => count_chunks(positive, (estimate, limit), pool, |i| score[i], rows_pass),
    };
    pool.check()?;
    Ok(table.map(|t| {
        let mut found: Vec<(u64, u64, u64)> = t
            .slots
            .into_iter()
            .filter(|&(_, p, n)| p > 0 || n > 0)
            .collect();
        found.sort_unstable_by_key(|g| g.0);
        found
    }))
}

#[cfg(test)]
mod tests;
