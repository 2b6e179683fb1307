//! The packed keys sorted as two halves by the vectorized sort and walked as
//! their merge give the walk of the whole sorted array, bit for bit. This
//! binary forces the vectorized sort for its process (`CMETRICS_SORT`, read
//! once, before the first sort); on a build without it the radix sort runs
//! and the same equalities hold.
#![allow(clippy::unwrap_used)]

use cmetrics_core::ranking::{
    binary_ranking, threshold_counts, BinaryRanking, Drop, ThresholdCounts,
};
use cmetrics_core::vectorized_sort::{built, chosen_for, Keys, SortAlgorithm};
use cmetrics_core::Pool;

mod common;
use common::lcg;

fn bits(r: &BinaryRanking) -> Vec<u64> {
    [
        r.ordered_share,
        r.average_precision,
        r.aupr_trapezoid,
        r.aurc,
        r.reversed_share,
        r.tied_share,
    ]
    .iter()
    .map(|x| x.to_bits())
    .collect()
}

#[test]
fn halves_walked_as_their_merge_equal_the_sorted_whole() {
    // Set before anything in this process sorts (one test in this binary).
    std::env::set_var("CMETRICS_SORT", "vectorized");
    let forced = if built() {
        SortAlgorithm::Vectorized
    } else {
        SortAlgorithm::Radix
    };
    for keys in Keys::ALL {
        assert_eq!(chosen_for(keys), forced, "{keys:?}");
    }
    let n = 700_001;
    let mut r = lcg(5);
    let ok: Vec<bool> = (0..n).map(|_| r() % 5 < 2).collect();
    #[allow(clippy::cast_precision_loss)]
    let cases: Vec<(&str, Vec<f32>)> = vec![
        (
            "continuous",
            (0..n)
                .map(|_| (r() % (1 << 24)) as f32 / (1 << 24) as f32)
                .collect(),
        ),
        // Big tie groups straddle the halves and the piece cuts.
        ("ties", (0..n).map(|_| (r() % 37) as f32 / 64.0).collect()),
        ("one value", vec![0.5; n]),
        ("sorted", (0..n).map(|i| i as f32 / n as f32).collect()),
    ];
    for (name, score) in cases {
        // One thread: the whole array sorted; two and three: the halves.
        let want = binary_ranking(&ok, &score, None, true, &Pool::new(1)).unwrap();
        for pool in [
            Pool::new(2).with_min_parallel(0),
            Pool::new(3).with_min_parallel(0),
        ] {
            let got = binary_ranking(&ok, &score, None, true, &pool).unwrap();
            assert_eq!(
                (got.ordered, got.tied, got.reversed, got.n_thresholds),
                (want.ordered, want.tied, want.reversed, want.n_thresholds),
                "{name}"
            );
            assert_eq!(bits(&got), bits(&want), "{name}");
        }
        // The threshold curve streams the same sorted rows into its points:
        // equal to plain counting on every pool, every drop rule.
        let plain = plain_curve(&ok, &score);
        for drop in [Drop::None, Drop::Collinear, Drop::FlatPositives] {
            for pool in [
                Pool::new(1),
                Pool::new(2).with_min_parallel(0),
                Pool::new(3).with_min_parallel(0),
            ] {
                let got = threshold_counts(&ok, &score, None, drop, &pool).unwrap();
                assert_eq!(got, dropped(&plain, drop), "{name}");
            }
        }
        // The float64 copies of the same scores: the general path's keys.
        let wide: Vec<f64> = score
            .iter()
            .map(|&x| f64::from(x) * (1.0 + 2.0_f64.powi(-40)))
            .collect();
        let got = threshold_counts(
            &ok,
            &wide,
            None,
            Drop::None,
            &Pool::new(2).with_min_parallel(0),
        );
        let got = got.unwrap();
        assert_eq!((&got.fps, &got.tps), (&plain.fps, &plain.tps), "{name}");
    }
}

/// scikit-learn's rules applied to the curve from the highest score down
/// (numpy's `np.diff` of the descending arrays), back in rising order.
fn dropped(c: &ThresholdCounts, drop: Drop) -> ThresholdCounts {
    let rev = |v: &[f64]| v.iter().rev().copied().collect::<Vec<f64>>();
    let (f, t, h) = (rev(&c.fps), rev(&c.tps), rev(&c.thresholds));
    let m = f.len();
    let keep = |i: usize| {
        if i == 0 || i + 1 == m {
            return true;
        }
        match drop {
            Drop::None => true,
            Drop::Collinear => {
                (f[i + 1] - f[i]) - (f[i] - f[i - 1]) != 0.0
                    || (t[i + 1] - t[i]) - (t[i] - t[i - 1]) != 0.0
            }
            Drop::FlatPositives => t[i] != t[i - 1] || t[i + 1] != t[i],
        }
    };
    let pick =
        |v: &[f64]| -> Vec<f64> { (0..m).rev().filter(|&i| keep(i)).map(|i| v[i]).collect() };
    ThresholdCounts {
        fps: pick(&f),
        tps: pick(&t),
        thresholds: pick(&h),
    }
}

/// The curve by sorting the rows and counting from the top down, in rising
/// score order.
fn plain_curve(ok: &[bool], score: &[f32]) -> ThresholdCounts {
    let mut rows: Vec<(f32, bool)> = score.iter().copied().zip(ok.iter().copied()).collect();
    rows.sort_by(|a, b| b.0.total_cmp(&a.0));
    let mut out = ThresholdCounts::default();
    let (mut f, mut t) = (0.0, 0.0);
    for (i, &(s, p)) in rows.iter().enumerate() {
        if p {
            t += 1.0;
        } else {
            f += 1.0;
        }
        if rows.get(i + 1).is_none_or(|r| r.0 != s) {
            out.fps.push(f);
            out.tps.push(t);
            out.thresholds.push(f64::from(s));
        }
    }
    out.fps.reverse();
    out.tps.reverse();
    out.thresholds.reverse();
    out
}
