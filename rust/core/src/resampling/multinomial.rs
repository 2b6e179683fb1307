//! Exact multinomial draws of cell counts (docs/definitions.md §11, the
//! multinomial scheme): resampling `n` rows with replacement draws the counts
//! of the occupied cells from `Multinomial(n, counts / n)`, one replicate in
//! O(cells) whatever `n`.
//!
//! A stratum's cells are split in halves, recursively: a node holding `m`
//! rows over cells `lo..hi` sends `Binomial(m, p)` of them to `lo..mid` and
//! the rest to `mid..hi`, with `p` the share of the original counts in
//! `lo..mid` (the multinomial is the product of these conditionals). Each
//! binomial draw is a pure function of `(seed, replicate, node, m, p)`: its
//! uniforms come from the counter-based stream of [`crate::random`] with the
//! counter `(replicate, node, attempt, CELL_SPLITS)`, the node named by the
//! global position of its split (every split position names one node). So a
//! replicate does not depend on the thread that drew it, and the numpy
//! backend (`cmetrics._numpy.multinomial`) draws the same counts, level by
//! level, bit for bit (the sampler: [`super::binomial`]).
//!
//! Here a replicate's tree is drawn level by level: the draws of a level are
//! independent, so their first attempts run side by side in vector lanes
//! ([`super::binomial_lanes`]) and only the draws that attempt leaves open take
//! the scalar steps.

use super::binomial::{binomial_or_btrd, Btrd, Stream, MAX_TOTAL};
use super::binomial_lanes::{
    full_attempts, squeeze_attempts, Draws, LANES, OUTSIDE, REJECTED, SQUEEZED,
};
use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::Pool;
use crate::random::key_of;
use rayon::prelude::*;

/// A node of the split tree: cells `lo..hi` holding `m` resampled rows.
#[derive(Clone, Copy)]
struct Node {
    lo: usize,
    hi: usize,
    m: u64,
}

/// A level's BTRD draws, side by side.
#[derive(Default)]
struct Batch {
    /// Each draw and the level node it splits.
    owner: Vec<Owner>,
    /// The draws as lanes (their first attempts taken in place), each draw's
    /// attempt, and a later round's lanes.
    first: Lanes,
    attempt: Vec<u32>,
    later: Lanes,
    /// The draws a round takes (indices), those the next round takes, and those
    /// whose uniform fell outside the squeeze.
    todo: Vec<usize>,
    again: Vec<usize>,
    outside: Vec<usize>,
}

/// A BTRD draw and the level node whose split it is.
#[derive(Clone, Copy)]
struct Owner {
    slot: usize,
    draw: Btrd,
}

/// The lanes of one vector pass.
#[derive(Default)]
struct Lanes {
    n: Vec<f64>,
    p: Vec<f64>,
    node: Vec<u32>,
    attempt: Vec<u32>,
    count: Vec<f64>,
    state: Vec<u8>,
    accepted: Vec<bool>,
}

impl Lanes {
    fn clear(&mut self) {
        self.n.clear();
        self.p.clear();
        self.node.clear();
        self.attempt.clear();
    }

    /// Whole vectors: padding lanes of any valid BTRD arguments (their results
    /// unread), the attempts (0 where not given), and room for the results.
    fn pad(&mut self) {
        let width = self.n.len().div_ceil(LANES) * LANES;
        self.n.resize(width, 20.0);
        self.p.resize(width, 0.5);
        self.node.resize(width, 0);
        self.attempt.resize(width, 0);
        self.count.resize(width, 0.0);
        self.state.resize(width, REJECTED);
        self.accepted.resize(width, false);
    }

    /// The lanes of the draws `which` of `all`, at their attempts.
    fn gather(&mut self, which: &[usize], all: &Lanes, attempt: &[u32]) {
        self.clear();
        for &i in which {
            self.n.push(all.n[i]);
            self.p.push(all.p[i]);
            self.node.push(all.node[i]);
            self.attempt.push(attempt[i]);
        }
        self.pad();
    }

    /// The lanes' draws and the buffers of their results.
    fn split(&mut self, stream: Stream) -> (Draws<'_>, &mut [f64], &mut [u8], &mut [bool]) {
        let draws = Draws {
            n: &self.n,
            p: &self.p,
            node: &self.node,
            attempt: &self.attempt,
            key: stream.key,
            replicate: stream.replicate,
        };
        (draws, &mut self.count, &mut self.state, &mut self.accepted)
    }
}

impl Batch {
    fn clear(&mut self) {
        self.owner.clear();
        self.first.clear();
    }

    /// A draw to take, for level node `slot`.
    #[inline]
    fn push(&mut self, slot: usize, draw: Btrd, node: u32) {
        self.owner.push(Owner { slot, draw });
        self.first.n.push(draw.n);
        self.first.p.push(draw.p);
        self.first.node.push(node);
    }

    /// Every draw's count into `left[slot]`, in rounds of vector passes: each
    /// round takes one attempt of every draw still open, the squeeze of all
    /// first, then the full test of those whose uniform fell outside it; the
    /// draws it rejects take their next attempt in the next round. The same
    /// attempts, words and operations as the scalar sampler, so the same counts.
    fn take(&mut self, stream: Stream, left: &mut [u64]) {
        let Self {
            owner,
            first,
            attempt,
            later,
            todo,
            again,
            outside,
        } = self;
        let live = owner.len();
        if live == 0 {
            return;
        }
        first.pad();
        attempt.clear();
        attempt.resize(live, 0);
        todo.clear();
        todo.extend(0..live);
        let mut round = 0;
        while !todo.is_empty() {
            again.clear();
            outside.clear();
            let lanes = if round == 0 {
                &mut *first
            } else {
                later.gather(todo, first, attempt);
                &mut *later
            };
            let (draws, count, state, _) = lanes.split(stream);
            squeeze_attempts(draws, count, state);
            for (j, &i) in todo.iter().enumerate() {
                match lanes.state[j] {
                    SQUEEZED => left[owner[i].slot] = owner[i].draw.count(lanes.count[j]),
                    OUTSIDE => outside.push(i),
                    _ => again.push(i),
                }
            }
            if !outside.is_empty() {
                later.gather(outside, first, attempt);
                let (draws, count, _, accepted) = later.split(stream);
                full_attempts(draws, count, accepted);
                for (j, &i) in outside.iter().enumerate() {
                    if later.accepted[j] {
                        left[owner[i].slot] = owner[i].draw.count(later.count[j]);
                    } else {
                        again.push(i);
                    }
                }
            }
            for &i in again.iter() {
                attempt[i] = attempt[i].wrapping_add(1);
            }
            std::mem::swap(todo, again);
            round += 1;
        }
    }
}

/// A replicate's working space: the nodes of a level and the next, each
/// node's left count, the level's BTRD draws.
#[derive(Default)]
struct Scratch {
    level: Vec<Node>,
    next: Vec<Node>,
    left: Vec<u64>,
    batch: Batch,
}

/// `left` of a node that does not split (one cell, or no rows).
const NO_SPLIT: u64 = u64::MAX;

/// The draws of one replicate (`out` zeroed), level by level: the draws of a
/// level are independent of each other, so their BTRD attempts run in vector
/// lanes, round by round ([`Batch::take`]).
fn draw_replicate(
    out: &mut [f64],
    share: &[f64],
    strata: &[(usize, usize, u64)],
    stream: Stream,
    scratch: &mut Scratch,
) {
    let Scratch {
        level,
        next,
        left,
        batch,
    } = scratch;
    level.clear();
    level.extend(
        strata
            .iter()
            .filter(|s| s.1 > s.0)
            .map(|&(lo, hi, m)| Node { lo, hi, m }),
    );
    while !level.is_empty() {
        left.clear();
        batch.clear();
        for (slot, &Node { lo, hi, m }) in level.iter().enumerate() {
            if hi - lo == 1 {
                out[lo] = m as f64;
                left.push(NO_SPLIT);
                continue;
            }
            if m == 0 {
                left.push(NO_SPLIT);
                continue;
            }
            let mid = lo + (hi - lo) / 2;
            let node = mid as u32;
            match binomial_or_btrd(m, share[mid], Stream { node, ..stream }) {
                Ok(k) => left.push(k),
                Err(draw) => {
                    left.push(0);
                    batch.push(slot, draw, node);
                }
            }
        }
        batch.take(stream, left);
        next.clear();
        for (&Node { lo, hi, m }, &l) in level.iter().zip(left.iter()) {
            if l == NO_SPLIT {
                continue;
            }
            let mid = lo + (hi - lo) / 2;
            next.push(Node { lo, hi: mid, m: l });
            next.push(Node {
                lo: mid,
                hi,
                m: m - l,
            });
        }
        std::mem::swap(level, next);
    }
}

/// Replicates `first .. first + count` of the multinomial resampling of
/// `counts`, stratum by stratum (`stratum_ends`: where each stratum's cells
/// end; each stratum keeps its total): `count x cells`, row-major.
///
/// # Errors
/// [`MetricError::InvalidValue`] when a stratum's total reaches 2^53 or the
/// ends are not increasing up to the cell count; `OutOfMemory`; `Interrupted`.
pub fn multinomial_draws(
    counts: &[u64],
    stratum_ends: &[usize],
    first: u64,
    count: usize,
    seed: u64,
    pool: &Pool,
) -> Result<Vec<f64>> {
    let cells = counts.len();
    if u32::try_from(cells).is_err() || first.saturating_add(count as u64) > 1 << 32 {
        return Err(MetricError::InvalidValue {
            arg: "counts",
            detail: "at most 2^32 cells and 2^32 replicates".into(),
        });
    }
    let mut strata = Vec::with_capacity(stratum_ends.len());
    let mut start = 0;
    for &end in stratum_ends {
        if end < start || end > cells {
            return Err(MetricError::InvalidValue {
                arg: "stratum_ends",
                detail: "must increase up to the number of cells".into(),
            });
        }
        let total = counts[start..end]
            .iter()
            .try_fold(0_u64, |t, &c| t.checked_add(c).filter(|&t| t < MAX_TOTAL));
        let Some(total) = total else {
            return Err(MetricError::InvalidValue {
                arg: "counts",
                detail: "a stratum holds 2^53 rows or more: too many to draw exactly in float64"
                    .into(),
            });
        };
        strata.push((start, end, total));
        start = end;
    }
    // The left share of every split, named by its position.
    let mut share = try_filled(cells, 0.0, "the multinomial shares")?;
    let mut prefix = try_filled(cells + 1, 0_u64, "the multinomial shares")?;
    for (i, &c) in counts.iter().enumerate() {
        prefix[i + 1] = prefix[i] + c;
    }
    for &(lo, hi, _) in &strata {
        fill_shares(&mut share, &prefix, lo, hi);
    }
    let Some(size) = count.checked_mul(cells) else {
        return Err(MetricError::OutOfMemory {
            what: "the multinomial draws",
            bytes: (count as u128) * (cells as u128) * 8,
        });
    };
    let mut out = try_filled(size, 0.0, "the multinomial draws")?;
    if cells == 0 {
        return Ok(out);
    }
    let key = key_of(seed);
    let draw = |scratch: &mut Scratch, (b, row): (usize, &mut [f64])| -> Result<()> {
        pool.check()?;
        let stream = Stream {
            key,
            replicate: (first + b as u64) as u32,
            node: 0,
        };
        draw_replicate(row, &share, &strata, stream, scratch);
        Ok(())
    };
    if pool.threads() > 1 && count > 1 {
        pool.install(|| {
            out.par_chunks_mut(cells)
                .enumerate()
                .try_for_each_init(Scratch::default, draw)
        })?;
    } else {
        let mut scratch = Scratch::default();
        out.chunks_mut(cells)
            .enumerate()
            .try_for_each(|item| draw(&mut scratch, item))?;
    }
    Ok(out)
}

/// The left shares of the splits of cells `lo..hi` (recursively).
fn fill_shares(share: &mut [f64], prefix: &[u64], lo: usize, hi: usize) {
    if hi - lo < 2 {
        return;
    }
    let mid = lo + (hi - lo) / 2;
    let total = prefix[hi] - prefix[lo];
    if total > 0 {
        share[mid] = (prefix[mid] - prefix[lo]) as f64 / total as f64;
    }
    fill_shares(share, prefix, lo, mid);
    fill_shares(share, prefix, mid, hi);
}

#[cfg(test)]
mod tests {
    use super::super::binomial::binomial;
    use super::*;

    #[test]
    fn draws_keep_each_stratum_total_and_ignore_the_threads() {
        let counts = [5_u64, 0, 17, 300, 2, 9_000, 1, 44];
        let ends = [3, 3, 8];
        let one = multinomial_draws(&counts, &ends, 10, 33, 7, &Pool::sequential()).unwrap();
        let two = multinomial_draws(&counts, &ends, 10, 33, 7, &Pool::new(3)).unwrap();
        assert_eq!(one, two);
        for row in one.chunks(8) {
            assert_eq!(row[..3].iter().sum::<f64>(), 22.0);
            assert_eq!(row[3..].iter().sum::<f64>(), 9_347.0);
            assert_eq!(row[1], 0.0);
        }
        // Replicate 12 drawn alone is the third row above.
        let alone = multinomial_draws(&counts, &ends, 12, 1, 7, &Pool::sequential()).unwrap();
        assert_eq!(alone, one[16..24]);
    }

    /// The draws depth first, one scalar [`binomial`] at a time (the reference of
    /// the level-by-level draws).
    fn reference(
        counts: &[u64],
        seed: u64,
        replicate: u32,
        out: &mut [f64],
        lo: usize,
        hi: usize,
        m: u64,
    ) {
        if hi - lo == 1 {
            out[lo] = m as f64;
            return;
        }
        let mid = lo + (hi - lo) / 2;
        let left_total: u64 = counts[lo..mid].iter().sum();
        let total: u64 = counts[lo..hi].iter().sum();
        let p = if total > 0 {
            left_total as f64 / total as f64
        } else {
            0.0
        };
        let stream = Stream {
            key: key_of(seed),
            replicate,
            node: mid as u32,
        };
        let left = binomial(m, p, stream);
        reference(counts, seed, replicate, out, lo, mid, left);
        reference(counts, seed, replicate, out, mid, hi, m - left);
    }

    #[test]
    fn level_order_draws_are_the_depth_first_draws() {
        // Means below and above 10, shares on both sides of 1/2, huge and tiny totals,
        // zero cells.
        let cases: [&[u64]; 5] = [
            &[300, 300, 70_000, 300, 3, 597, 0, 12],
            &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
            &[5_000_000, 5_000_000, 1, 1_000_000_000_000],
            &[40, 160, 500, 500, 700, 300, 9_000, 1_000, 17],
            &[2, 0, 0, 5],
        ];
        for counts in cases {
            let total: u64 = counts.iter().sum();
            let cells = counts.len();
            for threads in [1, 2] {
                let got =
                    multinomial_draws(counts, &[cells], 3, 45, 77, &Pool::new(threads)).unwrap();
                for (b, row) in got.chunks(cells).enumerate() {
                    let mut want = vec![0.0; cells];
                    reference(counts, 77, 3 + b as u32, &mut want, 0, cells, total);
                    assert_eq!(row, &want[..], "{counts:?} replicate {b}");
                }
            }
        }
    }

    #[test]
    fn batched_draws_are_the_scalar_draws() {
        // Means from 10 up, shares on both sides of 1/2 and at the extremes, totals up to
        // 2^52: the squeeze, the test near the mode, the test far from it, rejections.
        let totals = [
            20_u64,
            41,
            600,
            1_203,
            70_000,
            1_000_003,
            1 << 40,
            (1 << 52) - 1,
        ];
        let shares = [0.5, 0.48, 0.3, 0.9, 0.004, 1e-9, 0.999_999];
        let mut batch = Batch::default();
        let mut want = Vec::new();
        for replicate in 0..60_u32 {
            let stream = Stream {
                key: key_of(12_345),
                replicate,
                node: 0,
            };
            batch.clear();
            want.clear();
            for &n in &totals {
                for &p in &shares {
                    let node = want.len() as u32 * 7 + 1;
                    let at = Stream { node, ..stream };
                    want.push(binomial(n, p, at));
                    if let Err(draw) = binomial_or_btrd(n, p, at) {
                        batch.push(want.len() - 1, draw, node);
                    }
                }
            }
            assert!(batch.owner.len() > 30);
            let mut left = vec![u64::MAX; want.len()];
            batch.take(stream, &mut left);
            for o in &batch.owner {
                let (n, p) = (o.draw.n, o.draw.p);
                assert_eq!(left[o.slot], want[o.slot], "{n} {p} {replicate}");
            }
        }
    }

    #[test]
    fn bad_strata_and_totals_are_errors() {
        let pool = Pool::sequential();
        assert!(multinomial_draws(&[1, 2], &[3], 0, 1, 0, &pool).is_err());
        assert!(multinomial_draws(&[1, 2], &[2, 1], 0, 1, 0, &pool).is_err());
        assert!(multinomial_draws(&[1 << 52, 1 << 52], &[2], 0, 1, 0, &pool).is_err());
        assert!(multinomial_draws(&[u64::MAX, 1], &[2], 0, 1, 0, &pool).is_err());
        assert!(multinomial_draws(&[1], &[1], u64::from(u32::MAX), 2, 0, &pool).is_err());
    }
}
