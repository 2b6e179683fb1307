//! Confusion-matrix counting: the one pass over the rows that every hard-label
//! metric is derived from.
//!
//! Layout: `C[i * k + j]` counts samples whose true label is `labels[i]` and
//! whose predicted label is `labels[j]` (rows = true, as scikit-learn).
//!
//! Kernel: labels already in `0..d` are counted into a histogram padded to
//! `(d + 1)^2` cells, where any value outside `0..d` lands in row or column `d`
//! (`Label::slot`), so the range check costs no branch. Small tables are kept
//! as several interleaved sub-histograms ("lanes") so that consecutive rows
//! hitting the same cell do not wait on each other's store. Counts are u32
//! inside a chunk and u64 across chunks; weighted sums are f64, summed in row
//! order inside a chunk and in chunk order across chunks, with a chunk size
//! that depends only on the data, so the result is bit-identical at any thread
//! count.
//!
//! The labels are found without a separate pass in the common case: the range
//! of a prefix of the rows gives a guess `d`; if a later row falls outside it,
//! the overflow cells say so and the kernel falls back to a full min/max pass,
//! and to hash encoding for negative or sparse labels.

use rayon::prelude::*;

use crate::ensure;
use crate::error::{MetricError, Result};
use crate::labels::{encode_ints, min_max, Label};
use crate::memory::check_available;
use crate::parallel::{Pool, BASE_CHUNK};

/// Rows read to guess the label range before counting.
const GUESS_ROWS: usize = 1 << 16;
/// Label ranges up to this size are always counted densely.
const ALWAYS_DENSE: usize = 64;
/// Largest padded table (cells) the dense kernel will allocate.
const MAX_DENSE_CELLS: usize = 1 << 24;

/// A counted confusion matrix over the labels that occur.
#[derive(Debug, Clone, PartialEq)]
pub struct Confusion {
    /// Label values (or codes) of the rows and columns, ascending.
    pub labels: Vec<i64>,
    /// Unweighted counts, `k * k`, rows = true.
    pub counts: Vec<u64>,
    /// Weighted sums, `k * k`, when weights were given.
    pub weighted: Option<Vec<f64>>,
}

impl Confusion {
    /// Number of classes.
    pub fn k(&self) -> usize {
        self.labels.len()
    }

    /// The matrix metrics are computed from: the weighted sums if there are
    /// weights, else the counts as f64 (exact up to 2^53).
    #[allow(clippy::cast_precision_loss)]
    pub fn matrix(&self) -> Vec<f64> {
        match &self.weighted {
            Some(w) => w.clone(),
            None => self.counts.iter().map(|&c| c as f64).collect(),
        }
    }
}

/// Options of [`confusion_matrix`].
#[derive(Debug, Clone, Copy)]
pub struct CountOptions {
    /// Refuse label sets larger than this (the k x k table must fit in memory).
    pub max_classes: usize,
}

impl Default for CountOptions {
    fn default() -> Self {
        Self {
            max_classes: 1 << 14,
        }
    }
}

/// A padded `(d + 1)^2` table straight out of the kernel.
struct Padded {
    d: usize,
    counts: Vec<u64>,
    weighted: Option<Vec<f64>>,
}

impl Padded {
    fn s(&self) -> usize {
        self.d + 1
    }

    /// Whether any row fell outside `0..d`.
    fn overflowed(&self) -> bool {
        let s = self.s();
        let d = self.d;
        (0..s).any(|i| {
            self.counts.get(d * s + i).copied().unwrap_or(0) != 0
                || self.counts.get(i * s + d).copied().unwrap_or(0) != 0
        })
    }

    /// Drop the overflow row/column and the labels that never occur.
    fn compact(&self, keep_all: bool) -> (Vec<usize>, Vec<u64>, Option<Vec<f64>>) {
        let s = self.s();
        let d = self.d;
        let at = |i: usize, j: usize| self.counts.get(i * s + j).copied().unwrap_or(0);
        let present: Vec<usize> = (0..d)
            .filter(|&i| keep_all || (0..d).any(|j| at(i, j) != 0 || at(j, i) != 0))
            .collect();
        let counts = present
            .iter()
            .flat_map(|&i| present.iter().map(move |&j| at(i, j)))
            .collect();
        let weighted = self.weighted.as_ref().map(|w| {
            present
                .iter()
                .flat_map(|&i| {
                    present
                        .iter()
                        .map(move |&j| w.get(i * s + j).copied().unwrap_or(0.0))
                })
                .collect()
        });
        (present, counts, weighted)
    }
}

fn lanes_for(cells: usize) -> usize {
    if cells <= 1 << 10 {
        4
    } else if cells <= 1 << 14 {
        2
    } else {
        1
    }
}

/// Rows per chunk for a padded table of `cells` cells with `lanes` lanes:
/// large enough that clearing and flushing the per-chunk table costs at most
/// about an eighth of the counting, and never dependent on the thread count.
fn chunk_rows(cells: usize, lanes: usize) -> usize {
    BASE_CHUNK.max(8 * lanes * cells)
}

#[inline(always)]
fn bump(h: &mut [u32], idx: usize) {
    debug_assert!(idx < h.len());
    // SAFETY: every caller computes idx = slot(t) * (d + 1) + slot(p) with
    // both slots <= d, so idx <= (d + 1)^2 - 1 < h.len().
    unsafe {
        *h.get_unchecked_mut(idx) += 1;
    }
}

/// Count one chunk into `lanes` interleaved u32 sub-histograms of `cells` cells.
fn count_chunk<L: Label>(t: &[L], p: &[L], d: usize, hist: &mut [u32], lanes: usize) {
    let s = d + 1;
    let cells = s * s;
    match lanes {
        4 => {
            let (h0, rest) = hist.split_at_mut(cells);
            let (h1, rest) = rest.split_at_mut(cells);
            let (h2, h3) = rest.split_at_mut(cells);
            let mut tc = t.chunks_exact(4);
            let mut pc = p.chunks_exact(4);
            for (a, b) in (&mut tc).zip(&mut pc) {
                if let ([a0, a1, a2, a3], [b0, b1, b2, b3]) = (a, b) {
                    bump(h0, a0.slot(d) * s + b0.slot(d));
                    bump(h1, a1.slot(d) * s + b1.slot(d));
                    bump(h2, a2.slot(d) * s + b2.slot(d));
                    bump(h3, a3.slot(d) * s + b3.slot(d));
                }
            }
            for (a, b) in tc.remainder().iter().zip(pc.remainder()) {
                bump(h0, a.slot(d) * s + b.slot(d));
            }
        }
        2 => {
            let (h0, h1) = hist.split_at_mut(cells);
            let mut tc = t.chunks_exact(2);
            let mut pc = p.chunks_exact(2);
            for (a, b) in (&mut tc).zip(&mut pc) {
                if let ([a0, a1], [b0, b1]) = (a, b) {
                    bump(h0, a0.slot(d) * s + b0.slot(d));
                    bump(h1, a1.slot(d) * s + b1.slot(d));
                }
            }
            for (a, b) in tc.remainder().iter().zip(pc.remainder()) {
                bump(h0, a.slot(d) * s + b.slot(d));
            }
        }
        _ => {
            for (a, b) in t.iter().zip(p) {
                bump(hist, a.slot(d) * s + b.slot(d));
            }
        }
    }
}

/// Per-thread accumulator of the unweighted kernel.
struct Acc {
    counts: Vec<u64>,
    scratch: Vec<u32>,
}

fn count_unweighted<L: Label>(t: &[L], p: &[L], d: usize, pool: &Pool) -> Padded {
    let s = d + 1;
    let cells = s * s;
    let lanes = lanes_for(cells);
    let rows = chunk_rows(cells, lanes);
    let new_acc = || Acc {
        counts: vec![0; cells],
        scratch: vec![0; cells * lanes],
    };
    let step = |mut acc: Acc, (tc, pc): (&[L], &[L])| {
        if pool.stopped() {
            return acc;
        }
        acc.scratch.iter_mut().for_each(|c| *c = 0);
        count_chunk(tc, pc, d, &mut acc.scratch, lanes);
        for lane in acc.scratch.chunks_exact(cells) {
            for (c, &x) in acc.counts.iter_mut().zip(lane) {
                *c += u64::from(x);
            }
        }
        acc
    };
    let counts = if pool.parallel_for(t.len()) {
        pool.install(|| {
            t.par_chunks(rows)
                .zip(p.par_chunks(rows))
                .fold(new_acc, step)
                .map(|a| a.counts)
                .reduce(
                    || vec![0; cells],
                    |mut x, y| {
                        x.iter_mut().zip(y).for_each(|(a, b)| *a += b);
                        x
                    },
                )
        })
    } else {
        t.chunks(rows)
            .zip(p.chunks(rows))
            .fold(new_acc(), step)
            .counts
    };
    Padded {
        d,
        counts,
        weighted: None,
    }
}

/// What one chunk of a weighted counting kernel produces.
pub(crate) struct WeightedPart {
    pub(crate) counts: Vec<u64>,
    pub(crate) sums: Vec<f64>,
    /// First invalid weight in the chunk (global row, value) and how many.
    pub(crate) bad: Option<(usize, f64)>,
    pub(crate) bad_count: usize,
}

impl WeightedPart {
    /// A chunk's tables, with its first invalid weight found again in `w`
    /// (rows from `offset`) when the count says there is one.
    pub(crate) fn new(
        counts: Vec<u64>,
        sums: Vec<f64>,
        w: &[f64],
        offset: usize,
        bad_count: usize,
    ) -> Self {
        let bad = if bad_count > 0 {
            w.iter()
                .position(|&x| !(0.0..f64::INFINITY).contains(&x))
                .and_then(|i| w.get(i).map(|&v| (offset + i, v)))
        } else {
            None
        };
        WeightedPart {
            counts,
            sums,
            bad,
            bad_count,
        }
    }
}

/// The chunks `0..n_chunks` of a weighted kernel, made `group` at a time (in
/// parallel when `group > 1`) and added into `cells` totals strictly in chunk
/// order: the f64 sums do not depend on the thread count, and at most `group`
/// partial tables are held at once. The first invalid weight is the error.
pub(crate) fn fold_weighted<F>(
    n_chunks: usize,
    group: usize,
    cells: usize,
    pool: &Pool,
    part: F,
) -> Result<(Vec<u64>, Vec<f64>)>
where
    F: Fn(usize) -> WeightedPart + Sync + Send,
{
    let mut counts = vec![0_u64; cells];
    let mut sums = vec![0.0_f64; cells];
    let mut first_bad: Option<(usize, f64)> = None;
    let mut bad_total = 0_usize;
    let mut start = 0;
    while start < n_chunks {
        pool.check()?;
        let end = (start + group).min(n_chunks);
        let parts: Vec<WeightedPart> = if group > 1 {
            pool.install(|| (start..end).into_par_iter().map(&part).collect())
        } else {
            (start..end).map(&part).collect()
        };
        for wp in parts {
            counts.iter_mut().zip(&wp.counts).for_each(|(a, b)| *a += b);
            sums.iter_mut().zip(&wp.sums).for_each(|(a, b)| *a += b);
            first_bad = first_bad.or(wp.bad);
            bad_total += wp.bad_count;
        }
        start = end;
    }
    if let Some((index, value)) = first_bad {
        return Err(MetricError::InvalidWeight {
            index,
            value,
            count: bad_total,
        });
    }
    Ok((counts, sums))
}

fn weighted_chunk<L: Label>(t: &[L], p: &[L], w: &[f64], d: usize, offset: usize) -> WeightedPart {
    let s = d + 1;
    let cells = s * s;
    let mut counts32 = vec![0_u32; cells];
    let mut sums = vec![0.0_f64; cells];
    let mut bad_count = 0_usize;
    for ((a, b), &x) in t.iter().zip(p).zip(w) {
        let idx = a.slot(d) * s + b.slot(d);
        bump(&mut counts32, idx);
        // SAFETY: idx < cells == sums.len(), as in `bump`.
        unsafe {
            *sums.get_unchecked_mut(idx) += x;
        }
        // NaN fails both comparisons; +inf fails the second.
        bad_count += usize::from(!(0.0..f64::INFINITY).contains(&x));
    }
    let counts = counts32.into_iter().map(u64::from).collect();
    WeightedPart::new(counts, sums, w, offset, bad_count)
}

fn count_weighted<L: Label>(t: &[L], p: &[L], w: &[f64], d: usize, pool: &Pool) -> Result<Padded> {
    let s = d + 1;
    let cells = s * s;
    let rows = chunk_rows(cells, 1);
    let n = t.len();
    let part = |c: usize| {
        let lo = c * rows;
        let hi = (lo + rows).min(n);
        weighted_chunk(
            t.get(lo..hi).unwrap_or(&[]),
            p.get(lo..hi).unwrap_or(&[]),
            w.get(lo..hi).unwrap_or(&[]),
            d,
            lo,
        )
    };
    let group = if pool.parallel_for(n) {
        4 * pool.threads()
    } else {
        1
    };
    let (counts, sums) = fold_weighted(n.div_ceil(rows), group, cells, pool, part)?;
    Ok(Padded {
        d,
        counts,
        weighted: Some(sums),
    })
}

fn count_padded<L: Label>(
    t: &[L],
    p: &[L],
    w: Option<&[f64]>,
    d: usize,
    pool: &Pool,
) -> Result<Padded> {
    // Every thread holds a table per fold (unweighted: u64 counts and u32
    // lanes; weighted: counts and sums), plus the reduction's: ask for the
    // whole before the threads do.
    let cells = (d as u128 + 1) * (d as u128 + 1);
    let per_table = cells
        * if w.is_some() {
            8 + 4 + 8
        } else {
            8 + 4 * lanes_for(d.saturating_add(1).saturating_mul(d.saturating_add(1))) as u128
        };
    check_available(
        per_table * (pool.threads() as u128 + 2),
        "the confusion matrix's counting tables",
    )?;
    let padded = match w {
        Some(w) => count_weighted(t, p, w, d, pool)?,
        None => count_unweighted(t, p, d, pool),
    };
    pool.check()?;
    Ok(padded)
}

fn check_inputs<L>(t: &[L], p: &[L], w: Option<&[f64]>) -> Result<()> {
    ensure!(
        t.len() == p.len(),
        MetricError::LengthMismatch {
            a: "y_true",
            a_len: t.len(),
            b: "y_pred",
            b_len: p.len(),
        }
    );
    ensure!(!t.is_empty(), MetricError::Empty { arg: "y_true" });
    if let Some(w) = w {
        ensure!(
            w.len() == t.len(),
            MetricError::LengthMismatch {
                a: "sample_weight",
                a_len: w.len(),
                b: "y_true",
                b_len: t.len(),
            }
        );
    }
    Ok(())
}

fn dense_ok(d: usize, n: usize) -> bool {
    let cells = (d + 1).saturating_mul(d + 1);
    cells <= MAX_DENSE_CELLS && (d <= ALWAYS_DENSE || cells / 4 <= n)
}

fn finish(padded: &Padded, offset: i64, keep_all: bool, opts: &CountOptions) -> Result<Confusion> {
    let (present, counts, weighted) = padded.compact(keep_all);
    if present.len() > opts.max_classes {
        return Err(MetricError::LimitExceeded {
            what: "the number of distinct labels",
            needed: present.len() as u128,
            limit: opts.max_classes as u128,
            hint: "each class adds a row and a column to the K x K tables of counts and sums (16 K^2 bytes); raise max_classes= or cmetrics.set_max_classes() if that is intended",
        });
    }
    // A zero total is a valid count (a batch of zero-weight rows); the metrics of a table
    // without weight are refused where they are derived.
    if let Some(w) = &weighted {
        ensure!(
            w.iter().sum::<f64>().is_finite(),
            MetricError::WeightRange {
                what: "the sum of sample_weight"
            }
        );
    }
    let labels = present
        .iter()
        .map(|&i| offset + i64::try_from(i).unwrap_or(i64::MAX))
        .collect();
    Ok(Confusion {
        labels,
        counts,
        weighted,
    })
}

/// Count the confusion matrix of integer labels over the labels that occur.
///
/// # Errors
/// Length mismatch, empty input, an invalid or all-zero `sample_weight`, or
/// more distinct labels than `opts.max_classes`.
pub fn confusion_matrix<L: Label>(
    y_true: &[L],
    y_pred: &[L],
    sample_weight: Option<&[f64]>,
    opts: &CountOptions,
    pool: &Pool,
) -> Result<Confusion> {
    check_inputs(y_true, y_pred, sample_weight)?;
    let n = y_true.len();
    // 1. Guess the range from a prefix and count; the overflow cells tell
    //    whether the guess held for every row.
    let head = n.min(GUESS_ROWS);
    if let Some((lo, hi)) = min_max(
        y_true.get(..head).unwrap_or(&[]),
        y_pred.get(..head).unwrap_or(&[]),
        &Pool::sequential(),
    ) {
        if let Ok(d) = usize::try_from(hi.saturating_add(1)) {
            if lo >= 0 && dense_ok(d, n) {
                let padded = count_padded(y_true, y_pred, sample_weight, d, pool)?;
                if !padded.overflowed() {
                    return finish(&padded, 0, false, opts);
                }
            }
        }
    }
    // 2. The full range.
    let (lo, hi) = min_max(y_true, y_pred, pool).unwrap_or((0, 0));
    if let Ok(d) = usize::try_from(hi.saturating_add(1)) {
        if lo >= 0 && dense_ok(d, n) {
            let padded = count_padded(y_true, y_pred, sample_weight, d, pool)?;
            return finish(&padded, 0, false, opts);
        }
    }
    // 3. Negative or sparse labels: encode to 0..K-1 first.
    let enc = encode_ints(y_true, y_pred, opts.max_classes, pool)?;
    let padded = count_padded(&enc.a, &enc.b, sample_weight, enc.values.len(), pool)?;
    let mut out = finish(&padded, 0, true, opts)?;
    out.labels = enc.values;
    Ok(out)
}

/// Count codes known to lie in `0..n_classes` (already encoded labels, or a
/// label set fixed in advance). Every class keeps its row and column.
///
/// # Errors
/// As [`confusion_matrix`], plus `InvalidValue` when a code lies outside
/// `0..n_classes`.
pub fn confusion_matrix_codes<L: Label>(
    y_true: &[L],
    y_pred: &[L],
    sample_weight: Option<&[f64]>,
    n_classes: usize,
    pool: &Pool,
) -> Result<Confusion> {
    check_inputs(y_true, y_pred, sample_weight)?;
    ensure!(
        n_classes > 0 && (n_classes + 1).saturating_mul(n_classes + 1) <= MAX_DENSE_CELLS,
        MetricError::InvalidValue {
            arg: "n_classes",
            detail: format!("{n_classes} classes; expected 1 to 4095"),
        }
    );
    let padded = count_padded(y_true, y_pred, sample_weight, n_classes, pool)?;
    ensure!(
        !padded.overflowed(),
        MetricError::InvalidValue {
            arg: "y_true/y_pred",
            detail: format!("a code lies outside 0..{n_classes}; encode the labels first"),
        }
    );
    finish(
        &padded,
        0,
        true,
        &CountOptions {
            max_classes: n_classes,
        },
    )
}
