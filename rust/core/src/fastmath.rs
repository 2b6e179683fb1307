//! A natural logarithm that the compiler can vectorise.
//!
//! libm's `log` is a scalar call (about 4 ns on the reference machine), and the
//! entropy score needs one per probability: 10^8 of them for a 10^7 x 10 dump.
//! [`ln`] is branch-free straight-line code (bit manipulation, one division
//! and a polynomial), so loops over it compile to SIMD. Accuracy: within 2 ulp
//! of the correctly rounded result for every positive normal or subnormal f64
//! (tested against `f64::ln` in `tests/fastmath.rs`).
//!
//! The slice sums (`neg_xlogx_sum_f32`, `neg_xlogx_sum_f64`, `ln_sum`) pick an
//! AVX-512 version at run time when the CPU has one (same accuracy bound,
//! tested in the same file); otherwise the portable loops, compiled for AVX2
//! where the CPU has it (the same operations in the same order in wider
//! registers: the same bits as the baseline build, twice its lanes).

/// ln 2 split in a high part with trailing zero bits and the remainder (fdlibm).
const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000);
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76);
const SQRT2: f64 = std::f64::consts::SQRT_2;
/// 2^54, to lift subnormals into the normal range.
const TWO54: f64 = 18_014_398_509_481_984.0;

/// Natural logarithm of a positive finite `x` (other inputs give unspecified
/// finite or infinite values; callers mask them).
#[inline(always)]
pub fn ln(x: f64) -> f64 {
    // Subnormals: scale up by 2^54 and correct the exponent afterwards.
    let sub = x < f64::MIN_POSITIVE;
    let x = if sub { x * TWO54 } else { x };
    let bits = x.to_bits();
    // The biased exponent as f64 without an integer conversion (AVX2 has no
    // vector i64 -> f64): put it in the mantissa of 2^52 and subtract 2^52.
    let biased =
        f64::from_bits(0x4330_0000_0000_0000 | ((bits >> 52) & 0x7ff)) - 4_503_599_627_370_496.0;
    let mut e = biased - 1023.0 - if sub { 54.0 } else { 0.0 };
    let mut m = f64::from_bits((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000);
    // m in [1, 2); fold to [sqrt(2)/2, sqrt(2)) so that |s| <= 0.1716 below.
    let big = m > SQRT2;
    m = if big { m * 0.5 } else { m };
    e += if big { 1.0 } else { 0.0 };
    // ln(m) = 2 atanh(s), s = (m - 1) / (m + 1): an odd series in s whose terms
    // fall by s^2 <= 0.0295 each; ten terms leave a truncation error < 1e-17.
    let f = m - 1.0;
    let s = f / (m + 1.0);
    let z = s * s;
    let mut p = 1.0 / 19.0;
    p = p * z + 1.0 / 17.0;
    p = p * z + 1.0 / 15.0;
    p = p * z + 1.0 / 13.0;
    p = p * z + 1.0 / 11.0;
    p = p * z + 1.0 / 9.0;
    p = p * z + 1.0 / 7.0;
    p = p * z + 1.0 / 5.0;
    p = p * z + 1.0 / 3.0;
    // ln(m) = f - s*f + 2 s z p (since 2s = f - s f): keeps the leading term exact.
    let ln_m = f - s * f + 2.0 * s * z * p;
    e * LN2_HI + (ln_m + e * LN2_LO)
}

/// `sum(-x ln x)` over `xs` with `0 ln 0 = 0`, in f64. Eight independent
/// partial sums (combined in a fixed order) let the loop run in SIMD lanes.
#[inline(always)]
pub fn neg_xlogx_sum<T: Copy>(xs: &[T], f: impl Fn(T) -> f64) -> f64 {
    lane_sum(xs, |x| {
        let v = f(x);
        if v > 0.0 {
            -v * ln(v)
        } else {
            0.0
        }
    })
}

/// `sum(g(x))` over `xs` with eight lanes, combined in a fixed order.
#[inline(always)]
pub fn lane_sum<T: Copy>(xs: &[T], g: impl Fn(T) -> f64) -> f64 {
    let mut acc = [0.0_f64; 8];
    let mut it = xs.chunks_exact(8);
    for c in &mut it {
        for (a, &x) in acc.iter_mut().zip(c) {
            *a += g(x);
        }
    }
    let tail: f64 = it.remainder().iter().map(|&x| g(x)).sum();
    ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7])) + tail
}

/// `sum(-x ln x)` over f32 values, on the fastest instruction set available.
#[must_use]
pub fn neg_xlogx_sum_f32(xs: &[f32]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::available() {
        // SAFETY: the CPU supports AVX-512F and AVX-512DQ (checked above).
        return unsafe { x86::neg_xlogx_sum_f32(xs) };
    }
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx2() {
        // SAFETY: the CPU supports AVX2 (checked above).
        return unsafe { avx2::neg_xlogx_sum_f32(xs) };
    }
    neg_xlogx_sum(xs, f64::from)
}

/// `sum(-x ln x)` over f64 values, on the fastest instruction set available.
#[must_use]
pub fn neg_xlogx_sum_f64(xs: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::available() {
        // SAFETY: as above.
        return unsafe { x86::neg_xlogx_sum_f64(xs) };
    }
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx2() {
        // SAFETY: as above.
        return unsafe { avx2::neg_xlogx_sum_f64(xs) };
    }
    neg_xlogx_sum(xs, |x| x)
}

/// `sum(ln x)` over positive f64 values, on the fastest instruction set available.
#[must_use]
pub fn ln_sum(xs: &[f64]) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::available() {
        // SAFETY: as above.
        return unsafe { x86::ln_sum(xs) };
    }
    #[cfg(target_arch = "x86_64")]
    if crate::cpu::avx2() {
        // SAFETY: as above.
        return unsafe { avx2::ln_sum(xs) };
    }
    lane_sum(xs, ln)
}

/// The portable sums compiled for AVX2 (no FMA: Rust never contracts
/// `a * b + c` on its own, and without the feature the build cannot either),
/// for CPUs without AVX-512: 10^8 entropy terms of a 10^7 x 10 dump took
/// 0.5 s of each core's time on AMD Zen 3 in the baseline (two-lane) build.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{lane_sum, ln, neg_xlogx_sum};

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn neg_xlogx_sum_f32(xs: &[f32]) -> f64 {
        neg_xlogx_sum(xs, f64::from)
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn neg_xlogx_sum_f64(xs: &[f64]) -> f64 {
        neg_xlogx_sum(xs, |x| x)
    }

    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn ln_sum(xs: &[f64]) -> f64 {
        lane_sum(xs, ln)
    }
}

/// AVX-512 versions: the same series for `ln`, with the exponent and mantissa
/// split by `getexp`/`getmant` (subnormals included) and the one division
/// replaced by a 14-bit reciprocal estimate refined by Newton steps (a vector
/// division costs about two cycles per value and dominated the scalar form).
/// Accuracy stays within a few ulp; the last bits of a sum can therefore
/// differ from the portable path on another CPU, never between runs or
/// thread counts on one machine.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::{
        __m512d, _mm512_add_pd, _mm512_castps512_ps256, _mm512_cmp_pd_mask, _mm512_cvtps_pd,
        _mm512_extractf32x8_ps, _mm512_fmadd_pd, _mm512_fnmadd_pd, _mm512_getexp_pd,
        _mm512_getmant_pd, _mm512_loadu_pd, _mm512_loadu_ps, _mm512_mask3_fnmadd_pd,
        _mm512_mask_add_pd, _mm512_mask_mul_pd, _mm512_maskz_loadu_pd, _mm512_maskz_loadu_ps,
        _mm512_mul_pd, _mm512_rcp14_pd, _mm512_reduce_add_pd, _mm512_set1_pd, _mm512_setzero_pd,
        _mm512_sub_pd, _CMP_GT_OQ, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_ZERO,
    };

    use super::{LN2_HI, LN2_LO, SQRT2};

    /// Coefficients of `p(z)` in [`ln8`], highest degree first.
    #[allow(clippy::excessive_precision)]
    const P6: [f64; 7] = [
        0.073_082_248_425_217_03,
        0.076_658_608_002_780_21,
        0.090_914_445_626_308_61,
        0.111_111_055_673_975_4,
        0.142_857_143_129_877_43,
        0.199_999_999_999_497_52,
        0.333_333_333_333_333_5,
    ];

    /// `ln` of eight positive finite values.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn ln8(x: __m512d) -> __m512d {
        let one = _mm512_set1_pd(1.0);
        let mut m = _mm512_getmant_pd::<_MM_MANT_NORM_1_2, _MM_MANT_SIGN_ZERO>(x);
        let mut e = _mm512_getexp_pd(x);
        let big = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(m, _mm512_set1_pd(SQRT2));
        m = _mm512_mask_mul_pd(m, big, m, _mm512_set1_pd(0.5));
        e = _mm512_mask_add_pd(e, big, e, one);
        let f = _mm512_sub_pd(m, one);
        let d = _mm512_add_pd(m, one);
        // s = f / d: 14-bit estimate, one Newton step (28 bits), then one
        // residual correction of the quotient itself (full precision).
        let r0 = _mm512_rcp14_pd(d);
        let r1 = _mm512_fmadd_pd(r0, _mm512_fnmadd_pd(d, r0, one), r0);
        let s0 = _mm512_mul_pd(f, r1);
        let s = _mm512_fmadd_pd(_mm512_fnmadd_pd(s0, d, f), r1, s0);
        let z = _mm512_mul_pd(s, s);
        // p(z) ~ (atanh(s)/s - 1)/z = 1/3 + z/5 + z^2/7 + ...: a degree-6
        // near-minimax fit on [0, 0.0295] (Chebyshev nodes), off by < 1.6e-16,
        // in place of nine Taylor terms; p is scaled by 2 s z < 0.011 below.
        let mut p = _mm512_set1_pd(P6[0]);
        for c in &P6[1..] {
            p = _mm512_fmadd_pd(p, z, _mm512_set1_pd(*c));
        }
        // ln(m) = f - s f + 2 s z p, the leading term kept exact.
        let two_sz = _mm512_mul_pd(_mm512_add_pd(s, s), z);
        let ln_m = _mm512_fmadd_pd(two_sz, p, _mm512_fnmadd_pd(s, f, f));
        let lo = _mm512_fmadd_pd(e, _mm512_set1_pd(LN2_LO), ln_m);
        _mm512_fmadd_pd(e, _mm512_set1_pd(LN2_HI), lo)
    }

    /// `acc - x ln x` where `x > 0`, `acc` elsewhere.
    #[inline]
    #[target_feature(enable = "avx512f,avx512dq")]
    fn step(acc: __m512d, x: __m512d) -> __m512d {
        let pos = _mm512_cmp_pd_mask::<_CMP_GT_OQ>(x, _mm512_setzero_pd());
        _mm512_mask3_fnmadd_pd(x, ln8(x), acc, pos)
    }

    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn neg_xlogx_sum_f32(xs: &[f32]) -> f64 {
        let mut a = _mm512_setzero_pd();
        let mut b = _mm512_setzero_pd();
        let mut it = xs.chunks_exact(16);
        for c in &mut it {
            // SAFETY: `c` holds 16 f32 values.
            let v = unsafe { _mm512_loadu_ps(c.as_ptr()) };
            a = step(a, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
            b = step(b, _mm512_cvtps_pd(_mm512_extractf32x8_ps::<1>(v)));
        }
        let rest = it.remainder();
        if !rest.is_empty() {
            let mask = (1_u16 << rest.len()) - 1;
            // SAFETY: the mask limits the load to `rest.len()` values (zeros beyond).
            let v = unsafe { _mm512_maskz_loadu_ps(mask, rest.as_ptr()) };
            a = step(a, _mm512_cvtps_pd(_mm512_castps512_ps256(v)));
            b = step(b, _mm512_cvtps_pd(_mm512_extractf32x8_ps::<1>(v)));
        }
        _mm512_reduce_add_pd(_mm512_add_pd(a, b))
    }

    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn neg_xlogx_sum_f64(xs: &[f64]) -> f64 {
        let mut a = _mm512_setzero_pd();
        let mut b = _mm512_setzero_pd();
        let mut it = xs.chunks_exact(16);
        for c in &mut it {
            // SAFETY: `c` holds 16 f64 values.
            let (x, y) = unsafe {
                (
                    _mm512_loadu_pd(c.as_ptr()),
                    _mm512_loadu_pd(c.as_ptr().add(8)),
                )
            };
            a = step(a, x);
            b = step(b, y);
        }
        // The tail as in the f32 version (first eight to `a`, the rest to
        // `b`), so that f32 values widened to f64 give the same bits.
        let rest = it.remainder();
        let (x, y) = rest.split_at(rest.len().min(8));
        for (acc, c) in [(&mut a, x), (&mut b, y)] {
            if !c.is_empty() {
                let mask = u8::MAX >> (8 - c.len());
                // SAFETY: the mask limits the load to `c.len()` values (zeros beyond).
                *acc = step(*acc, unsafe { _mm512_maskz_loadu_pd(mask, c.as_ptr()) });
            }
        }
        _mm512_reduce_add_pd(_mm512_add_pd(a, b))
    }

    #[target_feature(enable = "avx512f,avx512dq")]
    pub(super) unsafe fn ln_sum(xs: &[f64]) -> f64 {
        let one = _mm512_set1_pd(1.0);
        let mut a = _mm512_setzero_pd();
        let mut it = xs.chunks_exact(8);
        for c in &mut it {
            // SAFETY: `c` holds 8 f64 values.
            a = _mm512_add_pd(a, ln8(unsafe { _mm512_loadu_pd(c.as_ptr()) }));
        }
        let rest = it.remainder();
        if !rest.is_empty() {
            let mask = u8::MAX >> (8 - rest.len());
            // SAFETY: masked load of `rest.len()` values; the others are 1 (ln 1 = 0).
            let v = unsafe { std::arch::x86_64::_mm512_mask_loadu_pd(one, mask, rest.as_ptr()) };
            a = _mm512_add_pd(a, ln8(v));
        }
        _mm512_reduce_add_pd(a)
    }
}
