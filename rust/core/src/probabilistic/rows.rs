//! Row by row outputs of a probability matrix, for the Poisson bootstrap
//! (docs/definitions.md §11.1): each row's top label ([`top_labels`]) and
//! each row's contributions to a probability model's replicate sums
//! ([`row_values`]). Both write one output row per input row, in parallel
//! blocks of rows, each a pure function of its row: the result does not
//! depend on the thread count. The numpy backend computes the same values
//! with numpy (`cmetrics._numpy.probabilistic`); they agree to rounding
//! (the logarithm and the order of the sum of squares are numpy's there).
//! Both read float32 or float64 matrices, each value widened to f64 as it is
//! read (exact): a float32 model's outputs are those of its float64 copy,
//! which the caller then need not make (800 MB at 10^7 x 10).

use super::accumulators::LOG_LOSS_EPS;
use super::dtype::Prob;
use super::matrix::ProbaMatrix;
use crate::ensure;
use crate::error::{same_length, MetricError, Result};
use crate::labels::Label;
use crate::parallel::{big_vec, Pool};
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// Rows a task takes (the stop flag is read once a block).
const ROWS: usize = 1 << 13;

/// The rows of `proba`, checked against `n` (`proba` must hold `n` rows of
/// at least one column).
fn check_shape<P>(proba: &ProbaMatrix<'_, P>, n: usize) -> Result<()> {
    ensure!(
        proba.k > 0 && Some(proba.values.len()) == n.checked_mul(proba.k),
        MetricError::Shape {
            arg: "y_proba",
            detail: format!(
                "{} values do not make {n} rows of {} columns",
                proba.values.len(),
                proba.k
            ),
        }
    );
    Ok(())
}

/// The first column of a row's largest value, or of its first NaN (numpy's
/// `argmax`).
#[inline(always)]
fn top_of(k: usize, value: impl Fn(usize) -> f64) -> usize {
    let (mut best, mut top) = (value(0), 0);
    for j in 1..k {
        let v = value(j);
        if v > best || (v.is_nan() && !best.is_nan()) {
            (best, top) = (v, j);
        }
    }
    top
}

/// Rows whose top labels are sought side by side: their comparisons make
/// independent chains, where one row's comparisons each wait on the last.
const SIDE_BY_SIDE: usize = 4;

/// The top labels of [`SIDE_BY_SIDE`] rows into `out`, given the rows'
/// values of column `j` together (`column(j)`) and one value alone
/// (`value(q, j)`, row `q`): each row's running maximum and its column,
/// without a branch, the rows side by side; a row that met a NaN is then
/// looked at again by [`top_of`] (its first NaN is its answer). The layouts
/// differ only in how `column` reads.
#[inline(always)]
#[allow(clippy::needless_range_loop)] // lane q of the four rows
fn tops_of_four(
    k: usize,
    column: impl Fn(usize) -> [f64; SIDE_BY_SIDE],
    value: impl Fn(usize, usize) -> f64,
    out: &mut [i64],
) {
    let mut best = column(0);
    let mut top = [0_usize; SIDE_BY_SIDE];
    let mut nan = best.map(f64::is_nan);
    for j in 1..k {
        let c = column(j);
        for q in 0..SIDE_BY_SIDE {
            let v = c[q];
            let up = v > best[q];
            best[q] = if up { v } else { best[q] };
            top[q] = if up { j } else { top[q] };
            nan[q] |= v.is_nan();
        }
    }
    for (q, slot) in out.iter_mut().enumerate().take(SIDE_BY_SIDE) {
        let t = if nan[q] {
            top_of(k, |j| value(q, j))
        } else {
            top[q]
        };
        *slot = t as i64;
    }
}

/// The top labels of the rows `first..first + out.len()` of a row-major
/// matrix (`values`, rows `k` long): [`SIDE_BY_SIDE`] rows at a time
/// ([`tops_of_four`]), the rest one by one. A value missing (not met: the
/// caller hands out whole rows) reads as NaN.
fn tops_by_rows<P: Prob>(values: &[P], k: usize, first: usize, out: &mut [i64]) {
    let value = |i: usize, j: usize| values.get(i * k + j).map_or(f64::NAN, |v| v.f());
    let mut r = 0;
    while r + SIDE_BY_SIDE <= out.len() {
        let i = first + r;
        let rows: [&[P]; SIDE_BY_SIDE] =
            std::array::from_fn(|q| values.get((i + q) * k..(i + q + 1) * k).unwrap_or(&[]));
        tops_of_four(
            k,
            |j| rows.map(|row| row.get(j).map_or(f64::NAN, |v| v.f())),
            |q, j| value(i + q, j),
            out.get_mut(r..).unwrap_or_default(),
        );
        r += SIDE_BY_SIDE;
    }
    for (q, slot) in out.iter_mut().enumerate().skip(r) {
        *slot = top_of(k, |j| value(first + q, j)) as i64;
    }
}

/// The top labels of the rows `first..first + out.len()` of a column-major
/// matrix (`values`, columns `n` long): [`SIDE_BY_SIDE`] consecutive rows at
/// a time ([`tops_of_four`]), their values of a column read together (`k`
/// streams, each read in order), the rest one by one. Two other forms were
/// measured slower on an Intel guest (10^6 x 10, one thread): one row at a
/// time, its comparisons one chain (36-48 ms), and a block of rows along each
/// column with the running maxima in vectors (36-46 ms).
fn tops_by_columns<P: Prob>(values: &[P], n: usize, k: usize, first: usize, out: &mut [i64]) {
    let value = |i: usize, j: usize| values.get(j * n + i).map_or(f64::NAN, |v| v.f());
    let mut r = 0;
    while r + SIDE_BY_SIDE <= out.len() {
        let i = first + r;
        // A column too short (not met) reads as NaN: the rows are looked at again.
        let column = |j: usize| {
            values
                .get(j * n + i..)
                .and_then(<[P]>::first_chunk::<SIDE_BY_SIDE>)
                .map_or([f64::NAN; SIDE_BY_SIDE], |c| c.map(Prob::f))
        };
        tops_of_four(
            k,
            column,
            |q, j| value(i + q, j),
            out.get_mut(r..).unwrap_or_default(),
        );
        r += SIDE_BY_SIDE;
    }
    for (q, slot) in out.iter_mut().enumerate().skip(r) {
        *slot = top_of(k, |j| value(first + q, j)) as i64;
    }
}

/// Each row's top label: the column of its largest probability, the first
/// of equal ones, and the first NaN where a row holds one (numpy's
/// `argmax`). `n` rows of `proba`, four rows at a time in either layout
/// (their comparisons side by side); the same labels from both, and from
/// float32 values as from their float64 widening.
///
/// # Errors
/// [`MetricError::Shape`] for a matrix of no columns or of another number of
/// values; [`MetricError::Interrupted`].
pub fn top_labels<P: Prob>(proba: ProbaMatrix<'_, P>, n: usize, pool: &Pool) -> Result<Vec<i64>> {
    check_shape(&proba, n)?;
    let (values, k) = (proba.values, proba.k);
    let mut out: Vec<i64> = big_vec(n, "the top labels")?;
    out.resize(n, 0);
    let block = |(b, slots): (usize, &mut [i64])| {
        if pool.stopped() {
            return;
        }
        let first = b * ROWS;
        if proba.column_major {
            tops_by_columns(values, n, k, first, slots);
        } else {
            tops_by_rows(values, k, first, slots);
        }
    };
    if pool.parallel_for(n) {
        pool.install(|| out.par_chunks_mut(ROWS).enumerate().for_each(block));
    } else {
        out.chunks_mut(ROWS).enumerate().for_each(block);
    }
    pool.check()?;
    Ok(out)
}

/// Each row's contributions to one probability model's Poisson replicate
/// sums, `K + 4` values a row (row-major): its weight `w` (the row's count
/// at its cell of the confusion matrix), `w p_j` for each class `j` (its row
/// of the probabilistic confusion matrix), `w` again (the total weight),
/// `w (-ln clip(p_t, eps, 1 - eps))` (its log loss, `t` its true class,
/// `eps` [`LOG_LOSS_EPS`]) and `w (Σ_j p_j² - p_t² + (1 - p_t)²)` (its
/// Brier score). Without weights `w` is 1 and the products are not taken.
/// Every value is computed in f64 (a float32 probability widened first).
///
/// # Errors
/// [`MetricError::Shape`] and [`MetricError::LengthMismatch`] for inputs of
/// other sizes, [`MetricError::LabelOutOfRange`] for a true class outside
/// `0..K` (the first such row), [`MetricError::Interrupted`].
pub fn row_values<L: Label, P: Prob>(
    y_true: &[L],
    proba: ProbaMatrix<'_, P>,
    sample_weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<Vec<f64>> {
    let n = y_true.len();
    check_shape(&proba, n)?;
    same_length(
        "sample_weight",
        sample_weight.map(<[f64]>::len),
        "y_true",
        n,
    )?;
    let (values, k) = (proba.values, proba.k);
    let width = k + 4;
    let len = n.checked_mul(width).ok_or(MetricError::OutOfMemory {
        what: "the rows' values",
        bytes: u128::MAX,
    })?;
    let mut out: Vec<f64> = big_vec(len, "the rows' values")?;
    let spare = out.spare_capacity_mut().get_mut(..len).unwrap_or_default();
    // Each block writes every slot of its rows, or stops at the first row
    // whose true class is out of range and names it.
    let block = |(b, rows): (usize, &mut [MaybeUninit<f64>])| -> Option<usize> {
        if pool.stopped() {
            return None;
        }
        // A row of a row-major float64 matrix is read where it lies; any
        // other row (column-major, or float32) is gathered, widened to f64.
        let mut row_buffer = vec![0.0; k];
        for (r, row) in rows.chunks_exact_mut(width).enumerate() {
            let i = b * ROWS + r;
            let t = y_true.get(i).map_or(k, |v| v.slot(k));
            if t >= k {
                return Some(i);
            }
            let in_place = if proba.column_major {
                None
            } else {
                values.get(i * k..(i + 1) * k).and_then(P::as_f64s)
            };
            let p: &[f64] = match in_place {
                Some(row) => row,
                None => {
                    for (j, slot) in row_buffer.iter_mut().enumerate() {
                        let at = if proba.column_major {
                            j * n + i
                        } else {
                            i * k + j
                        };
                        *slot = values.get(at).map_or(f64::NAN, |v| v.f());
                    }
                    &row_buffer
                }
            };
            let pt = p.get(t).copied().unwrap_or(f64::NAN);
            let w = sample_weight.and_then(|w| w.get(i)).copied();
            let mut squares = 0.0;
            for (j, slot) in row.iter_mut().skip(1).take(k).enumerate() {
                let v = p.get(j).copied().unwrap_or(f64::NAN);
                squares += v * v;
                slot.write(w.map_or(v, |w| v * w));
            }
            let log_loss = -pt.clamp(LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS).ln();
            let brier = (squares - pt * pt) + (1.0 - pt) * (1.0 - pt);
            let w = w.unwrap_or(1.0);
            let tail = match sample_weight {
                Some(_) => [w, log_loss * w, brier * w],
                None => [w, log_loss, brier],
            };
            if let Some(slot) = row.first_mut() {
                slot.write(w);
            }
            for (slot, v) in row.iter_mut().skip(k + 1).zip(tail) {
                slot.write(v);
            }
        }
        None
    };
    let bad: Vec<Option<usize>> = if pool.parallel_for(n) {
        pool.install(|| {
            spare
                .par_chunks_mut(ROWS * width)
                .enumerate()
                .map(block)
                .collect()
        })
    } else {
        spare
            .chunks_mut(ROWS * width)
            .enumerate()
            .map(block)
            .collect()
    };
    pool.check()?;
    if let Some(row) = bad.into_iter().flatten().next() {
        return Err(MetricError::LabelOutOfRange {
            arg: "y_true",
            row,
            value: y_true.get(row).map_or(0, |v| v.to_i64()),
            k,
        });
    }
    // SAFETY: the stop flag was not raised and no block met a bad row, so
    // every block ran to its end and wrote each slot of each of its rows (the
    // row's first slot, the `k` after it, its last three: `width` slots, as
    // `chunks_exact_mut` hands them out, `len` being a whole number of rows):
    // the first `len` values are initialised (`f64` needs no drop).
    unsafe { out.set_len(len) };
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::lcg;

    /// `n` rows of `k` probabilities (some rows with tied maxima), row-major.
    fn rows(n: usize, k: usize) -> Vec<f64> {
        let mut next = lcg(7);
        let mut p = Vec::with_capacity(n * k);
        for i in 0..n {
            let raw: Vec<f64> = (0..k)
                .map(|j| {
                    if i % 5 == 0 && j < 2 {
                        0.5
                    } else {
                        (next() % 1000) as f64 + 1.0
                    }
                })
                .collect();
            let s: f64 = raw.iter().sum();
            p.extend(raw.iter().map(|v| v / s));
        }
        p
    }

    fn transposed(p: &[f64], n: usize, k: usize) -> Vec<f64> {
        (0..k)
            .flat_map(|j| (0..n).map(move |i| p[i * k + j]))
            .collect()
    }

    #[test]
    fn top_labels_are_the_first_largest_in_either_layout() {
        let (n, k) = (20_000, 5);
        let p = rows(n, k);
        let want: Vec<i64> = p
            .chunks(k)
            .map(|r| {
                let m = r.iter().copied().fold(f64::MIN, f64::max);
                r.iter().position(|&v| v == m).unwrap() as i64
            })
            .collect();
        for threads in [1, 2, 3] {
            let pool = Pool::new(threads);
            let got = top_labels(ProbaMatrix::row_major(&p, k), n, &pool).unwrap();
            assert_eq!(got, want);
            let c = transposed(&p, n, k);
            let got = top_labels(ProbaMatrix::column_major(&c, k), n, &pool).unwrap();
            assert_eq!(got, want);
        }
        // NaNs inside the rows taken side by side and in blocks past the first,
        // in either layout.
        let (n, k) = (2 * ROWS + 37, 4);
        let mut p = rows(n, k);
        for (i, j) in [
            (0, 0),
            (3, 2),
            (9, 3),
            (10, 1),
            (10, 3),
            (17, 0),
            (17, 1),
            (36, 2),
            (ROWS + 1, 3),
            (2 * ROWS + 36, 0),
            (2 * ROWS + 36, 2),
        ] {
            p[i * k + j] = f64::NAN;
        }
        p[5 * k..6 * k].fill(f64::NEG_INFINITY);
        p[(ROWS + 5) * k..(ROWS + 6) * k].fill(f64::NEG_INFINITY);
        let want: Vec<i64> = p
            .chunks(k)
            .map(|r| match r.iter().position(|v| v.is_nan()) {
                Some(j) => j as i64,
                None => {
                    let m = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
                    r.iter().position(|&v| v == m).unwrap() as i64
                }
            })
            .collect();
        let c = transposed(&p, n, k);
        for threads in [1, 2] {
            let pool = Pool::new(threads);
            assert_eq!(
                top_labels(ProbaMatrix::row_major(&p, k), n, &pool).unwrap(),
                want
            );
            assert_eq!(
                top_labels(ProbaMatrix::column_major(&c, k), n, &pool).unwrap(),
                want
            );
        }
        let nan = [0.2, f64::NAN, 0.9, f64::NAN];
        let got = top_labels(ProbaMatrix::row_major(&nan, 4), 1, &Pool::new(1)).unwrap();
        assert_eq!(got, vec![1]);
    }

    #[test]
    fn row_values_follow_their_definition() {
        let (n, k) = (20_001, 3);
        let p = rows(n, k);
        let y: Vec<i64> = (0..n as i64).map(|i| (i * 7) % 3).collect();
        let w: Vec<f64> = (0..n).map(|i| (i % 4) as f64 * 0.5).collect();
        for weighted in [false, true] {
            let sw = weighted.then_some(&w[..]);
            let got = row_values(&y, ProbaMatrix::row_major(&p, k), sw, &Pool::new(2)).unwrap();
            let c = transposed(&p, n, k);
            let cm = row_values(&y, ProbaMatrix::column_major(&c, k), sw, &Pool::new(1)).unwrap();
            assert_eq!(got, cm);
            for i in [0, 1, 4, 8191, 8192, n - 1] {
                let r = &p[i * k..(i + 1) * k];
                let t = y[i] as usize;
                let wi = if weighted { w[i] } else { 1.0 };
                let o = &got[i * (k + 4)..(i + 1) * (k + 4)];
                let brier: f64 = (0..k)
                    .map(|j| (r[j] - f64::from(u8::from(j == t))).powi(2))
                    .sum();
                assert_eq!(o[0], wi);
                assert_eq!(o[k + 1], wi);
                for j in 0..k {
                    assert_eq!(o[1 + j], r[j] * wi);
                }
                assert!((o[k + 2] - (-r[t].ln() * wi)).abs() < 1e-12);
                assert!((o[k + 3] - brier * wi).abs() < 1e-12);
            }
        }
    }

    /// A float32 matrix gives its float64 widening's top labels and rows'
    /// values bit for bit, in either layout, with and without weights (ties
    /// and NaNs among the float32 values too).
    #[test]
    #[allow(clippy::cast_possible_truncation)] // the float32 matrix under test
    fn float32_reads_as_its_widening() {
        let (n, k) = (ROWS + 45, 6);
        let mut narrow: Vec<f32> = rows(n, k).iter().map(|&v| v as f32).collect();
        narrow[3 * k + 2] = f32::NAN;
        narrow[(ROWS + 7) * k..(ROWS + 8) * k].fill(0.25);
        let wide: Vec<f64> = narrow.iter().map(|&v| f64::from(v)).collect();
        let t: Vec<i64> = (0..n).map(|i| (i * 7 % k) as i64).collect();
        let w: Vec<f64> = (0..n).map(|i| 0.5 + (i % 3) as f64).collect();
        let (cn, cw) = (transposed_f32(&narrow, n, k), transposed(&wide, n, k));
        let pool = Pool::new(2);
        let bits = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        for (a, b) in [
            (
                ProbaMatrix::row_major(&narrow[..], k),
                ProbaMatrix::row_major(&wide[..], k),
            ),
            (
                ProbaMatrix::column_major(&cn[..], k),
                ProbaMatrix::column_major(&cw[..], k),
            ),
        ] {
            assert_eq!(
                top_labels(a, n, &pool).unwrap(),
                top_labels(b, n, &pool).unwrap()
            );
            for weight in [None, Some(&w[..])] {
                let got = row_values(&t, a, weight, &pool).unwrap();
                let want = row_values(&t, b, weight, &pool).unwrap();
                assert_eq!(bits(got), bits(want));
            }
        }
    }

    fn transposed_f32(p: &[f32], n: usize, k: usize) -> Vec<f32> {
        (0..k)
            .flat_map(|j| (0..n).map(move |i| p[i * k + j]))
            .collect()
    }

    #[test]
    fn bad_inputs_are_errors() {
        let p = [0.5, 0.5, 0.1, 0.9];
        let pool = Pool::new(1);
        let e = row_values(&[0_i64, 2], ProbaMatrix::row_major(&p, 2), None, &pool);
        assert!(matches!(
            e,
            Err(MetricError::LabelOutOfRange {
                row: 1,
                value: 2,
                ..
            })
        ));
        let e = row_values(&[0_i32, -1], ProbaMatrix::row_major(&p, 2), None, &pool);
        assert!(matches!(
            e,
            Err(MetricError::LabelOutOfRange { row: 1, .. })
        ));
        let e = row_values(&[0_i64], ProbaMatrix::row_major(&p, 2), None, &pool);
        assert!(matches!(e, Err(MetricError::Shape { .. })));
        let e = row_values(
            &[0_i64, 1],
            ProbaMatrix::row_major(&p, 2),
            Some(&[1.0]),
            &pool,
        );
        assert!(matches!(e, Err(MetricError::LengthMismatch { .. })));
        let e = top_labels(ProbaMatrix::row_major(&p, 0), 2, &pool);
        assert!(matches!(e, Err(MetricError::Shape { .. })));
    }
}
