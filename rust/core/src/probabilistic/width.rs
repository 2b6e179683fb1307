//! Per-row arithmetic by row width: the generic loop ([`Dyn`]), loops unrolled
//! for a width known at compile time ([`Fixed`], 2 to 16 columns) and, on
//! x86-64 with AVX-512, rows held in registers ([`Avx16`]). Every width gives
//! the same sums in the same order, so the kernel chosen does not change a bit.

use super::dtype::Prob;
#[cfg(target_arch = "x86_64")]
use crate::simd;

/// Eight f64 on a cache line of their own.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
pub(super) struct Align64(pub(super) [f64; 8]);

impl Align64 {
    pub(super) fn as_mut_slice(blocks: &mut [Self]) -> &mut [f64] {
        // SAFETY: `Align64` is `repr(C)` around `[f64; 8]` (size 64, no
        // padding), so the blocks are `8 * len` contiguous, initialised f64.
        unsafe {
            std::slice::from_raw_parts_mut(blocks.as_mut_ptr().cast::<f64>(), blocks.len() * 8)
        }
    }
}

/// Per-row arithmetic over a row of `k` probabilities. [`Fixed`] knows `k` at
/// compile time (2 to 16 columns), so its loops unroll into straight-line
/// SIMD code; [`Dyn`] serves every other width.
pub(super) trait Width: Copy + Send + Sync {
    fn k(self) -> usize;
    /// Distance between pCM rows in the chunk's accumulator (at least `k`);
    /// the `dst` slices the methods get are this long.
    #[inline(always)]
    fn stride(self) -> usize {
        self.k()
    }
    /// `(all entries in [0, 1], sum, sum of squares, max, first argmax)`.
    fn sweep<P: Prob>(self, row: &[P]) -> (bool, f64, f64, f64, usize);
    /// `dst += w * row` (`w = None`: `dst += row`).
    fn add_row<P: Prob>(self, dst: &mut [f64], row: &[P], w: Option<f64>);
    /// `dst += row` and `(all entries in [0, 1], row sum)`: the lean path.
    fn add_check<P: Prob>(self, dst: &mut [f64], row: &[P]) -> (bool, f64);
    /// Hint that the rows a little ahead of `row` will be read soon.
    #[inline(always)]
    fn prefetch<P: Prob>(self, _row: &[P]) {}
    /// [`Width::sweep`], then `dst += w * row`.
    #[inline(always)]
    fn sweep_add<P: Prob>(
        self,
        dst: &mut [f64],
        row: &[P],
        w: Option<f64>,
    ) -> (bool, f64, f64, f64, usize) {
        let out = self.sweep(row);
        self.add_row(dst, row, w);
        out
    }
}

/// How far ahead of the current row [`Avx16`] asks for data. The row loop
/// does enough work per cache line that the hardware prefetcher alone keeps
/// too few lines in flight for one core to reach the memory bandwidth.
#[cfg(target_arch = "x86_64")]
const PREFETCH_BYTES: usize = 4096;

/// Ask for the data [`PREFETCH_BYTES`] ahead of `row` (the register rows).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub(super) fn prefetch_ahead<P>(row: &[P]) {
    simd::prefetch(
        row.as_ptr()
            .wrapping_add(PREFETCH_BYTES / std::mem::size_of::<P>()),
    );
}

/// Rows of at most 16 columns in AVX-512 registers ([`simd`]): each row is
/// loaded once for every per-row quantity. Only built by the AVX-512 chunk kernel.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
pub(super) struct Avx16(pub(super) usize, pub(super) simd::Masks);

#[cfg(target_arch = "x86_64")]
impl Width for Avx16 {
    #[inline(always)]
    fn k(self) -> usize {
        self.0
    }
    #[inline(always)]
    fn stride(self) -> usize {
        16
    }
    #[inline(always)]
    fn prefetch<P: Prob>(self, row: &[P]) {
        prefetch_ahead(row);
    }
    #[inline(always)]
    fn sweep<P: Prob>(self, row: &[P]) -> (bool, f64, f64, f64, usize) {
        // SAFETY (all methods): `Avx16` is only used on CPUs with AVX-512F/DQ,
        // for rows of `k <= 16` values, with masks built for `k`.
        unsafe {
            let r = P::load16(row, self.1);
            let (sum, sumsq) = simd::sums(r);
            let (best, top) = max_first(r, row);
            (simd::in_range(r), sum, sumsq, best, top)
        }
    }
    #[inline(always)]
    fn add_row<P: Prob>(self, dst: &mut [f64], row: &[P], w: Option<f64>) {
        unsafe { simd::add_to(dst, P::load16(row, self.1), w) }
    }
    #[inline(always)]
    fn add_check<P: Prob>(self, dst: &mut [f64], row: &[P]) -> (bool, f64) {
        unsafe {
            let r = P::load16(row, self.1);
            simd::add_to(dst, r, None);
            (simd::in_range(r), simd::sums(r).0)
        }
    }
    #[inline(always)]
    fn sweep_add<P: Prob>(
        self,
        dst: &mut [f64],
        row: &[P],
        w: Option<f64>,
    ) -> (bool, f64, f64, f64, usize) {
        unsafe {
            let r = P::load16(row, self.1);
            simd::add_to(dst, r, w);
            let (sum, sumsq) = simd::sums(r);
            let (best, top) = max_first(r, row);
            (simd::in_range(r), sum, sumsq, best, top)
        }
    }
}

/// The maximum and first column of a row in AVX-512 registers. A maximum of
/// zero (a row of zeros, accepted when rows are not checked to sum to 1)
/// takes its sign from the row's first value, as every portable row kernel
/// does (they keep the first of equal values; the register maximum and the
/// zero padding need not), and its first column is 0 either way.
///
/// # Safety
/// AVX-512F/DQ available; `row` not empty.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn max_first<P: Prob>(r: simd::Row, row: &[P]) -> (f64, usize) {
    // SAFETY: the caller's CPU has AVX-512F/DQ.
    let (best, top) = unsafe { simd::max_first(r) };
    let first = row.first().map_or(best, |p| p.f());
    (if best == 0.0 { first } else { best }, top)
}

#[derive(Clone, Copy)]
pub(super) struct Dyn(pub(super) usize);

#[derive(Clone, Copy)]
pub(super) struct Fixed<const K: usize>;

#[inline(always)]
fn sweep_values(v: impl Iterator<Item = f64> + Clone) -> (bool, f64, f64, f64, usize) {
    let mut ok = true;
    let mut sum = 0.0;
    let mut sumsq = 0.0;
    let mut best = f64::NEG_INFINITY;
    for x in v.clone() {
        ok &= (0.0..=1.0).contains(&x);
        sum += x;
        sumsq += x * x;
        best = if x > best { x } else { best };
    }
    // First column holding the maximum (ties to the lowest index).
    let mut top = 0;
    let mut found = false;
    for (j, x) in v.enumerate() {
        let hit = !found & (x == best);
        top = if hit { j } else { top };
        found |= hit;
    }
    (ok, sum, sumsq, best, top)
}

/// Pairwise reduction of a fixed-size array (a fixed order, so deterministic).
#[inline(always)]
fn tree<const K: usize>(mut v: [f64; K], op: impl Fn(f64, f64) -> f64) -> f64 {
    let mut w = K;
    while w > 1 {
        let h = w / 2;
        let off = w - h;
        for i in 0..h {
            if let (Some(&a), Some(&b)) = (v.get(i), v.get(i + off)) {
                if let Some(x) = v.get_mut(i) {
                    *x = op(a, b);
                }
            }
        }
        w = off;
    }
    v.first().copied().unwrap_or(0.0)
}

impl Width for Dyn {
    #[inline(always)]
    fn k(self) -> usize {
        self.0
    }
    #[inline(always)]
    fn sweep<P: Prob>(self, row: &[P]) -> (bool, f64, f64, f64, usize) {
        sweep_values(row.iter().map(|p| p.f()))
    }
    #[inline(always)]
    fn add_row<P: Prob>(self, dst: &mut [f64], row: &[P], w: Option<f64>) {
        match w {
            Some(w) => dst.iter_mut().zip(row).for_each(|(d, p)| *d += w * p.f()),
            None => dst.iter_mut().zip(row).for_each(|(d, p)| *d += p.f()),
        }
    }
    #[inline(always)]
    fn add_check<P: Prob>(self, dst: &mut [f64], row: &[P]) -> (bool, f64) {
        let mut ok = true;
        let mut sum = 0.0;
        for (d, p) in dst.iter_mut().zip(row) {
            let v = p.f();
            ok &= (0.0..=1.0).contains(&v);
            *d += v;
            sum += v;
        }
        (ok, sum)
    }
}

impl<const K: usize> Width for Fixed<K> {
    #[inline(always)]
    fn k(self) -> usize {
        K
    }
    #[inline(always)]
    fn sweep<P: Prob>(self, row: &[P]) -> (bool, f64, f64, f64, usize) {
        let mut v = [0.0_f64; K];
        if let Ok(a) = <&[P; K]>::try_from(row) {
            for (d, p) in v.iter_mut().zip(a) {
                *d = p.f();
            }
        }
        // Branch-free, log-depth reductions: the loops unroll completely for a
        // compile-time K and map onto SIMD compares, adds and maxima.
        let bad = v
            .iter()
            .fold(0_u32, |a, x| a | u32::from(!(0.0..=1.0).contains(x)));
        let sum = tree(v, |a, b| a + b);
        let mut sq = v;
        sq.iter_mut().for_each(|x| *x *= *x);
        let sumsq = tree(sq, |a, b| a + b);
        let best = tree(v, |a, b| if b > a { b } else { a });
        let mut mask = 0_u32;
        for (j, x) in v.iter().enumerate() {
            mask |= u32::from(*x == best) << j;
        }
        let top = if mask == 0 {
            0
        } else {
            mask.trailing_zeros() as usize
        };
        (bad == 0, sum, sumsq, best, top)
    }
    #[inline(always)]
    fn add_row<P: Prob>(self, dst: &mut [f64], row: &[P], w: Option<f64>) {
        if let (Ok(d), Ok(a)) = (<&mut [f64; K]>::try_from(dst), <&[P; K]>::try_from(row)) {
            match w {
                Some(w) => d.iter_mut().zip(a).for_each(|(d, p)| *d += w * p.f()),
                None => d.iter_mut().zip(a).for_each(|(d, p)| *d += p.f()),
            }
        }
    }
    #[inline(always)]
    fn add_check<P: Prob>(self, dst: &mut [f64], row: &[P]) -> (bool, f64) {
        let mut v = [0.0_f64; K];
        if let Ok(a) = <&[P; K]>::try_from(row) {
            for (d, p) in v.iter_mut().zip(a) {
                *d = p.f();
            }
        }
        if let Ok(d) = <&mut [f64; K]>::try_from(dst) {
            for (d, x) in d.iter_mut().zip(&v) {
                *d += x;
            }
        }
        let bad = v
            .iter()
            .fold(0_u32, |a, x| a | u32::from(!(0.0..=1.0).contains(x)));
        (bad == 0, tree(v, |a, b| a + b))
    }
}
