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

#[test]
fn dispatched_sums_match_the_standard_library() {
    // Values spread over many binades, subnormals and exact zeros included.
    let mut xs = vec![
        0.0,
        1.0,
        f64::MIN_POSITIVE,
        f64::from_bits(3),
        1.0 - f64::EPSILON / 2.0,
    ];
    let mut x = 1e-300_f64;
    while x < 1.0 {
        xs.push(x);
        x *= 1.0137;
    }
    for n in [0, 1, 7, 8, 9, 15, 16, 17, 33, xs.len()] {
        let part = &xs[..n];
        let naive: f64 = part
            .iter()
            .map(|&v| if v > 0.0 { -v * v.ln() } else { 0.0 })
            .sum();
        let got = cmetrics_core::fastmath::neg_xlogx_sum_f64(part);
        assert!(
            (got - naive).abs() <= 1e-14 * naive.abs().max(1e-300),
            "n={n}: {got} vs {naive}"
        );
        let pos: Vec<f64> = part.iter().copied().filter(|&v| v > 0.0).collect();
        let naive: f64 = pos.iter().map(|v| v.ln()).sum();
        let got = cmetrics_core::fastmath::ln_sum(&pos);
        assert!(
            (got - naive).abs() <= 1e-14 * naive.abs().max(1e-300),
            "n={n}: {got} vs {naive}"
        );
        // f32 values give the same bits as the same values widened to f64.
        let f: Vec<f32> = part.iter().map(|&v| v as f32).collect();
        let wide: Vec<f64> = f.iter().map(|&v| f64::from(v)).collect();
        assert_eq!(
            cmetrics_core::fastmath::neg_xlogx_sum_f32(&f).to_bits(),
            cmetrics_core::fastmath::neg_xlogx_sum_f64(&wide).to_bits()
        );
    }
    // Each logarithm on its own, near 1 where the relative error matters most.
    for v in [
        1.0 - 1e-15,
        1.0 - f64::EPSILON,
        1.0 + 1e-12,
        0.5,
        2.0_f64.sqrt(),
        1e-310,
    ] {
        let got = cmetrics_core::fastmath::ln_sum(&[v]);
        assert!(ulps(got, v.ln()) <= 4, "{v}: {got} vs {}", v.ln());
    }
}

/// The dispatched kernel of this CPU (AVX-512, AVX2 with FMA, or portable),
/// one value at a time over a dense grid of every binade, subnormals
/// included: `ln` within 4 ulp, `-x ln x` within 4 ulp of `-x` times the
/// correctly rounded `ln x`, the same bits from f32 input as from its widening.
#[test]
fn dispatched_logarithms_are_within_four_ulp_one_value_at_a_time() {
    let (mut worst_ln, mut worst_xlogx) = (0, 0);
    let mut x = f64::from_bits(1);
    while x < 1e300 {
        let ln = cmetrics_core::fastmath::ln_sum(&[x]);
        worst_ln = worst_ln.max(ulps(ln, x.ln()));
        let h = cmetrics_core::fastmath::neg_xlogx_sum_f64(&[x]);
        worst_xlogx = worst_xlogx.max(ulps(h, -x * x.ln()));
        #[allow(clippy::cast_possible_truncation)] // f32 values on purpose
        let narrow = x as f32;
        if narrow > 0.0 && narrow.is_finite() {
            assert_eq!(
                cmetrics_core::fastmath::neg_xlogx_sum_f32(&[narrow]).to_bits(),
                cmetrics_core::fastmath::neg_xlogx_sum_f64(&[f64::from(narrow)]).to_bits()
            );
        }
        // Subnormals step by a whole unit at least (a product alone rounds
        // back to the smallest ones).
        x = (x * 1.000_37).max(f64::from_bits(x.to_bits() + 1));
    }
    assert!(worst_ln <= 4, "ln: worst {worst_ln} ulp");
    assert!(worst_xlogx <= 4, "-x ln x: worst {worst_xlogx} ulp");
}
