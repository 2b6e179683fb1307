//! The draws written with AVX-512 registers: sixteen 32-bit lanes per word,
//! the 32 x 32 -> 64-bit products of the even and odd lanes recombined by
//! blends (the portable lanes widen every word to 64 bits instead).

use super::{key_of, M0, M1, POISSON1_THRESHOLDS, W0, W1};
use std::arch::x86_64::{
    __m512i, _mm256_loadu_si256, _mm512_castsi256_si512, _mm512_cmpge_epu32_mask,
    _mm512_loadu_si512, _mm512_mask_add_epi32, _mm512_mask_blend_epi32, _mm512_mask_shuffle_epi32,
    _mm512_mul_epu32, _mm512_mullo_epi32, _mm512_or_si512, _mm512_permutexvar_epi32,
    _mm512_set1_epi32, _mm512_setr_epi32, _mm512_setzero_si512, _mm512_shuffle_epi32,
    _mm512_slli_epi32, _mm512_srli_epi64, _mm512_storeu_si512, _mm512_ternarylogic_epi32,
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

/// The ten rounds' keys of `key`, each word in every lane. A plain loop: a
/// closure (`array::from_fn`) is compiled without the caller's AVX-512 and
/// was called out of line, moving the registers through the stack in
/// 16-byte pieces (a tenth of the Poisson cells' draws in a profile).
#[inline(always)]
fn round_keys(key: [u32; 2]) -> [(__m512i, __m512i); 10] {
    let [mut ka, mut kb] = key;
    let mut keys = [broadcast(ka, kb); 10];
    for k in keys.iter_mut().skip(1) {
        ka = ka.wrapping_add(W0);
        kb = kb.wrapping_add(W1);
        *k = broadcast(ka, kb);
    }
    keys
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

/// Four rows a vector (four Philox blocks each), and how many vectors
/// [`row_weights16`] draws side by side: the ten rounds of one vector are
/// a chain of dependent multiplications, and four chains interleaved keep
/// the multipliers busy while each waits on its own latency (AMD Zen 4:
/// 0.60 -> 0.49 ns a draw on one core; two chains 0.50).
const ROWS: usize = 4;
const CHAINS: usize = 4;

/// The constants of one call: the multipliers, each round's keys, the
/// lanes' blocks, the Poisson thresholds.
struct Draws {
    m0: __m512i,
    m1: __m512i,
    round_keys: [(__m512i, __m512i); 10],
    block: __m512i,
    take_lo: __m512i,
    take_hi: __m512i,
    thresholds: [__m512i; 12],
    one: __m512i,
}

impl Draws {
    #[inline(always)]
    fn new(seed: u64, group: u32) -> Self {
        let b = group.wrapping_mul(4) as i32;
        // SAFETY (all): register operations and one load of a 64-byte
        // array alive for the call; callers enable avx512f.
        unsafe {
            Draws {
                m0: _mm512_set1_epi32(M0 as i32),
                m1: _mm512_set1_epi32(M1 as i32),
                round_keys: round_keys(key_of(seed)),
                // Lane l draws block 4 group + l % 4.
                block: _mm512_loadu_si512(
                    std::array::from_fn::<i32, 16, _>(|l| b.wrapping_add((l % 4) as i32))
                        .as_ptr()
                        .cast(),
                ),
                take_lo: _mm512_setr_epi32(0, 0, 0, 0, 2, 2, 2, 2, 4, 4, 4, 4, 6, 6, 6, 6),
                take_hi: _mm512_setr_epi32(1, 1, 1, 1, 3, 3, 3, 3, 5, 5, 5, 5, 7, 7, 7, 7),
                thresholds: POISSON1_THRESHOLDS.map(|t| _mm512_set1_epi32(t as i32)),
                one: _mm512_set1_epi32(1),
            }
        }
    }

    /// The sixteen weights of each of `V` x 4 rows (`ids[v]` holds four
    /// row ids), packed as [`row_weights16`] stores them.
    #[inline(always)]
    fn weights<const V: usize, const SHUFFLED: bool>(&self, ids: [__m512i; V]) -> [__m512i; V] {
        // SAFETY (all): register operations only; callers enable avx512f.
        unsafe {
            let mut c: [[__m512i; 4]; V] = ids.map(|x| {
                [
                    _mm512_permutexvar_epi32(self.take_lo, x),
                    _mm512_permutexvar_epi32(self.take_hi, x),
                    self.block,
                    _mm512_setzero_si512(),
                ]
            });
            for &k in &self.round_keys {
                for cv in &mut c {
                    *cv = round::<SHUFFLED>(*cv, (self.m0, self.m1), k);
                }
            }
            std::array::from_fn(|v| {
                // Draws above 4 are rare (0.37% of draws, 4% of blocks of
                // 64): the thresholds above the fifth are read only when a
                // draw reaches it.
                let words = c[v];
                let mut counts = [_mm512_setzero_si512(); 4];
                let mut high = 0u16;
                for (count, &word) in counts.iter_mut().zip(&words) {
                    for t in &self.thresholds[..5] {
                        *count = _mm512_mask_add_epi32(
                            *count,
                            _mm512_cmpge_epu32_mask(word, *t),
                            *count,
                            self.one,
                        );
                    }
                    high |= _mm512_cmpge_epu32_mask(word, self.thresholds[5]);
                }
                if high != 0 {
                    for (count, &word) in counts.iter_mut().zip(&words) {
                        for t in &self.thresholds[5..] {
                            *count = _mm512_mask_add_epi32(
                                *count,
                                _mm512_cmpge_epu32_mask(word, *t),
                                *count,
                                self.one,
                            );
                        }
                    }
                }
                // Word j of lane l is replicate 4 (l % 4) + j of row l / 4: byte j.
                _mm512_or_si512(
                    _mm512_or_si512(counts[0], _mm512_slli_epi32::<8>(counts[1])),
                    _mm512_or_si512(
                        _mm512_slli_epi32::<16>(counts[2]),
                        _mm512_slli_epi32::<24>(counts[3]),
                    ),
                )
            })
        }
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
    // No closure over arrays of registers here (see `round_keys`): the
    // loads written out, each round's keys broadcast as it comes.
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

/// [`super::row_weights16`] for CPUs with AVX-512 (F): the same draws.
///
/// # Safety
/// The CPU must have `avx512f`.
#[target_feature(enable = "avx512f")]
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
/// The CPU must have `avx512f`.
#[target_feature(enable = "avx512f")]
pub(super) unsafe fn row_weights16_as<const SHUFFLED: bool>(
    seed: u64,
    group: u32,
    rows: &[u64],
    out: &mut Vec<[u8; 16]>,
) {
    let draws = Draws::new(seed, group);
    out.clear();
    out.reserve(rows.len());
    // Vector `v` of a chunk: its rows `4 v .. 4 v + 4`, 32 bytes.
    let load = |chunk: &[u64], v: usize| {
        assert!(chunk.len() >= ROWS * (v + 1));
        // SAFETY: the chunk holds those four u64 (just checked).
        unsafe { _mm512_castsi256_si512(_mm256_loadu_si256(chunk.as_ptr().add(ROWS * v).cast())) }
    };
    let mut chunks = rows.chunks_exact(ROWS * CHAINS);
    for chunk in &mut chunks {
        let packed = draws.weights::<CHAINS, SHUFFLED>(std::array::from_fn(|v| load(chunk, v)));
        let at = out.len();
        out.resize(at + ROWS * CHAINS, [0u8; 16]);
        for (v, p) in packed.iter().enumerate() {
            // SAFETY: the new rows of `out` hold 64 bytes a vector.
            unsafe { _mm512_storeu_si512(out[at + ROWS * v..].as_mut_ptr().cast(), *p) };
        }
    }
    let mut rest = chunks.remainder().chunks_exact(ROWS);
    for chunk in &mut rest {
        let [packed] = draws.weights::<1, SHUFFLED>([load(chunk, 0)]);
        let at = out.len();
        out.resize(at + ROWS, [0u8; 16]);
        // SAFETY: the four new rows of `out` are 64 bytes.
        unsafe { _mm512_storeu_si512(out[at..].as_mut_ptr().cast(), packed) };
    }
    let rest = rest.remainder();
    if !rest.is_empty() {
        let mut tail = Vec::new();
        super::row_weights16(seed, group, rest, &mut tail);
        out.extend_from_slice(&tail);
    }
}
