//! Helpers over sorted keys that several Kendall methods share: runs of equal
//! keys (ties), cuts of a sorted array at run boundaries, prefetching.

use crate::parallel::{Pool, CHECK_ROWS};

/// Pairs within runs of equal `key` in a sorted sequence, and the number of
/// runs (meaningless once the pool's stop flag is raised: the caller checks).
pub(super) fn tie_runs<T, K: PartialEq>(
    sorted: &[T],
    key: impl Fn(&T) -> K,
    pool: &Pool,
) -> (u128, u64) {
    let mut pairs = 0_u128;
    let mut runs = 0_u64;
    let mut i = 0;
    let mut next_check = CHECK_ROWS;
    while let Some(first) = sorted.get(i) {
        if i >= next_check {
            if pool.stopped() {
                break;
            }
            next_check = i + CHECK_ROWS;
        }
        let k = key(first);
        let mut j = i + 1;
        while sorted.get(j).is_some_and(|v| key(v) == k) {
            j += 1;
        }
        let t = (j - i) as u128;
        pairs += t * (t - 1) / 2;
        runs += 1;
        i = j;
    }
    (pairs, runs)
}

/// How many rows ahead the random reads and writes of the rank table ask for
/// their cache line. Far enough that the line arrives before its row is
/// reached: on an AMD Zen 5 guest, reading 10^7 ranks in a random order took
/// 59-68 ms one row at a time with 16 rows ahead and 26-33 ms with 128, and
/// the whole tau-b of 10^7 untied pairs 222-259 against 174-225 ms (best of
/// 5, two threads; 128 lines are 8 KiB, well inside the first-level cache).
pub(super) const AHEAD: usize = 128;

/// Ask for the cache line of `table[at]` (a hint, for a read or a write to
/// come; x86-64 only, elsewhere nothing).
#[inline(always)]
pub(super) fn ahead<T>(table: &[T], at: Option<usize>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = at.and_then(|i| table.get(i)) {
        crate::simd::prefetch(x);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, at);
}

/// Piece boundaries of `sorted` (`0`, ..., `len`), about [`CHECK_ROWS`]
/// rows apart and at least one piece per thread, moved forward so that no
/// run of equal `key >> bits` is cut.
pub(super) fn run_cuts(sorted: &[u64], bits: u32, pool: &Pool) -> Vec<usize> {
    let n = sorted.len();
    let pieces = n.div_ceil(CHECK_ROWS).max(4 * pool.threads()).min(n.max(1));
    let mut cuts = vec![0];
    for p in 1..pieces {
        let mut c = (n * p / pieces).max(cuts.last().copied().unwrap_or(0));
        while c < n
            && c > 0
            && sorted.get(c).map(|k| k >> bits) == sorted.get(c - 1).map(|k| k >> bits)
        {
            c += 1;
        }
        if c < n && Some(&c) != cuts.last() {
            cuts.push(c);
        }
    }
    cuts.push(n);
    cuts
}

/// Call `each(i, key)` for every key of a sorted piece, in order, and return
/// the runs `(start, end)` of two keys or more with equal `key >> bits`,
/// found on the way (one pass over the keys).
#[inline]
pub(super) fn visit_runs(
    keys: &[u64],
    bits: u32,
    mut each: impl FnMut(usize, u64),
) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    // No key's high bits are all ones (`bits >= 1`).
    let mut prev = u64::MAX;
    for (i, &k) in keys.iter().enumerate() {
        each(i, k);
        let p = k >> bits;
        if p == prev {
            match runs.last_mut() {
                Some(r) if r.1 == i => r.1 = i + 1,
                _ => runs.push((i.saturating_sub(1), i + 1)),
            }
        }
        prev = p;
    }
    runs
}

pub(super) fn pairs_within(counts: &[u64]) -> u128 {
    counts
        .iter()
        .map(|&c| u128::from(c) * u128::from(c.saturating_sub(1)) / 2)
        .sum()
}
