//! Many ranking states as one: their union (a state holding every row of
//! them) and the walk of that union made without building it. The states'
//! sorted tie groups are merged by key in a k-way merge (a tree of losers),
//! cut into key ranges merged side by side on the threads; equal keys add up
//! in the order of the states, so nothing depends on the thread count.

use super::binary::{BinaryRanking, Totals};
use super::pieces::{PIECES, PIECE_WALK_MIN};
use super::sorted_groups::Groups;
use super::state::GroupState;
use super::walk::Walk;
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::Pool;
use rayon::prelude::*;
use std::mem::MaybeUninit;

/// A state holding every row of `states`: each is compacted (side by side on
/// the pool's threads; they keep their rows), then their sorted tie groups
/// are merged by key in one k-way merge, cut into key ranges merged on the
/// threads. Equal keys add up in the order of `states`, so nothing depends on
/// the thread count. Time: the groups times the log of the states, against
/// a sort of every row for a state fed the rows again.
///
/// # Errors
/// Weighted and unweighted states together; [`MetricError::Interrupted`].
pub fn union_states(states: &mut [&mut GroupState], pool: &Pool) -> Result<GroupState> {
    let weighted = compact_states(states, pool)?;
    let runs: Vec<&Groups> = states.iter().map(|s| &s.groups).collect();
    let total: usize = runs.iter().map(|g| g.len()).sum();
    let parts = if pool.parallel_for(total) {
        4 * pool.threads()
    } else {
        1
    };
    // Every group is kept (equal keys of different states side by side, which
    // every reader adds up), so each key range's place in the output is known
    // before the merge: the ranges are merged straight into it, side by side.
    let ranges = key_ranges(&runs, parts);
    let sizes: Vec<usize> = ranges
        .iter()
        .map(|b| b.iter().map(|&(lo, hi)| hi - lo).sum())
        .collect();
    let mut out = GroupState::new(weighted);
    let g = &mut out.groups;
    // Written once by the merges (not cleared first); the lengths are set once
    // every slot is known to be written.
    g.reserve(total, weighted)?;
    let mut jobs: Vec<RangeJob<'_>> = Vec::with_capacity(ranges.len());
    let (mut keys, mut pos, mut neg) = (
        g.keys.spare_capacity_mut(),
        g.pos.spare_capacity_mut(),
        g.neg.spare_capacity_mut(),
    );
    let (mut w_pos, mut w_neg) = (g.w_pos.spare_capacity_mut(), g.w_neg.spare_capacity_mut());
    // Each range's slots: `size` of each array (as many weights when weighted).
    let mut cut = |size: usize| -> Option<Slots<'_>> {
        let wsize = if weighted { size } else { 0 };
        let (k, rest) = std::mem::take(&mut keys).split_at_mut_checked(size)?;
        keys = rest;
        let (p, rest) = std::mem::take(&mut pos).split_at_mut_checked(size)?;
        pos = rest;
        let (n, rest) = std::mem::take(&mut neg).split_at_mut_checked(size)?;
        neg = rest;
        let (a, rest) = std::mem::take(&mut w_pos).split_at_mut_checked(wsize)?;
        w_pos = rest;
        let (b, rest) = std::mem::take(&mut w_neg).split_at_mut_checked(wsize)?;
        w_neg = rest;
        Some((k, p, n, a, b))
    };
    let mut cut_all = true;
    for (range, &size) in ranges.into_iter().zip(&sizes) {
        match cut(size) {
            Some(slots) => jobs.push((range, size, slots)),
            None => cut_all = false,
        }
    }
    // A range wrote all its slots when its merge wrote `size` groups.
    let one = |(range, size, slots): RangeJob<'_>| merge_runs(&runs, &range, slots, pool) == size;
    let whole = if jobs.len() > 1 {
        pool.install(|| jobs.into_par_iter().map(one).reduce(|| true, |a, b| a & b))
    } else {
        jobs.into_iter().map(one).fold(true, |a, b| a & b)
    };
    pool.check()?;
    ensure!(
        whole && cut_all && sizes.iter().sum::<usize>() == total,
        MetricError::InvalidValue {
            arg: "states",
            detail: "a ranking state holds a score that is not finite".into(),
        }
    );
    // SAFETY: the ranges' slots, cut one after the other from the first `total`
    // of each array's capacity (`cut_all`: the capacity held them), cover those
    // `total` slots (the sizes add up to it), and every range's merge wrote
    // each of its slots (`whole`), weights too when weighted.
    unsafe {
        g.keys.set_len(total);
        g.pos.set_len(total);
        g.neg.set_len(total);
        if weighted {
            g.w_pos.set_len(total);
            g.w_neg.set_len(total);
        }
    }
    Ok(out)
}

/// Every state compacted (side by side on the pool's threads; each on one),
/// and whether they hold weighted rows.
///
/// # Errors
/// Weighted and unweighted states together; [`MetricError::Interrupted`].
fn compact_states(states: &mut [&mut GroupState], pool: &Pool) -> Result<bool> {
    let weighted = states
        .iter()
        .find(|s| s.entries() > 0)
        .or(states.first())
        .is_some_and(|s| s.weighted);
    ensure!(
        states
            .iter()
            .all(|s| s.entries() == 0 || s.weighted == weighted),
        MetricError::InvalidValue {
            arg: "states",
            detail: "some ranking states hold weighted rows and others unweighted rows".into(),
        }
    );
    let rows: usize = states.iter().map(|s| s.entries()).sum();
    let compact = |s: &mut &mut GroupState| s.compact(&Pool::sequential());
    if pool.parallel_for(rows) && states.len() > 1 {
        pool.install(|| states.par_iter_mut().try_for_each(compact))?;
    } else {
        states.iter_mut().try_for_each(compact)?;
    }
    pool.check()?;
    Ok(weighted)
}

/// The runs cut into at most `parts` key ranges at the quantiles of a sample
/// of their keys: for each range, each run's `(lo, hi)`. Range p holds the
/// keys in `[cut[p - 1], cut[p])`, so equal keys fall in one range; the cuts
/// depend on the runs and `parts` only.
fn key_ranges(runs: &[&Groups], parts: usize) -> Vec<Vec<(usize, usize)>> {
    let mut sample: Vec<u64> = runs
        .iter()
        .flat_map(|g| {
            let step = (g.len() / (8 * parts)).max(1);
            g.keys.iter().step_by(step).copied()
        })
        .collect();
    sample.sort_unstable();
    let mut cuts: Vec<u64> = (1..parts)
        .filter_map(|p| sample.get(p * sample.len() / parts).copied())
        .collect();
    cuts.dedup();
    let bounds = |p: usize| -> Vec<(usize, usize)> {
        runs.iter()
            .map(|g| {
                let at = |c: Option<&u64>, none: usize| {
                    c.map_or(none, |&c| g.keys.partition_point(|&k| k < c))
                };
                let lo = p.checked_sub(1).map_or(0, |q| at(cuts.get(q), 0));
                (lo, at(cuts.get(p), g.len()))
            })
            .collect()
    };
    (0..=cuts.len()).map(bounds).collect()
}

/// The walk of the union of `states` ([`union_states`], then
/// [`GroupState::walk`]) without making the union: their tie groups are
/// merged by key straight into the walk. Without weights, from
/// `PIECE_WALK_MIN` groups the key space is cut into `PIECES` ranges (as
/// many whatever the thread count), each merged and walked on its own from
/// the counts below it, side by side on the threads, and the pieces combined
/// in order; the counts are exact and the curve sums are added piece by
/// piece. With weights, the union is made and walked.
///
/// # Errors
/// As [`union_states`] and [`GroupState::walk`].
pub fn walk_union(
    states: &mut [&mut GroupState],
    curves: bool,
    pool: &Pool,
) -> Result<BinaryRanking> {
    if compact_states(states, pool)? {
        return union_states(states, pool)?.walk(curves, pool);
    }
    let runs: Vec<&Groups> = states.iter().map(|s| &s.groups).collect();
    let total: usize = runs.iter().map(|g| g.len()).sum();
    let parts = if total >= PIECE_WALK_MIN { PIECES } else { 1 };
    let ranges = key_ranges(&runs, parts);
    // Each range's positives and negatives, then the counts below each.
    let count = |range: &Vec<(usize, usize)>| -> (u64, u64) {
        runs.iter()
            .zip(range)
            .map(|(g, &(lo, hi))| {
                let sum = |v: &[u32]| {
                    v.get(lo..hi)
                        .unwrap_or_default()
                        .iter()
                        .map(|&x| u64::from(x))
                        .sum::<u64>()
                };
                (sum(&g.pos), sum(&g.neg))
            })
            .fold((0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    let sums: Vec<(u64, u64)> = if pool.parallel_for(total) && ranges.len() > 1 {
        pool.install(|| ranges.par_iter().map(count).collect())
    } else {
        ranges.iter().map(count).collect()
    };
    let (mut n_pos, mut n_neg) = (0_u64, 0_u64);
    let mut jobs: Vec<PieceJob<'_>> = Vec::with_capacity(ranges.len());
    for (range, &(p, n)) in ranges.iter().zip(&sums) {
        jobs.push((range, n_pos, n_neg));
        n_pos += p;
        n_neg += n;
    }
    let totals = Totals::counted(n_pos, n_neg);
    let one = |&(range, pos_below, neg_below): &PieceJob<'_>| -> Walk {
        let mut w = Walk::starting_after(totals, curves.into(), pos_below, neg_below);
        let mut prev: Option<u64> = None;
        merge_each::<false>(&runs, range, usize::MAX, pool, |key, c, i| {
            let p = u64::from(c.pos.get(i).copied().unwrap_or(0));
            let n = u64::from(c.neg.get(i).copied().unwrap_or(0));
            if p + n > 0 {
                w.add_to_group(p, n, prev != Some(key));
                prev = Some(key);
            }
            true
        });
        w.close_last_group();
        w
    };
    let walks: Vec<Walk> = if pool.parallel_for(total) && jobs.len() > 1 {
        pool.install(|| jobs.par_iter().map(one).collect())
    } else {
        jobs.iter().map(one).collect()
    };
    pool.check()?;
    Ok(Walk::combine(totals, curves.into(), walks))
}

/// One key range of [`walk_union`]: each run's part, and the positives and
/// negatives below it.
type PieceJob<'a> = (&'a Vec<(usize, usize)>, u64, u64);

/// One key range of [`union_states`]: each run's part, the groups they hold, and
/// the output slots they fill.
type RangeJob<'a> = (Vec<(usize, usize)>, usize, Slots<'a>);

/// The output slices of one key range of [`union_states`]: keys, positive and
/// negative counts, and weights (empty without weights).
type Slots<'a> = (
    &'a mut [MaybeUninit<u64>],
    &'a mut [MaybeUninit<u32>],
    &'a mut [MaybeUninit<u32>],
    &'a mut [MaybeUninit<f64>],
    &'a mut [MaybeUninit<f64>],
);

/// Groups of a run read ahead of its head in [`merge_runs`].
const AHEAD: usize = 16;

/// One run's part in [`merge_runs`] and the position of its head.
#[derive(Default)]
struct Cursor<'a> {
    keys: &'a [u64],
    pos: &'a [u32],
    neg: &'a [u32],
    w_pos: &'a [f64],
    w_neg: &'a [f64],
    at: usize,
}

impl Cursor<'_> {
    /// The head's key; u64::MAX past the end (the key of a finite score is
    /// never that large), as for the leaves past the runs.
    #[inline(always)]
    fn key(&self) -> u64 {
        self.keys.get(self.at).copied().unwrap_or(u64::MAX)
    }
}

/// The groups of `runs[r][bounds[r].0..bounds[r].1]` merged by key into
/// `out` (as long as they are), equal keys in run order (see [`merge_each`]).
/// Returns the groups written.
fn merge_runs(runs: &[&Groups], bounds: &[(usize, usize)], out: Slots<'_>, pool: &Pool) -> usize {
    let (keys, pos, neg, w_pos, w_neg) = out;
    let weighted = !w_pos.is_empty();
    let mut e = 0;
    merge_each::<true>(runs, bounds, keys.len(), pool, |key, c, i| {
        let (Some(k), Some(p), Some(n)) = (keys.get_mut(e), pos.get_mut(e), neg.get_mut(e)) else {
            return false;
        };
        k.write(key);
        p.write(c.pos.get(i).copied().unwrap_or(0));
        n.write(c.neg.get(i).copied().unwrap_or(0));
        if weighted {
            let (Some(a), Some(b)) = (w_pos.get_mut(e), w_neg.get_mut(e)) else {
                return false;
            };
            a.write(c.w_pos.get(i).copied().unwrap_or(0.0));
            b.write(c.w_neg.get(i).copied().unwrap_or(0.0));
        }
        e += 1;
        true
    })
}

/// The groups of `runs[r][bounds[r].0..bounds[r].1]` in key order, equal
/// keys in run order, at most `limit` of them: `emit(key, run, index)` is
/// called for each and stops the merge by returning false. A tree of losers
/// over the runs' heads, each node holding the `(key, run)` that lost there,
/// so a new head climbs to the root comparing with one stored pair per level
/// (no branch: the keys are random). Returns the groups emitted.
fn merge_each<const BY_RUN: bool>(
    runs: &[&Groups],
    bounds: &[(usize, usize)],
    limit: usize,
    pool: &Pool,
    mut emit: impl FnMut(u64, &Cursor<'_>, usize) -> bool,
) -> usize {
    let leaves = runs.len().next_power_of_two().max(2);
    let mut cursors: Vec<Cursor<'_>> = (0..leaves)
        .map(|r| match (runs.get(r), bounds.get(r)) {
            (Some(g), Some(&(lo, hi))) => Cursor {
                keys: g.keys.get(lo..hi).unwrap_or_default(),
                pos: g.pos.get(lo..hi).unwrap_or_default(),
                neg: g.neg.get(lo..hi).unwrap_or_default(),
                w_pos: g.w_pos.get(lo..hi).unwrap_or_default(),
                w_neg: g.w_neg.get(lo..hi).unwrap_or_default(),
                at: 0,
            },
            _ => Cursor::default(),
        })
        .collect();
    // Whether (key, run) `a` comes before `b`; equal keys in any order unless
    // `BY_RUN` (the walk adds them up exactly, whatever their order).
    let first = |a: (u64, usize), b: (u64, usize)| {
        if BY_RUN {
            (a.0 < b.0) | ((a.0 == b.0) & (a.1 < b.1))
        } else {
            a.0 < b.0
        }
    };
    let mut loser: Vec<(u64, usize)> = vec![(u64::MAX, usize::MAX); leaves];
    let mut win: Vec<(u64, usize)> = (0..2 * leaves)
        .map(|i| {
            let r = i.saturating_sub(leaves);
            (cursors.get(r).map_or(u64::MAX, Cursor::key), r)
        })
        .collect();
    for node in (1..leaves).rev() {
        let (a, b) = (
            win.get(2 * node).copied().unwrap_or((u64::MAX, usize::MAX)),
            win.get(2 * node + 1)
                .copied()
                .unwrap_or((u64::MAX, usize::MAX)),
        );
        let (w, l) = if first(b, a) { (b, a) } else { (a, b) };
        if let (Some(x), Some(y)) = (win.get_mut(node), loser.get_mut(node)) {
            (*x, *y) = (w, l);
        }
    }
    let mut top = win.get(1).copied().unwrap_or((u64::MAX, usize::MAX));
    drop(win);
    for e in 0..limit {
        if e % crate::parallel::CHECK_ROWS == 0 && pool.stopped() {
            return e;
        }
        let (key, w) = top;
        let Some(c) = cursors.get_mut(w).filter(|c| c.at < c.keys.len()) else {
            return e; // a done run on top: a key of u64::MAX (not a finite score's)
        };
        let i = c.at;
        if !emit(key, c, i) {
            return e;
        }
        c.at += 1;
        // A hundred runs are more streams than the hardware prefetcher follows:
        // each run asks for its next cache lines itself.
        #[cfg(target_arch = "x86_64")]
        if i % 8 == 0 {
            if let Some(x) = c.keys.get(i + AHEAD) {
                crate::simd::prefetch(x);
            }
            if i % 16 == 0 {
                if let (Some(x), Some(y)) = (c.pos.get(i + 2 * AHEAD), c.neg.get(i + 2 * AHEAD)) {
                    crate::simd::prefetch(x);
                    crate::simd::prefetch(y);
                }
            }
        }
        let mut climbing = (c.key(), w);
        let mut node = (leaves + w) / 2;
        while node >= 1 {
            if let Some(stored) = loser.get_mut(node) {
                let swap = first(*stored, climbing);
                let (a, b) = (*stored, climbing);
                *stored = if swap { b } else { a };
                climbing = if swap { a } else { b };
            }
            node /= 2;
        }
        top = climbing;
    }
    limit
}
