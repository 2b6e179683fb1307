//! Counting kernels against a naive oracle (a BTreeMap of label pairs).
#![allow(clippy::unwrap_used)]

use std::collections::{BTreeMap, BTreeSet};

use cmetrics_core::labels::{encode_strings, Ucs4};
use cmetrics_core::{confusion_matrix, confusion_matrix_codes, CountOptions, MetricError, Pool};
use proptest::prelude::*;

/// Sorted union of labels and the k x k (count, weight sum) table, computed the obvious way.
fn naive(t: &[i64], p: &[i64], w: Option<&[f64]>) -> (Vec<i64>, Vec<u64>, Vec<f64>) {
    let labels: Vec<i64> = t
        .iter()
        .chain(p)
        .copied()
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let mut cells: BTreeMap<(i64, i64), (u64, f64)> = BTreeMap::new();
    for i in 0..t.len() {
        let e = cells.entry((t[i], p[i])).or_insert((0, 0.0));
        e.0 += 1;
        e.1 += w.map_or(1.0, |w| w[i]);
    }
    let k = labels.len();
    let mut counts = vec![0; k * k];
    let mut sums = vec![0.0; k * k];
    for ((a, b), (c, s)) in cells {
        let i = labels.binary_search(&a).unwrap();
        let j = labels.binary_search(&b).unwrap();
        counts[i * k + j] = c;
        sums[i * k + j] = s;
    }
    (labels, counts, sums)
}

fn close(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| (x - y).abs() <= 1e-9 * x.abs().max(1.0))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn dense_small_labels_match_oracle(pairs in prop::collection::vec((0_i32..12, 0_i32..12), 1..400)) {
        let t: Vec<i32> = pairs.iter().map(|p| p.0).collect();
        let p: Vec<i32> = pairs.iter().map(|p| p.1).collect();
        let got = confusion_matrix(&t, &p, None, &CountOptions::default(), &Pool::sequential()).unwrap();
        let t64: Vec<i64> = t.iter().map(|&x| i64::from(x)).collect();
        let p64: Vec<i64> = p.iter().map(|&x| i64::from(x)).collect();
        let (labels, counts, _) = naive(&t64, &p64, None);
        prop_assert_eq!(got.labels, labels);
        prop_assert_eq!(got.counts, counts);
    }

    #[test]
    fn sparse_and_negative_labels_match_oracle(
        pairs in prop::collection::vec((prop::sample::select(vec![-7_i64, 0, 3, 1_000_000, i64::MAX, i64::MIN]),
                                        prop::sample::select(vec![-7_i64, 0, 3, 1_000_000, 42])), 1..300),
        weights in prop::collection::vec(0.0_f64..5.0, 300),
    ) {
        let t: Vec<i64> = pairs.iter().map(|p| p.0).collect();
        let p: Vec<i64> = pairs.iter().map(|p| p.1).collect();
        let w = &weights[..t.len()];
        let got = confusion_matrix(&t, &p, Some(w), &CountOptions::default(), &Pool::sequential());
        let (labels, counts, sums) = naive(&t, &p, Some(w));
        // Weights summing to 0 are a valid count too (a batch that weighs nothing).
        let got = got.unwrap();
        prop_assert_eq!(got.labels, labels);
        prop_assert_eq!(got.counts, counts);
        prop_assert!(close(got.weighted.as_ref().unwrap(), &sums));
    }
}

/// Deterministic pseudo-random labels (splitmix64), so large inputs need no RNG crate.
fn splitmix(seed: u64, n: usize, modulo: u64) -> Vec<i32> {
    let mut x = seed;
    (0..n)
        .map(|_| {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            i32::try_from((z ^ (z >> 31)) % modulo).unwrap()
        })
        .collect()
}

#[test]
fn thread_count_gives_bit_identical_results() {
    let n = 1_500_000;
    let t = splitmix(1, n, 10);
    let p = splitmix(2, n, 10);
    let w: Vec<f64> = splitmix(3, n, 1000)
        .iter()
        .map(|&x| f64::from(x) * 0.001 + 0.1)
        .collect();
    let base = confusion_matrix(
        &t,
        &p,
        Some(&w),
        &CountOptions::default(),
        &Pool::sequential(),
    )
    .unwrap();
    for threads in [2, 3, 4, 8] {
        let pool = Pool::new(threads);
        let got = confusion_matrix(&t, &p, Some(&w), &CountOptions::default(), &pool).unwrap();
        assert_eq!(got.counts, base.counts);
        let a: Vec<u64> = got.weighted.unwrap().iter().map(|x| x.to_bits()).collect();
        let b: Vec<u64> = base
            .weighted
            .clone()
            .unwrap()
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(a, b, "weighted sums differ at {threads} threads");
        let unweighted = confusion_matrix(&t, &p, None, &CountOptions::default(), &pool).unwrap();
        assert_eq!(unweighted.counts, base.counts);
    }
    assert_eq!(base.counts.iter().sum::<u64>(), n as u64);
}

#[test]
fn range_guess_falls_back_when_a_late_row_is_out_of_range() {
    // The first 2^16 rows only hold 0..3; a label 9 and a negative one come later.
    let n = 200_000;
    let mut t: Vec<i64> = (0..n).map(|i| (i % 3) as i64).collect();
    let mut p = t.clone();
    t[n - 1] = 9;
    p[n - 2] = -4;
    let got = confusion_matrix(&t, &p, None, &CountOptions::default(), &Pool::new(2)).unwrap();
    assert_eq!(got.labels, vec![-4, 0, 1, 2, 9]);
    assert_eq!(got.counts.iter().sum::<u64>(), n as u64);
    let (labels, counts, _) = naive(&t, &p, None);
    assert_eq!(got.labels, labels);
    assert_eq!(got.counts, counts);
}

#[test]
fn invalid_weights_name_the_first_bad_row() {
    let t = vec![0_i32, 1, 1, 0];
    let p = vec![0_i32, 1, 0, 0];
    for (bad, value) in [(2, f64::NAN), (1, -1.0), (3, f64::INFINITY)] {
        let mut w = vec![1.0; 4];
        w[bad] = value;
        match confusion_matrix(
            &t,
            &p,
            Some(&w),
            &CountOptions::default(),
            &Pool::sequential(),
        ) {
            Err(MetricError::InvalidWeight { index, count, .. }) => {
                assert_eq!(index, bad);
                assert_eq!(count, 1);
            }
            other => panic!("expected InvalidWeight, got {other:?}"),
        }
    }
    let zero = confusion_matrix(
        &t,
        &p,
        Some(&[0.0; 4]),
        &CountOptions::default(),
        &Pool::sequential(),
    );
    // A batch that weighs nothing is counted (its rows, no weight); a report of it is
    // refused where the metrics are derived.
    let zero = zero.unwrap();
    assert_eq!(zero.counts, vec![2, 0, 1, 1]);
    assert!(zero.weighted.unwrap().iter().all(|&w| w == 0.0));
}

#[test]
fn shape_errors() {
    let opts = CountOptions::default();
    let pool = Pool::sequential();
    assert!(matches!(
        confusion_matrix::<i32>(&[], &[], None, &opts, &pool),
        Err(MetricError::Empty { .. })
    ));
    assert!(matches!(
        confusion_matrix(&[1_i32, 2], &[1], None, &opts, &pool),
        Err(MetricError::LengthMismatch { .. })
    ));
    assert!(matches!(
        confusion_matrix(&[1_i32, 2], &[1, 2], Some(&[1.0]), &opts, &pool),
        Err(MetricError::LengthMismatch { .. })
    ));
    let many: Vec<i64> = (0..100).map(|i| i * 1_000_003).collect();
    assert!(matches!(
        confusion_matrix(&many, &many, None, &CountOptions { max_classes: 50 }, &pool),
        Err(MetricError::LimitExceeded { .. })
    ));
}

#[test]
fn codes_keep_absent_classes_and_reject_out_of_range() {
    let got = confusion_matrix_codes(&[0_i32, 2], &[2, 2], None, 4, &Pool::sequential()).unwrap();
    assert_eq!(got.labels, vec![0, 1, 2, 3]);
    assert_eq!(got.counts[2], 1);
    assert_eq!(got.counts[2 * 4 + 2], 1);
    assert!(confusion_matrix_codes(&[0_i32, 5], &[1, 1], None, 4, &Pool::sequential()).is_err());
}

#[test]
fn strings_sort_by_code_point_and_share_codes() {
    // "b", "a", "ab", "é" (width 2, zero-padded) against "a", "a", "é", "b".
    let a = [98, 0, 97, 0, 97, 98, 233, 0];
    let b = [97, 97, 233, 98];
    let enc = encode_strings(
        Ucs4 { data: &a, width: 2 },
        Ucs4 { data: &b, width: 1 },
        100,
    )
    .unwrap();
    // sorted: "a" < "ab" < "b" < "é"
    assert_eq!(enc.a, vec![2, 0, 1, 3]);
    assert_eq!(enc.b, vec![0, 0, 3, 2]);
    assert_eq!(enc.first, vec![(0, 1), (0, 2), (0, 0), (0, 3)]);
}
