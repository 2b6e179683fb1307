//! Metrics from a matrix against hand-checked values and naive per-sample oracles.
#![allow(clippy::unwrap_used)]

use cmetrics_core::classification::*;
use proptest::prelude::*;

const EPS: f64 = 1e-12;

fn close(a: f64, b: f64) -> bool {
    (a.is_nan() && b.is_nan()) || (a - b).abs() <= EPS * b.abs().max(1.0)
}

/// Expand a k x k integer matrix into (true, pred) rows.
fn rows(c: &[u32], k: usize) -> Vec<(usize, usize)> {
    let mut out = vec![];
    for i in 0..k {
        for j in 0..k {
            for _ in 0..c[i * k + j] {
                out.push((i, j));
            }
        }
    }
    out
}

/// Bookmaker sum of docs/definitions.md §3.2, evaluated per sample.
fn informedness_by_samples(s: &[(usize, usize)], k: usize) -> f64 {
    let n = s.len() as f64;
    let prev: Vec<f64> = (0..k)
        .map(|c| s.iter().filter(|r| r.0 == c).count() as f64 / n)
        .collect();
    let bias: Vec<f64> = (0..k)
        .map(|c| s.iter().filter(|r| r.1 == c).count() as f64 / n)
        .collect();
    s.iter()
        .map(|&(t, p)| {
            if t == p {
                bias[p] / prev[p]
            } else {
                -bias[p] / (1.0 - prev[p])
            }
        })
        .sum::<f64>()
        / n
}

/// MCC as the Pearson correlation of one-hot indicator matrices (Gorodkin).
fn mcc_by_samples(s: &[(usize, usize)], k: usize) -> f64 {
    let n = s.len() as f64;
    let mut cov = [0.0; 3];
    for c in 0..k {
        let x: Vec<f64> = s.iter().map(|r| f64::from(u8::from(r.0 == c))).collect();
        let y: Vec<f64> = s.iter().map(|r| f64::from(u8::from(r.1 == c))).collect();
        let mx = x.iter().sum::<f64>() / n;
        let my = y.iter().sum::<f64>() / n;
        for i in 0..s.len() {
            cov[0] += (x[i] - mx) * (y[i] - my);
            cov[1] += (x[i] - mx) * (x[i] - mx);
            cov[2] += (y[i] - my) * (y[i] - my);
        }
    }
    if cov[1] * cov[2] == 0.0 {
        0.0
    } else {
        cov[0] / (cov[1] * cov[2]).sqrt()
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn informedness_and_mcc_match_per_sample_forms(k in 2_usize..5, cells in prop::collection::vec(0_u32..6, 16)) {
        let c: Vec<u32> = cells[..k * k].to_vec();
        prop_assume!(c.iter().sum::<u32>() > 0);
        let s = rows(&c, k);
        let m: Vec<f64> = c.iter().map(|&x| f64::from(x)).collect();
        let true_classes = (0..k).filter(|&i| (0..k).any(|j| c[i * k + j] > 0)).count();
        let got = informedness(&m, None).unwrap();
        if true_classes < 2 {
            prop_assert!(got.is_nan());
        } else {
            prop_assert!(close(got, informedness_by_samples(&s, k)), "{} vs {}", got, informedness_by_samples(&s, k));
            // The prior equal to the test prevalence reproduces the plain value.
            let n = s.len() as f64;
            let prev: Vec<f64> = (0..k).map(|i| (0..k).map(|j| f64::from(c[i * k + j])).sum::<f64>() / n).collect();
            if prev.iter().all(|&p| p > 0.0 && p < 1.0) {
                prop_assert!(close(informedness(&m, Some(&prev)).unwrap(), got));
            }
        }
        let mcc = matthews_corrcoef(&m).unwrap();
        prop_assert!((mcc - mcc_by_samples(&s, k)).abs() < 1e-9);
        // Markedness is informedness of the transposed table.
        let mut t = vec![0.0; k * k];
        for i in 0..k { for j in 0..k { t[j * k + i] = m[i * k + j]; } }
        let mk = markedness(&m).unwrap();
        let inf_t = informedness(&t, None).unwrap();
        prop_assert!(close(mk, inf_t));
        // MCC^2 = informedness * markedness when both are defined (binary case).
        if k == 2 && !mk.is_nan() && !got.is_nan() {
            prop_assert!((mcc * mcc - got * mk).abs() < 1e-9);
        }
    }
}

#[test]
fn binary_informedness_is_youden_j() {
    // TP=3, FN=1, FP=2, TN=4 with class 1 positive: rows = true [neg, pos].
    let c = [4.0, 2.0, 1.0, 3.0];
    assert!(close(informedness(&c, None).unwrap(), 5.0 / 12.0));
    assert!(close(markedness(&c).unwrap(), 0.4));
    let j = youden_j_per_class(&c).unwrap();
    assert!(close(j[0], 5.0 / 12.0) && close(j[1], 5.0 / 12.0));
}

#[test]
fn constant_predictor_has_zero_informedness_and_nan_markedness() {
    let c = [0.0, 0.0, 5.0, 0.0, 0.0, 3.0, 0.0, 0.0, 2.0];
    assert!(close(informedness(&c, None).unwrap(), 0.0));
    assert!(markedness(&c).unwrap().is_nan());
    assert!(close(matthews_corrcoef(&c).unwrap(), 0.0));
    assert!(cohen_kappa(&c, KappaWeights::Unweighted).unwrap().abs() < 1e-15);
}

#[test]
fn nit_and_ema_known_values() {
    // Perfect on prevalence (1/2, 1/4, 1/4): NIT = 2^1.5 / 3, EMA = 1.
    let c = [2.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
    assert!(close(
        normalized_information_transfer(&c, None).unwrap(),
        2f64.powf(1.5) / 3.0
    ));
    assert!(close(entropy_modulated_accuracy(&c).unwrap(), 1.0));
    // Independent prediction: MI = 0, NIT = 1/k.
    let ind = [1.0, 1.0, 1.0, 1.0];
    assert!(close(
        normalized_information_transfer(&ind, None).unwrap(),
        0.5
    ));
    assert!(close(mutual_information_bits(&ind).unwrap(), 0.0));
}

#[test]
fn prf_from_counts_and_zero_division_marks() {
    let (p, r, f) =
        precision_recall_fbeta(&[0.0, 2.0, 0.0], &[1.0, 3.0, 0.0], &[0.0, 3.0, 1.0], 1.0);
    assert!(p[0].is_nan() && close(p[1], 2.0 / 3.0) && close(p[2], 0.0));
    assert!(close(r[0], 0.0) && r[2].is_nan());
    // F is 0 (not NaN) when only precision is 0/0; NaN only for n = m = 0.
    assert!(close(f[0], 0.0) && close(f[1], 2.0 / 3.0) && close(f[2], 0.0));
    let (_, _, f) = precision_recall_fbeta(&[0.0], &[0.0], &[0.0], 2.0);
    assert!(f[0].is_nan());
}

#[test]
fn balanced_accuracy_adjusted_single_class_is_nan() {
    let c = [3.0, 1.0, 0.0, 0.0];
    let (score, kept) = balanced_accuracy(&c, false).unwrap();
    assert!(close(score, 0.75) && kept == 1);
    assert!(balanced_accuracy(&c, true).unwrap().0.is_nan());
}

#[test]
fn non_square_is_an_error() {
    assert!(accuracy(&[1.0, 2.0, 3.0]).is_err());
    assert!(informedness(&[1.0, 0.0, 0.0, 1.0], Some(&[0.5])).is_err());
    assert!(informedness(&[1.0, 0.0, 0.0, 1.0], Some(&[1.0, 0.0])).is_err());
}
