//! The tie-grouped walk: rows (or tie groups) in ascending score order give
//! the exact pair counts, the weighted pair shares and the curve areas of
//! [`BinaryRanking`] in one pass.

use super::binary::{count_shares, weight_scale, BinaryRanking, Curves, Totals};
use super::stream::Stream;
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::{Pool, CHECK_ROWS};

mod blocks;
mod pairs;
mod staged;

crate::cpu::widest! {
    /// [`Walk::run_counted`] compiled for the widest vectors this CPU runs:
    /// the same operations in the same order (Rust never fuses a multiply
    /// and an add), so the same bits, with the counts converted to float64
    /// in one instruction each where AVX-512 has it.
    fn counted<S: Stream>(walk: &mut Walk, rows: S, n: u64, pool: &Pool) => run_counted
}

/// [`Walk::run_counted`] as a function for [`counted`].
#[inline(always)]
fn run_counted<S: Stream>(walk: &mut Walk, rows: S, n: u64, pool: &Pool) {
    walk.run_counted(rows, n, pool);
}

/// Tie groups in ascending score order from `rows` (a branch-free merge of
/// two sorted sides, or one packed array; negatives first within a tie).
/// Per row: the pair counts; per closed group: the ties and, when `curves`
/// is set, the precision-recall and risk-coverage terms.
pub(super) fn walk<S: Stream>(
    rows: S,
    totals: Totals,
    curves: Curves,
    pool: &Pool,
) -> Result<BinaryRanking> {
    let mut w = Walk::new(totals, S::WEIGHTED, curves);
    w.run(rows, totals.n_pos + totals.n_neg, pool);
    pool.check()?;
    Ok(w.result())
}

/// The most rows whose placements [`Curves::Placements`] sums in integers:
/// each term is below `(2 n)^2`, so `n` terms stay below `2^128`.
const EXACT_PLACEMENTS_MAX: u64 = 1 << 40;

/// The state of [`walk`]: rows and weights strictly below the current tie
/// group, the group's own counts, and the sums so far. Weights are
/// multiplied by `scale` (a power of two, see [`weight_scale`]) as they come
/// in: the curves are ratios and the pair sums are reported as shares, so
/// the scale cancels, while every product of two weight sums stays finite.
pub(super) struct Walk {
    r: BinaryRanking,
    weighted: bool,
    curves: bool,
    /// Of the curve terms, the average precision alone (the others NaN).
    ap_only: bool,
    /// Of the curve terms, DeLong's placements alone (the others NaN).
    placements_only: bool,
    /// With the placements alone, unweighted and below [`EXACT_PLACEMENTS_MAX`]
    /// rows: summed exactly in `s10` and `s01` (else as the full walk does).
    exact_placements: bool,
    scale: f64,
    /// Scaled totals.
    sw_pos: f64,
    sw_neg: f64,
    pub(super) groups: u64,
    pub(super) pos_below: u64,
    pub(super) neg_below: u64,
    gp: u64,
    gn: u64,
    w_pos_below: f64,
    w_neg_below: f64,
    gwp: f64,
    gwn: f64,
    pub(super) ordered: u128,
    pub(super) tied: u128,
    w_ordered: f64,
    w_tied: f64,
    w_reversed: f64,
    /// `sum_k (tp_k - tp_{k-1}) precision_k`, divided by the positive weight at the end.
    ap: f64,
    aupr: f64,
    aurc: f64,
    /// The trapezoid of a group needs the precision of the group above it,
    /// which comes next: the group below waits here.
    pending_w: f64,
    pending_precision: f64,
    /// The precision of the first group closed (NaN before): a walk of a
    /// piece hands it to the piece below for its pending trapezoid.
    first_precision: f64,
    /// `0.5 / sw_pos` (the trapezoids' factor), or 0 without positive weight.
    half_per_pos: f64,
    /// `1 / (sw_pos + sw_neg)`, or 0 without weight.
    per_total: f64,
    /// DeLong's sums of squared placements (see [`BinaryRanking`]) and the
    /// reciprocals of the counts they divide by (0 for an empty side).
    v10_sq: f64,
    v01_sq: f64,
    per_neg: f64,
    per_pos: f64,
    /// Without weights and with the placements alone ([`Curves::Placements`]):
    /// `4 n_neg^2` times the positives' squared placements and `4 n_pos^2`
    /// times the negatives', exact (see [`pairs`]).
    s10: u128,
    s01: u128,
}

impl Walk {
    /// Walk `n` rows of `rows`, closing the last group at the end; stops
    /// early once the pool's stop flag is raised.
    pub(super) fn run<S: Stream>(&mut self, rows: S, n: u64, pool: &Pool) {
        self.run_rows(rows, n, pool);
        self.finish_curve();
    }

    /// [`Walk::run`] without the top of the curve: the walk of one piece.
    pub(super) fn run_rows<S: Stream>(&mut self, mut rows: S, n: u64, pool: &Pool) {
        if n == 0 {
            return;
        }
        if !S::WEIGHTED && !self.weighted {
            if !self.curves {
                self.run_pairs::<S, false, false>(rows, n, pool);
            } else if self.ap_only {
                self.run_pairs::<S, true, false>(rows, n, pool);
            } else if self.exact_placements {
                self.run_pairs::<S, false, true>(rows, n, pool);
            } else {
                counted(self, rows, n, pool);
            }
            return;
        }
        // The first row opens the first group (every key is possible, so no
        // key can stand for "none yet").
        let (mut prev, p, wi) = rows.next();
        self.groups += 1;
        self.push(p, wi);
        let mut left = n - 1;
        while left > 0 {
            if pool.stopped() {
                return;
            }
            let step = left.min(CHECK_ROWS as u64);
            for _ in 0..step {
                let (k, p, wi) = rows.next();
                if k != prev {
                    self.close_group();
                }
                self.groups += u64::from(k != prev);
                prev = k;
                self.push(p, wi);
            }
            left -= step;
        }
        self.close_group();
    }

    /// [`Walk::run_rows`] without weights, its counts and sums held in locals
    /// (registers) rather than in the walk's fields, which the compiler keeps
    /// in memory when a group closes on some rows only: the operations of
    /// [`Walk::push`] and [`Walk::close_counted_group`] in the same order, so
    /// the same bits, about twice as fast. Inlined into each variant of
    /// [`counted`]. The merge of two packed arrays is merged in vectors
    /// where the CPU has them ([`Walk::run_counted_packed_merge`]).
    #[inline(always)]
    fn run_counted<S: Stream>(&mut self, rows: S, n: u64, pool: &Pool) {
        if let Some((a, b)) = rows
            .packed_u32_pair()
            .filter(|(a, b)| (a.len() + b.len()) as u64 == n)
        {
            if self.run_counted_packed_merge(a, b, pool) {
                return;
            }
        }
        self.counted_rows(rows, n, None, true, pool);
    }

    /// The loop of [`Walk::run_counted`] over `n` rows of `rows` (at least
    /// one): after the row keyed `prev` (its group still open), or else from
    /// the first row, which opens the first group; the last group closed at
    /// the end when `last`. The key of the last row, or `None` once the
    /// pool's stop flag is raised (the walk is then abandoned).
    #[allow(clippy::cast_precision_loss)]
    #[inline(always)]
    fn counted_rows<S: Stream>(
        &mut self,
        mut rows: S,
        n: u64,
        prev: Option<u64>,
        last: bool,
        pool: &Pool,
    ) -> Option<u64> {
        let curves = self.curves;
        let (sw_pos, sw_neg) = (self.sw_pos, self.sw_neg);
        let (half_per_pos, per_total) = (self.half_per_pos, self.per_total);
        let (mut groups, mut gp, mut gn) = (self.groups, self.gp, self.gn);
        let (mut pos_below, mut neg_below) = (self.pos_below, self.neg_below);
        let (mut w_pos_below, mut w_neg_below) = (self.w_pos_below, self.w_neg_below);
        let (mut ordered, mut tied) = (self.ordered, self.tied);
        let (mut ap, mut aupr, mut aurc) = (self.ap, self.aupr, self.aurc);
        let (mut pending_w, mut pending_precision) = (self.pending_w, self.pending_precision);
        let mut first_precision = self.first_precision;
        let (per_neg, per_pos) = (self.per_neg, self.per_pos);
        let (mut v10_sq, mut v01_sq) = (self.v10_sq, self.v01_sq);
        macro_rules! push {
            ($p:expr) => {{
                let p: bool = $p;
                ordered += u128::from(neg_below & u64::from(p).wrapping_neg());
                gp += u64::from(p);
                gn += u64::from(!p);
            }};
        }
        macro_rules! close {
            () => {{
                tied += u128::from(gp) * u128::from(gn);
                let (fp, fn_) = (gp as f64, gn as f64);
                if curves {
                    let tp = sw_pos - w_pos_below;
                    let precision = tp / (tp + (sw_neg - w_neg_below));
                    if first_precision.is_nan() {
                        first_precision = precision;
                    }
                    ap += fp * precision;
                    aupr += pending_w * (pending_precision + precision) * half_per_pos;
                    (pending_w, pending_precision) = (fp, precision);
                    aurc += (fp + fn_) * per_total * (1.0 - precision);
                    let v10 = (w_neg_below + 0.5 * fn_) * per_neg;
                    let v01 = (sw_pos - w_pos_below - 0.5 * fp) * per_pos;
                    v10_sq += fp * v10 * v10;
                    v01_sq += fn_ * v01 * v01;
                }
                pos_below += gp;
                neg_below += gn;
                w_pos_below += fp;
                w_neg_below += fn_;
                (gp, gn) = (0, 0);
            }};
        }
        let (mut prev, mut left) = match prev {
            Some(prev) => (prev, n),
            None => {
                let (first, p, _) = rows.next();
                groups += 1;
                push!(p);
                (first, n - 1)
            }
        };
        let mut stopped = false;
        while left > 0 {
            if pool.stopped() {
                stopped = true;
                break;
            }
            let step = left.min(CHECK_ROWS as u64);
            for _ in 0..step {
                let (k, p, _) = rows.next();
                if k != prev {
                    close!();
                }
                groups += u64::from(k != prev);
                prev = k;
                push!(p);
            }
            left -= step;
        }
        if !stopped && last {
            close!();
        }
        (self.groups, self.gp, self.gn) = (groups, gp, gn);
        (self.pos_below, self.neg_below) = (pos_below, neg_below);
        (self.w_pos_below, self.w_neg_below) = (w_pos_below, w_neg_below);
        (self.ordered, self.tied) = (ordered, tied);
        (self.ap, self.aupr, self.aurc) = (ap, aupr, aurc);
        (self.pending_w, self.pending_precision) = (pending_w, pending_precision);
        self.first_precision = first_precision;
        (self.v10_sq, self.v01_sq) = (v10_sq, v01_sq);
        (!stopped).then_some(prev)
    }

    /// Without weights: `p` positives and `n` negatives of one score, the
    /// first of a new tie group when `opens` (the group open so far closes).
    /// A score's rows may come in several parts, one after the other.
    #[inline(always)]
    pub(super) fn add_to_group(&mut self, p: u64, n: u64, opens: bool) {
        if opens {
            if self.gp + self.gn > 0 {
                self.close_counted_group();
            }
            self.groups += 1;
        }
        self.ordered += u128::from(p) * u128::from(self.neg_below);
        self.gp += p;
        self.gn += n;
    }

    /// Without weights: close the group [`Walk::add_to_group`] left open.
    pub(super) fn close_last_group(&mut self) {
        if self.gp + self.gn > 0 {
            self.close_counted_group();
        }
    }

    /// A walk without weights of the rows above `pos_below` positives and
    /// `neg_below` negatives (a piece of a walk).
    #[allow(clippy::cast_precision_loss)]
    pub(super) fn starting_after(
        t: Totals,
        curves: Curves,
        pos_below: u64,
        neg_below: u64,
    ) -> Self {
        let mut w = Self::new(t, false, curves);
        (w.pos_below, w.neg_below) = (pos_below, neg_below);
        (w.w_pos_below, w.w_neg_below) = (pos_below as f64, neg_below as f64);
        w
    }

    /// Take in the walk of the piece just above this one (started from this
    /// walk's counts): its counts and sums, and the trapezoid of this walk's
    /// pending group, which needed the precision of the piece's first group.
    pub(super) fn absorb(&mut self, p: Walk) {
        if p.groups == 0 {
            return;
        }
        self.groups += p.groups;
        self.ordered += p.ordered;
        self.tied += p.tied;
        self.s10 += p.s10;
        self.s01 += p.s01;
        if self.curves {
            self.ap += p.ap;
            self.aurc += p.aurc;
            self.v10_sq += p.v10_sq;
            self.v01_sq += p.v01_sq;
            self.aupr += p.aupr;
            if self.sw_pos > 0.0 {
                self.aupr += self.pending_w
                    * (self.pending_precision + p.first_precision)
                    * self.half_per_pos;
                (self.pending_w, self.pending_precision) = (p.pending_w, p.pending_precision);
            }
        }
        (self.pos_below, self.neg_below) = (p.pos_below, p.neg_below);
        (self.w_pos_below, self.w_neg_below) = (p.w_pos_below, p.w_neg_below);
    }

    /// The walk of unweighted pieces, each walked on its own from the counts
    /// below it ([`Walk::starting_after`]), combined in ascending key order.
    pub(super) fn combine(totals: Totals, curves: Curves, pieces: Vec<Self>) -> BinaryRanking {
        let mut all = Self::new(totals, false, curves);
        for w in pieces {
            all.absorb(w);
        }
        all.finish_curve();
        all.result()
    }

    pub(super) fn new(t: Totals, weighted: bool, curves: Curves) -> Self {
        let scale = if weighted {
            weight_scale(t.w_pos.max(t.w_neg))
        } else {
            1.0
        };
        Self {
            r: BinaryRanking {
                n_pos: t.n_pos,
                n_neg: t.n_neg,
                w_pos: t.w_pos,
                w_neg: t.w_neg,
                ..BinaryRanking::default()
            },
            weighted,
            curves: curves != Curves::Off,
            ap_only: curves == Curves::Precision,
            placements_only: curves == Curves::Placements,
            exact_placements: curves == Curves::Placements
                && !weighted
                && t.n_pos + t.n_neg < EXACT_PLACEMENTS_MAX,
            scale,
            sw_pos: t.w_pos * scale,
            sw_neg: t.w_neg * scale,
            groups: 0,
            pos_below: 0,
            neg_below: 0,
            gp: 0,
            gn: 0,
            w_pos_below: 0.0,
            w_neg_below: 0.0,
            gwp: 0.0,
            gwn: 0.0,
            ordered: 0,
            tied: 0,
            w_ordered: 0.0,
            w_tied: 0.0,
            w_reversed: 0.0,
            ap: 0.0,
            aupr: 0.0,
            aurc: 0.0,
            pending_w: 0.0,
            pending_precision: 0.0,
            first_precision: f64::NAN,
            half_per_pos: if t.w_pos > 0.0 {
                0.5 / (t.w_pos * scale)
            } else {
                0.0
            },
            per_total: if t.w_pos + t.w_neg > 0.0 {
                1.0 / ((t.w_pos + t.w_neg) * scale)
            } else {
                0.0
            },
            v10_sq: 0.0,
            v01_sq: 0.0,
            per_neg: if t.n_neg > 0 {
                1.0 / t.n_neg as f64
            } else {
                0.0
            },
            per_pos: if t.n_pos > 0 {
                1.0 / t.n_pos as f64
            } else {
                0.0
            },
            s10: 0,
            s01: 0,
        }
    }

    /// One row of the current group (branch-free in the outcome).
    #[inline(always)]
    fn push(&mut self, p: bool, w: f64) {
        // A positive row is above every negative strictly below its group.
        let pm = u64::from(p).wrapping_neg(); // all ones for a positive row
        self.ordered += u128::from(self.neg_below & pm);
        self.gp += u64::from(p);
        self.gn += u64::from(!p);
        if self.weighted {
            let w = w * self.scale;
            let wp = f64::from(u8::from(p)) * w;
            let wn = w - wp;
            self.w_ordered += wp * self.w_neg_below;
            self.w_reversed += wn * self.w_pos_below;
            self.gwp += wp;
            self.gwn += wn;
        }
    }

    /// Close the current group: its ties and curve terms, then move it below.
    #[inline(always)]
    #[allow(clippy::cast_precision_loss)]
    fn close_group(&mut self) {
        if !self.weighted {
            self.close_counted_group();
            return;
        }
        self.tied += u128::from(self.gp) * u128::from(self.gn);
        if !self.weighted {
            // Unit weights: the weight sums are the counts.
            self.gwp = self.gp as f64;
            self.gwn = self.gn as f64;
            self.w_pos_below = self.pos_below as f64;
            self.w_neg_below = self.neg_below as f64;
        }
        self.w_tied += self.gwp * self.gwn;
        if self.curves {
            self.curve_terms();
            // DeLong's placements, weighted: shares of the (scaled) weights.
            if self.sw_neg > 0.0 {
                let v10 = (self.w_neg_below + 0.5 * self.gwn) / self.sw_neg;
                self.v10_sq += self.gwp * v10 * v10;
            }
            if self.sw_pos > 0.0 {
                let v01 = (self.sw_pos - self.w_pos_below - 0.5 * self.gwp) / self.sw_pos;
                self.v01_sq += self.gwn * v01 * v01;
            }
        }
        self.pos_below += self.gp;
        self.neg_below += self.gn;
        self.w_pos_below += self.gwp;
        self.w_neg_below += self.gwn;
        (self.gp, self.gn, self.gwp, self.gwn) = (0, 0, 0.0, 0.0);
    }

    /// [`Walk::close_group`] without weights. The weight sums are counts,
    /// exact in f64 (below 2^53), so the terms need neither clamping nor a
    /// test for an empty side, and the group itself is covered (no division
    /// by 0); with no positive at all every precision is 0, so the AP and
    /// AUPR sums stay 0 (reported as NaN).
    #[inline(always)]
    #[allow(clippy::cast_precision_loss)]
    fn close_counted_group(&mut self) {
        self.tied += u128::from(self.gp) * u128::from(self.gn);
        let (gp, gn) = (self.gp as f64, self.gn as f64);
        if self.exact_placements {
            // The exact sums of the pair walk's (module `pairs`), per group.
            let x = u128::from(2 * self.neg_below + self.gn);
            let d = u128::from(2 * self.r.n_pos - 2 * self.pos_below - self.gp);
            self.s10 += u128::from(self.gp) * x * x;
            self.s01 += u128::from(self.gn) * d * d;
        } else if self.curves {
            let tp = self.sw_pos - self.w_pos_below;
            let precision = tp / (tp + (self.sw_neg - self.w_neg_below));
            if self.first_precision.is_nan() {
                self.first_precision = precision;
            }
            self.ap += gp * precision;
            self.aupr += self.pending_w * (self.pending_precision + precision) * self.half_per_pos;
            // A group with no positive adds nothing to the next trapezoid.
            (self.pending_w, self.pending_precision) = (gp, precision);
            self.aurc += (gp + gn) * self.per_total * (1.0 - precision);
            let v10 = (self.w_neg_below + 0.5 * gn) * self.per_neg;
            let v01 = (self.sw_pos - self.w_pos_below - 0.5 * gp) * self.per_pos;
            self.v10_sq += gp * v10 * v10;
            self.v01_sq += gn * v01 * v01;
        }
        self.pos_below += self.gp;
        self.neg_below += self.gn;
        self.w_pos_below += gp;
        self.w_neg_below += gn;
        (self.gp, self.gn) = (0, 0);
    }

    /// Precision-recall and risk-coverage terms of the group being closed:
    /// everything at or above it is accepted. A side with no row left at or
    /// above the group (counted exactly) contributes exactly 0, whatever the
    /// rounding of its weight sums.
    fn curve_terms(&mut self) {
        let (w_pos, w_neg) = (self.sw_pos, self.sw_neg);
        let total = w_pos + w_neg;
        let tp = if self.pos_below == self.r.n_pos {
            0.0
        } else {
            (w_pos - self.w_pos_below).max(0.0)
        };
        let fp = if self.neg_below == self.r.n_neg {
            0.0
        } else {
            (w_neg - self.w_neg_below).max(0.0)
        };
        let covered = tp + fp;
        let precision = if covered > 0.0 { tp / covered } else { 0.0 };
        if w_pos > 0.0 {
            if self.first_precision.is_nan() {
                self.first_precision = precision;
            }
            self.ap += self.gwp * precision;
            self.aupr += self.pending_w * (self.pending_precision + precision) * self.half_per_pos;
            // Groups below the lowest positive lie past full recall.
            let in_curve = self.w_pos_below + self.gwp > 0.0;
            self.pending_w = if in_curve { self.gwp } else { 0.0 };
            self.pending_precision = precision;
        }
        if covered > 0.0 && total > 0.0 {
            // The group's share of the weight times its risk, 1 - precision
            // (no division beyond the precision's).
            self.aurc += (self.gwp + self.gwn) * self.per_total * (1.0 - precision);
        }
    }

    /// The top group's trapezoid reaches up to (recall 0, precision 1).
    pub(super) fn finish_curve(&mut self) {
        if self.curves && self.sw_pos > 0.0 {
            self.aupr += self.pending_w * (self.pending_precision + 1.0) * self.half_per_pos;
        }
    }

    #[allow(clippy::cast_precision_loss)]
    pub(super) fn result(self) -> BinaryRanking {
        let mut r = self.r;
        r.n_thresholds = self.groups;
        r.ordered = self.ordered;
        r.tied = self.tied;
        r.reversed = u128::from(r.n_pos) * u128::from(r.n_neg) - self.ordered - self.tied;
        (r.reversed_share, r.tied_share, r.ordered_share) = if self.weighted {
            let all = self.w_reversed + self.w_tied + self.w_ordered;
            if all > 0.0 {
                (
                    self.w_reversed / all,
                    self.w_tied / all,
                    self.w_ordered / all,
                )
            } else {
                (f64::NAN, f64::NAN, f64::NAN)
            }
        } else {
            count_shares(r.reversed, r.tied, r.ordered)
        };
        // `w_pos_below` ends as the positive weight summed in walk order, the
        // order of the AP numerator: a perfect ranking gives exactly 1.
        let curve = |v: f64, ok: bool| if self.curves && ok { v } else { f64::NAN };
        let pl = self.placements_only;
        let every = !self.ap_only && !pl;
        r.average_precision = curve(self.ap / self.w_pos_below, self.w_pos_below > 0.0 && !pl);
        r.aupr_trapezoid = curve(self.aupr, self.sw_pos > 0.0 && every);
        r.aurc = curve(self.aurc, self.sw_pos + self.sw_neg > 0.0 && every);
        if self.exact_placements {
            // The exact sums over 4 n^2, each rounded once (0 for an empty side).
            let share = |s: u128, n: u64| {
                let n = n as f64;
                if n > 0.0 {
                    s as f64 / (4.0 * n * n)
                } else {
                    0.0
                }
            };
            r.placement_pos_sq = share(self.s10, r.n_neg);
            r.placement_neg_sq = share(self.s01, r.n_pos);
            return r;
        }
        // The weighted sums are in scaled weights (a power of two: exact to undo).
        let unscale = |v: f64| {
            if self.curves && !self.ap_only {
                v / self.scale
            } else {
                f64::NAN
            }
        };
        r.placement_pos_sq = unscale(self.v10_sq);
        r.placement_neg_sq = unscale(self.v01_sq);
        r
    }
}

/// The walk over `(n_pos, n_neg, w_pos, w_neg)` tie groups in increasing
/// score order (weights ignored unless `weighted`).
///
/// # Errors
/// Weights summing to 0 or past the float64 range.
pub(crate) fn walk_groups_iter(
    groups: impl Iterator<Item = (u64, u64, f64, f64)> + Clone,
    weighted: bool,
    curves: impl Into<Curves>,
) -> Result<BinaryRanking> {
    let curves: Curves = curves.into();
    let (mut n_pos, mut n_neg, mut w_pos, mut w_neg) = (0_u64, 0_u64, 0.0_f64, 0.0_f64);
    for (p, q, wp, wq) in groups.clone() {
        n_pos += p;
        n_neg += q;
        if weighted {
            w_pos += wp;
            w_neg += wq;
        }
    }
    #[allow(clippy::cast_precision_loss)]
    if !weighted {
        (w_pos, w_neg) = (n_pos as f64, n_neg as f64);
    }
    ensure!(
        (w_pos + w_neg).is_finite(),
        MetricError::WeightRange {
            what: "the sum of sample_weight"
        }
    );
    ensure!(
        w_pos + w_neg > 0.0 || n_pos + n_neg == 0,
        MetricError::ZeroWeightSum
    );
    let totals = Totals {
        n_pos,
        n_neg,
        w_pos,
        w_neg,
    };
    let mut w = Walk::new(totals, weighted, curves);
    for (p, q, wp, wq) in groups {
        if p + q == 0 {
            continue;
        }
        w.groups += 1;
        w.ordered += u128::from(p) * u128::from(w.neg_below);
        (w.gp, w.gn) = (p, q);
        if weighted {
            let (wp, wq) = (wp * w.scale, wq * w.scale);
            w.w_ordered += wp * w.w_neg_below;
            w.w_reversed += wq * w.w_pos_below;
            (w.gwp, w.gwn) = (wp, wq);
        }
        w.close_group();
    }
    if w.groups > 0 {
        w.finish_curve();
    }
    Ok(w.result())
}
