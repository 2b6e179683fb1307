//! The steps of a counting pass, shared by the crate's own counting sorts
//! (the ranking state's buckets and radix passes in `sort.rs`, the one-thread
//! buckets of `u32` keys in [`super::buckets`]): count the keys by a digit,
//! turn the counts into where each digit's keys start, and deal the keys to
//! those places in their order (a stable pass).

use std::ops::Add;

/// A count of keys: `u32` where the tables should stay small in the cache,
/// `usize` elsewhere.
pub(crate) trait Count: Copy + Default + Add<Output = Self> {
    /// One key.
    const ONE: Self;
    /// The count as a position in an array.
    fn at(self) -> usize;
}

impl Count for u32 {
    const ONE: Self = 1;
    #[inline(always)]
    fn at(self) -> usize {
        self as usize
    }
}

impl Count for usize {
    const ONE: Self = 1;
    #[inline(always)]
    fn at(self) -> usize {
        self
    }
}

/// Add one to `counts[digit(k)]` for each key `k` of `keys` (a digit past
/// the table is not counted; no caller makes one).
#[inline(always)]
pub(crate) fn count<T: Copy, C: Count>(keys: &[T], counts: &mut [C], digit: impl Fn(T) -> usize) {
    for &k in keys {
        if let Some(c) = counts.get_mut(digit(k)) {
            *c = *c + C::ONE;
        }
    }
}

/// Replace each count by the sum of the counts before it (where that
/// digit's keys start once dealt); the sum of them all.
#[inline(always)]
pub(crate) fn starts<C: Count>(counts: &mut [C]) -> C {
    let mut total = C::default();
    for c in counts.iter_mut() {
        let count = *c;
        *c = total;
        total = total + count;
    }
    total
}

/// Deal `keys` in their order: each key is handed to `put` with the place
/// `at[digit(k)]`, which then moves on by one (so the starts of [`starts`]
/// end as the ends of each digit's keys). A digit past the table deals
/// nothing.
#[inline(always)]
pub(crate) fn deal<T: Copy, C: Count>(
    keys: &[T],
    at: &mut [C],
    digit: impl Fn(T) -> usize,
    mut put: impl FnMut(usize, T),
) {
    for &k in keys {
        if let Some(slot) = at.get_mut(digit(k)) {
            let place = *slot;
            put(place.at(), k);
            *slot = place + C::ONE;
        }
    }
}

/// Sort `keys` by two digits, the low one first, through `between` (as long
/// as `keys`) in two stable passes; `low` and `high` hold the counts of each
/// digit's values in `keys`. A digit that is the same in every key orders
/// nothing: its pass is skipped (and a single pass copied back).
#[inline(always)]
pub(crate) fn two_passes<T: Copy, C: Count>(
    keys: &mut [T],
    between: &mut [T],
    (low, high): (&mut [C], &mut [C]),
    low_digit: impl Fn(T) -> usize,
    high_digit: impl Fn(T) -> usize,
) {
    let n = keys.len();
    let one_value = |c: &[C]| c.iter().any(|&x| x.at() == n);
    match (one_value(low), one_value(high)) {
        (true, true) => {}
        (true, false) => {
            pass(keys, between, high, high_digit);
            keys.copy_from_slice(between);
        }
        (false, true) => {
            pass(keys, between, low, low_digit);
            keys.copy_from_slice(between);
        }
        (false, false) => {
            pass(keys, between, low, low_digit);
            pass(between, keys, high, high_digit);
        }
    }
}

/// One stable counting pass of `from` into `to` by `digit`, whose values
/// `counts` counts.
#[inline(always)]
fn pass<T: Copy, C: Count>(from: &[T], to: &mut [T], counts: &mut [C], digit: impl Fn(T) -> usize) {
    starts(counts);
    deal(from, counts, digit, |at, k| {
        if let Some(slot) = to.get_mut(at) {
            *slot = k;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pass_of_count_starts_and_deal_is_a_stable_sort_by_the_digit() {
        let keys: Vec<u32> = (0..500_u32)
            .map(|i| i.wrapping_mul(2_654_435_761) >> 7)
            .collect();
        let digit = |k: u32| (k & 15) as usize;
        let mut counts = [0_u32; 16];
        count(&keys, &mut counts, digit);
        assert_eq!(counts.iter().sum::<u32>(), 500);
        let before = counts;
        assert_eq!(starts(&mut counts), 500);
        let mut out = vec![u32::MAX; keys.len()];
        deal(&keys, &mut counts, digit, |i, k| out[i] = k);
        // The starts became the ends.
        let mut end = 0;
        for (c, b) in counts.iter().zip(before) {
            end += b;
            assert_eq!(*c, end);
        }
        // Stable: by the digit, then in the keys' own order.
        let mut expected: Vec<(usize, u32)> = keys.iter().map(|&k| (digit(k), k)).collect();
        expected.sort_by_key(|&(d, _)| d);
        let expected: Vec<u32> = expected.into_iter().map(|(_, k)| k).collect();
        assert_eq!(out, expected);
    }

    #[test]
    fn usize_counts_give_the_same_places() {
        let keys: Vec<u64> = (0..300_u64).map(|i| (i * 7919) % 1000).collect();
        let digit = |k: u64| (k / 100) as usize;
        let (mut a, mut b) = ([0_u32; 10], [0_usize; 10]);
        count(&keys, &mut a, digit);
        count(&keys, &mut b, digit);
        assert_eq!(starts(&mut a) as usize, starts(&mut b));
        let (mut pa, mut pb) = (Vec::new(), Vec::new());
        deal(&keys, &mut a, digit, |i, _| pa.push(i));
        deal(&keys, &mut b, digit, |i, _| pb.push(i));
        assert_eq!(pa, pb);
        let mut sorted = pa.clone();
        sorted.sort_unstable();
        assert_eq!(sorted, (0..300).collect::<Vec<_>>());
    }
}
