//! The unweighted pair walk ([`Walk::run_pairs`], and the block reading of
//! [`Walk::run_pairs_packed`]): its state, held in locals while the rows go
//! by, and its step per row, written once for both.
//!
//! Rows come negatives first within a tie, so a positive row is above the
//! negatives below its group (`ordered`) and tied with every negative seen
//! since its group opened; the counts below the group are carried by a
//! select, not a branch on group ends (which no predictor guesses on
//! continuous scores). Per-row sums go to `u64` and into the `u128` totals
//! once a block of rows ([`Pairs::settle`]; a block's sum is at most
//! `CHECK_ROWS` times the rows seen: far below 2^64).
//!
//! With `AP`, the average precision too: a group's precision is computed at
//! its first positive row (the counts below the group are known there, its
//! negatives having come first) and added times the group's positives when
//! the next group with positives opens. Groups without positives add nothing
//! (the full walk adds `0 * precision` for them), so the sum has the full
//! walk's bits.

use super::super::stream::Stream;
use super::Walk;
use crate::parallel::{Pool, CHECK_ROWS};

/// A pair walk under way (no weights, no curve but the average precision).
pub(super) struct Pairs {
    /// Positive and negative rows seen, those below the walk's start included.
    pub(super) pos_seen: u64,
    pub(super) neg_seen: u64,
    /// The positive and negative rows below the open group.
    pub(super) pb: u64,
    pub(super) nb: u64,
    /// Groups opened, the open one included.
    pub(super) groups: u64,
    /// The open group's key.
    pub(super) prev: u64,
    /// The current block's ordered pairs and pairs with every negative seen
    /// (the ties are their difference), before [`Pairs::settle`].
    pub(super) ord: u64,
    pub(super) all: u64,
    ordered: u128,
    tied: u128,
    sw_pos: f64,
    sw_neg: f64,
    ap: f64,
    /// The group with positives whose AP term waits: its index, its
    /// positives so far and its precision.
    pending_group: u64,
    pending_gp: u64,
    pending_precision: f64,
}

impl Pairs {
    /// The walk from where `walk` stands (no group open: a piece starts at a
    /// group boundary), its first row (`key`, positive `p`) opening a group
    /// and adding no tie (it is first in its group).
    #[inline(always)]
    pub(super) fn start<const AP: bool>(walk: &Walk, key: u64, p: bool) -> Self {
        let mut s = Self {
            pos_seen: walk.pos_below,
            neg_seen: walk.neg_below,
            pb: walk.pos_below,
            nb: walk.neg_below,
            groups: walk.groups + 1,
            prev: key,
            ord: 0,
            all: 0,
            ordered: walk.ordered,
            tied: walk.tied,
            sw_pos: walk.sw_pos,
            sw_neg: walk.sw_neg,
            ap: walk.ap,
            pending_group: 0,
            pending_gp: 0,
            pending_precision: 0.0,
        };
        s.ordered += u128::from(s.nb & u64::from(p).wrapping_neg());
        if AP && p {
            s.positive(s.groups, s.pb, s.nb);
        }
        s.pos_seen += u64::from(p);
        s.neg_seen += u64::from(!p);
        s
    }

    /// A positive row of group `group`, above `pb` positive and `nb` negative
    /// rows below its group: the AP's term of the group before, when this
    /// row opens the positives of another.
    #[allow(clippy::cast_precision_loss)]
    #[inline(always)]
    pub(super) fn positive(&mut self, group: u64, pb: u64, nb: u64) {
        if self.pending_group != group {
            self.ap += self.pending_gp as f64 * self.pending_precision;
            let tp = self.sw_pos - pb as f64;
            self.pending_precision = tp / (tp + (self.sw_neg - nb as f64));
            (self.pending_group, self.pending_gp) = (group, 0);
        }
        self.pending_gp += 1;
    }

    /// The next row: key `k`, positive `p`.
    #[inline(always)]
    pub(super) fn row<const AP: bool>(&mut self, k: u64, p: bool) {
        let opens = k != self.prev;
        if AP {
            self.pb = if opens { self.pos_seen } else { self.pb };
        }
        self.nb = if opens { self.neg_seen } else { self.nb };
        self.groups += u64::from(opens);
        let pm = u64::from(p).wrapping_neg();
        self.ord += self.nb & pm;
        self.all += self.neg_seen & pm;
        if AP && p {
            self.positive(self.groups, self.pb, self.nb);
        }
        self.pos_seen += u64::from(p);
        self.neg_seen += u64::from(!p);
        self.prev = k;
    }

    /// The block's sums into the totals.
    #[inline(always)]
    pub(super) fn settle(&mut self) {
        self.ordered += u128::from(self.ord);
        self.tied += u128::from(self.all - self.ord);
        (self.ord, self.all) = (0, 0);
    }

    /// Where the walk leaves `walk`: the groups, the pair counts (the block
    /// settled), no group open (the last one closes, its ties already
    /// counted), the rows seen below what comes next and, with `AP`, the
    /// last group's term added.
    #[allow(clippy::cast_precision_loss)]
    #[inline(always)]
    pub(super) fn finish<const AP: bool>(mut self, walk: &mut Walk) {
        self.settle();
        if AP {
            walk.ap = self.ap + self.pending_gp as f64 * self.pending_precision;
        }
        walk.groups = self.groups;
        (walk.ordered, walk.tied) = (self.ordered, self.tied);
        (walk.gp, walk.gn) = (0, 0);
        (walk.pos_below, walk.neg_below) = (self.pos_seen, self.neg_seen);
        (walk.w_pos_below, walk.w_neg_below) = (self.pos_seen as f64, self.neg_seen as f64);
    }
}

impl Walk {
    /// [`Walk::run_rows`] without weights or curves (with `AP`, the average
    /// precision alone): the pair counts, with no branch per row, by the
    /// steps of [`Pairs`]. The same counts and bits as
    /// [`Walk::run_counted`], in about half the time.
    pub(super) fn run_pairs<S: Stream, const AP: bool>(
        &mut self,
        mut rows: S,
        n: u64,
        pool: &Pool,
    ) {
        if let Some(keys) = rows
            .packed_u32()
            .and_then(|k| k.get(..usize::try_from(n).ok()?))
        {
            self.run_pairs_packed::<AP>(keys, pool);
            return;
        }
        let (k, p, _) = rows.next();
        let mut walk = Pairs::start::<AP>(self, k, p);
        let mut left = n - 1;
        while left > 0 {
            if pool.stopped() {
                return;
            }
            let step = left.min(CHECK_ROWS as u64);
            for _ in 0..step {
                let (k, p, _) = rows.next();
                walk.row::<AP>(k, p);
            }
            walk.settle();
            left -= step;
        }
        walk.finish::<AP>(self);
    }
}
