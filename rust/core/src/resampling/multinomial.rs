//! Exact multinomial draws of cell counts (docs/definitions.md §11, the
//! multinomial scheme): resampling `n` rows with replacement draws the counts
//! of the occupied cells from `Multinomial(n, counts / n)`, one replicate in
//! O(cells) whatever `n`.
//!
//! A stratum's cells are split in halves, recursively: a node holding `m`
//! rows over cells `lo..hi` sends `Binomial(m, p)` of them to `lo..mid` and
//! the rest to `mid..hi`, with `p` the share of the original counts in
//! `lo..mid` (the multinomial is the product of these conditionals). Each
//! binomial draw is a pure function of `(seed, replicate, node, m, p)`: its
//! uniforms come from the counter-based stream of [`crate::random`] with the
//! counter `(replicate, node, attempt, CELL_SPLITS)`, the node named by the
//! global position of its split (every split position names one node). So a
//! replicate does not depend on the thread that drew it, and the numpy
//! backend (`cmetrics._numpy.multinomial`) draws the same counts, level by
//! level, bit for bit: both use only IEEE-exact operations (`+ - * /`,
//! `sqrt`, `floor`) and the logarithm below, written in those operations.
//!
//! The binomial sampler: inversion from zero when the mean is below 10
//! (Kachitvichyanukul and Schmeiser's BINV), else Hörmann's BTRD ("The
//! generation of binomial random variates", J. Statist. Comput. Simul. 46,
//! 1993): a transformed rejection with a squeeze that accepts most draws with
//! one uniform and a handful of operations.

use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::Pool;
use crate::random::{key_of, philox4x32_10, CELL_SPLITS};
use rayon::prelude::*;

/// `2^-52`.
const TWO_M52: f64 = 1.0 / 4_503_599_627_370_496.0;
/// `2^54`, to bring a subnormal into the normal range.
const TWO_P54: f64 = 18_014_398_509_481_984.0;
/// Counts up to this total are exact in float64.
pub const MAX_TOTAL: u64 = 1 << 53;

/// A uniform in (0, 1) from two 32-bit words: 52 bits, the grid's midpoints.
#[inline]
fn open_unit(hi: u32, lo: u32) -> f64 {
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
pub fn ln(x: f64) -> f64 {
    if x <= 0.0 {
        return if x == 0.0 {
            f64::NEG_INFINITY
        } else {
            f64::NAN
        };
    }
    let (mut bits, mut e) = (x.to_bits(), 0_i64);
    if bits >> 52 == 0 {
        bits = (x * TWO_P54).to_bits();
        e = -54;
    }
    e += ((bits >> 52) & 0x7ff) as i64 - 1023;
    let mut f = f64::from_bits((bits & ((1 << 52) - 1)) | (1023 << 52));
    if f > std::f64::consts::SQRT_2 {
        f *= 0.5;
        e += 1;
    }
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
#[inline]
fn stirling_correction(k: f64) -> f64 {
    if k < 10.0 {
        STIRLING_CORRECTION[k as usize]
    } else {
        let r = 1.0 / (k + 1.0);
        let rr = r * r;
        (1.0 / 12.0 - (1.0 / 360.0 - (1.0 / 1260.0 - rr / 1680.0) * rr) * rr) * r
    }
}

/// `base^e` by repeated squaring (IEEE-exact steps, the same on both backends).
#[inline]
fn power(mut base: f64, mut e: u64) -> f64 {
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
fn floor(x: f64) -> f64 {
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}

/// Where a binomial draw's uniforms come from.
#[derive(Clone, Copy)]
struct Stream {
    key: [u32; 2],
    replicate: u32,
    node: u32,
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
fn inversion(n: f64, p: f64, stream: Stream) -> f64 {
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

/// `Binomial(n, p)` by Hörmann's BTRD, `p <= 1/2`, `n p >= 10`.
fn btrd(n: f64, p: f64, stream: Stream) -> f64 {
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

/// One `Binomial(n, p)` draw (`n < 2^53`), from `stream`.
fn binomial(n: u64, p: f64, stream: Stream) -> u64 {
    if n == 0 || p <= 0.0 {
        return 0;
    }
    if p >= 1.0 {
        return n;
    }
    let flip = p > 0.5;
    let pp = if flip { 1.0 - p } else { p };
    let nf = n as f64;
    let k = if nf * pp < 10.0 {
        inversion(nf, pp, stream)
    } else {
        btrd(nf, pp, stream)
    } as u64;
    if flip {
        n - k
    } else {
        k
    }
}

/// A node of the split tree: cells `lo..hi` holding `m` resampled rows.
#[derive(Clone, Copy)]
struct Node {
    lo: usize,
    hi: usize,
    m: u64,
}

/// The draws of one replicate (`out` zeroed), level by level: the draws of a
/// level are independent of each other, so the processor overlaps them (depth
/// first, each draw waited for the one before it).
fn draw_replicate(
    out: &mut [f64],
    share: &[f64],
    strata: &[(usize, usize, u64)],
    stream: Stream,
    levels: &mut (Vec<Node>, Vec<Node>),
) {
    let (level, next) = levels;
    level.clear();
    level.extend(
        strata
            .iter()
            .filter(|s| s.1 > s.0)
            .map(|&(lo, hi, m)| Node { lo, hi, m }),
    );
    while !level.is_empty() {
        next.clear();
        for &Node { lo, hi, m } in level.iter() {
            if hi - lo == 1 {
                out[lo] = m as f64;
                continue;
            }
            if m == 0 {
                continue;
            }
            let mid = lo + (hi - lo) / 2;
            let node = mid as u32;
            let left = binomial(m, share[mid], Stream { node, ..stream });
            next.push(Node {
                lo,
                hi: mid,
                m: left,
            });
            next.push(Node {
                lo: mid,
                hi,
                m: m - left,
            });
        }
        std::mem::swap(level, next);
    }
}

/// Replicates `first .. first + count` of the multinomial resampling of
/// `counts`, stratum by stratum (`stratum_ends`: where each stratum's cells
/// end; each stratum keeps its total): `count x cells`, row-major.
///
/// # Errors
/// [`MetricError::InvalidValue`] when a stratum's total reaches 2^53 or the
/// ends are not increasing up to the cell count; `OutOfMemory`; `Interrupted`.
pub fn multinomial_draws(
    counts: &[u64],
    stratum_ends: &[usize],
    first: u64,
    count: usize,
    seed: u64,
    pool: &Pool,
) -> Result<Vec<f64>> {
    let cells = counts.len();
    if u32::try_from(cells).is_err() || first.saturating_add(count as u64) > 1 << 32 {
        return Err(MetricError::InvalidValue {
            arg: "counts",
            detail: "at most 2^32 cells and 2^32 replicates".into(),
        });
    }
    let mut strata = Vec::with_capacity(stratum_ends.len());
    let mut start = 0;
    for &end in stratum_ends {
        if end < start || end > cells {
            return Err(MetricError::InvalidValue {
                arg: "stratum_ends",
                detail: "must increase up to the number of cells".into(),
            });
        }
        let total = counts[start..end]
            .iter()
            .try_fold(0_u64, |t, &c| t.checked_add(c).filter(|&t| t < MAX_TOTAL));
        let Some(total) = total else {
            return Err(MetricError::InvalidValue {
                arg: "counts",
                detail: "a stratum holds 2^53 rows or more: too many to draw exactly in float64"
                    .into(),
            });
        };
        strata.push((start, end, total));
        start = end;
    }
    // The left share of every split, named by its position.
    let mut share = try_filled(cells, 0.0, "the multinomial shares")?;
    let mut prefix = try_filled(cells + 1, 0_u64, "the multinomial shares")?;
    for (i, &c) in counts.iter().enumerate() {
        prefix[i + 1] = prefix[i] + c;
    }
    for &(lo, hi, _) in &strata {
        fill_shares(&mut share, &prefix, lo, hi);
    }
    let Some(size) = count.checked_mul(cells) else {
        return Err(MetricError::OutOfMemory {
            what: "the multinomial draws",
            bytes: (count as u128) * (cells as u128) * 8,
        });
    };
    let mut out = try_filled(size, 0.0, "the multinomial draws")?;
    if cells == 0 {
        return Ok(out);
    }
    let key = key_of(seed);
    let draw = |levels: &mut (Vec<Node>, Vec<Node>), (b, row): (usize, &mut [f64])| -> Result<()> {
        pool.check()?;
        let stream = Stream {
            key,
            replicate: (first + b as u64) as u32,
            node: 0,
        };
        draw_replicate(row, &share, &strata, stream, levels);
        Ok(())
    };
    if pool.threads() > 1 && count > 1 {
        pool.install(|| {
            out.par_chunks_mut(cells)
                .enumerate()
                .try_for_each_init(|| (Vec::new(), Vec::new()), draw)
        })?;
    } else {
        let mut levels = (Vec::new(), Vec::new());
        out.chunks_mut(cells)
            .enumerate()
            .try_for_each(|item| draw(&mut levels, item))?;
    }
    Ok(out)
}

/// The left shares of the splits of cells `lo..hi` (recursively).
fn fill_shares(share: &mut [f64], prefix: &[u64], lo: usize, hi: usize) {
    if hi - lo < 2 {
        return;
    }
    let mid = lo + (hi - lo) / 2;
    let total = prefix[hi] - prefix[lo];
    if total > 0 {
        share[mid] = (prefix[mid] - prefix[lo]) as f64 / total as f64;
    }
    fill_shares(share, prefix, lo, mid);
    fill_shares(share, prefix, mid, hi);
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn draws_keep_each_stratum_total_and_ignore_the_threads() {
        let counts = [5_u64, 0, 17, 300, 2, 9_000, 1, 44];
        let ends = [3, 3, 8];
        let one = multinomial_draws(&counts, &ends, 10, 33, 7, &Pool::sequential()).unwrap();
        let two = multinomial_draws(&counts, &ends, 10, 33, 7, &Pool::new(3)).unwrap();
        assert_eq!(one, two);
        for row in one.chunks(8) {
            assert_eq!(row[..3].iter().sum::<f64>(), 22.0);
            assert_eq!(row[3..].iter().sum::<f64>(), 9_347.0);
            assert_eq!(row[1], 0.0);
        }
        // Replicate 12 drawn alone is the third row above.
        let alone = multinomial_draws(&counts, &ends, 12, 1, 7, &Pool::sequential()).unwrap();
        assert_eq!(alone, one[16..24]);
    }

    /// The draws depth first, one scalar [`binomial`] at a time (the reference of
    /// the level-by-level draws).
    fn reference(
        counts: &[u64],
        seed: u64,
        replicate: u32,
        out: &mut [f64],
        lo: usize,
        hi: usize,
        m: u64,
    ) {
        if hi - lo == 1 {
            out[lo] = m as f64;
            return;
        }
        let mid = lo + (hi - lo) / 2;
        let left_total: u64 = counts[lo..mid].iter().sum();
        let total: u64 = counts[lo..hi].iter().sum();
        let p = if total > 0 {
            left_total as f64 / total as f64
        } else {
            0.0
        };
        let stream = Stream {
            key: key_of(seed),
            replicate,
            node: mid as u32,
        };
        let left = binomial(m, p, stream);
        reference(counts, seed, replicate, out, lo, mid, left);
        reference(counts, seed, replicate, out, mid, hi, m - left);
    }

    #[test]
    fn level_order_draws_are_the_depth_first_draws() {
        // Means below and above 10, shares on both sides of 1/2, huge and tiny totals,
        // zero cells.
        let cases: [&[u64]; 5] = [
            &[300, 300, 70_000, 300, 3, 597, 0, 12],
            &[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1],
            &[5_000_000, 5_000_000, 1, 1_000_000_000_000],
            &[40, 160, 500, 500, 700, 300, 9_000, 1_000, 17],
            &[2, 0, 0, 5],
        ];
        for counts in cases {
            let total: u64 = counts.iter().sum();
            let cells = counts.len();
            for threads in [1, 2] {
                let got =
                    multinomial_draws(counts, &[cells], 3, 45, 77, &Pool::new(threads)).unwrap();
                for (b, row) in got.chunks(cells).enumerate() {
                    let mut want = vec![0.0; cells];
                    reference(counts, 77, 3 + b as u32, &mut want, 0, cells, total);
                    assert_eq!(row, &want[..], "{counts:?} replicate {b}");
                }
            }
        }
    }

    #[test]
    fn bad_strata_and_totals_are_errors() {
        let pool = Pool::sequential();
        assert!(multinomial_draws(&[1, 2], &[3], 0, 1, 0, &pool).is_err());
        assert!(multinomial_draws(&[1, 2], &[2, 1], 0, 1, 0, &pool).is_err());
        assert!(multinomial_draws(&[1 << 52, 1 << 52], &[2], 0, 1, 0, &pool).is_err());
        assert!(multinomial_draws(&[u64::MAX, 1], &[2], 0, 1, 0, &pool).is_err());
        assert!(multinomial_draws(&[1], &[1], u64::from(u32::MAX), 2, 0, &pool).is_err());
    }
}
