//! Threshold curves (docs/definitions.md §7.7): from the tie groups of one
//! sort, the counts at or above every distinct score, with scikit-learn's
//! rules for dropping points that add nothing. Both rules look at a point
//! and its two neighbours only and read the same either way along the curve
//! (a difference negated is the same difference negated, exactly), so the
//! points are kept in rising score order as the sort gives them.

use super::binary::{check_pair, Totals};
use super::groups::score_groups;
use super::hashed::{hashed_groups, RANKING_GROUPS};
use super::keys::{starts_as_f32, Item, Score};
use super::strategy::{pack_f32, prepare, sort_both, sort_packed_stream, Consume, Sink};
use super::stream::{Merge, Stream};
use crate::error::Result;
use crate::parallel::{big_vec, Pool, CHECK_ROWS};

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

/// Cumulated counts, one point per distinct score **from the lowest score
/// up**: `tps[i]` / `fps[i]` is the (weighted) number of positive / negative
/// rows scored at least `thresholds[i]`. (Callers wanting the curve from
/// the highest score down read the arrays backwards.)
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ThresholdCounts {
    pub fps: Vec<f64>,
    pub tps: Vec<f64>,
    pub thresholds: Vec<f64>,
}

/// The cumulated counts of `(positive, score, weight)` (checks as
/// [`super::binary_ranking`]). Unweighted, the rows at or above a score are
/// the total less the rows below it, exact integers, so the groups are
/// turned into points as the sorted rows stream past (the sort of
/// [`super::binary_ranking`]: float32 keys as two halves merged on the fly);
/// weighted, the weights are summed from the highest score down, as
/// scikit-learn sums them.
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
    if weight.is_some() {
        return weighted_counts(positive, score, weight, drop, pool);
    }
    check_pair(positive, score.len())?;
    if let Some(found) = hashed_groups(positive, score.into(), RANKING_GROUPS, pool)? {
        let totals = found.iter().fold((0, 0), |(p, q), g| (p + g.1, q + g.2));
        let groups = found.iter().map(|&(k, p, q)| (X::key_value(k), p, q));
        return rising_points(groups, found.len(), totals, drop);
    }
    if starts_as_f32(score.iter().copied()) {
        if let Some((rows, n_pos)) = pack_f32(positive, score, pool)? {
            let totals = (n_pos, rows.len() as u64 - n_pos);
            #[allow(clippy::cast_possible_truncation)]
            let value_of = |k: u64| f64::from(f32::from_bits(k as u32));
            return sort_packed_stream(
                rows,
                pool,
                PointSink {
                    drop,
                    totals,
                    value_of,
                    pool,
                },
            );
        }
    }
    prepare(positive, score, None, pool, CurveSink { drop })
}

/// Points from the tie groups `(value, positives, negatives)` in increasing
/// score order (`m` at most), `totals` the rows of each outcome.
fn rising_points(
    groups: impl Iterator<Item = (f64, u64, u64)>,
    m: usize,
    totals: (u64, u64),
    drop: Drop,
) -> Result<ThresholdCounts> {
    let (mut pos_below, mut neg_below) = (0_u64, 0_u64);
    let points = groups.map(|(h, p, q)| {
        #[allow(clippy::cast_precision_loss)]
        let point = (
            totals.1.saturating_sub(neg_below) as f64,
            totals.0.saturating_sub(pos_below) as f64,
            h,
        );
        pos_below += p;
        neg_below += q;
        point
    });
    let mut out = ThresholdCounts::default();
    keep_points(points, m, drop, &mut out)?;
    Ok(out)
}

/// The tie groups `(key, positives, negatives)` of `n` rows of a stream; the
/// groups end early once the pool's stop flag is raised (looked at every
/// [`CHECK_ROWS`] rows or so: at a group's start).
struct StreamGroups<'p, S> {
    rows: S,
    left: usize,
    /// The first row of the next group, already read.
    head: Option<(u64, bool)>,
    pool: &'p Pool,
    /// The flag is looked at once `left` falls below this.
    check_below: usize,
}

impl<'p, S> StreamGroups<'p, S> {
    fn new(rows: S, n: usize, pool: &'p Pool) -> Self {
        Self {
            rows,
            left: n,
            head: None,
            pool,
            check_below: n,
        }
    }
}

impl<S: Stream> Iterator for StreamGroups<'_, S> {
    type Item = (u64, u64, u64);
    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.left < self.check_below {
            self.check_below = self.left.saturating_sub(CHECK_ROWS);
            if self.pool.stopped() {
                (self.left, self.head) = (0, None);
                return None;
            }
        }
        let (k, p) = match self.head.take() {
            Some(h) => h,
            None if self.left > 0 => {
                self.left -= 1;
                let (k, p, _) = self.rows.next();
                (k, p)
            }
            None => return None,
        };
        let mut g = (k, u64::from(p), u64::from(!p));
        while self.left > 0 {
            self.left -= 1;
            let (k2, p2, _) = self.rows.next();
            if k2 != k {
                self.head = Some((k2, p2));
                break;
            }
            g.1 += u64::from(p2);
            g.2 += u64::from(!p2);
        }
        Some(g)
    }
}

/// Unweighted sorted rows into points, each key's threshold `value_of(key)`.
struct PointSink<'p, F> {
    drop: Drop,
    totals: (u64, u64),
    value_of: F,
    pool: &'p Pool,
}

impl<F: Fn(u64) -> f64> Consume for PointSink<'_, F> {
    type Out = ThresholdCounts;
    fn consume<S: Stream>(self, rows: S, n: usize) -> Result<ThresholdCounts> {
        let value_of = self.value_of;
        let groups = StreamGroups::new(rows, n, self.pool).map(|(k, p, q)| (value_of(k), p, q));
        let points = rising_points(groups, n, self.totals, self.drop)?;
        // Points of a stream cut short are not the curve.
        self.pool.check()?;
        Ok(points)
    }
}

/// The unweighted rows keyed by [`prepare`]: sorted (the two sides each on
/// a thread of its own) and streamed into points.
struct CurveSink {
    drop: Drop,
}

impl Sink for CurveSink {
    type Out = ThresholdCounts;
    fn packed<T: Item, X: Score>(
        self,
        rows: Vec<T>,
        t: Totals,
        bit0: u64,
        pool: &Pool,
    ) -> Result<ThresholdCounts> {
        let value_of = |k: u64| X::key_value((k << 1) | bit0);
        let sink = PointSink {
            drop: self.drop,
            totals: (t.n_pos, t.n_neg),
            value_of,
            pool,
        };
        sort_packed_stream(rows, pool, sink)
    }
    fn split<T: Item, X: Score>(
        self,
        mut pos: Vec<T>,
        mut neg: Vec<T>,
        t: Totals,
        max_key: bool,
        pool: &Pool,
    ) -> Result<ThresholdCounts> {
        let side_by_side = pool.parallel_for(pos.len() + neg.len());
        sort_both(&mut pos, &mut neg, side_by_side, pool)?;
        let n = pos.len() + neg.len();
        let sink = PointSink {
            drop: self.drop,
            totals: (t.n_pos, t.n_neg),
            value_of: X::key_value,
            pool,
        };
        if max_key {
            sink.consume(Merge::<T, true>::new(&pos, &neg), n)
        } else {
            sink.consume(Merge::<T, false>::new(&pos, &neg), n)
        }
    }
}

/// Weighted rows: the tie groups, their weights summed from the highest
/// score down (scikit-learn's order of summation), the kept points then
/// turned to rising order.
fn weighted_counts<X: Score>(
    positive: &[bool],
    score: &[X],
    weight: Option<&[f64]>,
    drop: Drop,
    pool: &Pool,
) -> Result<ThresholdCounts> {
    let g = score_groups(positive, score, weight, pool)?;
    let m = g.values.len();
    let (mut f_w, mut t_w) = (0.0_f64, 0.0_f64);
    let points = (0..m).rev().map(|i| {
        f_w += g.w_neg.get(i).copied().unwrap_or(0.0);
        t_w += g.w_pos.get(i).copied().unwrap_or(0.0);
        (f_w, t_w, g.values.get(i).copied().unwrap_or(0.0))
    });
    let mut out = ThresholdCounts::default();
    keep_points(points, m, drop, &mut out)?;
    out.fps.reverse();
    out.tps.reverse();
    out.thresholds.reverse();
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

#[cfg(test)]
mod tests {
    use super::super::stream::Packed;
    use super::{Consume, Drop, PointSink};
    use crate::error::MetricError;
    use crate::parallel::{Pool, CHECK_ROWS};
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    /// The stream of sorted rows into points stops at a raised flag (the
    /// sort before it looks at the flag too, but a stream of 10^9 rows takes
    /// seconds), and without one gives every distinct score's point.
    #[test]
    fn the_point_stream_answers_the_stop_flag() {
        let n = 3 * CHECK_ROWS + 5;
        let keys: Vec<u32> = (0..n as u32).map(|i| (i / 2) << 1 | (i & 1)).collect();
        let half = (n / 2) as u64;
        let sink = |pool| PointSink {
            drop: Drop::None,
            totals: (half, n as u64 - half),
            value_of: |k: u64| k as f64,
            pool,
        };
        let rows = || Packed { rows: keys.iter() };
        let stopped = Pool::new(1).with_stop(Arc::new(AtomicBool::new(true)));
        assert_eq!(
            sink(&stopped).consume(rows(), n).map(|c| c.fps.len()),
            Err(MetricError::Interrupted)
        );
        let running = Pool::new(1).with_stop(Arc::new(AtomicBool::new(false)));
        let points = sink(&running).consume(rows(), n).unwrap();
        assert_eq!(points.fps.len(), n.div_ceil(2));
        assert_eq!(points.tps.first(), Some(&(half as f64)));
    }
}
