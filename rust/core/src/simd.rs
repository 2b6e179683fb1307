//! AVX-512 primitives for one row of at most 16 probabilities (x86-64 only).
//!
//! A row is loaded once with masked loads (no read past its end), widened to
//! two vectors of eight f64 lanes (entries past the row are 0.0), and every
//! per-row quantity the probability pass needs is taken from those registers:
//! the range check, the sum and sum of squares (one shared reduction), the
//! maximum and its first column, and the update of a probabilistic-confusion
//! row. The reductions run in a fixed order, so results never depend on the
//! thread count; they can differ in the last bits from the portable path.
//!
//! Callers must only call these functions on a CPU with AVX-512F and
//! AVX-512DQ ([`available`]), with rows of at most 16 values and destination
//! rows padded to 16.

use std::arch::x86_64::{
    __m512d, _mm512_add_pd, _mm512_castpd512_pd128, _mm512_castps512_ps256, _mm512_cmp_pd_mask,
    _mm512_cvtps_pd, _mm512_extractf32x8_ps, _mm512_extractf64x2_pd, _mm512_fmadd_pd,
    _mm512_loadu_pd, _mm512_maskz_loadu_pd, _mm512_maskz_loadu_ps, _mm512_max_pd, _mm512_mul_pd,
    _mm512_permute_pd, _mm512_reduce_max_pd, _mm512_set1_pd, _mm512_setzero_pd,
    _mm512_shuffle_f64x2, _mm512_storeu_pd, _mm_cvtsd_f64, _mm_prefetch, _CMP_EQ_OQ, _CMP_GE_OQ,
    _CMP_LE_OQ, _MM_HINT_T0,
};
use std::sync::OnceLock;

/// Whether this CPU runs the functions of this module.
pub fn available() -> bool {
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
    })
}

/// Lane masks of a row width `k <= 16`.
#[derive(Debug, Clone, Copy)]
pub struct Masks {
    all: u16,
    lo: u8,
    hi: u8,
}

impl Masks {
    /// Masks for `k` columns (`k <= 16`).
    #[must_use]
    #[allow(clippy::cast_possible_truncation)]
    pub fn new(k: usize) -> Self {
        let all = ((1_u32 << k.min(16)) - 1) as u16;
        Self {
            all,
            lo: (all & 0xFF) as u8,
            hi: (all >> 8) as u8,
        }
    }
}

/// A row widened to f64: columns 0-7 in `lo`, 8-15 in `hi`, 0.0 past the end.
#[derive(Clone, Copy)]
pub struct Row {
    lo: __m512d,
    hi: __m512d,
}

/// Load a row of f32 values.
///
/// # Safety
/// AVX-512F/DQ available; `row.len() <= 16` and `m` built for `row.len()`.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
pub unsafe fn load_f32(row: &[f32], m: Masks) -> Row {
    // SAFETY: the mask covers exactly the row's values.
    let v = unsafe { _mm512_maskz_loadu_ps(m.all, row.as_ptr()) };
    Row {
        lo: _mm512_cvtps_pd(_mm512_castps512_ps256(v)),
        hi: _mm512_cvtps_pd(_mm512_extractf32x8_ps::<1>(v)),
    }
}

/// Load a row of f64 values.
///
/// # Safety
/// As [`load_f32`].
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
pub unsafe fn load_f64(row: &[f64], m: Masks) -> Row {
    let p = row.as_ptr();
    // SAFETY: the masks cover exactly the row's values; a zero mask reads nothing.
    unsafe {
        Row {
            lo: _mm512_maskz_loadu_pd(m.lo, p),
            hi: _mm512_maskz_loadu_pd(m.hi, p.wrapping_add(8)),
        }
    }
}

/// Whether every entry is in [0, 1] (NaN is not).
///
/// # Safety
/// AVX-512F/DQ available.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
pub fn in_range(r: Row) -> bool {
    let zero = _mm512_setzero_pd();
    let one = _mm512_set1_pd(1.0);
    let a =
        _mm512_cmp_pd_mask::<_CMP_GE_OQ>(r.lo, zero) & _mm512_cmp_pd_mask::<_CMP_LE_OQ>(r.lo, one);
    let b =
        _mm512_cmp_pd_mask::<_CMP_GE_OQ>(r.hi, zero) & _mm512_cmp_pd_mask::<_CMP_LE_OQ>(r.hi, one);
    (a & b) == 0xFF
}

/// `(sum, sum of squares)` of the row, reduced together.
///
/// # Safety
/// AVX-512F/DQ available.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
pub fn sums(r: Row) -> (f64, f64) {
    let s = _mm512_add_pd(r.lo, r.hi);
    let q = _mm512_fmadd_pd(r.lo, r.lo, _mm512_mul_pd(r.hi, r.hi));
    // [s0 s1 s2 s3 | q0 q1 q2 q3] (128-bit blocks), then pairs, then lanes.
    let c = _mm512_add_pd(
        _mm512_shuffle_f64x2::<0x44>(s, q),
        _mm512_shuffle_f64x2::<0xEE>(s, q),
    );
    let d = _mm512_add_pd(c, _mm512_shuffle_f64x2::<0xB1>(c, c));
    let e = _mm512_add_pd(d, _mm512_permute_pd::<0x55>(d));
    (
        _mm_cvtsd_f64(_mm512_castpd512_pd128(e)),
        _mm_cvtsd_f64(_mm512_extractf64x2_pd::<2>(e)),
    )
}

/// The row's maximum and the first column holding it.
///
/// # Safety
/// AVX-512F/DQ available.
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
pub fn max_first(r: Row) -> (f64, usize) {
    let best = _mm512_reduce_max_pd(_mm512_max_pd(r.lo, r.hi));
    let b = _mm512_set1_pd(best);
    let hits = u32::from(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(r.lo, b))
        | (u32::from(_mm512_cmp_pd_mask::<_CMP_EQ_OQ>(r.hi, b)) << 8);
    let top = if hits == 0 {
        0
    } else {
        hits.trailing_zeros() as usize
    };
    (best, top)
}

/// `dst += row` (`w = None`) or `dst += w * row`, on a padded row.
///
/// # Safety
/// AVX-512F/DQ available; `dst.len() >= 16` (the lanes past the row add 0.0).
#[inline]
#[target_feature(enable = "avx512f,avx512dq")]
pub unsafe fn add_to(dst: &mut [f64], r: Row, w: Option<f64>) {
    let p = dst.as_mut_ptr();
    let (lo, hi) = match w {
        None => (r.lo, r.hi),
        Some(w) => {
            let w = _mm512_set1_pd(w);
            (_mm512_mul_pd(w, r.lo), _mm512_mul_pd(w, r.hi))
        }
    };
    // SAFETY: `dst` holds at least 16 values.
    unsafe {
        _mm512_storeu_pd(p, _mm512_add_pd(_mm512_loadu_pd(p), lo));
        let q = p.add(8);
        _mm512_storeu_pd(q, _mm512_add_pd(_mm512_loadu_pd(q), hi));
    }
}

/// Ask for the cache line holding `p` (a hint: never faults, any address).
#[inline(always)]
pub fn prefetch<T>(p: *const T) {
    // SAFETY: a prefetch reads nothing architecturally and cannot fault.
    unsafe { _mm_prefetch::<_MM_HINT_T0>(p.cast::<i8>()) }
}
