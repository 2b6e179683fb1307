//! The approximate one-vs-rest state: each column's scores in `[0, 1]` binned
//! into histograms of positives and negatives (fixed memory, mergeable by
//! addition), per batch and per group.

use super::bin_cells::{column_cells, row_cells};
use super::binary::check_weights;
use super::keys::Score;
use super::score_matrix::{check_matrix, Matrix, Truth};
use rayon::prelude::*;

use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::check_available;
use crate::parallel::{Pool, CHECK_ROWS};

/// The cells a tile of rows is counted into by [`count_tile`]: for each of its
/// columns, `bins + 1` cells of all rows and of the column's class's rows, and
/// their weights (empty without weights).
pub(super) struct Tables<'a, C> {
    pub(super) all: &'a mut [C],
    pub(super) pos: &'a mut [C],
    pub(super) w_all: &'a mut [f64],
    pub(super) w_pos: &'a mut [f64],
}

/// Count rows `rows` of columns `cols` into `t` (column `cols.start + j` at cells
/// `j * (bins + 1)..`): every row in each column's bin (bin `floor(score *
/// bins)`, the last one holding 1.0), a column at a time so that its cells stay
/// in cache, then each row once more in its own class's column when that is one
/// of `cols` (a row is positive in one column only: one count per row, not a
/// test per row and column). Weight sums run in row order. Returns the first
/// (row, column) in row order whose score is outside [0, 1] (NaN included),
/// which is binned all the same.
pub(super) fn count_tile<X: Score, C: Copy + std::ops::AddAssign + From<u8>>(
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
    outside.then(|| first_outside(scores, rows, cols)).flatten()
}

/// The first (row, column) of `rows` x `cols`, in row order, whose score is
/// outside [0, 1] (NaN included), once a pass has seen one.
fn first_outside<X: Score>(
    scores: &Matrix<'_, X>,
    rows: std::ops::Range<usize>,
    cols: std::ops::Range<usize>,
) -> Option<(usize, usize)> {
    let n = scores.rows();
    rows.into_iter().find_map(|i| {
        cols.clone()
            .find(|&c| !(0.0..=1.0).contains(&scores.at(n, i, c).to_f64()))
            .map(|c| (i, c))
    })
}

/// Rows a chunk of [`count_chunk`] takes: each column's cell numbers of a
/// chunk fill 256 KiB, and each column's tables (two of `bins + 1` cells, 512
/// KiB at the default 2^16 bins) are then counted into by the whole chunk
/// while they stay in the second-level cache.
const CHUNK_ROWS: usize = 1 << 16;

/// What [`count_chunk`] writes between its passes: column `j`'s cell numbers
/// of the chunk's rows at `cells[j * CHUNK_ROWS..]`, and the chunk's rows of
/// each of the columns' classes, grouped by class (`starts[j]..starts[j + 1]`
/// of `by_class` for column `j`).
struct Scratch {
    cells: Vec<u32>,
    by_class: Vec<u32>,
    starts: Vec<usize>,
}

impl Scratch {
    fn new(width: usize) -> Self {
        Self {
            cells: vec![0; width * CHUNK_ROWS],
            by_class: vec![0; CHUNK_ROWS],
            starts: vec![0; width + 2],
        }
    }
}

/// [`count_tile`] without weights for at most [`CHUNK_ROWS`] rows, in three
/// passes: every row's cell in each of `cols` (the matrix read once, a row
/// at a time when it is row-major), the rows grouped by class, then a column
/// at a time its rows' cells and its class's rows counted. Counting straight
/// from the matrix, a thread's tables (two per column, five columns a thread
/// at ten columns on two threads: 2.6 MB at 2^16 bins) did not fit its
/// second-level cache, so nearly every count waited on the third level; a
/// column's tables now take a whole chunk's counts at once. The same counts.
fn count_chunk<X: Score>(
    scores: &Matrix<'_, X>,
    codes: &[u32],
    cols: std::ops::Range<usize>,
    rows: std::ops::Range<usize>,
    bins: u32,
    (all, pos): (&mut [u32], &mut [u32]),
    s: &mut Scratch,
) -> Option<(usize, usize)> {
    let n = codes.len();
    let cells = bins as usize + 1;
    let scale = f64::from(bins);
    // Truncation is the floor for the non-negative values kept; a cell is
    // below `bins + 1`, within `u32`.
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let cell = |v: f64| ((v * scale) as usize).min(cells - 1) as u32;
    let len = rows.len().min(CHUNK_ROWS);
    let width = cols.len();
    let mut outside = false;
    if scores.column_major && bins < 1 << 31 {
        for (j, col) in cols.clone().enumerate() {
            let out = &mut s.cells[j * CHUNK_ROWS..j * CHUNK_ROWS + len];
            let span = col * n + rows.start..col * n + rows.start + len;
            let column = scores.values.get(span).unwrap_or_default();
            column_cells(column, out, scale, &mut outside);
        }
    } else if scores.column_major {
        for (j, col) in cols.clone().enumerate() {
            let out = &mut s.cells[j * CHUNK_ROWS..j * CHUNK_ROWS + len];
            for (slot, x) in out
                .iter_mut()
                .zip(scores.column(n, col, rows.start, rows.end))
            {
                let v = x.to_f64();
                outside |= !(0.0..=1.0).contains(&v);
                *slot = cell(v);
            }
        }
    } else if bins < 1 << 31 {
        let k = scores.n_cols;
        let block = scores.values.get(rows.start * k..(rows.start + len) * k);
        let block = block.unwrap_or_default();
        let cells = &mut s.cells[..width * CHUNK_ROWS];
        row_cells(
            block,
            k,
            cols.clone(),
            CHUNK_ROWS,
            cells,
            scale,
            &mut outside,
        );
    } else {
        for (r, i) in rows.clone().take(len).enumerate() {
            for (j, col) in cols.clone().enumerate() {
                let v = scores.at(n, i, col).to_f64();
                outside |= !(0.0..=1.0).contains(&v);
                s.cells[j * CHUNK_ROWS + r] = cell(v);
            }
        }
    }
    // The rows of each column's class, in row order (a counting sort; rows
    // of other classes go to the spare group `width`).
    let group = |i: usize| {
        let c = codes.get(i).copied().unwrap_or(0) as usize;
        if cols.contains(&c) {
            c - cols.start
        } else {
            width
        }
    };
    s.starts.fill(0);
    for i in rows.clone().take(len) {
        s.starts[group(i) + 1] += 1;
    }
    for j in 0..=width {
        s.starts[j + 1] += s.starts[j];
    }
    let mut at = s.starts.clone();
    for (r, i) in rows.clone().take(len).enumerate() {
        let g = group(i);
        s.by_class[at[g]] = r as u32;
        at[g] += 1;
    }
    for j in 0..width {
        let own = &s.cells[j * CHUNK_ROWS..j * CHUNK_ROWS + len];
        let (all, pos) = (
            &mut all[j * cells..(j + 1) * cells],
            &mut pos[j * cells..(j + 1) * cells],
        );
        for &c in own {
            all[c as usize] += 1;
        }
        for &r in &s.by_class[s.starts[j]..s.starts[j + 1]] {
            pos[own[r as usize] as usize] += 1;
        }
    }
    outside.then(|| first_outside(scores, rows, cols)).flatten()
}

/// A part's counts: per column and cell (`column * cells + cell`) the rows
/// and the positive rows (in `u32` cells, plus `u64` totals flushed from them
/// when there were more rows than a `u32` cell holds; empty otherwise), the
/// weight sums of both (empty without weights), and the first (row, column)
/// whose score is outside [0, 1].
struct Counted {
    all: Vec<u32>,
    pos: Vec<u32>,
    all64: Vec<u64>,
    pos64: Vec<u64>,
    w_all: Vec<f64>,
    w_pos: Vec<f64>,
    bad: Option<(usize, usize)>,
}

impl Counted {
    /// The rows of cell `at`.
    fn all_at(&self, at: usize) -> u64 {
        cell_total(&self.all, &self.all64, at)
    }

    /// The positive rows of cell `at`.
    fn pos_at(&self, at: usize) -> u64 {
        cell_total(&self.pos, &self.pos64, at)
    }
}

/// Cell `at`'s count: its `u32` cell plus its flushed `u64` total, if any.
fn cell_total(cells: &[u32], totals: &[u64], at: usize) -> u64 {
    totals.get(at).copied().unwrap_or(0) + cells.get(at).map_or(0, |&x| u64::from(x))
}

/// Flush `u32` cells into their `u64` totals (made on the first flush) and
/// zero them.
fn widen(cells: &mut [u32], totals: &mut Vec<u64>) {
    if totals.is_empty() {
        totals.extend(cells.iter().map(|&x| u64::from(x)));
    } else {
        for (t, &x) in totals.iter_mut().zip(cells.iter()) {
            *t += u64::from(x);
        }
    }
    cells.fill(0);
}

/// The most memory the row split of [`binned_one_vs_rest`] adds for its
/// threads' own tables (each thread's `u32` and `u64` tables of every column).
const ROW_SPLIT_BYTES: u128 = 1 << 26;

/// The largest `u32` tables of every column (all rows and positive rows) a
/// thread of the row split counts into: at about a second-level cache, the
/// chunks' counts stay near the core. Above it each chunk pulls the columns'
/// tables in from the third level in turn, and the columns' split, each
/// thread reading every row for half the tables, is faster (10^7 x 10
/// float32, two threads: 1,000 bins 128 -> 107-110 ms and 16,384 bins
/// 131-134 -> 117-130 ms with the row split; 2^16 bins 184-205 against
/// 165-180 ms).
const ROW_SPLIT_HOT_BYTES: u128 = 1 << 21;

/// The counts of a batch (see [`count_parts`]): each part's columns `(lo, hi)`
/// and counts, and the first (row, column) outside [0, 1] in any part.
struct Parts {
    parts: Vec<((usize, usize), Counted)>,
    bad: Option<(usize, usize)>,
}

/// Count every column's rows into `bins + 1` cells (see
/// [`binned_one_vs_rest`]): without weights and with few enough cells the
/// rows are split between the threads, each counting every column of its rows
/// (parts with the whole column range, to be added); otherwise the columns
/// are, each thread reading every row for its columns, whose weight sums run
/// in row order. Nothing depends on the thread count once the parts are
/// added (integer counts).
fn count_parts<X: Score>(
    codes: &[u32],
    scores: &Matrix<'_, X>,
    weight: Option<&[f64]>,
    bins: u32,
    pool: &Pool,
) -> Result<Parts> {
    let n = codes.len();
    let k = scores.n_cols;
    let cells = bins as usize + 1;
    let weighted = weight.is_some();
    // Each part's tables: two u32 and two u64 cells, and two f64 with weights.
    let cell_bytes = 24 + if weighted { 16 } else { 0 };
    let table_bytes = (k as u128) * (cells as u128) * cell_bytes;
    let parallel = pool.parallel_for(n * k);
    let row_parts = pool.threads().max(1).min(n.max(1));
    let split_rows = !weighted
        && parallel
        && row_parts > 1
        && (k as u128) * (cells as u128) * 8 <= ROW_SPLIT_HOT_BYTES
        && (row_parts as u128 - 1) * table_bytes <= ROW_SPLIT_BYTES;
    // Without the row split, the columns split into one group per thread;
    // each group reads every row once.
    let per = k.div_ceil(pool.threads().max(1).min(k).max(1)).max(1);
    let groups: Vec<(usize, usize)> = (0..k).step_by(per).map(|a| (a, (a + per).min(k))).collect();
    // Without weights, each part's scratch of a chunk's cells (count_chunk).
    let (tables, scratch_bytes) = if split_rows {
        let parts = row_parts as u128;
        (
            parts * table_bytes,
            parts * (k as u128 + 1) * CHUNK_ROWS as u128 * 4,
        )
    } else if weighted {
        (table_bytes, 0)
    } else {
        let scratch = (k + groups.len()) as u128 * CHUNK_ROWS as u128 * 4;
        (table_bytes, scratch)
    };
    check_available(tables + scratch_bytes, "the binned one-vs-rest tables")?;
    let count = |(lo, hi): (usize, usize), rows: std::ops::Range<usize>| {
        count_rows(scores, codes, weight, (lo, hi), rows, bins, pool)
    };
    let parts: Vec<((usize, usize), Counted)> = if split_rows {
        let per_rows = n.div_ceil(row_parts).max(1);
        let ranges: Vec<std::ops::Range<usize>> = (0..n)
            .step_by(per_rows)
            .map(|a| a..(a + per_rows).min(n))
            .collect();
        pool.install(|| {
            ranges
                .into_par_iter()
                .map(|r| ((0, k), count((0, k), r)))
                .collect()
        })
    } else {
        let one = |&g: &(usize, usize)| (g, count(g, 0..n));
        if parallel {
            pool.install(|| groups.par_iter().map(one).collect())
        } else {
            groups.iter().map(one).collect()
        }
    };
    pool.check()?;
    let bad = parts.iter().filter_map(|p| p.1.bad).min();
    Ok(Parts { parts, bad })
}

/// The counts of columns `lo..hi` over rows `rows` (see [`count_parts`]).
fn count_rows<X: Score>(
    scores: &Matrix<'_, X>,
    codes: &[u32],
    weight: Option<&[f64]>,
    (lo, hi): (usize, usize),
    rows: std::ops::Range<usize>,
    bins: u32,
    pool: &Pool,
) -> Counted {
    let cells = bins as usize + 1;
    let weighted = weight.is_some();
    let width = hi - lo;
    let mut bad: Option<(usize, usize)> = None;
    // Rows per cell (all) and positive rows per cell: a row is positive in one column only,
    // so the negatives are the difference. u32 cells keep the hot table small; before a
    // block of 2^31 rows that is not the first they are flushed into u64 totals, which
    // a call of fewer rows never makes (two more tables a thread and batch to fault in).
    let mut all = vec![0_u32; width * cells];
    let mut pos = vec![0_u32; width * cells];
    let (mut all64, mut pos64) = (Vec::new(), Vec::new());
    let mut w_all = vec![0.0_f64; if weighted { width * cells } else { 0 }];
    let mut w_pos = vec![0.0_f64; if weighted { width * cells } else { 0 }];
    // Rows in blocks of 2^31 (no u32 cell overflows), flushed into the u64 totals.
    let block = 1_usize << 31;
    // Tiles of rows: without weights, chunks whose cells are counted a column at a time
    // (count_chunk, the matrix read once); with weights, a row-major tile is read once per
    // column, so it must stay in the second-level cache (2^13 rows of 10 float32: 320 KB),
    // and a column-major one is read once in all.
    let tile = if !weighted {
        CHUNK_ROWS
    } else if scores.column_major {
        CHECK_ROWS
    } else {
        1 << 13
    };
    let mut scratch = if weighted {
        None
    } else {
        Some(Scratch::new(width))
    };
    for start in rows.clone().step_by(block) {
        if start > rows.start {
            widen(&mut all, &mut all64);
            widen(&mut pos, &mut pos64);
        }
        let end = (start + block).min(rows.end);
        for first in (start..end).step_by(tile) {
            if pool.stopped() || bad.is_some() {
                break;
            }
            let last = (first + tile).min(end);
            if let Some(scratch) = scratch.as_mut() {
                let tables = (&mut all[..], &mut pos[..]);
                bad = count_chunk(scores, codes, lo..hi, first..last, bins, tables, scratch);
                continue;
            }
            let tables = Tables {
                all: &mut all,
                pos: &mut pos,
                w_all: &mut w_all,
                w_pos: &mut w_pos,
            };
            bad = count_tile(scores, codes, weight, lo..hi, first..last, bins, tables);
        }
    }
    Counted {
        all,
        pos,
        all64,
        pos64,
        w_all,
        w_pos,
        bad,
    }
}

/// The approximate one-vs-rest summary: for each column, the tie groups of its
/// scores binned in [0, 1] as [`super::GroupState::add_binned`] bins them
/// (each score replaced by the lower edge of its bin of width `1 / bins`, 1.0
/// in a bin of its own), against "the row is of this class". Without weights
/// and with few enough cells (every column's `u32` tables within 2 MiB, a
/// second-level cache; the other threads' copies within 64 MiB) the rows
/// are split between the threads, each counting every column of its rows
/// into tables of its own that are then added (integer counts: the same
/// in any split); otherwise the columns are: each thread reads every row for
/// its columns, whose weight sums run in row order. Nothing depends on the
/// thread count.
/// Memory: `(bins + 1)` cells per column (per thread with the row split).
///
/// # Errors
/// As [`fn@super::one_vs_rest`]; a score outside [0, 1]; `bins` of 0.
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
    let Parts { parts, bad } = count_parts(codes, &scores, weight, bins, pool)?;
    if let Some((row, col)) = bad {
        return Err(outside_unit(&scores, n, row, col));
    }
    // The groups of columns `lo..hi` from their counts.
    let groups_of = |(lo, hi): (usize, usize), c: &Counted| -> Vec<super::ScoreGroups> {
        (0..hi - lo)
            .map(|col| {
                let mut g = super::ScoreGroups::default();
                for cell in 0..cells {
                    let at = col * cells + cell;
                    let (a, p) = (c.all_at(at), c.pos_at(at));
                    if a > 0 {
                        let wa = c.w_all.get(at).copied().unwrap_or(0.0);
                        let wp = c.w_pos.get(at).copied().unwrap_or(0.0);
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
            .collect()
    };
    let whole = parts.first().is_some_and(|p| p.0 == (0, k)) && parts.len() > 1;
    if !whole {
        return Ok(parts.iter().flat_map(|(g, c)| groups_of(*g, c)).collect());
    }
    // The row split: the first part's tables take the others' counts, added
    // in u64 (two parts' u32 cells could pass 2^32): the first part's cells
    // widened once, each other part's before it is added.
    let mut counted = parts.into_iter().map(|p| p.1);
    let Some(mut total) = counted.next() else {
        return Ok(Vec::new());
    };
    widen(&mut total.all, &mut total.all64);
    widen(&mut total.pos, &mut total.pos64);
    for mut c in counted {
        widen(&mut c.all, &mut c.all64);
        widen(&mut c.pos, &mut c.pos64);
        for (t, x) in total.all64.iter_mut().zip(c.all64) {
            *t += x;
        }
        for (t, x) in total.pos64.iter_mut().zip(c.pos64) {
            *t += x;
        }
    }
    Ok(groups_of((0, k), &total))
}

/// A caller's dense tables of every column (cell `column * (bins + 1) +
/// bin`): rows, positive rows, and (with weights, else empty) the weights of
/// the positive and of the negative rows.
#[derive(Debug)]
pub struct DenseTables<'a> {
    pub all: &'a mut [u64],
    pub pos: &'a mut [u64],
    pub w_pos: &'a mut [f64],
    pub w_neg: &'a mut [f64],
}

/// [`binned_one_vs_rest`] added into dense tables instead of made into
/// groups: each cell's rows and positive rows added to its count, and with
/// weights the cell's positive weight and its negative weight (the cell's
/// weight less its positive weight, at least 0: the values
/// [`binned_one_vs_rest`]'s groups hold) added to theirs. Tables that carry a
/// state across batches then hold what absorbing each batch's groups into a
/// [`super::GroupState`] gives, in the same order of additions, without
/// making the groups of every batch. The batch is counted and checked first:
/// an error leaves the tables as they were.
///
/// # Errors
/// As [`binned_one_vs_rest`]; [`MetricError::Shape`] for tables that are not
/// `K * (bins + 1)` cells (the weight tables: empty without weights).
pub fn add_binned_one_vs_rest<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    weight: Option<&[f64]>,
    bins: u32,
    out: DenseTables<'_>,
    pool: &Pool,
) -> Result<()> {
    let n = check_binned(codes, &scores, weight, bins)?;
    let cells = bins as usize + 1;
    let size = scores.n_cols.saturating_mul(cells);
    let w_size = if weight.is_some() { size } else { 0 };
    ensure!(
        out.all.len() == size
            && out.pos.len() == size
            && out.w_pos.len() == w_size
            && out.w_neg.len() == w_size,
        MetricError::Shape {
            arg: "all",
            detail: format!(
                "the dense tables hold {} cells where K x (bins + 1) = {size} are needed \
                 ({w_size} in each weight table)",
                out.all.len()
            ),
        }
    );
    let Parts { parts, bad } = count_parts(codes, &scores, weight, bins, pool)?;
    if let Some((row, col)) = bad {
        return Err(outside_unit(&scores, n, row, col));
    }
    for ((lo, hi), c) in &parts {
        let span = lo * cells..hi * cells;
        let (all, pos) = (&mut out.all[span.clone()], &mut out.pos[span.clone()]);
        for (at, (a, p)) in all.iter_mut().zip(pos.iter_mut()).enumerate() {
            *a += c.all_at(at);
            *p += c.pos_at(at);
        }
        if weight.is_some() {
            let (w_pos, w_neg) = (&mut out.w_pos[span.clone()], &mut out.w_neg[span]);
            let sums = c.w_all.iter().zip(&c.w_pos);
            for ((sp, sn), (&wa, &wp)) in w_pos.iter_mut().zip(w_neg.iter_mut()).zip(sums) {
                *sp += wp;
                *sn += (wa - wp).max(0.0);
            }
        }
    }
    Ok(())
}

/// The checks both binned kernels start with; the row count.
pub(super) fn check_binned<X: Score>(
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
pub(super) fn outside_unit<X: Score>(
    scores: &Matrix<'_, X>,
    n: usize,
    row: usize,
    col: usize,
) -> MetricError {
    MetricError::InvalidValue {
        arg: "y_proba",
        detail: format!(
            "y_proba[{row}, {col}] = {} is outside [0, 1]; the approximate ranking mode bins \
             probabilities in [0, 1] (use ranking='exact' for other scores)",
            crate::error::py_float(scores.at(n, row, col).to_f64())
        ),
    }
}

#[cfg(test)]
mod tests;
