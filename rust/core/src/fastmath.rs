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
//! AVX-512 version at run time when the CPU has one, else an AVX2 version
//! where the CPU has AVX2 and FMA (both within a few ulp, tested in the same
//! file); otherwise the portable loops.

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

/// Whether the CPU runs the [`avx2`] sums (AVX2 and FMA).
#[cfg(target_arch = "x86_64")]
fn avx2_fma() -> bool {
    crate::cpu::avx2() && std::arch::is_x86_feature_detected!("fma")
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
    if avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked above).
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
    if avx2_fma() {
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
    if avx2_fma() {
        // SAFETY: as above.
        return unsafe { avx2::ln_sum(xs) };
    }
    lane_sum(xs, ln)
}

/// AVX2 versions with FMA, for CPUs without AVX-512: the series and the
/// polynomial of the AVX-512 [`x86`] kernels in four-lane registers, the
/// exponent read from the bits as in [`ln`] (AVX2 has no `getexp`) and the
/// one division a vector division (AVX2 has no 14-bit reciprocal of f64).
/// The portable loops compiled for AVX2, without FMA, spent about 10 cycles
/// a value on AMD Zen 3 (a fifth of `evaluate`'s probability pass on a
/// 10^7 x 10 dump). Accuracy within a few ulp, as in [`x86`]; sixteen values
/// a step in four accumulators, in the same lanes for f32 and f64 input, so
/// that f32 values give the bits of their f64 widening.
#[cfg(target_arch = "x86_64")]
mod avx2 {
    use std::arch::x86_64::{
        __m256d, _mm256_add_pd, _mm256_and_pd, _mm256_and_si256, _mm256_blendv_pd,
        _mm256_castpd256_pd128, _mm256_castpd_si256, _mm256_castsi256_pd, _mm256_cmp_pd,
        _mm256_cvtps_pd, _mm256_div_pd, _mm256_extractf128_pd, _mm256_fmadd_pd, _mm256_fnmadd_pd,
        _mm256_loadu_pd, _mm256_mul_pd, _mm256_or_si256, _mm256_set1_epi64x, _mm256_set1_pd,
        _mm256_setzero_pd, _mm256_srli_epi64, _mm256_sub_pd, _mm_add_pd, _mm_add_sd, _mm_cvtsd_f64,
        _mm_loadu_ps, _mm_unpackhi_pd, _CMP_GT_OQ, _CMP_LT_OQ,
    };

    use super::{x86::P6, LN2_HI, LN2_LO, SQRT2, TWO54};

    /// `ln` of four positive finite values (others: unspecified, masked by
    /// the callers).
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::cast_possible_wrap)] // the constants' bits
    fn ln4(x: __m256d) -> __m256d {
        let one = _mm256_set1_pd(1.0);
        // Subnormals: scale up by 2^54, corrected in the exponent below.
        let sub = _mm256_cmp_pd::<_CMP_LT_OQ>(x, _mm256_set1_pd(f64::MIN_POSITIVE));
        let x = _mm256_blendv_pd(x, _mm256_mul_pd(x, _mm256_set1_pd(TWO54)), sub);
        let bits = _mm256_castpd_si256(x);
        // The biased exponent in the mantissa of 2^52 (exact), less 2^52 + 1023.
        let biased = _mm256_or_si256(
            _mm256_srli_epi64::<52>(bits),
            _mm256_set1_epi64x(0x4330_0000_0000_0000),
        );
        let mut e = _mm256_sub_pd(
            _mm256_castsi256_pd(biased),
            _mm256_set1_pd(4_503_599_627_370_496.0 + 1023.0),
        );
        e = _mm256_sub_pd(e, _mm256_and_pd(sub, _mm256_set1_pd(54.0)));
        let mut m = _mm256_castsi256_pd(_mm256_or_si256(
            _mm256_and_si256(bits, _mm256_set1_epi64x(0x000f_ffff_ffff_ffff)),
            _mm256_set1_epi64x(0x3ff0_0000_0000_0000),
        ));
        let big = _mm256_cmp_pd::<_CMP_GT_OQ>(m, _mm256_set1_pd(SQRT2));
        m = _mm256_blendv_pd(m, _mm256_mul_pd(m, _mm256_set1_pd(0.5)), big);
        e = _mm256_add_pd(e, _mm256_and_pd(big, one));
        let f = _mm256_sub_pd(m, one);
        let s = _mm256_div_pd(f, _mm256_add_pd(m, one));
        let z = _mm256_mul_pd(s, s);
        let mut p = _mm256_set1_pd(P6[0]);
        for c in &P6[1..] {
            p = _mm256_fmadd_pd(p, z, _mm256_set1_pd(*c));
        }
        // ln(m) = f - s f + 2 s z p, the leading term kept exact.
        let two_sz = _mm256_mul_pd(_mm256_add_pd(s, s), z);
        let ln_m = _mm256_fmadd_pd(two_sz, p, _mm256_fnmadd_pd(s, f, f));
        let lo = _mm256_fmadd_pd(e, _mm256_set1_pd(LN2_LO), ln_m);
        _mm256_fmadd_pd(e, _mm256_set1_pd(LN2_HI), lo)
    }

    /// `acc - x ln x` where `x > 0`, `acc` elsewhere.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn step(acc: __m256d, x: __m256d) -> __m256d {
        let pos = _mm256_cmp_pd::<_CMP_GT_OQ>(x, _mm256_setzero_pd());
        _mm256_blendv_pd(acc, _mm256_fnmadd_pd(x, ln4(x), acc), pos)
    }

    /// The sum of four accumulators' lanes in a fixed order.
    #[inline]
    #[target_feature(enable = "avx2,fma")]
    fn total(a: [__m256d; 4]) -> f64 {
        let v = _mm256_add_pd(_mm256_add_pd(a[0], a[1]), _mm256_add_pd(a[2], a[3]));
        let pair = _mm_add_pd(_mm256_castpd256_pd128(v), _mm256_extractf128_pd::<1>(v));
        _mm_cvtsd_f64(_mm_add_sd(pair, _mm_unpackhi_pd(pair, pair)))
    }

    /// Sixteen values a step into four accumulators, lane `j` of a step to
    /// accumulator `j / 4`; a last partial step padded with `pad`.
    #[inline(always)]
    fn sixteens<T: Copy>(
        xs: &[T],
        pad: f64,
        load: impl Fn(&[T; 16]) -> [__m256d; 4],
        widen: impl Fn(T) -> f64,
        mut add: impl FnMut(&mut [__m256d; 4], [__m256d; 4]),
        zero: [__m256d; 4],
    ) -> [__m256d; 4] {
        let mut acc = zero;
        let mut it = xs.chunks_exact(16);
        for c in &mut it {
            if let Ok(c) = <&[T; 16]>::try_from(c) {
                add(&mut acc, load(c));
            }
        }
        let rest = it.remainder();
        if !rest.is_empty() {
            let mut padded = [pad; 16];
            for (p, &v) in padded.iter_mut().zip(rest) {
                *p = widen(v);
            }
            // SAFETY: sixteen f64 in four loads of four, inside the array.
            let v = std::array::from_fn(|j| unsafe { _mm256_loadu_pd(padded.as_ptr().add(4 * j)) });
            add(&mut acc, v);
        }
        acc
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn neg_xlogx_sum_f32(xs: &[f32]) -> f64 {
        let zero = [_mm256_setzero_pd(); 4];
        // SAFETY (load): four loads of four f32 inside the sixteen.
        let load = |c: &[f32; 16]| {
            std::array::from_fn(|j| unsafe { _mm256_cvtps_pd(_mm_loadu_ps(c.as_ptr().add(4 * j))) })
        };
        let add = |acc: &mut [__m256d; 4], v: [__m256d; 4]| {
            for (a, x) in acc.iter_mut().zip(v) {
                *a = step(*a, x);
            }
        };
        total(sixteens(xs, 0.0, load, f64::from, add, zero))
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn neg_xlogx_sum_f64(xs: &[f64]) -> f64 {
        let zero = [_mm256_setzero_pd(); 4];
        // SAFETY (load): four loads of four f64 inside the sixteen.
        let load = |c: &[f64; 16]| {
            std::array::from_fn(|j| unsafe { _mm256_loadu_pd(c.as_ptr().add(4 * j)) })
        };
        let add = |acc: &mut [__m256d; 4], v: [__m256d; 4]| {
            for (a, x) in acc.iter_mut().zip(v) {
                *a = step(*a, x);
            }
        };
        total(sixteens(xs, 0.0, load, |x| x, add, zero))
    }

    #[target_feature(enable = "avx2,fma")]
    pub(super) unsafe fn ln_sum(xs: &[f64]) -> f64 {
        let zero = [_mm256_setzero_pd(); 4];
        // SAFETY (load): as above.
        let load = |c: &[f64; 16]| {
            std::array::from_fn(|j| unsafe { _mm256_loadu_pd(c.as_ptr().add(4 * j)) })
        };
        let add = |acc: &mut [__m256d; 4], v: [__m256d; 4]| {
            for (a, x) in acc.iter_mut().zip(v) {
                *a = _mm256_add_pd(*a, ln4(x));
            }
        };
        // The padding is 1 (ln 1 = 0 exactly).
        total(sixteens(xs, 1.0, load, |x| x, add, zero))
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
    pub(super) const P6: [f64; 7] = [
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
