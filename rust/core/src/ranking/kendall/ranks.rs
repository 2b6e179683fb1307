//! Knight's algorithm by ranks: the rows sorted by `x` and by `y` side by side,
//! `y`'s order giving each row a rank, and the inversions of the ranks in `x`
//! order counted one digit at a time ([`super::inversions`]).

use super::counts::KendallCounts;
use super::inversions::count_inversions;
use super::runs::{ahead, run_cuts, tie_runs, visit_runs, AHEAD};
use crate::error::Result;
use crate::parallel::{collect_chunked, zeroed_slots, Pool};
use crate::ranking::keys::Score;
use crate::sort::sort_high_bits_alone;
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Knight's algorithm on ranks: the rows sorted by `x` and by `y` side by
/// side (one thread each), each as `u64` keys whose low `bits` hold the row
/// index and whose high bits are the value's order key, sorted by the high
/// bits alone. The `y` order gives each row its rank (the position of the
/// first row of its tie); the `x` order, read through those ranks, is the
/// sequence whose inversions are the discordant pairs, counted digit by digit
/// ([`count_inversions`]). Rows whose truncated keys are equal are put in
/// exact `(x, y)` order from their full keys. `None` when the row indices do
/// not fit `u32`.
pub(super) fn by_ranks<X: Score, Y: Score>(
    x: &[X],
    y: &[Y],
    pool: &Pool,
) -> Result<Option<KendallCounts>> {
    let n = x.len();
    let bits = (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1);
    if bits > 32 {
        return Ok(None);
    }
    let low = (1_u64 << bits) - 1;
    let mut xs = keyed_rows(x, low, pool)?;
    let mut ys = keyed_rows(y, low, pool)?;
    let (a, b) = pool.install(|| {
        rayon::join(
            || sort_high_bits_alone(&mut xs, bits, pool),
            || sort_high_bits_alone(&mut ys, bits, pool),
        )
    });
    a?;
    b?;
    let y_key = |i: usize| y.get(i).map_or(0, |v| v.key());
    let x_key = |i: usize| x.get(i).map_or(0, |v| v.key());
    let row = |k: u64| (k & low) as usize;
    // The rank of each row in y: the sorted position of its tie's first row.
    let rank: Vec<AtomicU32> = zeroed_slots(n, "the rank table")?;
    let cuts = run_cuts(&ys, bits, pool);
    let rank_piece = |w: &[usize]| -> (u128, u64) {
        let &[start, end] = w else {
            return (0, 0);
        };
        if pool.stopped() {
            return (0, 0);
        }
        let keys = ys.get(start..end).unwrap_or(&[]);
        let store = |k: u64, at: usize| {
            if let Some(r) = rank.get(row(k)) {
                r.store(at as u32, Relaxed);
            }
        };
        let runs = visit_runs(keys, bits, |i, k| {
            ahead(&rank, keys.get(i + AHEAD).map(|&a| row(a)));
            store(k, start + i);
        });
        let mut ties = 0_u128;
        let mut distinct = keys.len() as u64;
        let mut group: Vec<(u64, u64)> = Vec::new();
        for (i, j) in runs {
            group.clear();
            group.extend(
                keys.get(i..j)
                    .unwrap_or(&[])
                    .iter()
                    .map(|&k| (y_key(row(k)), k)),
            );
            sort_group(&mut group, pool);
            distinct -= group.len() as u64;
            for_each_run(
                &group,
                |r| r.0,
                |first, run| {
                    for &(_, k) in run {
                        store(k, start + i + first);
                    }
                    let t = run.len() as u128;
                    ties += t * (t - 1) / 2;
                    distinct += 1;
                },
            );
        }
        (ties, distinct)
    };
    let (y_ties, y_distinct) = over_pieces(&cuts, rank_piece, pool);
    pool.check()?;
    let rank: Vec<u32> = rank.into_iter().map(AtomicU32::into_inner).collect();
    // The ranks in x order (the sequence whose inversions are the discordant
    // pairs), written over the y keys, which are done with (fresh memory
    // would cost a page fault per 4 KiB); rows with equal truncated x keys
    // put in (x, rank) order.
    let words: &mut [u32] = bytemuck::cast_slice_mut(ys.as_mut_slice());
    let (seq, scratch) = words.split_at_mut(n);
    let cuts = run_cuts(&xs, bits, pool);
    let mut pieces: Vec<(usize, &mut [u32])> = Vec::with_capacity(cuts.len());
    let mut rest: &mut [u32] = seq;
    for w in cuts.windows(2) {
        if let &[start, end] = w {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(end - start);
            pieces.push((start, head));
            rest = tail;
        }
    }
    let rank_of = |k: u64| rank.get(row(k)).copied().unwrap_or(0);
    let fill = |(start, out): (usize, &mut [u32])| -> (u128, u128, u64) {
        if pool.stopped() {
            return (0, 0, 0);
        }
        let keys = xs.get(start..start + out.len()).unwrap_or(&[]);
        for (i, (slot, &k)) in out.iter_mut().zip(keys).enumerate() {
            ahead(&rank, keys.get(i + AHEAD).map(|&a| row(a)));
            *slot = rank_of(k);
        }
        let runs = visit_runs(keys, bits, |_, _| {});
        let (mut x_ties, mut joint, mut distinct) = (0_u128, 0_u128, keys.len() as u64);
        let mut group: Vec<(u64, u32)> = Vec::new();
        for (i, j) in runs {
            group.clear();
            group.extend(
                keys.get(i..j)
                    .unwrap_or(&[])
                    .iter()
                    .map(|&k| (x_key(row(k)), rank_of(k))),
            );
            sort_group(&mut group, pool);
            for (slot, g) in out.get_mut(i..j).unwrap_or_default().iter_mut().zip(&group) {
                *slot = g.1;
            }
            let (ties, runs) = tie_runs(&group, |g| g.0, pool);
            x_ties += ties;
            distinct = distinct - group.len() as u64 + runs;
            joint += tie_runs(&group, |g| *g, pool).0;
        }
        (x_ties, joint, distinct)
    };
    let parts: Vec<(u128, u128, u64)> = if pool.parallel_for(n) {
        pool.install(|| pieces.into_par_iter().map(fill).collect())
    } else {
        pieces.into_iter().map(fill).collect()
    };
    pool.check()?;
    drop(xs);
    drop(rank);
    let discordant = count_inversions(seq, scratch, bits, pool);
    pool.check()?;
    Ok(Some(KendallCounts {
        n: n as u64,
        x_ties: parts.iter().map(|p| p.0).sum(),
        y_ties,
        joint_ties: parts.iter().map(|p| p.1).sum(),
        discordant,
        x_distinct: parts.iter().map(|p| p.2).sum(),
        y_distinct,
    }))
}

/// Each row's order key with its low bits (`low`) replaced by the row index.
fn keyed_rows<X: Score>(x: &[X], low: u64, pool: &Pool) -> Result<Vec<u64>> {
    collect_chunked(
        x.len(),
        |i| (x.get(i).map_or(0, |v| v.key()) & !low) | i as u64,
        pool,
    )
}

/// Sort a group of rows sharing a truncated key by `(full key, second)`: a
/// parallel sort when the group is large (a heavy tie).
fn sort_group<T: Ord + Send>(group: &mut [T], pool: &Pool) {
    if group.len() >= 1 << 16 && pool.threads() > 1 {
        pool.install(|| group.par_sort_unstable());
    } else {
        group.sort_unstable();
    }
}

/// Call `f(first, run)` for each run of equal `key` in a sorted slice.
fn for_each_run<T, K: PartialEq>(
    sorted: &[T],
    key: impl Fn(&T) -> K,
    mut f: impl FnMut(usize, &[T]),
) {
    let mut i = 0;
    while let Some(first) = sorted.get(i) {
        let k = key(first);
        let mut j = i + 1;
        while sorted.get(j).is_some_and(|v| key(v) == k) {
            j += 1;
        }
        f(i, sorted.get(i..j).unwrap_or(&[]));
        i = j;
    }
}

/// Run `piece` over consecutive cut pairs (in parallel when the pool does
/// large work in parallel) and add up its `(pairs, distinct)`.
fn over_pieces(
    cuts: &[usize],
    piece: impl Fn(&[usize]) -> (u128, u64) + Send + Sync,
    pool: &Pool,
) -> (u128, u64) {
    let parts: Vec<(u128, u64)> = if pool.parallel_for(cuts.last().copied().unwrap_or(0)) {
        pool.install(|| cuts.par_windows(2).map(&piece).collect())
    } else {
        cuts.windows(2).map(&piece).collect()
    };
    parts.iter().fold((0, 0), |(a, b), p| (a + p.0, b + p.1))
}
