//! A one-thread sort of `u32` keys by buckets of their high bits, for keys that
//! spread over many values of their high 14 bits (float32 probabilities
//! packed as [`crate::ranking`]'s keys: a column of 10^7 softmax scores
//! falls in about 1,800 such buckets of at most about 43,000 keys).
//!
//! One pass counts the keys by their high bits; a second deals them into
//! those buckets, in a spare array the caller lends (and may lend again to
//! the next sort, so that only its first use touches fresh pages); then each
//! bucket, small enough to stay in the core's cache, is put in order where
//! it lies by its low 18 bits (two 9-bit counting passes through a scratch
//! array as long as the largest bucket), and the spare array becomes the
//! sorted one. The whole array is read three times and written once outside the
//! cache, where the radix sort of `rdst` (a byte at a time) moves it about
//! twice as often. On the Zen 4 guest, 10^7 keys of a softmax column: alone
//! on one thread the two sorts take about as long (42-68 ms against `rdst`'s
//! 44-65 ms), but two sorts side by side, as the one-vs-rest columns run,
//! share the memory bus, and there the buckets win (65-72 ms for the pair
//! against 89-117 ms).
//! Sizes chosen by measuring: 12 high bits gave 500 buckets of up to 168,000
//! keys (the deal fast, the buckets too large for the core's cache), 16 bits
//! 6,400 buckets (a deal into that many places took twice as long).

use super::counting::{count, deal, starts, two_passes};
use crate::error::Result;
use crate::memory::try_filled;
use crate::parallel::reserve_big;

/// Bits of the bucket number (the high bits of a key).
pub(crate) const HIGH: u32 = 14;
/// Buckets.
const BUCKETS: usize = 1 << HIGH;
/// Bits of each of the two counting passes within a bucket (together they
/// cover the `32 - HIGH` low bits).
const DIGIT: u32 = (32 - HIGH).div_ceil(2);
/// Values of one digit.
const RADIX: usize = 1 << DIGIT;
/// A digit's bits.
const MASK: u32 = (1 << DIGIT) - 1;

/// Buckets of at most this many keys are copied back and sorted by
/// comparison (cheaper than two counting passes over `RADIX` counters each).
const SMALL: usize = 64;

/// The fewest keys [`sort_u32_in_buckets`] sorts: below, its table of
/// [`BUCKETS`] counts costs more than it saves (a grouped report sorts many
/// short columns).
pub(crate) const MIN_KEYS: usize = 1 << 16;

/// Sort `v` ascending, lending `spare` (grown to `v.len()` when shorter):
/// the keys are sorted into `spare`'s memory and the two vectors change
/// places, so that `spare` holds `v`'s old memory (and contents) after.
/// False, with `v` untouched, when the buckets would not pay: fewer than
/// [`MIN_KEYS`] keys, more than `u32::MAX`, or keys not spread enough (fewer
/// than [`MIN_MEAN`] per non-empty bucket on average); the caller sorts them
/// otherwise.
///
/// # Errors
/// [`crate::MetricError::OutOfMemory`] when `spare` cannot grow or the
/// scratch array not be had.
pub(crate) fn sort_u32_in_buckets(v: &mut Vec<u32>, spare: &mut Vec<u32>) -> Result<bool> {
    let n = v.len();
    if n < MIN_KEYS || u32::try_from(n).is_err() {
        return Ok(false);
    }
    let mut ends: Box<[u32; BUCKETS]> = Box::new([0; BUCKETS]);
    count(v, &mut ends[..], bucket_of);
    let used = ends.iter().filter(|&&c| c > 0).count();
    if used == 0 || n / used < MIN_MEAN {
        return Ok(false);
    }
    let largest = ends.iter().copied().max().unwrap_or(0) as usize;
    // `ends[b]` becomes where bucket `b` starts.
    starts(&mut ends[..]);
    spare.clear();
    reserve_big(spare, n, "the sort's spare keys")?;
    {
        let slots = spare.spare_capacity_mut();
        deal(v, &mut ends[..], bucket_of, |at, k| {
            if let Some(slot) = slots.get_mut(at) {
                slot.write(k);
            }
        });
    }
    // SAFETY: the starts are the running sums of the counts of the same keys
    // (`v` is borrowed mutably: unchanged between the two passes), so the
    // deal wrote each slot of `0..n` exactly once; `u32` needs no drop.
    unsafe { spare.set_len(n) };
    // Now `ends[b]` is where bucket `b` ends. Each bucket is sorted where it
    // lies (its lines still in the cache from the reading), and the sorted
    // keys change places with `v`'s, which become the spare.
    let mut scratch = try_filled(largest, 0_u32, "the sort's scratch keys")?;
    let mut digits = Digits::default();
    let mut start = 0_usize;
    for &end in ends.iter() {
        let end = end as usize;
        if let Some(bucket) = spare.get_mut(start..end) {
            sort_bucket(bucket, &mut scratch, &mut digits);
        }
        start = end;
    }
    std::mem::swap(v, spare);
    Ok(true)
}

/// The fewest keys per non-empty bucket, on average, for which
/// [`sort_u32_in_buckets`] sorts (below, the per-bucket work of zeroing and
/// summing `2 RADIX` counters outweighs the keys').
pub(crate) const MIN_MEAN: usize = 256;

/// The bucket of a key: its high [`HIGH`] bits.
#[inline(always)]
fn bucket_of(k: u32) -> usize {
    (k >> (32 - HIGH)) as usize
}

/// The counts of a bucket's two digits, made once a sort and cleared for
/// each bucket.
struct Digits {
    low: Box<[u32; RADIX]>,
    mid: Box<[u32; RADIX]>,
}

impl Default for Digits {
    fn default() -> Self {
        Self {
            low: Box::new([0; RADIX]),
            mid: Box::new([0; RADIX]),
        }
    }
}

/// `bucket` (keys equal in their high [`HIGH`] bits) in ascending order,
/// through `scratch` (at least as long as `bucket`), counting its digits in
/// `digits`.
fn sort_bucket(bucket: &mut [u32], scratch: &mut [u32], digits: &mut Digits) {
    let len = bucket.len();
    let between = match scratch.get_mut(..len) {
        Some(between) if len > SMALL => between,
        // Short (or, unreachable, longer than the scratch): by comparison.
        _ => {
            bucket.sort_unstable();
            return;
        }
    };
    let Digits { low, mid } = digits;
    low.fill(0);
    mid.fill(0);
    for &k in bucket.iter() {
        low[(k & MASK) as usize] += 1;
        mid[((k >> DIGIT) & MASK) as usize] += 1;
    }
    two_passes(
        bucket,
        between,
        (&mut low[..], &mut mid[..]),
        |k| (k & MASK) as usize,
        |k| ((k >> DIGIT) & MASK) as usize,
    );
}
