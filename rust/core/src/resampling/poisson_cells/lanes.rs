//! [`Plan::invert`] eight draws at a time in AVX-512 lanes (x86-64 only).
//!
//! The scalar inversion waits on a chain of reads per draw (the cell's table,
//! where the table starts, its guide, the guide's entry, one cumulative
//! weight); the lanes issue eight such chains at once as gathers. Three
//! shapes: eight cells of one replicate, each with its own table
//! ([`invert_cells`]); one cell of eight replicates, sharing its table, in
//! the swept order of the tables ([`invert_block`]); and every cell of a
//! stratum not swept for eight replicates, with their words drawn in the
//! lanes too ([`draw_cells_block`]).
//! Each lane takes the scalar path's steps in its order (the draw's value
//! `((m + 1/2) 2^-53) total` by two multiplications, nothing fused, the one
//! branch-free step of a guide entry of one step); the lanes whose guide entry
//! leaves two steps or more (a table's thin tails, about 3 % of draws, a
//! lane in five of eight) are set aside without a branch and finished after
//! the run by [`invert_long`], the scalar search eight weights at a time. So
//! every lane draws the scalar path's bits.

use super::{Plan, BLOCK, GUIDE_ENTRY};
use crate::random::CELL_POISSON;
use std::arch::x86_64::{
    __m256i, __m512d, __m512i, __mmask8, _mm256_loadu_si256, _mm256_setzero_si256,
    _mm256_storeu_si256, _mm512_add_epi64, _mm512_add_pd, _mm512_and_si512, _mm512_castsi512_pd,
    _mm512_cmpneq_epu64_mask, _mm512_cvtepu32_epi64, _mm512_cvtepu64_pd, _mm512_loadu_pd,
    _mm512_loadu_si512, _mm512_mask_add_epi64, _mm512_mask_add_pd, _mm512_mask_cmp_pd_mask,
    _mm512_mask_cmpeq_epu64_mask, _mm512_mask_cmpge_epu64_mask, _mm512_mask_i64gather_epi32,
    _mm512_mask_i64gather_epi64, _mm512_mask_i64gather_pd, _mm512_mask_i64scatter_pd,
    _mm512_mask_storeu_pd, _mm512_maskz_add_pd, _mm512_maskz_compress_epi64, _mm512_maskz_loadu_pd,
    _mm512_mul_pd, _mm512_mullo_epi64, _mm512_permutex2var_epi32, _mm512_permutex2var_pd,
    _mm512_reduce_add_pd, _mm512_set1_epi64, _mm512_set1_pd, _mm512_setr_epi32, _mm512_setr_epi64,
    _mm512_setzero_pd, _mm512_setzero_si512, _mm512_slli_epi64, _mm512_srli_epi64,
    _mm512_srlv_epi64, _mm512_storeu_pd, _mm512_storeu_si512, _mm512_unpackhi_pd,
    _mm512_unpacklo_pd, _CMP_LE_OQ,
};

/// Whether this CPU runs this module's functions.
pub(super) fn available() -> bool {
    crate::cpu::avx512()
}

/// A table as the lanes gather it, in one 32-byte record: where its entries
/// start in `cdf` (low half) and its guide in `guide` (high half), its total
/// weight and its first value (their bits), and its guide's shift.
pub(super) type Record = [u64; 4];

/// The record of a table: entries start at `start`, its guide at `from`.
pub(super) fn record(start: usize, from: u32, total: f64, low: f64, shift: u32) -> Record {
    // `start` is below TABLE_BUDGET (2^22): within 32 bits.
    [
        start as u64 | (u64::from(from) << 32),
        total.to_bits(),
        low.to_bits(),
        u64::from(shift),
    ]
}

/// The draws of eight lanes: `valid` the lanes to draw, `x` their 64-bit
/// words, their tables' record fields beside; the lanes not in `valid` draw
/// 0. With them the lanes left to [`Plan::invert`] (their guide entries leave
/// two steps or more), whose draws here are not theirs. With `CUT`, the
/// one-step buckets' weights are gathered beside the guide's entries
/// ([`gather_guide`]); without, from the tables' weights once the entries
/// have come (the swept tables, whose weights [`Plan::ask_ahead`] brings in
/// ahead and whose cuts it does not).
///
/// # Safety
/// AVX-512 F and DQ; each valid lane's record fields are those of one of
/// `plan`'s tables.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
unsafe fn draw<const CUT: bool>(
    plan: &Plan,
    valid: __mmask8,
    x: __m512i,
    place: __m512i,
    total: __m512d,
    low: __m512d,
    shift: __m512i,
) -> (__m512d, __mmask8) {
    let m = _mm512_srli_epi64::<11>(x);
    let from = _mm512_srli_epi64::<32>(place);
    // Within the table's guide: `m >> shift` is below its 2^(53 - shift) buckets.
    let bucket = _mm512_add_epi64(from, _mm512_srlv_epi64(m, shift));
    if CUT {
        // SAFETY: the valid lanes' buckets are inside `plan.guide` and
        // `plan.cut` (just said).
        let (entry, cut) = unsafe { gather_guide(plan, valid, bucket) };
        return finish(valid, x, _mm512_cvtepu32_epi64(entry), cut, total, low);
    }
    // SAFETY: the valid lanes' buckets are inside `plan.guide` (just said).
    let entry = unsafe {
        _mm512_mask_i64gather_epi32::<4>(
            _mm256_setzero_si256(),
            valid,
            bucket,
            plan.guide.as_ptr().cast(),
        )
    };
    let entry = _mm512_cvtepu32_epi64(entry);
    let start = _mm512_and_si512(place, _mm512_set1_epi64(0xffff_ffff));
    let k = _mm512_and_si512(entry, _mm512_set1_epi64(i64::from(GUIDE_ENTRY)));
    let one =
        _mm512_mask_cmpeq_epu64_mask(valid, _mm512_srli_epi64::<30>(entry), _mm512_set1_epi64(1));
    // SAFETY: a guide entry's answer is one of its table's entries.
    let cut = unsafe {
        _mm512_mask_i64gather_pd::<8>(
            _mm512_setzero_pd(),
            one,
            _mm512_add_epi64(start, k),
            plan.cdf.as_ptr().cast(),
        )
    };
    finish(valid, x, entry, cut, total, low)
}

/// The guide entries of the `valid` lanes' buckets, and the weights beside
/// them (`Plan::cut`: the weight a one-step bucket's draws are compared
/// with, `cdf` at its first answer; read beside the entry instead of after
/// it, one wait on memory a draw instead of two).
///
/// # Safety
/// AVX-512 F; the valid lanes' buckets are inside `plan.guide`.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
unsafe fn gather_guide(plan: &Plan, valid: __mmask8, bucket: __m512i) -> (__m256i, __m512d) {
    // SAFETY: the caller's (`plan.cut` runs beside `plan.guide`).
    unsafe {
        (
            _mm512_mask_i64gather_epi32::<4>(
                _mm256_setzero_si256(),
                valid,
                bucket,
                plan.guide.as_ptr().cast(),
            ),
            _mm512_mask_i64gather_pd::<8>(
                _mm512_setzero_pd(),
                valid,
                bucket,
                plan.cut.as_ptr().cast(),
            ),
        )
    }
}

/// The lanes' numbers `0, 1, ..., 7`.
#[inline]
#[target_feature(enable = "avx512f")]
fn lane_numbers() -> __m512i {
    _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7)
}

/// The draws of the cells whose tables are `tables` (`u32::MAX`: an empty
/// cell, drawing 0) for the 64-bit words `words`, into `out`; their sum.
/// Eight cells at a time, the last few and the set-aside lanes by
/// [`Plan::invert`].
///
/// # Safety
/// AVX-512 F, DQ, VL and BW ([`available`]); `tables` are `plan`'s.
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
pub(super) unsafe fn invert_cells(
    plan: &Plan,
    tables: &[u32],
    words: &[u64],
    out: &mut [f64],
) -> f64 {
    // SAFETY: the caller's; the cuts are read only when the plan has them.
    unsafe {
        if plan.cut.is_empty() {
            invert_cells_as::<false>(plan, tables, words, out)
        } else {
            invert_cells_as::<true>(plan, tables, words, out)
        }
    }
}

/// [`invert_cells`] with the cuts read (`CUT`) or not.
///
/// # Safety
/// As [`invert_cells`]; with `CUT`, the plan has its cuts.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
unsafe fn invert_cells_as<const CUT: bool>(
    plan: &Plan,
    tables: &[u32],
    words: &[u64],
    out: &mut [f64],
) -> f64 {
    let n = tables.len().min(words.len()).min(out.len());
    let records = plan.records.as_ptr().cast::<u64>();
    // The cells set aside, eight slots spare for the last vector's store.
    let mut late = [0_u64; RUN + 8];
    let mut sum = 0.0;
    let mut i = 0;
    while i + 8 <= n {
        let mut acc = _mm512_setzero_pd();
        let mut n_late = 0;
        let end = n.min(i + RUN);
        while i + 8 <= end {
            // SAFETY: eight tables and words from `i` (just checked).
            let (t, x) = unsafe {
                (
                    _mm512_cvtepu32_epi64(_mm256_loadu_si256(tables.as_ptr().add(i).cast())),
                    _mm512_loadu_si512(words.as_ptr().add(i).cast()),
                )
            };
            let valid = _mm512_cmpneq_epu64_mask(t, _mm512_set1_epi64(i64::from(u32::MAX)));
            // A valid lane's table is below the record count: its record's four
            // words are inside `plan.records`.
            let at = _mm512_slli_epi64::<2>(t);
            let zero = _mm512_setzero_si512();
            // SAFETY: just said.
            let (d, long) = unsafe {
                let place = _mm512_mask_i64gather_epi64::<8>(zero, valid, at, records.cast());
                let total =
                    _mm512_mask_i64gather_epi64::<8>(zero, valid, at, records.add(1).cast());
                let low = _mm512_mask_i64gather_epi64::<8>(zero, valid, at, records.add(2).cast());
                let shift =
                    _mm512_mask_i64gather_epi64::<8>(zero, valid, at, records.add(3).cast());
                draw::<CUT>(
                    plan,
                    valid,
                    x,
                    place,
                    _mm512_castsi512_pd(total),
                    _mm512_castsi512_pd(low),
                    shift,
                )
            };
            // SAFETY: eight slots of `out` from `i`; `late` holds `n_late + 8`
            // slots (at most RUN cells are set aside in a run).
            unsafe {
                _mm512_storeu_pd(out.as_mut_ptr().add(i), d);
                #[allow(clippy::cast_possible_wrap)] // a cell index
                let cells = _mm512_add_epi64(lane_numbers(), _mm512_set1_epi64(i as i64));
                _mm512_storeu_si512(
                    late.as_mut_ptr().add(n_late).cast(),
                    _mm512_maskz_compress_epi64(long, cells),
                );
            }
            acc = _mm512_mask_add_pd(acc, !long, acc, d);
            n_late += long.count_ones() as usize;
            i += 8;
        }
        // Every draw and partial sum is an integer below 2^53: exact in any order.
        sum += _mm512_reduce_add_pd(acc);
        for &j in &late[..n_late] {
            let j = j as usize;
            out[j] = invert_long(plan, tables[j] as usize, words[j]);
            sum += out[j];
        }
    }
    for j in i..n {
        let t = tables[j];
        out[j] = if t == u32::MAX {
            0.0
        } else {
            plan.invert(t as usize, words[j])
        };
        sum += out[j];
    }
    sum
}

/// The cells a run of the lanes takes before it finishes the lanes set aside.
const RUN: usize = 64;

/// The inversions of a swept stratum for a whole [`BLOCK`] of replicates laid
/// out in `rows` (replicate `r`'s cells from `rows[r * width]`), whose slots
/// hold their words: for each `(cell, table)` of `by_table` in turn, the
/// cell's eight slots replaced by their draws from `table`, added to
/// `sums[r]`.
///
/// # Safety
/// AVX-512 F, DQ, VL and BW ([`available`]); the tables are `plan`'s; the
/// caller checks that `rows` holds slot `(BLOCK - 1) width + cell` of every
/// cell.
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
pub(super) unsafe fn invert_block(
    plan: &Plan,
    by_table: &[(u32, u32)],
    rows: &mut [f64],
    width: usize,
    sums: &mut [f64; BLOCK],
) {
    #[allow(clippy::cast_possible_wrap)] // a stride below the slice's length
    let stride = _mm512_mullo_epi64(lane_numbers(), _mm512_set1_epi64(width as i64));
    // The slots set aside and their tables, eight slots spare.
    let mut late = [0_u64; RUN / 8 * BLOCK + 8];
    let mut late_tables = [0_u64; RUN / 8 * BLOCK + 8];
    // SAFETY: eight lanes.
    let mut acc = unsafe { _mm512_loadu_pd(sums.as_ptr()) };
    // Where the next table's cells start in `by_table` (`Plan::ask_ahead`).
    let mut next = 0;
    for (n_run, run) in by_table.chunks(RUN / 8).enumerate() {
        let mut n_late = 0;
        for (j, &(cell, table)) in run.iter().enumerate() {
            plan.ask_ahead(by_table, n_run * (RUN / 8) + j, &mut next);
            let [place, total, low, shift] = plan.records[table as usize];
            #[allow(clippy::cast_possible_wrap)] // a slot index below the slice's length
            let at = _mm512_add_epi64(stride, _mm512_set1_epi64(cell as i64));
            // SAFETY: the eight slots `r width + cell` are inside `rows` (the
            // caller); the table's own record fields.
            #[allow(clippy::cast_possible_wrap)] // bits, as they are
            let (d, long) = unsafe {
                let x = _mm512_mask_i64gather_epi64::<8>(
                    _mm512_setzero_si512(),
                    0xff,
                    at,
                    rows.as_ptr().cast(),
                );
                draw::<false>(
                    plan,
                    0xff,
                    x,
                    _mm512_set1_epi64(place as i64),
                    _mm512_castsi512_pd(_mm512_set1_epi64(total as i64)),
                    _mm512_castsi512_pd(_mm512_set1_epi64(low as i64)),
                    _mm512_set1_epi64(shift as i64),
                )
            };
            // SAFETY: the same slots (the set-aside ones keep their words);
            // `late` holds `n_late + 8` slots.
            unsafe {
                _mm512_mask_i64scatter_pd::<8>(rows.as_mut_ptr().cast(), !long, at, d);
                _mm512_storeu_si512(
                    late.as_mut_ptr().add(n_late).cast(),
                    _mm512_maskz_compress_epi64(long, at),
                );
                _mm512_storeu_si512(
                    late_tables.as_mut_ptr().add(n_late).cast(),
                    _mm512_set1_epi64(i64::from(table)),
                );
            }
            acc = _mm512_mask_add_pd(acc, !long, acc, d);
            n_late += long.count_ones() as usize;
        }
        if n_late > 0 {
            // SAFETY: eight lanes.
            unsafe { _mm512_storeu_pd(sums.as_mut_ptr(), acc) };
            for (&slot, &table) in late[..n_late].iter().zip(&late_tables) {
                let slot = slot as usize;
                let k = invert_long(plan, table as usize, rows[slot].to_bits());
                rows[slot] = k;
                sums[slot / width] += k;
            }
            // SAFETY: eight lanes.
            acc = unsafe { _mm512_loadu_pd(sums.as_ptr()) };
        }
    }
    // SAFETY: eight lanes.
    unsafe { _mm512_storeu_pd(sums.as_mut_ptr(), acc) };
}

/// The eight replicates' vectors of eight cells (`d[j]`: cell `j`, a lane
/// per replicate) turned into eight replicates' vectors (a lane per cell).
#[inline]
#[target_feature(enable = "avx512f")]
fn transpose(d: [__m512d; 8]) -> [__m512d; 8] {
    // Pairs of cells per 128-bit lane, then quads, then the halves.
    // t[2i]: replicates 0, 2, 4, 6 of cells 2i and 2i + 1; t[2i + 1]: 1, 3, 5, 7.
    let t = [
        _mm512_unpacklo_pd(d[0], d[1]),
        _mm512_unpackhi_pd(d[0], d[1]),
        _mm512_unpacklo_pd(d[2], d[3]),
        _mm512_unpackhi_pd(d[2], d[3]),
        _mm512_unpacklo_pd(d[4], d[5]),
        _mm512_unpackhi_pd(d[4], d[5]),
        _mm512_unpacklo_pd(d[6], d[7]),
        _mm512_unpackhi_pd(d[6], d[7]),
    ];
    let low = _mm512_setr_epi64(0, 1, 8, 9, 4, 5, 12, 13);
    let high = _mm512_setr_epi64(2, 3, 10, 11, 6, 7, 14, 15);
    // u[0]: replicates 0 and 4 of cells 0-3 (or 4-7 from t[4..]); u[1]:
    // replicates 2 and 6; u[2]: 1 and 5; u[3]: 3 and 7.
    let u = |t0: __m512d, t1: __m512d| {
        [
            _mm512_permutex2var_pd(t0, low, t1),
            _mm512_permutex2var_pd(t0, high, t1),
        ]
    };
    let [u0, u1] = u(t[0], t[2]);
    let [u2, u3] = u(t[1], t[3]);
    let [v0, v1] = u(t[4], t[6]);
    let [v2, v3] = u(t[5], t[7]);
    let first = _mm512_setr_epi64(0, 1, 2, 3, 8, 9, 10, 11);
    let second = _mm512_setr_epi64(4, 5, 6, 7, 12, 13, 14, 15);
    let join = |a: __m512d, b: __m512d, idx: __m512i| _mm512_permutex2var_pd(a, idx, b);
    [
        join(u0, v0, first),
        join(u2, v2, first),
        join(u1, v1, first),
        join(u3, v3, first),
        join(u0, v0, second),
        join(u2, v2, second),
        join(u1, v1, second),
        join(u3, v3, second),
    ]
}

/// A cell's eight replicates set aside (their guide entries leave two steps
/// or more): the cell's place in its chunk and the lanes (its table, words
/// and guide entries stay in the chunk until the chunk's draws are done).
type Late = (u8, __mmask8);

/// Cells a chunk of [`draw_cells_block`] takes through each of its steps.
const CHUNK: usize = 64;

/// One chunk's words and reads, a row of eight replicates per cell.
struct Chunk {
    /// The cells' 64-bit words.
    words: [[u64; 8]; CHUNK],
    /// Their guide entries.
    entries: [[u32; 8]; CHUNK],
    /// The weights beside them (`Plan::cut`).
    cuts: [[f64; 8]; CHUNK],
    /// Each cell's table (`u32::MAX`: none to draw, or outside the stratum).
    tables: [u32; CHUNK],
}

/// Every cell `lo .. hi` of a whole [`BLOCK`] of replicates `first ..`
/// drawn as [`super::draw_words`] and [`Plan::invert`] draw them, with the
/// block's replicates in the lanes, [`CHUNK`] cells at a time: the words
/// (sixteen Philox blocks give two cell pairs of eight replicates), then
/// each cell's guide entries and the weights beside them gathered, then the
/// draws, eight cells' turned into eight stores, one a replicate (replicate
/// `r`'s cells from `rows[r * width]`). Each replicate's sum is added to
/// `sums[r]`. Cell by cell within a replicate (`invert_cells`), each draw
/// gathered its table's four fields before its guide entry; here a cell's
/// fields are one read for its eight draws, the lanes set aside are kept
/// without a branch (a mispredicted one discarded the gathers in flight) and
/// finished by [`invert_long`]. 10^5 tie groups of 10^7 rows (2 x 10^5
/// cells), 1000 replicates on two threads, the whole call with the cuts and
/// the walks four at a time (`cell_walk`): 634-652 -> 469-497 ms, best of
/// six, the two builds alternating (Zen 5).
///
/// # Safety
/// AVX-512 F, DQ, VL and BW ([`available`]); the plan has its cuts (a
/// stratum not swept); `lo .. hi` are cells of `plan`'s; `rows` holds slot `(BLOCK - 1) width + hi - lo - 1` and `width`
/// is at least `hi - lo`.
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
pub(super) unsafe fn draw_cells_block(
    plan: &Plan,
    (lo, hi): (usize, usize),
    rows: &mut [f64],
    width: usize,
    key: [u32; 2],
    first: u32,
    sums: &mut [f64; BLOCK],
) {
    let mut chunk = Chunk {
        words: [[0; 8]; CHUNK],
        entries: [[0; 8]; CHUNK],
        cuts: [[0.0; 8]; CHUNK],
        tables: [u32::MAX; CHUNK],
    };
    let mut acc = _mm512_setzero_pd();
    // The cells set aside since the last were finished, a spare entry.
    let mut late: [Late; CHUNK + 1] = [(0, 0); CHUNK + 1];
    let mut c0 = lo & !1;
    while c0 < hi {
        chunk_words(plan, (lo, hi), c0, key, first, &mut chunk);
        // SAFETY: AVX-512 is here; the chunk's tables are the plan's.
        unsafe { chunk_reads(plan, &mut chunk) };
        let mut n_late = 0;
        for g in (0..CHUNK).step_by(8) {
            let mut d = [_mm512_setzero_pd(); 8];
            for (j, d) in d.iter_mut().enumerate() {
                let c = g + j;
                let t = chunk.tables[c];
                let valid: __mmask8 = if t == u32::MAX { 0 } else { 0xff };
                let [_, total, low, _] = plan.records[(t as usize).min(plan.records.len() - 1)];
                // SAFETY: eight lanes a load.
                let (x, entry, cut) = unsafe {
                    (
                        _mm512_loadu_si512(chunk.words[c].as_ptr().cast()),
                        _mm512_cvtepu32_epi64(_mm256_loadu_si256(chunk.entries[c].as_ptr().cast())),
                        _mm512_loadu_pd(chunk.cuts[c].as_ptr()),
                    )
                };
                #[allow(clippy::cast_possible_wrap)] // bits, as they are
                let (v, long) = finish(
                    valid,
                    x,
                    entry,
                    cut,
                    _mm512_castsi512_pd(_mm512_set1_epi64(total as i64)),
                    _mm512_castsi512_pd(_mm512_set1_epi64(low as i64)),
                );
                *d = v;
                acc = _mm512_mask_add_pd(acc, !long, acc, v);
                // Kept without a branch (a mispredicted one threw away the
                // work in flight behind it), counted only when some lane is
                // set aside; `late` holds a spare entry.
                // A chunk's cells are numbered within a byte.
                #[allow(clippy::cast_possible_truncation)]
                let place = c as u8;
                late[n_late] = (place, long);
                n_late += usize::from(long != 0);
            }
            let at = c0 + g;
            // The lanes of cells `at + j` inside the stratum.
            let inside = (0..8).fold(0_u8, |m, j| {
                m | (u8::from(at + j >= lo && at + j < hi) << j)
            });
            for (r, v) in transpose(d).into_iter().enumerate() {
                // Slot `r width + at - lo` on: the lanes outside the stratum
                // are masked off and never touched.
                let to = rows
                    .as_mut_ptr()
                    .wrapping_add(r * width + at)
                    .wrapping_sub(lo);
                // SAFETY: every unmasked lane is a cell of the stratum, whose
                // slot the caller vouches for.
                unsafe { _mm512_mask_storeu_pd(to, inside, v) };
            }
        }
        for &(c, mut long) in &late[..n_late] {
            let c = usize::from(c);
            let (t, cell) = (chunk.tables[c] as usize, c0 + c);
            while long != 0 {
                let r = long.trailing_zeros() as usize;
                long &= long - 1;
                let k = invert_from(plan, t, chunk.words[c][r], chunk.entries[c][r]);
                rows[r * width + cell - lo] = k;
                sums[r] += k;
            }
        }
        c0 += CHUNK;
    }
    let mut drawn = [0.0; BLOCK];
    // SAFETY: eight lanes.
    unsafe { _mm512_storeu_pd(drawn.as_mut_ptr(), acc) };
    // Every draw and partial sum is an integer below 2^53: exact in any order.
    for (s, x) in sums.iter_mut().zip(drawn) {
        *s += x;
    }
}

/// The words of cells `c0 .. c0 + CHUNK` (`c0` even) into `chunk`, and
/// their tables (`u32::MAX` outside `lo .. hi`).
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
fn chunk_words(
    plan: &Plan,
    (lo, hi): (usize, usize),
    c0: usize,
    key: [u32; 2],
    first: u32,
    chunk: &mut Chunk,
) {
    let intel = crate::cpu::intel();
    // The words of a cell pair's first and second cells from the blocks'
    // words 0-1 and 2-3, replicates in lanes 0-7 (the pair `p`) or 8-15
    // (the pair `p + 1`): the first word the high half, as `draw_words`.
    let pair_lo = _mm512_setr_epi32(0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
    let pair_hi = _mm512_setr_epi32(8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
    for q in (0..CHUNK).step_by(4) {
        let pair = (c0 + q) >> 1;
        // Cells below 2^32 (`Drawing::new`), replicates below 2^32.
        let counter = [
            std::array::from_fn(|l| (pair + (l >> 3)) as u32),
            std::array::from_fn(|l| first.wrapping_add((l & 7) as u32)),
            [0; 16],
            [CELL_POISSON; 16],
        ];
        // SAFETY: AVX-512 F is here.
        let w = unsafe { crate::random::x86::philox16(counter, key, intel) };
        // SAFETY: sixteen words a load.
        let w = w.map(|w| unsafe { _mm512_loadu_si512(w.as_ptr().cast()) });
        let words = [
            _mm512_permutex2var_epi32(w[1], pair_lo, w[0]),
            _mm512_permutex2var_epi32(w[3], pair_lo, w[2]),
            _mm512_permutex2var_epi32(w[1], pair_hi, w[0]),
            _mm512_permutex2var_epi32(w[3], pair_hi, w[2]),
        ];
        for (j, x) in words.into_iter().enumerate() {
            let cell = c0 + q + j;
            // SAFETY: eight words a store.
            unsafe { _mm512_storeu_si512(chunk.words[q + j].as_mut_ptr().cast(), x) };
            chunk.tables[q + j] = if cell >= lo && cell < hi {
                plan.table[cell]
            } else {
                u32::MAX
            };
        }
    }
}

/// Each cell's guide entries and the weights beside them into `chunk`
/// (nothing for cells without a table).
///
/// # Safety
/// AVX-512 F, DQ, VL and BW; the chunk's tables are `plan`'s.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
unsafe fn chunk_reads(plan: &Plan, chunk: &mut Chunk) {
    for c in 0..CHUNK {
        let t = chunk.tables[c];
        let valid: __mmask8 = if t == u32::MAX { 0 } else { 0xff };
        let [place, _, _, shift] = plan.records[(t as usize).min(plan.records.len() - 1)];
        // SAFETY: eight words a load.
        let x = unsafe { _mm512_loadu_si512(chunk.words[c].as_ptr().cast()) };
        let m = _mm512_srli_epi64::<11>(x);
        // Within the table's guide: `m >> shift` is below its 2^(53 - shift) buckets.
        #[allow(clippy::cast_possible_wrap)] // below 2^32
        let bucket = _mm512_add_epi64(
            _mm512_set1_epi64((place >> 32) as i64),
            _mm512_srlv_epi64(m, _mm512_set1_epi64(shift as i64)),
        );
        // SAFETY: the valid lanes' buckets are inside `plan.guide` (just
        // said); eight lanes a store.
        unsafe {
            let (entry, cut) = gather_guide(plan, valid, bucket);
            _mm256_storeu_si256(chunk.entries[c].as_mut_ptr().cast(), entry);
            _mm512_storeu_pd(chunk.cuts[c].as_mut_ptr(), cut);
        }
    }
}

/// [`draw`]'s last steps, from the guide entries and the weights beside
/// them: the draws of the `valid` lanes of words `x` in a table of weight
/// `total` and first value `low`, and the lanes set aside.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
fn finish(
    valid: __mmask8,
    x: __m512i,
    entry: __m512i,
    cut: __m512d,
    total: __m512d,
    low: __m512d,
) -> (__m512d, __mmask8) {
    let m = _mm512_srli_epi64::<11>(x);
    let k = _mm512_and_si512(entry, _mm512_set1_epi64(i64::from(GUIDE_ENTRY)));
    let steps = _mm512_srli_epi64::<30>(entry);
    let one = _mm512_mask_cmpeq_epu64_mask(valid, steps, _mm512_set1_epi64(1));
    let long = _mm512_mask_cmpge_epu64_mask(valid, steps, _mm512_set1_epi64(2));
    // `m` is below 2^53: converted exactly.
    let v = _mm512_mul_pd(
        _mm512_mul_pd(
            _mm512_add_pd(_mm512_cvtepu64_pd(m), _mm512_set1_pd(0.5)),
            _mm512_set1_pd(1.0 / 9_007_199_254_740_992.0),
        ),
        total,
    );
    let up = _mm512_mask_cmp_pd_mask::<_CMP_LE_OQ>(one, cut, v);
    let k = _mm512_mask_add_epi64(k, up, k, _mm512_set1_epi64(1));
    (_mm512_maskz_add_pd(valid, low, _mm512_cvtepu64_pd(k)), long)
}

/// [`Plan::invert`] of a draw whose guide entry leaves two steps or more (the
/// lanes set aside): its answer found by comparing eight cumulative weights
/// at a time instead of one a branch. The weights never decrease, so those
/// at or below the draw's value come first and their count is the steps
/// taken: the scalar search's answer.
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
pub(super) fn invert_long(plan: &Plan, table: usize, x: u64) -> f64 {
    let t = &plan.tables[table];
    invert_from(
        plan,
        table,
        x,
        plan.guide[t.guide as usize + ((x >> 11) >> t.shift) as usize],
    )
}

/// [`invert_long`] of the word `x` whose guide entry in `table` is `entry`.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
fn invert_from(plan: &Plan, table: usize, x: u64, entry: u32) -> f64 {
    let t = &plan.tables[table];
    let m = x >> 11;
    let start = t.start as usize;
    let last = start + t.last as usize;
    let mut k = start + (entry & GUIDE_ENTRY) as usize;
    let v = _mm512_set1_pd(super::draw_value(m, t.total));
    loop {
        // The entries `k .. last` the scalar search may step over.
        let left = last - k;
        let lanes: __mmask8 = if left >= 8 { 0xff } else { (1 << left) - 1 };
        // SAFETY: the unmasked lanes are entries of the table, inside `cdf`.
        let w = unsafe { _mm512_maskz_loadu_pd(lanes, plan.cdf.as_ptr().wrapping_add(k)) };
        let below = _mm512_mask_cmp_pd_mask::<_CMP_LE_OQ>(lanes, w, v);
        let steps = below.trailing_ones() as usize;
        k += steps;
        if steps < 8 {
            break;
        }
    }
    // Below 2^22 (TABLE_BUDGET): within 32 bits.
    t.low + f64::from((k - start) as u32)
}
