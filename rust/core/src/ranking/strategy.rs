//! From checked rows to a sorted stream: one read checks the scores and counts
//! the outcomes ([`scan`]); the rows are keyed and either packed into one
//! array (the outcome in bit 0 of the key, when bit 0 of every score key is
//! the same) or split by outcome into two arrays, sorted, and handed to a
//! [`Sink`] as a [`Stream`] (the walk, or the tie groups).

use super::binary::{check_pair, check_weights, totals_of, BinaryRanking, Curves, Totals};
use super::hashed::{hashed_groups, ranking_limit};
use super::keys::{
    packed_u32, signed_packed_u32, starts_as_f32, starts_as_signed_f32, weighted, Item, Score,
};
use super::pieces::{packed_pair_pieces, packed_pieces, walk_in_pieces, PIECES, PIECE_WALK_MIN};
use super::stream::{Merge, Packed, PackedMerge, Stream};
use super::walk::{walk, walk_groups_iter};
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::parallel::{big_vec, collect_chunked, collect_chunked_folded, Pool};
use rayon::prelude::*;
use std::ops::Range;

#[cfg(target_arch = "x86_64")]
mod signed_split;

/// One chunk of [`split`]: its first row, its slots of the first and
/// second vectors.
type SplitPart<'a, T> = (
    usize,
    &'a mut [std::mem::MaybeUninit<T>],
    &'a mut [std::mem::MaybeUninit<T>],
);

/// One chunk's slots of the two sides of [`split_folded`], for its `steps`.
type SideSlots<'a, T> = (
    &'a mut [std::mem::MaybeUninit<T>],
    &'a mut [std::mem::MaybeUninit<T>],
);

/// Split rows `0..n` by `first(row)` into two vectors of `item(row)`, in row
/// order, without a branch on the side (each row is written to both cursors
/// and kept by one). Chunks of rows run in parallel: one read counts each
/// chunk's rows of the first side, then each chunk writes its own ranges of
/// the two vectors (found from the counts of the chunks before it).
pub(super) fn split<T: Copy + Send + Sync>(
    n: usize,
    first: impl Fn(usize) -> bool + Sync,
    item: impl Fn(usize) -> T + Sync,
    pool: &Pool,
) -> Result<(Vec<T>, Vec<T>)> {
    let none = |rows: Range<usize>, _: SideSlots<'_, T>| (rows.start, 0, 0);
    let (a, b, ()) = split_folded(n, first, item, none, (), |(), _| (), |(), ()| (), pool)?;
    Ok((a, b))
}

/// [`split`], and a summary of the values written, as
/// [`crate::parallel::collect_chunked_folded`] gives one: each chunk's two
/// ranges folded by `fold` as soon as the chunk has written them (still in
/// cache), the chunks' summaries combined by `join` from `zero`. `steps`
/// may split a chunk's first rows its own way (given the chunk's rows and
/// its slots, it returns the first row left and the two cursors, as the
/// rows before would have left them); the rest go row by row.
#[allow(clippy::too_many_arguments)]
fn split_folded<T: Copy + Send + Sync, A: Copy + Send + Sync>(
    n: usize,
    first: impl Fn(usize) -> bool + Sync,
    item: impl Fn(usize) -> T + Sync,
    steps: impl Fn(Range<usize>, SideSlots<'_, T>) -> (usize, usize, usize) + Sync,
    zero: A,
    fold: impl Fn(A, &[T]) -> A + Sync,
    join: impl Fn(A, A) -> A + Sync + Send,
    pool: &Pool,
) -> Result<(Vec<T>, Vec<T>, A)> {
    const CHUNK: usize = 1 << 18;
    let starts: Vec<usize> = (0..n).step_by(CHUNK).collect();
    let count = |&s: &usize| (s..(s + CHUNK).min(n)).filter(|&i| first(i)).count();
    let counts: Vec<usize> = if pool.parallel_for(n) {
        pool.install(|| starts.par_iter().map(count).collect())
    } else {
        starts.iter().map(count).collect()
    };
    let n_first: usize = counts.iter().sum();
    let n_second = n - n_first;
    let mut a: Vec<T> = big_vec(n_first, "the rows of one side")?;
    let mut b: Vec<T> = big_vec(n_second, "the rows of the other side")?;
    let summary = {
        // Each chunk's own slots of the two vectors.
        let (mut xs, mut ys) = (
            a.spare_capacity_mut()
                .get_mut(..n_first)
                .unwrap_or_default(),
            b.spare_capacity_mut()
                .get_mut(..n_second)
                .unwrap_or_default(),
        );
        let mut parts = Vec::with_capacity(counts.len());
        for (&s, &p) in starts.iter().zip(&counts) {
            let rows = (s + CHUNK).min(n) - s;
            let p = p.min(xs.len());
            let (x, rest_x) = std::mem::take(&mut xs).split_at_mut(p);
            let q = (rows - p).min(ys.len());
            let (y, rest_y) = std::mem::take(&mut ys).split_at_mut(q);
            (xs, ys) = (rest_x, rest_y);
            parts.push((s, x, y));
        }
        let fill = |(s, x, y): SplitPart<'_, T>| -> A {
            if pool.stopped() {
                return zero;
            }
            let (start, mut ix, mut iy) = steps(s..(s + CHUNK).min(n), (&mut *x, &mut *y));
            for i in start..(s + CHUNK).min(n) {
                let v = item(i);
                let here = first(i);
                // The cursor of the other side may be at its end (no slot).
                if let Some(slot) = x.get_mut(ix) {
                    slot.write(v);
                }
                if let Some(slot) = y.get_mut(iy) {
                    slot.write(v);
                }
                ix += usize::from(here);
                iy += usize::from(!here);
            }
            // SAFETY: the cursors wrote every slot of `x` and `y` (the counts
            // are this chunk's own, from the same pure `first`), and
            // `MaybeUninit<T>` has the size and alignment of `T`.
            let (x, y) = unsafe {
                (
                    std::slice::from_raw_parts(x.as_ptr().cast::<T>(), x.len()),
                    std::slice::from_raw_parts(y.as_ptr().cast::<T>(), y.len()),
                )
            };
            fold(fold(zero, x), y)
        };
        if pool.parallel_for(n) {
            pool.install(|| parts.into_par_iter().map(fill).reduce(|| zero, &join))
        } else {
            parts.into_iter().map(fill).fold(zero, &join)
        }
    };
    pool.check()?;
    // SAFETY: each chunk's cursor wrote every slot of its range before moving
    // past it, the ranges tile `..n_first` and `..n_second` (the counts are
    // the chunks' own, from the same pure `first`), and the stop flag was not
    // raised (checked just above), so every chunk ran to its end; `T: Copy`
    // needs no drop.
    unsafe {
        a.set_len(n_first);
        b.set_len(n_second);
    }
    Ok((a, b, summary))
}

fn sort_and_walk<T: Item>(
    mut pos: Vec<T>,
    mut neg: Vec<T>,
    totals: Totals,
    pool: &Pool,
    curves: Curves,
    max_key: bool,
) -> Result<BinaryRanking> {
    let side_by_side = pool.parallel_for(pos.len() + neg.len());
    sort_both(&mut pos, &mut neg, side_by_side, pool)?;
    if !T::WEIGHTED && pos.len() + neg.len() >= PIECE_WALK_MIN {
        let pieces = split_pieces(&pos, &neg);
        return if max_key {
            walk_in_pieces(
                &pieces,
                |&(a, b, ..)| Merge::<T, true>::new(a, b),
                totals,
                curves,
                pool,
            )
        } else {
            walk_in_pieces(
                &pieces,
                |&(a, b, ..)| Merge::<T, false>::new(a, b),
                totals,
                curves,
                pool,
            )
        };
    }
    if max_key {
        walk(Merge::<T, true>::new(&pos, &neg), totals, curves, pool)
    } else {
        walk(Merge::<T, false>::new(&pos, &neg), totals, curves, pool)
    }
}

/// Sort two vectors: `side_by_side`, one thread each (faster than one after
/// the other on every thread when both are large), else one after the other.
pub(super) fn sort_both<T: Item>(
    a: &mut Vec<T>,
    b: &mut Vec<T>,
    side_by_side: bool,
    pool: &Pool,
) -> Result<()> {
    if side_by_side {
        let (x, y) =
            pool.install(|| rayon::join(|| T::sort_alone(a, pool), || T::sort_alone(b, pool)));
        x?;
        y
    } else {
        T::sort(a, pool)?;
        T::sort(b, pool)
    }
}

/// One piece of two sorted sides: its positives and negatives, and how many
/// of each lie below it.
type SidePiece<'a, T> = (&'a [T], &'a [T], u64, u64);

/// The two sorted sides cut at [`PIECES`] keys taken at even steps of the
/// longer side: every row of a key lies in one piece.
fn split_pieces<'a, T: Item>(pos: &'a [T], neg: &'a [T]) -> Vec<SidePiece<'a, T>> {
    let longer = if neg.len() >= pos.len() { neg } else { pos };
    let mut cuts: Vec<(usize, usize)> = vec![(0, 0)];
    for p in 1..PIECES {
        let at = longer.len() * p / PIECES;
        if let Some(k) = longer.get(at).map(|x| x.key()) {
            cuts.push((
                pos.partition_point(|x| x.key() < k),
                neg.partition_point(|x| x.key() < k),
            ));
        }
    }
    cuts.push((pos.len(), neg.len()));
    cuts.windows(2)
        .map(|w| {
            let ((i0, j0), (i1, j1)) = (w[0], w[1]);
            (
                pos.get(i0..i1).unwrap_or(&[]),
                neg.get(j0..j1).unwrap_or(&[]),
                i0 as u64,
                j0 as u64,
            )
        })
        .collect()
}

/// The most packed rows [`sort_and_walk_packed`] sorts as two halves with the
/// vectorized sort (each half an uninterruptible step of a fraction of a
/// second).
const VECTORIZED_HALVES_MAX: usize = 1 << 26;

/// The packed path: one array, keys with the outcome in bit 0 (which the
/// caller checked to be constant across the score keys).
pub(super) fn sort_and_walk_packed<T: Item>(
    mut rows: Vec<T>,
    totals: Totals,
    pool: &Pool,
    curves: Curves,
) -> Result<BinaryRanking> {
    let n = rows.len();
    if halves_apply::<T>(n, pool) {
        // Walked as the merge of the sorted halves, in the pieces the sorted
        // whole would have.
        let (a, b) = rows.split_at_mut(n / 2);
        if sort_halves(a, b, pool)? {
            let pieces = packed_pair_pieces(a, b);
            return walk_in_pieces(
                &pieces,
                |&(a, b, ..)| PackedMerge::new(a, b),
                totals,
                curves,
                pool,
            );
        }
    }
    T::sort(&mut rows, pool)?;
    if !T::WEIGHTED && rows.len() >= PIECE_WALK_MIN {
        let pieces = packed_pieces(&rows);
        return walk_in_pieces(
            &pieces,
            |&(r, ..)| Packed { rows: r.iter() },
            totals,
            curves,
            pool,
        );
    }
    walk(Packed { rows: rows.iter() }, totals, curves, pool)
}

/// Whether [`sort_halves`] serves `n` packed rows: unweighted, the
/// vectorized sort chosen for their key type ([`Item::vectorized_chosen`]),
/// two threads or more, enough rows.
fn halves_apply<T: Item>(n: usize, pool: &Pool) -> bool {
    !T::WEIGHTED
        && (PIECE_WALK_MIN..=VECTORIZED_HALVES_MAX).contains(&n)
        && pool.threads() > 1
        && pool.parallel_for(n)
        && T::vectorized_chosen()
}

/// Each half sorted on a thread of its own by the vectorized sort (faster
/// than the parallel radix sort where it is chosen); false when this build
/// or key type has no vectorized sort (the halves are then in any order).
fn sort_halves<T: Item>(a: &mut [T], b: &mut [T], pool: &Pool) -> Result<bool> {
    pool.check()?;
    let (x, y) = pool.install(|| rayon::join(|| T::sort_vectorized(a), || T::sort_vectorized(b)));
    pool.check()?;
    Ok(x && y)
}

/// What is done with sorted rows given as one stream in ascending order.
pub(super) trait Consume {
    type Out;
    fn consume<S: Stream>(self, rows: S, n: usize) -> Result<Self::Out>;
}

/// Sort packed rows and hand them to `c` as one ascending stream: the two
/// halves sorted side by side and streamed as their merge where
/// [`sort_halves`] serves (no merged copy is written), else the whole array
/// sorted.
pub(super) fn sort_packed_stream<T: Item, C: Consume>(
    mut rows: Vec<T>,
    pool: &Pool,
    c: C,
) -> Result<C::Out> {
    let n = rows.len();
    if halves_apply::<T>(n, pool) {
        let (a, b) = rows.split_at_mut(n / 2);
        if sort_halves(a, b, pool)? {
            return c.consume(PackedMerge::new(a, b), n);
        }
    }
    T::sort(&mut rows, pool)?;
    c.consume(Packed { rows: rows.iter() }, n)
}

/// What the packed `u32` keys tell as they are written: whether one is
/// missing (`u32::MAX`, a score with no packed key) and how many are
/// positive (bit 0), added to `acc`.
fn look(acc: (bool, u64), keys: &[u32]) -> (bool, u64) {
    let ones: u64 = keys.iter().map(|&k| u64::from(k & 1)).sum();
    (acc.0 | keys.contains(&u32::MAX), acc.1 + ones)
}

/// Two [`look`]s together.
fn join_looks(a: (bool, u64), b: (bool, u64)) -> (bool, u64) {
    (a.0 | b.0, a.1 + b.1)
}

/// The half-width packed rows of float32 scores ([`packed_u32`]; float64
/// scores too when each is a float32 value) and the number of positives, when
/// every score is finite and non-negative (as probabilities and confidences
/// are); `None` otherwise, and the general path checks and keys the rows.
/// Lengths must match and be non-zero.
pub(super) fn pack_f32<X: Score>(
    positive: &[bool],
    score: &[X],
    pool: &Pool,
) -> Result<Option<(Vec<u32>, u64)>> {
    // u32::MAX is no packed key (finite bits are below 0x7F80_0000).
    let key = |i: usize| match (score.get(i), positive.get(i)) {
        (Some(&s), Some(&p)) => s
            .f32_bits()
            .and_then(|b| packed_u32(b, p))
            .unwrap_or(u32::MAX),
        _ => u32::MAX,
    };
    let (rows, (bad, n_pos)) =
        collect_chunked_folded(score.len(), key, (false, 0), look, join_looks, pool)?;
    Ok((!bad).then_some((rows, n_pos)))
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
    pub(super) curves: Curves,
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
    check_pair(positive, n)?;
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
    match weight {
        None => {
            let on = |i: usize| positive.get(i).copied().unwrap_or(false);
            let (pos, neg) = split(n, on, key, pool)?;
            sink.split::<u64, X>(pos, neg, totals, seen.max_key, pool)
        }
        Some(w) => {
            let on = |i: usize| positive.get(i).copied().unwrap_or(false);
            let (pos, neg) = split(
                n,
                on,
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
/// Each chunk's loop keeps no index and takes no branch, so that it runs in
/// vector registers; a chunk that holds a score that is not finite searches
/// for the first one afterwards (10^7 float64 scores on two threads: 19-22
/// -> 10 ms, Intel).
fn scan<X: Score>(positive: &[bool], score: &[X], parallel: bool) -> Seen {
    const CHUNK: usize = 1 << 16;
    let part = |(c, (ps, ss)): (usize, (&[bool], &[X]))| {
        let (mut finite, mut max_key) = (true, false);
        // Bit 0 of the OR of the keys is set when some key's is; bit 0 of
        // their AND is clear when some key's is.
        let (mut or, mut and) = (0_u64, 1_u64);
        let mut n_pos = 0_u64;
        for (&p, &s) in ps.iter().zip(ss) {
            finite &= s.is_finite();
            let k = s.key();
            or |= k;
            and &= k;
            max_key |= k == u64::MAX;
            n_pos += u64::from(p);
        }
        let first_bad = if finite {
            None
        } else {
            ss.iter()
                .position(|s| !s.is_finite())
                .map(|i| c * CHUNK + i)
        };
        Seen {
            first_bad,
            ones: or & 1 == 1,
            zeros: and & 1 == 0,
            n_pos,
            max_key,
        }
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
    curves: impl Into<Curves>,
    pool: &Pool,
) -> Result<BinaryRanking> {
    let curves: Curves = curves.into();
    // Few distinct scores (rounded to a few decimals, a model with a few
    // hundred outputs): the tie groups counted in hash tables, no sort.
    if weight.is_none() {
        check_pair(positive, score.len())?;
        if let Some(found) = hashed_groups(positive, score.into(), ranking_limit(score), pool)? {
            return walk_groups_iter(
                found.iter().map(|&(_, p, n)| (p, n, 0.0, 0.0)),
                false,
                curves,
            );
        }
    }
    // float32 probabilities and confidences (or float64 copies of them):
    // half-width keys, one array.
    if weight.is_none()
        && positive.len() == score.len()
        && !score.is_empty()
        && starts_as_f32(score.iter().copied())
    {
        if let Some((rows, n_pos)) = pack_f32(positive, score, pool)? {
            let totals = totals_of(positive, None, n_pos)?;
            return sort_and_walk_packed(rows, totals, pool, curves);
        }
    }
    // float32 scores of either sign (logits): half-width keys, the negative
    // scores in one array and the others in a second.
    if weight.is_none()
        && positive.len() == score.len()
        && !score.is_empty()
        && starts_as_signed_f32(score.iter().copied())
    {
        if let Some(walked) = walk_signed_f32(positive, score, curves, pool)? {
            return Ok(walked);
        }
    }
    prepare(positive, score, weight, pool, WalkSink { curves })
}

/// The walk of float32 scores of either sign: the rows split by the sign of
/// their score into two packed arrays ([`signed_packed_u32`]: a logit's
/// order needs all 32 bits of a key and leaves no bit for the outcome, half
/// the range does), sorted side by side and walked as one sequence, the
/// negative scores first. `None` when some score is not a finite float32
/// value (the general path then checks and keys the rows).
fn walk_signed_f32<X: Score>(
    positive: &[bool],
    score: &[X],
    curves: Curves,
    pool: &Pool,
) -> Result<Option<BinaryRanking>> {
    let bits = |i: usize| score.get(i).and_then(|s| s.f32_bits());
    let below_zero = |i: usize| bits(i).is_some_and(|b| b > 0x8000_0000);
    // u32::MAX is no packed key (the largest of either kind is 0xFEFF_FFFF).
    let key = |i: usize| {
        let outcome = positive.get(i).copied().unwrap_or(false);
        bits(i).map_or(u32::MAX, |b| signed_packed_u32(b, outcome))
    };
    let f32s = X::as_f32s(score).filter(|_| crate::cpu::avx512());
    let steps = |rows: Range<usize>, (low, high): SideSlots<'_, u32>| match f32s {
        #[cfg(target_arch = "x86_64")]
        Some(f32s) => {
            let (p, s) = (positive.get(rows.clone()), f32s.get(rows.clone()));
            // SAFETY: the CPU has AVX-512 (checked above).
            let (done, il, ih) = unsafe {
                signed_split::split_steps(p.unwrap_or_default(), s.unwrap_or_default(), low, high)
            };
            (rows.start + done, il, ih)
        }
        _ => (rows.start, 0, 0),
    };
    let (mut low, mut high, (bad, n_pos)) = split_folded(
        score.len(),
        below_zero,
        key,
        steps,
        (false, 0),
        look,
        join_looks,
        pool,
    )?;
    if bad {
        return Ok(None);
    }
    // Side by side when both arrays are large (one may hold nearly every row).
    let side_by_side =
        pool.parallel_for(score.len()) && 4 * low.len().min(high.len()) >= score.len();
    sort_both(&mut low, &mut high, side_by_side, pool)?;
    let totals = totals_of(positive, None, n_pos)?;
    let mut pieces = packed_pieces(&low);
    let (p0, n0) = pieces.last().map_or((0, 0), |&(r, p, q)| {
        let ones: u64 = r.iter().map(|&k| u64::from(k & 1)).sum();
        (p + ones, q + r.len() as u64 - ones)
    });
    pieces.extend(
        packed_pieces(&high)
            .into_iter()
            .map(|(r, p, q)| (r, p + p0, q + n0)),
    );
    walk_in_pieces(
        &pieces,
        |&(r, ..)| Packed { rows: r.iter() },
        totals,
        curves,
        pool,
    )
    .map(Some)
}

/// The walk (curves included) of packed float32 keys ([`packed_u32`]: a
/// score's bits with the outcome in bit 0), as [`binary_ranking`] walks the
/// same scores and outcomes.
///
/// # Errors
/// Empty input, an interruption.
pub(crate) fn walk_packed_keys(keys: Vec<u32>, pool: &Pool) -> Result<BinaryRanking> {
    use rayon::prelude::*;
    ensure!(!keys.is_empty(), MetricError::Empty { arg: "y_score" });
    let ones = |c: &[u32]| c.iter().map(|&k| u64::from(k & 1)).sum::<u64>();
    let n_pos: u64 = if pool.parallel_for(keys.len()) {
        pool.install(|| keys.par_chunks(1 << 16).map(ones).sum())
    } else {
        ones(&keys)
    };
    let totals = Totals::counted(n_pos, keys.len() as u64 - n_pos);
    sort_and_walk_packed(keys, totals, pool, Curves::All)
}
