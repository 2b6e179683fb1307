//! The rule a row of probabilities must meet, shared by every kernel that
//! checks rows: the probability pass ([`crate::probabilistic`]) and the tie
//! groups of binary probabilities ([`crate::ranking::binary_proba_groups`]),
//! so that both accept and refuse the same rows.

/// The row-sum tolerance of rows of `k` probabilities: `atol`, or when it is
/// NaN (not given) `10^-6 K` (docs/definitions.md §1.5).
#[must_use]
pub fn row_atol(atol: f64, k: usize) -> f64 {
    #[allow(clippy::cast_precision_loss)]
    if atol.is_nan() {
        1e-6 * k as f64
    } else {
        atol
    }
}

/// Whether a row of probabilities summing to `sum` passes the row check:
/// within `atol` of 1 (a NaN sum does not).
#[inline(always)]
#[must_use]
pub fn row_sum_fits(sum: f64, atol: f64) -> bool {
    (sum - 1.0).abs().le(&atol)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tolerance_and_the_sum_rule() {
        assert!((row_atol(f64::NAN, 10) - 1e-5).abs() < 1e-18);
        assert_eq!(row_atol(0.25, 10), 0.25);
        assert!(row_sum_fits(1.0, 0.0));
        // Off by exactly the tolerance passes; a hair more does not.
        assert!(row_sum_fits(1.5, 0.5));
        assert!(!row_sum_fits(1.5, 0.499_999));
        assert!(row_sum_fits(0.5, 0.5));
        assert!(!row_sum_fits(f64::NAN, 1.0));
        assert!(!row_sum_fits(f64::INFINITY, 1e300));
    }
}
