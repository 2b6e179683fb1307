//! The one pass over a probability matrix (docs/definitions.md §4, §6 and §7).
//!
//! [`evaluate_proba`] reads `y_true` (class codes `0..K-1`), the `N x K`
//! probability matrix (f32 or f64, column `j` = class `j`; row-major, or
//! column-major as a table's columns laid back to back, see [`ProbaMatrix`]) and the
//! optional predictions and weights once, validating as it goes, and fills
//! every accumulator the probabilistic and hard-label metrics need:
//! the hard confusion matrix of the top label (ties to the lowest column) or
//! of `y_pred`, the probabilistic confusion matrix, the entropy, Brier and
//! log-loss sums, the calibration bins and, on request, each row's top-label
//! confidence and correctness. All sums are f64 whatever the input dtype,
//! summed in row order inside fixed-size chunks and in chunk order across
//! them, so results are bit-identical at any thread count.
//!
//! The code is split by concern: [`Prob`] and its two dtypes (`dtype`), the
//! per-row arithmetic by row width and SIMD level (`width`), the row loop of
//! one chunk (`chunk`) and the order in which chunks run and are folded
//! (`schedule`), below them what a pass accumulates (`accumulators`). This
//! file holds the entry points and the checks.

mod accumulators;
#[cfg(target_arch = "x86_64")]
mod avx2_row;
mod chunk;
mod dtype;
mod matrix;
mod rows;
mod schedule;
mod width;

pub use accumulators::{bin_edges, calibration_bin, ProbAccumulators, ProbOptions, LOG_LOSS_EPS};
pub use dtype::Prob;
pub use matrix::ProbaMatrix;
pub use rows::{row_values, top_labels};

use accumulators::accumulator_bytes;
use chunk::Bad;
use schedule::Pass;

use crate::ensure;
use crate::error::{same_length, MetricError, Result};
use crate::labels::Label;
use crate::memory::check_available;
use crate::parallel::Pool;
use crate::row_rule::row_atol;

/// Read the probability matrix once and fill every accumulator (module docs).
///
/// `y_true` (and `y_pred`) hold class codes `0..K-1`, `K = proba.k()`.
///
/// # Errors
/// Shape and length problems; `InvalidProbability` for a NaN, infinite,
/// negative or > 1 entry; `RowSum` for a row not summing to 1 within `atol`;
/// `LabelOutOfRange` for a code outside `0..K`; weight errors as for counting.
pub fn evaluate_proba<L: Label, P: Prob>(
    y_true: &[L],
    proba: ProbaMatrix<'_, P>,
    y_pred: Option<&[L]>,
    sample_weight: Option<&[f64]>,
    opts: &ProbOptions,
    pool: &Pool,
) -> Result<ProbAccumulators> {
    let n = y_true.len();
    let k = proba.k;
    let col_stride = proba.column_major.then_some(n);
    let proba = proba.values;
    ensure!(n > 0, MetricError::Empty { arg: "y_true" });
    ensure!(
        k > 0 && proba.len() == n * k,
        MetricError::Shape {
            arg: "y_proba",
            detail: format!("{} values for {n} rows of {k} columns", proba.len()),
        }
    );
    same_lengths(n, y_pred, sample_weight)?;
    let atol = row_atol(opts.atol, k);
    let opts = ProbOptions { atol, ..*opts };
    check_available(
        accumulator_bytes(k, opts.n_bins, sample_weight.is_some()) * (pool.threads() as u128 + 2),
        "the probability pass's accumulators",
    )?;
    let pass = Pass {
        y_true,
        proba,
        col_stride,
        y_pred,
        weights: sample_weight,
        k,
    };
    // Packed keys from the pass: float32 probabilities, no weights, and no
    // confidences to return anyway.
    let keys = opts.rank && P::F32 && sample_weight.is_none() && !opts.keep_confidence;
    let keep = opts.keep_confidence || (opts.rank && !keys);
    let (mut total, errors, packed) = pass.run(&opts, keep, keys, pool)?;
    // Weight errors first (the numpy backend checks weights before anything else).
    if let Some(bad) = errors.bad_weight.or(errors.bad) {
        return Err(match bad {
            Bad::Weight { row, value } => MetricError::InvalidWeight {
                index: row,
                value,
                count: errors.bad_weights,
            },
            Bad::Proba { row, col, value } => MetricError::InvalidProbability { row, col, value },
            Bad::RowSum { row, sum } => MetricError::RowSum { row, sum, atol },
            Bad::Label { arg, row, value } => MetricError::LabelOutOfRange { arg, row, value, k },
        });
    }
    let sums = [
        total.weight_sum,
        total.entropy_sum,
        total.brier_sum,
        total.log_loss_sum,
    ];
    ensure!(
        sums.iter().all(|x| x.is_finite()),
        MetricError::WeightRange {
            what: "a weighted sum of the probability pass"
        }
    );
    // A batch of zero-weight rows is counted like any other; only the ranking walk of the
    // one-shot evaluation (`rank`) needs weight, and its totals check refuses a zero sum.
    if opts.rank {
        total.ranking = Some(match packed {
            Some(keys) => crate::ranking::walk_packed_keys(keys, pool)?,
            None => {
                let ranking = crate::ranking::binary_ranking(
                    total.correct.as_deref().unwrap_or(&[]),
                    total.confidence.as_deref().unwrap_or(&[]),
                    sample_weight,
                    true,
                    pool,
                )?;
                if !opts.keep_confidence {
                    (total.confidence, total.correct) = (None, None);
                }
                ranking
            }
        });
    }
    Ok(total)
}

/// Refuse predictions or weights of another length than the `n` rows of `y_true`.
fn same_lengths<L>(n: usize, y_pred: Option<&[L]>, sample_weight: Option<&[f64]>) -> Result<()> {
    same_length("y_pred", y_pred.map(<[L]>::len), "y_true", n)?;
    same_length(
        "sample_weight",
        sample_weight.map(<[f64]>::len),
        "y_true",
        n,
    )
}

/// [`evaluate_proba`] of every group of rows at once: the rows laid out group
/// by group (row-major `proba`), `offsets` the `G + 1` starts of the groups.
/// The groups run side by side, each on one thread (a group's rows are too
/// few to split); the result of each is what [`evaluate_proba`] gives on its
/// rows alone.
///
/// # Errors
/// [`MetricError::Shape`] for offsets that do not cover the rows in order or a
/// column-major matrix; the errors of [`evaluate_proba`] (of some group).
pub fn evaluate_proba_groups<L: Label, P: Prob>(
    y_true: &[L],
    proba: ProbaMatrix<'_, P>,
    y_pred: Option<&[L]>,
    sample_weight: Option<&[f64]>,
    opts: &ProbOptions,
    offsets: &[i64],
    pool: &Pool,
) -> Result<Vec<ProbAccumulators>> {
    let n = y_true.len();
    let k = proba.k;
    ensure!(
        !proba.column_major && k > 0 && proba.values.len() == n * k,
        MetricError::Shape {
            arg: "y_proba",
            detail: format!("a row-major matrix of {n} rows of {k} columns is needed"),
        }
    );
    crate::grouping::check_offsets(offsets, n, true)?;
    same_lengths(n, y_pred, sample_weight)?;
    let one = |g: usize| -> Result<ProbAccumulators> {
        let lo = usize::try_from(offsets.get(g).copied().unwrap_or(0)).unwrap_or(0);
        let hi = usize::try_from(offsets.get(g + 1).copied().unwrap_or(0)).unwrap_or(0);
        let rows = proba.values.get(lo * k..hi * k).unwrap_or(&[]);
        evaluate_proba(
            y_true.get(lo..hi).unwrap_or(&[]),
            ProbaMatrix::row_major(rows, k),
            y_pred.and_then(|p| p.get(lo..hi)),
            sample_weight.and_then(|w| w.get(lo..hi)),
            opts,
            &pool.sequential_like(),
        )
    };
    let groups = offsets.len() - 1;
    if pool.parallel_for(n) {
        use rayon::prelude::*;
        pool.install(|| (0..groups).into_par_iter().map(one).collect())
    } else {
        (0..groups).map(one).collect()
    }
}
