//! The probability dtypes the pass reads (f32 and f64); every sum is f64.

use crate::fastmath;
#[cfg(target_arch = "x86_64")]
use crate::simd;
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{
    __m256d, __m256i, _mm256_castsi256_si128, _mm256_cvtps_pd, _mm256_maskload_pd,
    _mm256_permutevar8x32_epi32, _mm256_setr_epi32, _mm_maskload_ps,
};

/// A probability dtype the kernel reads.
pub trait Prob: Copy + Default + Send + Sync + 'static {
    /// Whether the dtype is f32 (a row's top confidence is then a float32
    /// value, whose bits order as the value: the packed ranking keys).
    const F32: bool;
    /// The value as f64 (exact for f32).
    fn f(self) -> f64;
    /// `sum(-x ln x)` over `xs` (`0 ln 0 = 0`), in f64.
    fn neg_xlogx_sum(xs: &[Self]) -> f64;
    /// `xs` as f64 values where they are (f64), or `None` (f32: the values
    /// are widened one by one).
    fn as_f64s(xs: &[Self]) -> Option<&[f64]>;
    /// Load a row of at most 16 values into AVX-512 registers.
    ///
    /// # Safety
    /// As [`simd::load_f32`].
    #[cfg(target_arch = "x86_64")]
    unsafe fn load16(row: &[Self], m: simd::Masks) -> simd::Row;
    /// The four values of `row` from `at` on where `mask`'s 64-bit lane is
    /// set, widened to f64 (0.0 elsewhere).
    ///
    /// # Safety
    /// The CPU must have AVX2, and every value a set lane names must lie in `row`.
    #[cfg(target_arch = "x86_64")]
    unsafe fn load4(row: &[Self], at: usize, mask: __m256i) -> __m256d;
}

impl Prob for f32 {
    const F32: bool = true;
    #[inline(always)]
    fn f(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn neg_xlogx_sum(xs: &[Self]) -> f64 {
        fastmath::neg_xlogx_sum_f32(xs)
    }
    #[inline(always)]
    fn as_f64s(_: &[Self]) -> Option<&[f64]> {
        None
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load16(row: &[Self], m: simd::Masks) -> simd::Row {
        // SAFETY: forwarded to the caller.
        unsafe { simd::load_f32(row, m) }
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load4(row: &[Self], at: usize, mask: __m256i) -> __m256d {
        // SAFETY: forwarded to the caller: the masked lanes are not read. The
        // low halves of the 64-bit lanes' masks are the 32-bit lanes' masks.
        unsafe {
            let narrow = _mm256_castsi256_si128(_mm256_permutevar8x32_epi32(
                mask,
                _mm256_setr_epi32(0, 2, 4, 6, 0, 2, 4, 6),
            ));
            _mm256_cvtps_pd(_mm_maskload_ps(row.as_ptr().wrapping_add(at), narrow))
        }
    }
}

impl Prob for f64 {
    const F32: bool = false;
    #[inline(always)]
    fn f(self) -> f64 {
        self
    }
    #[inline]
    fn neg_xlogx_sum(xs: &[Self]) -> f64 {
        fastmath::neg_xlogx_sum_f64(xs)
    }
    #[inline(always)]
    fn as_f64s(xs: &[Self]) -> Option<&[f64]> {
        Some(xs)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load16(row: &[Self], m: simd::Masks) -> simd::Row {
        // SAFETY: forwarded to the caller.
        unsafe { simd::load_f64(row, m) }
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load4(row: &[Self], at: usize, mask: __m256i) -> __m256d {
        // SAFETY: forwarded to the caller: the masked lanes are not read.
        unsafe { _mm256_maskload_pd(row.as_ptr().wrapping_add(at), mask) }
    }
}
