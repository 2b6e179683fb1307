//! The draws written with AVX-512 registers: sixteen 32-bit lanes per word,
//! the 32 x 32 -> 64-bit products of the even and odd lanes recombined by
//! blends (the portable lanes widen every word to 64 bits instead).

use super::{block_weights, key_of, M0, M1, POISSON1_HIGH, W0, W1};
use std::arch::x86_64::{
    __m512i, _mm512_cmpeq_epi16_mask, _mm512_cmpgt_epu16_mask, _mm512_loadu_si512,
    _mm512_mask_blend_epi32, _mm512_mask_shuffle_epi32, _mm512_mask_sub_epi16, _mm512_mul_epu32,
    _mm512_mullo_epi32, _mm512_or_si512, _mm512_permutex2var_epi32, _mm512_permutexvar_epi16,
    _mm512_permutexvar_epi32, _mm512_set1_epi16, _mm512_set1_epi32, _mm512_setzero_si512,
    _mm512_shuffle_epi32, _mm512_shuffle_epi8, _mm512_slli_epi16, _mm512_srli_epi16,
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

/// Chunks of eight rows (sixteen Philox blocks, one register a word) drawn
/// side by side: ten rounds of one chunk are a chain of dependent
/// multiplications (about five cycles each), so one chunk at a time left
/// the multiplier idle most of the time (0.85 ns a weight on one core of an
/// Emerald Rapids guest, against 0.3 with four chains).
const CHAINS: usize = 4;

/// The thresholds a half's top five bits place it among: the first
/// [`BUCKETED`] of [`POISSON1_HIGH`] lie in distinct buckets of 2,048
/// values, and the rest in the last bucket, above the one there.
const BUCKETED: usize = 4;
const _: () = {
    let mut j = 1;
    while j < POISSON1_HIGH.len() {
        let (a, b) = (POISSON1_HIGH[j - 1] >> 11, POISSON1_HIGH[j] >> 11);
        assert!(if j < BUCKETED {
            a < b
        } else {
            a == 31 && b == 31
        });
        j += 1;
    }
};

/// What turns a chunk's Philox words into Poisson(1) counts with AVX-512
/// BW: by a half's top five bits, the thresholds below its bucket and the
/// one inside it; the thresholds of the last bucket; the eight high halves
/// that need their low halves (a count's lookup); the byte orders of
/// [`Pack::store`].
struct Pack {
    /// Lane `b`: how many of the bucketed thresholds lie below `2048 b`.
    below: __m512i,
    /// Lane `b`: the bucketed threshold inside bucket `b`, or `2^16 - 1`.
    inside: __m512i,
    top: [__m512i; POISSON1_HIGH.len() - BUCKETED],
    /// [`POISSON1_HIGH`] then `2^16 - 1`, repeated: lane `c` the high half
    /// a half counted `c` would need its low half at.
    ties: __m512i,
    minus_one: __m512i,
    /// Bytes `0, 2, 1, 3` of every 32-bit lane.
    order: __m512i,
    /// The first and the second eight lanes of two vectors, interleaved.
    first: __m512i,
    second: __m512i,
}

impl Pack {
    #[inline(always)]
    #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)] // the constants' bits
    fn new() -> Self {
        let bucketed = &POISSON1_HIGH[..BUCKETED];
        let below: [u16; 32] = std::array::from_fn(|b| {
            bucketed
                .iter()
                .filter(|&&t| usize::from(t >> 11) < b)
                .count() as u16
        });
        let inside: [u16; 32] = std::array::from_fn(|b| {
            let mut inside = bucketed.iter().filter(|&&t| usize::from(t >> 11) == b);
            inside.next().copied().unwrap_or(u16::MAX)
        });
        let ties: [u16; 32] =
            std::array::from_fn(|c| POISSON1_HIGH.get(c % 8).copied().unwrap_or(u16::MAX));
        let order: [u8; 64] = std::array::from_fn(|b| {
            let (word, byte) = (b / 4, b % 4);
            (4 * (word % 4) + [0, 2, 1, 3][byte]) as u8
        });
        let first: [u32; 16] = std::array::from_fn(|l| (l / 2 + 16 * (l % 2)) as u32);
        let second: [u32; 16] = std::array::from_fn(|l| (8 + l / 2 + 16 * (l % 2)) as u32);
        // SAFETY (all): register operations and loads of local arrays of 64
        // bytes; callers enable avx512f and avx512bw.
        unsafe {
            let load = |a: *const u8| _mm512_loadu_si512(a.cast());
            Pack {
                below: load(below.as_ptr().cast()),
                inside: load(inside.as_ptr().cast()),
                top: std::array::from_fn(|j| _mm512_set1_epi16(POISSON1_HIGH[BUCKETED + j] as i16)),
                ties: load(ties.as_ptr().cast()),
                minus_one: _mm512_set1_epi16(-1),
                order: load(order.as_ptr()),
                first: load(first.as_ptr().cast()),
                second: load(second.as_ptr().cast()),
            }
        }
    }

    /// The sixteen weights of each of eight rows from the four words `c` of
    /// their sixteen Philox blocks (lane `l`: block `l % 2` of row `l / 2`),
    /// stored from `dst` on as [`super::row_weights16`] lays them out:
    /// each half's count of the thresholds below it (those below its
    /// bucket, looked up, and the ones it must be compared with). Returns the
    /// halves (bit `2 l` or `2 l + 1`: of block `l`) that are a threshold's
    /// own high half and need their low halves, whose blocks the caller then
    /// draws one at a time ([`redraw`]): about one chunk in 65.
    ///
    /// # Safety
    /// `dst` must be valid for writes of eight rows.
    #[inline(always)]
    unsafe fn store(&self, c: &[__m512i; 4], dst: *mut [u8; 16]) -> u32 {
        // SAFETY (all): register operations, and two stores of four rows
        // each within the caller's eight rows.
        unsafe {
            let mut counts = [_mm512_setzero_si512(); 4];
            let mut tied = 0u32;
            for (count, &word) in counts.iter_mut().zip(c) {
                let bucket = _mm512_srli_epi16::<11>(word);
                *count = _mm512_permutexvar_epi16(bucket, self.below);
                let inside = _mm512_permutexvar_epi16(bucket, self.inside);
                let above = _mm512_cmpgt_epu16_mask(word, inside);
                *count = _mm512_mask_sub_epi16(*count, above, *count, self.minus_one);
                for &t in &self.top {
                    let above = _mm512_cmpgt_epu16_mask(word, t);
                    *count = _mm512_mask_sub_epi16(*count, above, *count, self.minus_one);
                }
                // A half that equals a threshold's high half has as many
                // thresholds below it as that threshold's place.
                tied |= _mm512_cmpeq_epi16_mask(word, _mm512_permutexvar_epi16(*count, self.ties));
            }
            // Lane l: bytes (halves 0, 2, 1, 3) of block l, then (4, 6, 5, 7).
            let a = _mm512_or_si512(counts[0], _mm512_slli_epi16::<8>(counts[1]));
            let b = _mm512_or_si512(counts[2], _mm512_slli_epi16::<8>(counts[3]));
            let lo = _mm512_permutex2var_epi32(a, self.first, b);
            let hi = _mm512_permutex2var_epi32(a, self.second, b);
            _mm512_storeu_si512(dst.cast(), _mm512_shuffle_epi8(lo, self.order));
            _mm512_storeu_si512(dst.add(4).cast(), _mm512_shuffle_epi8(hi, self.order));
            tied
        }
    }
}

/// Redraw, from the words `c` of a chunk, the blocks whose halves need
/// their low halves (`tied`, [`Pack::store`]), into the eight rows `out`
/// (the other blocks' weights are right already).
///
/// # Safety
/// The CPU must have `avx512f`.
#[cold]
#[inline(never)]
#[target_feature(enable = "avx512f")]
unsafe fn redraw(
    c: &[__m512i; 4],
    tied: u32,
    out: &mut [[u8; 16]],
    rows: &[u64],
    group: u32,
    key: [u32; 2],
) {
    let mut words = [[0_u32; 16]; 4];
    for (w, &x) in words.iter_mut().zip(c) {
        // SAFETY: sixteen words a store, inside the array.
        unsafe { _mm512_storeu_si512(w.as_mut_ptr().cast(), x) };
    }
    let mut blocks = tied;
    while blocks != 0 {
        let l = blocks.trailing_zeros() as usize / 2;
        blocks &= !(3 << (2 * l));
        let w = [0, 1, 2, 3].map(|i| words[i][l]);
        let (q, s) = (l / 2, l % 2);
        let block = group.wrapping_mul(2).wrapping_add(s as u32);
        out[q][8 * s..8 * s + 8].copy_from_slice(&block_weights(&w, rows[q], block, key));
    }
}

/// [`super::row_weights16`] for CPUs with AVX-512 (F and BW): the same
/// draws, four chunks of eight rows at a time, each chunk's sixteen
/// blocks in one register a word, counted in 16-bit lanes.
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
#[allow(clippy::cast_possible_wrap)] // the counters' and constants' bits
pub(super) unsafe fn row_weights16_as<const SHUFFLED: bool>(
    seed: u64,
    group: u32,
    rows: &[u64],
    out: &mut Vec<[u8; 16]>,
) {
    const STEP: usize = 8 * CHAINS;
    let key = key_of(seed);
    // Every row of `out` is written below before the length covers it (no
    // pass of zeros first).
    out.clear();
    out.reserve(rows.len());
    let dst = out.as_mut_ptr();
    let pack = Pack::new();
    let first = group.wrapping_mul(2);
    let blocks: [u32; 16] = std::array::from_fn(|l| first.wrapping_add((l % 2) as u32));
    let take_lo: [u32; 16] = std::array::from_fn(|l| (2 * (l / 2)) as u32);
    let take_hi: [u32; 16] = std::array::from_fn(|l| (2 * (l / 2) + 1) as u32);
    // SAFETY (all): loads of local arrays of 64 bytes, register operations.
    let (block, take_lo, take_hi, m) = unsafe {
        (
            _mm512_loadu_si512(blocks.as_ptr().cast()),
            _mm512_loadu_si512(take_lo.as_ptr().cast()),
            _mm512_loadu_si512(take_hi.as_ptr().cast()),
            (_mm512_set1_epi32(M0 as i32), _mm512_set1_epi32(M1 as i32)),
        )
    };
    let whole = rows.len() - rows.len() % STEP;
    for at in (0..whole).step_by(STEP) {
        // The counters of chunk v (rows `at + 8 v ..`): each row's two words
        // moved into its two lanes, the block and the stream (0) set.
        let mut c = [[block; 4]; CHAINS];
        for (v, cv) in c.iter_mut().enumerate() {
            // SAFETY: eight u64 a load, inside `rows[..whole]`.
            let x = unsafe { _mm512_loadu_si512(rows.as_ptr().add(at + 8 * v).cast()) };
            *cv = [
                _mm512_permutexvar_epi32(take_lo, x),
                _mm512_permutexvar_epi32(take_hi, x),
                block,
                _mm512_setzero_si512(),
            ];
        }
        let [mut ka, mut kb] = key;
        for r in 0..10 {
            if r > 0 {
                ka = ka.wrapping_add(W0);
                kb = kb.wrapping_add(W1);
            }
            let k = broadcast(ka, kb);
            for cv in &mut c {
                *cv = round::<SHUFFLED>(*cv, m, k);
            }
        }
        for (v, cv) in c.iter().enumerate() {
            let eight = at + 8 * v..at + 8 * v + 8;
            // SAFETY: rows `eight` are within `out`'s capacity (`rows`);
            // the store writes all eight before the slice is made of them;
            // the CPU has avx512f (this function's contract).
            unsafe {
                let tied = pack.store(cv, dst.add(eight.start));
                if tied != 0 {
                    let mine = std::slice::from_raw_parts_mut(dst.add(eight.start), 8);
                    redraw(cv, tied, mine, &rows[eight], group, key);
                }
            }
        }
    }
    if whole < rows.len() {
        let mut tail = Vec::new();
        super::row_weights16(seed, group, &rows[whole..], &mut tail);
        // SAFETY: `tail` holds the rows past `whole`, within the capacity.
        unsafe { std::ptr::copy_nonoverlapping(tail.as_ptr(), dst.add(whole), tail.len()) };
    }
    // SAFETY: rows `..whole` were stored chunk by chunk, the rest copied.
    unsafe { out.set_len(rows.len()) };
}
