//! Rows in ascending score order: one model's for the walk over them in
//! pieces that gives every row the numerator of its placement, and
//! [`sorted_rows`] for the bootstrap's ranking walk.
//!
//! A positive row's placement is `(2 nb + gn) / (2 n_neg)` and a negative
//! row's `(2 pa + gp) / (2 n_pos)`, where `nb` counts the negatives scored
//! below the row, `pa` the positives scored above it and `gn`, `gp` the
//! negatives and positives of its tie group: integers over a denominator
//! shared by a side. The walk hands each row its integer numerator and sums
//! the numerators' squares exactly, so a piece's sums do not depend on where
//! the pieces were cut and the pieces can run on any number of threads.

use std::ops::Range;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};

use super::coarse::{crowded, Coarse};
use crate::error::Result;
use crate::parallel::{big_vec, collect_chunked, Pool, CHECK_ROWS};
use crate::ranking::binary::check_finite_on;
use crate::ranking::keys::Score;
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

/// The share of the rows (one in this many) past which rows at the ends of a
/// line ([`Coarse::Line`]) send [`ordered`] to the full keys.
const AT_ENDS: usize = 256;

/// Rows whose index fits a packed key ([`ordered`]); more take the `u128` sort.
const PACKED_ROWS: usize = 1 << 32;

/// Rows the walk takes at once while they are alone in their runs.
const SINGLES: usize = 8;

/// Rows ahead in score order whose slot is fetched into the cache before the
/// walk reaches it (the slots lie all over a buffer of one per row).
const LOOK_AHEAD: usize = 64;

/// One model's rows in ascending score order.
pub(super) enum Ordered {
    /// Each row one `u64`: its score's coarse key in the bits from `low` up
    /// ([`Coarse`]: the high bits of its order key, or its place on a line
    /// through the scores' range), its class (bit `row_bits`), its index (the
    /// low `row_bits` bits). Rows whose coarse keys agree (a run) may be in
    /// any order; the walk puts a run in the order of the full keys (a run of
    /// equal scores is only checked).
    Packed {
        keys: Vec<u64>,
        low: u32,
        row_bits: u32,
    },
    /// `(key, row)` in ascending key order: scores whose coarse keys would
    /// leave long runs (crowded near one value beside others spread widely,
    /// [`Coarse::choose`], or many beyond the sampled range), or more than
    /// [`PACKED_ROWS`] rows.
    Keyed(Vec<(u64, usize)>),
}

/// The rows in ascending score order, `positive` and `score` of the same
/// length. Every score is tested in the pass that keys the rows (a score
/// that is not finite fails, named `arg`: no pass of its own). When `alone`,
/// the packed keys sort on the calling thread (another model sorts beside),
/// else on the pool.
///
/// # Errors
/// [`MetricError::NonFinite`](crate::error::MetricError::NonFinite),
/// [`MetricError::Interrupted`](crate::error::MetricError::Interrupted) or
/// [`MetricError::OutOfMemory`](crate::error::MetricError::OutOfMemory).
pub(super) fn ordered<X: Score>(
    positive: &[bool],
    score: &[X],
    alone: bool,
    arg: &'static str,
    pool: &Pool,
) -> Result<Ordered> {
    let n = score.len();
    let row_bits = usize::BITS - (n.max(2) - 1).leading_zeros();
    let low = row_bits + 1;
    let coarse = if n > PACKED_ROWS {
        None
    } else {
        Coarse::choose(score, low)
    };
    let Some(coarse) = coarse else {
        check_finite_on(arg, score, pool)?;
        return Ok(Ordered::Keyed(sorted_key_rows(score, pool)?));
    };
    let finite = AtomicBool::new(true);
    let mut keys: Vec<u64> = collect_chunked(
        n,
        |i| {
            let s = score[i];
            if !s.is_finite() {
                finite.store(false, Relaxed);
            }
            coarse.high(s, low) | (u64::from(positive[i]) << row_bits) | i as u64
        },
        pool,
    )?;
    if !finite.load(Relaxed) {
        check_finite_on(arg, score, pool)?;
    }
    if alone {
        // Only the key's bits order the rows (the walk orders a run by its
        // full keys): the low bytes need no radix pass.
        sort_high_bits_alone(&mut keys, low, pool)?;
    } else {
        sort_keys(&mut keys, pool)?;
    }
    // Scores beyond the sampled range gather in a run at either end of the
    // line (the walk orders a run alone, on one thread): more than a few,
    // and the rows are sorted with their full keys instead.
    let ends =
        |it: &mut dyn Iterator<Item = &u64>| it.take_while(|&&k| coarse.at_end(k, low)).count();
    if ends(&mut keys.iter()) + ends(&mut keys.iter().rev()) > n / AT_ENDS {
        drop(keys);
        return Ok(Ordered::Keyed(sorted_key_rows(score, pool)?));
    }
    Ok(Ordered::Packed {
        keys,
        low,
        row_bits,
    })
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

    /// The sum of the placements' numerators over either side's rows
    /// (every pair counts 2 when ordered, 1 when tied).
    pub(super) fn numerators(self) -> u128 {
        2 * self.ordered + self.tied
    }
}

/// The run of packed keys at `start` (the keys whose bits above `low` agree
/// with its own) as `(full key, packed key)` in `run`, in full-key order (a
/// run of equal scores, the usual case, is only checked): the run's end.
fn take_run<X: Score>(
    keys: &[u64],
    start: usize,
    low: u32,
    row_mask: u64,
    score: &[X],
    run: &mut Vec<(u64, u64)>,
) -> usize {
    let high = keys[start] >> low;
    let end = start
        + keys[start..]
            .iter()
            .take_while(|&&p| p >> low == high)
            .count();
    run.clear();
    run.extend(
        keys[start..end]
            .iter()
            .map(|&p| (score.get((p & row_mask) as usize).map_or(0, |s| s.key()), p)),
    );
    if run.windows(2).any(|w| w[0].0 > w[1].0) {
        run.sort_unstable();
    }
    end
}

/// A hint that the scores of the rows at `at` and after it are read soon
/// when the two packed keys there start or continue a run ([`take_run`]
/// reads a run's full keys from all over `score`; perf showed a third of a
/// walk stalled on those reads).
#[inline(always)]
fn fetch_run_scores<X: Score>(keys: &[u64], at: usize, low: u32, row_mask: u64, score: &[X]) {
    if let (Some(&first), Some(&next)) = (keys.get(at), keys.get(at + 1)) {
        if (first ^ next) >> low == 0 {
            prefetch(score, (first & row_mask) as usize);
            prefetch(score, (next & row_mask) as usize);
        }
    }
}

/// `(group key, row)` of every row in ascending score order, where the group
/// keys ascend with the scores and are equal exactly within a tie group (a row
/// alone among rows of other high bits gets the high bits of its key, the
/// rows of a run the full keys): each row's key, high bits only, and its index
/// packed in one `u64` and sorted, then each run of equal high bits put in
/// full-key order. Crowded scores ([`crowded`]) and more than
/// [`PACKED_ROWS`] rows take the sort of `(key, row)` pairs
/// ([`sorted_key_rows`]).
///
/// # Errors
/// [`MetricError::Interrupted`](crate::error::MetricError::Interrupted) or
/// [`MetricError::OutOfMemory`](crate::error::MetricError::OutOfMemory).
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
    let mut run: Vec<(u64, u64)> = Vec::new();
    let mut start = 0;
    let mut next_check = CHECK_ROWS;
    while start < n {
        if start >= next_check {
            pool.check()?;
            next_check = start + CHECK_ROWS;
        }
        fetch_run_scores(&packed, start + LOOK_AHEAD, row_bits, row_mask, score);
        let first = packed[start];
        if packed
            .get(start + 1)
            .is_none_or(|&p| (p ^ first) >> row_bits != 0)
        {
            out.push((first >> row_bits << row_bits, (first & row_mask) as usize));
            start += 1;
            continue;
        }
        start = take_run(&packed, start, row_bits, row_mask, score, &mut run);
        out.extend(run.iter().map(|&(key, p)| (key, (p & row_mask) as usize)));
    }
    Ok(out)
}

/// What a walk does with each row's placement numerator.
pub(super) trait Visit {
    /// A hint that `row` comes soon.
    fn ahead(&self, row: usize);
    /// Row `row`, positive or not, and the numerator of its placement.
    fn row(&mut self, positive: bool, row: usize, numerator: u64);
}

/// The walk's counts so far and its exact sums.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Tally {
    n_pos: u64,
    pos_below: u64,
    neg_below: u64,
    /// The model's pair counts over the rows walked.
    pub counts: PairCounts,
    /// The sums of the squared numerators of the negative (`[0]`) and the
    /// positive (`[1]`) rows walked.
    pub squares: [u128; 2],
}

impl Tally {
    /// The rows alone in their run (most rows of continuous scores) from
    /// place `rows.start` of `keys` (packed, see [`Ordered::Packed`]), up to
    /// the first run of two keys or more or `rows.end`: where it stopped.
    #[inline(always)]
    fn singles<X: Score, V: Visit>(
        &mut self,
        keys: &[u64],
        rows: Range<usize>,
        low: u32,
        row_bits: u32,
        score: &[X],
        visit: &mut V,
    ) -> usize {
        let row_mask = (1u64 << row_bits) - 1;
        let stop = rows.end.min(keys.len());
        let (mut pos_below, mut neg_below) = (self.pos_below, self.neg_below);
        let mut i = rows.start;
        let n_pos = self.n_pos;
        // A lone row's numerator is `2 m`, `m` the other side's rows below
        // (or above) it, at most `m_max`: the squares `m^2` and the pair
        // counts are summed in 64 bits over at most `chunk` rows at a time
        // (one at a time past 2^32 rows), then added to the 128-bit sums.
        let m_max = n_pos.max(neg_below + (stop - i) as u64).max(1);
        let chunk = u64::MAX / m_max.saturating_mul(m_max);
        let chunk = usize::try_from(chunk).map_or(CHECK_ROWS, |c| c.clamp(1, CHECK_ROWS));
        let (mut squares, mut ordered) = ([0u64; 2], 0u64);
        let mut left = chunk;
        let mut one = |key: u64, visit: &mut V| {
            let p = (key >> row_bits) & 1 == 1;
            let m = if p { neg_below } else { n_pos - pos_below };
            visit.row(p, (key & row_mask) as usize, 2 * m);
            squares[usize::from(p)] += m * m;
            ordered += neg_below & 0u64.wrapping_sub(u64::from(p));
            pos_below += u64::from(p);
            neg_below += u64::from(!p);
            left -= 1;
            if left == 0 {
                self.add_lone(&mut squares, &mut ordered);
                left = chunk;
            }
        };
        // Eight rows at a time while all eight are alone (one test of the
        // nine keys, in vector lanes), then one at a time up to a run.
        while i + SINGLES < stop {
            let Some(w) = keys.get(i..=i + SINGLES) else {
                break;
            };
            let mut joined = 0;
            for j in 0..SINGLES {
                joined |= u64::from((w[j] ^ w[j + 1]) >> low == 0);
            }
            if joined != 0 {
                break;
            }
            for (j, &key) in w[..SINGLES].iter().enumerate() {
                if let Some(&ahead) = keys.get(i + j + LOOK_AHEAD) {
                    visit.ahead((ahead & row_mask) as usize);
                }
                fetch_run_scores(keys, i + j + LOOK_AHEAD, low, row_mask, score);
                one(key, visit);
            }
            i += SINGLES;
        }
        while i < stop {
            let key = keys[i];
            if keys
                .get(i + 1)
                .is_some_and(|&next| (next ^ key) >> low == 0)
            {
                break;
            }
            if let Some(&ahead) = keys.get(i + LOOK_AHEAD) {
                visit.ahead((ahead & row_mask) as usize);
            }
            fetch_run_scores(keys, i + LOOK_AHEAD, low, row_mask, score);
            one(key, visit);
            i += 1;
        }
        self.add_lone(&mut squares, &mut ordered);
        (self.pos_below, self.neg_below) = (pos_below, neg_below);
        i
    }

    /// The 64-bit sums of lone rows ([`Self::singles`]: `m^2` per side and
    /// the ordered pairs) added to the exact sums, and zeroed.
    #[inline(always)]
    fn add_lone(&mut self, squares: &mut [u64; 2], ordered: &mut u64) {
        self.squares[0] += 4 * u128::from(squares[0]);
        self.squares[1] += 4 * u128::from(squares[1]);
        self.counts.ordered += u128::from(*ordered);
        (*squares, *ordered) = ([0; 2], 0);
    }

    /// One tie group's rows as `(positive, row)`.
    fn group<V: Visit>(&mut self, rows: &[(bool, usize)], visit: &mut V) {
        let gp = rows.iter().filter(|r| r.0).count() as u64;
        let gn = rows.len() as u64 - gp;
        let pos_num = 2 * self.neg_below + gn;
        let neg_num = 2 * (self.n_pos - self.pos_below) - gp;
        for &(p, row) in rows {
            visit.row(p, row, if p { pos_num } else { neg_num });
        }
        self.squares[1] += u128::from(gp) * u128::from(pos_num) * u128::from(pos_num);
        self.squares[0] += u128::from(gn) * u128::from(neg_num) * u128::from(neg_num);
        self.counts.ordered += u128::from(gp) * u128::from(self.neg_below);
        self.counts.tied += u128::from(gp) * u128::from(gn);
        self.pos_below += gp;
        self.neg_below += gn;
    }

    /// Another piece's sums added to these.
    pub(super) fn add(&mut self, other: &Self) {
        self.counts.ordered += other.counts.ordered;
        self.counts.tied += other.counts.tied;
        self.squares[0] += other.squares[0];
        self.squares[1] += other.squares[1];
    }
}

/// `value` added to `sums[1]` when `positive`, else to `sums[0]`, without a
/// branch or an indexed store (the two sums stay in registers in a walk).
#[inline(always)]
pub(super) fn add_to_side(sums: &mut [u128; 2], positive: bool, value: u128) {
    let mask = 0u128.wrapping_sub(u128::from(positive));
    sums[1] += value & mask;
    sums[0] += value & !mask;
}

/// A stretch of the ordered rows that starts a tie group (and a run), with
/// the positive rows before it.
struct Piece {
    rows: Range<usize>,
    pos_before: u64,
}

impl Ordered {
    fn len(&self) -> usize {
        match self {
            Self::Packed { keys, .. } => keys.len(),
            Self::Keyed(order) => order.len(),
        }
    }

    /// Whether the row at `i` belongs with the row before it (same run or
    /// same key): no piece may start there.
    fn joined(&self, i: usize) -> bool {
        match self {
            Self::Packed { keys, low, .. } => keys[i - 1] >> low == keys[i] >> low,
            Self::Keyed(order) => order[i - 1].0 == order[i].0,
        }
    }

    fn positives(&self, rows: Range<usize>, positive: &[bool]) -> u64 {
        match self {
            Self::Packed { keys, row_bits, .. } => {
                keys[rows].iter().map(|&k| (k >> row_bits) & 1).sum()
            }
            Self::Keyed(order) => order[rows].iter().filter(|r| positive[r.1]).count() as u64,
        }
    }

    /// The rows cut into at most `parts` pieces of about equal length, each
    /// starting a run.
    fn pieces(&self, parts: usize) -> Vec<Range<usize>> {
        let n = self.len();
        let mut cuts = vec![0];
        for part in 1..parts {
            let mut cut = (n * part / parts).max(*cuts.last().unwrap_or(&0));
            while cut > 0 && cut < n && self.joined(cut) {
                cut += 1;
            }
            if cut < n && cut > *cuts.last().unwrap_or(&0) {
                cuts.push(cut);
            }
        }
        cuts.push(n);
        cuts.windows(2).map(|w| w[0]..w[1]).collect()
    }

    /// Walk `rows` (a piece) from `tally`, the counts of the rows before it,
    /// handing each row to `visit`: the tally after the piece.
    fn walk<X: Score, V: Visit>(
        &self,
        score: &[X],
        positive: &[bool],
        rows: Range<usize>,
        mut tally: Tally,
        visit: &mut V,
        pool: &Pool,
    ) -> Result<Tally> {
        let mut group: Vec<(bool, usize)> = Vec::new();
        let mut start = rows.start;
        let mut next_check = start + CHECK_ROWS;
        match self {
            Self::Packed {
                keys,
                low,
                row_bits,
            } => {
                let (low, row_bits) = (*low, *row_bits);
                let keys = &keys[..rows.end];
                let row_mask = (1u64 << row_bits) - 1;
                let unpack = |p: u64| ((p >> row_bits) & 1 == 1, (p & row_mask) as usize);
                let mut run: Vec<(u64, u64)> = Vec::new();
                while start < keys.len() {
                    if start >= next_check {
                        pool.check()?;
                        next_check = start + CHECK_ROWS;
                    }
                    start = tally.singles(keys, start..next_check, low, row_bits, score, visit);
                    if start >= keys.len().min(next_check) {
                        continue;
                    }
                    let end = take_run(keys, start, low, row_mask, score, &mut run);
                    let mut at = 0;
                    while at < run.len() {
                        let key = run[at].0;
                        let stop = at + run[at..].iter().take_while(|r| r.0 == key).count();
                        group.clear();
                        group.extend(run[at..stop].iter().map(|r| unpack(r.1)));
                        tally.group(&group, visit);
                        at = stop;
                    }
                    start = end;
                }
            }
            Self::Keyed(order) => {
                let order = &order[..rows.end];
                while start < order.len() {
                    if start >= next_check {
                        pool.check()?;
                        next_check = start + CHECK_ROWS;
                    }
                    if let Some(ahead) = order.get(start + LOOK_AHEAD) {
                        visit.ahead(ahead.1);
                    }
                    let key = order[start].0;
                    let end = start + order[start..].iter().take_while(|r| r.0 == key).count();
                    group.clear();
                    group.extend(order[start..end].iter().map(|r| (positive[r.1], r.1)));
                    tally.group(&group, visit);
                    start = end;
                }
            }
        }
        Ok(tally)
    }
}

/// Walk all rows of `order` in pieces, on the pool's threads when it runs
/// `n` rows in parallel, one visitor per piece (made by `visitor`): each
/// piece's tally and visitor, in row order.
///
/// # Errors
/// [`MetricError::Interrupted`](crate::error::MetricError::Interrupted).
pub(super) fn walk_pieces<X: Score, V: Visit + Send>(
    order: &Ordered,
    score: &[X],
    positive: &[bool],
    n_pos: u64,
    visitor: impl Fn() -> V + Sync,
    pool: &Pool,
) -> Result<Vec<(Tally, V)>> {
    let n = order.len();
    let parallel = pool.parallel_for(n);
    let parts = if parallel { 2 * pool.threads() } else { 1 };
    let ranges = order.pieces(parts);
    let before: Vec<u64> = if parallel {
        pool.install(|| {
            ranges
                .par_iter()
                .map(|r| order.positives(r.clone(), positive))
                .collect()
        })
    } else {
        ranges
            .iter()
            .map(|r| order.positives(r.clone(), positive))
            .collect()
    };
    let mut pieces = Vec::with_capacity(ranges.len());
    let mut pos_before = 0;
    for (rows, count) in ranges.into_iter().zip(before) {
        pieces.push(Piece { rows, pos_before });
        pos_before += count;
    }
    let one = |piece: &Piece| -> Result<(Tally, V)> {
        let start = Tally {
            n_pos,
            pos_below: piece.pos_before,
            neg_below: piece.rows.start as u64 - piece.pos_before,
            ..Tally::default()
        };
        let mut visit = visitor();
        let rows = piece.rows.clone();
        let tally = order.walk(score, positive, rows, start, &mut visit, pool)?;
        Ok((tally, visit))
    };
    if parallel {
        pool.install(|| pieces.par_iter().map(one).collect())
    } else {
        pieces.iter().map(one).collect()
    }
}

/// A hint that `slots[row]` is read or written soon.
#[inline(always)]
pub(super) fn prefetch<T>(slots: &[T], row: usize) {
    #[cfg(target_arch = "x86_64")]
    if let Some(slot) = slots.get(row) {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        // SAFETY: SSE is part of every x86-64 target, and a prefetch of a
        // valid address (a slot of `slots`) reads or writes nothing.
        unsafe { _mm_prefetch::<_MM_HINT_T0>(std::ptr::from_ref(slot).cast()) };
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (slots, row);
}

#[cfg(test)]
mod tests;
