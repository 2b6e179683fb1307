//! The draws written with AVX2 registers, for x86-64 CPUs without AVX-512:
//! eight 32-bit lanes per word. The row weights take two rows of four
//! Philox blocks a vector, the same draws as
//! [`crate::random::row_weights16`]; the blocks of
//! [`crate::random::philox_blocks16`] two vectors of eight.
//!
//! AVX2 has no unsigned compare and no blend under a mask register: a
//! product's high words are the odd lanes' products and the even lanes'
//! shifted down, blended; the low words the same with the odd products
//! shifted up; the Poisson thresholds are compared as signed words after
//! both sides are flipped in the top bit. Compiled as a baseline loop, the
//! draws widened every word to 64 bits and shuffled it back, two thirds of
//! the Poisson bootstrap's time on AMD Zen 3.

use super::{key_of, M0, M1, POISSON1_THRESHOLDS, W0, W1};
use std::arch::x86_64::{
    __m256i, _mm256_blend_epi32, _mm256_castsi128_si256, _mm256_cmpgt_epi32, _mm256_movemask_epi8,
    _mm256_mul_epu32, _mm256_or_si256, _mm256_permutevar8x32_epi32, _mm256_set1_epi32,
    _mm256_setr_epi32, _mm256_setzero_si256, _mm256_slli_epi32, _mm256_slli_epi64,
    _mm256_srli_epi64, _mm256_storeu_si256, _mm256_sub_epi32, _mm256_xor_si256, _mm_loadu_si128,
};

/// Rows a vector (four Philox blocks each), and vectors drawn side by side:
/// ten rounds of one vector are a chain of dependent multiplications; two
/// chains interleaved keep their 8 words in the 16 registers beside the
/// constants (four chains, spilling, measured the same on AMD Zen 3; so did
/// `vpmulld` for the low words, which Intel's cores run as two slow uops).
const ROWS: usize = 2;
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

/// The constants of one call.
struct Draws {
    m0: __m256i,
    m1: __m256i,
    round_keys: [(__m256i, __m256i); 10],
    block: __m256i,
    take_lo: __m256i,
    take_hi: __m256i,
    /// `threshold - 1` with the top bit flipped: `word >= t` is
    /// `(word ^ 2^31) > (t - 1) ^ 2^31` as signed words (every `t >= 1`).
    thresholds: [__m256i; 12],
    flip: __m256i,
}

impl Draws {
    #[inline(always)]
    #[allow(clippy::cast_possible_wrap)] // the constants' bits
    fn new(seed: u64, group: u32) -> Self {
        let b = group.wrapping_mul(4) as i32;
        let [mut ka, mut kb] = key_of(seed);
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
            let flip = _mm256_set1_epi32(i32::MIN);
            let mut thresholds = [flip; 12];
            for (t, &v) in thresholds.iter_mut().zip(&POISSON1_THRESHOLDS) {
                *t = _mm256_set1_epi32((v.wrapping_sub(1) ^ 0x8000_0000) as i32);
            }
            Draws {
                m0: _mm256_set1_epi32(M0 as i32),
                m1: _mm256_set1_epi32(M1 as i32),
                round_keys,
                // Lane l draws block 4 group + l % 4.
                block: _mm256_setr_epi32(
                    b,
                    b.wrapping_add(1),
                    b.wrapping_add(2),
                    b.wrapping_add(3),
                    b,
                    b.wrapping_add(1),
                    b.wrapping_add(2),
                    b.wrapping_add(3),
                ),
                take_lo: _mm256_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2),
                take_hi: _mm256_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3),
                thresholds,
                flip,
            }
        }
    }

    /// The sixteen weights of each of `V` x 2 rows (`ids[v]` holds two row
    /// ids in its low 128 bits), packed as [`super::row_weights16`] stores them.
    #[inline(always)]
    fn weights<const V: usize>(&self, ids: [__m256i; V]) -> [__m256i; V] {
        // SAFETY (all): register operations only; callers enable avx2.
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
            std::array::from_fn(|v| {
                let words = c[v].map(|w| _mm256_xor_si256(w, self.flip));
                let mut counts = [_mm256_setzero_si256(); 4];
                let mut high = _mm256_setzero_si256();
                // A draw above 4 is rare (0.37 %): the higher thresholds are
                // compared only when some word reaches the sixth.
                for (count, &word) in counts.iter_mut().zip(&words) {
                    for t in &self.thresholds[..5] {
                        *count = _mm256_sub_epi32(*count, _mm256_cmpgt_epi32(word, *t));
                    }
                    high = _mm256_or_si256(high, _mm256_cmpgt_epi32(word, self.thresholds[5]));
                }
                if _mm256_movemask_epi8(high) != 0 {
                    for (count, &word) in counts.iter_mut().zip(&words) {
                        for t in &self.thresholds[5..] {
                            *count = _mm256_sub_epi32(*count, _mm256_cmpgt_epi32(word, *t));
                        }
                    }
                }
                // Word j of lane l is replicate 4 (l % 4) + j of row l / 4: byte j.
                _mm256_or_si256(
                    _mm256_or_si256(counts[0], _mm256_slli_epi32::<8>(counts[1])),
                    _mm256_or_si256(
                        _mm256_slli_epi32::<16>(counts[2]),
                        _mm256_slli_epi32::<24>(counts[3]),
                    ),
                )
            })
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
    out.reserve(rows.len());
    // Vector `v` of a chunk: its rows `2 v .. 2 v + 2`, 16 bytes.
    let load = |chunk: &[u64], v: usize| {
        assert!(chunk.len() >= ROWS * (v + 1));
        // SAFETY: the chunk holds those two u64 (just checked).
        unsafe { _mm256_castsi128_si256(_mm_loadu_si128(chunk.as_ptr().add(ROWS * v).cast())) }
    };
    let mut chunks = rows.chunks_exact(ROWS * CHAINS);
    for chunk in &mut chunks {
        let packed = draws.weights::<CHAINS>(std::array::from_fn(|v| load(chunk, v)));
        let at = out.len();
        out.resize(at + ROWS * CHAINS, [0u8; 16]);
        for (v, p) in packed.iter().enumerate() {
            // SAFETY: the new rows of `out` hold 32 bytes a vector.
            unsafe { _mm256_storeu_si256(out[at + ROWS * v..].as_mut_ptr().cast(), *p) };
        }
    }
    let mut rest = chunks.remainder().chunks_exact(ROWS);
    for chunk in &mut rest {
        let [packed] = draws.weights::<1>([load(chunk, 0)]);
        let at = out.len();
        out.resize(at + ROWS, [0u8; 16]);
        // SAFETY: the two new rows of `out` are 32 bytes.
        unsafe { _mm256_storeu_si256(out[at..].as_mut_ptr().cast(), packed) };
    }
    let rest = rest.remainder();
    if !rest.is_empty() {
        let mut tail = Vec::new();
        super::row_weights16(seed, group, rest, &mut tail);
        out.extend_from_slice(&tail);
    }
}
