//! BTRD's attempts for [`LANES`] binomial draws side by side: the same
//! operations as the scalar [`super::binomial`] sampler's pass through its
//! loop, in the same order, written without branches (every path computed,
//! each lane's own picked), so that the compiler keeps every quantity of the
//! eight draws in one vector register (AVX-512 or AVX2, chosen at run time;
//! plain code elsewhere). An attempt is taken in passes, each over only the
//! draws it concerns: the squeeze of every draw (one uniform: most draws end
//! there); for the draws whose uniform fell outside it, the candidate of the
//! second uniform; then the test that decides the candidate, the ratio of
//! products near the mode or the logarithms (the log-scale squeeze and
//! Stirling's test) far from it, each pass on its own draws so that no lane
//! computes the other test. A rejected draw takes its next attempt in the next
//! round ([`super::rounds`] keeps the rounds). Bit for bit the scalar draws.

use super::binomial::{floor, ln_positive, open_unit, stirling_correction};
use crate::cpu::widest;
use crate::random::{philox_lanes, CELL_SPLITS};

/// Draws per vector.
pub(super) const LANES: usize = 8;

/// A squeeze's verdict: the count stands.
pub(super) const SQUEEZED: u8 = 0;
/// A squeeze's verdict: the attempt is rejected.
pub(super) const REJECTED: u8 = 1;
/// A squeeze's verdict: the uniform fell outside the squeeze.
pub(super) const OUTSIDE: u8 = 2;
/// A candidate's test: the ratio of products near the mode.
pub(super) const NEAR: u8 = 3;
/// A candidate's test: the logarithms far from it.
pub(super) const FAR: u8 = 4;

/// The farthest `|k - m|` whose acceptance test is the ratio of products.
const NEAR_MODE: f64 = 15.0;

/// `[f64; LANES]` or another lane array, each lane `$e` at `$l`.
macro_rules! each {
    (|$l:ident| $e:expr) => {{
        let mut lanes = [Default::default(); LANES];
        for $l in 0..LANES {
            lanes[$l] = $e;
        }
        lanes
    }};
}

type F = [f64; LANES];

/// BTRD's hat for [`LANES`] draws `Binomial(n, p)` (`p <= 1/2`, `n p >= 10`):
/// Hörmann's constants, lane by lane.
struct Hat {
    spq: F,
    a: F,
    b: F,
    c: F,
    vr: F,
}

#[inline(always)]
fn hat(n: &F, p: &F) -> Hat {
    let q: F = each!(|l| 1.0 - p[l]);
    let npq: F = each!(|l| (n[l] * p[l]) * q[l]);
    let spq: F = each!(|l| npq[l].sqrt());
    let b: F = each!(|l| 1.15 + 2.53 * spq[l]);
    let a: F = each!(|l| (-0.0873 + 0.0248 * b[l]) + 0.01 * p[l]);
    let c: F = each!(|l| n[l] * p[l] + 0.5);
    let vr: F = each!(|l| 0.92 - 4.2 / b[l]);
    Hat { spq, a, b, c, vr }
}

/// The second step of an attempt whose first uniform fell outside the
/// squeeze ([`squeeze_lanes`] said `OUTSIDE` for these words), for [`LANES`]
/// draws: the candidate count `k` and the scaled uniform `v` it is tested
/// with, and which test decides (`NEAR`: the ratio of products, `FAR`: the
/// logarithms), or `REJECTED` (`k` outside `0..=n`). Step by step across the
/// lanes, each step one vector operation.
#[inline(always)]
fn candidate_lanes(
    n: &F,
    p: &F,
    w: &[[u32; LANES]; 4],
    kc: &mut [f64],
    vc: &mut [f64],
    state: &mut [u8],
) {
    let Hat {
        spq, a, b, c, vr, ..
    } = hat(n, p);
    let alpha: F = each!(|l| (2.83 + 5.1 / b[l]) * spq[l]);
    let m: F = each!(|l| floor((n[l] + 1.0) * p[l]));
    let v: F = each!(|l| open_unit(w[0][l], w[1][l]));
    let second: F = each!(|l| open_unit(w[2][l], w[3][l]));
    // The second uniform, then the candidate.
    let u0: F = each!(|l| v[l] / vr[l] - 0.93);
    let wide: [bool; LANES] = each!(|l| v[l] >= vr[l]);
    let u: F = each!(|l| if wide[l] {
        second[l] - 0.5
    } else {
        0.5_f64.copysign(u0[l]) - u0[l]
    });
    let us: F = each!(|l| 0.5 - u[l].abs());
    let k: F = each!(|l| floor((2.0 * a[l] / us[l] + b[l]) * u[l] + c[l]));
    let v2: F = each!(|l| if wide[l] { v[l] } else { second[l] * vr[l] });
    let v2: F = each!(|l| v2[l] * alpha[l] / (a[l] / (us[l] * us[l]) + b[l]));
    for l in 0..LANES {
        state[l] = if !(k[l] >= 0.0 && k[l] <= n[l]) {
            REJECTED
        } else if (k[l] - m[l]).abs() <= NEAR_MODE {
            NEAR
        } else {
            FAR
        };
        kc[l] = k[l];
        vc[l] = v2[l];
    }
}

/// The test near the mode of [`LANES`] candidates (`|k - m| <= 15`): `f(k) /
/// f(m)` as the ratio of two products and a power of `p / q`, against `v`.
#[inline(always)]
fn near_lanes(n: &F, p: &F, k: &F, v: &F, accepted: &mut [bool]) {
    let q: F = each!(|l| 1.0 - p[l]);
    let m: F = each!(|l| floor((n[l] + 1.0) * p[l]));
    let r: F = each!(|l| p[l] / q[l]);
    let km: F = each!(|l| (k[l] - m[l]).abs());
    let up: [bool; LANES] = each!(|l| m[l] < k[l]);
    let lo: F = each!(|l| if up[l] { m[l] } else { k[l] });
    let hi: F = each!(|l| if up[l] { k[l] } else { m[l] });
    let (mut num, mut den): (F, F) = ([1.0; LANES], [1.0; LANES]);
    for j in 1..=15 {
        let i: F = each!(|l| lo[l] + f64::from(j));
        num = each!(|l| if i[l] <= hi[l] {
            num[l] * ((n[l] + 1.0) - i[l])
        } else {
            num[l]
        });
        den = each!(|l| if i[l] <= hi[l] { den[l] * i[l] } else { den[l] });
    }
    // r^km by repeated squaring, the multiplications of `power` (km <= 15: four bits).
    let e: [i32; LANES] = each!(|l| km[l] as i32);
    let (mut acc, mut base): (F, F) = ([1.0; LANES], r);
    for bit in 0..4 {
        acc = each!(|l| if (e[l] >> bit) & 1 == 1 {
            acc[l] * base[l]
        } else {
            acc[l]
        });
        base = each!(|l| base[l] * base[l]);
    }
    let ratio: F = each!(|l| acc[l] * num[l] / den[l]);
    for l in 0..LANES {
        accepted[l] = if up[l] {
            v[l] <= ratio[l]
        } else {
            v[l] * ratio[l] <= 1.0
        };
    }
}

/// The test far from the mode of [`LANES`] candidates: the squeeze on the
/// log scale, then the exact test by Stirling's formula.
#[inline(always)]
fn far_lanes(n: &F, p: &F, k: &F, v: &F, accepted: &mut [bool]) {
    let q: F = each!(|l| 1.0 - p[l]);
    let npq: F = each!(|l| (n[l] * p[l]) * q[l]);
    let m: F = each!(|l| floor((n[l] + 1.0) * p[l]));
    let r: F = each!(|l| p[l] / q[l]);
    let km: F = each!(|l| (k[l] - m[l]).abs());
    let lv: F = each!(|l| ln_positive(v[l]));
    let rho: F =
        each!(|l| (km[l] / npq[l]) * (((km[l] / 3.0 + 0.625) * km[l] + 1.0 / 6.0) / npq[l] + 0.5));
    let t: F = each!(|l| -(km[l] * km[l]) / (2.0 * npq[l]));
    let nm: F = each!(|l| n[l] - m[l] + 1.0);
    let h: F = each!(
        |l| (m[l] + 0.5) * ln_positive((m[l] + 1.0) / (r[l] * nm[l]))
            + stirling_correction(m[l])
            + stirling_correction(n[l] - m[l])
    );
    let nk: F = each!(|l| n[l] - k[l] + 1.0);
    let bound: F = each!(|l| h[l]
        + (n[l] + 1.0) * ln_positive(nm[l] / nk[l])
        + (k[l] + 0.5) * ln_positive(nk[l] * r[l] / (k[l] + 1.0))
        - stirling_correction(k[l])
        - stirling_correction(n[l] - k[l]));
    for l in 0..LANES {
        accepted[l] = lv[l] < t[l] - rho[l] || (lv[l] <= t[l] + rho[l] && lv[l] <= bound[l]);
    }
}

/// Where a chunk of draws is in its stream, and the words of its attempt.
#[inline(always)]
fn words(node: &[u32], attempt: &[u32], key: [u32; 2], replicate: u32) -> [[u32; LANES]; 4] {
    let nodes: [u32; LANES] = each!(|l| node[l]);
    let attempts: [u32; LANES] = each!(|l| attempt[l]);
    philox_lanes::<LANES>(
        [[replicate; LANES], nodes, attempts, [CELL_SPLITS; LANES]],
        key,
    )
}

/// The squeeze of [`LANES`] draws: `SQUEEZED` with the count, `REJECTED`, or
/// `OUTSIDE` (the uniform fell outside the squeeze: [`candidate_lanes`] goes on).
#[inline(always)]
fn squeeze_lanes(n: &F, p: &F, w: &[[u32; LANES]; 4], count: &mut [f64], state: &mut [u8]) {
    let Hat { a, b, c, vr, .. } = hat(n, p);
    let v: F = each!(|l| open_unit(w[0][l], w[1][l]));
    let uf: F = each!(|l| v[l] / vr[l] - 0.43);
    let kf: F = each!(|l| floor((2.0 * a[l] / (0.5 - uf[l].abs()) + b[l]) * uf[l] + c[l]));
    for l in 0..LANES {
        state[l] = if v[l] > 0.86 * vr[l] {
            OUTSIDE
        } else if kf[l] >= 0.0 && kf[l] <= n[l] {
            SQUEEZED
        } else {
            REJECTED
        };
        count[l] = kf[l];
    }
}

/// [`squeeze_attempts`] on every chunk of [`LANES`] draws.
#[inline(always)]
fn squeeze_in(draws: Draws<'_>, count: &mut [f64], state: &mut [u8]) {
    for c in 0..draws.n.len() / LANES {
        let (n, p, w) = draws.chunk(c);
        let at = c * LANES..(c + 1) * LANES;
        squeeze_lanes(&n, &p, &w, &mut count[at.clone()], &mut state[at]);
    }
}

/// [`candidates`] on every chunk of [`LANES`] draws.
#[inline(always)]
fn candidates_in(draws: Draws<'_>, k: &mut [f64], v: &mut [f64], state: &mut [u8]) {
    for c in 0..draws.n.len() / LANES {
        let (n, p, w) = draws.chunk(c);
        let at = c * LANES..(c + 1) * LANES;
        candidate_lanes(
            &n,
            &p,
            &w,
            &mut k[at.clone()],
            &mut v[at.clone()],
            &mut state[at],
        );
    }
}

/// [`near_tests`] on every chunk of [`LANES`] candidates.
#[inline(always)]
fn near_in(tests: Tests<'_>, accepted: &mut [bool]) {
    for c in 0..tests.n.len() / LANES {
        let (n, p, k, v) = tests.chunk(c);
        near_lanes(&n, &p, &k, &v, &mut accepted[c * LANES..(c + 1) * LANES]);
    }
}

/// [`far_tests`] on every chunk of [`LANES`] candidates.
#[inline(always)]
fn far_in(tests: Tests<'_>, accepted: &mut [bool]) {
    for c in 0..tests.n.len() / LANES {
        let (n, p, k, v) = tests.chunk(c);
        far_lanes(&n, &p, &k, &v, &mut accepted[c * LANES..(c + 1) * LANES]);
    }
}

/// Binomial draws `Binomial(n[i], p[i])` (`p <= 1/2`, `n p >= 10`) at attempt
/// `attempt[i]` of the stream `(key, replicate, node[i])`; the lengths whole
/// multiples of [`LANES`].
#[derive(Clone, Copy)]
pub(super) struct Draws<'a> {
    pub n: &'a [f64],
    pub p: &'a [f64],
    pub node: &'a [u32],
    pub attempt: &'a [u32],
    pub key: [u32; 2],
    pub replicate: u32,
}

impl Draws<'_> {
    /// Chunk `c`'s rows, shares and words.
    #[inline(always)]
    fn chunk(&self, c: usize) -> (F, F, [[u32; LANES]; 4]) {
        let at = c * LANES..(c + 1) * LANES;
        let (n, p) = (&self.n[at.clone()], &self.p[at.clone()]);
        let w = words(
            &self.node[at.clone()],
            &self.attempt[at],
            self.key,
            self.replicate,
        );
        (each!(|l| n[l]), each!(|l| p[l]), w)
    }
}

widest! {
    /// The squeeze of each draw's attempt: `SQUEEZED` (its count in
    /// `count`), `REJECTED`, or `OUTSIDE` (for [`candidates`]).
    pub(super) fn squeeze_attempts(draws: Draws<'_>, count: &mut [f64], state: &mut [u8]) => squeeze_in
}

/// Candidates `k` of draws `Binomial(n[i], p[i])` and the uniforms `v`
/// they are tested with; the lengths whole multiples of [`LANES`].
#[derive(Clone, Copy)]
pub(super) struct Tests<'a> {
    pub n: &'a [f64],
    pub p: &'a [f64],
    pub k: &'a [f64],
    pub v: &'a [f64],
}

impl Tests<'_> {
    /// Chunk `c`'s lanes.
    #[inline(always)]
    fn chunk(&self, c: usize) -> (F, F, F, F) {
        let at = c * LANES..(c + 1) * LANES;
        let (n, p, k, v) = (
            &self.n[at.clone()],
            &self.p[at.clone()],
            &self.k[at.clone()],
            &self.v[at],
        );
        (
            each!(|l| n[l]),
            each!(|l| p[l]),
            each!(|l| k[l]),
            each!(|l| v[l]),
        )
    }
}

widest! {
    /// The second step of draws whose first uniform fell outside the
    /// squeeze (`OUTSIDE` from [`squeeze_attempts`] at the same attempt): the
    /// candidate, its uniform, and `NEAR`, `FAR` (the test that decides:
    /// [`near_tests`], [`far_tests`]) or `REJECTED`.
    pub(super) fn candidates(draws: Draws<'_>, k: &mut [f64], v: &mut [f64], state: &mut [u8]) => candidates_in
}

widest! {
    /// Whether the test near the mode accepts each candidate.
    pub(super) fn near_tests(tests: Tests<'_>, accepted: &mut [bool]) => near_in
}

widest! {
    /// Whether the test far from the mode accepts each candidate.
    pub(super) fn far_tests(tests: Tests<'_>, accepted: &mut [bool]) => far_in
}
