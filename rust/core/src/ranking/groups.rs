//! Tie groups: the distinct scores with their positive and negative rows (and
//! weights), in increasing order. They merge exactly, so they are the exact
//! streaming summary; the walk over them gives what the walk over the rows gives.

use super::binary::{check_pair, BinaryRanking, Totals};
use super::hashed::{all_binary_rows_pass, hashed_binary_proba_groups, hashed_groups, TIE_GROUPS};
use super::keys::{starts_as_f32, Item, Score};
use super::strategy::{pack_f32, prepare, Sink};
use super::stream::{Merge, Packed, Stream};
use super::walk::walk_groups_iter;
use crate::ensure;
use crate::error::{same_length, MetricError, Result};
use crate::parallel::{big_vec, collect_chunked, Pool};
use crate::row_rule::row_atol;
use crate::sort::sort_keys;
use ndarray::ArrayView1;

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
    /// The groups of unweighted rows counted by hashing, `(key, positive
    /// rows, negative rows)` in increasing key order.
    fn counted<X: Score>(found: &[(u64, u64, u64)]) -> Self {
        Self {
            values: found.iter().map(|g| X::key_value(g.0)).collect(),
            n_pos: found.iter().map(|g| g.1).collect(),
            n_neg: found.iter().map(|g| g.2).collect(),
            w_pos: Vec::new(),
            w_neg: Vec::new(),
        }
    }

    /// Whether the groups carry weight sums.
    #[must_use]
    pub fn weighted(&self) -> bool {
        !self.w_pos.is_empty() || (self.values.is_empty() && !self.w_neg.is_empty())
    }

    #[inline]
    pub(crate) fn push(&mut self, value: f64, g: (u64, u64, f64, f64), weighted: bool) {
        self.values.push(value);
        self.n_pos.push(g.0);
        self.n_neg.push(g.1);
        if weighted {
            self.w_pos.push(g.2);
            self.w_neg.push(g.3);
        }
    }
}

struct GroupSink;

impl GroupSink {
    fn collect<S: Stream>(
        mut rows: S,
        n: usize,
        value_of: impl Fn(u64) -> f64,
    ) -> Result<ScoreGroups> {
        // Room for one group per row: no reallocation (and copy) as the
        // groups come in; pages never written are never touched.
        let w = if S::WEIGHTED { n } else { 0 };
        let mut out = ScoreGroups {
            values: big_vec(n, "the tie groups")?,
            n_pos: big_vec(n, "the tie groups")?,
            n_neg: big_vec(n, "the tie groups")?,
            w_pos: big_vec(w, "the tie groups")?,
            w_neg: big_vec(w, "the tie groups")?,
        };
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
        Ok(out)
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
        Self::collect(Packed { rows: rows.iter() }, n, |k| {
            X::key_value((k << 1) | bit0)
        })
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
        Self::collect(Merge::<T, true>::new(&pos, &neg), n, X::key_value)
    }
}

/// The tie groups of `(positive, score, weight)` (checks as [`super::binary_ranking`]).
/// Unweighted rows with few distinct scores are counted in hash tables
/// (`hashed_groups`: the same groups, without sorting the rows).
///
/// # Errors
/// Length mismatch, empty input, a non-finite score, an invalid weight.
pub fn score_groups<X: Score>(
    positive: &[bool],
    score: &[X],
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<ScoreGroups> {
    if weight.is_none() {
        check_pair(positive, score.len())?;
        if let Some(found) = hashed_groups(positive, score.into(), TIE_GROUPS, pool)? {
            return Ok(ScoreGroups::counted::<X>(&found));
        }
    }
    sorted_score_groups(positive, score, weight, pool)
}

/// [`score_groups`] by sorting the rows, without trying the hash tables
/// (for callers that tried them already).
fn sorted_score_groups<X: Score>(
    positive: &[bool],
    score: &[X],
    weight: Option<&[f64]>,
    pool: &Pool,
) -> Result<ScoreGroups> {
    // float32 probabilities (or float64 copies of them): half-width keys,
    // one array, as binary_ranking sorts them; the value back from the bits.
    if weight.is_none()
        && positive.len() == score.len()
        && !score.is_empty()
        && starts_as_f32(score.iter().copied())
    {
        if let Some((mut rows, _)) = pack_f32(positive, score, pool)? {
            sort_keys(&mut rows, pool)?;
            let n = rows.len();
            #[allow(clippy::cast_possible_truncation)]
            return GroupSink::collect(Packed { rows: rows.iter() }, n, |k| {
                f64::from(f32::from_bits(k as u32))
            });
        }
    }
    prepare(positive, score, weight, pool, GroupSink)
}

/// The tie groups of unweighted rows whose scores may be strided, such as
/// one column of a row-major matrix of probabilities: few distinct scores are
/// counted where they lie, without a copy; others are copied into one array
/// and sorted as [`score_groups`] sorts them.
///
/// # Errors
/// As [`score_groups`]; [`MetricError::OutOfMemory`] for the copy.
pub fn score_groups_of_view<X: Score>(
    positive: &[bool],
    score: ArrayView1<'_, X>,
    pool: &Pool,
) -> Result<ScoreGroups> {
    // Contiguous or strided, as `score_groups` without weights: the hash
    // tables (which read either layout in place), else the sort.
    check_pair(positive, score.len())?;
    if let Some(found) = hashed_groups(positive, score, TIE_GROUPS, pool)? {
        return Ok(ScoreGroups::counted::<X>(&found));
    }
    sorted_groups_of_view(positive, score, pool)
}

/// The tie groups of unweighted rows whose scores may be strided, by sorting
/// (the hash tables tried already, or declined): contiguous scores sorted as
/// [`score_groups`] sorts them, others copied into one array first.
fn sorted_groups_of_view<X: Score>(
    positive: &[bool],
    score: ArrayView1<'_, X>,
    pool: &Pool,
) -> Result<ScoreGroups> {
    if let Some(all) = score.as_slice() {
        return sorted_score_groups(positive, all, None, pool);
    }
    // Copied in parallel chunks: a strided read of 10^7 values on one thread
    // cost about what the sort after it costs.
    let copy = collect_chunked(score.len(), |i| score[i], pool)?;
    sorted_score_groups(positive, &copy, None, pool)
}

/// The tie groups of the second column of binary probabilities (`n x 2`,
/// either memory order), each row checked as the probability pass checks it:
/// both entries in [0, 1] (NaN fails) and their sum within `atol` of 1 (NaN:
/// `2 x 10^-6`, the pass's `10^-6 K`). Few distinct scores are counted in
/// hash tables in the pass that checks the rows (one read of the matrix
/// where the probability pass and the count took two); others are checked,
/// then sorted as [`score_groups_of_view`] sorts them (the hash tables are
/// not tried twice). `None` when a row fails the check (the caller's
/// probability pass then reports it).
///
/// # Errors
/// `proba` without two columns, a length mismatch, no rows;
/// [`MetricError::Interrupted`]; [`MetricError::OutOfMemory`].
pub fn binary_proba_groups<X: Score>(
    positive: &[bool],
    proba: ndarray::ArrayView2<'_, X>,
    atol: f64,
    pool: &Pool,
) -> Result<Option<ScoreGroups>> {
    ensure!(
        proba.ncols() == 2,
        MetricError::InvalidValue {
            arg: "y_proba",
            detail: format!(
                "it has {} columns; the tie groups of binary probabilities take two",
                proba.ncols()
            )
        }
    );
    same_length("y_true", Some(positive.len()), "y_proba", proba.nrows())?;
    ensure!(proba.nrows() > 0, MetricError::Empty { arg: "y_proba" });
    let atol = row_atol(atol, 2);
    if let Some(found) = hashed_binary_proba_groups(positive, proba, atol, pool)? {
        return Ok(Some(ScoreGroups::counted::<X>(&found)));
    }
    // Scores too many to count (by the sample, or past the tables' room
    // while counting), too few rows, or a bad row met on the way: the hash
    // tables are not tried again.
    if !all_binary_rows_pass(proba, atol, pool)? {
        return Ok(None);
    }
    sorted_groups_of_view(positive, proba.column(1), pool).map(Some)
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
    pub(crate) fn check(&self, arg: &'static str) -> Result<()> {
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
    pub(crate) fn get(&self, i: usize) -> (u64, u64, f64, f64) {
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
        values: big_vec(cap, "the merged tie groups")?,
        n_pos: big_vec(cap, "the merged tie groups")?,
        n_neg: big_vec(cap, "the merged tie groups")?,
        w_pos: big_vec(wcap, "the merged tie groups")?,
        w_neg: big_vec(wcap, "the merged tie groups")?,
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

/// The walk of [`super::binary_ranking`] over tie groups in increasing score order.
///
/// # Errors
/// As [`merge_groups`] for malformed groups; weights summing to 0 or past
/// the float64 range.
pub fn walk_groups(g: GroupsRef, curves: bool) -> Result<BinaryRanking> {
    g.check("groups")?;
    let weighted = !g.w_pos.is_empty();
    walk_groups_iter((0..g.values.len()).map(|i| g.get(i)), weighted, curves)
}
