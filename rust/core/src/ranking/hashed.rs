//! Tie groups of unweighted rows with few distinct scores, counted in hash
//! tables instead of sorting every row: scores rounded to a few decimals,
//! small integers, a model that outputs a few hundred calibrated values.
//!
//! A sample of the scores decides whether to try; a table that outgrows
//! [`MAX_GROUPS`] gives up (the caller sorts). Counts are integers, so the
//! tables of the threads add up to the same groups on any thread count, and
//! the groups equal those the sort gives.

use rayon::prelude::*;

use super::keys::Score;
use crate::error::Result;
use crate::parallel::Pool;

/// Rows below which sorting is cheap enough not to try.
const MIN_ROWS: usize = 1 << 16;
/// Scores sampled (evenly spaced) to estimate the distinct count.
const SAMPLE: usize = 4096;
/// The most distinct scores a table holds before giving up.
const MAX_GROUPS: usize = 1 << 14;
/// Rows one task of the parallel count reads.
const CHUNK: usize = 1 << 16;

/// Whether the sample of the scores repeats enough values (at least a fifth
/// of it) for the distinct count to be well under [`MAX_GROUPS`].
fn few_distinct<X: Score>(score: &[X]) -> bool {
    let step = (score.len() / SAMPLE).max(1);
    let mut keys: Vec<u64> = score
        .iter()
        .step_by(step)
        .take(SAMPLE)
        .map(|s| s.key())
        .collect();
    let m = keys.len();
    keys.sort_unstable();
    keys.dedup();
    5 * keys.len() <= 4 * m
}

/// Open addressing on the score keys: a slot is free while both its counts
/// are 0.
#[derive(Clone)]
struct Table {
    slots: Vec<(u64, u64, u64)>,
    used: usize,
}

impl Table {
    const BITS: u32 = (2 * MAX_GROUPS).trailing_zeros();

    fn new() -> Self {
        Self {
            slots: vec![(0, 0, 0); 2 * MAX_GROUPS],
            used: 0,
        }
    }

    /// Count `pos` positive and `neg` negative rows at `key`; false once
    /// the table holds more than [`MAX_GROUPS`] keys.
    #[inline(always)]
    fn add(&mut self, key: u64, pos: u64, neg: u64) -> bool {
        let mask = self.slots.len() - 1;
        #[allow(clippy::cast_possible_truncation)]
        let mut i = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - Self::BITS)) as usize;
        loop {
            let Some(slot) = self.slots.get_mut(i) else {
                return false;
            };
            if slot.1 == 0 && slot.2 == 0 {
                *slot = (key, pos, neg);
                self.used += 1;
                return self.used <= MAX_GROUPS;
            }
            if slot.0 == key {
                slot.1 += pos;
                slot.2 += neg;
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    /// The rows of one chunk counted in; false on a non-finite score (the
    /// sort path reports it) or a full table.
    fn count<X: Score>(&mut self, positive: &[bool], score: &[X]) -> bool {
        for (&p, &s) in positive.iter().zip(score) {
            if !s.is_finite() || !self.add(s.key(), u64::from(p), u64::from(!p)) {
                return false;
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

/// The tie groups of unweighted `(positive, score)` rows counted by hashing,
/// as `(key, positive rows, negative rows)` in increasing key order, or `None`
/// when the scores are not few (then the caller sorts them). The lengths are
/// checked by the caller.
///
/// # Errors
/// [`crate::error::MetricError::Interrupted`].
pub(super) fn hashed_groups<X: Score>(
    positive: &[bool],
    score: &[X],
    pool: &Pool,
) -> Result<Option<Vec<(u64, u64, u64)>>> {
    if score.len() < MIN_ROWS || !few_distinct(score) {
        return Ok(None);
    }
    let chunk = |mut t: Table, (ps, ss): (&[bool], &[X])| {
        if pool.stopped() || !t.count(ps, ss) {
            return None;
        }
        Some(t)
    };
    let table = if pool.parallel_for(score.len()) {
        pool.install(|| {
            positive
                .par_chunks(CHUNK)
                .zip(score.par_chunks(CHUNK))
                .try_fold(Table::new, chunk)
                .try_reduce(Table::new, |a, b| a.absorb(&b))
        })
    } else {
        positive
            .chunks(CHUNK)
            .zip(score.chunks(CHUNK))
            .try_fold(Table::new(), chunk)
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
