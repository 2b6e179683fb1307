//! Sorting that a stop flag can interrupt.
//!
//! Up to [`SortKey::BLOCK`] keys are sorted in one step (`rdst`'s parallel
//! radix sort for `u64`, rayon's parallel pattern-defeating quicksort for
//! wider keys; where [`crate::vectorized_sort`] chose Highway's vectorized
//! sort, a share per thread sorted by it and the shares merged as below).
//! Larger inputs are cut into blocks of that size, the blocks sorted one
//! after the other (each by every thread), then merged in rounds of pairwise
//! merges, each merge cut into pieces of [`MERGE_PIECE`] outputs (merge-path
//! splitting). Between two looks at the stop flag there is at most one block
//! or one piece of work, whatever the input size. The result is the sorted
//! sequence, which does not depend on the thread count.

use rayon::prelude::*;
use rdst::RadixSort;

use crate::error::Result;
use crate::parallel::{collect_chunked, reserve_big, Pool};
use crate::vectorized_sort::{self, chosen_for, Keys, SortAlgorithm};

/// Outputs of one piece of a merge.
pub const MERGE_PIECE: usize = 1 << 22;

/// A key type [`sort_keys`] sorts.
pub trait SortKey: Ord + Copy + Default + Send + Sync {
    /// Whether [`SortKey::sort_block_alone`] has the vectorized sort.
    const VECTORIZED: bool;
    /// The sort this process chose for keys of this type
    /// ([`vectorized_sort::chosen_for`]).
    fn chosen() -> SortAlgorithm;
    /// Keys sorted in one uninterruptible step (with every thread of the
    /// pool): about a fifth of a second on the reference machine.
    const BLOCK: usize;
    /// Sort a slice in one step (it may use the pool's threads).
    fn sort_block(v: &mut [Self]);
    /// Sort a slice in one step on the calling thread (the caller sorts
    /// other slices on the other threads at the same time), by `by` where
    /// the key type has that sort (else by its radix sort).
    fn sort_block_alone(v: &mut [Self], by: SortAlgorithm);
}

impl SortKey for u32 {
    const VECTORIZED: bool = true;
    const BLOCK: usize = 1 << 25;
    fn chosen() -> SortAlgorithm {
        chosen_for(Keys::U32)
    }
    fn sort_block(v: &mut [Self]) {
        v.radix_sort_unstable();
    }
    fn sort_block_alone(v: &mut [Self], by: SortAlgorithm) {
        if !(by == SortAlgorithm::Vectorized && vectorized_sort::sort_u32(v)) {
            v.radix_sort_builder().with_single_threaded_tuner().sort();
        }
    }
}

impl SortKey for u64 {
    const VECTORIZED: bool = true;
    const BLOCK: usize = 1 << 25;
    fn chosen() -> SortAlgorithm {
        chosen_for(Keys::U64)
    }
    fn sort_block(v: &mut [Self]) {
        v.radix_sort_unstable();
    }
    fn sort_block_alone(v: &mut [Self], by: SortAlgorithm) {
        if !(by == SortAlgorithm::Vectorized && vectorized_sort::sort_u64(v)) {
            v.radix_sort_builder().with_single_threaded_tuner().sort();
        }
    }
}

impl SortKey for u128 {
    const VECTORIZED: bool = false;
    const BLOCK: usize = 1 << 24;
    fn chosen() -> SortAlgorithm {
        SortAlgorithm::Radix
    }
    fn sort_block(v: &mut [Self]) {
        v.par_sort_unstable();
    }
    fn sort_block_alone(v: &mut [Self], _by: SortAlgorithm) {
        v.sort_unstable();
    }
}

/// A `u64` sorted by its bytes above the lowest `SKIP` only: rows that
/// carry their index in the low bits (a payload, not part of the order) sort
/// in `8 - SKIP` radix passes instead of eight. Equal high bytes leave the
/// rows in some order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
#[repr(transparent)]
struct HighBytes<const SKIP: usize>(u64);

// SAFETY: `repr(transparent)` over `u64`: no padding, every bit pattern valid.
unsafe impl<const SKIP: usize> bytemuck::Zeroable for HighBytes<SKIP> {}
// SAFETY: as above.
unsafe impl<const SKIP: usize> bytemuck::Pod for HighBytes<SKIP> {}

impl<const SKIP: usize> rdst::RadixKey for HighBytes<SKIP> {
    const LEVELS: usize = 8 - SKIP;
    #[inline]
    fn get_level(&self, level: usize) -> u8 {
        (self.0 >> ((level + SKIP) * 8)) as u8
    }
}

impl<const SKIP: usize> SortKey for HighBytes<SKIP> {
    const VECTORIZED: bool = true;
    const BLOCK: usize = 1 << 25;
    fn chosen() -> SortAlgorithm {
        chosen_for(Keys::U64HighBytes)
    }
    fn sort_block(v: &mut [Self]) {
        v.radix_sort_unstable();
    }
    fn sort_block_alone(v: &mut [Self], by: SortAlgorithm) {
        // Sorted by all their bytes, the keys are sorted by their high bytes.
        if !(by == SortAlgorithm::Vectorized
            && vectorized_sort::sort_u64(bytemuck::cast_slice_mut(v)))
        {
            v.radix_sort_builder().with_single_threaded_tuner().sort();
        }
    }
}

/// Sort `v` by `key >> low_bits` alone (rows with equal high bits end in
/// some order), on the calling thread as [`sort_keys_alone`] does. Faster
/// than a full sort when the low bits hold a payload such as a row index.
///
/// # Errors
/// [`crate::MetricError::Interrupted`].
pub fn sort_high_bits_alone(v: &mut Vec<u64>, low_bits: u32, pool: &Pool) -> Result<()> {
    sort_high_bits_alone_by(v, low_bits, chosen_for(Keys::U64HighBytes), pool)
}

/// [`sort_high_bits_alone`] by a given sort.
///
/// # Errors
/// [`crate::MetricError::Interrupted`].
pub fn sort_high_bits_alone_by(
    v: &mut Vec<u64>,
    low_bits: u32,
    by: SortAlgorithm,
    pool: &Pool,
) -> Result<()> {
    fn as_high<const S: usize>(v: &mut Vec<u64>, by: SortAlgorithm, pool: &Pool) -> Result<()> {
        let mut keys = std::mem::ManuallyDrop::new(std::mem::take(v));
        let (ptr, len, cap) = (keys.as_mut_ptr(), keys.len(), keys.capacity());
        // SAFETY: `HighBytes<S>` is `repr(transparent)` over `u64` (same
        // size and alignment, every bit pattern valid), and the allocation
        // changes owner without being touched or freed.
        let mut high: Vec<HighBytes<S>> = unsafe { Vec::from_raw_parts(ptr.cast(), len, cap) };
        let result = sort_keys_alone_by(&mut high, by, pool);
        let mut high = std::mem::ManuallyDrop::new(high);
        let (ptr, len, cap) = (high.as_mut_ptr(), high.len(), high.capacity());
        // SAFETY: as above, back to `u64`.
        *v = unsafe { Vec::from_raw_parts(ptr.cast(), len, cap) };
        result
    }
    match low_bits / 8 {
        0 => sort_keys_alone_by(v, by, pool),
        1 => as_high::<1>(v, by, pool),
        2 => as_high::<2>(v, by, pool),
        3 => as_high::<3>(v, by, pool),
        _ => as_high::<4>(v, by, pool),
    }
}

/// Sort `v` ascending on the calling thread when it fits one block (for
/// callers that sort several vectors at once, one per thread: on the
/// reference machine two radix sorts side by side on one thread each beat
/// the same two sorts one after the other on both threads by a third);
/// larger vectors in blocks as [`sort_keys`] sorts them, each block on the
/// calling thread (the other threads are busy with the other vectors: a
/// block sorted with every thread would wait for them, and a raised stop
/// flag would wait for that block).
///
/// # Errors
/// [`crate::MetricError::Interrupted`].
pub fn sort_keys_alone<T: SortKey>(v: &mut Vec<T>, pool: &Pool) -> Result<()> {
    sort_keys_alone_by(v, T::chosen(), pool)
}

/// [`sort_keys_alone`] by a given sort.
///
/// # Errors
/// [`crate::MetricError::Interrupted`].
pub fn sort_keys_alone_by<T: SortKey>(
    v: &mut Vec<T>,
    by: SortAlgorithm,
    pool: &Pool,
) -> Result<()> {
    if v.len() > T::BLOCK {
        return sort_in_blocks(v, T::BLOCK, true, by, pool);
    }
    pool.check()?;
    T::sort_block_alone(v, by);
    pool.check()
}

/// Sort `u32` keys ascending on the calling thread as [`sort_keys_alone`]
/// does, lending `spare` to the sort (afterwards it holds some keys or
/// memory of the caller's, with its room kept for the caller's next sort):
/// where this process sorts `u32` keys by radix, the keys fit one block and
/// spread over enough values of their high 14 bits, by buckets of those bits
/// (the `sort/buckets.rs` module: the keys read three times and written once
/// outside the cache, and no fresh pages for a caller that lends the same
/// `spare` again); otherwise as [`sort_keys_alone`].
///
/// # Errors
/// [`crate::MetricError::Interrupted`], [`crate::MetricError::OutOfMemory`].
pub fn sort_u32_alone_lending(v: &mut Vec<u32>, spare: &mut Vec<u32>, pool: &Pool) -> Result<()> {
    sort_u32_alone_lending_by(v, spare, chosen_for(Keys::U32), pool)
}

/// [`sort_u32_alone_lending`] by a given sort (the buckets stand for the
/// radix sort).
///
/// # Errors
/// [`crate::MetricError::Interrupted`], [`crate::MetricError::OutOfMemory`].
pub fn sort_u32_alone_lending_by(
    v: &mut Vec<u32>,
    spare: &mut Vec<u32>,
    by: SortAlgorithm,
    pool: &Pool,
) -> Result<()> {
    if by == SortAlgorithm::Radix && v.len() <= u32::BLOCK {
        pool.check()?;
        if buckets::sort_u32_in_buckets(v, spare)? {
            return pool.check();
        }
    }
    sort_keys_alone_by(v, by, pool)
}

/// Sort `u64` keys ascending on the calling thread as [`sort_keys_alone`]
/// does, usually faster: by their bytes above the lowest three first
/// (five radix passes instead of eight, [`sort_high_bits_alone`]), then each
/// run of keys equal in those bytes but not in all put in order by a sort of
/// its own. When over 1/8 of the neighbours in a sorted sample of 1,023
/// keys are such keys, or such runs hold more than 1/4 of the keys (or one
/// holds over 2^22), the plain sort is used (keys that differ in their low
/// bytes only, as float64 scores crowding near one value do). Crowds near 0
/// and 1 (beta-shaped probabilities: a tenth of the keys in runs of a few)
/// stay on the fast path: 10^7 of them 158 -> 119 ms (AUROC).
///
/// # Errors
/// [`crate::MetricError::Interrupted`].
pub fn sort_u64_alone(v: &mut Vec<u64>, pool: &Pool) -> Result<()> {
    sort_u64_alone_by(v, chosen_for(Keys::U64), pool)
}

/// [`sort_u64_alone`] by a given sort: the vectorized one sorts the keys
/// whole (no look at them first).
///
/// # Errors
/// [`crate::MetricError::Interrupted`].
pub fn sort_u64_alone_by(v: &mut Vec<u64>, by: SortAlgorithm, pool: &Pool) -> Result<()> {
    const SAMPLE: usize = 1023;
    let n = v.len();
    let crowded = |a: u64, b: u64| a != b && (a ^ b) >> LOW_BITS == 0;
    if n < 1 << 16 || (by == SortAlgorithm::Vectorized && vectorized_sort::built()) {
        return sort_keys_alone_by(v, by, pool);
    }
    let mut sample: Vec<u64> = (0..SAMPLE)
        .filter_map(|i| v.get(i * n / SAMPLE).copied())
        .collect();
    sample.sort_unstable();
    if sample.windows(2).filter(|w| crowded(w[0], w[1])).count() > SAMPLE / 8 {
        return sort_keys_alone_by(v, by, pool);
    }
    sort_high_bits_alone_by(v, LOW_BITS, by, pool)?;
    // Runs of keys equal above the low bits, found a block at a time.
    let mut budget = n / 4;
    let mut at = 0;
    while at + 1 < n {
        pool.check()?;
        let end = (at + CHECK_BLOCK).min(n - 1);
        let Some(w) = v.get(at..=end) else { break };
        let Some(first) = w.windows(2).position(|p| (p[0] ^ p[1]) >> LOW_BITS == 0) else {
            at = end;
            continue;
        };
        // The run holding positions `at + first` and `at + first + 1`.
        let start = at + first;
        let high = v.get(start).map_or(0, |&k| k >> LOW_BITS);
        let stop = v.get(start..).map_or(start, |r| {
            start + r.iter().take_while(|&&k| k >> LOW_BITS == high).count()
        });
        let run = v.get_mut(start..stop).unwrap_or_default();
        if run.windows(2).any(|p| p[0] != p[1]) {
            // Past the budget, or too long for one uninterruptible sort: the
            // plain sort (in blocks) after all.
            if run.len() > budget.min(MAX_RUN) {
                return sort_keys_alone_by(v, by, pool);
            }
            budget -= run.len();
            run.sort_unstable();
        }
        at = stop.max(at + 1);
    }
    pool.check()
}

/// The low bits [`sort_u64_alone`] leaves to a second look.
const LOW_BITS: u32 = 24;

/// The longest run [`sort_u64_alone`] sorts on its own (a fraction of a
/// second: the stop flag is not looked at during that sort).
const MAX_RUN: usize = 1 << 22;

/// Keys [`sort_u64_alone`] scans for runs between two looks at the stop flag.
const CHECK_BLOCK: usize = 1 << 20;

/// Sort `v` ascending; stops early (leaving `v` in some order) once the
/// pool's stop flag is raised.
///
/// # Errors
/// [`crate::MetricError::Interrupted`].
pub fn sort_keys<T: SortKey>(v: &mut Vec<T>, pool: &Pool) -> Result<()> {
    sort_keys_in_blocks(v, T::BLOCK, pool)
}

/// [`sort_keys`] by a given sort.
///
/// # Errors
/// [`crate::MetricError::Interrupted`].
pub fn sort_keys_by<T: SortKey>(v: &mut Vec<T>, by: SortAlgorithm, pool: &Pool) -> Result<()> {
    sort_in_blocks(v, T::BLOCK, false, by, pool)
}

/// [`sort_keys`] with a given block length (tests use small blocks).
///
/// # Errors
/// [`crate::MetricError::Interrupted`].
pub fn sort_keys_in_blocks<T: SortKey>(v: &mut Vec<T>, block: usize, pool: &Pool) -> Result<()> {
    sort_in_blocks(v, block, false, T::chosen(), pool)
}

/// [`sort_keys_in_blocks`] by the sort `by`, each block sorted on the
/// calling thread when `alone`.
fn sort_in_blocks<T: SortKey>(
    v: &mut Vec<T>,
    block: usize,
    alone: bool,
    by: SortAlgorithm,
    pool: &Pool,
) -> Result<()> {
    pool.check()?;
    let n = v.len();
    let block = block.max(2);
    let vectorized = T::VECTORIZED && by == SortAlgorithm::Vectorized && vectorized_sort::built();
    if n <= block {
        // On one thread the vectorized sort beats the radix sort. On several,
        // a share per thread sorted vectorized and the shares merged beat the
        // parallel radix sort on the Intel guest (10^7 u64 keys, two threads:
        // 117-128 ms against 136-166 ms).
        if vectorized && pool.threads() > 1 && pool.parallel_for(n) {
            let share = n.div_ceil(pool.threads()).max(1);
            pool.install(|| {
                v.par_chunks_mut(share)
                    .for_each(|c| T::sort_block_alone(c, by));
            });
            pool.check()?;
            return merge_runs(v, share, pool);
        }
        if pool.threads() <= 1 && vectorized {
            T::sort_block_alone(v, by);
        } else {
            pool.install(|| T::sort_block(v));
        }
        return pool.check();
    }
    // One block at a time, each sorted by every thread: a raised flag waits
    // for one block only.
    for c in v.chunks_mut(block) {
        pool.check()?;
        if alone {
            T::sort_block_alone(c, by);
        } else {
            pool.install(|| T::sort_block(c));
        }
    }
    pool.check()?;
    merge_runs(v, block, pool)
}

/// Merge the sorted runs of `width` keys of `v` (the last may be shorter) in
/// rounds of pairwise merges.
fn merge_runs<T: SortKey>(v: &mut Vec<T>, width: usize, pool: &Pool) -> Result<()> {
    let n = v.len();
    // Filled on every thread, so that its fresh pages are touched in parallel.
    let mut other: Vec<T> = collect_chunked(n, |_| T::default(), pool)?;
    let mut width = width;
    while width < n {
        merge_round(v, &mut other, width, pool);
        pool.check()?;
        std::mem::swap(v, &mut other);
        width = width.saturating_mul(2);
    }
    Ok(())
}

/// Merge every pair of adjacent sorted runs of `width` in `src` into `dst`.
fn merge_round<T: Ord + Copy + Send + Sync>(src: &[T], dst: &mut [T], width: usize, pool: &Pool) {
    let piece = MERGE_PIECE.min(width);
    let mut tasks: Vec<(&[T], &[T], &mut [T])> = Vec::new();
    let mut rest: &mut [T] = dst;
    let mut lo = 0;
    while lo < src.len() {
        let mid = (lo + width).min(src.len());
        let hi = (lo + 2 * width).min(src.len());
        let a = src.get(lo..mid).unwrap_or(&[]);
        let b = src.get(mid..hi).unwrap_or(&[]);
        let (mut out, tail) = std::mem::take(&mut rest).split_at_mut(hi - lo);
        rest = tail;
        let total = a.len() + b.len();
        let (mut i0, mut k0) = (0, 0);
        while k0 < total {
            let k1 = (k0 + piece).min(total);
            let i1 = split(a, b, k1);
            let (head, more) = std::mem::take(&mut out).split_at_mut(k1 - k0);
            out = more;
            tasks.push((
                a.get(i0..i1).unwrap_or(&[]),
                b.get(k0 - i0..k1 - i1).unwrap_or(&[]),
                head,
            ));
            (i0, k0) = (i1, k1);
        }
        lo = hi;
    }
    pool.install(|| {
        tasks.into_par_iter().for_each(|(a, b, out)| {
            if !pool.stopped() {
                merge(a, b, out);
            }
        });
    });
}

/// How many of the first `k` outputs of merging `a` and `b` come from `a`
/// (ties taken from `a` first).
pub(crate) fn split<T: Ord>(a: &[T], b: &[T], k: usize) -> usize {
    let (mut lo, mut hi) = (k.saturating_sub(b.len()), k.min(a.len()));
    while lo < hi {
        let mid = lo + (hi - lo) / 2;
        match (a.get(mid), b.get(k - mid - 1)) {
            (Some(x), Some(y)) if x <= y => lo = mid + 1,
            _ => hi = mid,
        }
    }
    lo
}

/// Merge sorted `a` and `b` into `out` (`out.len() == a.len() + b.len()`),
/// branch-free in the comparison.
fn merge<T: Ord + Copy>(a: &[T], b: &[T], out: &mut [T]) {
    let (mut i, mut j, mut k) = (0, 0, 0);
    let n = out.len().min(a.len() + b.len());
    while i < a.len() && j < b.len() && k < n {
        let (x, y) = (a[i], b[j]);
        let take_a = x <= y;
        out[k] = if take_a { x } else { y };
        i += usize::from(take_a);
        j += usize::from(!take_a);
        k += 1;
    }
    for (slot, &x) in out
        .iter_mut()
        .skip(k)
        .zip(a.iter().skip(i).chain(b.iter().skip(j)))
    {
        *slot = x;
    }
}

/// Sort `src`, whose values are below `2^bits`, into `dst`: one scatter into
/// buckets by the top (up to) 11 bits, then each bucket, now small, sorted
/// by LSD radix passes in parallel. The result does not depend on the thread
/// count.
pub(crate) fn bucket_sort(src: &[u64], dst: &mut Vec<u64>, bits: u32, pool: &Pool) -> Result<()> {
    const TOP: u32 = 11;
    dst.clear();
    reserve_big(dst, src.len(), "the ranking state's sort buffer")?;
    if src.len() < 1 << 16 || bits <= TOP {
        dst.extend_from_slice(src);
        radix_sort(dst);
        return Ok(());
    }
    dst.resize(src.len(), 0);
    let shift = bits - TOP;
    let buckets = 1_usize << TOP;
    #[allow(clippy::cast_possible_truncation)]
    let digit = |x: u64| (x >> shift) as usize;
    let mut counts = vec![0_usize; buckets];
    counting::count(src, &mut counts, digit);
    counting::starts(&mut counts);
    // Dealt, `at[b]` is where bucket `b` ends.
    let mut at = counts.clone();
    let out = dst.as_mut_slice();
    counting::deal(src, &mut at, digit, |i, x| {
        if let Some(o) = out.get_mut(i) {
            *o = x;
        }
    });
    // Cut `dst` into the buckets' slices and sort each.
    let mut pieces: Vec<&mut [u64]> = Vec::with_capacity(buckets);
    let mut rest: &mut [u64] = dst;
    for (&start, &end) in counts.iter().zip(&at) {
        let (head, tail) = rest.split_at_mut(end - start);
        pieces.push(head);
        rest = tail;
    }
    if pool.parallel_for(src.len()) {
        pool.install(|| {
            pieces
                .into_par_iter()
                .for_each_init(LowBits::default, |low, piece| low.sort(piece, shift));
        });
    } else {
        let mut low = LowBits::default();
        pieces.into_iter().for_each(|piece| low.sort(piece, shift));
    }
    Ok(())
}

/// The most bits of a [`LowBits`] counting pass.
const LOW_DIGIT: u32 = 11;

/// A thread's room for sorting [`bucket_sort`]'s buckets by their low bits,
/// kept from one bucket to the next.
#[derive(Default)]
struct LowBits {
    scratch: Vec<u64>,
    counts: Vec<usize>,
}

impl LowBits {
    /// Sort `piece`, whose keys agree above their low `low` bits: by
    /// comparison when short; in two stable counting passes of `low / 2`
    /// bits each (counted in one read, a pass skipped when its digit is the
    /// same in every key) when `low` is at most `2 LOW_DIGIT`; else by the
    /// radix sort. A bucket of 4,000 keys stays in the core's cache through
    /// its passes. The 2,048 buckets of the 8.4 million packed rows of a
    /// streaming state's first compaction, two threads (Zen 3): 73 ms by the
    /// radix sort on each (its buffers made and zeroed for each bucket, its
    /// histograms counted in a read of their own), 25-27 ms so.
    fn sort(&mut self, piece: &mut [u64], low: u32) {
        if piece.len() < SMALL_SORT {
            piece.sort_unstable();
            return;
        }
        if low > 2 * LOW_DIGIT {
            let mut tmp = piece.to_vec();
            radix_sort(&mut tmp);
            piece.copy_from_slice(&tmp);
            return;
        }
        let half = low.div_ceil(2);
        let radix = 1_usize << half;
        let mask = (radix - 1) as u64;
        self.counts.clear();
        self.counts.resize(2 * radix, 0);
        let (first, second) = self.counts.split_at_mut(radix);
        #[allow(clippy::cast_possible_truncation)]
        let digit = move |shift: u32| move |x: u64| ((x >> shift) & mask) as usize;
        for &x in piece.iter() {
            if let (Some(a), Some(b)) = (first.get_mut(digit(0)(x)), second.get_mut(digit(half)(x)))
            {
                *a += 1;
                *b += 1;
            }
        }
        self.scratch.clear();
        self.scratch.resize(piece.len(), 0);
        counting::two_passes(
            piece,
            &mut self.scratch,
            (first, second),
            digit(0),
            digit(half),
        );
    }
}

/// Keys below which a comparison sort beats the radix passes (each pass
/// clears and reads a histogram of up to 2^11 counts).
const SMALL_SORT: usize = 1 << 10;

/// LSD radix sort of `u64` keys over the bits that vary between them, 11
/// bits a pass (float32 scores widened to f64 keys: 2 or 3 passes).
pub(crate) fn radix_sort(v: &mut Vec<u64>) {
    const BITS: u32 = 11;
    if v.len() < SMALL_SORT {
        v.sort_unstable();
        return;
    }
    let (and, or) = v
        .iter()
        .fold((u64::MAX, 0_u64), |(a, o), &x| (a & x, o | x));
    let varying = and ^ or;
    if varying == 0 || v.len() < 2 {
        return;
    }
    let lo = varying.trailing_zeros();
    let hi = 64 - varying.leading_zeros();
    let passes = (hi - lo).div_ceil(BITS);
    let width = (hi - lo).div_ceil(passes);
    let mask = (1_u64 << width) - 1;
    let buckets = 1_usize << width;
    let shifts: Vec<u32> = (0..passes).map(|p| lo + p * width).collect();
    // All histograms in one read.
    let mut counts = vec![0_usize; buckets * shifts.len()];
    for &x in v.iter() {
        for (p, &sh) in shifts.iter().enumerate() {
            #[allow(clippy::cast_possible_truncation)]
            let d = ((x >> sh) & mask) as usize;
            if let Some(c) = counts.get_mut(p * buckets + d) {
                *c += 1;
            }
        }
    }
    let mut other = vec![0_u64; v.len()];
    for (p, &sh) in shifts.iter().enumerate() {
        let hist = counts
            .get_mut(p * buckets..(p + 1) * buckets)
            .unwrap_or_default();
        if hist.contains(&v.len()) {
            continue; // one bucket: this digit orders nothing
        }
        counting::starts(hist);
        #[allow(clippy::cast_possible_truncation)]
        let digit = |x: u64| ((x >> sh) & mask) as usize;
        let out = other.as_mut_slice();
        counting::deal(v, hist, digit, |i, x| {
            if let Some(o) = out.get_mut(i) {
                *o = x;
            }
        });
        std::mem::swap(v, &mut other);
    }
}

pub(crate) mod buckets;
mod counting;
#[cfg(target_arch = "x86_64")]
pub(crate) mod network;
#[cfg(test)]
mod tests;
