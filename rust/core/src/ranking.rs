//! Ranking metrics (spec section 5 and 7.4-7.5): pair counts between a
//! binary outcome and a score, the tie-grouped precision/recall and
//! risk/coverage walks, and Kendall's tau-b/tau-c by Knight's algorithm.
//!
//! Scores become order-preserving `u64` keys ([`order_key`]; `-0.0 == 0.0`)
//! and are sorted by an LSD radix sort that skips the bytes all keys share
//! (f32 data widened to f64 has 29 constant low bits, probabilities share
//! their top bytes). Pair counts are exact integers (`u128`) without weights
//! and f64 sums of `w_i * w_j` with them; nothing depends on the thread count.

use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::Pool;

/// An order-preserving key: `a < b` iff `order_key(a) < order_key(b)` for
/// non-NaN floats, with `-0.0` and `0.0` mapped to the same key.
#[inline]
#[must_use]
pub fn order_key(x: f64) -> u64 {
    let x = if x == 0.0 { 0.0 } else { x };
    let b = x.to_bits();
    if b >> 63 == 1 {
        !b
    } else {
        b | (1 << 63)
    }
}

/// Check that every value is finite (the package-wide rule, spec 1.5 and O9).
fn check_finite(arg: &'static str, xs: &[f64]) -> Result<()> {
    if let Some((index, &value)) = xs.iter().enumerate().find(|(_, v)| !v.is_finite()) {
        return Err(MetricError::NonFinite { arg, index, value });
    }
    Ok(())
}

/// Sort `v` by `key` (stable, LSD radix on bytes). Bytes on which all keys
/// agree are skipped; `buf` is scratch space of the same length.
fn radix_sort_by<T: Copy + Send + Sync>(v: &mut Vec<T>, key: impl Fn(&T) -> u64 + Sync) {
    let n = v.len();
    if n < 2 {
        return;
    }
    if n <= 256 {
        v.sort_by_key(&key);
        return;
    }
    // One pass builds the histograms of all eight bytes.
    let mut hist = vec![[0_usize; 256]; 8];
    for x in v.iter() {
        let k = key(x);
        for (b, h) in hist.iter_mut().enumerate() {
            if let Some(c) = h.get_mut(((k >> (8 * b)) & 0xFF) as usize) {
                *c += 1;
            }
        }
    }
    let mut buf: Vec<T> = v.clone();
    for (b, h) in hist.iter().enumerate() {
        if h.contains(&n) {
            continue; // every key has the same byte here
        }
        let mut offsets = [0_usize; 256];
        let mut run = 0;
        for (o, &c) in offsets.iter_mut().zip(h.iter()) {
            *o = run;
            run += c;
        }
        for x in v.iter() {
            let d = ((key(x) >> (8 * b)) & 0xFF) as usize;
            if let Some(o) = offsets.get_mut(d) {
                if let Some(slot) = buf.get_mut(*o) {
                    *slot = *x;
                }
                *o += 1;
            }
        }
        std::mem::swap(v, &mut buf);
    }
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
    /// The same as sums of `w_i w_j` (equal to the counts without weights).
    pub w_reversed: f64,
    pub w_tied: f64,
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

/// Sorted keys of one outcome: plain keys, or (key, weight) pairs.
trait Side: Send {
    fn len(&self) -> usize;
    fn key(&self, i: usize) -> u64;
    fn weight(&self, i: usize) -> f64;
    fn sort(&mut self);
    /// Count and weight of the run of `key` ending just before `*end`
    /// (walking downwards); moves `*end` to the run's start.
    #[inline]
    fn take_run(&self, end: &mut usize, key: u64) -> (u64, f64) {
        let mut c = 0;
        let mut w = 0.0;
        while *end > 0 && self.key(*end - 1) == key {
            *end -= 1;
            c += 1;
            w += self.weight(*end);
        }
        (c, w)
    }
}

impl Side for Vec<u64> {
    #[inline]
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    #[inline]
    fn key(&self, i: usize) -> u64 {
        self.get(i).copied().unwrap_or(0)
    }
    #[inline]
    fn weight(&self, _: usize) -> f64 {
        1.0
    }
    fn sort(&mut self) {
        radix_sort_by(self, |&k| k);
    }
}

impl Side for Vec<(u64, f64)> {
    #[inline]
    fn len(&self) -> usize {
        self.as_slice().len()
    }
    #[inline]
    fn key(&self, i: usize) -> u64 {
        self.get(i).map_or(0, |p| p.0)
    }
    #[inline]
    fn weight(&self, i: usize) -> f64 {
        self.get(i).map_or(0.0, |p| p.1)
    }
    fn sort(&mut self) {
        radix_sort_by(self, |p| p.0);
    }
}

/// Split the rows by outcome into two vectors of `item(row)` (sized exactly).
fn split<T>(positive: &[bool], item: impl Fn(usize) -> T) -> (Vec<T>, Vec<T>) {
    let n_pos = positive.iter().filter(|&&p| p).count();
    let mut pos = Vec::with_capacity(n_pos);
    let mut neg = Vec::with_capacity(positive.len() - n_pos);
    for (i, &p) in positive.iter().enumerate() {
        if p {
            pos.push(item(i));
        } else {
            neg.push(item(i));
        }
    }
    (pos, neg)
}

fn sort_and_walk<S: Side>(mut pos: S, mut neg: S, pool: &Pool, n: usize) -> BinaryRanking {
    if pool.parallel_for(n) {
        pool.install(|| rayon::join(|| pos.sort(), || neg.sort()));
    } else {
        pos.sort();
        neg.sort();
    }
    walk(&pos, &neg)
}

/// Validate and walk `(positive, score, weight)` (module docs).
///
/// # Errors
/// Length mismatch, empty input, a non-finite score, an invalid weight.
pub fn binary_ranking(
    positive: &[bool],
    score: &[f64],
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<BinaryRanking> {
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
    check_finite("y_score", score)?;
    if let Some(w) = weight {
        ensure!(
            w.len() == n,
            MetricError::LengthMismatch {
                a: "sample_weight",
                a_len: w.len(),
                b: "y_score",
                b_len: n,
            }
        );
        let bad: Vec<(usize, f64)> = w
            .iter()
            .copied()
            .enumerate()
            .filter(|(_, x)| !(0.0..f64::INFINITY).contains(x))
            .collect();
        if let Some(&(index, value)) = bad.first() {
            return Err(MetricError::InvalidWeight {
                index,
                value,
                count: bad.len(),
            });
        }
    }
    let key = |i: usize| order_key(score.get(i).copied().unwrap_or(0.0));
    Ok(match weight {
        None => {
            let (pos, neg) = split(positive, key);
            sort_and_walk(pos, neg, pool, n)
        }
        Some(w) => {
            let (pos, neg) = split(positive, |i| (key(i), w.get(i).copied().unwrap_or(0.0)));
            sort_and_walk(pos, neg, pool, n)
        }
    })
}

#[allow(clippy::cast_precision_loss)]
fn walk<S: Side>(pos: &S, neg: &S) -> BinaryRanking {
    let mut r = BinaryRanking::default();
    let (mut ip, mut ineg) = (pos.len(), neg.len());
    r.n_pos = ip as u64;
    r.n_neg = ineg as u64;
    // Totals first (the walk needs them for recall and coverage).
    r.w_pos = (0..ip).map(|i| pos.weight(i)).sum();
    r.w_neg = (0..ineg).map(|i| neg.weight(i)).sum();
    let total = r.w_pos + r.w_neg;
    let (mut tp, mut fp) = (0.0_f64, 0.0_f64);
    let (mut neg_above, mut w_neg_above) = (0_u64, 0.0_f64);
    let mut ap = 0.0;
    let (mut last_recall, mut last_precision) = (0.0, 1.0);
    let mut aupr = 0.0;
    let mut aurc = 0.0;
    let mut full_recall = false;
    while ip > 0 || ineg > 0 {
        let kp = (ip > 0).then(|| pos.key(ip - 1));
        let kn = (ineg > 0).then(|| neg.key(ineg - 1));
        let key = match (kp, kn) {
            (Some(a), Some(b)) => a.max(b),
            (Some(a), None) => a,
            (None, Some(b)) => b,
            (None, None) => break,
        };
        let (cp, wp) = pos.take_run(&mut ip, key);
        let (cn, wn) = neg.take_run(&mut ineg, key);
        r.n_thresholds += 1;
        r.reversed += u128::from(cp) * u128::from(neg_above);
        r.tied += u128::from(cp) * u128::from(cn);
        r.w_reversed += wp * w_neg_above;
        r.w_tied += wp * wn;
        neg_above += cn;
        w_neg_above += wn;
        tp += wp;
        fp += wn;
        let covered = tp + fp;
        if covered > 0.0 {
            let precision = tp / covered;
            if r.w_pos > 0.0 {
                let recall = tp / r.w_pos;
                ap += (recall - last_recall) * precision;
                if !full_recall {
                    aupr += (recall - last_recall) * (precision + last_precision) / 2.0;
                    full_recall = tp >= r.w_pos;
                }
                last_recall = recall;
                last_precision = precision;
            }
            if total > 0.0 {
                aurc += (wp + wn) / total * (fp / covered);
            }
        }
    }
    let pairs = u128::from(r.n_pos) * u128::from(r.n_neg);
    r.ordered = pairs - r.reversed - r.tied;
    r.average_precision = if r.w_pos > 0.0 { ap } else { f64::NAN };
    r.aupr_trapezoid = if r.w_pos > 0.0 { aupr } else { f64::NAN };
    r.aurc = if total > 0.0 { aurc } else { f64::NAN };
    r
}

/// Pair counts of Kendall's tau between two vectors (spec 5, Knight 1966).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct KendallCounts {
    /// Rows.
    pub n: u64,
    /// Pairs tied in x (joint ties included), tied in y, tied in both.
    pub x_ties: u128,
    pub y_ties: u128,
    pub joint_ties: u128,
    /// Discordant pairs.
    pub discordant: u128,
    /// Distinct values of x and of y.
    pub x_distinct: u64,
    pub y_distinct: u64,
}

impl KendallCounts {
    /// All pairs, `n (n - 1) / 2`.
    #[must_use]
    pub fn pairs(&self) -> u128 {
        let n = u128::from(self.n);
        n * n.saturating_sub(1) / 2
    }
    /// `n_c - n_d` (exact).
    #[must_use]
    #[allow(clippy::cast_possible_wrap)]
    pub fn concordant_minus_discordant(&self) -> i128 {
        (self.pairs() + self.joint_ties) as i128
            - (self.x_ties + self.y_ties) as i128
            - 2 * self.discordant as i128
    }
    /// Kendall's tau-b (NaN when x or y is constant, or n < 2).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn tau_b(&self) -> f64 {
        let n0 = self.pairs();
        let (a, b) = (n0 - self.x_ties, n0 - self.y_ties);
        if a == 0 || b == 0 {
            return f64::NAN;
        }
        self.concordant_minus_discordant() as f64 / ((a as f64).sqrt() * (b as f64).sqrt())
    }
    /// Stuart's tau-c (NaN when x or y is constant, or n < 2).
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn tau_c(&self) -> f64 {
        let m = self.x_distinct.min(self.y_distinct);
        if m < 2 || self.n < 2 {
            return f64::NAN;
        }
        let n = self.n as f64;
        let m = m as f64;
        2.0 * self.concordant_minus_discordant() as f64 / (n * n * (m - 1.0) / m)
    }
}

/// Pairs within runs of equal `key` in a sorted sequence, and the number of runs.
fn tie_runs<T, K: PartialEq>(sorted: &[T], key: impl Fn(&T) -> K) -> (u128, u64) {
    let mut pairs = 0_u128;
    let mut runs = 0_u64;
    let mut i = 0;
    while let Some(first) = sorted.get(i) {
        let k = key(first);
        let mut j = i + 1;
        while sorted.get(j).is_some_and(|v| key(v) == k) {
            j += 1;
        }
        let t = (j - i) as u128;
        pairs += t * (t - 1) / 2;
        runs += 1;
        i = j;
    }
    (pairs, runs)
}

/// Sort `v` (merge sort) and return its number of inversions (`i < j`,
/// `v[i] > v[j]`; equal values are not inversions). `buf` is scratch space.
fn sort_count_inversions(v: &mut [u64], buf: &mut [u64], pool: &Pool) -> u128 {
    const SMALL: usize = 32;
    const PARALLEL_ABOVE: usize = 1 << 16;
    let n = v.len();
    if n <= SMALL {
        // Insertion sort: every shift past a larger value is one inversion.
        let mut inv = 0_u128;
        for i in 1..n {
            let mut j = i;
            while j > 0 && v.get(j - 1) > v.get(j) {
                v.swap(j - 1, j);
                inv += 1;
                j -= 1;
            }
        }
        return inv;
    }
    let mid = n / 2;
    let (left, right) = v.split_at_mut(mid);
    let (lbuf, rbuf) = buf.split_at_mut(mid);
    let (a, b) = if n >= PARALLEL_ABOVE && pool.threads() > 1 {
        rayon::join(
            || sort_count_inversions(left, lbuf, pool),
            || sort_count_inversions(right, rbuf, pool),
        )
    } else {
        (
            sort_count_inversions(left, lbuf, pool),
            sort_count_inversions(right, rbuf, pool),
        )
    };
    let mut inv = a + b;
    // Merge into buf, counting for each right element the left ones above it.
    let (mut i, mut j, mut k) = (0, 0, 0);
    let (l, r) = (&*left, &*right);
    while i < l.len() && j < r.len() {
        let (x, y) = (
            l.get(i).copied().unwrap_or(0),
            r.get(j).copied().unwrap_or(0),
        );
        if y < x {
            inv += (l.len() - i) as u128;
            if let Some(s) = buf.get_mut(k) {
                *s = y;
            }
            j += 1;
        } else {
            if let Some(s) = buf.get_mut(k) {
                *s = x;
            }
            i += 1;
        }
        k += 1;
    }
    for &x in l
        .get(i..)
        .unwrap_or(&[])
        .iter()
        .chain(r.get(j..).unwrap_or(&[]))
    {
        if let Some(s) = buf.get_mut(k) {
            *s = x;
        }
        k += 1;
    }
    v.copy_from_slice(buf.get(..n).unwrap_or(&[]));
    inv
}

/// Kendall pair counts of `(x, y)` in O(n log n) (spec 5).
///
/// # Errors
/// Length mismatch, empty input, NaN or infinite values.
pub fn kendall_counts(x: &[f64], y: &[f64], pool: &Pool) -> Result<KendallCounts> {
    let n = x.len();
    ensure!(
        y.len() == n,
        MetricError::LengthMismatch {
            a: "x",
            a_len: n,
            b: "y",
            b_len: y.len(),
        }
    );
    ensure!(n > 0, MetricError::Empty { arg: "x" });
    check_finite("x", x)?;
    check_finite("y", y)?;
    let mut pairs: Vec<(u64, u64)> = x
        .iter()
        .zip(y)
        .map(|(&a, &b)| (order_key(a), order_key(b)))
        .collect();
    // Lexicographic (x, y): stable LSD passes on y, then on x.
    pool.install(|| {
        radix_sort_by(&mut pairs, |p| p.1);
        radix_sort_by(&mut pairs, |p| p.0);
    });
    let (x_ties, x_distinct) = tie_runs(&pairs, |p| p.0);
    let (joint_ties, _) = tie_runs(&pairs, |p| *p);
    let mut ys: Vec<u64> = pairs.iter().map(|p| p.1).collect();
    drop(pairs);
    let mut buf = vec![0_u64; n];
    let discordant = pool.install(|| sort_count_inversions(&mut ys, &mut buf, pool));
    let (y_ties, y_distinct) = tie_runs(&ys, |v| *v);
    Ok(KendallCounts {
        n: n as u64,
        x_ties,
        y_ties,
        joint_ties,
        discordant,
        x_distinct,
        y_distinct,
    })
}
