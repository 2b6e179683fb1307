//! Exact multinomial draws of cell counts (docs/definitions.md §11, the
//! multinomial scheme): resampling `n` rows with replacement draws the counts
//! of the occupied cells from `Multinomial(n, counts / n)`, one replicate in
//! O(cells) whatever `n`.
//!
//! A stratum's cells are split in halves, recursively: a node holding `m`
//! rows over cells `lo..hi` sends `Binomial(m, p)` of them to `lo..mid` and
//! the rest to `mid..hi`, with `p` the share of the original counts in
//! `lo..mid` (the multinomial is the product of these conditionals). Each
//! binomial draw is a pure function of `(seed, replicate, node, m, p)`: its
//! uniforms come from the counter-based stream of [`crate::random`] with the
//! counter `(replicate, node, attempt, CELL_SPLITS)`, the node named by the
//! global position of its split (every split position names one node). So a
//! replicate does not depend on the thread that drew it, and the numpy
//! backend (`cmetrics._numpy.multinomial`) draws the same counts, level by
//! level, bit for bit (the sampler: [`super::binomial`]).
//!
//! The tree's shape does not depend on the replicate: it is laid out once per
//! call ([`Tree`]), level by level, each split's stream, share and the places
//! its two counts go in flat arrays. A replicate then walks the levels: the
//! first attempts of a level's splits run side by side in vector lanes
//! straight off those arrays ([`super::binomial_lanes`]), and the few draws
//! that attempt leaves open take their next steps in rounds
//! ([`super::rounds`]).
//!
//! A large stratum (at least 1024 rows over at least `2 sqrt(rows)` occupied
//! cells) is drawn by Poisson draws and completion instead
//! ([`super::poisson_cells`]), cheaper per cell and as exact; its own tree
//! draws the replicates whose Poisson draws overshoot.

use super::binomial::{binomial_or_btrd, Btrd, Stream, MAX_TOTAL};
use super::binomial_lanes::{squeeze_attempts, Draws, LANES, OUTSIDE, REJECTED, SQUEEZED};
use super::poisson_cells::{Plan, BLOCK};
use super::rounds::Batch;
use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::Pool;
use crate::random::key_of;
use rayon::prelude::*;
use std::collections::HashSet;

/// The split tree of a call, level by level, each level padded to whole
/// vectors of [`LANES`] splits. A replicate's counts live in one array of
/// slots: the splits' (the rows each holds) first, then one per cell (the
/// cell's count), then a sink that the padding splits write to.
struct Tree {
    /// Per split: the stream's node (the split's position), the left share,
    /// BTRD's share (`min(p, 1 - p)`; 0 where no draw can need BTRD), whether
    /// the left count is BTRD's count's complement, and the slots of the
    /// left and right counts.
    node: Vec<u32>,
    share: Vec<f64>,
    small: Vec<f64>,
    flipped: Vec<bool>,
    left: Vec<u32>,
    right: Vec<u32>,
    /// Each level's splits (whole vectors).
    levels: Vec<(usize, usize)>,
    /// Each stratum's root slot and total.
    roots: Vec<(usize, f64)>,
    /// The number of splits (padding included) and of cells.
    splits: usize,
    cells: usize,
}

impl Tree {
    /// The tree of the strata `(lo, hi, total)` over `share`, the cells of
    /// `share` being the call's from `offset` on (a split's stream names its
    /// position in the call's cells).
    fn new(share: &[f64], strata: &[(usize, usize, u64)], offset: usize) -> Result<Self> {
        let cells = share.len();
        // The cell ranges of each level's splits.
        let mut ranges: Vec<Vec<(usize, usize)>> = Vec::new();
        let mut level: Vec<(usize, usize)> = strata
            .iter()
            .filter(|s| s.1 - s.0 >= 2)
            .map(|s| (s.0, s.1))
            .collect();
        while !level.is_empty() {
            let mut next = Vec::with_capacity(level.len() * 2);
            for &(lo, hi) in &level {
                let mid = lo + (hi - lo) / 2;
                next.extend(
                    [(lo, mid), (mid, hi)]
                        .into_iter()
                        .filter(|c| c.1 - c.0 >= 2),
                );
            }
            ranges.push(std::mem::replace(&mut level, next));
        }
        let mut levels = Vec::with_capacity(ranges.len());
        let mut start = 0;
        for r in &ranges {
            let end = start + r.len().div_ceil(LANES) * LANES;
            levels.push((start, end));
            start = end;
        }
        let splits = start;
        let sink = u32::try_from(splits + cells).map_err(|_| MetricError::InvalidValue {
            arg: "counts",
            detail: "at most 2^31 cells".into(),
        })?;
        let mut tree = Self {
            node: try_filled(splits, 0, "the multinomial tree")?,
            share: try_filled(splits, 0.0, "the multinomial tree")?,
            small: try_filled(splits, 0.0, "the multinomial tree")?,
            flipped: try_filled(splits, false, "the multinomial tree")?,
            left: try_filled(splits, sink, "the multinomial tree")?,
            right: try_filled(splits, sink, "the multinomial tree")?,
            levels,
            roots: Vec::with_capacity(strata.len()),
            splits,
            cells,
        };
        // A child's slot: the next split of the level below, or its cell's.
        let leaf = |lo: usize| (splits + lo) as u32;
        for (depth, r) in ranges.iter().enumerate() {
            let first = tree.levels[depth].0;
            let mut below = tree.levels.get(depth + 1).map_or(0, |l| l.0);
            for (j, &(lo, hi)) in r.iter().enumerate() {
                let at = first + j;
                let mid = lo + (hi - lo) / 2;
                let p = share[mid];
                tree.node[at] = (mid + offset) as u32;
                tree.share[at] = p;
                if p > 0.0 && p < 1.0 {
                    tree.flipped[at] = p > 0.5;
                    tree.small[at] = if p > 0.5 { 1.0 - p } else { p };
                }
                for (slot, (clo, chi)) in [
                    (&mut tree.left[at], (lo, mid)),
                    (&mut tree.right[at], (mid, hi)),
                ] {
                    *slot = if chi - clo >= 2 {
                        below += 1;
                        (below - 1) as u32
                    } else {
                        leaf(clo)
                    };
                }
            }
        }
        let mut root = 0;
        for &(lo, hi, total) in strata {
            match hi - lo {
                0 => {}
                1 => tree.roots.push((splits + lo, total as f64)),
                _ => {
                    tree.roots.push((root, total as f64));
                    root += 1;
                }
            }
        }
        Ok(tree)
    }

    /// The widest level.
    fn width(&self) -> usize {
        self.levels.iter().map(|l| l.1 - l.0).max().unwrap_or(0)
    }
}

/// A replicate's working space: every slot's count, a level's first
/// attempts (their attempt numbers, all 0; counts and verdicts), the draws
/// left open.
struct Scratch {
    slots: Vec<f64>,
    zeros: Vec<u32>,
    count: Vec<f64>,
    state: Vec<u8>,
    batch: Batch,
}

impl Scratch {
    fn new(tree: &Tree) -> Self {
        let width = tree.width();
        Self {
            // The padding splits hold 0 rows throughout: nothing writes to their slots.
            slots: vec![0.0; tree.splits + tree.cells + 1],
            zeros: vec![0; width],
            count: vec![0.0; width],
            state: vec![REJECTED; width],
            batch: Batch::default(),
        }
    }
}

/// The draws of one replicate into `out`, level by level: the first attempts
/// of a level's splits in vector lanes straight off the tree's arrays (a
/// lane whose split needs no BTRD draw is computed and not read: that split
/// draws alone, by inversion or not at all), then the draws those attempts
/// left open, in rounds ([`Batch::take`]). Every count exact in float64
/// (the totals are below 2^53).
fn draw_replicate(out: &mut [f64], tree: &Tree, stream: Stream, scratch: &mut Scratch) {
    let Scratch {
        slots,
        zeros,
        count,
        state,
        batch,
    } = scratch;
    for &(slot, total) in &tree.roots {
        slots[slot] = total;
    }
    for &(a, b) in &tree.levels {
        let width = b - a;
        let draws = Draws {
            n: &slots[a..b],
            p: &tree.small[a..b],
            node: &tree.node[a..b],
            attempt: &zeros[..width],
            key: stream.key,
            replicate: stream.replicate,
        };
        squeeze_attempts(draws, &mut count[..width], &mut state[..width]);
        batch.clear();
        for i in a..b {
            let n = slots[i];
            let left = if n * tree.small[i] >= 10.0 {
                let j = i - a;
                match state[j] {
                    SQUEEZED => flip(count[j], n, tree.flipped[i]),
                    verdict => {
                        let draw = Btrd {
                            n,
                            p: tree.small[i],
                            total: n as u64,
                            flipped: tree.flipped[i],
                        };
                        let outside = verdict == OUTSIDE;
                        batch.push(i, draw, tree.node[i], u32::from(!outside), outside);
                        continue;
                    }
                }
            } else {
                let at = Stream {
                    node: tree.node[i],
                    ..stream
                };
                match binomial_or_btrd(n as u64, tree.share[i], at) {
                    Ok(k) => k as f64,
                    Err(draw) => {
                        // Not reached (the test above is BTRD's own); kept whole all the same.
                        batch.push(i, draw, tree.node[i], 0, false);
                        continue;
                    }
                }
            };
            slots[tree.left[i] as usize] = left;
            slots[tree.right[i] as usize] = n - left;
        }
        if batch.is_empty() {
            continue;
        }
        batch.take(stream);
        for (&i, &k) in batch.owner.iter().zip(batch.count.iter()) {
            let n = slots[i];
            let left = flip(k, n, tree.flipped[i]);
            slots[tree.left[i] as usize] = left;
            slots[tree.right[i] as usize] = n - left;
        }
    }
    out.copy_from_slice(&slots[tree.splits..tree.splits + tree.cells]);
}

/// The left count of a split of `n` rows from BTRD's count `k`.
#[inline]
fn flip(k: f64, n: f64, flipped: bool) -> f64 {
    if flipped {
        n - k
    } else {
        k
    }
}

/// One call's draws laid out once: the split tree of the small strata, the
/// Poisson plan of the large ones with a tree each for the replicates whose
/// Poisson draws overshoot, and the stream's key. Any replicate is then drawn
/// on its own ([`Drawing::draw`]), the same on any thread.
pub(super) struct Drawing {
    tree: Tree,
    plan: Option<Plan>,
    fallbacks: Vec<Tree>,
    key: [u32; 2],
}

/// A thread's working space for [`Drawing::draw`].
pub(super) struct Space(Scratch, Vec<Scratch>);

impl Drawing {
    /// The draws of `counts`, stratum by stratum (`stratum_ends`: where each
    /// stratum's cells end; each stratum keeps its total), under `seed`.
    ///
    /// # Errors
    /// [`MetricError::InvalidValue`] when there are 2^32 cells or more, a
    /// stratum's total reaches 2^53 or the ends are not increasing up to the
    /// cell count; `OutOfMemory`.
    pub(super) fn new(counts: &[u64], stratum_ends: &[usize], seed: u64) -> Result<Self> {
        let cells = counts.len();
        if u32::try_from(cells).is_err() {
            return Err(MetricError::InvalidValue {
                arg: "counts",
                detail: "at most 2^32 cells and 2^32 replicates".into(),
            });
        }
        let mut strata = Vec::with_capacity(stratum_ends.len());
        let mut start = 0;
        for &end in stratum_ends {
            if end < start || end > cells {
                return Err(MetricError::InvalidValue {
                    arg: "stratum_ends",
                    detail: "must increase up to the number of cells".into(),
                });
            }
            let total = counts[start..end]
                .iter()
                .try_fold(0_u64, |t, &c| t.checked_add(c).filter(|&t| t < MAX_TOTAL));
            let Some(total) = total else {
                return Err(MetricError::InvalidValue {
                    arg: "counts",
                    detail:
                        "a stratum holds 2^53 rows or more: too many to draw exactly in float64"
                            .into(),
                });
            };
            strata.push((start, end, total));
            start = end;
        }
        // The left share of every split, named by its position.
        let mut share = try_filled(cells, 0.0, "the multinomial shares")?;
        let mut prefix = try_filled(cells + 1, 0_u64, "the multinomial shares")?;
        for (i, &c) in counts.iter().enumerate() {
            prefix[i + 1] = prefix[i] + c;
        }
        for &(lo, hi, _) in &strata {
            fill_shares(&mut share, &prefix, lo, hi);
        }
        // The large strata by Poisson draws and completion, each with its own tree
        // for the replicates whose draws overshoot; the rest on one tree.
        let plan = if cells == 0 {
            None
        } else {
            Plan::new(counts, &strata)?
        };
        let by_poisson = plan.as_ref().map_or(&[][..], |p| &p.strata[..]);
        let mut fallbacks = Vec::with_capacity(by_poisson.len());
        for s in by_poisson {
            let total = prefix[s.hi] - prefix[s.lo];
            fallbacks.push(Tree::new(
                &share[s.lo..s.hi],
                &[(0, s.hi - s.lo, total)],
                s.lo,
            )?);
        }
        // Strata of cells are told apart by their first cell (one of no cells draws nothing).
        let drawn: HashSet<usize> = by_poisson.iter().map(|s| s.lo).collect();
        let rest: Vec<_> = strata
            .iter()
            .filter(|t| t.1 == t.0 || !drawn.contains(&t.0))
            .copied()
            .collect();
        let tree = Tree::new(&share, &rest, 0)?;
        Ok(Self {
            tree,
            plan,
            fallbacks,
            key: key_of(seed),
        })
    }

    /// A working space for [`Drawing::draw`].
    pub(super) fn space(&self) -> Space {
        Space(
            Scratch::new(&self.tree),
            self.fallbacks.iter().map(Scratch::new).collect(),
        )
    }

    /// Replicate `replicate` into `row` (one count per cell, every cell
    /// written).
    pub(super) fn draw(&self, replicate: u32, row: &mut [f64], space: &mut Space) {
        self.draw_block(replicate, row, row.len(), space);
    }

    /// Replicates `first ..` into `rows`, one row of `width` (the cell
    /// count) each, at most [`BLOCK`] of them: each row as [`Drawing::draw`]
    /// draws it, the large strata's tables swept once for the block.
    pub(super) fn draw_block(&self, first: u32, rows: &mut [f64], width: usize, space: &mut Space) {
        let Space(own, theirs) = space;
        let count = (rows.len() / width.max(1)).min(BLOCK);
        let stream = |r: usize| Stream {
            key: self.key,
            replicate: first + r as u32,
            node: 0,
        };
        let by_poisson = self.plan.as_ref().map_or(&[][..], |p| &p.strata[..]);
        for (r, row) in rows.chunks_exact_mut(width).take(count).enumerate() {
            if self.tree.roots.is_empty() {
                // No stratum for the tree: the cells it would have copied
                // are empty, and those of the Poisson strata are all drawn
                // below (zeroing them too wrote every row twice).
                let mut from = 0;
                for s in by_poisson {
                    row[from..s.lo].fill(0.0);
                    from = s.hi;
                }
                row[from..].fill(0.0);
            } else {
                draw_replicate(row, &self.tree, stream(r), own);
            }
        }
        if let Some(plan) = &self.plan {
            for ((s, fallback), space) in plan.strata.iter().zip(&self.fallbacks).zip(theirs) {
                let mut fits = [false; BLOCK];
                plan.draw_block(
                    s,
                    &mut rows[s.lo..],
                    width,
                    self.key,
                    first,
                    &mut fits[..count],
                );
                for (r, _) in fits[..count].iter().enumerate().filter(|f| !*f.1) {
                    let cells = &mut rows[r * width + s.lo..r * width + s.hi];
                    draw_replicate(cells, fallback, stream(r), space);
                }
            }
        }
    }
}

/// Whether replicates `first .. first + count` have 32-bit numbers.
///
/// # Errors
/// [`MetricError::InvalidValue`] (naming `arg`) when they do not.
pub(super) fn check_replicates(first: u64, count: usize, arg: &'static str) -> Result<()> {
    if first.saturating_add(count as u64) > 1 << 32 {
        return Err(MetricError::InvalidValue {
            arg,
            detail: "at most 2^32 cells and 2^32 replicates".into(),
        });
    }
    Ok(())
}

/// Replicates `first .. first + count` of the multinomial resampling of
/// `counts`, stratum by stratum (`stratum_ends`: where each stratum's cells
/// end; each stratum keeps its total): `count x cells`, row-major.
///
/// # Errors
/// [`MetricError::InvalidValue`] when a stratum's total reaches 2^53 or the
/// ends are not increasing up to the cell count; `OutOfMemory`; `Interrupted`.
pub fn multinomial_draws(
    counts: &[u64],
    stratum_ends: &[usize],
    first: u64,
    count: usize,
    seed: u64,
    pool: &Pool,
) -> Result<Vec<f64>> {
    let cells = counts.len();
    check_replicates(first, count, "counts")?;
    let Some(size) = count.checked_mul(cells) else {
        return Err(MetricError::OutOfMemory {
            what: "the multinomial draws",
            bytes: (count as u128) * (cells as u128) * 8,
        });
    };
    let drawing = Drawing::new(counts, stratum_ends, seed)?;
    let mut out = try_filled(size, 0.0, "the multinomial draws")?;
    if cells == 0 {
        return Ok(out);
    }
    let draw = |space: &mut Space, (b, row): (usize, &mut [f64])| {
        pool.check()?;
        drawing.draw((first + b as u64) as u32, row, space);
        Ok(())
    };
    if pool.threads() > 1 && count > 1 {
        pool.install(|| {
            out.par_chunks_mut(cells)
                .enumerate()
                .try_for_each_init(|| drawing.space(), draw)
        })?;
    } else {
        let mut space = drawing.space();
        out.chunks_mut(cells)
            .enumerate()
            .try_for_each(|item| draw(&mut space, item))?;
    }
    Ok(out)
}

/// The left shares of the splits of cells `lo..hi` (recursively).
fn fill_shares(share: &mut [f64], prefix: &[u64], lo: usize, hi: usize) {
    if hi - lo < 2 {
        return;
    }
    let mid = lo + (hi - lo) / 2;
    let total = prefix[hi] - prefix[lo];
    if total > 0 {
        share[mid] = (prefix[mid] - prefix[lo]) as f64 / total as f64;
    }
    fill_shares(share, prefix, lo, mid);
    fill_shares(share, prefix, mid, hi);
}

#[cfg(test)]
mod tests;
