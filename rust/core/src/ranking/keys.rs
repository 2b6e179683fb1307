//! Order-preserving keys: every score type maps to a `u64` whose order is the
//! scores' order ([`Score::key`]; floats with `-0.0 == 0.0`, integers exactly),
//! and a row to sort is such a key, or a key with its weight below it ([`Item`]).

use crate::error::Result;
use crate::parallel::Pool;
use crate::sort::{sort_keys, sort_keys_alone};
use crate::vectorized_sort::{chosen_for, Keys, SortAlgorithm};

/// An order-preserving key: `a < b` iff `order_key(a) < order_key(b)` for
/// non-NaN floats, with `-0.0` and `0.0` mapped to the same key.
#[inline]
#[must_use]
pub fn order_key(x: f64) -> u64 {
    // `+ 0.0` turns -0.0 into 0.0; negative values have all bits flipped,
    // positive ones only the sign bit (no branch).
    let b = (x + 0.0).to_bits();
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_wrap)]
    let flip = ((b as i64 >> 63) as u64) | (1 << 63);
    b ^ flip
}

/// A score type the ranking kernels read: floats, and integers ordered as
/// integers (a float64 holds integers exactly only up to 2^53).
pub trait Score: Copy + Default + Send + Sync + 'static {
    /// An order-preserving key: `a < b` iff `a.key() < b.key()` (NaN aside).
    fn key(self) -> u64;
    /// Whether the value is finite (integers always are).
    fn is_finite(self) -> bool {
        true
    }
    /// Whether the value is NaN (integers never are).
    fn is_nan(self) -> bool {
        false
    }
    /// The value as f64 (for messages and reported thresholds).
    fn to_f64(self) -> f64;
    /// The value of a key, as f64.
    fn key_value(k: u64) -> f64;
    /// Whether some values of the type are float32 values ([`Score::f32_bits`]).
    const MAY_BE_F32: bool = false;
    /// The IEEE bits of the value as a float32, when it is one exactly
    /// (float32 scores, and float64 scores widened from float32).
    fn f32_bits(self) -> Option<u32> {
        None
    }
    /// `s` as float32 values when the scores are float32 (kernels with a
    /// float32 form read them so); `None` for every other type.
    fn as_f32s(_s: &[Self]) -> Option<&[f32]> {
        None
    }
}

/// Whether the first values of `scores` (up to 1,024) are all float32 values
/// that the half-width keys take ([`packed_u32`]: finite, not negative): the
/// cheap test before packing every row, so that float64 data that are not
/// widened float32, and logits, give up at once.
pub(crate) fn starts_as_f32<X: Score>(scores: impl Iterator<Item = X>) -> bool {
    X::MAY_BE_F32
        && scores
            .take(1024)
            .all(|s| s.f32_bits().is_some_and(|b| packed_u32(b, false).is_some()))
}

impl Score for f64 {
    #[inline(always)]
    fn key(self) -> u64 {
        order_key(self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn key_value(k: u64) -> f64 {
        from_order_key(k)
    }
    const MAY_BE_F32: bool = true;
    #[inline(always)]
    fn f32_bits(self) -> Option<u32> {
        #[allow(clippy::cast_possible_truncation)]
        let f = self as f32;
        (f64::from(f) == self || self.is_nan()).then(|| f.to_bits())
    }
}

/// float32 scores (probability matrices are often float32): the key of the
/// value widened to f64, so float32 and float64 scores rank alike.
impl Score for f32 {
    const MAY_BE_F32: bool = true;
    fn as_f32s(s: &[Self]) -> Option<&[f32]> {
        Some(s)
    }
    #[inline(always)]
    fn f32_bits(self) -> Option<u32> {
        Some(self.to_bits())
    }
    #[inline(always)]
    fn key(self) -> u64 {
        order_key(f64::from(self))
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f32::is_finite(self)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f32::is_nan(self)
    }
    fn to_f64(self) -> f64 {
        f64::from(self)
    }
    fn key_value(k: u64) -> f64 {
        from_order_key(k)
    }
}

impl Score for i64 {
    #[inline(always)]
    fn key(self) -> u64 {
        #[allow(clippy::cast_sign_loss)]
        let k = (self as u64) ^ (1 << 63);
        k
    }
    #[allow(clippy::cast_precision_loss)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[allow(clippy::cast_possible_wrap, clippy::cast_precision_loss)]
    fn key_value(k: u64) -> f64 {
        (k ^ (1 << 63)) as i64 as f64
    }
}

impl Score for u64 {
    #[inline(always)]
    fn key(self) -> u64 {
        self
    }
    #[allow(clippy::cast_precision_loss)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[allow(clippy::cast_precision_loss)]
    fn key_value(k: u64) -> f64 {
        k as f64
    }
}

/// The `u32` sort key of a float32 score with the outcome in bit 0, when the
/// score is finite and non-negative (probabilities and confidences): such
/// floats' bit patterns order as their values once `-0.0` is read as `0.0`,
/// so `bits << 1 | outcome` sorts by score with negatives first in a tie.
/// `None` for a negative or non-finite score.
#[inline(always)]
#[must_use]
pub fn packed_u32(bits: u32, outcome: bool) -> Option<u32> {
    let bits = if bits == 0x8000_0000 { 0 } else { bits };
    (bits < 0x7F80_0000).then_some((bits << 1) | u32::from(outcome))
}

/// The `u32` sort key of a finite float32 score of either sign with the
/// outcome in bit 0, within its sign's half (the caller keeps the negative
/// scores apart from the others: a logit's order needs all 32 bits of a key
/// and leaves no bit for the outcome, each half needs 31). Below zero
/// `(0x7F7F_FFFF - |bits|) << 1 | outcome`, which sorts by score (the larger
/// magnitude first); from zero up ([`packed_u32`]) `bits << 1 | outcome`,
/// `-0.0` read as `0.0`. Either way negatives come first in a tie.
/// [`u32::MAX`] (no key of either half) for a score that is not finite.
/// Without a branch: the sign of a logit is a coin toss, and a branch on it
/// mispredicted every other row (10^7 logits keyed on two threads: 33-37 ->
/// 7-8 ms, Intel).
#[inline(always)]
#[must_use]
pub fn signed_packed_u32(bits: u32, outcome: bool) -> u32 {
    let magnitude = bits & 0x7FFF_FFFF;
    let key = if bits > 0x8000_0000 {
        0x7F7F_FFFF_u32.wrapping_sub(magnitude)
    } else {
        magnitude
    };
    if magnitude < 0x7F80_0000 {
        (key << 1) | u32::from(outcome)
    } else {
        u32::MAX
    }
}

/// Whether the first values of `scores` (up to 1,024) are finite float32
/// values of either sign ([`signed_packed_u32`]).
pub(crate) fn starts_as_signed_f32<X: Score>(scores: impl Iterator<Item = X>) -> bool {
    X::MAY_BE_F32
        && scores
            .take(1024)
            .all(|s| s.f32_bits().is_some_and(|b| b & 0x7FFF_FFFF < 0x7F80_0000))
}

/// One outcome's rows: a score key, and a weight when weights are given.
pub trait Item: Copy + Default + Ord + Send + Sync {
    const WEIGHTED: bool;
    fn key(self) -> u64;
    fn weight(self) -> f64;
    /// An item above every real key (finite scores never map to `u64::MAX`).
    fn sentinel() -> Self;
    /// Sort by a total order, key then weight bits: the sorted sequence, and
    /// so every floating-point sum over it, is the same whatever the thread
    /// count.
    fn sort(v: &mut Vec<Self>, pool: &Pool) -> Result<()>;
    /// [`Item::sort`] on the calling thread ([`sort_keys_alone`]; for `u64`
    /// keys [`crate::sort::sort_u64_alone`], high bytes first).
    fn sort_alone(v: &mut Vec<Self>, pool: &Pool) -> Result<()>;
    /// Sort a slice on the calling thread with the vectorized sort; false
    /// (nothing done) for a key type or build without it.
    fn sort_vectorized(_v: &mut [Self]) -> bool {
        false
    }
    /// Whether this process chose the vectorized sort for this key type
    /// ([`crate::vectorized_sort::chosen_for`]).
    fn vectorized_chosen() -> bool {
        false
    }
    /// `s` as `u32` keys when the items are such keys (the walk reads those
    /// sixteen at a time); `None` for every other item.
    fn as_u32s(_s: &[Self]) -> Option<&[u32]> {
        None
    }
}

impl Item for u64 {
    const WEIGHTED: bool = false;
    #[inline(always)]
    fn key(self) -> u64 {
        self
    }
    #[inline(always)]
    fn weight(self) -> f64 {
        1.0
    }
    fn sentinel() -> Self {
        u64::MAX
    }
    fn sort(v: &mut Vec<Self>, pool: &Pool) -> Result<()> {
        sort_keys(v, pool)
    }
    fn sort_alone(v: &mut Vec<Self>, pool: &Pool) -> Result<()> {
        crate::sort::sort_u64_alone(v, pool)
    }
    fn sort_vectorized(v: &mut [Self]) -> bool {
        crate::vectorized_sort::sort_u64(v)
    }
    fn vectorized_chosen() -> bool {
        chosen_for(Keys::U64) == SortAlgorithm::Vectorized
    }
}

/// A packed float32 row ([`packed_u32`], [`signed_packed_u32`]): the key
/// is the score's bits with the outcome in bit 0, as for packed `u64` rows.
impl Item for u32 {
    const WEIGHTED: bool = false;
    #[inline(always)]
    fn key(self) -> u64 {
        u64::from(self)
    }
    #[inline(always)]
    fn weight(self) -> f64 {
        1.0
    }
    fn sentinel() -> Self {
        u32::MAX
    }
    fn sort(v: &mut Vec<Self>, pool: &Pool) -> Result<()> {
        sort_keys(v, pool)
    }
    fn sort_alone(v: &mut Vec<Self>, pool: &Pool) -> Result<()> {
        sort_keys_alone(v, pool)
    }
    fn sort_vectorized(v: &mut [Self]) -> bool {
        crate::vectorized_sort::sort_u32(v)
    }
    fn vectorized_chosen() -> bool {
        chosen_for(Keys::U32) == SortAlgorithm::Vectorized
    }
    fn as_u32s(s: &[Self]) -> Option<&[u32]> {
        Some(s)
    }
}

/// A weighted row: the key in the high 64 bits, the weight's bits below, so
/// that one radix sort orders by key and then by weight (a total order).
impl Item for u128 {
    const WEIGHTED: bool = true;
    #[inline(always)]
    fn key(self) -> u64 {
        (self >> 64) as u64
    }
    #[inline(always)]
    fn weight(self) -> f64 {
        #[allow(clippy::cast_possible_truncation)]
        f64::from_bits(self as u64)
    }
    fn sentinel() -> Self {
        u128::MAX
    }
    fn sort(v: &mut Vec<Self>, pool: &Pool) -> Result<()> {
        sort_keys(v, pool)
    }
    fn sort_alone(v: &mut Vec<Self>, pool: &Pool) -> Result<()> {
        sort_keys_alone(v, pool)
    }
}

/// A weighted row for [`Item`] (`key`, `weight`).
pub(crate) fn weighted(key: u64, w: f64) -> u128 {
    (u128::from(key) << 64) | u128::from(w.to_bits())
}

/// The inverse of [`order_key`].
#[must_use]
pub fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k ^ (1 << 63) } else { !k })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signed_keys_order_each_half_as_the_values() {
        let values = [
            f32::MIN,
            -3.5e20,
            -1.0,
            -f32::MIN_POSITIVE,
            -1e-45,
            -0.0,
            0.0,
            1e-45,
            f32::MIN_POSITIVE,
            0.5,
            1.0,
            f32::MAX,
        ];
        let key = |v: f32, outcome: bool| signed_packed_u32(v.to_bits(), outcome);
        for w in values.windows(2) {
            let (a, b) = (w[0], w[1]);
            let half = |v: f32| v < 0.0;
            if half(a) == half(b) {
                if a == b {
                    assert_eq!(key(a, false), key(b, false), "{a} {b}");
                } else {
                    // Strictly below, with either outcome.
                    assert!(key(a, true) < key(b, false), "{a} {b}");
                }
            }
        }
        for &v in &values {
            // The outcome in bit 0, the negatives of a tie first; non-negative
            // scores keyed as packed_u32 keys them.
            assert_eq!(key(v, true), key(v, false) | 1);
            assert_eq!(key(v, false) & 1, 0);
            if v >= 0.0 {
                assert_eq!(Some(key(v, true)), packed_u32(v.to_bits(), true));
            }
        }
        for v in [f32::INFINITY, f32::NEG_INFINITY, f32::NAN, -f32::NAN] {
            assert_eq!(key(v, false), u32::MAX);
            assert_eq!(key(v, true), u32::MAX);
        }
        // No finite score reaches the marker.
        assert!(key(f32::MAX, true) < u32::MAX && key(f32::MIN, true) < u32::MAX);
    }
}
