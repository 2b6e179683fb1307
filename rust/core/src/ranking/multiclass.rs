//! One-vs-rest and one-vs-one walks over a score matrix (docs/definitions.md
//! §7.6): each class's column against "is this class", or each pair of
//! classes on the rows of those two classes. Every walk is the binary walk of
//! [`super::binary_ranking`] (the same sort and tie handling), so a column's
//! AUROC and AP equal the binary functions' on that column.
//!
//! Work is spread over classes and, within each, over chunks: the classes
//! run as parallel tasks of the pool, and each task's gather and sort split
//! into chunks on the same pool when it has threads to spare. Results come
//! back in class order and none depends on the thread count.

use rayon::prelude::*;

use super::keys::Score;
use super::{binary_ranking, check_weights, BinaryRanking};
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::{collect_chunked, Pool};

/// What is true of each row: a class code (multiclass), or a row of a 0/1
/// indicator matrix with as many columns as the scores (multilabel).
#[derive(Debug, Clone, Copy)]
pub enum Truth<'a> {
    /// One class code per row, each below the number of score columns.
    Codes(&'a [u32]),
    /// A row-major `n x n_cols` indicator matrix.
    Indicator(&'a [bool]),
}

/// A row-major score matrix (`n_rows x n_cols`).
#[derive(Debug, Clone, Copy)]
pub struct Matrix<'a, X> {
    pub values: &'a [X],
    pub n_cols: usize,
}

impl<X: Score> Matrix<'_, X> {
    fn rows(&self) -> usize {
        self.values.len().checked_div(self.n_cols).unwrap_or(0)
    }
    #[inline(always)]
    fn at(&self, row: usize, col: usize) -> X {
        // In range by construction (row < rows, col < n_cols); the default
        // is never read.
        self.values
            .get(row * self.n_cols + col)
            .copied()
            .unwrap_or_default()
    }
}

fn check_matrix<X: Score>(scores: &Matrix<'_, X>, truth: Truth<'_>) -> Result<usize> {
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
        let column: Vec<X> = collect_chunked(n, |i| scores.at(i, col), pool)?;
        binary_ranking(&positive, &column, weight, curves, pool)
    };
    pool.install(|| columns.par_iter().map(one).collect())
}

/// Hand and Till's one-vs-one walks: for each pair `(a, b)` of class codes,
/// on the rows of class `a` or `b` only, the walk of column `a` against "is
/// `a`" and of column `b` against "is `b`". Both classes of each pair must
/// have rows (the caller pairs the classes present).
///
/// # Errors
/// As [`one_vs_rest`]; a pair with a class that has no rows.
pub fn one_vs_one<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    pairs: &[(u32, u32)],
    pool: &Pool,
) -> Result<Vec<(BinaryRanking, BinaryRanking)>> {
    let n = check_matrix(&scores, Truth::Codes(codes))?;
    // The rows of each class, in row order (one pass).
    let mut rows_of: Vec<Vec<usize>> = vec![Vec::new(); scores.n_cols];
    for (i, &k) in codes.iter().enumerate().take(n) {
        if let Some(r) = rows_of.get_mut(k as usize) {
            r.push(i);
        }
    }
    pool.check()?;
    let one = |&(a, b): &(u32, u32)| -> Result<(BinaryRanking, BinaryRanking)> {
        let (ra, rb) = match (rows_of.get(a as usize), rows_of.get(b as usize)) {
            (Some(ra), Some(rb)) if !ra.is_empty() && !rb.is_empty() => (ra, rb),
            _ => {
                return Err(MetricError::Shape {
                    arg: "y_true",
                    detail: format!("the one-vs-one pair ({a}, {b}) needs rows of both classes"),
                })
            }
        };
        let rows: Vec<usize> = ra.iter().chain(rb).copied().collect();
        let is_a: Vec<bool> = (0..rows.len()).map(|i| i < ra.len()).collect();
        let is_b: Vec<bool> = is_a.iter().map(|&x| !x).collect();
        let col = |c: u32| -> Vec<X> { rows.iter().map(|&i| scores.at(i, c as usize)).collect() };
        let wa = binary_ranking(&is_a, &col(a), None, true, pool)?;
        let wb = binary_ranking(&is_b, &col(b), None, true, pool)?;
        Ok((wa, wb))
    };
    pool.install(|| pairs.par_iter().map(one).collect())
}
