//! A score matrix (rows by classes, either layout) and the truth it is read
//! against: what the multiclass ranking kernels take and check alike.

use super::keys::Score;

use crate::ensure;
use crate::error::{MetricError, Result};

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
    pub(super) fn rows(&self) -> usize {
        self.values.len().checked_div(self.n_cols).unwrap_or(0)
    }
    /// The value at (`row`, `col`); `rows` is [`Self::rows`], computed once by
    /// the caller (a division per read would cost more than the read).
    #[inline(always)]
    pub(super) fn at(&self, rows: usize, row: usize, col: usize) -> X {
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
