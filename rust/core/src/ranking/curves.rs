//! Threshold curves (docs/definitions.md §7.7): from the tie groups of one
//! sort, the counts at every distinct score cumulated from the highest score
//! down, with scikit-learn's rules for dropping points that add nothing.

use super::groups::score_groups;
use super::keys::Score;
use crate::error::Result;
use crate::parallel::{big_vec, Pool};

/// Which points to drop from the cumulated counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Drop {
    /// Keep every distinct score.
    None,
    /// ROC: drop a point whose false and true positives both change at the
    /// same rate on either side of it (second differences zero).
    Collinear,
    /// Precision-recall and DET: keep only the first and last point of each
    /// run of equal true positives.
    FlatPositives,
}

/// Cumulated counts, from the highest score down: `tps[i]` / `fps[i]` is the
/// (weighted) number of positive / negative rows scored at least
/// `thresholds[i]`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThresholdCounts {
    pub fps: Vec<f64>,
    pub tps: Vec<f64>,
    pub thresholds: Vec<f64>,
}

/// The cumulated counts of `(positive, score, weight)` (checks as
/// [`super::binary_ranking`]); unweighted counts are summed as integers.
///
/// # Errors
/// As [`super::binary_ranking`].
pub fn threshold_counts<X: Score>(
    positive: &[bool],
    score: &[X],
    weight: Option<&[f64]>,
    drop: Drop,
    pool: &Pool,
) -> Result<ThresholdCounts> {
    let g = score_groups(positive, score, weight, pool)?;
    let m = g.values.len();
    let mut out = ThresholdCounts::default();
    // The groups from the highest score down, cumulated (integers summed
    // exactly without weights).
    let (mut f_int, mut t_int) = (0_u64, 0_u64);
    let (mut f_w, mut t_w) = (0.0_f64, 0.0_f64);
    let weighted = weight.is_some();
    let points = (0..m).rev().map(|i| {
        let h = g.values.get(i).copied().unwrap_or(0.0);
        if weighted {
            f_w += g.w_neg.get(i).copied().unwrap_or(0.0);
            t_w += g.w_pos.get(i).copied().unwrap_or(0.0);
            (f_w, t_w, h)
        } else {
            f_int += g.n_neg.get(i).copied().unwrap_or(0);
            t_int += g.n_pos.get(i).copied().unwrap_or(0);
            #[allow(clippy::cast_precision_loss)]
            (f_int as f64, t_int as f64, h)
        }
    });
    keep_points(points, m, drop, &mut out)?;
    Ok(out)
}

/// A point of the cumulated counts: (fps, tps, threshold).
type Point = (f64, f64, f64);

/// Write the points `drop` keeps (the first and last always) into `out`. A
/// point's fate depends on both neighbours, so each is decided when the next
/// one arrives; every point is written at the cursor, which moves past it
/// only when it is kept (no branch on the decision).
fn keep_points(
    points: impl Iterator<Item = Point>,
    m: usize,
    drop: Drop,
    out: &mut ThresholdCounts,
) -> Result<()> {
    // Huge-page buffers (see `big_vec`), written below their length: faulting
    // in zeroed small pages costs more than the pass itself.
    out.fps = big_vec(m, "the curve's points")?;
    out.tps = big_vec(m, "the curve's points")?;
    out.thresholds = big_vec(m, "the curve's thresholds")?;
    let mut w = 0_usize;
    let (fs, ts, hs) = (
        out.fps.spare_capacity_mut(),
        out.tps.spare_capacity_mut(),
        out.thresholds.spare_capacity_mut(),
    );
    let mut write = |p: Point, keep: bool| {
        if let (Some(a), Some(b), Some(c)) = (fs.get_mut(w), ts.get_mut(w), hs.get_mut(w)) {
            a.write(p.0);
            b.write(p.1);
            c.write(p.2);
        }
        w += usize::from(keep);
    };
    let rule = |prev: Point, cur: Point, next: Point| match drop {
        Drop::None => true,
        // np.diff(x, 2) at cur: (next - cur) - (cur - prev)
        Drop::Collinear => {
            ((next.0 - cur.0) - (cur.0 - prev.0) != 0.0)
                | ((next.1 - cur.1) - (cur.1 - prev.1) != 0.0)
        }
        Drop::FlatPositives => (cur.1 != prev.1) | (next.1 != cur.1),
    };
    let (mut prev, mut cur): (Option<Point>, Option<Point>) = (None, None);
    for next in points {
        if let Some(c) = cur {
            write(c, prev.is_none_or(|p| rule(p, c, next)));
            prev = Some(c);
        }
        cur = Some(next);
    }
    if let Some(c) = cur {
        write(c, true);
    }
    // SAFETY: `w` never passes the number of points written (each write is
    // at the cursor before it moves), and at most `m` points arrive, the
    // capacity of each buffer; `f64` needs no drop.
    unsafe {
        out.fps.set_len(w);
        out.tps.set_len(w);
        out.thresholds.set_len(w);
    }
    Ok(())
}
