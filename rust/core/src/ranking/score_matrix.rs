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

/// Rows of a block of [`row_sum_range`].
const SUM_BLOCK: usize = 64;

/// The sum of each row of the row-major `values` (`k` columns, as many rows
/// as `sums` has), each left to right in float64: float32 rows [`LANES`] at a
/// time, one per vector lane, on Intel CPUs with AVX-512; else four rows side
/// by side. The lanes are filled by gathers, which Intel runs fast enough
/// (one thread, 10^7 x 10: 108 -> 90 ms on an Emerald Rapids guest) and AMD
/// does not: on a Zen 5 guest the gathers took 110-123 ms where the four
/// rows side by side took 20-21 ms (the same bits).
pub(super) fn sum_rows<X: Score>(values: &[X], k: usize, sums: &mut [f64]) {
    #[cfg(target_arch = "x86_64")]
    if let Some(v) = X::as_f32s(values) {
        if crate::cpu::intel() && crate::cpu::avx512() && k <= GATHER_COLUMNS {
            // SAFETY: the CPU has the features `sum_f32_rows_avx512` is
            // compiled for, and `k` is within its bound.
            let done = unsafe { sum_f32_rows_avx512(v, k, sums) };
            let (values, sums) = (values.get(done * k..), sums.get_mut(done..));
            if let (Some(values), Some(sums)) = (values, sums) {
                sum_rows_portable(values, k, sums);
            }
            return;
        }
    }
    sum_rows_portable(values, k, sums);
}

/// Rows summed side by side by [`sum_f32_rows_avx512`], one per lane.
#[cfg(target_arch = "x86_64")]
const LANES: usize = 8;

/// The most columns [`sum_f32_rows_avx512`] takes (its gather offsets, up to
/// `15 k`, are `i32`).
#[cfg(target_arch = "x86_64")]
const GATHER_COLUMNS: usize = 1 << 24;

/// The sums of [`sum_rows`] for the whole blocks of `2 LANES` rows (the
/// number of rows done is returned; the rest are the caller's): column `j`
/// of eight rows gathered into one vector, widened and added to the eight
/// rows' sums, so each row is still summed left to right.
///
/// # Safety
/// The CPU has AVX-512 F and AVX2; `k <= GATHER_COLUMNS`.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2")]
unsafe fn sum_f32_rows_avx512(values: &[f32], k: usize, sums: &mut [f64]) -> usize {
    use std::arch::x86_64::{
        _mm256_add_epi32, _mm256_i32gather_ps, _mm256_mullo_epi32, _mm256_set1_epi32,
        _mm256_setr_epi32, _mm512_add_pd, _mm512_cvtps_pd, _mm512_setzero_pd, _mm512_storeu_pd,
    };
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
    let step = _mm256_set1_epi32(k as i32);
    let offsets = _mm256_mullo_epi32(_mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7), step);
    let second = _mm256_add_epi32(offsets, _mm256_mullo_epi32(_mm256_set1_epi32(8), step));
    let mut done = 0;
    for (rows, out) in values
        .chunks_exact(2 * LANES * k)
        .zip(sums.chunks_exact_mut(2 * LANES))
    {
        let (mut a, mut b) = (_mm512_setzero_pd(), _mm512_setzero_pd());
        let base = rows.as_ptr();
        for j in 0..k {
            // SAFETY: row `r < 16` column `j < k` is at `r k + j`, inside
            // `rows` (`16 k` values); the CPU has the features.
            unsafe {
                let x = _mm256_i32gather_ps::<4>(base.add(j), offsets);
                let y = _mm256_i32gather_ps::<4>(base.add(j), second);
                a = _mm512_add_pd(a, _mm512_cvtps_pd(x));
                b = _mm512_add_pd(b, _mm512_cvtps_pd(y));
            }
        }
        // SAFETY: `out` holds 16 sums.
        unsafe {
            _mm512_storeu_pd(out.as_mut_ptr(), a);
            _mm512_storeu_pd(out.as_mut_ptr().add(LANES), b);
        }
        done += 2 * LANES;
    }
    done
}

/// [`sum_rows`] row by row, four rows at a time (four independent chains).
fn sum_rows_portable<X: Score>(values: &[X], k: usize, sums: &mut [f64]) {
    for (quad, out) in values.chunks(4 * k).zip(sums.chunks_mut(4)) {
        if let [s0, s1, s2, s3] = out {
            let (a, rest) = quad.split_at(k);
            let (b, rest) = rest.split_at(k);
            let (c, d) = rest.split_at(k);
            let (mut t0, mut t1, mut t2, mut t3) = (0.0, 0.0, 0.0, 0.0);
            for (((x0, x1), x2), x3) in a.iter().zip(b).zip(c).zip(d) {
                t0 += x0.to_f64();
                t1 += x1.to_f64();
                t2 += x2.to_f64();
                t3 += x3.to_f64();
            }
            (*s0, *s1, *s2, *s3) = (t0, t1, t2, t3);
        } else {
            for (row, sum) in quad.chunks_exact(k).zip(out) {
                *sum = row.iter().fold(0.0, |t, x| t + x.to_f64());
            }
        }
    }
}

/// A chunk's smallest and largest row sums, and its first non-finite score
/// (row, column).
type Extremes = (f64, f64, Option<(usize, usize)>);

/// The smallest and the largest row sum of a score matrix (each row summed
/// in float64, left to right), after checking that every score is finite:
/// the multiclass ROC AUC's rule that rows hold probabilities (its caller
/// compares both ends with 1). One pass, in parallel over fixed chunks of
/// rows; the extremes do not depend on the chunks.
///
/// # Errors
/// [`MetricError::NonFinite`] for the first (in row-major order) NaN or
/// infinite score, `index` its flat row-major position; an interruption.
pub fn row_sum_range<X: Score>(
    scores: Matrix<'_, X>,
    pool: &crate::parallel::Pool,
) -> Result<(f64, f64)> {
    use rayon::prelude::*;
    let k = scores.n_cols;
    ensure!(
        k > 0 && scores.values.len().is_multiple_of(k),
        MetricError::Shape {
            arg: "y_score",
            detail: format!(
                "{} values do not make rows of {k} columns",
                scores.values.len()
            ),
        }
    );
    let n = scores.rows();
    let chunk_rows = (crate::parallel::CHECK_ROWS / k).max(1);
    let part = |c: usize| -> Extremes {
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        if pool.stopped() {
            return (lo, hi, None);
        }
        let end = ((c + 1) * chunk_rows).min(n);
        // Blocks of rows summed side by side (each row left to right: the
        // rows' sums are independent chains the core overlaps).
        let mut sums = [0.0_f64; SUM_BLOCK];
        for first in (c * chunk_rows..end).step_by(SUM_BLOCK) {
            let rows = (end - first).min(SUM_BLOCK);
            let block = sums.get_mut(..rows).unwrap_or_default();
            if scores.column_major {
                block.fill(0.0);
                for j in 0..k {
                    for (r, sum) in block.iter_mut().enumerate() {
                        *sum += scores.at(n, first + r, j).to_f64();
                    }
                }
            } else {
                let values = scores
                    .values
                    .get(first * k..(first + rows) * k)
                    .unwrap_or(&[]);
                sum_rows(values, k, block);
            }
            if !block.iter().all(|s| s.is_finite()) {
                for (r, &sum) in block.iter().enumerate() {
                    // A NaN or an infinity makes the sum so; finite scores
                    // can still overflow it (then no entry is to blame).
                    if !sum.is_finite() {
                        if let Some(j) = (0..k).find(|&j| !scores.at(n, first + r, j).is_finite()) {
                            return (lo, hi, Some((first + r, j)));
                        }
                    }
                }
            }
            // No sum is NaN here: comparisons select as `min` and `max` would.
            for &sum in &*block {
                lo = if sum < lo { sum } else { lo };
                hi = if sum > hi { sum } else { hi };
            }
        }
        (lo, hi, None)
    };
    let chunks = n.div_ceil(chunk_rows);
    let parts: Vec<Extremes> = if pool.parallel_for(n * k) {
        pool.install(|| (0..chunks).into_par_iter().map(part).collect())
    } else {
        (0..chunks).map(part).collect()
    };
    pool.check()?;
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for (a, b, bad) in parts {
        if let Some((i, j)) = bad {
            return Err(MetricError::NonFinite {
                arg: "y_score",
                index: i * k + j,
                value: scores.at(n, i, j).to_f64(),
            });
        }
        lo = lo.min(a);
        hi = hi.max(b);
    }
    Ok((lo, hi))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The lanes' sums (where this CPU has AVX-512, whichever vendor) and the
    /// four rows side by side give the same bits as one row at a time, left
    /// to right, for every remainder of rows and several widths.
    #[test]
    fn row_sums_agree_bit_for_bit_on_every_path() {
        let mut word = crate::random::xorshift(0x2545_F491_4F6C_DD1D);
        let mut next = || {
            let x = word();
            (x >> 40) as f32 / (1_u64 << 24) as f32 * 3.0 - 1.0
        };
        for k in [1_usize, 2, 3, 10, 17] {
            for n in [0_usize, 1, 5, 15, 16, 17, 33, 100] {
                let values: Vec<f32> = (0..n * k).map(|_| next()).collect();
                let want: Vec<f64> = values
                    .chunks_exact(k)
                    .map(|r| r.iter().fold(0.0, |t, &v| t + f64::from(v)))
                    .collect();
                let mut got = vec![f64::NAN; n];
                sum_rows_portable(&values, k, &mut got);
                assert_eq!(
                    got.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
                    want.iter().map(|s| s.to_bits()).collect::<Vec<_>>(),
                    "four side by side, n = {n}, k = {k}"
                );
                let mut got = vec![f64::NAN; n];
                sum_rows(&values, k, &mut got);
                assert_eq!(got, want, "as chosen for this CPU, n = {n}, k = {k}");
                #[cfg(target_arch = "x86_64")]
                if crate::cpu::avx512() {
                    let mut got = vec![f64::NAN; n];
                    // SAFETY: the CPU has AVX-512 F and AVX2; k is small.
                    let done = unsafe { sum_f32_rows_avx512(&values, k, &mut got) };
                    assert_eq!(done, n - n % (2 * LANES));
                    let (a, b) = (got.get(..done), want.get(..done));
                    assert_eq!(a, b, "the lanes, n = {n}, k = {k}");
                }
            }
        }
    }
}
