//! The confusion tables of many groups in one pass: a `G x K x K` table, where
//! `counts[(g * k + i) * k + j]` counts the rows of group `groups[g]` whose true
//! label is `labels[i]` and predicted label `labels[j]`.
//!
//! Group values and labels are integers (group values as they are, or codes the
//! caller made from strings). One parallel pass finds their ranges; when the
//! table over those ranges is small enough, a second pass counts every row at
//! `(group - min, true - min, pred - min)` (no encoding of either), and the
//! table is then cut down to the groups and labels that occur. Otherwise the
//! kernel says so (`None`) and the caller encodes first.
//!
//! Counts are u64 (per-thread tables added up, so their order does not
//! matter). Weighted sums are f64, summed in row order inside chunks whose
//! size depends only on the table, the chunks added in order: the same bits on
//! any thread count.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use crate::confusion::{fold_weighted, WeightedPart};
use crate::ensure;
use crate::error::{same_length, MetricError, Result};
use crate::labels::{min_max, Label};
use crate::memory::check_available;
use crate::parallel::{big_vec, Pool, BASE_CHUNK};

/// The most cells the dense kernel counts with one table per thread; larger
/// tables are counted by one thread (the memory stays one table).
const PER_THREAD_CELLS: usize = 1 << 24;

/// The confusion tables of every group that occurs.
#[derive(Debug, Clone, PartialEq)]
pub struct GroupedConfusion {
    /// Group values (or codes) that occur, ascending.
    pub groups: Vec<i64>,
    /// Labels (or codes) that occur in any group, ascending.
    pub labels: Vec<i64>,
    /// `groups.len() x labels.len() x labels.len()` counts, rows = true.
    pub counts: Vec<u64>,
    /// The weighted sums in the same layout, when weights were given.
    pub weighted: Option<Vec<f64>>,
}

/// The dense table over the value ranges, before it is cut down.
struct Spans {
    g_lo: i64,
    g_span: usize,
    l_lo: i64,
    l_span: usize,
}

impl Spans {
    fn cells(&self) -> usize {
        self.g_span * self.l_span * self.l_span
    }

    /// The row's cell, or `usize::MAX` for a value outside the spans (guessed
    /// spans may miss a value; the caller then counts again over the full ranges).
    #[inline(always)]
    fn cell<G: Label, L: Label>(&self, g: G, t: L, p: L) -> usize {
        #[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)]
        let at = |v: i64, lo: i64| v.wrapping_sub(lo) as u64 as usize;
        let (a, b, c) = (
            at(g.to_i64(), self.g_lo),
            at(t.to_i64(), self.l_lo),
            at(p.to_i64(), self.l_lo),
        );
        if a < self.g_span && b < self.l_span && c < self.l_span {
            (a * self.l_span + b) * self.l_span + c
        } else {
            usize::MAX
        }
    }
}

/// The span `hi - lo + 1` when it fits in `usize` and at most `limit`.
fn span(lo: i64, hi: i64, limit: usize) -> Option<usize> {
    let width = i128::from(hi) - i128::from(lo) + 1;
    usize::try_from(width).ok().filter(|&w| w <= limit)
}

fn check_lengths<G, L>(g: &[G], t: &[L], p: &[L], w: Option<&[f64]>) -> Result<()> {
    same_length("y_true", Some(t.len()), "groups", g.len())?;
    same_length("y_pred", Some(p.len()), "groups", g.len())?;
    same_length("sample_weight", w.map(<[f64]>::len), "groups", g.len())?;
    ensure!(!g.is_empty(), MetricError::Empty { arg: "y_true" });
    Ok(())
}

/// Rows per chunk of the weighted kernel: a function of the table alone.
fn chunk_rows(cells: usize) -> usize {
    BASE_CHUNK.max(8 * cells)
}

/// Cells a bucket of the unweighted kernel covers: its counts stay in a core's
/// own cache while its rows are counted.
const BUCKET_BITS: u32 = 14;

/// One thread's rows sorted by bucket (a counting sort): each row's cell
/// within its bucket (`BUCKET_BITS` bits), with where each bucket starts
/// (`n_buckets + 1` offsets), and the rows outside the spans: one pass over the
/// rows writes their cell numbers, one over those sorts them.
fn spread_rows<G: Label, L: Label>(
    rows: ((&[G], &[L]), &[L]),
    s: &Spans,
    shift: u32,
    n_buckets: usize,
    pool: &Pool,
) -> Result<(Vec<u16>, Vec<usize>, u64)> {
    let ((g, t), p) = rows;
    let cells = s.cells();
    let mut skipped = 0_u64;
    let mut starts = vec![0_usize; n_buckets + 1];
    // Huge-page backed (the caller checked the memory): few page faults.
    let mut codes = big_vec::<u32>(g.len(), "the grouped confusion tables")?;
    for ((gs, ts), ps) in g
        .chunks(BASE_CHUNK)
        .zip(t.chunks(BASE_CHUNK))
        .zip(p.chunks(BASE_CHUNK))
    {
        pool.check()?;
        for ((&a, &b), &c) in gs.iter().zip(ts).zip(ps) {
            let at = s.cell(a, b, c);
            match starts.get_mut((at >> shift).saturating_add(1)) {
                Some(n) if at < cells => {
                    *n += 1;
                    // `at < cells <= 2^40`; the caller keeps cells below 2^32 here.
                    #[allow(clippy::cast_possible_truncation)]
                    codes.push(at as u32);
                }
                _ => skipped += 1,
            }
        }
    }
    for b in 1..starts.len() {
        let before = starts.get(b - 1).copied().unwrap_or(0);
        if let Some(x) = starts.get_mut(b) {
            *x += before;
        }
    }
    let mut sorted = big_vec::<u16>(codes.len(), "the grouped confusion tables")?;
    sorted.resize(codes.len(), 0);
    let mut next = starts.clone();
    let mask = (1_u32 << shift) - 1;
    for &code in &codes {
        if let Some(to) = next.get_mut((code >> shift) as usize) {
            if let Some(slot) = sorted.get_mut(*to) {
                // The cell within its bucket: below 2^BUCKET_BITS.
                #[allow(clippy::cast_possible_truncation)]
                let within = (code & mask) as u16;
                *slot = within;
            }
            *to += 1;
        }
    }
    Ok((sorted, starts, skipped))
}

/// Count the rows without weights. A table that fits a core's cache is counted
/// directly; a larger one in two steps: each thread sorts its rows' cell
/// numbers by bucket of `2^BUCKET_BITS` cells, then each bucket is counted on
/// its own, its cells in cache. The counts are the same whatever the order.
fn count_unweighted<G: Label, L: Label>(
    g: &[G],
    t: &[L],
    p: &[L],
    s: &Spans,
    pool: &Pool,
) -> Result<(Vec<u64>, u64)> {
    let cells = s.cells();
    let bits = usize::BITS - cells.saturating_sub(1).leading_zeros();
    // Buckets of 2^BUCKET_BITS cells: the cell within a bucket fits a u16.
    let shift = BUCKET_BITS;
    let n_buckets = cells.div_ceil(1 << shift);
    if cells <= 1 << 21 || bits > 32 {
        return count_direct(g, t, p, s, pool);
    }
    let parallel = pool.parallel_for(g.len());
    let threads = if parallel { pool.threads().max(1) } else { 1 };
    // The cells (4 bytes a row), sorted (2 bytes a row), and the table.
    check_available(
        g.len() as u128 * 6 + cells as u128 * 8 + n_buckets as u128 * 16 * threads as u128,
        "the grouped confusion tables",
    )?;
    let part = g.len().div_ceil(threads).max(1);
    let spread = |rows| spread_rows(rows, s, shift, n_buckets, pool);
    let spread_all: Vec<(Vec<u16>, Vec<usize>, u64)> = if threads > 1 {
        pool.install(|| {
            g.par_chunks(part)
                .zip(t.par_chunks(part))
                .zip(p.par_chunks(part))
                .map(spread)
                .collect::<Result<_>>()
        })?
    } else {
        vec![spread(((g, t), p))?]
    };
    // Each bucket's slab is zeroed by the thread that counts it (its pages
    // fault in there, on every thread, not all on the caller's).
    let mut table = big_vec::<u64>(cells, "the grouped confusion tables")?;
    let count = |(b, raw): (usize, &mut [MaybeUninit<u64>])| {
        for x in raw.iter_mut() {
            x.write(0);
        }
        // SAFETY: every element of `raw` was written just above, and
        // `MaybeUninit<u64>` has the layout of `u64`.
        let slab = unsafe { &mut *(std::ptr::from_mut::<[MaybeUninit<u64>]>(raw) as *mut [u64]) };
        for (within, starts, _) in &spread_all {
            let (lo, hi) = (
                starts.get(b).copied().unwrap_or(0),
                starts.get(b + 1).copied().unwrap_or(0),
            );
            for &at in within.get(lo..hi).unwrap_or(&[]) {
                if let Some(c) = slab.get_mut(usize::from(at)) {
                    *c += 1;
                }
            }
        }
    };
    let spare = table
        .spare_capacity_mut()
        .get_mut(..cells)
        .unwrap_or_default();
    if threads > 1 {
        pool.install(|| spare.par_chunks_mut(1 << shift).enumerate().for_each(count));
    } else {
        spare.chunks_mut(1 << shift).enumerate().for_each(count);
    }
    // SAFETY: the chunks cover `..cells` of the capacity and each was written
    // in full by `count`.
    unsafe { table.set_len(cells) };
    pool.check()?;
    let skipped = spread_all.iter().map(|part| part.2).sum();
    Ok((table, skipped))
}

/// Count the rows without weights straight into one table per thread (u32
/// counts: each thread counts fewer than 2^32 rows at a time), the threads'
/// tables added up.
fn count_direct<G: Label, L: Label>(
    g: &[G],
    t: &[L],
    p: &[L],
    s: &Spans,
    pool: &Pool,
) -> Result<(Vec<u64>, u64)> {
    let cells = s.cells();
    let parallel = pool.parallel_for(g.len()) && cells <= PER_THREAD_CELLS;
    let threads = if parallel { pool.threads().max(1) } else { 1 };
    check_available(
        cells as u128 * (8 + 4 * threads as u128),
        "the grouped confusion tables",
    )?;
    // Parts of at most 2^31 rows, so that no u32 count overflows.
    let part = g.len().div_ceil(threads).clamp(1, 1 << 31);
    let count = |((gc, tc), pc): ((&[G], &[L]), &[L])| -> (Vec<u32>, u64) {
        let mut table = vec![0_u32; cells];
        let mut skipped = 0_u64;
        for ((gs, ts), ps) in gc
            .chunks(BASE_CHUNK)
            .zip(tc.chunks(BASE_CHUNK))
            .zip(pc.chunks(BASE_CHUNK))
        {
            if pool.stopped() {
                break;
            }
            for ((&a, &b), &c) in gs.iter().zip(ts).zip(ps) {
                match table.get_mut(s.cell(a, b, c)) {
                    Some(slot) => *slot += 1,
                    None => skipped += 1,
                }
            }
        }
        (table, skipped)
    };
    let parts: Vec<(Vec<u32>, u64)> = if threads > 1 {
        pool.install(|| {
            g.par_chunks(part)
                .zip(t.par_chunks(part))
                .zip(p.par_chunks(part))
                .map(count)
                .collect()
        })
    } else {
        g.chunks(part)
            .zip(t.chunks(part))
            .zip(p.chunks(part))
            .map(count)
            .collect()
    };
    pool.check()?;
    // The threads' tables added up a piece at a time, the pieces side by side.
    const PIECE: usize = 1 << 16;
    let mut out = big_vec::<u64>(cells, "the grouped confusion tables")?;
    let add = |(c, raw): (usize, &mut [MaybeUninit<u64>])| {
        let lo = c * PIECE;
        for (i, x) in raw.iter_mut().enumerate() {
            let total = parts
                .iter()
                .map(|(table, _)| table.get(lo + i).map_or(0, |&n| u64::from(n)))
                .sum();
            x.write(total);
        }
    };
    let spare = out
        .spare_capacity_mut()
        .get_mut(..cells)
        .unwrap_or_default();
    if threads > 1 {
        pool.install(|| spare.par_chunks_mut(PIECE).enumerate().for_each(add));
    } else {
        spare.chunks_mut(PIECE).enumerate().for_each(add);
    }
    // SAFETY: the pieces cover `..cells` of the capacity, each written in full.
    unsafe { out.set_len(cells) };
    Ok((out, parts.iter().map(|part| part.1).sum()))
}

fn weighted_chunk<G: Label, L: Label>(
    rows: (&[G], &[L], &[L], &[f64]),
    s: &Spans,
    offset: usize,
) -> WeightedPart {
    let (g, t, p, w) = rows;
    let cells = s.cells();
    let mut counts = vec![0_u64; cells];
    let mut sums = vec![0.0_f64; cells];
    let mut bad = 0_usize;
    for (((&a, &b), &c), &x) in g.iter().zip(t).zip(p).zip(w) {
        let at = s.cell(a, b, c);
        if let (Some(n), Some(sum)) = (counts.get_mut(at), sums.get_mut(at)) {
            *n += 1;
            *sum += x;
        }
        // NaN fails both comparisons; +inf fails the second.
        bad += usize::from(!(0.0..f64::INFINITY).contains(&x));
    }
    WeightedPart::new(counts, sums, w, offset, bad)
}

fn count_weighted<G: Label, L: Label>(
    rows: (&[G], &[L], &[L], &[f64]),
    s: &Spans,
    pool: &Pool,
) -> Result<(Vec<u64>, Vec<f64>)> {
    let (g, t, p, w) = rows;
    let cells = s.cells();
    let size = chunk_rows(cells);
    let n = g.len();
    let group = if pool.parallel_for(n) && cells <= PER_THREAD_CELLS {
        2 * pool.threads()
    } else {
        1
    };
    check_available(
        cells as u128 * 16 * (group as u128 + 1),
        "the grouped confusion tables",
    )?;
    let part = |c: usize| {
        let lo = c * size;
        let hi = (lo + size).min(n);
        weighted_chunk(
            (
                g.get(lo..hi).unwrap_or(&[]),
                t.get(lo..hi).unwrap_or(&[]),
                p.get(lo..hi).unwrap_or(&[]),
                w.get(lo..hi).unwrap_or(&[]),
            ),
            s,
            lo,
        )
    };
    // Chunks are made a group at a time and added strictly in chunk order.
    fold_weighted(n.div_ceil(size), group, cells, pool, part)
}

/// The table cut down to the groups with a row and the labels some row has,
/// in place (every kept cell moves to a place at or before its own).
fn compact(s: &Spans, counts: Vec<u64>, weighted: Option<Vec<f64>>) -> GroupedConfusion {
    let k = s.l_span;
    let slab = (k * k).max(1);
    // The groups with a row; the labels from the table of all rows.
    let mut total = vec![0_u64; slab];
    let mut groups = Vec::new();
    for (g, cells) in counts.chunks_exact(slab).enumerate() {
        if cells.iter().any(|&c| c != 0) {
            groups.push(g);
            total.iter_mut().zip(cells).for_each(|(a, &b)| *a |= b);
        }
    }
    let labels: Vec<usize> = (0..k)
        .filter(|&i| {
            (0..k).any(|j| {
                total.get(i * k + j).copied().unwrap_or(0) != 0
                    || total.get(j * k + i).copied().unwrap_or(0) != 0
            })
        })
        .collect();
    let value = |lo: i64, i: usize| lo + i64::try_from(i).unwrap_or(i64::MAX);
    let out_groups = groups.iter().map(|&g| value(s.g_lo, g)).collect();
    let out_labels = labels.iter().map(|&i| value(s.l_lo, i)).collect();
    let mut counts = counts;
    let mut weighted = weighted;
    let first = groups.first().copied().unwrap_or(0);
    let contiguous = groups
        .last()
        .is_none_or(|&last| last + 1 - first == groups.len());
    if labels.len() == k && contiguous {
        // A run of whole slabs: moved to the front (nothing moves when it starts there).
        let run = first * slab..(first + groups.len()) * slab;
        if run.start > 0 {
            counts.copy_within(run.clone(), 0);
        }
        counts.truncate(run.len());
        if let Some(w) = weighted.as_mut() {
            if run.start > 0 {
                w.copy_within(run.clone(), 0);
            }
            w.truncate(run.len());
        }
    } else {
        let mut to = 0;
        for &g in &groups {
            for &i in &labels {
                for &j in &labels {
                    let from = (g * k + i) * k + j;
                    if let Some(&c) = counts.get(from) {
                        if let Some(slot) = counts.get_mut(to) {
                            *slot = c;
                        }
                    }
                    if let Some(w) = weighted.as_mut() {
                        if let Some(&x) = w.get(from) {
                            if let Some(slot) = w.get_mut(to) {
                                *slot = x;
                            }
                        }
                    }
                    to += 1;
                }
            }
        }
        counts.truncate(to);
        if let Some(w) = weighted.as_mut() {
            w.truncate(to);
        }
    }
    GroupedConfusion {
        groups: out_groups,
        labels: out_labels,
        counts,
        weighted,
    }
}

/// Count the confusion table of every group in one pass over the rows, when
/// the table over the ranges of the group values and labels has at most
/// `max_cells` cells (and at most 4095 labels in range); `Ok(None)` otherwise,
/// so that the caller encodes the values to codes and calls again.
///
/// # Errors
/// Length mismatch, empty input, an invalid weight (negative, NaN or
/// infinite), a sum of weights beyond the f64 range, too little memory for
/// the tables, or an interruption.
pub fn grouped_confusion<G: Label, L: Label>(
    groups: &[G],
    y_true: &[L],
    y_pred: &[L],
    sample_weight: Option<&[f64]>,
    max_cells: usize,
    pool: &Pool,
) -> Result<Option<GroupedConfusion>> {
    check_lengths(groups, y_true, y_pred, sample_weight)?;
    if sample_weight.is_none() && groups.len() > 4 * GUESS_ROWS {
        // The ranges of a prefix of the rows, a little wider for the group values: when
        // every row falls inside them, no pass over the rows was spent finding them.
        let sequential = Pool::sequential();
        let guessed = (
            min_max(groups.get(..GUESS_ROWS).unwrap_or(&[]), &[], &sequential),
            min_max(
                y_true.get(..GUESS_ROWS).unwrap_or(&[]),
                y_pred.get(..GUESS_ROWS).unwrap_or(&[]),
                &sequential,
            ),
        );
        if let (Some((g_lo, g_hi)), Some(labels)) = guessed {
            let margin = (g_hi.saturating_sub(g_lo) / 16).saturating_add(1);
            let g_lo = if g_lo >= 0 {
                (g_lo - margin).max(0)
            } else {
                g_lo.saturating_sub(margin)
            };
            let wide = (g_lo, g_hi.saturating_add(margin));
            if let Some(s) = spans(wide, labels, max_cells) {
                let (counts, skipped) = count_unweighted(groups, y_true, y_pred, &s, pool)?;
                if skipped == 0 {
                    return Ok(Some(compact(&s, counts, None)));
                }
            }
        }
    }
    let (Some(g_range), Some(l_range)) =
        (min_max(groups, &[], pool), min_max(y_true, y_pred, pool))
    else {
        return Ok(None);
    };
    let Some(s) = spans(g_range, l_range, max_cells) else {
        return Ok(None);
    };
    let out = match sample_weight {
        None => {
            let (counts, skipped) = count_unweighted(groups, y_true, y_pred, &s, pool)?;
            debug_assert_eq!(skipped, 0);
            compact(&s, counts, None)
        }
        Some(w) => {
            let (counts, sums) = count_weighted((groups, y_true, y_pred, w), &s, pool)?;
            ensure!(
                sums.iter().sum::<f64>().is_finite(),
                MetricError::WeightRange {
                    what: "the sum of sample_weight"
                }
            );
            compact(&s, counts, Some(sums))
        }
    };
    Ok(Some(out))
}

/// Rows whose ranges guess the ranges of all rows.
const GUESS_ROWS: usize = 1 << 16;

/// The spans of these ranges, when their table has at most `max_cells` cells
/// and the labels span at most 4095 values.
fn spans(groups: (i64, i64), labels: (i64, i64), max_cells: usize) -> Option<Spans> {
    let g_span = span(groups.0, groups.1, usize::MAX)?;
    let l_span = span(labels.0, labels.1, 4095)?;
    g_span
        .checked_mul(l_span)
        .and_then(|x| x.checked_mul(l_span))
        .filter(|&c| c <= max_cells)?;
    Some(Spans {
        g_lo: groups.0,
        g_span,
        l_lo: labels.0,
        l_span,
    })
}

#[cfg(test)]
mod tests;
