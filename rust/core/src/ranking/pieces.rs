//! Pair counts without weights in parallel: a sorted packed array cut into
//! pieces at tie-group boundaries, each walked on its own and combined exactly.

use super::keys::Item;
use super::strategy::Packed;
use super::walk::Walk;
use super::{BinaryRanking, Totals};
use crate::parallel::Pool;
use rayon::prelude::*;

/// Pair counts only, without weights: the sorted rows are cut into pieces
/// at tie-group boundaries and walked in parallel. Every negative of the
/// pieces before lies strictly below a piece, so the pieces combine exactly:
/// `ordered += ordered_piece + positives_piece * negatives_before`.
pub(super) fn pairs_in_pieces<T: Item>(rows: &[T], totals: Totals) -> BinaryRanking {
    const PIECES: usize = 16;
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
    let empty = Totals {
        n_pos: 0,
        n_neg: 0,
        w_pos: 0.0,
        w_neg: 0.0,
    };
    let pieces: Vec<Walk> = cuts
        .windows(2)
        .collect::<Vec<_>>()
        .into_par_iter()
        .map(|w| {
            let piece = rows.get(w[0]..w[1]).unwrap_or(&[]);
            let mut walk = Walk::new(empty, false, false);
            walk.run(
                Packed { rows: piece.iter() },
                piece.len() as u64,
                &Pool::sequential(),
            );
            walk
        })
        .collect();
    let mut neg_before = 0_u64;
    let (mut ordered, mut tied, mut groups) = (0_u128, 0_u128, 0_u64);
    for w in &pieces {
        // After `run`, the piece's rows all lie "below": its own counts.
        ordered += w.ordered + u128::from(w.pos_below) * u128::from(neg_before);
        tied += w.tied;
        groups += w.groups;
        neg_before += w.neg_below;
    }
    let reversed = u128::from(totals.n_pos) * u128::from(totals.n_neg) - ordered - tied;
    let (reversed_share, tied_share, ordered_share) = count_shares(reversed, tied, ordered);
    BinaryRanking {
        n_pos: totals.n_pos,
        n_neg: totals.n_neg,
        w_pos: totals.w_pos,
        w_neg: totals.w_neg,
        reversed,
        tied,
        ordered,
        reversed_share,
        tied_share,
        ordered_share,
        average_precision: f64::NAN,
        aupr_trapezoid: f64::NAN,
        aurc: f64::NAN,
        n_thresholds: groups,
    }
}

/// The shares of exact pair counts (NaN without pairs).
#[allow(clippy::cast_precision_loss)]
pub(super) fn count_shares(reversed: u128, tied: u128, ordered: u128) -> (f64, f64, f64) {
    let all = reversed + tied + ordered;
    if all == 0 {
        return (f64::NAN, f64::NAN, f64::NAN);
    }
    let all = all as f64;
    (
        reversed as f64 / all,
        tied as f64 / all,
        ordered as f64 / all,
    )
}
