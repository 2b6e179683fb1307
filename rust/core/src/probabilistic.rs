//! The one pass over a probability matrix (docs/definitions.md §4, §6 and §7).
//!
//! [`evaluate_proba`] reads `y_true` (class codes `0..K-1`), the `N x K`
//! probability matrix (f32 or f64, column `j` = class `j`; row-major, or
//! column-major as a table's columns laid back to back, see [`ProbaMatrix`]) and the
//! optional predictions and weights once, validating as it goes, and fills
//! every accumulator the probabilistic and hard-label metrics need:
//! the hard confusion matrix of the top label (ties to the lowest column) or
//! of `y_pred`, the probabilistic confusion matrix, the entropy, Brier and
//! log-loss sums, the calibration bins and, on request, each row's top-label
//! confidence and correctness. All sums are f64 whatever the input dtype,
//! summed in row order inside fixed-size chunks and in chunk order across
//! them, so results are bit-identical at any thread count.

use rayon::prelude::*;

use crate::ensure;
use crate::error::{MetricError, Result};
use crate::fastmath;
use crate::labels::Label;
use crate::parallel::{Pool, CHECK_ROWS};
#[cfg(target_arch = "x86_64")]
use crate::simd;

/// A probability dtype the kernel reads.
pub trait Prob: Copy + Default + Send + Sync + 'static {
    /// The value as f64 (exact for f32).
    fn f(self) -> f64;
    /// `sum(-x ln x)` over `xs` (`0 ln 0 = 0`), in f64.
    fn neg_xlogx_sum(xs: &[Self]) -> f64;
    /// Load a row of at most 16 values into AVX-512 registers.
    ///
    /// # Safety
    /// As [`simd::load_f32`].
    #[cfg(target_arch = "x86_64")]
    unsafe fn load16(row: &[Self], m: simd::Masks) -> simd::Row;
}

impl Prob for f32 {
    #[inline(always)]
    fn f(self) -> f64 {
        f64::from(self)
    }
    #[inline]
    fn neg_xlogx_sum(xs: &[Self]) -> f64 {
        fastmath::neg_xlogx_sum_f32(xs)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load16(row: &[Self], m: simd::Masks) -> simd::Row {
        // SAFETY: forwarded to the caller.
        unsafe { simd::load_f32(row, m) }
    }
}

impl Prob for f64 {
    #[inline(always)]
    fn f(self) -> f64 {
        self
    }
    #[inline]
    fn neg_xlogx_sum(xs: &[Self]) -> f64 {
        fastmath::neg_xlogx_sum_f64(xs)
    }
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn load16(row: &[Self], m: simd::Masks) -> simd::Row {
        // SAFETY: forwarded to the caller.
        unsafe { simd::load_f64(row, m) }
    }
}

/// An `N x K` probability matrix as [`evaluate_proba`] reads it.
///
/// Row-major: row `i` is `values[i*K..(i+1)*K]` (numpy's C order).
/// Column-major: class `j` is `values[j*N..(j+1)*N]` (numpy's Fortran order,
/// or the K probability columns of a table copied back to back). The kernel
/// gathers column-major input into row blocks of `BLOCK` rows that stay in
/// L1, so both layouts give the same bits at the cost of one extra pass
/// through cache, instead of a strided copy of the whole matrix.
#[derive(Debug, Clone, Copy)]
pub struct ProbaMatrix<'a, P> {
    values: &'a [P],
    k: usize,
    column_major: bool,
}

impl<'a, P> ProbaMatrix<'a, P> {
    /// `values` holds whole rows of `k` probabilities one after another.
    #[must_use]
    pub fn row_major(values: &'a [P], k: usize) -> Self {
        Self {
            values,
            k,
            column_major: false,
        }
    }

    /// `values` holds `k` whole columns (one per class) one after another.
    #[must_use]
    pub fn column_major(values: &'a [P], k: usize) -> Self {
        Self {
            values,
            k,
            column_major: true,
        }
    }

    /// The number of classes (columns).
    #[must_use]
    pub fn k(&self) -> usize {
        self.k
    }

    /// Whether the columns are contiguous.
    #[must_use]
    pub fn is_column_major(&self) -> bool {
        self.column_major
    }
}

/// What [`evaluate_proba`] computes besides the two confusion matrices.
#[derive(Debug, Clone, Copy)]
pub struct ProbOptions {
    /// Check that each row sums to 1 within `atol`.
    pub validate_rows: bool,
    /// Row-sum tolerance (docs/definitions.md §1.5: `1e-6 * K`).
    pub atol: f64,
    /// Accumulate the entropy sum (one log per probability).
    pub entropy: bool,
    /// Accumulate Brier and log-loss sums.
    pub scores: bool,
    /// Number of equal-width calibration bins (0: none).
    pub n_bins: usize,
    /// Return each row's top-label confidence and correctness.
    pub keep_confidence: bool,
    /// Count the hard confusion matrix (top label or `y_pred`). Without it the
    /// pass skips the argmax: the lean path of `prob_confusion_matrix`.
    pub hard: bool,
    /// Use the portable code only, never the SIMD kernels chosen at run time
    /// (for tests and comparisons; the results agree to rounding).
    pub portable: bool,
}

impl Default for ProbOptions {
    fn default() -> Self {
        Self {
            validate_rows: true,
            atol: f64::NAN,
            entropy: true,
            scores: true,
            n_bins: 15,
            keep_confidence: false,
            hard: true,
            portable: false,
        }
    }
}

/// Log-loss clipping: f64 machine epsilon, as scikit-learn.
pub const LOG_LOSS_EPS: f64 = f64::EPSILON;

/// Everything the pass accumulates.
#[derive(Debug, Clone, PartialEq)]
pub struct ProbAccumulators {
    /// Number of classes (columns).
    pub k: usize,
    /// Hard confusion counts `k x k` (rows = true, columns = top label or `y_pred`).
    pub hard_counts: Vec<u64>,
    /// Weighted hard matrix when weights were given.
    pub hard_weighted: Option<Vec<f64>>,
    /// Probabilistic confusion matrix `k x k`: `pcm[r, h] = sum_{y_i = r} w_i p_ih`.
    pub pcm: Vec<f64>,
    /// `sum_i w_i H(p_i)` in nats.
    pub entropy_sum: f64,
    /// `sum_i w_i sum_j (p_ij - 1[y_i = j])^2`.
    pub brier_sum: f64,
    /// `sum_i w_i (-ln clip(p_{i, y_i}))`.
    pub log_loss_sum: f64,
    /// `sum_i w_i`.
    pub weight_sum: f64,
    /// Per calibration bin: total weight.
    pub bin_weight: Vec<f64>,
    /// Per bin: weighted sum of top-label confidences.
    pub bin_confidence: Vec<f64>,
    /// Per bin: weighted number of correct top labels.
    pub bin_correct: Vec<f64>,
    /// Per bin: number of rows.
    pub bin_count: Vec<u64>,
    /// Top-label confidence of each row (`keep_confidence`).
    pub confidence: Option<Vec<f64>>,
    /// Whether each row's top label is right (`keep_confidence`).
    pub correct: Option<Vec<bool>>,
    /// Rows per true class (always counted).
    pub true_count: Vec<u64>,
    /// Weight per true class (always summed).
    pub true_weight: Vec<f64>,
}

impl ProbAccumulators {
    fn empty(k: usize, bins: usize, weighted: bool) -> Self {
        Self {
            k,
            hard_counts: vec![0; k * k],
            hard_weighted: weighted.then(|| vec![0.0; k * k]),
            pcm: vec![0.0; k * k],
            entropy_sum: 0.0,
            brier_sum: 0.0,
            log_loss_sum: 0.0,
            weight_sum: 0.0,
            bin_weight: vec![0.0; bins],
            bin_confidence: vec![0.0; bins],
            bin_correct: vec![0.0; bins],
            bin_count: vec![0; bins],
            confidence: None,
            correct: None,
            true_count: vec![0; k],
            true_weight: vec![0.0; k],
        }
    }

    /// Add another accumulator (the next chunk, in order).
    fn absorb(&mut self, o: &Self) {
        add(&mut self.hard_counts, &o.hard_counts);
        if let (Some(a), Some(b)) = (self.hard_weighted.as_mut(), o.hard_weighted.as_ref()) {
            addf(a, b);
        }
        addf(&mut self.pcm, &o.pcm);
        self.entropy_sum += o.entropy_sum;
        self.brier_sum += o.brier_sum;
        self.log_loss_sum += o.log_loss_sum;
        self.weight_sum += o.weight_sum;
        addf(&mut self.bin_weight, &o.bin_weight);
        addf(&mut self.bin_confidence, &o.bin_confidence);
        addf(&mut self.bin_correct, &o.bin_correct);
        add(&mut self.bin_count, &o.bin_count);
        add(&mut self.true_count, &o.true_count);
        addf(&mut self.true_weight, &o.true_weight);
    }
}

fn add(a: &mut [u64], b: &[u64]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

fn addf(a: &mut [f64], b: &[f64]) {
    a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
}

/// The calibration bin (0-based) of a confidence: bin `m` (1-based) holds
/// `((m-1)/M, m/M]`, bin 1 also holds 0; edges are `m / M` in f64 (docs/definitions.md §7.3).
pub fn calibration_bin(conf: f64, n_bins: usize) -> usize {
    bin_of(conf, &bin_edges(n_bins))
}

/// The `M + 1` bin edges `m / M` (correctly rounded divisions, computed once).
#[allow(clippy::cast_precision_loss)]
pub fn bin_edges(n_bins: usize) -> Vec<f64> {
    (0..=n_bins).map(|m| m as f64 / n_bins as f64).collect()
}

/// [`calibration_bin`] with precomputed edges: a first guess from `conf * M`,
/// corrected by at most one step against the exact edges.
#[inline(always)]
#[allow(
    clippy::cast_possible_truncation,
    clippy::cast_sign_loss,
    clippy::cast_precision_loss
)]
fn bin_of(conf: f64, edges: &[f64]) -> usize {
    let n_bins = edges.len().saturating_sub(1).max(1);
    let mf = n_bins as f64;
    let mut m = (conf * mf).ceil().clamp(1.0, mf) as usize;
    let edge = |i: usize| edges.get(i).copied().unwrap_or(f64::INFINITY);
    if m > 1 && conf <= edge(m - 1) {
        m -= 1;
    } else if m < n_bins && conf > edge(m) {
        m += 1;
    }
    m - 1
}

/// First invalid input seen in a chunk.
#[derive(Debug, Clone, PartialEq)]
enum Bad {
    Proba {
        row: usize,
        col: usize,
        value: f64,
    },
    RowSum {
        row: usize,
        sum: f64,
    },
    Label {
        arg: &'static str,
        row: usize,
        value: i64,
    },
    Weight {
        row: usize,
        value: f64,
    },
}

struct Part {
    acc: ProbAccumulators,
    bad: Option<Bad>,
    bad_weight: Option<Bad>,
    bad_weights: usize,
}

/// The first entry of a row that is not a probability.
#[cold]
fn first_invalid<P: Prob>(row: &[P], at: usize) -> Bad {
    let (col, value) = row
        .iter()
        .enumerate()
        .map(|(j, p)| (j, p.f()))
        .find(|(_, v)| !(0.0..=1.0).contains(v))
        .unwrap_or((0, f64::NAN));
    Bad::Proba {
        row: at,
        col,
        value,
    }
}

/// What is wrong with a row, if anything: an entry outside [0, 1] (NaN and
/// infinities included) or, when rows are validated, a sum away from 1.
#[inline(always)]
fn row_problem<P: Prob>(
    ok: bool,
    sum: f64,
    row: &[P],
    at: usize,
    opts: &ProbOptions,
) -> Option<Bad> {
    if !ok {
        return Some(first_invalid(row, at));
    }
    if opts.validate_rows && (sum - 1.0).abs() > opts.atol {
        return Some(Bad::RowSum { row: at, sum });
    }
    None
}

/// Where a chunk writes its rows' confidence and correctness.
type ConfOut<'a> = (&'a mut [f64], &'a mut [bool]);

/// Rows handled per block inside a chunk: the block's rows are read once for
/// the per-row work and again, while still in L1/L2, for the vectorised
/// entropy and log-loss sums.
const BLOCK: usize = 1024;

/// Inputs of one chunk.
struct ChunkIn<'a, L, P> {
    y: &'a [L],
    /// Row-major: the chunk's rows. Column-major: the whole matrix, whose
    /// columns are `col_stride` long.
    proba: &'a [P],
    col_stride: Option<usize>,
    y_pred: Option<&'a [L]>,
    w: Option<&'a [f64]>,
    k: usize,
    offset: usize,
}

/// Eight f64 on a cache line of their own.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Align64([f64; 8]);

impl Align64 {
    fn as_mut_slice(blocks: &mut [Self]) -> &mut [f64] {
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
trait Width: Copy + Send + Sync {
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

/// Rows of at most 16 columns in AVX-512 registers ([`simd`]): each row is
/// loaded once for every per-row quantity. Only built by `chunk_avx512`.
#[cfg(target_arch = "x86_64")]
#[derive(Clone, Copy)]
struct Avx16(usize, simd::Masks);

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
        simd::prefetch(
            row.as_ptr()
                .wrapping_add(PREFETCH_BYTES / std::mem::size_of::<P>()),
        );
    }
    #[inline(always)]
    fn sweep<P: Prob>(self, row: &[P]) -> (bool, f64, f64, f64, usize) {
        // SAFETY (all methods): `Avx16` is only used on CPUs with AVX-512F/DQ,
        // for rows of `k <= 16` values, with masks built for `k`.
        unsafe {
            let r = P::load16(row, self.1);
            let (sum, sumsq) = simd::sums(r);
            let (best, top) = simd::max_first(r);
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
            let (best, top) = simd::max_first(r);
            (simd::in_range(r), sum, sumsq, best, top)
        }
    }
}

#[derive(Clone, Copy)]
struct Dyn(usize);

#[derive(Clone, Copy)]
struct Fixed<const K: usize>;

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

#[inline(always)]
#[allow(clippy::too_many_lines)]
fn chunk_impl<L: Label, P: Prob, W: Width>(
    width: W,
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
    mut conf_out: Option<(&mut [f64], &mut [bool])>,
) -> Part {
    let k = width.k();
    let mut acc = ProbAccumulators::empty(k, opts.n_bins, inp.w.is_some());
    let mut bad: Option<Bad> = None;
    let mut bad_weight: Option<Bad> = None;
    let mut bad_weights = 0;
    // Counts and bin sums go to LANES interleaved copies (row r to copy
    // r % LANES), folded in order at the end: consecutive rows in the same
    // cell (the diagonal, the top bin) then do not wait on each other's
    // read-modify-write through memory.
    let mut counts32 = vec![0_u32; LANES * k * k];
    let mut true_count = vec![0_u64; LANES * k];
    let nb = opts.n_bins;
    let mut bin_weight = vec![0.0_f64; LANES * nb];
    let mut bin_confidence = vec![0.0_f64; LANES * nb];
    let mut bin_correct = vec![0.0_f64; LANES * nb];
    let mut bin_count = vec![0_u64; LANES * nb];
    // The pCM rows, `stride` apart: a SIMD width may pad them to whole,
    // cache-line-aligned vectors so that its row updates are plain loads and
    // stores (a masked store does not forward to the next row's load).
    let stride = width.stride();
    let mut pcm_blocks = vec![Align64([0.0; 8]); (k * stride).div_ceil(8)];
    let pcm = Align64::as_mut_slice(&mut pcm_blocks);
    let mut p_true = [0.0_f64; BLOCK];
    let mut gathered = if inp.col_stride.is_some() {
        vec![P::default(); BLOCK * k]
    } else {
        Vec::new()
    };
    let edges = bin_edges(opts.n_bins);
    let weighted = inp.w.is_some();
    let n = inp.y.len();
    // Nothing but pCM, class counts and validation asked for: skip the argmax.
    let lean = !opts.hard
        && !opts.scores
        && opts.n_bins == 0
        && conf_out.is_none()
        && inp.y_pred.is_none()
        && inp.w.is_none();
    let mut b0 = 0;
    while b0 < n {
        let b1 = (b0 + BLOCK).min(n);
        let rows = match inp.col_stride {
            None => inp.proba.get(b0 * k..b1 * k).unwrap_or(&[]),
            Some(stride) => {
                let lo = inp.offset + b0;
                gather_rows(inp.proba, stride, lo..lo + (b1 - b0), k, &mut gathered);
                gathered.get(..(b1 - b0) * k).unwrap_or(&[])
            }
        };
        let ys = inp.y.get(b0..b1).unwrap_or(&[]);
        let ws = inp.w.and_then(|w| w.get(b0..b1));
        for (r, (row, yv)) in rows.chunks_exact(k).zip(ys).enumerate() {
            width.prefetch(row);
            let i = b0 + r;
            if let Some(slot) = p_true.get_mut(r) {
                *slot = 1.0;
            }
            let wi = ws.and_then(|w| w.get(r).copied()).unwrap_or(1.0);
            if !(0.0..f64::INFINITY).contains(&wi) {
                bad_weights += 1;
                bad_weight.get_or_insert(Bad::Weight {
                    row: inp.offset + i,
                    value: wi,
                });
                continue;
            }
            let t = yv.slot(k);
            if t == k {
                bad.get_or_insert(Bad::Label {
                    arg: "y_true",
                    row: inp.offset + i,
                    value: yv.to_i64(),
                });
                continue;
            }
            let lane = r % LANES;
            if let Some(c) = true_count.get_mut(lane * k + t) {
                *c += 1;
            }
            if weighted {
                if let Some(c) = acc.true_weight.get_mut(t) {
                    *c += wi;
                }
            }
            if lean {
                let (ok, sum) = match pcm.get_mut(t * stride..(t + 1) * stride) {
                    Some(dst) => width.add_check(dst, row),
                    None => (false, f64::NAN),
                };
                if let Some(problem) = row_problem(ok, sum, row, inp.offset + i, opts) {
                    bad.get_or_insert(problem);
                    continue;
                }
                if weighted {
                    acc.weight_sum += wi;
                }
                continue;
            }
            // Rows are added before they are checked: any bad row fails the pass.
            let (ok, sum, sumsq, best, top) = match pcm.get_mut(t * stride..(t + 1) * stride) {
                Some(dst) => width.sweep_add(dst, row, inp.w.is_some().then_some(wi)),
                None => (false, f64::NAN, 0.0, 0.0, 0),
            };
            if let Some(problem) = row_problem(ok, sum, row, inp.offset + i, opts) {
                bad.get_or_insert(problem);
                continue;
            }
            let pred = match inp.y_pred {
                Some(yp) => {
                    let v = yp.get(i).map_or(k, |v| v.slot(k));
                    if v == k {
                        let value = yp.get(i).map_or(-1, |v| v.to_i64());
                        bad.get_or_insert(Bad::Label {
                            arg: "y_pred",
                            row: inp.offset + i,
                            value,
                        });
                        continue;
                    }
                    v
                }
                None => top,
            };
            if opts.hard {
                let cell = t * k + pred;
                if let Some(c) = counts32.get_mut(lane * k * k + cell) {
                    *c += 1;
                }
                if let Some(hw) = acc.hard_weighted.as_mut().and_then(|h| h.get_mut(cell)) {
                    *hw += wi;
                }
            }
            if weighted {
                acc.weight_sum += wi;
            }
            let pt = row.get(t).map_or(0.0, |p| p.f());
            if opts.scores {
                let miss = 1.0 - pt;
                acc.brier_sum += wi * (sumsq - pt * pt + miss * miss);
                if let Some(slot) = p_true.get_mut(r) {
                    *slot = pt.clamp(LOG_LOSS_EPS, 1.0 - LOG_LOSS_EPS);
                }
            }
            let correct = top == t;
            if opts.n_bins > 0 {
                let b = lane * nb + bin_of(best, &edges);
                if let Some(x) = bin_weight.get_mut(b) {
                    *x += wi;
                }
                if let Some(x) = bin_confidence.get_mut(b) {
                    *x += wi * best;
                }
                if let Some(x) = bin_correct.get_mut(b) {
                    *x += if correct { wi } else { 0.0 };
                }
                if let Some(x) = bin_count.get_mut(b) {
                    *x += 1;
                }
            }
            if let Some((cf, cr)) = conf_out.as_mut() {
                if let Some(c) = cf.get_mut(i) {
                    *c = best;
                }
                if let Some(c) = cr.get_mut(i) {
                    *c = correct;
                }
            }
        }
        if bad.is_none() && bad_weight.is_none() {
            let len = b1 - b0;
            let pts = p_true.get(..len).unwrap_or(&[]);
            if opts.scores {
                // -ln of the clipped true-class probabilities (1.0, i.e. 0, for skipped rows).
                acc.log_loss_sum += match ws {
                    None if opts.portable => -fastmath::lane_sum(pts, fastmath::ln),
                    None => -fastmath::ln_sum(pts),
                    Some(w) => -pts
                        .iter()
                        .zip(w)
                        .map(|(&p, &wi)| wi * fastmath::ln(p))
                        .sum::<f64>(),
                };
            }
            if opts.entropy {
                acc.entropy_sum += match ws {
                    None if opts.portable => fastmath::neg_xlogx_sum(rows, P::f),
                    None => P::neg_xlogx_sum(rows),
                    Some(w) => rows
                        .chunks_exact(k)
                        .zip(w)
                        .map(|(row, &wi)| {
                            let h = if opts.portable {
                                fastmath::neg_xlogx_sum(row, P::f)
                            } else {
                                P::neg_xlogx_sum(row)
                            };
                            wi * h
                        })
                        .sum::<f64>(),
                };
            }
        }
        b0 = b1;
    }
    fold_lanes(&mut acc.hard_counts, &counts32, |a, &b| *a += u64::from(b));
    fold_lanes(&mut acc.true_count, &true_count, |a, &b| *a += b);
    fold_lanes(&mut acc.bin_weight, &bin_weight, |a, &b| *a += b);
    fold_lanes(&mut acc.bin_confidence, &bin_confidence, |a, &b| *a += b);
    fold_lanes(&mut acc.bin_correct, &bin_correct, |a, &b| *a += b);
    fold_lanes(&mut acc.bin_count, &bin_count, |a, &b| *a += b);
    for (dst, src) in acc.pcm.chunks_exact_mut(k).zip(pcm.chunks_exact(stride)) {
        dst.copy_from_slice(src.get(..k).unwrap_or(&[]));
    }
    if !weighted {
        // Unit weights: the sums are the counts (exact below 2^53), derived
        // here instead of one dependent f64 add per row.
        #[allow(clippy::cast_precision_loss)]
        for (tw, &c) in acc.true_weight.iter_mut().zip(&acc.true_count) {
            *tw = c as f64;
        }
        #[allow(clippy::cast_precision_loss)]
        let rows = acc.true_count.iter().sum::<u64>() as f64;
        acc.weight_sum = rows;
    }
    Part {
        acc,
        bad,
        bad_weight,
        bad_weights,
    }
}

/// Copy rows `range` of a column-major matrix (columns `stride` long) into
/// `out` as row-major rows of `k` values.
#[inline(always)]
fn gather_rows<P: Prob>(
    columns: &[P],
    stride: usize,
    range: std::ops::Range<usize>,
    k: usize,
    out: &mut [P],
) {
    if stride == 0 || k == 0 {
        return;
    }
    for (j, col) in columns.chunks_exact(stride).take(k).enumerate() {
        let src = col.get(range.clone()).unwrap_or(&[]);
        for (row, &v) in out.chunks_exact_mut(k).zip(src) {
            if let Some(slot) = row.get_mut(j) {
                *slot = v;
            }
        }
    }
}

/// Interleaved copies of the per-cell accumulators in [`chunk_impl`].
const LANES: usize = 4;

/// `dst[c] += lane_0[c] + ... ` over the `LANES` copies in `lanes`, in lane order.
fn fold_lanes<A, B>(dst: &mut [A], lanes: &[B], add: impl Fn(&mut A, &B)) {
    if dst.is_empty() {
        return;
    }
    for lane in lanes.chunks_exact(dst.len()) {
        for (d, v) in dst.iter_mut().zip(lane) {
            add(d, v);
        }
    }
}

/// Run `chunk_impl` with the row width known at compile time when it is small.
#[inline(always)]
fn chunk_by_width<L: Label, P: Prob>(
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
    conf_out: Option<(&mut [f64], &mut [bool])>,
) -> Part {
    macro_rules! widths {
        ($($k:literal)*) => {
            match inp.k {
                $($k => chunk_impl(Fixed::<$k>, inp, opts, conf_out),)*
                k => chunk_impl(Dyn(k), inp, opts, conf_out),
            }
        };
    }
    widths!(2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// `chunk_by_width` compiled for AVX2 + FMA (chosen at run time): the row,
/// entropy and log-loss loops then run in 256-bit lanes. Rust never contracts
/// `a * b + c` into an FMA on its own, so both versions give identical bits.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn chunk_avx2<L: Label, P: Prob>(
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
    conf_out: Option<(&mut [f64], &mut [bool])>,
) -> Part {
    chunk_by_width(inp, opts, conf_out)
}

/// `chunk_by_width` compiled for AVX-512 (eight f64 lanes), chosen at run time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
unsafe fn chunk_avx512<L: Label, P: Prob>(
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
    conf_out: Option<(&mut [f64], &mut [bool])>,
) -> Part {
    if inp.k <= 16 {
        return chunk_impl(Avx16(inp.k, simd::Masks::new(inp.k)), inp, opts, conf_out);
    }
    chunk_by_width(inp, opts, conf_out)
}

fn chunk<L: Label, P: Prob>(
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
    conf_out: Option<(&mut [f64], &mut [bool])>,
) -> Part {
    if opts.portable {
        return chunk_by_width(inp, opts, conf_out);
    }
    #[cfg(target_arch = "x86_64")]
    {
        if std::arch::is_x86_feature_detected!("avx512f")
            && std::arch::is_x86_feature_detected!("avx512dq")
            && std::arch::is_x86_feature_detected!("avx512vl")
            && std::arch::is_x86_feature_detected!("avx512bw")
        {
            // SAFETY: the CPU supports the features `chunk_avx512` is compiled for.
            return unsafe { chunk_avx512(inp, opts, conf_out) };
        }
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma")
        {
            // SAFETY: the CPU supports the features `chunk_avx2` is compiled for.
            return unsafe { chunk_avx2(inp, opts, conf_out) };
        }
    }
    chunk_impl(Dyn(inp.k), inp, opts, conf_out)
}

/// Rows per chunk: fixed by `k` only (never by the thread count), large
/// enough that merging the `2 k^2` partial sums is cheap next to the chunk.
fn chunk_rows(k: usize) -> usize {
    (1 << 15).max(16 * k)
}

/// Read the probability matrix once and fill every accumulator (module docs).
///
/// `y_true` (and `y_pred`) hold class codes `0..K-1`, `K = proba.k()`.
///
/// # Errors
/// Shape and length problems; `InvalidProbability` for a NaN, infinite,
/// negative or > 1 entry; `RowSum` for a row not summing to 1 within `atol`;
/// `LabelOutOfRange` for a code outside `0..K`; weight errors as for counting.
#[allow(clippy::too_many_lines)]
pub fn evaluate_proba<L: Label, P: Prob>(
    y_true: &[L],
    proba: ProbaMatrix<'_, P>,
    y_pred: Option<&[L]>,
    sample_weight: Option<&[f64]>,
    opts: &ProbOptions,
    pool: &Pool,
) -> Result<ProbAccumulators> {
    let n = y_true.len();
    let k = proba.k;
    let col_stride = proba.column_major.then_some(n);
    let proba = proba.values;
    ensure!(n > 0, MetricError::Empty { arg: "y_true" });
    ensure!(
        k > 0 && proba.len() == n * k,
        MetricError::Shape {
            arg: "y_proba",
            detail: format!("{} values for {n} rows of {k} columns", proba.len()),
        }
    );
    if let Some(yp) = y_pred {
        ensure!(
            yp.len() == n,
            MetricError::LengthMismatch {
                a: "y_pred",
                a_len: yp.len(),
                b: "y_true",
                b_len: n
            }
        );
    }
    if let Some(w) = sample_weight {
        ensure!(
            w.len() == n,
            MetricError::LengthMismatch {
                a: "sample_weight",
                a_len: w.len(),
                b: "y_true",
                b_len: n
            }
        );
    }
    #[allow(clippy::cast_precision_loss)]
    let atol = if opts.atol.is_nan() {
        1e-6 * k as f64
    } else {
        opts.atol
    };
    let opts = ProbOptions { atol, ..*opts };
    let rows = chunk_rows(k);
    let n_chunks = n.div_ceil(rows);
    let mut conf = opts.keep_confidence.then(|| vec![0.0_f64; n]);
    let mut corr = opts.keep_confidence.then(|| vec![false; n]);
    let mut total = ProbAccumulators::empty(k, opts.n_bins, sample_weight.is_some());
    let mut first_bad: Option<Bad> = None;
    let mut first_bad_weight: Option<Bad> = None;
    let mut bad_weights = 0;
    let run_chunk = |c: usize, out: Option<(&mut [f64], &mut [bool])>| {
        let lo = c * rows;
        let hi = (lo + rows).min(n);
        let inp = ChunkIn {
            y: y_true.get(lo..hi).unwrap_or(&[]),
            proba: match col_stride {
                None => proba.get(lo * k..hi * k).unwrap_or(&[]),
                Some(_) => proba,
            },
            col_stride,
            y_pred: y_pred.and_then(|y| y.get(lo..hi)),
            w: sample_weight.and_then(|w| w.get(lo..hi)),
            k,
            offset: lo,
        };
        chunk(&inp, &opts, out)
    };
    // Chunks run a group at a time and are folded in chunk order; a group's
    // partial tables are bounded to about 64 MiB, and its rows to a few
    // times CHECK_ROWS, so that the stop flag is looked at often.
    let per_part = 16 * k * k + 64;
    let group = if pool.parallel_for(n) {
        ((64 << 20) / per_part)
            .min((4 * CHECK_ROWS) / rows)
            .max(2 * pool.threads())
    } else {
        1
    };
    let mut start = 0;
    while start < n_chunks {
        pool.check()?;
        let end = (start + group).min(n_chunks);
        let lo = start * rows;
        let hi = (end * rows).min(n);
        let parts: Vec<Part> = match (conf.as_mut(), corr.as_mut()) {
            (Some(cf), Some(cr)) => {
                let cf = cf.get_mut(lo..hi).unwrap_or_default();
                let cr = cr.get_mut(lo..hi).unwrap_or_default();
                let pieces: Vec<(usize, ConfOut<'_>)> = cf
                    .chunks_mut(rows)
                    .zip(cr.chunks_mut(rows))
                    .enumerate()
                    .map(|(i, p)| (start + i, p))
                    .collect();
                if group > 1 {
                    pool.install(|| {
                        pieces
                            .into_par_iter()
                            .map(|(c, o)| run_chunk(c, Some(o)))
                            .collect()
                    })
                } else {
                    pieces
                        .into_iter()
                        .map(|(c, o)| run_chunk(c, Some(o)))
                        .collect()
                }
            }
            _ => {
                if group > 1 {
                    pool.install(|| {
                        (start..end)
                            .into_par_iter()
                            .map(|c| run_chunk(c, None))
                            .collect()
                    })
                } else {
                    (start..end).map(|c| run_chunk(c, None)).collect()
                }
            }
        };
        for part in parts {
            bad_weights += part.bad_weights;
            if first_bad_weight.is_none() {
                first_bad_weight = part.bad_weight;
            }
            if first_bad.is_none() {
                first_bad = part.bad;
            }
            total.absorb(&part.acc);
        }
        start = end;
    }
    // Weight errors first (the numpy backend checks weights before anything else).
    match first_bad_weight.or(first_bad) {
        Some(Bad::Weight { row, value }) => {
            return Err(MetricError::InvalidWeight {
                index: row,
                value,
                count: bad_weights,
            });
        }
        Some(Bad::Proba { row, col, value }) => {
            return Err(MetricError::InvalidProbability { row, col, value });
        }
        Some(Bad::RowSum { row, sum }) => return Err(MetricError::RowSum { row, sum, atol }),
        Some(Bad::Label { arg, row, value }) => {
            return Err(MetricError::LabelOutOfRange { arg, row, value, k });
        }
        None => {}
    }
    let sums = [
        total.weight_sum,
        total.entropy_sum,
        total.brier_sum,
        total.log_loss_sum,
    ];
    ensure!(
        sums.iter().all(|x| x.is_finite()),
        MetricError::WeightRange {
            what: "a weighted sum of the probability pass"
        }
    );
    ensure!(total.weight_sum > 0.0, MetricError::ZeroWeightSum);
    total.confidence = conf;
    total.correct = corr;
    Ok(total)
}
