//! What every binary ranking kernel shares: the result of the tie-grouped walk
//! ([`BinaryRanking`]), the rows' totals of each outcome, the checks of
//! scores and weights, the weight scale, and the shares of exact pair counts.

use super::keys::Score;
use crate::ensure;
use crate::error::{same_length, MetricError, Result};
use crate::parallel::{Pool, CHECK_ROWS};
use rayon::prelude::*;

/// Check that every value is finite (the package-wide rule, docs/definitions.md §1.5 and decision O9).
pub(crate) fn check_finite<X: Score>(arg: &'static str, xs: &[X]) -> Result<()> {
    if let Some((index, &value)) = xs.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(MetricError::NonFinite {
            arg,
            index,
            value: value.to_f64(),
        });
    }
    Ok(())
}

/// [`check_finite`] on the pool's threads: the first value that is not
/// finite found by [`first_non_finite`].
pub(crate) fn check_finite_on<X: Score>(arg: &'static str, xs: &[X], pool: &Pool) -> Result<()> {
    match first_non_finite(xs, pool) {
        Some((index, value)) => Err(MetricError::NonFinite { arg, index, value }),
        None => Ok(()),
    }
}

/// The first value that is not finite, with its index: chunks of
/// [`CHECK_ROWS`] tested whole (a loop with no early exit, which vectorises)
/// on the pool's threads, then the first failing chunk searched.
pub(crate) fn first_non_finite<X: Score>(xs: &[X], pool: &Pool) -> Option<(usize, f64)> {
    let failing = |c: &[X]| !c.iter().fold(true, |ok, &s| ok & s.is_finite());
    let chunk = if pool.parallel_for(xs.len()) {
        pool.install(|| xs.par_chunks(CHECK_ROWS).position_first(failing))
    } else {
        xs.chunks(CHECK_ROWS).position(failing)
    }?;
    let start = chunk * CHECK_ROWS;
    let at = start + xs.get(start..)?.iter().position(|s| !s.is_finite())?;
    xs.get(at).map(|s| (at, s.to_f64()))
}

/// A power of two `s` such that `total * s` lies in [0.5, 1) (1 for a total
/// of 0): multiplying every weight by it changes no ratio and keeps every
/// product of two weight sums inside the float64 range. A subnormal total
/// (weights of 1e-320) is lifted by 2^1023, the largest power of two, into
/// the normal range: scaling by a power of two is exact there, so the
/// weights' ratios, and the metrics, are those of the unscaled weights.
pub(crate) fn weight_scale(total: f64) -> f64 {
    if total.is_nan() || total <= 0.0 || total.is_infinite() {
        return 1.0;
    }
    // total = m * 2^e with m in [0.5, 1): s = 2^-e, split in two factors so
    // that neither overflows (e ranges over -1073..=1024).
    let bits = total.to_bits();
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let e = if biased == 0 {
        // subnormal: find the exponent from the leading bit of the mantissa
        #[allow(clippy::cast_possible_wrap)]
        let lz = (bits << 12).leading_zeros() as i32;
        -1022 - lz
    } else {
        biased - 1022
    };
    let shift = (-e).min(1023);
    let half = shift / 2;
    2f64.powi(half) * 2f64.powi(shift - half)
}

/// Check weights: one per row of `rows` (`n` of them), finite and >= 0.
pub(crate) fn check_weights(w: &[f64], n: usize, rows: &'static str) -> Result<()> {
    same_length("sample_weight", Some(w.len()), rows, n)?;
    let valid = |x: &f64| (0.0..f64::INFINITY).contains(x);
    if let Some((index, &value)) = w.iter().enumerate().find(|(_, x)| !valid(x)) {
        return Err(MetricError::InvalidWeight {
            index,
            value,
            count: w.iter().filter(|x| !valid(x)).count(),
        });
    }
    Ok(())
}

/// What a walk computes beyond the pair counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Curves {
    /// The pair counts alone (the curve terms are NaN).
    Off,
    /// The average precision too (the other curve terms are NaN): without
    /// weights, a precision per tie group holding positives only.
    Precision,
    /// DeLong's placements alone (the other curve terms NaN): without
    /// weights, their squared sums in exact integers by the branch-free pair
    /// walk, so the variance costs little more than the AUROC.
    Placements,
    /// Every curve term: AP, the PR trapezoid, AURC and DeLong's placements.
    All,
}

impl From<bool> for Curves {
    fn from(all: bool) -> Self {
        if all {
            Curves::All
        } else {
            Curves::Off
        }
    }
}

/// Tie-grouped walk over the scores from the highest to the lowest: what
/// every binary ranking metric is derived from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BinaryRanking {
    /// Rows with a positive (correct) outcome, and the others.
    pub n_pos: u64,
    pub n_neg: u64,
    /// Their total weights (the counts without weights).
    pub w_pos: f64,
    pub w_neg: f64,
    /// Exact pair counts without weights: (positive, negative) pairs with
    /// the positive scored lower (reversed), tied, and higher.
    pub reversed: u128,
    pub tied: u128,
    pub ordered: u128,
    /// The share of all (positive, negative) pairs that are reversed, tied
    /// and ordered, pairs weighted by `w_i w_j` when weights are given (the
    /// three sums are accumulated separately, so each share lies in [0, 1]);
    /// NaN when there is no such pair (or their weight is 0).
    pub reversed_share: f64,
    pub tied_share: f64,
    pub ordered_share: f64,
    /// Average precision (sklearn, no interpolation); NaN without positives.
    pub average_precision: f64,
    /// Trapezoidal area under the precision-recall curve from (0, 1) to the
    /// first point of full recall (sklearn `auc(recall, precision)`).
    pub aupr_trapezoid: f64,
    /// Area under the risk-coverage curve: `sum_k (cov_k - cov_{k-1}) risk_k`
    /// over tie groups, risk = weight of negatives / weight covered.
    pub aurc: f64,
    /// Distinct score values.
    pub n_thresholds: u64,
    /// DeLong's placements, with `curves` (NaN without): the sum over positive
    /// rows of `V10^2`, `V10` the share of negatives scored below the row (ties
    /// count half), and over negative rows of `V01^2`, `V01` the share of
    /// positives scored above (ties half); with weights, shares of weight and
    /// sums weighted by the rows' weights. With the AUROC (the mean of either
    /// placement) they give DeLong's variance.
    pub placement_pos_sq: f64,
    pub placement_neg_sq: f64,
}

/// A binary outcome and a score of the same length, with some rows.
///
/// # Errors
/// [`MetricError::LengthMismatch`] or [`MetricError::Empty`].
pub(crate) fn check_pair(positive: &[bool], n: usize) -> Result<()> {
    same_length("y_true", Some(positive.len()), "y_score", n)?;
    ensure!(n > 0, MetricError::Empty { arg: "y_score" });
    Ok(())
}

/// The totals of the rows; weights must not sum to 0 or overflow.
pub(crate) fn totals_of(positive: &[bool], weight: Option<&[f64]>, n_pos: u64) -> Result<Totals> {
    let n_neg = positive.len() as u64 - n_pos;
    #[allow(clippy::cast_precision_loss)]
    let (w_pos, w_neg) = match weight {
        None => (n_pos as f64, n_neg as f64),
        Some(w) => {
            let (mut a, mut b) = (0.0_f64, 0.0_f64);
            for (&p, &x) in positive.iter().zip(w) {
                if p {
                    a += x;
                } else {
                    b += x;
                }
            }
            (a, b)
        }
    };
    ensure!(
        (w_pos + w_neg).is_finite(),
        MetricError::WeightRange {
            what: "the sum of sample_weight"
        }
    );
    ensure!(w_pos + w_neg > 0.0, MetricError::ZeroWeightSum);
    Ok(Totals {
        n_pos,
        n_neg,
        w_pos,
        w_neg,
    })
}

/// Row totals of each outcome.
#[derive(Clone, Copy)]
pub(crate) struct Totals {
    pub(crate) n_pos: u64,
    pub(crate) n_neg: u64,
    pub(crate) w_pos: f64,
    pub(crate) w_neg: f64,
}

impl Totals {
    /// The totals of unweighted rows: the weight sums are the counts.
    #[allow(clippy::cast_precision_loss)]
    pub(crate) fn counted(n_pos: u64, n_neg: u64) -> Self {
        Self {
            n_pos,
            n_neg,
            w_pos: n_pos as f64,
            w_neg: n_neg as f64,
        }
    }
}

/// The shares of exact pair counts (NaN without pairs).
#[allow(clippy::cast_precision_loss)]
pub(super) fn count_shares(reversed: u128, tied: u128, ordered: u128) -> (f64, f64, f64) {
    let all = reversed + tied + ordered;
    if all == 0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let all = all as f64;
    (
        reversed as f64 / all,
        tied as f64 / all,
        ordered as f64 / all,
    )
}
