//! The ranking metrics of replicates drawn on the (group, side) cells of
//! unweighted rows with few distinct scores (the multinomial scheme): each
//! replicate is one pass over its tie groups' drawn weights, highest score
//! first, with the sums of the row walk ([`super::ranking`]).

use super::multinomial::{check_replicates, Drawing, Space};
#[cfg(doc)]
use super::multinomial_draws;
use super::poisson_cells::BLOCK;
use super::ranking::RankingReplicates;
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::Pool;
use rayon::prelude::*;
use std::sync::Mutex;

/// The sums of one replicate's walk.
#[derive(Default)]
struct Walk {
    tp: f64,
    fp: f64,
    auc: f64,
    ap: f64,
    tied: f64,
    risk: f64,
}

impl Walk {
    /// One tie group of `gp` positive and `gn` negative weight; without
    /// `CURVES` the precision (a division a group, the walk's bottleneck
    /// at 10^5 groups) and the sums of AP and AURC are left out.
    #[inline]
    fn group<const CURVES: bool>(&mut self, gp: f64, gn: f64) {
        self.auc += gn * (self.tp + 0.5 * gp);
        self.tied += gp * gn;
        self.tp += gp;
        self.fp += gn;
        let drawn = gp + gn;
        if CURVES && drawn > 0.0 {
            let precision = self.tp / (self.tp + self.fp);
            if gp > 0.0 {
                self.ap += gp * precision;
            }
            self.risk += drawn * (1.0 - precision);
        }
    }
}

/// The checks of the listed cells: at least one, increasing, below `2 groups`.
fn check_cells(cells: &[usize], groups: usize) -> Result<()> {
    ensure!(
        !cells.is_empty(),
        MetricError::InvalidValue {
            arg: "cells",
            detail: "list at least one cell".into(),
        }
    );
    ensure!(
        cells.windows(2).all(|w| w[0] < w[1])
            && cells.last().is_none_or(|&c| c < groups.saturating_mul(2)),
        MetricError::InvalidValue {
            arg: "cells",
            detail: format!("the cells must increase and stay below {}", 2 * groups),
        }
    );
    Ok(())
}

/// One replicate's metrics: AUROC, average precision, tied share, AURC and
/// the positive and negative weights.
type Metrics = [f64; 6];

/// The metrics of one replicate's `row` of drawn weights (one per listed
/// cell; the positive cells are those before `split`); AP and AURC only
/// with `curves` (else NaN).
fn walk_row(row: &[f64], cells: &[usize], split: usize, groups: usize, curves: bool) -> Metrics {
    walk_rows::<1>([row], cells, split, groups, curves)[0]
}

/// [`walk_row`] of `R` replicates' rows side by side: one merge of the cell
/// lists steps `R` walks, whose sums (each a chain of additions, one per
/// group) then advance together instead of one after another. Each walk
/// takes its own steps in its own order: the same bits as alone.
fn walk_rows<const R: usize>(
    rows: [&[f64]; R],
    cells: &[usize],
    split: usize,
    groups: usize,
    curves: bool,
) -> [Metrics; R] {
    if curves {
        walk_rows_with::<true, R>(rows, cells, split, groups)
    } else {
        walk_rows_with::<false, R>(rows, cells, split, groups)
    }
}

/// [`walk_rows`] with `curves` known at compile time.
fn walk_rows_with<const CURVES: bool, const R: usize>(
    rows: [&[f64]; R],
    cells: &[usize],
    split: usize,
    groups: usize,
) -> [Metrics; R] {
    let m = cells.len();
    let (mut i, mut j) = (0, split);
    let mut walks: [Walk; R] = std::array::from_fn(|_| Walk::default());
    // Only the cells' places: a side without a cell in the group reads 0.
    let at = |row: &[f64], k: Option<usize>| k.map_or(0.0, |k| row[k]);
    while i < split || j < m {
        let pos_group = cells.get(i).filter(|_| i < split).copied();
        let neg_group = cells.get(j).map(|&c| c - groups);
        let (p, n) = match (pos_group, neg_group) {
            (Some(a), Some(b)) if a == b => {
                i += 1;
                j += 1;
                (Some(i - 1), Some(j - 1))
            }
            (Some(a), Some(b)) if a < b => {
                i += 1;
                (Some(i - 1), None)
            }
            (Some(_), None) => {
                i += 1;
                (Some(i - 1), None)
            }
            _ => {
                j += 1;
                (None, Some(j - 1))
            }
        };
        for (walk, row) in walks.iter_mut().zip(rows) {
            walk.group::<CURVES>(at(row, p), at(row, n));
        }
    }
    walks.map(|walk| walk.metrics::<CURVES>())
}

impl Walk {
    /// The metrics of a finished walk.
    fn metrics<const CURVES: bool>(&self) -> Metrics {
        let (p, n) = (self.tp, self.fp);
        let both = p > 0.0 && n > 0.0;
        let pairs = p * n;
        let total = p + n;
        [
            if both { self.auc / pairs } else { f64::NAN },
            if CURVES && both {
                self.ap / p
            } else {
                f64::NAN
            },
            if both { self.tied / pairs } else { f64::NAN },
            if CURVES && total > 0.0 {
                self.risk / total
            } else {
                f64::NAN
            },
            p,
            n,
        ]
    }
}

/// A job's working space of [`draw_cell_walks`], handed back to the spare
/// spaces when the job ends.
struct Lent<'a> {
    item: Option<(Space, Vec<f64>)>,
    spare: &'a Mutex<Vec<(Space, Vec<f64>)>>,
}

impl Drop for Lent<'_> {
    fn drop(&mut self) {
        if let (Some(item), Ok(mut spare)) = (self.item.take(), self.spare.lock()) {
            spare.push(item);
        }
    }
}

/// The replicates' metrics gathered into their columns.
fn gather(metrics: &[Metrics]) -> RankingReplicates {
    let column = |k: usize| metrics.iter().map(|r| r[k]).collect();
    RankingReplicates {
        auroc: column(0),
        average_precision: column(1),
        tied_share: column(2),
        aurc: column(3),
        w_pos: column(4),
        w_neg: column(5),
        pairs: [0; 4],
    }
}

/// The ranking metrics of each replicate of drawn cell weights: `drawn` holds
/// `replicates` rows of one weight per listed cell, `cells` the listed cells
/// in increasing order, cell `c < groups` the positives of tie group `c` and
/// cell `groups + c` its negatives, the groups from the highest score down.
/// The AUROC, tied share and weights of every replicate; the average
/// precision and the AURC when `curves` (else NaN); the pair metrics NaN in a
/// replicate without both sides, the AURC in one without weight. The rows'
/// own pair counts are left 0 (the walk of the groups gives them).
///
/// # Errors
/// [`MetricError::InvalidValue`] when no cell is listed, `drawn` is not
/// whole rows of the cells, or the cells do not increase within `2 groups`.
pub fn walk_cell_weights(
    drawn: &[f64],
    cells: &[usize],
    groups: usize,
    curves: bool,
) -> Result<RankingReplicates> {
    let m = cells.len();
    ensure!(
        m > 0 && drawn.len().is_multiple_of(m),
        MetricError::InvalidValue {
            arg: "drawn",
            detail: format!(
                "{} weights are not whole rows of {m} cells (at least one)",
                drawn.len()
            ),
        }
    );
    check_cells(cells, groups)?;
    // The positive cells come first; the negatives start at `split`.
    let split = cells.partition_point(|&c| c < groups);
    let metrics: Vec<Metrics> = drawn
        .chunks_exact(m)
        .map(|row| walk_row(row, cells, split, groups, curves))
        .collect();
    Ok(gather(&metrics))
}

/// Replicates `first .. first + count` of [`walk_cell_weights`] drawn on the
/// spot: `counts` holds the rows of each listed cell, and each replicate's
/// cell weights are the multinomial draw of all the rows that
/// [`multinomial_draws`] gives it (one stratum), walked as soon as drawn.
/// The same metrics as the two calls, bit for bit, without the `count x
/// cells` draws in memory, the call's draws laid out once for all the
/// replicates, side by side on the pool's threads.
///
/// # Errors
/// As [`walk_cell_weights`] and [`multinomial_draws`], and
/// [`MetricError::InvalidValue`] when `counts` and `cells` differ in length.
pub fn draw_cell_walks(
    counts: &[u64],
    cells: &[usize],
    groups: usize,
    draws: (u64, usize, u64),
    curves: bool,
    pool: &Pool,
) -> Result<RankingReplicates> {
    let (first, count, seed) = draws;
    let m = cells.len();
    ensure!(
        counts.len() == m,
        MetricError::InvalidValue {
            arg: "counts",
            detail: format!(
                "{} counts for {m} cells: give one count per listed cell",
                counts.len()
            ),
        }
    );
    check_cells(cells, groups)?;
    check_replicates(first, count, "count")?;
    let drawing = Drawing::new(counts, &[m], seed)?;
    let split = cells.partition_point(|&c| c < groups);
    let mut metrics = try_filled(count, [0.0; 6], "the replicates' metrics")?;
    // A block of replicates at a time (their tables swept once), each
    // walked as soon as drawn.
    let walk = |lent: &mut Lent<'_>, (c, outs): (usize, &mut [Metrics])| {
        pool.check()?;
        let (space, rows) = lent
            .item
            .get_or_insert_with(|| (drawing.space(), Vec::new()));
        if rows.is_empty() {
            *rows = try_filled(BLOCK * m, 0.0, "the replicates' draws")?;
        }
        let rows = &mut rows[..outs.len() * m];
        drawing.draw_block((first + (c * BLOCK) as u64) as u32, rows, m, space);
        // Four replicates a walk while four are left, then one at a time.
        let mut outs = outs.chunks_exact_mut(4);
        let mut drawn = rows.chunks_exact(4 * m);
        for (out, four) in (&mut outs).zip(&mut drawn) {
            let four: [&[f64]; 4] = std::array::from_fn(|r| &four[r * m..(r + 1) * m]);
            out.copy_from_slice(&walk_rows(four, cells, split, groups, curves));
        }
        let rest = drawn.remainder().chunks_exact(m);
        for (out, row) in outs.into_remainder().iter_mut().zip(rest) {
            *out = walk_row(row, cells, split, groups, curves);
        }
        Ok(())
    };
    // Rayon starts a job for each stretch it splits off (several a call),
    // each with its working space: the spaces go back to `spare` when their
    // job ends and the next job takes one, instead of each job zeroing
    // megabytes of its own.
    let spare = Mutex::new(Vec::new());
    let init = || Lent {
        item: spare.lock().ok().and_then(|mut s| s.pop()),
        spare: &spare,
    };
    if pool.threads() > 1 && count > BLOCK {
        pool.install(|| {
            metrics
                .par_chunks_mut(BLOCK)
                .enumerate()
                .try_for_each_init(init, walk)
        })?;
    } else {
        let mut space = init();
        metrics
            .chunks_mut(BLOCK)
            .enumerate()
            .try_for_each(|item| walk(&mut space, item))?;
    }
    Ok(gather(&metrics))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The metrics of one replicate from the weights of every group, walked
    /// as the definitions say (plain loops, no merge of the cell lists).
    fn naive(gp: &[f64], gn: &[f64]) -> [f64; 4] {
        let (p, n): (f64, f64) = (gp.iter().sum(), gn.iter().sum());
        let mut auc = 0.0;
        let mut tied = 0.0;
        for (a, &pa) in gp.iter().enumerate() {
            for (b, &nb) in gn.iter().enumerate() {
                // Group a above group b when a < b (highest score first).
                if a < b {
                    auc += pa * nb;
                } else if a == b {
                    auc += 0.5 * pa * nb;
                    tied += pa * nb;
                }
            }
        }
        let (mut ap, mut risk) = (0.0, 0.0);
        for (g, (&pg, &ng)) in gp.iter().zip(gn).enumerate() {
            let tp: f64 = gp[..=g].iter().sum();
            let fp: f64 = gn[..=g].iter().sum();
            if pg + ng > 0.0 {
                ap += pg * tp / (tp + fp);
                risk += (pg + ng) * fp / (tp + fp);
            }
        }
        [auc / (p * n), tied / (p * n), ap / p, risk / (p + n)]
    }

    #[test]
    fn each_replicate_walks_its_groups() {
        let groups = 5;
        // Group 1 has no positives, group 3 no negatives, group 4 no rows.
        let cells = [0, 2, 3, groups, groups + 1, groups + 2];
        #[rustfmt::skip]
        let drawn = [
            3.0, 1.0, 2.0, 4.0, 0.0, 5.0,
            0.0, 2.0, 0.0, 1.0, 3.0, 0.0,
            1.0, 1.0, 1.0, 1.0, 1.0, 1.0,
        ];
        let got = walk_cell_weights(&drawn, &cells, groups, true).unwrap();
        for (r, row) in drawn.chunks(6).enumerate() {
            let mut gp = vec![0.0; groups];
            let mut gn = vec![0.0; groups];
            for (&c, &w) in cells.iter().zip(row) {
                if c < groups {
                    gp[c] = w;
                } else {
                    gn[c - groups] = w;
                }
            }
            let want = naive(&gp, &gn);
            let have = [
                got.auroc[r],
                got.tied_share[r],
                got.average_precision[r],
                got.aurc[r],
            ];
            for (h, w) in have.iter().zip(want) {
                assert!((h - w).abs() <= 1e-15, "replicate {r}: {h} against {w}");
            }
            assert_eq!(
                (got.w_pos[r], got.w_neg[r]),
                (gp.iter().sum(), gn.iter().sum())
            );
        }
        let flat = walk_cell_weights(&drawn, &cells, groups, false).unwrap();
        assert_eq!(flat.auroc, got.auroc);
        assert!(flat.average_precision.iter().all(|v| v.is_nan()));
        assert!(flat.aurc.iter().all(|v| v.is_nan()));
        assert_eq!(flat.tied_share, got.tied_share);
        assert_eq!((flat.w_pos, flat.w_neg), (got.w_pos, got.w_neg));
        // A replicate without negatives: the pair metrics are NaN, the AURC is 0.
        let alone = walk_cell_weights(&[2.0, 0.0], &[0, groups], groups, true).unwrap();
        assert!(alone.auroc[0].is_nan() && alone.tied_share[0].is_nan());
        assert!(alone.aurc[0].abs() < 1e-300);
        assert!(walk_cell_weights(&drawn[..5], &cells, groups, true).is_err());
        assert!(walk_cell_weights(&[], &[], groups, true).is_err());
        assert!(walk_cell_weights(&drawn, &[0, 2, 3, 5, 6, 10], groups, true).is_err());
        assert!(walk_cell_weights(&drawn, &[0, 3, 2, 5, 6, 7], groups, true).is_err());
    }

    /// The bits of every field of two replicate sets.
    fn bits(r: &RankingReplicates) -> Vec<Vec<u64>> {
        [
            &r.auroc,
            &r.average_precision,
            &r.tied_share,
            &r.aurc,
            &r.w_pos,
            &r.w_neg,
        ]
        .iter()
        .map(|c| c.iter().map(|v| v.to_bits()).collect())
        .collect()
    }

    #[test]
    fn drawing_and_walking_at_once_equals_the_two_steps() {
        use super::super::multinomial_draws;
        // Rows of many groups: a stratum drawn by Poisson draws and completion
        // (2,000 occupied cells over 10^5 rows), and a small one on the tree.
        let groups = 1_500;
        let mut cells = Vec::new();
        let mut counts = Vec::new();
        let mut state = 12_345_u64;
        for c in 0..2 * groups {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1);
            let count = (state >> 58) * u64::from(!state.is_multiple_of(3));
            if count > 0 {
                cells.push(c);
                counts.push(count * 3);
            }
        }
        for (counts, cells) in [
            (counts.clone(), cells.clone()),
            (vec![3, 1, 4], vec![0, 2, groups + 1]),
        ] {
            let m = cells.len();
            for curves in [true, false] {
                let (first, count, seed) = (60, 70, 9);
                let drawn =
                    multinomial_draws(&counts, &[m], first, count, seed, &Pool::sequential())
                        .unwrap();
                let want = walk_cell_weights(&drawn, &cells, groups, curves).unwrap();
                for threads in [1, 3] {
                    let got = draw_cell_walks(
                        &counts,
                        &cells,
                        groups,
                        (first, count, seed),
                        curves,
                        &Pool::new(threads),
                    )
                    .unwrap();
                    assert_eq!(bits(&got), bits(&want), "{m} cells, {threads} threads");
                }
            }
        }
        let pool = Pool::sequential();
        let none = draw_cell_walks(&[2, 5], &[0, groups], groups, (0, 0, 1), true, &pool);
        assert!(none.unwrap().auroc.is_empty());
        // One count per cell; the cells in order; 2^32 replicates at most.
        assert!(draw_cell_walks(&[2], &[0, groups], groups, (0, 1, 1), true, &pool).is_err());
        assert!(draw_cell_walks(&[], &[], groups, (0, 1, 1), true, &pool).is_err());
        assert!(draw_cell_walks(&[1, 1], &[3, 2], groups, (0, 1, 1), true, &pool).is_err());
        let far = (u64::from(u32::MAX), 2, 1);
        assert!(draw_cell_walks(&[1, 1], &[0, groups], groups, far, true, &pool).is_err());
    }
}
