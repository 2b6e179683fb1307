//! The rows of a walk as a stream in ascending score order: the merge of the
//! two sorted sides, or one sorted array with the outcome in each key.

use super::keys::Item;

/// Rows in ascending score order (negatives first within a tie): `(key, positive, weight)`.
pub(super) trait Stream {
    /// Whether rows carry weights (otherwise every weight is 1).
    const WEIGHTED: bool;
    fn next(&mut self) -> (u64, bool, f64);
    /// The rows left, when they are one sorted array of packed `u32` keys
    /// (the unweighted walk then reads them a block at a time).
    fn packed_u32(&self) -> Option<&[u32]> {
        None
    }
    /// The rows left, when they are the merge of two sorted arrays of packed
    /// `u32` keys (the unweighted walk then merges them in vectors).
    fn packed_u32_pair(&self) -> Option<(&[u32], &[u32])> {
        None
    }
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
    fn packed_u32(&self) -> Option<&[u32]> {
        T::as_u32s(self.rows.as_slice())
    }
}

/// The merge of two sorted packed arrays ([`Packed`] keys): the rows of
/// [`Packed`] over their merge, in the same order (equal keys are equal rows).
pub(super) struct PackedMerge<'a, T> {
    a: &'a [T],
    b: &'a [T],
    ia: usize,
    ib: usize,
}

impl<'a, T> PackedMerge<'a, T> {
    pub(super) fn new(a: &'a [T], b: &'a [T]) -> Self {
        Self { a, b, ia: 0, ib: 0 }
    }
}

impl<T: Item> Stream for PackedMerge<'_, T> {
    const WEIGHTED: bool = T::WEIGHTED;
    #[inline(always)]
    fn next(&mut self) -> (u64, bool, f64) {
        // An exhausted array reads as the sentinel, above every packed key.
        let x = self
            .a
            .get(self.ia)
            .copied()
            .unwrap_or_else(T::sentinel)
            .key();
        let y = self
            .b
            .get(self.ib)
            .copied()
            .unwrap_or_else(T::sentinel)
            .key();
        let take_b = y < x;
        self.ia += usize::from(!take_b);
        self.ib += usize::from(take_b);
        let k = if take_b { y } else { x };
        (k >> 1, k & 1 == 1, 1.0)
    }
    fn packed_u32_pair(&self) -> Option<(&[u32], &[u32])> {
        Some((
            T::as_u32s(self.a.get(self.ia..)?)?,
            T::as_u32s(self.b.get(self.ib..)?)?,
        ))
    }
}
