//! Exact binomial draws from the counter-based stream (docs/definitions.md
//! §11, the multinomial scheme): each draw is a pure function of `(seed,
//! replicate, node, n, p)`; its uniforms come from [`crate::random`] with the
//! counter `(replicate, node, attempt, CELL_SPLITS)`. Only IEEE-exact
//! operations (`+ - * /`, `sqrt`, `floor`) and the logarithm below, written in
//! those operations, so the numpy backend (`cmetrics._numpy.multinomial`)
//! draws the same counts bit for bit.
//!
//! The sampler: inversion from zero when the mean is below 10
//! (Kachitvichyanukul and Schmeiser's BINV), else Hörmann's BTRD ("The
//! generation of binomial random variates", J. Statist. Comput. Simul. 46,
//! 1993): a transformed rejection with a squeeze that accepts most draws with
//! one uniform and a handful of operations. The BTRD draws are taken eight at
//! a time in vector lanes ([`super::binomial_lanes`]); this module holds the
//! steps both share, the inversion, and the scalar BTRD the lanes are tested
//! against bit for bit.

use crate::random::{philox4x32_10, CELL_SPLITS};

/// `2^-52`.
const TWO_M52: f64 = 1.0 / 4_503_599_627_370_496.0;
/// `2^54`, to bring a subnormal into the normal range.
const TWO_P54: f64 = 18_014_398_509_481_984.0;
/// Counts up to this total are exact in float64.
pub(super) const MAX_TOTAL: u64 = 1 << 53;

/// A uniform in (0, 1) from two 32-bit words: 52 bits, the grid's midpoints.
#[inline]
pub(super) fn open_unit(hi: u32, lo: u32) -> f64 {
    let x = (u64::from(hi >> 6) << 26) | u64::from(lo >> 6);
    (x as f64 + 0.5) * TWO_M52
}

/// `ln 2` in two parts (the high part has trailing zero bits, so `e * LN2_HI`
/// is exact for every binary exponent `e`).
const LN2_HI: f64 = 6.931_471_803_691_238e-1;
const LN2_LO: f64 = 1.908_214_929_270_587_7e-10;
/// `1 / (2j + 3)`: the series `atanh(s) / s = 1 + z/3 + z^2/5 + ...`, `z = s^2`.
const ATANH_SERIES: [f64; 11] = [
    1.0 / 3.0,
    1.0 / 5.0,
    1.0 / 7.0,
    1.0 / 9.0,
    1.0 / 11.0,
    1.0 / 13.0,
    1.0 / 15.0,
    1.0 / 17.0,
    1.0 / 19.0,
    1.0 / 21.0,
    1.0 / 23.0,
];

/// The natural logarithm of `x > 0` in IEEE-exact operations only (so that
/// the numpy backend, which holds the same steps, gets the same bits; a
/// library `log` differs by an ulp between implementations): `x = f 2^e` with
/// `f` in `[sqrt(1/2), sqrt(2)]`, `ln f = 2 atanh(s)` with `s = (f-1)/(f+1)`,
/// `|s| < 0.172`, summed to 2^-60. Within 2 ulps of the true value; `-inf` at 0.
#[must_use]
#[cfg(test)]
pub(super) fn ln(x: f64) -> f64 {
    if x <= 0.0 {
        return if x == 0.0 {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        };
    }
    ln_positive(x)
}

/// `ln` of `x > 0`, written with selects rather than branches (so that it
/// runs in vector lanes too; a lane's other inputs give unread values).
#[inline(always)]
pub(super) fn ln_positive(x: f64) -> f64 {
    let bits = x.to_bits();
    let subnormal = bits >> 52 == 0;
    let bits = if subnormal {
        (x * TWO_P54).to_bits()
    } else {
        bits
    };
    let e = ((bits >> 52) & 0x7ff) as i64 - if subnormal { 1023 + 54 } else { 1023 };
    let f = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    let high = f > std::f64::consts::SQRT_2;
    let (f, e) = if high { (f * 0.5, e + 1) } else { (f, e) };
    let g = f - 1.0;
    let s = g / (2.0 + g);
    let z = s * s;
    // Estrin's scheme: the series in four dependent steps instead of ten.
    let c = &ATANH_SERIES;
    let (z2, z4) = (z * z, (z * z) * (z * z));
    let z8 = z4 * z4;
    let r0 = (c[0] + c[1] * z) + (c[2] + c[3] * z) * z2;
    let r1 = (c[4] + c[5] * z) + (c[6] + c[7] * z) * z2;
    let r2 = (c[8] + c[9] * z) + c[10] * z2;
    let poly = (r0 + r1 * z4) + r2 * z8;
    let ln_f = 2.0 * s + ((2.0 * s) * z) * poly;
    let e = e as f64;
    e * LN2_HI + (e * LN2_LO + ln_f)
}

/// `ln k! - ((k + 1/2) ln(k + 1) - (k + 1) + ln(2 pi) / 2)` for `k = 0..9`
/// (the Stirling correction; computed at 50 digits).
const STIRLING_CORRECTION: [f64; 10] = [
    0.081_061_466_795_327_26,
    0.041_340_695_955_409_3,
    0.027_677_925_684_998_34,
    0.020_790_672_103_765_093,
    0.016_644_691_189_821_193,
    0.013_876_128_823_070_748,
    0.011_896_709_945_891_77,
    0.010_411_265_261_972_096,
    0.009_255_462_182_712_733,
    0.008_330_563_433_362_87,
];

/// The Stirling correction of `k!` (`k` a whole number): the table below 10,
/// Stirling's series `1/12 - r^2/360 + r^4/1260 - r^6/1680` (times
/// `r = 1/(k+1)`) above, within 4e-13 of it.
#[inline(always)]
pub(super) fn stirling_correction(k: f64) -> f64 {
    // Both computed, one kept: a select, so that this runs in vector lanes too.
    let r = 1.0 / (k + 1.0);
    let rr = r * r;
    let series = (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - rr / 1680.0) * rr) * rr) * r;
    // The table's entry `min(max(k, 0), 9)` by selects rather than an index (a lane's
    // table load would be a scalar load per lane).
    let mut small = STIRLING_CORRECTION[9];
    for j in (0..9).rev() {
        small = if k < (j + 1) as f64 {
            STIRLING_CORRECTION[j]
        } else {
            small
        };
    }
    if k < 10.0 {
        small
    } else {
        series
    }
}

/// `base^e` by repeated squaring (IEEE-exact steps, the same on both backends).
#[inline]
pub(super) fn power(mut base: f64, mut e: u64) -> f64 {
    let mut acc = 1.0;
    while e > 0 {
        if e & 1 == 1 {
            acc *= base;
        }
        base *= base;
        e >>= 1;
    }
    acc
}

/// `floor(x)` where it matters (`|x| < 2^63`), without a library call (the
/// baseline x86-64 target has no rounding instruction); beyond, a value
/// outside every `0..=n` as `floor` would give.
#[inline]
pub(super) fn floor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}

/// Where a binomial draw's uniforms come from.
#[derive(Clone, Copy)]
pub(super) struct Stream {
    pub key: [u32; 2],
    pub replicate: u32,
    pub node: u32,
}

impl Stream {
    #[inline]
    fn words(self, attempt: u32) -> [u32; 4] {
        philox4x32_10([self.replicate, self.node, attempt, CELL_SPLITS], self.key)
    }
}

/// The most steps of one inversion before it starts again (the mean is below
/// 10: going past 110 has probability below 1e-60; rounding can leave a
/// uniform unclaimed).
const INVERSION_STEPS: f64 = 110.0;

/// `Binomial(n, p)` by inversion from zero, `p <= 1/2`, `n p < 10`.
pub(super) fn inversion(n: f64, p: f64, stream: Stream) -> f64 {
    let q = 1.0 - p;
    let s = p / q;
    let a = (n + 1.0) * s;
    let first = power(q, n as u64);
    let bound = n.min(INVERSION_STEPS);
    let mut attempt = 0_u32;
    loop {
        let w = stream.words(attempt);
        let mut u = open_unit(w[0], w[1]);
        let (mut k, mut f) = (0.0, first);
        loop {
            if u <= f {
                return k;
            }
            u -= f;
            k += 1.0;
            if k > bound {
                break;
            }
            f *= a / k - s;
        }
        attempt = attempt.wrapping_add(1);
    }
}

/// `Binomial(n, p)` by Hörmann's BTRD, `p <= 1/2`, `n p >= 10`, one attempt
/// after another: the scalar reference that the lanes of
/// [`super::binomial_lanes`] equal bit for bit (tested), the draws themselves
/// taken there.
#[cfg(test)]
pub(super) fn btrd(n: f64, p: f64, stream: Stream) -> f64 {
    let q = 1.0 - p;
    let npq = (n * p) * q;
    let spq = npq.sqrt();
    let b = 1.15 + 2.53 * spq;
    let a = (-0.0873 + 0.0248 * b) + 0.01 * p;
    let c = n * p + 0.5;
    let alpha = (2.83 + 5.1 / b) * spq;
    let vr = 0.92 - 4.2 / b;
    let urvr = 0.86 * vr;
    let m = floor((n + 1.0) * p);
    let r = p / q;
    // The constant of the exact test, computed when first needed.
    let mut h: Option<f64> = None;
    let mut attempt = 0_u32;
    loop {
        let w = stream.words(attempt);
        attempt = attempt.wrapping_add(1);
        let mut v = open_unit(w[0], w[1]);
        if v <= urvr {
            let u = v / vr - 0.43;
            let k = floor((2.0 * a / (0.5 - u.abs()) + b) * u + c);
            if (0.0..=n).contains(&k) {
                return k;
            }
            continue;
        }
        let u = if v >= vr {
            open_unit(w[2], w[3]) - 0.5
        } else {
            let u0 = v / vr - 0.93;
            v = open_unit(w[2], w[3]) * vr;
            0.5_f64.copysign(u0) - u0
        };
        let us = 0.5 - u.abs();
        let k = floor((2.0 * a / us + b) * u + c);
        if !(0.0..=n).contains(&k) {
            continue;
        }
        v = v * alpha / (a / (us * us) + b);
        let km = (k - m).abs();
        if km <= 15.0 {
            // f(k) / f(m) = prod over i in (min, max] of (n + 1 - i) r / i, or its inverse:
            // two products and one division.
            let (lo, hi) = if m < k { (m, k) } else { (k, m) };
            let (mut num, mut den) = (1.0, 1.0);
            let mut i = lo + 1.0;
            while i <= hi {
                num *= (n + 1.0) - i;
                den *= i;
                i += 1.0;
            }
            let ratio = power(r, km as u64) * num / den;
            let accept = if m < k { v <= ratio } else { v * ratio <= 1.0 };
            if accept {
                return k;
            }
            continue;
        }
        // Squeeze on the log scale, then the exact test by Stirling's formula.
        v = ln(v);
        let rho = (km / npq) * (((km / 3.0 + 0.625) * km + 1.0 / 6.0) / npq + 0.5);
        let t = -(km * km) / (2.0 * npq);
        if v < t - rho {
            return k;
        }
        if v > t + rho {
            continue;
        }
        let nm = n - m + 1.0;
        let h = *h.get_or_insert_with(|| {
            (m + 0.5) * ln((m + 1.0) / (r * nm))
                + stirling_correction(m)
                + stirling_correction(n - m)
        });
        let nk = n - k + 1.0;
        let bound = h + (n + 1.0) * ln(nm / nk) + (k + 0.5) * ln(nk * r / (k + 1.0))
            - stirling_correction(k)
            - stirling_correction(n - k);
        if v <= bound {
            return k;
        }
    }
}

/// A BTRD draw to take: `Binomial(n, p)` with `p <= 1/2` and `n p >= 10`, of
/// the total `total`, its count taken from the other side when `flipped`.
#[derive(Clone, Copy)]
pub(super) struct Btrd {
    pub n: f64,
    pub p: f64,
    pub total: u64,
    pub flipped: bool,
}

impl Btrd {
    /// The draw's count from BTRD's count `k`.
    #[inline]
    pub fn count(self, k: f64) -> u64 {
        let k = k as u64;
        if self.flipped {
            self.total - k
        } else {
            k
        }
    }
}

/// One `Binomial(n, p)` draw (`n < 2^53`) from `stream` when it needs no BTRD
/// (no rows, a share of 0 or 1, or a mean below 10: inversion), else the
/// BTRD draw to take.
pub(super) fn binomial_or_btrd(n: u64, p: f64, stream: Stream) -> Result<u64, Btrd> {
    if n == 0 || p <= 0.0 {
        return Ok(0);
    }
    if p >= 1.0 {
        return Ok(n);
    }
    let flipped = p > 0.5;
    let pp = if flipped { 1.0 - p } else { p };
    let nf = n as f64;
    let draw = Btrd {
        n: nf,
        p: pp,
        total: n,
        flipped,
    };
    if nf * pp < 10.0 {
        Ok(draw.count(inversion(nf, pp, stream)))
    } else {
        Err(draw)
    }
}

/// One `Binomial(n, p)` draw (`n < 2^53`), from `stream`, every attempt scalar
/// (the reference the level-by-level draws are tested against).
#[cfg(test)]
pub(super) fn binomial(n: u64, p: f64, stream: Stream) -> u64 {
    binomial_or_btrd(n, p, stream).unwrap_or_else(|d| d.count(btrd(d.n, d.p, stream)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::key_of;

    #[test]
    fn the_logarithm_is_within_two_ulps() {
        let mut x = 1e-300_f64;
        while x < 1e300 {
            for y in [x, x * 1.37, x * 0.71, 1.0 + x.min(0.5)] {
                let want = y.ln();
                let got = ln(y);
                assert!(
                    (got - want).abs() <= 2.0 * f64::EPSILON * want.abs().max(1e-300),
                    "{y}"
                );
            }
            x *= 3.1;
        }
        assert_eq!(ln(1.0), 0.0);
        assert_eq!(ln(0.0), f64::NEG_INFINITY);
        assert!((ln(5e-324) - 5e-324_f64.ln()).abs() < 1e-12);
    }

    #[test]
    fn the_stirling_series_meets_the_exact_correction() {
        // ln k! - ((k + 1/2) ln(k + 1) - (k + 1) + ln(2 pi) / 2) at 50 digits (mpmath).
        for (k, exact) in [
            (10.0, 0.007_573_675_487_951_841),
            (25.0, 0.003_204_970_228_055_038),
            (1000.0, 8.325_008_048_062_296e-5),
        ] {
            assert!((stirling_correction(k) - exact).abs() < 4e-13, "{k}");
        }
    }

    /// The pmf of `Binomial(n, p)` at every `k`, by the recursion in f64.
    fn pmf(n: u64, p: f64) -> Vec<f64> {
        let mut logs = Vec::new();
        let mut acc = (n as f64) * (1.0 - p).ln();
        for k in 0..=n {
            logs.push(acc);
            acc += ((n - k) as f64).ln() - ((k + 1) as f64).ln() + p.ln() - (1.0 - p).ln();
        }
        logs.into_iter().map(f64::exp).collect()
    }

    /// Pearson's statistic of `draws` against `Binomial(n, p)`, cells of expected
    /// count below 5 pooled, and its degrees of freedom.
    fn chi2(n: u64, p: f64, draws: &[u64]) -> (f64, usize) {
        let probs = pmf(n, p);
        let total = draws.len() as f64;
        let mut seen = vec![0.0; probs.len()];
        for &d in draws {
            seen[d as usize] += 1.0;
        }
        let (mut stat, mut df, mut pool_e, mut pool_o) = (0.0, 0, 0.0, 0.0);
        for (e, o) in probs.iter().zip(&seen) {
            pool_e += e * total;
            pool_o += o;
            if pool_e >= 5.0 {
                stat += (pool_o - pool_e).powi(2) / pool_e;
                df += 1;
                pool_e = 0.0;
                pool_o = 0.0;
            }
        }
        (stat + (pool_o - pool_e).powi(2) / pool_e.max(1e-300), df)
    }

    #[test]
    fn binomial_draws_follow_the_binomial_law() {
        // Both samplers, both sides of 1/2, and the squeeze's far tails.
        for (n, p) in [
            (30_u64, 0.1),
            (7, 0.5),
            (1_000, 0.004),
            (200, 0.3),
            (5_000, 0.5),
            (40, 0.75),
            (100_000, 0.01),
            (1_000_000, 0.2),
        ] {
            let draws: Vec<u64> = (0..40_000_u32)
                .map(|b| {
                    binomial(
                        n,
                        p,
                        Stream {
                            key: key_of(9),
                            replicate: b,
                            node: 3,
                        },
                    )
                })
                .collect();
            assert!(draws.iter().all(|&d| d <= n));
            let mean = draws.iter().sum::<u64>() as f64 / draws.len() as f64;
            let sd = ((n as f64) * p * (1.0 - p) / draws.len() as f64).sqrt();
            assert!((mean - n as f64 * p).abs() < 5.0 * sd, "{n} {p} {mean}");
            if n <= 200_000 {
                let (stat, df) = chi2(n, p, &draws);
                // The 1e-4 upper quantile of chi2(df) is below df + 9 sqrt(df) + 20.
                let limit = df as f64 + 9.0 * (df as f64).sqrt() + 20.0;
                assert!(stat < limit, "{n} {p}: chi2 {stat} on {df}");
            }
        }
    }
}
