//! Walks without weights in parallel: the sorted rows are cut into a fixed
//! number of pieces at tie-group boundaries, each piece is walked from the
//! counts below it, and the pieces are combined in order. The cuts depend on
//! the rows only, so the result does not depend on the thread count.

use super::binary::{BinaryRanking, Curves, Totals};
use super::keys::Item;
use super::stream::Stream;
use super::walk::Walk;
use crate::error::Result;
use crate::parallel::Pool;
use rayon::prelude::*;

/// Pieces of a walk.
pub(super) const PIECES: usize = 16;

/// Rows from which a walk without weights runs in pieces (whatever the
/// thread count, so that the sums are always added in the same order).
pub(super) const PIECE_WALK_MIN: usize = 1 << 16;

/// A piece of sorted rows: how many rows it holds, and how many positives
/// and negatives lie below it.
pub(super) trait Piece: Sync {
    fn rows(&self) -> u64;
    fn below(&self) -> (u64, u64);
}

/// A piece of one packed array (the outcome in bit 0 of each key).
impl<T: Item> Piece for (&[T], u64, u64) {
    fn rows(&self) -> u64 {
        self.0.len() as u64
    }
    fn below(&self) -> (u64, u64) {
        (self.1, self.2)
    }
}

/// A piece of two sorted sides (positives, negatives).
impl<T: Item> Piece for (&[T], &[T], u64, u64) {
    fn rows(&self) -> u64 {
        (self.0.len() + self.1.len()) as u64
    }
    fn below(&self) -> (u64, u64) {
        (self.2, self.3)
    }
}

/// A packed sorted array cut into [`PIECES`] pieces at tie-group boundaries,
/// with the positives and negatives below each.
pub(super) fn packed_pieces<T: Item>(rows: &[T]) -> Vec<(&[T], u64, u64)> {
    let n = rows.len();
    let group = |i: usize| rows.get(i).map(|x| x.key() >> 1);
    let mut cuts = vec![0];
    for p in 1..PIECES {
        let mut c = (n * p / PIECES).max(cuts.last().copied().unwrap_or(0));
        while c > 0 && c < n && group(c) == group(c - 1) {
            c += 1;
        }
        cuts.push(c);
    }
    cuts.push(n);
    let (mut pos, mut neg) = (0_u64, 0_u64);
    cuts.windows(2)
        .map(|w| {
            let piece = rows.get(w[0]..w[1]).unwrap_or(&[]);
            let out = (piece, pos, neg);
            let p: u64 = piece.iter().map(|x| x.key() & 1).sum();
            pos += p;
            neg += piece.len() as u64 - p;
            out
        })
        .collect()
}

/// The pieces [`packed_pieces`] cuts from the merge of two sorted packed
/// arrays, found without merging them (the same cuts, so the same walk bit
/// for bit): each piece a slice of each array, with the positives and
/// negatives below it.
pub(super) fn packed_pair_pieces<'a, T: Item>(
    a: &'a [T],
    b: &'a [T],
) -> Vec<(&'a [T], &'a [T], u64, u64)> {
    let n = a.len() + b.len();
    let group = |x: &T| x.key() >> 1;
    // The position of each array's part of the first `c` merged rows.
    let at = |c: usize| {
        let i = crate::sort::split(a, b, c);
        (i, c - i)
    };
    let mut cuts = vec![(0, 0)];
    for p in 1..PIECES {
        let (last_i, last_j) = cuts.last().copied().unwrap_or((0, 0));
        let c = (n * p / PIECES).max(last_i + last_j);
        let (i, j) = at(c);
        // The last row before the cut and the first after it.
        let before = match (
            i.checked_sub(1).and_then(|k| a.get(k)),
            j.checked_sub(1).and_then(|k| b.get(k)),
        ) {
            (Some(x), Some(y)) => Some(*x.max(y)),
            (x, y) => x.or(y).copied(),
        };
        let after = match (a.get(i), b.get(j)) {
            (Some(x), Some(y)) => Some(*x.min(y)),
            (x, y) => x.or(y).copied(),
        };
        cuts.push(match (before, after) {
            // Inside a tie group: the cut moves past its end.
            (Some(x), Some(y)) if group(&x) == group(&y) => {
                let g = group(&x);
                (
                    a.partition_point(|r| group(r) <= g),
                    b.partition_point(|r| group(r) <= g),
                )
            }
            _ => (i, j),
        });
    }
    cuts.push((a.len(), b.len()));
    let (mut pos, mut neg) = (0_u64, 0_u64);
    cuts.windows(2)
        .map(|w| {
            let ((i0, j0), (i1, j1)) = (w[0], w[1]);
            let (x, y) = (a.get(i0..i1).unwrap_or(&[]), b.get(j0..j1).unwrap_or(&[]));
            let out = (x, y, pos, neg);
            let p: u64 = x.iter().chain(y).map(|r| r.key() & 1).sum();
            pos += p;
            neg += (x.len() + y.len()) as u64 - p;
            out
        })
        .collect()
}

/// The walk of sorted rows given as pieces in ascending order (`stream`
/// gives a piece's rows): each piece walked on its own from the counts below
/// it (in parallel when the pool is), then combined in order. Without
/// weights only.
///
/// # Errors
/// An interruption.
pub(super) fn walk_in_pieces<P: Piece, S: Stream>(
    pieces: &[P],
    stream: impl Fn(&P) -> S + Sync,
    totals: Totals,
    curves: Curves,
    pool: &Pool,
) -> Result<BinaryRanking> {
    let one = |p: &P| {
        let (pos, neg) = p.below();
        let mut w = Walk::starting_after(totals, curves, pos, neg);
        w.run_rows(stream(p), p.rows(), pool);
        w
    };
    let n: u64 = pieces.iter().map(Piece::rows).sum();
    #[allow(clippy::cast_possible_truncation)]
    let walks: Vec<Walk> = if pool.parallel_for(n as usize) {
        pool.install(|| pieces.par_iter().map(one).collect())
    } else {
        pieces.iter().map(one).collect()
    };
    pool.check()?;
    Ok(Walk::combine(totals, curves, walks))
}

/// The walk of a state's unweighted tie groups (`keys` increasing, with
/// `pos[i]` positives and `neg[i]` negatives) in [`PIECES`] pieces of as many
/// groups, walked side by side on the pool's threads from the counts below
/// each and combined in order, as [`walk_in_pieces`] walks rows. The cuts
/// depend on the groups only, so the result does not depend on the thread
/// count or on how the rows came in. `None` (nothing walked) below
/// [`PIECE_WALK_MIN`] groups, or when a key appears twice (a count past
/// `u32::MAX` spread over entries): the serial walk of the distinct groups
/// serves those.
///
/// # Errors
/// An interruption.
pub(super) fn walk_groups_in_pieces(
    keys: &[u64],
    pos: &[u32],
    neg: &[u32],
    curves: Curves,
    pool: &Pool,
) -> Option<Result<BinaryRanking>> {
    let n = keys.len();
    if n < PIECE_WALK_MIN || pos.len() != n || neg.len() != n {
        return None;
    }
    let bounds: Vec<(usize, usize)> = (0..PIECES)
        .map(|p| (n * p / PIECES, n * (p + 1) / PIECES))
        .collect();
    // Each piece's positives and negatives, and whether a key repeats in it
    // or across the cut below it.
    let look = |&(lo, hi): &(usize, usize)| -> (u64, u64, bool) {
        let sum = |v: &[u32]| v.iter().map(|&x| u64::from(x)).sum::<u64>();
        let part = keys.get(lo.saturating_sub(1)..hi).unwrap_or_default();
        let twice = part.windows(2).any(|w| w[0] == w[1]);
        let (p, q) = (pos.get(lo..hi), neg.get(lo..hi));
        (
            sum(p.unwrap_or_default()),
            sum(q.unwrap_or_default()),
            twice,
        )
    };
    let parallel = pool.parallel_for(n);
    let looks: Vec<(u64, u64, bool)> = if parallel {
        pool.install(|| bounds.par_iter().map(look).collect())
    } else {
        bounds.iter().map(look).collect()
    };
    if looks.iter().any(|l| l.2) {
        return None;
    }
    let mut jobs = Vec::with_capacity(PIECES);
    let (mut n_pos, mut n_neg) = (0_u64, 0_u64);
    for (&b, &(p, q, _)) in bounds.iter().zip(&looks) {
        jobs.push((b, n_pos, n_neg));
        n_pos += p;
        n_neg += q;
    }
    let totals = Totals::counted(n_pos, n_neg);
    let one = |&((lo, hi), pos_below, neg_below): &((usize, usize), u64, u64)| -> Walk {
        let mut w = Walk::starting_after(totals, curves, pos_below, neg_below);
        let (p, q) = (pos.get(lo..hi), neg.get(lo..hi));
        for (&p, &q) in p.unwrap_or_default().iter().zip(q.unwrap_or_default()) {
            if p | q != 0 {
                w.add_to_group(u64::from(p), u64::from(q), true);
            }
        }
        w.close_last_group();
        w
    };
    let walks: Vec<Walk> = if parallel {
        pool.install(|| jobs.par_iter().map(one).collect())
    } else {
        jobs.iter().map(one).collect()
    };
    Some(pool.check().map(|()| Walk::combine(totals, curves, walks)))
}
