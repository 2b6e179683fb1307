//! The one-pass probability kernel against a naive per-row oracle.
#![allow(clippy::unwrap_used, clippy::cast_precision_loss)]

use cmetrics_core::probabilistic::{
    calibration_bin, evaluate_proba, evaluate_proba_groups, ProbOptions, ProbaMatrix,
};
use cmetrics_core::{MetricError, Pool};
use proptest::prelude::*;

mod common;

struct Naive {
    pcm: Vec<f64>,
    counts: Vec<u64>,
    entropy: f64,
    brier: f64,
    log_loss: f64,
    bins: Vec<(f64, f64, f64)>,
}

fn naive(y: &[i32], p: &[f64], w: &[f64], k: usize, n_bins: usize) -> Naive {
    let mut out = Naive {
        pcm: vec![0.0; k * k],
        counts: vec![0; k * k],
        entropy: 0.0,
        brier: 0.0,
        log_loss: 0.0,
        bins: vec![(0.0, 0.0, 0.0); n_bins],
    };
    for (i, &t) in y.iter().enumerate() {
        let t = t as usize;
        let row = &p[i * k..(i + 1) * k];
        let mut top = 0;
        for j in 0..k {
            if row[j] > row[top] {
                top = j;
            }
            out.pcm[t * k + j] += w[i] * row[j];
            out.brier += w[i] * (row[j] - if j == t { 1.0 } else { 0.0 }).powi(2);
            if row[j] > 0.0 {
                out.entropy -= w[i] * row[j] * row[j].ln();
            }
        }
        out.counts[t * k + top] += 1;
        out.log_loss -= w[i] * row[t].clamp(f64::EPSILON, 1.0 - f64::EPSILON).ln();
        // bin m (1-based) holds ((m-1)/M, m/M]
        let conf = row[top];
        let m = (1..=n_bins)
            .find(|&m| conf <= m as f64 / n_bins as f64)
            .unwrap_or(n_bins);
        let b = &mut out.bins[m - 1];
        b.0 += w[i];
        b.1 += w[i] * conf;
        b.2 += if top == t { w[i] } else { 0.0 };
    }
    out
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-10 * b.abs().max(1.0)
}

fn rows(raw: &[u32], k: usize) -> Vec<f64> {
    raw.chunks(k)
        .flat_map(|r| {
            let s: u32 = r.iter().sum::<u32>().max(1);
            let mut v: Vec<f64> = r.iter().map(|&x| f64::from(x) / f64::from(s)).collect();
            if r.iter().all(|&x| x == 0) {
                v[0] = 1.0;
            }
            v
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn accumulators_match_the_naive_oracle(
        k in 1_usize..7,
        n in 1_usize..80,
        seed in prop::collection::vec(0_u32..5, 7 * 80),
        labels in prop::collection::vec(0_i32..7, 80),
        weights in prop::collection::vec(0.0_f64..3.0, 80),
        n_bins in 1_usize..12,
    ) {
        let p = rows(&seed[..n * k], k);
        let y: Vec<i32> = labels[..n].iter().map(|&l| l % k as i32).collect();
        let w = &weights[..n];
        prop_assume!(w.iter().sum::<f64>() > 0.0);
        let opts = ProbOptions { n_bins, ..ProbOptions::default() };
        let got = evaluate_proba(&y, ProbaMatrix::row_major(&p, k), None, Some(w), &opts, &Pool::sequential()).unwrap();
        let want = naive(&y, &p, w, k, n_bins);
        prop_assert_eq!(&got.hard_counts, &want.counts);
        for (a, b) in got.pcm.iter().zip(&want.pcm) {
            prop_assert!(close(*a, *b));
        }
        prop_assert!(close(got.entropy_sum, want.entropy));
        prop_assert!(close(got.brier_sum, want.brier));
        prop_assert!(close(got.log_loss_sum, want.log_loss));
        for (m, b) in want.bins.iter().enumerate() {
            prop_assert!(close(got.bin_weight[m], b.0) && close(got.bin_confidence[m], b.1) && close(got.bin_correct[m], b.2));
        }
        // f32 input: the same values, accumulated in f64.
        let p32: Vec<f32> = p.iter().map(|&x| x as f32).collect();
        let got32 = evaluate_proba(&y, ProbaMatrix::row_major(&p32, k), None, Some(w), &ProbOptions { validate_rows: false, ..opts }, &Pool::sequential()).unwrap();
        prop_assert_eq!(&got32.hard_counts.iter().sum::<u64>(), &(n as u64));
    }
}

#[test]
fn bin_edges_follow_the_definitions() {
    // M = 10: edges m/10 close their bin; 0 is in the first bin; 1.0 in the last.
    assert_eq!(calibration_bin(0.0, 10), 0);
    assert_eq!(calibration_bin(0.1, 10), 0);
    assert_eq!(calibration_bin(0.3, 10), 2);
    assert_eq!(calibration_bin(0.5, 10), 4);
    assert_eq!(calibration_bin(0.500_000_000_000_000_1, 10), 5);
    assert_eq!(calibration_bin(1.0, 10), 9);
    // 0.1 + 0.2 = 0.30000000000000004 > 3/10: bin 4 (docs/definitions.md §7.3).
    assert_eq!(calibration_bin(0.1 + 0.2, 10), 3);
    for m in 1..=15 {
        let edge = m as f64 / 15.0;
        assert_eq!(calibration_bin(edge, 15), m - 1);
    }
}

#[test]
fn threads_and_float32_give_identical_bits() {
    let k = 5;
    let n = 700_000;
    let mut word = common::xorshift(7);
    let mut next = || (word() >> 40) as u32 % 100;
    let raw: Vec<u32> = (0..n * k).map(|_| next()).collect();
    let p: Vec<f32> = rows(&raw, k).iter().map(|&v| v as f32).collect();
    let y: Vec<i32> = (0..n).map(|_| (next() % 5) as i32).collect();
    let w: Vec<f64> = (0..n).map(|_| f64::from(next()) / 7.0).collect();
    let opts = ProbOptions {
        keep_confidence: true,
        ..ProbOptions::default()
    };
    let base = evaluate_proba(
        &y,
        ProbaMatrix::row_major(&p, k),
        None,
        Some(&w),
        &opts,
        &Pool::sequential(),
    )
    .unwrap();
    for threads in [2, 3, 8] {
        let got = evaluate_proba(
            &y,
            ProbaMatrix::row_major(&p, k),
            None,
            Some(&w),
            &opts,
            &Pool::new(threads),
        )
        .unwrap();
        assert_eq!(got, base, "{threads} threads");
    }
    // The same values as f64 give the same bits as f32 input (exact widening).
    let p64: Vec<f64> = p.iter().map(|&v| f64::from(v)).collect();
    let got = evaluate_proba(
        &y,
        ProbaMatrix::row_major(&p64, k),
        None,
        Some(&w),
        &opts,
        &Pool::new(2),
    )
    .unwrap();
    assert_eq!(got, base);
}

#[test]
fn invalid_inputs_are_reported_with_their_row() {
    let opts = ProbOptions::default();
    let pool = Pool::sequential();
    let y = [0_i32, 1];
    let bad = |p: &[f64]| {
        evaluate_proba(&y, ProbaMatrix::row_major(p, 2), None, None, &opts, &pool).unwrap_err()
    };
    assert!(matches!(
        bad(&[0.5, 0.5, f64::NAN, 1.0]),
        MetricError::InvalidProbability { row: 1, col: 0, .. }
    ));
    assert!(matches!(
        bad(&[0.5, 0.5, -0.1, 1.1]),
        MetricError::InvalidProbability { row: 1, col: 0, .. }
    ));
    assert!(matches!(
        bad(&[0.5, 0.6, 0.5, 0.5]),
        MetricError::RowSum { row: 0, .. }
    ));
    assert!(matches!(bad(&[0.5, 0.5, 0.5]), MetricError::Shape { .. }));
    let e = evaluate_proba(
        &[0_i32, 2],
        ProbaMatrix::row_major(&[0.5, 0.5, 0.5, 0.5], 2),
        None,
        None,
        &opts,
        &pool,
    )
    .unwrap_err();
    assert!(matches!(
        e,
        MetricError::LabelOutOfRange {
            row: 1,
            value: 2,
            ..
        }
    ));
    let e = evaluate_proba(
        &y,
        ProbaMatrix::row_major(&[0.5, 0.5, 0.5, 0.5], 2),
        None,
        Some(&[1.0, -1.0]),
        &opts,
        &pool,
    )
    .unwrap_err();
    assert!(matches!(e, MetricError::InvalidWeight { index: 1, .. }));
    let lenient = ProbOptions {
        validate_rows: false,
        ..opts
    };
    assert!(evaluate_proba(
        &y,
        ProbaMatrix::row_major(&[0.5, 0.6, 0.5, 0.5], 2),
        None,
        None,
        &lenient,
        &pool
    )
    .is_ok());
    // Column-major input reports the same row and column: row 1 = (NaN, 1.0) stored as columns.
    let cols = [0.5, f64::NAN, 0.5, 1.0];
    assert!(matches!(
        evaluate_proba(
            &y,
            ProbaMatrix::column_major(&cols, 2),
            None,
            None,
            &opts,
            &pool
        )
        .unwrap_err(),
        MetricError::InvalidProbability { row: 1, col: 0, .. }
    ));
}

/// A small seeded generator of 24-bit values (the high bits of xorshift64), for inputs
/// larger than proptest should shrink.
fn xorshift24(seed: u64) -> impl FnMut() -> u32 {
    let mut word = common::xorshift(seed | 1);
    move || (word() >> 40) as u32
}

fn near(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-13 * b.abs().max(1.0)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    /// The SIMD kernels chosen at run time agree with the portable code:
    /// counts, pCM, bins and confidences bit for bit, the log sums to rounding.
    #[test]
    fn simd_and_portable_paths_agree(
        k in 2_usize..20,
        n in 1_usize..3000,
        seed in any::<u64>(),
        weighted in any::<bool>(),
        use_f32 in any::<bool>(),
    ) {
        let mut next = xorshift24(seed);
        // Sparse rows (many zeros) exercise the 0 ln 0 = 0 convention.
        let raw: Vec<u32> = (0..n * k).map(|_| { let v = next() % 40; if v < 15 { 0 } else { v } }).collect();
        let p = rows(&raw, k);
        let y: Vec<i32> = (0..n).map(|_| (next() as usize % k) as i32).collect();
        let w: Vec<f64> = (0..n).map(|_| f64::from(next() % 1000) / 100.0).collect();
        let w = weighted.then_some(&w[..]);
        let opts = ProbOptions { keep_confidence: true, ..ProbOptions::default() };
        let portable = ProbOptions { portable: true, ..opts };
        let pool = Pool::sequential();
        let (fast, slow) = if use_f32 {
            let p32: Vec<f32> = p.iter().map(|&v| v as f32).collect();
            let o = ProbOptions { validate_rows: false, ..opts };
            let po = ProbOptions { validate_rows: false, ..portable };
            (evaluate_proba(&y, ProbaMatrix::row_major(&p32, k), None, w, &o, &pool).unwrap(), evaluate_proba(&y, ProbaMatrix::row_major(&p32, k), None, w, &po, &pool).unwrap())
        } else {
            (evaluate_proba(&y, ProbaMatrix::row_major(&p, k), None, w, &opts, &pool).unwrap(), evaluate_proba(&y, ProbaMatrix::row_major(&p, k), None, w, &portable, &pool).unwrap())
        };
        prop_assert_eq!(&fast.hard_counts, &slow.hard_counts);
        prop_assert_eq!(&fast.hard_weighted, &slow.hard_weighted);
        prop_assert_eq!(&fast.pcm, &slow.pcm);
        prop_assert_eq!(&fast.bin_weight, &slow.bin_weight);
        prop_assert_eq!(&fast.bin_confidence, &slow.bin_confidence);
        prop_assert_eq!(&fast.bin_correct, &slow.bin_correct);
        prop_assert_eq!(&fast.confidence, &slow.confidence);
        prop_assert_eq!(&fast.correct, &slow.correct);
        prop_assert!(near(fast.entropy_sum, slow.entropy_sum), "{} {}", fast.entropy_sum, slow.entropy_sum);
        prop_assert!(near(fast.brier_sum, slow.brier_sum));
        prop_assert!(near(fast.log_loss_sum, slow.log_loss_sum));
    }
}

/// `p` (row-major, `k` columns) laid out column by column.
fn transpose<T: Copy>(p: &[T], k: usize) -> Vec<T> {
    let n = p.len() / k;
    (0..k)
        .flat_map(|j| (0..n).map(move |i| p[i * k + j]))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(40))]

    /// Column-major input gives the same bits as row-major input, on every
    /// path (portable and SIMD, f32 and f64, weights, y_pred, 1 or 3 threads),
    /// across chunk and block boundaries.
    #[test]
    fn column_major_gives_the_same_bits(
        k in 1_usize..20,
        n in 1_usize..70_000,
        seed in any::<u64>(),
        weighted in any::<bool>(),
        with_pred in any::<bool>(),
        use_f32 in any::<bool>(),
        portable in any::<bool>(),
        threads in prop_oneof![Just(1_usize), Just(3)],
    ) {
        let mut next = xorshift24(seed);
        let raw: Vec<u32> = (0..n * k).map(|_| next() % 50).collect();
        let p = rows(&raw, k);
        let y: Vec<i32> = (0..n).map(|_| (next() as usize % k) as i32).collect();
        let yp: Vec<i32> = (0..n).map(|_| (next() as usize % k) as i32).collect();
        let w: Vec<f64> = (0..n).map(|_| f64::from(next() % 1000) / 100.0).collect();
        let w = weighted.then_some(&w[..]);
        let yp = with_pred.then_some(&yp[..]);
        let opts = ProbOptions { keep_confidence: true, portable, validate_rows: !use_f32, ..ProbOptions::default() };
        let pool = Pool::new(threads);
        let (by_rows, by_cols) = if use_f32 {
            let p32: Vec<f32> = p.iter().map(|&v| v as f32).collect();
            let c32 = transpose(&p32, k);
            (evaluate_proba(&y, ProbaMatrix::row_major(&p32, k), yp, w, &opts, &pool).unwrap(),
             evaluate_proba(&y, ProbaMatrix::column_major(&c32, k), yp, w, &opts, &pool).unwrap())
        } else {
            let c = transpose(&p, k);
            (evaluate_proba(&y, ProbaMatrix::row_major(&p, k), yp, w, &opts, &pool).unwrap(),
             evaluate_proba(&y, ProbaMatrix::column_major(&c, k), yp, w, &opts, &pool).unwrap())
        };
        prop_assert_eq!(by_rows, by_cols);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(60))]

    /// Every subset of the options (the lean pCM path included), weighted or
    /// not, gives the same bits as the full pass for what it computes.
    #[test]
    fn every_option_subset_agrees_with_the_full_pass(
        k in 1_usize..20,
        n in 1_usize..3000,
        seed in any::<u64>(),
        portable in any::<bool>(),
        column_major in any::<bool>(),
    ) {
        let mut next = xorshift24(seed);
        let raw: Vec<u32> = (0..n * k).map(|_| { let v = next() % 40; if v < 10 { 0 } else { v } }).collect();
        let p = rows(&raw, k);
        let y: Vec<i32> = (0..n).map(|_| (next() as usize % k) as i32).collect();
        let weights: Vec<f64> = (0..n).map(|_| f64::from(next() % 1000 + 1) / 100.0).collect();
        let cols = transpose(&p, k);
        let matrix = if column_major { ProbaMatrix::column_major(&cols, k) } else { ProbaMatrix::row_major(&p, k) };
        let pool = Pool::sequential();
        let full = ProbOptions { portable, ..ProbOptions::default() };
        for mask in 0..32_u32 {
            let [hard, scores, entropy, bins, weighted] = [0, 1, 2, 3, 4].map(|b| mask >> b & 1 == 1);
            let w = weighted.then_some(&weights[..]);
            let subset = ProbOptions { hard, scores, entropy, n_bins: if bins { 15 } else { 0 }, ..full };
            let all = evaluate_proba(&y, matrix, None, w, &full, &pool).unwrap();
            let got = evaluate_proba(&y, matrix, None, w, &subset, &pool).unwrap();
            prop_assert_eq!(&got.pcm, &all.pcm, "mask {}", mask);
            prop_assert_eq!(&got.true_count, &all.true_count);
            prop_assert_eq!(&got.true_weight, &all.true_weight);
            prop_assert_eq!(got.weight_sum, all.weight_sum);
            if hard {
                prop_assert_eq!(&got.hard_counts, &all.hard_counts);
                prop_assert_eq!(&got.hard_weighted, &all.hard_weighted);
            } else {
                prop_assert!(got.hard_counts.iter().all(|&c| c == 0));
            }
            let want_entropy = if entropy { all.entropy_sum } else { 0.0 };
            prop_assert_eq!(got.entropy_sum, want_entropy, "mask {}", mask);
            if scores {
                prop_assert_eq!(got.brier_sum, all.brier_sum);
                prop_assert_eq!(got.log_loss_sum, all.log_loss_sum);
            }
            if bins {
                prop_assert_eq!(&got.bin_weight, &all.bin_weight);
                prop_assert_eq!(&got.bin_count, &all.bin_count);
                prop_assert_eq!(&got.bin_correct, &all.bin_correct);
            }
        }
    }
}

#[test]
fn groups_side_by_side_equal_each_group_alone() {
    let (n, k) = (5_000_usize, 4_usize);
    let mut x = 99_u64;
    let mut next = || {
        x = x.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
        (x >> 33) as f64 / f64::from(1_u32 << 31)
    };
    let mut p = Vec::with_capacity(n * k);
    for _ in 0..n {
        let row: Vec<f64> = (0..k).map(|_| next() + 0.01).collect();
        let s: f64 = row.iter().sum();
        p.extend(row.iter().map(|v| v / s));
    }
    let y: Vec<i32> = (0..n).map(|i| (i % k) as i32).collect();
    let w: Vec<f64> = (0..n).map(|_| next() + 0.5).collect();
    let offsets: Vec<i64> = vec![0, 1, 700, 701, 3_000, 5_000];
    let opts = ProbOptions {
        keep_confidence: true,
        ..ProbOptions::default()
    };
    for threads in [1, 2, 3] {
        let pool = Pool::new(threads).with_min_parallel(1);
        for weight in [None, Some(&w[..])] {
            let got = evaluate_proba_groups(
                &y,
                ProbaMatrix::row_major(&p, k),
                None,
                weight,
                &opts,
                &offsets,
                &pool,
            )
            .unwrap();
            assert_eq!(got.len(), offsets.len() - 1);
            for (g, acc) in got.iter().enumerate() {
                let (lo, hi) = (offsets[g] as usize, offsets[g + 1] as usize);
                let alone = evaluate_proba(
                    &y[lo..hi],
                    ProbaMatrix::row_major(&p[lo * k..hi * k], k),
                    None,
                    weight.map(|w| &w[lo..hi]),
                    &opts,
                    &Pool::sequential(),
                )
                .unwrap();
                assert_eq!(acc, &alone, "group {g}, {threads} threads");
            }
        }
    }
    let pool = Pool::sequential();
    for bad in [vec![0, 700, 700, 5_000], vec![0, 4_999], vec![1, 5_000]] {
        assert!(evaluate_proba_groups(
            &y,
            ProbaMatrix::row_major(&p, k),
            None,
            None,
            &opts,
            &bad,
            &pool
        )
        .is_err());
    }
    let columns = ProbaMatrix::column_major(&p, k);
    assert!(evaluate_proba_groups(&y, columns, None, None, &opts, &offsets, &pool).is_err());
}

/// Two columns and nothing but the checks and pCM (the pass the bootstrap of
/// binary probabilities makes, on its own row loop under AVX-512): the pCM
/// and class counts of the full pass bit for bit, on one thread and two, and
/// the same first bad row as the full pass for a row off 1 and an entry
/// below 0.
#[test]
fn two_column_checks_equal_the_full_pass() {
    let n = 70_000;
    let mut next = xorshift24(5);
    let y: Vec<i64> = (0..n).map(|_| i64::from(next() % 2)).collect();
    let p: Vec<f64> = (0..n)
        .flat_map(|_| {
            let a = f64::from(next() % 1001) / 1000.0;
            [1.0 - a, a]
        })
        .collect();
    let lean = ProbOptions {
        hard: false,
        scores: false,
        entropy: false,
        n_bins: 0,
        ..ProbOptions::default()
    };
    let full = ProbOptions::default();
    for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(0)] {
        let m = ProbaMatrix::row_major(&p, 2);
        let got = evaluate_proba(&y, m, None, None, &lean, &pool).unwrap();
        let all = evaluate_proba(&y, m, None, None, &full, &pool).unwrap();
        assert_eq!(got.pcm, all.pcm);
        assert_eq!(got.true_count, all.true_count);
        for (at, bad) in [(4_321, [0.5, 0.6]), (65_537, [-0.25, 1.25])] {
            let mut q = p.clone();
            q[2 * at..2 * at + 2].copy_from_slice(&bad);
            let m = ProbaMatrix::row_major(&q, 2);
            let a = evaluate_proba(&y, m, None, None, &lean, &pool).unwrap_err();
            let b = evaluate_proba(&y, m, None, None, &full, &pool).unwrap_err();
            assert_eq!(a.to_string(), b.to_string());
            assert!(a.to_string().contains(&at.to_string()), "{a}");
        }
    }
}

/// Rows whose maximum is a zero of either sign (accepted when rows are not
/// checked to sum to 1) keep the portable row's confidence to the sign bit on
/// every row kernel and width, beside ordinary rows, in f32 and f64.
#[test]
fn signed_zero_maxima_keep_the_portable_bits() {
    for k in [3_usize, 8, 10, 12, 16] {
        let mut p: Vec<f64> = Vec::new();
        for r in 0..40 {
            let row: Vec<f64> = match r % 4 {
                0 => vec![-0.0; k],
                1 => (0..k)
                    .map(|j| if (j + r) % 2 == 0 { 0.0 } else { -0.0 })
                    .collect(),
                2 => (0..k)
                    .map(|j| if (j + r) % 3 == 0 { -0.0 } else { 0.0 })
                    .collect(),
                _ => (0..k).map(|j| ((j * 7 + r) % 5) as f64 / 10.0).collect(),
            };
            p.extend(row);
        }
        let n = p.len() / k;
        let y: Vec<i32> = (0..n).map(|i| (i % k) as i32).collect();
        let opts = ProbOptions {
            keep_confidence: true,
            validate_rows: false,
            ..ProbOptions::default()
        };
        let pool = Pool::sequential();
        let p32: Vec<f32> = p.iter().map(|&v| v as f32).collect();
        let run = |portable: bool, wide: bool| {
            let o = ProbOptions { portable, ..opts };
            if wide {
                evaluate_proba(&y, ProbaMatrix::row_major(&p, k), None, None, &o, &pool)
            } else {
                evaluate_proba(&y, ProbaMatrix::row_major(&p32, k), None, None, &o, &pool)
            }
            .unwrap()
        };
        let runs = [true, false].map(|wide| (run(false, wide), run(true, wide)));
        for (fast, slow) in runs {
            let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            let (fc, sc) = (fast.confidence.unwrap(), slow.confidence.unwrap());
            assert_eq!(bits(&fc), bits(&sc), "k={k}");
            assert_eq!(fast.correct, slow.correct, "k={k}");
            assert_eq!(bits(&fast.pcm), bits(&slow.pcm), "k={k}");
            assert_eq!(fast.hard_counts, slow.hard_counts, "k={k}");
            assert!(fc.iter().any(|c| c.to_bits() == (-0.0_f64).to_bits()));
        }
    }
}
