//! Multilabel counting (docs/definitions.md §2.3b): one pass over two `n x L`
//! indicator matrices gives, per label, the (weighted) true positives, true
//! and predicted totals, and, per row, the counts of set labels in the truth,
//! the prediction and both, from which every set-wise multilabel metric
//! follows (subset accuracy, Hamming loss, sample-wise P/R/F and Jaccard).
//!
//! Rows are split into fixed chunks; each chunk sums its labels on its own and
//! the chunk sums are added in chunk order, so the result does not depend on
//! the thread count.

use rayon::prelude::*;

use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::{Pool, CHECK_ROWS};
use crate::ranking::check_weights;

/// Per-label sums and per-row counts of two indicator matrices.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct MultilabelCounts {
    /// Per label: weight of rows with the label set in both, in the truth, in the prediction.
    pub tp: Vec<f64>,
    pub true_sum: Vec<f64>,
    pub pred_sum: Vec<f64>,
    /// Per label: weight of rows with the label set in neither (counted, not
    /// the total less the others: no rounding below zero).
    pub tn: Vec<f64>,
    /// Per row: labels set in both, in the truth, in the prediction.
    pub row_tp: Vec<u32>,
    pub row_true: Vec<u32>,
    pub row_pred: Vec<u32>,
}

/// One chunk's per-row outputs: truth, prediction and both counts.
type RowSlices<'a> = ((&'a mut [u32], &'a mut [u32]), &'a mut [u32]);

/// Count `y_true` against `y_pred`, both row-major `n x n_labels` (module docs).
///
/// # Errors
/// Shapes that disagree or do not make rows of `n_labels`, more than
/// `u32::MAX` labels, invalid weights, an interruption.
pub fn multilabel_counts(
    y_true: &[bool],
    y_pred: &[bool],
    n_labels: usize,
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<MultilabelCounts> {
    ensure!(
        n_labels > 0 && y_true.len().is_multiple_of(n_labels),
        MetricError::Shape {
            arg: "y_true",
            detail: format!(
                "{} values do not make rows of {n_labels} labels",
                y_true.len()
            ),
        }
    );
    ensure!(
        u32::try_from(n_labels).is_ok(),
        MetricError::Shape {
            arg: "y_true",
            detail: format!("{n_labels} labels is more than this kernel counts per row"),
        }
    );
    let n = y_true.len() / n_labels;
    ensure!(
        y_pred.len() == y_true.len(),
        MetricError::LengthMismatch {
            a: "y_true",
            a_len: n,
            b: "y_pred",
            b_len: y_pred.len() / n_labels,
        }
    );
    if let Some(w) = weight {
        check_weights(w, n, "y_true")?;
    }
    let mut out = MultilabelCounts {
        row_tp: try_filled(n, 0, "the per-row counts")?,
        row_true: try_filled(n, 0, "the per-row counts")?,
        row_pred: try_filled(n, 0, "the per-row counts")?,
        ..MultilabelCounts::default()
    };
    let rows_per_chunk = (CHECK_ROWS / n_labels).max(1);
    // One chunk: its label sums, and its rows' counts written in place.
    let chunk = |(c, ((rt, rp), rb)): (usize, RowSlices<'_>)| {
        let mut sums = vec![[0.0_f64; 4]; n_labels];
        if pool.stopped() {
            return sums;
        }
        let first = c * rows_per_chunk;
        for (r, ((t_out, p_out), b_out)) in rt
            .iter_mut()
            .zip(rp.iter_mut())
            .zip(rb.iter_mut())
            .enumerate()
        {
            let i = first + r;
            let w = weight.map_or(1.0, |w| w.get(i).copied().unwrap_or(0.0));
            let base = i * n_labels;
            let (t_row, p_row) = match (
                y_true.get(base..base + n_labels),
                y_pred.get(base..base + n_labels),
            ) {
                (Some(t), Some(p)) => (t, p),
                _ => continue,
            };
            let (mut nt, mut np, mut nb) = (0_u32, 0_u32, 0_u32);
            for ((s, &t), &p) in sums.iter_mut().zip(t_row).zip(p_row) {
                let (ft, fp) = (f64::from(u8::from(t)), f64::from(u8::from(p)));
                s[0] += w * ft * fp;
                s[1] += w * ft;
                s[2] += w * fp;
                s[3] += w * (1.0 - ft) * (1.0 - fp);
                nt += u32::from(t);
                np += u32::from(p);
                nb += u32::from(t & p);
            }
            *t_out = nt;
            *p_out = np;
            *b_out = nb;
        }
        sums
    };
    let MultilabelCounts {
        row_tp,
        row_true,
        row_pred,
        ..
    } = &mut out;
    let parts: Vec<Vec<[f64; 4]>> = if pool.parallel_for(y_true.len()) {
        pool.install(|| {
            row_true
                .par_chunks_mut(rows_per_chunk)
                .zip(row_pred.par_chunks_mut(rows_per_chunk))
                .zip(row_tp.par_chunks_mut(rows_per_chunk))
                .enumerate()
                .map(chunk)
                .collect()
        })
    } else {
        row_true
            .chunks_mut(rows_per_chunk)
            .zip(row_pred.chunks_mut(rows_per_chunk))
            .zip(row_tp.chunks_mut(rows_per_chunk))
            .enumerate()
            .map(chunk)
            .collect()
    };
    pool.check()?;
    let mut total = vec![[0.0_f64; 4]; n_labels];
    for part in &parts {
        for (t, s) in total.iter_mut().zip(part) {
            for (a, b) in t.iter_mut().zip(s) {
                *a += b;
            }
        }
    }
    out.tp = total.iter().map(|s| s[0]).collect();
    out.true_sum = total.iter().map(|s| s[1]).collect();
    out.pred_sum = total.iter().map(|s| s[2]).collect();
    out.tn = total.iter().map(|s| s[3]).collect();
    if weight.is_some() {
        let sum: f64 = total.iter().map(|s| s[1] + s[2]).sum();
        ensure!(
            sum.is_finite(),
            MetricError::WeightRange {
                what: "a weighted label count"
            }
        );
    }
    Ok(out)
}
