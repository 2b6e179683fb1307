//! The dense binned one-vs-rest histograms of many groups of rows at once
//! (the counting of [`super::binned`], group by group).

use super::binned::{check_binned, count_tile, outside_unit, Tables};
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::{Pool, CHECK_ROWS};
use crate::ranking::keys::Score;
use crate::ranking::score_matrix::Matrix;
use rayon::prelude::*;

/// The most cells (groups x columns x bins) of [`grouped_binned_histograms`].
pub const MAX_GROUPED_CELLS: usize = 1 << 27;

/// Dense binned one-vs-rest histograms of every group of rows: for group `g`,
/// column `c` and bin `b` (cell `(g * n_cols + c) * (bins + 1) + b`), the
/// rows of the group whose score in column `c` falls in bin `b` (`all`), those
/// of class `c` among them (`pos`), and their weights (empty without weights).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct GroupedHistograms {
    pub all: Vec<u64>,
    pub pos: Vec<u64>,
    pub w_all: Vec<f64>,
    pub w_pos: Vec<f64>,
}

/// One group's number and its cells of the four tables.
type GroupCells<'a> = (
    usize,
    &'a mut [u64],
    &'a mut [u64],
    &'a mut [f64],
    &'a mut [f64],
);

/// [`super::binned_one_vs_rest`] for every group of rows at once, as dense
/// histograms: the rows are laid out group by group (`offsets`, `G + 1`
/// increasing row numbers from 0 to the row count) and each group's rows are
/// binned into its own cells (bin `floor(score * bins)`, the last bin holding
/// 1.0), in parallel over the groups.
///
/// # Errors
/// [`MetricError::Shape`] for inputs of different lengths or offsets that do
/// not cover the rows in order; [`MetricError::InvalidValue`] for a score
/// outside [0, 1] (the first, in row order) or no bins;
/// [`MetricError::LimitExceeded`] beyond [`MAX_GROUPED_CELLS`] cells;
/// [`MetricError::Interrupted`].
pub fn grouped_binned_histograms<X: Score>(
    codes: &[u32],
    scores: Matrix<'_, X>,
    offsets: &[i64],
    weight: Option<&[f64]>,
    bins: u32,
    pool: &Pool,
) -> Result<GroupedHistograms> {
    let n = check_binned(codes, &scores, weight, bins)?;
    crate::grouping::check_offsets(offsets, n, false)?;
    let k = scores.n_cols;
    let cells = bins as usize + 1;
    let n_groups = offsets.len() - 1;
    let per_group = k * cells;
    let total = n_groups.saturating_mul(per_group);
    ensure!(
        total <= MAX_GROUPED_CELLS,
        MetricError::LimitExceeded {
            what: "grouped histogram cells (groups x classes x bins)",
            needed: total as u128,
            limit: MAX_GROUPED_CELLS as u128,
            hint: "group by a coarser column, or use fewer group_ranking_bins",
        }
    );
    let weighted = weight.is_some();
    let w_total = if weighted { total } else { 0 };
    const WHAT: &str = "the grouped rank histograms";
    let mut out = GroupedHistograms {
        all: try_filled(total, 0, WHAT)?,
        pos: try_filled(total, 0, WHAT)?,
        w_all: try_filled(w_total, 0.0, WHAT)?,
        w_pos: try_filled(w_total, 0.0, WHAT)?,
    };
    // One group: its rows' cells, and its first score outside [0, 1].
    let fill =
        |g: usize, all: &mut [u64], pos: &mut [u64], w_all: &mut [f64], w_pos: &mut [f64]| {
            let lo = usize::try_from(offsets.get(g).copied().unwrap_or(0)).unwrap_or(0);
            let hi = usize::try_from(offsets.get(g + 1).copied().unwrap_or(0)).unwrap_or(0);
            for start in (lo..hi).step_by(CHECK_ROWS) {
                if pool.stopped() {
                    return None;
                }
                let end = (start + CHECK_ROWS).min(hi);
                let tables = Tables {
                    all: &mut *all,
                    pos: &mut *pos,
                    w_all: &mut *w_all,
                    w_pos: &mut *w_pos,
                };
                let bad = count_tile(&scores, codes, weight, 0..k, start..end, bins, tables);
                if bad.is_some() {
                    return bad;
                }
            }
            None
        };
    let wide = per_group.max(1);
    let weight_chunk = if weighted { wide } else { 1 };
    let mut w_all_chunks: Vec<&mut [f64]> = out.w_all.chunks_mut(weight_chunk).collect();
    let mut w_pos_chunks: Vec<&mut [f64]> = out.w_pos.chunks_mut(weight_chunk).collect();
    w_all_chunks.resize_with(n_groups, Default::default);
    w_pos_chunks.resize_with(n_groups, Default::default);
    let jobs: Vec<GroupCells<'_>> = out
        .all
        .chunks_mut(wide)
        .zip(out.pos.chunks_mut(wide))
        .zip(w_all_chunks.into_iter().zip(w_pos_chunks))
        .enumerate()
        .map(|(g, ((a, p), (wa, wp)))| (g, a, p, wa, wp))
        .collect();
    let run = |(g, a, p, wa, wp): GroupCells<'_>| fill(g, a, p, wa, wp);
    let bad: Option<(usize, usize)> = if pool.parallel_for(n * k) {
        pool.install(|| jobs.into_par_iter().filter_map(run).min())
    } else {
        jobs.into_iter().filter_map(run).min()
    };
    pool.check()?;
    if let Some((row, col)) = bad {
        return Err(outside_unit(&scores, n, row, col));
    }
    Ok(out)
}
