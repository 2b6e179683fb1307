//! What the pass accumulates ([`ProbAccumulators`]) and how it is asked to
//! ([`ProbOptions`]), with the calibration bins every chunk shares.

use crate::ranking::BinaryRanking;

/// What [`crate::probabilistic::evaluate_proba`] computes besides the two confusion matrices.
#[derive(Debug, Clone, Copy)]
pub struct ProbOptions {
    /// Check that each row sums to 1 within `atol`.
    pub validate_rows: bool,
    /// Row-sum tolerance (docs/definitions.md §1.5: `1e-6 * K`).
    pub atol: f64,
    /// Accumulate the entropy sum (one log per probability).
    pub entropy: bool,
    /// Accumulate Brier and log-loss sums.
    pub scores: bool,
    /// Number of equal-width calibration bins (0: none).
    pub n_bins: usize,
    /// Return each row's top-label confidence and correctness.
    pub keep_confidence: bool,
    /// Also rank the rows' top-label confidences against their correctness:
    /// the exact walk of [`crate::ranking::binary_ranking`] (curves
    /// included) in [`ProbAccumulators::ranking`]. Without weights, float32
    /// probabilities give the packed sort keys in the pass itself (4 bytes a
    /// row, where the kept confidence and correctness take 9).
    pub rank: bool,
    /// Count the hard confusion matrix (top label or `y_pred`). Without it the
    /// pass skips the argmax: the lean path of `prob_confusion_matrix`.
    pub hard: bool,
    /// Use the portable code only, never the SIMD kernels chosen at run time
    /// (for tests and comparisons; the results agree to rounding).
    pub portable: bool,
}

impl Default for ProbOptions {
    fn default() -> Self {
        Self {
            validate_rows: true,
            atol: f64::NAN,
            entropy: true,
            scores: true,
            n_bins: 15,
            keep_confidence: false,
            rank: false,
            hard: true,
            portable: false,
        }
    }
}

/// Log-loss clipping: f64 machine epsilon, as scikit-learn.
pub const LOG_LOSS_EPS: f64 = f64::EPSILON;

/// Everything the pass accumulates.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbAccumulators {
    /// Number of classes (columns).
    pub k: usize,
    /// Hard confusion counts `k x k` (rows = true, columns = top label or `y_pred`).
    pub hard_counts: Vec<u64>,
    /// Weighted hard matrix when weights were given.
    pub hard_weighted: Option<Vec<f64>>,
    /// Probabilistic confusion matrix `k x k`: `pcm[r, h] = sum_{y_i = r} w_i p_ih`.
    pub pcm: Vec<f64>,
    /// `sum_i w_i H(p_i)` in nats.
    pub entropy_sum: f64,
    /// `sum_i w_i sum_j (p_ij - 1[y_i = j])^2`.
    pub brier_sum: f64,
    /// `sum_i w_i (-ln clip(p_{i, y_i}))`.
    pub log_loss_sum: f64,
    /// `sum_i w_i`.
    pub weight_sum: f64,
    /// Per calibration bin: total weight.
    pub bin_weight: Vec<f64>,
    /// Per bin: weighted sum of top-label confidences.
    pub bin_confidence: Vec<f64>,
    /// Per bin: weighted number of correct top labels.
    pub bin_correct: Vec<f64>,
    /// Per bin: number of rows.
    pub bin_count: Vec<u64>,
    /// Top-label confidence of each row (`keep_confidence`).
    pub confidence: Option<Vec<f64>>,
    /// Whether each row's top label is right (`keep_confidence`).
    pub correct: Option<Vec<bool>>,
    /// The walk of the top-label confidences against correctness (`rank`).
    pub ranking: Option<BinaryRanking>,
    /// Rows per true class (always counted).
    pub true_count: Vec<u64>,
    /// Weight per true class (always summed).
    pub true_weight: Vec<f64>,
}

impl ProbAccumulators {
    pub(super) fn empty(k: usize, bins: usize, weighted: bool) -> Self {
        Self {
            k,
            hard_counts: vec![0; k * k],
            hard_weighted: weighted.then(|| vec![0.0; k * k]),
            pcm: vec![0.0; k * k],
            entropy_sum: 0.0,
            brier_sum: 0.0,
            log_loss_sum: 0.0,
            weight_sum: 0.0,
            bin_weight: vec![0.0; bins],
            bin_confidence: vec![0.0; bins],
            bin_correct: vec![0.0; bins],
            bin_count: vec![0; bins],
            confidence: None,
            correct: None,
            ranking: None,
            true_count: vec![0; k],
            true_weight: vec![0.0; k],
        }
    }

    /// Add another accumulator (the next chunk, in order).
    pub(super) fn absorb(&mut self, o: &Self) {
        add(&mut self.hard_counts, &o.hard_counts);
        if let (Some(a), Some(b)) = (self.hard_weighted.as_mut(), o.hard_weighted.as_ref()) {
            addf(a, b);
        }
        addf(&mut self.pcm, &o.pcm);
        self.entropy_sum += o.entropy_sum;
        self.brier_sum += o.brier_sum;
        self.log_loss_sum += o.log_loss_sum;
        self.weight_sum += o.weight_sum;
        addf(&mut self.bin_weight, &o.bin_weight);
        addf(&mut self.bin_confidence, &o.bin_confidence);
        addf(&mut self.bin_correct, &o.bin_correct);
        add(&mut self.bin_count, &o.bin_count);
        add(&mut self.true_count, &o.true_count);
        addf(&mut self.true_weight, &o.true_weight);
    }
}

pub(super) fn add(a: &mut [u64], b: &[u64]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

pub(super) fn addf(a: &mut [f64], b: &[f64]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

/// The calibration bin (0-based) of a confidence: bin `m` (1-based) holds
/// `((m-1)/M, m/M]`, bin 1 also holds 0; edges are `m / M` in f64 (docs/definitions.md §7.3).
pub fn calibration_bin(conf: f64, n_bins: usize) -> usize {
    bin_of(conf, &bin_edges(n_bins))
}

/// The `M + 1` bin edges `m / M` (correctly rounded divisions, computed once).
#[allow(clippy::cast_precision_loss)]
pub fn bin_edges(n_bins: usize) -> Vec<f64> {
    (0..=n_bins).map(|m| m as f64 / n_bins as f64).collect()
}

/// [`calibration_bin`] with precomputed edges: a first guess from `conf * M`,
/// corrected by at most one step against the exact edges.
#[inline(always)]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
pub(super) fn bin_of(conf: f64, edges: &[f64]) -> usize {
    let n_bins = edges.len().saturating_sub(1).max(1);
    let mf = n_bins as f64;
    let mut m = (conf * mf).ceil().clamp(1.0, mf) as usize;
    let edge = |i: usize| edges.get(i).copied().unwrap_or(f64::INFINITY);
    if m > 1 && conf <= edge(m - 1) {
        m -= 1;
    } else if m < n_bins && conf > edge(m) {
        m += 1;
    }
    m - 1
}

/// The bytes of one chunk's accumulators: the K x K tables (hard counts in
/// u32 lanes and u64, the probabilistic confusion matrix, weighted counts),
/// the per-class counts and the calibration bins.
pub(super) fn accumulator_bytes(k: usize, bins: usize, weighted: bool) -> u128 {
    let (k, bins) = (k as u128, bins as u128);
    let tables = k * k * (4 * 4 + 8 + 8 + if weighted { 8 } else { 0 });
    tables + k * (4 * 8 + 16) + bins * (4 * 32 + 32)
}
