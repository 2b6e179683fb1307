//! The vectorisable `ln` against the standard library.
#![allow(clippy::unwrap_used)]

use cmetrics_core::fastmath::{ln, neg_xlogx_sum};
use proptest::prelude::*;

fn ulps(a: f64, b: f64) -> u64 {
    (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
}

#[test]
fn ln_is_within_two_ulp_on_a_dense_grid() {
    let mut worst = 0;
    let mut x = f64::from_bits(1); // smallest subnormal
    while x < 1e300 {
        worst = worst.max(ulps(ln(x), x.ln()));
        // Step geometrically, but always move (tiny subnormals round back).
        x = (x * 1.000_37).max(f64::from_bits(x.to_bits() + 1));
    }
    for i in 1..=100_000 {
        let p = f64::from(i) / 100_000.0;
        worst = worst.max(ulps(ln(p), p.ln()));
    }
    assert!(worst <= 2, "worst error {worst} ulp");
    assert_eq!(ln(1.0), 0.0);
}

proptest! {
    #[test]
    fn ln_matches_std_on_random_positive_values(bits in 1_u64..0x7FEF_FFFF_FFFF_FFFF) {
        let x = f64::from_bits(bits);
        prop_assert!(ulps(ln(x), x.ln()) <= 2);
    }
}

#[test]
fn xlogx_sum_handles_zeros_and_matches_naive() {
    let xs = [0.0, 0.25, 0.5, 0.25, 0.0, 1.0, 1e-300, 0.3, 0.7];
    let naive: f64 = xs
        .iter()
        .map(|&x: &f64| if x > 0.0 { -x * x.ln() } else { 0.0 })
        .sum();
    let got = neg_xlogx_sum(&xs, |x| x);
    assert!((got - naive).abs() <= 1e-15 * naive.abs().max(1.0));
}
