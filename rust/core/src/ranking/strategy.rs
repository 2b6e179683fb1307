//! From checked rows to a sorted stream: one read checks the scores and counts
//! the outcomes ([`scan`]); the rows are keyed and either packed into one
//! array (the outcome in bit 0 of the key, when bit 0 of every score key is
//! the same) or split by outcome into two arrays, sorted, and handed to a
//! [`Sink`] as a [`Stream`] (the walk, or the tie groups).

use super::keys::{weighted, Item, Score};
use super::pieces::pairs_in_pieces;
use super::walk::walk;
use super::{check_weights, totals_of, BinaryRanking, Totals};
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::{big_vec, collect_chunked, Pool, CHECK_ROWS};
use rayon::prelude::*;

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

/// What is done with the rows once they are checked and keyed: the packed
/// form (one array, the outcome in bit 0 of the keys, `bit0` the score keys'
/// own constant bit 0) or two sides split by outcome, both unsorted.
pub(super) trait Sink {
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

pub(super) struct WalkSink {
    pub(super) curves: bool,
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

/// Check `(positive, score, weight)` and hand the keyed rows to `sink`.
pub(super) fn prepare<S: Sink, X: Score>(
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

/// Rows in ascending score order (negatives first within a tie): `(key, positive, weight)`.
pub(super) trait Stream {
    /// Whether rows carry weights (otherwise every weight is 1).
    const WEIGHTED: bool;
    fn next(&mut self) -> (u64, bool, f64);
}

/// The branch-free merge of the two sorted sides; an exhausted side reads as
/// a sentinel keyed `u64::MAX`. That is also a real key (integer scores at
/// `i64::MAX` or `u64::MAX`): with `GUARDED` the merge checks the sides'
/// lengths instead, which costs a third of the walk, so it is used only when
/// such a key occurs.
pub(super) struct Merge<T, const GUARDED: bool> {
    pos: Vec<T>,
    neg: Vec<T>,
    ip: usize,
    ineg: usize,
}

impl<T, const GUARDED: bool> Merge<T, GUARDED> {
    pub(super) fn new(pos: Vec<T>, neg: Vec<T>) -> Self {
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
pub(super) struct Packed<'a, T> {
    pub(super) rows: std::slice::Iter<'a, T>,
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
