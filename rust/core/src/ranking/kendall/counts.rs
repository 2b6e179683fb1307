//! The pair counts every Kendall method returns, and the tau-b and tau-c of them.

/// Pair counts of Kendall's tau between two vectors (docs/definitions.md §5.3, Knight 1966).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KendallCounts {
    /// Rows.
    pub n: u64,
    /// Pairs tied in x (joint ties included), tied in y, tied in both.
    pub x_ties: u128,
    pub y_ties: u128,
    pub joint_ties: u128,
    /// Discordant pairs.
    pub discordant: u128,
    /// Distinct values of x and of y.
    pub x_distinct: u64,
    pub y_distinct: u64,
}

impl KendallCounts {
    /// All pairs, `n (n - 1) / 2`.
    #[must_use]
    pub fn pairs(&self) -> u128 {
        let n = u128::from(self.n);
        n * n.saturating_sub(1) / 2
    }
    /// `n_c - n_d` (exact).
    #[must_use]
    #[allow(clippy::cast_possible_wrap)]
    pub fn concordant_minus_discordant(&self) -> i128 {
        (self.pairs() + self.joint_ties) as i128
            - (self.x_ties + self.y_ties) as i128
            - 2 * self.discordant as i128
    }
    /// Kendall's tau-b (NaN when x or y is constant, or n < 2):
    /// `(n_c - n_d) / sqrt((n0 - n1) (n0 - n2))`, the product formed exactly
    /// (u128) and rounded once, so three roundings in all (scipy's two square
    /// roots and two divisions take four); clamped to [-1, 1].
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn tau_b(&self) -> f64 {
        let n0 = self.pairs();
        let (a, b) = (n0 - self.x_ties, n0 - self.y_ties);
        if a == 0 || b == 0 {
            return f64::NAN;
        }
        let den = a.checked_mul(b).map_or_else(
            || (a as f64).sqrt() * (b as f64).sqrt(),
            |ab| (ab as f64).sqrt(),
        );
        (self.concordant_minus_discordant() as f64 / den).clamp(-1.0, 1.0)
    }
    /// Stuart's tau-c (NaN when x or y is constant, or n < 2).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn tau_c(&self) -> f64 {
        let m = self.x_distinct.min(self.y_distinct);
        if m < 2 || self.n < 2 {
            return f64::NAN;
        }
        let n = self.n as f64;
        let m = m as f64;
        (2.0 * self.concordant_minus_discordant() as f64 / (n * n * (m - 1.0) / m)).clamp(-1.0, 1.0)
    }
}
