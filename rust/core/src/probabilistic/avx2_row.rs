//! Rows of 8 to 16 columns in AVX2 registers, for x86-64 CPUs without
//! AVX-512: a row is `V` vectors of four f64 (its f32 values widened as they
//! are loaded), zeros past its end, loaded once for every per-row quantity.
//!
//! The generic [`super::width::Fixed`] row compiled for AVX2 spilled its
//! reductions to the stack and took about 120 cycles a row of ten float32
//! values on AMD Zen 3 (half of `evaluate`'s probability pass). The quantities
//! that must agree bit for bit with the portable code do: the pCM rows are the
//! same additions in the same order (`dst += w * p`, a product then a sum, no
//! FMA), the maximum and its first column are exact; the row sum (checked
//! against 1 with a tolerance) and the sum of squares (the Brier score) are
//! reduced in another order, equal to rounding.

use super::dtype::Prob;
use super::width::{prefetch_ahead, Dyn, Fixed, Width};
use std::arch::x86_64::{
    __m256d, __m256i, _mm256_add_pd, _mm256_and_pd, _mm256_castpd256_pd128, _mm256_cmp_pd,
    _mm256_extractf128_pd, _mm256_load_pd, _mm256_max_pd, _mm256_movemask_pd, _mm256_mul_pd,
    _mm256_set1_pd, _mm256_setr_epi64x, _mm256_setzero_pd, _mm256_store_pd, _mm_add_pd, _mm_add_sd,
    _mm_cvtsd_f64, _mm_max_pd, _mm_max_sd, _mm_unpackhi_pd, _CMP_EQ_OQ, _CMP_GE_OQ, _CMP_LE_OQ,
};

/// A row of `k` columns (`4 (V - 1) < k <= 4 V`) in `V` vectors. Only built
/// by the AVX2 chunk kernel, on CPUs with AVX2 and FMA.
#[derive(Clone, Copy)]
pub(super) struct Avx2Row<const V: usize> {
    k: usize,
    /// Lane `i` of vector `v` is loaded when `4 v + i < k` (all bits set).
    masks: [__m256i; V],
}

impl<const V: usize> Avx2Row<V> {
    /// The row of `k` columns; `None` unless `4 (V - 1) < k <= 4 V`.
    pub(super) fn new(k: usize) -> Option<Self> {
        if k <= 4 * (V - 1) || k > 4 * V {
            return None;
        }
        let lane = |i: usize| if i < k { -1_i64 } else { 0 };
        // SAFETY: a register operation only; the caller runs on AVX2 CPUs.
        let masks = std::array::from_fn(|v| unsafe {
            _mm256_setr_epi64x(
                lane(4 * v),
                lane(4 * v + 1),
                lane(4 * v + 2),
                lane(4 * v + 3),
            )
        });
        Some(Self { k, masks })
    }

    /// The row's values widened to f64, zeros past column `k`.
    #[inline(always)]
    fn load<P: Prob>(self, row: &[P]) -> [__m256d; V] {
        assert!(row.len() >= self.k);
        // A loop, not `array::from_fn`: a closure would be compiled apart,
        // without the AVX2 kernel's features, and call every intrinsic.
        // SAFETY: masked loads read only the row's `k` values (just checked);
        // the CPU has AVX2 (`new` is only called by the AVX2 kernel).
        let mut r = [unsafe { _mm256_setzero_pd() }; V];
        for (v, x) in r.iter_mut().enumerate() {
            // SAFETY: as above.
            *x = unsafe { P::load4(row, 4 * v, self.masks[v]) };
        }
        r
    }

    /// `dst += w * r` (`w = None`: `dst += r`), lane by lane.
    #[inline(always)]
    fn add(dst: &mut [f64], r: &[__m256d; V], w: Option<f64>) {
        assert!(dst.len() >= 4 * V && dst.as_ptr().align_offset(32) == 0);
        for (v, &x) in r.iter().enumerate() {
            // SAFETY: four f64 inside `dst`, 32-byte aligned (checked above).
            unsafe {
                let at = dst.as_mut_ptr().add(4 * v);
                let x = match w {
                    Some(w) => _mm256_mul_pd(_mm256_set1_pd(w), x),
                    None => x,
                };
                _mm256_store_pd(at, _mm256_add_pd(_mm256_load_pd(at), x));
            }
        }
    }

    /// Whether every value lies in [0, 1] (false for NaN).
    #[inline(always)]
    fn in_range(r: &[__m256d; V]) -> bool {
        // SAFETY (all): register operations on an AVX2 CPU.
        unsafe {
            let (zero, one) = (_mm256_setzero_pd(), _mm256_set1_pd(1.0));
            let mut ok = _mm256_cmp_pd::<_CMP_GE_OQ>(r[0], zero);
            for &x in r {
                ok = _mm256_and_pd(ok, _mm256_cmp_pd::<_CMP_GE_OQ>(x, zero));
                ok = _mm256_and_pd(ok, _mm256_cmp_pd::<_CMP_LE_OQ>(x, one));
            }
            _mm256_movemask_pd(ok) == 0xF
        }
    }

    /// The sum of the lanes of `x` (pairs, then the two halves).
    #[inline(always)]
    fn total(x: __m256d) -> f64 {
        // SAFETY: register operations on an AVX2 CPU.
        unsafe {
            let pair = _mm_add_pd(_mm256_castpd256_pd128(x), _mm256_extractf128_pd::<1>(x));
            _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)))
        }
    }

    /// `(sum, sum of squares)`.
    #[inline(always)]
    fn sums(r: &[__m256d; V]) -> (f64, f64) {
        // SAFETY: register operations on an AVX2 CPU.
        unsafe {
            let (mut s, mut q) = (r[0], _mm256_mul_pd(r[0], r[0]));
            for &x in &r[1..] {
                s = _mm256_add_pd(s, x);
                q = _mm256_add_pd(q, _mm256_mul_pd(x, x));
            }
            (Self::total(s), Self::total(q))
        }
    }

    /// The maximum and the first column holding it (0 when none does: a NaN
    /// row, which the checks reject). A maximum of zero (a row of zeros,
    /// accepted when rows are not checked to sum to 1) is taken again by the
    /// portable row, whose order of comparisons fixes the sign of that zero.
    #[inline(always)]
    fn max_first<P: Prob>(self, r: &[__m256d; V], row: &[P]) -> (f64, usize) {
        // SAFETY: register operations on an AVX2 CPU.
        unsafe {
            let mut m = r[0];
            for &x in &r[1..] {
                m = _mm256_max_pd(m, x);
            }
            let half = _mm_max_pd(_mm256_castpd256_pd128(m), _mm256_extractf128_pd::<1>(m));
            let best = _mm_cvtsd_f64(_mm_max_sd(half, _mm_unpackhi_pd(half, half)));
            if best == 0.0 {
                return zero_max(self.k, row);
            }
            let b = _mm256_set1_pd(best);
            let mut hits = 0_u32;
            for (v, &x) in r.iter().enumerate() {
                #[allow(clippy::cast_sign_loss)] // a four-bit mask
                let bits = _mm256_movemask_pd(_mm256_cmp_pd::<_CMP_EQ_OQ>(x, b)) as u32;
                hits |= bits << (4 * v);
            }
            let top = if hits == 0 {
                0
            } else {
                hits.trailing_zeros() as usize
            };
            (best, top)
        }
    }
}

/// The portable row's maximum and first column (`k` up to 16).
#[cold]
#[inline(never)]
fn zero_max<P: Prob>(k: usize, row: &[P]) -> (f64, usize) {
    macro_rules! widths {
        ($($k:literal)*) => {
            match k {
                $($k => Fixed::<$k>.sweep(row),)*
                _ => Dyn(k).sweep(row),
            }
        };
    }
    let (_, _, _, best, top) = widths!(5 6 7 8 9 10 11 12 13 14 15 16);
    (best, top)
}

impl<const V: usize> Width for Avx2Row<V> {
    #[inline(always)]
    fn k(self) -> usize {
        self.k
    }
    #[inline(always)]
    fn stride(self) -> usize {
        4 * V
    }
    #[inline(always)]
    fn prefetch<P: Prob>(self, row: &[P]) {
        prefetch_ahead(row);
    }
    #[inline(always)]
    fn sweep<P: Prob>(self, row: &[P]) -> (bool, f64, f64, f64, usize) {
        let r = self.load(row);
        let (sum, sumsq) = Self::sums(&r);
        let (best, top) = self.max_first(&r, row);
        (Self::in_range(&r), sum, sumsq, best, top)
    }
    #[inline(always)]
    fn add_row<P: Prob>(self, dst: &mut [f64], row: &[P], w: Option<f64>) {
        Self::add(dst, &self.load(row), w);
    }
    #[inline(always)]
    fn add_check<P: Prob>(self, dst: &mut [f64], row: &[P]) -> (bool, f64) {
        let r = self.load(row);
        Self::add(dst, &r, None);
        (Self::in_range(&r), Self::sums(&r).0)
    }
    #[inline(always)]
    fn sweep_add<P: Prob>(
        self,
        dst: &mut [f64],
        row: &[P],
        w: Option<f64>,
    ) -> (bool, f64, f64, f64, usize) {
        let r = self.load(row);
        Self::add(dst, &r, w);
        let (sum, sumsq) = Self::sums(&r);
        let (best, top) = self.max_first(&r, row);
        (Self::in_range(&r), sum, sumsq, best, top)
    }
}
