//! The rows of a walk as a stream in ascending score order: the merge of the
//! two sorted sides, or one sorted array with the outcome in each key.

use super::keys::Item;

/// Rows in ascending score order (negatives first within a tie): `(key, positive, weight)`.
pub(super) trait Stream {
    /// Whether rows carry weights (otherwise every weight is 1).
    const WEIGHTED: bool;
    fn next(&mut self) -> (u64, bool, f64);
}

/// The branch-free merge of the two sorted sides; an exhausted side reads as
/// a sentinel keyed `u64::MAX`. That is also a real key (integer scores at
/// `i64::MAX` or `u64::MAX`): with `GUARDED` the merge checks the sides'
/// lengths instead, which costs a third of the walk, so it is used only when
/// such a key occurs.
pub(super) struct Merge<'a, T, const GUARDED: bool> {
    pos: &'a [T],
    neg: &'a [T],
    ip: usize,
    ineg: usize,
}

impl<'a, T, const GUARDED: bool> Merge<'a, T, GUARDED> {
    pub(super) fn new(pos: &'a [T], neg: &'a [T]) -> Self {
        Self {
            pos,
            neg,
            ip: 0,
            ineg: 0,
        }
    }
}

impl<T: Item, const GUARDED: bool> Stream for Merge<'_, T, GUARDED> {
    const WEIGHTED: bool = T::WEIGHTED;
    #[inline(always)]
    fn next(&mut self) -> (u64, bool, f64) {
        let a = self.pos.get(self.ip).copied().unwrap_or_else(T::sentinel);
        let b = self.neg.get(self.ineg).copied().unwrap_or_else(T::sentinel);
        let take_neg = if GUARDED {
            self.ineg < self.neg.len() && (self.ip >= self.pos.len() || b.key() <= a.key())
        } else {
            b.key() <= a.key()
        };
        let x = if take_neg { b } else { a };
        self.ip += usize::from(!take_neg);
        self.ineg += usize::from(take_neg);
        (x.key(), !take_neg, x.weight())
    }
}

/// One sorted array whose keys carry the outcome in bit 0 (possible when
/// bit 0 is the same in every score key: it then orders nothing).
pub(super) struct Packed<'a, T> {
    pub(super) rows: std::slice::Iter<'a, T>,
}

impl<T: Item> Stream for Packed<'_, T> {
    const WEIGHTED: bool = T::WEIGHTED;
    #[inline(always)]
    fn next(&mut self) -> (u64, bool, f64) {
        let x = self.rows.next().copied().unwrap_or_else(T::sentinel);
        let k = x.key();
        (k >> 1, k & 1 == 1, x.weight())
    }
}
