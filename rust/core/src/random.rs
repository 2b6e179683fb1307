//! The counter-based random stream of the bootstrap: Philox4x32-10 (Salmon,
//! Moraes, Dror and Shaw, "Parallel random numbers: as easy as 1, 2, 3", SC
//! 2011) and Poisson(1) draws read off its words by an exact integer inverse
//! CDF: a row weight reads a 16-bit half of a word, and for the few halves
//! that leave the draw open (8 of 65,536) the matching half of a second
//! block as the word's low half, so one block gives eight weights and the
//! draws are those of whole 32-bit words.
//!
//! A draw is a pure function of `(seed, counter)`: the bootstrap keys the
//! counter by the global index of a row and the replicate block, so a row's
//! weight in a replicate never depends on which thread, batch or partition
//! drew it. The numpy backend holds the same function
//! (`cmetrics._numpy.random`); both are checked against the published
//! known-answer vectors of Random123 and against each other.

/// The multipliers and key increments of Philox4x32 (the Random123 constants).
const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

/// Philox4x32 with `rounds` rounds of `counter` under `key`.
#[inline]
#[must_use]
pub fn philox4x32(rounds: usize, counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let [mut c0, mut c1, mut c2, mut c3] = counter;
    let [mut k0, mut k1] = key;
    for round in 0..rounds {
        if round > 0 {
            k0 = k0.wrapping_add(W0);
            k1 = k1.wrapping_add(W1);
        }
        let p0 = u64::from(M0) * u64::from(c0);
        let p1 = u64::from(M1) * u64::from(c2);
        let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
        let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
        (c0, c1, c2, c3) = (hi1 ^ c1 ^ k0, lo1, hi0 ^ c3 ^ k1, lo0);
    }
    [c0, c1, c2, c3]
}

/// Philox4x32-10, the generator the bootstrap uses.
#[inline]
#[must_use]
pub fn philox4x32_10(counter: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    philox4x32(10, counter, key)
}

/// `LANES` independent Philox4x32-10 blocks side by side, word by word, so that
/// the compiler can keep each word of all lanes in one vector register.
#[inline(always)]
pub(crate) fn philox_lanes<const LANES: usize>(
    counters: [[u32; LANES]; 4],
    key: [u32; 2],
) -> [[u32; LANES]; 4] {
    let [mut c0, mut c1, mut c2, mut c3] = counters;
    let [mut k0, mut k1] = key;
    for round in 0..10 {
        if round > 0 {
            k0 = k0.wrapping_add(W0);
            k1 = k1.wrapping_add(W1);
        }
        for lane in 0..LANES {
            let p0 = u64::from(M0) * u64::from(c0[lane]);
            let p1 = u64::from(M1) * u64::from(c2[lane]);
            let (hi0, lo0) = ((p0 >> 32) as u32, p0 as u32);
            let (hi1, lo1) = ((p1 >> 32) as u32, p1 as u32);
            let n0 = hi1 ^ c1[lane] ^ k0;
            let n2 = hi0 ^ c3[lane] ^ k1;
            c0[lane] = n0;
            c1[lane] = lo1;
            c2[lane] = n2;
            c3[lane] = lo0;
        }
    }
    [c0, c1, c2, c3]
}

/// A small deterministic generator for the unit tests (the high bits of a
/// linear congruential generator; no extra dependency). Each value has 31
/// random bits (`0 .. 2^31`): shifting it right by 31 or more gives zero; a
/// test that wants more bits joins several values.
#[cfg(test)]
pub(crate) fn lcg(seed: u64) -> impl FnMut() -> u64 {
    let mut s = seed;
    move || {
        s = s
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        s >> 33
    }
}

/// Marsaglia's xorshift64 (shifts 13, 7, 17) from `seed` (which must not be
/// zero): 64 random-looking bits per value, for unit tests that want whole
/// words (keys, widths) rather than [`lcg`]'s 31 bits.
#[cfg(test)]
pub(crate) fn xorshift(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// `POISSON1_THRESHOLDS[k - 1] = round(2^32 P(X <= k - 1))` for `X ~ Poisson(1)`,
/// for every `k` whose threshold is below `2^32`: a 32-bit word `u` gives the
/// draw `#{k : u >= POISSON1_THRESHOLDS[k - 1]}`. Computed with exact rational
/// arithmetic; `tests/resampling/test_random.py` recomputes them.
pub const POISSON1_THRESHOLDS: [u32; 12] = [
    1_580_030_169,
    3_160_060_337,
    3_950_075_422,
    4_213_413_783,
    4_279_248_374,
    4_292_415_292,
    4_294_609_778,
    4_294_923_276,
    4_294_962_463,
    4_294_966_817,
    4_294_967_253,
    4_294_967_292,
];

/// The Poisson(1) draw of one 32-bit word.
#[inline(always)]
#[must_use]
pub fn poisson1(word: u32) -> u8 {
    let mut k = 0u8;
    for t in POISSON1_THRESHOLDS {
        k += u8::from(word >= t);
    }
    k
}

/// The high halves of [`POISSON1_THRESHOLDS`] below `2^16 - 1`, in order: a
/// 16-bit high half `h` of a word passes threshold `k` for certain when `h`
/// exceeds its high half, fails it when `h` is below, and needs the word's
/// low half only when equal. The thresholds from the eighth on all have
/// the high half `2^16 - 1`, which no `h` exceeds.
pub const POISSON1_HIGH: [u16; 7] = [24_109, 48_218, 60_273, 64_291, 65_296, 65_497, 65_530];

/// The draw of a word whose high half is `high`, when `high` is none of
/// the thresholds' high halves ([`poisson1_needs_low`] false): how many of
/// [`POISSON1_HIGH`] it exceeds.
#[inline(always)]
#[must_use]
pub fn poisson1_high(high: u16) -> u8 {
    let mut k = 0u8;
    for t in POISSON1_HIGH {
        k += u8::from(high > t);
    }
    k
}

/// Whether a word with the high half `high` needs its low half to be drawn:
/// `high` is the high half of a threshold ([`POISSON1_HIGH`] or `2^16 - 1`),
/// 8 values of 65,536.
#[inline(always)]
#[must_use]
pub fn poisson1_needs_low(high: u16) -> bool {
    high == u16::MAX || POISSON1_HIGH.contains(&high)
}

/// Replicates one Philox block of a row gives: its eight 16-bit halves.
pub const REPLICATES_PER_BLOCK: usize = 8;

/// Half `j` (0 .. 8) of a block's words: the low half of word `j / 2` for
/// even `j`, its high half for odd.
#[inline(always)]
#[must_use]
pub fn half_of(words: &[u32; 4], j: usize) -> u16 {
    (words[j / 2] >> (16 * (j % 2))) as u16
}

/// The weights of `row` in replicates `8 block .. 8 block + 8` from the
/// block `words` of its counter in [`ROW_WEIGHTS`] (docs/definitions.md
/// §11.2): replicate `8 block + j` draws the 32-bit word whose high half is
/// half `j` of `words` and whose low half is half `j` of the block of the
/// same counter in [`ROW_WEIGHT_LOWS`], drawn only when some half needs it
/// (about one block in a thousand).
#[inline(always)]
#[must_use]
pub fn block_weights(words: &[u32; 4], row: u64, block: u32, key: [u32; 2]) -> [u8; 8] {
    let mut out = [0u8; 8];
    let mut lows: Option<[u32; 4]> = None;
    for (j, w) in out.iter_mut().enumerate() {
        let high = half_of(words, j);
        *w = if poisson1_needs_low(high) {
            let lows = lows
                .get_or_insert_with(|| philox4x32_10(counter_of(row, block, ROW_WEIGHT_LOWS), key));
            poisson1((u32::from(high) << 16) | u32::from(half_of(lows, j)))
        } else {
            poisson1_high(high)
        };
    }
    out
}

/// Whether any half of a block's `words` needs its low half
/// ([`poisson1_needs_low`]).
#[inline(always)]
#[must_use]
pub fn block_needs_lows(words: &[u32; 4]) -> bool {
    (0..REPLICATES_PER_BLOCK).any(|j| poisson1_needs_low(half_of(words, j)))
}

/// The key of a seed: its low and high words.
#[inline]
#[must_use]
pub fn key_of(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// The counter of `row`'s block `block` in stream `stream` (of the row
/// weights: replicates `8 block .. 8 block + 8`).
#[inline]
#[must_use]
pub fn counter_of(row: u64, block: u32, stream: u32) -> [u32; 4] {
    [row as u32, (row >> 32) as u32, block, stream]
}

/// The stream of the bootstrap's Poisson row weights (the high halves of
/// the words drawn, [`block_weights`]).
pub const ROW_WEIGHTS: u32 = 0;

/// The stream of the multinomial scheme's binomial splits of cell counts
/// (counter: replicate, split position, attempt, this tag).
pub const CELL_SPLITS: u32 = 1;

/// The stream of the multinomial scheme's Poisson draws of a large stratum's
/// cells (counter: cell pair, replicate, 0, this tag).
pub const CELL_POISSON: u32 = 2;

/// The stream of the multinomial scheme's completion rows (counter: row,
/// replicate, the stratum's first cell, this tag plus the attempt times 256).
pub const CELL_COMPLETIONS: u32 = 3;

/// The stream of the row weights' low halves, read only for the rare high
/// halves that need them ([`block_weights`]).
pub const ROW_WEIGHT_LOWS: u32 = 4;

/// How many lanes the row-weight draws take at a time (one AVX-512 register of
/// 32-bit words).
pub const LANES: usize = 16;

/// The Poisson(1) weights of `rows` in replicates `8 block .. 8 block + 8`:
/// `out[j][i]` is the weight of `rows[i]` in replicate `8 block + j`
/// ([`block_weights`]). Inlined into its callers, so that a caller compiled
/// for wider vectors draws with them.
#[inline(always)]
pub fn row_weights(seed: u64, block: u32, rows: &[u64], out: &mut [Vec<u8>; 8]) {
    let key = key_of(seed);
    for o in out.iter_mut() {
        o.clear();
        o.reserve(rows.len());
    }
    let mut push = |row: u64, words: [u32; 4]| {
        for (o, w) in out.iter_mut().zip(block_weights(&words, row, block, key)) {
            o.push(w);
        }
    };
    let mut chunks = rows.chunks_exact(LANES);
    for chunk in &mut chunks {
        let mut ctr = [[0u32; LANES]; 4];
        for (lane, &row) in chunk.iter().enumerate() {
            let c = counter_of(row, block, ROW_WEIGHTS);
            for (i, word) in ctr.iter_mut().enumerate() {
                word[lane] = c[i];
            }
        }
        let words = philox_lanes::<LANES>(ctr, key);
        for (lane, &row) in chunk.iter().enumerate() {
            push(row, [0, 1, 2, 3].map(|i| words[i][lane]));
        }
    }
    for &row in chunks.remainder() {
        push(row, philox4x32_10(counter_of(row, block, ROW_WEIGHTS), key));
    }
}

/// How many replicates [`row_weights16`] draws per row: two Philox blocks.
pub const REPLICATES_PER_DRAW: usize = 16;

/// The sixteen weights of `row` in replicates `16 group ..` from the words
/// of its two blocks `2 group`, `2 group + 1`.
#[inline(always)]
#[must_use]
fn row_weights_of(row: u64, group: u32, words: [[u32; 4]; 2], key: [u32; 2]) -> [u8; 16] {
    let first = group.wrapping_mul(2);
    let a = block_weights(&words[0], row, first, key);
    let b = block_weights(&words[1], row, first.wrapping_add(1), key);
    std::array::from_fn(|r| if r < 8 { a[r] } else { b[r - 8] })
}

/// The counters of the two row-weight blocks of replicates `16 group ..` of
/// eight rows, lane `l` block `2 group + l % 2` of `rows[l / 2]`, word `i`
/// of every lane in `[i]`.
#[inline(always)]
#[must_use]
pub(crate) fn counters16(rows: &[u64], group: u32) -> [[u32; LANES]; 4] {
    let first_block = group.wrapping_mul(2);
    let mut ctr = [[0u32; LANES]; 4];
    for lane in 0..LANES {
        let c = counter_of(
            rows[lane / 2],
            first_block.wrapping_add((lane % 2) as u32),
            ROW_WEIGHTS,
        );
        for (i, word) in ctr.iter_mut().enumerate() {
            word[lane] = c[i];
        }
    }
    ctr
}

/// The Poisson(1) weights of `rows` in replicates `16 group .. 16 group + 16`,
/// row by row: `out[i][r]` is the weight of `rows[i]` in replicate
/// `16 group + r` (half `r % 8` of Philox block `2 group + r / 8`, the same
/// draws as [`row_weights`]). The sixteen lanes hold eight rows times two
/// blocks, so each row's sixteen weights land side by side, ready for a loop
/// over replicates. Inlined into its callers, like [`row_weights`].
#[inline(always)]
pub fn row_weights16(seed: u64, group: u32, rows: &[u64], out: &mut Vec<[u8; 16]>) {
    let key = key_of(seed);
    out.clear();
    out.reserve(rows.len());
    let first_block = group.wrapping_mul(2);
    let mut chunks = rows.chunks_exact(LANES / 2);
    for chunk in &mut chunks {
        let words = philox_lanes::<LANES>(counters16(chunk, group), key);
        for (q, &row) in chunk.iter().enumerate() {
            let blocks = [0, 1].map(|s| [0, 1, 2, 3].map(|i| words[i][2 * q + s]));
            out.push(row_weights_of(row, group, blocks, key));
        }
    }
    for &row in chunks.remainder() {
        let blocks = [0, 1].map(|s| {
            philox4x32_10(
                counter_of(row, first_block.wrapping_add(s), ROW_WEIGHTS),
                key,
            )
        });
        out.push(row_weights_of(row, group, blocks, key));
    }
}

/// [`LANES`] Philox4x32-10 blocks side by side (word `i` of lane `l` in
/// `counters[i][l]`): written with AVX-512 registers where the CPU has them
/// ([`x86::philox16`]), else with AVX2 ones ([`avx2::philox16`]), else
/// [`philox_lanes`]; the same words. The Poisson
/// cells of a replicate in blocks, 10^7 rows, one thread, best of binaries
/// alternated run by run: 10^4 tie groups 253 -> 213 us, 10^5 groups 1.55 ->
/// 1.24 ms (Intel).
#[inline(always)]
#[must_use]
pub(crate) fn philox_blocks16(counters: [[u32; LANES]; 4], key: [u32; 2]) -> [[u32; LANES]; 4] {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx512() {
        // SAFETY: AVX-512 is here.
        return unsafe { x86::philox16(counters, key, crate::cpu::intel()) };
    }
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx2() {
        // SAFETY: AVX2 is here.
        return unsafe { avx2::philox16(counters, key) };
    }
    philox_lanes::<LANES>(counters, key)
}

/// The draws written with AVX-512 registers: sixteen 32-bit lanes per word,
/// the 32 x 32 -> 64-bit products of the even and odd lanes recombined by
/// blends (the portable lanes widen every word to 64 bits instead).
#[cfg(target_arch = "x86_64")]
pub mod x86;

/// The draws written with AVX2 registers, for CPUs without AVX-512.
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;

/// The weight of `row` in replicate `b`, one block at a time (the tests'
/// plain reference for the kernels that draw many at once).
#[cfg(test)]
#[allow(clippy::cast_possible_truncation)]
pub(crate) fn weight_of(seed: u64, row: u64, b: usize) -> f64 {
    let block = (b / REPLICATES_PER_BLOCK) as u32;
    let key = key_of(seed);
    let high = philox4x32_10(counter_of(row, block, ROW_WEIGHTS), key);
    let low = philox4x32_10(counter_of(row, block, ROW_WEIGHT_LOWS), key);
    let j = b % REPLICATES_PER_BLOCK;
    let word = (u32::from(half_of(&high, j)) << 16) | u32::from(half_of(&low, j));
    f64::from(poisson1(word))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Random123's tests/kat_vectors, the philox4x32 lines: counter, key, result.
    /// Rounds, counter, key and the published output.
    type Kat = (usize, [u32; 4], [u32; 2], [u32; 4]);

    const KAT: [Kat; 6] = [
        (
            7,
            [0, 0, 0, 0],
            [0, 0],
            [0x5f6f_b709, 0x0d89_3f64, 0x4f12_1f81, 0x4f73_0a48],
        ),
        (
            7,
            [u32::MAX; 4],
            [u32::MAX; 2],
            [0x5207_ddc2, 0x4516_5e59, 0x4d8e_e751, 0x8c52_f662],
        ),
        (
            7,
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0x4dfc_caba, 0x190a_87f0, 0xc473_62ba, 0xb6b5_242a],
        ),
        (
            10,
            [0, 0, 0, 0],
            [0, 0],
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8],
        ),
        (
            10,
            [u32::MAX; 4],
            [u32::MAX; 2],
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd],
        ),
        (
            10,
            [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
            [0xa409_3822, 0x299f_31d0],
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1],
        ),
    ];

    /// The AVX-512 blocks are the portable lanes' words, both ways of
    /// taking the products' halves.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sixteen_avx512_blocks_are_the_lanes() {
        if !crate::cpu::avx512() {
            return; // this CPU has no AVX-512: the blocks are never drawn so
        }
        let mut next = lcg(3);
        for _ in 0..200 {
            let counters: [[u32; 16]; 4] = std::array::from_fn(|_| {
                std::array::from_fn(|_| (next() as u32) ^ ((next() as u32) << 1))
            });
            let key = [(next() as u32) << 1, next() as u32];
            let want = philox_lanes::<16>(counters, key);
            for intel in [true, false] {
                // SAFETY: AVX-512 (checked above).
                assert_eq!(unsafe { x86::philox16(counters, key, intel) }, want);
            }
            for l in 0..16 {
                let block = philox4x32_10([0, 1, 2, 3].map(|i| counters[i][l]), key);
                assert_eq!(block, [0, 1, 2, 3].map(|i| want[i][l]));
            }
        }
    }

    #[test]
    fn philox_gives_the_published_known_answers() {
        for (rounds, ctr, key, want) in KAT {
            assert_eq!(
                philox4x32(rounds, ctr, key),
                want,
                "{rounds} rounds of {ctr:x?}"
            );
        }
    }

    #[test]
    fn the_lanes_equal_one_block_at_a_time() {
        let rows: Vec<u64> = (0..29u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15))
            .collect();
        let mut out: [Vec<u8>; 8] = Default::default();
        row_weights(42, 7, &rows, &mut out);
        for (i, &row) in rows.iter().enumerate() {
            for (j, o) in out.iter().enumerate() {
                assert_eq!(f64::from(o[i]), weight_of(42, row, 56 + j));
            }
        }
    }

    #[test]
    fn a_high_half_draws_as_its_whole_word() {
        // Every high half, with low halves at both ends and between: the
        // draw by halves is the draw of the 32-bit word.
        let mut next = lcg(11);
        for high in 0..=u16::MAX {
            let h = u32::from(high) << 16;
            let whole = [h, h | 0xFFFF, h | (next() as u32 & 0xFFFF)].map(poisson1);
            if poisson1_needs_low(high) {
                continue;
            }
            assert!(whole.iter().all(|&w| w == poisson1_high(high)), "{high}");
        }
        // The halves that need their low half are exactly those whose
        // word's draw depends on it.
        let ambiguous = (0..=u16::MAX)
            .filter(|&high| {
                let h = u32::from(high) << 16;
                poisson1(h) != poisson1(h | 0xFFFF)
            })
            .count();
        let flagged = (0..=u16::MAX).filter(|&h| poisson1_needs_low(h)).count();
        assert_eq!((ambiguous, flagged), (8, 8));
        for t in POISSON1_THRESHOLDS {
            assert!(poisson1_needs_low((t >> 16) as u16));
        }
    }

    #[test]
    fn blocks_that_need_low_halves_draw_them() {
        // Rows whose blocks hold a high half that needs its low half: the
        // weights of the portable draws equal the definition's.
        let key = key_of(5);
        let rows: Vec<u64> = (0..60_000u64)
            .filter(|&row| block_needs_lows(&philox4x32_10(counter_of(row, 6, ROW_WEIGHTS), key)))
            .collect();
        assert!(rows.len() > 20, "{}", rows.len());
        let mut out: [Vec<u8>; 8] = Default::default();
        row_weights(5, 6, &rows, &mut out);
        let mut sixteen = Vec::new();
        row_weights16(5, 3, &rows, &mut sixteen);
        for (i, &row) in rows.iter().enumerate() {
            for (j, o) in out.iter().enumerate() {
                assert_eq!(f64::from(o[i]), weight_of(5, row, 48 + j));
                assert_eq!(f64::from(sixteen[i][j]), weight_of(5, row, 48 + j));
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx512_draws_equal_the_portable_ones() {
        if !crate::cpu::avx512() {
            return;
        }
        let rows: Vec<u64> = (0..20_011u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 33))
            .collect();
        for group in [0u32, 1, 62, u32::MAX] {
            let (mut a, mut b) = (Vec::new(), Vec::new());
            row_weights16(0xDEAD_BEEF_0123, group, &rows, &mut a);
            // SAFETY: the CPU has avx512f.
            unsafe { x86::row_weights16(0xDEAD_BEEF_0123, group, &rows, &mut b) };
            assert_eq!(a, b, "group {group}");
            // Both ways to the products' halves, whichever this CPU takes.
            for shuffled in [false, true] {
                // SAFETY: the CPU has avx512f.
                unsafe {
                    if shuffled {
                        x86::row_weights16_as::<true>(0xDEAD_BEEF_0123, group, &rows, &mut b);
                    } else {
                        x86::row_weights16_as::<false>(0xDEAD_BEEF_0123, group, &rows, &mut b);
                    }
                }
                assert_eq!(a, b, "group {group}, shuffled {shuffled}");
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn sixteen_avx2_blocks_are_the_lanes() {
        if !crate::cpu::avx2() {
            return;
        }
        let mut next = lcg(5);
        for _ in 0..200 {
            let counters: [[u32; 16]; 4] = std::array::from_fn(|_| {
                std::array::from_fn(|_| (next() as u32) ^ ((next() as u32) << 1))
            });
            let key = [(next() as u32) << 1, next() as u32];
            // SAFETY: AVX2 (checked above).
            let got = unsafe { avx2::philox16(counters, key) };
            assert_eq!(got, philox_lanes::<16>(counters, key));
            for l in 0..16 {
                let block = philox4x32_10([0, 1, 2, 3].map(|i| counters[i][l]), key);
                assert_eq!(block, [0, 1, 2, 3].map(|i| got[i][l]));
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn the_avx2_draws_equal_the_portable_ones() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            return;
        }
        // Every remainder of the four-row vectors and the chains of eight
        // rows, and enough rows for blocks that need their low halves.
        for n in [0usize, 1, 2, 3, 4, 5, 7, 9, 12, 15, 1003, 20_011] {
            let rows: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 35))
                .collect();
            for (seed, group) in [
                (0xDEAD_BEEF_0123, 0u32),
                (1, 1),
                (u64::MAX, 62),
                (7, u32::MAX),
            ] {
                let (mut a, mut b) = (Vec::new(), vec![[9u8; 16]; 3]);
                row_weights16(seed, group, &rows, &mut a);
                // SAFETY: the CPU has avx2.
                unsafe { avx2::row_weights16(seed, group, &rows, &mut b) };
                assert_eq!(a, b, "{n} rows, seed {seed}, group {group}");
            }
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[test]
    fn chunks_drawn_side_by_side_pack_as_the_portable_draws() {
        // The AVX-512 draws (several chunks of eight rows at a time, the
        // counts in 16-bit lanes): every remainder of their steps, both ways
        // to the products' halves, and rows whose blocks all need their low
        // halves (each step redrawn).
        if !crate::cpu::avx512() {
            return;
        }
        let key = key_of(11);
        let lows: Vec<u64> = (0..200_000u64)
            .filter(|&row| {
                (0..2).any(|s| {
                    block_needs_lows(&philox4x32_10(counter_of(row, 14 + s, ROW_WEIGHTS), key))
                })
            })
            .collect();
        assert!(lows.len() > 40, "{}", lows.len());
        let mut cases: Vec<(u64, u32, Vec<u64>)> = vec![(11, 7, lows)];
        for n in [0usize, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 20_011] {
            let rows: Vec<u64> = (0..n as u64)
                .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 37))
                .collect();
            for (seed, group) in [(3_u64, 0_u32), (u64::MAX, 9), (0x1234_5678_9ABC, u32::MAX)] {
                cases.push((seed, group, rows.clone()));
            }
        }
        for (seed, group, rows) in &cases {
            let n = rows.len();
            let mut want = Vec::new();
            row_weights16(*seed, *group, rows, &mut want);
            let (mut a, mut b) = (vec![[1u8; 16]; 2], Vec::new());
            // SAFETY (both): AVX-512 (checked above).
            unsafe {
                x86::row_weights16_as::<true>(*seed, *group, rows, &mut a);
                x86::row_weights16_as::<false>(*seed, *group, rows, &mut b);
            }
            assert_eq!(a, want, "{n} rows, seed {seed}, group {group}");
            assert_eq!(b, want, "{n} rows, seed {seed}, group {group}");
        }
    }

    #[test]
    fn sixteen_replicates_per_row_equal_one_block_at_a_time() {
        let rows: Vec<u64> = (0..23u64)
            .map(|i| i.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ (i << 40))
            .collect();
        let mut out = Vec::new();
        row_weights16(77, 5, &rows, &mut out);
        assert_eq!(out.len(), rows.len());
        for (i, &row) in rows.iter().enumerate() {
            for (r, &w) in out[i].iter().enumerate() {
                assert_eq!(
                    f64::from(w),
                    weight_of(77, row, 80 + r),
                    "row {i} replicate {r}"
                );
            }
        }
    }

    #[test]
    fn poisson_draws_have_mean_and_variance_one() {
        let rows: Vec<u64> = (0..200_000).collect();
        let mut out: [Vec<u8>; 8] = Default::default();
        row_weights(3, 0, &rows, &mut out);
        let n = (rows.len() * 8) as f64;
        let sum: f64 = out.iter().flatten().map(|&w| f64::from(w)).sum();
        let sq: f64 = out.iter().flatten().map(|&w| f64::from(w).powi(2)).sum();
        let mean = sum / n;
        let var = sq / n - mean * mean;
        assert!((mean - 1.0).abs() < 0.01, "{mean}");
        assert!((var - 1.0).abs() < 0.02, "{var}");
        assert_eq!(poisson1(0), 0);
        assert_eq!(poisson1(u32::MAX), 12);
    }
}
