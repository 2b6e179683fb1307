//! The draws written with AVX-512 registers: sixteen 32-bit lanes per word,
//! the 32 x 32 -> 64-bit products of the even and odd lanes recombined by
//! blends (the portable lanes widen every word to 64 bits instead).

use super::{M0, M1, W0, W1};
use std::arch::x86_64::{
    __m512i, _mm512_loadu_si512, _mm512_mask_blend_epi32, _mm512_mask_shuffle_epi32,
    _mm512_mul_epu32, _mm512_mullo_epi32, _mm512_set1_epi32, _mm512_shuffle_epi32,
    _mm512_srli_epi64, _mm512_storeu_si512, _mm512_ternarylogic_epi32,
};

/// The high and low words of `a * m` lane by lane (`m` in every 32-bit
/// lane; the 32 x 32 -> 64-bit products read the low word of each 64-bit
/// lane). Two ways to the same words, per vendor: `SHUFFLED` moves the
/// odd words into place and picks the products' halves with masked
/// `vpshufd` (Intel: the shuffles run on port 5 while the products hold
/// port 0; 0.72 -> 0.63 ns a weight at best on one core of an Emerald
/// Rapids guest); otherwise shifts and a blend give the high words and
/// `vpmullo`, one fast instruction there, the low ones (AMD Zen 4, with
/// one chain of rounds: 0.63 ns, the shuffles 0.80 ns, queued on one
/// port; not measured since the four chains).
#[inline(always)]
fn mulhilo<const SHUFFLED: bool>(a: __m512i, m: __m512i) -> (__m512i, __m512i) {
    // SAFETY (all): register operations only; callers enable avx512f.
    unsafe {
        let even = _mm512_mul_epu32(a, m);
        if SHUFFLED {
            // 0xF5: words 1, 1, 3, 3 of each 128-bit lane; 0xA0: 0, 0, 2, 2.
            let odd = _mm512_mul_epu32(_mm512_shuffle_epi32::<0xF5>(a), m);
            let hi = _mm512_mask_shuffle_epi32::<0xF5>(odd, 0x5555, even);
            let lo = _mm512_mask_shuffle_epi32::<0xA0>(even, 0xAAAA, odd);
            (hi, lo)
        } else {
            let odd = _mm512_mul_epu32(_mm512_srli_epi64::<32>(a), m);
            let hi = _mm512_mask_blend_epi32(0xAAAA, _mm512_srli_epi64::<32>(even), odd);
            let lo = _mm512_mullo_epi32(a, m);
            (hi, lo)
        }
    }
}

/// A round's two keys, each word in every lane.
#[inline(always)]
fn broadcast(ka: u32, kb: u32) -> (__m512i, __m512i) {
    #[allow(clippy::cast_possible_wrap)] // the keys' bits
    // SAFETY: register operations only; callers enable avx512f.
    unsafe {
        (_mm512_set1_epi32(ka as i32), _mm512_set1_epi32(kb as i32))
    }
}

/// One Philox4x32 round over the four words `c` of sixteen blocks, with
/// multipliers `m` and the round's keys `k`.
#[inline(always)]
fn round<const SHUFFLED: bool>(
    c: [__m512i; 4],
    m: (__m512i, __m512i),
    k: (__m512i, __m512i),
) -> [__m512i; 4] {
    let (hi0, lo0) = mulhilo::<SHUFFLED>(c[0], m.0);
    let (hi1, lo1) = mulhilo::<SHUFFLED>(c[2], m.1);
    // SAFETY: register operations only; callers enable avx512f.
    unsafe {
        // a ^ b ^ c
        [
            _mm512_ternarylogic_epi32::<0x96>(hi1, c[1], k.0),
            lo1,
            _mm512_ternarylogic_epi32::<0x96>(hi0, c[3], k.1),
            lo0,
        ]
    }
}

/// Sixteen Philox4x32-10 blocks side by side, word `i` of every lane in
/// `counters[i]`, as [`super::philox_lanes`] draws them (the same words),
/// with the products' halves taken [`mulhilo`]'s way for this vendor
/// (`intel`).
///
/// # Safety
/// The CPU must have `avx512f`.
#[inline]
#[target_feature(enable = "avx512f")]
pub(crate) unsafe fn philox16(
    counters: [[u32; 16]; 4],
    key: [u32; 2],
    intel: bool,
) -> [[u32; 16]; 4] {
    if intel {
        philox16_as::<true>(counters, key)
    } else {
        philox16_as::<false>(counters, key)
    }
}

/// [`philox16`] with the products' halves taken one way.
#[inline]
#[target_feature(enable = "avx512f")]
fn philox16_as<const SHUFFLED: bool>(counters: [[u32; 16]; 4], key: [u32; 2]) -> [[u32; 16]; 4] {
    // SAFETY: sixteen words a load.
    let load = |w: &[u32; 16]| unsafe { _mm512_loadu_si512(w.as_ptr().cast()) };
    // No closure over arrays of registers here (a closure is compiled
    // without the caller's AVX-512 and was called out of line, moving the
    // registers through the stack): the loads written out, each round's
    // keys broadcast as it comes.
    let mut c = [
        load(&counters[0]),
        load(&counters[1]),
        load(&counters[2]),
        load(&counters[3]),
    ];
    #[allow(clippy::cast_possible_wrap)] // the constants' bits
    let m = (_mm512_set1_epi32(M0 as i32), _mm512_set1_epi32(M1 as i32));
    let [mut ka, mut kb] = key;
    for r in 0..10 {
        if r > 0 {
            ka = ka.wrapping_add(W0);
            kb = kb.wrapping_add(W1);
        }
        c = round::<SHUFFLED>(c, m, broadcast(ka, kb));
    }
    let mut out = [[0_u32; 16]; 4];
    for (o, c) in out.iter_mut().zip(c) {
        // SAFETY: sixteen words a store.
        unsafe { _mm512_storeu_si512(o.as_mut_ptr().cast(), c) };
    }
    out
}

/// [`super::row_weights16`] for CPUs with AVX-512 (F and BW): the same
/// draws, eight rows' blocks at a time in one register of sixteen lanes,
/// their words packed into weights with AVX2's registers.
///
/// # Safety
/// The CPU must have `avx512f` and `avx512bw`.
#[target_feature(enable = "avx512f,avx512bw")]
pub unsafe fn row_weights16(seed: u64, group: u32, rows: &[u64], out: &mut Vec<[u8; 16]>) {
    if crate::cpu::intel() {
        row_weights16_as::<true>(seed, group, rows, out);
    } else {
        row_weights16_as::<false>(seed, group, rows, out);
    }
}

/// [`row_weights16`] with the products' halves taken one way
/// ([`mulhilo`]'s `SHUFFLED`): the same draws.
///
/// # Safety
/// The CPU must have `avx512f` and `avx512bw`.
#[target_feature(enable = "avx512f,avx512bw")]
pub(super) unsafe fn row_weights16_as<const SHUFFLED: bool>(
    seed: u64,
    group: u32,
    rows: &[u64],
    out: &mut Vec<[u8; 16]>,
) {
    // SAFETY: AVX-512 implies AVX2.
    unsafe {
        super::avx2::weights_by_blocks(seed, group, rows, out, |c, k| {
            philox16_as::<SHUFFLED>(c, k)
        });
    }
}
