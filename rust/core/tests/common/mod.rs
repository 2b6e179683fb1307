//! Helpers the integration tests share (each test crate uses some of them).
#![allow(dead_code)]

use cmetrics_core::ranking::BinaryRanking;
use proptest::prelude::*;

/// A small deterministic generator (no extra dependency).
pub fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        s >> 33
    }
}

/// Marsaglia's xorshift64 (shifts 13, 7, 17) from a nonzero `seed`: whole
/// 64-bit words, where [`lcg`] gives 31 bits.
pub fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// Two walks of the same rows: exact counts, curve sums to rounding.
pub fn same_walk(got: &BinaryRanking, want: &BinaryRanking) -> Result<(), TestCaseError> {
    prop_assert_eq!(
        (
            got.reversed,
            got.tied,
            got.ordered,
            got.n_thresholds,
            got.n_pos,
            got.n_neg
        ),
        (
            want.reversed,
            want.tied,
            want.ordered,
            want.n_thresholds,
            want.n_pos,
            want.n_neg
        )
    );
    for (a, b) in [
        (got.average_precision, want.average_precision),
        (got.aupr_trapezoid, want.aupr_trapezoid),
        (got.aurc, want.aurc),
        (got.ordered_share, want.ordered_share),
        (got.tied_share, want.tied_share),
    ] {
        prop_assert!(
            (a.is_nan() && b.is_nan()) || (a - b).abs() <= 1e-12 * b.abs().max(1.0),
            "{a} {b}"
        );
    }
    Ok(())
}
