//! The chunk kernels of the replicate sums written with the vector registers
//! of each x86-64 level: AVX-512 (fourteen values a pass) and AVX2 (a whole
//! tile, two values a pass).

use crate::random::REPLICATES_PER_DRAW as R;
use std::arch::x86_64::{
    __m256d, __m512d, _mm256_fmadd_pd, _mm256_loadu_pd, _mm256_set1_pd, _mm256_setzero_pd,
    _mm256_storeu_pd, _mm512_castsi512_si256, _mm512_cvtepi32_pd, _mm512_cvtepu8_epi32,
    _mm512_extracti64x4_epi64, _mm512_fmadd_pd, _mm512_set1_pd, _mm512_setzero_pd,
    _mm512_storeu_pd, _mm_loadu_si128,
};

/// Sixteen replicates in two registers of eight: the sums of the `C` values
/// from `c0`, for the caller to add to the replicates' rows.
#[target_feature(enable = "avx512f")]
pub(super) fn add_chunk_avx512<const C: usize>(
    weights: &[[u8; R]],
    values: &[f64],
    n_values: usize,
    c0: usize,
) -> [[f64; R]; C] {
    let mut lo: [__m512d; C] = [_mm512_setzero_pd(); C];
    let mut hi: [__m512d; C] = [_mm512_setzero_pd(); C];
    for (w, row) in weights.iter().zip(values.chunks_exact(n_values)) {
        // SAFETY: `w` holds sixteen bytes.
        let w = _mm512_cvtepu8_epi32(unsafe { _mm_loadu_si128(w.as_ptr().cast()) });
        let wl = _mm512_cvtepi32_pd(_mm512_castsi512_si256(w));
        let wh = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64::<1>(w));
        let v = &row[c0..c0 + C];
        for c in 0..C {
            let x = _mm512_set1_pd(v[c]);
            lo[c] = _mm512_fmadd_pd(wl, x, lo[c]);
            hi[c] = _mm512_fmadd_pd(wh, x, hi[c]);
        }
    }
    let mut acc = [[0.0f64; R]; C];
    for c in 0..C {
        // SAFETY: each row of `acc` holds sixteen values.
        unsafe {
            _mm512_storeu_pd(acc[c].as_mut_ptr(), lo[c]);
            _mm512_storeu_pd(acc[c].as_mut_ptr().add(8), hi[c]);
        }
    }
    acc
}

/// Rows of a tile widened and summed at a time by [`add_tile_avx2`]:
/// their f64 weights (8 KiB) stay in the first-level cache.
const SUB: usize = 64;

/// A whole tile with sixteen replicates in four registers of four, two
/// values at a time (8 sums, 4 weights and a broadcast value in the
/// sixteen registers; three values spilled a sum to the stack). The
/// weights are widened to f64 once per block of [`SUB`] rows, not once
/// per pair of values, and every value's sums are carried from block to
/// block in `acc`: each value's rows are added in order in one chain of
/// multiply-adds, as in [`add_chunk_avx512`], so both give the same
/// bits. Widening the whole tile at once (64 KiB) left the multiply-adds
/// waiting on the second-level cache. The sums of every value end in `acc`,
/// for the caller to add to the replicates' rows.
#[target_feature(enable = "avx2,fma")]
pub(super) fn add_tile_avx2(
    weights: &[[u8; R]],
    values: &[f64],
    n_values: usize,
    wide: &mut Vec<[f64; R]>,
    acc: &mut Vec<[f64; R]>,
) {
    acc.clear();
    acc.resize(n_values, [0.0; R]);
    for (w, v) in weights.chunks(SUB).zip(values.chunks(SUB * n_values)) {
        wide.clear();
        wide.extend(w.iter().map(|w| w.map(f64::from)));
        let mut c0 = 0;
        while c0 < n_values {
            if n_values - c0 >= 2 {
                block::<2>(&mut acc[c0..c0 + 2], wide, v, n_values, c0);
                c0 += 2;
            } else {
                block::<1>(&mut acc[c0..=c0], wide, v, n_values, c0);
                c0 += 1;
            }
        }
    }
}

/// `acc[c] += sum_t w[t] * values[t][c0 + c]` for one block's rows.
#[inline]
#[target_feature(enable = "avx2,fma")]
fn block<const C: usize>(
    acc: &mut [[f64; R]],
    weights: &[[f64; R]],
    values: &[f64],
    n_values: usize,
    c0: usize,
) {
    let mut sums: [[__m256d; 4]; C] = [[_mm256_setzero_pd(); 4]; C];
    for (s, a) in sums.iter_mut().zip(acc.iter()) {
        for (q, s) in s.iter_mut().enumerate() {
            // SAFETY: each row of `acc` holds sixteen values.
            *s = unsafe { _mm256_loadu_pd(a.as_ptr().add(4 * q)) };
        }
    }
    for (w, row) in weights.iter().zip(values.chunks_exact(n_values)) {
        let v = &row[c0..c0 + C];
        for (s, &v) in sums.iter_mut().zip(v) {
            let x = _mm256_set1_pd(v);
            for (q, s) in s.iter_mut().enumerate() {
                // SAFETY: `w` holds sixteen values.
                let wq = unsafe { _mm256_loadu_pd(w.as_ptr().add(4 * q)) };
                *s = _mm256_fmadd_pd(wq, x, *s);
            }
        }
    }
    for (a, s) in acc.iter_mut().zip(&sums) {
        for (q, &v) in s.iter().enumerate() {
            // SAFETY: each row of `acc` holds sixteen values.
            unsafe { _mm256_storeu_pd(a.as_mut_ptr().add(4 * q), v) };
        }
    }
}
