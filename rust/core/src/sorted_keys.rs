//! Keys built from a function of the row and sorted: by one bucket per
//! thread where the vectorized sort is chosen (see [`sorted_keys_of`]), else
//! by [`crate::sort`].

use rayon::prelude::*;
use std::mem::MaybeUninit;
use std::sync::atomic::{AtomicBool, Ordering};

use crate::error::Result;
use crate::parallel::{big_vec, collect_chunked, Pool};
use crate::sort::{sort_keys_by, SortKey};
use crate::vectorized_sort::{self, SortAlgorithm};

/// The keys `key(i)` of the rows `i < n`, sorted. Where the vectorized sort
/// is chosen and the pool has several threads, splitters sampled from the
/// keys cut them into one bucket per thread as they are built (a pass that
/// counts, a pass that writes), and each thread sorts its bucket: no merge,
/// and no merge buffer. Elsewhere, or when the buckets come out too uneven,
/// the keys are collected and sorted by [`crate::sort::sort_keys`]. The
/// result is the sorted sequence either way. `key` is called more than once
/// for a row and must give the same key each time (a row whose key changed
/// would be caught, and the keys collected and sorted instead).
///
/// # Errors
/// [`crate::MetricError::Interrupted`], [`crate::MetricError::OutOfMemory`].
pub fn sorted_keys_of<T: SortKey>(
    n: usize,
    key: impl Fn(usize) -> T + Send + Sync,
    pool: &Pool,
) -> Result<Vec<T>> {
    sorted_keys_of_by(n, key, T::chosen(), pool)
}

/// [`sorted_keys_of`] as if the sort `by` were chosen (tests take both).
///
/// # Errors
/// [`crate::MetricError::Interrupted`], [`crate::MetricError::OutOfMemory`].
pub fn sorted_keys_of_by<T: SortKey>(
    n: usize,
    key: impl Fn(usize) -> T + Send + Sync,
    by: SortAlgorithm,
    pool: &Pool,
) -> Result<Vec<T>> {
    let threads = pool.threads();
    let vectorized = T::VECTORIZED && by == SortAlgorithm::Vectorized && vectorized_sort::built();
    if vectorized && threads > 1 && n > 0 && n <= T::BLOCK && pool.parallel_for(n) {
        if let Some(v) = bucketed(n, &key, threads, by, pool)? {
            return Ok(v);
        }
    }
    let mut v = collect_chunked(n, key, pool)?;
    sort_keys_by(&mut v, by, pool)?;
    Ok(v)
}

/// Rows per chunk of [`bucketed`]'s passes.
const BUCKET_CHUNK: usize = 1 << 18;

/// Keys sampled per bucket for [`bucketed`]'s splitters.
const SAMPLES_PER_BUCKET: usize = 1 << 13;

/// [`sorted_keys_of`] by buckets, or `None` when the largest bucket would
/// hold more than one and a half times its share.
fn bucketed<T: SortKey>(
    n: usize,
    key: &(impl Fn(usize) -> T + Send + Sync),
    buckets: usize,
    by: SortAlgorithm,
    pool: &Pool,
) -> Result<Option<Vec<T>>> {
    // Splitters at the quantiles of keys sampled at even strides.
    let m = (SAMPLES_PER_BUCKET * buckets).min(n).max(1);
    let mut sample: Vec<T> = (0..m).map(|j| key(j * n / m)).collect();
    sample.sort_unstable();
    let splitters: Vec<T> = (1..buckets)
        .filter_map(|b| sample.get(b * m / buckets).copied())
        .collect();
    let bucket_of = |k: &T| splitters.partition_point(|s| s <= k);
    let chunks = n.div_ceil(BUCKET_CHUNK);
    let count = |c: usize| -> Vec<usize> {
        let mut counts = vec![0_usize; buckets];
        if pool.stopped() {
            return counts;
        }
        for i in c * BUCKET_CHUNK..((c + 1) * BUCKET_CHUNK).min(n) {
            if let Some(t) = counts.get_mut(bucket_of(&key(i))) {
                *t += 1;
            }
        }
        counts
    };
    let counts: Vec<Vec<usize>> = pool.install(|| (0..chunks).into_par_iter().map(count).collect());
    pool.check()?;
    let sizes: Vec<usize> = (0..buckets)
        .map(|b| counts.iter().map(|c| c.get(b).copied().unwrap_or(0)).sum())
        .collect();
    let largest = sizes.iter().copied().max().unwrap_or(0);
    if largest > n.div_ceil(buckets) / 2 * 3 {
        return Ok(None);
    }
    // Fresh memory, left unwritten until the write pass: its pages are first
    // touched there, on every thread at once.
    let mut out: Vec<T> = big_vec(n, "the sort's buckets")?;
    let spare = out.spare_capacity_mut().get_mut(..n).unwrap_or_default();
    // The output cut bucket by bucket, each bucket chunk by chunk.
    let mut slots: Vec<Vec<&mut [MaybeUninit<T>]>> =
        (0..chunks).map(|_| Vec::with_capacity(buckets)).collect();
    let mut rest = spare;
    for b in 0..buckets {
        for (c, per_chunk) in counts.iter().zip(slots.iter_mut()) {
            let (head, tail) =
                std::mem::take(&mut rest).split_at_mut(c.get(b).copied().unwrap_or(0));
            per_chunk.push(head);
            rest = tail;
        }
    }
    // Whether every chunk filled its places exactly (a key function that
    // answered differently the second time would leave some unwritten).
    let filled = AtomicBool::new(true);
    let write = |(c, mut places): (usize, Vec<&mut [MaybeUninit<T>]>)| {
        if pool.stopped() {
            filled.store(false, Ordering::Relaxed);
            return;
        }
        let mut at = vec![0_usize; buckets];
        for i in c * BUCKET_CHUNK..((c + 1) * BUCKET_CHUNK).min(n) {
            let k = key(i);
            let b = bucket_of(&k);
            if let (Some(place), Some(a)) = (places.get_mut(b), at.get_mut(b)) {
                if let Some(slot) = place.get_mut(*a) {
                    slot.write(k);
                }
                *a += 1;
            }
        }
        if places.iter().zip(&at).any(|(p, &a)| p.len() != a) {
            filled.store(false, Ordering::Relaxed);
        }
    };
    pool.install(|| slots.into_par_iter().enumerate().for_each(write));
    pool.check()?;
    if !filled.load(Ordering::Relaxed) {
        return Ok(None);
    }
    // SAFETY: `filled` stayed true, so every chunk ran to its end and wrote
    // exactly as many keys into each of its places as the place holds: the
    // places tile the first `n` slots, all of which are now initialised
    // (`T: Copy` needs no drop).
    unsafe { out.set_len(n) };
    let mut parts: Vec<&mut [T]> = Vec::with_capacity(buckets);
    let mut rest: &mut [T] = &mut out;
    for &size in &sizes {
        let (head, tail) = std::mem::take(&mut rest).split_at_mut(size);
        parts.push(head);
        rest = tail;
    }
    pool.install(|| {
        parts.into_par_iter().with_max_len(1).for_each(|p| {
            if !pool.stopped() {
                T::sort_block_alone(p, by);
            }
        });
    });
    pool.check()?;
    Ok(Some(out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::lcg;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn data(n: usize, seed: u64, distinct: u64) -> Vec<u64> {
        // Two values of 31 bits make keys whose top bits vary too.
        let mut next = lcg(seed);
        (0..n)
            .map(|_| ((next() << 33) | next()) % distinct)
            .collect()
    }

    #[test]
    fn keys_sorted_as_built_equal_keys_sorted_after() {
        for threads in [1, 2, 3] {
            let pool = Pool::new(threads).with_min_parallel(0);
            for (n, distinct) in [
                (1, 10),
                (2, 1 << 40),
                (5, 3),
                (1000, 1),
                (1000, 2),
                (3000, 100),
                (300_001, 7),
                (300_001, u64::MAX),
            ] {
                let keys = data(n, 5 + n as u64, distinct);
                let mut want = keys.clone();
                want.sort_unstable();
                for by in [SortAlgorithm::Radix, SortAlgorithm::Vectorized] {
                    let got = sorted_keys_of_by(n, |i| keys[i], by, &pool).unwrap();
                    assert_eq!(
                        got, want,
                        "n {n} distinct {distinct} {by:?} threads {threads}"
                    );
                }
                // Keys already in order, and in reverse: the strided sample
                // still splits them evenly.
                let got = sorted_keys_of(n, |i| want[n - 1 - i], &pool).unwrap();
                assert_eq!(got, want);
            }
        }
    }

    #[test]
    fn keys_that_change_between_calls_are_caught() {
        // Each call answers differently: the write pass misses its counts, and
        // the keys are collected and sorted instead (sorted, all n of them).
        let calls = std::sync::atomic::AtomicU64::new(0);
        let pool = Pool::new(2).with_min_parallel(0);
        let key = |i: usize| {
            let c = calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            (i as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (c << 40)
        };
        let got = sorted_keys_of_by(100_000, key, SortAlgorithm::Vectorized, &pool).unwrap();
        assert_eq!(got.len(), 100_000);
        assert!(got.windows(2).all(|w| w[0] <= w[1]));
    }

    #[test]
    fn a_raised_flag_stops_the_build() {
        let pool = Pool::new(2)
            .with_stop(Arc::new(AtomicBool::new(true)))
            .with_min_parallel(0);
        let v = data(1000, 3, 1000);
        for by in [SortAlgorithm::Radix, SortAlgorithm::Vectorized] {
            assert_eq!(
                sorted_keys_of_by(1000, |i| v[i], by, &pool),
                Err(crate::MetricError::Interrupted)
            );
        }
    }
}
