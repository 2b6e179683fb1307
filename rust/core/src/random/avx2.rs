//! The draws written with AVX2 registers, for x86-64 CPUs without AVX-512:
//! eight 32-bit lanes per word. The row weights take four rows of two
//! Philox blocks a vector, the same draws as
//! [`crate::random::row_weights16`]; the blocks of
//! [`crate::random::philox_blocks16`] two vectors of eight.
//!
//! AVX2 has no unsigned compare and no blend under a mask register: a
//! product's high words are the odd lanes' products and the even lanes'
//! shifted down, blended; the low words the same with the odd products
//! shifted up; the thresholds' high halves are compared as signed 16-bit
//! halves after both sides are flipped in the top bit. Compiled as a baseline loop, the
//! draws widened every word to 64 bits and shuffled it back, two thirds of
//! the Poisson bootstrap's time on AMD Zen 3.

use super::{key_of, M0, M1, POISSON1_HIGH, W0, W1};
use std::arch::x86_64::{
    __m256i, _mm256_blend_epi32, _mm256_cmpeq_epi16, _mm256_cmpgt_epi16, _mm256_loadu_si256,
    _mm256_movemask_epi8, _mm256_mul_epu32, _mm256_or_si256, _mm256_permute2x128_si256,
    _mm256_permutevar8x32_epi32, _mm256_set1_epi16, _mm256_set1_epi32, _mm256_setr_epi32,
    _mm256_setr_epi8, _mm256_setzero_si256, _mm256_shuffle_epi8, _mm256_slli_epi16,
    _mm256_slli_epi64, _mm256_srli_epi64, _mm256_storeu_si256, _mm256_sub_epi16,
    _mm256_unpackhi_epi32, _mm256_unpacklo_epi32, _mm256_xor_si256,
};

/// Rows a vector (two Philox blocks each), and vectors drawn side by side:
/// ten rounds of one vector are a chain of dependent multiplications; two
/// chains interleaved keep their 8 words in the 16 registers beside the
/// constants (four chains, spilling, measured the same on AMD Zen 3; so did
/// `vpmulld` for the low words, which Intel's cores run as two slow uops).
const ROWS: usize = 4;
const CHAINS: usize = 2;

/// The high and low words of `a * m`, lane by lane.
#[inline(always)]
fn mulhilo(a: __m256i, m: __m256i) -> (__m256i, __m256i) {
    // SAFETY (all): register operations only; callers enable avx2.
    unsafe {
        let even = _mm256_mul_epu32(a, m);
        let odd = _mm256_mul_epu32(_mm256_srli_epi64::<32>(a), m);
        let hi = _mm256_blend_epi32::<0xAA>(_mm256_srli_epi64::<32>(even), odd);
        let lo = _mm256_blend_epi32::<0xAA>(even, _mm256_slli_epi64::<32>(odd));
        (hi, lo)
    }
}

/// One Philox4x32 round over the four words `c` of eight blocks, with
/// multipliers `m` and the round's keys `k`.
#[inline(always)]
fn round(c: [__m256i; 4], m: (__m256i, __m256i), k: (__m256i, __m256i)) -> [__m256i; 4] {
    let (hi0, lo0) = mulhilo(c[0], m.0);
    let (hi1, lo1) = mulhilo(c[2], m.1);
    // SAFETY: register operations only; callers enable avx2.
    unsafe {
        [
            _mm256_xor_si256(_mm256_xor_si256(hi1, c[1]), k.0),
            lo1,
            _mm256_xor_si256(_mm256_xor_si256(hi0, c[3]), k.1),
            lo0,
        ]
    }
}

/// Sixteen Philox4x32-10 blocks side by side, word `i` of every lane in
/// `counters[i]`, as [`super::philox_lanes`] draws them (the same words): two
/// halves of eight lanes, interleaved.
///
/// # Safety
/// The CPU must have `avx2`.
#[inline]
#[target_feature(enable = "avx2")]
#[allow(clippy::cast_possible_wrap)] // the constants' bits
pub(crate) unsafe fn philox16(counters: [[u32; 16]; 4], key: [u32; 2]) -> [[u32; 16]; 4] {
    // SAFETY (both): eight words a load or a store, inside the arrays.
    let load = |w: &[u32; 16], h: usize| unsafe {
        std::arch::x86_64::_mm256_loadu_si256(w.as_ptr().add(8 * h).cast())
    };
    let mut c: [[__m256i; 4]; 2] = std::array::from_fn(|h| {
        [
            load(&counters[0], h),
            load(&counters[1], h),
            load(&counters[2], h),
            load(&counters[3], h),
        ]
    });
    let m = (_mm256_set1_epi32(M0 as i32), _mm256_set1_epi32(M1 as i32));
    let [mut ka, mut kb] = key;
    for r in 0..10 {
        if r > 0 {
            ka = ka.wrapping_add(W0);
            kb = kb.wrapping_add(W1);
        }
        let k = (_mm256_set1_epi32(ka as i32), _mm256_set1_epi32(kb as i32));
        for ch in &mut c {
            *ch = round(*ch, m, k);
        }
    }
    let mut out = [[0_u32; 16]; 4];
    for (h, ch) in c.iter().enumerate() {
        for (o, &w) in out.iter_mut().zip(ch) {
            // SAFETY: eight words a store, inside the array.
            unsafe { _mm256_storeu_si256(o.as_mut_ptr().add(8 * h).cast(), w) };
        }
    }
    out
}

/// What turns a vector's Philox words into Poisson weights: the thresholds'
/// high halves and the shuffle that orders the packed counts.
struct Pack {
    /// [`POISSON1_HIGH`] with the top bit of each 16-bit half flipped:
    /// `h > t` is `(h ^ 2^15) > (t ^ 2^15)` as signed halves.
    thresholds: [__m256i; 7],
    /// The eight high halves that need their low half, as they are.
    ties: [__m256i; 8],
    flip: __m256i,
    /// Puts the halves of a block in order ([`Pack::store`]).
    order: __m256i,
}

impl Pack {
    #[inline(always)]
    #[allow(clippy::cast_possible_wrap)] // the constants' bits
    fn new() -> Self {
        // SAFETY (all): register operations only; callers enable avx2.
        unsafe {
            let mut thresholds = [_mm256_setzero_si256(); 7];
            for (t, &v) in thresholds.iter_mut().zip(&POISSON1_HIGH) {
                *t = _mm256_set1_epi16((v ^ 0x8000) as i16);
            }
            // The last: 2^16 - 1.
            let mut ties = [_mm256_set1_epi16(-1); 8];
            for (t, &v) in ties.iter_mut().zip(&POISSON1_HIGH) {
                *t = _mm256_set1_epi16(v as i16);
            }
            Pack {
                thresholds,
                ties,
                flip: _mm256_set1_epi16(i16::MIN),
                order: _mm256_setr_epi8(
                    0, 2, 1, 3, 4, 6, 5, 7, 8, 10, 9, 11, 12, 14, 13, 15, 0, 2, 1, 3, 4, 6, 5, 7,
                    8, 10, 9, 11, 12, 14, 13, 15,
                ),
            }
        }
    }

    /// The sixteen weights of each of four rows from the four words `c` of
    /// eight Philox blocks (lane `l`: block `l % 2` of row `l / 2`), stored
    /// from `dst` on as [`super::row_weights16`] lays them out; `true` when
    /// some half needs its low half (about one vector in 500), whose rows
    /// the caller then draws one at a time ([`redraw`]).
    ///
    /// # Safety
    /// `dst` must be valid for writes of four rows.
    #[inline(always)]
    unsafe fn store(&self, c: &[__m256i; 4], dst: *mut [u8; 16]) -> bool {
        // SAFETY (all): register operations, and two stores of two rows
        // each within the caller's four rows.
        unsafe {
            let mut counts = [_mm256_setzero_si256(); 4];
            let mut tied = _mm256_setzero_si256();
            for (count, &word) in counts.iter_mut().zip(c) {
                let flipped = _mm256_xor_si256(word, self.flip);
                for t in &self.thresholds {
                    *count = _mm256_sub_epi16(*count, _mm256_cmpgt_epi16(flipped, *t));
                }
                for t in &self.ties {
                    tied = _mm256_or_si256(tied, _mm256_cmpeq_epi16(word, *t));
                }
            }
            // Lane l: a holds the counts of halves 0, 2, 1, 3 as bytes, b
            // those of 4, 6, 5, 7.
            let a = _mm256_or_si256(counts[0], _mm256_slli_epi16::<8>(counts[1]));
            let b = _mm256_or_si256(counts[2], _mm256_slli_epi16::<8>(counts[3]));
            // Rows 0 and 2 (each 128-bit lane: a row's two blocks), then
            // rows 1 and 3, each row's halves put in order.
            let even = _mm256_shuffle_epi8(_mm256_unpacklo_epi32(a, b), self.order);
            let odd = _mm256_shuffle_epi8(_mm256_unpackhi_epi32(a, b), self.order);
            _mm256_storeu_si256(dst.cast(), _mm256_permute2x128_si256::<0x20>(even, odd));
            _mm256_storeu_si256(
                dst.add(2).cast(),
                _mm256_permute2x128_si256::<0x31>(even, odd),
            );
            _mm256_movemask_epi8(tied) != 0
        }
    }
}

/// Redraw, from the words `c` of a vector ([`Pack::store`]), the blocks
/// whose halves need their low halves, into the four rows `out` (the other
/// blocks' weights are right already).
///
/// # Safety
/// The CPU must have `avx2`; inlined into a caller that enables it.
#[inline(always)]
unsafe fn redraw(c: &[__m256i; 4], out: &mut [[u8; 16]], rows: &[u64], group: u32, key: [u32; 2]) {
    let mut words = [[0_u32; 8]; 4];
    for (w, &v) in words.iter_mut().zip(c) {
        // SAFETY: eight words a store, inside the array.
        unsafe { _mm256_storeu_si256(w.as_mut_ptr().cast(), v) };
    }
    redraw_blocks(&words, out, rows, group, key);
}

/// [`redraw`] with the words in memory (lane `l`: block `l % 2` of row
/// `l / 2`).
#[cold]
#[inline(never)]
#[allow(clippy::needless_range_loop)] // lane `l` of four arrays
fn redraw_blocks(
    words: &[[u32; 8]; 4],
    out: &mut [[u8; 16]],
    rows: &[u64],
    group: u32,
    key: [u32; 2],
) {
    for l in 0..8 {
        let w = [0, 1, 2, 3].map(|i| words[i][l]);
        if super::block_needs_lows(&w) {
            let (q, s) = (l / 2, l % 2);
            let block = group.wrapping_mul(2).wrapping_add(s as u32);
            out[q][8 * s..8 * s + 8]
                .copy_from_slice(&super::block_weights(&w, rows[q], block, key));
        }
    }
}

/// The constants of one call.
struct Draws {
    group: u32,
    key: [u32; 2],
    m0: __m256i,
    m1: __m256i,
    round_keys: [(__m256i, __m256i); 10],
    block: __m256i,
    take_lo: __m256i,
    take_hi: __m256i,
    pack: Pack,
}

impl Draws {
    #[inline(always)]
    #[allow(clippy::cast_possible_wrap)] // the constants' bits
    fn new(seed: u64, group: u32) -> Self {
        let b = group.wrapping_mul(2) as i32;
        let key = key_of(seed);
        let [mut ka, mut kb] = key;
        // SAFETY (all): register operations only; callers enable avx2.
        unsafe {
            let mut round_keys = [(_mm256_setzero_si256(), _mm256_setzero_si256()); 10];
            for (r, k) in round_keys.iter_mut().enumerate() {
                if r > 0 {
                    ka = ka.wrapping_add(W0);
                    kb = kb.wrapping_add(W1);
                }
                *k = (_mm256_set1_epi32(ka as i32), _mm256_set1_epi32(kb as i32));
            }
            let b1 = b.wrapping_add(1);
            Draws {
                group,
                key,
                m0: _mm256_set1_epi32(M0 as i32),
                m1: _mm256_set1_epi32(M1 as i32),
                round_keys,
                // Lane l draws block 2 group + l % 2 of row l / 2.
                block: _mm256_setr_epi32(b, b1, b, b1, b, b1, b, b1),
                take_lo: _mm256_setr_epi32(0, 0, 2, 2, 4, 4, 6, 6),
                take_hi: _mm256_setr_epi32(1, 1, 3, 3, 5, 5, 7, 7),
                pack: Pack::new(),
            }
        }
    }

    /// The weights of the `4 V` rows `rows` (`ids[v]` holds rows `4 v ..
    /// 4 v + 4`) into `out` ([`Pack::store`], the rare blocks that need
    /// their low halves redrawn).
    #[inline(always)]
    fn store<const V: usize>(&self, ids: [__m256i; V], rows: &[u64], out: &mut [[u8; 16]]) {
        assert!(rows.len() == ROWS * V && out.len() == ROWS * V);
        // SAFETY (all): register operations, and each vector's stores
        // within its four rows of `out` (just checked).
        unsafe {
            let mut c: [[__m256i; 4]; V] = ids.map(|x| {
                [
                    _mm256_permutevar8x32_epi32(x, self.take_lo),
                    _mm256_permutevar8x32_epi32(x, self.take_hi),
                    self.block,
                    _mm256_setzero_si256(),
                ]
            });
            for &k in &self.round_keys {
                for cv in &mut c {
                    *cv = round(*cv, (self.m0, self.m1), k);
                }
            }
            for (v, cv) in c.iter().enumerate() {
                if self.pack.store(cv, out.as_mut_ptr().add(ROWS * v)) {
                    let four = ROWS * v..ROWS * (v + 1);
                    redraw(
                        cv,
                        &mut out[four.clone()],
                        &rows[four],
                        self.group,
                        self.key,
                    );
                }
            }
        }
    }
}

/// [`super::row_weights16`] for CPUs with AVX2: the same draws.
///
/// # Safety
/// The CPU must have `avx2`.
#[target_feature(enable = "avx2")]
pub(crate) unsafe fn row_weights16(seed: u64, group: u32, rows: &[u64], out: &mut Vec<[u8; 16]>) {
    let draws = Draws::new(seed, group);
    out.clear();
    out.resize(rows.len(), [0u8; 16]);
    // Vector `v` of a chunk: its rows `4 v .. 4 v + 4`, 32 bytes.
    let load = |chunk: &[u64], v: usize| {
        assert!(chunk.len() >= ROWS * (v + 1));
        // SAFETY: the chunk holds those four u64 (just checked).
        unsafe { _mm256_loadu_si256(chunk.as_ptr().add(ROWS * v).cast()) }
    };
    let mut at = 0;
    while at + ROWS * CHAINS <= rows.len() {
        let span = at..at + ROWS * CHAINS;
        let ids = std::array::from_fn(|v| load(&rows[at..], v));
        draws.store::<CHAINS>(ids, &rows[span.clone()], &mut out[span]);
        at += ROWS * CHAINS;
    }
    while at + ROWS <= rows.len() {
        let span = at..at + ROWS;
        draws.store::<1>([load(&rows[at..], 0)], &rows[span.clone()], &mut out[span]);
        at += ROWS;
    }
    if at < rows.len() {
        let mut tail = Vec::new();
        super::row_weights16(seed, group, &rows[at..], &mut tail);
        out[at..].copy_from_slice(&tail);
    }
}
