//! The table sweep: when both vectors have few distinct values, the rows are
//! grouped by the rank of `x`, and each group's histogram of `y` ranks is
//! weighed against the running histogram of all earlier groups.

use super::counts::KendallCounts;
use super::key_map::{counts_by_rank, ranks, KeyMap, TABLE_MAX_DISTINCT};
use super::runs::pairs_within;
use crate::parallel::Pool;
use crate::ranking::keys::Score;
use rayon::prelude::*;

/// One chunk of rows after the first pass: its distinct keys with counts.
struct Chunk<'a, X, Y> {
    x: &'a [X],
    y: &'a [Y],
    xs: KeyMap,
    ys: KeyMap,
}

/// The table sweep: the rows grouped by the rank of x, then, group after
/// group in increasing x, a dense histogram of the y ranks of the group
/// against the histogram of every earlier group. Discordant pairs are the
/// earlier rows with a larger y: `sum_w R[w] * #{g: y < w}`. Time
/// O(n + D_x D_y), memory `2 n` bytes plus O(D_x + D_y) per thread. `None`
/// when the data have too many distinct values (`cells` bounds `D_x D_y`).
pub(super) fn by_table<X: Score, Y: Score>(
    x: &[X],
    y: &[Y],
    cells: Option<usize>,
    pool: &Pool,
) -> Option<KendallCounts> {
    let n = x.len();
    let fits = |dx: usize, dy: usize| {
        dx <= TABLE_MAX_DISTINCT && dy <= TABLE_MAX_DISTINCT && cells.is_none_or(|c| dx * dy <= c)
    };
    let chunks = distinct_keys(x, y, &fits, pool)?;
    let (dx, x_rank) = ranks(&chunks.iter().map(|c| &c.xs).collect::<Vec<_>>());
    let (dy, y_rank) = ranks(&chunks.iter().map(|c| &c.ys).collect::<Vec<_>>());
    if !fits(dx, dy) {
        return None;
    }
    let x_counts: Vec<Vec<u64>> = chunks
        .iter()
        .map(|c| counts_by_rank(&c.xs, &x_rank, dx))
        .collect();
    let y_counts: Vec<Vec<u64>> = chunks
        .iter()
        .map(|c| counts_by_rank(&c.ys, &y_rank, dy))
        .collect();
    let total = |per: &[Vec<u64>], d: usize| {
        let mut t = vec![0_u64; d];
        for p in per {
            for (a, &b) in t.iter_mut().zip(p) {
                *a += b;
            }
        }
        t
    };
    let x_total = total(&x_counts, dx);
    let y_total = total(&y_counts, dy);
    let grouped = group_by_x(&chunks, &x_counts, (&x_rank, &y_rank), pool);
    drop(chunks);
    let (discordant, joint_ties) = sweep(&grouped, &x_total, dy, pool);
    Some(KendallCounts {
        n: n as u64,
        x_ties: pairs_within(&x_total),
        y_ties: pairs_within(&y_total),
        joint_ties,
        discordant,
        x_distinct: dx as u64,
        y_distinct: dy as u64,
    })
}

/// Pass 1 of [`by_table`]: the distinct keys of each chunk, with counts;
/// `None` as soon as any chunk alone has too many for `fits`.
fn distinct_keys<'a, X: Score, Y: Score>(
    x: &'a [X],
    y: &'a [Y],
    fits: &(impl Fn(usize, usize) -> bool + Sync),
    pool: &Pool,
) -> Option<Vec<Chunk<'a, X, Y>>> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let size = x.len().div_ceil(pool.threads().max(1)).max(1);
    let gave_up = AtomicBool::new(false);
    pool.install(|| {
        x.par_chunks(size)
            .zip(y.par_chunks(size))
            .map(|(cx, cy)| {
                let mut c = Chunk {
                    x: cx,
                    y: cy,
                    xs: KeyMap::with_capacity(1024),
                    ys: KeyMap::with_capacity(1024),
                };
                for (bx, by) in cx.chunks(4096).zip(cy.chunks(4096)) {
                    for (&a, &b) in bx.iter().zip(by) {
                        c.xs.add(a.key());
                        c.ys.add(b.key());
                    }
                    if gave_up.load(Ordering::Relaxed)
                        || !fits(c.xs.len, c.ys.len)
                        || pool.stopped()
                    {
                        gave_up.store(true, Ordering::Relaxed);
                        return None;
                    }
                }
                Some(c)
            })
            .collect()
    })
}

/// Pass 2 of [`by_table`]: each chunk's y ranks grouped by x rank (a counting
/// sort), with the start of each x group.
fn group_by_x<X: Score, Y: Score>(
    chunks: &[Chunk<'_, X, Y>],
    x_counts: &[Vec<u64>],
    (x_rank, y_rank): (&KeyMap, &KeyMap),
    pool: &Pool,
) -> Vec<(Vec<u16>, Vec<usize>)> {
    pool.install(|| {
        chunks
            .par_iter()
            .zip(x_counts)
            .map(|(c, counts)| {
                let mut starts = Vec::with_capacity(counts.len() + 1);
                let mut at = 0_usize;
                for &k in counts {
                    starts.push(at);
                    #[allow(clippy::cast_possible_truncation)]
                    {
                        at += k as usize;
                    }
                }
                starts.push(at);
                let mut next = starts.clone();
                let mut out = vec![0_u16; c.x.len()];
                for (&a, &b) in c.x.iter().zip(c.y) {
                    let rx = x_rank.get(a.key()) as usize;
                    #[allow(clippy::cast_possible_truncation)]
                    let ry = y_rank.get(b.key()) as u16;
                    if let Some(p) = next.get_mut(rx) {
                        if let Some(o) = out.get_mut(*p) {
                            *o = ry;
                        }
                        *p += 1;
                    }
                }
                (out, starts)
            })
            .collect()
    })
}

/// Pass 3 of [`by_table`]: the sweep over x groups, in pieces of consecutive
/// groups of similar cost, then the pairs across pieces (an earlier piece's
/// rows with a larger y). Returns the discordant and the joint-tie pairs.
fn sweep(
    grouped: &[(Vec<u16>, Vec<usize>)],
    x_total: &[u64],
    dy: usize,
    pool: &Pool,
) -> (u128, u128) {
    let dx = x_total.len();
    let cost = |g: usize| x_total.get(g).copied().unwrap_or(0) + dy as u64;
    let whole: u64 = (0..dx).map(cost).sum();
    let pieces = pool.threads().max(1) * 4;
    let mut bounds = vec![0_usize];
    let mut acc = 0_u64;
    for g in 0..dx {
        acc += cost(g);
        if acc * pieces as u64 >= whole * bounds.len() as u64 && g + 1 < dx {
            bounds.push(g + 1);
        }
    }
    bounds.push(dx);
    bounds.dedup();
    let swept: Vec<(u128, u128, Vec<u64>)> = pool.install(|| {
        bounds
            .par_windows(2)
            .map(|w| {
                let (lo, hi) = (
                    w.first().copied().unwrap_or(0),
                    w.get(1).copied().unwrap_or(0),
                );
                let mut seen = vec![0_u64; dy];
                let mut hist = vec![0_u64; dy];
                let (mut discordant, mut joint) = (0_u128, 0_u128);
                for g in lo..hi {
                    for (out, starts) in grouped {
                        let (a, b) = (
                            starts.get(g).copied().unwrap_or(0),
                            starts.get(g + 1).copied().unwrap_or(0),
                        );
                        for &r in out.get(a..b).unwrap_or(&[]) {
                            if let Some(h) = hist.get_mut(usize::from(r)) {
                                *h += 1;
                            }
                        }
                    }
                    // With n < 2^32 neither sum can overflow u64.
                    let (mut below, mut disc, mut squares) = (0_u64, 0_u64, 0_u64);
                    for (s, h) in seen.iter_mut().zip(hist.iter_mut()) {
                        disc += *s * below;
                        squares += *h * *h;
                        below += *h;
                        *s += *h;
                        *h = 0;
                    }
                    discordant += u128::from(disc);
                    joint += u128::from((squares - below) / 2);
                }
                (discordant, joint, seen)
            })
            .collect()
    });
    let mut discordant = 0_u128;
    let mut joint_ties = 0_u128;
    let mut before = vec![0_u64; dy];
    for (disc, joint, seen) in &swept {
        discordant += disc;
        joint_ties += joint;
        let mut below = 0_u64;
        for (b, &s) in before.iter_mut().zip(seen) {
            discordant += u128::from(*b) * u128::from(below);
            below += s;
            *b += s;
        }
    }
    (discordant, joint_ties)
}
