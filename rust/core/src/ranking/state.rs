//! The streaming ranking state: the exact tie groups of every
//! `(score, outcome, weight)` row seen so far, built incrementally.
//!
//! Rows are appended to a buffer of score keys and outcomes. When the buffer
//! holds as many rows as a quarter of the groups already kept (and at least
//! [`MIN_BUFFER`]), it is compacted (module `compaction`): unweighted rows
//! are packed into one `u32` or `u64` each (the key bits that vary, about 25
//! of 64 for float32 scores, then the outcome), sorted and merged as tie
//! groups, in place from the back, into the sorted groups; weighted rows are
//! sorted by (key, weight) on each side and collapsed first. Each compaction
//! costs time linear in the groups plus the buffer, and the buffer is at
//! least a quarter of the groups, so a row costs O(1) amortised work besides
//! its sort. Memory is 16 bytes per distinct score (32 with weights) plus
//! the buffer and its sorting space (17 bytes per buffered row).
//!
//! Groups hold `u32` counts; a score seen more than `u32::MAX` times on one
//! side spreads over adjacent entries with the same key, which every reader
//! adds up. Everything is integers and sorted sequences, so the groups do not
//! depend on how the rows were split into calls, nor on the thread count;
//! weight sums are f64 sums in a fixed order per compaction (they can differ
//! from one split to another by rounding only).

use super::binary::{check_finite, check_weights, BinaryRanking};
use super::groups::{GroupsRef, ScoreGroups};
use super::keys::{from_order_key, order_key};
use super::pieces::walk_groups_in_pieces;
use super::sorted_groups::{Groups, GroupsBack};
use super::walk::walk_groups_iter;
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::{reserve_big, Pool};
use rayon::prelude::*;

/// Buffered rows that trigger a compaction at the least: 2^24 (151 MB of
/// buffered keys and outcomes at most, resident only as rows come), so that
/// an evaluation of up to 16.7 million rows sorts them once, when it is
/// walked, instead of merging a second compaction into the groups of the
/// first (10^7 float32 confidences in batches of 2^20, Zen 5: 96-107 ms ->
/// 76-83 ms to walk).
pub const MIN_BUFFER: usize = 1 << 24;

/// Points of a state's curve from the highest score down: when every row
/// scored at least `thresholds[i]` is accepted, `fps[i]` negative and
/// `tps[i]` positive rows (weights, when weighted) are; the last point
/// accepts every row. ROC, precision-recall and risk-coverage curves are
/// read off them.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct CurvePoints {
    pub fps: Vec<f64>,
    pub tps: Vec<f64>,
    pub thresholds: Vec<f64>,
}

impl CurvePoints {
    fn push(&mut self, (fp, tp, threshold): (f64, f64, f64)) {
        self.fps.push(fp);
        self.tps.push(tp);
        self.thresholds.push(threshold);
    }
}

/// The exact, mergeable ranking state (module docs).
#[derive(Debug, Clone, Default)]
pub struct GroupState {
    pub(super) weighted: bool,
    /// Buffered rows that trigger a compaction at the least.
    pub(super) min_buffer: usize,
    pub(super) groups: Groups,
    /// Buffered score keys and outcomes of unweighted rows.
    pub(super) buf_keys: Vec<u64>,
    pub(super) buf_pos: Vec<bool>,
    /// Buffered `(key, weight bits)` of positive and negative rows (weighted).
    pub(super) wbuf_pos: Vec<u128>,
    pub(super) wbuf_neg: Vec<u128>,
    /// The packed rows of a compaction (kept for the next one): `u64`, or
    /// `u32` when they fit (see [`GroupState::compact_unweighted`]).
    pub(super) scratch: Vec<u64>,
    pub(super) narrow: Vec<u32>,
    /// A compaction was refused memory after it took the buffered rows: the
    /// state lost rows, and every later use says so instead of answering.
    pub(super) broken: bool,
}

impl GroupState {
    /// An empty state for weighted or unweighted rows.
    #[must_use]
    pub fn new(weighted: bool) -> Self {
        Self {
            weighted,
            min_buffer: MIN_BUFFER,
            ..Self::default()
        }
    }

    /// The same state with compactions from `rows` buffered rows on (tests
    /// use small buffers to exercise the merges).
    #[must_use]
    pub fn with_min_buffer(mut self, rows: usize) -> Self {
        self.min_buffer = rows.max(1);
        self
    }

    /// Whether rows carry weights.
    #[must_use]
    pub fn weighted(&self) -> bool {
        self.weighted
    }

    pub(super) fn buffered(&self) -> usize {
        self.buf_keys.len() + self.wbuf_pos.len() + self.wbuf_neg.len()
    }

    /// Groups kept plus rows buffered: what the state holds now.
    #[must_use]
    pub fn entries(&self) -> usize {
        self.groups.len() + self.buffered()
    }

    /// Bytes held (capacity included).
    #[must_use]
    pub fn nbytes(&self) -> usize {
        let g = &self.groups;
        8 * (g.keys.capacity() + g.w_pos.capacity() + g.w_neg.capacity())
            + 4 * (g.pos.capacity() + g.neg.capacity())
            + 9 * self.buf_keys.capacity()
            + 8 * self.scratch.capacity()
            + 4 * self.narrow.capacity()
            + 16 * (self.wbuf_pos.capacity() + self.wbuf_neg.capacity())
    }

    /// Add rows: `positive[i]` is row i's outcome, `score[i]` its score
    /// (finite; `-0.0 == 0.0`), `weight[i]` its weight (finite, >= 0).
    ///
    /// # Errors
    /// Length mismatch, a non-finite score, an invalid weight, weights given
    /// to an unweighted state or missing for a weighted one.
    pub fn add(
        &mut self,
        positive: &[bool],
        score: &[f64],
        weight: Option<&[f64]>,
        pool: &Pool,
    ) -> Result<()> {
        self.check_whole()?;
        let n = rows_of(positive, score)?;
        ensure!(
            weight.is_some() == self.weighted,
            MetricError::InvalidValue {
                arg: "sample_weight",
                detail: if self.weighted {
                    "this ranking state holds weighted rows; pass weights".into()
                } else {
                    "this ranking state holds unweighted rows; pass no weights".into()
                },
            }
        );
        check_finite("confidence", score)?;
        // Packed groups count in u32: compact before the buffer could reach 2^32 rows.
        if self.buffered() + n >= 1 << 32 {
            self.compact(pool)?;
        }
        match weight {
            None => {
                // When the rows do not fit, doubled up to the compaction's size, not grown
                // a batch at a time (each growth moved the whole buffer); a batch of 2^20
                // rows or more takes room up to that size at once (address space, resident
                // only as rows come), so the buffer of a large evaluation is never moved.
                let (at, most) = (
                    self.buf_keys.len(),
                    self.min_buffer.max(self.groups.len() / 4),
                );
                if at + n > self.buf_keys.capacity().min(self.buf_pos.capacity()) {
                    let doubled = self.buf_keys.capacity().saturating_mul(2);
                    let room = if n >= 1 << 20 {
                        most
                    } else {
                        doubled.min(most)
                    };
                    let grow = (at + n).max(room) - at;
                    reserve_big(&mut self.buf_keys, grow, "the ranking state's buffer")?;
                    reserve_big(&mut self.buf_pos, grow, "the ranking state's buffer")?;
                }
                if pool.parallel_for(n) {
                    // The buffer's fresh pages faulted in on every thread, not on this one alone.
                    pool.install(|| {
                        self.buf_keys
                            .par_extend(score.par_iter().map(|&s| order_key(s)));
                        self.buf_pos.par_extend(positive.par_iter().copied());
                    });
                } else {
                    self.buf_keys.extend(score.iter().map(|&s| order_key(s)));
                    self.buf_pos.extend_from_slice(positive);
                }
            }
            Some(w) => {
                check_weights(w, n, "confidence")?;
                for ((&p, &s), &wi) in positive.iter().zip(score).zip(w) {
                    let item = (u128::from(order_key(s)) << 64) | u128::from((wi + 0.0).to_bits());
                    if p {
                        self.wbuf_pos.push(item);
                    } else {
                        self.wbuf_neg.push(item);
                    }
                }
            }
        }
        if self.buffered() >= self.min_buffer.max(self.groups.len() / 4) {
            self.compact(pool)?;
        }
        Ok(())
    }

    /// Add rows with each score replaced by the lower edge of its bin of
    /// width `1 / bins` in [0, 1] (1.0 in a bin of its own): the approximate
    /// mode, counted in a histogram of `bins + 1` cells and merged at once.
    ///
    /// # Errors
    /// As [`Self::add`], and a score outside [0, 1].
    pub fn add_binned(
        &mut self,
        positive: &[bool],
        score: &[f64],
        weight: Option<&[f64]>,
        bins: u32,
        pool: &Pool,
    ) -> Result<()> {
        self.check_whole()?;
        let n = score.len();
        ensure!(
            positive.len() == n && weight.is_none_or(|w| w.len() == n),
            MetricError::LengthMismatch {
                a: if positive.len() == n {
                    "sample_weight"
                } else {
                    "correct"
                },
                a_len: if positive.len() == n {
                    weight.map_or(0, <[f64]>::len)
                } else {
                    positive.len()
                },
                b: "confidence",
                b_len: n,
            }
        );
        ensure!(
            weight.is_some() == self.weighted && bins > 0,
            MetricError::InvalidValue {
                arg: "sample_weight",
                detail: "weights must match the ranking state and bins must be positive".into(),
            }
        );
        check_finite("confidence", score)?;
        check_unit(score)?;
        if let Some(w) = weight {
            check_weights(w, n, "confidence")?;
        }
        let cells = bins as usize + 1;
        let scale = f64::from(bins);
        let cell_of = |x: f64| {
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            let c = (x * scale).floor() as usize;
            c.min(cells - 1)
        };
        let mut counts = try_filled(cells, [0_u64; 2], "the binned ranking histogram")?;
        let mut sums = try_filled(
            if self.weighted { cells } else { 0 },
            [0.0_f64; 2],
            "the binned ranking histogram",
        )?;
        for (i, (&p, &x)) in positive.iter().zip(score).enumerate() {
            let c = cell_of(x);
            if let Some(slot) = counts.get_mut(c) {
                slot[usize::from(!p)] += 1;
            }
            if let (Some(w), Some(slot)) = (weight, sums.get_mut(c)) {
                slot[usize::from(!p)] += w.get(i).copied().unwrap_or(0.0);
            }
        }
        let mut run = Groups::default();
        for (c, &[p, q]) in counts.iter().enumerate() {
            if p + q > 0 {
                #[allow(clippy::cast_precision_loss)]
                let key = order_key(c as f64 / scale);
                let [wp, wq] = sums.get(c).copied().unwrap_or([0.0; 2]);
                run.push(key, p, q, wp, wq, self.weighted);
            }
        }
        self.compact(pool)?;
        self.groups
            .merge_in(GroupsBack::new(&run), run.len(), self.weighted)
    }

    /// Sort the buffered rows into tie groups and merge them into the groups.
    ///
    /// # Errors
    /// [`MetricError::OutOfMemory`]: refused before the buffered rows are
    /// taken, the state is as it was; after, the state is marked broken
    /// and every later call fails ([`Self::check_whole`]).
    pub fn compact(&mut self, pool: &Pool) -> Result<()> {
        self.check_whole()?;
        let result = self.compact_buffer(pool);
        if result.is_err() && self.buffered() == 0 {
            self.broken = true;
        }
        result
    }

    /// An error once a compaction lost rows (see [`Self::compact`]).
    ///
    /// # Errors
    /// [`MetricError::InvalidValue`].
    pub fn check_whole(&self) -> Result<()> {
        ensure!(
            !self.broken,
            MetricError::InvalidValue {
                arg: "ranking state",
                detail: "an allocation failed while it merged its buffered rows, so it lost rows; score the \
                         rows again with more memory or in smaller batches"
                    .into(),
            }
        );
        Ok(())
    }

    /// Merge another state's rows into this one.
    ///
    /// # Errors
    /// One state weighted and the other not.
    pub fn merge(&mut self, other: &mut Self, pool: &Pool) -> Result<()> {
        ensure!(
            other.weighted == self.weighted || other.entries() == 0,
            MetricError::InvalidValue {
                arg: "other",
                detail: "one ranking state has weights and the other has not".into()
            }
        );
        other.compact(pool)?;
        self.compact(pool)?;
        let g = &other.groups;
        self.groups
            .merge_in(GroupsBack::new(g), g.len(), self.weighted)
    }

    /// Merge exported groups (from [`Self::groups`], or a saved state).
    ///
    /// # Errors
    /// Malformed groups, weights that do not match the state.
    pub fn absorb(&mut self, g: GroupsRef<'_>, pool: &Pool) -> Result<()> {
        g.check("groups")?;
        let weighted = !g.w_pos.is_empty() || !g.w_neg.is_empty();
        ensure!(
            g.values.is_empty() || weighted == self.weighted,
            MetricError::InvalidValue {
                arg: "groups",
                detail: "the groups' weights do not match the ranking state".into()
            }
        );
        let mut run = Groups::default();
        for i in 0..g.values.len() {
            let (p, n, wp, wn) = g.get(i);
            let key = order_key(g.values.get(i).copied().unwrap_or(0.0));
            run.push(key, p, n, wp, wn, self.weighted);
        }
        self.compact(pool)?;
        self.groups
            .merge_in(GroupsBack::new(&run), run.len(), self.weighted)
    }

    /// The tie groups (distinct scores, increasing, with u64 counts).
    ///
    /// # Errors
    /// [`MetricError::OutOfMemory`].
    pub fn groups(&mut self, pool: &Pool) -> Result<ScoreGroups> {
        self.compact(pool)?;
        let mut out = ScoreGroups::default();
        for (key, p, n, wp, wn) in self.groups.distinct() {
            out.push(from_order_key(key), (p, n, wp, wn), self.weighted);
        }
        Ok(out)
    }

    /// Points of the state's curve, from the highest score down (see
    /// [`CurvePoints`]): every group when there are at most `steps`, else the
    /// first point of each of `steps` equal steps of `(fpr + tpr) / 2` along
    /// the curve, and its two ends. One read of the groups, nothing per row
    /// kept: a curve of 10^8 rows is read in milliseconds.
    ///
    /// # Errors
    /// [`MetricError::OutOfMemory`].
    pub fn curve_points(&mut self, steps: usize, pool: &Pool) -> Result<CurvePoints> {
        self.compact(pool)?;
        let (mut n_groups, mut np, mut nn, mut wp, mut wn) =
            (0_usize, 0_u64, 0_u64, 0.0_f64, 0.0_f64);
        for (_, p, n, a, b) in self.groups.distinct() {
            n_groups += 1;
            np += p;
            nn += n;
            wp += a;
            wn += b;
        }
        let weighted = self.weighted;
        #[allow(clippy::cast_precision_loss)]
        let (tot_p, tot_n) = if weighted {
            (wp, wn)
        } else {
            (np as f64, nn as f64)
        };
        let every = n_groups <= steps || !(tot_p > 0.0 && tot_n > 0.0);
        #[allow(clippy::cast_precision_loss)]
        let steps_f = steps as f64;
        let (mut bp, mut bn, mut bwp, mut bwn) = (0_u64, 0_u64, 0.0_f64, 0.0_f64);
        let mut out = CurvePoints::default();
        // The previous group's point and bucket: kept when the bucket changes
        // after it (the first point of its step from the top), or when first.
        let mut prev: Option<((f64, f64, f64), i64, bool)> = None;
        for (key, p, n, a, b) in self.groups.distinct() {
            // Accepting every group from this one up (rows below it rejected).
            #[allow(clippy::cast_precision_loss)]
            let (tp, fp) = if weighted {
                (wp - bwp, wn - bwn)
            } else {
                ((np - bp) as f64, (nn - bn) as f64)
            };
            let point = (fp, tp, from_order_key(key));
            #[allow(clippy::cast_possible_truncation)]
            let bucket = if every {
                0
            } else {
                ((fp / tot_n + tp / tot_p) * 0.5 * steps_f).floor() as i64
            };
            if let Some((q, qb, first)) = prev {
                if every || first || qb != bucket {
                    out.push(q);
                }
            }
            prev = Some((point, bucket, prev.is_none()));
            bp += p;
            bn += n;
            bwp += a;
            bwn += b;
        }
        if let Some((q, _, _)) = prev {
            out.push(q);
        }
        out.fps.reverse();
        out.tps.reverse();
        out.thresholds.reverse();
        Ok(out)
    }

    /// The ranking walk over every row added (as [`super::binary_ranking`]).
    ///
    /// # Errors
    /// Weights summing to 0 or past the float64 range.
    pub fn walk(&mut self, curves: bool, pool: &Pool) -> Result<BinaryRanking> {
        self.compact(pool)?;
        if !self.weighted {
            let g = &self.groups;
            if let Some(r) = walk_groups_in_pieces(&g.keys, &g.pos, &g.neg, curves.into(), pool) {
                return r;
            }
        }
        let groups = self
            .groups
            .distinct()
            .map(|(_, p, n, wp, wn)| (p, n, wp, wn));
        walk_groups_iter(groups, self.weighted, curves)
    }
}

/// Add rows group by group to many states at once: the rows of segment `g`
/// (`offsets[g]..offsets[g + 1]`, `G + 1` rising offsets from 0 to the row
/// count) go to `states[g]`, as [`GroupState::add`] (or, with `bins`,
/// [`GroupState::add_binned`]) would add them, the states side by side on the
/// pool's threads. Every row is checked before any state changes, so an
/// error leaves every state as it was; what each state holds does not depend
/// on the thread count.
///
/// # Errors
/// As [`GroupState::add`] and [`GroupState::add_binned`]; [`MetricError::Shape`]
/// for offsets that do not cover the rows or do not match the states.
pub fn add_segments(
    states: &mut [&mut GroupState],
    positive: &[bool],
    score: &[f64],
    offsets: &[i64],
    weight: Option<&[f64]>,
    bins: Option<u32>,
    pool: &Pool,
) -> Result<()> {
    let n = rows_of(positive, score)?;
    crate::grouping::check_offsets(offsets, n, false)?;
    ensure!(
        offsets.len() == states.len() + 1,
        MetricError::Shape {
            arg: "offsets",
            detail: format!(
                "{} offsets for {} states; pass one offset more than states",
                offsets.len(),
                states.len()
            ),
        }
    );
    ensure!(
        states.iter().all(|s| s.weighted == weight.is_some()),
        MetricError::InvalidValue {
            arg: "sample_weight",
            detail: "pass weights exactly when the ranking states hold weighted rows".into(),
        }
    );
    check_finite("confidence", score)?;
    if let Some(w) = weight {
        check_weights(w, n, "confidence")?;
    }
    if let Some(b) = bins {
        ensure!(
            b > 0,
            MetricError::InvalidValue {
                arg: "bins",
                detail: "the approximate mode needs at least one bin".into(),
            }
        );
        check_unit(score)?;
    }
    let bounds: Vec<(usize, usize)> = offsets
        .windows(2)
        .map(|w| {
            let at = |i: usize| usize::try_from(w.get(i).copied().unwrap_or(0)).unwrap_or(0);
            (at(0), at(1))
        })
        .collect();
    let one = |(state, &(lo, hi)): (&mut &mut GroupState, &(usize, usize))| -> Result<()> {
        let (Some(p), Some(s)) = (positive.get(lo..hi), score.get(lo..hi)) else {
            return Ok(());
        };
        let w = weight.and_then(|w| w.get(lo..hi));
        // A state's own compaction runs on this thread: the states are the parallel work.
        let alone = Pool::sequential();
        match bins {
            Some(b) => state.add_binned(p, s, w, b, &alone),
            None => state.add(p, s, w, &alone),
        }
    };
    if pool.parallel_for(n) {
        pool.install(|| {
            states
                .par_iter_mut()
                .zip(bounds.par_iter())
                .try_for_each(one)
        })
    } else {
        states.iter_mut().zip(bounds.iter()).try_for_each(one)
    }
}

/// [`GroupState::walk`] of many states, side by side on the pool's threads
/// (each state compacted on one thread), in the order given.
///
/// # Errors
/// As [`GroupState::walk`]; [`MetricError::Interrupted`].
pub fn walk_states(
    states: &mut [&mut GroupState],
    curves: bool,
    pool: &Pool,
) -> Result<Vec<BinaryRanking>> {
    let one = |state: &mut &mut GroupState| -> Result<BinaryRanking> {
        pool.check()?;
        state.walk(curves, &Pool::sequential())
    };
    let rows: usize = states.iter().map(|s| s.entries()).sum();
    if pool.parallel_for(rows) && states.len() > 1 {
        pool.install(|| states.par_iter_mut().map(one).collect())
    } else {
        states.iter_mut().map(one).collect()
    }
}

/// The row count of `score`, with `positive` as long.
fn rows_of(positive: &[bool], score: &[f64]) -> Result<usize> {
    let n = score.len();
    ensure!(
        positive.len() == n,
        MetricError::LengthMismatch {
            a: "correct",
            a_len: positive.len(),
            b: "confidence",
            b_len: n,
        }
    );
    Ok(n)
}

/// Refuse a score outside [0, 1] (the approximate mode bins [0, 1]).
fn check_unit(score: &[f64]) -> Result<()> {
    match score.iter().position(|x| !(0.0..=1.0).contains(x)) {
        None => Ok(()),
        Some(index) => Err(MetricError::InvalidValue {
            arg: "confidence",
            detail: format!(
                "confidence[{index}] = {} is outside [0, 1]; the approximate ranking mode bins \
                 confidences in [0, 1] (use ranking='exact' for other scores)",
                crate::error::py_float(score.get(index).copied().unwrap_or(0.0))
            ),
        }),
    }
}
