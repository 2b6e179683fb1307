//! Kendall's tau against naive O(n^2) pair counts: every method, on tied and
//! distinct data, at the integer limits, on 1 and 2 threads.
#![allow(clippy::unwrap_used)]

use cmetrics_core::ranking::{kendall_counts, kendall_counts_with, KendallCounts, KendallMethod};
use cmetrics_core::Pool;
use proptest::prelude::*;

mod common;
use common::lcg;

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn kendall_matches_the_naive_count(rows in prop::collection::vec((0_u8..5, 0_u8..40), 2..300), wide in any::<bool>()) {
        // -0.0 and 0.0 are one value; `wide` spreads x over many distinct values.
        let x: Vec<f64> = rows.iter().map(|r| if r.0 == 0 { -0.0 } else { f64::from(r.0) }).collect();
        let x: Vec<f64> = if wide { x.iter().zip(&rows).map(|(v, r)| v * 100.0 + f64::from(r.1 % 7)).collect() } else { x };
        let y: Vec<f64> = rows.iter().map(|r| f64::from(r.1) * 0.1 - 1.0).collect();
        let (mut disc, mut xt, mut yt, mut jt) = (0_u128, 0_u128, 0_u128, 0_u128);
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                disc += u128::from((x[i] - x[j]) * (y[i] - y[j]) < 0.0);
                xt += u128::from(x[i] == x[j]);
                yt += u128::from(y[i] == y[j]);
                jt += u128::from(x[i] == x[j] && y[i] == y[j]);
            }
        }
        for pool in [Pool::sequential(), Pool::new(2)] {
            for method in [KendallMethod::Auto, KendallMethod::Sort, KendallMethod::Table, KendallMethod::OneSided] {
                let c = kendall_counts_with(&x, &y, method, &pool).unwrap();
                prop_assert_eq!((c.discordant, c.x_ties, c.y_ties, c.joint_ties), (disc, xt, yt, jt));
            }
        }
    }
}

#[test]
fn kendall_methods_agree_on_large_tied_data() {
    // 300k rows, a few hundred distinct values each: the table sweep in
    // pieces against Knight's sort, on 1 and 2 threads.
    let mut next = lcg(7);
    let n = 300_000;
    let x: Vec<f64> = (0..n).map(|_| (next() % 700) as f64 * 0.01).collect();
    let y: Vec<f64> = x
        .iter()
        .map(|&v| ((v * 50.0) as u64 + next() % 300) as f64 - 150.0)
        .collect();
    let want = kendall_counts_with(&x, &y, KendallMethod::Sort, &Pool::sequential()).unwrap();
    assert!(want.x_distinct <= 700 && want.y_distinct > 300);
    for pool in [Pool::sequential(), Pool::new(2)] {
        for method in [
            KendallMethod::Auto,
            KendallMethod::Table,
            KendallMethod::Sort,
        ] {
            assert_eq!(kendall_counts_with(&x, &y, method, &pool).unwrap(), want);
        }
    }
}

#[test]
fn kendall_falls_back_to_the_sort_beyond_the_table_limits() {
    // 70k distinct x values: more than the table handles; every method
    // still gives the exact counts.
    let mut next = lcg(11);
    let n = 140_000;
    let x: Vec<f64> = (0..n).map(|i| (i / 2) as f64).collect();
    let y: Vec<f64> = (0..n).map(|_| (next() % 5) as f64).collect();
    let want = kendall_counts_with(&x, &y, KendallMethod::Sort, &Pool::sequential()).unwrap();
    assert_eq!(want.x_distinct, 70_000);
    for method in [KendallMethod::Auto, KendallMethod::Table] {
        assert_eq!(
            kendall_counts_with(&x, &y, method, &Pool::new(2)).unwrap(),
            want
        );
    }
}

#[test]
fn kendall_arithmetic_does_not_overflow_near_2_32_and_2_64() {
    // n = 4e9 rows: n(n-1)/2 is about 8e18, near 2^63; no ties, all pairs discordant
    // gives exactly -1, all concordant +1.
    let n: u64 = 4_000_000_000;
    let all = u128::from(n) * u128::from(n - 1) / 2;
    let rev = KendallCounts {
        n,
        discordant: all,
        x_distinct: n,
        y_distinct: n,
        ..Default::default()
    };
    assert_eq!(rev.concordant_minus_discordant(), -(all as i128));
    assert!((rev.tau_b() + 1.0).abs() < 1e-15);
    let fwd = KendallCounts {
        discordant: 0,
        ..rev
    };
    assert!((fwd.tau_b() - 1.0).abs() < 1e-15);
    // Around 2^32 rows, with half the pairs tied in x.
    let n: u64 = (1 << 32) + 3;
    let all = u128::from(n) * u128::from(n - 1) / 2;
    let c = KendallCounts {
        n,
        x_ties: all / 2,
        discordant: all / 4,
        x_distinct: 2,
        y_distinct: n,
        ..Default::default()
    };
    let want = (all as f64 - all as f64 / 2.0 - 2.0 * (all / 4) as f64)
        / ((all as f64 / 2.0).sqrt() * (all as f64).sqrt());
    assert!((c.tau_b() - want).abs() < 1e-12);
    assert!(c.tau_c().is_finite());
}

#[test]
fn kendall_orders_infinities_and_refuses_nan() {
    let pool = Pool::sequential();
    let x = [f64::NEG_INFINITY, 1.0, 2.0, f64::INFINITY];
    let y = [1.0, 2.0, 3.0, 4.0];
    let c = kendall_counts(&x, &y, &pool).unwrap();
    assert_eq!((c.discordant, c.x_ties, c.y_ties), (0, 0, 0));
    assert_eq!(c.tau_b(), 1.0);
    let z = [1.0, f64::NAN, 2.0, 3.0];
    assert_eq!(
        kendall_counts(&x, &z, &pool),
        Err(cmetrics_core::MetricError::IsNan { arg: "y", index: 1 })
    );
}

#[test]
fn the_one_sided_sweep_equals_the_sort_across_blocks_and_threads() {
    // 600k rows (three sweep blocks): x continuous with a few repeated values,
    // y with 1,001 distinct values, and the same with x and y swapped.
    let mut next = lcg(21);
    let n = 600_000;
    #[allow(clippy::cast_precision_loss)]
    let x: Vec<f64> = (0..n)
        .map(|i| {
            if i % 97 == 0 {
                0.5
            } else {
                (next() % 1_000_000_000) as f64 / 1e9
            }
        })
        .collect();
    #[allow(clippy::cast_precision_loss)]
    let y: Vec<f64> = x
        .iter()
        .map(|&v| ((v * 800.0) as u64 + next() % 201) as f64)
        .collect();
    let want = kendall_counts_with(&x, &y, KendallMethod::Sort, &Pool::sequential()).unwrap();
    assert!(
        want.x_distinct > 70_000 && want.y_distinct > 900 && want.x_ties > 0,
        "{want:?}"
    );
    let swapped = kendall_counts_with(&y, &x, KendallMethod::Sort, &Pool::sequential()).unwrap();
    // A third of the rows at values a few ulps apart (keys that differ only
    // in their low bits, which the sweep first reads as tied), the rest
    // spread out; y with 1,000 values.
    let m = 100_000_u64;
    #[allow(clippy::cast_precision_loss)]
    let close: Vec<f64> = (0..m)
        .map(|i| {
            let ulps = f64::from_bits(0.25_f64.to_bits() + (i * 7919) % 3000);
            if i % 3 == 0 {
                ulps + i as f64 * 1e-3
            } else {
                ulps
            }
        })
        .collect();
    #[allow(clippy::cast_precision_loss)]
    let levels: Vec<f64> = (0..m).map(|i| ((i * 31) % 1000) as f64).collect();
    let close_want =
        kendall_counts_with(&close, &levels, KendallMethod::Sort, &Pool::sequential()).unwrap();
    for pool in [Pool::sequential(), Pool::new(2).with_min_parallel(0)] {
        assert_eq!(
            kendall_counts_with(&close, &levels, KendallMethod::OneSided, &pool).unwrap(),
            close_want
        );
        for method in [KendallMethod::Auto, KendallMethod::OneSided] {
            assert_eq!(kendall_counts_with(&x, &y, method, &pool).unwrap(), want);
            assert_eq!(kendall_counts_with(&y, &x, method, &pool).unwrap(), swapped);
        }
    }
}
