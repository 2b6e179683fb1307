//! The packed keys sorted as two halves by the vectorized sort and walked as
//! their merge give the walk of the whole sorted array, bit for bit. This
//! binary forces the vectorized sort for its process (`CMETRICS_SORT`, read
//! once, before the first sort); on a build without it the radix sort runs
//! and the same equalities hold.
#![allow(clippy::unwrap_used)]

use cmetrics_core::ranking::{binary_ranking, BinaryRanking};
use cmetrics_core::vectorized_sort::{built, chosen, SortAlgorithm};
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
    assert_eq!(
        chosen(),
        if built() {
            SortAlgorithm::Vectorized
        } else {
            SortAlgorithm::Radix
        }
    );
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
    }
}
