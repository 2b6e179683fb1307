//! Ranking metrics (docs/definitions.md §5 and §7.4-7.5): pair counts between a
//! binary outcome and a score, the tie-grouped precision/recall and
//! risk/coverage walks, and Kendall's tau-b/tau-c by Knight's algorithm.
//!
//! Scores become order-preserving `u64` keys ([`Score::key`]: floats with
//! `-0.0 == 0.0`, integers exactly, never rounded through f64) sorted by
//! [`crate::sort::sort_keys`] (the `rdst` crate's parallel radix sort,
//! measured faster than rayon's parallel quicksort and than hand-written LSD
//! and MSD radix sorts on the reference machine, cut into blocks on very large
//! inputs so that a stop flag can interrupt it). Pair counts are exact
//! integers (`u128`) without weights; with weights the three kinds of pairs
//! (ordered, tied, reversed) are f64 sums of `w_i w_j`, each accumulated on
//! its own from weights scaled by a power of two (so no sum overflows or
//! underflows and none is a difference of the others). Nothing depends on the
//! thread count.

use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::{big_vec, collect_chunked, Pool, CHECK_ROWS};
use crate::sort::sort_keys;
use rayon::prelude::*;

/// An order-preserving key: `a < b` iff `order_key(a) < order_key(b)` for
/// non-NaN floats, with `-0.0` and `0.0` mapped to the same key.
#[inline]
#[must_use]
pub fn order_key(x: f64) -> u64 {
    // `+ 0.0` turns -0.0 into 0.0; negative values have all bits flipped,
    // positive ones only the sign bit (no branch).
    let b = (x + 0.0).to_bits();
    #[allow(clippy::cast_sign_loss, clippy::cast_possible_wrap)]
    let flip = ((b as i64 >> 63) as u64) | (1 << 63);
    b ^ flip
}

/// A score type the ranking kernels read: floats, and integers ordered as
/// integers (a float64 holds integers exactly only up to 2^53).
pub trait Score: Copy + Send + Sync + 'static {
    /// An order-preserving key: `a < b` iff `a.key() < b.key()` (NaN aside).
    fn key(self) -> u64;
    /// Whether the value is finite (integers always are).
    fn is_finite(self) -> bool {
        true
    }
    /// Whether the value is NaN (integers never are).
    fn is_nan(self) -> bool {
        false
    }
    /// The value as f64 (for messages and reported thresholds).
    fn to_f64(self) -> f64;
    /// The value of a key, as f64.
    fn key_value(k: u64) -> f64;
}

impl Score for f64 {
    #[inline(always)]
    fn key(self) -> u64 {
        order_key(self)
    }
    #[inline(always)]
    fn is_finite(self) -> bool {
        f64::is_finite(self)
    }
    #[inline(always)]
    fn is_nan(self) -> bool {
        f64::is_nan(self)
    }
    fn to_f64(self) -> f64 {
        self
    }
    fn key_value(k: u64) -> f64 {
        from_order_key(k)
    }
}

impl Score for i64 {
    #[inline(always)]
    fn key(self) -> u64 {
        #[allow(clippy::cast_sign_loss)]
        let k = (self as u64) ^ (1 << 63);
        k
    }
    #[allow(clippy::cast_precision_loss)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[allow(clippy::cast_possible_wrap, clippy::cast_precision_loss)]
    fn key_value(k: u64) -> f64 {
        (k ^ (1 << 63)) as i64 as f64
    }
}

impl Score for u64 {
    #[inline(always)]
    fn key(self) -> u64 {
        self
    }
    #[allow(clippy::cast_precision_loss)]
    fn to_f64(self) -> f64 {
        self as f64
    }
    #[allow(clippy::cast_precision_loss)]
    fn key_value(k: u64) -> f64 {
        k as f64
    }
}

/// Check that every value is finite (the package-wide rule, docs/definitions.md §1.5 and decision O9).
fn check_finite<X: Score>(arg: &'static str, xs: &[X]) -> Result<()> {
    if let Some((index, &value)) = xs.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(MetricError::NonFinite {
            arg,
            index,
            value: value.to_f64(),
        });
    }
    Ok(())
}

/// A power of two `s` such that `total * s` lies in [0.5, 1) (1 for a total
/// of 0): multiplying every weight by it changes no ratio and keeps every
/// product of two weight sums inside the float64 range.
pub(crate) fn weight_scale(total: f64) -> f64 {
    if total.is_nan() || total <= 0.0 || total.is_infinite() {
        return 1.0;
    }
    // total = m * 2^e with m in [0.5, 1): s = 2^-e, split in two factors so
    // that neither overflows (e ranges over -1073..=1024).
    let bits = total.to_bits();
    #[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
    let biased = ((bits >> 52) & 0x7ff) as i32;
    let e = if biased == 0 {
        // subnormal: find the exponent from the leading bit of the mantissa
        #[allow(clippy::cast_possible_wrap)]
        let lz = (bits << 12).leading_zeros() as i32;
        -1022 - lz
    } else {
        biased - 1022
    };
    let half = -e / 2;
    2f64.powi(half) * 2f64.powi(-e - half)
}

/// Check weights: one per row of `rows` (`n` of them), finite and >= 0.
fn check_weights(w: &[f64], n: usize, rows: &'static str) -> Result<()> {
    ensure!(
        w.len() == n,
        MetricError::LengthMismatch {
            a: "sample_weight",
            a_len: w.len(),
            b: rows,
            b_len: n,
        }
    );
    let valid = |x: &f64| (0.0..f64::INFINITY).contains(x);
    if let Some((index, &value)) = w.iter().enumerate().find(|(_, x)| !valid(x)) {
        return Err(MetricError::InvalidWeight {
            index,
            value,
            count: w.iter().filter(|x| !valid(x)).count(),
        });
    }
    Ok(())
}

/// Tie-grouped walk over the scores from the highest to the lowest: what
/// every binary ranking metric is derived from.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BinaryRanking {
    /// Rows with a positive (correct) outcome, and the others.
    pub n_pos: u64,
    pub n_neg: u64,
    /// Their total weights (the counts without weights).
    pub w_pos: f64,
    pub w_neg: f64,
    /// Exact pair counts without weights: (positive, negative) pairs with
    /// the positive scored lower (reversed), tied, and higher.
    pub reversed: u128,
    pub tied: u128,
    pub ordered: u128,
    /// The share of all (positive, negative) pairs that are reversed, tied
    /// and ordered, pairs weighted by `w_i w_j` when weights are given (the
    /// three sums are accumulated separately, so each share lies in [0, 1]);
    /// NaN when there is no such pair (or their weight is 0).
    pub reversed_share: f64,
    pub tied_share: f64,
    pub ordered_share: f64,
    /// Average precision (sklearn, no interpolation); NaN without positives.
    pub average_precision: f64,
    /// Trapezoidal area under the precision-recall curve from (0, 1) to the
    /// first point of full recall (sklearn `auc(recall, precision)`).
    pub aupr_trapezoid: f64,
    /// Area under the risk-coverage curve: `sum_k (cov_k - cov_{k-1}) risk_k`
    /// over tie groups, risk = weight of negatives / weight covered.
    pub aurc: f64,
    /// Distinct score values.
    pub n_thresholds: u64,
}

/// One outcome's rows: a score key, and a weight when weights are given.
trait Item: Copy + Default + Send + Sync {
    const WEIGHTED: bool;
    fn key(self) -> u64;
    fn weight(self) -> f64;
    /// An item above every real key (finite scores never map to `u64::MAX`).
    fn sentinel() -> Self;
    /// Sort by a total order, key then weight bits: the sorted sequence, and
    /// so every floating-point sum over it, is the same whatever the thread
    /// count.
    fn sort(v: &mut Vec<Self>, pool: &Pool) -> Result<()>;
}

impl Item for u64 {
    const WEIGHTED: bool = false;
    #[inline(always)]
    fn key(self) -> u64 {
        self
    }
    #[inline(always)]
    fn weight(self) -> f64 {
        1.0
    }
    fn sentinel() -> Self {
        u64::MAX
    }
    fn sort(v: &mut Vec<Self>, pool: &Pool) -> Result<()> {
        sort_keys(v, pool)
    }
}

/// A weighted row: the key in the high 64 bits, the weight's bits below, so
/// that one radix sort orders by key and then by weight (a total order).
impl Item for u128 {
    const WEIGHTED: bool = true;
    #[inline(always)]
    fn key(self) -> u64 {
        (self >> 64) as u64
    }
    #[inline(always)]
    fn weight(self) -> f64 {
        #[allow(clippy::cast_possible_truncation)]
        f64::from_bits(self as u64)
    }
    fn sentinel() -> Self {
        u128::MAX
    }
    fn sort(v: &mut Vec<Self>, pool: &Pool) -> Result<()> {
        sort_keys(v, pool)
    }
}

/// A weighted row for [`Item`] (`key`, `weight`).
fn weighted(key: u64, w: f64) -> u128 {
    (u128::from(key) << 64) | u128::from(w.to_bits())
}

/// Split the rows by outcome into two vectors of `item(row)`, without a
/// branch on the outcome (each row is written to both and kept in one).
fn split<T: Copy>(
    positive: &[bool],
    n_pos: usize,
    item: impl Fn(usize) -> T,
    pool: &Pool,
) -> Result<(Vec<T>, Vec<T>)> {
    let n_neg = positive.len() - n_pos;
    let mut pos: Vec<T> = big_vec(n_pos + 1);
    let mut neg: Vec<T> = big_vec(n_neg + 1);
    {
        let ps = pos.spare_capacity_mut();
        let ns = neg.spare_capacity_mut();
        let (mut ip, mut ineg) = (0, 0);
        for (c, chunk) in positive.chunks(CHECK_ROWS).enumerate() {
            pool.check()?;
            for (i, &p) in chunk.iter().enumerate() {
                let v = item(c * CHECK_ROWS + i);
                if let (Some(a), Some(b)) = (ps.get_mut(ip), ns.get_mut(ineg)) {
                    a.write(v);
                    b.write(v);
                }
                ip += usize::from(p);
                ineg += usize::from(!p);
            }
        }
    }
    // SAFETY: each cursor wrote every slot below its final value (it only
    // moves past a slot after a row wrote it), and n_pos / n_neg are those
    // final values; `T: Copy` needs no drop.
    unsafe {
        pos.set_len(n_pos);
        neg.set_len(n_neg);
    }
    Ok((pos, neg))
}

fn sort_and_walk<T: Item>(
    mut pos: Vec<T>,
    mut neg: Vec<T>,
    totals: Totals,
    pool: &Pool,
    curves: bool,
    max_key: bool,
) -> Result<BinaryRanking> {
    T::sort(&mut pos, pool)?;
    T::sort(&mut neg, pool)?;
    if max_key {
        walk(Merge::<T, true>::new(pos, neg), totals, curves, pool)
    } else {
        walk(Merge::<T, false>::new(pos, neg), totals, curves, pool)
    }
}

/// The packed path: one array, keys with the outcome in bit 0 (which the
/// caller checked to be constant across the score keys).
fn sort_and_walk_packed<T: Item>(
    mut rows: Vec<T>,
    totals: Totals,
    pool: &Pool,
    curves: bool,
) -> Result<BinaryRanking> {
    T::sort(&mut rows, pool)?;
    if !curves && !T::WEIGHTED && pool.parallel_for(rows.len()) {
        return Ok(pool.install(|| pairs_in_pieces(&rows, totals)));
    }
    walk(Packed { rows: rows.iter() }, totals, curves, pool)
}

/// Pair counts only, without weights: the sorted rows are cut into pieces
/// at tie-group boundaries and walked in parallel. Every negative of the
/// pieces before lies strictly below a piece, so the pieces combine exactly:
/// `ordered += ordered_piece + positives_piece * negatives_before`.
fn pairs_in_pieces<T: Item>(rows: &[T], totals: Totals) -> BinaryRanking {
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
fn count_shares(reversed: u128, tied: u128, ordered: u128) -> (f64, f64, f64) {
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

/// Validate and walk `(positive, score, weight)` (module docs). With `curves`
/// false only the pair counts are computed (AP, AUPR and AURC are NaN).
///
/// # Errors
/// Length mismatch, empty input, a non-finite score, an invalid weight,
/// weights summing to 0 or past the float64 range, an interruption.
pub fn binary_ranking<X: Score>(
    positive: &[bool],
    score: &[X],
    weight: Option<&[f64]>,
    curves: bool,
    pool: &Pool,
) -> Result<BinaryRanking> {
    prepare(positive, score, weight, pool, WalkSink { curves })
}

/// What is done with the rows once they are checked and keyed: the packed
/// form (one array, the outcome in bit 0 of the keys, `bit0` the score keys'
/// own constant bit 0) or two sides split by outcome, both unsorted.
trait Sink {
    type Out;
    fn packed<T: Item, X: Score>(
        self,
        rows: Vec<T>,
        totals: Totals,
        bit0: u64,
        pool: &Pool,
    ) -> Result<Self::Out>;
    fn split<T: Item, X: Score>(
        self,
        pos: Vec<T>,
        neg: Vec<T>,
        totals: Totals,
        max_key: bool,
        pool: &Pool,
    ) -> Result<Self::Out>;
}

struct WalkSink {
    curves: bool,
}

impl Sink for WalkSink {
    type Out = BinaryRanking;
    fn packed<T: Item, X: Score>(
        self,
        rows: Vec<T>,
        totals: Totals,
        _bit0: u64,
        pool: &Pool,
    ) -> Result<BinaryRanking> {
        sort_and_walk_packed(rows, totals, pool, self.curves)
    }
    fn split<T: Item, X: Score>(
        self,
        pos: Vec<T>,
        neg: Vec<T>,
        totals: Totals,
        max_key: bool,
        pool: &Pool,
    ) -> Result<BinaryRanking> {
        sort_and_walk(pos, neg, totals, pool, self.curves, max_key)
    }
}

/// The totals of the rows; weights must not sum to 0 or overflow.
fn totals_of(positive: &[bool], weight: Option<&[f64]>, n_pos: u64) -> Result<Totals> {
    let n_neg = positive.len() as u64 - n_pos;
    #[allow(clippy::cast_precision_loss)]
    let (w_pos, w_neg) = match weight {
        None => (n_pos as f64, n_neg as f64),
        Some(w) => {
            let (mut a, mut b) = (0.0_f64, 0.0_f64);
            for (&p, &x) in positive.iter().zip(w) {
                if p {
                    a += x;
                } else {
                    b += x;
                }
            }
            (a, b)
        }
    };
    ensure!(
        (w_pos + w_neg).is_finite(),
        MetricError::WeightRange {
            what: "the sum of sample_weight"
        }
    );
    ensure!(w_pos + w_neg > 0.0, MetricError::ZeroWeightSum);
    Ok(Totals {
        n_pos,
        n_neg,
        w_pos,
        w_neg,
    })
}

/// Check `(positive, score, weight)` and hand the keyed rows to `sink`.
fn prepare<S: Sink, X: Score>(
    positive: &[bool],
    score: &[X],
    weight: Option<&[f64]>,
    pool: &Pool,
    sink: S,
) -> Result<S::Out> {
    let n = score.len();
    ensure!(
        positive.len() == n,
        MetricError::LengthMismatch {
            a: "y_true",
            a_len: positive.len(),
            b: "y_score",
            b_len: n,
        }
    );
    ensure!(n > 0, MetricError::Empty { arg: "y_score" });
    let seen = pool.install(|| scan(positive, score, pool.parallel_for(n)));
    if let Some(index) = seen.first_bad {
        let value = score.get(index).map_or(f64::NAN, |s| s.to_f64());
        return Err(MetricError::NonFinite {
            arg: "y_score",
            index,
            value,
        });
    }
    if let Some(w) = weight {
        check_weights(w, n, "y_score")?;
    }
    pool.check()?;
    let totals = totals_of(positive, weight, seen.n_pos)?;
    let key = |i: usize| score.get(i).map_or(0, |s| s.key());
    // Bit 0 of the keys the same everywhere (f32 scores widened to f64 have
    // 29 zero low bits): it can carry the outcome, and one sorted array
    // replaces two sorted sides and their merge.
    if !(seen.ones && seen.zeros) {
        let bit0 = u64::from(seen.ones);
        let packed =
            |i: usize| (key(i) & !1) | u64::from(positive.get(i).copied().unwrap_or(false));
        return match weight {
            None => {
                let rows: Vec<u64> = collect_chunked(n, packed, pool)?;
                sink.packed::<u64, X>(rows, totals, bit0, pool)
            }
            Some(w) => {
                let weight_of = |i: usize| w.get(i).copied().unwrap_or(0.0);
                let rows: Vec<u128> =
                    collect_chunked(n, |i| weighted(packed(i), weight_of(i)), pool)?;
                sink.packed::<u128, X>(rows, totals, bit0, pool)
            }
        };
    }
    #[allow(clippy::cast_possible_truncation)]
    let n_pos = seen.n_pos as usize;
    match weight {
        None => {
            let (pos, neg) = split(positive, n_pos, key, pool)?;
            sink.split::<u64, X>(pos, neg, totals, seen.max_key, pool)
        }
        Some(w) => {
            let (pos, neg) = split(
                positive,
                n_pos,
                |i| weighted(key(i), w.get(i).copied().unwrap_or(0.0)),
                pool,
            )?;
            sink.split::<u128, X>(pos, neg, totals, seen.max_key, pool)
        }
    }
}

/// The tie groups of `(score, outcome, weight)` rows in increasing score
/// order: everything the ranking metrics need, in a form that merges exactly
/// (the streaming summary). Weight sums only when weights are given.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ScoreGroups {
    /// Distinct scores, increasing (`-0.0` counts as `0.0`).
    pub values: Vec<f64>,
    /// Positive and negative rows at each score.
    pub n_pos: Vec<u64>,
    pub n_neg: Vec<u64>,
    /// Their weights (empty without weights).
    pub w_pos: Vec<f64>,
    pub w_neg: Vec<f64>,
}

impl ScoreGroups {
    /// Whether the groups carry weight sums.
    #[must_use]
    pub fn weighted(&self) -> bool {
        !self.w_pos.is_empty() || (self.values.is_empty() && !self.w_neg.is_empty())
    }

    #[inline]
    fn push(&mut self, value: f64, g: (u64, u64, f64, f64), weighted: bool) {
        self.values.push(value);
        self.n_pos.push(g.0);
        self.n_neg.push(g.1);
        if weighted {
            self.w_pos.push(g.2);
            self.w_neg.push(g.3);
        }
    }
}

/// The inverse of [`order_key`].
#[must_use]
pub fn from_order_key(k: u64) -> f64 {
    f64::from_bits(if k >> 63 == 1 { k ^ (1 << 63) } else { !k })
}

struct GroupSink;

impl GroupSink {
    fn collect<S: Stream>(mut rows: S, n: usize, value_of: impl Fn(u64) -> f64) -> ScoreGroups {
        let mut out = ScoreGroups::default();
        let mut prev = u64::MAX;
        let mut g = (0_u64, 0_u64, 0.0_f64, 0.0_f64);
        for _ in 0..n {
            let (k, p, w) = rows.next();
            if k != prev && g.0 + g.1 > 0 {
                out.push(value_of(prev), g, S::WEIGHTED);
                g = (0, 0, 0.0, 0.0);
            }
            prev = k;
            g.0 += u64::from(p);
            g.1 += u64::from(!p);
            if p {
                g.2 += w;
            } else {
                g.3 += w;
            }
        }
        if g.0 + g.1 > 0 {
            out.push(value_of(prev), g, S::WEIGHTED);
        }
        out
    }
}

impl Sink for GroupSink {
    type Out = ScoreGroups;
    fn packed<T: Item, X: Score>(
        self,
        mut rows: Vec<T>,
        _t: Totals,
        bit0: u64,
        pool: &Pool,
    ) -> Result<ScoreGroups> {
        T::sort(&mut rows, pool)?;
        let n = rows.len();
        Ok(Self::collect(Packed { rows: rows.iter() }, n, |k| {
            X::key_value((k << 1) | bit0)
        }))
    }
    fn split<T: Item, X: Score>(
        self,
        mut pos: Vec<T>,
        mut neg: Vec<T>,
        _t: Totals,
        _max_key: bool,
        pool: &Pool,
    ) -> Result<ScoreGroups> {
        T::sort(&mut pos, pool)?;
        T::sort(&mut neg, pool)?;
        let n = pos.len() + neg.len();
        // Guarded whatever the keys: this path is not the hot one.
        Ok(Self::collect(
            Merge::<T, true>::new(pos, neg),
            n,
            X::key_value,
        ))
    }
}

/// The tie groups of `(positive, score, weight)` (checks as [`binary_ranking`]).
///
/// # Errors
/// Length mismatch, empty input, a non-finite score, an invalid weight.
pub fn score_groups(
    positive: &[bool],
    score: &[f64],
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<ScoreGroups> {
    prepare(positive, score, weight, pool, GroupSink)
}

/// Borrowed tie groups (the arrays of a [`ScoreGroups`]; weights empty when unweighted).
#[derive(Debug, Clone, Copy)]
pub struct GroupsRef<'a> {
    pub values: &'a [f64],
    pub n_pos: &'a [u64],
    pub n_neg: &'a [u64],
    pub w_pos: &'a [f64],
    pub w_neg: &'a [f64],
}

impl<'a> From<&'a ScoreGroups> for GroupsRef<'a> {
    fn from(g: &'a ScoreGroups) -> Self {
        Self {
            values: &g.values,
            n_pos: &g.n_pos,
            n_neg: &g.n_neg,
            w_pos: &g.w_pos,
            w_neg: &g.w_neg,
        }
    }
}

impl GroupsRef<'_> {
    fn check(&self, arg: &'static str) -> Result<()> {
        let n = self.values.len();
        let weighted = !self.w_pos.is_empty() || !self.w_neg.is_empty();
        let same = self.n_pos.len() == n
            && self.n_neg.len() == n
            && (!weighted || (self.w_pos.len() == n && self.w_neg.len() == n));
        ensure!(
            same,
            MetricError::InvalidValue {
                arg,
                detail: "the group arrays have different lengths".into()
            }
        );
        // Finite and strictly increasing (-0.0 and 0.0 are one value).
        let sorted = self.values.windows(2).all(|w| w[0] < w[1]);
        ensure!(
            sorted && self.values.iter().all(|v| v.is_finite()),
            MetricError::InvalidValue {
                arg,
                detail: "the group values are not finite and strictly increasing".into()
            }
        );
        Ok(())
    }
    #[inline]
    fn get(&self, i: usize) -> (u64, u64, f64, f64) {
        (
            self.n_pos.get(i).copied().unwrap_or(0),
            self.n_neg.get(i).copied().unwrap_or(0),
            self.w_pos.get(i).copied().unwrap_or(0.0),
            self.w_neg.get(i).copied().unwrap_or(0.0),
        )
    }
}

/// Merge two sets of tie groups (a linear merge; equal scores add up).
///
/// # Errors
/// Arrays of different lengths, values not strictly increasing, one side
/// weighted and the other not.
pub fn merge_groups(a: GroupsRef, b: GroupsRef) -> Result<ScoreGroups> {
    a.check("a")?;
    b.check("b")?;
    let weighted = !a.w_pos.is_empty() || !b.w_pos.is_empty();
    let both_or_none = |g: &GroupsRef| g.values.is_empty() || g.w_pos.is_empty() != weighted;
    ensure!(
        both_or_none(&a) && both_or_none(&b),
        MetricError::InvalidValue {
            arg: "b",
            detail: "one set of groups has weights and the other has not".into()
        }
    );
    let (na, nb) = (a.values.len(), b.values.len());
    let cap = na + nb;
    let wcap = if weighted { cap } else { 0 };
    let mut out = ScoreGroups {
        values: big_vec(cap),
        n_pos: big_vec(cap),
        n_neg: big_vec(cap),
        w_pos: big_vec(wcap),
        w_neg: big_vec(wcap),
    };
    let (mut i, mut j) = (0, 0);
    // Values are finite, so `<` and `==` order them as their keys do (0.0 == -0.0).
    while let (Some(&va), Some(&vb)) = (a.values.get(i), b.values.get(j)) {
        if va < vb {
            out.push(va, a.get(i), weighted);
            i += 1;
        } else if vb < va {
            out.push(vb, b.get(j), weighted);
            j += 1;
        } else {
            let (x, y) = (a.get(i), b.get(j));
            out.push(va, (x.0 + y.0, x.1 + y.1, x.2 + y.2, x.3 + y.3), weighted);
            i += 1;
            j += 1;
        }
    }
    for (g, k, n) in [(&a, i, na), (&b, j, nb)] {
        out.values
            .extend_from_slice(g.values.get(k..n).unwrap_or(&[]));
        out.n_pos
            .extend_from_slice(g.n_pos.get(k..n).unwrap_or(&[]));
        out.n_neg
            .extend_from_slice(g.n_neg.get(k..n).unwrap_or(&[]));
        if weighted {
            out.w_pos
                .extend_from_slice(g.w_pos.get(k..n).unwrap_or(&[]));
            out.w_neg
                .extend_from_slice(g.w_neg.get(k..n).unwrap_or(&[]));
        }
    }
    Ok(out)
}

/// The walk of [`binary_ranking`] over tie groups in increasing score order.
///
/// # Errors
/// As [`merge_groups`] for malformed groups; weights summing to 0 or past
/// the float64 range.
pub fn walk_groups(g: GroupsRef, curves: bool) -> Result<BinaryRanking> {
    g.check("groups")?;
    let weighted = !g.w_pos.is_empty();
    walk_groups_iter((0..g.values.len()).map(|i| g.get(i)), weighted, curves)
}

/// The walk over `(n_pos, n_neg, w_pos, w_neg)` tie groups in increasing
/// score order (weights ignored unless `weighted`).
///
/// # Errors
/// Weights summing to 0 or past the float64 range.
pub(crate) fn walk_groups_iter(
    groups: impl Iterator<Item = (u64, u64, f64, f64)> + Clone,
    weighted: bool,
    curves: bool,
) -> Result<BinaryRanking> {
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

/// What one read of the scores and outcomes tells.
#[derive(Clone, Copy)]
struct Seen {
    /// First NaN or infinite score.
    first_bad: Option<usize>,
    /// Bit 0 of some score key is 1 / is 0.
    ones: bool,
    zeros: bool,
    /// Positive rows.
    n_pos: u64,
    /// Some score has the key `u64::MAX` (integer scores only).
    max_key: bool,
}

/// Check the scores and count, in one read (in parallel over fixed chunks).
fn scan<X: Score>(positive: &[bool], score: &[X], parallel: bool) -> Seen {
    const CHUNK: usize = 1 << 16;
    let part = |(c, (ps, ss)): (usize, (&[bool], &[X]))| {
        let mut seen = Seen {
            first_bad: None,
            ones: false,
            zeros: false,
            n_pos: 0,
            max_key: false,
        };
        for (i, (&p, &s)) in ps.iter().zip(ss).enumerate() {
            if !s.is_finite() && seen.first_bad.is_none() {
                seen.first_bad = Some(c * CHUNK + i);
            }
            let k = s.key();
            let bit = k & 1 == 1;
            seen.ones |= bit;
            seen.zeros |= !bit;
            seen.max_key |= k == u64::MAX;
            seen.n_pos += u64::from(p);
        }
        seen
    };
    let join = |a: Seen, b: Seen| Seen {
        first_bad: a.first_bad.into_iter().chain(b.first_bad).min(),
        ones: a.ones | b.ones,
        zeros: a.zeros | b.zeros,
        n_pos: a.n_pos + b.n_pos,
        max_key: a.max_key | b.max_key,
    };
    let empty = Seen {
        first_bad: None,
        ones: false,
        zeros: false,
        n_pos: 0,
        max_key: false,
    };
    if parallel {
        positive
            .par_chunks(CHUNK)
            .zip(score.par_chunks(CHUNK))
            .enumerate()
            .map(part)
            .reduce(|| empty, join)
    } else {
        positive
            .chunks(CHUNK)
            .zip(score.chunks(CHUNK))
            .enumerate()
            .map(part)
            .fold(empty, join)
    }
}

/// Row totals of each outcome.
#[derive(Clone, Copy)]
pub(crate) struct Totals {
    pub(crate) n_pos: u64,
    pub(crate) n_neg: u64,
    pub(crate) w_pos: f64,
    pub(crate) w_neg: f64,
}

/// Rows in ascending score order (negatives first within a tie): `(key, positive, weight)`.
trait Stream {
    /// Whether rows carry weights (otherwise every weight is 1).
    const WEIGHTED: bool;
    fn next(&mut self) -> (u64, bool, f64);
}

/// The branch-free merge of the two sorted sides; an exhausted side reads as
/// a sentinel keyed `u64::MAX`. That is also a real key (integer scores at
/// `i64::MAX` or `u64::MAX`): with `GUARDED` the merge checks the sides'
/// lengths instead, which costs a third of the walk, so it is used only when
/// such a key occurs.
struct Merge<T, const GUARDED: bool> {
    pos: Vec<T>,
    neg: Vec<T>,
    ip: usize,
    ineg: usize,
}

impl<T, const GUARDED: bool> Merge<T, GUARDED> {
    fn new(pos: Vec<T>, neg: Vec<T>) -> Self {
        Self {
            pos,
            neg,
            ip: 0,
            ineg: 0,
        }
    }
}

impl<T: Item, const GUARDED: bool> Stream for Merge<T, GUARDED> {
    const WEIGHTED: bool = T::WEIGHTED;
    #[inline(always)]
    fn next(&mut self) -> (u64, bool, f64) {
        let a = self.pos.get(self.ip).copied().unwrap_or_else(T::sentinel);
        let b = self.neg.get(self.ineg).copied().unwrap_or_else(T::sentinel);
        let take_neg = if GUARDED {
            self.ineg < self.neg.len() && (self.ip >= self.pos.len() || b.key() <= a.key())
        } else {
            b.key() <= a.key()
        };
        let x = if take_neg { b } else { a };
        self.ip += usize::from(!take_neg);
        self.ineg += usize::from(take_neg);
        (x.key(), !take_neg, x.weight())
    }
}

/// One sorted array whose keys carry the outcome in bit 0 (possible when
/// bit 0 is the same in every score key: it then orders nothing).
struct Packed<'a, T> {
    rows: std::slice::Iter<'a, T>,
}

impl<T: Item> Stream for Packed<'_, T> {
    const WEIGHTED: bool = T::WEIGHTED;
    #[inline(always)]
    fn next(&mut self) -> (u64, bool, f64) {
        let x = self.rows.next().copied().unwrap_or_else(T::sentinel);
        let k = x.key();
        (k >> 1, k & 1 == 1, x.weight())
    }
}

/// Tie groups in ascending score order from `rows` (a branch-free merge of
/// two sorted sides, or one packed array; negatives first within a tie).
/// Per row: the pair counts; per closed group: the ties and, when `curves`
/// is set, the precision-recall and risk-coverage terms.
fn walk<S: Stream>(rows: S, totals: Totals, curves: bool, pool: &Pool) -> Result<BinaryRanking> {
    let mut w = Walk::new(totals, S::WEIGHTED, curves);
    w.run(rows, totals.n_pos + totals.n_neg, pool);
    pool.check()?;
    Ok(w.result())
}

/// The state of [`walk`]: rows and weights strictly below the current tie
/// group, the group's own counts, and the sums so far. Weights are
/// multiplied by `scale` (a power of two, see [`weight_scale`]) as they come
/// in: the curves are ratios and the pair sums are reported as shares, so
/// the scale cancels, while every product of two weight sums stays finite.
struct Walk {
    r: BinaryRanking,
    weighted: bool,
    curves: bool,
    scale: f64,
    /// Scaled totals.
    sw_pos: f64,
    sw_neg: f64,
    groups: u64,
    pos_below: u64,
    neg_below: u64,
    gp: u64,
    gn: u64,
    w_pos_below: f64,
    w_neg_below: f64,
    gwp: f64,
    gwn: f64,
    ordered: u128,
    tied: u128,
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
}

impl Walk {
    /// Walk `n` rows of `rows`, closing the last group at the end; stops
    /// early once the pool's stop flag is raised.
    fn run<S: Stream>(&mut self, mut rows: S, n: u64, pool: &Pool) {
        if n == 0 {
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
        self.finish_curve();
    }

    fn new(t: Totals, weighted: bool, curves: bool) -> Self {
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
            curves,
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
        }
        self.pos_below += self.gp;
        self.neg_below += self.gn;
        self.w_pos_below += self.gwp;
        self.w_neg_below += self.gwn;
        (self.gp, self.gn, self.gwp, self.gwn) = (0, 0, 0.0, 0.0);
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
            self.ap += self.gwp * precision;
            self.aupr += self.pending_w / w_pos * (self.pending_precision + precision) / 2.0;
            // Groups below the lowest positive lie past full recall.
            let in_curve = self.w_pos_below + self.gwp > 0.0;
            self.pending_w = if in_curve { self.gwp } else { 0.0 };
            self.pending_precision = precision;
        }
        if covered > 0.0 && total > 0.0 {
            self.aurc += (self.gwp + self.gwn) / total * (fp / covered);
        }
    }

    /// The top group's trapezoid reaches up to (recall 0, precision 1).
    fn finish_curve(&mut self) {
        if self.curves && self.sw_pos > 0.0 {
            self.aupr += self.pending_w / self.sw_pos * (self.pending_precision + 1.0) / 2.0;
        }
    }

    #[allow(clippy::cast_precision_loss)]
    fn result(self) -> BinaryRanking {
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
        r.average_precision = curve(self.ap / self.w_pos_below, self.w_pos_below > 0.0);
        r.aupr_trapezoid = curve(self.aupr, self.sw_pos > 0.0);
        r.aurc = curve(self.aurc, self.sw_pos + self.sw_neg > 0.0);
        r
    }
}

mod kendall;
mod state;
pub use kendall::{
    kendall_counts, kendall_counts_with, KendallCounts, KendallMethod, TABLE_MAX_DISTINCT,
};
pub use state::{GroupState, MIN_BUFFER};
