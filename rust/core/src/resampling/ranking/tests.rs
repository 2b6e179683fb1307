//! The Poisson walks of the ranking metrics against O(n^2) pair counts and
//! plain threshold loops, on any thread count.

use super::*;
use crate::random::weight_of as weight;

#[test]
fn replicates_equal_a_weighted_pair_count_on_any_thread_count() {
    // One group of sixteen replicates in 97 tie groups; then three groups
    // (split unevenly between threads) over 251 values of 300 rows, most
    // of them alone in their tie group.
    against_pair_counts(3000, 7, 97);
    against_pair_counts(300, 40, 251);
}

#[test]
fn runs_of_rows_alone_and_tie_groups_across_tiles() {
    // A fifth of the rows tied to 13 values, the rest alone: the sorted
    // rows alternate runs of each kind, across two tile boundaries.
    let n = 8500;
    let score: Vec<f64> = (0..n)
        .map(|i| {
            if i % 5 == 0 {
                (i % 13) as f64 / 13.0 + 0.5 / n as f64
            } else {
                ((i * 7919) % n) as f64 / n as f64
            }
        })
        .collect();
    against_pair_counts_of(&score, 2);
}

#[test]
fn whole_tiles_of_rows_alone_count_as_the_float_walk() {
    // Distinct scores over three tiles and a bit: runs of a whole tile
    // counted in integers, against the float walk of the curves.
    let n = 3 * TILE + 5;
    let score: Vec<f64> = (0..n).map(|i| ((i * 7919) % n) as f64).collect();
    let positive: Vec<bool> = (0..n).map(|i| (i * 31 + i / 7) % 3 == 0).collect();
    let run = |curves| {
        let pool = Pool::new(2);
        replicate_ranking(
            &positive,
            &score,
            None,
            RowIds::From(0),
            5,
            40,
            curves,
            &pool,
        )
        .unwrap()
    };
    let (flat, full) = (run(false), run(true));
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    assert_eq!(bits(&flat.auroc), bits(&full.auroc));
    assert_eq!(bits(&flat.w_pos), bits(&full.w_pos));
    assert_eq!(bits(&flat.w_neg), bits(&full.w_neg));
    assert!(flat.auroc.iter().all(|&a| a > 0.3 && a < 0.7));
}

fn against_pair_counts(n: usize, n_resamples: usize, values: usize) {
    let score: Vec<f64> = (0..n)
        .map(|i| ((i * 7919) % values) as f64 / values as f64)
        .collect();
    against_pair_counts_of(&score, n_resamples);
}

fn against_pair_counts_of(score: &[f64], n_resamples: usize) {
    let n = score.len();
    let positive: Vec<bool> = (0..n).map(|i| (i * 31 + i / 7) % 3 == 0).collect();
    let run = |curves, pool: &Pool| {
        replicate_ranking(
            &positive,
            score,
            None,
            RowIds::From(10),
            3,
            n_resamples,
            curves,
            pool,
        )
        .unwrap()
    };
    let got = run(true, &Pool::sequential());
    for b in 0..n_resamples {
        let w: Vec<f64> = (0..n).map(|i| weight(3, 10 + i as u64, b)).collect();
        let (mut num, mut p, mut q) = (0.0, 0.0, 0.0);
        for i in 0..n {
            if positive[i] {
                p += w[i];
            } else {
                q += w[i];
                continue;
            }
            for j in 0..n {
                if !positive[j] {
                    let pair = w[i] * w[j];
                    if score[i] > score[j] {
                        num += pair;
                    } else if score[i] == score[j] {
                        num += 0.5 * pair;
                    }
                }
            }
        }
        let want = num / (p * q);
        assert!(
            (got.auroc[b] - want).abs() < 1e-12,
            "{b}: {} against {want}",
            got.auroc[b]
        );
        // The tied share and the risk-coverage area, threshold by threshold.
        let (mut tied, mut area) = (0.0, 0.0);
        let mut values: Vec<f64> = score.to_vec();
        values.sort_by(|a, b| b.total_cmp(a));
        values.dedup();
        for &v in &values {
            let (mut gp, mut gn, mut tp, mut fp) = (0.0, 0.0, 0.0, 0.0);
            for i in 0..n {
                let wi = w[i];
                if score[i] >= v {
                    if positive[i] {
                        tp += wi;
                    } else {
                        fp += wi;
                    }
                }
                if score[i] == v {
                    if positive[i] {
                        gp += wi;
                    } else {
                        gn += wi;
                    }
                }
            }
            tied += gp * gn;
            if gp + gn > 0.0 {
                area += (gp + gn) * fp / (tp + fp);
            }
        }
        assert!((got.tied_share[b] - tied / (p * q)).abs() < 1e-12);
        assert!((got.aurc[b] - area / (p + q)).abs() < 1e-12, "{b}: aurc");
    }
    for threads in [2, 3, 5, 8] {
        let other = run(true, &Pool::new(threads));
        assert_eq!(other, got, "{threads} threads");
    }
    // Without the curves the runs of rows alone are counted in integers
    // (`Walks::singles_counted`): the float walk's AUROC, tied share and
    // side weights to the bit, on any thread count.
    let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    for threads in [1, 3] {
        let flat = run(false, &Pool::new(threads));
        assert_eq!(bits(&flat.auroc), bits(&got.auroc), "{threads} threads");
        assert_eq!(bits(&flat.tied_share), bits(&got.tied_share));
        assert_eq!(bits(&flat.w_pos), bits(&got.w_pos));
        assert_eq!(bits(&flat.w_neg), bits(&got.w_neg));
        assert!(flat.average_precision.iter().all(|v| v.is_nan()));
    }
}
