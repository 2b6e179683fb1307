//! The Poisson bootstrap of the ranking metrics: the rows are sorted once by
//! score, then every replicate is a weighted walk over the same sorted rows,
//! each row weighted by its Poisson(1) draw (the stream of
//! [`crate::random`], keyed by the row's global index, so the draws are those
//! of [`super::sums::replicate_sums`] for the same rows and seed). The walk goes
//! from the highest score down, tie group by tie group: AUROC (ties count
//! half), the tied share of the pairs, and with the curves the average
//! precision (scikit-learn's step sum) and the area under the risk-coverage
//! curve of every replicate.

use super::sums::RowIds;
use super::sums::{draw16, Isa};
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::Pool;
use crate::random::REPLICATES_PER_DRAW;
use crate::ranking::{check_scores, sorted_rows, Score};
use rayon::prelude::*;

/// The ranking metrics of every replicate, and its positive and negative
/// weights (a metric is NaN in a replicate without both).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankingReplicates {
    pub auroc: Vec<f64>,
    pub average_precision: Vec<f64>,
    /// The share of the replicate's (positive, negative) pair weight that is tied.
    pub tied_share: Vec<f64>,
    /// The area under the replicate's risk-coverage curve (accepting from the
    /// highest score down, the risk the share of negatives accepted).
    pub aurc: Vec<f64>,
    pub w_pos: Vec<f64>,
    pub w_neg: Vec<f64>,
    /// The rows themselves, unweighted (zeros with weights): (positive, negative) pairs
    /// ranked in order and tied, and the positive and negative rows — the AUROC of the
    /// data, from the same sort.
    pub pairs: [u128; 4],
}

/// Sorted rows a thread walks at a time for all its replicates.
const TILE: usize = 4096;

/// Replicates walked side by side (one draw of [`crate::random::row_weights16`] per row).
const R: usize = REPLICATES_PER_DRAW;

/// The running sums of the walks of sixteen replicates, lane by lane (so the
/// compiler keeps each in two vector registers).
#[derive(Debug, Clone, Copy)]
struct Walks {
    tp: [f64; R],
    fp: [f64; R],
    gp: [f64; R],
    gn: [f64; R],
    auc: [f64; R],
    ap: [f64; R],
    tied: [f64; R],
    risk: [f64; R],
    /// Whether the tie group `gp`, `gn` holds rows.
    open: bool,
}

impl Default for Walks {
    fn default() -> Self {
        Walks {
            tp: [0.0; R],
            fp: [0.0; R],
            gp: [0.0; R],
            gn: [0.0; R],
            auc: [0.0; R],
            ap: [0.0; R],
            tied: [0.0; R],
            risk: [0.0; R],
            open: false,
        }
    }
}

impl Walks {
    /// Close the open tie group: its negatives rank below the positives above
    /// it and tie with its own; with `AP`, its positives add a precision step.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // six arrays side by side, lane by lane
    fn close<const CURVES: bool>(&mut self) {
        for j in 0..R {
            self.auc[j] += self.gn[j] * (self.tp[j] + 0.5 * self.gp[j]);
            self.tied[j] += self.gn[j] * self.gp[j];
            self.tp[j] += self.gp[j];
            self.fp[j] += self.gn[j];
            if CURVES {
                // Selects, not branches: the division runs on every lane.
                let drawn = self.gp[j] + self.gn[j];
                let precision = self.tp[j] / (self.tp[j] + self.fp[j]);
                self.ap[j] += if self.gp[j] > 0.0 {
                    self.gp[j] * precision
                } else {
                    0.0
                };
                self.risk[j] += if drawn > 0.0 {
                    drawn * (1.0 - precision)
                } else {
                    0.0
                };
            }
            self.gp[j] = 0.0;
            self.gn[j] = 0.0;
        }
        self.open = false;
    }

    /// A run of rows each alone in its tie group (the usual case of
    /// continuous scores), with no group open: each row added and closed at
    /// once, the same sums as `add` then `close` since one of `p`, `q` is 0
    /// (its tie term vanishes). Eight lanes at a time: the sums of eight
    /// replicates then stay in registers through the run, where the sixteen
    /// lanes' (with the idle group sums) spilled two of them to the stack and
    /// every row waited on a store and a reload. The same operations on each
    /// lane in the same order, so the same bits.
    #[inline(always)]
    fn singles<const CURVES: bool>(&mut self, x: &[[u8; R]], p: &[f64], q: &[f64]) {
        self.singles_half::<0, CURVES>(x, p, q);
        self.singles_half::<{ R / 2 }, CURVES>(x, p, q);
    }

    /// [`Walks::singles`] on lanes `O .. O + R / 2`.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // the sums side by side, lane by lane
    fn singles_half<const O: usize, const CURVES: bool>(
        &mut self,
        x: &[[u8; R]],
        p: &[f64],
        q: &[f64],
    ) {
        const H: usize = R / 2;
        let take = |a: &[f64; R]| -> [f64; H] { std::array::from_fn(|j| a[O + j]) };
        let (mut tp, mut fp, mut auc) = (take(&self.tp), take(&self.fp), take(&self.auc));
        let (mut ap, mut risk) = (take(&self.ap), take(&self.risk));
        for ((x, &p), &q) in x.iter().zip(p).zip(q) {
            let x: [f64; H] = std::array::from_fn(|j| f64::from(x[O + j]));
            for j in 0..H {
                let (pos, neg) = (x[j] * p, x[j] * q);
                auc[j] += neg * tp[j];
                tp[j] += pos;
                fp[j] += neg;
                if CURVES {
                    let precision = tp[j] / (tp[j] + fp[j]);
                    ap[j] += if pos > 0.0 { pos * precision } else { 0.0 };
                    risk[j] += if pos + neg > 0.0 {
                        (pos + neg) * (1.0 - precision)
                    } else {
                        0.0
                    };
                }
            }
        }
        for j in 0..H {
            self.tp[O + j] = tp[j];
            self.fp[O + j] = fp[j];
            self.auc[O + j] = auc[j];
            // Without the curves their sums stay out of the loop's registers.
            if CURVES {
                self.ap[O + j] = ap[j];
                self.risk[O + j] = risk[j];
            }
        }
    }

    /// [`Walks::singles`] of unweighted rows without the curves, counted in
    /// integers: each row's weight on its side is its draw, an integer of at
    /// most 12 ([`crate::random::POISSON1_THRESHOLDS`]), so within a run of
    /// at most [`TILE`] rows the positives' running weight stays below
    /// 12 x 4096 = 49,152, a negative's product with it below 589,824 and
    /// their sum below 2.5 x 10^9: 32-bit lanes, one multiplication a lane
    /// and no chain of floating-point additions (the eight-lane `f64` walk
    /// waited on its running sums: one addition's latency a row). The run's
    /// sums then join the replicate's as `auc + (tp fp' + auc')`, `tp + tp'`,
    /// `fp + fp'`: every term an integer, so while the AUROC's sum stays below
    /// 2^53 (some 10^8 rows) it is the float walk's value exactly, whatever
    /// the order of the additions.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // the sums side by side, lane by lane
    fn singles_counted(&mut self, x: &[[u8; R]], flags: &[u8]) {
        debug_assert!(x.len() <= TILE);
        let (mut tp, mut fp, mut auc) = ([0_u32; R], [0_u32; R], [0_u32; R]);
        for (x, &f) in x.iter().zip(flags) {
            // All ones on a positive row, else 0.
            let on = u32::from(f & POSITIVE).wrapping_neg();
            for j in 0..R {
                let w = u32::from(x[j]);
                let (pos, neg) = (w & on, w & !on);
                auc[j] += neg * tp[j];
                tp[j] += pos;
                fp[j] += neg;
            }
        }
        for j in 0..R {
            self.auc[j] += self.tp[j] * f64::from(fp[j]) + f64::from(auc[j]);
            self.tp[j] += f64::from(tp[j]);
            self.fp[j] += f64::from(fp[j]);
        }
    }

    /// Add one row: `x` its draws in the sixteen replicates, `p` and `q` its
    /// weight on its side and 0 on the other.
    #[inline(always)]
    fn add(&mut self, x: &[u8; R], p: f64, q: f64) {
        for j in 0..R {
            let x = f64::from(x[j]);
            self.gp[j] += x * p;
            self.gn[j] += x * q;
        }
        self.open = true;
    }

    /// Each replicate's `(auroc, average precision, tied share, aurc, w_pos, w_neg)`.
    fn finish<const CURVES: bool>(mut self) -> [Finished; R] {
        self.close::<CURVES>();
        std::array::from_fn(|j| {
            let (p, n) = (self.tp[j], self.fp[j]);
            let ap = if CURVES { self.ap[j] / p } else { f64::NAN };
            let aurc = if CURVES && p + n > 0.0 {
                self.risk[j] / (p + n)
            } else {
                f64::NAN
            };
            if p > 0.0 && n > 0.0 {
                let pairs = p * n;
                (self.auc[j] / pairs, ap, self.tied[j] / pairs, aurc, p, n)
            } else {
                (f64::NAN, f64::NAN, f64::NAN, aurc, p, n)
            }
        })
    }
}

/// One replicate's metrics and side weights ([`Walks::finish`]).
type Finished = (f64, f64, f64, f64, f64, f64);

/// A sorted row's flags: positive, first of its tie group, alone in it.
const POSITIVE: u8 = 1;
const OPENS: u8 = 2;
const ALONE: u8 = 4;

/// The sorted rows and what every thread needs to walk its replicates: the
/// rows' flags and weights in sorted order, gathered once for all threads (a
/// gather by row index misses the cache on every row).
struct RankJob<'a> {
    order: &'a [(u64, usize)],
    flags: &'a [u8],
    weight: Option<&'a [f64]>,
    rows: RowIds<'a>,
    seed: u64,
    groups: usize,
    per: usize,
}

impl RankJob<'_> {
    /// The walks of replicate groups `first ..`, with the widest vectors this
    /// CPU has.
    fn run<const CURVES: bool>(&self, first: usize, pool: &Pool) -> Result<Vec<Walks>> {
        #[cfg(target_arch = "x86_64")]
        {
            if std::arch::is_x86_feature_detected!("avx512f")
                && std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
                && std::arch::is_x86_feature_detected!("avx512dq")
            {
                // SAFETY: the CPU has the features `run_avx512` is compiled for.
                return unsafe { self.run_avx512::<CURVES>(first, pool) };
            }
            if std::arch::is_x86_feature_detected!("avx2") {
                // SAFETY: the CPU has the features `run_avx2` is compiled for.
                return unsafe { self.run_avx2::<CURVES>(first, pool) };
            }
        }
        self.run_portable::<CURVES>(first, pool, Isa::Portable)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
    unsafe fn run_avx512<const CURVES: bool>(
        &self,
        first: usize,
        pool: &Pool,
    ) -> Result<Vec<Walks>> {
        self.run_portable::<CURVES>(first, pool, Isa::Avx512)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    unsafe fn run_avx2<const CURVES: bool>(&self, first: usize, pool: &Pool) -> Result<Vec<Walks>> {
        self.run_portable::<CURVES>(first, pool, Isa::Avx2)
    }

    /// The walk itself, inlined into each of the above: no multiply-add is
    /// fused, so every instruction set gives the same bits.
    #[inline(always)]
    fn run_portable<const CURVES: bool>(
        &self,
        first: usize,
        pool: &Pool,
        isa: Isa,
    ) -> Result<Vec<Walks>> {
        let last = (first + self.per).min(self.groups);
        let mut state = vec![Walks::default(); last.saturating_sub(first)];
        let mut ids: Vec<u64> = Vec::with_capacity(TILE);
        let mut opens: Vec<bool> = Vec::with_capacity(TILE);
        let mut is_pos: Vec<f64> = Vec::with_capacity(TILE);
        let mut is_neg: Vec<f64> = Vec::with_capacity(TILE);
        let mut drawn: Vec<[u8; R]> = Vec::with_capacity(TILE);
        // The tile's runs of rows alone in their tie group, or not: (first, end, alone).
        let mut runs: Vec<(usize, usize, bool)> = Vec::with_capacity(TILE);
        // Unweighted rows without the curves: the runs of rows alone in integers.
        let counted = !CURVES && self.weight.is_none();
        for (t0, tile) in self.order.chunks(TILE).enumerate() {
            pool.check()?;
            ids.clear();
            opens.clear();
            is_pos.clear();
            is_neg.clear();
            let at = t0 * TILE;
            runs.clear();
            for (t, &f) in self.flags[at..at + tile.len()].iter().enumerate() {
                let alone = f & ALONE != 0;
                match runs.last_mut() {
                    Some(run) if run.2 == alone => run.1 = t + 1,
                    _ => runs.push((t, t + 1, alone)),
                }
            }
            for (t, &(_, row)) in tile.iter().enumerate() {
                ids.push(match self.rows {
                    RowIds::From(first_row) => first_row.wrapping_add(row as u64),
                    RowIds::Listed(listed) => listed[row],
                });
                let f = self.flags[at + t];
                opens.push(f & OPENS != 0);
                let p = f64::from(f & POSITIVE);
                let sw = self.weight.map_or(1.0, |w| w[at + t]);
                is_pos.push(sw * p);
                is_neg.push(sw - sw * p);
            }
            for (b, walks) in state.iter_mut().enumerate() {
                #[allow(clippy::cast_possible_truncation)]
                draw16(isa, self.seed, (first + b) as u32, &ids, &mut drawn);
                // In place, not a copy: a copy's sums went to registers, and
                // a run's loop over eight lanes then spilled its own.
                let w = walks;
                for &(from, to, alone) in &runs {
                    if alone {
                        // A row alone opens its group: only the run's first
                        // can find one open.
                        if w.open {
                            w.close::<CURVES>();
                        }
                        if counted {
                            w.singles_counted(&drawn[from..to], &self.flags[at + from..at + to]);
                        } else {
                            w.singles::<CURVES>(
                                &drawn[from..to],
                                &is_pos[from..to],
                                &is_neg[from..to],
                            );
                        }
                        continue;
                    }
                    // Tie groups: their sums in registers through the run.
                    let mut c = *w;
                    for t in from..to {
                        if opens[t] && c.open {
                            c.close::<CURVES>();
                        }
                        c.add(&drawn[t], is_pos[t], is_neg[t]);
                    }
                    *w = c;
                }
            }
        }
        Ok(state)
    }
}

/// The pairs ranked in order and tied, positives and negatives of unweighted
/// rows, from their sorted flags (u128: exact for any number of rows).
fn pair_counts(flags: &[u8]) -> [u128; 4] {
    let (mut tp, mut fp, mut gp, mut gn, mut ordered, mut tied) =
        (0u128, 0u128, 0u128, 0u128, 0u128, 0u128);
    for &f in flags {
        if f & OPENS != 0 {
            ordered += gn * tp;
            tied += gn * gp;
            tp += gp;
            fp += gn;
            (gp, gn) = (0, 0);
        }
        if f & POSITIVE != 0 {
            gp += 1;
        } else {
            gn += 1;
        }
    }
    ordered += gn * tp;
    tied += gn * gp;
    [ordered, tied, tp + gp, fp + gn]
}

/// Each sorted row's flags (and weight), gathered by the threads side by side.
fn sorted_flags(
    order: &[(u64, usize)],
    positive: &[bool],
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<(Vec<u8>, Option<Vec<f64>>)> {
    let n = order.len();
    let mut flags = try_filled(n, 0u8, "the sorted rows' flags")?;
    let chunk = n.div_ceil(pool.threads().max(1)).max(1 << 14);
    pool.install(|| {
        flags
            .par_chunks_mut(chunk)
            .enumerate()
            .for_each(|(c, out)| {
                for (t, f) in out.iter_mut().enumerate() {
                    let at = c * chunk + t;
                    let (key, row) = order[at];
                    let starts = at == 0 || order[at - 1].0 != key;
                    let ends = order.get(at + 1).is_none_or(|next| next.0 != key);
                    *f = (u8::from(positive[row]) * POSITIVE)
                        | (u8::from(starts) * OPENS)
                        | (u8::from(starts && ends) * ALONE);
                }
            });
    });
    let sorted_weight = match weight {
        None => None,
        Some(w) => {
            let mut out = try_filled(n, 0.0f64, "the sorted rows' weights")?;
            pool.install(|| {
                out.par_chunks_mut(chunk).enumerate().for_each(|(c, dst)| {
                    for (t, d) in dst.iter_mut().enumerate() {
                        *d = w[order[c * chunk + t].1];
                    }
                });
            });
            Some(out)
        }
    };
    Ok((flags, sorted_weight))
}

/// AUROC, tied share, average precision and AURC of `n_resamples`
/// Poisson-bootstrap replicates of `(positive, score)`, each row's draw times
/// its `weight` when given; the last two only with `curves` (their precision
/// steps divide on every tie group, the dearest part of the walk), NaN
/// otherwise.
///
/// # Errors
/// Lengths that differ, no rows, a score that is not finite, or
/// [`MetricError::Interrupted`].
#[allow(clippy::too_many_arguments)]
pub fn replicate_ranking<X: Score>(
    positive: &[bool],
    score: &[X],
    weight: Option<&[f64]>,
    rows: RowIds<'_>,
    seed: u64,
    n_resamples: usize,
    curves: bool,
    pool: &Pool,
) -> Result<RankingReplicates> {
    check_scores(positive, score, pool)?;
    let n = score.len();
    if let Some(w) = weight {
        crate::ranking::check_weights(w, n, "y_score")?;
    }
    if let RowIds::Listed(ids) = rows {
        ensure!(
            ids.len() == n,
            MetricError::Shape {
                arg: "rows",
                detail: format!("{} row indices for {n} rows", ids.len()),
            }
        );
    }
    // Highest score first.
    let mut order = sorted_rows(score, pool)?;
    order.reverse();
    let (flags, sorted_weight) = sorted_flags(&order, positive, weight, pool)?;
    let groups = n_resamples.div_ceil(R);
    let threads = pool.threads().clamp(1, groups.max(1));
    let per = groups.div_ceil(threads).max(1);
    let job = RankJob {
        order: &order,
        flags: &flags,
        weight: sorted_weight.as_deref(),
        rows,
        seed,
        groups,
        per,
    };
    let walk_blocks = |first: usize| {
        if curves {
            job.run::<true>(first, pool)
        } else {
            job.run::<false>(first, pool)
        }
    };
    let parts: Vec<Vec<Walks>> = if threads == 1 {
        vec![walk_blocks(0)?]
    } else {
        pool.install(|| {
            (0..threads)
                .into_par_iter()
                .map(|i| walk_blocks(i * per))
                .collect::<Result<Vec<_>>>()
        })?
    };
    let mut out = RankingReplicates::default();
    if weight.is_none() {
        out.pairs = pair_counts(&flags);
    }
    for walks in parts.into_iter().flatten() {
        let finished = if curves {
            walks.finish::<true>()
        } else {
            walks.finish::<false>()
        };
        for (auroc, ap, tied, aurc, p, q) in finished {
            if out.auroc.len() == n_resamples {
                break;
            }
            out.auroc.push(auroc);
            out.average_precision.push(ap);
            out.tied_share.push(tied);
            out.aurc.push(aurc);
            out.w_pos.push(p);
            out.w_neg.push(q);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests;
