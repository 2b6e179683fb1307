//! The probability dtypes the pass reads (f32 and f64); every sum is f64.

use crate::fastmath;
#[cfg(target_arch = "x86_64")]
use crate::simd;

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
}
