//! [`Walk::run_pairs`] over one sorted array of packed `u32` keys (the score's
//! bits above the outcome bit, as one-vs-rest columns and float32 scores
//! give them), sixteen rows at a time.
//!
//! Most blocks of sixteen sorted keys hold no positive row that ties the row
//! before it (in its score bits): then each positive row opens its group, the
//! counts below it are the counts before it, and it adds the negatives before
//! it to the ordered pairs and nothing to the ties. Such a block is settled
//! from two masks (its positives, its ties) and a few population counts, the
//! positives alone visited for the average precision; any other block takes
//! the row-by-row steps of [`Walk::run_pairs`]. Both give the same counts,
//! and the average precision's terms are added in the same order, so the
//! same bits.

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
        let row =
            |walk: &mut Pairs, key: u32| walk.row::<AP, false>(u64::from(key >> 1), key & 1 == 1);
        let n = keys.len();
        let mut i = 1;
        while i < n {
            if pool.stopped() {
                return;
            }
            let end = (i + CHECK_ROWS).min(n);
            while i + BLOCK <= end {
                let Some(window) = keys
                    .get(i - 1..=i + BLOCK - 1)
                    .and_then(|w| <&Window>::try_from(w).ok())
                else {
                    break;
                };
                i += BLOCK;
                let (positive, ties) = block_masks::<WIDE>(window);
                if positive & ties != 0 {
                    // A positive row in a group opened before it: the
                    // group's negatives (before it) are ties, row by row.
                    for &key in window.iter().skip(1) {
                        row(&mut walk, key);
                    }
                } else {
                    block::<AP>(&mut walk, positive, ties);
                    walk.prev = window.last().map_or(walk.prev, |&k| u64::from(k >> 1));
                }
                if AP {
                    // At most a block's slots were kept since the last look.
                    walk.flush_when_full();
                }
            }
            for &key in keys.get(i..end).unwrap_or_default() {
                row(&mut walk, key);
            }
            i = end;
            walk.settle();
            if AP {
                walk.flush();
            }
        }
        walk.finish::<AP, false>(self);
    }
}

/// A block whose every positive row opens its group (no negative of its
/// group is before it: no tie), from its masks. Row `j` has `j` rows of the
/// block before it, of which `below(j)` positive.
#[inline(always)]
fn block<const AP: bool>(walk: &mut Pairs, positive: u32, ties: u32) {
    let below = |j: u32| u64::from((positive & ((1_u32 << j) - 1)).count_ones());
    let opens = !ties & ((1 << BLOCK) - 1);
    let ones = u64::from(positive.count_ones());
    let (pos_seen, neg_seen) = (walk.pos_seen, walk.neg_seen);
    // Each positive row's negatives before it: `neg_seen + j - below(j)`,
    // and `below(j)` runs 0, 1, .. over the positive rows.
    let sum = ones * neg_seen + position_sum(positive) - ones * ones.saturating_sub(1) / 2;
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
    // The last group, when it opens in the block: the counts before its
    // first row.
    if opens != 0 {
        let first = 31 - opens.leading_zeros();
        walk.pb = pos_seen + below(first);
        walk.nb = neg_seen + u64::from(first) - below(first);
    }
    walk.last_negative = positive >> (BLOCK - 1) == 0;
    walk.pos_seen += ones;
    walk.neg_seen += BLOCK as u64 - ones;
    walk.groups += u64::from(opens.count_ones());
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
    /// masks, where this CPU runs them) gives the counts and the average
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
}
