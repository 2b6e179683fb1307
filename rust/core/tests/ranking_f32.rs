//! float32 scores on their half-width key paths (logits of either sign,
//! tie groups) against counts and the general path.
#![allow(clippy::unwrap_used)]

use cmetrics_core::ranking::{binary_ranking, score_groups, walk_groups, BinaryRanking, Curves};
use cmetrics_core::Pool;

mod common;
use common::lcg;

/// float32 scores of any sign (logits) take two sides of half-width keys:
/// the pair counts equal the naive count, signed zeros tie, the extremes and
/// subnormals order as values, and a late NaN or infinity is still the
/// general path's error with its row.
#[test]
fn signed_float32_scores_rank_as_values() {
    let n = 120_000;
    let mut r = lcg(21);
    let ok: Vec<bool> = (0..n).map(|_| r().is_multiple_of(3)).collect();
    #[allow(clippy::cast_precision_loss)]
    let mut logits: Vec<f32> = (0..n)
        .map(|_| (r() % 4_000_000) as f32 / 1e5 - 20.0)
        .collect();
    let specials = [
        -0.0,
        0.0,
        f32::MAX,
        -f32::MAX,
        f32::MIN_POSITIVE,
        -f32::MIN_POSITIVE,
        1e-45,
        -1e-45,
    ];
    for (i, &v) in specials.iter().enumerate() {
        logits[3000 + 7 * i] = v;
        logits[3001 + 7 * i] = v;
    }
    // The walk in pieces on three threads equals the walk of the tie groups.
    let groups = score_groups(&ok, &logits, None, &Pool::new(1)).unwrap();
    let want = walk_groups((&groups).into(), true).unwrap();
    for pool in [Pool::new(1), Pool::new(3).with_min_parallel(0)] {
        let got = binary_ranking(&ok, &logits, None, true, &pool).unwrap();
        assert_eq!(
            (got.ordered, got.tied, got.reversed, got.n_thresholds),
            (want.ordered, want.tied, want.reversed, want.n_thresholds)
        );
        assert!((got.average_precision - want.average_precision).abs() <= 1e-12);
    }
    // Pair counts against a count over the sorted values (exact ties).
    let mut rows: Vec<(f32, bool)> = logits.iter().copied().zip(ok.iter().copied()).collect();
    rows.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let negatives = u128::from(ok.iter().filter(|&&x| !x).count() as u64);
    let (mut reversed, mut tied, mut neg_below) = (0_u128, 0_u128, 0_u128);
    let mut i = 0;
    while i < rows.len() {
        let mut j = i;
        let (mut p, mut q) = (0_u128, 0_u128);
        while j < rows.len() && rows[j].0 == rows[i].0 {
            p += u128::from(rows[j].1);
            q += u128::from(!rows[j].1);
            j += 1;
        }
        tied += p * q;
        reversed += p * (negatives - neg_below - q);
        neg_below += q;
        i = j;
    }
    let got = binary_ranking(&ok, &logits, None, true, &Pool::new(2)).unwrap();
    assert_eq!((got.reversed, got.tied), (reversed, tied));
    for (bad, at) in [(f32::NAN, 100_000_usize), (f32::NEG_INFINITY, 90_000)] {
        let mut broken = logits.clone();
        broken[at] = bad;
        let err = binary_ranking(&ok, &broken, None, true, &Pool::new(2)).unwrap_err();
        assert!(
            matches!(err, cmetrics_core::MetricError::NonFinite { index, .. } if index == at),
            "{err:?}"
        );
    }
}

/// float32 scores' tie groups come from half-width keys: the same values
/// and counts as the general path (unit weights take it), signed zeros in
/// one group, for float32 scores and float64 copies of them.
#[test]
fn float32_tie_groups_equal_the_general_path() {
    let n = 150_000;
    let mut r = lcg(23);
    let ok: Vec<bool> = (0..n).map(|_| r().is_multiple_of(3)).collect();
    #[allow(clippy::cast_precision_loss)]
    let mut narrow: Vec<f32> = (0..n).map(|_| (r() % 3_000_000) as f32 / 3e6).collect();
    narrow[10] = -0.0;
    narrow[11] = 0.0;
    narrow[12] = f32::MAX;
    narrow[13] = 1e-45;
    let wide: Vec<f64> = narrow.iter().map(|&x| f64::from(x)).collect();
    let ones = vec![1.0; n];
    let pool = Pool::new(2).with_min_parallel(0);
    let want = score_groups(&ok, &narrow, Some(&ones), &pool).unwrap();
    for got in [
        score_groups(&ok, &narrow, None, &pool).unwrap(),
        score_groups(&ok, &wide, None, &pool).unwrap(),
    ] {
        assert_eq!(got.n_pos, want.n_pos);
        assert_eq!(got.n_neg, want.n_neg);
        let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
        assert_eq!(bits(&got.values), bits(&want.values));
    }
}

/// The walk of pair counts alone (no curves: no branch per row) gives the
/// counts of the full walk, the walk of the average precision alone its AP
/// to the bit (the other curve terms NaN), and the walk of DeLong's
/// placements alone (exact integer sums) its placements to 1e-12, on every
/// key path (packed float32 with ties and nearly without, the two sides of
/// float64, integers in hash tables), in pieces and whole, weighted too.
#[test]
fn pair_count_and_precision_walks_equal_the_full_walk() {
    let n = 150_000;
    let mut r = lcg(5);
    let ok: Vec<bool> = (0..n).map(|_| r() % 5 < 2).collect();
    #[allow(clippy::cast_precision_loss)]
    let dense: Vec<f32> = (0..n).map(|_| (r() % 400_000) as f32 / 400_000.0).collect();
    // Nearly all distinct: the packed walk's blocks of sixteen without a tie.
    #[allow(clippy::cast_precision_loss)]
    let sparse: Vec<f32> = (0..n)
        .map(|_| (r() % (1 << 24)) as f32 / 16_777_216.0)
        .collect();
    #[allow(clippy::cast_precision_loss)]
    let fine: Vec<f64> = (0..n)
        .map(|_| (r() % 5_000_000) as f64 / 7.0 - 1e5)
        .collect();
    #[allow(clippy::cast_possible_wrap)]
    let ints: Vec<i64> = (0..n).map(|_| (r() % 300) as i64 - 150).collect();
    #[allow(clippy::cast_precision_loss)]
    let weights: Vec<f64> = (0..n).map(|_| (r() % 7) as f64 * 0.375).collect();
    let first_row_positive: Vec<bool> = ok.iter().enumerate().map(|(i, &p)| p || i == 0).collect();
    let pairs = |a: &BinaryRanking| (a.ordered, a.tied, a.reversed, a.n_thresholds);
    const MODES: [Curves; 4] = [
        Curves::Off,
        Curves::Precision,
        Curves::All,
        Curves::Placements,
    ];
    for pool in [Pool::new(1), Pool::new(3).with_min_parallel(0)] {
        for labels in [&ok, &first_row_positive] {
            for rows in [n, 5000] {
                let l = &labels[..rows];
                let w = Some(&weights[..rows]);
                let walks = [
                    MODES.map(|c| binary_ranking(l, &dense[..rows], None, c, &pool).unwrap()),
                    MODES.map(|c| binary_ranking(l, &sparse[..rows], None, c, &pool).unwrap()),
                    MODES.map(|c| binary_ranking(l, &fine[..rows], None, c, &pool).unwrap()),
                    MODES.map(|c| binary_ranking(l, &ints[..rows], None, c, &pool).unwrap()),
                    MODES.map(|c| binary_ranking(l, &dense[..rows], w, c, &pool).unwrap()),
                ];
                for [off, precision, all, placements] in walks {
                    assert_eq!(pairs(&off), pairs(&all));
                    assert_eq!(pairs(&precision), pairs(&all));
                    assert_eq!(pairs(&placements), pairs(&all));
                    assert!(placements.average_precision.is_nan() && placements.aurc.is_nan());
                    for (a, b) in [
                        (placements.placement_pos_sq, all.placement_pos_sq),
                        (placements.placement_neg_sq, all.placement_neg_sq),
                    ] {
                        assert!((a - b).abs() <= 1e-12 * b.abs(), "{a} against {b}");
                    }
                    assert!(off.average_precision.is_nan() && all.average_precision.is_finite());
                    assert_eq!(
                        precision.average_precision.to_bits(),
                        all.average_precision.to_bits()
                    );
                    assert!(
                        precision.aurc.is_nan()
                            && precision.aupr_trapezoid.is_nan()
                            && precision.placement_pos_sq.is_nan()
                    );
                    assert!(
                        all.aurc.is_finite()
                            && all.aupr_trapezoid.is_finite()
                            && all.placement_pos_sq.is_finite()
                    );
                }
            }
        }
    }
}

/// The half-width float32 paths count the positives and look for a score
/// without a key while they write the keys: non-negative scores (one packed
/// array) and scores of either sign (two) give the positive and negative
/// totals of the general path (float64 copies), on one thread and on three,
/// and a negative score or a NaN in the last of many chunks still sends the
/// rows to the path that takes it (the sign) or names it (the NaN).
#[test]
fn float32_keys_are_counted_and_checked_as_written() {
    let n = (1 << 20) + 4_099;
    let mut r = lcg(29);
    let ok: Vec<bool> = (0..n).map(|_| r().is_multiple_of(5)).collect();
    #[allow(clippy::cast_precision_loss)]
    let probs: Vec<f32> = (0..n).map(|_| (r() % 1_000_003) as f32 / 1e6).collect();
    let logits: Vec<f32> = probs.iter().map(|&p| p * 8.0 - 4.0).collect();
    let n_pos = ok.iter().filter(|&&x| x).count() as u64;
    // The general path's walk: unit weights take it.
    let ones = vec![1.0; n];
    let general = |scores: &[f32]| {
        let groups = score_groups(&ok, scores, Some(&ones), &Pool::new(1)).unwrap();
        walk_groups((&groups).into(), false).unwrap()
    };
    for scores in [&probs, &logits] {
        let want = general(scores);
        for pool in [Pool::new(1), Pool::new(3).with_min_parallel(0)] {
            let got = binary_ranking(&ok, scores, None, false, &pool).unwrap();
            assert_eq!((got.n_pos, got.n_neg), (n_pos, n as u64 - n_pos));
            assert_eq!((got.n_pos, got.n_neg), (want.n_pos, want.n_neg));
            assert_eq!((got.ordered, got.tied), (want.ordered, want.tied));
        }
    }
    // One negative score in the last chunk: the signed path counts it.
    let mut late = probs.clone();
    late[n - 3] = -0.25;
    let pool = Pool::new(2).with_min_parallel(0);
    let got = binary_ranking(&ok, &late, None, false, &pool).unwrap();
    let want = general(&late);
    assert_eq!((got.ordered, got.tied), (want.ordered, want.tied));
    for scores in [&probs, &logits] {
        let mut broken = scores.clone();
        broken[n - 2] = f32::NAN;
        let err = binary_ranking(&ok, &broken, None, false, &pool).unwrap_err();
        assert!(
            matches!(err, cmetrics_core::MetricError::NonFinite { index, .. } if index == n - 2),
            "{err:?}"
        );
    }
}

/// The tie groups of a strided column (one column of a row-major matrix)
/// with too many distinct scores for the hash tables: copied in parallel
/// chunks, then sorted, they equal the groups of a contiguous copy, on one
/// thread and on three (two chunks of the copy).
#[test]
fn a_strided_column_with_many_scores_groups_as_its_copy() {
    use cmetrics_core::ranking::score_groups_of_view;
    use ndarray::{s, ArrayView1};
    let n = (1 << 20) + 1_000;
    let mut r = lcg(31);
    let ok: Vec<bool> = (0..n).map(|_| r().is_multiple_of(4)).collect();
    #[allow(clippy::cast_precision_loss)]
    let matrix: Vec<f64> = (0..2 * n).map(|_| (r() % 200_000) as f64 / 2e5).collect();
    let column = ArrayView1::from(matrix.as_slice())
        .slice_move(s![1..])
        .slice_move(s![..;2]);
    assert!(column.as_slice().is_none() && column.len() == n);
    let copy = column.to_vec();
    let want = score_groups(&ok, &copy, None, &Pool::new(1)).unwrap();
    assert!(want.values.len() > 100_000);
    for pool in [Pool::new(1), Pool::new(3).with_min_parallel(0)] {
        let got = score_groups_of_view(&ok, column, &pool).unwrap();
        assert_eq!(got, want);
    }
}
