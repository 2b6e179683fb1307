//! The Poisson bootstrap of the ranking metrics: the rows are sorted once by
//! score, then every replicate is a weighted walk over the same sorted rows,
//! each row weighted by its Poisson(1) draw (the stream of
//! [`crate::random`], keyed by the row's global index, so the draws are those
//! of [`super::sums::replicate_sums`] for the same rows and seed). The walk goes
//! from the highest score down, tie group by tie group: AUROC (ties count
//! half) and average precision (scikit-learn's step sum) of every replicate.

use super::sums::RowIds;
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::Pool;
use crate::random::row_weights;
use crate::ranking::{check_scores, sorted_rows, Score};
use rayon::prelude::*;

/// The ranking metrics of every replicate, and its positive and negative
/// weights (a metric is NaN in a replicate without both).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RankingReplicates {
    pub auroc: Vec<f64>,
    pub average_precision: Vec<f64>,
    pub w_pos: Vec<f64>,
    pub w_neg: Vec<f64>,
}

/// Sorted rows a thread walks at a time for all its replicates.
const TILE: usize = 4096;

/// The running sums of the walks of the four replicates of one Philox block,
/// lane by lane (so the compiler keeps each in one vector register).
#[derive(Debug, Clone, Copy, Default)]
struct Walks {
    tp: [f64; 4],
    fp: [f64; 4],
    gp: [f64; 4],
    gn: [f64; 4],
    auc: [f64; 4],
    ap: [f64; 4],
}

impl Walks {
    /// Close the open tie group: its negatives rank below the positives above
    /// it and tie with its own; its positives add a precision step.
    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // six arrays side by side, lane by lane
    fn close(&mut self) {
        for j in 0..4 {
            self.auc[j] += self.gn[j] * (self.tp[j] + 0.5 * self.gp[j]);
            self.tp[j] += self.gp[j];
            self.fp[j] += self.gn[j];
            // A select, not a branch: the division runs on every lane.
            let step = self.gp[j] * self.tp[j] / (self.tp[j] + self.fp[j]);
            self.ap[j] += if self.gp[j] > 0.0 { step } else { 0.0 };
            self.gp[j] = 0.0;
            self.gn[j] = 0.0;
        }
    }

    /// Add one row: `x` its draws in the four replicates, `p` and `q` its
    /// weight on its side and 0 on the other.
    #[inline(always)]
    fn add(&mut self, x: [f64; 4], p: f64, q: f64) {
        for ((gp, gn), x) in self.gp.iter_mut().zip(&mut self.gn).zip(x) {
            *gp += x * p;
            *gn += x * q;
        }
    }

    fn finish(mut self) -> [(f64, f64, f64, f64); 4] {
        self.close();
        std::array::from_fn(|j| {
            let (p, n) = (self.tp[j], self.fp[j]);
            if p > 0.0 && n > 0.0 {
                (self.auc[j] / (p * n), self.ap[j] / p, p, n)
            } else {
                (f64::NAN, f64::NAN, p, n)
            }
        })
    }
}

/// The sorted rows and what every thread needs to walk its replicates.
struct RankJob<'a> {
    order: &'a [(u64, usize)],
    positive: &'a [bool],
    weight: Option<&'a [f64]>,
    rows: RowIds<'a>,
    seed: u64,
    blocks: usize,
    per: usize,
}

impl RankJob<'_> {
    /// The walks of replicate blocks `first ..`. Built for the baseline
    /// target on purpose: AVX2 and AVX-512 builds of this loop (dispatched at
    /// run time, as the sums kernel is) measured 2.0x and 1.6x slower on the
    /// reference machine, where the scalar build skips the precision step's
    /// division in the replicates whose group has no positive.
    fn run(&self, first: usize, pool: &Pool) -> Result<Vec<Walks>> {
        let last = (first + self.per).min(self.blocks);
        let mut state = vec![Walks::default(); last.saturating_sub(first)];
        let mut ids: Vec<u64> = Vec::with_capacity(TILE);
        let mut opens: Vec<bool> = Vec::with_capacity(TILE);
        let mut is_pos: Vec<f64> = Vec::with_capacity(TILE);
        let mut is_neg: Vec<f64> = Vec::with_capacity(TILE);
        let mut w: [Vec<u8>; 4] = Default::default();
        for (t0, tile) in self.order.chunks(TILE).enumerate() {
            pool.check()?;
            ids.clear();
            opens.clear();
            is_pos.clear();
            is_neg.clear();
            for (t, &(key, row)) in tile.iter().enumerate() {
                ids.push(match self.rows {
                    RowIds::From(first_row) => first_row.wrapping_add(row as u64),
                    RowIds::Listed(listed) => listed[row],
                });
                let at = t0 * TILE + t;
                opens.push(at > 0 && self.order[at - 1].0 != key);
                let p = f64::from(u8::from(self.positive[row]));
                let sw = self.weight.map_or(1.0, |w| w[row]);
                is_pos.push(sw * p);
                is_neg.push(sw - sw * p);
            }
            for (b, walks) in state.iter_mut().enumerate() {
                #[allow(clippy::cast_possible_truncation)]
                row_weights(self.seed, (first + b) as u32, &ids, &mut w);
                for (t, ((&opens, &p), &q)) in opens.iter().zip(&is_pos).zip(&is_neg).enumerate() {
                    if opens {
                        walks.close();
                    }
                    let x = [w[0][t], w[1][t], w[2][t], w[3][t]].map(f64::from);
                    walks.add(x, p, q);
                }
            }
        }
        Ok(state)
    }
}

/// AUROC and average precision of `n_resamples` Poisson-bootstrap replicates
/// of `(positive, score)`, each row's draw times its `weight` when given.
///
/// # Errors
/// Lengths that differ, no rows, a score that is not finite, or
/// [`MetricError::Interrupted`].
pub fn replicate_ranking<X: Score>(
    positive: &[bool],
    score: &[X],
    weight: Option<&[f64]>,
    rows: RowIds<'_>,
    seed: u64,
    n_resamples: usize,
    pool: &Pool,
) -> Result<RankingReplicates> {
    check_scores(positive, score)?;
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
    let blocks = n_resamples.div_ceil(4);
    let threads = pool.threads().clamp(1, blocks.max(1));
    let per = blocks.div_ceil(threads).max(1);
    let job = RankJob {
        order: &order,
        positive,
        weight,
        rows,
        seed,
        blocks,
        per,
    };
    let walk_blocks = |first: usize| job.run(first, pool);
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
    for walks in parts.into_iter().flatten() {
        for (auroc, ap, p, q) in walks.finish() {
            if out.auroc.len() == n_resamples {
                break;
            }
            out.auroc.push(auroc);
            out.average_precision.push(ap);
            out.w_pos.push(p);
            out.w_neg.push(q);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::random::weight_of as weight;

    #[test]
    fn replicates_equal_a_weighted_pair_count_on_any_thread_count() {
        let n = 3000;
        let score: Vec<f64> = (0..n).map(|i| ((i * 7919) % 97) as f64 / 97.0).collect();
        let positive: Vec<bool> = (0..n).map(|i| (i * 31 + i / 7) % 3 == 0).collect();
        let got = replicate_ranking(
            &positive,
            &score,
            None,
            RowIds::From(10),
            3,
            7,
            &Pool::sequential(),
        )
        .unwrap();
        for b in 0..7 {
            let w: Vec<f64> = (0..n).map(|i| weight(3, 10 + i as u64, b)).collect();
            let (mut num, mut p, mut q) = (0.0, 0.0, 0.0);
            for i in 0..n {
                if positive[i] {
                    p += w[i];
                } else {
                    q += w[i];
                    continue;
                }
                for j in 0..n {
                    if !positive[j] {
                        let pair = w[i] * w[j];
                        if score[i] > score[j] {
                            num += pair;
                        } else if score[i] == score[j] {
                            num += 0.5 * pair;
                        }
                    }
                }
            }
            let want = num / (p * q);
            assert!(
                (got.auroc[b] - want).abs() < 1e-12,
                "{b}: {} against {want}",
                got.auroc[b]
            );
        }
        for threads in [2, 3, 5, 8] {
            let other = replicate_ranking(
                &positive,
                &score,
                None,
                RowIds::From(10),
                3,
                7,
                &Pool::new(threads),
            )
            .unwrap();
            assert_eq!(other, got, "{threads} threads");
        }
    }
}
