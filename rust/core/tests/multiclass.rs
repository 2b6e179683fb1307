//! One-vs-rest / one-vs-one walks and threshold curves against naive
//! references: the binary walk on each gathered column, and plain loops.
#![allow(clippy::unwrap_used)]

use cmetrics_core::ranking::{
    binary_ranking, binned_one_vs_rest, class_ranking, grouped_binned_histograms, one_vs_one_auc,
    one_vs_rest, one_vs_rest_of_probabilities, rank_histogram, row_sum_range, threshold_counts,
    Curves, Drop, Matrix, Truth,
};
use cmetrics_core::Pool;
use proptest::prelude::*;

mod common;
use common::xorshift;

/// Naive cumulated counts from the highest score down, then sklearn's drop rule.
fn naive_curve(ok: &[bool], s: &[f64], w: &[f64], drop: Drop) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut values: Vec<f64> = s.to_vec();
    values.sort_by(|a, b| b.partial_cmp(a).unwrap());
    values.dedup();
    let (mut f, mut t) = (Vec::new(), Vec::new());
    for &v in &values {
        let above = |pos: bool| -> f64 {
            (0..s.len())
                .filter(|&i| s[i] >= v && ok[i] == pos)
                .map(|i| w[i])
                .sum()
        };
        f.push(above(false));
        t.push(above(true));
    }
    let m = values.len();
    let keep: Vec<bool> = (0..m)
        .map(|i| {
            if drop == Drop::None || m <= 2 || i == 0 || i == m - 1 {
                return true;
            }
            match drop {
                Drop::Collinear => {
                    (f[i + 1] - f[i]) - (f[i] - f[i - 1]) != 0.0
                        || (t[i + 1] - t[i]) - (t[i] - t[i - 1]) != 0.0
                }
                _ => t[i] != t[i - 1] || t[i + 1] != t[i],
            }
        })
        .collect();
    let pick = |v: &[f64]| -> Vec<f64> { (0..m).filter(|&i| keep[i]).map(|i| v[i]).collect() };
    (pick(&f), pick(&t), pick(&values))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(150))]

    #[test]
    fn curves_match_plain_loops(rows in prop::collection::vec((any::<bool>(), 0_u8..8, 0_u8..3), 1..120), drop in 0_u8..3, weighted in any::<bool>()) {
        let ok: Vec<bool> = rows.iter().map(|r| r.0).collect();
        let s: Vec<f64> = rows.iter().map(|r| f64::from(r.1) / 4.0).collect();
        let w: Vec<f64> = rows.iter().map(|r| if weighted { f64::from(r.2) + 0.5 } else { 1.0 }).collect();
        let drop = [Drop::None, Drop::Collinear, Drop::FlatPositives][drop as usize];
        for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1)] {
            let c = threshold_counts(&ok, &s, weighted.then_some(&w[..]), drop, &pool).unwrap();
            // The kernel gives the points in rising score order.
            let (mut f, mut t, mut v) = naive_curve(&ok, &s, &w, drop);
            f.reverse();
            t.reverse();
            v.reverse();
            prop_assert_eq!(&c.thresholds, &v);
            prop_assert_eq!(&c.fps, &f);
            prop_assert_eq!(&c.tps, &t);
        }
    }

    #[test]
    fn each_column_is_the_binary_walk(codes in prop::collection::vec(0_u32..4, 1..200), seed in any::<u64>(), weighted in any::<bool>()) {
        let n = codes.len();
        let k = 4;
        let mut next = xorshift(seed | 1);
        let scores: Vec<f32> = (0..n * k).map(|_| (next() % 7) as f32 / 6.0).collect();
        let w: Vec<f64> = (0..n).map(|_| (next() % 3) as f64 + 0.25).collect();
        let weight = weighted.then_some(&w[..]);
        let ind: Vec<bool> = (0..n * k).map(|i| next().is_multiple_of(3) || codes[i / k] as usize == i % k).collect();
        for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1)] {
            let m = Matrix { values: &scores, n_cols: k, column_major: false };
            let by_codes = one_vs_rest(Truth::Codes(&codes), m, &[3, 0, 1], weight, true, &pool).unwrap();
            let by_ind = one_vs_rest(Truth::Indicator(&ind), m, &[0, 1, 2, 3], weight, true, &pool).unwrap();
            for (j, &c) in [3_usize, 0, 1].iter().enumerate() {
                let pos: Vec<bool> = codes.iter().map(|&y| y as usize == c).collect();
                let col: Vec<f32> = (0..n).map(|i| scores[i * k + c]).collect();
                prop_assert_eq!(format!("{:?}", by_codes[j]), format!("{:?}", binary_ranking(&pos, &col, weight, true, &pool).unwrap()));
            }
            // The pair counts alone (a walk without curves) are the full walk's,
            // and so is the AP of the walk of the precision alone, to the bit.
            let counts = one_vs_rest(Truth::Codes(&codes), m, &[3, 0, 1], weight, false, &pool).unwrap();
            let precision = one_vs_rest(Truth::Codes(&codes), m, &[3, 0, 1], weight, Curves::Precision, &pool).unwrap();
            for ((a, p), b) in counts.iter().zip(&precision).zip(&by_codes) {
                prop_assert_eq!((a.ordered, a.tied, a.reversed, a.n_thresholds), (b.ordered, b.tied, b.reversed, b.n_thresholds));
                prop_assert_eq!((p.ordered, p.tied, p.reversed, p.n_thresholds), (b.ordered, b.tied, b.reversed, b.n_thresholds));
                prop_assert_eq!(p.average_precision.to_bits(), b.average_precision.to_bits());
                prop_assert!(p.aurc.is_nan() && p.aupr_trapezoid.is_nan() && p.placement_neg_sq.is_nan());
            }
            for c in 0..k {
                let pos: Vec<bool> = (0..n).map(|i| ind[i * k + c]).collect();
                let col: Vec<f32> = (0..n).map(|i| scores[i * k + c]).collect();
                prop_assert_eq!(format!("{:?}", by_ind[c]), format!("{:?}", binary_ranking(&pos, &col, weight, true, &pool).unwrap()));
            }
            // Hand and Till: each pair's two AUROCs from the pair's rows alone, by the binary walk.
            let present: Vec<u32> = (0..4).filter(|c| codes.contains(c)).collect();
            let pairs: Vec<(u32, u32)> = present.iter().flat_map(|&a| present.iter().filter(move |&&b| b > a).map(move |&b| (a, b))).collect();
            let ovo = one_vs_one_auc(&codes, m, &pool).unwrap();
            prop_assert_eq!(ovo.n_pairs, pairs.len() as u64);
            let (mut plain, mut weighted_sum, mut rows_sum) = (0.0, 0.0, 0.0);
            for &(a, b) in &pairs {
                let rows: Vec<usize> = (0..n).filter(|&i| codes[i] == a || codes[i] == b).collect();
                let is_a: Vec<bool> = rows.iter().map(|&i| codes[i] == a).collect();
                let auc = |col: u32, positive: &[bool]| -> f64 {
                    let c: Vec<f32> = rows.iter().map(|&i| scores[i * k + col as usize]).collect();
                    let r = binary_ranking(positive, &c, None, false, &pool).unwrap();
                    let pairs = r.reversed + r.tied + r.ordered;
                    (2 * r.ordered + r.tied) as f64 / (2 * pairs) as f64
                };
                let is_b: Vec<bool> = is_a.iter().map(|&v| !v).collect();
                let value = (auc(a, &is_a) + auc(b, &is_b)) / 2.0;
                plain += value;
                weighted_sum += value * rows.len() as f64;
                rows_sum += rows.len() as f64;
            }
            if pairs.is_empty() {
                prop_assert!(ovo.macro_auc.is_nan() && ovo.weighted_auc.is_nan());
            } else {
                prop_assert!((ovo.macro_auc - plain / pairs.len() as f64).abs() < 1e-12);
                prop_assert!((ovo.weighted_auc - weighted_sum / rows_sum).abs() < 1e-12);
            }
        }
    }
}

#[test]
fn bad_shapes_and_codes_are_errors() {
    let pool = Pool::sequential();
    let s = [0.5_f64; 6];
    let m = Matrix {
        values: &s,
        n_cols: 3,
        column_major: false,
    };
    assert!(one_vs_rest(Truth::Codes(&[0, 3]), m, &[0], None, false, &pool).is_err());
    assert!(one_vs_rest(Truth::Codes(&[0, 1]), m, &[3], None, false, &pool).is_err());
    assert!(one_vs_rest(Truth::Codes(&[0]), m, &[0], None, false, &pool).is_err());
    assert!(one_vs_rest(Truth::Indicator(&[true; 5]), m, &[0], None, false, &pool).is_err());
    let bad = Matrix {
        values: &s[..5],
        n_cols: 3,
        column_major: false,
    };
    assert!(one_vs_rest(Truth::Codes(&[0, 1]), bad, &[0], None, false, &pool).is_err());
    assert!(one_vs_one_auc(&[0, 3], m, &pool).is_err());
    assert!(one_vs_one_auc(&[0, 0], m, &pool).unwrap().n_pairs == 0);
    assert!(one_vs_rest(Truth::Codes(&[0, 1]), m, &[0, 1], None, false, &pool).is_ok());
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(100))]

    #[test]
    fn binned_columns_match_a_plain_histogram(codes in prop::collection::vec(0_u32..3, 1..150), seed in any::<u64>(), weighted in any::<bool>(), bins in 1_u32..20) {
        let (n, k) = (codes.len(), 3);
        let mut next = xorshift(seed | 1);
        let scores: Vec<f64> = (0..n * k).map(|_| (next() % 11) as f64 / 10.0).collect();
        let w: Vec<f64> = (0..n).map(|_| (next() % 4) as f64 + 0.5).collect();
        let weight = weighted.then_some(&w[..]);
        for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1), Pool::new(3).with_min_parallel(1)] {
            let got = binned_one_vs_rest(&codes, Matrix { values: &scores, n_cols: k, column_major: false }, weight, bins, &pool).unwrap();
            for (c, g) in got.iter().enumerate() {
                let cells = bins as usize + 1;
                let mut want = vec![(0_u64, 0_u64, 0.0_f64, 0.0_f64); cells];
                for i in 0..n {
                    let v = scores[i * k + c];
                    let cell = ((v * f64::from(bins)).floor() as usize).min(cells - 1);
                    let wi = if weighted { w[i] } else { 1.0 };
                    if codes[i] as usize == c { want[cell].0 += 1; want[cell].2 += wi; } else { want[cell].1 += 1; want[cell].3 += wi; }
                }
                let kept: Vec<(usize, (u64, u64, f64, f64))> = want.into_iter().enumerate().filter(|(_, t)| t.0 + t.1 > 0).collect();
                prop_assert_eq!(g.values.len(), kept.len());
                for (j, (cell, t)) in kept.iter().enumerate() {
                    prop_assert_eq!(g.values[j], *cell as f64 / f64::from(bins));
                    prop_assert_eq!((g.n_pos[j], g.n_neg[j]), (t.0, t.1));
                    if weighted {
                        prop_assert!((g.w_pos[j] - t.2).abs() < 1e-9 && (g.w_neg[j] - t.3).abs() < 1e-9);
                    }
                }
            }
        }
        let bad = vec![1.5_f64; k];
        let refused = binned_one_vs_rest(&[0], Matrix { values: &bad, n_cols: k, column_major: false }, None, bins, &Pool::sequential());
        prop_assert!(refused.is_err());
    }

    #[test]
    fn grouped_histograms_match_each_group_binned_alone(codes in prop::collection::vec(0_u32..3, 1..150), cuts in prop::collection::vec(0_usize..150, 0..5), seed in any::<u64>(), weighted in any::<bool>(), bins in 1_u32..20) {
        let (n, k) = (codes.len(), 3);
        let mut next = xorshift(seed | 1);
        let scores: Vec<f64> = (0..n * k).map(|_| (next() % 11) as f64 / 10.0).collect();
        let columns: Vec<f64> = (0..k).flat_map(|j| (0..n).map(|i| scores[i * k + j]).collect::<Vec<_>>()).collect();
        let w: Vec<f64> = (0..n).map(|_| (next() % 4) as f64 + 0.5).collect();
        let weight = weighted.then_some(&w[..]);
        let mut bounds: Vec<usize> = cuts.into_iter().map(|c| c.min(n)).collect();
        bounds.push(0);
        bounds.push(n);
        bounds.sort_unstable();
        let offsets: Vec<i64> = bounds.iter().map(|&b| b as i64).collect();
        let cells = bins as usize + 1;
        for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1)] {
            let by_rows = grouped_binned_histograms(&codes, Matrix { values: &scores, n_cols: k, column_major: false }, &offsets, weight, bins, &pool).unwrap();
            let by_cols = grouped_binned_histograms(&codes, Matrix { values: &columns, n_cols: k, column_major: true }, &offsets, weight, bins, &pool).unwrap();
            prop_assert_eq!(&by_rows, &by_cols);
            for g in 0..offsets.len() - 1 {
                let (lo, hi) = (bounds[g], bounds[g + 1]);
                if lo == hi {
                    let empty = by_rows.all[g * k * cells..(g + 1) * k * cells].iter().all(|&c| c == 0);
                    prop_assert!(empty);
                    continue;
                }
                let alone = binned_one_vs_rest(&codes[lo..hi], Matrix { values: &scores[lo * k..hi * k], n_cols: k, column_major: false }, weight.map(|w| &w[lo..hi]), bins, &Pool::sequential()).unwrap();
                for (c, want) in alone.iter().enumerate() {
                    let at = (g * k + c) * cells;
                    let kept: Vec<usize> = (0..cells).filter(|&b| by_rows.all[at + b] > 0).collect();
                    prop_assert_eq!(kept.len(), want.values.len());
                    for (j, &b) in kept.iter().enumerate() {
                        prop_assert_eq!(b as f64 / f64::from(bins), want.values[j]);
                        prop_assert_eq!(by_rows.pos[at + b], want.n_pos[j]);
                        prop_assert_eq!(by_rows.all[at + b] - by_rows.pos[at + b], want.n_neg[j]);
                        if weighted {
                            let (dp, dn) = (by_rows.w_pos[at + b] - want.w_pos[j], by_rows.w_all[at + b] - by_rows.w_pos[at + b] - want.w_neg[j]);
                            prop_assert!(dp.abs() < 1e-9 && dn.abs() < 1e-9);
                        }
                    }
                }
            }
        }
        let bad = vec![1.5_f64; k];
        let out_of_range = grouped_binned_histograms(&[0], Matrix { values: &bad, n_cols: k, column_major: false }, &[0, 1], None, bins, &Pool::sequential());
        prop_assert!(out_of_range.is_err());
        let past_the_rows = grouped_binned_histograms(&codes, Matrix { values: &scores, n_cols: k, column_major: false }, &[0, n as i64 + 1], None, bins, &Pool::sequential());
        prop_assert!(past_the_rows.is_err());
    }

    #[test]
    fn rank_histogram_matches_a_sort(raw in prop::collection::vec(0_u32..1000, 1..120), k in 1_usize..19, seed in any::<u64>()) {
        // Tiles of 16 rows ranked side by side, the rest row by row: any k, any n.
        let n = raw.len();
        let codes: Vec<u32> = raw.iter().map(|&c| c % k as u32).collect();
        let mut next = xorshift(seed | 1);
        let scores: Vec<f32> = (0..n * k).map(|_| (next() % 5) as f32 / 4.0).collect();
        let wide: Vec<f64> = scores.iter().map(|&s| f64::from(s)).collect();
        for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1)] {
            let h = rank_histogram(&codes, Matrix { values: &scores, n_cols: k, column_major: false }, None, &pool).unwrap();
            let h64 = rank_histogram(&codes, Matrix { values: &wide, n_cols: k, column_major: false }, None, &pool).unwrap();
            prop_assert_eq!(&h, &h64);
            let mut want = vec![0.0; k];
            for i in 0..n {
                // scikit-learn's order: a stable sort ascending, reversed
                let mut order: Vec<usize> = (0..k).collect();
                order.sort_by(|&a, &b| scores[i * k + a].partial_cmp(&scores[i * k + b]).unwrap());
                order.reverse();
                let rank = order.iter().position(|&j| j == codes[i] as usize).unwrap();
                want[rank] += 1.0;
            }
            prop_assert_eq!(&h, &want);
            // The same rows laid column after column (a table's columns):
            // tiles of 256 rows ranked a column at a time, the same ranks;
            // weighted, the same sums in the same order.
            let transposed: Vec<f32> = (0..n * k).map(|i| scores[(i % n) * k + i / n]).collect();
            let by_columns = Matrix { values: &transposed, n_cols: k, column_major: true };
            prop_assert_eq!(&rank_histogram(&codes, by_columns, None, &pool).unwrap(), &want);
            let weight: Vec<f64> = (0..n).map(|_| (next() % 1000) as f64 / 7.0).collect();
            let by_rows = Matrix { values: &scores, n_cols: k, column_major: false };
            let weighted = rank_histogram(&codes, by_rows, Some(&weight), &pool).unwrap();
            let got = rank_histogram(&codes, by_columns, Some(&weight), &pool).unwrap();
            prop_assert_eq!(
                got.iter().map(|x| x.to_bits()).collect::<Vec<_>>(),
                weighted.iter().map(|x| x.to_bits()).collect::<Vec<_>>()
            );
        }
    }
}

/// A column-major matrix past one tile and one chunk of rows (2^20 / k rows
/// a chunk): the ranks of the tiles ranked a column at a time equal the
/// row-major matrix's, weighted to the bit, on one thread and on two.
#[test]
fn column_major_rank_histogram_across_chunks() {
    let (n, k) = (700_001_usize, 3_usize);
    let mut next = xorshift(77);
    #[allow(clippy::cast_possible_truncation)]
    let codes: Vec<u32> = (0..n).map(|_| (next() % k as u64) as u32).collect();
    #[allow(clippy::cast_precision_loss)]
    let scores: Vec<f64> = (0..n * k).map(|_| (next() % 9) as f64 / 8.0).collect();
    let transposed: Vec<f64> = (0..n * k).map(|i| scores[(i % n) * k + i / n]).collect();
    #[allow(clippy::cast_precision_loss)]
    let weight: Vec<f64> = (0..n).map(|_| (next() % 1000) as f64 / 3.0).collect();
    let by_rows = Matrix {
        values: &scores,
        n_cols: k,
        column_major: false,
    };
    let by_columns = Matrix {
        values: &transposed,
        n_cols: k,
        column_major: true,
    };
    for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1)] {
        for w in [None, Some(weight.as_slice())] {
            let want = rank_histogram(&codes, by_rows, w, &pool).unwrap();
            let got = rank_histogram(&codes, by_columns, w, &pool).unwrap();
            let bits = |h: &[f64]| h.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&got), bits(&want));
            assert!(want.iter().all(|&h| h > 0.0));
        }
    }
}

/// [`class_ranking`] of `scores` against the two calls it fuses, on one pool.
fn assert_class_ranking_is_both(
    codes: &[u32],
    scores: Matrix<'_, f64>,
    weight: Option<&[f64]>,
    pool: &Pool,
) {
    let columns: Vec<usize> = (0..scores.n_cols).collect();
    let got = class_ranking(codes, scores, weight, Curves::Precision, pool).unwrap();
    let walks = one_vs_rest(
        Truth::Codes(codes),
        scores,
        &columns,
        weight,
        Curves::Precision,
        pool,
    )
    .unwrap();
    assert_eq!(format!("{:?}", got.walks), format!("{walks:?}"));
    assert_eq!(
        got.rank_histogram,
        rank_histogram(codes, scores, weight, pool).unwrap()
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]
    #[test]
    fn class_ranking_is_one_vs_rest_and_the_rank_histogram(
        raw in prop::collection::vec(0_u32..1000, 1..150),
        k in 1_usize..70,
        seed in any::<u64>(),
        kind in 0_u8..5,
    ) {
        // Packed keys and ranks counted in the transpose (ties, -0.0), the
        // transpose without the ranks (k > 64), and the general paths: a
        // score below 0, scores wider than float32, weights, columns first.
        let n = raw.len();
        let codes: Vec<u32> = raw.iter().map(|&c| c % k as u32).collect();
        let mut next = xorshift(seed | 1);
        let mut scores: Vec<f64> = (0..n * k).map(|_| match next() % 6 { 0 => -0.0, v => v as f64 / 8.0 }).collect();
        let weight: Vec<f64> = (0..n).map(|i| (i % 3) as f64 + 0.5).collect();
        let mut w = None;
        let mut column_major = false;
        match kind {
            1 => scores[n * k / 2] = -0.25,
            2 => scores[0] = 0.1,
            3 => w = Some(weight.as_slice()),
            4 => {
                scores = (0..n * k).map(|i| scores[(i % n) * k + i / n]).collect();
                column_major = true;
            }
            _ => {}
        }
        let m = Matrix { values: &scores, n_cols: k, column_major };
        for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1)] {
            assert_class_ranking_is_both(&codes, m, w, &pool);
        }
    }
}

#[test]
fn class_ranking_adds_the_ranks_of_every_chunk() {
    // Rows over several chunks of the transpose, counted on two threads.
    let (n, k) = (3 * cmetrics_core::parallel::CHECK_ROWS / 10 + 17, 10);
    let mut next = xorshift(11);
    let codes: Vec<u32> = (0..n).map(|_| (next() % k as u64) as u32).collect();
    let scores: Vec<f64> = (0..n * k).map(|_| (next() % 300) as f64 / 512.0).collect();
    let m = Matrix {
        values: &scores,
        n_cols: k,
        column_major: false,
    };
    for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1)] {
        assert_class_ranking_is_both(&codes, m, None, &pool);
    }
}

#[test]
fn column_major_matrices_give_the_same_results() {
    let (n, k) = (300, 4);
    let mut next = xorshift(7);
    let codes: Vec<u32> = (0..n).map(|_| (next() % 4) as u32).collect();
    let rows: Vec<f32> = (0..n * k).map(|_| (next() % 9) as f32 / 8.0).collect();
    let cols: Vec<f32> = (0..n * k).map(|i| rows[(i % n) * k + i / n]).collect();
    let pool = Pool::new(2).with_min_parallel(1);
    let by_rows = Matrix {
        values: &rows,
        n_cols: k,
        column_major: false,
    };
    let by_cols = Matrix {
        values: &cols,
        n_cols: k,
        column_major: true,
    };
    let a = one_vs_rest(
        Truth::Codes(&codes),
        by_rows,
        &[0, 1, 2, 3],
        None,
        true,
        &pool,
    )
    .unwrap();
    let b = one_vs_rest(
        Truth::Codes(&codes),
        by_cols,
        &[0, 1, 2, 3],
        None,
        true,
        &pool,
    )
    .unwrap();
    assert_eq!(format!("{a:?}"), format!("{b:?}"));
    assert_eq!(
        rank_histogram(&codes, by_rows, None, &pool).unwrap(),
        rank_histogram(&codes, by_cols, None, &pool).unwrap()
    );
    assert_eq!(
        binned_one_vs_rest(&codes, by_rows, None, 16, &pool).unwrap(),
        binned_one_vs_rest(&codes, by_cols, None, 16, &pool).unwrap()
    );
}

/// The row-sum range: the extremes of plain float64 row sums over chunks of
/// rows, either layout; the first NaN or infinity (row-major order) named by
/// its flat index, whichever chunk finds it; finite rows that overflow are
/// not an error but an infinite sum.
#[test]
fn row_sum_range_is_the_extremes_of_the_row_sums() {
    let (n, k) = (700_003, 4);
    let mut next = xorshift(11);
    #[allow(clippy::cast_precision_loss)]
    let mut rows: Vec<f64> = (0..n * k).map(|_| (next() % 1000) as f64 / 997.0).collect();
    let sums: Vec<f64> = rows
        .chunks_exact(k)
        .map(|r| r.iter().fold(0.0, |s, v| s + v))
        .collect();
    let lo = sums.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = sums.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let cols =
        |rows: &[f64]| -> Vec<f64> { (0..n * k).map(|i| rows[(i % n) * k + i / n]).collect() };
    for pool in [Pool::sequential(), Pool::new(3).with_min_parallel(1)] {
        let by_rows = Matrix {
            values: &rows,
            n_cols: k,
            column_major: false,
        };
        assert_eq!(row_sum_range(by_rows, &pool).unwrap(), (lo, hi));
        let c = cols(&rows);
        let by_cols = Matrix {
            values: &c,
            n_cols: k,
            column_major: true,
        };
        assert_eq!(row_sum_range(by_cols, &pool).unwrap(), (lo, hi));
    }
    // Two bad values in different chunks: the first in row-major order is named.
    rows[650_001 * k + 2] = f64::NAN;
    rows[400_000 * k + 3] = f64::NEG_INFINITY;
    let c = cols(&rows);
    for pool in [Pool::sequential(), Pool::new(3).with_min_parallel(1)] {
        for m in [
            Matrix {
                values: &rows[..],
                n_cols: k,
                column_major: false,
            },
            Matrix {
                values: &c[..],
                n_cols: k,
                column_major: true,
            },
        ] {
            let err = row_sum_range(m, &pool).unwrap_err().to_string();
            assert!(
                err.starts_with("y_score[1600003] = -inf is not finite"),
                "{err}"
            );
        }
    }
    let huge = [f64::MAX, f64::MAX, 0.5, 0.5];
    let m = Matrix {
        values: &huge,
        n_cols: 2,
        column_major: false,
    };
    assert_eq!(
        row_sum_range(m, &Pool::sequential()).unwrap(),
        (1.0, f64::INFINITY)
    );
    let f32s = [0.25_f32, 0.5, 0.125, 0.875];
    let m = Matrix {
        values: &f32s,
        n_cols: 2,
        column_major: false,
    };
    assert_eq!(row_sum_range(m, &Pool::sequential()).unwrap(), (0.75, 1.0));
}

/// The walks of probabilities whose rows must sum to 1 are `one_vs_rest`'s,
/// and their row sums `row_sum_range`'s to the bit, on every path: float32
/// rows packed in tiles (the sums taken in the pass that writes the keys),
/// float32 columns (packed, one row at a time), float64 (the general path),
/// weighted rows; rows that do not sum to 1 give no walk, and a non-finite
/// score the error `row_sum_range` gives.
#[test]
fn walks_of_probabilities_are_one_vs_rest_with_the_row_sums() {
    let (n, k) = (300_007, 5);
    let mut next = xorshift(23);
    #[allow(clippy::cast_possible_truncation)]
    let codes: Vec<u32> = (0..n).map(|_| (next() % k as u64) as u32).collect();
    #[allow(clippy::cast_precision_loss)]
    let raw: Vec<f64> = (0..n * k).map(|_| (next() % 4096) as f64 + 1.0).collect();
    let mut p64: Vec<f64> = Vec::with_capacity(n * k);
    for row in raw.chunks_exact(k) {
        let t: f64 = row.iter().sum();
        p64.extend(row.iter().map(|v| v / t));
    }
    #[allow(clippy::cast_possible_truncation)]
    let p32: Vec<f32> = p64.iter().map(|&v| v as f32).collect();
    let by_cols32: Vec<f32> = (0..n * k).map(|i| p32[(i % n) * k + i / n]).collect();
    #[allow(clippy::cast_precision_loss)]
    let w: Vec<f64> = (0..n).map(|i| (i % 3) as f64 + 0.5).collect();
    let columns = [4_usize, 0, 2, 1, 3];
    for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(1)] {
        let check = |m32: Option<Matrix<'_, f32>>,
                     m64: Option<Matrix<'_, f64>>,
                     weight: Option<&[f64]>| {
            let (got, want, sums) = match (m32, m64) {
                (Some(m), _) => (
                    one_vs_rest_of_probabilities(&codes, m, &columns, weight, false, &pool)
                        .unwrap(),
                    one_vs_rest(Truth::Codes(&codes), m, &columns, weight, false, &pool).unwrap(),
                    row_sum_range(m, &pool).unwrap(),
                ),
                (None, Some(m)) => (
                    one_vs_rest_of_probabilities(&codes, m, &columns, weight, false, &pool)
                        .unwrap(),
                    one_vs_rest(Truth::Codes(&codes), m, &columns, weight, false, &pool).unwrap(),
                    row_sum_range(m, &pool).unwrap(),
                ),
                _ => unreachable!(),
            };
            assert_eq!(got.sums.0.to_bits(), sums.0.to_bits());
            assert_eq!(got.sums.1.to_bits(), sums.1.to_bits());
            assert!(sums.0 < sums.1 && (sums.0 - 1.0).abs() < 1e-6 && (sums.1 - 1.0).abs() < 1e-6);
            assert_eq!(format!("{:?}", got.walks.unwrap()), format!("{want:?}"));
        };
        let rows32 = Matrix {
            values: &p32,
            n_cols: k,
            column_major: false,
        };
        let cols32 = Matrix {
            values: &by_cols32,
            n_cols: k,
            column_major: true,
        };
        let rows64 = Matrix {
            values: &p64,
            n_cols: k,
            column_major: false,
        };
        check(Some(rows32), None, None);
        check(Some(cols32), None, None);
        check(None, Some(rows64), None);
        // float64 whose first rows are float32 values: the keys are tried and
        // given up at a later row, then the general path.
        let mut mixed = p64.clone();
        for v in &mut mixed[..100 * k] {
            *v = f64::from(*v as f32);
        }
        check(
            None,
            Some(Matrix {
                values: &mixed,
                n_cols: k,
                column_major: false,
            }),
            None,
        );
        check(Some(rows32), None, Some(&w));
        // One row off by more than numpy's allclose allows: no walk, the sums still given.
        for (scale, accepted) in [(1.0 + 2e-5, false), (1.0 + 5e-6, true)] {
            let mut off = p32.clone();
            for v in &mut off[(n - 1) * k..] {
                *v *= scale;
            }
            let m = Matrix {
                values: &off,
                n_cols: k,
                column_major: false,
            };
            let got =
                one_vs_rest_of_probabilities(&codes, m, &columns, None, false, &pool).unwrap();
            assert_eq!(got.sums, row_sum_range(m, &pool).unwrap());
            assert_eq!(got.walks.is_some(), accepted);
        }
        // A non-finite score: row_sum_range's error, on the packed path and off it.
        let mut bad = p32.clone();
        bad[200_000 * k + 1] = f32::NAN;
        let m = Matrix {
            values: &bad,
            n_cols: k,
            column_major: false,
        };
        assert_eq!(
            one_vs_rest_of_probabilities(&codes, m, &columns, None, false, &pool)
                .unwrap_err()
                .to_string(),
            row_sum_range(m, &pool).unwrap_err().to_string()
        );
        // No rows: the error one_vs_rest gives.
        let none = Matrix {
            values: &p32[..0],
            n_cols: k,
            column_major: false,
        };
        assert_eq!(
            one_vs_rest_of_probabilities(&codes[..0], none, &columns, None, false, &pool)
                .unwrap_err()
                .to_string(),
            one_vs_rest(
                Truth::Codes(&codes[..0]),
                none,
                &columns,
                None,
                false,
                &pool
            )
            .unwrap_err()
            .to_string()
        );
    }
}
