//! Inversions of a sequence of ranks, counted one digit at a time.
//!
//! An inversion is a pair `i < j` with `v[i] > v[j]`. Cut every value into
//! digits of eight bits, most significant first. Two different values first
//! differ at one digit, and the pair is an inversion exactly when, at that
//! digit, the earlier value's digit is the larger. So the count is a sum over
//! the nodes of a most-significant-digit radix sort (the rows that share the
//! digits above, kept in their original order) of the pairs whose digit at
//! that level goes down. Within a node a running table of the digits seen so
//! far gives, for each row, the earlier rows with a larger digit in two
//! lookups; a stable counting sort then forms the children. Ranks below
//! `2^24` take three passes of counting and two of scattering, where a merge
//! sort takes 24 levels: about a third of the time on the reference machine.

use rayon::prelude::*;

use super::runs::ahead;
use crate::parallel::Pool;

/// Bits per digit.
const DIGIT: u32 = 8;
/// Values of one digit.
const RADIX: usize = 1 << DIGIT;
/// Nodes up to this length are counted pair by pair.
const SMALL: usize = 24;
/// Rows of one piece of the first level (a piece runs without looking at
/// the stop flag).
const TOP_PIECE: usize = 1 << 22;

/// `LESS[e][d]` is 1 when `d < e`: the counters a digit `e` raises.
const LESS: [[u32; 16]; 16] = {
    let mut t = [[0_u32; 16]; 16];
    let mut e = 0;
    while e < 16 {
        let mut d = 0;
        while d < e {
            t[e][d] = 1;
            d += 1;
        }
        e += 1;
    }
    t
};

/// For each digit value, the earlier rows of the node with a larger digit,
/// kept in two tiers of sixteen so that a row costs two sixteen-lane adds:
/// `high[h]` counts the rows whose high half is above `h`, `low[h][l]` the
/// rows with high half `h` and low half above `l`.
struct Above {
    high: [u32; 16],
    low: [[u32; 16]; 16],
}

impl Above {
    const fn new() -> Self {
        Self {
            high: [0; 16],
            low: [[0; 16]; 16],
        }
    }

    /// The earlier rows with a digit above `e`, then `e` counted. Counts fit
    /// `u32`: a node has at most `2^32` rows (ranks are `u32`, one per row).
    #[inline(always)]
    fn push(&mut self, e: usize) -> u64 {
        let (h, l) = ((e >> 4) & 15, e & 15);
        let above = u64::from(self.high[h]) + u64::from(self.low[h][l]);
        for (c, m) in self.high.iter_mut().zip(&LESS[h]) {
            *c = c.wrapping_add(*m);
        }
        for (c, m) in self.low[h].iter_mut().zip(&LESS[l]) {
            *c = c.wrapping_add(*m);
        }
        above
    }

    /// The rows counted so far with a digit above `e`.
    fn larger(&self, e: usize) -> u64 {
        let (h, l) = ((e >> 4) & 15, e & 15);
        u64::from(self.high[h]) + u64::from(self.low[h][l])
    }

    /// The rows counted with each digit value, out of `rows`.
    fn counts(&self, rows: usize) -> [u64; RADIX] {
        let mut hist = [0_u64; RADIX];
        let mut prev = rows as u64;
        for (e, h) in hist.iter_mut().enumerate() {
            let l = self.larger(e);
            *h = prev - l;
            prev = l;
        }
        hist
    }
}

/// The inversions among the digits of `v` (at `shift`, `width` bits), and
/// the table of `v`'s digits (for their counts, when a level follows).
fn digit_inversions(v: &[u32], shift: u32, width: u32) -> (u64, Above) {
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx512() {
        // SAFETY: the CPU has AVX-512 F (checked just above).
        return unsafe { digit_inversions_avx512(v, shift, width) };
    }
    digit_inversions_portable(v, shift, width)
}

/// [`digit_inversions`] with the table's counters read and written as
/// arrays: each push's reads wait for the previous push's writes to reach
/// them.
fn digit_inversions_portable(v: &[u32], shift: u32, width: u32) -> (u64, Above) {
    let mut above = Above::new();
    let mut inv = 0_u64;
    for &x in v {
        inv += above.push(digit(x, shift, width));
    }
    (inv, above)
}

/// [`digit_inversions`] on AVX-512: the sixteen high counters stay in one
/// register (a push adds a row of [`LESS`] to it and reads its lane `h` by
/// a permute), and a push loads and stores the low row `h` whole, so no
/// narrow read waits on a wide write. On an Intel guest one level of 10^7
/// digits took 51 ms on one thread by the arrays, against 21-23 ms (the
/// whole count of 10^7 ranks of 24 bits on two threads: 118-128 -> 76-77 ms).
///
/// # Safety
/// The CPU must have AVX-512 F.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f")]
unsafe fn digit_inversions_avx512(v: &[u32], shift: u32, width: u32) -> (u64, Above) {
    use std::arch::x86_64::{
        __m512i, _mm512_add_epi32, _mm512_castsi512_si128, _mm512_loadu_si512,
        _mm512_permutexvar_epi32, _mm512_set1_epi32, _mm512_setzero_si512, _mm512_storeu_si512,
        _mm_cvtsi128_si32,
    };
    let less: [__m512i; 16] = std::array::from_fn(|e| {
        // SAFETY: a row of `LESS` is sixteen `u32`, 64 bytes (unaligned load).
        unsafe { _mm512_loadu_si512(LESS[e].as_ptr().cast()) }
    });
    let mut high = _mm512_setzero_si512();
    let mut low = [_mm512_setzero_si512(); 16];
    let mut inv = 0_u64;
    for &x in v {
        let e = digit(x, shift, width);
        let (h, l) = ((e >> 4) & 15, e & 15);
        let row = low[h];
        #[allow(clippy::cast_possible_wrap, clippy::cast_possible_truncation)]
        let picked = _mm512_add_epi32(
            _mm512_permutexvar_epi32(_mm512_set1_epi32(h as i32), high),
            _mm512_permutexvar_epi32(_mm512_set1_epi32(l as i32), row),
        );
        // Lane 0 holds high[h] + low[h][l]: a count of earlier rows, below 2^32.
        #[allow(clippy::cast_sign_loss)]
        let above = _mm_cvtsi128_si32(_mm512_castsi512_si128(picked)) as u32;
        inv += u64::from(above);
        high = _mm512_add_epi32(high, less[h]);
        low[h] = _mm512_add_epi32(row, less[l]);
    }
    let mut table = Above::new();
    // SAFETY: each destination is sixteen `u32`, 64 bytes (unaligned store).
    unsafe {
        _mm512_storeu_si512(table.high.as_mut_ptr().cast(), high);
        for (dst, src) in table.low.iter_mut().zip(&low) {
            _mm512_storeu_si512(dst.as_mut_ptr().cast(), *src);
        }
    }
    (inv, table)
}

/// How far ahead of its next slot a digit's stream of the scatter asks for
/// the cache line (two lines of `u32`). The scatter writes 256 streams at
/// once, more than the hardware prefetchers follow, so without the hint
/// each line waited for its read for ownership: on an Intel guest 10^7 rows
/// scattered by an 8-bit digit on one thread took 53-61 ms plainly and
/// 18-22 ms so (a buffer of sixteen rows per digit, flushed whole, did not
/// help: 51-62 ms).
const WRITE_AHEAD: usize = 32;

/// The digit of `x` at `shift` of `width` bits.
#[inline(always)]
fn digit(x: u32, shift: u32, width: u32) -> usize {
    ((x >> shift) & ((1 << width) - 1)) as usize
}

/// Width of the digit just below `top` bits (the first digit takes the
/// remainder, so that the later ones are whole).
fn width_below(top: u32) -> u32 {
    (top - 1) % DIGIT + 1
}

/// Inversions of `v`, whose values are below `2^bits`; `v` is left in some
/// order, `scratch` (of the same length) is overwritten. Returns early, with
/// a meaningless count, once the pool's stop flag is raised: the caller
/// checks it.
pub fn count_inversions(v: &mut [u32], scratch: &mut [u32], bits: u32, pool: &Pool) -> u128 {
    let n = v.len().min(scratch.len());
    let (v, scratch) = (&mut v[..n], &mut scratch[..n]);
    if n < 2 {
        return 0;
    }
    let bits = bits.clamp(1, 32);
    let width = width_below(bits);
    let shift = bits - width;
    let piece = n.div_ceil(pool.threads().max(1)).clamp(1, TOP_PIECE);
    let count = |c: &[u32]| -> (u128, [u64; RADIX]) {
        if pool.stopped() {
            return (0, [0; RADIX]);
        }
        let (inv, above) = digit_inversions(c, shift, width);
        (u128::from(inv), above.counts(c.len()))
    };
    let parts: Vec<(u128, [u64; RADIX])> = if pool.parallel_for(n) {
        pool.install(|| v.par_chunks(piece).map(count).collect())
    } else {
        v.chunks(piece).map(count).collect()
    };
    // Each piece against the pieces before it.
    let mut inv: u128 = parts.iter().map(|p| p.0).sum();
    let mut seen = [0_u64; RADIX];
    for (_, hist) in &parts {
        let mut larger = 0_u64;
        for e in (0..RADIX).rev() {
            inv += u128::from(hist[e]) * u128::from(larger);
            larger += seen[e];
        }
        for (s, h) in seen.iter_mut().zip(hist) {
            *s += h;
        }
    }
    if shift == 0 || pool.stopped() {
        return inv;
    }
    // A stable counting sort into `scratch`: each (digit, piece) owns a slice.
    let mut slots: Vec<Vec<&mut [u32]>> = parts.iter().map(|_| Vec::with_capacity(RADIX)).collect();
    let mut rest: &mut [u32] = scratch;
    for e in 0..RADIX {
        for (p, (_, hist)) in slots.iter_mut().zip(&parts) {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(hist[e] as usize);
            p.push(head);
            rest = tail;
        }
    }
    let scatter = |(c, mut slots): (&[u32], Vec<&mut [u32]>)| {
        let mut at = [0_usize; RADIX];
        for &x in c {
            let e = digit(x, shift, width);
            if let Some(slot) = slots.get_mut(e) {
                ahead(slot, Some(at[e] + WRITE_AHEAD));
                if let Some(s) = slot.get_mut(at[e]) {
                    *s = x;
                }
            }
            at[e] += 1;
        }
    };
    let jobs: Vec<(&[u32], Vec<&mut [u32]>)> = v.chunks(piece).zip(slots).collect();
    if pool.parallel_for(n) {
        pool.install(|| jobs.into_par_iter().for_each(scatter));
    } else {
        jobs.into_iter().for_each(scatter);
    }
    // The children: digit ranges of `scratch`, with `v` as their scratch.
    let mut nodes: Vec<(&mut [u32], &mut [u32])> = Vec::with_capacity(RADIX);
    let (mut sorted, mut spare): (&mut [u32], &mut [u32]) = (scratch, v);
    for &len in &seen {
        let len = len as usize;
        let (a, rest_a) = std::mem::take(&mut sorted).split_at_mut(len);
        let (b, rest_b) = std::mem::take(&mut spare).split_at_mut(len);
        (sorted, spare) = (rest_a, rest_b);
        if len > 1 {
            nodes.push((a, b));
        }
    }
    let node = |(a, b): (&mut [u32], &mut [u32])| -> u128 {
        if pool.stopped() {
            0
        } else {
            u128::from(count_node(a, b, shift))
        }
    };
    inv + if pool.parallel_for(n) {
        pool.install(|| nodes.into_par_iter().map(node).sum::<u128>())
    } else {
        nodes.into_iter().map(node).sum::<u128>()
    }
}

/// Inversions of `v` in its `top` low bits (the bits above are equal across
/// the node); `v` is left in some order and `out` overwritten.
fn count_node(v: &mut [u32], out: &mut [u32], top: u32) -> u64 {
    let n = v.len();
    if n < 2 || top == 0 {
        return 0;
    }
    if n <= SMALL {
        let mask = u32::MAX >> (32 - top.min(32));
        let mut inv = 0_u64;
        for (i, &a) in v.iter().enumerate() {
            let a = a & mask;
            inv += v
                .iter()
                .skip(i + 1)
                .map(|&b| u64::from(a > (b & mask)))
                .sum::<u64>();
        }
        return inv;
    }
    let width = width_below(top);
    let shift = top - width;
    let (mut inv, above) = digit_inversions(v, shift, width);
    if shift == 0 {
        return inv;
    }
    let hist = above.counts(n);
    let mut at = [0_usize; RADIX];
    let mut start = 0;
    for (a, &h) in at.iter_mut().zip(&hist) {
        *a = start;
        start += h as usize;
    }
    for &x in v.iter() {
        let e = digit(x, shift, width);
        ahead(out, Some(at[e] + WRITE_AHEAD));
        if let Some(s) = out.get_mut(at[e]) {
            *s = x;
        }
        at[e] += 1;
    }
    let (mut sorted, mut spare): (&mut [u32], &mut [u32]) = (out, v);
    for &len in &hist {
        let len = (len as usize).min(sorted.len()).min(spare.len());
        let (a, rest_a) = std::mem::take(&mut sorted).split_at_mut(len);
        let (b, rest_b) = std::mem::take(&mut spare).split_at_mut(len);
        (sorted, spare) = (rest_a, rest_b);
        inv += count_node(a, b, shift);
    }
    inv
}

#[cfg(test)]
mod tests {
    use super::*;

    fn naive(v: &[u32]) -> u128 {
        let mut inv = 0;
        for (i, a) in v.iter().enumerate() {
            inv += v.iter().skip(i + 1).filter(|b| a > b).count() as u128;
        }
        inv
    }

    fn data(n: usize, seed: u64, bits: u32) -> Vec<u32> {
        let mut next = crate::random::xorshift(seed | 1);
        (0..n)
            .map(|_| {
                let x = next();
                (x >> 20) as u32 & (u32::MAX >> (32 - bits))
            })
            .collect()
    }

    #[test]
    fn counts_match_pair_counting() {
        for threads in [1, 2, 3] {
            let pool = Pool::new(threads).with_min_parallel(0);
            for (i, (n, bits)) in [
                (0, 1),
                (1, 5),
                (2, 1),
                (30, 1),
                (200, 3),
                (1000, 8),
                (1000, 9),
                (3000, 17),
                (2500, 32),
                (4000, 24),
                (700, 16),
                (20000, 17),
            ]
            .into_iter()
            .enumerate()
            {
                let v = data(n, 11 + i as u64, bits);
                let want = naive(&v);
                let (mut a, mut b) = (v.clone(), vec![0; n]);
                assert_eq!(
                    count_inversions(&mut a, &mut b, bits, &pool),
                    want,
                    "n {n} bits {bits} threads {threads}"
                );
            }
        }
    }

    #[test]
    fn every_instruction_set_gives_the_same_table() {
        for (i, (n, shift, width)) in [
            (0, 0, 8),
            (1, 3, 5),
            (17, 0, 8),
            (1000, 4, 8),
            (4099, 16, 8),
            (513, 0, 1),
        ]
        .into_iter()
        .enumerate()
        {
            let v = data(n, 40 + i as u64, 24);
            let (inv, table) = digit_inversions_portable(&v, shift, width);
            let digits: Vec<u32> = v.iter().map(|&x| digit(x, shift, width) as u32).collect();
            assert_eq!(u128::from(inv), naive(&digits), "n {n}");
            let (got, got_table) = digit_inversions(&v, shift, width);
            assert_eq!(got, inv, "n {n}");
            assert_eq!(
                (got_table.high, got_table.low),
                (table.high, table.low),
                "n {n}"
            );
        }
    }

    #[test]
    fn sorted_and_reversed_sequences() {
        let pool = Pool::new(2).with_min_parallel(0);
        let n = 5000_u32;
        let mut up: Vec<u32> = (0..n).collect();
        let mut down: Vec<u32> = (0..n).rev().collect();
        let mut s = vec![0; n as usize];
        assert_eq!(count_inversions(&mut up, &mut s, 13, &pool), 0);
        let all = u128::from(n) * u128::from(n - 1) / 2;
        assert_eq!(count_inversions(&mut down, &mut s, 13, &pool), all);
        // Every value equal: no inversion.
        let mut same = vec![7_u32; 3000];
        assert_eq!(count_inversions(&mut same, &mut s, 3, &pool), 0);
    }
}
