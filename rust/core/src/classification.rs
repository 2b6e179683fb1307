//! Metrics derived from a counted confusion matrix (docs/definitions.md §2 and §3).
//!
//! Every function takes the `k x k` matrix `c` (row-major, rows = true, f64
//! counts or weighted sums) and costs O(k^2) at most. Entries that are 0/0
//! come back as NaN; the Python layer turns them into the `zero_division`
//! value and the warning, identically for both backends. Whole-table metrics
//! return NaN only where docs/definitions.md says "NaN with a warning".
//!
//! The metrics are ratios, so they do not change when every entry is
//! multiplied by one constant (docs/definitions.md §1.3). Each function reads
//! the table multiplied by a power of two that brings its total into
//! [0.5, 1) (`Table`): an exact operation, so the values are those of the
//! raw table wherever the raw arithmetic would not overflow, and no product
//! of sums (MCC, kappa) can overflow or underflow.

use crate::ensure;
use crate::error::{MetricError, Result};

/// Row sums (true counts `n_c`), column sums (predicted counts `m_c`), the
/// diagonal (`tp_c`) and the total `N`.
#[derive(Debug, Clone, PartialEq)]
pub struct Marginals {
    /// `tp_c = C[c, c]`.
    pub tp: Vec<f64>,
    /// `n_c`: row sums (support).
    pub true_sum: Vec<f64>,
    /// `m_c`: column sums.
    pub pred_sum: Vec<f64>,
    /// `N`.
    pub total: f64,
}

fn side(c: &[f64]) -> Result<usize> {
    let k = (c.len() as f64).sqrt().round();
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    let k = k as usize;
    ensure!(
        k * k == c.len() && k > 0,
        MetricError::Shape {
            arg: "confusion matrix",
            detail: format!("{} entries is not a non-empty square", c.len()),
        }
    );
    Ok(k)
}

/// A table read through a power-of-two scale (module docs), with its
/// scaled marginals.
struct Table<'a> {
    c: &'a [f64],
    k: usize,
    scale: f64,
    m: Marginals,
}

impl<'a> Table<'a> {
    fn new(c: &'a [f64]) -> Result<Self> {
        let k = side(c)?;
        let total: f64 = c.iter().sum();
        ensure!(
            total.is_finite(),
            MetricError::WeightRange {
                what: "the total of the confusion matrix"
            }
        );
        let scale = crate::ranking::weight_scale(total);
        let m = sums(c, k, scale);
        Ok(Self { c, k, scale, m })
    }

    fn at(&self, i: usize, j: usize) -> f64 {
        self.c.get(i * self.k + j).copied().unwrap_or(0.0) * self.scale
    }
}

/// The marginals of `c` (not scaled).
///
/// # Errors
/// `Shape` when `c` is not a non-empty square.
pub fn marginals(c: &[f64]) -> Result<Marginals> {
    let k = side(c)?;
    Ok(sums(c, k, 1.0))
}

fn sums(c: &[f64], k: usize, scale: f64) -> Marginals {
    let mut true_sum = vec![0.0; k];
    let mut pred_sum = vec![0.0; k];
    let mut tp = vec![0.0; k];
    for i in 0..k {
        for j in 0..k {
            let v = c.get(i * k + j).copied().unwrap_or(0.0) * scale;
            if let Some(r) = true_sum.get_mut(i) {
                *r += v;
            }
            if let Some(col) = pred_sum.get_mut(j) {
                *col += v;
            }
        }
        if let Some(d) = tp.get_mut(i) {
            *d = c.get(i * k + i).copied().unwrap_or(0.0) * scale;
        }
    }
    let total = true_sum.iter().sum();
    Marginals {
        tp,
        true_sum,
        pred_sum,
        total,
    }
}

fn ratio(num: f64, den: f64) -> f64 {
    if den == 0.0 {
        f64::NAN
    } else {
        num / den
    }
}

/// Per-class precision, recall and F-beta, NaN where 0/0 (docs/definitions.md §2.3).
/// F is computed from counts: `(1 + b^2) tp / (b^2 n + m)`; `beta = inf`
/// gives recall and `beta = 0` precision.
pub fn precision_recall_fbeta(
    tp: &[f64],
    true_sum: &[f64],
    pred_sum: &[f64],
    beta: f64,
) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let precision: Vec<f64> = tp
        .iter()
        .zip(pred_sum)
        .map(|(&t, &m)| ratio(t, m))
        .collect();
    let recall: Vec<f64> = tp
        .iter()
        .zip(true_sum)
        .map(|(&t, &n)| ratio(t, n))
        .collect();
    let f = if beta.is_infinite() {
        recall.clone()
    } else if beta == 0.0 {
        precision.clone()
    } else {
        let b2 = beta * beta;
        tp.iter()
            .zip(true_sum.iter().zip(pred_sum))
            .map(|(&t, (&n, &m))| ratio((1.0 + b2) * t, b2 * n + m))
            .collect()
    };
    (precision, recall, f)
}

/// Accuracy `trace / N`.
///
/// # Errors
/// `Shape` when `c` is not square.
pub fn accuracy(c: &[f64]) -> Result<f64> {
    let m = Table::new(c)?.m;
    Ok(m.tp.iter().sum::<f64>() / m.total)
}

/// Balanced accuracy (docs/definitions.md §2.4): the mean recall over classes with `n_c > 0`,
/// and the number of such classes `K'`. `adjusted` rescales by chance level;
/// with `K' = 1` the adjusted value is NaN (decision O8, docs/definitions.md §9).
///
/// # Errors
/// `Shape` when `c` is not square.
pub fn balanced_accuracy(c: &[f64], adjusted: bool) -> Result<(f64, usize)> {
    let m = Table::new(c)?.m;
    let recalls: Vec<f64> =
        m.tp.iter()
            .zip(&m.true_sum)
            .filter(|(_, &n)| n > 0.0)
            .map(|(&t, &n)| t / n)
            .collect();
    let kept = recalls.len();
    #[allow(clippy::cast_precision_loss)]
    let kf = kept as f64;
    let score = recalls.iter().sum::<f64>() / kf;
    if !adjusted {
        return Ok((score, kept));
    }
    if kept < 2 {
        return Ok((f64::NAN, kept));
    }
    let chance = 1.0 / kf;
    Ok(((score - chance) / (1.0 - chance), kept))
}

/// Multi-class Matthews correlation coefficient (Gorodkin's R_K, docs/definitions.md §2.5);
/// 0.0 when one true or one predicted class makes the denominator vanish.
///
/// # Errors
/// `Shape` when `c` is not square.
pub fn matthews_corrcoef(c: &[f64]) -> Result<f64> {
    let m = Table::new(c)?.m;
    let s = m.total;
    let trace: f64 = m.tp.iter().sum();
    let tp_dot: f64 = m.true_sum.iter().zip(&m.pred_sum).map(|(a, b)| a * b).sum();
    // s^2 - sum x_i^2 written as sum x_i (s - x_i): no cancellation, never
    // negative, and exactly 0 when a single class holds all the mass.
    let spread = |x: &[f64]| -> f64 { x.iter().map(|&v| v * (s - v)).sum() };
    let cov_ytyp = trace * s - tp_dot;
    let cov_ypyp = spread(&m.pred_sum);
    let cov_ytyt = spread(&m.true_sum);
    if cov_ypyp == 0.0 || cov_ytyt == 0.0 {
        return Ok(0.0);
    }
    Ok(cov_ytyp / (cov_ytyt * cov_ypyp).sqrt())
}

/// Disagreement weights of Cohen's kappa.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KappaWeights {
    /// `1 - I`.
    Unweighted,
    /// `|i - j|`.
    Linear,
    /// `(i - j)^2`.
    Quadratic,
}

/// Cohen's kappa as scikit-learn computes it (docs/definitions.md §2.6); NaN when the expected
/// disagreement is 0.
///
/// # Errors
/// `Shape` when `c` is not square.
pub fn cohen_kappa(c: &[f64], weights: KappaWeights) -> Result<f64> {
    let t = Table::new(c)?;
    let (k, m) = (t.k, &t.m);
    let mut num = 0.0;
    let mut den = 0.0;
    for i in 0..k {
        for j in 0..k {
            #[allow(clippy::cast_precision_loss)]
            let diff = (i as f64 - j as f64).abs();
            let w = match weights {
                KappaWeights::Unweighted => {
                    if i == j {
                        0.0
                    } else {
                        1.0
                    }
                }
                KappaWeights::Linear => diff,
                KappaWeights::Quadratic => diff * diff,
            };
            // sklearn: expected = outer(column sums, row sums) / N.
            let expected = m.pred_sum.get(i).copied().unwrap_or(0.0)
                * m.true_sum.get(j).copied().unwrap_or(0.0)
                / m.total;
            num += w * t.at(i, j);
            den += w * expected;
        }
    }
    if den == 0.0 {
        return Ok(f64::NAN);
    }
    Ok(1.0 - num / den)
}

/// Per-class one-vs-rest Youden J `tp/n - fp/(N - n)`, NaN unless `0 < n_c < N`
/// (docs/definitions.md §3.1).
///
/// # Errors
/// `Shape` when `c` is not square.
pub fn youden_j_per_class(c: &[f64]) -> Result<Vec<f64>> {
    let m = Table::new(c)?.m;
    Ok(per_class_j(&m.tp, &m.true_sum, &m.pred_sum, m.total))
}

/// Per-class markedness `tp/m - fn/(N - m)`, NaN unless `0 < m_c < N`.
///
/// # Errors
/// `Shape` when `c` is not square.
pub fn markedness_per_class(c: &[f64]) -> Result<Vec<f64>> {
    let m = Table::new(c)?.m;
    Ok(per_class_j(&m.tp, &m.pred_sum, &m.true_sum, m.total))
}

/// J for "reference" sums `r` and "response" sums `q`: markedness is the same
/// quantity with the roles of the two marginals exchanged.
fn per_class_j(tp: &[f64], r: &[f64], q: &[f64], total: f64) -> Vec<f64> {
    tp.iter()
        .zip(r.iter().zip(q))
        .map(|(&t, (&n, &m))| {
            if n > 0.0 && n < total {
                t / n - (m - t) / (total - n)
            } else {
                f64::NAN
            }
        })
        .collect()
}

/// Powers' bookmaker informedness (docs/definitions.md §3.2): `sum_c B_c (TPR'_c - FPR_c)`;
/// NaN when fewer than two classes occur in the truth. With a training
/// `prior` (docs/definitions.md §3.5) the odds come from the prior instead of the test
/// prevalence; the result may then leave [-1, 1].
///
/// # Errors
/// `Shape` for a non-square matrix or a prior of the wrong length;
/// `InvalidValue` for a prior outside (0, 1) on a predicted class.
pub fn informedness(c: &[f64], prior: Option<&[f64]>) -> Result<f64> {
    let m = Table::new(c)?.m;
    bookmaker(&m.tp, &m.true_sum, &m.pred_sum, m.total, prior)
}

/// Markedness (docs/definitions.md §3.3): informedness with truth and prediction exchanged;
/// NaN when fewer than two classes are predicted.
///
/// # Errors
/// `Shape` when `c` is not square.
pub fn markedness(c: &[f64]) -> Result<f64> {
    let m = Table::new(c)?.m;
    bookmaker(&m.tp, &m.pred_sum, &m.true_sum, m.total, None)
}

fn bookmaker(tp: &[f64], r: &[f64], q: &[f64], total: f64, prior: Option<&[f64]>) -> Result<f64> {
    match prior {
        None => {
            if r.iter().filter(|&&n| n > 0.0).count() < 2 {
                return Ok(f64::NAN);
            }
            let mut acc = 0.0;
            for (&t, (&n, &mm)) in tp.iter().zip(r.iter().zip(q)) {
                if mm == 0.0 {
                    continue;
                }
                let tpr = if n > 0.0 { t / n } else { 0.0 };
                // total - n can round to 0 when the other classes carry
                // negligible weight; every bet on c then hits c, so FPR = 0.
                let fpr = if total - n > 0.0 {
                    (mm - t) / (total - n)
                } else {
                    0.0
                };
                acc += mm / total * (tpr - fpr);
            }
            Ok(acc)
        }
        Some(pi) => {
            ensure!(
                pi.len() == tp.len(),
                MetricError::Shape {
                    arg: "prior",
                    detail: format!("{} entries for {} classes", pi.len(), tp.len()),
                }
            );
            let mut acc = 0.0;
            for (&t, (&mm, &p)) in tp.iter().zip(q.iter().zip(pi)) {
                if mm == 0.0 {
                    continue;
                }
                ensure!(
                    p > 0.0 && p < 1.0,
                    MetricError::InvalidValue {
                        arg: "prior",
                        detail: format!("a predicted class has prior {p}; each must lie strictly between 0 and 1"),
                    }
                );
                let b = mm / total;
                acc += b * (t / (total * p) - (mm - t) / (total * (1.0 - p)));
            }
            Ok(acc)
        }
    }
}

/// Mutual information of truth and prediction in bits (plug-in estimate,
/// `0 log 0 = 0`, clamped at 0 to absorb rounding).
///
/// # Errors
/// `Shape` when `c` is not square.
pub fn mutual_information_bits(c: &[f64]) -> Result<f64> {
    let t = Table::new(c)?;
    let (k, m) = (t.k, &t.m);
    let log_total = m.total.log2();
    let mut mi = 0.0;
    for i in 0..k {
        for j in 0..k {
            let v = t.at(i, j);
            if v > 0.0 {
                // log2(p_ij / (p_i p_j)) from the counts, as a sum of logs:
                // no intermediate product can underflow.
                let r = m.true_sum.get(i).copied().unwrap_or(0.0);
                let q = m.pred_sum.get(j).copied().unwrap_or(0.0);
                mi += v / m.total * (v.log2() + log_total - r.log2() - q.log2());
            }
        }
    }
    Ok(if mi > 0.0 { mi } else { 0.0 })
}

/// Normalized Information Transfer `2^MI / k` (docs/definitions.md §3.6); `k` defaults to the
/// number of classes present in the truth.
///
/// # Errors
/// `Shape` when `c` is not square; `InvalidValue` for `n_classes = 0`.
pub fn normalized_information_transfer(c: &[f64], n_classes: Option<usize>) -> Result<f64> {
    let m = Table::new(c)?.m;
    let k = match n_classes {
        Some(k) => {
            ensure!(
                k > 0,
                MetricError::InvalidValue {
                    arg: "n_classes",
                    detail: "must be a positive integer".into(),
                }
            );
            k
        }
        None => m.true_sum.iter().filter(|&&n| n > 0.0).count(),
    };
    #[allow(clippy::cast_precision_loss)]
    let kf = k as f64;
    Ok(mutual_information_bits(c)?.exp2() / kf)
}

/// Entropy-modulated accuracy `2^-H(X|Y)` (docs/definitions.md §3.6).
///
/// # Errors
/// `Shape` when `c` is not square.
pub fn entropy_modulated_accuracy(c: &[f64]) -> Result<f64> {
    let t = Table::new(c)?;
    let (k, m) = (t.k, &t.m);
    let mut h = 0.0;
    for i in 0..k {
        for j in 0..k {
            let v = t.at(i, j);
            let col = m.pred_sum.get(j).copied().unwrap_or(0.0);
            if v > 0.0 {
                h -= v / m.total * (v.log2() - col.log2());
            }
        }
    }
    // Clamp rounding below 0 (f64::max would also swallow a NaN; none can occur).
    Ok((-(if h > 0.0 { h } else { 0.0 })).exp2())
}
