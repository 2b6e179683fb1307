//! [`Walk::run_pairs`] over sorted packed `u32` keys (the score's bits above
//! the outcome bit, as one-vs-rest columns and float32 scores give them),
//! sixteen rows at a time: one sorted array, or the merge of two (the
//! halves the vectorized sort sorted side by side), merged sixteen keys at a
//! time in AVX-512 registers into a small stage ([`super::staged`]).
//!
//! A block of sixteen sorted keys where no positive row ties the row before
//! it (in its score bits) is settled from two masks (its positives, its
//! ties) and a few population counts: each positive row opens its group, so
//! the counts below it are the counts before it, and it adds the negatives
//! before it to the ordered pairs and nothing to the ties. On float32
//! probabilities that is not the common block: 10^7 of them take about
//! 8 x 10^6 distinct values, so about one row in six ties the row before and
//! three blocks in four hold a positive row that does. With AVX-512 such a
//! block is settled in vectors too ([`block_tied_avx512`]: running sums and
//! maxima across the lanes find each row's group, and the average
//! precision's slots of the block's groups are packed into place by a
//! compress, not a loop over its positive rows); without, row by row. The
//! average precision's groups are kept in ascending order on every path, so
//! every path gives the same counts and the same bits.
//!
//! Measured on an AMD EPYC (Zen 5) guest, 10^7 float32 sigmoid
//! probabilities, two threads, best of 7 in three alternated process pairs:
//! the walk of the merged halves took 28 ms of processor time a call and
//! the AUROC 36-56 ms; with the merge in vectors and the tied blocks
//! settled in vectors, 12 ms and 29-32 ms (`np.sort` of the same scores
//! 37-42 ms). The average precision's slots kept by a loop over each
//! block's positive rows: 37-40 ms in quiet rounds; packed in vectors:
//! 35-37 ms.

use super::pairs::Pairs;
use super::Walk;
use crate::parallel::{Pool, CHECK_ROWS};

/// Rows of a block.
const BLOCK: usize = 16;

/// The positions of a block's rows as bit planes: bit `j` of plane `b` is
/// bit `b` of `j`, so the positions of the rows in a mask sum to
/// `sum_b 2^b popcount(mask & plane_b)`.
const PLANES: [u32; 4] = [0xAAAA, 0xCCCC, 0xF0F0, 0xFF00];

/// The keys a block is read from: the row before it, then its rows.
type Window = [u32; BLOCK + 1];

/// A block's masks: bit `j` set for a positive row `j`, and for a row `j`
/// that ties the row before it.
#[inline(always)]
fn masks(window: &Window) -> (u32, u32) {
    let block = window.iter().skip(1);
    let positive = block
        .clone()
        .enumerate()
        .fold(0_u32, |m, (j, &x)| m | (x & 1) << j);
    let ties = block
        .zip(window.iter())
        .enumerate()
        .fold(0_u32, |m, (j, (&x, &y))| m | u32::from((x ^ y) < 2) << j);
    (positive, ties)
}

/// [`masks`] in AVX-512 instructions: two loads, a test and a compare.
///
/// # Safety
/// The CPU has AVX-512 F ([`crate::cpu::avx512`]).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn masks_avx512(window: &Window) -> (u32, u32) {
    use std::arch::x86_64::{
        _mm512_cmplt_epu32_mask, _mm512_loadu_si512, _mm512_set1_epi32, _mm512_test_epi32_mask,
        _mm512_xor_si512,
    };
    let before = window.as_ptr();
    // SAFETY: `window` holds 17 keys: 16 from its start and 16 from its
    // second are in bounds; the caller vouches for the features.
    unsafe {
        let prev = _mm512_loadu_si512(before.cast());
        let rows = _mm512_loadu_si512(before.add(1).cast());
        let positive = _mm512_test_epi32_mask(rows, _mm512_set1_epi32(1));
        let ties = _mm512_cmplt_epu32_mask(_mm512_xor_si512(rows, prev), _mm512_set1_epi32(2));
        (u32::from(positive), u32::from(ties))
    }
}

/// The masks of a block, in AVX-512 instructions when `WIDE`.
#[inline(always)]
fn block_masks<const WIDE: bool>(window: &Window) -> (u32, u32) {
    #[cfg(target_arch = "x86_64")]
    if WIDE {
        // SAFETY: `WIDE` is set only in `pairs_avx512`, run on AVX-512 CPUs.
        return unsafe { masks_avx512(window) };
    }
    masks(window)
}

/// The sum of the positions of the rows in `mask` (a block's mask).
#[inline(always)]
fn position_sum(mask: u32) -> u64 {
    PLANES
        .iter()
        .enumerate()
        .map(|(b, &plane)| u64::from((mask & plane).count_ones()) << b)
        .sum()
}

impl Walk {
    /// [`Walk::run_pairs`] of the `keys` (sorted, negatives first within a
    /// tie), each key's score bits above its outcome bit, compiled for the
    /// widest vectors this CPU runs.
    pub(super) fn run_pairs_packed<const AP: bool>(&mut self, keys: &[u32], pool: &Pool) {
        #[cfg(target_arch = "x86_64")]
        {
            if crate::cpu::avx512() {
                // SAFETY: the CPU has the features `pairs_avx512` is compiled for.
                unsafe { self.pairs_avx512::<AP>(keys, pool) };
                return;
            }
            if crate::cpu::avx2() {
                // SAFETY: the CPU has the features `pairs_avx2` is compiled for.
                unsafe { self.pairs_avx2::<AP>(keys, pool) };
                return;
            }
        }
        self.pairs::<AP, false>(keys, pool);
    }

    /// [`Walk::pairs`] compiled for AVX-512 (chosen at run time).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,popcnt,bmi1")]
    unsafe fn pairs_avx512<const AP: bool>(&mut self, keys: &[u32], pool: &Pool) {
        self.pairs::<AP, true>(keys, pool);
    }

    /// [`Walk::pairs`] compiled for AVX2 (chosen at run time).
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,popcnt,bmi1")]
    unsafe fn pairs_avx2<const AP: bool>(&mut self, keys: &[u32], pool: &Pool) {
        self.pairs::<AP, false>(keys, pool);
    }

    /// The walk of [`Walk::run_pairs_packed`], inlined into each variant so
    /// that it compiles for its features; `WIDE`: the masks in AVX-512.
    #[inline(always)]
    fn pairs<const AP: bool, const WIDE: bool>(&mut self, keys: &[u32], pool: &Pool) {
        let Some(&head) = keys.first() else {
            return;
        };
        let mut walk = Pairs::start::<AP, false>(self, u64::from(head >> 1), head & 1 == 1);
        let n = keys.len();
        let mut i = 1;
        while i < n {
            if pool.stopped() {
                return;
            }
            let end = (i + CHECK_ROWS).min(n);
            blocks::<AP, WIDE>(&mut walk, keys.get(..end).unwrap_or_default(), i);
            i = end;
            walk.settle();
            if AP {
                walk.flush();
            }
        }
        walk.finish::<AP, false>(self);
    }
}

/// The block walk of the rows `keys[i..]` (`keys[i - 1]`, the row before
/// them, already walked): blocks of sixteen rows settled from their masks
/// where no positive row ties the row before it ([`block`]), the others in
/// AVX-512 registers when `WIDE` ([`block_tied_avx512`]; with `AP` every
/// block, its slots kept in vectors) and else row by row, then the rows
/// short of a block row by row.
#[inline(always)]
pub(super) fn blocks<const AP: bool, const WIDE: bool>(
    walk: &mut Pairs,
    keys: &[u32],
    mut i: usize,
) {
    let row = |walk: &mut Pairs, key: u32| walk.row::<AP, false>(u64::from(key >> 1), key & 1 == 1);
    let end = keys.len();
    while i + BLOCK <= end {
        let Some(window) = keys
            .get(i - 1..=i + BLOCK - 1)
            .and_then(|w| <&Window>::try_from(w).ok())
        else {
            break;
        };
        i += BLOCK;
        let (positive, ties) = block_masks::<WIDE>(window);
        // With AVX-512 the average precision's slots are kept in vectors, by
        // the general block, unless the block has no positive row (nothing
        // to keep: its negatives and groups are counted from its masks).
        if positive == 0 || (positive & ties == 0 && !(AP && WIDE)) {
            block::<AP>(walk, positive, ties);
            walk.prev = window.last().map_or(walk.prev, |&k| u64::from(k >> 1));
        } else if WIDE {
            // A positive row in a group opened before it (its group's
            // negatives before it are ties), or any block with `AP`: the
            // groups found in vectors.
            #[cfg(target_arch = "x86_64")]
            // SAFETY: `WIDE` is set only in functions run on AVX-512 CPUs.
            unsafe {
                block_tied_avx512::<AP>(walk, positive, ties);
            }
            walk.prev = window.last().map_or(walk.prev, |&k| u64::from(k >> 1));
        } else {
            // The same, row by row.
            for &key in window.iter().skip(1) {
                row(walk, key);
            }
        }
        if AP {
            // At most a block's slots were kept since the last look.
            walk.flush_when_full();
        }
    }
    for &key in keys.get(i..end).unwrap_or_default() {
        row(walk, key);
    }
}

/// A block whose every positive row opens its group (no negative of its
/// group is before it: no tie), from its masks. Row `j` has `j` rows of the
/// block before it, of which `below(j)` positive.
#[inline(always)]
fn block<const AP: bool>(walk: &mut Pairs, positive: u32, ties: u32) {
    let below = |j: u32| u64::from((positive & ((1_u32 << j) - 1)).count_ones());
    let opens = !ties & ((1 << BLOCK) - 1);
    let (pos_seen, neg_seen) = (walk.pos_seen, walk.neg_seen);
    let sum = negatives_before_positives(positive, neg_seen);
    walk.ord += sum;
    walk.all += sum;
    if AP {
        let mut m = positive;
        while m != 0 {
            let j = m.trailing_zeros();
            walk.keep_opening(pos_seen + below(j), neg_seen + u64::from(j) - below(j));
            m &= m - 1;
        }
    }
    close_block(walk, positive, opens);
}

/// The negatives before each positive row of a block, summed: a positive
/// row `j` has `neg_seen + j - below(j)` (`below(j)`: the block's positive
/// rows before it), and `below(j)` runs 0, 1, .. over the positive rows.
#[inline(always)]
fn negatives_before_positives(positive: u32, neg_seen: u64) -> u64 {
    let ones = u64::from(positive.count_ones());
    ones * neg_seen + position_sum(positive) - ones * ones.saturating_sub(1) / 2
}

/// A block's end: the counts below its last group when that group opens in
/// the block (the counts before its first row), the last row's outcome,
/// and the rows and groups seen.
#[inline(always)]
fn close_block(walk: &mut Pairs, positive: u32, opens: u32) {
    let below = |j: u32| u64::from((positive & ((1_u32 << j) - 1)).count_ones());
    let ones = u64::from(positive.count_ones());
    if opens != 0 {
        let last = 31 - opens.leading_zeros();
        walk.pb = walk.pos_seen + below(last);
        walk.nb = walk.neg_seen + u64::from(last) - below(last);
    }
    walk.last_negative = positive >> (BLOCK - 1) == 0;
    walk.pos_seen += ones;
    walk.neg_seen += BLOCK as u64 - ones;
    walk.groups += u64::from(opens.count_ones());
}

/// Lanes of a 16-lane vector moved up by `S` (the first `S` lanes 0).
#[cfg(target_arch = "x86_64")]
macro_rules! shifted {
    ($v:expr, $s:literal) => {
        std::arch::x86_64::_mm512_alignr_epi32::<{ 16 - $s }>(
            $v,
            std::arch::x86_64::_mm512_setzero_si512(),
        )
    };
}

/// Any block (a positive row may tie the row before it), from its masks and
/// in AVX-512 registers: the counts of [`Pairs::row`] over its rows. A
/// positive row `j` is above the negatives below its group: those below the
/// block when its group opened before the block (`walk.nb`), else the
/// negatives before the row `o` that opened it, `neg_seen + rel(o)`, where
/// `rel(i)` counts the block's negatives before row `i`. `rel` does not
/// decrease, so `rel(o)` is the running maximum of `rel` over the opening
/// rows up to `j` (four shifted maxima, as the running sum that gives `rel`).
/// With `AP`, a group's first positive row (it opens the group or follows a
/// negative) keeps its slot, in ascending order, as [`Pairs::keep`] does.
///
/// # Safety
/// The CPU has AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn block_tied_avx512<const AP: bool>(walk: &mut Pairs, positive: u32, ties: u32) {
    use std::arch::x86_64::{
        _mm512_add_epi32, _mm512_add_epi64, _mm512_castsi512_si256, _mm512_cvtepu32_epi64,
        _mm512_extracti64x4_epi64, _mm512_mask_mov_epi64, _mm512_mask_reduce_add_epi32,
        _mm512_maskz_compress_epi32, _mm512_maskz_mov_epi32, _mm512_maskz_set1_epi32,
        _mm512_max_epu32, _mm512_set1_epi64, _mm512_set_epi32, _mm512_storeu_si512,
        _mm512_sub_epi32,
    };
    const ALL: u32 = (1 << BLOCK) - 1;
    let negative = !positive & ALL;
    let opens = !ties & ALL;
    // The rows before the block's first opening row: of a group opened before it.
    let carried = (1_u32 << opens.trailing_zeros().min(BLOCK as u32)) - 1;
    let (pos_seen, neg_seen, nb_before) = (walk.pos_seen, walk.neg_seen, walk.nb);
    // With `AP`: the groups' first positive rows (each opens its group or
    // follows a negative: negatives come first in a tie).
    let first = positive & (opens | ((negative << 1 | u32::from(walk.last_negative)) & ALL));
    #[allow(clippy::cast_possible_truncation)]
    let lanes = |m: u32| m as u16;
    // SAFETY: the caller vouches for the features.
    let fresh_sum = unsafe {
        let ones = _mm512_maskz_set1_epi32(lanes(negative), 1);
        let mut sum = ones;
        sum = _mm512_add_epi32(sum, shifted!(sum, 1));
        sum = _mm512_add_epi32(sum, shifted!(sum, 2));
        sum = _mm512_add_epi32(sum, shifted!(sum, 4));
        sum = _mm512_add_epi32(sum, shifted!(sum, 8));
        let rel = _mm512_sub_epi32(sum, ones);
        let mut nb = _mm512_maskz_mov_epi32(lanes(opens), rel);
        nb = _mm512_max_epu32(nb, shifted!(nb, 1));
        nb = _mm512_max_epu32(nb, shifted!(nb, 2));
        nb = _mm512_max_epu32(nb, shifted!(nb, 4));
        nb = _mm512_max_epu32(nb, shifted!(nb, 8));
        if AP {
            // Each first positive row's slot: the positives before it and
            // the negatives below its group, packed to the first lanes in
            // ascending order and widened to 64 bits. The carried group's
            // rows are a prefix of the lanes, so its first positive, if
            // kept, is the first packed lane: its negatives below are
            // `nb_before`.
            let index = _mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
            let pb = _mm512_maskz_compress_epi32(lanes(first), _mm512_sub_epi32(index, rel));
            let nb = _mm512_maskz_compress_epi32(lanes(first), nb);
            let old = (1_u32 << (first & carried).count_ones()) - 1;
            #[allow(clippy::cast_possible_wrap)]
            let (p0, n0, before) = (
                _mm512_set1_epi64(pos_seen as i64),
                _mm512_set1_epi64(neg_seen as i64),
                _mm512_set1_epi64(nb_before as i64),
            );
            if let Some((pb_slots, nb_slots)) = walk.free_slots() {
                let (pb_at, nb_at) = (pb_slots.as_mut_ptr(), nb_slots.as_mut_ptr());
                let pb_low = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(pb));
                let pb_high = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(pb));
                let nb_low = _mm512_cvtepu32_epi64(_mm512_castsi512_si256(nb));
                let nb_high = _mm512_cvtepu32_epi64(_mm512_extracti64x4_epi64::<1>(nb));
                #[allow(clippy::cast_possible_truncation)]
                let (old_low, old_high) = (old as u8, (old >> 8) as u8);
                // SAFETY: each table holds sixteen slots from `pb_at` and `nb_at`.
                _mm512_storeu_si512(pb_at.cast(), _mm512_add_epi64(pb_low, p0));
                _mm512_storeu_si512(pb_at.add(8).cast(), _mm512_add_epi64(pb_high, p0));
                let nb_low = _mm512_mask_mov_epi64(_mm512_add_epi64(nb_low, n0), old_low, before);
                let nb_high =
                    _mm512_mask_mov_epi64(_mm512_add_epi64(nb_high, n0), old_high, before);
                _mm512_storeu_si512(nb_at.cast(), nb_low);
                _mm512_storeu_si512(nb_at.add(8).cast(), nb_high);
                walk.kept_more(first.count_ones() as usize);
            }
        }
        _mm512_mask_reduce_add_epi32(lanes(positive & !carried), nb)
    };
    let fresh = positive & !carried;
    #[allow(clippy::cast_sign_loss)]
    let ord = u64::from((positive & carried).count_ones()) * nb_before
        + u64::from(fresh.count_ones()) * neg_seen
        + u64::from(fresh_sum as u32);
    walk.ord += ord;
    walk.all += negatives_before_positives(positive, neg_seen);
    close_block(walk, positive, opens);
}

#[cfg(test)]
mod tests {
    use super::super::super::binary::{BinaryRanking, Curves, Totals};
    use super::super::super::stream::Merge;
    use super::Walk;
    use crate::parallel::{Pool, CHECK_ROWS};

    /// Sorted packed keys: `distinct` score values, a share `1 / every` of
    /// the rows positive.
    fn keys(n: usize, distinct: u32, every: u32, seed: u64) -> Vec<u32> {
        let mut s = seed;
        let mut v: Vec<u32> = (0..n)
            .map(|_| {
                s = s
                    .wrapping_mul(6_364_136_223_846_793_005)
                    .wrapping_add(1_442_695_040_888_963_407);
                #[allow(clippy::cast_possible_truncation)]
                let (hi, lo) = ((s >> 33) as u32, (s >> 13) as u32);
                (hi % distinct) << 1 | u32::from(lo % every == 0)
            })
            .collect();
        v.sort_unstable();
        v
    }

    /// How [`split_keys`] cuts sorted keys into two sorted arrays: every
    /// other row, every seventh, all in the first, all in the second.
    const SPLITS: [usize; 4] = [2, 7, 1, usize::MAX];

    /// The rows `i` of `keys` with `i` a multiple of `split` (all for 1,
    /// none for `usize::MAX`), and the others: two sorted arrays whose merge
    /// is `keys`.
    fn split_keys(keys: &[u32], split: usize) -> (Vec<u32>, Vec<u32>) {
        let in_a = |i: usize| split == 1 || (split != usize::MAX && i.is_multiple_of(split));
        let pick = |side: bool| -> Vec<u32> {
            keys.iter()
                .enumerate()
                .filter(|&(i, _)| in_a(i) == side)
                .map(|(_, &x)| x)
                .collect()
        };
        (pick(true), pick(false))
    }

    fn summary(r: &BinaryRanking) -> (u128, u128, u128, u64, u64) {
        (
            r.ordered,
            r.tied,
            r.reversed,
            r.n_thresholds,
            r.average_precision.to_bits(),
        )
    }

    /// Every compiled variant of the block walk (portable, AVX2 and AVX-512
    /// masks, and the rows merged in AVX-512 registers from two sorted arrays,
    /// where this CPU runs them) gives the counts and the average
    /// precision's bits of the row-by-row walk over the same rows as two
    /// sides (no block reading), with few and many ties, few and many
    /// positives, lengths off the block size and past a check of the stop
    /// flag.
    #[test]
    fn block_walks_equal_the_row_walk() {
        let pool = Pool::new(1);
        for (n, distinct, every) in [
            (1, 5, 2),
            (17, 3, 2),
            (1000, 50, 3),
            (4099, 1 << 30, 10),
            (50_001, 400_000, 10),
            (50_001, 40_000, 2),
            (CHECK_ROWS + 37, 1 << 28, 9),
        ] {
            let k = keys(n, distinct, every, n as u64);
            let n_pos = k.iter().filter(|&&x| x & 1 == 1).count() as u64;
            let totals = Totals::counted(n_pos, n as u64 - n_pos);
            let pos: Vec<u64> = k
                .iter()
                .filter(|&&x| x & 1 == 1)
                .map(|&x| u64::from(x >> 1))
                .collect();
            let neg: Vec<u64> = k
                .iter()
                .filter(|&&x| x & 1 == 0)
                .map(|&x| u64::from(x >> 1))
                .collect();
            for curves in [Curves::Off, Curves::Precision] {
                let mut want = Walk::new(totals, false, curves);
                want.run(Merge::<u64, false>::new(&pos, &neg), n as u64, &pool);
                let want = summary(&want.result());
                let ap = curves == Curves::Precision;
                let mut variants: Vec<Walk> = Vec::new();
                let mut run = |f: &dyn Fn(&mut Walk)| {
                    let mut w = Walk::new(totals, false, curves);
                    f(&mut w);
                    w.finish_curve();
                    variants.push(w);
                };
                run(&|w: &mut Walk| {
                    if ap {
                        w.pairs::<true, false>(&k, &pool);
                    } else {
                        w.pairs::<false, false>(&k, &pool);
                    }
                });
                #[cfg(target_arch = "x86_64")]
                {
                    if crate::cpu::avx2() {
                        // SAFETY: checked just above.
                        run(&|w: &mut Walk| unsafe {
                            if ap {
                                w.pairs_avx2::<true>(&k, &pool);
                            } else {
                                w.pairs_avx2::<false>(&k, &pool);
                            }
                        });
                    }
                    if crate::cpu::avx512() {
                        // SAFETY: checked just above.
                        run(&|w: &mut Walk| unsafe {
                            if ap {
                                w.pairs_avx512::<true>(&k, &pool);
                            } else {
                                w.pairs_avx512::<false>(&k, &pool);
                            }
                        });
                        // The rows as the merge of two sorted arrays.
                        for split in SPLITS {
                            let (a, b) = split_keys(&k, split);
                            run(&|w: &mut Walk| {
                                let merged = if ap {
                                    w.run_pairs_packed_merge::<true>(&a, &b, &pool)
                                } else {
                                    w.run_pairs_packed_merge::<false>(&a, &b, &pool)
                                };
                                assert!(merged);
                            });
                        }
                    }
                }
                for w in variants {
                    assert_eq!(
                        summary(&w.result()),
                        want,
                        "n {n} distinct {distinct} every {every}"
                    );
                }
            }
        }
    }

    /// The counted walk (every curve term) of the merge of two sorted packed
    /// arrays, merged in AVX-512 registers through a stage, gives every
    /// count and float term of the row-by-row walk bit for bit: lengths off
    /// the stage size, a stop-flag check inside a stage, every split of
    /// [`SPLITS`].
    #[test]
    fn counted_merge_equals_the_row_walk() {
        #[cfg(target_arch = "x86_64")]
        if crate::cpu::avx512() {
            let pool = Pool::new(1);
            let all = |r: &BinaryRanking| {
                (
                    summary(r),
                    [
                        r.aupr_trapezoid.to_bits(),
                        r.aurc.to_bits(),
                        r.placement_pos_sq.to_bits(),
                        r.placement_neg_sq.to_bits(),
                        r.ordered_share.to_bits(),
                        r.tied_share.to_bits(),
                    ],
                )
            };
            for (n, distinct, every) in [
                (1, 5, 2),
                (17, 3, 2),
                (1024, 1 << 30, 3),
                (1025, 50, 3),
                (4099, 1 << 30, 10),
                (50_001, 40_000, 2),
                (CHECK_ROWS + 37, 1 << 28, 9),
            ] {
                let k = keys(n, distinct, every, n as u64 + 1);
                let n_pos = k.iter().filter(|&&x| x & 1 == 1).count() as u64;
                let totals = Totals::counted(n_pos, n as u64 - n_pos);
                let side = |p: u32| -> Vec<u64> {
                    k.iter()
                        .filter(|&&x| x & 1 == p)
                        .map(|&x| u64::from(x >> 1))
                        .collect()
                };
                let (pos, neg) = (side(1), side(0));
                let mut want = Walk::new(totals, false, Curves::All);
                want.run(Merge::<u64, false>::new(&pos, &neg), n as u64, &pool);
                let want = all(&want.result());
                for split in SPLITS {
                    let (a, b) = split_keys(&k, split);
                    let mut w = Walk::new(totals, false, Curves::All);
                    assert!(w.run_counted_packed_merge(&a, &b, &pool));
                    w.finish_curve();
                    assert_eq!(
                        all(&w.result()),
                        want,
                        "n {n} distinct {distinct} split {split}"
                    );
                }
            }
        }
    }
}
