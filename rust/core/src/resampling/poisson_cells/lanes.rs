//! [`Plan::invert`] eight draws at a time in AVX-512 lanes (x86-64 only).
//!
//! The scalar inversion waits on a chain of reads per draw (the cell's table,
//! where the table starts, its guide, the guide's entry, one cumulative
//! weight); the lanes issue eight such chains at once as gathers. Two shapes:
//! eight cells of one replicate, each with its own table ([`invert_cells`]),
//! and one cell of eight replicates, sharing its table ([`invert_block`]).
//! Each lane takes the scalar path's steps in its order (the draw's value
//! `((m + 1/2) 2^-53) total` by two multiplications, nothing fused, the one
//! branch-free step of a guide entry of one step); the lanes whose guide entry
//! leaves two steps or more (a table's thin tails, about 3 % of draws, a
//! lane in five of eight) are set aside without a branch and finished by
//! [`Plan::invert`] itself after the run. So every lane draws the scalar
//! path's bits.

use super::{Plan, BLOCK, GUIDE_ENTRY};
use std::arch::x86_64::{
    __m512d, __m512i, __mmask8, _mm256_loadu_si256, _mm256_setzero_si256, _mm512_add_epi64,
    _mm512_add_pd, _mm512_and_si512, _mm512_castsi512_pd, _mm512_cmpneq_epu64_mask,
    _mm512_cvtepu32_epi64, _mm512_cvtepu64_pd, _mm512_loadu_pd, _mm512_loadu_si512,
    _mm512_mask_add_epi64, _mm512_mask_add_pd, _mm512_mask_cmp_pd_mask,
    _mm512_mask_cmpeq_epu64_mask, _mm512_mask_cmpge_epu64_mask, _mm512_mask_i64gather_epi32,
    _mm512_mask_i64gather_epi64, _mm512_mask_i64gather_pd, _mm512_mask_i64scatter_pd,
    _mm512_maskz_add_pd, _mm512_maskz_compress_epi64, _mm512_mul_pd, _mm512_mullo_epi64,
    _mm512_reduce_add_pd, _mm512_set1_epi64, _mm512_set1_pd, _mm512_setr_epi64, _mm512_setzero_pd,
    _mm512_setzero_si512, _mm512_slli_epi64, _mm512_srli_epi64, _mm512_srlv_epi64,
    _mm512_storeu_pd, _mm512_storeu_si512, _CMP_LE_OQ,
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
/// two steps or more), whose draws here are not theirs.
///
/// # Safety
/// AVX-512 F and DQ; each valid lane's record fields are those of one of
/// `plan`'s tables.
#[inline]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw")]
unsafe fn draw(
    plan: &Plan,
    valid: __mmask8,
    x: __m512i,
    place: __m512i,
    total: __m512d,
    low: __m512d,
    shift: __m512i,
) -> (__m512d, __mmask8) {
    let m = _mm512_srli_epi64::<11>(x);
    let start = _mm512_and_si512(place, _mm512_set1_epi64(0xffff_ffff));
    let from = _mm512_srli_epi64::<32>(place);
    // Within the table's guide: `m >> shift` is below its 2^(53 - shift) buckets.
    let bucket = _mm512_add_epi64(from, _mm512_srlv_epi64(m, shift));
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
    // SAFETY: a guide entry's answer is one of its table's entries.
    let c = unsafe {
        _mm512_mask_i64gather_pd::<8>(
            _mm512_setzero_pd(),
            one,
            _mm512_add_epi64(start, k),
            plan.cdf.as_ptr().cast(),
        )
    };
    let up = _mm512_mask_cmp_pd_mask::<_CMP_LE_OQ>(one, c, v);
    let k = _mm512_mask_add_epi64(k, up, k, _mm512_set1_epi64(1));
    (_mm512_maskz_add_pd(valid, low, _mm512_cvtepu64_pd(k)), long)
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
                draw(
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
            out[j] = plan.invert(tables[j] as usize, words[j]);
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
                draw(
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
                let k = plan.invert(table as usize, rows[slot].to_bits());
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
