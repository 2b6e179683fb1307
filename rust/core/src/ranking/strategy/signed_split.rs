//! The split of float32 scores by sign into their packed keys
//! ([`signed_packed_u32`](crate::ranking::keys::signed_packed_u32)), sixteen
//! rows at a time in AVX-512 registers: the keys computed side by side and
//! each side's compressed into place, where the row-by-row split writes
//! every row to both cursors (a logit's sign is a coin toss, so no branch
//! may depend on it).

use std::arch::x86_64::{
    _mm512_and_si512, _mm512_cmpgt_epu32_mask, _mm512_cmplt_epu32_mask, _mm512_cvtepu8_epi32,
    _mm512_loadu_si512, _mm512_mask_mov_epi32, _mm512_mask_sub_epi32, _mm512_maskz_compress_epi32,
    _mm512_or_si512, _mm512_set1_epi32, _mm512_slli_epi32, _mm512_storeu_si512, _mm_loadu_si128,
};
use std::mem::MaybeUninit;

/// Rows a step.
const STEP: usize = 16;

/// Rows `0..` of `score` and `positive` split into `low` (scores below
/// zero) and `high` (the rest), each side in row order, as their packed
/// keys (`u32::MAX` for a score that is not finite), while a whole step
/// fits both sides' remaining slots. Returns the first row not split and
/// the two sides' cursors; the caller finishes the rows from there. Every
/// step stores sixteen slots on each side, past its cursor: the slots beyond
/// the cursor are written again by the steps or rows that follow.
///
/// # Safety
/// The CPU must have `avx512f`.
#[target_feature(enable = "avx512f")]
#[allow(clippy::cast_possible_wrap)] // the constants' bits
pub(super) unsafe fn split_steps(
    positive: &[bool],
    score: &[f32],
    low: &mut [MaybeUninit<u32>],
    high: &mut [MaybeUninit<u32>],
) -> (usize, usize, usize) {
    let n = positive.len().min(score.len());
    let (mut i, mut il, mut ih) = (0, 0, 0);
    let magnitude = _mm512_set1_epi32(0x7FFF_FFFF);
    let negative_zero = _mm512_set1_epi32(0x8000_0000_u32 as i32);
    let largest = _mm512_set1_epi32(0x7F7F_FFFF);
    let infinity = _mm512_set1_epi32(0x7F80_0000);
    let refused = _mm512_set1_epi32(-1);
    while i + STEP <= n && il + STEP <= low.len() && ih + STEP <= high.len() {
        // SAFETY (all): sixteen rows of `score` and `positive` from `i`, and
        // sixteen slots of each side from its cursor (all checked above);
        // a `bool` is the byte 0 or 1.
        unsafe {
            let bits = _mm512_loadu_si512(score.as_ptr().add(i).cast());
            let outcome = _mm512_cvtepu8_epi32(_mm_loadu_si128(positive.as_ptr().add(i).cast()));
            let m = _mm512_and_si512(bits, magnitude);
            let below = _mm512_cmpgt_epu32_mask(bits, negative_zero);
            let key = _mm512_mask_sub_epi32(m, below, largest, m);
            let packed = _mm512_or_si512(_mm512_slli_epi32::<1>(key), outcome);
            let packed =
                _mm512_mask_mov_epi32(refused, _mm512_cmplt_epu32_mask(m, infinity), packed);
            _mm512_storeu_si512(
                low.as_mut_ptr().add(il).cast(),
                _mm512_maskz_compress_epi32(below, packed),
            );
            _mm512_storeu_si512(
                high.as_mut_ptr().add(ih).cast(),
                _mm512_maskz_compress_epi32(!below, packed),
            );
            let b = below.count_ones() as usize;
            (il, ih, i) = (il + b, ih + STEP - b, i + STEP);
        }
    }
    (i, il, ih)
}

#[cfg(test)]
mod tests {
    use super::super::{join_looks, look, split_folded, SideSlots};
    use crate::parallel::Pool;
    use crate::ranking::keys::signed_packed_u32;
    use std::ops::Range;

    /// The two sides and what [`look`] saw of them.
    type Split = (Vec<u32>, Vec<u32>, (bool, u64));

    /// The split by sign with and without the steps, on `threads` threads.
    fn both_ways(positive: &[bool], score: &[f32], threads: usize) -> [Split; 2] {
        let pool = Pool::new(threads);
        let below = |i: usize| score[i].to_bits() > 0x8000_0000;
        let key = |i: usize| signed_packed_u32(score[i].to_bits(), positive[i]);
        let none = |rows: Range<usize>, _: SideSlots<'_, u32>| (rows.start, 0, 0);
        let steps = |rows: Range<usize>, (low, high): SideSlots<'_, u32>| {
            // SAFETY: AVX-512 (checked by the caller).
            let (done, il, ih) = unsafe {
                super::split_steps(&positive[rows.clone()], &score[rows.clone()], low, high)
            };
            (rows.start + done, il, ih)
        };
        let zero = (false, 0);
        let n = score.len();
        [
            split_folded(n, below, key, none, zero, look, join_looks, &pool).unwrap(),
            split_folded(n, below, key, steps, zero, look, join_looks, &pool).unwrap(),
        ]
    }

    #[test]
    fn steps_split_as_rows_do() {
        if !crate::cpu::avx512() {
            return;
        }
        let mut x = 0x9E37_79B9_7F4A_7C15_u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        let special = [
            0.0_f32,
            -0.0,
            f32::MIN_POSITIVE,
            -f32::MIN_POSITIVE,
            f32::MAX,
            f32::MIN,
        ];
        // Lengths around a step and past one chunk of the split (2^18 rows);
        // signs balanced, nearly all one way, and every row one way.
        for (n, negative_share) in [
            (0, 50),
            (15, 50),
            (16, 50),
            (17, 50),
            (1000, 50),
            (300_001, 50),
            (300_001, 1),
            (70_000, 0),
            (70_000, 100),
        ] {
            let score: Vec<f32> = (0..n)
                .map(|i| {
                    let r = next();
                    let v = if i % 97 == 5 {
                        special[(r % 6) as usize]
                    } else {
                        (r >> 40) as f32 / 1e4
                    };
                    if (r >> 8) % 100 < negative_share {
                        -v.abs()
                    } else {
                        v.abs()
                    }
                })
                .collect();
            let positive: Vec<bool> = (0..n).map(|_| next() % 3 == 0).collect();
            for threads in [1, 2, 3] {
                let [a, b] = both_ways(&positive, &score, threads);
                assert_eq!(
                    a, b,
                    "{n} rows, {negative_share} % negative, {threads} threads"
                );
            }
        }
        // A score that is not finite (either sign) is refused in the same place.
        for bad in [f32::NAN, -f32::NAN, f32::INFINITY, f32::NEG_INFINITY] {
            let mut score: Vec<f32> = (0..5000).map(|i| i as f32 - 2500.0).collect();
            score[4321] = bad;
            let positive = vec![true; score.len()];
            let [a, b] = both_ways(&positive, &score, 2);
            assert!(a.2 .0, "{bad}");
            assert_eq!(a, b, "{bad}");
        }
    }
}
