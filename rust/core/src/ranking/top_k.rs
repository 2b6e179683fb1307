//! The histogram of the true class's rank among each row's scores (scikit-learn's
//! tie rule: the later column first), from which every top-k accuracy follows;
//! per batch and per group.

use super::binary::check_weights;
use super::keys::Score;
use super::score_matrix::{check_matrix, Matrix, Truth};
use rayon::prelude::*;

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
