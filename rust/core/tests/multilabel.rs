//! Multilabel counting against plain loops, at any thread count.
#![allow(clippy::unwrap_used)]

use cmetrics_core::multilabel::multilabel_counts;
use cmetrics_core::Pool;
use proptest::prelude::*;

mod common;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn counts_match_plain_loops(cells in prop::collection::vec((any::<bool>(), any::<bool>()), 1..300), k in 1_usize..6, weighted in any::<bool>()) {
        let n = cells.len() / k;
        prop_assume!(n > 0);
        let t: Vec<bool> = cells.iter().take(n * k).map(|c| c.0).collect();
        let p: Vec<bool> = cells.iter().take(n * k).map(|c| c.1).collect();
        let w: Vec<f64> = (0..n).map(|i| (i % 4) as f64 * 0.5 + 0.25).collect();
        let weight = weighted.then_some(&w[..]);
        for pool in [Pool::sequential(), Pool::new(3).with_min_parallel(1)] {
            let c = multilabel_counts(&t, &p, k, weight, &pool).unwrap();
            for j in 0..k {
                let wt = |i: usize| if weighted { w[i] } else { 1.0 };
                let tp: f64 = (0..n).filter(|&i| t[i * k + j] && p[i * k + j]).map(wt).sum();
                let ts: f64 = (0..n).filter(|&i| t[i * k + j]).map(wt).sum();
                let ps: f64 = (0..n).filter(|&i| p[i * k + j]).map(wt).sum();
                prop_assert!((c.tp[j] - tp).abs() < 1e-9 && (c.true_sum[j] - ts).abs() < 1e-9 && (c.pred_sum[j] - ps).abs() < 1e-9);
            }
            for i in 0..n {
                let row = |m: &[bool]| (0..k).filter(|&j| m[i * k + j]).count() as u32;
                let both = (0..k).filter(|&j| t[i * k + j] && p[i * k + j]).count() as u32;
                prop_assert_eq!((c.row_true[i], c.row_pred[i], c.row_tp[i]), (row(&t), row(&p), both));
            }
        }
    }
}

#[test]
fn sums_do_not_depend_on_the_thread_count() {
    let (n, k) = (700_000, 3);
    let mut next = common::xorshift(88);
    let t: Vec<bool> = (0..n * k).map(|_| next().is_multiple_of(3)).collect();
    let p: Vec<bool> = (0..n * k).map(|_| next().is_multiple_of(2)).collect();
    let w: Vec<f64> = (0..n).map(|_| (next() % 1000) as f64 / 7.0).collect();
    let one = multilabel_counts(&t, &p, k, Some(&w), &Pool::sequential()).unwrap();
    for threads in [2, 3, 8] {
        let many = multilabel_counts(&t, &p, k, Some(&w), &Pool::new(threads)).unwrap();
        assert_eq!(one, many);
    }
}

#[test]
fn bad_shapes_are_errors() {
    let pool = Pool::sequential();
    assert!(multilabel_counts(&[true; 5], &[true; 5], 2, None, &pool).is_err());
    assert!(multilabel_counts(&[true; 4], &[true; 6], 2, None, &pool).is_err());
    assert!(multilabel_counts(&[true; 4], &[true; 4], 0, None, &pool).is_err());
    assert!(multilabel_counts(&[true; 4], &[true; 4], 2, Some(&[1.0, -1.0]), &pool).is_err());
}
