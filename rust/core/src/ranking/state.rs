//! The streaming ranking state: the exact tie groups of every
//! `(score, outcome, weight)` row seen so far, built incrementally.
//!
//! Rows are appended to a buffer of score keys and outcomes. When the buffer
//! holds as many rows as a quarter of the groups already kept (and at least
//! [`MIN_BUFFER`]), it is compacted: unweighted rows are packed into one
//! `u64` each (the key bits that vary, about 25 of 64 for float32 scores,
//! then the outcome), sorted by a bucketed radix sort and merged as tie
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

use super::pieces::{PIECES, PIECE_WALK_MIN};
use super::walk::Walk;
use super::{
    check_finite, from_order_key, order_key, walk_groups_iter, BinaryRanking, ScoreGroups,
};
use super::{check_weights, GroupsRef, Item, Totals};
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::{check_available, try_filled};
use crate::parallel::{reserve_big, Pool};
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Buffered rows that trigger a compaction at the least.
pub const MIN_BUFFER: usize = 1 << 23;

/// Sorted tie groups (adjacent equal keys past `u32::MAX` counts, or from
/// different states after [`union_states`]; every reader adds them up).
#[derive(Debug, Clone, Default, PartialEq)]
struct Groups {
    keys: Vec<u64>,
    pos: Vec<u32>,
    neg: Vec<u32>,
    w_pos: Vec<f64>,
    w_neg: Vec<f64>,
}

impl Groups {
    fn len(&self) -> usize {
        self.keys.len()
    }

    fn reserve(&mut self, n: usize, weighted: bool) -> Result<()> {
        const WHAT: &str = "the ranking state's tie groups";
        reserve_big(&mut self.keys, n, WHAT)?;
        reserve_big(&mut self.pos, n, WHAT)?;
        reserve_big(&mut self.neg, n, WHAT)?;
        if weighted {
            reserve_big(&mut self.w_pos, n, WHAT)?;
            reserve_big(&mut self.w_neg, n, WHAT)?;
        }
        Ok(())
    }

    /// Append a group after the last one (`key` >= the last key), adding it
    /// to the last when the keys are equal and the counts fit.
    fn push(&mut self, key: u64, mut p: u64, mut n: u64, mut wp: f64, mut wn: f64, weighted: bool) {
        if let (Some(&last), Some(lp), Some(ln)) =
            (self.keys.last(), self.pos.last_mut(), self.neg.last_mut())
        {
            if last == key {
                let room_p = u64::from(u32::MAX - *lp).min(p);
                let room_n = u64::from(u32::MAX - *ln).min(n);
                if room_p == p && room_n == n {
                    *lp += u32::try_from(p).unwrap_or(0);
                    *ln += u32::try_from(n).unwrap_or(0);
                    if weighted {
                        if let (Some(a), Some(b)) = (self.w_pos.last_mut(), self.w_neg.last_mut()) {
                            *a += wp;
                            *b += wn;
                        }
                    }
                    return;
                }
            }
        }
        loop {
            let a = p.min(u64::from(u32::MAX));
            let b = n.min(u64::from(u32::MAX));
            self.keys.push(key);
            self.pos.push(u32::try_from(a).unwrap_or(u32::MAX));
            self.neg.push(u32::try_from(b).unwrap_or(u32::MAX));
            if weighted {
                self.w_pos.push(wp);
                self.w_neg.push(wn);
                (wp, wn) = (0.0, 0.0);
            }
            p -= a;
            n -= b;
            if p == 0 && n == 0 {
                return;
            }
        }
    }

    /// Merge the sorted `run` of at most `r` groups into these sorted
    /// groups, in place: the arrays grow by `r` and are filled from the back,
    /// so no second copy of the groups is ever made.
    fn merge_in(&mut self, mut run: impl Back, r: usize, weighted: bool) -> Result<()> {
        let s = self.len();
        if r == 0 {
            return Ok(());
        }
        let end = s + r;
        self.reserve(r, weighted)?;
        self.keys.resize(end, 0);
        self.pos.resize(end, 0);
        self.neg.resize(end, 0);
        if weighted {
            self.w_pos.resize(end, 0.0);
            self.w_neg.resize(end, 0.0);
        }
        // Invariant: w >= i + (groups left in the run), so a write never
        // lands on an unread group.
        let (mut i, mut w) = (s, end);
        loop {
            let from_run = match (i.checked_sub(1), run.last_key()) {
                (_, None) if i == w => break,
                (None, None) => break,
                (Some(a), Some(b)) => self.keys.get(a).is_some_and(|&k| k <= b),
                (None, Some(_)) => true,
                (Some(_), None) => false,
            };
            let (key, p, n, wp, wn) = if from_run {
                run.take_last()
            } else {
                i -= 1;
                let wp = self.w_pos.get(i).copied().unwrap_or(0.0);
                let wn = self.w_neg.get(i).copied().unwrap_or(0.0);
                (
                    self.keys.get(i).copied().unwrap_or(0),
                    self.pos.get(i).copied().unwrap_or(0),
                    self.neg.get(i).copied().unwrap_or(0),
                    wp,
                    wn,
                )
            };
            // Add to the group written last (just above) when keys match and it fits.
            if w < end && self.keys.get(w) == Some(&key) {
                let fits = self.pos.get(w).is_some_and(|&x| x.checked_add(p).is_some())
                    && self.neg.get(w).is_some_and(|&x| x.checked_add(n).is_some());
                if fits {
                    if let (Some(a), Some(b)) = (self.pos.get_mut(w), self.neg.get_mut(w)) {
                        *a += p;
                        *b += n;
                    }
                    if weighted {
                        if let (Some(a), Some(b)) = (self.w_pos.get_mut(w), self.w_neg.get_mut(w)) {
                            *a += wp;
                            *b += wn;
                        }
                    }
                    continue;
                }
            }
            w -= 1;
            if let Some(x) = self.keys.get_mut(w) {
                *x = key;
            }
            if let Some(x) = self.pos.get_mut(w) {
                *x = p;
            }
            if let Some(x) = self.neg.get_mut(w) {
                *x = n;
            }
            if weighted {
                if let (Some(a), Some(b)) = (self.w_pos.get_mut(w), self.w_neg.get_mut(w)) {
                    (*a, *b) = (wp, wn);
                }
            }
        }
        // Groups [0, i) are in place; the merged ones sit in [w, end).
        if w > i {
            let len = end - (w - i);
            self.keys.copy_within(w..end, i);
            self.pos.copy_within(w..end, i);
            self.neg.copy_within(w..end, i);
            self.keys.truncate(len);
            self.pos.truncate(len);
            self.neg.truncate(len);
            if weighted {
                self.w_pos.copy_within(w..end, i);
                self.w_neg.copy_within(w..end, i);
                self.w_pos.truncate(len);
                self.w_neg.truncate(len);
            }
        }
        Ok(())
    }

    /// The groups with equal keys added up, `(key, p, n, wp, wn)`.
    fn distinct(&self) -> Distinct<'_> {
        Distinct { g: self, i: 0 }
    }
}

/// Iterator of [`Groups::distinct`].
#[derive(Clone)]
struct Distinct<'a> {
    g: &'a Groups,
    i: usize,
}

impl Iterator for Distinct<'_> {
    type Item = (u64, u64, u64, f64, f64);

    fn next(&mut self) -> Option<Self::Item> {
        let g = self.g;
        let &key = g.keys.get(self.i)?;
        let mut out = (key, 0_u64, 0_u64, 0.0_f64, 0.0_f64);
        while g.keys.get(self.i) == Some(&key) {
            out.1 += u64::from(g.pos.get(self.i).copied().unwrap_or(0));
            out.2 += u64::from(g.neg.get(self.i).copied().unwrap_or(0));
            out.3 += g.w_pos.get(self.i).copied().unwrap_or(0.0);
            out.4 += g.w_neg.get(self.i).copied().unwrap_or(0.0);
            self.i += 1;
        }
        Some(out)
    }
}

/// Sorted groups read from the back: the run side of [`Groups::merge_in`].
trait Back {
    /// The key of the last group not yet taken.
    fn last_key(&self) -> Option<u64>;
    /// Take that group: `(key, pos, neg, w_pos, w_neg)`.
    fn take_last(&mut self) -> (u64, u32, u32, f64, f64);
}

/// A [`Groups`] as a run.
struct GroupsBack<'a> {
    g: &'a Groups,
    j: usize,
}

impl<'a> GroupsBack<'a> {
    fn new(g: &'a Groups) -> Self {
        Self { g, j: g.len() }
    }
}

impl Back for GroupsBack<'_> {
    fn last_key(&self) -> Option<u64> {
        self.g.keys.get(self.j.checked_sub(1)?).copied()
    }
    fn take_last(&mut self) -> (u64, u32, u32, f64, f64) {
        self.j -= 1;
        let g = self.g;
        (
            g.keys.get(self.j).copied().unwrap_or(0),
            g.pos.get(self.j).copied().unwrap_or(0),
            g.neg.get(self.j).copied().unwrap_or(0),
            g.w_pos.get(self.j).copied().unwrap_or(0.0),
            g.w_neg.get(self.j).copied().unwrap_or(0.0),
        )
    }
}

/// Sorted packed rows (`varying key bits << 1 | outcome`) as a run of tie
/// groups (fewer than 2^32 rows: every count fits a `u32`).
struct PackedBack<'a> {
    e: &'a [u64],
    j: usize,
    lo: u32,
    fixed: u64,
}

impl PackedBack<'_> {
    /// The number of groups (distinct `entry >> 1`).
    fn groups(&self) -> usize {
        let mut prev = u64::MAX;
        let mut n = 0;
        for &x in self.e {
            n += usize::from(x >> 1 != prev);
            prev = x >> 1;
        }
        n
    }
}

impl Back for PackedBack<'_> {
    fn last_key(&self) -> Option<u64> {
        let v = self.e.get(self.j.checked_sub(1)?)? >> 1;
        Some((v << self.lo) | self.fixed)
    }
    fn take_last(&mut self) -> (u64, u32, u32, f64, f64) {
        let end = self.j;
        let v = self.e.get(end - 1).map_or(0, |x| x >> 1);
        let mut p = 0_u32;
        while let Some(&x) = self.j.checked_sub(1).and_then(|k| self.e.get(k)) {
            if x >> 1 != v {
                break;
            }
            p += u32::from(x & 1 == 1);
            self.j -= 1;
        }
        let n = u32::try_from(end - self.j).unwrap_or(u32::MAX) - p;
        ((v << self.lo) | self.fixed, p, n, 0.0, 0.0)
    }
}

/// The exact, mergeable ranking state (module docs).
#[derive(Debug, Clone, Default)]
pub struct GroupState {
    weighted: bool,
    /// Buffered rows that trigger a compaction at the least.
    min_buffer: usize,
    groups: Groups,
    /// Buffered score keys and outcomes of unweighted rows.
    buf_keys: Vec<u64>,
    buf_pos: Vec<bool>,
    /// Buffered `(key, weight bits)` of positive and negative rows (weighted).
    wbuf_pos: Vec<u128>,
    wbuf_neg: Vec<u128>,
    /// The packed rows of a compaction (kept for the next one).
    scratch: Vec<u64>,
    /// A compaction was refused memory after it took the buffered rows: the
    /// state lost rows, and every later use says so instead of answering.
    broken: bool,
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

    fn buffered(&self) -> usize {
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
                reserve_big(&mut self.buf_keys, n, "the ranking state's buffer")?;
                reserve_big(&mut self.buf_pos, n, "the ranking state's buffer")?;
                self.buf_keys.extend(score.iter().map(|&s| order_key(s)));
                self.buf_pos.extend_from_slice(positive);
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

    fn compact_buffer(&mut self, pool: &Pool) -> Result<()> {
        let rows = self.buffered();
        if rows == 0 {
            return Ok(());
        }
        if self.weighted {
            let (mut a, mut b) = (
                std::mem::take(&mut self.wbuf_pos),
                std::mem::take(&mut self.wbuf_neg),
            );
            // A compaction runs to its end (the state stays whole); its
            // buffer is bounded, so it is short.
            let whole = pool.without_stop();
            let mut run = Groups::default();
            if let Err(e) = run.reserve(rows, true) {
                (self.wbuf_pos, self.wbuf_neg) = (a, b);
                return Err(e);
            }
            let _ = u128::sort(&mut a, &whole);
            let _ = u128::sort(&mut b, &whole);
            collapse(&a, &b, |x| (x.key(), x.weight()), &mut run, true);
            return self.groups.merge_in(GroupsBack::new(&run), run.len(), true);
        }
        self.compact_unweighted(pool)?;
        self.buf_keys.clear();
        self.buf_pos.clear();
        Ok(())
    }

    /// Compact unweighted rows. Only the key bits that vary between the rows
    /// matter: when they and the outcome fit in 63 bits (always for float32
    /// scores), each row becomes one packed `u64` (varying bits, then the
    /// outcome), the packed rows are sorted ([`bucket_sort`], into the key
    /// buffer, which both reuse from one compaction to the next) and merged
    /// into the groups as runs of equal `entry >> 1`. Otherwise each side is
    /// sorted on its own and the two collapsed into groups.
    fn compact_unweighted(&mut self, pool: &Pool) -> Result<()> {
        // The sorts' buffers: the packed rows, or the two sides and a radix buffer.
        check_available(
            crate::memory::bytes_of::<u64>(self.buf_keys.len()) * 2,
            "the ranking state's sort buffers",
        )?;
        let keys = &self.buf_keys;
        // A small state, or one of many compacted side by side: no split on this thread.
        let parallel = pool.parallel_for(keys.len());
        let fold = |c: &[u64]| {
            c.iter()
                .fold((u64::MAX, 0_u64), |(a, o), &x| (a & x, o | x))
        };
        let (and, or) = if parallel {
            pool.install(|| {
                keys.par_chunks(1 << 16)
                    .map(fold)
                    .reduce(|| (u64::MAX, 0), |x, y| (x.0 & y.0, x.1 | y.1))
            })
        } else {
            fold(keys)
        };
        let varying = and ^ or;
        let (lo, bits) = if varying == 0 {
            (0, 0)
        } else {
            (
                varying.trailing_zeros(),
                64 - varying.leading_zeros() - varying.trailing_zeros(),
            )
        };
        if bits >= 63 {
            let (mut a, mut b): (Vec<u64>, Vec<u64>) = (Vec::new(), Vec::new());
            for (&k, &p) in keys.iter().zip(&self.buf_pos) {
                if p {
                    a.push(k);
                } else {
                    b.push(k);
                }
            }
            pool.install(|| rayon::join(|| radix_sort(&mut a), || radix_sort(&mut b)));
            let mut run = Groups::default();
            collapse(&a, &b, |&x| (x, 1.0), &mut run, false);
            return self
                .groups
                .merge_in(GroupsBack::new(&run), run.len(), false);
        }
        let mask = (1_u64 << bits) - 1;
        let fixed = and & !(mask << lo);
        let packed = &mut self.scratch;
        reserve_big(packed, keys.len(), "the ranking state's sort buffer")?;
        let pack = |(&k, &p): (&u64, &bool)| (((k >> lo) & mask) << 1) | u64::from(p);
        if parallel {
            pool.install(|| {
                keys.par_iter()
                    .zip(self.buf_pos.par_iter())
                    .map(pack)
                    .collect_into_vec(packed);
            });
        } else {
            packed.clear();
            packed.extend(keys.iter().zip(&self.buf_pos).map(pack));
        }
        // The keys are packed: their buffer receives the sorted rows.
        let sorted = &mut self.buf_keys;
        let merged = bucket_sort(packed, sorted, bits + 1, pool).and_then(|()| {
            let run = PackedBack {
                e: sorted,
                j: sorted.len(),
                lo,
                fixed,
            };
            let r = run.groups();
            self.groups.merge_in(run, r, false)
        });
        if merged.is_err() {
            // The buffer holds packed rows now, not keys: drop them (the state is broken).
            self.buf_keys.clear();
            self.buf_pos.clear();
        }
        merged
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

    /// The ranking walk over every row added (as [`super::binary_ranking`]).
    ///
    /// # Errors
    /// Weights summing to 0 or past the float64 range.
    pub fn walk(&mut self, curves: bool, pool: &Pool) -> Result<BinaryRanking> {
        self.compact(pool)?;
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

/// A state holding every row of `states`: each is compacted (side by side on
/// the pool's threads; they keep their rows), then their sorted tie groups
/// are merged by key in one k-way merge, cut into key ranges merged on the
/// threads. Equal keys add up in the order of `states`, so nothing depends on
/// the thread count. Time: the groups times the log of the states, against
/// a sort of every row for a state fed the rows again.
///
/// # Errors
/// Weighted and unweighted states together; [`MetricError::Interrupted`].
pub fn union_states(states: &mut [&mut GroupState], pool: &Pool) -> Result<GroupState> {
    let weighted = compact_states(states, pool)?;
    let runs: Vec<&Groups> = states.iter().map(|s| &s.groups).collect();
    let total: usize = runs.iter().map(|g| g.len()).sum();
    let parts = if pool.parallel_for(total) {
        4 * pool.threads()
    } else {
        1
    };
    // Every group is kept (equal keys of different states side by side, which
    // every reader adds up), so each key range's place in the output is known
    // before the merge: the ranges are merged straight into it, side by side.
    let ranges = key_ranges(&runs, parts);
    let sizes: Vec<usize> = ranges
        .iter()
        .map(|b| b.iter().map(|&(lo, hi)| hi - lo).sum())
        .collect();
    let mut out = GroupState::new(weighted);
    let g = &mut out.groups;
    // Written once by the merges (not cleared first); the lengths are set once
    // every slot is known to be written.
    g.reserve(total, weighted)?;
    let mut jobs: Vec<RangeJob<'_>> = Vec::with_capacity(ranges.len());
    let (mut keys, mut pos, mut neg) = (
        g.keys.spare_capacity_mut(),
        g.pos.spare_capacity_mut(),
        g.neg.spare_capacity_mut(),
    );
    let (mut w_pos, mut w_neg) = (g.w_pos.spare_capacity_mut(), g.w_neg.spare_capacity_mut());
    // Each range's slots: `size` of each array (as many weights when weighted).
    let mut cut = |size: usize| -> Option<Slots<'_>> {
        let wsize = if weighted { size } else { 0 };
        let (k, rest) = std::mem::take(&mut keys).split_at_mut_checked(size)?;
        keys = rest;
        let (p, rest) = std::mem::take(&mut pos).split_at_mut_checked(size)?;
        pos = rest;
        let (n, rest) = std::mem::take(&mut neg).split_at_mut_checked(size)?;
        neg = rest;
        let (a, rest) = std::mem::take(&mut w_pos).split_at_mut_checked(wsize)?;
        w_pos = rest;
        let (b, rest) = std::mem::take(&mut w_neg).split_at_mut_checked(wsize)?;
        w_neg = rest;
        Some((k, p, n, a, b))
    };
    let mut cut_all = true;
    for (range, &size) in ranges.into_iter().zip(&sizes) {
        match cut(size) {
            Some(slots) => jobs.push((range, size, slots)),
            None => cut_all = false,
        }
    }
    // A range wrote all its slots when its merge wrote `size` groups.
    let one = |(range, size, slots): RangeJob<'_>| merge_runs(&runs, &range, slots, pool) == size;
    let whole = if jobs.len() > 1 {
        pool.install(|| jobs.into_par_iter().map(one).reduce(|| true, |a, b| a & b))
    } else {
        jobs.into_iter().map(one).fold(true, |a, b| a & b)
    };
    pool.check()?;
    ensure!(
        whole && cut_all && sizes.iter().sum::<usize>() == total,
        MetricError::InvalidValue {
            arg: "states",
            detail: "a ranking state holds a score that is not finite".into(),
        }
    );
    // SAFETY: the ranges' slots, cut one after the other from the first `total`
    // of each array's capacity (`cut_all`: the capacity held them), cover those
    // `total` slots (the sizes add up to it), and every range's merge wrote
    // each of its slots (`whole`), weights too when weighted.
    unsafe {
        g.keys.set_len(total);
        g.pos.set_len(total);
        g.neg.set_len(total);
        if weighted {
            g.w_pos.set_len(total);
            g.w_neg.set_len(total);
        }
    }
    Ok(out)
}

/// Every state compacted (side by side on the pool's threads; each on one),
/// and whether they hold weighted rows.
///
/// # Errors
/// Weighted and unweighted states together; [`MetricError::Interrupted`].
fn compact_states(states: &mut [&mut GroupState], pool: &Pool) -> Result<bool> {
    let weighted = states
        .iter()
        .find(|s| s.entries() > 0)
        .or(states.first())
        .is_some_and(|s| s.weighted);
    ensure!(
        states
            .iter()
            .all(|s| s.entries() == 0 || s.weighted == weighted),
        MetricError::InvalidValue {
            arg: "states",
            detail: "some ranking states hold weighted rows and others unweighted rows".into(),
        }
    );
    let rows: usize = states.iter().map(|s| s.entries()).sum();
    let compact = |s: &mut &mut GroupState| s.compact(&Pool::sequential());
    if pool.parallel_for(rows) && states.len() > 1 {
        pool.install(|| states.par_iter_mut().try_for_each(compact))?;
    } else {
        states.iter_mut().try_for_each(compact)?;
    }
    pool.check()?;
    Ok(weighted)
}

/// The runs cut into at most `parts` key ranges at the quantiles of a sample
/// of their keys: for each range, each run's `(lo, hi)`. Range p holds the
/// keys in `[cut[p - 1], cut[p])`, so equal keys fall in one range; the cuts
/// depend on the runs and `parts` only.
fn key_ranges(runs: &[&Groups], parts: usize) -> Vec<Vec<(usize, usize)>> {
    let mut sample: Vec<u64> = runs
        .iter()
        .flat_map(|g| {
            let step = (g.len() / (8 * parts)).max(1);
            g.keys.iter().step_by(step).copied()
        })
        .collect();
    sample.sort_unstable();
    let mut cuts: Vec<u64> = (1..parts)
        .filter_map(|p| sample.get(p * sample.len() / parts).copied())
        .collect();
    cuts.dedup();
    let bounds = |p: usize| -> Vec<(usize, usize)> {
        runs.iter()
            .map(|g| {
                let at = |c: Option<&u64>, none: usize| {
                    c.map_or(none, |&c| g.keys.partition_point(|&k| k < c))
                };
                let lo = p.checked_sub(1).map_or(0, |q| at(cuts.get(q), 0));
                (lo, at(cuts.get(p), g.len()))
            })
            .collect()
    };
    (0..=cuts.len()).map(bounds).collect()
}

/// The walk of the union of `states` ([`union_states`], then
/// [`GroupState::walk`]) without making the union: their tie groups are
/// merged by key straight into the walk. Without weights, from
/// [`PIECE_WALK_MIN`] groups the key space is cut into [`PIECES`] ranges (as
/// many whatever the thread count), each merged and walked on its own from
/// the counts below it, side by side on the threads, and the pieces combined
/// in order; the counts are exact and the curve sums are added piece by
/// piece. With weights, the union is made and walked.
///
/// # Errors
/// As [`union_states`] and [`GroupState::walk`].
pub fn walk_union(
    states: &mut [&mut GroupState],
    curves: bool,
    pool: &Pool,
) -> Result<BinaryRanking> {
    if compact_states(states, pool)? {
        return union_states(states, pool)?.walk(curves, pool);
    }
    let runs: Vec<&Groups> = states.iter().map(|s| &s.groups).collect();
    let total: usize = runs.iter().map(|g| g.len()).sum();
    let parts = if total >= PIECE_WALK_MIN { PIECES } else { 1 };
    let ranges = key_ranges(&runs, parts);
    // Each range's positives and negatives, then the counts below each.
    let count = |range: &Vec<(usize, usize)>| -> (u64, u64) {
        runs.iter()
            .zip(range)
            .map(|(g, &(lo, hi))| {
                let sum = |v: &[u32]| {
                    v.get(lo..hi)
                        .unwrap_or_default()
                        .iter()
                        .map(|&x| u64::from(x))
                        .sum::<u64>()
                };
                (sum(&g.pos), sum(&g.neg))
            })
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    let sums: Vec<(u64, u64)> = if pool.parallel_for(total) && ranges.len() > 1 {
        pool.install(|| ranges.par_iter().map(count).collect())
    } else {
        ranges.iter().map(count).collect()
    };
    let (mut n_pos, mut n_neg) = (0_u64, 0_u64);
    let mut jobs: Vec<PieceJob<'_>> = Vec::with_capacity(ranges.len());
    for (range, &(p, n)) in ranges.iter().zip(&sums) {
        jobs.push((range, n_pos, n_neg));
        n_pos += p;
        n_neg += n;
    }
    let totals = Totals::counted(n_pos, n_neg);
    let one = |&(range, pos_below, neg_below): &PieceJob<'_>| -> Walk {
        let mut w = Walk::starting_after(totals, curves, pos_below, neg_below);
        let mut prev: Option<u64> = None;
        merge_each::<false>(&runs, range, usize::MAX, pool, |key, c, i| {
            let p = u64::from(c.pos.get(i).copied().unwrap_or(0));
            let n = u64::from(c.neg.get(i).copied().unwrap_or(0));
            if p + n > 0 {
                w.add_to_group(p, n, prev != Some(key));
                prev = Some(key);
            }
            true
        });
        w.close_last_group();
        w
    };
    let walks: Vec<Walk> = if pool.parallel_for(total) && jobs.len() > 1 {
        pool.install(|| jobs.par_iter().map(one).collect())
    } else {
        jobs.iter().map(one).collect()
    };
    pool.check()?;
    Ok(Walk::combine(totals, curves, walks))
}

/// One key range of [`walk_union`]: each run's part, and the positives and
/// negatives below it.
type PieceJob<'a> = (&'a Vec<(usize, usize)>, u64, u64);

/// One key range of [`union_states`]: each run's part, the groups they hold, and
/// the output slots they fill.
type RangeJob<'a> = (Vec<(usize, usize)>, usize, Slots<'a>);

/// The output slices of one key range of [`union_states`]: keys, positive and
/// negative counts, and weights (empty without weights).
type Slots<'a> = (
    &'a mut [MaybeUninit<u64>],
    &'a mut [MaybeUninit<u32>],
    &'a mut [MaybeUninit<u32>],
    &'a mut [MaybeUninit<f64>],
    &'a mut [MaybeUninit<f64>],
);

/// Groups of a run read ahead of its head in [`merge_runs`].
const AHEAD: usize = 16;

/// One run's part in [`merge_runs`] and the position of its head.
#[derive(Default)]
struct Cursor<'a> {
    keys: &'a [u64],
    pos: &'a [u32],
    neg: &'a [u32],
    w_pos: &'a [f64],
    w_neg: &'a [f64],
    at: usize,
}

impl Cursor<'_> {
    /// The head's key; u64::MAX past the end (the key of a finite score is
    /// never that large), as for the leaves past the runs.
    #[inline(always)]
    fn key(&self) -> u64 {
        self.keys.get(self.at).copied().unwrap_or(u64::MAX)
    }
}

/// The groups of `runs[r][bounds[r].0..bounds[r].1]` merged by key into
/// `out` (as long as they are), equal keys in run order (see [`merge_each`]).
/// Returns the groups written.
fn merge_runs(runs: &[&Groups], bounds: &[(usize, usize)], out: Slots<'_>, pool: &Pool) -> usize {
    let (keys, pos, neg, w_pos, w_neg) = out;
    let weighted = !w_pos.is_empty();
    let mut e = 0;
    merge_each::<true>(runs, bounds, keys.len(), pool, |key, c, i| {
        let (Some(k), Some(p), Some(n)) = (keys.get_mut(e), pos.get_mut(e), neg.get_mut(e)) else {
            return false;
        };
        k.write(key);
        p.write(c.pos.get(i).copied().unwrap_or(0));
        n.write(c.neg.get(i).copied().unwrap_or(0));
        if weighted {
            let (Some(a), Some(b)) = (w_pos.get_mut(e), w_neg.get_mut(e)) else {
                return false;
            };
            a.write(c.w_pos.get(i).copied().unwrap_or(0.0));
            b.write(c.w_neg.get(i).copied().unwrap_or(0.0));
        }
        e += 1;
        true
    })
}

/// The groups of `runs[r][bounds[r].0..bounds[r].1]` in key order, equal
/// keys in run order, at most `limit` of them: `emit(key, run, index)` is
/// called for each and stops the merge by returning false. A tree of losers
/// over the runs' heads, each node holding the `(key, run)` that lost there,
/// so a new head climbs to the root comparing with one stored pair per level
/// (no branch: the keys are random). Returns the groups emitted.
fn merge_each<const BY_RUN: bool>(
    runs: &[&Groups],
    bounds: &[(usize, usize)],
    limit: usize,
    pool: &Pool,
    mut emit: impl FnMut(u64, &Cursor<'_>, usize) -> bool,
) -> usize {
    let leaves = runs.len().next_power_of_two().max(2);
    let mut cursors: Vec<Cursor<'_>> = (0..leaves)
        .map(|r| match (runs.get(r), bounds.get(r)) {
            (Some(g), Some(&(lo, hi))) => Cursor {
                keys: g.keys.get(lo..hi).unwrap_or_default(),
                pos: g.pos.get(lo..hi).unwrap_or_default(),
                neg: g.neg.get(lo..hi).unwrap_or_default(),
                w_pos: g.w_pos.get(lo..hi).unwrap_or_default(),
                w_neg: g.w_neg.get(lo..hi).unwrap_or_default(),
                at: 0,
            },
            _ => Cursor::default(),
        })
        .collect();
    // Whether (key, run) `a` comes before `b`; equal keys in any order unless
    // `BY_RUN` (the walk adds them up exactly, whatever their order).
    let first = |a: (u64, usize), b: (u64, usize)| {
        if BY_RUN {
            (a.0 < b.0) | ((a.0 == b.0) & (a.1 < b.1))
        } else {
            a.0 < b.0
        }
    };
    let mut loser: Vec<(u64, usize)> = vec![(u64::MAX, usize::MAX); leaves];
    let mut win: Vec<(u64, usize)> = (0..2 * leaves)
        .map(|i| {
            let r = i.saturating_sub(leaves);
            (cursors.get(r).map_or(u64::MAX, Cursor::key), r)
        })
        .collect();
    for node in (1..leaves).rev() {
        let (a, b) = (
            win.get(2 * node).copied().unwrap_or((u64::MAX, usize::MAX)),
            win.get(2 * node + 1)
                .copied()
                .unwrap_or((u64::MAX, usize::MAX)),
        );
        let (w, l) = if first(b, a) { (b, a) } else { (a, b) };
        if let (Some(x), Some(y)) = (win.get_mut(node), loser.get_mut(node)) {
            (*x, *y) = (w, l);
        }
    }
    let mut top = win.get(1).copied().unwrap_or((u64::MAX, usize::MAX));
    drop(win);
    for e in 0..limit {
        if e % crate::parallel::CHECK_ROWS == 0 && pool.stopped() {
            return e;
        }
        let (key, w) = top;
        let Some(c) = cursors.get_mut(w).filter(|c| c.at < c.keys.len()) else {
            return e; // a done run on top: a key of u64::MAX (not a finite score's)
        };
        let i = c.at;
        if !emit(key, c, i) {
            return e;
        }
        c.at += 1;
        // A hundred runs are more streams than the hardware prefetcher follows:
        // each run asks for its next cache lines itself.
        #[cfg(target_arch = "x86_64")]
        if i % 8 == 0 {
            if let Some(x) = c.keys.get(i + AHEAD) {
                crate::simd::prefetch(x);
            }
            if i % 16 == 0 {
                if let (Some(x), Some(y)) = (c.pos.get(i + 2 * AHEAD), c.neg.get(i + 2 * AHEAD)) {
                    crate::simd::prefetch(x);
                    crate::simd::prefetch(y);
                }
            }
        }
        let mut climbing = (c.key(), w);
        let mut node = (leaves + w) / 2;
        while node >= 1 {
            if let Some(stored) = loser.get_mut(node) {
                let swap = first(*stored, climbing);
                let (a, b) = (*stored, climbing);
                *stored = if swap { b } else { a };
                climbing = if swap { a } else { b };
            }
            node /= 2;
        }
        top = climbing;
    }
    limit
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

/// Tie groups of two sorted sides (positives `a`, negatives `b`) appended to `out`.
fn collapse<T>(a: &[T], b: &[T], kw: impl Fn(&T) -> (u64, f64), out: &mut Groups, weighted: bool) {
    let (mut i, mut j) = (0, 0);
    loop {
        let ka = a.get(i).map(&kw);
        let kb = b.get(j).map(&kw);
        let key = match (ka, kb) {
            (Some((x, _)), Some((y, _))) => x.min(y),
            (Some((x, _)), None) => x,
            (None, Some((y, _))) => y,
            (None, None) => return,
        };
        let (p, wp) = take_run(a, &mut i, key, &kw);
        let (n, wn) = take_run(b, &mut j, key, &kw);
        out.push(key, p, n, wp, wn, weighted);
    }
}

/// Count (and sum the weights of) the items of `xs` from `*at` on whose key
/// is `key`, moving `*at` past them.
fn take_run<T>(xs: &[T], at: &mut usize, key: u64, kw: impl Fn(&T) -> (u64, f64)) -> (u64, f64) {
    let (mut count, mut sum) = (0_u64, 0.0_f64);
    while let Some((k, w)) = xs.get(*at).map(&kw) {
        if k != key {
            break;
        }
        count += 1;
        sum += w;
        *at += 1;
    }
    (count, sum)
}

/// Sort `src`, whose values are below `2^bits`, into `dst`: one scatter into
/// buckets by the top (up to) 11 bits, then each bucket, now small, sorted
/// by LSD radix passes in parallel. The result does not depend on the thread
/// count.
fn bucket_sort(src: &[u64], dst: &mut Vec<u64>, bits: u32, pool: &Pool) -> Result<()> {
    const TOP: u32 = 11;
    dst.clear();
    reserve_big(dst, src.len(), "the ranking state's sort buffer")?;
    if src.len() < 1 << 16 || bits <= TOP {
        dst.extend_from_slice(src);
        radix_sort(dst);
        return Ok(());
    }
    dst.resize(src.len(), 0);
    let shift = bits - TOP;
    let buckets = 1_usize << TOP;
    let mut counts = vec![0_usize; buckets + 1];
    for &x in src {
        #[allow(clippy::cast_possible_truncation)]
        let d = (x >> shift) as usize;
        if let Some(c) = counts.get_mut(d + 1) {
            *c += 1;
        }
    }
    for b in 1..=buckets {
        let prev = counts.get(b - 1).copied().unwrap_or(0);
        if let Some(c) = counts.get_mut(b) {
            *c += prev;
        }
    }
    let mut at = counts.clone();
    for &x in src {
        #[allow(clippy::cast_possible_truncation)]
        let d = (x >> shift) as usize;
        if let Some(slot) = at.get_mut(d) {
            if let Some(o) = dst.get_mut(*slot) {
                *o = x;
            }
            *slot += 1;
        }
    }
    // Cut `dst` into the buckets' slices and sort each.
    let mut pieces: Vec<&mut [u64]> = Vec::with_capacity(buckets);
    let mut rest: &mut [u64] = dst;
    for b in 0..buckets {
        let len = counts.get(b + 1).copied().unwrap_or(0) - counts.get(b).copied().unwrap_or(0);
        let (head, tail) = rest.split_at_mut(len);
        pieces.push(head);
        rest = tail;
    }
    let sort_piece = |piece: &mut [u64]| {
        if piece.len() < SMALL_SORT {
            piece.sort_unstable();
        } else {
            let mut tmp = piece.to_vec();
            radix_sort(&mut tmp);
            piece.copy_from_slice(&tmp);
        }
    };
    if pool.parallel_for(src.len()) {
        pool.install(|| pieces.into_par_iter().for_each(sort_piece));
    } else {
        pieces.into_iter().for_each(sort_piece);
    }
    Ok(())
}

/// Keys below which a comparison sort beats the radix passes (each pass
/// clears and reads a histogram of up to 2^11 counts).
const SMALL_SORT: usize = 1 << 10;

/// LSD radix sort of `u64` keys over the bits that vary between them, 11
/// bits a pass (float32 scores widened to f64 keys: 2 or 3 passes).
fn radix_sort(v: &mut Vec<u64>) {
    const BITS: u32 = 11;
    if v.len() < SMALL_SORT {
        v.sort_unstable();
        return;
    }
    let (and, or) = v
        .iter()
        .fold((u64::MAX, 0_u64), |(a, o), &x| (a & x, o | x));
    let varying = and ^ or;
    if varying == 0 || v.len() < 2 {
        return;
    }
    let lo = varying.trailing_zeros();
    let hi = 64 - varying.leading_zeros();
    let passes = (hi - lo).div_ceil(BITS);
    let width = (hi - lo).div_ceil(passes);
    let mask = (1_u64 << width) - 1;
    let buckets = 1_usize << width;
    let shifts: Vec<u32> = (0..passes).map(|p| lo + p * width).collect();
    // All histograms in one read.
    let mut counts = vec![0_usize; buckets * shifts.len()];
    for &x in v.iter() {
        for (p, &sh) in shifts.iter().enumerate() {
            #[allow(clippy::cast_possible_truncation)]
            let d = ((x >> sh) & mask) as usize;
            if let Some(c) = counts.get_mut(p * buckets + d) {
                *c += 1;
            }
        }
    }
    let mut other = vec![0_u64; v.len()];
    for (p, &sh) in shifts.iter().enumerate() {
        let hist = counts
            .get_mut(p * buckets..(p + 1) * buckets)
            .unwrap_or_default();
        if hist.contains(&v.len()) {
            continue; // one bucket: this digit orders nothing
        }
        let mut at = 0;
        for c in hist.iter_mut() {
            (*c, at) = (at, at + *c);
        }
        for &x in v.iter() {
            #[allow(clippy::cast_possible_truncation)]
            let d = ((x >> sh) & mask) as usize;
            if let Some(slot) = hist.get_mut(d) {
                if let Some(o) = other.get_mut(*slot) {
                    *o = x;
                }
                *slot += 1;
            }
        }
        std::mem::swap(v, &mut other);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn radix_sort_sorts() {
        let mut x: u64 = 12345;
        let mut v: Vec<u64> = (0..100_000)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                order_key(f64::from((x % 100_000) as f32 / 7.0))
            })
            .collect();
        let mut want = v.clone();
        want.sort_unstable();
        radix_sort(&mut v);
        assert_eq!(v, want);
    }

    #[test]
    fn counts_past_u32_spread_over_entries() {
        let mut g = Groups::default();
        let big = u64::from(u32::MAX) + 10;
        g.push(5, big, 1, 0.0, 0.0, false);
        g.push(5, 3, 0, 0.0, 0.0, false);
        g.push(7, 1, 1, 0.0, 0.0, false);
        let d: Vec<_> = g.distinct().collect();
        assert_eq!(d, vec![(5, big + 3, 1, 0.0, 0.0), (7, 1, 1, 0.0, 0.0)]);
        let mut h = Groups::default();
        h.push(5, u64::from(u32::MAX), 0, 0.0, 0.0, false);
        h.push(6, 2, 2, 0.0, 0.0, false);
        g.merge_in(GroupsBack::new(&h), h.len(), false).unwrap();
        let d: Vec<_> = g.distinct().collect();
        assert_eq!(
            d,
            vec![
                (5, big + 3 + u64::from(u32::MAX), 1, 0.0, 0.0),
                (6, 2, 2, 0.0, 0.0),
                (7, 1, 1, 0.0, 0.0)
            ]
        );
    }
}
