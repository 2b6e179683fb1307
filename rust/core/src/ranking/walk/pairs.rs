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
//! With `AP`, the average precision too. A group's first positive row (the
//! one with no positive seen since the group opened: its negatives come
//! first) keeps the counts below the group in a slot of a small table; every
//! row writes its counts to the next free slot and only such a row moves past
//! it, so the rows take no branch on their outcome. The positives of a group
//! are then the positives below the next kept group less its own (no group in
//! between has a positive). The table is summed ([`Pairs::flush`]) between
//! runs of rows and at the end: each group's precision times its positives,
//! the terms computed side by side in vectors and added in ascending order.
//! Groups without positives add nothing (the full walk adds
//! `0 * precision` for them), so the sum has the full walk's bits. Before,
//! each positive row took a branch (mispredicted on about three rows in ten
//! at 30 % positives) and its group's division in the rows' loop: on an
//! Intel guest the average precision's walk of 10^7 rows on one thread took
//! 63-65 ms over the sorted float32 halves, now 45-47 ms (the AUROC's walk:
//! 27 ms), and 80-84 ms over two sorted sides, now 71-72 ms (49 ms). The
//! first positive of a group is then found from the row before (it opens
//! the group or follows a negative of it: one bit of state), not from the
//! positives below the group (a `u64` and a select per row), and the table
//! is of a fixed length: the rows' state left the stack, and the average
//! precision's excess over the AUROC fell from 16-41 to 6-30 ms across the
//! score shapes of `benches/test_bench_sort_yardstick.py` (10^7 rows).
//!
//! With `PL`, DeLong's placements too, in exact integers. A positive row of a
//! group with `nb` negatives below it is placed above `nb + gn / 2` of the
//! `N` negatives; its group's negatives came first, so `nb + gn` is the
//! negatives seen at that row and `2 N v10 = nb + seen` is known there. A
//! negative row is placed below `P - pe + gp / 2` of the `P` positives (`pe`:
//! positives seen when its group closes, `pb`: below the group), so
//! `2 P v01 = 2 P - pb - pe`, known when the next group opens: each opening
//! row adds the closing group's `gn (2 P - pb - pe)^2`, by a mask, not a
//! branch. The squares are `u128`: below `2^82` each and the sums below
//! `2^122` for the fewer than `2^40` rows this walk takes (past them the
//! full walk sums the placements in floating point).

use super::super::stream::Stream;
use super::Walk;
use crate::cpu::widest;
use crate::parallel::{Pool, CHECK_ROWS};
use std::hint::select_unpredictable;

/// With `AP`, the rows [`Walk::run_pairs`] walks between two looks at the
/// stop flag (and two sums of the average precision's table), and the
/// table's slots: one a row, and the last group of the run before.
const AP_ROWS: usize = 1 << 10;
const SLOTS: usize = AP_ROWS + 1;
/// The table's length: a power of two past [`SLOTS`], so that a slot's index
/// masked by `TABLE - 1` (the same index: `kept <= SLOTS`) needs no bounds check.
const TABLE: usize = 2048;
/// Slots the vectorized block walk writes at once (past `kept`: they fit,
/// `SLOTS + LANES <= TABLE`).
pub(super) const LANES: usize = 16;
const _: () = assert!(SLOTS + LANES <= TABLE);

/// The average precision's slots: the positive and negative rows below
/// each kept group, in two tables.
struct Slots {
    pb: [u64; TABLE],
    nb: [u64; TABLE],
}

impl Slots {
    /// Slot `at` (masked to the tables' length: the same slot) set.
    #[inline(always)]
    fn put(&mut self, at: usize, pb: u64, nb: u64) {
        if let Some(slot) = self.pb.get_mut(at & (TABLE - 1)) {
            *slot = pb;
        }
        if let Some(slot) = self.nb.get_mut(at & (TABLE - 1)) {
            *slot = nb;
        }
    }
}

/// A pair walk under way (no weights, no curve but the average precision).
pub(super) struct Pairs {
    /// Positive and negative rows seen, those below the walk's start included.
    pub(super) pos_seen: u64,
    pub(super) neg_seen: u64,
    /// The positive and negative rows below the open group (`pb` kept by
    /// the rows' steps with `PL` alone: the average precision's steps find a
    /// group's first positive from `last_negative`).
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
    /// With `AP`: the counts below each group whose first positive row has
    /// come since the last [`Pairs::flush`] (ascending), and the slots kept
    /// (slot `kept` is the next free one). Allocated without `AP` too (32
    /// KiB a piece): tables of a length known at compile time, so the rows'
    /// loop holds no length in a register and checks no bound.
    slots: Box<Slots>,
    kept: usize,
    /// With `AP`: whether the row before is negative (a positive row tying it
    /// is then its group's first positive: negatives come first in a tie).
    pub(super) last_negative: bool,
    /// With `PL`: twice the positives, and the exact sums (see the module).
    two_pos: u64,
    s10: u128,
    s01: u128,
}

impl Pairs {
    /// The walk from where `walk` stands (no group open: a piece starts at a
    /// group boundary), its first row (`key`, positive `p`) opening a group
    /// and adding no tie (it is first in its group).
    #[inline(always)]
    pub(super) fn start<const AP: bool, const PL: bool>(walk: &Walk, key: u64, p: bool) -> Self {
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
            slots: Box::new(Slots {
                pb: [0; TABLE],
                nb: [0; TABLE],
            }),
            kept: 0,
            last_negative: false,
            two_pos: 2 * walk.r.n_pos,
            s10: walk.s10,
            s01: walk.s01,
        };
        s.ordered += u128::from(s.nb & u64::from(p).wrapping_neg());
        if AP {
            s.keep(p, true);
        }
        if PL {
            s.placed(p);
        }
        s.pos_seen += u64::from(p);
        s.neg_seen += u64::from(!p);
        s
    }

    /// With `AP`: the row about to be counted (positive `p`, opening a group
    /// when `opens`, the negatives below its group in `nb`) keeps its slot when
    /// it is its group's first positive row (it opens the group or follows a
    /// negative of it; the positives below the group are then `pos_seen`); no
    /// branch on `p`.
    #[inline(always)]
    fn keep(&mut self, p: bool, opens: bool) {
        self.slots.put(self.kept, self.pos_seen, self.nb);
        self.kept += usize::from(p & (opens | self.last_negative));
        self.last_negative = !p;
    }

    /// With `AP`: a positive row that opens its group, `pb` positive and
    /// `nb` negative rows below it (the block walk's rows, known positive).
    #[inline(always)]
    pub(super) fn keep_opening(&mut self, pb: u64, nb: u64) {
        self.slots.put(self.kept, pb, nb);
        self.kept += 1;
    }

    /// With `AP`: the next [`LANES`] free slots (of both tables), to be
    /// written and then counted by [`Pairs::kept_more`]. The walks keep
    /// `kept` at most [`SLOTS`], so they fit; were they not to, the table is
    /// flushed first (never a slot lost).
    #[inline(always)]
    pub(super) fn free_slots(&mut self) -> Option<(&mut [u64; LANES], &mut [u64; LANES])> {
        if self.kept + LANES > TABLE {
            self.flush();
        }
        let at = self.kept..self.kept + LANES;
        let Slots { pb, nb } = &mut *self.slots;
        let pb = pb.get_mut(at.clone())?.try_into().ok()?;
        let nb = nb.get_mut(at)?.try_into().ok()?;
        Some((pb, nb))
    }

    /// With `AP`: `k` more slots kept (written by way of [`Pairs::free_slots`]).
    #[inline(always)]
    pub(super) fn kept_more(&mut self, k: usize) {
        self.kept += k;
    }

    /// With `AP`: [`Pairs::flush`] once fewer than two blocks of the block
    /// walk (of sixteen rows, each keeping at most one slot) would fit.
    #[inline(always)]
    pub(super) fn flush_when_full(&mut self) {
        if self.kept + 32 > SLOTS {
            self.flush();
        }
    }

    /// With `AP`: the AP's terms of every kept group but the last (whose
    /// positives are not all seen yet), added in ascending order; the last
    /// stays, as slot 0. Called between runs of at most [`AP_ROWS`] rows (out
    /// of the rows' loop: its state then stays in registers).
    #[inline(never)]
    pub(super) fn flush(&mut self) {
        if self.kept < 2 {
            return;
        }
        let mut terms = [0.0_f64; SLOTS];
        let pb = self.slots.pb.get(..self.kept).unwrap_or_default();
        let nb = self.slots.nb.get(..self.kept).unwrap_or_default();
        ap_terms(pb, nb, self.sw_pos, self.sw_neg, &mut terms);
        for &term in terms.get(..self.kept - 1).unwrap_or_default() {
            self.ap += term;
        }
        self.slots.pb.copy_within(self.kept - 1..self.kept, 0);
        self.slots.nb.copy_within(self.kept - 1..self.kept, 0);
        self.kept = 1;
    }

    /// With `PL`: a positive row's term, its group's negatives all seen.
    #[inline(always)]
    fn placed(&mut self, p: bool) {
        let x = (self.nb + self.neg_seen) & u64::from(p).wrapping_neg();
        self.s10 += u128::from(x) * u128::from(x);
    }

    /// With `PL`: the term of the open group's negatives, added when `closes`
    /// (its positives all seen).
    #[inline(always)]
    fn close_placed(&mut self, closes: bool) {
        let gn = (self.neg_seen - self.nb) & u64::from(closes).wrapping_neg();
        let d = self.two_pos - self.pb - self.pos_seen;
        self.s01 += u128::from(gn) * (u128::from(d) * u128::from(d));
    }

    /// The next row: key `k`, positive `p`.
    #[inline(always)]
    pub(super) fn row<const AP: bool, const PL: bool>(&mut self, k: u64, p: bool) {
        let opens = k != self.prev;
        if PL {
            self.close_placed(opens);
        }
        // Selects, not branches: on continuous scores most rows open a group,
        // not all, and no predictor guesses which.
        if PL {
            self.pb = select_unpredictable(opens, self.pos_seen, self.pb);
        }
        self.nb = select_unpredictable(opens, self.neg_seen, self.nb);
        self.groups += u64::from(opens);
        let pm = u64::from(p).wrapping_neg();
        self.ord += self.nb & pm;
        self.all += self.neg_seen & pm;
        if AP {
            self.keep(p, opens);
        }
        if PL {
            self.placed(p);
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
    /// last group's term added (with `PL`, its negatives' placements).
    #[allow(clippy::cast_precision_loss)]
    #[inline(always)]
    pub(super) fn finish<const AP: bool, const PL: bool>(mut self, walk: &mut Walk) {
        self.settle();
        if AP {
            self.flush();
            // The last group's positives are every positive since it kept its
            // slot: a slot past it with every positive below ends it, and the
            // flush adds its term (nothing when no group kept a slot).
            self.keep_opening(self.pos_seen, 0);
            self.flush();
            walk.ap = self.ap;
        }
        if PL {
            self.close_placed(true);
            (walk.s10, walk.s01) = (self.s10, self.s01);
        }
        walk.groups = self.groups;
        (walk.ordered, walk.tied) = (self.ordered, self.tied);
        (walk.gp, walk.gn) = (0, 0);
        (walk.pos_below, walk.neg_below) = (self.pos_seen, self.neg_seen);
        (walk.w_pos_below, walk.w_neg_below) = (self.pos_seen as f64, self.neg_seen as f64);
    }
}

widest! {
    /// The average precision's term of each kept group but the last (the
    /// positives up to the next kept group times the precision at and above
    /// the group), into `terms`, with the widest vectors this CPU runs: the
    /// terms are independent, and their sum is taken in order by the caller.
    fn ap_terms(pb: &[u64], nb: &[u64], sw_pos: f64, sw_neg: f64, terms: &mut [f64]) => ap_terms_portable
}

/// The loop of [`ap_terms`], inlined into each variant so that it
/// vectorises for its features.
#[allow(clippy::cast_precision_loss)]
#[inline(always)]
fn ap_terms_portable(pb: &[u64], nb: &[u64], sw_pos: f64, sw_neg: f64, terms: &mut [f64]) {
    let next = pb.get(1..).unwrap_or_default();
    for (((term, &pb), &nb), &next_pb) in terms.iter_mut().zip(pb).zip(nb).zip(next) {
        let tp = sw_pos - pb as f64;
        *term = (next_pb - pb) as f64 * (tp / (tp + (sw_neg - nb as f64)));
    }
}

impl Walk {
    /// [`Walk::run_rows`] without weights or curves (with `AP`, the average
    /// precision alone; with `PL`, DeLong's placements alone): the pair
    /// counts, with no branch per row, by the steps of [`Pairs`]. The same
    /// counts and bits as [`Walk::run_counted`], in about half the time.
    pub(super) fn run_pairs<S: Stream, const AP: bool, const PL: bool>(
        &mut self,
        mut rows: S,
        n: u64,
        pool: &Pool,
    ) {
        // The packed blocks skip rows; the placements need every row.
        if let Some(keys) = rows
            .packed_u32()
            .filter(|_| !PL)
            .and_then(|k| k.get(..usize::try_from(n).ok()?))
        {
            self.run_pairs_packed::<AP>(keys, pool);
            return;
        }
        if let Some((a, b)) = rows
            .packed_u32_pair()
            .filter(|(a, b)| !PL && (a.len() + b.len()) as u64 == n)
        {
            if self.run_pairs_packed_merge::<AP>(a, b, pool) {
                return;
            }
        }
        let (k, p, _) = rows.next();
        let mut walk = Pairs::start::<AP, PL>(self, k, p);
        let mut left = n - 1;
        while left > 0 {
            if pool.stopped() {
                return;
            }
            let step = left.min(if AP { AP_ROWS } else { CHECK_ROWS } as u64);
            for _ in 0..step {
                let (k, p, _) = rows.next();
                walk.row::<AP, PL>(k, p);
            }
            walk.settle();
            if AP {
                walk.flush();
            }
            left -= step;
        }
        walk.finish::<AP, PL>(self);
    }
}

#[cfg(test)]
mod tests {
    use super::super::super::binary::{Curves, Totals};
    use super::super::super::stream::Merge;
    use super::Walk;
    use crate::parallel::Pool;

    /// The placements' sums over tie groups `(key, positives, negatives)` in
    /// ascending order, exactly: `sum gp (2 nb + gn)^2` and
    /// `sum gn (2 P - 2 pb - gp)^2`.
    fn exact(groups: &[(u64, u64, u64)]) -> (u128, u128) {
        let two_pos: u64 = 2 * groups.iter().map(|g| g.1).sum::<u64>();
        let (mut pb, mut nb, mut s10, mut s01) = (0_u64, 0_u64, 0_u128, 0_u128);
        for &(_, gp, gn) in groups {
            let x = u128::from(2 * nb + gn);
            let d = u128::from(two_pos - 2 * pb - gp);
            s10 += u128::from(gp) * x * x;
            s01 += u128::from(gn) * d * d;
            pb += gp;
            nb += gn;
        }
        (s10, s01)
    }

    /// The branch-free placements walk, whole and in two pieces cut at a
    /// group boundary, gives the exact sums of the groups rounded once, and
    /// the full walk's pair counts and (float) placements to 1e-12; with
    /// every score tied, one row, and one side empty too.
    #[test]
    #[allow(clippy::cast_precision_loss)]
    fn placements_walk_sums_exactly() {
        let pool = Pool::new(1);
        let mut s = 7_u64;
        for (n, distinct, every) in [
            (1, 3, 2),
            (9, 1, 3),
            (2000, 40, 3),
            (5000, 1 << 30, 4),
            (3000, 7, 1),
        ] {
            let mut rows: Vec<(u64, bool)> = (0..n)
                .map(|_| {
                    s = s
                        .wrapping_mul(6_364_136_223_846_793_005)
                        .wrapping_add(1_442_695_040_888_963_407);
                    ((s >> 33) % distinct, (s >> 13).is_multiple_of(every))
                })
                .collect();
            rows.sort_unstable();
            let pos: Vec<u64> = rows.iter().filter(|r| r.1).map(|r| r.0).collect();
            let neg: Vec<u64> = rows.iter().filter(|r| !r.1).map(|r| r.0).collect();
            let mut groups: Vec<(u64, u64, u64)> = Vec::new();
            for &(k, p) in &rows {
                match groups.last_mut() {
                    Some(g) if g.0 == k => {
                        g.1 += u64::from(p);
                        g.2 += u64::from(!p);
                    }
                    _ => groups.push((k, u64::from(p), u64::from(!p))),
                }
            }
            let totals = Totals::counted(pos.len() as u64, neg.len() as u64);
            let (s10, s01) = exact(&groups);
            let share = |s: u128, n: usize| {
                if n > 0 {
                    s as f64 / (4.0 * (n as f64) * (n as f64))
                } else {
                    0.0
                }
            };
            let run = |curves: Curves| {
                let mut w = Walk::new(totals, false, curves);
                w.run(Merge::<u64, false>::new(&pos, &neg), n as u64, &pool);
                w.result()
            };
            let (pl, all) = (run(Curves::Placements), run(Curves::All));
            assert_eq!(
                pl.placement_pos_sq.to_bits(),
                share(s10, neg.len()).to_bits()
            );
            assert_eq!(
                pl.placement_neg_sq.to_bits(),
                share(s01, pos.len()).to_bits()
            );
            assert!(
                pl.average_precision.is_nan() && pl.aurc.is_nan() && pl.aupr_trapezoid.is_nan()
            );
            assert_eq!(
                (pl.ordered, pl.tied, pl.n_thresholds),
                (all.ordered, all.tied, all.n_thresholds)
            );
            for (a, b) in [
                (pl.placement_pos_sq, all.placement_pos_sq),
                (pl.placement_neg_sq, all.placement_neg_sq),
            ] {
                assert!((a - b).abs() <= 1e-12 * b.abs(), "n {n}: {a} against {b}");
            }
            // Two pieces cut where the middle group starts.
            let cut = groups.len() / 2;
            let (Some(&(key, ..)), true) = (groups.get(cut), groups.len() > 1) else {
                continue;
            };
            let (p0, n0) = (
                pos.partition_point(|&k| k < key),
                neg.partition_point(|&k| k < key),
            );
            let mut low = Walk::starting_after(totals, Curves::Placements, 0, 0);
            low.run_rows(
                Merge::<u64, false>::new(&pos[..p0], &neg[..n0]),
                (p0 + n0) as u64,
                &pool,
            );
            let mut high = Walk::starting_after(totals, Curves::Placements, p0 as u64, n0 as u64);
            let rest = (pos.len() - p0 + neg.len() - n0) as u64;
            high.run_rows(
                Merge::<u64, false>::new(&pos[p0..], &neg[n0..]),
                rest,
                &pool,
            );
            let both = Walk::combine(totals, Curves::Placements, vec![low, high]);
            assert_eq!(
                (
                    both.placement_pos_sq.to_bits(),
                    both.placement_neg_sq.to_bits(),
                    both.tied
                ),
                (
                    pl.placement_pos_sq.to_bits(),
                    pl.placement_neg_sq.to_bits(),
                    pl.tied
                )
            );
        }
    }
}
