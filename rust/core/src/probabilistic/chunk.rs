//! One chunk of rows, read once: the per-row validation, argmax, pCM row
//! update, hard count and calibration bin, then per block of rows the
//! vectorised entropy and log-loss sums. Chunks are independent; the caller
//! folds them in chunk order.

use super::accumulators::{bin_edges, bin_of, ProbAccumulators, ProbOptions, LOG_LOSS_EPS};
#[cfg(target_arch = "x86_64")]
use super::avx2_row::Avx2Row;
use super::dtype::Prob;
#[cfg(target_arch = "x86_64")]
use super::width::Avx16;
use super::width::{Align64, Dyn, Fixed, Width};
use crate::fastmath;
use crate::labels::Label;
use crate::ranking::packed_u32;
use crate::row_rule::row_sum_fits;
#[cfg(target_arch = "x86_64")]
use crate::simd;

/// First invalid input seen in a chunk.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Bad {
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

/// The invalid inputs a chunk (or a run of chunks, folded in order) met.
#[derive(Debug, Clone, Default, PartialEq)]
pub(super) struct Errors {
    /// The first bad probability, row sum or label.
    pub(super) bad: Option<Bad>,
    /// The first bad weight.
    pub(super) bad_weight: Option<Bad>,
    /// How many weights were bad.
    pub(super) bad_weights: usize,
}

impl Errors {
    #[inline(always)]
    fn weight(&mut self, row: usize, value: f64) {
        self.bad_weights += 1;
        self.bad_weight.get_or_insert(Bad::Weight { row, value });
    }

    #[inline(always)]
    fn row(&mut self, bad: Bad) {
        self.bad.get_or_insert(bad);
    }

    fn any(&self) -> bool {
        self.bad.is_some() || self.bad_weight.is_some()
    }

    /// Add the errors of the next chunk.
    pub(super) fn absorb(&mut self, next: Self) {
        self.bad_weights += next.bad_weights;
        if self.bad_weight.is_none() {
            self.bad_weight = next.bad_weight;
        }
        if self.bad.is_none() {
            self.bad = next.bad;
        }
    }
}

/// What one chunk returns.
pub(super) struct Part {
    pub(super) acc: ProbAccumulators,
    pub(super) errors: Errors,
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
    if opts.validate_rows && !row_sum_fits(sum, opts.atol) {
        return Some(Bad::RowSum { row: at, sum });
    }
    None
}

/// Where a chunk writes its rows' confidence and correctness: kept as they
/// are, or as the packed ranking keys of float32 confidences
/// ([`crate::ranking::packed_u32`]: the bits with correctness in bit 0).
pub(super) enum ConfOut<'a> {
    Kept(&'a mut [f64], &'a mut [bool]),
    Keys(&'a mut [u32]),
}

impl<'a> ConfOut<'a> {
    /// The same slots cut into pieces of `rows` rows.
    pub(super) fn pieces(self, rows: usize) -> Vec<ConfOut<'a>> {
        match self {
            ConfOut::Kept(cf, cr) => cf
                .chunks_mut(rows)
                .zip(cr.chunks_mut(rows))
                .map(|(a, b)| ConfOut::Kept(a, b))
                .collect(),
            ConfOut::Keys(ks) => ks.chunks_mut(rows).map(ConfOut::Keys).collect(),
        }
    }
}

/// Rows handled per block inside a chunk: the block's rows are read once for
/// the per-row work and again, while still in L1/L2, for the vectorised
/// entropy and log-loss sums.
const BLOCK: usize = 1024;

/// Inputs of one chunk.
pub(super) struct ChunkIn<'a, L, P> {
    pub(super) y: &'a [L],
    /// Row-major: the chunk's rows. Column-major: the whole matrix, whose
    /// columns are `col_stride` long.
    pub(super) proba: &'a [P],
    pub(super) col_stride: Option<usize>,
    pub(super) y_pred: Option<&'a [L]>,
    pub(super) w: Option<&'a [f64]>,
    pub(super) k: usize,
    pub(super) offset: usize,
}

/// Interleaved copies of the per-cell accumulators of a chunk.
const LANES: usize = 4;

/// The counts and bin sums of a chunk in `LANES` interleaved copies (row `r`
/// goes to copy `r % LANES`), folded in lane order at the end: consecutive
/// rows in the same cell (the diagonal, the top bin) then do not wait on each
/// other's read-modify-write through memory. Callers pass flat indices
/// (`lane * cells + cell`) computed with the width they know at compile time.
struct Lanes {
    hard: Vec<u32>,
    true_count: Vec<u64>,
    bin_weight: Vec<f64>,
    bin_confidence: Vec<f64>,
    bin_correct: Vec<f64>,
    bin_count: Vec<u64>,
}

impl Lanes {
    fn new(k: usize, n_bins: usize) -> Self {
        Self {
            hard: vec![0; LANES * k * k],
            true_count: vec![0; LANES * k],
            bin_weight: vec![0.0; LANES * n_bins],
            bin_confidence: vec![0.0; LANES * n_bins],
            bin_correct: vec![0.0; LANES * n_bins],
            bin_count: vec![0; LANES * n_bins],
        }
    }

    #[inline(always)]
    fn true_class(&mut self, at: usize) {
        if let Some(c) = self.true_count.get_mut(at) {
            *c += 1;
        }
    }

    #[inline(always)]
    fn hard(&mut self, at: usize) {
        if let Some(c) = self.hard.get_mut(at) {
            *c += 1;
        }
    }

    #[inline(always)]
    fn bin(&mut self, at: usize, w: f64, confidence: f64, correct: bool) {
        if let Some(x) = self.bin_weight.get_mut(at) {
            *x += w;
        }
        if let Some(x) = self.bin_confidence.get_mut(at) {
            *x += w * confidence;
        }
        if let Some(x) = self.bin_correct.get_mut(at) {
            *x += if correct { w } else { 0.0 };
        }
        if let Some(x) = self.bin_count.get_mut(at) {
            *x += 1;
        }
    }

    fn fold_into(&self, acc: &mut ProbAccumulators) {
        fold_lanes(&mut acc.hard_counts, &self.hard, |a, &b| *a += u64::from(b));
        fold_lanes(&mut acc.true_count, &self.true_count, |a, &b| *a += b);
        fold_lanes(&mut acc.bin_weight, &self.bin_weight, |a, &b| *a += b);
        fold_lanes(&mut acc.bin_confidence, &self.bin_confidence, |a, &b| {
            *a += b
        });
        fold_lanes(&mut acc.bin_correct, &self.bin_correct, |a, &b| *a += b);
        fold_lanes(&mut acc.bin_count, &self.bin_count, |a, &b| *a += b);
    }
}

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

/// The rows of block `b0..b1` as row-major values: a slice of the chunk's rows,
/// or (column-major input) gathered into `gathered`.
#[inline(always)]
fn block_rows<'a, L, P: Prob>(
    inp: &ChunkIn<'a, L, P>,
    k: usize,
    (b0, b1): (usize, usize),
    gathered: &'a mut [P],
) -> &'a [P] {
    match inp.col_stride {
        None => inp.proba.get(b0 * k..b1 * k).unwrap_or(&[]),
        Some(stride) => {
            let lo = inp.offset + b0;
            gather_rows(inp.proba, stride, lo..lo + (b1 - b0), k, gathered);
            gathered.get(..(b1 - b0) * k).unwrap_or(&[])
        }
    }
}

/// The log-loss and entropy sums of one block, vectorised over the block:
/// `-ln` of the clipped true-class probabilities `p_true` (1.0, i.e. 0, for
/// skipped rows) and `sum -p ln p` over the rows.
#[inline(always)]
fn block_sums<P: Prob>(
    acc: &mut ProbAccumulators,
    rows: &[P],
    k: usize,
    p_true: &[f64],
    ws: Option<&[f64]>,
    opts: &ProbOptions,
) {
    if opts.scores {
        acc.log_loss_sum += match ws {
            None if opts.portable => -fastmath::lane_sum(p_true, fastmath::ln),
            None => -fastmath::ln_sum(p_true),
            Some(w) => -p_true
                .iter()
                .zip(w)
                .map(|(&p, &wi)| wi * fastmath::ln(p))
                .sum::<f64>(),
        };
    }
    if opts.entropy {
        let h = |row: &[P]| {
            if opts.portable {
                fastmath::neg_xlogx_sum(row, P::f)
            } else {
                P::neg_xlogx_sum(row)
            }
        };
        acc.entropy_sum += match ws {
            None => h(rows),
            Some(w) => rows
                .chunks_exact(k)
                .zip(w)
                .map(|(row, &wi)| wi * h(row))
                .sum::<f64>(),
        };
    }
}

/// Move the lanes and the padded pCM rows into `acc`; with unit weights the
/// weight sums are the counts (exact below 2^53), derived here instead of
/// one dependent f64 add per row.
fn finish(acc: &mut ProbAccumulators, lanes: &Lanes, pcm: &[f64], stride: usize, weighted: bool) {
    lanes.fold_into(acc);
    let k = acc.k;
    for (dst, src) in acc.pcm.chunks_exact_mut(k).zip(pcm.chunks_exact(stride)) {
        dst.copy_from_slice(src.get(..k).unwrap_or(&[]));
    }
    if !weighted {
        #[allow(clippy::cast_precision_loss)]
        for (tw, &c) in acc.true_weight.iter_mut().zip(&acc.true_count) {
            *tw = c as f64;
        }
        #[allow(clippy::cast_precision_loss)]
        let rows = acc.true_count.iter().sum::<u64>() as f64;
        acc.weight_sum = rows;
    }
}

/// The lean pass of `prob_confusion_matrix` and `entropy_score`: pCM rows,
/// class counts, validation and (when asked) the entropy sum, without the
/// argmax, the scores or weights.
#[inline(always)]
fn lean_chunk<L: Label, P: Prob, W: Width>(
    width: W,
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
) -> Part {
    let k = width.k();
    let mut acc = ProbAccumulators::empty(k, 0, false);
    let mut errors = Errors::default();
    let mut lanes = Lanes::new(k, 0);
    let stride = width.stride();
    let mut pcm_blocks = vec![Align64([0.0; 8]); (k * stride).div_ceil(8)];
    let pcm = Align64::as_mut_slice(&mut pcm_blocks);
    let mut gathered = vec![
        P::default();
        if inp.col_stride.is_some() {
            BLOCK * k
        } else {
            0
        }
    ];
    let n = inp.y.len();
    let mut b0 = 0;
    while b0 < n {
        let b1 = (b0 + BLOCK).min(n);
        let rows = block_rows(inp, k, (b0, b1), &mut gathered);
        let ys = inp.y.get(b0..b1).unwrap_or(&[]);
        for (r, (row, yv)) in rows.chunks_exact(k).zip(ys).enumerate() {
            width.prefetch(row);
            let i = inp.offset + b0 + r;
            let t = yv.slot(k);
            if t == k {
                errors.row(Bad::Label {
                    arg: "y_true",
                    row: i,
                    value: yv.to_i64(),
                });
                continue;
            }
            lanes.true_class((r % LANES) * k + t);
            let (ok, sum) = match pcm.get_mut(t * stride..(t + 1) * stride) {
                Some(dst) => width.add_check(dst, row),
                None => (false, f64::NAN),
            };
            if let Some(problem) = row_problem(ok, sum, row, i, opts) {
                errors.row(problem);
            }
        }
        if opts.entropy && !errors.any() {
            block_sums(&mut acc, rows, k, &[], None, opts);
        }
        b0 = b1;
    }
    finish(&mut acc, &lanes, pcm, stride, false);
    Part { acc, errors }
}

/// Whether a chunk asks for nothing but pCM, class counts and validation
/// (no argmax, no weights): the rows take [`lean_chunk`].
#[inline(always)]
fn lean<L: Label, P: Prob>(inp: &ChunkIn<'_, L, P>, opts: &ProbOptions, kept: bool) -> bool {
    !opts.hard
        && !opts.scores
        && opts.n_bins == 0
        && !kept
        && inp.y_pred.is_none()
        && inp.w.is_none()
}

/// The row loop of one chunk for one row width.
#[inline(always)]
fn chunk_impl<L: Label, P: Prob, W: Width>(
    width: W,
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
    mut conf_out: Option<ConfOut<'_>>,
) -> Part {
    let k = width.k();
    let nb = opts.n_bins;
    let weighted = inp.w.is_some();
    if lean(inp, opts, conf_out.is_some()) {
        return lean_chunk(width, inp, opts);
    }
    let mut acc = ProbAccumulators::empty(k, nb, weighted);
    let mut errors = Errors::default();
    let mut lanes = Lanes::new(k, nb);
    // The pCM rows, `stride` apart: a SIMD width may pad them to whole,
    // cache-line-aligned vectors so that its row updates are plain loads and
    // stores (a masked store does not forward to the next row's load).
    let stride = width.stride();
    let mut pcm_blocks = vec![Align64([0.0; 8]); (k * stride).div_ceil(8)];
    let pcm = Align64::as_mut_slice(&mut pcm_blocks);
    let mut p_true = [0.0_f64; BLOCK];
    let mut gathered = vec![
        P::default();
        if inp.col_stride.is_some() {
            BLOCK * k
        } else {
            0
        }
    ];
    let edges = bin_edges(nb);

    let n = inp.y.len();
    let mut b0 = 0;
    while b0 < n {
        let b1 = (b0 + BLOCK).min(n);
        let rows = block_rows(inp, k, (b0, b1), &mut gathered);
        let ys = inp.y.get(b0..b1).unwrap_or(&[]);
        let ws = inp.w.and_then(|w| w.get(b0..b1));
        for (r, (row, yv)) in rows.chunks_exact(k).zip(ys).enumerate() {
            width.prefetch(row);
            let i = b0 + r;
            let at = inp.offset + i;
            if let Some(slot) = p_true.get_mut(r) {
                *slot = 1.0;
            }
            let wi = ws.and_then(|w| w.get(r).copied()).unwrap_or(1.0);
            if !(0.0..f64::INFINITY).contains(&wi) {
                errors.weight(at, wi);
                continue;
            }
            let t = yv.slot(k);
            if t == k {
                errors.row(Bad::Label {
                    arg: "y_true",
                    row: at,
                    value: yv.to_i64(),
                });
                continue;
            }
            let lane = r % LANES;
            lanes.true_class(lane * k + t);
            if weighted {
                if let Some(c) = acc.true_weight.get_mut(t) {
                    *c += wi;
                }
            }
            // Rows are added before they are checked: any bad row fails the pass.
            let (ok, sum, sumsq, best, top) = match pcm.get_mut(t * stride..(t + 1) * stride) {
                Some(d) => width.sweep_add(d, row, weighted.then_some(wi)),
                None => (false, f64::NAN, 0.0, 0.0, 0),
            };
            if let Some(problem) = row_problem(ok, sum, row, at, opts) {
                errors.row(problem);
                continue;
            }
            let pred = match inp.y_pred {
                Some(yp) => {
                    let v = yp.get(i).map_or(k, |v| v.slot(k));
                    if v == k {
                        let value = yp.get(i).map_or(-1, |v| v.to_i64());
                        errors.row(Bad::Label {
                            arg: "y_pred",
                            row: at,
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
                lanes.hard(lane * k * k + cell);
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
            if nb > 0 {
                lanes.bin(lane * nb + bin_of(best, &edges), wi, best, correct);
            }
            match conf_out.as_mut() {
                Some(ConfOut::Kept(cf, cr)) => {
                    if let (Some(c), Some(ok)) = (cf.get_mut(i), cr.get_mut(i)) {
                        *c = best;
                        *ok = correct;
                    }
                }
                Some(ConfOut::Keys(ks)) => {
                    if let Some(key) = ks.get_mut(i) {
                        // A checked row's top confidence lies in [0, 1]:
                        // always a key (u32::MAX, no key, is never written).
                        #[allow(clippy::cast_possible_truncation)]
                        let bits = (best as f32).to_bits();
                        *key = packed_u32(bits, correct).unwrap_or(u32::MAX);
                    }
                }
                None => {}
            }
        }
        if !errors.any() {
            block_sums(
                &mut acc,
                rows,
                k,
                p_true.get(..b1 - b0).unwrap_or(&[]),
                ws,
                opts,
            );
        }
        b0 = b1;
    }
    finish(&mut acc, &lanes, pcm, stride, weighted);
    Part { acc, errors }
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

/// Run `chunk_impl` with the row width known at compile time when it is small.
#[inline(always)]
fn chunk_by_width<L: Label, P: Prob>(
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
    conf_out: Option<ConfOut<'_>>,
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
    conf_out: Option<ConfOut<'_>>,
) -> Part {
    // Rows of 8 to 16 columns in vectors of four (`avx2_row`). 10^7 rows of
    // float32, `evaluate(ranking="off")`, best of seven on AMD Zen 3: ten
    // columns 472-484 -> 325-380 ms, eight 320-348 -> 277-285 ms; five and
    // six columns 5-10% slower than the unrolled row, which they keep.
    let k = inp.k;
    if k < 8 {
        return chunk_by_width(inp, opts, conf_out);
    }
    if let Some(w) = Avx2Row::<2>::new(k) {
        return chunk_impl(w, inp, opts, conf_out);
    }
    if let Some(w) = Avx2Row::<3>::new(k) {
        return chunk_impl(w, inp, opts, conf_out);
    }
    if let Some(w) = Avx2Row::<4>::new(k) {
        return chunk_impl(w, inp, opts, conf_out);
    }
    chunk_by_width(inp, opts, conf_out)
}

/// `chunk_by_width` compiled for AVX-512 (eight f64 lanes), chosen at run time.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512dq,avx512vl,avx512bw,avx2,fma")]
unsafe fn chunk_avx512<L: Label, P: Prob>(
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
    conf_out: Option<ConfOut<'_>>,
) -> Part {
    // Two columns checked and added, nothing else: the unrolled scalar row
    // (two loads, two adds) beats a row in a 16-lane register (masked loads,
    // a horizontal sum a row): 10^7 rows on one thread 56 -> 41-42 ms. The
    // same sums in the same order either way.
    if inp.k == 2 && lean(inp, opts, conf_out.is_some()) {
        return chunk_impl(Fixed::<2>, inp, opts, conf_out);
    }
    if inp.k <= 16 {
        return chunk_impl(Avx16(inp.k, simd::Masks::new(inp.k)), inp, opts, conf_out);
    }
    chunk_by_width(inp, opts, conf_out)
}

/// One chunk, with the fastest row kernel this CPU runs (`opts.portable`:
/// the portable one).
pub(super) fn chunk<L: Label, P: Prob>(
    inp: &ChunkIn<'_, L, P>,
    opts: &ProbOptions,
    conf_out: Option<ConfOut<'_>>,
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
