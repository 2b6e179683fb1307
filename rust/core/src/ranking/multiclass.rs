//! One-vs-rest walks over a score matrix (docs/definitions.md
//! §7.6): each class's column against "is this class" (the one-vs-one pairs
//! are in `one_vs_one.rs`). Every walk is the binary walk of
//! [`super::binary_ranking`] (the same sort and tie handling), so a column's
//! AUROC and AP equal the binary functions' on that column.
//!
//! Work is spread over classes and, within each, over chunks: the classes
//! run as parallel tasks of the pool, and each task's gather and sort split
//! into chunks on the same pool when it has threads to spare. Results come
//! back in class order and none depends on the thread count.

use rayon::prelude::*;

use super::keys::{packed_u32, starts_as_f32, Score};
use super::strategy::Packed;
use super::walk::walk;
use super::{binary_ranking, check_weights, BinaryRanking, Totals};
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::{check_available, try_filled};
use crate::parallel::{collect_chunked, Pool, CHECK_ROWS};
use crate::sort::sort_keys_alone;

/// What is true of each row: a class code (multiclass), or a row of a 0/1
/// indicator matrix with as many columns as the scores (multilabel).
#[derive(Debug, Clone, Copy)]
pub enum Truth<'a> {
    /// One class code per row, each below the number of score columns.
    Codes(&'a [u32]),
    /// A row-major `n x n_cols` indicator matrix.
    Indicator(&'a [bool]),
}

/// A score matrix (`n_rows x n_cols`): its flat values in row-major order, or
/// column-major when `column_major` (a Fortran-ordered array, as a DataFrame's
/// columns give it, read in place).
#[derive(Debug, Clone, Copy)]
pub struct Matrix<'a, X> {
    pub values: &'a [X],
    pub n_cols: usize,
    pub column_major: bool,
}

impl<X: Score> Matrix<'_, X> {
    fn rows(&self) -> usize {
        self.values.len().checked_div(self.n_cols).unwrap_or(0)
    }
    /// The value at (`row`, `col`); `rows` is [`Self::rows`], computed once by
    /// the caller (a division per read would cost more than the read).
    #[inline(always)]
    fn at(&self, rows: usize, row: usize, col: usize) -> X {
        // In range by construction (row < rows, col < n_cols); the default
        // is never read.
        let i = if self.column_major {
            col * rows + row
        } else {
            row * self.n_cols + col
        };
        self.values.get(i).copied().unwrap_or_default()
    }

    /// The values of column `col` in rows `lo..hi` (`rows` as for [`Self::at`]):
    /// a contiguous run in a column-major matrix, a strided one otherwise.
    pub(super) fn column(
        &self,
        rows: usize,
        col: usize,
        lo: usize,
        hi: usize,
    ) -> impl Iterator<Item = X> + '_ {
        let (span, step) = if self.column_major {
            (col * rows + lo..col * rows + hi, 1)
        } else {
            (lo * self.n_cols..hi * self.n_cols, self.n_cols.max(1))
        };
        let skip = if self.column_major { 0 } else { col };
        self.values
            .get(span)
            .unwrap_or_default()
            .iter()
            .skip(skip)
            .step_by(step)
            .copied()
    }
}

pub(super) fn check_matrix<X: Score>(scores: &Matrix<'_, X>, truth: Truth<'_>) -> Result<usize> {
    ensure!(
        scores.n_cols > 0 && scores.values.len().is_multiple_of(scores.n_cols),
        MetricError::Shape {
            arg: "y_score",
            detail: format!(
                "{} values do not make rows of {} columns",
                scores.values.len(),
                scores.n_cols
            ),
        }
    );
    let n = scores.rows();
    ensure!(n > 0, MetricError::Empty { arg: "y_score" });
    let (len, what) = match truth {
        Truth::Codes(c) => (c.len(), c.len()),
        Truth::Indicator(m) => (m.len() / scores.n_cols, m.len()),
    };
    let expected = match truth {
        Truth::Codes(_) => n,
        Truth::Indicator(_) => n * scores.n_cols,
    };
    ensure!(
        what == expected,
        MetricError::LengthMismatch {
            a: "y_true",
            a_len: len,
            b: "y_score",
            b_len: n,
        }
    );
    if let Truth::Codes(c) = truth {
        if let Some((index, &code)) = c
            .iter()
            .enumerate()
            .find(|(_, &k)| k as usize >= scores.n_cols)
        {
            return Err(MetricError::Shape {
                arg: "y_true",
                detail: format!(
                    "row {index} has class code {code}, but y_score has only {} columns",
                    scores.n_cols
                ),
            });
        }
    }
    Ok(n)
}

/// The walk of each requested column `c` of `scores` against "row is of class
/// `c`" (codes) or "indicator `c` is set" (multilabel), in the order of
/// `columns`. With `curves` false only the pair counts are computed.
///
/// # Errors
/// A shape or length mismatch, a code or column beyond the score columns, a
/// non-finite score, an invalid weight, weights summing to 0, an interruption.
pub fn one_vs_rest<X: Score>(
    truth: Truth<'_>,
    scores: Matrix<'_, X>,
    columns: &[usize],
    weight: Option<&[f64]>,
    curves: bool,
    pool: &Pool,
) -> Result<Vec<BinaryRanking>> {
    let n = check_matrix(&scores, truth)?;
    if let Some(&c) = columns.iter().find(|&&c| c >= scores.n_cols) {
        return Err(MetricError::Shape {
            arg: "labels",
            detail: format!(
                "column {c} is beyond the {} columns of y_score",
                scores.n_cols
            ),
        });
    }
    if let Some(w) = weight {
        check_weights(w, n, "y_score")?;
    }
    if let (Truth::Codes(codes), None) = (truth, weight) {
        if let Some(keys) = packed_columns(codes, &scores, columns, pool)? {
            return walk_packed_columns(keys, codes, columns, curves, pool);
        }
    }
    let one = |&col: &usize| -> Result<BinaryRanking> {
        let positive: Vec<bool> = match truth {
            Truth::Codes(codes) => collect_chunked(
                n,
                |i| codes.get(i).is_some_and(|&k| k as usize == col),
                pool,
            )?,
            Truth::Indicator(m) => collect_chunked(
                n,
                |i| m.get(i * scores.n_cols + col).copied().unwrap_or(false),
                pool,
            )?,
        };
        let column: Vec<X> = collect_chunked(n, |i| scores.at(n, i, col), pool)?;
        binary_ranking(&positive, &column, weight, curves, pool)
    };
    pool.install(|| columns.par_iter().map(one).collect())
}

/// The (weighted) number of rows whose true class ranks `r`-th among the row's
/// scores, for `r = 0..n_cols`: rank = scores above the true class's, plus the
/// ties in later columns (a reversed stable sort puts those first, as
/// scikit-learn's top-k accuracy does). Top-k accuracy is the sum of the first
/// `k` entries over the total weight. One pass, in parallel over fixed chunks
/// of rows whose sums are added in chunk order.
///
/// # Errors
/// As [`one_vs_rest`] (shapes, codes, weights), an interruption.
pub fn rank_histogram<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<Vec<f64>> {
    let n = check_matrix(&scores, Truth::Codes(codes))?;
    if let Some(w) = weight {
        check_weights(w, n, "y_score")?;
    }
    let k = scores.n_cols;
    let chunk_rows = (crate::parallel::CHECK_ROWS / k).max(1);
    let part = |c: usize| -> Vec<f64> {
        let mut hist = vec![0.0_f64; k];
        if pool.stopped() {
            return hist;
        }
        let end = ((c + 1) * chunk_rows).min(n);
        let weight_of = |i: usize| weight.map_or(1.0, |w| w.get(i).copied().unwrap_or(0.0));
        if !scores.column_major {
            // Row-major: whole rows as slices, so the comparisons vectorise.
            let rows = scores
                .values
                .get(c * chunk_rows * k..end * k)
                .unwrap_or(&[]);
            for (r, row) in rows.chunks_exact(k).enumerate() {
                let i = c * chunk_rows + r;
                let t = codes.get(i).copied().unwrap_or(0) as usize;
                let own = row.get(t.min(k - 1)).map_or(0, |x| x.key());
                let mut rank = 0_usize;
                for (j, x) in row.iter().enumerate() {
                    let key = x.key();
                    rank += usize::from(key > own) + usize::from((key == own) & (j > t));
                }
                if let Some(h) = hist.get_mut(rank) {
                    *h += weight_of(i);
                }
            }
            return hist;
        }
        for i in c * chunk_rows..end {
            let t = codes.get(i).copied().unwrap_or(0) as usize;
            let own = scores.at(n, i, t.min(k - 1)).key();
            let mut rank = 0_usize;
            for j in 0..k {
                let key = scores.at(n, i, j).key();
                rank += usize::from(key > own) + usize::from((key == own) & (j > t));
            }
            if let Some(h) = hist.get_mut(rank) {
                *h += weight_of(i);
            }
        }
        hist
    };
    let chunks = n.div_ceil(chunk_rows);
    let parts: Vec<Vec<f64>> = if pool.parallel_for(n * k) {
        pool.install(|| (0..chunks).into_par_iter().map(part).collect())
    } else {
        (0..chunks).map(part).collect()
    };
    pool.check()?;
    let mut total = vec![0.0_f64; k];
    for p in &parts {
        for (t, v) in total.iter_mut().zip(p) {
            *t += v;
        }
    }
    Ok(total)
}

/// The packed form of every requested column, when it exists: scores that
/// are finite non-negative floats of at most 32 bits (probabilities, as
/// float32 softmax outputs are) have bit patterns that order as the values
/// (`-0.0` read as `0.0`), so `bits << 1 | is_class` is a `u32` key that
/// sorts by score with the outcome in bit 0, half the width of the general
/// path's keys. One pass over the matrix writes every column's keys (a
/// transpose, in parallel over chunks of rows); `None` when some score is
/// negative, wider than 32 bits, or not finite, and the general path runs.
fn packed_columns<X: Score>(
    codes: &[u32],
    scores: &Matrix<'_, X>,
    columns: &[usize],
    pool: &Pool,
) -> Result<Option<Vec<Vec<u32>>>> {
    let n = codes.len();
    if !starts_as_f32(
        (0..scores.rows().min(64)).flat_map(|i| columns.iter().map(move |&c| scores.at(n, i, c))),
    ) {
        return Ok(None);
    }
    let mut keys: Vec<Vec<u32>> = Vec::new();
    for _ in columns {
        keys.push(try_filled(n, 0_u32, "the one-vs-rest sort keys")?);
    }
    let chunk_rows = (CHECK_ROWS / scores.n_cols.max(1)).max(1);
    // Every column cut into the same chunks of rows: chunk c owns piece c of each.
    let mut pieces: Vec<Vec<&mut [u32]>> = Vec::new();
    for column in &mut keys {
        for (c, piece) in column.chunks_mut(chunk_rows).enumerate() {
            if pieces.len() <= c {
                pieces.push(Vec::new());
            }
            if let Some(p) = pieces.get_mut(c) {
                p.push(piece);
            }
        }
    }
    let fill = |(c, piece): (usize, &mut Vec<&mut [u32]>)| -> bool {
        if pool.stopped() {
            return true;
        }
        let first = c * chunk_rows;
        let mut ok = true;
        for (out, &col) in piece.iter_mut().zip(columns) {
            for (r, slot) in out.iter_mut().enumerate() {
                let i = first + r;
                let hit = codes.get(i).is_some_and(|&k| k as usize == col);
                let key = scores
                    .at(n, i, col)
                    .f32_bits()
                    .and_then(|b| packed_u32(b, hit));
                ok &= key.is_some();
                *slot = key.unwrap_or(0);
            }
        }
        ok
    };
    let all_ok = if pool.parallel_for(n * columns.len()) {
        pool.install(|| {
            pieces
                .par_iter_mut()
                .enumerate()
                .map(fill)
                .reduce(|| true, |a, b| a & b)
        })
    } else {
        pieces
            .iter_mut()
            .enumerate()
            .map(fill)
            .fold(true, |a, b| a & b)
    };
    pool.check()?;
    Ok(all_ok.then_some(keys))
}

/// Sort each packed column and walk it (the binary walk of the column).
fn walk_packed_columns(
    keys: Vec<Vec<u32>>,
    codes: &[u32],
    columns: &[usize],
    curves: bool,
    pool: &Pool,
) -> Result<Vec<BinaryRanking>> {
    let n = codes.len() as u64;
    let mut counts = vec![0_u64; columns.iter().max().map_or(0, |&c| c + 1)];
    for &k in codes {
        if let Some(slot) = counts.get_mut(k as usize) {
            *slot += 1;
        }
    }
    let one = |(mut column, &col): (Vec<u32>, &usize)| -> Result<BinaryRanking> {
        sort_keys_alone(&mut column, pool)?;
        let n_pos = counts.get(col).copied().unwrap_or(0);
        let totals = Totals::counted(n_pos, n - n_pos);
        walk(
            Packed {
                rows: column.iter(),
            },
            totals,
            curves,
            pool,
        )
    };
    pool.install(|| {
        keys.into_par_iter()
            .zip(columns.par_iter())
            .map(one)
            .collect()
    })
}

/// The cells a tile of rows is counted into by [`count_tile`]: for each of its
/// columns, `bins + 1` cells of all rows and of the column's class's rows, and
/// their weights (empty without weights).
struct Tables<'a, C> {
    all: &'a mut [C],
    pos: &'a mut [C],
    w_all: &'a mut [f64],
    w_pos: &'a mut [f64],
}

/// Count rows `rows` of columns `cols` into `t` (column `cols.start + j` at cells
/// `j * (bins + 1)..`): every row in each column's bin (bin `floor(score *
/// bins)`, the last one holding 1.0), a column at a time so that its cells stay
/// in cache, then each row once more in its own class's column when that is one
/// of `cols` (a row is positive in one column only: one count per row, not a
/// test per row and column). Weight sums run in row order. Returns the first
/// (row, column) in row order whose score is outside [0, 1] (NaN included),
/// which is binned all the same.
fn count_tile<X: Score, C: Copy + std::ops::AddAssign + From<u8>>(
    scores: &Matrix<'_, X>,
    codes: &[u32],
    weight: Option<&[f64]>,
    cols: std::ops::Range<usize>,
    rows: std::ops::Range<usize>,
    bins: u32,
    t: Tables<'_, C>,
) -> Option<(usize, usize)> {
    let n = codes.len();
    let cells = bins as usize + 1;
    let scale = f64::from(bins);
    // Truncation is the floor for the non-negative values kept.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let cell = |v: f64| ((v * scale) as usize).min(cells - 1);
    let mut outside = false;
    for (j, col) in cols.clone().enumerate() {
        let span = j * cells..(j + 1) * cells;
        let Some(all) = t.all.get_mut(span.clone()) else {
            continue;
        };
        let column = scores.column(n, col, rows.start, rows.end);
        match (weight, t.w_all.get_mut(span)) {
            (Some(w), Some(sums)) => {
                for (i, x) in rows.clone().zip(column) {
                    let v = x.to_f64();
                    outside |= !(0.0..=1.0).contains(&v);
                    let at = cell(v);
                    if let (Some(slot), Some(sum)) = (all.get_mut(at), sums.get_mut(at)) {
                        *slot += C::from(1);
                        *sum += w.get(i).copied().unwrap_or(0.0);
                    }
                }
            }
            _ => {
                for x in column {
                    let v = x.to_f64();
                    outside |= !(0.0..=1.0).contains(&v);
                    if let Some(slot) = all.get_mut(cell(v)) {
                        *slot += C::from(1);
                    }
                }
            }
        }
    }
    for i in rows.clone() {
        let c = codes.get(i).copied().unwrap_or(0) as usize;
        if !cols.contains(&c) {
            continue;
        }
        let at = (c - cols.start) * cells + cell(scores.at(n, i, c).to_f64());
        if let Some(slot) = t.pos.get_mut(at) {
            *slot += C::from(1);
        }
        if let (Some(w), Some(slot)) = (weight, t.w_pos.get_mut(at)) {
            *slot += w.get(i).copied().unwrap_or(0.0);
        }
    }
    if !outside {
        return None;
    }
    rows.into_iter().find_map(|i| {
        cols.clone()
            .find(|&c| !(0.0..=1.0).contains(&scores.at(n, i, c).to_f64()))
            .map(|c| (i, c))
    })
}

/// The binned groups of a run of columns, and the first (row, column) whose
/// score is outside [0, 1].
type ColumnGroups = (Vec<super::ScoreGroups>, Option<(usize, usize)>);

/// The approximate one-vs-rest summary: for each column, the tie groups of its
/// scores binned in [0, 1] as [`super::GroupState::add_binned`] bins them
/// (each score replaced by the lower edge of its bin of width `1 / bins`, 1.0
/// in a bin of its own), against "the row is of this class". One read of the
/// matrix per group of columns; the columns are spread over the pool's threads
/// and each column's sums run in row order, so nothing depends on the thread
/// count. Memory: `(bins + 1)` cells per column.
///
/// # Errors
/// As [`one_vs_rest`]; a score outside [0, 1]; `bins` of 0.
pub fn binned_one_vs_rest<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    weight: Option<&[f64]>,
    bins: u32,
    pool: &Pool,
) -> Result<Vec<super::ScoreGroups>> {
    let n = check_binned(codes, &scores, weight, bins)?;
    let k = scores.n_cols;
    let cells = bins as usize + 1;
    let scale = f64::from(bins);
    let weighted = weight.is_some();
    // Columns split into one group per thread; each group reads every row once.
    let threads = pool.threads().max(1).min(k);
    let per = k.div_ceil(threads);
    let groups: Vec<(usize, usize)> = (0..k).step_by(per).map(|a| (a, (a + per).min(k))).collect();
    // Each group's tables: two u32 and two u64 cells, and two f64 with weights.
    let cell_bytes = 24 + if weighted { 16 } else { 0 };
    check_available(
        (k as u128) * (cells as u128) * cell_bytes,
        "the binned one-vs-rest tables",
    )?;
    // Per group of columns: its columns' groups, and the first row with a score outside [0, 1].
    let histogram = |&(lo, hi): &(usize, usize)| -> ColumnGroups {
        let width = hi - lo;
        let mut bad: Option<(usize, usize)> = None;
        // Rows per cell (all) and positive rows per cell: a row is positive in one column only,
        // so the negatives are the difference. u32 cells keep the hot table small; they are
        // flushed into u64 totals every 2^31 rows.
        let mut all = vec![0_u32; width * cells];
        let mut pos = vec![0_u32; width * cells];
        let mut all64 = vec![0_u64; width * cells];
        let mut pos64 = vec![0_u64; width * cells];
        let mut w_all = vec![0.0_f64; if weighted { width * cells } else { 0 }];
        let mut w_pos = vec![0.0_f64; if weighted { width * cells } else { 0 }];
        let flush = |a: &mut Vec<u32>, b: &mut Vec<u64>| {
            for (x, y) in a.iter_mut().zip(b.iter_mut()) {
                *y += u64::from(*x);
                *x = 0;
            }
        };
        // Rows in blocks of 2^31 (no u32 cell overflows), flushed into the u64 totals.
        let block = 1_usize << 31;
        // Tiles of rows: a row-major tile is read once per column, so it must stay in the
        // second-level cache (2^13 rows of 10 float32: 320 KB); a column-major one is read
        // once in all.
        let tile = if scores.column_major {
            CHECK_ROWS
        } else {
            1 << 13
        };
        for start in (0..n).step_by(block) {
            let end = (start + block).min(n);
            for first in (start..end).step_by(tile) {
                if pool.stopped() || bad.is_some() {
                    break;
                }
                let last = (first + tile).min(end);
                let tables = Tables {
                    all: &mut all,
                    pos: &mut pos,
                    w_all: &mut w_all,
                    w_pos: &mut w_pos,
                };
                bad = count_tile(&scores, codes, weight, lo..hi, first..last, bins, tables);
            }
            flush(&mut all, &mut all64);
            flush(&mut pos, &mut pos64);
        }
        let out = (0..width)
            .map(|c| {
                let mut g = super::ScoreGroups::default();
                for cell in 0..cells {
                    let at = c * cells + cell;
                    let (a, p) = (
                        all64.get(at).copied().unwrap_or(0),
                        pos64.get(at).copied().unwrap_or(0),
                    );
                    if a > 0 {
                        let wa = w_all.get(at).copied().unwrap_or(0.0);
                        let wp = w_pos.get(at).copied().unwrap_or(0.0);
                        #[allow(clippy::cast_precision_loss)]
                        g.push(
                            cell as f64 / scale,
                            (p, a - p, wp, (wa - wp).max(0.0)),
                            weighted,
                        );
                    }
                }
                g
            })
            .collect();
        (out, bad)
    };
    let parts: Vec<ColumnGroups> = if pool.parallel_for(n * k) {
        pool.install(|| groups.par_iter().map(histogram).collect())
    } else {
        groups.iter().map(histogram).collect()
    };
    pool.check()?;
    if let Some((row, col)) = parts.iter().filter_map(|p| p.1).min() {
        return Err(outside_unit(&scores, n, row, col));
    }
    Ok(parts.into_iter().flat_map(|p| p.0).collect())
}

/// The checks both binned kernels start with; the row count.
fn check_binned<X: Score>(
    codes: &[u32],
    scores: &Matrix<'_, X>,
    weight: Option<&[f64]>,
    bins: u32,
) -> Result<usize> {
    let n = check_matrix(scores, Truth::Codes(codes))?;
    ensure!(
        bins > 0,
        MetricError::InvalidValue {
            arg: "ranking_bins",
            detail: "the approximate mode needs at least one bin".into(),
        }
    );
    if let Some(w) = weight {
        check_weights(w, n, "y_score")?;
    }
    Ok(n)
}

/// The error of a score outside [0, 1] in a binned kernel.
fn outside_unit<X: Score>(scores: &Matrix<'_, X>, n: usize, row: usize, col: usize) -> MetricError {
    MetricError::InvalidValue {
        arg: "y_proba",
        detail: format!(
            "y_proba[{row}, {col}] = {} is outside [0, 1]; the approximate ranking mode bins \
             probabilities in [0, 1] (use ranking='exact' for other scores)",
            crate::error::py_float(scores.at(n, row, col).to_f64())
        ),
    }
}

/// The most cells (groups x columns x bins) of [`grouped_binned_histograms`].
pub const MAX_GROUPED_CELLS: usize = 1 << 27;

/// Dense binned one-vs-rest histograms of every group of rows: for group `g`,
/// column `c` and bin `b` (cell `(g * n_cols + c) * (bins + 1) + b`), the
/// rows of the group whose score in column `c` falls in bin `b` (`all`), those
/// of class `c` among them (`pos`), and their weights (empty without weights).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupedHistograms {
    pub all: Vec<u64>,
    pub pos: Vec<u64>,
    pub w_all: Vec<f64>,
    pub w_pos: Vec<f64>,
}

/// One group's number and its cells of the four tables.
type GroupCells<'a> = (
    usize,
    &'a mut [u64],
    &'a mut [u64],
    &'a mut [f64],
    &'a mut [f64],
);

/// [`binned_one_vs_rest`] for every group of rows at once, as dense
/// histograms: the rows are laid out group by group (`offsets`, `G + 1`
/// increasing row numbers from 0 to the row count) and each group's rows are
/// binned into its own cells (bin `floor(score * bins)`, the last bin holding
/// 1.0), in parallel over the groups.
///
/// # Errors
/// [`MetricError::Shape`] for inputs of different lengths or offsets that do
/// not cover the rows in order; [`MetricError::InvalidValue`] for a score
/// outside [0, 1] (the first, in row order) or no bins;
/// [`MetricError::LimitExceeded`] beyond [`MAX_GROUPED_CELLS`] cells;
/// [`MetricError::Interrupted`].
pub fn grouped_binned_histograms<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    offsets: &[i64],
    weight: Option<&[f64]>,
    bins: u32,
    pool: &Pool,
) -> Result<GroupedHistograms> {
    let n = check_binned(codes, &scores, weight, bins)?;
    crate::grouping::check_offsets(offsets, n, false)?;
    let k = scores.n_cols;
    let cells = bins as usize + 1;
    let n_groups = offsets.len() - 1;
    let per_group = k * cells;
    let total = n_groups.saturating_mul(per_group);
    ensure!(
        total <= MAX_GROUPED_CELLS,
        MetricError::LimitExceeded {
            what: "grouped histogram cells (groups x classes x bins)",
            needed: total as u128,
            limit: MAX_GROUPED_CELLS as u128,
            hint: "group by a coarser column, or use fewer group_ranking_bins",
        }
    );
    let weighted = weight.is_some();
    let w_total = if weighted { total } else { 0 };
    const WHAT: &str = "the grouped rank histograms";
    let mut out = GroupedHistograms {
        all: try_filled(total, 0, WHAT)?,
        pos: try_filled(total, 0, WHAT)?,
        w_all: try_filled(w_total, 0.0, WHAT)?,
        w_pos: try_filled(w_total, 0.0, WHAT)?,
    };
    // One group: its rows' cells, and its first score outside [0, 1].
    let fill =
        |g: usize, all: &mut [u64], pos: &mut [u64], w_all: &mut [f64], w_pos: &mut [f64]| {
            let lo = usize::try_from(offsets.get(g).copied().unwrap_or(0)).unwrap_or(0);
            let hi = usize::try_from(offsets.get(g + 1).copied().unwrap_or(0)).unwrap_or(0);
            for start in (lo..hi).step_by(CHECK_ROWS) {
                if pool.stopped() {
                    return None;
                }
                let end = (start + CHECK_ROWS).min(hi);
                let tables = Tables {
                    all: &mut *all,
                    pos: &mut *pos,
                    w_all: &mut *w_all,
                    w_pos: &mut *w_pos,
                };
                let bad = count_tile(&scores, codes, weight, 0..k, start..end, bins, tables);
                if bad.is_some() {
                    return bad;
                }
            }
            None
        };
    let wide = per_group.max(1);
    let weight_chunk = if weighted { wide } else { 1 };
    let mut w_all_chunks: Vec<&mut [f64]> = out.w_all.chunks_mut(weight_chunk).collect();
    let mut w_pos_chunks: Vec<&mut [f64]> = out.w_pos.chunks_mut(weight_chunk).collect();
    w_all_chunks.resize_with(n_groups, Default::default);
    w_pos_chunks.resize_with(n_groups, Default::default);
    let jobs: Vec<GroupCells<'_>> = out
        .all
        .chunks_mut(wide)
        .zip(out.pos.chunks_mut(wide))
        .zip(w_all_chunks.into_iter().zip(w_pos_chunks))
        .enumerate()
        .map(|(g, ((a, p), (wa, wp)))| (g, a, p, wa, wp))
        .collect();
    let run = |(g, a, p, wa, wp): GroupCells<'_>| fill(g, a, p, wa, wp);
    let bad: Option<(usize, usize)> = if pool.parallel_for(n * k) {
        pool.install(|| jobs.into_par_iter().filter_map(run).min())
    } else {
        jobs.into_iter().filter_map(run).min()
    };
    pool.check()?;
    if let Some((row, col)) = bad {
        return Err(outside_unit(&scores, n, row, col));
    }
    Ok(out)
}

/// [`rank_histogram`] of every group of rows at once (rows laid out group by
/// group, `offsets` the `G + 1` starts of the groups), side by side: `G x K`
/// values, group by group.
///
/// # Errors
/// [`MetricError::Shape`] for offsets that do not cover the rows in order; the
/// errors of [`rank_histogram`].
pub fn rank_histogram_groups<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    offsets: &[i64],
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<Vec<f64>> {
    let n = check_matrix(&scores, Truth::Codes(codes))?;
    if let Some(w) = weight {
        check_weights(w, n, "y_score")?;
    }
    crate::grouping::check_offsets(offsets, n, false)?;
    ensure!(
        !scores.column_major,
        MetricError::Shape {
            arg: "y_score",
            detail: format!("a row-major matrix of {n} rows is needed"),
        }
    );
    let k = scores.n_cols;
    let one = |g: usize| -> Result<Vec<f64>> {
        let lo = usize::try_from(offsets.get(g).copied().unwrap_or(0)).unwrap_or(0);
        let hi = usize::try_from(offsets.get(g + 1).copied().unwrap_or(0)).unwrap_or(0);
        if lo == hi {
            return Ok(vec![0.0; k]);
        }
        let rows = Matrix {
            values: scores.values.get(lo * k..hi * k).unwrap_or(&[]),
            n_cols: k,
            column_major: false,
        };
        rank_histogram(
            codes.get(lo..hi).unwrap_or(&[]),
            rows,
            weight.and_then(|w| w.get(lo..hi)),
            &pool.sequential_like(),
        )
    };
    let groups = offsets.len() - 1;
    let parts: Result<Vec<Vec<f64>>> = if pool.parallel_for(n * k) {
        pool.install(|| (0..groups).into_par_iter().map(one).collect())
    } else {
        (0..groups).map(one).collect()
    };
    Ok(parts?.concat())
}
