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
        // Without AVX-512 the dispatched sums are the portable loops (compiled
        // for AVX2 where the CPU has it): the same bits.
        #[cfg(target_arch = "x86_64")]
        if !std::arch::is_x86_feature_detected!("avx512f") {
            assert_eq!(
                cmetrics_core::fastmath::neg_xlogx_sum_f64(part).to_bits(),
                neg_xlogx_sum(part, |v| v).to_bits()
            );
            assert_eq!(
                cmetrics_core::fastmath::ln_sum(&pos).to_bits(),
                cmetrics_core::fastmath::lane_sum(&pos, ln).to_bits()
            );
        }
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
