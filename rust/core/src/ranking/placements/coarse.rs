//! The coarse order of a packed key ([`super::ordered()`]): the bits above a
//! row's index and class that sort the rows before each run of equal bits is
//! put in the order of its full keys. The high bits of a score's order key
//! spend most of their width on the sign and the exponent: scores spread
//! evenly over [0, 1] (probabilities) keep 27 bits of their mantissa at 10^7
//! rows, and about 2 % of the rows share them with a neighbour. Each such run
//! costs the walk a read of its rows' scores from all over memory. A place on
//! a line through the scores' range spends every bit on the range instead:
//! then about 0.02 % of those rows share.

use crate::ranking::keys::Score;

/// Scores sampled to choose (evenly spaced over the rows).
const SAMPLE: usize = 1023;
/// Rows below which the order keys' high bits serve (as they always did).
const SAMPLED_ROWS: usize = 1 << 16;

/// How a score becomes the coarse part of its packed key.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Coarse {
    /// The high bits of its order key.
    Key,
    /// Its place on the line from `from` (0) to `top` at `scale` per unit,
    /// clamped to `[0, top]`: monotone in the score (a subtraction and a
    /// multiplication by a positive number never reverse two values), so
    /// equal scores share it and a run of two values is put in order by their
    /// full keys. `top` is below `2^52`, an integer that a float holds.
    Line { from: f64, scale: f64, top: f64 },
}

impl Coarse {
    /// The coarse key of `s` in the bits from `low` up, the bits below zero.
    #[inline(always)]
    pub(super) fn high<X: Score>(self, s: X, low: u32) -> u64 {
        match self {
            Self::Key => s.key() >> low << low,
            // A NaN takes 0 (its row fails the finiteness test anyway).
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Self::Line { from, scale, top } => {
                (((s.to_f64() - from) * scale).clamp(0.0, top) as u64) << low
            }
        }
    }

    /// Whether the coarse key `high` (bits from `low` up) is one of the line's
    /// ends, where the scores outside the sampled range (and a margin) gather.
    #[inline(always)]
    pub(super) fn at_end(self, high: u64, low: u32) -> bool {
        match self {
            Self::Key => false,
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            Self::Line { top, .. } => {
                let h = high >> low;
                h == 0 || h == top as u64
            }
        }
    }

    /// The coarse order for packed keys whose coarse part starts at bit `low`
    /// (`2 <= low < 64`): a line through the sampled scores' range widened by
    /// an eighth on either side, unless two sampled scores that differ would
    /// share a place on it (scores crowding near one value, or spread over
    /// many powers of ten); then the order keys' high bits unless they clash
    /// the same way; `None` when both do (the rows are sorted with their full
    /// keys). Fewer than 2^16 rows keep the order keys' high bits.
    pub(super) fn choose<X: Score>(score: &[X], low: u32) -> Option<Self> {
        let sample = sample(score);
        if sample.is_empty() {
            return Some(Self::Key);
        }
        let clash = |c: Self| clash(&sample, c, low);
        let (min, max) = (sample[0].to_f64(), sample[SAMPLE - 1].to_f64());
        let spread = max - min;
        let bits = (64 - low).min(52);
        #[allow(clippy::cast_precision_loss)]
        let top = ((1_u64 << bits) - 1) as f64;
        let from = min - spread / 8.0;
        let scale = top / (spread * 1.25);
        if spread > 0.0 && from.is_finite() && scale.is_finite() && scale > 0.0 {
            let line = Self::Line { from, scale, top };
            if !clash(line) {
                return Some(line);
            }
        }
        (!clash(Self::Key)).then_some(Self::Key)
    }
}

/// Scores sampled evenly over the rows, in key order; none below
/// [`SAMPLED_ROWS`] rows.
fn sample<X: Score>(score: &[X]) -> Vec<X> {
    let n = score.len();
    if n < SAMPLED_ROWS {
        return Vec::new();
    }
    let mut sample: Vec<X> = (0..SAMPLE).map(|i| score[i * n / SAMPLE]).collect();
    sample.sort_unstable_by_key(|s| s.key());
    sample
}

/// Whether two scores of `sample` (in key order) that differ share their
/// coarse key under `c`.
fn clash<X: Score>(sample: &[X], c: Coarse, low: u32) -> bool {
    sample
        .windows(2)
        .any(|w| w[0].key() != w[1].key() && c.high(w[0], low) == c.high(w[1], low))
}

/// Whether a sample of the scores holds two that differ in their key's low
/// `low` bits only: scores crowding near one value (saturated probabilities),
/// whose packed order keys would leave long runs to order by the full keys.
pub(super) fn crowded<X: Score>(score: &[X], low: u32) -> bool {
    clash(&sample(score), Coarse::Key, low)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_keeps_the_order_of_any_two_scores() {
        // Neighbouring floats, both signs, the range's ends and far outside
        // it, and integers that float64 rounds: never in reverse order.
        let mut r = crate::random::lcg(7);
        let n = 1 << 17;
        let score: Vec<f64> = (0..n)
            .map(|_| (r() % 1_000_000) as f64 * 1e-6 - 0.3)
            .collect();
        let Some(line @ Coarse::Line { .. }) = Coarse::choose(&score, 18) else {
            panic!("spread scores take the line");
        };
        let mut probe = vec![-1e300, -0.3, 0.7, 1e300, f64::MIN_POSITIVE, -0.0, 0.0];
        for &s in &score[..4000] {
            probe.extend([s, s.next_up(), s.next_down()]);
        }
        probe.sort_by(f64::total_cmp);
        for w in probe.windows(2) {
            assert!(line.high(w[0], 18) <= line.high(w[1], 18), "{w:?}");
        }
        assert!(line.at_end(line.high(-1e300, 18), 18) && line.at_end(line.high(1e300, 18), 18));
        assert!(!line.at_end(line.high(0.2, 18), 18));
        let ints: Vec<i64> = (0..n as i64)
            .map(|i| (i - 60_000) * 1_000_000_007)
            .collect();
        let line = Coarse::choose(&ints, 18).unwrap();
        let mut probe: Vec<i64> = ints[..2000].to_vec();
        probe.extend([i64::MIN, i64::MAX, i64::MAX - 1, (1 << 60) + 1, 1 << 60]);
        probe.sort_unstable();
        for w in probe.windows(2) {
            assert!(line.high(w[0], 18) <= line.high(w[1], 18), "{w:?}");
        }
    }

    #[test]
    fn the_choice_follows_the_sample() {
        let n = 1 << 17;
        // Evenly spread: the line; its places use every bit above `low`.
        let even: Vec<f64> = (0..n).map(|i| ((i * 7919) % n) as f64 / n as f64).collect();
        let line = Coarse::choose(&even, 30).unwrap();
        assert!(matches!(line, Coarse::Line { .. }));
        assert!(line.high(1.0, 30) >> 30 > 1 << 32);
        // Spread over many powers of ten: the line would merge the small
        // ones; the order keys' high bits tell them apart.
        let wide: Vec<f64> = (0..n)
            .map(|i| 10f64.powi((i % 40) as i32 - 20) * 1.5)
            .collect();
        assert_eq!(Coarse::choose(&wide, 30), Some(Coarse::Key));
        // Crowded within a few units in the last place: the line through
        // their range; beside scores spread over powers of ten, neither.
        let crowded: Vec<f64> = (0..n)
            .map(|i| 1.0 - (i % 50) as f64 * f64::EPSILON)
            .collect();
        assert!(matches!(
            Coarse::choose(&crowded, 30),
            Some(Coarse::Line { .. })
        ));
        let both: Vec<f64> = (0..n)
            .map(|i| if i % 2 == 0 { crowded[i] } else { wide[i] })
            .collect();
        assert_eq!(Coarse::choose(&both, 30), None);
        // One value: no spread, the order keys (every row one run).
        assert_eq!(Coarse::choose(&vec![0.5; n], 30), Some(Coarse::Key));
        // Few rows: the order keys.
        assert_eq!(Coarse::choose(&even[..1000], 30), Some(Coarse::Key));
    }
}
