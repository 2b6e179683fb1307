//! The histogram of the true class's rank among each row's scores (scikit-learn's
//! tie rule: the later column first), from which every top-k accuracy follows;
//! per batch and per group.

use super::binary::check_weights;
use super::keys::Score;
use super::score_matrix::{check_matrix, Matrix, Truth};
use rayon::prelude::*;

use crate::cpu::widest;
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::Pool;

/// The (weighted) number of rows whose true class ranks `r`-th among the row's
/// scores, for `r = 0..n_cols`: rank = scores above the true class's, plus the
/// ties in later columns (a reversed stable sort puts those first, as
/// scikit-learn's top-k accuracy does). Top-k accuracy is the sum of the first
/// `k` entries over the total weight. One pass, in parallel over fixed chunks
/// of rows whose sums are added in chunk order.
///
/// # Errors
/// As [`fn@super::one_vs_rest`] (shapes, codes, weights), an interruption.
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
            let rows = scores
                .values
                .get(c * chunk_rows * k..end * k)
                .unwrap_or(&[]);
            let first = c * chunk_rows;
            let truth = codes.get(first..end).unwrap_or(&[]);
            let add = |hist: &mut Vec<f64>, r: usize, rank: usize| {
                if let Some(h) = hist.get_mut(rank) {
                    *h += weight_of(first + r);
                }
            };
            row_major_ranks(rows, truth, k, &mut hist, add);
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

/// Rows of a tile of [`row_major_ranks`].
const TILE_ROWS: usize = 16;

/// The rank of each row's true class (`truth`, codes below `k` by the shape
/// checks) among the row-major `rows`, handed to `add(hist, row, rank)`
/// row by row. Tiles of [`TILE_ROWS`] rows are keyed in one contiguous pass
/// and then ranked row by row, compiled for the widest vectors this CPU has
/// (a tenth of the time of keying each value as it is compared).
fn row_major_ranks<X: Score, H>(
    rows: &[X],
    truth: &[u32],
    k: usize,
    hist: &mut H,
    add: impl Fn(&mut H, usize, usize),
) {
    let mut ranks = [0_u32; TILE_ROWS];
    let mut keys = vec![0_u64; TILE_ROWS * k];
    for (t, (tile, codes)) in rows
        .chunks(TILE_ROWS * k)
        .zip(truth.chunks(TILE_ROWS))
        .enumerate()
    {
        tile_ranks(tile, codes, k, &mut keys, &mut ranks);
        for (r, &rank) in ranks.iter().take(codes.len()).enumerate() {
            add(hist, t * TILE_ROWS + r, rank as usize);
        }
    }
}

widest! {
    /// The ranks of one tile (at most [`TILE_ROWS`] rows of `k` scores; `keys`
    /// has room for a whole tile), with the widest vectors this CPU runs.
    fn tile_ranks<X: Score>(
        tile: &[X],
        codes: &[u32],
        k: usize,
        keys: &mut [u64],
        ranks: &mut [u32; TILE_ROWS],
    ) => tile_ranks_portable
}

/// The ranks of one tile (as [`tile_ranks`]), inlined into each compiled
/// variant so that the loops vectorise for its features.
#[inline(always)]
fn tile_ranks_portable<X: Score>(
    tile: &[X],
    codes: &[u32],
    k: usize,
    keys: &mut [u64],
    ranks: &mut [u32; TILE_ROWS],
) {
    // The tile's keys in one contiguous pass (vectorised), then each row's
    // comparisons against its true class's key.
    for (slot, x) in keys.iter_mut().zip(tile) {
        *slot = x.key();
    }
    *ranks = [0; TILE_ROWS];
    for ((row, rank), &code) in keys.chunks_exact(k).zip(ranks.iter_mut()).zip(codes) {
        let t = (code as usize).min(k - 1);
        let own = row.get(t).copied().unwrap_or(0);
        let mut above = 0_u32;
        for (j, &key) in row.iter().enumerate() {
            above += u32::from(key > own) + u32::from((key == own) & (j > t));
        }
        *rank = above;
    }
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
