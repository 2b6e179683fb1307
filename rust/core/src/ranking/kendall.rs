//! Kendall's tau-b and tau-c (docs/definitions.md §5.3): the pair counts of two vectors.
//!
//! Every method gives the same counts; they differ in speed. Knight's
//! algorithm handles any data: the rows in `(x, y)` order, and the
//! discordant pairs as the inversions of `y` in that order. Here the rows
//! are sorted by `x` and by `y` side by side, `y`'s order gives each row a
//! rank, and the inversions of the ranks in `x` order are counted one digit
//! at a time (`inversions.rs`). When both vectors have few distinct values,
//! as rounded scores, grades and quantised confidences do, a table sweep is
//! faster still: the rows are grouped by the rank of `x` (hash maps give the
//! ranks), and each group's histogram of `y` ranks is weighed against the
//! running histogram of all earlier groups. When only one vector has few
//! values, its ranks ride in the low bits of the other's sorted keys and are
//! swept block by block.

use super::inversions::count_inversions;
use super::Score;
use crate::ensure;
use crate::error::{MetricError, Result};
use crate::memory::try_filled;
use crate::parallel::{big_vec, collect_chunked, Pool, CHECK_ROWS};
use crate::sort::{sort_high_bits_alone, sort_keys};
use rayon::prelude::*;
use std::sync::atomic::{AtomicU32, Ordering::Relaxed};

/// Pair counts of Kendall's tau between two vectors (docs/definitions.md §5.3, Knight 1966).
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
    /// Kendall's tau-b (NaN when x or y is constant, or n < 2):
    /// `(n_c - n_d) / sqrt((n0 - n1) (n0 - n2))`, the product formed exactly
    /// (u128) and rounded once, so three roundings in all (scipy's two square
    /// roots and two divisions take four); clamped to [-1, 1].
    #[must_use]
    #[allow(clippy::cast_precision_loss)]
    pub fn tau_b(&self) -> f64 {
        let n0 = self.pairs();
        let (a, b) = (n0 - self.x_ties, n0 - self.y_ties);
        if a == 0 || b == 0 {
            return f64::NAN;
        }
        let den = a.checked_mul(b).map_or_else(
            || (a as f64).sqrt() * (b as f64).sqrt(),
            |ab| (ab as f64).sqrt(),
        );
        (self.concordant_minus_discordant() as f64 / den).clamp(-1.0, 1.0)
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
        (2.0 * self.concordant_minus_discordant() as f64 / (n * n * (m - 1.0) / m)).clamp(-1.0, 1.0)
    }
}

/// Pairs within runs of equal `key` in a sorted sequence, and the number of
/// runs (meaningless once the pool's stop flag is raised: the caller checks).
fn tie_runs<T, K: PartialEq>(sorted: &[T], key: impl Fn(&T) -> K, pool: &Pool) -> (u128, u64) {
    let mut pairs = 0_u128;
    let mut runs = 0_u64;
    let mut i = 0;
    let mut next_check = CHECK_ROWS;
    while let Some(first) = sorted.get(i) {
        if i >= next_check {
            if pool.stopped() {
                break;
            }
            next_check = i + CHECK_ROWS;
        }
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
/// `v[i] > v[j]`; equal values are not inversions). `buf` is scratch space
/// of the same length. Returns early, with a meaningless count, once the
/// pool's stop flag is raised (the caller checks it).
fn sort_count_inversions(v: &mut [u64], buf: &mut [u64], pool: &Pool) -> u128 {
    sort_counting(v, buf, false, pool)
}

/// The merge sort of [`sort_count_inversions`], its levels alternating
/// between `v` and `buf` (no copy back): the sorted values end in `buf` when
/// `into_buf`, in `v` otherwise.
fn sort_counting(v: &mut [u64], buf: &mut [u64], into_buf: bool, pool: &Pool) -> u128 {
    const SMALL: usize = 32;
    const PARALLEL_ABOVE: usize = 1 << 16;
    let n = v.len();
    if n >= PARALLEL_ABOVE && pool.stopped() {
        return 0;
    }
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
        if into_buf {
            if let Some(b) = buf.get_mut(..n) {
                b.copy_from_slice(v);
            }
        }
        return inv;
    }
    let mid = n / 2;
    let (vl, vr) = v.split_at_mut(mid);
    let (bl, br) = buf.split_at_mut(mid);
    // The halves end in the other array, and the merge brings them back.
    let (a, b) = if n >= PARALLEL_ABOVE && pool.threads() > 1 {
        rayon::join(
            || sort_counting(vl, bl, !into_buf, pool),
            || sort_counting(vr, br, !into_buf, pool),
        )
    } else {
        (
            sort_counting(vl, bl, !into_buf, pool),
            sort_counting(vr, br, !into_buf, pool),
        )
    };
    let inv = if into_buf {
        merge_counting(vl, vr, buf)
    } else {
        merge_counting(bl, br, v)
    };
    a + b + inv
}

/// Merge sorted `l` and `r` into `out`, counting for each value taken from
/// `r` the values of `l` above it; branch-free in the comparison.
fn merge_counting(l: &[u64], r: &[u64], out: &mut [u64]) -> u128 {
    let (mut i, mut j, mut k) = (0, 0, 0);
    let mut inv = 0_u128;
    while i < l.len() && j < r.len() {
        let (x, y) = (
            l.get(i).copied().unwrap_or(0),
            r.get(j).copied().unwrap_or(0),
        );
        let take_r = y < x;
        if let Some(s) = out.get_mut(k) {
            *s = if take_r { y } else { x };
        }
        inv += u128::from(take_r) * (l.len() - i) as u128;
        j += usize::from(take_r);
        i += usize::from(!take_r);
        k += 1;
    }
    for &x in l
        .get(i..)
        .unwrap_or(&[])
        .iter()
        .chain(r.get(j..).unwrap_or(&[]))
    {
        if let Some(s) = out.get_mut(k) {
            *s = x;
        }
        k += 1;
    }
    inv
}

/// Knight's algorithm on the `(x, y)` pairs themselves (sorted as `u128`,
/// then a merge sort of `y` counting inversions): for more than `2^32`
/// rows, whose indices do not fit the rank path's keys.
fn by_sort<X: Score, Y: Score>(x: &[X], y: &[Y], pool: &Pool) -> Result<KendallCounts> {
    let n = x.len();
    // (x key, y key) as one u128: sorting it sorts by x, then y.
    let pair = |i: usize| {
        let a = x.get(i).map_or(0, |v| v.key());
        let b = y.get(i).map_or(0, |v| v.key());
        (u128::from(a) << 64) | u128::from(b)
    };
    let mut pairs: Vec<u128> = collect_chunked(n, pair, pool)?;
    sort_keys(&mut pairs, pool)?;
    let (x_ties, x_distinct) = tie_runs(&pairs, |p| p >> 64, pool);
    let (joint_ties, _) = tie_runs(&pairs, |p| *p, pool);
    pool.check()?;
    #[allow(clippy::cast_possible_truncation)]
    let mut ys: Vec<u64> = collect_chunked(n, |i| pairs.get(i).map_or(0, |&p| p as u64), pool)?;
    drop(pairs);
    let mut buf: Vec<u64> = try_filled(n, 0, "the merge buffer")?;
    let discordant = pool.install(|| sort_count_inversions(&mut ys, &mut buf, pool));
    pool.check()?;
    let (y_ties, y_distinct) = tie_runs(&ys, |v| *v, pool);
    pool.check()?;
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

/// Knight's algorithm on ranks: the rows sorted by `x` and by `y` side by
/// side (one thread each), each as `u64` keys whose low `bits` hold the row
/// index and whose high bits are the value's order key, sorted by the high
/// bits alone. The `y` order gives each row its rank (the position of the
/// first row of its tie); the `x` order, read through those ranks, is the
/// sequence whose inversions are the discordant pairs, counted digit by digit
/// ([`count_inversions`]). Rows whose truncated keys are equal are put in
/// exact `(x, y)` order from their full keys. `None` when the row indices do
/// not fit `u32`.
fn by_ranks<X: Score, Y: Score>(x: &[X], y: &[Y], pool: &Pool) -> Result<Option<KendallCounts>> {
    let n = x.len();
    let bits = (usize::BITS - n.saturating_sub(1).leading_zeros()).max(1);
    if bits > 32 {
        return Ok(None);
    }
    let low = (1_u64 << bits) - 1;
    let mut xs = keyed_rows(x, low, pool)?;
    let mut ys = keyed_rows(y, low, pool)?;
    let (a, b) = pool.install(|| {
        rayon::join(
            || sort_high_bits_alone(&mut xs, bits, pool),
            || sort_high_bits_alone(&mut ys, bits, pool),
        )
    });
    a?;
    b?;
    let y_key = |i: usize| y.get(i).map_or(0, |v| v.key());
    let x_key = |i: usize| x.get(i).map_or(0, |v| v.key());
    let row = |k: u64| (k & low) as usize;
    // The rank of each row in y: the sorted position of its tie's first row.
    let mut rank: Vec<AtomicU32> = big_vec(n, "the rank table")?;
    pool.install(|| rank.par_extend((0..n).into_par_iter().map(|_| AtomicU32::new(0))));
    let cuts = run_cuts(&ys, bits, pool);
    let rank_piece = |w: &[usize]| -> (u128, u64) {
        let &[start, end] = w else {
            return (0, 0);
        };
        if pool.stopped() {
            return (0, 0);
        }
        let keys = ys.get(start..end).unwrap_or(&[]);
        let store = |k: u64, at: usize| {
            if let Some(r) = rank.get(row(k)) {
                r.store(at as u32, Relaxed);
            }
        };
        let runs = visit_runs(keys, bits, |i, k| {
            ahead(&rank, keys.get(i + AHEAD).map(|&a| row(a)));
            store(k, start + i);
        });
        let mut ties = 0_u128;
        let mut distinct = keys.len() as u64;
        let mut group: Vec<(u64, u64)> = Vec::new();
        for (i, j) in runs {
            group.clear();
            group.extend(
                keys.get(i..j)
                    .unwrap_or(&[])
                    .iter()
                    .map(|&k| (y_key(row(k)), k)),
            );
            sort_group(&mut group, pool);
            distinct -= group.len() as u64;
            for_each_run(
                &group,
                |r| r.0,
                |first, run| {
                    for &(_, k) in run {
                        store(k, start + i + first);
                    }
                    let t = run.len() as u128;
                    ties += t * (t - 1) / 2;
                    distinct += 1;
                },
            );
        }
        (ties, distinct)
    };
    let (y_ties, y_distinct) = over_pieces(&cuts, rank_piece, pool);
    pool.check()?;
    let rank: Vec<u32> = rank.into_iter().map(AtomicU32::into_inner).collect();
    // The ranks in x order (the sequence whose inversions are the discordant
    // pairs), written over the y keys, which are done with (fresh memory
    // would cost a page fault per 4 KiB); rows with equal truncated x keys
    // put in (x, rank) order.
    let words: &mut [u32] = bytemuck::cast_slice_mut(ys.as_mut_slice());
    let (seq, scratch) = words.split_at_mut(n);
    let cuts = run_cuts(&xs, bits, pool);
    let mut pieces: Vec<(usize, &mut [u32])> = Vec::with_capacity(cuts.len());
    let mut rest: &mut [u32] = seq;
    for w in cuts.windows(2) {
        if let &[start, end] = w {
            let (head, tail) = std::mem::take(&mut rest).split_at_mut(end - start);
            pieces.push((start, head));
            rest = tail;
        }
    }
    let rank_of = |k: u64| rank.get(row(k)).copied().unwrap_or(0);
    let fill = |(start, out): (usize, &mut [u32])| -> (u128, u128, u64) {
        if pool.stopped() {
            return (0, 0, 0);
        }
        let keys = xs.get(start..start + out.len()).unwrap_or(&[]);
        for (i, (slot, &k)) in out.iter_mut().zip(keys).enumerate() {
            ahead(&rank, keys.get(i + AHEAD).map(|&a| row(a)));
            *slot = rank_of(k);
        }
        let runs = visit_runs(keys, bits, |_, _| {});
        let (mut x_ties, mut joint, mut distinct) = (0_u128, 0_u128, keys.len() as u64);
        let mut group: Vec<(u64, u32)> = Vec::new();
        for (i, j) in runs {
            group.clear();
            group.extend(
                keys.get(i..j)
                    .unwrap_or(&[])
                    .iter()
                    .map(|&k| (x_key(row(k)), rank_of(k))),
            );
            sort_group(&mut group, pool);
            for (slot, g) in out.get_mut(i..j).unwrap_or_default().iter_mut().zip(&group) {
                *slot = g.1;
            }
            let (ties, runs) = tie_runs(&group, |g| g.0, pool);
            x_ties += ties;
            distinct = distinct - group.len() as u64 + runs;
            joint += tie_runs(&group, |g| *g, pool).0;
        }
        (x_ties, joint, distinct)
    };
    let parts: Vec<(u128, u128, u64)> = if pool.parallel_for(n) {
        pool.install(|| pieces.into_par_iter().map(fill).collect())
    } else {
        pieces.into_iter().map(fill).collect()
    };
    pool.check()?;
    drop(xs);
    drop(rank);
    let discordant = count_inversions(seq, scratch, bits, pool);
    pool.check()?;
    Ok(Some(KendallCounts {
        n: n as u64,
        x_ties: parts.iter().map(|p| p.0).sum(),
        y_ties,
        joint_ties: parts.iter().map(|p| p.1).sum(),
        discordant,
        x_distinct: parts.iter().map(|p| p.2).sum(),
        y_distinct,
    }))
}

/// How many rows ahead the random reads and writes of the rank table ask for
/// their cache line.
const AHEAD: usize = 16;

/// Ask for the cache line of `table[at]` (a hint, for a read or a write to
/// come; x86-64 only, elsewhere nothing).
#[inline(always)]
fn ahead<T>(table: &[T], at: Option<usize>) {
    #[cfg(target_arch = "x86_64")]
    if let Some(x) = at.and_then(|i| table.get(i)) {
        crate::simd::prefetch(x);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = (table, at);
}

/// Each row's order key with its low bits (`low`) replaced by the row index.
fn keyed_rows<X: Score>(x: &[X], low: u64, pool: &Pool) -> Result<Vec<u64>> {
    collect_chunked(
        x.len(),
        |i| (x.get(i).map_or(0, |v| v.key()) & !low) | i as u64,
        pool,
    )
}

/// Piece boundaries of `sorted` (`0`, ..., `len`), about [`CHECK_ROWS`]
/// rows apart and at least one piece per thread, moved forward so that no
/// run of equal `key >> bits` is cut.
fn run_cuts(sorted: &[u64], bits: u32, pool: &Pool) -> Vec<usize> {
    let n = sorted.len();
    let pieces = n.div_ceil(CHECK_ROWS).max(4 * pool.threads()).min(n.max(1));
    let mut cuts = vec![0];
    for p in 1..pieces {
        let mut c = (n * p / pieces).max(cuts.last().copied().unwrap_or(0));
        while c < n
            && c > 0
            && sorted.get(c).map(|k| k >> bits) == sorted.get(c - 1).map(|k| k >> bits)
        {
            c += 1;
        }
        if c < n && Some(&c) != cuts.last() {
            cuts.push(c);
        }
    }
    cuts.push(n);
    cuts
}

/// Call `each(i, key)` for every key of a sorted piece, in order, and return
/// the runs `(start, end)` of two keys or more with equal `key >> bits`,
/// found on the way (one pass over the keys).
#[inline]
fn visit_runs(keys: &[u64], bits: u32, mut each: impl FnMut(usize, u64)) -> Vec<(usize, usize)> {
    let mut runs: Vec<(usize, usize)> = Vec::new();
    // No key's high bits are all ones (`bits >= 1`).
    let mut prev = u64::MAX;
    for (i, &k) in keys.iter().enumerate() {
        each(i, k);
        let p = k >> bits;
        if p == prev {
            match runs.last_mut() {
                Some(r) if r.1 == i => r.1 = i + 1,
                _ => runs.push((i.saturating_sub(1), i + 1)),
            }
        }
        prev = p;
    }
    runs
}

/// Sort a group of rows sharing a truncated key by `(full key, second)`: a
/// parallel sort when the group is large (a heavy tie).
fn sort_group<T: Ord + Send>(group: &mut [T], pool: &Pool) {
    if group.len() >= 1 << 16 && pool.threads() > 1 {
        pool.install(|| group.par_sort_unstable());
    } else {
        group.sort_unstable();
    }
}

/// Call `f(first, run)` for each run of equal `key` in a sorted slice.
fn for_each_run<T, K: PartialEq>(
    sorted: &[T],
    key: impl Fn(&T) -> K,
    mut f: impl FnMut(usize, &[T]),
) {
    let mut i = 0;
    while let Some(first) = sorted.get(i) {
        let k = key(first);
        let mut j = i + 1;
        while sorted.get(j).is_some_and(|v| key(v) == k) {
            j += 1;
        }
        f(i, sorted.get(i..j).unwrap_or(&[]));
        i = j;
    }
}

/// Run `piece` over consecutive cut pairs (in parallel when the pool does
/// large work in parallel) and add up its `(pairs, distinct)`.
fn over_pieces(
    cuts: &[usize],
    piece: impl Fn(&[usize]) -> (u128, u64) + Send + Sync,
    pool: &Pool,
) -> (u128, u64) {
    let parts: Vec<(u128, u64)> = if pool.parallel_for(cuts.last().copied().unwrap_or(0)) {
        pool.install(|| cuts.par_windows(2).map(&piece).collect())
    } else {
        cuts.windows(2).map(&piece).collect()
    };
    parts.iter().fold((0, 0), |(a, b), p| (a + p.0, b + p.1))
}

/// How [`kendall_counts_with`] counts the pairs. Every method gives the same
/// counts; they differ only in speed and memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum KendallMethod {
    /// The table sweep when the data have few distinct values (at most
    /// [`TABLE_MAX_DISTINCT`] in each vector and a table of at most
    /// `16 n + 2^20` cells), else the one-sided sweep when one vector has
    /// few, Knight's sort otherwise.
    #[default]
    Auto,
    /// Knight's algorithm: the rows sorted by `x` and by `y` (row indices
    /// in the keys' low bits), the ranks of `y` read in `x` order, and their
    /// inversions counted digit by digit; O(n log n) time, 20 bytes per row.
    /// Beyond `2^32` rows, a sort of the `(x, y)` pairs and a merge sort of
    /// `y` (48 bytes per row).
    Sort,
    /// The table sweep whenever both vectors have at most
    /// [`TABLE_MAX_DISTINCT`] distinct values (else the sort).
    Table,
    /// The one-sided sweep whenever one vector has at most
    /// [`TABLE_MAX_DISTINCT`] distinct values (else the sort): the pairs
    /// sorted, then the inversions of that vector's ranks counted bit by bit
    /// per block. `Auto` uses it when the table does not fit.
    OneSided,
}

/// Most distinct values per vector the table sweep handles (ranks fit `u16`).
pub const TABLE_MAX_DISTINCT: usize = 1 << 16;

/// Kendall pair counts of `(x, y)` (docs/definitions.md §5.3), by the fastest
/// exact method. Integers are ordered as integers; `-inf` and `inf` are the
/// smallest and largest values.
///
/// # Errors
/// Length mismatch, empty input, NaN values, an interruption.
pub fn kendall_counts<X: Score, Y: Score>(x: &[X], y: &[Y], pool: &Pool) -> Result<KendallCounts> {
    kendall_counts_with(x, y, KendallMethod::Auto, pool)
}

/// The first NaN of `xs`, as an error.
fn check_not_nan<X: Score>(arg: &'static str, xs: &[X]) -> Result<()> {
    match xs.iter().position(|v| v.is_nan()) {
        Some(index) => Err(MetricError::IsNan { arg, index }),
        None => Ok(()),
    }
}

/// Kendall pair counts of `(x, y)` by the given method.
///
/// # Errors
/// Length mismatch, empty input, NaN values, an interruption.
pub fn kendall_counts_with<X: Score, Y: Score>(
    x: &[X],
    y: &[Y],
    method: KendallMethod,
    pool: &Pool,
) -> Result<KendallCounts> {
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
    let (fx, fy) = pool.install(|| rayon::join(|| check_not_nan("x", x), || check_not_nan("y", y)));
    fx?;
    fy?;
    if matches!(method, KendallMethod::Auto | KendallMethod::Table) && u32::try_from(n).is_ok() {
        let cells = (method == KendallMethod::Auto).then_some(16 * n + (1 << 20));
        let table = by_table(x, y, cells, pool);
        pool.check()?;
        if let Some(c) = table {
            return Ok(c);
        }
    }
    if matches!(method, KendallMethod::Auto | KendallMethod::OneSided) {
        // One vector with few distinct values: a sort of the pairs, and a
        // sweep of that vector's ranks (tau is symmetric in x and y).
        if let Some(c) = by_one_sided(x, y, pool)? {
            return Ok(c);
        }
        if let Some(c) = by_one_sided(y, x, pool)? {
            return Ok(KendallCounts {
                x_ties: c.y_ties,
                y_ties: c.x_ties,
                x_distinct: c.y_distinct,
                y_distinct: c.x_distinct,
                ..c
            });
        }
    }
    if let Some(c) = by_ranks(x, y, pool)? {
        return Ok(c);
    }
    by_sort(x, y, pool)
}

/// The ranks of `y` as `u16` codes (order-preserving, dense), with the count
/// of each rank, when `y` has at most [`TABLE_MAX_DISTINCT`] distinct values.
fn small_codes<Y: Score>(y: &[Y], pool: &Pool) -> Option<(Vec<u16>, Vec<u64>)> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let size = y.len().div_ceil(pool.threads().max(1)).max(1);
    let gave_up = AtomicBool::new(false);
    let maps: Option<Vec<KeyMap>> = pool.install(|| {
        y.par_chunks(size)
            .map(|c| {
                let mut m = KeyMap::with_capacity(1024);
                for part in c.chunks(4096) {
                    for v in part {
                        m.add(v.key());
                    }
                    if gave_up.load(Ordering::Relaxed)
                        || m.len > TABLE_MAX_DISTINCT
                        || pool.stopped()
                    {
                        gave_up.store(true, Ordering::Relaxed);
                        return None;
                    }
                }
                Some(m)
            })
            .collect()
    });
    let maps = maps?;
    let (d, rank) = ranks(&maps.iter().collect::<Vec<_>>());
    if d > TABLE_MAX_DISTINCT {
        return None;
    }
    let mut counts = vec![0_u64; d];
    for m in &maps {
        for (r, c) in counts_by_rank(m, &rank, d).into_iter().enumerate() {
            if let Some(t) = counts.get_mut(r) {
                *t += c;
            }
        }
    }
    #[allow(clippy::cast_possible_truncation)]
    let code = |i: usize| y.get(i).map_or(0, |v| rank.get(v.key()) as u16);
    let codes = collect_chunked(y.len(), code, pool).ok()?;
    Some((codes, counts))
}

/// Rows per block of [`small_alphabet_inversions`] (fixed: the count does not
/// depend on the thread count, and it is exact anyway).
const SWEEP_BLOCK: usize = 1 << 18;

/// Inversions (`i < j`, `c_i > c_j`) of a sequence of codes below `d`: each
/// block of [`SWEEP_BLOCK`] codes counts its own bit by bit (below) and keeps
/// its histogram, then each block is weighed against the histogram of all
/// earlier blocks. O(n log d + (n / block) d).
fn small_alphabet_inversions(codes: &[u16], d: usize, pool: &Pool) -> u128 {
    // A pair is an inversion at the highest bit where its codes differ: for
    // each bit, count the earlier codes with the same higher bits and a 1
    // there (one counter per prefix, all levels in one table of 2^bits
    // cells: level l's prefixes at 2^(bits-l-1) + prefix). Fixed trip
    // counts, no data-dependent branch.
    let bits = (u32::BITS
        - u32::try_from(d.saturating_sub(1))
            .unwrap_or(u32::MAX)
            .leading_zeros())
    .max(1);
    let block = |part: &[u16]| -> (u128, Vec<u64>) {
        let mut ones = vec![0_u32; 1 << bits];
        let mut hist = vec![0_u64; d];
        let mut inv = 0_u64;
        for &c in part {
            let c = u32::from(c);
            for level in 0..bits {
                let prefix = c >> (level + 1);
                let bit = (c >> level) & 1;
                let at = ((1_u32 << (bits - level - 1)) + prefix) as usize;
                if let Some(o) = ones.get_mut(at) {
                    inv += u64::from((1 - bit) * *o);
                    *o += bit;
                }
            }
            if let Some(h) = hist.get_mut(c as usize) {
                *h += 1;
            }
        }
        (u128::from(inv), hist)
    };
    let blocks: Vec<(u128, Vec<u64>)> = if pool.parallel_for(codes.len()) {
        pool.install(|| codes.par_chunks(SWEEP_BLOCK).map(block).collect())
    } else {
        codes.chunks(SWEEP_BLOCK).map(block).collect()
    };
    let mut earlier = vec![0_u64; d];
    let mut inversions = 0_u128;
    for (inv, hist) in blocks {
        inversions += inv;
        // Earlier codes above each code of this block.
        let mut above = 0_u64;
        for (e, h) in earlier.iter_mut().zip(&hist).rev() {
            inversions += u128::from(*h) * u128::from(above);
            above += *e;
            *e += *h;
        }
    }
    inversions
}

/// Kendall counts when `y` has at most [`TABLE_MAX_DISTINCT`] distinct
/// values (and `x` any number), with `u64` keys: the key of x with its low
/// `b` bits replaced by the rank of y (`b` bits hold every rank), sorted.
/// Rows whose x keys differ only in those low bits then sort by y instead of
/// x, and count as tied in x; the runs of equal truncated keys are found on
/// the way, and when some exist their rows are read again with their full
/// keys and their counts replaced by exact ones. `None` when y has more
/// distinct values.
fn by_one_sided<X: Score, Y: Score>(
    x: &[X],
    y: &[Y],
    pool: &Pool,
) -> Result<Option<KendallCounts>> {
    let n = x.len();
    let Some((codes, y_counts)) = small_codes(y, pool) else {
        pool.check()?;
        return Ok(None);
    };
    pool.check()?;
    let d = y_counts.len();
    let bits = (usize::BITS - d.saturating_sub(1).leading_zeros()).max(1);
    let low = (1_u64 << bits) - 1;
    let key = |i: usize| {
        let a = x.get(i).map_or(0, |v| v.key());
        (a & !low) | u64::from(codes.get(i).copied().unwrap_or(0))
    };
    let mut keys: Vec<u64> = collect_chunked(n, key, pool)?;
    sort_keys(&mut keys, pool)?;
    let (x_ties, x_distinct, joint_ties, shared) = prefix_runs(&keys, bits, pool);
    pool.check()?;
    #[allow(clippy::cast_possible_truncation)]
    let sorted_codes: Vec<u16> =
        collect_chunked(n, |i| keys.get(i).map_or(0, |&k| (k & low) as u16), pool)?;
    drop(keys);
    let discordant = small_alphabet_inversions(&sorted_codes, d, pool);
    drop(sorted_codes);
    pool.check()?;
    let mut c = KendallCounts {
        n: n as u64,
        x_ties,
        y_ties: pairs_within(&y_counts),
        joint_ties,
        discordant,
        x_distinct,
        y_distinct: d as u64,
    };
    if !shared.is_empty() {
        exact_within_shared(&mut c, x, &codes, &shared, bits, d, pool);
    }
    pool.check()?;
    Ok(Some(c))
}

/// One parallel pass over sorted keys: the pairs and the runs of equal
/// `key >> bits` (ties in x), the pairs of equal keys (joint ties), and the
/// truncated keys shared by two rows or more, in order.
fn prefix_runs(keys: &[u64], bits: u32, pool: &Pool) -> (u128, u64, u128, Vec<u64>) {
    let cuts = run_cuts(keys, bits, pool);
    let piece = |w: &[usize]| -> (u128, u64, u128, Vec<u64>) {
        let (mut x_ties, mut joint) = (0_u128, 0_u128);
        let mut shared = Vec::new();
        let &[start, end] = w else {
            return (0, 0, 0, shared);
        };
        if pool.stopped() {
            return (0, 0, 0, shared);
        }
        let keys = keys.get(start..end).unwrap_or(&[]);
        let pairs = |t: usize| (t as u128) * (t as u128 - 1) / 2;
        let mut distinct = keys.len() as u64;
        for (i, j) in visit_runs(keys, bits, |_, _| {}) {
            let run = keys.get(i..j).unwrap_or(&[]);
            x_ties += pairs(run.len());
            distinct -= run.len() as u64 - 1;
            joint += tie_runs(run, |k| *k, pool).0;
            shared.extend(run.first().map(|k| k >> bits));
        }
        (x_ties, distinct, joint, shared)
    };
    let parts: Vec<(u128, u64, u128, Vec<u64>)> = if pool.parallel_for(keys.len()) {
        pool.install(|| cuts.par_windows(2).map(piece).collect())
    } else {
        cuts.windows(2).map(piece).collect()
    };
    let mut out = (0, 0, 0, Vec::new());
    for (a, b, c, d) in parts {
        out.0 += a;
        out.1 += b;
        out.2 += c;
        out.3.extend(d);
    }
    out
}

/// Replace the counts of [`by_one_sided`] within each group of rows sharing
/// a truncated x key by exact ones, from the rows' full keys: there the
/// sorted order had every row tied in x (no discordant pair, all pairs x
/// ties, joint ties by equal y rank, one distinct x).
fn exact_within_shared<X: Score>(
    c: &mut KendallCounts,
    x: &[X],
    codes: &[u16],
    shared: &[u64],
    bits: u32,
    d: usize,
    pool: &Pool,
) {
    let mut set = KeyMap::with_capacity(shared.len());
    for &p in shared {
        set.insert(p, 1);
    }
    let pick = |(cx, cc): (&[X], &[u16])| -> Vec<(u64, u64, u16)> {
        cx.iter()
            .zip(cc)
            .filter(|(v, _)| set.get(v.key() >> bits) == 1)
            .map(|(v, &code)| (v.key() >> bits, v.key(), code))
            .collect()
    };
    let mut rows: Vec<(u64, u64, u16)> = if pool.parallel_for(x.len()) {
        pool.install(|| {
            x.par_chunks(CHECK_ROWS)
                .zip(codes.par_chunks(CHECK_ROWS))
                .flat_map_iter(pick)
                .collect()
        })
    } else {
        pick((x, codes))
    };
    rows.sort_unstable();
    let pairs = |r: u128| r * r.saturating_sub(1) / 2;
    let mut i = 0;
    while let Some(&(prefix, _, _)) = rows.get(i) {
        let mut j = i;
        while rows.get(j).is_some_and(|r| r.0 == prefix) {
            j += 1;
        }
        let group = rows.get(i..j).unwrap_or(&[]);
        let len = group.len() as u128;
        // What the truncated order counted.
        let mut per_code = vec![0_u64; d];
        for r in group {
            if let Some(p) = per_code.get_mut(usize::from(r.2)) {
                *p += 1;
            }
        }
        let approx_joint: u128 = per_code.iter().map(|&k| pairs(u128::from(k))).sum();
        // The exact counts, in (full key, rank) order.
        let (true_x, runs) = tie_runs(group, |r| r.1, &Pool::sequential());
        let (true_joint, _) = tie_runs(group, |r| (r.1, r.2), &Pool::sequential());
        let ranks: Vec<u16> = group.iter().map(|r| r.2).collect();
        let true_disc = small_alphabet_inversions(&ranks, d, &Pool::sequential());
        c.discordant += true_disc;
        c.x_ties = c.x_ties + true_x - pairs(len);
        c.joint_ties = c.joint_ties + true_joint - approx_joint;
        c.x_distinct = c.x_distinct + runs - 1;
        i = j;
    }
}

/// Open-addressing map from order keys to a `u32` (a count, then a rank).
/// The key `u64::MAX` marks empty slots; the value of that key (a real key
/// for integer scores) is kept on the side.
struct KeyMap {
    keys: Vec<u64>,
    values: Vec<u32>,
    len: usize,
    shift: u32,
    max_key: Option<u32>,
}

/// The key that marks an empty slot.
const EMPTY: u64 = u64::MAX;

impl KeyMap {
    fn with_capacity(distinct: usize) -> Self {
        let slots = (2 * distinct).next_power_of_two().max(256);
        Self {
            keys: vec![EMPTY; slots],
            values: vec![0; slots],
            len: 0,
            shift: 64 - slots.trailing_zeros(),
            max_key: None,
        }
    }

    #[inline]
    fn slot(&self, key: u64) -> usize {
        // Fibonacci hashing: the top bits of the product.
        #[allow(clippy::cast_possible_truncation)]
        let s = (key.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> self.shift) as usize;
        s
    }

    /// Count one more `key`.
    #[inline]
    fn add(&mut self, key: u64) {
        if key == EMPTY {
            if self.max_key.is_none() {
                self.len += 1;
            }
            *self.max_key.get_or_insert(0) += 1;
            return;
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            match self.keys.get(i).copied() {
                Some(k) if k == key => {
                    if let Some(v) = self.values.get_mut(i) {
                        *v += 1;
                    }
                    return;
                }
                Some(EMPTY) => break,
                _ => i = (i + 1) & mask,
            }
        }
        self.insert_at(i, key, 1);
    }

    fn insert_at(&mut self, i: usize, key: u64, value: u32) {
        if let (Some(k), Some(v)) = (self.keys.get_mut(i), self.values.get_mut(i)) {
            (*k, *v) = (key, value);
        }
        self.len += 1;
        if 2 * self.len > self.keys.len() {
            let old = std::mem::replace(self, Self::with_capacity(self.keys.len()));
            for (k, v) in old.entries() {
                self.insert(k, v);
            }
        }
    }

    fn insert(&mut self, key: u64, value: u32) {
        if key == EMPTY {
            if self.max_key.is_none() {
                self.len += 1;
            }
            self.max_key = Some(value);
            return;
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        while self.keys.get(i).is_some_and(|&k| k != EMPTY) {
            i = (i + 1) & mask;
        }
        self.insert_at(i, key, value);
    }

    /// The value of a key known to be present.
    #[inline]
    fn get(&self, key: u64) -> u32 {
        if key == EMPTY {
            return self.max_key.unwrap_or(0);
        }
        let mask = self.keys.len() - 1;
        let mut i = self.slot(key);
        loop {
            match self.keys.get(i).copied() {
                Some(k) if k == key => return self.values.get(i).copied().unwrap_or(0),
                Some(EMPTY) | None => return 0,
                _ => i = (i + 1) & mask,
            }
        }
    }

    fn entries(&self) -> impl Iterator<Item = (u64, u32)> + '_ {
        self.keys
            .iter()
            .zip(&self.values)
            .filter(|(&k, _)| k != EMPTY)
            .map(|(&k, &v)| (k, v))
            .chain(self.max_key.map(|v| (EMPTY, v)))
    }
}

/// Sorted distinct keys of some count maps, and a map from key to rank.
fn ranks(maps: &[&KeyMap]) -> (usize, KeyMap) {
    let mut keys: Vec<u64> = maps
        .iter()
        .flat_map(|m| m.entries().map(|(k, _)| k))
        .collect();
    keys.sort_unstable();
    keys.dedup();
    let mut rank = KeyMap::with_capacity(keys.len());
    for (r, &k) in keys.iter().enumerate() {
        #[allow(clippy::cast_possible_truncation)]
        rank.insert(k, r as u32);
    }
    (keys.len(), rank)
}

/// Counts per rank of one chunk's count map.
fn counts_by_rank(map: &KeyMap, rank: &KeyMap, distinct: usize) -> Vec<u64> {
    let mut out = vec![0_u64; distinct];
    for (k, c) in map.entries() {
        if let Some(o) = out.get_mut(rank.get(k) as usize) {
            *o += u64::from(c);
        }
    }
    out
}

fn pairs_within(counts: &[u64]) -> u128 {
    counts
        .iter()
        .map(|&c| u128::from(c) * u128::from(c.saturating_sub(1)) / 2)
        .sum()
}

/// One chunk of rows after the first pass: its distinct keys with counts.
struct Chunk<'a, X, Y> {
    x: &'a [X],
    y: &'a [Y],
    xs: KeyMap,
    ys: KeyMap,
}

/// The table sweep: the rows grouped by the rank of x, then, group after
/// group in increasing x, a dense histogram of the y ranks of the group
/// against the histogram of every earlier group. Discordant pairs are the
/// earlier rows with a larger y: `sum_w R[w] * #{g: y < w}`. Time
/// O(n + D_x D_y), memory `2 n` bytes plus O(D_x + D_y) per thread. `None`
/// when the data have too many distinct values (`cells` bounds `D_x D_y`).
fn by_table<X: Score, Y: Score>(
    x: &[X],
    y: &[Y],
    cells: Option<usize>,
    pool: &Pool,
) -> Option<KendallCounts> {
    let n = x.len();
    let fits = |dx: usize, dy: usize| {
        dx <= TABLE_MAX_DISTINCT && dy <= TABLE_MAX_DISTINCT && cells.is_none_or(|c| dx * dy <= c)
    };
    let chunks = distinct_keys(x, y, &fits, pool)?;
    let (dx, x_rank) = ranks(&chunks.iter().map(|c| &c.xs).collect::<Vec<_>>());
    let (dy, y_rank) = ranks(&chunks.iter().map(|c| &c.ys).collect::<Vec<_>>());
    if !fits(dx, dy) {
        return None;
    }
    let x_counts: Vec<Vec<u64>> = chunks
        .iter()
        .map(|c| counts_by_rank(&c.xs, &x_rank, dx))
        .collect();
    let y_counts: Vec<Vec<u64>> = chunks
        .iter()
        .map(|c| counts_by_rank(&c.ys, &y_rank, dy))
        .collect();
    let total = |per: &[Vec<u64>], d: usize| {
        let mut t = vec![0_u64; d];
        for p in per {
            for (a, &b) in t.iter_mut().zip(p) {
                *a += b;
            }
        }
        t
    };
    let x_total = total(&x_counts, dx);
    let y_total = total(&y_counts, dy);
    let grouped = group_by_x(&chunks, &x_counts, (&x_rank, &y_rank), pool);
    drop(chunks);
    let (discordant, joint_ties) = sweep(&grouped, &x_total, dy, pool);
    Some(KendallCounts {
        n: n as u64,
        x_ties: pairs_within(&x_total),
        y_ties: pairs_within(&y_total),
        joint_ties,
        discordant,
        x_distinct: dx as u64,
        y_distinct: dy as u64,
    })
}

/// Pass 1 of [`by_table`]: the distinct keys of each chunk, with counts;
/// `None` as soon as any chunk alone has too many for `fits`.
fn distinct_keys<'a, X: Score, Y: Score>(
    x: &'a [X],
    y: &'a [Y],
    fits: &(impl Fn(usize, usize) -> bool + Sync),
    pool: &Pool,
) -> Option<Vec<Chunk<'a, X, Y>>> {
    use std::sync::atomic::{AtomicBool, Ordering};
    let size = x.len().div_ceil(pool.threads().max(1)).max(1);
    let gave_up = AtomicBool::new(false);
    pool.install(|| {
        x.par_chunks(size)
            .zip(y.par_chunks(size))
            .map(|(cx, cy)| {
                let mut c = Chunk {
                    x: cx,
                    y: cy,
                    xs: KeyMap::with_capacity(1024),
                    ys: KeyMap::with_capacity(1024),
                };
                for (bx, by) in cx.chunks(4096).zip(cy.chunks(4096)) {
                    for (&a, &b) in bx.iter().zip(by) {
                        c.xs.add(a.key());
                        c.ys.add(b.key());
                    }
                    if gave_up.load(Ordering::Relaxed)
                        || !fits(c.xs.len, c.ys.len)
                        || pool.stopped()
                    {
                        gave_up.store(true, Ordering::Relaxed);
                        return None;
                    }
                }
                Some(c)
            })
            .collect()
    })
}

/// Pass 2 of [`by_table`]: each chunk's y ranks grouped by x rank (a counting
/// sort), with the start of each x group.
fn group_by_x<X: Score, Y: Score>(
    chunks: &[Chunk<'_, X, Y>],
    x_counts: &[Vec<u64>],
    (x_rank, y_rank): (&KeyMap, &KeyMap),
    pool: &Pool,
) -> Vec<(Vec<u16>, Vec<usize>)> {
    pool.install(|| {
        chunks
            .par_iter()
            .zip(x_counts)
            .map(|(c, counts)| {
                let mut starts = Vec::with_capacity(counts.len() + 1);
                let mut at = 0_usize;
                for &k in counts {
                    starts.push(at);
                    #[allow(clippy::cast_possible_truncation)]
                    {
                        at += k as usize;
                    }
                }
                starts.push(at);
                let mut next = starts.clone();
                let mut out = vec![0_u16; c.x.len()];
                for (&a, &b) in c.x.iter().zip(c.y) {
                    let rx = x_rank.get(a.key()) as usize;
                    #[allow(clippy::cast_possible_truncation)]
                    let ry = y_rank.get(b.key()) as u16;
                    if let Some(p) = next.get_mut(rx) {
                        if let Some(o) = out.get_mut(*p) {
                            *o = ry;
                        }
                        *p += 1;
                    }
                }
                (out, starts)
            })
            .collect()
    })
}

/// Pass 3 of [`by_table`]: the sweep over x groups, in pieces of consecutive
/// groups of similar cost, then the pairs across pieces (an earlier piece's
/// rows with a larger y). Returns the discordant and the joint-tie pairs.
fn sweep(
    grouped: &[(Vec<u16>, Vec<usize>)],
    x_total: &[u64],
    dy: usize,
    pool: &Pool,
) -> (u128, u128) {
    let dx = x_total.len();
    let cost = |g: usize| x_total.get(g).copied().unwrap_or(0) + dy as u64;
    let whole: u64 = (0..dx).map(cost).sum();
    let pieces = pool.threads().max(1) * 4;
    let mut bounds = vec![0_usize];
    let mut acc = 0_u64;
    for g in 0..dx {
        acc += cost(g);
        if acc * pieces as u64 >= whole * bounds.len() as u64 && g + 1 < dx {
            bounds.push(g + 1);
        }
    }
    bounds.push(dx);
    bounds.dedup();
    let swept: Vec<(u128, u128, Vec<u64>)> = pool.install(|| {
        bounds
            .par_windows(2)
            .map(|w| {
                let (lo, hi) = (
                    w.first().copied().unwrap_or(0),
                    w.get(1).copied().unwrap_or(0),
                );
                let mut seen = vec![0_u64; dy];
                let mut hist = vec![0_u64; dy];
                let (mut discordant, mut joint) = (0_u128, 0_u128);
                for g in lo..hi {
                    for (out, starts) in grouped {
                        let (a, b) = (
                            starts.get(g).copied().unwrap_or(0),
                            starts.get(g + 1).copied().unwrap_or(0),
                        );
                        for &r in out.get(a..b).unwrap_or(&[]) {
                            if let Some(h) = hist.get_mut(usize::from(r)) {
                                *h += 1;
                            }
                        }
                    }
                    // With n < 2^32 neither sum can overflow u64.
                    let (mut below, mut disc, mut squares) = (0_u64, 0_u64, 0_u64);
                    for (s, h) in seen.iter_mut().zip(hist.iter_mut()) {
                        disc += *s * below;
                        squares += *h * *h;
                        below += *h;
                        *s += *h;
                        *h = 0;
                    }
                    discordant += u128::from(disc);
                    joint += u128::from((squares - below) / 2);
                }
                (discordant, joint, seen)
            })
            .collect()
    });
    let mut discordant = 0_u128;
    let mut joint_ties = 0_u128;
    let mut before = vec![0_u64; dy];
    for (disc, joint, seen) in &swept {
        discordant += disc;
        joint_ties += joint;
        let mut below = 0_u64;
        for (b, &s) in before.iter_mut().zip(seen) {
            discordant += u128::from(*b) * u128::from(below);
            below += s;
            *b += s;
        }
    }
    (discordant, joint_ties)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;

    fn lcg(seed: u64) -> impl FnMut() -> u64 {
        let mut s = seed;
        move || {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            s >> 33
        }
    }

    /// Pair counts by looking at every pair.
    fn naive(x: &[f64], y: &[f64]) -> KendallCounts {
        let mut c = KendallCounts {
            n: x.len() as u64,
            ..KendallCounts::default()
        };
        for i in 0..x.len() {
            for j in i + 1..x.len() {
                let (tx, ty) = (x[i] == x[j], y[i] == y[j]);
                c.x_ties += u128::from(tx);
                c.y_ties += u128::from(ty);
                c.joint_ties += u128::from(tx && ty);
                c.discordant +=
                    u128::from((x[i] < x[j] && y[i] > y[j]) || (x[i] > x[j] && y[i] < y[j]));
            }
        }
        let distinct = |v: &[f64]| {
            let mut k: Vec<u64> = v.iter().map(|a| a.key()).collect();
            k.sort_unstable();
            k.dedup();
            k.len() as u64
        };
        c.x_distinct = distinct(x);
        c.y_distinct = distinct(y);
        c
    }

    /// Inputs that stress the rank path: continuous values, values a few
    /// ulps apart (equal truncated keys, different values), heavy ties that
    /// take the parallel group sort, and both at once.
    fn cases(n: usize) -> Vec<(Vec<f64>, Vec<f64>)> {
        let mut next = lcg(n as u64);
        let mut unit = move || next() as f64 / f64::from(1_u32 << 31);
        let base: Vec<f64> = (0..n).map(|_| unit()).collect();
        let noisy: Vec<f64> = base.iter().map(|v| v + unit()).collect();
        let ulps: Vec<f64> = (0..n as u64)
            .map(|i| f64::from_bits(0.75_f64.to_bits() + (i * 7919) % 5000))
            .collect();
        let heavy: Vec<f64> = base
            .iter()
            .enumerate()
            .map(|(i, &v)| if i % 4 == 0 { v } else { 1.5 })
            .collect();
        let ints: Vec<f64> = (0..n).map(|i| ((i * 37) % 1013) as f64).collect();
        vec![
            (base.clone(), noisy.clone()),
            (noisy.clone(), base.clone()),
            (ulps.clone(), noisy.clone()),
            (heavy.clone(), ulps.clone()),
            (ulps.clone(), ulps.iter().rev().copied().collect()),
            (heavy.clone(), heavy.iter().rev().copied().collect()),
            (base.clone(), base.clone()),
            (ints, noisy),
        ]
    }

    #[test]
    fn ranks_match_the_pair_count() {
        for n in [1, 2, 3, 40, 700, 2500] {
            for (x, y) in cases(n) {
                let want = naive(&x, &y);
                for threads in [1, 3] {
                    let pool = Pool::new(threads).with_min_parallel(0);
                    let got = by_ranks(&x, &y, &pool).unwrap().unwrap();
                    assert_eq!(got, want, "n {n} threads {threads}");
                }
            }
        }
    }

    #[test]
    fn ranks_match_the_pair_sort_at_scale() {
        // Heavy ties of 3 * 2^16 rows (the parallel group sort), cut points
        // inside runs, and 2^18 + 1 rows (ranks of 19 bits, a 3-bit first digit).
        let n = (1 << 18) + 1;
        for (x, y) in cases(n) {
            let want = by_sort(&x, &y, &Pool::sequential()).unwrap();
            for threads in [1, 2, 3] {
                let pool = Pool::new(threads).with_min_parallel(0);
                assert_eq!(
                    by_ranks(&x, &y, &pool).unwrap().unwrap(),
                    want,
                    "threads {threads}"
                );
            }
        }
    }

    #[test]
    fn integers_near_the_extremes_keep_their_order() {
        let x: Vec<i64> = vec![i64::MIN, i64::MIN + 1, -1, 0, 1, i64::MAX - 1, i64::MAX, 0];
        let y: Vec<i64> = vec![3, 2, i64::MAX, i64::MAX - 1, i64::MIN, 5, 5, i64::MIN + 1];
        let want = by_sort(&x, &y, &Pool::sequential()).unwrap();
        assert_eq!(
            by_ranks(&x, &y, &Pool::sequential()).unwrap().unwrap(),
            want
        );
        assert_eq!(want.x_ties, 1);
        assert_eq!(want.y_ties, 1);
    }

    #[test]
    fn a_raised_flag_stops_the_rank_path() {
        let (x, y) = cases(5000).swap_remove(0);
        let pool = Pool::new(2)
            .with_min_parallel(0)
            .with_stop(Arc::new(AtomicBool::new(true)));
        assert_eq!(by_ranks(&x, &y, &pool), Err(MetricError::Interrupted));
    }
}
